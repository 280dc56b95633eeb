//! Questions around one configuration: memory across batch sizes (the batch
//! curve) and what each common memory-saving technique would change (the
//! comparison strip): their types and which configurations they look at. The
//! engine ([`crate::session`]) answers them by re-running the real
//! simulation; nothing is extrapolated.

use crate::config::{CheckpointMode, Checkpointing, MAX_DIMENSION, Precision, TrainConfig};
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
    /// Full activation checkpointing.
    Checkpointing,
    /// Four times the gradient accumulation at a quarter of the micro-batch (same effective batch).
    Accumulation4,
    /// bitsandbytes 8-bit AdamW.
    EightBitOptimizer,
}

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
    /// Device bytes saved against the current configuration (negative: it
    /// costs memory). Can be smaller than the allocated saving: freed space may
    /// stay cached in the allocator's segments.
    pub saved_bytes: i128,
}

/// The techniques that apply to `cfg`, each with the configuration it leads to.
pub(crate) fn techniques(cfg: &TrainConfig) -> Vec<(Technique, TrainConfig)> {
    let mut candidates = Vec::new();
    if cfg.precision == Precision::Fp32 {
        candidates.push((
            Technique::Amp,
            TrainConfig {
                precision: Precision::AmpBf16,
                ..*cfg
            },
        ));
    }
    if cfg.checkpointing != Checkpointing::Mode(CheckpointMode::Full) {
        candidates.push((
            Technique::Checkpointing,
            TrainConfig {
                checkpointing: Checkpointing::Mode(CheckpointMode::Full),
                ..*cfg
            },
        ));
    }
    if cfg.batch >= 4 {
        let accum = TrainConfig {
            batch: cfg.batch / 4,
            grad_accum: cfg.grad_accum.saturating_mul(4).min(1 << 16),
            ..*cfg
        };
        candidates.push((Technique::Accumulation4, accum));
    }
    if let Some(optimizer) = cfg.optimizer.eight_bit() {
        candidates.push((
            Technique::EightBitOptimizer,
            TrainConfig { optimizer, ..*cfg },
        ));
    }
    candidates
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overheads::Overheads;
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

    #[test]
    fn techniques_save_memory_on_a_large_activation_config() {
        let spec = model_preset("gpt2").map(|p| p.spec).unwrap();
        let cfg = TrainConfig {
            batch: 8,
            seq: 1024,
            ..TrainConfig::default()
        };
        let variants = compare_techniques(&spec, &cfg, &Overheads::default()).unwrap();
        let kinds: Vec<Technique> = variants.iter().map(|v| v.technique).collect();
        assert_eq!(
            kinds,
            vec![
                Technique::Amp,
                Technique::Checkpointing,
                Technique::Accumulation4,
                Technique::EightBitOptimizer
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
        // With long sequences and eager attention, activations dominate: cutting
        // them (checkpointing, smaller micro-batches) beats shrinking optimizer state.
        let saved = |t: Technique| {
            variants
                .iter()
                .find(|v| v.technique == t)
                .map(|v| v.saved_bytes)
                .unwrap()
        };
        assert!(saved(Technique::Checkpointing) > saved(Technique::EightBitOptimizer));
        assert!(saved(Technique::Accumulation4) > saved(Technique::EightBitOptimizer));
    }
}
