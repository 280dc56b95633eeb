//! Inference as the engines run it: llama.cpp (and Ollama), vLLM, SGLang
//! and Hugging Face `generate`. Each engine decides the memory differently —
//! GGUF quantization mixes and an offload split in llama.cpp, a share of the
//! GPU cut into KV blocks in vLLM and SGLang — so each has its own closed
//! form here, read from its source (cited per function), next to the
//! op-by-op simulation the `session` runs for Hugging Face.
//!
//! The facts and their sources are collected in
//! `tests/reference/engines/README.md`; published GGUF file sizes, which
//! [`ServeReport::weights_bytes`] is held to, in `gguf_sizes.csv` there.

pub mod answers;
pub mod budget;
pub mod cache;
pub mod decode;
pub mod gguf;
pub mod llama_cpp;
pub mod mix;
pub mod serving;

pub use answers::{ServeAnswers, TP_DEGREES, answer};
pub use decode::Decode;
pub use serving::{ServeEstimate, ServeFit, Serving, estimate};

use crate::error::{Error, ServeFault, check_range};
use crate::gpus::{Arch, GpuPreset};
use crate::models::transformer::{Arch as Layout, TransformerSpec};
use crate::models::{ExpertActivation, MlpKind, ModelSpec, Moe, NormKind, Recurrent, Router};
use crate::overheads::Overheads;
use crate::units::Bytes;
use gguf::GgmlType;
use mix::GgufMix;
use std::fmt;
use std::str::FromStr;

/// Defines a small id enum with `ALL`, `id`, `Display` and `FromStr`.
macro_rules! id_enum {
    ($(#[$meta:meta])* $name:ident, $field:literal { $($(#[$vmeta:meta])* $variant:ident => $id:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vmeta])* $variant),+ }

        impl $name {
            /// Every variant.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The id the CLI and share links use.
            pub fn id(self) -> &'static str {
                match self { $($name::$variant => $id),+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.id())
            }
        }

        impl FromStr for $name {
            type Err = Error;
            fn from_str(s: &str) -> Result<Self, Error> {
                $name::ALL.iter().copied().find(|v| v.id() == s).ok_or_else(|| Error::InvalidChoice {
                    field: $field,
                    value: s.to_string(),
                    accepted: $name::ALL.iter().map(|v| v.id()).collect::<Vec<_>>().join("|"),
                })
            }
        }
    };
}

id_enum!(
    /// The program that runs the model.
    Engine, "engine" {
        /// Hugging Face `transformers` `generate`.
        Hf => "hf",
        /// vLLM (`vllm serve`).
        Vllm => "vllm",
        /// SGLang (`python -m sglang.launch_server`).
        Sglang => "sglang",
        /// llama.cpp (`llama-server`), and Ollama, which runs it.
        LlamaCpp => "llama.cpp",
    }
);

id_enum!(
    /// The KV cache's element type (`--kv-cache-dtype` in vLLM and SGLang,
    /// `--cache-type-k/-v` in llama.cpp).
    KvDtype, "kv-dtype" {
        /// 16-bit float (every engine's default for a 16-bit model).
        F16 => "f16",
        /// bfloat16.
        Bf16 => "bf16",
        /// 8-bit float (vLLM and SGLang `fp8`).
        Fp8 => "fp8",
        /// llama.cpp's Q8_0 blocks: 34 bytes per 32 values.
        Q8_0 => "q8_0",
        /// llama.cpp's Q4_0 blocks: 18 bytes per 32 values.
        Q4_0 => "q4_0",
    }
);

impl KvDtype {
    /// The ggml type llama.cpp stores it in, `None` for fp8 (which it lacks).
    pub fn ggml(self) -> Option<GgmlType> {
        match self {
            KvDtype::F16 => Some(GgmlType::F16),
            KvDtype::Bf16 => Some(GgmlType::Bf16),
            KvDtype::Q8_0 => Some(GgmlType::Q8_0),
            KvDtype::Q4_0 => Some(GgmlType::Q4_0),
            KvDtype::Fp8 => None,
        }
    }

    /// Bytes per element in the PyTorch engines, `None` for llama.cpp's block types.
    pub fn torch_size(self) -> Option<u64> {
        match self {
            KvDtype::F16 | KvDtype::Bf16 => Some(2),
            KvDtype::Fp8 => Some(1),
            KvDtype::Q8_0 | KvDtype::Q4_0 => None,
        }
    }
}

/// How the weights are stored for serving.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ServeWeights {
    /// The checkpoint's 16-bit weights.
    Native,
    /// fp8 linear layers with a per-tensor scale (vLLM's `Fp8LinearMethod`);
    /// embeddings and LM head 16-bit.
    Fp8,
    /// AWQ 4-bit, group size 128: an fp16 scale and a 4-bit zero per group
    /// and output feature (`qweight`, `scales`, `qzeros`); embeddings and LM head 16-bit.
    AwqInt4,
    /// GPTQ 4-bit, group size 128: as AWQ plus `g_idx`, one int32 per input feature.
    GptqInt4,
    /// bitsandbytes NF4 with double quantization (as `--weights int4` trains).
    Nf4,
    /// gpt-oss's published format: every routed expert in MXFP4 (4-bit
    /// E2M1 values packed two to a byte and a uint8 E8M0 scale per 32:
    /// vLLM's `Mxfp4MoEMethod`, `w13_weight` `[E, 2I, H/2]` and
    /// `w13_weight_scale` `[E, 2I, H/32]` of uint8), the other layers 16-bit.
    Mxfp4,
    /// A GGUF file made by `llama-quantize` with this mix.
    Gguf(GgufMix),
}

