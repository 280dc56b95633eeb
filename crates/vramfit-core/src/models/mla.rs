//! Multi-head latent attention (MLA, DeepSeek-V2 and -V3) as `transformers`
//! builds and runs it (`DeepseekV{2,3}Attention`): the queries through an
//! optional low-rank bottleneck, keys and values projected up from a
//! compressed latent that is what the cache keeps, a rotary part of the
//! query/key width shared by every head. Sources: `tests/reference/moe/README.md`.

use crate::builder::Builder;
use crate::config::{Attention, Checkpointing};
use crate::dtype::DType;
use crate::error::Error;
use crate::graph::{Numel, OpKind, TensorId};
use serde::{Deserialize, Serialize};

/// The ranks and head widths of latent attention, named as in
/// `DeepseekV3Config`. The spec's `head_dim` is the query/key width,
/// `qk_nope_head_dim + qk_rope_head_dim`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mla {
    /// The queries' bottleneck (`q_a_proj`, `q_a_layernorm`, `q_b_proj`);
    /// 0 for one `q_proj` (`q_lora_rank: null`, DeepSeek-V2-Lite).
    pub q_lora_rank: u64,
    /// The compressed key–value latent (`kv_lora_rank`).
    pub kv_lora_rank: u64,
    /// Each head's query/key features without rotary embedding.
    pub qk_nope_head_dim: u64,
    /// Each head's rotated query features, and the one rotated key all
    /// heads share.
    pub qk_rope_head_dim: u64,
    /// Each head's value width.
    pub v_head_dim: u64,
    /// How the rotary embedding is applied.
    pub rope: MlaRope,
    /// DeepSeek Sparse Attention's indexer (DeepSeek-V3.2, GLM-5), which
    /// picks the keys each query attends to; `None` for dense attention.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indexer: Option<Indexer>,
}

/// DeepSeek Sparse Attention's lightning indexer (`DeepseekV32Indexer`,
/// `GlmMoeDsaIndexer`): per layer, `wq_b` from the query latent to `heads`
/// heads of `head_dim`, one key `wk` with a LayerNorm, and per-head weights
/// `weights_proj`; it scores every earlier token and keeps the `topk` best.
/// It runs under `torch.no_grad()` in `transformers`, so its parameters
/// get no gradients. Engines cache its key per token besides the latent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Indexer {
    /// Its heads (`index_n_heads`).
    pub heads: u64,
    /// Its query/key width (`index_head_dim`).
    pub head_dim: u64,
    /// Keys kept per query (`index_topk`).
    pub topk: u64,
    /// Every `every`-th layer from `offset − 1` on runs its own indexer;
    /// the others reuse the last one's choice (GLM-MoE-DSA's
    /// `index_topk_freq` and `index_skip_topk_offset`; 1 and 2: all).
    pub every: u64,
    /// See [`Self::every`].
    pub offset: u64,
}

impl Indexer {
    /// Whether layer `i` runs its own indexer (`indexer_types[i] == "full"`).
    pub fn runs_in(&self, i: u64) -> bool {
        (i + 1)
            .saturating_sub(self.offset)
            .is_multiple_of(self.every.max(1))
    }

    /// How many of `layers` layers run their own indexer (and cache its key).
    pub fn layers(&self, layers: u64) -> u64 {
        (0..layers).filter(|&i| self.runs_in(i)).count() as u64
    }

    /// Bytes of one cached key as vLLM and SGLang store it: fp8 values and
    /// an fp32 scale per 128 (`DeepseekV32IndexerCache`, `IndexKeyCache`).
    pub fn fp8_key_bytes(&self) -> u64 {
        self.head_dim + self.head_dim.div_ceil(128) * 4
    }

    /// Its parameters in a layer that runs it, for a model of width
    /// `hidden` and query rank `q_lora_rank`.
    pub fn parameters(&self, hidden: u64, q_lora_rank: u64) -> u64 {
        let (heads, d) = (self.heads, self.head_dim);
        q_lora_rank * heads * d + hidden * d + 2 * d + hidden * heads
    }
}

