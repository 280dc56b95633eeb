//! "Make it fit": enumerate training configurations that reach a target
//! effective batch, keep those that fit the GPUs, and rank them by an
//! estimated step time from a simple, documented cost model.

pub use crate::advice::{Advice, Trade, advice, tradeoffs, uses_batchnorm};
use crate::config::{CheckpointMode, Checkpointing, Optimizer, Precision, TrainConfig};
use crate::error::Error;
use crate::gpus::GpuPreset;
use crate::graph::Graph;
use crate::models::ModelSpec;
use crate::overheads::{Overheads, device_used_within, usable};
use crate::parallel::{Offload, Parallel, Strategy};
use crate::simulate;
use crate::units::Bytes;
use serde::Serialize;
use std::cell::OnceCell;
use std::rc::Rc;

/// Fraction of peak throughput a well-fed training step reaches (model FLOPs
/// utilization). PaLM reports 46 % MFU (Chowdhery et al. 2022, Table 3) and
/// Megatron-LM 52 % for GPT-3 175B (Narayanan et al. 2021); 40 % is a
/// conservative figure for a single node without hand tuning.
pub const MFU: f64 = 0.40;
/// Work per micro-batch (tokens; for images, 16×16-pixel patches; for feature
/// vectors, samples) below which kernels are too small to fill the GPU;
/// efficiency falls with the square root of the shortfall. Reasoning: a GEMM
/// over 2048 rows at hidden size ~1024 gives each SM of a ~100-SM GPU at least
/// one 128×128 output tile (cuBLAS's common tile). An assumption of this
/// model, to be replaced by measured throughput from the benchmark mode.
pub const FULL_EFFICIENCY_WORK: f64 = 2048.0;
/// Effective host↔device bandwidth for offloaded state, bytes/s: PCIe 4.0 ×16
/// is 32 GB/s per direction in theory; 25 GB/s is typical in practice.
pub const PCIE_BYTES_PER_S: f64 = 25e9;
/// DeepSpeed's CPU Adam updates about 1e9 parameters per second on a modern
/// server CPU (order of magnitude from the ZeRO-Offload paper, Ren et al. 2021).
pub const CPU_ADAM_PARAMS_PER_S: f64 = 1e9;

/// What the user asks the planner.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlanRequest {
    /// The starting configuration (sequence length, image size, attention, mode...).
    pub base: TrainConfig,
    /// Samples per optimizer step across all GPUs.
    pub target_batch: u64,
    /// GPUs per node and nodes (strategies are enumerated when more than one).
    pub gpus_per_node: u64,
    /// Nodes.
    pub nodes: u64,
    /// Safety margin kept free on each GPU, as a fraction of its memory.
    pub margin: f64,
    /// Samples per epoch, for the epoch time (0: not shown).
    pub dataset_samples: u64,
    /// How many plans to return at most (the fastest; [`SHOWN`] by default).
    pub max_plans: usize,
    /// Training throughput measured on this GPU (the benchmark's layers,
    /// forward + backward), replacing the GPU's peak × [`MFU`].
    pub measured: Option<Throughput>,
}

/// Measured forward + backward throughput, FLOP/s, per compute type.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Throughput {
    /// In fp32.
    pub fp32_flops_per_s: f64,
    /// In half precision (fp16/bf16, and AMP's matmuls).
    pub fp16_flops_per_s: f64,
}

/// One configuration that fits.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Plan {
    /// The configuration (micro-batch, accumulation, precision, ...).
    pub config: TrainConfig,
    /// Device memory per GPU.
    pub device_used_bytes: Bytes,
    /// Estimated seconds per optimizer step.
    pub step_seconds: f64,
    /// Estimated seconds per epoch (0 when the dataset size is unknown).
    pub epoch_seconds: f64,
    /// The trade-offs this plan makes ([`tradeoffs`] of its configuration).
    pub tradeoffs: Vec<Trade>,
}

