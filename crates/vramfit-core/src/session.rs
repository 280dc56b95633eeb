//! The engine: what every public question (an estimate, the largest batch,
//! context or input, the batch curve, the comparison strip) does, on lowered
//! models and recorded simulations kept between calls.
//!
//! A page that recomputes on every keystroke mostly changes the micro-batch,
//! and a report asks several questions of one configuration (its estimate,
//! its largest batch, a curve over batches, the same configuration with each
//! technique). Lowering the model and recording its simulation's tape do not
//! depend on the batch, so a [`Session`] keeps the recent ones and every
//! question at a new batch is a replay; the largest batch that fits does not
//! depend on the batch at all, so it is remembered and asked once per
//! configuration and capacity. Results are identical to the free
//! functions ([`crate::estimate()`], [`crate::max_batch_for`], ...), which
//! use a fresh session.

use crate::config::{MAX_DIMENSION, TrainConfig};
use crate::error::Error;
use crate::explore::{self, CurvePoint, Target, Technique, Variant};
use crate::gpus::GpuPreset;
use crate::models::{InputKind, ModelSpec};
use crate::overheads::{Overheads, device_used_within, usable};
use crate::report::{self, Estimate, GpuFit, TimelinePoint};
use crate::search::{largest_fitting, largest_input};
use crate::simulate::Prepared;
use crate::units::Bytes;
use std::rc::{Rc, Weak};

/// Prepared simulations a session keeps (the current configuration, its
/// comparison variants and a few recent ones); the oldest goes first.
pub const KEPT: usize = 12;

/// What a prepared simulation is for: the model, the configuration with
/// batch and accumulation set to 1, and the cuBLAS handles (the tape's only
/// overhead that is not a size).
type Key = (ModelSpec, TrainConfig, u32);

/// A cache of prepared simulations; see the module documentation.
#[derive(Default)]
pub struct Session {
    kept: Vec<(Key, Rc<Prepared>)>,
    /// (peak allocated, device used) of recent runs: the comparison strip's
    /// base and the curve's point at the current batch are the estimate's.
    peaks: Vec<(Run, (Bytes, Bytes))>,
    /// Recent largest-batch answers ([`Session::max_batch_on`]), by the
    /// prepared simulation they replayed (held weakly: a simulation the
    /// session let go is not kept alive for them, and while the entry lasts
    /// no other simulation can take its address) and the question asked of it.
    max_batches: Vec<(Weak<Prepared>, MaxBatchAsked, u64)>,
}

/// What a largest-batch search depends on besides the prepared tape: the
/// configuration with its batch cleared (the search sets the batch), the
/// overheads and the capacity.
type MaxBatchAsked = (TrainConfig, Overheads, Bytes);

/// Largest-batch answers a session remembers: an estimate asks two (the
/// GPU's usable memory and the same with the safety margin), a comparison
/// one per technique.
const MAX_BATCHES_KEPT: usize = 32;

/// One simulated run: model, configuration (with its batch) and overheads.
type Run = (ModelSpec, TrainConfig, Overheads);

/// Recent peaks a session remembers.
const PEAKS_KEPT: usize = 32;

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("kept", &self.kept.len())
            .field("peaks", &self.peaks.len())
            .field("max_batches", &self.max_batches.len())
            .finish()
    }
}

