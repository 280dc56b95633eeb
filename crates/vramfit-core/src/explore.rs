//! Questions around one configuration: memory across batch sizes (the batch
//! curve) and what each common memory-saving technique would change (the
//! comparison strip): their types and which configurations they look at. The
//! engine ([`crate::session`]) answers them by re-running the real
//! simulation; nothing is extrapolated.

use crate::config::{
    Attention, CheckpointMode, Checkpointing, LoraBase, MAX_DIMENSION, Mode, Optimizer, Precision,
    TrainConfig, ZeroGrad,
};
use crate::gpus::GpuPreset;
use crate::models::{InputKind, ModelSpec};
use crate::overheads::Overheads;
use crate::parallel::{Offload, Parallel, Strategy};
use crate::units::Bytes;
use serde::Serialize;

/// Memory at one batch size.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CurvePoint {
    /// Micro-batch size.
    pub batch: u64,
    /// Peak allocated (PyTorch).
    pub allocated_bytes: Bytes,
    /// Device memory used (nvidia-smi).
    pub device_used_bytes: Bytes,
}

/// Batch sizes for a curve reaching `upto`: 1, 2, 4, ... and `upto` itself,
/// plus `extra` (e.g. the current batch and the largest that fits).
pub fn curve_batches(upto: u64, extra: &[u64]) -> Vec<u64> {
    let upto = upto.clamp(1, MAX_DIMENSION);
    let mut v: Vec<u64> = std::iter::successors(Some(1u64), |b| b.checked_mul(2))
        .take_while(|&b| b < upto)
        .collect();
    v.push(upto);
    v.extend(extra.iter().copied().filter(|&b| (1..=upto).contains(&b)));
    v.sort_unstable();
    v.dedup();
    v
}

/// A memory-saving technique applied to the current configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Technique {
    /// Mixed precision with bf16 autocast.
    Amp,
    /// Mixed precision with fp16 autocast (a GPU without bf16 matrix math,
    /// [`crate::gpus::Arch::has_bf16`]).
    AmpFp16,
    /// Full activation checkpointing.
    Checkpointing,
    /// Four times the gradient accumulation at a quarter of the micro-batch (same effective batch).
    Accumulation4,
    /// bitsandbytes 8-bit AdamW.
    EightBitOptimizer,
    /// LoRA adapters on a frozen base instead of full fine-tuning.
    Lora,
    /// QLoRA (LoRA on a 4-bit NF4 base) instead of full fine-tuning.
    Qlora,
    /// The frozen base of LoRA/QLoRA in the compute type instead of fp32.
    HalfBase,
    /// `scaled_dot_product_attention` instead of eager attention.
    Sdpa,
    /// The optimizer state and its fp32 master weights on the CPU: DeepSpeed
    /// ZeRO-Offload (ZeRO-2 with `offload_optimizer`), which runs on one GPU.
    OptimizerOffload,
    /// More GPUs with sharded state; the variant's configuration says how many.
    MoreGpus,
}

/// The GPU a comparison looks at, where there is one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Target {
    /// Whether it has bf16 matrix math ([`crate::gpus::GpuPreset::bf16`]).
    pub bf16: bool,
    /// Device memory the run may use on it; `None`: no GPU chosen.
    pub usable: Option<Bytes>,
}

impl Target {
    /// `gpu` under `overheads`: its bf16 support and the memory a run may use
    /// on it (what a verdict compares with).
    pub fn for_gpu(gpu: &GpuPreset, overheads: &Overheads) -> Self {
        Target {
            bf16: gpu.bf16,
            usable: Some(crate::overheads::usable(gpu, overheads)),
        }
    }
}

impl Default for Target {
    /// No GPU chosen: bf16 is offered, and "more GPUs" is not.
    fn default() -> Self {
        Target {
            bf16: true,
            usable: None,
        }
    }
}

/// A suggestion must save at least this share of the current device
/// memory (1 %); smaller ones are left out.
pub const MIN_SAVING_PERCENT: i128 = 1;

