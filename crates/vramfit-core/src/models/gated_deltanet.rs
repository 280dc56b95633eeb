//! Gated DeltaNet linear attention, the token mixer of Qwen3-Next's and
//! Qwen3.5's linear-attention layers as `transformers` 5.24 runs it
//! without the optional `flash-linear-attention` and `causal-conv1d`
//! kernels (`models/qwen3_5/modeling_qwen3_5.py`: `Qwen3_5GatedDeltaNet`,
//! `torch_chunk_gated_delta_rule`, `causal_conv1d_fn`,
//! `Qwen3_5RMSNormGated`; Qwen3-Next's `modeling_qwen3_next.py` the same
//! with its grouped projections).
//!
//! A layer projects q, k, v (one depthwise causal convolution and SiLU
//! over the three), the output gate z, and per value head a write
//! strength β (sigmoid) and a decay g (`-exp(A_log) · softplus(a + dt_bias)`).
//! The PyTorch path then solves the delta rule in chunks of 64 positions in
//! fp32: its autograd keeps the fp32 copies of q, k and v, five
//! chunk-by-chunk `[64 × 64]` matrices per chunk, the decayed keys and
//! queries, and from the sequential scan over the chunks every chunk's
//! recurrent state (`value_heads × key_head_dim × value_head_dim` fp32) and
//! corrected values — about 15 fp32 copies of the values per layer, where
//! attention keeps a few half-precision ones.
//!
//! The cache of a linear layer does not grow with the context: a
//! convolution state (the last `conv_kernel` inputs of q, k, v) and the
//! fp32 recurrent state, per sequence ([`GatedDeltaNet::state_bytes`]).

use crate::builder::{Builder, OpSpec};
use crate::dtype::DType;
use crate::error::Error;
use crate::graph::{Numel, OpKind, TempStep, TensorId};
use crate::nn::bytes;
use serde::{Deserialize, Serialize};

/// The positions the PyTorch path solves together
/// (`torch_chunk_gated_delta_rule`'s `chunk_size`).
pub const CHUNK: u64 = 64;

/// A Gated DeltaNet layer's dimensions and which layers are linear.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatedDeltaNet {
    /// Query/key heads (`linear_num_key_heads`).
    pub key_heads: u64,
    /// Value heads (`linear_num_value_heads`), a multiple of the key heads.
    pub value_heads: u64,
    /// Width of a query/key head (`linear_key_head_dim`).
    pub key_head_dim: u64,
    /// Width of a value head (`linear_value_head_dim`).
    pub value_head_dim: u64,
    /// Taps of the causal depthwise convolution (`linear_conv_kernel_dim`).
    pub conv_kernel: u64,
    /// Every `full_every`-th layer (the 4th, 8th, … for 4) is full
    /// attention, the others linear (`full_attention_interval`,
    /// `layer_types`).
    pub full_every: u64,
    /// Qwen3-Next's two grouped projections (`in_proj_qkvz`, `in_proj_ba`),
    /// whose outputs are regrouped per value head by copies; Qwen3.5 has
    /// four plain ones (`in_proj_qkv`, `in_proj_z`, `in_proj_b`, `in_proj_a`).
    pub grouped: bool,
    /// The checkpoint asks for an fp32 recurrent state in serving
    /// (`mamba_ssm_dtype: "float32"`, Qwen3.5's): vLLM keeps it so
    /// (SGLang and llama.cpp always do), else in the model's dtype.
    #[serde(default)]
    pub state_fp32: bool,
}

impl GatedDeltaNet {
    /// Whether layer `i` (from 0) is linear attention.
    pub fn is_linear(&self, i: u64) -> bool {
        self.full_every == 0 || !(i + 1).is_multiple_of(self.full_every)
    }

    /// Query (or key) width, `key_heads × key_head_dim`.
    pub fn key_dim(&self) -> u64 {
        self.key_heads * self.key_head_dim
    }

    /// Value (and gate) width, `value_heads × value_head_dim`.
    pub fn value_dim(&self) -> u64 {
        self.value_heads * self.value_head_dim
    }

    /// The channels of the convolution: q, k and v.
    pub fn conv_dim(&self) -> u64 {
        2 * self.key_dim() + self.value_dim()
    }

    /// One sequence's recurrent state in one layer, in elements:
    /// `value_heads × key_head_dim × value_head_dim`.
    pub fn recurrent_state(&self) -> u64 {
        self.value_heads * self.key_head_dim * self.value_head_dim
    }