impl ServeWeights {
    /// The non-GGUF formats.
    pub const FORMATS: &'static [ServeWeights] = &[
        ServeWeights::Native,
        ServeWeights::Fp8,
        ServeWeights::AwqInt4,
        ServeWeights::GptqInt4,
        ServeWeights::Nf4,
        ServeWeights::Mxfp4,
    ];

    /// The id.
    pub fn id(self) -> &'static str {
        match self {
            ServeWeights::Native => "native",
            ServeWeights::Fp8 => "fp8",
            ServeWeights::AwqInt4 => "awq-int4",
            ServeWeights::GptqInt4 => "gptq-int4",
            ServeWeights::Nf4 => "nf4",
            ServeWeights::Mxfp4 => "mxfp4",
            ServeWeights::Gguf(m) => m.id(),
        }
    }
}

impl FromStr for ServeWeights {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        if let Some(w) = ServeWeights::FORMATS.iter().find(|w| w.id() == s) {
            return Ok(*w);
        }
        s.parse::<GgufMix>()
            .map(ServeWeights::Gguf)
            .map_err(|_| Error::InvalidChoice {
                field: "weights",
                value: s.to_string(),
                accepted: ServeWeights::FORMATS
                    .iter()
                    .map(|w| w.id())
                    .chain(GgufMix::ALL.iter().map(|m| m.id()))
                    .collect::<Vec<_>>()
                    .join("|"),
            })
    }
}

/// One serving setup, apart from the model and the GPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ServeConfig {
    /// The engine.
    pub engine: Engine,
    /// The weights' storage.
    pub weights: ServeWeights,
    /// The KV cache's element type.
    pub kv: KvDtype,
    /// Tokens per sequence (`--max-model-len`; llama.cpp's `-c` is this
    /// times `concurrency`, its slots sharing one cache).
    pub context: u64,
    /// Sequences in flight (llama.cpp `-np`; the KV cache of Hugging Face's
    /// batch). vLLM and SGLang size their cache by the budget instead and
    /// report how many sequences it holds.
    pub concurrency: u64,
    /// vLLM's `--gpu-memory-utilization`, SGLang's `--mem-fraction-static`.
    pub gpu_memory_utilization: f64,
    /// llama.cpp's `-ngl`: repeating layers on the GPU; `None` offloads
    /// everything (the output layer too).
    pub gpu_layers: Option<u64>,
    /// Tensor-parallel GPUs (vLLM and SGLang; llama.cpp runs on one here).
    pub tp: u64,
    /// llama.cpp's `-ub` (physical batch).
    pub n_ubatch: u64,
    /// llama.cpp's `-fa`: no attention-score matrix in the compute buffer.
    pub flash_attention: bool,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            engine: Engine::LlamaCpp,
            weights: ServeWeights::Gguf(GgufMix::Q4KM),
            kv: KvDtype::F16,
            context: 4096,
            concurrency: 1,
            gpu_memory_utilization: 0.9,
            gpu_layers: None,
            tp: 1,
            n_ubatch: 512,
            flash_attention: false,
        }
    }
}

/// What an engine allocates, per GPU unless said otherwise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ServeReport {
    /// The weights, all of them (the GGUF file's tensor data for llama.cpp).
    pub weights_bytes: Bytes,
    /// The KV cache on this GPU: llama.cpp's and Hugging Face's for
    /// `concurrency × context` tokens, vLLM's and SGLang's whole pool.
    pub kv_cache_bytes: Bytes,
    /// Working memory: llama.cpp's compute buffers (the GPU's and the
    /// pinned host one of the graph's inputs), vLLM's profiled activation
    /// peak (0 where the engine leaves it to its headroom).
    pub compute_buffer_bytes: Bytes,
    /// What stays in host memory (llama.cpp's embedding and the layers not
    /// offloaded, with their KV cache).
    pub host_bytes: Bytes,
    /// The GPU memory the engine takes on one GPU (vLLM and SGLang: their
    /// whole share; llama.cpp split over GPUs: the fullest one's).
    pub gpu_bytes: Bytes,
    /// Sequences of `context` tokens the KV pool holds (vLLM's "Maximum
    /// concurrency for N tokens per request"; SGLang's tokens over context).
    pub max_concurrency: Option<f64>,
    /// Tokens the KV pool holds (vLLM's "GPU KV cache size"; SGLang's `max_total_num_tokens`).
    pub kv_tokens: Option<u64>,
}

/// Whether a GPU computes in fp8 (NVIDIA since Ada and Hopper, AMD CDNA 3).
pub fn has_fp8(arch: Arch) -> bool {
    match arch {
        Arch::Ada | Arch::Hopper | Arch::Blackwell | Arch::Cdna3 => true,
        Arch::Pascal
        | Arch::Volta
        | Arch::Turing
        | Arch::Ampere
        | Arch::Cdna2
        | Arch::Rdna3
        | Arch::XeLp
        | Arch::XeHpg
        | Arch::Xe2
        | Arch::AppleM1
        | Arch::AppleM2
        | Arch::AppleM3
        | Arch::AppleM4
        | Arch::Unknown => false,
    }
}

/// What each engine takes, for the errors.
const GGUF_ONLY: &str = "GGUF mixes (q4_k_m, q8_0, …)";
const NOT_GGUF: &str = "native, fp8, awq-int4, gptq-int4, nf4 or (for a mixture of experts) mxfp4";
/// What a dense model takes on the PyTorch engines.
const DENSE_FORMATS: &str =
    "native, fp8, awq-int4, gptq-int4 or nf4 (mxfp4 stores experts: a mixture of experts only)";

