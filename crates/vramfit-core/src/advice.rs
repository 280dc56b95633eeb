//! What the planner tells besides numbers: the trade-offs a plan makes and
//! the batch-size advice that goes with a target, as values with their
//! numbers. Each rule is decided here, once; the front ends word the values
//! (the CLI in English, the page in English and Chinese).

use crate::config::{Checkpointing, Optimizer, Precision, TrainConfig};
use crate::models::ModelSpec;
use crate::parallel::{Offload, Strategy};
use serde::Serialize;

/// One trade-off a plan makes to fit; a plan lists them in the order of
/// this enum's variants (batch split, precision, checkpointing, optimizer,
/// strategy, offload).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "id", rename_all = "kebab-case")]
pub enum Trade {
    /// The per-GPU batch is split into `steps` micro-batches of `micro_batch`:
    /// the same effective batch in smaller kernels.
    Accumulation {
        /// Samples per micro-batch.
        micro_batch: u64,
        /// Accumulation steps (more than one).
        steps: u64,
    },
    /// The whole per-GPU batch in one micro-batch.
    NoAccumulation {
        /// Samples per micro-batch.
        micro_batch: u64,
    },
    /// fp32: no tensor-core speed-up.
    Fp32,
    /// Mixed precision in bf16: tensor-core speed, fp32 master weights.
    Amp,
    /// Mixed precision in fp16 (a GPU without bf16 matrix math): tensor-core
    /// speed, fp32 master weights and a gradient scaler.
    AmpFp16,
    /// Pure half precision: least memory, no fp32 master copy.
    PureHalf,
    /// Weights stored and updated in bf16 lose small updates: bf16 keeps 8
    /// significant bits, so under round-to-nearest an update smaller than
    /// half a unit in the last place (2^-9 to 2^-8 of the weight) leaves the
    /// weight unchanged, and a small learning rate stalls training (Zamirai
    /// et al. 2020, "Revisiting BFloat16 Training", §3). The fixes: fp32
    /// master weights (mixed precision, whose extra memory 8-bit AdamW
    /// states can pay for) or Kahan-compensated updates. Not listed under
    /// ZeRO or Megatron's distributed optimizer, which keep fp32 master weights.
    Bf16Updates,
    /// Activation checkpointing re-runs each block's forward (about a third
    /// more compute).
    Recompute,
    /// 8-bit AdamW: a quarter of the optimizer memory.
    EightBitAdam,
    /// A data-parallel strategy across the GPUs (never [`Strategy::Single`]).
    Strategy {
        /// The strategy.
        strategy: Strategy,
    },
    /// Offloading to the CPU costs PCIe traffic and CPU optimizer time.
    Offload,
}

/// The trade-offs of configuration `c`, in [`Trade`]'s order.
///
/// The strategy is named when it is not [`Strategy::Single`]: the trade is
/// the strategy itself (its communication and sharding), so it is listed
/// exactly when a strategy was chosen. The planner gives several GPUs a
/// distributed strategy and one GPU `Single`, so on its plans this is also
/// "when there is more than one GPU".
pub fn tradeoffs(c: &TrainConfig) -> Vec<Trade> {
    let mut out = Vec::new();
    out.push(if c.grad_accum > 1 {
        Trade::Accumulation {
            micro_batch: c.batch,
            steps: c.grad_accum,
        }
    } else {
        Trade::NoAccumulation {
            micro_batch: c.batch,
        }
    });
    out.push(match c.precision {
        Precision::Fp32 => Trade::Fp32,
        Precision::AmpBf16 => Trade::Amp,
        Precision::AmpFp16 => Trade::AmpFp16,
        Precision::Fp16 | Precision::Bf16 => Trade::PureHalf,
    });
    // ZeRO and Megatron's distributed optimizer keep an fp32 master copy of
    // half-precision parameters (`parallel.rs`), so their updates are whole.
    let fp32_master =
        c.parallel.strategy.is_zero() || c.parallel.strategy == Strategy::MegatronDistOpt;
    if c.precision == Precision::Bf16 && !fp32_master {
        out.push(Trade::Bf16Updates);
    }
    if c.checkpointing != Checkpointing::NONE {
        out.push(Trade::Recompute);
    }
    if c.optimizer == Optimizer::AdamW8bit {
        out.push(Trade::EightBitAdam);
    }
    if c.parallel.strategy != Strategy::Single {
        out.push(Trade::Strategy {
            strategy: c.parallel.strategy,
        });
    }
    match c.parallel.offload {
        Offload::None => {}
        Offload::Optimizer | Offload::OptimizerParams => out.push(Trade::Offload),
    }
    out
}

