//! Op-by-op simulation of training steps, as PyTorch allocates and frees:
//! forward allocates outputs and frees what nothing needs any more; backward
//! (in reverse order) allocates input and parameter gradients and frees each
//! op's saved tensors once it has run; checkpointed segments are re-run just
//! before their backward; the optimizer creates its state lazily at the first
//! step; `zero_grad(set_to_none=True)` frees the gradients. Every allocation
//! also goes through a model of the CUDA caching allocator for reserved memory.

pub mod allocator;
mod memory;
mod plan;
mod shard;
mod step;
mod tape;

use crate::config::{Optimizer, OptimizerImpl, TrainConfig};
use crate::graph::{Graph, Numel};
use crate::overheads::Overheads;
use crate::states;
use crate::units::Bytes;
use serde::Serialize;
use std::cell::{OnceCell, RefCell};
use std::rc::Rc;

pub use step::OPTIMIZER_OP;

/// Where in the training step a moment falls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// The forward pass (including the loss).
    Forward,
    /// The backward pass (including recomputation of checkpointed blocks).
    Backward,
    /// `optimizer.step()`.
    Optimizer,
}

impl Phase {
    /// The stable id (`forward`, `backward`, `optimizer`).
    pub fn id(self) -> &'static str {
        match self {
            Phase::Forward => "forward",
            Phase::Backward => "backward",
            Phase::Optimizer => "optimizer",
        }
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

/// Memory by category at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Breakdown {
    /// Model weights (and their half-precision copies' originals).
    pub parameters: Bytes,
    /// Parameter gradients (`param.grad`).
    pub gradients: Bytes,
    /// Optimizer state.
    pub optimizer_states: Bytes,
    /// Tensors produced in forward and kept (or recomputed) for backward.
    pub activations: Bytes,
    /// Short-lived buffers: activation gradients, workspaces, optimizer temporaries.
    pub temporary: Bytes,
    /// Model inputs, buffers (e.g. BatchNorm running statistics) and cuBLAS workspaces.
    pub other: Bytes,
    /// The KV cache (inference).
    pub kv_cache: Bytes,
}

impl Breakdown {
    /// Sum of all categories.
    pub fn total(&self) -> Bytes {
        self.parameters
            + self.gradients
            + self.optimizer_states
            + self.activations
            + self.temporary
            + self.other
            + self.kv_cache
    }
}

/// One moment of the timeline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Point {
    /// Training step (1-based).
    pub step: u32,
    /// Micro-batch within the step (1-based; 0 for the optimizer).
    pub micro_batch: u32,
    /// Phase.
    pub phase: Phase,
    /// Index of the op in [`Graph::ops`] (`usize::MAX` for the optimizer step).
    pub op: usize,
    /// Memory by category right after the op's allocations.
    pub breakdown: Breakdown,
}

/// What the simulation found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Simulation {
    /// The highest moment.
    pub peak: Point,
    /// Every moment, when recording was asked for.
    pub timeline: Vec<Point>,
    /// Peak of `torch.cuda.memory_reserved()` from the caching-allocator model ([`allocator`]).
    pub peak_reserved: Bytes,
    /// The allocator model's segments at the end of the replay (the same as
    /// at its peak unless a limit or garbage collection released some).
    pub segments: allocator::Segments,
    /// Host memory per node used by offloading.
    pub host_ram: Bytes,
}

/// The entry at `i` of a table the simulation sized for every index it
/// reads (one per tensor, storage, parameter, block or interned size). A
/// miss is a broken invariant, never an input: debug builds, and so every
/// test, stop on it; a release build reads the type's default rather than
/// panic in the page.
#[inline]
pub(crate) fn entry<T: Copy + Default>(table: &[T], i: usize) -> T {
    debug_assert!(
        i < table.len(),
        "simulate: index {i} outside a table of {}",
        table.len()
    );
    table.get(i).copied().unwrap_or_default()
}

/// An index or count as the 32-bit id a tape stores. The core's limits on
/// model size keep every parameter, event and slot count far below 2^32; a
/// larger one is a broken invariant (debug builds stop on it).
#[inline]
pub(crate) fn id32(i: usize) -> u32 {
    debug_assert!(
        u32::try_from(i).is_ok(),
        "simulate: {i} does not fit a 32-bit id"
    );
    u32::try_from(i).unwrap_or(u32::MAX)
}