impl Session {
    /// The prepared simulation of `spec` under `cfg` (any batch), from the
    /// cache or made now.
    ///
    /// # Errors
    /// An invalid configuration or memory fraction, or a model that cannot be lowered.
    pub fn prepared(
        &mut self,
        spec: &ModelSpec,
        cfg: &TrainConfig,
        overheads: &Overheads,
    ) -> Result<Rc<Prepared>, Error> {
        cfg.validate()?;
        overheads.validate()?;
        // A prepared tape serves every batch, accumulation and optimizer.
        // Inference runs no backward, and `transformers` checkpoints only a
        // model in training (`GradientCheckpointingLayer` under
        // `self.training`): a checkpointing setting left from training
        // changes nothing there.
        let checkpointing = if cfg.mode == crate::config::Mode::Inference {
            crate::config::Checkpointing::NONE
        } else {
            cfg.checkpointing
        };
        let base = TrainConfig {
            batch: 1,
            grad_accum: 1,
            optimizer: crate::config::Optimizer::AdamW,
            checkpointing,
            ..*cfg
        };
        if let Some(at) = self
            .kept
            .iter()
            .position(|(k, _)| k.2 == overheads.cublas_handles && k.1 == base && k.0 == *spec)
        {
            // Most recently used last.
            let entry = self.kept.remove(at);
            let prepared = Rc::clone(&entry.1);
            self.kept.push(entry);
            return Ok(prepared);
        }
        // The lowering counts a sparse-attention indexer's weights (for the
        // parameter count and the engines) but not what it computes.
        if let ModelSpec::Transformer(t) = spec
            && t.mla.as_deref().is_some_and(|m| m.indexer.is_some())
        {
            return Err(Error::NotApplicable(
                crate::error::Inapplicable::SparseAttentionIndexer,
            ));
        }
        let prepared = Rc::new(Prepared::new(Rc::new(spec.lower(&base)?), &base, overheads));
        if self.kept.len() >= KEPT {
            self.kept.remove(0);
        }
        self.kept.push((
            (spec.clone(), base, overheads.cublas_handles),
            Rc::clone(&prepared),
        ));
        Ok(prepared)
    }

    /// Estimates one configuration; see [`crate::estimate()`].
    ///
    /// # Errors
    /// As [`crate::estimate()`].
    pub fn estimate(
        &mut self,
        spec: &ModelSpec,
        cfg: &TrainConfig,
        overheads: &Overheads,
        gpu: Option<&GpuPreset>,
    ) -> Result<Estimate, Error> {
        let prepared = self.prepared(spec, cfg, overheads)?;
        let g = prepared.graph();
        let sim = prepared.run(cfg, overheads, true);
        // Under tensor, pipeline or expert parallelism the graph is one rank's share; counts are of the whole model.
        let (parameter_count, trainable_parameter_count) = if cfg.parallel.tp > 1
            || cfg.parallel.pp > 1
            || cfg.parallel.ep > 1
            || cfg.parallel.expert_tp() > 1
        {
            let one = crate::parallel::Parallel {
                tp: 1,
                pp: 1,
                ep: 1,
                etp: 0,
                sp: false,
                ..cfg.parallel
            };
            let whole = spec.lower(&TrainConfig {
                parallel: one,
                ..*cfg
            })?;
            (whole.parameter_count(), whole.trainable_parameter_count())
        } else {
            (g.parameter_count(), g.trainable_parameter_count())
        };
        // The experts a token skips: arithmetic on the spec, no lowering.
        let active_parameter_count = parameter_count.saturating_sub(spec.idle_expert_parameters());
        let op_name = |i: usize| {
            if i == usize::MAX {
                "optimizer.step".to_string()
            } else {
                g.ops.get(i).map(|o| o.name.clone()).unwrap_or_default()
            }
        };
        // Each op's name once, shared by its moments.
        let names: Vec<std::sync::Arc<str>> = g
            .ops
            .iter()
            .map(|o| std::sync::Arc::from(o.name.as_str()))
            .collect();
        let optimizer: std::sync::Arc<str> = std::sync::Arc::from("optimizer.step");
        let timeline = sim
            .timeline
            .iter()
            .map(|p| {
                let op = if p.op == usize::MAX {
                    Some(&optimizer)
                } else {
                    names.get(p.op)
                };
                let op = op.map_or_else(|| std::sync::Arc::from(""), std::sync::Arc::clone);
                TimelinePoint {
                    step: p.step,
                    phase: p.phase,
                    op,
                    allocated_bytes: p.breakdown.total(),
                }
            })
            .collect();
        let device = sim.device_used(overheads, cfg.mode);
        let trains = cfg.mode != crate::config::Mode::Inference;
        self.remember(spec, cfg, overheads, (sim.peak.breakdown.total(), device));
        let nccl_buffers = crate::nccl::for_parallel(&cfg.parallel, gpu);
        let gpu = match gpu {
            Some(gp) => {
                let cap = usable(gp, overheads);
                let here = if device <= cap {
                    Some(device)
                } else {
                    device_within(&prepared, cfg, overheads, cap)
                };
                let reserved = crate::driver_reserve::driver_reserved(&gp.id);
                Some(GpuFit {
                    id: gp.id.to_string(),
                    memory_bytes: gp.memory_bytes,
                    runtime_bytes: gp.runtime_memory(),
                    usable_bytes: cap,
                    fits: here.is_some(),
                    device_used_bytes: here,
                    driver_reserved_bytes: reserved,
                    nvml_v1_used_bytes: here
                        .and_then(|d| crate::driver_reserve::nvml_v1_used(d, reserved)),
                    max_batch: self.max_batch_on(&prepared, cfg, overheads, cap),
                    margin_batch: self.max_batch_on(
                        &prepared,
                        cfg,
                        overheads,
                        crate::overheads::with_margin(cap),
                    ),
                    limit: gp.memory_limit(),
                    without_bf16: report::without_bf16(cfg.precision, gp),
                    max_context: if cfg.mode == crate::config::Mode::Inference {
                        Some(max_context_prepared(&prepared, cfg, overheads, cap))
                    } else {
                        None
                    },
                })
            }
            None => None,
        };
        Ok(Estimate {
            schema: report::SCHEMA,
            parameter_count,
            trainable_parameter_count,
            active_parameter_count,
            parameters_per_gpu: report::parameters_per_gpu(g, &cfg.parallel),
            peak_allocated_bytes: sim.peak.breakdown.total(),
            peak_reserved_bytes: sim.peak_reserved,
            segments: sim.segments,
            device_used_bytes: device,
            device_used_range_bytes: trains
                .then(|| crate::spread::range(device, spec.input_kind()))
                .flatten(),
            device_used_spread: trains
                .then(|| crate::spread::spread(spec.input_kind()))
                .flatten(),
            nccl_buffers,
            peak_phase: sim.peak.phase,
            peak_op: op_name(sim.peak.op),
            peak_step: sim.peak.step,
            at_peak: sim.peak.breakdown,
            overheads: *overheads,
            config: *cfg,
            layers: report::layer_rows(g, cfg.batch, prepared.kept_after_forward(cfg)),
            timeline,
            gpu,
            host_ram_bytes: sim.host_ram,
            deepspeed_estimate: report::deepspeed_estimate(g, cfg),
            rank: report::rank_note(cfg, spec),
            beyond_trained_context: report::beyond_trained_context(spec, cfg),
            routing: crate::routing::routing(
                g,
                cfg.batch,
                spec.aux_loss(),
                // Under expert parallelism Llama 4 dispatches as the others do.
                spec.every_expert().filter(|_| cfg.parallel.ep <= 1),
            ),
            linear_attention: report::linear_attention(spec),
        })
    }

