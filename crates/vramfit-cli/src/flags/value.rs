//! Reading flag values, in the CLI's words for what was expected, and the
//! accepted ids the help lists, taken from the core's enums.
//!
//! The CLI reads values exactly as typed; a share link's keys (which set the
//! same things) trim them, since links are typed and pasted by hand. Ranges
//! are checked once every flag is read, by `TrainConfig::validate` (the
//! bounds the link keys check too).

use super::Refused;
use crate::args::{CliError, EstimateArgs};
use std::str::FromStr;
use vramfit_core::config::{CheckpointMode, LoraBase, Mode, WeightFormat};
use vramfit_core::engines::{Engine, KvDtype, ServeWeights, serving};
use vramfit_core::parallel::{Offload, Strategy};
use vramfit_core::share::{self, IMPORTED_MODEL};
use vramfit_core::{Attention, Error, ModuleLoading, Optimizer, Precision};

/// A whole number.
pub(super) fn count(v: &str) -> Result<u64, Refused> {
    v.parse::<u64>()
        .map_err(|_| Refused::Expected("a whole number".into()))
}

/// A number in (0, 1]; `expected` words it.
pub(super) fn unit(v: &str, expected: &str) -> Result<f64, Refused> {
    v.parse::<f64>()
        .ok()
        .filter(|f| *f > 0.0 && *f <= 1.0)
        .ok_or_else(|| Refused::Expected(expected.into()))
}

/// `plan`'s and `max-batch`'s margin: a fraction in [0, 0.9).
pub(super) fn margin(v: &str) -> Result<f64, Refused> {
    v.parse::<f64>()
        .ok()
        .filter(|m| (0.0..0.9).contains(m))
        .ok_or_else(|| Refused::Expected("a fraction in [0, 0.9)".into()))
}

/// `on|true|1` or `off|false|0`.
pub(super) fn on_off(v: &str) -> Result<bool, Refused> {
    match v {
        "on" | "true" | "1" => Ok(true),
        "off" | "false" | "0" => Ok(false),
        _ => Err(Refused::Expected("on|off".into())),
    }
}

/// One of an enum's ids; the enum's own error says which it accepts.
pub(super) fn choice<T: FromStr<Err = Error>>(v: &str) -> Result<T, Refused> {
    v.parse::<T>().map_err(|e| match e {
        Error::InvalidChoice { accepted, .. } => Refused::Expected(accepted),
        other => Refused::Error(CliError::Core(other)),
    })
}

/// Ids joined by `|`.
fn joined<'a>(ids: impl IntoIterator<Item = &'a str>) -> String {
    ids.into_iter().collect::<Vec<_>>().join("|")
}

/// `--precision`'s ids.
pub(super) fn precisions() -> String {
    Precision::accepted()
}

/// `--optimizer`'s ids.
pub(super) fn optimizers() -> String {
    Optimizer::accepted()
}

/// `--loop-outputs`' ids.
pub(super) fn loop_outputs() -> String {
    vramfit_core::config::LoopOutputs::accepted()
}

/// `--attention-mask`'s ids.
pub(super) fn attention_masks() -> String {
    vramfit_core::config::AttentionMask::accepted()
}

/// `--training-cache`'s ids.
pub(super) fn training_caches() -> String {
    vramfit_core::config::TrainingCache::accepted()
}

/// `--autocast-region`'s ids.
pub(super) fn autocast_regions() -> String {
    vramfit_core::config::AutocastRegion::accepted()
}

/// `--pytorch`'s ids.
pub(super) fn torch_releases() -> String {
    vramfit_core::config::TorchRelease::accepted()
}

/// `--zero-grad`'s ids.
pub(super) fn zero_grads() -> String {
    vramfit_core::config::ZeroGrad::accepted()
}

/// `--optimizer-impl`'s ids.
pub(super) fn optimizer_impls() -> String {
    vramfit_core::OptimizerImpl::accepted()
}

/// `--checkpointing`'s ids: a mode, or every K-th block.
pub(super) fn checkpointings() -> String {
    format!("{}|every-K", CheckpointMode::accepted())
}

/// `--attention`'s ids.
pub(super) fn attentions() -> String {
    Attention::accepted()
}

/// `--lora-base`'s ids.
pub(super) fn lora_bases() -> String {
    LoraBase::accepted()
}

/// `--mode`'s ids.
pub(super) fn modes() -> String {
    Mode::accepted()
}

/// `--strategy`'s ids.
pub(super) fn strategies() -> String {
    joined(Strategy::ALL.iter().map(|s| s.id()))
}

/// `--offload`'s ids (the core lists no `ALL` for it).
pub(super) fn offloads() -> String {
    joined([Offload::None, Offload::Optimizer, Offload::OptimizerParams].map(Offload::id))
}

/// `--weights`' ids: a plain floating-point precision (the model's), a
/// quantized format of the block linears or a serving format
/// (`serving::weights_ids`; `native` is taken too, unlisted: it means "as
/// the precision says").
pub(super) fn weights() -> String {
    let plain = Precision::ALL
        .iter()
        .filter(|p| p.autocast().is_none())
        .map(|p| p.id());
    joined(plain.chain(serving::weights_ids()))
}