impl Simulation {
    /// What nvidia-smi shows: reserved memory (workspaces included) plus
    /// what lies outside the allocator in a step of `mode` (the CUDA
    /// context, the cuBLAS handles' own memory, the kernel images).
    pub fn device_used(&self, overheads: &Overheads, mode: crate::config::Mode) -> Bytes {
        self.peak_reserved + overheads.outside_allocator(mode)
    }
}

/// Optimizer steps simulated: the second is the first with optimizer state
/// (created lazily by the first `optimizer.step()`).
pub const STEPS: u32 = 2;

/// Simulates [`STEPS`] optimizer steps of `cfg.grad_accum` micro-batches
/// each, recording every moment when `record` is set.
pub fn simulate(g: &Graph, cfg: &TrainConfig, overheads: &Overheads, record: bool) -> Simulation {
    Prepared::new(Rc::new(g.clone()), cfg, overheads).run(cfg, overheads, record)
}

/// The batch-independent part of a simulation, recorded once and replayed
/// per batch size (the largest-batch search, the batch curve and the planner
/// run many simulations of one configuration).
///
/// A tape recorded for a multi-GPU data-parallel strategy names its
/// model-state sizes ([`shard::Sharded`]) instead of fixing them, so it
/// also replays every other strategy and offload over the same GPUs: what
/// a step allocates and frees, and in which order, is the same under all of
/// them; only the sizes differ, some of them zero (the planner records one
/// tape per precision and checkpointing instead of one per strategy).
pub struct Prepared {
    g: Rc<Graph>,
    plan: plan::Plan,
    tape: tape::Tape,
    /// The strategy recorded; a tape that is not shared replays only it.
    recorded: Rc<Strategy>,
    /// Whether the tape names model-state sizes ([`shard::Sharded`]).
    shared: bool,
    /// Other strategies replayed, once asked for.
    others: RefCell<Vec<Rc<Strategy>>>,
    /// Where reserved-memory replays run (see [`Prepared::keeping_snapshots`]).
    work: RefCell<tape::Workspace>,
}

/// What a replay reads under one data-parallel strategy.
struct Strategy {
    shards: shard::Shards,
    sizes: shard::ShardSizes,
    /// Each optimizer's sizes ([`Strategy::optimizer_sizes`]), by its index in
    /// [`Optimizer::ALL`] and its implementation's in [`OptimizerImpl::ALL`], once asked for.
    optimizers: Vec<OnceCell<OptimizerSizes>>,
}

/// Each parameter's optimizer state and the optimizer step's temporaries, in bytes.
type OptimizerSizes = (Vec<u64>, Vec<u64>);

impl Strategy {
    fn new(g: &Graph, cfg: &TrainConfig) -> Strategy {
        let shards = shard::Shards::new(g, cfg);
        let sizes = shards.sizes(g);
        Strategy {
            shards,
            sizes,
            optimizers: (0..Optimizer::ALL.len() * OptimizerImpl::ALL.len())
                .map(|_| OnceCell::new())
                .collect(),
        }
    }

    /// The sizes of `cfg`'s optimizer: each parameter's state and the step's temporaries.
    fn optimizer_sizes(
        &self,
        g: &Graph,
        cfg: &TrainConfig,
    ) -> std::borrow::Cow<'_, OptimizerSizes> {
        let make = || {
            (
                g.params
                    .iter()
                    .flat_map(|p| self.shards.state_tensors(p, cfg))
                    .collect(),
                self.shards.step_temps(g, cfg),
            )
        };
        let optimizer = Optimizer::ALL.iter().position(|o| *o == cfg.optimizer);
        let imp = OptimizerImpl::ALL
            .iter()
            .position(|i| *i == cfg.optimizer_impl);
        match optimizer
            .zip(imp)
            .and_then(|(o, i)| self.optimizers.get(o * OptimizerImpl::ALL.len() + i))
        {
            Some(cell) => std::borrow::Cow::Borrowed(cell.get_or_init(make)),
            None => std::borrow::Cow::Owned(make()),
        }
    }
}

