//! llama.cpp (and Ollama, which runs it): the GGUF file's tensors, the KV
//! cache, the compute buffer and the split between GPU and host memory by
//! `-ngl` / `--gpu-layers`.

use super::gguf::GgmlType;
use super::mix::{GgufMix, Role, Site, tensor_type};
use crate::models::Recurrent;
use crate::models::moe::{ExpertActivation, Router};
use crate::models::transformer::{NormPlacement, QkNorm, TransformerSpec};
use crate::units::Bytes;

/// One tensor of the GGUF file: its bytes and where it sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tensor {
    /// Its layer, or `None` for the embedding, the final norm and the output.
    pub layer: Option<u64>,
    /// The matrix it is, `None` for a norm, a bias or a router (always f32).
    pub role: Option<Role>,
    /// Its storage type.
    pub ty: GgmlType,
    /// Its bytes in the file and in memory.
    pub bytes: Bytes,
}

/// Every tensor `convert_hf_to_gguf.py` writes for a decoder and
/// `llama-quantize` re-types under `mix` (names and shapes: llama.cpp
/// `src/llama-arch.cpp`'s tensor lists and `src/llama-model.cpp`'s
/// `load_tensors` for `LLM_ARCH_LLAMA` — Mixtral too —, `QWEN2MOE`,
/// `QWEN3MOE`, `OLMOE`, `DEEPSEEK2` and `OPENAI_MOE`; matrices are stored
/// with `ne[0]` = input features; 1-D tensors and the router
/// `ffn_gate_inp` stay f32, `convert_hf_to_gguf.py` keeping `FFN_GATE_INP`
/// in float32 and `llama-quantize` skipping it).
///
/// A sparse layer holds its routed experts as three 3-D banks
/// (`ffn_gate_exps`, `ffn_up_exps` of `{n_embd, n_ff_exp, n_expert}`,
/// `ffn_down_exps` of `{n_ff_exp, n_embd, n_expert}`), the router, and the
/// shared experts' `*_shexp` matrices (Qwen2-MoE's `ffn_gate_inp_shexp`
/// gate besides); a dense layer of a mixture keeps `ffn_gate/up/down`.
/// Latent attention is stored as today's converter splits `kv_b_proj`:
/// `attn_q_a` + `attn_q_b` (or `attn_q`), `attn_kv_a_mqa`, `attn_k_b` of
/// `{qk_nope, kv_lora_rank, n_head}`, `attn_v_b` of `{kv_lora_rank,
/// v_head_dim, n_head}` and `attn_output`, with the two latent norms.
pub fn tensors(t: &TransformerSpec, mix: GgufMix) -> Vec<Tensor> {
    let h = t.hidden;
    let gqa = t.heads / t.kv_heads.max(1);
    let experts = t.moe.as_ref().map_or(0, |m| m.experts);
    // llama-model.cpp names an 80-layer dense Llama LLM_TYPE_70B.
    let is_70b = t.layers == 80 && experts == 0;
    let site = |role, layer, cols| Site {
        role,
        layer,
        layers: t.layers,
        gqa,
        tied: t.tie_embeddings,
        is_70b,
        cols,
        experts,
    };
    let matrix = |role, layer, rows: u64, cols: u64| {
        let ty = tensor_type(mix, site(role, layer, cols));
        Tensor {
            layer: (role != Role::TokenEmbd && role != Role::Output).then_some(layer),
            role: Some(role),
            ty,
            bytes: ty.tensor_bytes(rows, cols),
        }
    };
    let vector = |layer: Option<u64>, n: u64| Tensor {
        layer,
        role: None,
        ty: GgmlType::F32,
        bytes: Bytes::of(n, 4),
    };
    let mut out = vec![matrix(Role::TokenEmbd, 0, t.vocab, h), vector(None, h)];
    if !t.tie_embeddings {
        out.push(matrix(Role::Output, 0, t.vocab, h));
    }
    let norms = match t.block.norm {
        _ if t.single_mixer.is_some() => 1,
        NormPlacement::Pre | NormPlacement::Post => 2,
        NormPlacement::Sandwich => 4,
    };
    if let Some(g) = t.gemma4.as_deref().filter(|g| g.per_layer_width > 0) {
        // Gemma 4's per-layer embeddings: `per_layer_token_embd` an input
        // tensor in host memory as `token_embd` is, `per_layer_model_proj`
        // on layer 0's device, `per_layer_proj_norm`.
        let width = t.layers * g.per_layer_width;
        out.extend([
            matrix(Role::TokenEmbd, 0, g.per_layer_vocab, width),
            matrix(Role::FfnUp, 0, width, h),
            vector(Some(0), g.per_layer_width),
        ]);
    }
    for i in 0..t.layers {
        // A single-mixer layer (`nemotron_h`) has one of the two.
        if t.mixes_tokens(i) {
            attention_tensors(t, i, &matrix, &vector, &mut out);
        }
        if t.has_feed_forward(i) {
            ffn_tensors(t, i, &matrix, &vector, &mut out);
        }
        if let Some(g) = t.gemma4.as_deref() {
            // `inp_gate`, `proj`, `post_norm` of the per-layer input, and
            // the layer's output scale.
            let p = g.per_layer_width;
            if p > 0 {
                out.extend([
                    matrix(Role::FfnUp, i, p, h),
                    matrix(Role::FfnDown, i, h, p),
                    vector(Some(i), h),
                ]);
            }
            out.push(vector(Some(i), 1));
        }
        out.extend((0..norms).map(|_| vector(Some(i), h)));
        if t.block.sinks {
            // gpt-oss's `attn_sinks`, one logit per head.
            out.push(vector(Some(i), t.heads));
        }
    }
    out
}