/// The memory `cfg.engine` allocates to serve `model` on `gpu`.
///
/// # Errors
/// [`Error::Serve`] when the engine cannot run the setting (a GGUF mix on
/// an engine other than llama.cpp, or another format on llama.cpp; a KV
/// type the engine lacks; fp8 on a GPU without it; `mxfp4` on a model
/// without experts; a model that is not a Llama-style decoder; a tensor-parallel degree that splits the
/// attention heads unevenly, or the key/value heads and, in vLLM and SGLang, is no multiple of them: [`kv_head_replicas`]);
/// [`Error::OutOfRange`] for a context, concurrency,
/// utilization or degree outside its range.
///
/// # Example
/// ```
/// use vramfit_core::engines::{serve, Engine, KvDtype, ServeConfig, ServeWeights};
/// use vramfit_core::engines::mix::GgufMix;
/// let model = vramfit_core::model_preset("llama-3-8b").unwrap().spec;
/// let gpu = vramfit_core::gpu_preset("rtx-4090").unwrap();
/// let cfg = ServeConfig { context: 8192, ..ServeConfig::default() };
/// let r = serve(&model, &gpu, &cfg).unwrap();
/// assert_eq!(r.kv_cache_bytes.0, 1 << 30); // f16, 8192 tokens: exactly 1 GiB
/// let bad = ServeConfig { kv: KvDtype::Fp8, ..cfg };
/// assert!(serve(&model, &gpu, &bad).is_err()); // llama.cpp has no fp8 cache
/// let vllm = ServeConfig { engine: Engine::Vllm, weights: ServeWeights::Gguf(GgufMix::Q4KM), ..cfg };
/// assert!(serve(&model, &gpu, &vllm).is_err()); // vLLM is modelled without GGUF
/// ```
pub fn serve(model: &ModelSpec, gpu: &GpuPreset, cfg: &ServeConfig) -> Result<ServeReport, Error> {
    serve_on(model, Some(gpu), cfg)
}

/// [`serve`] with the GPU optional: llama.cpp's sizes do not depend on it,
/// vLLM's and SGLang's budgets do.
///
/// # Errors
/// As [`serve`]; [`ServeFault::NeedsGpu`] for vLLM, SGLang or Hugging
/// Face without a GPU.
pub fn serve_on(
    model: &ModelSpec,
    gpu: Option<&GpuPreset>,
    cfg: &ServeConfig,
) -> Result<ServeReport, Error> {
    let t = match model {
        ModelSpec::Transformer(t) if t.arch == Layout::Llama => t,
        _ => return Err(Error::Serve(ServeFault::NotADecoder)),
    };
    check_range("context", cfg.context, 1, crate::config::MAX_DIMENSION)?;
    check_range("concurrency", cfg.concurrency, 1, 1 << 20)?;
    check_range("tp", cfg.tp, 1, 1024)?;
    check_range("ubatch", cfg.n_ubatch, 1, 1 << 16)?;
    if !(cfg.gpu_memory_utilization > 0.0 && cfg.gpu_memory_utilization <= 1.0) {
        return Err(Error::OutOfRange {
            field: "gpu-memory-utilization",
            value: cfg.gpu_memory_utilization.to_string(),
            min: 0,
            max: 1,
        });
    }
    check_engine(cfg, gpu, t.moe.is_some())?;
    // OPT's shifted learned positions: llama.cpp has no OPT.
    if cfg.engine == Engine::LlamaCpp && t.block.position_offset > 0 {
        return Err(Error::Serve(ServeFault::NoGguf { model: "OPT" }));
    }
    match (cfg.engine, cfg.weights) {
        (Engine::LlamaCpp, ServeWeights::Gguf(mix)) => Ok(llama_cpp_report(t, mix, cfg)),
        (Engine::Vllm | Engine::Sglang | Engine::Hf, w) => {
            if !t.heads.is_multiple_of(cfg.tp.max(1)) {
                return Err(Error::Serve(ServeFault::HeadsSplit {
                    heads: t.heads,
                    tp: cfg.tp,
                }));
            }
            if kv_head_replicas(t.kv_heads, cfg.engine, cfg.tp).is_none() {
                return Err(Error::Serve(ServeFault::KvHeadsSplit {
                    kv_heads: t.kv_heads,
                    tp: cfg.tp,
                }));
            }
            let gpu = gpu.ok_or(Error::Serve(ServeFault::NeedsGpu {
                engine: cfg.engine.id(),
            }))?;
            Ok(torch_report(t, w, gpu, cfg))
        }
        (Engine::LlamaCpp, _) => unreachable!("check_engine refuses other formats on llama.cpp"),
    }
}

/// The engine-and-setting checks of [`serve`].
fn check_engine(cfg: &ServeConfig, gpu: Option<&GpuPreset>, sparse: bool) -> Result<(), Error> {
    let engine = cfg.engine.id();
    let gguf = matches!(cfg.weights, ServeWeights::Gguf(_));
    let fault = match cfg.engine {
        Engine::LlamaCpp if !gguf => Some(ServeFault::Weights {
            engine,
            weights: cfg.weights.id(),
            accepted: GGUF_ONLY,
        }),
        Engine::LlamaCpp if cfg.kv.ggml().is_none() => Some(ServeFault::KvDtype {
            engine,
            kv: cfg.kv.id(),
            accepted: "f16|bf16|q8_0|q4_0",
        }),
        Engine::Vllm | Engine::Sglang | Engine::Hf if gguf => Some(ServeFault::Weights {
            engine,
            weights: cfg.weights.id(),
            accepted: NOT_GGUF,
        }),
        Engine::Vllm | Engine::Sglang | Engine::Hf
            if cfg.weights == ServeWeights::Mxfp4 && !sparse =>
        {
            Some(ServeFault::Weights {
                engine,
                weights: cfg.weights.id(),
                accepted: DENSE_FORMATS,
            })
        }
        Engine::Hf if cfg.kv.torch_size().is_none() || cfg.kv == KvDtype::Fp8 => {
            Some(ServeFault::KvDtype {
                engine,
                kv: cfg.kv.id(),
                accepted: "f16|bf16",
            })
        }
        Engine::Vllm | Engine::Sglang if cfg.kv.torch_size().is_none() => {
            Some(ServeFault::KvDtype {
                engine,
                kv: cfg.kv.id(),
                accepted: "f16|bf16|fp8",
            })
        }
        Engine::Vllm | Engine::Sglang | Engine::Hf | Engine::LlamaCpp => None,
    };
    if let Some(f) = fault {
        return Err(Error::Serve(f));
    }
    let fp8 = cfg.kv == KvDtype::Fp8 || cfg.weights == ServeWeights::Fp8;
    match gpu {
        Some(gpu) if fp8 && !has_fp8(gpu.arch) => Err(Error::Serve(ServeFault::NoFp8 {
            gpu: gpu.name.to_string(),
        })),
        _ => Ok(()),
    }
}