    /// What `transformers`' cache holds per sequence for one linear layer:
    /// the convolution state, `conv_dim × conv_kernel` in the model's
    /// `dtype_size`, and the fp32 recurrent state the PyTorch path returns.
    pub fn state_bytes(&self, dtype_size: u64) -> u64 {
        self.conv_dim() * self.conv_kernel * dtype_size + self.recurrent_state() * 4
    }

    /// What a serving engine keeps per sequence for one linear layer on one
    /// of `tp` GPUs: the last `conv_kernel − 1` inputs of the convolution
    /// in `conv_size`-byte elements and the recurrent state in
    /// `state_size`-byte ones (vLLM's `gated_delta_net_state_shape`,
    /// SGLang's `Mamba2StateShape`, llama.cpp's `n_embd_r()` and
    /// `n_embd_s()`).
    pub fn serving_state_bytes(&self, tp: u64, conv_size: u64, state_size: u64) -> u64 {
        let tp = tp.max(1);
        let conv = (self.conv_kernel - 1) * (self.conv_dim() / tp) * conv_size;
        conv + self.value_heads / tp * self.key_head_dim * self.value_head_dim * state_size
    }

    /// Checks the dimensions.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] for a zero size or value heads that are not
    /// a multiple of the key heads (each key head serves a whole group).
    pub fn validate(&self) -> Result<(), Error> {
        for (name, v) in [
            ("linear_num_key_heads", self.key_heads),
            ("linear_num_value_heads", self.value_heads),
            ("linear_key_head_dim", self.key_head_dim),
            ("linear_value_head_dim", self.value_head_dim),
            ("linear_conv_kernel_dim", self.conv_kernel),
        ] {
            super::check_dimension(name, v, 1 << 20)?;
        }
        if !self.value_heads.is_multiple_of(self.key_heads) {
            return Err(Error::InvalidModel(format!(
                "linear_num_value_heads ({}) must be a multiple of linear_num_key_heads ({})",
                self.value_heads, self.key_heads
            )));
        }
        super::check_elements(
            "a linear-attention state (linear_num_value_heads × linear_key_head_dim × linear_value_head_dim)",
            &[self.value_heads, self.key_head_dim, self.value_head_dim],
        )
    }

    /// One tensor-parallel rank's share: the heads split over `tp`.
    ///
    /// # Errors
    /// [`Error::NotApplicable`] when `tp` does not divide the key heads.
    pub fn shard(&self, tp: u64) -> Result<GatedDeltaNet, Error> {
        if !self.key_heads.is_multiple_of(tp) {
            return Err(Error::NotApplicable(
                crate::error::Inapplicable::TensorParallel {
                    dimension: "linear_num_key_heads",
                    size: self.key_heads,
                    tp,
                },
            ));
        }
        Ok(GatedDeltaNet {
            key_heads: self.key_heads / tp,
            value_heads: self.value_heads / tp,
            ..self.clone()
        })
    }
}

/// An op making one new tensor of `n` elements per sample of `dtype` from
/// `inputs`, saving `saved` (the output itself with `saves_output`).
pub(super) fn op(
    b: &mut Builder,
    name: &str,
    (inputs, saved): (&[TensorId], &[TensorId]),
    n: u64,
    dtype: DType,
    saves_output: bool,
) -> TensorId {
    let rg = inputs.iter().any(|&t| b.requires_grad(t));
    let out = b.tensor(Numel::per_sample(n), dtype, rg);
    let mut saved = saved.to_vec();
    if saves_output {
        saved.push(out);
    }
    b.op(
        name,
        OpKind::Elementwise,
        OpSpec {
            inputs: inputs.to_vec(),
            outputs: vec![out],
            saved,
            flops: Numel::per_sample(n),
            ..OpSpec::default()
        },
    );
    out
}

/// An fp32 op on `x` (`exp`, `rsqrt`) that saves its output.
pub(super) fn kept(b: &mut Builder, name: &str, x: TensorId, n: u64) -> TensorId {
    op(b, name, (&[x], &[]), n, DType::F32, true)
}

/// A copy of `x` as `n` elements of `dtype` (a reshape, `repeat_interleave`,
/// `F.pad` or a contiguous `.to()`): saves nothing.
pub(super) fn copy(b: &mut Builder, name: &str, x: TensorId, n: u64, dtype: DType) -> TensorId {
    op(b, name, (&[x], &[]), n, dtype, false)
}

