//! The serving settings the front ends carry (`--engine`, `--kv-dtype`,
//! `--concurrency`, `--gpu-memory-utilization`, `--gpu-layers`, and the
//! serving formats of `--weights`), next to the [`TrainConfig`] whose
//! context, tensor-parallel degree and attention they share, and the
//! verdict an engine's numbers give on a GPU.

use super::decode::{Decode, decode};
use super::mix::GgufMix;
use super::{Engine, GGUF_ONLY, KvDtype, NOT_GGUF, ServeConfig, ServeReport, ServeWeights};
use crate::config::{Attention, Mode, TrainConfig, WeightFormat};
use crate::dtype::DType;
use crate::error::{Error, ServeFault, check_range};
use crate::gpus::GpuPreset;
use crate::models::ModelSpec;
use crate::overheads::Overheads;
use crate::units::Bytes;

/// Most sequences in flight a setting may ask for.
pub const MAX_CONCURRENCY: u64 = 1 << 20;

/// Most layers `--gpu-layers` may name (a model's own count bounds it further).
pub const MAX_GPU_LAYERS: u64 = 100_000;

/// vLLM's `--gpu-memory-utilization` default (SGLang picks its
/// `--mem-fraction-static` by GPU size; the same default stands in for it).
pub const DEFAULT_UTILIZATION: f64 = 0.9;

/// The serving settings a share link carries beside the [`TrainConfig`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Serving {
    /// The engine; [`Engine::Hf`] is the op-by-op simulation of `generate`.
    pub engine: Engine,
    /// A serving-only weight format (GGUF, fp8, AWQ, GPTQ); `Native` means
    /// as `--weights`' training formats and `--precision` say.
    pub weights: ServeWeights,
    /// The KV cache's element type.
    pub kv: KvDtype,
    /// Sequences in flight (llama.cpp's slots; vLLM and SGLang fit when
    /// their pool holds this many of the context).
    pub concurrency: u64,
    /// vLLM's `--gpu-memory-utilization`, SGLang's `--mem-fraction-static`.
    pub gpu_memory_utilization: f64,
    /// llama.cpp's `-ngl`; `None` offloads everything.
    pub gpu_layers: Option<u64>,
}

impl Default for Serving {
    fn default() -> Self {
        Serving {
            engine: Engine::Hf,
            weights: ServeWeights::Native,
            kv: KvDtype::F16,
            concurrency: 1,
            gpu_memory_utilization: DEFAULT_UTILIZATION,
            gpu_layers: None,
        }
    }
}

/// An out-of-place setting: `flag` belongs to `owner`.
fn not_for(flag: &'static str, engine: Engine, owner: &'static str) -> Error {
    Error::Serve(ServeFault::NotForEngine {
        flag,
        engine: engine.id(),
        owner,
    })
}

impl Serving {
    /// Checks each setting's range.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] naming the first setting outside its range.
    pub fn validate(&self) -> Result<(), Error> {
        check_range("concurrency", self.concurrency, 1, MAX_CONCURRENCY)?;
        if let Some(n) = self.gpu_layers {
            check_range("gpu-layers", n, 0, MAX_GPU_LAYERS)?;
        }
        let u = self.gpu_memory_utilization;
        if !(u > 0.0 && u <= 1.0) {
            return Err(Error::OutOfRange {
                field: "gpu-memory-utilization",
                value: u.to_string(),
                min: 0,
                max: 1,
            });
        }
        Ok(())
    }

