//! One full result: the core's estimate, the batch curve around it and the
//! comparison strip, with the names of what they were made for. Computing it
//! is three core calls; this module adds nothing to the estimate.

use crate::fields::Field;
use crate::i18n::{Key, Lang, t, tf};
use crate::labels;
use crate::present;
use std::cell::RefCell;
use std::rc::Rc;
use vramfit_core::explore::{CurvePoint, Variant, curve_batches};
use vramfit_core::{
    CheckpointMode, Checkpointing, Error, Estimate, GpuFit, GpuPreset, ModelSpec, Overheads,
    Session, TrainConfig,
};

/// The core's cache of lowered models and recorded simulations, shared by
/// every copy of the page state (equal when it is the same cache).
#[derive(Clone, Debug, Default)]
pub struct SharedSession(Rc<RefCell<Session>>);

impl PartialEq for SharedSession {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// Results that do not depend on the micro-batch, kept between recomputes:
/// the GPU fit's largest batch, the points of the batch curve and the core's
/// [`Session`] of prepared simulations. Changing the batch (the most common
/// edit) then costs a few replays of recorded simulations (the estimate, the
/// new curve point, the comparison) instead of lowering and simulating again.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Memo {
    /// What the kept results are for: model, configuration at batch 1, GPU id.
    key: Option<(ModelSpec, TrainConfig, String)>,
    /// The core's fit on the GPU at some batch (its largest batch holds for all).
    fit: Option<GpuFit>,
    /// Curve points simulated so far, by batch.
    points: Vec<CurvePoint>,
    /// Prepared simulations (kept across models and GPUs too; it holds a few).
    session: SharedSession,
    /// The largest batches (usable memory, safety margin) a page rendered
    /// with this build showed for the first estimate's configuration: the
    /// core takes them without its search where they check out.
    largest: Option<(u64, u64)>,
}

impl Memo {
    /// A memo whose first estimate with a GPU starts from `largest` (see
    /// [`vramfit_core::Session::seed_largest_batches`]).
    pub fn seeded(largest: Option<(u64, u64)>) -> Memo {
        Memo {
            largest,
            ..Memo::default()
        }
    }

    /// Forgets everything unless it was computed for this model, configuration and GPU.
    fn keep_only_for(&mut self, spec: &ModelSpec, cfg: &TrainConfig, gpu: &GpuPreset) {
        let key = (
            spec.clone(),
            TrainConfig { batch: 1, ..*cfg },
            gpu.id.to_string(),
        );
        if self.key.as_ref() != Some(&key) {
            *self = Memo {
                key: Some(key),
                session: self.session.clone(),
                ..Memo::default()
            };
        }
    }

    /// The curve at `batches`, simulating only the batches not seen before.
    fn curve(
        &mut self,
        spec: &ModelSpec,
        cfg: &TrainConfig,
        overheads: &Overheads,
        batches: &[u64],
    ) -> Result<Vec<CurvePoint>, Error> {
        let missing: Vec<u64> = batches
            .iter()
            .copied()
            .filter(|b| !self.points.iter().any(|p| p.batch == *b))
            .collect();
        if !missing.is_empty() {
            let points = self
                .session
                .0
                .borrow_mut()
                .batch_curve(spec, cfg, overheads, &missing)?;
            self.points.extend(points);
        }
        Ok(batches
            .iter()
            .filter_map(|b| self.points.iter().find(|p| p.batch == *b).copied())
            .collect())
    }
}

/// An estimate together with what surrounds it on the page.
#[derive(Clone, Debug)]
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
    /// Whether `curve` and `variants` belong to this estimate. While they
    /// are computed (after the verdict is on screen) they are the previous
    /// report's, or empty.
    pub complete: bool,
}