/// Effective batches above this take the large-batch advice (and warmup
/// with the learning-rate scaling), after Goyal et al. 2017, whose base
/// learning rate is for 256 samples.
pub const LARGE_BATCH: u64 = 256;
/// Effective batches below this take the small-batch advice.
pub const SMALL_BATCH: u64 = 32;
/// Micro-batches below this take the BatchNorm advice (its statistics get noisy).
pub const BATCHNORM_MICRO_BATCH: u64 = 16;

/// A piece of batch-size advice, shown where it applies. Serialized with
/// its stable id (`{"id": "lr-scaling", ...}`), which [`Advice::id`] also gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "id", rename_all = "kebab-case")]
pub enum Advice {
    /// Scale the learning rate with the effective batch: lr = base_lr ×
    /// `effective_batch` / 256 (the linear scaling rule), with a few epochs
    /// of warmup when `warmup` (a large batch).
    LrScaling {
        /// Samples per optimizer step, all GPUs.
        effective_batch: u64,
        /// Whether the batch is large enough to need warmup.
        warmup: bool,
    },
    /// Above ~256 samples per step, models often generalize worse unless
    /// learning rate, warmup and regularization are retuned.
    LargeBatch,
    /// Below ~32 samples per step, gradients are noisy.
    SmallBatch,
    /// BatchNorm's statistics are over the micro-batch, whatever the accumulation.
    #[serde(rename = "batchnorm")]
    BatchNorm {
        /// Samples per micro-batch.
        micro_batch: u64,
    },
    /// Evaluation under `torch.no_grad()` keeps nothing for backward.
    Eval,
    /// `pin_memory=True` costs host RAM, not GPU memory.
    PinMemory,
    /// `torch.cuda.empty_cache()` does not lower the peak a step needs.
    EmptyCache,
}

impl Advice {
    /// The stable id, as serialized (the page marks each item with it).
    pub fn id(&self) -> &'static str {
        match self {
            Advice::LrScaling { .. } => "lr-scaling",
            Advice::LargeBatch => "large-batch",
            Advice::SmallBatch => "small-batch",
            Advice::BatchNorm { .. } => "batchnorm",
            Advice::Eval => "eval",
            Advice::PinMemory => "pin-memory",
            Advice::EmptyCache => "empty-cache",
        }
    }
}

/// Whether the model normalizes with BatchNorm (its statistics are over the
/// micro-batch, which [`advice`] warns about).
pub fn uses_batchnorm(spec: &ModelSpec) -> bool {
    matches!(
        spec,
        ModelSpec::ResNet(_)
            | ModelSpec::MobileNetV2(_)
            | ModelSpec::MobileNetV3(_)
            | ModelSpec::EfficientNet(_)
            | ModelSpec::RegNet(_)
    ) || matches!(spec, ModelSpec::Vgg(v) if v.batch_norm)
}