/// Ranked plans (fastest first) and the configurations that did not fit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlanResult {
    /// Plans that fit, fastest first.
    pub plans: Vec<Plan>,
    /// How many configurations were tried.
    pub tried: usize,
    /// The data-parallel split: samples per GPU per step, and whether it divides evenly.
    pub per_gpu_batch: u64,
    /// Set when the target batch does not divide evenly over the GPUs.
    pub uneven: Option<UnevenSplit>,
    /// Whether the step times are seconds: false for a GPU known only by its
    /// memory ([`crate::gpus::custom_gpu`]), whose plans are still ranked by
    /// their compute, at a nominal 1 PFLOP/s (the times are then only relative).
    pub timed: bool,
}

/// A target batch that does not divide evenly over the GPUs: each takes
/// the rounded-up share, so a step trains on more samples than asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct UnevenSplit {
    /// Samples per optimizer step asked for, all GPUs.
    pub target: u64,
    /// GPUs (per node × nodes).
    pub gpus: u64,
    /// Samples each GPU takes per step (`target` / `gpus`, rounded up).
    pub per_gpu: u64,
    /// Samples per step in all (`per_gpu` × `gpus`).
    pub total: u64,
}

/// Enumerates, checks and ranks configurations for `req` on `gpu`.
///
/// Step time depends only on the configuration, not on whether it fits, so
/// every (configuration, micro-batch) pair is timed first from one lowering's
/// FLOPs, and only then checked for fit, fastest first, until
/// `req.max_plans` plans are found: a configuration's largest fitting
/// micro-batch is its fastest. A fit check screens with the allocated
/// memory of a few moments of the step (after each forward, at the
/// optimizer step: a cheap lower bound of reserved memory) before the
/// reserved-memory replay, which stops at an overflow; graphs and tapes are
/// made only for configurations that get that far (one tape per precision
/// and checkpointing serves every strategy and optimizer).
///
/// # Errors
/// Invalid sizes, or a model that cannot be lowered for the base configuration.
pub fn plan(
    spec: &ModelSpec,
    gpu: &GpuPreset,
    overheads: &Overheads,
    req: &PlanRequest,
) -> Result<PlanResult, Error> {
    crate::error::check_range(
        "target-batch",
        req.target_batch,
        1,
        crate::config::MAX_DIMENSION,
    )?;
    if !(0.0..0.9).contains(&req.margin) {
        return Err(Error::OutOfRange {
            field: "margin",
            value: req.margin.to_string(),
            min: 0,
            max: 0,
        });
    }
    let world = req.gpus_per_node.max(1) * req.nodes.max(1);
    let per_gpu = req.target_batch.div_ceil(world);
    let uneven = (!req.target_batch.is_multiple_of(world)).then_some(UnevenSplit {
        target: req.target_batch,
        gpus: world,
        per_gpu,
        total: per_gpu * world,
    });
    let capacity = (crate::overheads::usable(gpu, overheads).0 as f64 * (1.0 - req.margin)) as u64;
    let timed = req.measured.is_some() || !gpu.is_custom();
    // The configurations, each with the key of the graph it lowers to. A GPU
    // without bf16 matrix math trains in mixed precision with fp16 (and a
    // gradient scaler); pure fp16 without master weights is not offered.
    let precisions: &[Precision] = if gpu.bf16 {
        &[Precision::AmpBf16, Precision::Fp32, Precision::Bf16]
    } else {
        &[Precision::AmpFp16, Precision::Fp32]
    };
    // A mixture of experts also tries each expert-parallel degree (and
    // expert tensor parallelism past the last): its graph holds that share
    // of the experts, so each degree is a layout.
    let degrees = expert_layouts(spec, (1, 1), world);
    // Under autocast, whether its weight cache holds the copies
    // (`Strategy::autocast_caches_weights`) changes when memory is freed, so
    // strategies that differ in it do not share a tape.
    let layouts: Vec<(Precision, Checkpointing, (u64, u64), bool)> = precisions
        .iter()
        .copied()
        .flat_map(|p| {
            [
                Checkpointing::NONE,
                Checkpointing::Mode(CheckpointMode::Full),
            ]
            .map(|c| (p, c))
        })
        .flat_map(|(p, c)| degrees.iter().map(move |&d| (p, c, d)))
        .flat_map(|(p, c, d)| {
            let caches: &[bool] = if p.autocast().is_some() {
                &[true, false]
            } else {
                &[false]
            };
            caches.iter().map(move |&k| (p, c, d, k))
        })
        .collect();
    // (layout, configuration). Candidates of one layout share a graph and a
    // tape: one recorded for a multi-GPU strategy replays every other
    // strategy of the layout and every optimizer ([`simulate::Prepared`]);
    // on one GPU the layout has a single strategy.
    let mut candidates: Vec<(usize, TrainConfig)> = Vec::new();
    for parallel in strategies(req, world) {
        for (layout, &(precision, checkpointing, (ep, etp), caches)) in layouts.iter().enumerate() {
            if caches
                != (precision.autocast().is_some() && parallel.strategy.autocast_caches_weights())
            {
                continue;
            }
            let probe = TrainConfig {
                precision,
                checkpointing,
                parallel: Parallel {
                    ep,
                    etp,
                    ..parallel
                },
                batch: 1,
                grad_accum: 1,
                ..req.base
            };
            if probe.validate().is_err() {
                continue;
            }
            for optimizer in optimizers(req.base.optimizer) {
                candidates.push((layout, TrainConfig { optimizer, ..probe }));
            }
        }
    }
    let Some(first) = candidates.first() else {
        return Ok(PlanResult {
            plans: Vec::new(),
            tried: 0,
            per_gpu_batch: per_gpu,
            uneven,
            timed,
        });
    };
    // FLOPs do not depend on precision or layout: one lowering times them
    // all, and serves as its layout's graph. Expert parallelism does not
    // change them either (a rank runs as many routed rows through its
    // experts); its all-to-all time is not modelled.
    let first_graph = Rc::new(spec.lower_unnamed(&first.1)?);
    let work = Work::of(&first_graph);
    let divisors: Vec<u64> = (1..=per_gpu.min(4096))
        .filter(|d| per_gpu.is_multiple_of(*d))
        .collect();
    // (seconds, tie-break rank, candidate, micro-batch)
    let mut order: Vec<(f64, Rank, usize, u64)> = Vec::new();
    for (i, (_, c)) in candidates.iter().enumerate() {
        for &micro in &divisors {
            let cfg = TrainConfig {
                batch: micro,
                grad_accum: per_gpu / micro,
                ..*c
            };
            let speed = req
                .measured
                .map_or(Speed::Peak(gpu, spec.input_kind()), Speed::Measured);
            order.push((work.seconds(&cfg, speed), rank(&cfg), i, micro));
        }
    }
    // Fastest first; among equals the plan that changes less (AMP before pure
    // half precision, the chosen optimizer before 8-bit, the simpler
    // strategy), then the larger micro-batch.
    order.sort_by(|a, b| {
        a.0.total_cmp(&b.0)
            .then(a.1.cmp(&b.1))
            .then(a.2.cmp(&b.2))
            .then(b.3.cmp(&a.3))
    });
    let graphs: Vec<OnceCell<Option<Rc<Graph>>>> = (0..layouts.len())
        .map(|l| {
            if l == first.0 {
                OnceCell::from(Some(Rc::clone(&first_graph)))
            } else {
                OnceCell::new()
            }
        })
        .collect();
    let tapes: Vec<OnceCell<simulate::Prepared>> =
        layouts.iter().map(|_| OnceCell::new()).collect();
    let mut done = vec![false; candidates.len()];
    let mut plans: Vec<Plan> = Vec::new();
    for (seconds, _, i, micro) in order {
        if plans.len() >= req.max_plans {
            break;
        }
        let (Some((layout, base)), Some(false)) = (candidates.get(i), done.get(i).copied()) else {
            continue;
        };
        let Some(graph) = graphs.get(*layout).and_then(|g| {
            g.get_or_init(|| spec.lower_unnamed(base).ok().map(Rc::new))
                .as_ref()
        }) else {
            continue;
        };
        let Some(prepared) = tapes.get(*layout).map(|t| {
            t.get_or_init(|| {
                simulate::Prepared::new(Rc::clone(graph), base, overheads).keeping_snapshots()
            })
        }) else {
            continue;
        };
        let config = TrainConfig {
            batch: micro,
            grad_accum: per_gpu / micro,
            ..*base
        };
        if prepared
            .landmark_allocated(&config, overheads)
            .0
            .saturating_add(overheads.outside_allocator(config.mode).0)
            > capacity
        {
            continue;
        }
        // A candidate that does not fit is told at its overflow, without simulating the rest.
        let reserved_within =
            |limit| prepared.peak_reserved_within(&config, overheads, prepared.kv_cache(), limit);
        let Some(device) =
            device_used_within(capacity, overheads, config.mode, reserved_within).map(Bytes)
        else {
            continue;
        };
        if let Some(d) = done.get_mut(i) {
            *d = true;
        }
        let epoch = if req.dataset_samples > 0 {
            seconds * req.dataset_samples as f64 / (per_gpu as f64 * world as f64)
        } else {
            0.0
        };
        plans.push(Plan {
            config,
            device_used_bytes: device,
            step_seconds: seconds,
            epoch_seconds: epoch,
            tradeoffs: tradeoffs(&config),
        });
    }
    Ok(PlanResult {
        plans,
        tried: candidates.len(),
        per_gpu_batch: per_gpu,
        uneven,
        timed,
    })
}