/// Field by field, but a report compared with itself (an `Rc<Report>` in
/// props and memo dependencies, every render) is equal without a look
/// inside, and the small fields that differ between a report and its
/// completion come before the estimate, whose timeline holds thousands of points.
impl PartialEq for Report {
    fn eq(&self, other: &Report) -> bool {
        std::ptr::eq(self, other)
            || (self.complete == other.complete
                && self.curve == other.curve
                && self.variants == other.variants
                && self.model_name == other.model_name
                && self.gpu_name == other.gpu_name
                && self.input == other.input
                && self.estimate == other.estimate)
    }
}

impl Report {
    /// Estimates `cfg` on `gpu`, then the batch curve and the techniques.
    ///
    /// # Errors
    /// Any error of [`vramfit_core::estimate()`].
    pub fn compute(
        spec: &ModelSpec,
        cfg: &TrainConfig,
        gpu: &GpuPreset,
        model_name: &str,
        input: Option<Field>,
        memo: &mut Memo,
    ) -> Result<Report, Error> {
        Report::first(spec, cfg, gpu, model_name, input, memo, None)?.completed(spec, gpu, memo)
    }

    /// The estimate and the GPU fit, reusing what `memo` kept for the same
    /// model, configuration and GPU; the estimate equals
    /// `estimate(spec, cfg, overheads, Some(gpu))`. The curve and the
    /// comparison are `previous`'s until [`Report::completed`] replaces them.
    ///
    /// # Errors
    /// Any error of [`vramfit_core::estimate()`].
    pub fn first(
        spec: &ModelSpec,
        cfg: &TrainConfig,
        gpu: &GpuPreset,
        model_name: &str,
        input: Option<Field>,
        memo: &mut Memo,
        previous: Option<&Report>,
    ) -> Result<Report, Error> {
        let overheads = Overheads::for_gpu(gpu);
        let largest = memo.largest.take();
        memo.keep_only_for(spec, cfg, gpu);
        let estimate = match &memo.fit {
            // Only whether this batch fits changes with the batch.
            Some(fit) => {
                let mut session = memo.session.0.borrow_mut();
                let mut e = session.estimate(spec, cfg, &overheads, None)?;
                let here = if e.device_used_bytes <= fit.usable_bytes {
                    Some(e.device_used_bytes)
                } else {
                    session.device_used_within(spec, cfg, &overheads, fit.usable_bytes)?
                };
                e.gpu = Some(fit.clone().with_device_used(here));
                e
            }
            None => {
                let mut session = memo.session.0.borrow_mut();
                if let Some((max, margin)) = largest {
                    session.seed_largest_batches(spec, cfg, &overheads, gpu, max, margin)?;
                }
                let e = session.estimate(spec, cfg, &overheads, Some(gpu))?;
                drop(session);
                memo.fit = e.gpu.clone();
                e
            }
        };
        Ok(Report {
            estimate,
            curve: previous.map(|p| p.curve.clone()).unwrap_or_default(),
            variants: previous.map(|p| p.variants.clone()).unwrap_or_default(),
            model_name: model_name.to_string(),
            gpu_name: gpu.name.to_string(),
            input,
            complete: false,
        })
    }