    /// Whether the settings go with the engine and `train`: each engine's
    /// own flags with it only, the engines other than Hugging Face in
    /// inference mode only, Hugging Face with its training formats and a
    /// 16-bit cache (its KV cache follows `--precision`).
    ///
    /// # Errors
    /// [`Error::Serve`] naming the setting.
    pub fn check(&self, train: &TrainConfig) -> Result<(), Error> {
        self.validate()?;
        let e = self.engine;
        if e != Engine::Hf && train.mode != Mode::Inference {
            return Err(Error::Serve(ServeFault::NeedsInference {
                engine: e.id(),
                mode: train.mode.id(),
            }));
        }
        if self.gpu_layers.is_some() && e != Engine::LlamaCpp {
            return Err(not_for("--gpu-layers", e, "llama.cpp's -ngl"));
        }
        if self.gpu_memory_utilization != DEFAULT_UTILIZATION
            && !matches!(e, Engine::Vllm | Engine::Sglang)
        {
            return Err(not_for(
                "--gpu-memory-utilization",
                e,
                "vLLM's budget (SGLang's --mem-fraction-static)",
            ));
        }
        match e {
            Engine::Hf => self.check_hf(),
            Engine::LlamaCpp
                if matches!(self.kv, KvDtype::Q8_0 | KvDtype::Q4_0)
                    && train.attention == Attention::Eager =>
            {
                Err(Error::Serve(ServeFault::KvNeedsFlash { kv: self.kv.id() }))
            }
            Engine::LlamaCpp | Engine::Vllm | Engine::Sglang => Ok(()),
        }
    }

    /// Hugging Face `generate` runs the checkpoint as `--precision` and
    /// `--weights int8|int4` load it, its batch is `--batch`.
    fn check_hf(&self) -> Result<(), Error> {
        let engine = Engine::Hf.id();
        if self.weights != ServeWeights::Native {
            return Err(Error::Serve(ServeFault::Weights {
                engine,
                weights: self.weights.id(),
                accepted: "fp32, fp16, bf16, int8 or int4",
            }));
        }
        if !matches!(self.kv, KvDtype::F16 | KvDtype::Bf16) {
            return Err(Error::Serve(ServeFault::KvDtype {
                engine,
                kv: self.kv.id(),
                accepted: "f16|bf16 (the cache follows --precision)",
            }));
        }
        if self.concurrency != 1 {
            return Err(not_for(
                "--concurrency",
                Engine::Hf,
                "the serving engines' (Hugging Face's sequences are --batch)",
            ));
        }
        Ok(())
    }

    /// The weights the engine loads: the serving format if one was chosen,
    /// else the training format — 16-bit weights as the checkpoint has
    /// them (llama.cpp: an f16 or, with a bf16 precision, bf16 GGUF; vLLM
    /// and SGLang load `--dtype auto`, 16 bits), `int4` as bitsandbytes NF4.
    ///
    /// # Errors
    /// [`ServeFault::Weights`] for `int8` (no engine here runs
    /// bitsandbytes LLM.int8) and `int4` on llama.cpp.
    pub fn weights_for(&self, train: &TrainConfig) -> Result<ServeWeights, Error> {
        if self.weights != ServeWeights::Native {
            return Ok(self.weights);
        }
        let llama = self.engine == Engine::LlamaCpp;
        let refused = |weights| {
            Error::Serve(ServeFault::Weights {
                engine: self.engine.id(),
                weights,
                accepted: if llama { GGUF_ONLY } else { NOT_GGUF },
            })
        };
        let bf16 = train.precision.param_dtype() == DType::Bf16
            || train.precision.autocast() == Some(DType::Bf16);
        match train.weight_format() {
            WeightFormat::Native if llama && bf16 => Ok(ServeWeights::Gguf(GgufMix::Bf16)),
            WeightFormat::Native if llama => Ok(ServeWeights::Gguf(GgufMix::F16)),
            WeightFormat::Native => Ok(ServeWeights::Native),
            WeightFormat::Int4 if !llama => Ok(ServeWeights::Nf4),
            w @ (WeightFormat::Int4 | WeightFormat::Int8) => Err(refused(w.id())),
        }
    }

    /// The engine's configuration: the settings with `train`'s context
    /// (`--context`, else `--seq`), tensor-parallel degree and attention
    /// (llama.cpp's `-fa` for `sdpa` and `flash`).
    ///
    /// # Errors
    /// As [`Serving::check`] and [`Serving::weights_for`].
    pub fn config(&self, train: &TrainConfig) -> Result<ServeConfig, Error> {
        self.check(train)?;
        Ok(ServeConfig {
            engine: self.engine,
            weights: self.weights_for(train)?,
            kv: self.kv,
            context: train.cache_tokens(),
            concurrency: self.concurrency,
            gpu_memory_utilization: self.gpu_memory_utilization,
            gpu_layers: self.gpu_layers,
            tp: train.parallel.tp,
            n_ubatch: ServeConfig::default().n_ubatch,
            flash_attention: train.attention != Attention::Eager,
        })
    }
}