/// The layer's token mixer on the normalized hidden states `x` (`hidden`
/// wide, `seq` positions): its output, `hidden` wide.
pub(super) fn lower(
    b: &mut Builder,
    g: &GatedDeltaNet,
    hidden: u64,
    x: TensorId,
    seq: u64,
) -> TensorId {
    let (vd, hv) = (g.value_dim(), g.value_heads);
    let (q, k, v, z, beta_in, a_in, mut held) = project(b, g, hidden, x, seq);
    let act = b.dtype(q);
    let (q, k, v, conv_out) = convolve(b, g, (q, k, v), seq);
    held.push(conv_out);
    // beta = b.sigmoid(), saving its output; g from the fp32 `a`.
    let beta = b.sigmoid("linear_attn.beta", beta_in);
    let decay = decay(b, hv, a_in, seq);
    let core = chunk_rule(b, g, (q, k, v), (beta, decay), seq, act);
    // `Qwen3_5RMSNormGated(core, z)`: Llama's RMSNorm, then `* silu(z.float())`.
    let n = b.rmsnorm("linear_attn.norm", core, g.value_head_dim);
    let zf = b.cast(z, DType::F32);
    let gate = b.activation("linear_attn.norm.silu", zf);
    let gated = b.mul("linear_attn.norm.gate", n, gate, seq * vd);
    let gated = b.cast(gated, act);
    let out = b.linear("linear_attn.out_proj", gated, vd, hidden, false);
    // The forward's locals (the projections, q, k and v) live until it returns.
    for t in held {
        b.keep_alive(t);
    }
    out
}

/// The input projections: q, k and v (one `conv_dim`-wide tensor, and
/// for the grouped layout its parts), the gate z, and b and a; with the
/// tensors the forward's locals hold until it returns.
#[allow(clippy::type_complexity)]
fn project(
    b: &mut Builder,
    g: &GatedDeltaNet,
    hidden: u64,
    x: TensorId,
    seq: u64,
) -> (
    TensorId,
    TensorId,
    TensorId,
    TensorId,
    TensorId,
    TensorId,
    Vec<TensorId>,
) {
    let (kd, vd, hv) = (g.key_dim(), g.value_dim(), g.value_heads);
    let grouped_heads = g.value_heads / g.key_heads.max(1);
    if !g.grouped {
        let qkv = b.linear("linear_attn.in_proj_qkv", x, hidden, g.conv_dim(), false);
        let z = b.linear("linear_attn.in_proj_z", x, hidden, vd, false);
        let bp = b.linear("linear_attn.in_proj_b", x, hidden, hv, false);
        let ap = b.linear("linear_attn.in_proj_a", x, hidden, hv, false);
        // One tensor for q, k and v: the convolution reads it whole.
        return (qkv, qkv, qkv, z, bp, ap, vec![z, bp, ap]);
    }
    // Qwen3-Next: `fix_query_key_value_ordering` views the projections per
    // key head, splits them, and copies what a reshape cannot view: q, k
    // and v flattened for the `torch.cat`, z and b, a regrouped per value
    // head when a key head serves several.
    let qkvz = b.linear(
        "linear_attn.in_proj_qkvz",
        x,
        hidden,
        2 * kd + 2 * vd,
        false,
    );
    let ba = b.linear("linear_attn.in_proj_ba", x, hidden, 2 * hv, false);
    let parts = b.split_widths("linear_attn.split_qkvz", qkvz, &[kd, kd, vd, vd], false);
    let part = |i: usize| parts.get(i).copied().unwrap_or(qkvz);
    let act = b.dtype(qkvz);
    let q = copy(b, "linear_attn.reshape_q", part(0), seq * kd, act);
    let k = copy(b, "linear_attn.reshape_k", part(1), seq * kd, act);
    let v = copy(b, "linear_attn.reshape_v", part(2), seq * vd, act);
    let z = copy(b, "linear_attn.reshape_z", part(3), seq * vd, act);
    let halves = b.split_widths("linear_attn.split_ba", ba, &[hv, hv], false);
    let half = |i: usize| halves.get(i).copied().unwrap_or(ba);
    let (bp, ap) = if grouped_heads > 1 {
        (
            copy(b, "linear_attn.reshape_b", half(0), seq * hv, act),
            copy(b, "linear_attn.reshape_a", half(1), seq * hv, act),
        )
    } else {
        (half(0), half(1))
    };
    (q, k, v, z, bp, ap, vec![qkvz, ba, z])
}