/// Layer `i`'s attention: q, k, v and output (with their biases and q/k
/// norms), or latent attention's projections and norms. A linear-attention
/// layer (`qwen3next`, `qwen35`) stores `attn_qkv`, `attn_gate` (z), the
/// β and α projections and `ssm_out` — quantized as the mix's other
/// matrices — and in f32 `ssm_conv1d`, `ssm_dt`, `ssm_a` and `ssm_norm`;
/// a gated attention's `attn_q` projects the gate too.
fn attention_tensors(
    t: &TransformerSpec,
    i: u64,
    matrix: &impl Fn(Role, u64, u64, u64) -> Tensor,
    vector: &impl Fn(Option<u64>, u64) -> Tensor,
    out: &mut Vec<Tensor>,
) {
    let h = t.hidden;
    if let Some(g) = t.gemma4.as_deref() {
        // Gemma 4: each kind's heads; the converter keeps the shared
        // layers' `attn_k`/`attn_v` the checkpoint ships (loaded, though
        // unused); keys-as-values layers have no `attn_v`.
        let a = g.layer(t, i);
        let (q, kv) = (t.heads * a.head_dim, a.kv_heads * a.head_dim);
        out.extend([
            matrix(Role::AttnQ, i, q, h),
            matrix(Role::AttnK, i, kv, h),
            matrix(Role::AttnOutput, i, h, q),
            vector(Some(i), a.head_dim),
            vector(Some(i), a.head_dim),
        ]);
        let slides = t.block.sliding.is_some_and(|w| w.slides(i));
        if !g.k_eq_v || slides {
            out.push(matrix(Role::AttnV, i, kv, h));
        }
        return;
    }
    let q = t.heads * t.head_dim;
    let kv = t.kv_heads * t.head_dim;
    if let Some(Recurrent::Mamba2(m)) = t.linear.as_deref().filter(|g| g.is_linear(i)) {
        // `ssm_in`, `ssm_out`; the convolution (and its bias), `dt_bias`,
        // `A`, `D` and the gated norm's weight.
        let conv = m.conv_dim() * m.conv_kernel + if m.conv_bias { m.conv_dim() } else { 0 };
        out.extend([
            matrix(Role::AttnQ, i, m.in_width(), h),
            matrix(Role::AttnQ, i, h, m.inner()),
            vector(Some(i), conv),
            vector(Some(i), 3 * m.heads),
            vector(Some(i), m.inner()),
        ]);
        return;
    }
    if let Some(Recurrent::DeltaNet(g)) = t.linear.as_deref().filter(|g| g.is_linear(i)) {
        let (vd, hv) = (g.value_dim(), g.value_heads);
        out.extend([
            matrix(Role::AttnQ, i, g.conv_dim(), h),
            matrix(Role::AttnQ, i, vd, h),
            matrix(Role::AttnQ, i, 2 * hv, h),
            matrix(Role::AttnQ, i, h, vd),
            vector(Some(i), g.conv_dim() * g.conv_kernel),
            vector(Some(i), 2 * hv),
            vector(Some(i), g.value_head_dim),
        ]);
        return;
    }
    let Some(mla) = t.mla.as_deref() else {
        let q_out = if t.block.attn_gate { 2 * q } else { q };
        out.extend([
            matrix(Role::AttnQ, i, q_out, h),
            matrix(Role::AttnK, i, kv, h),
            matrix(Role::AttnV, i, kv, h),
            matrix(Role::AttnOutput, i, h, q),
        ]);
        if t.qkv_bias {
            out.extend([vector(Some(i), q), vector(Some(i), kv), vector(Some(i), kv)]);
        }
        match t.block.qk_norm {
            // Llama 4's L2 norm has no weight.
            QkNorm::None | QkNorm::L2AfterRotary => {}
            QkNorm::PerHead | QkNorm::PerHeadAfterRotary => {
                out.extend([vector(Some(i), t.head_dim), vector(Some(i), t.head_dim)])
            }
            QkNorm::Whole => out.extend([vector(Some(i), q), vector(Some(i), kv)]),
        }
        return;
    };
    let (r, rope, nope, v) = (
        mla.kv_lora_rank,
        mla.qk_rope_head_dim,
        mla.qk_nope_head_dim,
        mla.v_head_dim,
    );
    if mla.q_lora_rank > 0 {
        let qr = mla.q_lora_rank;
        out.extend([
            matrix(Role::AttnQA, i, qr, h),
            vector(Some(i), qr),
            matrix(Role::AttnQB, i, q, qr),
        ]);
    } else {
        out.push(matrix(Role::AttnQ, i, q, h));
    }
    out.extend([
        matrix(Role::AttnKvAMqa, i, r + rope, h),
        vector(Some(i), r),
        matrix(Role::AttnKB, i, r * t.heads, nope),
        matrix(Role::AttnVB, i, v * t.heads, r),
        matrix(Role::AttnOutput, i, h, t.heads * v),
    ]);
    if let Some(ix) = mla.indexer.filter(|ix| ix.runs_in(i)) {
        // DeepSeek-V3.2's and GLM-5's indexer (`deepseek32`, `glm-dsa`):
        // `indexer.attn_q_b`, `indexer.attn_k` and `indexer.proj`,
        // quantized as the mix's other matrices (only GLM5-NEXT's stay
        // unquantized, `llama-quant.cpp`), and `indexer.k_norm`'s weight
        // and bias.
        out.extend([
            matrix(Role::AttnQ, i, ix.heads * ix.head_dim, mla.q_lora_rank),
            matrix(Role::AttnQ, i, ix.head_dim, h),
            matrix(Role::AttnQ, i, ix.heads, h),
            vector(Some(i), ix.head_dim),
            vector(Some(i), ix.head_dim),
        ]);
    }
}