impl Prepared {
    /// Analyses `g` and records its tape for everything in `cfg` except the
    /// batch size, the accumulation steps and the optimizer (and, for a
    /// multi-GPU data-parallel strategy, the strategy and offload), and for
    /// the number of cuBLAS handles in `overheads` (workspace sizes are read
    /// at each run).
    pub fn new(g: Rc<Graph>, cfg: &TrainConfig, overheads: &Overheads) -> Prepared {
        Prepared::record(
            g,
            cfg,
            overheads,
            cfg.parallel.strategy != crate::parallel::Strategy::Single,
        )
    }

    /// [`Prepared::new`] for `cfg`'s strategy only: model-state sizes are
    /// recorded as bytes, as they are on one GPU (what a shared tape's
    /// replays are checked against).
    pub fn for_one_strategy(g: Rc<Graph>, cfg: &TrainConfig, overheads: &Overheads) -> Prepared {
        Prepared::record(g, cfg, overheads, false)
    }

    fn record(g: Rc<Graph>, cfg: &TrainConfig, overheads: &Overheads, shared: bool) -> Prepared {
        let plan = plan::plan(&g, cfg);
        let recorded = Rc::new(Strategy::new(&g, cfg));
        let tape = step::Sim::new(&g, &plan, &recorded.shards, cfg, overheads, shared).run(STEPS);
        Prepared {
            g,
            plan,
            tape,
            recorded,
            shared,
            others: RefCell::new(Vec::new()),
            work: RefCell::default(),
        }
    }

    /// Keeps the state of reserved-memory replays ([`Prepared::peak_reserved_within`])
    /// at the optimizer's first allocation, for replays that differ only in
    /// the optimizer to resume from (the planner tries two optimizers for
    /// each configuration); a state is a few tens of kilobytes.
    #[must_use]
    pub fn keeping_snapshots(self) -> Prepared {
        Prepared {
            work: RefCell::new(tape::Workspace::keeping_snapshots()),
            ..self
        }
    }

    /// The graph this was prepared for.
    pub fn graph(&self) -> &Graph {
        &self.g
    }

    /// Bytes each layer keeps alive at the end of the forward pass (one
    /// micro-batch at `cfg`'s batch): storages held for backward, attributed
    /// to the layer of the op that made them.
    pub fn kept_after_forward(&self, cfg: &TrainConfig) -> Vec<(usize, Bytes)> {
        kept_with(&self.g, &self.plan, cfg)
    }

    /// The strategy a replay at `cfg` reads: `cfg`'s on a shared tape, else the recorded one.
    fn strategy(&self, cfg: &TrainConfig) -> Rc<Strategy> {
        if !self.shared || self.recorded.shards.parallel == cfg.parallel {
            return Rc::clone(&self.recorded);
        }
        let mut others = self.others.borrow_mut();
        if let Some(s) = others.iter().find(|s| s.shards.parallel == cfg.parallel) {
            return Rc::clone(s);
        }
        let s = Rc::new(Strategy::new(&self.g, cfg));
        others.push(Rc::clone(&s));
        s
    }