/// The peak that ranks plans for a GPU without throughput figures, FLOP/s.
pub const NOMINAL_PEAK_FLOPS: f64 = 1e15;

/// Plans shown by default.
pub const SHOWN: usize = 8;

/// Tie-breaks between equally fast plans: not AMP, 8-bit optimizer,
/// strategy, expert-parallel degree, expert tensor-parallel degree.
type Rank = (u8, u8, u8, u64, u64);

/// Tie-breaks between equally fast plans: what changes less comes first.
fn rank(c: &TrainConfig) -> Rank {
    let strategy = match (c.parallel.strategy, c.parallel.offload) {
        (Strategy::Single | Strategy::Ddp, _) => 0,
        (Strategy::Zero1, _) => 1,
        (Strategy::Zero2, _) => 2,
        (Strategy::FsdpFull, _) => 3,
        (
            Strategy::Zero3
            | Strategy::FsdpGradOp
            | Strategy::FsdpHybrid
            | Strategy::FsdpNoShard
            | Strategy::MegatronDistOpt,
            Offload::None,
        ) => 4,
        (
            Strategy::Zero3
            | Strategy::FsdpGradOp
            | Strategy::FsdpHybrid
            | Strategy::FsdpNoShard
            | Strategy::MegatronDistOpt,
            Offload::Optimizer | Offload::OptimizerParams,
        ) => 5,
    };
    (
        u8::from(!matches!(
            c.precision,
            Precision::AmpBf16 | Precision::AmpFp16
        )),
        u8::from(c.optimizer == Optimizer::AdamW8bit),
        strategy,
        c.parallel.ep,
        c.parallel.etp,
    )
}