/// llama.cpp: the GGUF tensors, their KV cache and compute buffer, split by `-ngl`.
fn llama_cpp_report(t: &TransformerSpec, mix: GgufMix, cfg: &ServeConfig) -> ServeReport {
    let tensors = llama_cpp::tensors(t, mix);
    let weights: Bytes = tensors
        .iter()
        .map(|x| x.bytes)
        .fold(Bytes::ZERO, |a, b| a + b);
    let gpu_layers = cfg.gpu_layers.unwrap_or(t.layers + 1);
    let w = llama_cpp::weight_split(&tensors, t.layers, gpu_layers);
    let kv_type = cfg.kv.ggml().unwrap_or(GgmlType::F16);
    let n_ctx = cfg.context.saturating_mul(cfg.concurrency);
    let kv = llama_cpp::kv_split(
        t,
        kv_type,
        (n_ctx, cfg.concurrency),
        cfg.n_ubatch,
        gpu_layers,
    );
    let buffers =
        llama_cpp::compute_buffers(t, n_ctx, cfg.n_ubatch.min(n_ctx), cfg.flash_attention);
    // With nothing offloaded the CPU backend runs the whole graph, inputs
    // included, in one buffer.
    let compute = buffers.gpu;
    let (compute_gpu, compute_host) = if gpu_layers > 0 {
        (compute, buffers.host)
    } else {
        (Bytes::ZERO, compute)
    };
    let devices = cfg.tp.max(1);
    if devices > 1 && gpu_layers > 0 {
        // Split by layer over equal GPUs: the fullest one decides. Every
        // layer and the output offloaded enables pipeline parallelism.
        let per_gpu = llama_cpp::device_split(
            t,
            &tensors,
            kv_type,
            (n_ctx, cfg.concurrency),
            cfg.n_ubatch,
            gpu_layers,
            devices,
        );
        let n_ubatch = cfg.n_ubatch.min(n_ctx);
        let compute_each = if gpu_layers > t.layers {
            llama_cpp::pipeline_compute_buffer(t, n_ctx, n_ubatch, cfg.flash_attention)
        } else {
            compute
        };
        let fullest = per_gpu
            .iter()
            .map(|&(w, k)| w + k + compute_each)
            .max()
            .unwrap_or(Bytes::ZERO);
        return ServeReport {
            weights_bytes: weights,
            kv_cache_bytes: kv.gpu + kv.host,
            compute_buffer_bytes: compute_each + compute_host,
            host_bytes: w.host + kv.host + compute_host,
            gpu_bytes: fullest,
            max_concurrency: None,
            kv_tokens: None,
        };
    }
    ServeReport {
        weights_bytes: weights,
        kv_cache_bytes: kv.gpu + kv.host,
        compute_buffer_bytes: compute_gpu + compute_host,
        host_bytes: w.host + kv.host + compute_host,
        gpu_bytes: w.gpu + kv.gpu + compute_gpu,
        max_concurrency: None,
        kv_tokens: None,
    }
}

/// Weight bytes of the PyTorch engines' formats: the block matrices in the
/// format, embeddings, LM head, norms, biases and routers in 16 bits.
///
/// A mixture of experts keeps every expert resident: vLLM's `FusedMoE`
/// allocates `w13_weight` `[experts, 2 × intermediate, hidden]` and
/// `w2_weight` `[experts, hidden, intermediate]` for all of them
/// (`vllm/model_executor/layers/fused_moe/layer.py`), each expert's
/// matrices quantized like a linear layer's (`Fp8MoEMethod`: one scale per
/// expert and matrix; AWQ/GPTQ `MoeWNA16`/Marlin: per-group scales and
/// zeros), and the router (`gate`, a `ReplicatedLinear` built without the
/// quantization config) in 16 bits. Latent attention's matrices are
/// `q_a_proj`/`q_b_proj` (or `q_proj`), `kv_a_proj_with_mqa`, `kv_b_proj`
/// and `o_proj` (`vllm/model_executor/models/deepseek_v2.py`).
pub fn format_weights(t: &TransformerSpec, w: ServeWeights) -> Bytes {
    let (sharded, replicated) = weight_parts(t, w);
    sharded + replicated
}

/// How many GPUs of `tp` hold each of `kv_heads` key/value heads under
/// `engine`'s tensor parallelism, or `None` where it cannot split them.
/// vLLM's and SGLang's `QKVParallelLinear` shard the heads where `tp`
/// divides them and give each GPU one head, copied `tp / kv_heads` times,
/// where `tp` is a multiple of them (`divide` refuses the rest);
/// `transformers`' `tp_plan` shards every projection's rows, so `tp` must
/// divide the heads.
pub fn kv_head_replicas(kv_heads: u64, engine: Engine, tp: u64) -> Option<u64> {
    let tp = tp.max(1);
    if kv_heads.is_multiple_of(tp) {
        Some(1)
    } else if engine != Engine::Hf && kv_heads > 0 && tp.is_multiple_of(kv_heads) {
        Some(tp / kv_heads)
    } else {
        None
    }
}