/// Layer `i`'s feed-forward: a dense MLP, or the router, the routed
/// experts' banks and the shared experts of a sparse layer.
fn ffn_tensors(
    t: &TransformerSpec,
    i: u64,
    matrix: &impl Fn(Role, u64, u64, u64) -> Tensor,
    vector: &impl Fn(Option<u64>, u64) -> Tensor,
    out: &mut Vec<Tensor>,
) {
    let h = t.hidden;
    if let Some(g) = t.gemma4.as_deref() {
        // Gemma 4's dense MLP (beside its experts, if any).
        let f = g.mlp_width(t, i);
        out.extend([
            matrix(Role::FfnGate, i, f, h),
            matrix(Role::FfnUp, i, f, h),
            matrix(Role::FfnDown, i, h, f),
        ]);
    }
    let moe = match t.moe.as_deref() {
        Some(m) if m.is_sparse(i) => m,
        _ if t.gemma4.is_some() => return,
        _ => {
            let f = t.intermediate;
            // An MLP without a gate (Phi-2, GPT-NeoX, StarCoder2,
            // Nemotron) converts to `ffn_up` and `ffn_down` alone.
            if !matches!(t.block.mlp, crate::models::MlpKind::Plain { .. }) {
                out.push(matrix(Role::FfnGate, i, f, h));
            }
            out.extend([matrix(Role::FfnUp, i, f, h), matrix(Role::FfnDown, i, h, f)]);
            return;
        }
    };
    let (e, f) = (moe.experts, moe.expert_intermediate);
    // The router, f32 (`ffn_gate_inp`), and its bias (gpt-oss) or
    // DeepSeek-V3's, MiniMax-M2's and ERNIE 4.5's `exp_probs_b`
    // score-correction bias.
    out.push(vector(Some(i), h * e));
    let correction = matches!(
        moe.router,
        Router::SigmoidGroups { .. } | Router::SigmoidBias | Router::SoftmaxCorrected
    );
    if moe.biases || correction {
        out.push(vector(Some(i), e));
    }
    // Ungated experts (`nemotron_h_moe`) have no `ffn_gate_exps`;
    // latent ones read and write `latent` wide between
    // `ffn_latent_in` and `ffn_latent_out`.
    let ungated = moe.activation == ExpertActivation::Relu2;
    let w = moe.expert_width(h);
    if !ungated {
        out.push(matrix(Role::FfnGateExps, i, f * e, w));
    }
    out.extend([
        matrix(Role::FfnUpExps, i, f * e, w),
        matrix(Role::FfnDownExps, i, w * e, f),
    ]);
    if moe.latent > 0 {
        out.extend([matrix(Role::FfnUp, i, w, h), matrix(Role::FfnDown, i, h, w)]);
    }
    if moe.biases {
        out.extend([
            vector(Some(i), f * e),
            vector(Some(i), f * e),
            vector(Some(i), h * e),
        ]);
    }
    if let Some(shared) = moe.shared {
        let s = shared.intermediate;
        if shared.gate {
            // Qwen2-MoE's `ffn_gate_inp_shexp`, `{n_embd}`.
            out.push(vector(Some(i), h));
        }
        if !ungated {
            out.push(matrix(Role::FfnGateShexp, i, s, h));
        }
        out.extend([
            matrix(Role::FfnUpShexp, i, s, h),
            matrix(Role::FfnDownShexp, i, h, s),
        ]);
    }
}