/// The expert-parallel degrees worth trying for `spec` on `world` GPUs with
/// `model_parallel` = tp × pp of them per replica: the powers of two that
/// divide its routed experts and leave whole expert groups; `[1]` for a
/// model without experts.
pub fn expert_degrees(spec: &ModelSpec, model_parallel: u64, world: u64) -> Vec<u64> {
    let Some(experts) = spec.routed_experts() else {
        return vec![1];
    };
    let replicas = world / model_parallel.max(1);
    std::iter::successors(Some(1u64), |d| d.checked_mul(2))
        .take_while(|&d| d <= replicas)
        .filter(|&d| experts.is_multiple_of(d) && replicas.is_multiple_of(d))
        .collect()
}

/// The expert layouts worth trying for `spec` on `world` GPUs with `(tp,
/// pp)` per replica, as (ep, etp): each of [`expert_degrees`] with `etp`
/// unset (as `tp`), then, past the largest degree — where the experts
/// (or the GPUs) allow no more expert parallelism but GPUs remain —
/// expert tensor parallelism of twice, four times … `tp` that divides
/// each expert's width and leaves whole expert groups (etp × ep × pp
/// dividing the world). `[(1, 0)]` for a model without experts.
pub fn expert_layouts(spec: &ModelSpec, (tp, pp): (u64, u64), world: u64) -> Vec<(u64, u64)> {
    let (tp, pp) = (tp.max(1), pp.max(1));
    let degrees = expert_degrees(spec, tp * pp, world);
    let mut out: Vec<(u64, u64)> = degrees.iter().map(|&ep| (ep, 0)).collect();
    let (Some(&ep), Some(width)) = (degrees.last(), spec.routed_expert_width()) else {
        return out;
    };
    let spare = world / (tp * pp * ep);
    out.extend(
        std::iter::successors(Some(2u64), |f| f.checked_mul(2))
            .take_while(|&f| f <= spare)
            .filter(|&f| spare.is_multiple_of(f) && width.is_multiple_of(tp * f))
            .map(|f| (ep, tp * f)),
    );
    out
}