/// The key/value heads one of `tp` tensor-parallel GPUs holds: its share,
/// or the one head it holds a copy of ([`kv_head_replicas`]).
pub fn kv_heads_per_gpu(kv_heads: u64, tp: u64) -> u64 {
    (kv_heads / tp.max(1)).max(1)
}

/// The weights one of `tp` tensor-parallel GPUs holds: its share of the
/// matrices, embeddings and biases, and a whole copy of what vLLM and
/// SGLang replicate — the norms (`RMSNorm`), the routers (`gate`, a
/// `ReplicatedLinear`) and, where `tp` exceeds the key/value heads, the
/// head each GPU keeps a copy of ([`kv_head_replicas`]).
pub fn weights_per_gpu(t: &TransformerSpec, w: ServeWeights, tp: u64) -> Bytes {
    let (sharded, replicated) = weight_parts(t, w);
    let tp = tp.max(1);
    Bytes(sharded.0.div_ceil(tp)) + replicated + copied_kv_heads(t, w, tp)
}

/// The key and value projections (with their biases) one GPU holds beyond
/// its `1 / tp` share where `tp` exceeds the key/value heads: every head is
/// on `tp / kv_heads` GPUs. Layers of their own attention (latent, linear,
/// Gemma 4's two kinds) are left as sharded.
fn copied_kv_heads(t: &TransformerSpec, w: ServeWeights, tp: u64) -> Bytes {
    if t.kv_heads == 0
        || tp <= t.kv_heads
        || !tp.is_multiple_of(t.kv_heads)
        || t.mla.is_some()
        || t.gemma4.is_some()
    {
        return Bytes::ZERO;
    }
    let kv = t.kv_heads * t.head_dim;
    let bias = if t.qkv_bias { 2 * kv } else { 0 };
    let per_layer = 2 * matrix_bytes(w, (kv, t.hidden)) + 2 * bias;
    let layers = t.attention_layers();
    let replicas = tp / t.kv_heads;
    Bytes(
        (layers * per_layer)
            .saturating_mul(replicas - 1)
            .div_ceil(tp),
    )
}

/// Bytes of one `(out, in)` linear layer's weight in format `w`.
fn matrix_bytes(w: ServeWeights, (out, inp): (u64, u64)) -> u64 {
    let n = out * inp;
    let groups = inp.div_ceil(128);
    match w {
        // MXFP4 stores only the experts ([`expert_matrix_bytes`]).
        ServeWeights::Native | ServeWeights::Gguf(_) | ServeWeights::Mxfp4 => 2 * n,
        // One fp32 scale per tensor (`weight_scale`).
        ServeWeights::Fp8 => n + 4,
        // `qweight` 4 bits, `scales` fp16 and `qzeros` 4 bits per group × output.
        ServeWeights::AwqInt4 => n / 2 + out * groups * 2 + (out * groups).div_ceil(2),
        ServeWeights::GptqInt4 => n / 2 + out * groups * 2 + (out * groups).div_ceil(2) + 4 * inp,
        ServeWeights::Nf4 => {
            let blocks = n.div_ceil(64);
            n.div_ceil(2) + blocks + 4 * blocks.div_ceil(256)
        }
    }
}

/// Bytes of one routed expert's `(out, in)` matrix: as [`matrix_bytes`],
/// or in MXFP4 half a byte per value and a byte per 32.
fn expert_matrix_bytes(w: ServeWeights, (out, inp): (u64, u64)) -> u64 {
    match w {
        ServeWeights::Mxfp4 => out * (inp.div_ceil(2) + inp.div_ceil(32)),
        ServeWeights::Native
        | ServeWeights::Fp8
        | ServeWeights::AwqInt4
        | ServeWeights::GptqInt4
        | ServeWeights::Nf4
        | ServeWeights::Gguf(_) => matrix_bytes(w, (out, inp)),
    }
}

/// The routed experts' matrices one of `tp` GPUs holds (every expert of
/// every sparse layer, sharded by their intermediate size): what a decode
/// step reads only in part.
pub fn routed_expert_bytes(t: &TransformerSpec, w: ServeWeights, tp: u64) -> Bytes {
    let Some(moe) = t.moe.as_deref() else {
        return Bytes::ZERO;
    };
    let expert = expert_bytes(moe, t.hidden, w);
    let all = moe.sparse_layers(t.layers) * moe.experts * expert;
    Bytes(all.div_ceil(tp.max(1)))
}

/// Bytes of one routed expert's matrices in format `w`.
fn expert_bytes(moe: &Moe, hidden: u64, w: ServeWeights) -> u64 {
    moe.expert_matrices(hidden)
        .into_iter()
        .map(|m| expert_matrix_bytes(w, m))
        .sum()
}