/// How a latent-attention model rotates its `qk_rope_head_dim` features.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MlaRope {
    /// DeepSeek-V3's `apply_rotary_pos_emb_interleave` (`rope_interleave`,
    /// the default) or `apply_rotary_pos_emb`: products in the cos/sin
    /// dtype, then `torch.cat`.
    #[default]
    Real,
    /// DeepSeek-V2's `apply_rotary_emb`: `x.float()` viewed as complex,
    /// multiplied, `type_as(x)` back.
    Complex,
}

impl Mla {
    /// Elements the cache keeps per token and layer: the normalized latent
    /// and the rotated key (`cache.update(kv_nope, k_rot)`).
    pub fn cache_width(&self) -> u64 {
        self.kv_lora_rank.saturating_add(self.qk_rope_head_dim)
    }

    /// The query/key width of a head.
    pub fn qk_head_dim(&self) -> u64 {
        self.qk_nope_head_dim.saturating_add(self.qk_rope_head_dim)
    }

    /// Checks the ranks and widths against the model's `head_dim`, query
    /// heads and key/value heads.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] naming the field.
    pub fn validate(&self, head_dim: u64, heads: u64, kv_heads: u64) -> Result<(), Error> {
        for (name, v) in [
            ("kv_lora_rank", self.kv_lora_rank),
            ("qk_rope_head_dim", self.qk_rope_head_dim),
            ("v_head_dim", self.v_head_dim),
        ] {
            if v == 0 || v > 1 << 32 {
                return Err(Error::InvalidModel(format!(
                    "{name} must be between 1 and 2^32, got {v}"
                )));
            }
        }
        for (name, v) in [
            ("q_lora_rank", self.q_lora_rank),
            ("qk_nope_head_dim", self.qk_nope_head_dim),
        ] {
            if v > 1 << 32 {
                return Err(Error::InvalidModel(format!(
                    "{name} must be at most 2^32, got {v}"
                )));
            }
        }
        if head_dim != self.qk_head_dim() || kv_heads != heads {
            return Err(Error::InvalidModel(format!(
                "latent attention reads head_dim as qk_nope_head_dim + qk_rope_head_dim ({}) and one key/value head per head; got {} and {} of {}",
                self.qk_head_dim(),
                head_dim,
                kv_heads,
                heads
            )));
        }
        Ok(())
    }
}

/// What a latent-attention layer takes from the rest of the model.
#[derive(Clone, Copy, Debug)]
pub struct Layer {
    /// Hidden size.
    pub hidden: u64,
    /// Attention heads (on this tensor-parallel rank).
    pub heads: u64,
    /// Biases on `q_a_proj` / `kv_a_proj_with_mqa` and `o_proj` (`attention_bias`).
    pub bias: bool,
    /// Dropout on the attention probabilities.
    pub dropout: f64,
    /// How the sequence is attended to.
    pub attention: Attention,
    /// Activation checkpointing (selective recomputes the attention core).
    pub ckpt: Checkpointing,
    /// SDPA as on CUDA, its output laid out like the query
    /// ([`Builder::sdpa_output`]).
    pub cuda_sdpa: bool,
    /// Whether this layer runs its own sparse-attention indexer.
    pub indexed: bool,
}