/// The verdict on a GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct ServeFit {
    /// The GPU's preset id.
    pub gpu: String,
    /// What the engine may use: the whole GPU for llama.cpp (Metal's
    /// working set on Apple silicon, [`GpuPreset::default_usable`]), the
    /// utilization's share for vLLM and SGLang.
    pub usable_bytes: Bytes,
    /// llama.cpp: its GPU memory fits; vLLM and SGLang: the weights, the
    /// profiled activations and the non-torch memory fit in the share and
    /// the KV pool holds `concurrency` sequences of the context (one lets
    /// the engine start).
    pub fits: bool,
}

/// An engine's answer for one model and setting.
#[derive(Clone, Debug, PartialEq)]
pub struct ServeEstimate {
    /// The engine's configuration, as resolved from the settings.
    pub config: ServeConfig,
    /// What the engine allocates.
    pub report: ServeReport,
    /// Parameters, as `sum(p.numel())`.
    pub parameter_count: u64,
    /// What nvidia-smi shows: llama.cpp's GPU buffers and the CUDA
    /// context; vLLM's and SGLang's whole share (non-torch memory included).
    pub device_used_bytes: Bytes,
    /// The verdict, when a GPU was given.
    pub fit: Option<ServeFit>,
    /// The decode speed the GPU's bandwidth allows (an estimate), when a
    /// GPU with a known bandwidth runs the whole model.
    pub decode: Option<Decode>,
    /// How the engine lays out this model's KV cache.
    pub cache: super::cache::CacheLayout,
    /// The model's trained context when the context per sequence exceeds it
    /// (llama.cpp runs it, warning "n_ctx_seq > n_ctx_train -- possible
    /// training context overflow"; vLLM and SGLang refuse it).
    pub beyond_trained_context: Option<u64>,
}

/// What the engine in `serving` allocates to serve `model`, and whether it fits `gpu`.
///
/// # Errors
/// As [`Serving::config`] and [`super::serve`]; [`ServeFault::GpuLayers`]
/// for more offloaded layers than the model has; [`ServeFault::NeedsGpu`]
/// for vLLM or SGLang without a GPU. Hugging Face is the session's
/// simulation: [`ServeFault::NotForEngine`] here.
///
/// # Example
/// ```
/// use vramfit_core::engines::{Engine, Serving, ServeWeights, estimate};
/// use vramfit_core::config::{Mode, TrainConfig};
/// let model = vramfit_core::model_preset("llama-3-8b").unwrap().spec;
/// let gpu = vramfit_core::gpu_preset("rtx-4090").unwrap();
/// let train = TrainConfig { mode: Mode::Inference, context: 8192, ..TrainConfig::default() };
/// let serving = Serving { engine: Engine::LlamaCpp, weights: "q4_k_m".parse().unwrap(), ..Serving::default() };
/// let e = estimate(&model, Some(&gpu), &train, &serving).unwrap();
/// assert_eq!(e.report.kv_cache_bytes.0, 1 << 30);
/// assert!(e.fit.unwrap().fits);
/// let too_many = Serving { gpu_layers: Some(40), ..serving };
/// assert!(estimate(&model, Some(&gpu), &train, &too_many).is_err()); // 32 layers + the output
/// ```
pub fn estimate(
    model: &ModelSpec,
    gpu: Option<&GpuPreset>,
    train: &TrainConfig,
    serving: &Serving,
) -> Result<ServeEstimate, Error> {
    if serving.engine == Engine::Hf {
        return Err(not_for(
            "engines::estimate",
            Engine::Hf,
            "answered by vramfit_core::estimate, the op-by-op simulation",
        ));
    }
    let config = serving.config(train)?;
    let t = match model {
        ModelSpec::Transformer(t) => t,
        _ => return Err(Error::Serve(ServeFault::NotADecoder)),
    };
    let layers = t.layers;
    if let Some(n) = config.gpu_layers.filter(|n| *n > layers + 1) {
        return Err(Error::Serve(ServeFault::GpuLayers {
            gpu_layers: n,
            layers,
            most: layers + 1,
        }));
    }
    let report = super::serve_on(model, gpu, &config)?;
    let beyond_trained_context = t.trained_context().filter(|&n| config.context > n);
    if let Some(limit) = beyond_trained_context {
        let override_var = match config.engine {
            Engine::Vllm => Some("VLLM_ALLOW_LONG_MAX_MODEL_LEN"),
            Engine::Sglang => Some("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"),
            Engine::LlamaCpp | Engine::Hf => None,
        };
        if let Some(override_var) = override_var {
            return Err(Error::Serve(ServeFault::ContextAboveLimit {
                engine: config.engine.id(),
                context: config.context,
                limit,
                override_var,
            }));
        }
    }
    let context = gpu
        .map_or_else(Overheads::default, Overheads::for_gpu)
        .outside_allocator(crate::config::Mode::Inference);
    let device_used_bytes = match config.engine {
        // vLLM's and SGLang's GPU bytes count their non-torch memory.
        Engine::Vllm | Engine::Sglang => report.gpu_bytes,
        Engine::LlamaCpp | Engine::Hf => report.gpu_bytes + context,
    };
    let fit = gpu.map(|g| {
        let (usable_bytes, fits) = match config.engine {
            Engine::Vllm | Engine::Sglang => (
                Bytes((g.memory_bytes.0 as f64 * config.gpu_memory_utilization).ceil() as u64),
                report
                    .max_concurrency
                    .is_some_and(|c| c >= config.concurrency as f64),
            ),
            // What a process may use: on Apple silicon Metal's working set,
            // past which llama.cpp warns and its buffers can fail.
            Engine::LlamaCpp | Engine::Hf => {
                let usable = g.default_usable();
                (usable, device_used_bytes <= usable)
            }
        };
        ServeFit {
            gpu: g.id.to_string(),
            usable_bytes,
            fits,
        }
    });
    Ok(ServeEstimate {
        config,
        report,
        parameter_count: model.parameter_count()?,
        device_used_bytes,
        fit,
        decode: gpu.and_then(|g| decode(t, g, &config, &report)),
        cache: super::cache::CacheLayout::of(t, &config),
        beyond_trained_context,
    })
}