/// [`format_weights`] as the bytes tensor parallelism shards and those it replicates.
fn weight_parts(t: &TransformerSpec, w: ServeWeights) -> (Bytes, Bytes) {
    let h = t.hidden;
    let per_matrix = |m: (u64, u64)| matrix_bytes(w, m);
    let mut block = 0u64;
    // Sharded vectors (biases, sinks) and replicated ones (norms, routers).
    let mut vectors = 0u64;
    let mut replicated = h;
    // Replicated bytes outside the 16-bit count (DSA's indexer).
    let mut replicated_bytes = 0u64;
    for i in 0..t.layers {
        // A single-mixer layer (Nemotron-H) holds a token mixer or a
        // feed-forward, not both.
        let (attn, biases, norms) = if t.mixes_tokens(i) {
            attention_matrices(t, i)
        } else {
            (Vec::new(), 0, 0)
        };
        block += attn.iter().map(|&m| per_matrix(m)).sum::<u64>();
        if let Some((ix, qr)) = t
            .mla
            .as_deref()
            .and_then(|m| m.indexer.map(|ix| (ix, m.q_lora_rank)))
            .filter(|(ix, _)| ix.runs_in(i))
        {
            // vLLM's indexer, whole on every GPU (`deepseek_v32/attention.py`):
            // `wq_b` a `ReplicatedLinear` in the format, `wk_weights_proj`
            // unquantized with `disable_tp`, `k_norm` an fp32 LayerNorm.
            let (ih, id) = (ix.heads, ix.head_dim);
            replicated_bytes += per_matrix((ih * id, qr)) + 2 * (id + ih) * h + 4 * 2 * id;
        }
        vectors += biases + if t.block.sinks { t.heads } else { 0 };
        // The block's two norms (Phi's attention and MLP share one, a
        // single-mixer layer has one).
        let block_norms = t.block_norms();
        replicated += norms + block_norms * h;
        match t.moe.as_deref() {
            Some(moe) if moe.is_sparse(i) => {
                let (e, f) = (moe.experts, moe.expert_intermediate);
                block += e * expert_bytes(moe, h, w);
                // Nemotron-H's latent projections around the experts.
                if moe.latent > 0 {
                    block += per_matrix((moe.latent, h)) + per_matrix((h, moe.latent));
                }
                // The router's weight (16-bit; fp32 for MiniMax-M2 and ERNIE
                // 4.5, whose `MiniMaxM2MoE` and `Ernie4_5_MoeMoE` build their
                // `gate` with `params_dtype=torch.float32` in vLLM), the fp32
                // `e_score_correction_bias` of the biased routers and, for
                // gpt-oss, the router's and experts' biases.
                replicated += match moe.router {
                    Router::SigmoidBias | Router::SoftmaxCorrected => 2 * e * h + 2 * e,
                    Router::SigmoidGroups { .. } => e * h + 2 * e,
                    Router::Softmax { .. }
                    | Router::SoftmaxGroups { .. }
                    | Router::TopKSoftmax
                    | Router::TopKSoftmaxFp32
                    | Router::HunYuan
                    | Router::Llama4 => e * h,
                    // Gemma 4's projection, learned scale and `per_expert_scale`.
                    Router::Gemma4 => e * h + h + e,
                };
                if moe.biases {
                    replicated += e;
                    vectors += e * (2 * f + h);
                }
                if let Some(s) = moe.shared {
                    let s_i = s.intermediate;
                    // Gate, up and down; up and down for ungated experts.
                    let ins = if moe.activation == ExpertActivation::Relu2 {
                        1
                    } else {
                        2
                    };
                    block += per_matrix((s_i, h)) * ins + per_matrix((h, s_i));
                    replicated += if s.gate { h } else { 0 };
                }
            }
            _ => {}
        }
        // A dense MLP, or Gemma 4's beside its experts (twice as wide in
        // the layers that reuse keys and values, `use_double_wide_mlp`).
        let gemma4 = t.gemma4.as_deref();
        if (t.has_feed_forward(i) && !t.moe.as_deref().is_some_and(|m| m.is_sparse(i)))
            || gemma4.is_some()
        {
            let f = gemma4.map_or(t.intermediate, |g| g.mlp_width(t, i));
            block += match t.block.mlp {
                // Up and down projections only (Phi-1/1.5/2, GPT-NeoX,
                // StarCoder2, Nemotron, OPT): the up projection's bias is
                // sharded with it, the down projection's whole on every GPU.
                MlpKind::Plain { bias, .. } => {
                    if bias {
                        vectors += f;
                        replicated += h;
                    }
                    per_matrix((f, h)) + per_matrix((h, f))
                }
                MlpKind::Gated | MlpKind::FusedGated => per_matrix((f, h)) * 2 + per_matrix((h, f)),
            };
        }
        // The attention output's bias (`mlp_bias` in the Llama layout), and
        // LayerNorms' biases beside their weights.
        if t.mlp_bias {
            replicated += h;
        }
        if matches!(
            t.block.norm_kind,
            NormKind::LayerNorm | NormKind::LayerNorm1P
        ) {
            replicated += block_norms * h;
        }
        // Gemma 4's per-layer input: its gate, projection and norm.
        if let Some(p) = gemma4.map(|g| g.per_layer_width).filter(|&p| p > 0) {
            block += per_matrix((p, h)) + per_matrix((h, p));
            replicated += h;
        }
    }
    // Gemma 4's per-layer embeddings (`VocabParallelEmbedding`, split over
    // the vocabulary), their projection and its norm.
    let per_layer = t.gemma4.as_deref().map_or(0, |g| {
        let width = t.layers * g.per_layer_width;
        replicated += g.per_layer_width;
        block += if width > 0 { per_matrix((width, h)) } else { 0 };
        g.per_layer_vocab * width
    });
    // Learned positions (OPT's table is `offset` rows longer), the LM
    // head's bias (Phi's), the final LayerNorm's bias.
    replicated += (t.max_positions + t.block.position_offset) * h;
    if t.block.lm_head_bias {
        vectors += t.vocab;
    }
    if matches!(
        t.block.norm_kind,
        NormKind::LayerNorm | NormKind::LayerNorm1P
    ) {
        replicated += h;
    }
    let embeddings = t.vocab * h * if t.tie_embeddings { 1 } else { 2 } + per_layer;
    // A multimodal checkpoint's vision encoder, in 16 bits whatever the
    // format (quantized checkpoints and vLLM's online FP8 leave it out).
    let encoder = t.encoder.as_deref().map_or(0, |e| e.params);
    (
        Bytes(block) + Bytes::of(vectors + embeddings + encoder, 2),
        Bytes::of(replicated, 2) + Bytes(replicated_bytes),
    )
}

