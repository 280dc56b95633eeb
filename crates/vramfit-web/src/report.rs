//! One full result: the core's estimate, the batch curve around it and the
//! comparison strip, with the names of what they were made for. Computing it
//! is three core calls; this module adds nothing to the estimate.

use crate::fields::Field;
use crate::i18n::{Key, Lang, t, tf};
use crate::labels;
use crate::present;
use vramfit_core::explore::{CurvePoint, Variant, batch_curve, compare_techniques, curve_batches};
use vramfit_core::{CheckpointMode, Checkpointing, Error, Estimate, GpuPreset, ModelSpec, Overheads, TrainConfig, estimate};

/// An estimate together with what surrounds it on the page.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The core's report.
    pub estimate: Estimate,
    /// Memory at batch sizes from 1 to twice the larger of the batch and the
    /// largest that fits, including both.
    pub curve: Vec<CurvePoint>,
    /// The same configuration with each applicable technique.
    pub variants: Vec<Variant>,
    /// Display name of the model.
    pub model_name: String,
    /// Display name of the GPU.
    pub gpu_name: String,
    /// The input-size field the model used, if any.
    pub input: Option<Field>,
}

impl Report {
    /// Estimates `cfg` on `gpu`, then the batch curve and the techniques.
    ///
    /// # Errors
    /// Any error of [`vramfit_core::estimate()`].
    pub fn compute(spec: &ModelSpec, cfg: &TrainConfig, gpu: &GpuPreset, model_name: &str, input: Option<Field>) -> Result<Report, Error> {
        let overheads = Overheads::for_gpu(gpu);
        let estimate = estimate(spec, cfg, &overheads, Some(gpu))?;
        let max = estimate.gpu.as_ref().map_or(0, |g| g.max_batch);
        let upto = max.max(cfg.batch).saturating_mul(2);
        let curve = batch_curve(spec, cfg, &overheads, &curve_batches(upto, &[cfg.batch, max]))?;
        let variants = compare_techniques(spec, cfg, &overheads)?;
        Ok(Report { estimate, curve, variants, model_name: model_name.to_string(), gpu_name: gpu.name.to_string(), input })
    }

    /// The effective batch: micro-batch × accumulation steps.
    pub fn effective_batch(&self) -> u64 {
        let c = &self.estimate.config;
        c.batch.saturating_mul(c.grad_accum)
    }

    /// The line after the model's name: parameters, batch and input size,
    /// accumulation and checkpointing when used, precision and optimizer.
    pub fn details(&self, lang: Lang) -> String {
        let cfg = &self.estimate.config;
        let batch = cfg.batch.to_string();
        let shape = match self.input {
            Some(Field::Seq) => tf(lang, Key::SummaryTokens, &[&batch, &cfg.seq.to_string()]),
            Some(Field::Image) => tf(lang, Key::SummaryImage, &[&batch, &cfg.image.to_string()]),
            _ => tf(lang, Key::SummaryBatch, &[&batch]),
        };
        let mut parts = vec![tf(lang, Key::SummaryParams, &[&present::count(self.estimate.parameter_count, lang)]), shape];
        if cfg.grad_accum > 1 {
            parts.push(tf(lang, Key::SummaryAccum, &[&cfg.grad_accum.to_string(), &self.effective_batch().to_string()]));
        }
        let checkpointing = match cfg.checkpointing {
            Checkpointing::Mode(CheckpointMode::None) => None,
            Checkpointing::Mode(CheckpointMode::Full) => Some(t(lang, Key::CheckpointFull).to_string()),
            Checkpointing::Mode(CheckpointMode::Selective) => Some(t(lang, Key::CheckpointSelective).to_string()),
            Checkpointing::EveryK(k) => Some(tf(lang, Key::SummaryEveryK, &[&k.to_string()])),
        };
        if let Some(c) = checkpointing {
            parts.push(tf(lang, Key::SummaryCheckpointing, &[&c]));
        }
        parts.push(labels::precision(cfg.precision, lang).to_string());
        parts.push(labels::optimizer(cfg.optimizer, lang).to_string());
        parts.join(" · ")
    }
}