/// `--weights`: a plain precision sets the model's precision (native
/// weights), anything else is a weight format.
pub(super) fn set_weights(a: &mut EstimateArgs, v: &str) -> Result<(), Refused> {
    match Precision::ALL
        .iter()
        .find(|p| p.autocast().is_none() && p.id() == v)
    {
        Some(&p) => {
            a.config.precision = p;
            a.config.weights = WeightFormat::Native;
            a.serve.weights = ServeWeights::Native;
        }
        None => {
            let (train, serve) =
                serving::parse_weights(v).ok_or_else(|| Refused::Expected(weights()))?;
            a.config.weights = train;
            a.serve.weights = serve;
        }
    }
    Ok(())
}

/// `--engine`'s ids.
pub(super) fn engines() -> String {
    joined(Engine::ALL.iter().map(|e| e.id()))
}

/// `--kv-dtype`'s ids.
pub(super) fn kv_dtypes() -> String {
    joined(KvDtype::ALL.iter().map(|k| k.id()))
}

/// `--gpu-layers`: a count, or `all` (what leaving it out means).
pub(super) fn gpu_layers(v: &str) -> Result<Option<u64>, Refused> {
    match v {
        "all" => Ok(None),
        n => count(n).map(Some),
    }
}

/// `--cuda-loading`'s ids and what each means.
const LOADINGS: [(&str, ModuleLoading); 2] = [
    ("lazy", ModuleLoading::Lazy),
    ("eager", ModuleLoading::Eager),
];

/// `--cuda-loading`'s ids.
pub(super) fn loadings() -> String {
    joined(LOADINGS.iter().map(|(id, _)| *id))
}

/// `--cuda-loading`.
pub(super) fn loading(v: &str) -> Result<ModuleLoading, Refused> {
    LOADINGS
        .iter()
        .find(|(id, _)| *id == v)
        .map(|(_, l)| *l)
        .ok_or_else(|| Refused::Expected(loadings()))
}

/// What `plan --export` (a training framework's configuration) and
/// `estimate --export` (an engine's launch command) write.
const EXPORTS: [&str; 8] = [
    "deepspeed",
    "hf",
    "accelerate",
    "pytorch",
    "megatron",
    "vllm",
    "llama.cpp",
    "sglang",
];

/// `--export`'s ids.
pub(super) fn exports() -> String {
    joined(EXPORTS)
}

/// `--export`.
pub(super) fn export(v: &str) -> Result<String, Refused> {
    if EXPORTS.contains(&v) {
        Ok(v.to_string())
    } else {
        Err(Refused::Expected(exports()))
    }
}

/// `--base-url`: an http(s) URL.
pub(super) fn base_url(v: &str) -> Result<String, Refused> {
    if v.starts_with("https://") || v.starts_with("http://") {
        Ok(v.to_string())
    } else {
        Err(Refused::Expected("an http(s):// URL".into()))
    }
}

/// `--from-url`: the link's model, GPU and configuration become the
/// starting point (the parser applies it before the other flags, which
/// override it); what the link had that could not be used becomes warnings.
pub(super) fn set_from_url(a: &mut EstimateArgs, link: &str) -> Result<(), Refused> {
    let decoded = share::decode(link);
    a.warnings = decoded
        .warnings
        .iter()
        .map(|w| format!("the link's {w}"))
        .collect();
    let state = decoded.state;
    a.config = state.train;
    a.serve = state.serve;
    a.gpu = Some(state.gpu);
    a.model_json = state.config_json.filter(|_| state.model == IMPORTED_MODEL);
    a.model = state.model;
    Ok(())
}

/// `--bench-report`: the training throughput in a `vramfit bench --json`
/// report (its layers' forward + backward rate per type).
pub(super) fn bench_throughput(path: &str) -> Result<vramfit_core::plan::Throughput, Refused> {
    let usage = |m: String| Refused::Error(CliError::Usage(m));
    let text = std::fs::read_to_string(path)
        .map_err(|e| usage(format!("cannot read --bench-report {path}: {e}")))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| usage(format!("--bench-report {path} is not JSON: {e}")))?;
    let rate = |key: &str| {
        value
            .pointer(&format!("/throughput/{key}"))
            .and_then(serde_json::Value::as_f64)
            .filter(|r| *r > 0.0)
    };
    match (rate("fp32_flops_per_s"), rate("fp16_flops_per_s")) {
        (Some(fp32), Some(fp16)) => Ok(vramfit_core::plan::Throughput {
            fp32_flops_per_s: fp32,
            fp16_flops_per_s: fp16,
        }),
        _ => Err(usage(format!(
            "--bench-report {path} has no measured throughput: run `vramfit bench --layers transformer --json` (the layers measure it)"
        ))),
    }
}

/// `--measured`: a CUDA memory snapshot pickle or `memory_stats()` JSON,
/// refused before reading when larger than the core reads.
pub(super) fn measured_memory(path: &str) -> Result<vramfit_core::measured::Measurement, Refused> {
    use vramfit_core::measured::{self, MAX_FILE_BYTES, MeasuredError};
    let io = |e: std::io::Error| {
        Refused::Error(CliError::Io(format!("cannot read --measured {path}: {e}")))
    };
    let size = std::fs::metadata(path).map_err(io)?.len();
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    let data = if size > MAX_FILE_BYTES {
        Err(MeasuredError::TooLarge {
            size,
            limit: MAX_FILE_BYTES,
        })
    } else {
        std::fs::read(path)
            .map_err(io)
            .map(|data| measured::read(&data))?
    };
    data.map_err(|e| Refused::Error(CliError::Usage(format!("--measured {path}: {e}"))))
}