    /// This report with its batch curve (from 1 to twice the larger of the
    /// batch and the largest that fits, both included) and the comparison
    /// of techniques.
    ///
    /// # Errors
    /// Any error of [`vramfit_core::estimate()`].
    pub fn completed(
        &self,
        spec: &ModelSpec,
        gpu: &GpuPreset,
        memo: &mut Memo,
    ) -> Result<Report, Error> {
        let cfg = &self.estimate.config;
        let overheads = Overheads::for_gpu(gpu);
        let max = self.estimate.gpu.as_ref().map_or(0, |g| g.max_batch);
        let upto = max.max(cfg.batch).saturating_mul(2);
        let curve = memo.curve(
            spec,
            cfg,
            &overheads,
            &curve_batches(upto, &[cfg.batch, max]),
        )?;
        let variants = memo.session.0.borrow_mut().compare_techniques(
            spec,
            cfg,
            &overheads,
            vramfit_core::explore::Target::for_gpu(gpu, &overheads),
        )?;
        Ok(Report {
            curve,
            variants,
            complete: true,
            ..self.clone()
        })
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
        let e = &self.estimate;
        let params = if e.active_parameter_count < e.parameter_count {
            tf(
                lang,
                Key::SummaryParamsActive,
                &[
                    &present::count(e.parameter_count, lang),
                    &present::count(e.active_parameter_count, lang),
                ],
            )
        } else {
            tf(
                lang,
                Key::SummaryParams,
                &[&present::count(e.parameter_count, lang)],
            )
        };
        let mut parts = vec![params, shape];
        // Inference runs no training step: no accumulation, checkpointing
        // or optimizer (a link may still hold them for training).
        let trains = cfg.mode != vramfit_core::config::Mode::Inference;
        if trains && cfg.grad_accum > 1 {
            parts.push(tf(
                lang,
                Key::SummaryAccum,
                &[
                    &cfg.grad_accum.to_string(),
                    &self.effective_batch().to_string(),
                ],
            ));
        }
        let checkpointing = match cfg.checkpointing {
            _ if !trains => None,
            Checkpointing::Mode(CheckpointMode::None) => None,
            Checkpointing::Mode(CheckpointMode::Full) => {
                Some(t(lang, Key::CheckpointFull).to_string())
            }
            Checkpointing::Mode(CheckpointMode::Selective) => {
                Some(t(lang, Key::CheckpointSelective).to_string())
            }
            Checkpointing::Mode(CheckpointMode::SelectiveOp) => {
                Some(t(lang, Key::CheckpointSelectiveOp).to_string())
            }
            Checkpointing::EveryK(k) => Some(tf(lang, Key::SummaryEveryK, &[&k.to_string()])),
        };
        if let Some(c) = checkpointing {
            parts.push(tf(lang, Key::SummaryCheckpointing, &[&c]));
        }
        parts.push(labels::precision(cfg.precision, lang).to_string());
        if trains {
            parts.push(labels::optimizer(cfg.optimizer, lang).to_string());
        }
        parts.join(" · ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vramfit_core::session::batch_curve;
    use vramfit_core::{Precision, estimate, gpu_preset, model_preset};

    #[test]
    fn memoized_reports_equal_the_cores_estimate_and_fresh_curves() {
        let spec = model_preset("gpt2").map(|m| m.spec).unwrap();
        let gpu = gpu_preset("rtx-4090").unwrap();
        let mut memo = Memo::default();
        for batch in [8, 16, 3, 8, 40] {
            let cfg = TrainConfig {
                batch,
                seq: 512,
                precision: Precision::AmpBf16,
                ..TrainConfig::default()
            };
            let r =
                Report::compute(&spec, &cfg, &gpu, "GPT-2", Some(Field::Seq), &mut memo).unwrap();
            let core = estimate(&spec, &cfg, &Overheads::for_gpu(&gpu), Some(&gpu)).unwrap();
            assert_eq!(r.estimate, core, "batch {batch}");
            let batches: Vec<u64> = r.curve.iter().map(|p| p.batch).collect();
            let fresh = batch_curve(&spec, &cfg, &Overheads::for_gpu(&gpu), &batches).unwrap();
            assert_eq!(r.curve, fresh, "batch {batch}");
        }
        // A different configuration forgets what was kept.
        let cfg = TrainConfig {
            batch: 8,
            seq: 256,
            precision: Precision::AmpBf16,
            ..TrainConfig::default()
        };
        let r = Report::compute(&spec, &cfg, &gpu, "GPT-2", Some(Field::Seq), &mut memo).unwrap();
        assert_eq!(
            Some(r.estimate),
            estimate(&spec, &cfg, &Overheads::for_gpu(&gpu), Some(&gpu)).ok()
        );
    }
}