/// Advice for an effective batch, a micro-batch and a model: the linear
/// learning-rate scaling rule (Goyal et al. 2017: lr = base_lr × batch / 256,
/// with warmup for large batches), the generalization gap of very large
/// batches (Keskar et al. 2017), noisy gradients of small ones, BatchNorm
/// statistics over the micro-batch, and the memory myths of evaluation,
/// `pin_memory` and `empty_cache()`.
pub fn advice(effective_batch: u64, micro_batch: u64, has_batchnorm: bool) -> Vec<Advice> {
    let large = effective_batch > LARGE_BATCH;
    let mut out = vec![Advice::LrScaling {
        effective_batch,
        warmup: large,
    }];
    if large {
        out.push(Advice::LargeBatch);
    }
    if effective_batch < SMALL_BATCH {
        out.push(Advice::SmallBatch);
    }
    if has_batchnorm && micro_batch < BATCHNORM_MICRO_BATCH {
        out.push(Advice::BatchNorm { micro_batch });
    }
    out.extend([Advice::Eval, Advice::PinMemory, Advice::EmptyCache]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::Parallel;

    #[test]
    fn a_plan_lists_its_batch_split_and_precision_then_what_it_changes() {
        let plain = TrainConfig {
            batch: 8,
            grad_accum: 1,
            precision: Precision::AmpBf16,
            ..TrainConfig::default()
        };
        assert_eq!(
            tradeoffs(&plain),
            [Trade::NoAccumulation { micro_batch: 8 }, Trade::Amp]
        );
        let everything = TrainConfig {
            batch: 2,
            grad_accum: 4,
            precision: Precision::Bf16,
            checkpointing: Checkpointing::Mode(crate::config::CheckpointMode::Full),
            optimizer: Optimizer::AdamW8bit,
            parallel: Parallel {
                strategy: Strategy::Zero3,
                offload: Offload::Optimizer,
                gpus_per_node: 4,
                ..Parallel::default()
            },
            ..TrainConfig::default()
        };
        assert_eq!(
            tradeoffs(&everything),
            [
                Trade::Accumulation {
                    micro_batch: 2,
                    steps: 4
                },
                Trade::PureHalf,
                Trade::Recompute,
                Trade::EightBitAdam,
                Trade::Strategy {
                    strategy: Strategy::Zero3
                },
                Trade::Offload,
            ]
        );
    }

    #[test]
    fn every_precision_has_its_trade() {
        for (precision, trade) in [
            (Precision::Fp32, Trade::Fp32),
            (Precision::AmpBf16, Trade::Amp),
            (Precision::AmpFp16, Trade::AmpFp16),
            (Precision::Fp16, Trade::PureHalf),
            (Precision::Bf16, Trade::PureHalf),
        ] {
            let c = TrainConfig {
                precision,
                ..TrainConfig::default()
            };
            assert_eq!(tradeoffs(&c).get(1), Some(&trade), "{precision:?}");
        }
    }

    #[test]
    fn pure_bf16_training_warns_of_lost_updates_and_mixed_precision_does_not() {
        let warns = |precision| {
            tradeoffs(&TrainConfig {
                precision,
                ..TrainConfig::default()
            })
            .contains(&Trade::Bf16Updates)
        };
        assert!(warns(Precision::Bf16));
        // DeepSpeed keeps fp32 master weights of bf16 parameters.
        let zero3 = TrainConfig {
            precision: Precision::Bf16,
            parallel: Parallel {
                strategy: Strategy::Zero3,
                gpus_per_node: 2,
                ..Parallel::default()
            },
            ..TrainConfig::default()
        };
        assert!(!tradeoffs(&zero3).contains(&Trade::Bf16Updates));
        for p in [
            Precision::Fp32,
            Precision::AmpBf16,
            Precision::AmpFp16,
            Precision::Fp16,
        ] {
            assert!(!warns(p), "{p:?}");
        }
    }

    #[test]
    fn the_strategy_is_a_trade_only_when_one_is_chosen() {
        let on = |strategy, gpus_per_node| TrainConfig {
            parallel: Parallel {
                strategy,
                gpus_per_node,
                ..Parallel::default()
            },
            ..TrainConfig::default()
        };
        let strategy = |c: &TrainConfig| {
            tradeoffs(c)
                .into_iter()
                .find(|t| matches!(t, Trade::Strategy { .. }))
        };
        assert_eq!(strategy(&on(Strategy::Single, 1)), None);
        assert_eq!(strategy(&on(Strategy::Single, 8)), None);
        assert_eq!(
            strategy(&on(Strategy::Ddp, 8)),
            Some(Trade::Strategy {
                strategy: Strategy::Ddp
            })
        );
    }

    #[test]
    fn advice_follows_the_batch_thresholds() {
        assert_eq!(
            advice(32, 32, false),
            [
                Advice::LrScaling {
                    effective_batch: 32,
                    warmup: false
                },
                Advice::Eval,
                Advice::PinMemory,
                Advice::EmptyCache
            ]
        );
        let large = advice(LARGE_BATCH + 1, 64, true);
        assert_eq!(
            large.first(),
            Some(&Advice::LrScaling {
                effective_batch: LARGE_BATCH + 1,
                warmup: true
            })
        );
        assert!(large.contains(&Advice::LargeBatch));
        assert!(!advice(LARGE_BATCH, 64, false).contains(&Advice::LargeBatch));
        assert!(advice(SMALL_BATCH - 1, 1, false).contains(&Advice::SmallBatch));
        assert!(!advice(SMALL_BATCH, 1, false).contains(&Advice::SmallBatch));
        assert!(advice(64, 15, true).contains(&Advice::BatchNorm { micro_batch: 15 }));
        assert!(!advice(64, 16, true).iter().any(|a| a.id() == "batchnorm"));
        assert!(!advice(64, 1, false).iter().any(|a| a.id() == "batchnorm"));
    }

    #[test]
    fn serialized_ids_are_the_stable_ids() {
        for a in [
            Advice::LrScaling {
                effective_batch: 512,
                warmup: true,
            },
            Advice::LargeBatch,
            Advice::SmallBatch,
            Advice::BatchNorm { micro_batch: 4 },
            Advice::Eval,
            Advice::PinMemory,
            Advice::EmptyCache,
        ] {
            let v = serde_json::to_value(a).unwrap();
            assert_eq!(v["id"], a.id(), "{a:?}");
        }
        let v = serde_json::to_value(Trade::Strategy {
            strategy: Strategy::FsdpFull,
        })
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({"id": "strategy", "strategy": "fsdp-full"})
        );
        let v = serde_json::to_value(Trade::Accumulation {
            micro_batch: 4,
            steps: 8,
        })
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({"id": "accumulation", "micro_batch": 4, "steps": 8})
        );
    }
}