/// How an engine's Gemma 4 attention weights differ from vLLM's layout
/// ([`attention_matrices`]), `(more, less)` over all GPUs: SGLang builds a
/// whole `QKVParallelLinear` in every layer and loads the shared layers'
/// `k_proj` and `v_proj` the checkpoint ships (`gemma4_causal.py`);
/// `transformers` builds no value projection in a keys-as-values layer,
/// where vLLM loads the keys into the V shard too.
fn gemma4_engine_weights(t: &TransformerSpec, w: ServeWeights, engine: Engine) -> (Bytes, Bytes) {
    let Some(g) = t.gemma4.as_deref() else {
        return (Bytes::ZERO, Bytes::ZERO);
    };
    let h = t.hidden;
    let (mut more, mut less) = (0, 0);
    for i in 0..t.layers {
        let a = g.layer(t, i);
        let kv = matrix_bytes(w, (a.kv_heads * a.head_dim, h));
        match engine {
            Engine::Sglang if !a.projects_kv => more += 2 * kv,
            Engine::Hf if a.projects_kv && !a.v_proj => less += kv,
            Engine::Sglang | Engine::Hf | Engine::Vllm | Engine::LlamaCpp => {}
        }
    }
    (Bytes(more), Bytes(less))
}

/// Layer `i`'s attention matrices, `(out, in)`, its sharded vectors
/// (biases) and its norms (q/k norms, latent norms), in elements. A
/// linear-attention layer's are its projections (vLLM's
/// `in_proj_qkvz`/`in_proj_ba`, or Qwen3.5's four) and `out_proj`, the
/// convolution's weights with `A_log` and `dt_bias` (sharded), the gated
/// norm (replicated).
fn attention_matrices(t: &TransformerSpec, i: u64) -> (Vec<(u64, u64)>, u64, u64) {
    let h = t.hidden;
    if let Some(g) = t.gemma4.as_deref() {
        // vLLM's Gemma 4: a layer that reuses keys and values builds
        // `q_proj` alone; keys-as-values layers load K into the V shard of
        // their `QKVParallelLinear` too (`k_eq_v_shards`).
        let a = g.layer(t, i);
        let (q, kv) = (t.heads * a.head_dim, a.kv_heads * a.head_dim);
        let mut m = vec![(q, h)];
        if a.projects_kv {
            m.extend([(kv, h), (kv, h)]);
        }
        m.push((h, q));
        let norms = if a.projects_kv { 2 } else { 1 } * a.head_dim;
        return (m, 0, norms);
    }
    let q = t.heads * t.head_dim;
    if let Some(Recurrent::Mamba2(m)) = t.linear.as_deref().filter(|g| g.is_linear(i)) {
        // `MambaMixer2`: `in_proj`, `out_proj`; the convolution (and its
        // bias), `dt_bias`, `A`, `D`; the gated norm's weight.
        let conv = m.conv_dim() * m.conv_kernel + if m.conv_bias { m.conv_dim() } else { 0 };
        let m_out = vec![(m.in_width(), h), (h, m.inner())];
        return (m_out, conv + 3 * m.heads, m.inner());
    }
    if let Some(Recurrent::DeltaNet(g)) = t.linear.as_deref().filter(|g| g.is_linear(i)) {
        let (vd, hv) = (g.value_dim(), g.value_heads);
        let mut m = if g.grouped {
            vec![(g.conv_dim() + vd, h), (2 * hv, h)]
        } else {
            vec![(g.conv_dim(), h), (vd, h), (hv, h), (hv, h)]
        };
        m.push((h, vd));
        return (m, g.conv_dim() * g.conv_kernel + 2 * hv, g.value_head_dim);
    }
    let Some(mla) = t.mla.as_deref() else {
        let kv = t.kv_heads * t.head_dim;
        let biases = if t.qkv_bias { q + 2 * kv } else { 0 };
        let norms = match t.block.qk_norm {
            crate::models::transformer::QkNorm::None
            | crate::models::transformer::QkNorm::L2AfterRotary => 0,
            crate::models::transformer::QkNorm::PerHead
            | crate::models::transformer::QkNorm::PerHeadAfterRotary => 2 * t.head_dim,
            crate::models::transformer::QkNorm::Whole => q + kv,
        };
        // A gated attention's `q_proj` projects the gate too.
        let q_out = if t.block.attn_gate { 2 * q } else { q };
        return (vec![(q_out, h), (kv, h), (kv, h), (h, q)], biases, norms);
    };
    let r = mla.kv_lora_rank;
    let mut m = if mla.q_lora_rank > 0 {
        vec![(mla.q_lora_rank, h), (q, mla.q_lora_rank)]
    } else {
        vec![(q, h)]
    };
    m.extend([
        (r + mla.qk_rope_head_dim, h),
        (t.heads * (mla.qk_nope_head_dim + mla.v_head_dim), r),
        (h, t.heads * mla.v_head_dim),
    ]);
    (m, 0, mla.q_lora_rank + r)
}