fn strategies(req: &PlanRequest, world: u64) -> Vec<Parallel> {
    let layout = |strategy, offload| Parallel {
        strategy,
        offload,
        gpus_per_node: req.gpus_per_node.max(1),
        nodes: req.nodes.max(1),
        ..Parallel::default()
    };
    if world <= 1 {
        return vec![layout(Strategy::Single, Offload::None)];
    }
    vec![
        layout(Strategy::Ddp, Offload::None),
        layout(Strategy::Zero1, Offload::None),
        layout(Strategy::Zero2, Offload::None),
        layout(Strategy::Zero3, Offload::None),
        layout(Strategy::Zero3, Offload::Optimizer),
        layout(Strategy::FsdpFull, Offload::None),
    ]
}

fn optimizers(chosen: Optimizer) -> Vec<Optimizer> {
    std::iter::once(chosen).chain(chosen.eight_bit()).collect()
}

/// Seconds per optimizer step: forward + backward FLOPs (3 × forward, plus one
/// more forward of the recomputed blocks) at the GPU's peak for the compute
/// type × [`MFU`] × the small-micro-batch efficiency, plus offload traffic.
/// With measured throughput (the benchmark's, at this configuration's
/// sizes), that replaces peak × MFU × the small-batch efficiency.
pub fn step_seconds(g: &Graph, cfg: &TrainConfig, speed: Speed<'_>) -> f64 {
    Work::of(g).seconds(cfg, speed)
}

/// What a step's compute runs at.
#[derive(Clone, Copy, Debug)]
pub enum Speed<'a> {
    /// The GPU's datasheet peak × [`MFU`] × the small-batch efficiency for a
    /// model with this kind of input.
    Peak(&'a GpuPreset, crate::models::InputKind),
    /// Throughput measured at the configuration's sizes (the benchmark).
    Measured(Throughput),
}

/// What the cost model needs of a graph: FLOPs per op (with where each op
/// sits, for recomputation) and the trainable parameters. Independent of
/// precision, layout and batch, so one lowering times every configuration.
struct Work {
    /// (block, attention core, forward FLOPs as (fixed, per sample), kept by
    /// per-op selective checkpointing) of every op that computes.
    ops: Vec<(Option<u32>, bool, f64, f64, bool)>,
    forward: (f64, f64),
    trainable: f64,
}

impl Work {
    fn of(g: &Graph) -> Work {
        let ops: Vec<_> = g
            .ops
            .iter()
            .zip(g.op_sac_saves())
            .filter(|(op, _)| op.flops.fixed > 0 || op.flops.per_sample > 0)
            .map(|(op, kept)| {
                (
                    op.block,
                    op.attention_core,
                    op.flops.fixed as f64,
                    op.flops.per_sample as f64,
                    kept,
                )
            })
            .collect();
        let forward = ops.iter().fold((0.0, 0.0), |(f, p), o| (f + o.2, p + o.3));
        Work {
            ops,
            forward,
            trainable: g.trainable_parameter_count() as f64,
        }
    }