    /// Device memory at `cfg` on a GPU with `capacity` usable bytes, if it
    /// fits there: the estimate's own when it is within `capacity`; else what
    /// the caching allocator reaches when it returns cached segments to the
    /// driver rather than fail (`None` when it still fails).
    ///
    /// # Errors
    /// As [`crate::estimate()`].
    pub fn device_used_within(
        &mut self,
        spec: &ModelSpec,
        cfg: &TrainConfig,
        overheads: &Overheads,
        capacity: Bytes,
    ) -> Result<Option<Bytes>, Error> {
        let prepared = self.prepared(spec, cfg, overheads)?;
        Ok(device_within(&prepared, cfg, overheads, capacity))
    }

    /// The largest micro-batch that fits in `capacity`; see [`crate::max_batch_for`].
    ///
    /// # Errors
    /// As [`crate::estimate()`].
    pub fn max_batch(
        &mut self,
        spec: &ModelSpec,
        cfg: &TrainConfig,
        overheads: &Overheads,
        capacity: Bytes,
    ) -> Result<u64, Error> {
        let prepared = self.prepared(spec, &TrainConfig { batch: 1, ..*cfg }, overheads)?;
        Ok(self.max_batch_on(&prepared, cfg, overheads, capacity))
    }

    /// Takes `max_batch` and `margin_batch` as the largest micro-batches
    /// that fit on `gpu` (the [`GpuFit`] fields of [`Session::estimate`]:
    /// in its usable memory, and keeping the safety margin free) without
    /// searching, for answers computed elsewhere with this configuration
    /// (the page rendered at build time shows them). Each is taken only if
    /// it is that search's answer: it fits and one more does not (memory
    /// grows with the batch, so exactly one batch passes both), which costs
    /// two simulations instead of the search's dozen. Returns whether both
    /// were taken; one that is not is searched for when asked, as before.
    ///
    /// # Errors
    /// As [`crate::estimate()`].
    pub fn seed_largest_batches(
        &mut self,
        spec: &ModelSpec,
        cfg: &TrainConfig,
        overheads: &Overheads,
        gpu: &GpuPreset,
        max_batch: u64,
        margin_batch: u64,
    ) -> Result<bool, Error> {
        let prepared = self.prepared(spec, cfg, overheads)?;
        let cap = usable(gpu, overheads);
        let mut taken = true;
        for (capacity, answer) in [
            (cap, max_batch),
            (crate::overheads::with_margin(cap), margin_batch),
        ] {
            let fits = |batch: u64| {
                (1..=MAX_DIMENSION).contains(&batch)
                    && device_within(
                        &prepared,
                        &TrainConfig { batch, ..*cfg },
                        overheads,
                        capacity,
                    )
                    .is_some()
            };
            let answers = (answer == 0 || fits(answer))
                && (answer == MAX_DIMENSION || !fits(answer.saturating_add(1)));
            if answers {
                self.remember_max_batch(&prepared, cfg, overheads, capacity, answer);
            }
            taken &= answers;
        }
        Ok(taken)
    }