/// `--weights`' formats (the share key `w`'s values): the training formats
/// but `native` (which a precision names), `nf4` (bitsandbytes' NF4, which
/// `int4` is), the PyTorch engines' serving formats and the quantizing GGUF
/// mixes (an f16 or bf16 GGUF is `--weights fp16|bf16` with llama.cpp).
pub fn weights_ids() -> impl Iterator<Item = &'static str> {
    let train = WeightFormat::ALL
        .iter()
        .filter(|w| **w != WeightFormat::Native)
        .map(|w| w.id());
    let serve = ServeWeights::FORMATS
        .iter()
        .filter(|w| !matches!(w, ServeWeights::Native | ServeWeights::Nf4))
        .map(|w| w.id());
    let gguf = GgufMix::ALL
        .iter()
        .filter(|m| !matches!(m, GgufMix::F16 | GgufMix::Bf16))
        .map(|m| m.id());
    train.chain(["nf4"]).chain(serve).chain(gguf)
}

/// A `--weights` format (one of [`weights_ids`], or `native`) as the
/// training format and the serving one it sets; `None` when it is none.
pub fn parse_weights(v: &str) -> Option<(WeightFormat, ServeWeights)> {
    if v == "nf4" {
        return Some((WeightFormat::Int4, ServeWeights::Native));
    }
    if let Ok(w) = v.parse::<WeightFormat>() {
        return Some((w, ServeWeights::Native));
    }
    match v.parse::<ServeWeights>().ok()? {
        ServeWeights::Gguf(GgufMix::F16 | GgufMix::Bf16) | ServeWeights::Native => None,
        w @ (ServeWeights::Fp8
        | ServeWeights::AwqInt4
        | ServeWeights::GptqInt4
        | ServeWeights::Nf4
        | ServeWeights::Mxfp4
        | ServeWeights::Gguf(_)) => Some((WeightFormat::Native, w)),
    }
}

/// The `--weights` id of a training and a serving format (the serving one
/// when set).
pub fn weights_id(train: WeightFormat, serve: ServeWeights) -> &'static str {
    match serve {
        ServeWeights::Native => train.id(),
        w => w.id(),
    }
}