/// vLLM, SGLang and Hugging Face: 16-bit activations, the weights sharded
/// over `tp` GPUs.
fn torch_report(
    t: &TransformerSpec,
    w: ServeWeights,
    gpu: &GpuPreset,
    cfg: &ServeConfig,
) -> ServeReport {
    // Gemma 4's attention weights as the engine loads them, against
    // vLLM's layout that `weight_parts` counts.
    let (more, less) = gemma4_engine_weights(t, w, cfg.engine);
    // SGLang builds no vision model for Llama 4 (`mllama4.py`'s
    // `has_vision`): multimodal is off by default for
    // `Llama4ForConditionalGeneration` (`model_config.py`) unless
    // `--enable-multimodal`.
    let llama4 = t.moe.as_deref().is_some_and(|m| m.router == Router::Llama4);
    let less = match t.encoder.as_deref() {
        Some(e) if cfg.engine == Engine::Sglang && llama4 => less + Bytes::of(e.params, 2),
        _ => less,
    };
    let weights = (format_weights(t, w) + more).saturating_sub(less);
    let per_gpu = (weights_per_gpu(t, w, cfg.tp) + Bytes(more.0.div_ceil(cfg.tp.max(1))))
        .saturating_sub(Bytes(less.0.div_ceil(cfg.tp.max(1))));
    let kv_size = cfg.kv.torch_size().unwrap_or(2);
    // Keys and values of one token in one layer on one GPU.
    let kv_token_layer = budget::kv_token_layer(t, kv_size, cfg.tp);
    // A sparse-attention model's cache per token, all layers (vLLM, SGLang).
    let dsa = budget::dsa_token_bytes(t, kv_size);
    // The CUDA context, the one cuBLAS handle's own memory and the kernel
    // images: what lies outside PyTorch's allocator in an inference step.
    let non_torch = Overheads::for_gpu(gpu).outside_allocator(crate::config::Mode::Inference);
    let mut budget = budget::Budget {
        total: gpu.memory_bytes,
        fraction: cfg.gpu_memory_utilization,
        weights: per_gpu,
        activations: Bytes::ZERO,
        non_torch,
    };
    match cfg.engine {
        Engine::Vllm => {
            let (tokens, seqs) = budget::vllm_defaults(gpu);
            let per_token = budget::profile_activation_per_token(t, cfg.tp);
            budget.activations = Bytes::of(tokens * per_token, 2);
            if dsa.is_some() {
                let (held, transient) = budget::vllm_dsa_buffers(t, cfg.context, (tokens, seqs));
                budget.activations = budget.activations.max(transient) + held;
            }
            let pool = budget::vllm_kv_budget(&budget);
            let kinds = budget::TwoKinds::of(t, kv_size, cfg.tp, false);
            let kv = match (t.linear.as_deref(), kinds, dsa) {
                (_, _, Some(per_token)) => budget::vllm_dsa_kv(pool, per_token, cfg.context),
                (Some(g), _, None) => {
                    budget::vllm_linear_kv(t, g, pool, (kv_token_layer, cfg.tp), cfg.context)
                }
                (None, Some(k), None) => budget::vllm_two_kinds_kv(&k, pool, cfg.context, tokens),
                (None, None, None) => budget::vllm_kv(t, pool, kv_token_layer, cfg.context, tokens),
            };
            ServeReport {
                weights_bytes: weights,
                kv_cache_bytes: kv.bytes,
                compute_buffer_bytes: budget.activations,
                host_bytes: Bytes::ZERO,
                gpu_bytes: per_gpu + budget.activations + non_torch + kv.bytes,
                max_concurrency: Some(kv.max_concurrency),
                kv_tokens: Some(kv.tokens),
            }
        }
        Engine::Sglang => {
            let pool = budget::sglang_kv_budget(&budget);
            let kinds = budget::TwoKinds::of(t, kv_size, cfg.tp, true);
            let (tokens, kv, most) = match (t.linear.as_deref(), kinds, dsa) {
                (_, _, Some(cell)) => {
                    let (tokens, kv) = budget::sglang_dsa_kv(pool, cell);
                    (tokens, kv, f64::INFINITY)
                }
                (Some(g), _, None) => {
                    budget::sglang_linear_kv(t, g, pool, (kv_token_layer, cfg.tp))
                }
                (None, Some(k), None) => {
                    let (tokens, kv) = budget::sglang_two_kinds_kv(&k, pool);
                    (tokens, kv, f64::INFINITY)
                }
                (None, None, None) => {
                    let (tokens, kv) = budget::sglang_kv(t, pool, kv_token_layer);
                    (tokens, kv, f64::INFINITY)
                }
            };
            ServeReport {
                weights_bytes: weights,
                kv_cache_bytes: kv,
                compute_buffer_bytes: Bytes::ZERO,
                host_bytes: Bytes::ZERO,
                gpu_bytes: per_gpu + non_torch + kv,
                max_concurrency: Some((tokens as f64 / cfg.context as f64).min(most)),
                kv_tokens: Some(tokens),
            }
        }
        Engine::Hf | Engine::LlamaCpp => {
            let tokens = cfg.context.saturating_mul(cfg.concurrency);
            // `transformers`' cache: keys and values of the attention
            // layers, and each linear layer's convolution state (the
            // model's dtype) and fp32 recurrent state per sequence.
            let states = t.linear.as_deref().map_or(0, |g| {
                g.linear_layers(t.layers)
                    .saturating_mul(g.state_bytes(kv_size))
                    .saturating_mul(cfg.concurrency)
            });
            // Gemma 4's kinds of layer, the shared ones keeping none.
            let per_token = budget::TwoKinds::of(t, kv_size, cfg.tp, false).map_or_else(
                || t.attention_layers().saturating_mul(kv_token_layer),
                |k| k.per_token(),
            );
            // A sparse-attention layer's indexer keys beside its latent, in
            // the cache's dtype (`cache.update_indexer`).
            let indexer = t
                .mla
                .as_deref()
                .and_then(|m| m.indexer)
                .map_or(0, |ix| ix.layers(t.layers) * ix.head_dim * kv_size);
            let kv = Bytes::of(tokens, per_token + indexer) + Bytes(states);
            ServeReport {
                weights_bytes: weights,
                kv_cache_bytes: kv,
                compute_buffer_bytes: Bytes::ZERO,
                host_bytes: Bytes::ZERO,
                gpu_bytes: per_gpu + non_torch + kv,
                max_concurrency: None,
                kv_tokens: None,
            }
        }
    }
}