/// The most GPUs "more GPUs" looks at (16 nodes of 8).
pub const MAX_GPUS: u64 = 128;

/// The same configuration with one technique applied.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Variant {
    /// The technique.
    pub technique: Technique,
    /// The configuration it leads to.
    pub config: TrainConfig,
    /// Its peak allocated memory (PyTorch).
    pub allocated_bytes: Bytes,
    /// Its device memory (nvidia-smi).
    pub device_used_bytes: Bytes,
    /// Device bytes saved against the current configuration (at least
    /// [`MIN_SAVING_PERCENT`] of it). Can be smaller than the allocated
    /// saving: freed space may stay cached in the allocator's segments.
    pub saved_bytes: i128,
}

/// Whether a saving is worth showing: at least [`MIN_SAVING_PERCENT`] of `base`.
pub fn worth_showing(saved: i128, base: Bytes) -> bool {
    saved > 0 && saved.saturating_mul(100) >= i128::from(base.0) * MIN_SAVING_PERCENT
}

/// The techniques that apply to `cfg` on `target`, each with the
/// configuration it leads to ("more GPUs" is searched separately, see
/// [`more_gpus`]).
pub(crate) fn techniques(
    spec: &ModelSpec,
    cfg: &TrainConfig,
    target: Target,
) -> Vec<(Technique, TrainConfig)> {
    let trains = cfg.mode != Mode::Inference;
    let mut candidates = Vec::new();
    if cfg.precision == Precision::Fp32 {
        let (technique, precision) = if target.bf16 {
            (Technique::Amp, Precision::AmpBf16)
        } else {
            (Technique::AmpFp16, Precision::AmpFp16)
        };
        candidates.push((technique, TrainConfig { precision, ..*cfg }));
    }
    if cfg.mode == Mode::Train && spec.input_kind() == InputKind::Tokens {
        candidates.push((
            Technique::Lora,
            TrainConfig {
                mode: Mode::FinetuneLora,
                ..*cfg
            },
        ));
        if matches!(spec, ModelSpec::Transformer(_)) {
            candidates.push((
                Technique::Qlora,
                TrainConfig {
                    mode: Mode::FinetuneQlora,
                    ..*cfg
                },
            ));
        }
    }
    if matches!(cfg.mode, Mode::FinetuneLora | Mode::FinetuneQlora)
        && cfg.precision.autocast().is_some()
        && cfg.lora_base == LoraBase::Fp32
    {
        candidates.push((
            Technique::HalfBase,
            TrainConfig {
                lora_base: LoraBase::Compute,
                ..*cfg
            },
        ));
    }
    if cfg.attention == Attention::Eager && spec.input_kind() == InputKind::Tokens {
        candidates.push((
            Technique::Sdpa,
            TrainConfig {
                attention: Attention::Sdpa,
                ..*cfg
            },
        ));
    }
    if trains && cfg.checkpointing != Checkpointing::Mode(CheckpointMode::Full) {
        candidates.push((
            Technique::Checkpointing,
            TrainConfig {
                checkpointing: Checkpointing::Mode(CheckpointMode::Full),
                ..*cfg
            },
        ));
    }
    if trains && cfg.batch >= 4 {
        let accum = TrainConfig {
            batch: cfg.batch / 4,
            grad_accum: cfg.grad_accum.saturating_mul(4).min(1 << 16),
            ..*cfg
        };
        candidates.push((Technique::Accumulation4, accum));
    }
    if let Some(optimizer) = cfg.optimizer.eight_bit().filter(|_| trains) {
        candidates.push((
            Technique::EightBitOptimizer,
            TrainConfig { optimizer, ..*cfg },
        ));
    }
    let stateful = !matches!(cfg.optimizer, Optimizer::Sgd);
    if trains
        && stateful
        && cfg.parallel.world() == 1
        && cfg.parallel.strategy == Strategy::Single
        && cfg.parallel.offload == Offload::None
    {
        candidates.push((
            Technique::OptimizerOffload,
            laid_out(
                cfg,
                Parallel {
                    strategy: Strategy::Zero2,
                    offload: Offload::Optimizer,
                    ..cfg.parallel
                },
            ),
        ));
    }
    candidates
}