/// `causal_conv1d_fn` on q, k and v (one tensor, or the grouped layout's
/// three, concatenated first): `.to(weight.dtype)`, the depthwise
/// convolution (an autocast op) over `seq + conv_kernel − 1` positions,
/// SiLU on the first `seq`. Returns q, k and v, views of the SiLU output,
/// and that output.
fn convolve(
    b: &mut Builder,
    g: &GatedDeltaNet,
    (q, k, v): (TensorId, TensorId, TensorId),
    seq: u64,
) -> (TensorId, TensorId, TensorId, TensorId) {
    let conv = g.conv_dim();
    let act = b.dtype(q);
    let mixed = if q == k {
        q
    } else {
        b.tensor_op(
            "linear_attn.cat_qkv",
            OpKind::Copy,
            &[q, k, v],
            Numel::per_sample(seq * conv),
            act,
            true,
            &[],
        )
    };
    let w = b.param("linear_attn.conv1d.weight", &[conv, 1, g.conv_kernel]);
    let wide = b.cast(mixed, b.param_dtype());
    let xc = b.autocast_lower(wide);
    let padded = seq + g.conv_kernel - 1;
    let flops = Numel::per_sample(2 * conv * seq * g.conv_kernel);
    let out = b.weighted_op(
        "linear_attn.conv1d",
        OpKind::Conv2d,
        xc,
        w,
        None,
        conv * padded,
        flops,
    );
    // The flattened copies are reassigned after the convolution.
    if q != k {
        for t in [q, k, v] {
            b.keep_alive(t);
        }
    }
    // `[:, :, :seq_len]`: a view SiLU saves, keeping the padded output.
    let sliced = b.alias(out);
    b.set_numel(sliced, Numel::per_sample(seq * conv), b.dtype(out));
    let s = b.activation("linear_attn.conv1d.silu", sliced);
    let s = b.cast(s, act);
    let kd = g.key_dim();
    let parts = b.split_widths("linear_attn.split_qkv", s, &[kd, kd, g.value_dim()], false);
    let part = |i: usize| parts.get(i).copied().unwrap_or(s);
    (part(0), part(1), part(2), s)
}

/// `g = -self.A_log.float().exp() * F.softplus(a.float() + self.dt_bias)`:
/// fp32, `value_heads` per position.
fn decay(b: &mut Builder, hv: u64, a: TensorId, seq: u64) -> TensorId {
    let a_log = b.param("linear_attn.A_log", &[hv]);
    let dt_bias = b.param("linear_attn.dt_bias", &[hv]);
    let af = b.cast(a, DType::F32);
    let shifted = b.tensor(Numel::per_sample(seq * hv), DType::F32, true);
    b.op(
        "linear_attn.add_dt_bias",
        OpKind::Elementwise,
        OpSpec {
            inputs: vec![af],
            outputs: vec![shifted],
            params: vec![dt_bias],
            ..OpSpec::default()
        },
    );
    let soft = op(
        b,
        "linear_attn.softplus",
        (&[shifted], &[shifted]),
        seq * hv,
        DType::F32,
        false,
    );
    // -exp(A_log): `value_heads` elements, saved by exp and by the product.
    let rate = b.tensor(Numel::fixed(hv), DType::F32, true);
    b.op(
        "linear_attn.neg_exp_A",
        OpKind::Elementwise,
        OpSpec {
            outputs: vec![rate],
            saved: vec![rate],
            params: vec![a_log],
            ..OpSpec::default()
        },
    );
    b.mul("linear_attn.decay", rate, soft, seq * hv)
}