/// The attention of a latent-attention layer on its normalized input `n`
/// (`seq` tokens per sample, the causal `mask` of eager attention): the
/// output projection's result. Its locals (the projections, the latent,
/// query, key and value) live until it returns. Its norms are
/// `DeepseekV{2,3}RMSNorm`, Llama's.
pub fn attention(
    b: &mut Builder,
    l: &Layer,
    mla: &Mla,
    n: TensorId,
    seq: u64,
    mask: Option<TensorId>,
    cache: Option<&mut Vec<TensorId>>,
) -> TensorId {
    let (h, heads) = (l.hidden, l.heads);
    let (nope, rope, v) = (mla.qk_nope_head_dim, mla.qk_rope_head_dim, mla.v_head_dim);
    let qk = mla.qk_head_dim();
    if let Some(ix) = mla.indexer.filter(|_| l.indexed) {
        // Its weights only: it runs under `no_grad` (no gradients, no
        // optimizer state); its activations are not modelled, and the
        // session refuses to simulate such a model.
        let (ih, id, r) = (ix.heads, ix.head_dim, mla.q_lora_rank);
        b.frozen_param("self_attn.indexer.wq_b.weight", &[ih * id, r]);
        b.frozen_param("self_attn.indexer.wk.weight", &[id, h]);
        b.frozen_param("self_attn.indexer.k_norm.weight", &[id]);
        b.frozen_param("self_attn.indexer.k_norm.bias", &[id]);
        b.frozen_param("self_attn.indexer.weights_proj.weight", &[ih, h]);
    }
    let q = if mla.q_lora_rank > 0 {
        let r = mla.q_lora_rank;
        let qa = b.linear("self_attn.q_a_proj", n, h, r, l.bias);
        let qa = b.rmsnorm("self_attn.q_a_layernorm", qa, r);
        b.linear("self_attn.q_b_proj", qa, r, heads * qk, false)
    } else {
        b.linear("self_attn.q_proj", n, h, heads * qk, false)
    };
    let parts = b.split_widths("self_attn.split_q", q, &[nope, rope], false);
    let part = |p: &[TensorId], i: usize, or: TensorId| p.get(i).copied().unwrap_or(or);
    let (q_pass, q_rot) = (part(&parts, 0, q), part(&parts, 1, q));
    let r = mla.kv_lora_rank;
    let ckv = b.linear("self_attn.kv_a_proj_with_mqa", n, h, r + rope, l.bias);
    let parts = b.split_widths("self_attn.split_kv", ckv, &[r, rope], false);
    let (latent, k_rot) = (part(&parts, 0, ckv), part(&parts, 1, ckv));
    let latent = b.rmsnorm("self_attn.kv_a_layernorm", latent, r);
    let q_rot = rotate(b, mla.rope, "self_attn.rotary_q", q_rot, rope);
    let k_rot = rotate(b, mla.rope, "self_attn.rotary_k", k_rot, rope);
    // A training cache stores the compressed latents
    // (`past_key_values.update(kv_nope, k_rot, ..)`, before `expand_kv`):
    // its copies take their places, and the projection below saves the
    // latent's copy.
    let (latent, k_rot) = b.cache_update(cache, latent, k_rot);
    // `torch.cat((q_pass, q_rot), dim=-1)`: promoted when the rotation is fp32.
    let dtype = b.promote(q_pass, q_rot);
    let query = b.tensor_op(
        "self_attn.cat_query",
        OpKind::Copy,
        &[q_pass, q_rot],
        Numel::per_sample(seq * heads * qk),
        dtype,
        true,
        &[],
    );
    // `expand_kv`: the latent projected to every head's key and value,
    // then k_nope and the shared k_rot copied into a `new_empty` key; the
    // value stays a slice of the projection, which attention's saving it
    // keeps whole.
    let kv = b.linear("self_attn.kv_b_proj", latent, r, heads * (nope + v), false);
    let parts = b.split_widths("self_attn.split_k_v", kv, &[nope, v], false);
    let (k_nope, value) = (part(&parts, 0, kv), part(&parts, 1, kv));
    let kv_dtype = b.dtype(kv);
    let key = b.tensor_op(
        "self_attn.expand_kv",
        OpKind::Copy,
        &[k_nope, k_rot],
        Numel::per_sample(seq * heads * qk),
        kv_dtype,
        true,
        &[],
    );
    let ctx = core(b, l, mla, (query, key, value), seq, mask);
    let o = b.linear("self_attn.o_proj", ctx, heads * v, h, l.bias);
    for local in [n, q, ckv, latent, k_rot, query, kv, key, value] {
        b.keep_alive(local);
    }
    o
}