/// `cfg` under another multi-GPU layout: where the engine keeps the
/// gradients ([`Strategy::loop_owns_gradients`]), a loop's
/// `zero_grad(set_to_none=False)` no longer applies.
fn laid_out(cfg: &TrainConfig, parallel: Parallel) -> TrainConfig {
    let zero_grad = if parallel.strategy.loop_owns_gradients() {
        cfg.zero_grad
    } else {
        ZeroGrad::SetToNone
    };
    TrainConfig {
        parallel,
        zero_grad,
        ..*cfg
    }
}

/// The layouts "more GPUs" tries, fewest GPUs first: the current world
/// doubled until [`MAX_GPUS`] (8 GPUs per node beyond one node), with the
/// state sharded (ZeRO-3, or FSDP full shard for an FSDP run). Training only:
/// serving spreads a model by tensor parallelism, which the engines' own
/// estimates cover.
pub(crate) fn more_gpus(cfg: &TrainConfig) -> Vec<TrainConfig> {
    if cfg.mode == Mode::Inference {
        return Vec::new();
    }
    let strategy = match cfg.parallel.strategy {
        Strategy::FsdpFull
        | Strategy::FsdpGradOp
        | Strategy::FsdpHybrid
        | Strategy::FsdpNoShard => Strategy::FsdpFull,
        Strategy::MegatronDistOpt => Strategy::MegatronDistOpt,
        Strategy::Single | Strategy::Ddp | Strategy::Zero1 | Strategy::Zero2 | Strategy::Zero3 => {
            Strategy::Zero3
        }
    };
    let world = cfg.parallel.world();
    std::iter::successors(world.checked_mul(2), |w| w.checked_mul(2))
        .take_while(|&w| w <= MAX_GPUS)
        .map(|w| {
            let (gpus_per_node, nodes) = if w <= 8 { (w, 1) } else { (8, w / 8) };
            laid_out(
                cfg,
                Parallel {
                    strategy,
                    gpus_per_node,
                    nodes,
                    ..cfg.parallel
                },
            )
        })
        .filter(|c| c.parallel.validate().is_ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::model_preset;
    use crate::session::{batch_curve, compare_techniques};

    #[test]
    fn curve_is_monotonic_and_includes_extras() {
        let spec = model_preset("resnet18").map(|p| p.spec).unwrap();
        let batches = curve_batches(100, &[37]);
        assert_eq!(batches, vec![1, 2, 4, 8, 16, 32, 37, 64, 100]);
        let curve = batch_curve(
            &spec,
            &TrainConfig::default(),
            &Overheads::default(),
            &batches,
        )
        .unwrap();
        assert_eq!(curve.len(), batches.len());
        assert!(
            curve
                .windows(2)
                .all(|w| w[0].allocated_bytes <= w[1].allocated_bytes)
        );
    }

    /// A configuration with gradients kept as zeros (the 2022 Trainer's) is
    /// offered ZeRO-Offload and more GPUs as those engines run them: every
    /// alternative is one the estimator takes.
    #[test]
    fn alternatives_to_gradients_kept_as_zeros_are_valid_configurations() {
        let spec = model_preset("bert-large").map(|p| p.spec).unwrap();
        let cfg = TrainConfig {
            zero_grad: ZeroGrad::Zeros,
            ..TrainConfig::default()
        };
        cfg.validate().unwrap();
        let offload = techniques(&spec, &cfg, Target::default())
            .into_iter()
            .find(|(t, _)| *t == Technique::OptimizerOffload)
            .map(|(_, c)| c)
            .unwrap();
        assert_eq!(offload.zero_grad, ZeroGrad::SetToNone);
        let layouts = more_gpus(&cfg);
        assert!(!layouts.is_empty());
        for c in std::iter::once(&offload).chain(&layouts) {
            c.validate()
                .unwrap_or_else(|e| panic!("{:?}: {e}", c.parallel.strategy));
        }
        // Plain DDP keeps the loop's own gradients.
        let ddp = laid_out(
            &cfg,
            Parallel {
                strategy: Strategy::Ddp,
                gpus_per_node: 2,
                ..Parallel::default()
            },
        );
        assert_eq!(ddp.zero_grad, ZeroGrad::Zeros);
    }

    #[test]
    fn techniques_save_memory_on_a_large_activation_config() {
        let spec = model_preset("gpt2").map(|p| p.spec).unwrap();
        let cfg = TrainConfig {
            batch: 8,
            seq: 1024,
            ..TrainConfig::default()
        };
        let variants =
            compare_techniques(&spec, &cfg, &Overheads::default(), Target::default()).unwrap();
        let kinds: Vec<Technique> = variants.iter().map(|v| v.technique).collect();
        assert_eq!(
            kinds,
            vec![
                Technique::Amp,
                Technique::Lora,
                Technique::Qlora,
                Technique::Checkpointing,
                Technique::Accumulation4,
            ]
        );
        let base = crate::session::estimate(&spec, &cfg, &Overheads::default(), None).unwrap();
        for v in &variants {
            assert!(
                v.allocated_bytes < base.peak_allocated_bytes,
                "{:?} should lower the peak here",
                v.technique
            );
        }
        // With long sequences, activations dominate: cutting them
        // (checkpointing, smaller micro-batches) beats shrinking optimizer
        // state, whose saving here is under 1 % and so is not offered (0).
        let saved = |t: Technique| {
            variants
                .iter()
                .find(|v| v.technique == t)
                .map_or(0, |v| v.saved_bytes)
        };
        assert!(saved(Technique::Checkpointing) > saved(Technique::EightBitOptimizer));
        assert!(saved(Technique::Accumulation4) > saved(Technique::EightBitOptimizer));
    }

    fn variants_on(model: &str, gpu: &str, cfg: &TrainConfig) -> (Vec<Variant>, Bytes) {
        let spec = model_preset(model).map(|p| p.spec).unwrap();
        let gpu = crate::gpus::gpu_preset(gpu).unwrap();
        let o = Overheads::for_gpu(&gpu);
        let target = Target::for_gpu(&gpu, &o);
        let base = crate::session::estimate(&spec, cfg, &o, None).unwrap();
        let v = compare_techniques(&spec, cfg, &o, target).unwrap();
        (v, base.device_used_bytes)
    }

    #[test]
    fn a_gpu_without_bf16_is_offered_fp16_amp_not_bf16() {
        let cfg = TrainConfig {
            batch: 8,
            seq: 1024,
            ..TrainConfig::default()
        };
        let (v100, _) = variants_on("gpt2", "v100-16gb", &cfg);
        let kinds: Vec<Technique> = v100.iter().map(|v| v.technique).collect();
        assert!(kinds.contains(&Technique::AmpFp16), "{kinds:?}");
        assert!(!kinds.contains(&Technique::Amp), "{kinds:?}");
        assert!(
            v100.iter().all(|v| v.config.precision != Precision::AmpBf16
                && v.config.precision != Precision::Bf16)
        );
        let (h100, _) = variants_on("gpt2", "h100-sxm", &cfg);
        assert!(h100.iter().any(|v| v.technique == Technique::Amp));
    }

    #[test]
    fn a_full_fine_tune_that_does_not_fit_is_offered_the_big_levers() {
        // Llama-3-8B trained in full with AdamW under bf16 AMP on one H100:
        // about 16 bytes per parameter of model state alone, far over 80 GB.
        let cfg = TrainConfig {
            batch: 1,
            seq: 1024,
            precision: Precision::AmpBf16,
            ..TrainConfig::default()
        };
        let (variants, base) = variants_on("llama-3-8b", "h100-sxm", &cfg);
        let find = |t: Technique| variants.iter().find(|v| v.technique == t);
        for t in [
            Technique::Lora,
            Technique::Qlora,
            Technique::OptimizerOffload,
            Technique::MoreGpus,
        ] {
            assert!(find(t).is_some(), "{t:?} missing from {variants:?}");
        }
        let gpu = crate::gpus::gpu_preset("h100-sxm").unwrap();
        let usable = crate::overheads::usable(&gpu, &Overheads::for_gpu(&gpu));
        let more = find(Technique::MoreGpus).unwrap();
        assert!(more.device_used_bytes <= usable);
        assert!(more.config.parallel.world() > 1);
        assert_eq!(
            more.config.parallel.strategy,
            crate::parallel::Strategy::Zero3
        );
        // The fewest GPUs: half as many do not fit.
        let half = TrainConfig {
            parallel: crate::parallel::Parallel {
                gpus_per_node: more.config.parallel.world() / 2,
                nodes: 1,
                ..more.config.parallel
            },
            ..more.config
        };
        if half.parallel.world() > 1 {
            let spec = model_preset("llama-3-8b").map(|p| p.spec).unwrap();
            let e =
                crate::session::estimate(&spec, &half, &Overheads::for_gpu(&gpu), None).unwrap();
            assert!(e.device_used_bytes > usable);
        }
        // QLoRA saves more than LoRA (a 4-bit base), both far more than 8-bit AdamW.
        let saved = |t: Technique| find(t).map_or(0, |v| v.saved_bytes);
        assert!(saved(Technique::Qlora) > saved(Technique::Lora));
        assert!(saved(Technique::Lora) > saved(Technique::EightBitOptimizer));
        assert!(variants.iter().all(|v| worth_showing(v.saved_bytes, base)));
    }

    #[test]
    fn suggestions_saving_under_one_percent_are_left_out() {
        assert!(!worth_showing(99, Bytes(10_000)));
        assert!(worth_showing(100, Bytes(10_000)));
        assert!(!worth_showing(-5, Bytes(10_000)));
        // SDPA is already on and batch 1 leaves no accumulation: every row saves.
        let cfg = TrainConfig {
            batch: 1,
            seq: 128,
            ..TrainConfig::default()
        };
        let (variants, base) = variants_on("gpt2", "rtx-4090", &cfg);
        assert!(!variants.is_empty());
        assert!(variants.iter().all(|v| worth_showing(v.saved_bytes, base)));
    }

    #[test]
    fn lora_with_an_fp32_base_and_eager_attention_is_offered_the_half_base_and_sdpa() {
        let cfg = TrainConfig {
            batch: 4,
            seq: 2048,
            precision: Precision::AmpBf16,
            mode: Mode::FinetuneLora,
            lora_base: LoraBase::Fp32,
            attention: Attention::Eager,
            ..TrainConfig::default()
        };
        let (variants, _) = variants_on("llama-2-7b", "rtx-4090", &cfg);
        let kinds: Vec<Technique> = variants.iter().map(|v| v.technique).collect();
        assert!(kinds.contains(&Technique::HalfBase), "{kinds:?}");
        assert!(kinds.contains(&Technique::Sdpa), "{kinds:?}");
        assert!(!kinds.contains(&Technique::Lora), "{kinds:?}");
    }

    #[test]
    fn inference_is_offered_no_training_technique() {
        let cfg = TrainConfig {
            batch: 8,
            seq: 1024,
            mode: Mode::Inference,
            attention: Attention::Eager,
            ..TrainConfig::default()
        };
        let (variants, _) = variants_on("gpt2", "rtx-4090", &cfg);
        assert!(
            variants.iter().all(|v| matches!(
                v.technique,
                Technique::Amp | Technique::AmpFp16 | Technique::Sdpa
            )),
            "{variants:?}"
        );
    }
}