/// `torch_chunk_gated_delta_rule` with `use_qk_l2norm_in_kernel=True`,
/// op by op: returns `core_attn_out` as `[batch, seq, value_heads,
/// value_head_dim]` in `act`.
fn chunk_rule(
    b: &mut Builder,
    g: &GatedDeltaNet,
    (q, k, v): (TensorId, TensorId, TensorId),
    (beta, decay): (TensorId, TensorId),
    seq: u64,
    act: DType,
) -> TensorId {
    let (hv, dk, dv) = (g.value_heads, g.key_head_dim, g.value_head_dim);
    let f32 = DType::F32;
    let padded = seq.div_ceil(CHUNK) * CHUNK;
    let chunks = padded / CHUNK;
    // Grouped value heads: q and k repeated to every value head (a copy
    // the fp32 conversion below consumes).
    let (q, k) = if g.value_heads != g.key_heads {
        (
            copy(b, "linear_attn.repeat_q", q, seq * hv * dk, act),
            copy(b, "linear_attn.repeat_k", k, seq * hv * dk, act),
        )
    } else {
        (q, k)
    };
    // `.transpose(1, 2).to(torch.float32, memory_format=contiguous)`.
    let qf = copy(b, "linear_attn.q_fp32", q, seq * hv * dk, f32);
    let kf = copy(b, "linear_attn.k_fp32", k, seq * hv * dk, f32);
    let vf = copy(b, "linear_attn.v_fp32", v, seq * hv * dv, f32);
    let betaf = copy(b, "linear_attn.beta_fp32", beta, seq * hv, f32);
    let decayf = copy(b, "linear_attn.g_fp32", decay, seq * hv, f32);
    // l2norm: `x * rsqrt((x * x).sum(-1, keepdim=True) + eps)`.
    let l2norm = |b: &mut Builder, name: &str, x: TensorId| {
        let sq = op(
            b,
            &format!("{name}.square"),
            (&[x], &[x]),
            seq * hv * dk,
            f32,
            false,
        );
        let sum = copy(b, &format!("{name}.sum"), sq, seq * hv, f32);
        let eps = copy(b, &format!("{name}.eps"), sum, seq * hv, f32);
        let inv = kept(b, &format!("{name}.rsqrt"), eps, seq * hv);
        b.mul(&format!("{name}.mul"), x, inv, seq * hv * dk)
    };
    let qn = l2norm(b, "linear_attn.q_l2norm", qf);
    let qn = b.scale("linear_attn.q_scale", qn);
    let kn = l2norm(b, "linear_attn.k_l2norm", kf);
    // F.pad to whole chunks copies even when nothing is padded.
    let qp = copy(b, "linear_attn.pad_q", qn, padded * hv * dk, f32);
    let kp = copy(b, "linear_attn.pad_k", kn, padded * hv * dk, f32);
    let vp = copy(b, "linear_attn.pad_v", vf, padded * hv * dv, f32);
    let betap = copy(b, "linear_attn.pad_beta", betaf, padded * hv, f32);
    let decayp = copy(b, "linear_attn.pad_g", decayf, padded * hv, f32);
    let v_beta = b.mul("linear_attn.v_beta", vp, betap, padded * hv * dv);
    let k_beta = b.mul("linear_attn.k_beta", kp, betap, padded * hv * dk);
    let cum = copy(b, "linear_attn.cumsum", decayp, padded * hv, f32);
    // Pairwise decays within each chunk: `[chunk × chunk]` per chunk.
    let square = padded * hv * CHUNK;
    let pair = copy(b, "linear_attn.pairwise", cum, square, f32);
    let pair = copy(b, "linear_attn.masked_fill", pair, square, f32);
    let pair = kept(b, "linear_attn.pairwise_exp", pair, square);
    // A matmul of two fp32 tensors; under autocast, of their half-precision
    // copies (made afresh, saved), in half precision.
    let matmul = |b: &mut Builder, name: &str, x: TensorId, y: TensorId, n: u64| {
        let (x, y) = (b.autocast_lower(x), b.autocast_lower(y));
        let dtype = b.dtype(x);
        op(b, name, (&[x, y], &[x, y]), n, dtype, false)
    };
    let kk = matmul(b, "linear_attn.k_beta_kt", k_beta, kp, square);
    let ut = b.mul("linear_attn.ut_system", kk, pair, square);
    let qk = matmul(b, "linear_attn.q_kt", qp, kp, square);
    let intra = b.mul("linear_attn.intra_chunk", qk, pair, square);
    let cum_exp = kept(b, "linear_attn.cum_exp", cum, padded * hv);
    let decayed_k_beta = b.mul(
        "linear_attn.decayed_k_beta",
        k_beta,
        cum_exp,
        padded * hv * dk,
    );
    // solve_triangular saves the system and its result.
    let solve = |b: &mut Builder, name: &str, rhs: TensorId, n: u64| {
        op(b, name, (&[ut, rhs], &[ut]), n, f32, true)
    };
    let new_values = solve(b, "linear_attn.solve_values", v_beta, padded * hv * dv);
    let k_cumdecay = solve(
        b,
        "linear_attn.solve_keys",
        decayed_k_beta,
        padded * hv * dk,
    );
    let cum_exp = kept(b, "linear_attn.query_decay_exp", cum, padded * hv);
    let q_decayed = b.mul("linear_attn.query_decay", qp, cum_exp, padded * hv * dk);
    let to_end = copy(b, "linear_attn.decay_to_end", cum, padded * hv, f32);
    let to_end = kept(b, "linear_attn.decay_to_end_exp", to_end, padded * hv);
    let k_decayed = b.mul("linear_attn.key_decay", kp, to_end, padded * hv * dk);
    let chunk_decay = kept(b, "linear_attn.chunk_decay", cum, chunks * hv);
    let core = scan(
        b,
        g,
        [
            new_values,
            k_cumdecay,
            q_decayed,
            k_decayed,
            intra,
            chunk_decay,
        ],
        padded,
    );
    // `[:, :, :seq_len].transpose(1, 2).to(initial_dtype, contiguous)`.
    copy(b, "linear_attn.core_out", core, seq * hv * dv, act)
}