/// Where the weights live with `gpu_layers` of the repeating layers offloaded
/// (`-ngl`): llama.cpp puts the last `gpu_layers` layers on the GPU, the
/// output matrix only when `gpu_layers` exceeds the layer count ("offloaded
/// 33/33 layers"), and the token embedding always in host memory, where
/// `get_rows` reads it (`src/llama-model.cpp`, `load_tensors`: `dev_input`
/// is the CPU; `dev_layer(il)` is a GPU for `il >= n_layer - n_gpu_layers`;
/// `dev_output` a GPU when `n_gpu_layers > n_layer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct WeightSplit {
    /// Bytes of the tensors on the GPU.
    pub gpu: Bytes,
    /// Bytes of the tensors in host memory.
    pub host: Bytes,
}

/// Whether layer `i` of `layers` runs on the GPU with `gpu_layers` offloaded.
pub fn layer_on_gpu(i: u64, layers: u64, gpu_layers: u64) -> bool {
    i + gpu_layers.min(layers) >= layers
}

/// Which of `devices` equal GPUs runs layer `il` (`layers` itself is the
/// output layer) with `gpu_layers` offloaded, `None` for the CPU: llama.cpp's
/// default `--split-mode layer` gives each GPU a share of the offloaded
/// layers in proportion to its free memory, equal shares here
/// (`src/llama-model.cpp`, `load_tensors`: `splits` the cumulative shares,
/// `i_gpu_start = max(n_layer - n_gpu_layers, 0)`, `act_gpu_layers =
/// min(n_gpu_layers, n_layer + 1)`, the layer's GPU
/// `upper_bound(splits, (il - i_gpu_start) / act_gpu_layers)`).
pub fn layer_device(il: u64, layers: u64, gpu_layers: u64, devices: u64) -> Option<u64> {
    let start = layers.saturating_sub(gpu_layers);
    let active = gpu_layers.min(layers + 1);
    if il < start || il - start >= active || devices == 0 {
        return None;
    }
    Some(((il - start) * devices / active).min(devices - 1))
}