    /// [`max_batch_prepared`], remembered: the search replays the tape a few
    /// dozen times and its answer does not depend on `cfg`'s batch, which is
    /// what a page changes most. Asked again with only the batch changed
    /// (the next keystroke), it answers without a replay.
    fn max_batch_on(
        &mut self,
        prepared: &Rc<Prepared>,
        cfg: &TrainConfig,
        overheads: &Overheads,
        capacity: Bytes,
    ) -> u64 {
        let asked = (TrainConfig { batch: 0, ..*cfg }, *overheads, capacity);
        if let Some((_, _, answer)) = self
            .max_batches
            .iter()
            .rev()
            .find(|(p, a, _)| std::ptr::eq(p.as_ptr(), Rc::as_ptr(prepared)) && *a == asked)
        {
            return *answer;
        }
        let answer = max_batch_prepared(prepared, cfg, overheads, capacity);
        self.remember_max_batch(prepared, cfg, overheads, capacity, answer);
        answer
    }

    /// Keeps `answer` as the largest batch of `cfg` on `prepared` within
    /// `capacity` (the [`MAX_BATCHES_KEPT`] latest answers are kept).
    fn remember_max_batch(
        &mut self,
        prepared: &Rc<Prepared>,
        cfg: &TrainConfig,
        overheads: &Overheads,
        capacity: Bytes,
        answer: u64,
    ) {
        let asked = (TrainConfig { batch: 0, ..*cfg }, *overheads, capacity);
        if self.max_batches.len() >= MAX_BATCHES_KEPT {
            self.max_batches.remove(0);
        }
        self.max_batches
            .push((Rc::downgrade(prepared), asked, answer));
    }

    /// The largest input that fits; see [`crate::max_input_for`].
    ///
    /// # Errors
    /// As [`crate::estimate()`] at the configured input size.
    pub fn max_input(
        &mut self,
        spec: &ModelSpec,
        cfg: &TrainConfig,
        overheads: &Overheads,
        capacity: Bytes,
    ) -> Result<Option<u64>, Error> {
        let tokens = match spec.input_kind() {
            InputKind::Tokens => true,
            InputKind::Image => false,
            InputKind::Features => return Ok(None),
        };
        let set = |v: u64| {
            if tokens {
                TrainConfig { seq: v, ..*cfg }
            } else {
                TrainConfig { image: v, ..*cfg }
            }
        };
        // The configured size must estimate (its errors are the caller's to see).
        self.prepared(spec, cfg, overheads)?;
        // Sequence parallelism splits the sequence over the tensor-parallel ranks.
        let step = if tokens && cfg.parallel.sp {
            cfg.parallel.tp.max(1)
        } else {
            1
        };
        let mut fits = |v: u64| -> Result<bool, Error> {
            let c = set(v);
            let prepared = match self.prepared(spec, &c, overheads) {
                Ok(p) => p,
                // Outside what the model or the settings accept (a learned
                // position embedding's length, a CNN's smallest image, a ViT's one size).
                Err(Error::NotApplicable(_) | Error::OutOfRange { .. }) => return Ok(false),
                Err(e) => return Err(e),
            };
            if prepared
                .peak_allocated(&c, overheads)
                .0
                .saturating_add(overheads.outside_allocator(c.mode).0)
                > capacity.0
            {
                return Ok(false);
            }
            let kv = prepared.kv_cache();
            Ok(device_used_within(capacity.0, overheads, c.mode, |l| {
                prepared.peak_reserved_within(&c, overheads, kv, l)
            })
            .is_some())
        };
        Ok(Some(largest_input(
            if tokens { cfg.seq } else { cfg.image },
            step,
            &mut fits,
        )?))
    }