/// The sequential scan over the chunks, one op for the loop: each chunk
/// reads the recurrent state (its matmuls save it), makes the corrected
/// values `v_new`, writes its output into the zero-filled `core_attn_out`,
/// and the next state. The loop's matmuls save what they read: the fp32
/// chunks of their inputs and `v_new`, or under autocast half-precision
/// copies of them and of the state (two, one per matmul reading it), the
/// fp32 state still saved by the decay's product. Returns
/// `core_attn_out` (fp32, `padded` positions).
fn scan(b: &mut Builder, g: &GatedDeltaNet, inputs: [TensorId; 6], padded: u64) -> TensorId {
    let (hv, dk, dv) = (g.value_heads, g.key_head_dim, g.value_head_dim);
    let [
        new_values,
        k_cumdecay,
        q_decayed,
        k_decayed,
        intra,
        chunk_decay,
    ] = inputs;
    let chunks = padded / CHUNK;
    let f32 = DType::F32;
    let rg = inputs.iter().any(|&t| b.requires_grad(t));
    let core = b.tensor(Numel::per_sample(padded * hv * dv), f32, rg);
    // The states before each chunk (the first the zeros it starts from).
    let states = b.tensor(Numel::per_sample(chunks * g.recurrent_state()), f32, false);
    let mut outputs = vec![core, states];
    let mut saved = vec![new_values, k_cumdecay, chunk_decay, states];
    match b.autocast_dtype() {
        Some(low) => {
            let states_low = 2 * chunks * g.recurrent_state();
            let chunks_low = padded * hv * (3 * dk + CHUNK + 2 * dv);
            for n in [states_low, chunks_low] {
                let t = b.tensor(Numel::per_sample(n), low, false);
                outputs.push(t);
                saved.push(t);
            }
        }
        None => {
            let v_new = b.tensor(Numel::per_sample(padded * hv * dv), f32, false);
            outputs.push(v_new);
            saved.extend([q_decayed, k_decayed, intra, v_new]);
        }
    }
    let state = bytes(Numel::per_sample(g.recurrent_state()), f32);
    let piece = bytes(Numel::per_sample(CHUNK * hv * dv), f32);
    // Within one chunk: `k_cumdecay @ state`, `v_new`, the output's two
    // products and their sum (chunk-sized), the decayed state and
    // `k^T @ v_new` (state-sized); the last state outlives the loop.
    let forward_steps = vec![
        TempStep::Outputs,
        TempStep::Alloc(Numel::per_sample(4 * piece.per_sample)),
        TempStep::Alloc(Numel::per_sample(3 * state.per_sample)),
        TempStep::Free(0),
        TempStep::Free(1),
    ];
    // Backward slices `x[:, :, i]` of every input: each `SelectBackward`
    // zero-fills a full-sized gradient before it is added.
    let backward_temp = bytes(Numel::per_sample(padded * hv * dv.max(dk)), f32);
    let flops = chunks.saturating_mul(2 * hv * (3 * CHUNK * dk * dv + CHUNK * CHUNK * dv));
    b.op(
        "linear_attn.chunk_scan",
        OpKind::Matmul,
        OpSpec {
            inputs: inputs.to_vec(),
            outputs,
            saved,
            forward_steps,
            backward_temp,
            flops: Numel::per_sample(flops),
            ..OpSpec::default()
        },
    );
    core
}