/// What each of `devices` equal GPUs holds under the layer split
/// ([`layer_device`]): its layers' weights and KV cache, the output
/// matrix and final norm on the output layer's GPU. One entry per GPU.
pub fn device_split(
    t: &TransformerSpec,
    tensors: &[Tensor],
    kv: GgmlType,
    (n_ctx, n_seq): (u64, u64),
    n_ubatch: u64,
    gpu_layers: u64,
    devices: u64,
) -> Vec<(Bytes, Bytes)> {
    let n = usize::try_from(devices).unwrap_or(1).max(1);
    let mut out = vec![(Bytes::ZERO, Bytes::ZERO); n];
    let at = |il: u64| {
        layer_device(il, t.layers, gpu_layers, devices).and_then(|d| usize::try_from(d).ok())
    };
    for x in tensors {
        let device = match (x.layer, x.role) {
            (Some(i), _) => at(i),
            (None, Some(Role::TokenEmbd)) => None,
            (None, _) => at(t.layers),
        };
        if let Some(slot) = device.and_then(|d| out.get_mut(d)) {
            slot.0 += x.bytes;
        }
    }
    for i in 0..t.layers {
        if let Some(slot) = at(i).and_then(|d| out.get_mut(d)) {
            slot.1 += layer_cache_bytes(t, kv, i, (n_ctx, n_seq), n_ubatch);
        }
    }
    out
}

/// Copies of the graph's inputs ggml's scheduler keeps for pipeline
/// parallelism (`GGML_SCHED_MAX_COPIES` in `ggml/src/ggml-backend.cpp`;
/// `src/llama-context.cpp` enables it with several GPUs, every layer and
/// the output offloaded and the split by layer: "pipeline parallelism
/// enabled (n_copies=4)").
pub const PIPELINE_COPIES: u64 = 4;

/// The weights' split between GPU and host ([`WeightSplit`]).
pub fn weight_split(tensors: &[Tensor], layers: u64, gpu_layers: u64) -> WeightSplit {
    let mut split = WeightSplit::default();
    for t in tensors {
        let on_gpu = match (t.layer, t.role) {
            (Some(i), _) => layer_on_gpu(i, layers, gpu_layers),
            (None, Some(Role::TokenEmbd)) => false,
            // The output matrix and the final norm sit on the output device.
            (None, _) => gpu_layers > layers,
        };
        if on_gpu {
            split.gpu += t.bytes;
        } else {
            split.host += t.bytes;
        }
    }
    split
}

/// KV cache cells of layer `i`: `n_ctx` for full attention; for a
/// sliding-window layer of a model that mixes both (Gemma 2 and 3, run as
/// llama.cpp's iSWA cache), the window plus one micro-batch, padded to 256
/// and at most `n_ctx` (`src/llama-kv-cache-iswa.cpp`: `size_swa =
/// GGML_PAD(min(size_base, n_swa + n_ubatch), 256)`). A model whose every
/// layer slides (Mistral-7B v0.1) runs as the `llama` architecture, which
/// keeps a full cache.
pub fn kv_cells(t: &TransformerSpec, i: u64, n_ctx: u64, n_ubatch: u64) -> u64 {
    match t.block.sliding {
        Some(w) if w.full_every > 0 && w.slides(i) => {
            n_ctx.min(w.window + n_ubatch).next_multiple_of(256)
        }
        _ => n_ctx,
    }
}

/// Bytes of one layer's keys and values for `cells` positions, each K and
/// V row of `kv_heads × head_dim` elements stored in `ty`
/// (`src/llama-kv-cache.cpp`: one `ggml_new_tensor_3d(type_k, n_embd_head_k,
/// n_head_kv, kv_size)` for K and one for V per layer). Latent attention
/// keeps one K row of `kv_lora_rank + qk_rope_head_dim` (DeepSeek GGUFs'
/// `key_length_mla` layout) and no V cache (the V-less cache of
/// ggml-org/llama.cpp#19067).
pub fn kv_layer_bytes(t: &TransformerSpec, ty: GgmlType, cells: u64) -> Bytes {
    match &t.mla {
        Some(mla) => ty.tensor_bytes(cells, mla.cache_width()),
        None => Bytes::of(2, ty.tensor_bytes(cells, t.kv_heads * t.head_dim).0),
    }
}