/// The rotary embedding of `x`'s `rope`-wide heads.
fn rotate(b: &mut Builder, kind: MlaRope, name: &str, x: TensorId, rope: u64) -> TensorId {
    match kind {
        MlaRope::Real => b.rotary_sliced(name, x, rope, rope),
        MlaRope::Complex => {
            // `x.float()` copies a half slice (fp32 is viewed as complex in
            // place); the complex product is as large; `type_as(x)` casts it back.
            let per = b.numel(x);
            let xf = if b.dtype(x) == DType::F32 {
                x
            } else {
                b.tensor_op(name, OpKind::Copy, &[x], per, DType::F32, true, &[])
            };
            let prod = b.tensor_op(name, OpKind::Elementwise, &[xf], per, DType::F32, true, &[]);
            b.cast(prod, b.dtype(x))
        }
    }
}

/// Attention over heads whose query/key width differs from the value's:
/// eager (scores and probabilities materialized) or one fused kernel.
fn core(
    b: &mut Builder,
    l: &Layer,
    mla: &Mla,
    (q, k, v): (TensorId, TensorId, TensorId),
    seq: u64,
    mask: Option<TensorId>,
) -> TensorId {
    let (a, qk, dv) = (l.heads, mla.qk_head_dim(), mla.v_head_dim);
    if l.attention == Attention::Flash && qk != dv {
        // `_flash_attention_forward` needs one width: the value padded to
        // the query's (`F.pad`, a copy the kernel saves), the output cropped
        // back, a view that `reshape(..).contiguous()` copies for `o_proj`.
        let vd = b.dtype(v);
        let padded = b.tensor_op(
            "attn.pad_value",
            OpKind::Copy,
            &[v],
            Numel::per_sample(seq * a * qk),
            vd,
            true,
            &[],
        );
        let out = b.fused_attention("attn.flash", (q, k, padded), None, seq, a, qk);
        let od = b.dtype(out);
        return b.tensor_op(
            "attn.crop_output",
            OpKind::Copy,
            &[out],
            Numel::per_sample(seq * a * dv),
            od,
            true,
            &[],
        );
    }
    if l.attention != Attention::Eager {
        // SDPA's fused kernels take the two widths: output and saved
        // tensors at the value width.
        // The query is `torch.cat`'s.
        let out = b.fused_attention("attn.sdpa", (q, k, v), None, seq, a, dv);
        return b.sdpa_output(out, l.cuda_sdpa);
    }
    b.set_attention_core(l.ckpt.selective());
    // The key (made contiguous by `expand_kv`) and the value slice are
    // read as they are; the fp32 query is cast by autocast. With more than
    // one sample the batched matmul cannot view the value slice as
    // `[batch × heads, seq, v]` and saves a contiguous copy instead, which
    // frees `kv_b_proj`'s output: the batch-affine graph keeps that output
    // (exact at batch 1, `heads × qk_nope_head_dim` elements per token and
    // layer more than PyTorch from batch 2 on, +0.1–0.2 % on the reference
    // rows) rather than under-count batch 1.
    let s2 = a.saturating_mul(seq).saturating_mul(seq);
    let scores = b.bmm("attn.scores", q, k, s2, s2.saturating_mul(2 * qk));
    let scores = b.scale("attn.scale", scores);
    let scores = match mask {
        Some(m) => b.add("attn.mask", scores, m),
        None => b.scale("attn.mask", scores),
    };
    let probs = b.softmax("attn.softmax", scores, true);
    let probs = b.dropout("attn.dropout", probs, l.dropout);
    b.hold_until_block_end(probs);
    let ctx = b.bmm(
        "attn.context",
        probs,
        v,
        seq * a * dv,
        s2.saturating_mul(2 * dv),
    );
    let ctx = b.copy("attn.merge_heads", ctx);
    b.set_attention_core(false);
    ctx
}
