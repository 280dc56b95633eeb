//! Measured throughput as the planner's cost model can use it.
//!
//! `vramfit_core::plan::step_seconds` prices a step as
//! `(3 x forward FLOPs + recomputed FLOPs) x accumulation / (peak x MFU x
//! small-batch efficiency)` plus offload traffic. A measurement replaces
//! the whole denominator, `peak x MFU x efficiency`, with the rate the
//! layers actually reached forward + backward on this adapter in the
//! step's compute type: [`project_step_seconds`] is `step_seconds` with that
//! substitution and everything else (FLOP count, recomputation, offload)
//! unchanged. [`MeasuredThroughput::efficiency`] gives the same number as a
//! factor relative to a GPU preset's peak, for a planner that keeps its own
//! formula and only swaps the constant `MFU` for it.

use super::measure::LayerResult;
use crate::dtype::DType;
use vramfit_core::plan::{Speed, Throughput, step_seconds};
use vramfit_core::{GpuPreset, Graph, Precision, TrainConfig};

/// FLOP/s a training step reached on this adapter, per compute type.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MeasuredThroughput {
    /// Forward + backward FLOP/s in `f32`.
    pub fp32_flops_per_s: f64,
    /// Forward + backward FLOP/s in `f16` (the `f32` rate when `f16`
    /// could not be measured).
    pub fp16_flops_per_s: f64,
}

impl MeasuredThroughput {
    /// The FLOP-weighted forward + backward rate of `results` per type
    /// (total FLOPs over total median time); `None` without an `f32` or
    /// `f16` measurement. A missing type takes the other's rate.
    ///
    /// # Example
    ///
    /// ```
    /// use vramfit_bench::layers::MeasuredThroughput;
    ///
    /// assert_eq!(MeasuredThroughput::from_results(&[]), None);
    /// ```
    pub fn from_results(results: &[LayerResult]) -> Option<Self> {
        let rate = |dtype: DType| {
            let (flops, seconds) = results
                .iter()
                .filter(|r| r.dtype == dtype)
                .filter_map(|r| {
                    r.forward_backward
                        .as_ref()
                        .map(|t| (r.forward_flops + r.backward_flops, t.median_ms / 1e3))
                })
                .fold((0.0, 0.0), |(f, s), (rf, rs)| (f + rf, s + rs));
            (seconds > 0.0).then(|| flops / seconds)
        };
        match (rate(DType::F32), rate(DType::F16)) {
            (Some(fp32), Some(fp16)) => Some(Self {
                fp32_flops_per_s: fp32,
                fp16_flops_per_s: fp16,
            }),
            (Some(only), None) | (None, Some(only)) => Some(Self {
                fp32_flops_per_s: only,
                fp16_flops_per_s: only,
            }),
            (None, None) => None,
        }
    }

    /// The rate for `precision`'s compute type: `f32` for `fp32`, the
    /// `f16` rate for every half-precision mode (bf16 is taken to run like
    /// f16; WGSL has no bf16).
    pub fn flops_per_s(&self, precision: Precision) -> f64 {
        if precision == Precision::Fp32 {
            self.fp32_flops_per_s
        } else {
            self.fp16_flops_per_s
        }
    }

    /// The measured rate as a fraction of `gpu`'s peak for `precision`, the
    /// peak `plan::step_seconds` divides by (tensor cores for half
    /// precision when the preset has them): the factor that replaces
    /// `MFU x small-batch efficiency`.
    pub fn efficiency(&self, precision: Precision, gpu: &GpuPreset) -> f64 {
        self.flops_per_s(precision) / gpu.peak_flops_per_s(precision).max(1.0)
    }
}

/// Seconds per optimizer step for `cfg` on the lowered `graph`, priced at
/// `measured` instead of peak x MFU: the core's `plan::step_seconds` with
/// [`Speed::Measured`] (the same FLOP count, recomputation and offload term).
pub fn project_step_seconds(
    graph: &Graph,
    cfg: &TrainConfig,
    measured: &MeasuredThroughput,
) -> f64 {
    step_seconds(graph, cfg, Speed::Measured((*measured).into()))
}

impl From<MeasuredThroughput> for Throughput {
    fn from(m: MeasuredThroughput) -> Throughput {
        Throughput {
            fp32_flops_per_s: m.fp32_flops_per_s,
            fp16_flops_per_s: m.fp16_flops_per_s,
        }
    }
}