/// [`kv_layer_bytes`] of layer `i`: Gemma 4's kinds of layer have their
/// own key–value heads and head width (`n_embd_k_gqa(il)`), and the layers
/// that reuse another's keys and values keep none (`has_kv(il)`:
/// `il < n_layer_kv_from_start`).
pub fn kv_layer_bytes_at(t: &TransformerSpec, ty: GgmlType, cells: u64, i: u64) -> Bytes {
    match t.gemma4.as_deref().map(|g| g.layer(t, i)) {
        Some(a) if !a.projects_kv => Bytes::ZERO,
        Some(a) => Bytes::of(2, ty.tensor_bytes(cells, a.kv_heads * a.head_dim).0),
        None => {
            // A sparse-attention layer's indexer keys, a second K-only cache
            // of the same cells and type (`llama_kv_cache_dsa`).
            let indexer = t
                .mla
                .as_deref()
                .and_then(|m| m.indexer)
                .filter(|ix| ix.runs_in(i))
                .map_or(Bytes::ZERO, |ix| ty.tensor_bytes(cells, ix.head_dim));
            kv_layer_bytes(t, ty, cells) + indexer
        }
    }
}

/// Layer `i`'s cache: its keys and values for `n_ctx` cells, or a
/// linear-attention layer's recurrent memory for `n_seq` sequences — f32
/// convolution and recurrent states whatever the KV type
/// (`llama_memory_recurrent`, `type_r`/`type_s` GGML_TYPE_F32 in
/// `llama_model::create_memory`; `n_embd_r()` = (d_conv − 1) × conv
/// channels, `n_embd_s()` = d_state × d_inner, `rs_size` = `n_seq_max`).
pub fn layer_cache_bytes(
    t: &TransformerSpec,
    ty: GgmlType,
    i: u64,
    (n_ctx, n_seq): (u64, u64),
    n_ubatch: u64,
) -> Bytes {
    match t.linear.as_deref().filter(|_| t.is_linear(i)) {
        Some(g) => Bytes(g.serving_state_bytes(1, 4, 4).saturating_mul(n_seq.max(1))),
        // A feed-forward layer (`nemotron_h`'s MLP and experts) keeps nothing.
        None if !t.attends(i) => Bytes::ZERO,
        None => kv_layer_bytes_at(t, ty, kv_cells(t, i, n_ctx, n_ubatch), i),
    }
}

/// The KV cache (and recurrent memory) split between GPU and host by
/// `gpu_layers` (llama.cpp keeps a layer's cache where the layer runs,
/// `offload_kqv` on by default); `n_seq` sequences share `n_ctx` cells.
pub fn kv_split(
    t: &TransformerSpec,
    ty: GgmlType,
    (n_ctx, n_seq): (u64, u64),
    n_ubatch: u64,
    gpu_layers: u64,
) -> WeightSplit {
    let mut split = WeightSplit::default();
    for i in 0..t.layers {
        let b = layer_cache_bytes(t, ty, i, (n_ctx, n_seq), n_ubatch);
        if layer_on_gpu(i, t.layers, gpu_layers) {
            split.gpu += b;
        } else {
            split.host += b;
        }
    }
    split
}

/// Tensors of one micro-batch's hidden width (f32) that stay live next to
/// the attention scores, as ggml's graph allocator reuses memory: the
/// residual stream entering the layer, its normed copy, q after RoPE and
/// the attention output being written (k and v of the batch are already
/// in the cache; with GQA they are narrower besides).
const LIVE_NEXT_TO_SCORES: u64 = 4;

/// The widest feed-forward output per token: a dense layer's intermediate
/// size, a sparse layer's `top_k` experts' (or its shared experts', if wider).
pub fn ffn_width(t: &TransformerSpec) -> u64 {
    let Some(moe) = t.moe.as_deref() else {
        return t.intermediate;
    };
    let dense = if moe.sparse_layers(t.layers) < t.layers {
        t.intermediate
    } else {
        0
    };
    let routed = moe.top_k.saturating_mul(moe.expert_intermediate);
    let shared = moe.shared.map_or(0, |s| s.intermediate);
    dense.max(routed).max(shared)
}

