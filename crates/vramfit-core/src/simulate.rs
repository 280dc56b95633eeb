//! Op-by-op simulation of training steps, as PyTorch allocates and frees:
//! forward allocates outputs and frees what nothing needs any more; backward
//! (in reverse order) allocates input and parameter gradients and frees each
//! op's saved tensors once it has run; checkpointed segments are re-run just
//! before their backward; the optimizer creates its state lazily at the first
//! step; `zero_grad(set_to_none=True)` frees the gradients.

use crate::config::TrainConfig;
use crate::graph::{Graph, OpKind, TensorId};
use crate::states::{self, ALLOCATION_QUANTUM};
use crate::units::Bytes;
use serde::Serialize;

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
    /// Model inputs and buffers (e.g. BatchNorm running statistics).
    pub other: Bytes,
}

impl Breakdown {
    /// Sum of all categories.
    pub fn total(&self) -> Bytes {
        self.parameters + self.gradients + self.optimizer_states + self.activations + self.temporary + self.other
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
    /// Peak of the reserved-memory model (segment rounding; see [`reserved_of`]).
    pub peak_reserved: Bytes,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Cat {
    Parameters,
    Gradients,
    States,
    Activations,
    Temporary,
    Other,
}

/// Allocation sizes above this go to the large pool (`kSmallSize`, 1 MiB).
const SMALL_SIZE: u64 = 1 << 20;
/// Small-pool segment size (`kSmallBuffer`, 2 MiB).
const SMALL_SEGMENT: u64 = 2 << 20;
/// Large allocations are rounded to this (`kRoundLarge`, 2 MiB).
const LARGE_ROUND: u64 = 2 << 20;
/// Large allocations below `kMinLargeAlloc` (10 MiB) get a 20 MiB segment (`kLargeBuffer`).
const MIN_LARGE_ALLOC: u64 = 10 << 20;

/// The reserved bytes a set of live allocations needs at least: small
/// allocations packed into 2 MiB segments; large ones in segments rounded to
/// 2 MiB (allocations of 1–10 MiB share 20 MiB segments).
pub fn reserved_of(small: u64, mid: u64, large_rounded: u64) -> Bytes {
    let small_seg = small.div_ceil(SMALL_SEGMENT) * SMALL_SEGMENT;
    let mid_seg = mid.div_ceil(2 * MIN_LARGE_ALLOC) * (2 * MIN_LARGE_ALLOC);
    Bytes(small_seg.saturating_add(mid_seg).saturating_add(large_rounded))
}

struct Memory {
    now: [u64; 6],
    small: u64,
    mid: u64,
    large: u64,
    peak_reserved: u64,
}

impl Memory {
    fn idx(c: Cat) -> usize {
        match c {
            Cat::Parameters => 0,
            Cat::Gradients => 1,
            Cat::States => 2,
            Cat::Activations => 3,
            Cat::Temporary => 4,
            Cat::Other => 5,
        }
    }

    fn pool(&mut self, bytes: u64, add: bool) {
        let (slot, amount) = if bytes <= SMALL_SIZE {
            (&mut self.small, bytes)
        } else if bytes < MIN_LARGE_ALLOC {
            (&mut self.mid, bytes)
        } else {
            (&mut self.large, bytes.div_ceil(LARGE_ROUND) * LARGE_ROUND)
        };
        *slot = if add { slot.saturating_add(amount) } else { slot.saturating_sub(amount) };
    }

    fn alloc(&mut self, c: Cat, bytes: u64) {
        if let Some(v) = self.now.get_mut(Self::idx(c)) {
            *v = v.saturating_add(bytes);
        }
        self.pool(bytes, true);
        let r = reserved_of(self.small, self.mid, self.large).0;
        self.peak_reserved = self.peak_reserved.max(r);
    }

    fn free(&mut self, c: Cat, bytes: u64) {
        if let Some(v) = self.now.get_mut(Self::idx(c)) {
            *v = v.saturating_sub(bytes);
        }
        self.pool(bytes, false);
    }

    /// Moves bytes from one category to another (a tensor changes role).
    fn relabel(&mut self, from: Cat, to: Cat, bytes: u64) {
        if let Some(v) = self.now.get_mut(Self::idx(from)) {
            *v = v.saturating_sub(bytes);
        }
        if let Some(v) = self.now.get_mut(Self::idx(to)) {
            *v = v.saturating_add(bytes);
        }
    }

    fn breakdown(&self) -> Breakdown {
        let [p, g, s, a, t, o] = self.now;
        Breakdown {
            parameters: Bytes(p),
            gradients: Bytes(g),
            optimizer_states: Bytes(s),
            activations: Bytes(a),
            temporary: Bytes(t),
            other: Bytes(o),
        }
    }
}

/// Records one moment: (memory, step, micro-batch, phase, op, timeline).
type Observer<'a> = dyn FnMut(&Memory, u32, u32, Phase, usize, &mut Vec<Point>) + 'a;

/// A run of ops whose saved tensors are dropped in forward and recomputed
/// just before their backward (a checkpointed block, or an attention core).
#[derive(Clone, Copy, Debug)]
struct Segment {
    start: usize,
    end: usize,
}

/// Precomputed, batch-independent facts about the graph.
struct Plan {
    storage: Vec<usize>,
    last_forward_use: Vec<usize>,
    /// For each storage, the backward ops after which one hold is released.
    holders: Vec<Vec<usize>>,
    /// For each segment, the storages it keeps from before it.
    segment_inputs: Vec<Vec<usize>>,
    op_segment: Vec<Option<usize>>,
    segments: Vec<Segment>,
    is_input: Vec<bool>,
    needs_backward: Vec<bool>,
}

fn segments_of(g: &Graph, cfg: &TrainConfig) -> (Vec<Segment>, Vec<Option<usize>>) {
    let mut segments: Vec<Segment> = Vec::new();
    let mut op_segment = vec![None; g.ops.len()];
    let selective = cfg.checkpointing.selective();
    for (i, op) in g.ops.iter().enumerate() {
        let in_segment = match op.block {
            Some(b) if cfg.checkpointing.checkpoints_block(b) => Some((0u8, b)),
            _ if selective && op.attention_core => Some((1u8, op.block.unwrap_or(u32::MAX))),
            _ => None,
        };
        let Some(key) = in_segment else { continue };
        let continues = i > 0
            && op_segment.get(i - 1).copied().flatten().is_some()
            && g.ops.get(i - 1).map(|p| {
                let pk = if p.attention_core && selective && !p.block.is_some_and(|b| cfg.checkpointing.checkpoints_block(b)) {
                    (1u8, p.block.unwrap_or(u32::MAX))
                } else {
                    (0u8, p.block.unwrap_or(u32::MAX))
                };
                pk == key
            }) == Some(true);
        if continues {
            if let Some(s) = segments.last_mut() {
                s.end = i;
            }
        } else {
            segments.push(Segment { start: i, end: i });
        }
        if let Some(slot) = op_segment.get_mut(i) {
            *slot = Some(segments.len() - 1);
        }
    }
    (segments, op_segment)
}

fn plan(g: &Graph, cfg: &TrainConfig) -> Plan {
    let n = g.tensors.len();
    let storage: Vec<usize> = (0..n).map(|t| g.storage_of(TensorId(t as u32)).0 as usize).collect();
    let st = |t: &TensorId| storage.get(t.0 as usize).copied().unwrap_or(0);
    let mut last_forward_use = vec![0usize; n];
    let mut is_input = vec![false; n];
    for (i, op) in g.ops.iter().enumerate() {
        for t in op.inputs.iter().chain(op.outputs.iter()) {
            if let Some(v) = last_forward_use.get_mut(st(t)) {
                *v = i;
            }
        }
        if op.kind == OpKind::Input {
            for t in &op.outputs {
                if let Some(v) = is_input.get_mut(st(t)) {
                    *v = true;
                }
            }
        }
    }
    let (segments, op_segment) = segments_of(g, cfg);
    let mut holders: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut segment_inputs: Vec<Vec<usize>> = vec![Vec::new(); segments.len()];
    for (i, op) in g.ops.iter().enumerate() {
        if op_segment.get(i).copied().flatten().is_some() {
            continue;
        }
        for s in unique_storages(&op.saved, &storage) {
            if let Some(h) = holders.get_mut(s) {
                h.push(i);
            }
        }
    }
    // A segment keeps the storages it reads that were produced before it.
    for (k, seg) in segments.iter().enumerate() {
        let mut produced = std::collections::HashSet::new();
        for op in g.ops.get(seg.start..=seg.end).unwrap_or(&[]) {
            for t in &op.inputs {
                let s = st(t);
                if !produced.contains(&s) {
                    if let Some(h) = holders.get_mut(s) {
                        if !h.contains(&seg.start) {
                            h.push(seg.start);
                            if let Some(list) = segment_inputs.get_mut(k) {
                                list.push(s);
                            }
                        }
                    }
                }
            }
            for t in &op.outputs {
                produced.insert(st(t));
            }
        }
    }
    let needs_backward = g
        .ops
        .iter()
        .map(|op| {
            !matches!(op.kind, OpKind::Input | OpKind::ScopeEnd)
                && (op.inputs.iter().any(|t| g.tensor(*t).is_some_and(|x| x.requires_grad))
                    || op.params.iter().any(|p| g.params.get(p.0 as usize).is_some_and(|p| p.trainable)))
        })
        .collect();
    Plan { storage, last_forward_use, holders, segment_inputs, op_segment, segments, is_input, needs_backward }
}

/// Simulates `steps` optimizer steps of `cfg.grad_accum` micro-batches each.
pub fn simulate(g: &Graph, cfg: &TrainConfig, steps: u32, record: bool) -> Simulation {
    let plan = plan(g, cfg);
    let batch = cfg.batch;
    let pdtype = cfg.precision.param_dtype();
    let tensor_bytes: Vec<u64> = g.tensors.iter().map(|t| states::allocation(t.numel.at(batch), t.dtype).0).collect();
    let bytes_of = |t: usize| tensor_bytes.get(t).copied().unwrap_or(0);
    let temp_bytes = |n: crate::graph::Numel| -> u64 {
        let b = n.at(batch);
        if b == 0 { 0 } else { Bytes(b).round_up(ALLOCATION_QUANTUM).0 }
    };

    let mut mem = Memory { now: [0; 6], small: 0, mid: 0, large: 0, peak_reserved: 0 };
    for p in &g.params {
        mem.alloc(Cat::Parameters, states::weight_bytes(p, pdtype).0);
    }
    for b in &g.buffers {
        mem.alloc(Cat::Other, states::allocation(b.numel, b.dtype).0);
    }

    let mut timeline = Vec::new();
    let mut peak = Point { step: 0, micro_batch: 0, phase: Phase::Forward, op: 0, breakdown: mem.breakdown() };
    let mut observe = |mem: &Memory, step: u32, mb: u32, phase: Phase, op: usize, timeline: &mut Vec<Point>| {
        let bd = mem.breakdown();
        if bd.total() > peak.breakdown.total() {
            peak = Point { step, micro_batch: mb, phase, op, breakdown: bd };
        }
        if record {
            timeline.push(Point { step, micro_batch: mb, phase, op, breakdown: bd });
        }
    };

    let n = g.tensors.len();
    let mut grads_allocated = vec![false; g.params.len()];
    let mut states_allocated = false;

    for step in 1..=steps {
        for mb in 1..=(cfg.grad_accum.min(u64::from(u32::MAX)) as u32) {
            // ---- forward ----
            let mut alive = vec![false; n];
            let mut holds: Vec<usize> = plan.holders.iter().map(Vec::len).collect();
            let cat_of = |s: usize| if plan.is_input.get(s).copied().unwrap_or(false) { Cat::Other } else { Cat::Activations };
            for (i, op) in g.ops.iter().enumerate() {
                for t in &op.outputs {
                    let s = plan.storage.get(t.0 as usize).copied().unwrap_or(0);
                    if !alive.get(s).copied().unwrap_or(true) {
                        if let Some(a) = alive.get_mut(s) {
                            *a = true;
                        }
                        mem.alloc(cat_of(s), bytes_of(s));
                    }
                }
                let tmp = temp_bytes(op.forward_temp);
                mem.alloc(Cat::Temporary, tmp);
                observe(&mem, step, mb, Phase::Forward, i, &mut timeline);
                mem.free(Cat::Temporary, tmp);
                for t in op.inputs.iter().chain(op.outputs.iter()) {
                    let s = plan.storage.get(t.0 as usize).copied().unwrap_or(0);
                    let last = plan.last_forward_use.get(s).copied().unwrap_or(0) == i;
                    let held = holds.get(s).copied().unwrap_or(0) > 0 || plan.is_input.get(s).copied().unwrap_or(false);
                    if last && !held && alive.get(s).copied().unwrap_or(false) {
                        if let Some(a) = alive.get_mut(s) {
                            *a = false;
                        }
                        mem.free(cat_of(s), bytes_of(s));
                    }
                }
            }

            // ---- backward ----
            // Gradient storages: per tensor, an index into `gstore` (shared by passthrough views).
            let mut grad_of: Vec<Option<usize>> = vec![None; n];
            let mut gstore: Vec<(u64, u32)> = Vec::new();
            // The loss's gradient (a scalar of ones).
            if let Some(loss_op) = g.ops.iter().rev().find(|o| o.kind == OpKind::Loss) {
                if let Some(t) = loss_op.outputs.first() {
                    gstore.push((512, 1));
                    mem.alloc(Cat::Temporary, 512);
                    if let Some(slot) = grad_of.get_mut(t.0 as usize) {
                        *slot = Some(gstore.len() - 1);
                    }
                }
            }
            for i in (0..g.ops.len()).rev() {
                let Some(op) = g.ops.get(i) else { continue };
                // Recompute a checkpointed segment when its last op is reached.
                if let Some(seg) = plan.op_segment.get(i).copied().flatten().and_then(|s| plan.segments.get(s)) {
                    if seg.end == i {
                        recompute(
                            g,
                            &plan,
                            *seg,
                            &bytes_of,
                            &temp_bytes,
                            &mut alive,
                            &mut holds,
                            &mut mem,
                            step,
                            mb,
                            &mut observe,
                            &mut timeline,
                        );
                    }
                }
                if !plan.needs_backward.get(i).copied().unwrap_or(false) {
                    continue;
                }
                let mut transient = 0u64;
                let out_grad = op.outputs.first().and_then(|t| grad_of.get(t.0 as usize).copied().flatten());
                let out_dtype = op.outputs.first().and_then(|t| g.tensor(*t)).map(|t| t.dtype);
                for x in &op.inputs {
                    let Some(info) = g.tensor(*x) else { continue };
                    if !info.requires_grad {
                        continue;
                    }
                    let xi = x.0 as usize;
                    let size = bytes_of(xi);
                    match grad_of.get(xi).copied().flatten() {
                        Some(_) => {
                            // Accumulated into the existing buffer (in place) through a transient.
                            if !(op.grad_passthrough && Some(info.dtype) == out_dtype) {
                                transient += size;
                            }
                        }
                        None => {
                            if let (true, Some(gs), true) = (op.grad_passthrough, out_grad, Some(info.dtype) == out_dtype) {
                                if let Some(e) = gstore.get_mut(gs) {
                                    e.1 += 1;
                                }
                                if let Some(slot) = grad_of.get_mut(xi) {
                                    *slot = Some(gs);
                                }
                            } else {
                                gstore.push((size, 1));
                                mem.alloc(Cat::Temporary, size);
                                if let Some(slot) = grad_of.get_mut(xi) {
                                    *slot = Some(gstore.len() - 1);
                                }
                            }
                        }
                    }
                }
                // Without autocast, the op's backward makes the parameter gradient
                // itself (AccumulateGrad steals it as `.grad`); with autocast a later
                // ToCopyBackward node converts the half-precision gradient.
                let mut fresh = 0;
                if !op.param_grad_via_cast {
                    let (t, f) = param_grads(g, op, pdtype, &mut grads_allocated, &mut mem);
                    transient += t;
                    fresh = f;
                }
                transient += temp_bytes(op.backward_temp);
                mem.alloc(Cat::Temporary, transient);
                observe(&mem, step, mb, Phase::Backward, i, &mut timeline);
                mem.free(Cat::Temporary, transient);
                mem.relabel(Cat::Temporary, Cat::Gradients, fresh);
                // The output gradients are consumed.
                for t in &op.outputs {
                    let ti = t.0 as usize;
                    if let Some(gs) = grad_of.get(ti).copied().flatten() {
                        if let Some(slot) = grad_of.get_mut(ti) {
                            *slot = None;
                        }
                        if let Some(e) = gstore.get_mut(gs) {
                            e.1 = e.1.saturating_sub(1);
                            if e.1 == 0 {
                                mem.free(Cat::Temporary, e.0);
                            }
                        }
                    }
                }
                // Saved tensors of this op are released.
                release(g, &plan, i, &bytes_of, &mut alive, &mut holds, &mut mem);
                if op.param_grad_via_cast && op.params.iter().any(|p| g.params.get(p.0 as usize).is_some_and(|p| p.trainable)) {
                    // ToCopyBackward: the half gradient and the new fp32 one coexist.
                    let (t, fresh) = param_grads(g, op, pdtype, &mut grads_allocated, &mut mem);
                    let late = t + temp_bytes(op.backward_temp);
                    mem.alloc(Cat::Temporary, late);
                    observe(&mem, step, mb, Phase::Backward, i, &mut timeline);
                    mem.free(Cat::Temporary, late);
                    mem.relabel(Cat::Temporary, Cat::Gradients, fresh);
                }
            }
            // Whatever is still alive from this micro-batch (inputs, the loss) goes now.
            for s in 0..n {
                if alive.get(s).copied().unwrap_or(false) {
                    mem.free(cat_of(s), bytes_of(s));
                }
            }
            for (size, refs) in &gstore {
                if *refs > 0 {
                    mem.free(Cat::Temporary, *size);
                }
            }
        }

        // ---- optimizer step ----
        if !states_allocated {
            for p in &g.params {
                mem.alloc(Cat::States, states::optimizer_state_bytes(p, pdtype, cfg.optimizer).0);
            }
            states_allocated = true;
        }
        let tmp = states::optimizer_step_temp(&g.params, pdtype, cfg.optimizer).0;
        mem.alloc(Cat::Temporary, tmp);
        observe(&mem, step, 0, Phase::Optimizer, usize::MAX, &mut timeline);
        mem.free(Cat::Temporary, tmp);
        // zero_grad(set_to_none=True)
        for (pi, p) in g.params.iter().enumerate() {
            if grads_allocated.get(pi).copied().unwrap_or(false) {
                mem.free(Cat::Gradients, states::gradient_bytes(p, pdtype).0);
            }
        }
        grads_allocated.iter_mut().for_each(|a| *a = false);
    }
    Simulation { peak, timeline, peak_reserved: Bytes(mem.peak_reserved) }
}

/// Allocates the gradients of an op's trainable parameters: the first time
/// in a step as new tensors that become `.grad` once AccumulateGrad runs
/// (until then they are temporaries, as PyTorch's MemTracker labels them);
/// afterwards (gradient accumulation, shared weights) as a transient that is
/// added in place. Returns (transient bytes, new gradient bytes).
fn param_grads(g: &Graph, op: &crate::graph::Op, pdtype: crate::dtype::DType, allocated: &mut [bool], mem: &mut Memory) -> (u64, u64) {
    let mut transient = 0;
    let mut fresh = 0;
    for p in &op.params {
        let pi = p.0 as usize;
        let Some(param) = g.params.get(pi) else { continue };
        if !param.trainable {
            continue;
        }
        let size = states::gradient_bytes(param, pdtype).0;
        match allocated.get_mut(pi) {
            Some(done) if !*done => {
                *done = true;
                mem.alloc(Cat::Temporary, size);
                fresh += size;
            }
            _ => transient += size,
        }
    }
    (transient, fresh)
}

/// The distinct storages of a list of tensors.
fn unique_storages(tensors: &[TensorId], storage: &[usize]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for t in tensors {
        let s = storage.get(t.0 as usize).copied().unwrap_or(0);
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// After op `i`'s backward: drop its holds on saved tensors (and, at the
/// start of a segment, the segment's holds on its inputs); free what is no longer held.
fn release(g: &Graph, plan: &Plan, i: usize, bytes_of: &dyn Fn(usize) -> u64, alive: &mut [bool], holds: &mut [usize], mem: &mut Memory) {
    let Some(op) = g.ops.get(i) else { return };
    let mut list = unique_storages(&op.saved, &plan.storage);
    if let Some(k) = plan.op_segment.get(i).copied().flatten() {
        if plan.segments.get(k).is_some_and(|seg| seg.start == i) {
            list.extend(plan.segment_inputs.get(k).into_iter().flatten().copied());
        }
    }
    for s in list {
        if let Some(h) = holds.get_mut(s) {
            *h = h.saturating_sub(1);
            if *h == 0 && alive.get(s).copied().unwrap_or(false) && !plan.is_input.get(s).copied().unwrap_or(false) {
                if let Some(a) = alive.get_mut(s) {
                    *a = false;
                }
                mem.free(Cat::Activations, bytes_of(s));
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn recompute(
    g: &Graph,
    plan: &Plan,
    seg: Segment,
    bytes_of: &dyn Fn(usize) -> u64,
    temp_bytes: &dyn Fn(crate::graph::Numel) -> u64,
    alive: &mut [bool],
    holds: &mut [usize],
    mem: &mut Memory,
    step: u32,
    mb: u32,
    observe: &mut Observer<'_>,
    timeline: &mut Vec<Point>,
) {
    // Storages saved by ops of the segment get one hold per saving op.
    let mut last_use = std::collections::HashMap::new();
    for i in seg.start..=seg.end {
        let Some(op) = g.ops.get(i) else { continue };
        for t in op.inputs.iter().chain(op.outputs.iter()) {
            last_use.insert(plan.storage.get(t.0 as usize).copied().unwrap_or(0), i);
        }
        for s in unique_storages(&op.saved, &plan.storage) {
            if let Some(h) = holds.get_mut(s) {
                *h += 1;
            }
        }
    }
    for i in seg.start..=seg.end {
        let Some(op) = g.ops.get(i) else { continue };
        for t in &op.outputs {
            let s = plan.storage.get(t.0 as usize).copied().unwrap_or(0);
            if !alive.get(s).copied().unwrap_or(true) {
                if let Some(a) = alive.get_mut(s) {
                    *a = true;
                }
                mem.alloc(Cat::Activations, bytes_of(s));
            }
        }
        let tmp = temp_bytes(op.forward_temp);
        mem.alloc(Cat::Temporary, tmp);
        observe(mem, step, mb, Phase::Backward, i, timeline);
        mem.free(Cat::Temporary, tmp);
        for t in op.inputs.iter().chain(op.outputs.iter()) {
            let s = plan.storage.get(t.0 as usize).copied().unwrap_or(0);
            if last_use.get(&s) == Some(&i) && holds.get(s).copied().unwrap_or(0) == 0 && alive.get(s).copied().unwrap_or(false) {
                if let Some(a) = alive.get_mut(s) {
                    *a = false;
                }
                mem.free(Cat::Activations, bytes_of(s));
            }
        }
    }
}

/// Bytes each layer keeps alive at the end of the forward pass (one micro-batch):
/// storages held for backward, attributed to the layer of the op that made them.
pub fn kept_after_forward(g: &Graph, cfg: &TrainConfig) -> Vec<(usize, Bytes)> {
    let plan = plan(g, cfg);
    let mut producer = vec![None; g.tensors.len()];
    for op in &g.ops {
        for t in &op.outputs {
            let s = plan.storage.get(t.0 as usize).copied().unwrap_or(0);
            if let Some(slot) = producer.get_mut(s) {
                if slot.is_none() {
                    *slot = Some(op.layer as usize);
                }
            }
        }
    }
    let mut out = Vec::new();
    for (s, holders) in plan.holders.iter().enumerate() {
        if holders.is_empty() || plan.is_input.get(s).copied().unwrap_or(false) {
            continue;
        }
        if let (Some(Some(layer)), Some(t)) = (producer.get(s), g.tensors.get(s)) {
            out.push((*layer, states::allocation(t.numel.at(cfg.batch), t.dtype)));
        }
    }
    out
}
