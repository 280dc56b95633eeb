//! llama.cpp (and Ollama, which runs it): the GGUF file's tensors, the KV
//! cache, the compute buffer and the split between GPU and host memory by
//! `-ngl` / `--gpu-layers`.

use super::gguf::GgmlType;
use super::mix::{GgufMix, Role, Site, tensor_type};
use crate::models::transformer::{NormPlacement, QkNorm, TransformerSpec};
use crate::units::Bytes;

/// One tensor of the GGUF file: its bytes and where it sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tensor {
    /// Its layer, or `None` for the embedding, the final norm and the output.
    pub layer: Option<u64>,
    /// The matrix it is, `None` for a norm or a bias (always f32).
    pub role: Option<Role>,
    /// Its storage type.
    pub ty: GgmlType,
    /// Its bytes in the file and in memory.
    pub bytes: Bytes,
}

/// Every tensor `convert_hf_to_gguf.py` writes for a Llama-style decoder
/// and `llama-quantize` re-types under `mix` (names and shapes: llama.cpp
/// `src/llama-arch.cpp`'s `LLM_ARCH_LLAMA` tensor list; matrices are stored
/// with `ne[0]` = input features; 1-D tensors stay f32).
pub fn tensors(t: &TransformerSpec, mix: GgufMix) -> Vec<Tensor> {
    let h = t.hidden;
    let q = t.heads * t.head_dim;
    let kv = t.kv_heads * t.head_dim;
    let gqa = t.heads / t.kv_heads.max(1);
    // llama-model.cpp names an 80-layer Llama LLM_TYPE_70B.
    let is_70b = t.layers == 80;
    let site = |role, layer, cols| Site {
        role,
        layer,
        layers: t.layers,
        gqa,
        tied: t.tie_embeddings,
        is_70b,
        cols,
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
        NormPlacement::Pre | NormPlacement::Post => 2,
        NormPlacement::Sandwich => 4,
    };
    for i in 0..t.layers {
        out.extend([
            matrix(Role::AttnQ, i, q, h),
            matrix(Role::AttnK, i, kv, h),
            matrix(Role::AttnV, i, kv, h),
            matrix(Role::AttnOutput, i, h, q),
            matrix(Role::FfnGate, i, t.intermediate, h),
            matrix(Role::FfnUp, i, t.intermediate, h),
            matrix(Role::FfnDown, i, h, t.intermediate),
        ]);
        out.extend((0..norms).map(|_| vector(Some(i), h)));
        if t.qkv_bias {
            out.extend([vector(Some(i), q), vector(Some(i), kv), vector(Some(i), kv)]);
        }
        match t.block.qk_norm {
            QkNorm::None => {}
            QkNorm::PerHead => {
                out.extend([vector(Some(i), t.head_dim), vector(Some(i), t.head_dim)])
            }
            QkNorm::Whole => out.extend([vector(Some(i), q), vector(Some(i), kv)]),
        }
    }
    out
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

/// The KV cache split between GPU and host by `gpu_layers` (llama.cpp keeps
/// a layer's cache where the layer runs, `offload_kqv` on by default).
pub fn kv_split(
    t: &TransformerSpec,
    ty: GgmlType,
    n_ctx: u64,
    n_ubatch: u64,
    gpu_layers: u64,
) -> WeightSplit {
    let mut split = WeightSplit::default();
    for i in 0..t.layers {
        let b = kv_layer_bytes(t, ty, kv_cells(t, i, n_ctx, n_ubatch));
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
///   to the residual stream and its normed copy;
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
    let ffn = f32s(2 * n_ubatch * (t.intermediate + t.hidden));
    let logits = f32s(n_ubatch * t.vocab) + hidden;
    ComputeBuffers {
        gpu: attention.max(ffn).max(logits),
        host: hidden + mask,
    }
}