/// llama.cpp's compute buffers for one context: the GPU's (`CUDA0 compute
/// buffer size`) and the pinned host one (`CUDA_Host compute buffer size`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComputeBuffers {
    /// The graph allocator's peak on the GPU (on the CPU when nothing is
    /// offloaded).
    pub gpu: Bytes,
    /// The graph's inputs, which ggml's scheduler keeps on the last backend,
    /// the CPU (`ggml/src/ggml-backend.cpp`,
    /// `ggml_backend_sched_backend_id_from_cur`): the attention mask and
    /// the token embeddings' `get_rows` output (the embedding stays on the
    /// CPU), in pinned host memory.
    pub host: Bytes,
}

/// The compute buffers llama.cpp reserves: the graph allocator's peak over
/// the worst-case graph, one micro-batch of `n_ubatch` tokens against a
/// full cache of `n_ctx` cells, f32 activations (`src/llama-context.cpp`'s
/// `graph_reserve`; `ggml/src/ggml-alloc.c` reuses a tensor's memory once
/// its last reader ran and runs `soft_max` in place). The GPU's is the
/// larger of
/// - attention: without flash attention the scores `n_ctx × n_ubatch ×
///   heads` (f32, `ggml_mul_mat(k, q)` in `src/llama-graph.cpp`'s
///   `build_attn_mha`) and the GPU's copy of the mask (`n_ctx × n_ubatch`,
///   f32; f16 with flash attention, which forms no scores), next to
///   [`LIVE_NEXT_TO_SCORES`] hidden-width tensors;
/// - the FFN's gate and up outputs (`n_ubatch × intermediate` each) next
///   to the residual stream and its normed copy; in a sparse layer the
///   experts' (`ggml_mul_mat_id` writes `n_ff_exp × top_k × n_ubatch`
///   each, `build_moe_ffn` in `src/llama-graph.cpp`), [`ffn_width`];
/// - the logits, `n_ubatch × vocab`, next to the last hidden state (the
///   reserved graph outputs every token of the micro-batch).
///
/// Held to the buffer sizes llama.cpp printed in public logs
/// (`tests/reference/engines/llama_cpp_buffers.csv`); no logged run is
/// FFN-bound, so that term is read from the graph only.
pub fn compute_buffers(
    t: &TransformerSpec,
    n_ctx: u64,
    n_ubatch: u64,
    flash_attention: bool,
) -> ComputeBuffers {
    let f32s = |n: u64| Bytes::of(n, 4);
    let hidden = f32s(n_ubatch * t.hidden);
    let mask = Bytes::of(n_ctx * n_ubatch, if flash_attention { 2 } else { 4 });
    let live = Bytes::of(LIVE_NEXT_TO_SCORES, hidden.0);
    let attention = if flash_attention {
        mask + live
    } else {
        f32s(n_ctx * n_ubatch * t.heads) + mask + live
    };
    let ffn = f32s(2 * n_ubatch * (ffn_width(t) + t.hidden));
    let logits = f32s(n_ubatch * t.vocab) + hidden;
    ComputeBuffers {
        gpu: attention.max(ffn).max(logits),
        host: hidden + mask,
    }
}

/// A GPU's compute buffer under pipeline parallelism: [`compute_buffers`]'
/// and [`PIPELINE_COPIES`] − 1 more copies of the inputs each GPU's part of
/// the graph reads (the micro-batch's hidden state and the mask's copy).
pub fn pipeline_compute_buffer(
    t: &TransformerSpec,
    n_ctx: u64,
    n_ubatch: u64,
    flash_attention: bool,
) -> Bytes {
    let one = compute_buffers(t, n_ctx, n_ubatch, flash_attention);
    let hidden = Bytes::of(n_ubatch * t.hidden, 4);
    let mask = Bytes::of(n_ctx * n_ubatch, if flash_attention { 2 } else { 4 });
    one.gpu + Bytes::of(PIPELINE_COPIES - 1, (hidden + mask).0)
}