    fn seconds(&self, cfg: &TrainConfig, speed: Speed<'_>) -> f64 {
        let batch = cfg.batch as f64;
        let forward = self.forward.0 + self.forward.1 * batch;
        let recompute: f64 = if cfg.checkpointing == Checkpointing::NONE {
            0.0
        } else {
            self.ops
                .iter()
                .filter(|(block, core, _, _, kept)| {
                    // Per-op selective checkpointing does not run again what it kept.
                    (block.is_some_and(|b| cfg.checkpointing.checkpoints_block(b))
                        && !(cfg.checkpointing.saves_op_outputs() && *kept))
                        || (cfg.checkpointing.selective() && *core)
                })
                .map(|o| o.2 + o.3 * batch)
                .sum()
        };
        let flops = (3.0 * forward + recompute) * cfg.grad_accum as f64;
        let half = cfg.precision != Precision::Fp32;
        let rate = match speed {
            // Taken at this configuration's sizes: it already includes both the
            // utilization MFU stands for and the small-batch loss.
            Speed::Measured(m) => {
                if half {
                    m.fp16_flops_per_s
                } else {
                    m.fp32_flops_per_s
                }
            }
            Speed::Peak(gpu, kind) => {
                // A GPU known only by its memory has no datasheet: a nominal
                // peak ranks plans by their compute ([`PlanResult::timed`]).
                let peak = if gpu.is_custom() {
                    NOMINAL_PEAK_FLOPS
                } else {
                    gpu.peak_flops_per_s(cfg.precision)
                };
                let per_sample = match kind {
                    crate::models::InputKind::Tokens => cfg.seq,
                    crate::models::InputKind::Image => (cfg.image / 16).max(1).pow(2),
                    crate::models::InputKind::Features => 1,
                };
                let work = (cfg.batch * per_sample) as f64;
                peak * MFU * (work / FULL_EFFICIENCY_WORK).min(1.0).sqrt()
            }
        };
        let compute = flops / rate.max(1e-6);
        let offload = match cfg.parallel.offload {
            Offload::None => 0.0,
            o => {
                let world = cfg.parallel.shard_group().max(1) as f64;
                // Gradients down and parameters back up in half precision; plus the CPU optimizer.
                let bytes = if o == Offload::OptimizerParams {
                    8.0
                } else {
                    4.0
                } * self.trainable
                    / world;
                bytes / PCIE_BYTES_PER_S + self.trainable / world / CPU_ADAM_PARAMS_PER_S
            }
        };
        compute + offload
    }
}

/// One GPU option for a configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GpuOption {
    /// GPU preset id.
    pub gpu: std::borrow::Cow<'static, str>,
    /// Display name.
    pub name: std::borrow::Cow<'static, str>,
    /// Number of GPUs (one node).
    pub gpus: u64,
    /// The expert-parallel degree this option assumes (1 for a model
    /// without experts): the one that fits the largest micro-batch.
    pub ep: u64,
    /// The expert tensor-parallel degree with it (0: as `tp`, see
    /// [`expert_layouts`]).
    pub etp: u64,
    /// The largest micro-batch that fits per GPU (0: does not fit).
    pub max_batch: u64,
    /// Device memory per GPU at the configured micro-batch.
    pub device_used_bytes: Bytes,
    /// Whether the configured micro-batch fits.
    pub fits: bool,
    /// Memory per GPU.
    pub memory_bytes: Bytes,
}

/// "Which GPU do I need": every GPU preset and GPU count (1, 2, 4, 8; more
/// than one uses the configured strategy, or FSDP full sharding) on which the
/// configuration fits, with its largest micro-batch, smallest memory first;
/// a mixture of experts on each count with the expert-parallel degree
/// ([`expert_degrees`]) that fits the largest micro-batch (then the least
/// memory at the configured one, then the smallest degree);
/// a configuration in bf16 only on GPUs with bf16 matrix math.
/// Device memory at a batch does not depend on the GPU except through the
/// cuBLAS workspace size, so each (count, workspace) curve is simulated once
/// and shared by every GPU.
///
/// # Errors
/// As [`crate::estimate()`].
pub fn which_gpus(
    spec: &ModelSpec,
    cfg: &TrainConfig,
    overheads: &Overheads,
) -> Result<Vec<GpuOption>, Error> {
    let mut out = Vec::new();
    for gpus in [1u64, 2, 4, 8] {
        let mut parallel = Parallel {
            gpus_per_node: gpus,
            nodes: 1,
            ..cfg.parallel
        };
        if gpus > 1 && parallel.strategy == Strategy::Single {
            parallel.strategy = Strategy::FsdpFull;
        }
        if gpus == 1 {
            parallel = Parallel {
                strategy: Strategy::Single,
                offload: Offload::None,
                ..parallel
            };
        }
        let start = out.len();
        for (ep, etp) in expert_layouts(spec, (parallel.tp, parallel.pp), gpus) {
            let base = TrainConfig {
                parallel: Parallel {
                    ep,
                    etp,
                    ..parallel
                },
                ..*cfg
            };
            if base.validate().is_err() {
                continue;
            }
            fits_on(spec, &base, overheads, gpus, &mut out)?;
        }
        keep_best_degree(&mut out, start);
    }
    out.sort_by_key(|o| (o.memory_bytes.0.saturating_mul(o.gpus), o.gpus));
    Ok(out)
}