    /// The longest context that fits; see [`crate::max_context_for`].
    ///
    /// # Errors
    /// As [`crate::estimate()`].
    pub fn max_context(
        &mut self,
        spec: &ModelSpec,
        cfg: &TrainConfig,
        overheads: &Overheads,
        capacity: Bytes,
    ) -> Result<u64, Error> {
        let prepared = self.prepared(spec, cfg, overheads)?;
        Ok(max_context_prepared(&prepared, cfg, overheads, capacity))
    }

    /// Peak memory at each of `batches`; see [`batch_curve`].
    ///
    /// # Errors
    /// As [`crate::estimate()`].
    pub fn batch_curve(
        &mut self,
        spec: &ModelSpec,
        cfg: &TrainConfig,
        overheads: &Overheads,
        batches: &[u64],
    ) -> Result<Vec<CurvePoint>, Error> {
        batches
            .iter()
            .filter(|&&b| (1..=MAX_DIMENSION).contains(&b))
            .map(|&batch| {
                let (allocated, used) =
                    self.peaks(spec, &TrainConfig { batch, ..*cfg }, overheads)?;
                Ok(CurvePoint {
                    batch,
                    allocated_bytes: allocated,
                    device_used_bytes: used,
                })
            })
            .collect()
    }

    /// The comparison strip; see [`compare_techniques`].
    ///
    /// # Errors
    /// As [`crate::estimate()`] for the current configuration.
    pub fn compare_techniques(
        &mut self,
        spec: &ModelSpec,
        cfg: &TrainConfig,
        overheads: &Overheads,
        target: Target,
    ) -> Result<Vec<Variant>, Error> {
        let (_, base) = self.peaks(spec, cfg, overheads)?;
        let mut candidates = explore::techniques(spec, cfg, target);
        // "More GPUs" is the fewest GPUs on which the run fits, when it does
        // not fit now; per-GPU memory falls as sharding spreads the state, so
        // the first layout that fits is the answer.
        if let Some(usable) = target.usable.filter(|&u| base > u) {
            for config in explore::more_gpus(cfg) {
                match self.peaks(spec, &config, overheads) {
                    Ok((_, used)) if used <= usable => {
                        candidates.push((Technique::MoreGpus, config));
                        break;
                    }
                    Ok(_) | Err(Error::NotApplicable(_)) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        let mut variants = Vec::new();
        for (technique, config) in candidates {
            // A technique the model cannot take (LoRA on a model without
            // adapters, say) is no suggestion; other errors are bugs to show.
            let (allocated, used) = match self.peaks(spec, &config, overheads) {
                Ok(p) => p,
                Err(Error::NotApplicable(_)) => continue,
                Err(e) => return Err(e),
            };
            let saved_bytes = i128::from(base.0) - i128::from(used.0);
            if explore::worth_showing(saved_bytes, base) {
                variants.push(Variant {
                    technique,
                    config,
                    allocated_bytes: allocated,
                    device_used_bytes: used,
                    saved_bytes,
                });
            }
        }
        Ok(variants)
    }

    /// (peak allocated, device used) of one configuration.
    fn peaks(
        &mut self,
        spec: &ModelSpec,
        cfg: &TrainConfig,
        overheads: &Overheads,
    ) -> Result<(Bytes, Bytes), Error> {
        if let Some((_, p)) = self
            .peaks
            .iter()
            .find(|((s, c, o), _)| c == cfg && o == overheads && s == spec)
        {
            return Ok(*p);
        }
        let sim = self
            .prepared(spec, cfg, overheads)?
            .run(cfg, overheads, false);
        let p = (
            sim.peak.breakdown.total(),
            sim.device_used(overheads, cfg.mode),
        );
        self.remember(spec, cfg, overheads, p);
        Ok(p)
    }

    fn remember(
        &mut self,
        spec: &ModelSpec,
        cfg: &TrainConfig,
        overheads: &Overheads,
        peaks: (Bytes, Bytes),
    ) {
        if self.peaks.len() >= PEAKS_KEPT {
            self.peaks.remove(0);
        }
        self.peaks.push(((spec.clone(), *cfg, *overheads), peaks));
    }
}

/// Estimates one configuration.
///
/// # Errors
/// Any [`Error`] from validating the config or lowering the model.
///
/// # Example
/// ```
/// use vramfit_core::{estimate, model_preset, Overheads, TrainConfig};
/// let model = model_preset("resnet50").unwrap().spec;
/// let cfg = TrainConfig { batch: 32, ..TrainConfig::default() };
/// let e = estimate(&model, &cfg, &Overheads::default(), None).unwrap();
/// assert!(e.peak_allocated_bytes.0 > 25_557_032 * 4);
/// let bad = TrainConfig { batch: 0, ..cfg };
/// assert!(estimate(&model, &bad, &Overheads::default(), None).is_err());
/// ```
pub fn estimate(
    spec: &ModelSpec,
    cfg: &TrainConfig,
    overheads: &Overheads,
    gpu: Option<&GpuPreset>,
) -> Result<Estimate, Error> {
    Session::default().estimate(spec, cfg, overheads, gpu)
}

/// The largest micro-batch whose device memory fits in `capacity`, by search
/// over the real simulation (memory is non-decreasing in the batch).
///
/// Allocated memory never exceeds reserved memory, so a first search over
/// allocated memory alone (the tape replayed without the caching-allocator
/// model, an order of magnitude cheaper) bounds the answer from above and
/// tells how steeply memory grows; the full simulation then only runs for a
/// few batches just below that bound.
///
/// # Errors
/// As [`estimate`].
pub fn max_batch_for(
    spec: &ModelSpec,
    cfg: &TrainConfig,
    overheads: &Overheads,
    capacity: Bytes,
) -> Result<u64, Error> {
    Session::default().max_batch(spec, cfg, overheads, capacity)
}

/// The largest input — the sequence length of a text model, the image side
/// of a vision model — that fits in `capacity` at `cfg`'s batch and other
/// settings: it fits, and the next size the model accepts does not (or the
/// model accepts no larger one: a learned position embedding's length, a
/// ViT's fixed image). `None` for models that read feature vectors, `Some(0)`
/// when not even the smallest input fits.
///
/// The input's shape changes the graph, so each probe lowers and records
/// the model at that size, then replays it with the allocator model only
/// until it passes the capacity: sizes double (or halve) from the
/// configured one until the answer is bracketed, then the bracket is halved.
///
/// # Errors
/// As [`estimate`] at the configured input size.
pub fn max_input_for(
    spec: &ModelSpec,
    cfg: &TrainConfig,
    overheads: &Overheads,
    capacity: Bytes,
) -> Result<Option<u64>, Error> {
    Session::default().max_input(spec, cfg, overheads, capacity)
}

/// Inference: the longest KV cache (prompt plus generated tokens) that fits,
/// at the configured batch and prompt length. Only decoders have one.
///
/// # Errors
/// As [`estimate`].
pub fn max_context_for(
    spec: &ModelSpec,
    cfg: &TrainConfig,
    overheads: &Overheads,
    capacity: Bytes,
) -> Result<u64, Error> {
    Session::default().max_context(spec, cfg, overheads, capacity)
}

/// Peak memory at each of `batches` (lowered once, simulated per batch).
///
/// # Errors
/// As [`estimate()`].
pub fn batch_curve(
    spec: &ModelSpec,
    cfg: &TrainConfig,
    overheads: &Overheads,
    batches: &[u64],
) -> Result<Vec<CurvePoint>, Error> {
    Session::default().batch_curve(spec, cfg, overheads, batches)
}

/// The comparison strip: each applicable technique's effect on device memory
/// on `target`, and, when the run does not fit there, the fewest GPUs it
/// fits on. Techniques already in use, that do not apply, or that save under
/// [`explore::MIN_SAVING_PERCENT`] of the device memory are left out.
///
/// # Errors
/// As [`estimate()`].
pub fn compare_techniques(
    spec: &ModelSpec,
    cfg: &TrainConfig,
    overheads: &Overheads,
    target: Target,
) -> Result<Vec<Variant>, Error> {
    Session::default().compare_techniques(spec, cfg, overheads, target)
}

/// [`max_batch_for`] on a prepared simulation of `cfg`'s configuration.
fn max_batch_prepared(
    prepared: &Prepared,
    cfg: &TrainConfig,
    overheads: &Overheads,
    capacity: Bytes,
) -> u64 {
    let at = |batch: u64| TrainConfig { batch, ..*cfg };
    let context = overheads.outside_allocator(cfg.mode).0;
    let allocated = |batch: u64| {
        prepared
            .peak_allocated(&at(batch), overheads)
            .0
            .saturating_add(context)
    };
    let kv = prepared.kv_cache();
    let used = |batch: u64, limit: u64| {
        device_used_within(limit, overheads, cfg.mode, |l| {
            prepared.peak_reserved_within(&at(batch), overheads, kv, l)
        })
    };
    largest_fitting(allocated, used, capacity.0)
}

/// [`max_context_for`] on a prepared simulation of `cfg`'s configuration:
/// the tape reads the KV cache's size at each replay, and the cache grows
/// with the tokens (linearly, or less once sliding-window layers hold their
/// window), so the search is the largest-batch search's over the tokens
/// beyond the prompt.
fn max_context_prepared(
    prepared: &Prepared,
    cfg: &TrainConfig,
    overheads: &Overheads,
    capacity: Bytes,
) -> u64 {
    let layout = prepared.graph().kv_layout;
    if prepared.graph().kv_cache.per_sample == 0 {
        return 0;
    }
    // Search over k = 1, 2, ... for the context seq − 1 + k (at least the prompt).
    let shift = cfg.seq.saturating_sub(1);
    let at = |k: u64| {
        let context = shift.saturating_add(k);
        (
            TrainConfig { context, ..*cfg },
            crate::graph::Numel::per_sample(layout.bytes(context)),
        )
    };
    let context = overheads.outside_allocator(cfg.mode).0;
    let allocated = |k: u64| {
        let (c, kv) = at(k);
        prepared
            .peak_allocated_with_kv_cache(&c, overheads, kv)
            .0
            .saturating_add(context)
    };
    let used = |k: u64, limit: u64| {
        let (c, kv) = at(k);
        device_used_within(limit, overheads, cfg.mode, |l| {
            prepared.peak_reserved_within(&c, overheads, kv, l)
        })
    };
    match largest_fitting(allocated, used, capacity.0) {
        0 => 0,
        k => shift.saturating_add(k).min(MAX_DIMENSION),
    }
}

/// Device memory at `cfg` within `capacity` (see [`Session::device_used_within`]).
fn device_within(
    prepared: &Prepared,
    cfg: &TrainConfig,
    overheads: &Overheads,
    capacity: Bytes,
) -> Option<Bytes> {
    let kv = prepared.kv_cache();
    device_used_within(capacity.0, overheads, cfg.mode, |l| {
        prepared.peak_reserved_within(cfg, overheads, kv, l)
    })
    .map(Bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Optimizer, Precision};
    use crate::gpus::gpu_preset;
    use crate::presets::model_preset;

    #[test]
    fn a_session_answers_exactly_as_fresh_calls_across_batches_and_accumulation() {
        let gpu = gpu_preset("rtx-4090").unwrap();
        let o = Overheads::for_gpu(&gpu);
        let mut session = Session::default();
        for (model, precision) in [("gpt2", Precision::AmpBf16), ("resnet50", Precision::Fp32)] {
            let spec = model_preset(model).unwrap().spec;
            for (batch, grad_accum) in [(8, 1), (3, 4), (8, 2), (1, 1)] {
                let cfg = TrainConfig {
                    batch,
                    grad_accum,
                    seq: 256,
                    precision,
                    optimizer: Optimizer::AdamW,
                    ..TrainConfig::default()
                };
                assert_eq!(
                    session.estimate(&spec, &cfg, &o, Some(&gpu)).unwrap(),
                    estimate(&spec, &cfg, &o, Some(&gpu)).unwrap()
                );
                assert_eq!(
                    session
                        .compare_techniques(&spec, &cfg, &o, Target::default())
                        .unwrap(),
                    compare_techniques(&spec, &cfg, &o, Target::default()).unwrap()
                );
                assert_eq!(
                    session.batch_curve(&spec, &cfg, &o, &[1, 5]).unwrap(),
                    batch_curve(&spec, &cfg, &o, &[1, 5]).unwrap()
                );
            }
        }
        assert!(session.kept.len() <= KEPT);
    }

    #[test]
    fn a_seeded_largest_batch_is_taken_only_where_it_is_the_answer() {
        let gpu = gpu_preset("rtx-4090").unwrap();
        let o = Overheads::for_gpu(&gpu);
        let spec = model_preset("gpt2").unwrap().spec;
        let cfg = TrainConfig {
            batch: 8,
            precision: Precision::AmpBf16,
            ..TrainConfig::default()
        };
        let fresh = estimate(&spec, &cfg, &o, Some(&gpu)).unwrap();
        let fit = fresh.gpu.clone().unwrap();
        assert!(fit.max_batch > 1 && fit.margin_batch < fit.max_batch);
        // The answers themselves: taken, and the estimate is the fresh one.
        let mut session = Session::default();
        let taken = session
            .seed_largest_batches(&spec, &cfg, &o, &gpu, fit.max_batch, fit.margin_batch)
            .unwrap();
        assert!(taken);
        assert_eq!(
            session.estimate(&spec, &cfg, &o, Some(&gpu)).unwrap(),
            fresh
        );
        // One off either way (a page of another build): refused, searched for.
        for (max, margin) in [
            (fit.max_batch + 1, fit.margin_batch),
            (fit.max_batch, fit.margin_batch - 1),
            (0, fit.margin_batch),
        ] {
            let mut session = Session::default();
            let taken = session
                .seed_largest_batches(&spec, &cfg, &o, &gpu, max, margin)
                .unwrap();
            assert!(!taken, "{max}, {margin}");
            assert_eq!(
                session.estimate(&spec, &cfg, &o, Some(&gpu)).unwrap(),
                fresh
            );
        }
    }

    #[test]
    fn a_remembered_largest_batch_answers_only_the_question_it_was_asked() {
        // One prepared tape serves every batch, accumulation and optimizer:
        // the remembered search must still tell them apart.
        let gpu = gpu_preset("rtx-4090").unwrap();
        let o = Overheads::for_gpu(&gpu);
        let spec = model_preset("gpt2").unwrap().spec;
        let mut session = Session::default();
        let at = |batch, grad_accum, optimizer| TrainConfig {
            batch,
            grad_accum,
            seq: 512,
            precision: Precision::AmpBf16,
            optimizer,
            ..TrainConfig::default()
        };
        let mut answers = Vec::new();
        for cfg in [
            at(8, 1, Optimizer::AdamW),
            at(9, 1, Optimizer::AdamW),
            at(9, 1, Optimizer::Sgd),
            at(2, 4, Optimizer::AdamW),
        ] {
            let fit = session
                .estimate(&spec, &cfg, &o, Some(&gpu))
                .unwrap()
                .gpu
                .unwrap();
            let fresh = max_batch_for(&spec, &cfg, &o, fit.usable_bytes).unwrap();
            assert_eq!(fit.max_batch, fresh, "{cfg:?}");
            assert_eq!(
                session
                    .max_batch(&spec, &cfg, &o, Bytes(gpu.memory_bytes.0 / 2))
                    .unwrap(),
                max_batch_for(&spec, &cfg, &o, Bytes(gpu.memory_bytes.0 / 2)).unwrap()
            );
            answers.push(fit.max_batch);
        }
        // The batch alone does not move it; the optimizer's state does.
        assert_eq!(answers[0], answers[1]);
        assert!(answers[2] > answers[1], "{answers:?}");
        assert!(session.max_batches.len() <= MAX_BATCHES_KEPT);
    }

    #[test]
    fn invalid_input_is_refused_before_the_cache() {
        let spec = model_preset("gpt2").unwrap().spec;
        let mut session = Session::default();
        let bad = TrainConfig {
            batch: 0,
            ..TrainConfig::default()
        };
        assert!(
            session
                .estimate(&spec, &bad, &Overheads::default(), None)
                .is_err()
        );
        let o = Overheads {
            memory_fraction: 0.0,
            ..Overheads::default()
        };
        assert!(
            session
                .prepared(&spec, &TrainConfig::default(), &o)
                .is_err()
        );
        assert!(session.kept.is_empty());
    }
}