    fn eval<'a>(
        &self,
        cfg: &TrainConfig,
        overheads: &Overheads,
        strategy: &'a Strategy,
        optimizer: &'a OptimizerSizes,
        kv_cache: Numel,
    ) -> tape::Eval<'a> {
        tape::Eval {
            batch: cfg.batch,
            accumulates: cfg.grad_accum > 1,
            cublas_workspace: overheads.cublas_workspace.0,
            conv_workspace: overheads.cudnn_workspace.0,
            in_flight: step::in_flight_bytes(&self.g, &self.plan, cfg),
            states: &optimizer.0,
            step_temps: &optimizer.1,
            kv_cache,
            shards: &strategy.sizes,
            allocator: overheads.allocator_settings(),
        }
    }

    /// Simulates at `cfg`, which may differ from the prepared one only in
    /// batch size, accumulation steps and optimizer (and on a shared tape,
    /// see [`Prepared`], in data-parallel strategy and offload).
    pub fn run(&self, cfg: &TrainConfig, overheads: &Overheads, record: bool) -> Simulation {
        self.run_with_kv_cache(cfg, overheads, self.g.kv_cache, record)
    }

    /// [`Prepared::run`] with a KV cache of `kv_cache` elements instead of
    /// the graph's (inference at another context length: nothing else in
    /// the step depends on it).
    // Out of line: see `step::Sim::run`.
    #[inline(never)]
    pub fn run_with_kv_cache(
        &self,
        cfg: &TrainConfig,
        overheads: &Overheads,
        kv_cache: Numel,
        record: bool,
    ) -> Simulation {
        let strategy = self.strategy(cfg);
        let optimizer = strategy.optimizer_sizes(&self.g, cfg);
        let r = tape::replay(
            &self.tape,
            &self.eval(cfg, overheads, &strategy, &optimizer, kv_cache),
            true,
            record,
        );
        let host_ram = if cfg.mode == crate::config::Mode::Inference {
            0
        } else {
            strategy.shards.host_bytes(&self.g, cfg)
        };
        Simulation {
            peak: r.peak,
            timeline: r.timeline,
            peak_reserved: Bytes(r.peak_reserved),
            segments: r.segments,
            host_ram: Bytes(host_ram),
        }
    }

    /// Peak allocated bytes at `cfg` without the caching-allocator model: a
    /// lower bound on reserved memory at a fraction of the cost of [`Prepared::run`].
    pub fn peak_allocated(&self, cfg: &TrainConfig, overheads: &Overheads) -> Bytes {
        self.peak_allocated_with_kv_cache(cfg, overheads, self.g.kv_cache)
    }

    /// [`Prepared::peak_allocated`] with a KV cache of `kv_cache` elements (see [`Prepared::run_with_kv_cache`]).
    pub fn peak_allocated_with_kv_cache(
        &self,
        cfg: &TrainConfig,
        overheads: &Overheads,
        kv_cache: Numel,
    ) -> Bytes {
        let strategy = self.strategy(cfg);
        let optimizer = strategy.optimizer_sizes(&self.g, cfg);
        Bytes(tape::peak_allocated(
            &self.tape,
            &self.eval(cfg, overheads, &strategy, &optimizer, kv_cache),
        ))
    }

    /// A lower bound of [`Prepared::peak_allocated`] at `cfg` from a few
    /// moments of the last step (after forward, at the optimizer step), at
    /// a small fraction of its cost: what the planner screens with.
    pub fn landmark_allocated(&self, cfg: &TrainConfig, overheads: &Overheads) -> Bytes {
        let strategy = self.strategy(cfg);
        let optimizer = strategy.optimizer_sizes(&self.g, cfg);
        Bytes(tape::landmark_allocated(
            &self.tape,
            &self.eval(cfg, overheads, &strategy, &optimizer, self.g.kv_cache),
        ))
    }

    /// Peak reserved bytes at `cfg` with a KV cache of `kv_cache` elements
    /// when they are at most `limit`; `None` when they exceed it, found by a
    /// replay that stops there (a step that does not fit costs only the
    /// events up to its overflow).
    pub fn peak_reserved_within(
        &self,
        cfg: &TrainConfig,
        overheads: &Overheads,
        kv_cache: Numel,
        limit: Bytes,
    ) -> Option<Bytes> {
        let strategy = self.strategy(cfg);
        let optimizer = strategy.optimizer_sizes(&self.g, cfg);
        let e = self.eval(cfg, overheads, &strategy, &optimizer, kv_cache);
        // A replay never runs within another; a fresh workspace if one did.
        match self.work.try_borrow_mut() {
            Ok(mut work) => tape::peak_reserved_within(&self.tape, &e, limit.0, &mut work),
            Err(_) => {
                tape::peak_reserved_within(&self.tape, &e, limit.0, &mut tape::Workspace::default())
            }
        }
        .map(Bytes)
    }

    /// The KV cache of the graph this was prepared for.
    pub fn kv_cache(&self) -> Numel {
        self.g.kv_cache
    }
}

fn kept_with(g: &Graph, plan: &plan::Plan, cfg: &TrainConfig) -> Vec<(usize, Bytes)> {
    let mut producer = vec![None; g.tensors.len()];
    for op in &g.ops {
        for t in &op.outputs {
            let s = entry(&plan.storage, t.0 as usize);
            if let Some(slot) = producer.get_mut(s) {
                if slot.is_none() {
                    *slot = Some(op.layer as usize);
                }
            }
        }
    }
    let mut out = Vec::new();
    for (s, holders) in plan.holders.iter().enumerate() {
        if holders.is_empty() || entry(&plan.is_input, s) {
            continue;
        }
        if let (Some(Some(layer)), Some(t)) = (producer.get(s), g.tensors.get(s)) {
            out.push((*layer, states::allocation(t.numel.at(cfg.batch), t.dtype)));
        }
    }
    out
}