/// Of the options from `start` on (one GPU count, every degree), keeps each
/// GPU's best: the largest micro-batch, then the least memory at the
/// configured one, then the smallest expert-parallel degree.
fn keep_best_degree(out: &mut Vec<GpuOption>, start: usize) {
    let tail = out.split_off(start.min(out.len()));
    // Each GPU where it first appears (the presets' order), with its best degree.
    let mut best: Vec<GpuOption> = Vec::new();
    for o in tail {
        let better = |b: &GpuOption| {
            (
                std::cmp::Reverse(o.max_batch),
                o.device_used_bytes,
                o.ep,
                o.etp,
            ) < (
                std::cmp::Reverse(b.max_batch),
                b.device_used_bytes,
                b.ep,
                b.etp,
            )
        };
        match best.iter_mut().find(|b| b.gpu == o.gpu) {
            Some(b) if better(b) => *b = o,
            Some(_) => {}
            None => best.push(o),
        }
    }
    out.extend(best);
}

/// Adds to `out` every GPU preset on which `base` (on `gpus` GPUs) fits.
fn fits_on(
    spec: &ModelSpec,
    base: &TrainConfig,
    overheads: &Overheads,
    gpus: u64,
    out: &mut Vec<GpuOption>,
) -> Result<(), Error> {
    let base = *base;
    let g = spec.lower_unnamed(&TrainConfig { batch: 1, ..base })?;
    let prepared = simulate::Prepared::new(Rc::new(g), &base, overheads);
    let mut cache: std::collections::HashMap<(u64, u64, u64), u64> =
        std::collections::HashMap::new();
    // A bf16 configuration needs bf16 matrix math (see [`GpuPreset::bf16`]).
    let bf16 = matches!(base.precision, Precision::Bf16 | Precision::AmpBf16);
    for gpu in crate::gpus::gpu_presets()
        .into_iter()
        .filter(|g| g.bf16 || !bf16)
        // Several Macs or laptops are not one multi-GPU machine.
        .filter(|g| gpus == 1 || g.clusters())
    {
        // Each GPU's own context (its SMs' stack), cuBLAS workspace, handle
        // memory and kernel images, as an estimate on that GPU takes them.
        let fixed = Overheads::for_gpu(&gpu);
        let o = Overheads {
            cuda_context: fixed.cuda_context,
            cublas_workspace: fixed.cublas_workspace,
            cublas_handle_memory: fixed.cublas_handle_memory,
            kernel_images: fixed.kernel_images,
            ..*overheads
        };
        let cap = usable(&gpu, &o).0;
        let mut used = |b: u64| -> u64 {
            *cache
                .entry((b, o.cublas_workspace.0, o.outside_allocator(base.mode).0))
                .or_insert_with(|| {
                    prepared
                        .run(&TrainConfig { batch: b, ..base }, &o, false)
                        .device_used(&o, base.mode)
                        .0
                })
        };
        let at_config = used(base.batch);
        let max_batch = if used(1) > cap {
            0
        } else {
            let (mut lo, mut hi) = (1u64, 2u64);
            while hi <= crate::config::MAX_DIMENSION && used(hi) <= cap {
                lo = hi;
                hi *= 2;
            }
            while hi - lo > 1 && hi <= crate::config::MAX_DIMENSION {
                let mid = lo + (hi - lo) / 2;
                if used(mid) <= cap { lo = mid } else { hi = mid }
            }
            lo
        };
        if max_batch > 0 {
            out.push(GpuOption {
                gpu: gpu.id.clone(),
                name: gpu.name.clone(),
                gpus,
                ep: base.parallel.ep,
                etp: base.parallel.etp,
                max_batch,
                device_used_bytes: Bytes(at_config),
                fits: at_config <= cap,
                memory_bytes: gpu.memory_bytes,
            });
        }
    }
    Ok(())
}
