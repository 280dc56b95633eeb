//! The walk itself: one `Sim` goes through forward, backward (with
//! checkpoint recomputation) and the optimizer step, recording each
//! allocation, free and moment on a [`Tape`] with batch-symbolic sizes.

use super::Phase;
use super::memory::Cat;
use super::plan::{Plan, Segment, unique_storages, unique_storages_into};
use super::shard::{ShardSizes, Sharded, Shards};
use super::tape::{Handle, Size, SizeId, Tape};
use super::{entry, id32};
use crate::config::{OptimizerImpl, TrainConfig, ZeroGrad};
use crate::dtype::DType;
use crate::graph::{Graph, Numel, Op, OpKind, TempStep};
use crate::overheads::Overheads;
use crate::states::{self, ALLOCATION_QUANTUM};

/// Bytes the first pipeline stage keeps for the micro-batches in flight
/// beside the current one: min(pp, micro-batches) − 1 times one micro-batch's
/// saved activations (the 1F1B schedule of Narayanan et al. 2021). With `vpp`
/// virtual stages (interleaved 1F1B) Megatron-LM's `theoretical_memory_usage.py`
/// scales the pp micro-batches by 1 + (pp − 1)/(pp · vpp).
pub(super) fn in_flight_bytes(g: &Graph, plan: &Plan, cfg: &TrainConfig) -> u64 {
    let (pp, vpp) = (cfg.parallel.pp, cfg.parallel.vpp.max(1));
    if pp <= 1 {
        return 0;
    }
    let one: u64 = super::kept_with(g, plan, cfg)
        .iter()
        .map(|(_, b)| b.0)
        .sum();
    let in_flight = if vpp > 1 && cfg.grad_accum >= pp {
        pp as f64 * (1.0 + (pp - 1) as f64 / (pp * vpp) as f64)
    } else {
        pp.min(cfg.grad_accum) as f64
    };
    (one as f64 * (in_flight - 1.0).max(0.0)).ceil() as u64
}

/// Op index used for the optimizer step in [`Point::op`].
pub const OPTIMIZER_OP: usize = usize::MAX;

/// A parameter gradient made by an op: a full `.grad` to relabel, or the
/// shard of parameter `i` to allocate once the reduce-scatter has run.
enum Fresh {
    Grad(Option<Handle>),
    Shard(usize),
}

/// Each parameter's first op in forward order (`usize::MAX` when none reads it).
fn first_uses(g: &Graph) -> Vec<usize> {
    let mut first = vec![usize::MAX; g.params.len()];
    for (i, op) in g.ops.iter().enumerate() {
        for p in &op.params {
            if let Some(f) = first.get_mut(p.0 as usize) {
                *f = (*f).min(i);
            }
        }
    }
    first
}

/// A gradient buffer shared by views (passthrough ops) until its last user.
struct GradBuffer {
    handle: Option<Handle>,
    users: u32,
}

pub(super) struct Sim<'a> {
    g: &'a Graph,
    plan: &'a Plan,
    cfg: &'a TrainConfig,
    /// Each tensor's size, registered on the tape.
    bytes: Vec<Option<SizeId>>,
    mem: Tape,
    step: u32,
    micro: u32,
    // Per micro-batch.
    alive: Vec<bool>,
    storage_handle: Vec<Option<Handle>>,
    holds: Vec<usize>,
    grad_of: Vec<Option<usize>>,
    grads: Vec<GradBuffer>,
    // Per step / run.
    /// Each parameter's `.grad` once made in the step: the whole gradient and the kept shard (one of them is empty).
    param_grad: Vec<Option<(Option<Handle>, Option<Handle>)>>,
    /// Each parameter's first op in forward, the last to give it a gradient
    /// in backward (`usize::MAX` for one no op reads).
    first_use: Vec<usize>,
    /// Parameters whose gradient is still autograd's input buffer: a weight
    /// read by several ops (a tied embedding and head) gets `.grad` only when
    /// its last contribution has been summed in (then AccumulateGrad runs).
    buffered: Vec<bool>,
    states: Option<Vec<Option<Handle>>>,
    /// cuBLAS workspaces still to be created (one per handle).
    workspace: u32,
    /// Per-GPU sizes under the data-parallel strategy.
    shards: &'a Shards,
    /// The recording strategy's model-state sizes, for a tape that records them as bytes.
    sizes: ShardSizes,
    /// Whether the tape records model-state sizes by name ([`Sharded`]), to serve every strategy.
    shared: bool,
    /// Gathered parameters of blocks (ZeRO-3 / FSDP full shard), by block.
    gathered: Vec<Option<Handle>>,
    /// Gathered parameters outside blocks, from forward until backward ends.
    root_gathered: Option<Handle>,
    /// Pipeline stage 0 under 1F1B: activations of the other micro-batches in flight.
    in_flight: Option<Handle>,
    /// Buffers reused op after op (recording allocates little).
    scratch: Scratch,
    /// The most temporaries any optimizer's step makes here.
    step_temps: u32,
    /// Where the first step's landmarks would be ([`Sim::landmark`]).
    landmarks: Vec<usize>,
}

/// Per-op lists, kept between ops so that recording a tape does not allocate for each.
#[derive(Default)]
struct Scratch {
    transient: Vec<Option<Handle>>,
    fresh: Vec<Fresh>,
    storages: Vec<usize>,
    /// Per storage, the recomputation that last stamped it and its last op
    /// there ([`Sim::recompute`]): stamps, so nothing is cleared between segments.
    last_use: Vec<(u32, usize)>,
    /// The current recomputation's stamp.
    stamp: u32,
}

impl<'a> Sim<'a> {
    /// A walk of `g` under `cfg`; with `shared`, model-state sizes are
    /// recorded by name, so that the tape serves every data-parallel strategy.
    pub(super) fn new(
        g: &'a Graph,
        plan: &'a Plan,
        shards: &'a Shards,
        cfg: &'a TrainConfig,
        overheads: &Overheads,
        shared: bool,
    ) -> Sim<'a> {
        // Transformers record about 23 events per op in a step of two
        // micro-batches, and the tape holds two steps (growing the tape
        // instead costs the 70B estimate a third more time, measured); a
        // size per tensor and per parameter's states and gradients, a few per op.
        let size_count =
            g.tensors.len() + g.params.len().saturating_mul(8) + g.ops.len().saturating_mul(2);
        let mut mem = Tape::with_capacity(g.ops.len().saturating_mul(48), size_count);
        let bytes = g
            .tensors
            .iter()
            .map(|t| mem.size(Size::Rounded(t.numel, t.dtype.size())))
            .collect();
        let n = g.tensors.len();
        let sizes = shards.sizes(g);
        for i in 0..g.params.len() {
            mem.alloc(
                Cat::Parameters,
                recorded(shared, &sizes, Sharded::Weight(id32(i))),
            );
        }
        mem.alloc(
            Cat::Gradients,
            recorded(shared, &sizes, Sharded::DdpBuckets),
        );
        for b in &g.buffers {
            mem.alloc(
                Cat::Other,
                Size::Fixed(states::allocation(b.numel, b.dtype).0),
            );
        }
        mem.baseline();
        Sim {
            g,
            plan,
            cfg,
            bytes,
            mem,
            step: 0,
            micro: 0,
            alive: vec![false; n],
            storage_handle: vec![None; n],
            holds: vec![0; n],
            grad_of: vec![None; n],
            grads: Vec::new(),
            param_grad: vec![None; g.params.len()],
            first_use: first_uses(g),
            buffered: vec![false; g.params.len()],
            states: None,
            workspace: overheads.cublas_handles_for(cfg.mode),
            gathered: vec![None; g.blocks as usize],
            root_gathered: None,
            in_flight: None,
            shards,
            sizes,
            shared,
            scratch: Scratch::default(),
            step_temps: id32(step_temp_slots(g, shards, cfg, shared)),
            landmarks: Vec::new(),
        }
    }

    /// How `s` is recorded (see [`recorded`]).
    fn sharded(&self, s: Sharded) -> Size {
        recorded(self.shared, &self.sizes, s)
    }

    /// Records `steps` optimizer steps. Micro-batches after the second
    /// repeat its allocations exactly (the gradients exist from the first on;
    /// nothing else carries over), so the tape holds two per step, the second
    /// replayed only with gradient accumulation.
    // Out of line, as is `Prepared::run_with_kv_cache`: each is the hot loop
    // of a function called once per estimate. Inlined there, it made that
    // function hot, and a browser's optimizing compiler took 100-280 ms of
    // CPU for its 13-20 KB of WebAssembly on the page's first edit, beside
    // the main thread (ARCHITECTURE.md, the first-edit module).
    #[inline(never)]
    pub(super) fn run(mut self, steps: u32) -> Tape {
        if self.cfg.mode == crate::config::Mode::Inference {
            // One forward under `torch.inference_mode()`; the KV cache is preallocated.
            self.step = 1;
            self.micro = 1;
            self.mem.alloc(Cat::KvCache, Size::KvCache);
            self.forward();
            return self.mem;
        }
        // The first step's events, and where its landmarks would be.
        let mut first = (0, 0);
        for step in 1..=steps {
            self.step = step;
            if step == steps && steps > 1 {
                self.mem.mark_last_step();
            }
            // With gradients kept as zeros a later step differs from the
            // first (its backward adds into them): it is walked, not repeated.
            if step > 1 && self.cfg.zero_grad == ZeroGrad::SetToNone {
                // Later steps allocate as the first, without what it created for good.
                let landmarks = if step == steps {
                    std::mem::take(&mut self.landmarks)
                } else {
                    Vec::new()
                };
                self.mem.repeat(first.0, first.1, step, &landmarks);
                continue;
            }
            let start = self.mem.position();
            for micro in 1..=2 {
                self.micro = micro;
                if micro == 1 {
                    // 1F1B: the first stage runs the warm-up forwards of the other
                    // micro-batches before the first backward and keeps their activations.
                    self.in_flight = self.mem.alloc(Cat::Activations, Size::InFlight);
                } else {
                    self.mem.begin_accumulating();
                }
                self.forward();
                // The last step's activations, right after forward (only
                // frees since its last moment); in the second micro-batch
                // beside the gradients of the first.
                self.landmark(step == steps);
                self.backward();
                self.end_micro_batch();
            }
            self.mem.end_accumulating();
            let warm = self.in_flight.take();
            self.mem.free(warm);
            self.optimizer_step(step == steps);
            first = (start, self.mem.position());
        }
        self.mem
    }

    /// A landmark of the last step here: taken now in the last step, else
    /// noted for [`Tape::repeat`] to take.
    fn landmark(&mut self, last: bool) {
        if last {
            self.mem.landmark();
        } else {
            self.landmarks.push(self.mem.position());
        }
    }

    fn observe(&mut self, phase: Phase, op: usize) {
        self.mem.observe(self.step, self.micro, phase, op);
    }

    /// An op's transient bytes: its own workspace, cuDNN's for convolutions,
    /// and for quantized weights the dequantized copy (NF4: bitsandbytes
    /// dequantizes to the compute dtype for each matmul) or the int32
    /// accumulator of LLM.int8's matmul.
    fn op_temp(&self, op: &Op, n: Numel) -> Size {
        let none = (Numel::fixed(0), 0);
        let extra = match (
            op.kind,
            op.params
                .first()
                .and_then(|p| self.g.params.get(p.0 as usize)),
        ) {
            (OpKind::Linear, Some(w)) if w.quantizable => match self.shards.format {
                crate::config::WeightFormat::Int4 => (Numel::fixed(w.numel()), DType::Bf16.size()),
                crate::config::WeightFormat::Int8 => op
                    .outputs
                    .first()
                    .and_then(|t| self.g.tensor(*t))
                    .map_or(none, |t| (t.numel, DType::F32.size())),
                crate::config::WeightFormat::Native => none,
            },
            _ => none,
        };
        Size::OpTemp {
            temp: n,
            conv: op.kind == OpKind::Conv2d,
            extra,
        }
    }

    fn temp_bytes(&self, n: Numel) -> Size {
        Size::Rounded(n, 1)
    }

    fn storage(&self, t: crate::graph::TensorId) -> usize {
        entry(&self.plan.storage, t.0 as usize)
    }

    fn is_input(&self, s: usize) -> bool {
        entry(&self.plan.is_input, s)
    }

    fn category(&self, s: usize) -> Cat {
        if self.is_input(s) {
            Cat::Other
        } else {
            Cat::Activations
        }
    }

    fn alloc_storage(&mut self, s: usize) {
        if entry(&self.alive, s) {
            return;
        }
        let h = self
            .mem
            .alloc_sized(self.category(s), self.bytes.get(s).copied().flatten());
        if let (Some(a), Some(slot)) = (self.alive.get_mut(s), self.storage_handle.get_mut(s)) {
            *a = true;
            *slot = h;
        }
    }

    fn free_storage(&mut self, s: usize) {
        if !entry(&self.alive, s) {
            return;
        }
        let h = self.storage_handle.get_mut(s).and_then(Option::take);
        self.mem.free(h);
        if let Some(a) = self.alive.get_mut(s) {
            *a = false;
        }
    }

    /// Runs op `i` forward: allocate outputs, note the moment, free what is done.
    /// `last_use` says whether op `i` is a storage's last forward user.
    fn run_forward_op(&mut self, i: usize, phase: Phase, last_use: &dyn Fn(&Self, usize) -> bool) {
        let g = self.g;
        let Some(op) = g.ops.get(i) else { return };
        if !op.forward_steps.is_empty() {
            self.run_forward_steps(op, i, phase);
            self.free_after_use(i, last_use);
            return;
        }
        for t in &op.outputs {
            self.alloc_storage(self.storage(*t));
        }
        let tmp = self
            .mem
            .alloc(Cat::Temporary, self.op_temp(op, op.forward_temp));
        let gathered = self.op_gather(op);
        self.observe(phase, i);
        self.mem.free(gathered);
        self.mem.free(tmp);
        self.free_after_use(i, last_use);
    }

    /// Op `i`'s forward as its [`TempStep`]s: each transient allocated and
    /// freed where PyTorch does, the outputs at their place among them, a
    /// moment noted after each allocation (the op's highest is one of them).
    fn run_forward_steps(&mut self, op: &Op, i: usize, phase: Phase) {
        let gathered = self.op_gather(op);
        let mut held = Vec::new();
        for step in &op.forward_steps {
            match *step {
                TempStep::Alloc(n) => {
                    held.push(self.mem.alloc(Cat::Temporary, self.op_temp(op, n)));
                    self.observe(phase, i);
                }
                TempStep::Free(k) => {
                    let h = held.get_mut(usize::from(k)).and_then(Option::take);
                    self.mem.free(h);
                }
                TempStep::Outputs => {
                    for t in &op.outputs {
                        self.alloc_storage(self.storage(*t));
                    }
                    self.observe(phase, i);
                }
            }
        }
        for h in held {
            self.mem.free(h);
        }
        self.mem.free(gathered);
    }

    /// Frees op `i`'s inputs and outputs that nothing holds and that it used last.
    fn free_after_use(&mut self, i: usize, last_use: &dyn Fn(&Self, usize) -> bool) {
        let g = self.g;
        let Some(op) = g.ops.get(i) else { return };
        for t in op.inputs.iter().chain(op.outputs.iter()) {
            let s = self.storage(*t);
            let held = entry(&self.holds, s) > 0 || self.is_input(s);
            if !held && last_use(self, s) {
                self.free_storage(s);
            }
        }
    }

    /// The first matmul on a thread creates that thread's cuBLAS workspace,
    /// kept for the rest of the run (`getCurrentCUDABlasHandle`).
    fn cublas_workspace(&mut self) {
        if self.workspace > 0 {
            self.mem.alloc_once(Cat::Other, Size::CublasWorkspace);
            self.workspace -= 1;
        }
    }

    fn forward(&mut self) {
        if self.step == 1 && self.micro == 1 {
            self.cublas_workspace();
        }
        self.holds = self.plan.holders.iter().map(Vec::len).collect();
        // FSDP's root unit (parameters outside the wrapped blocks) stays
        // gathered from forward until backward ends; ZeRO-3 gathers each
        // module's parameters only while it runs (see `op_gather`).
        self.root_gathered = self.mem.alloc(
            Cat::Parameters,
            self.sharded(Sharded::RootGather(self.shards.root_gather)),
        );
        let mut current = None;
        for i in 0..self.g.ops.len() {
            let block = self.g.ops.get(i).and_then(|o| o.block);
            if block != current {
                // Leaving a block reshards it (reshard_after_forward); entering one gathers it.
                self.release_gather(current);
                self.gather(block);
                current = block;
            }
            self.run_forward_op(i, Phase::Forward, &|sim: &Self, s| {
                sim.plan.last_forward_use.get(s).copied() == Some(i) && !sim.cached(s)
            });
        }
        self.release_gather(current);
        if !self.cache_through_backward() {
            self.exit_autocast(0..self.g.ops.len());
        }
    }

    /// Whether the loop's autocast region also encloses backward, so that its
    /// cache keeps every weight copy until the micro-batch ends
    /// ([`crate::config::AutocastRegion::Backward`]). A checkpointed block's
    /// recomputation then finds its copies still held (PyTorch's autograd
    /// thread would cast again into a cache of its own: not modelled).
    fn cache_through_backward(&self) -> bool {
        self.cfg.autocast_region == crate::config::AutocastRegion::Backward
    }

    /// Whether autocast's cache holds storage `s` until its region exits.
    fn cached(&self, s: usize) -> bool {
        entry(&self.plan.autocast_cached, s)
    }

    /// The autocast region around ops `ops` exits and clears its cache:
    /// the cached weight copies those ops made that nothing saved are freed.
    fn exit_autocast(&mut self, ops: std::ops::Range<usize>) {
        let g = self.g;
        for op in g.ops.get(ops).unwrap_or(&[]) {
            for t in &op.outputs {
                let s = self.storage(*t);
                if self.cached(s) && entry(&self.holds, s) == 0 {
                    self.free_storage(s);
                }
            }
        }
    }

    /// ZeRO-3 gathers the parameters of a module outside the blocks just for
    /// its own forward or backward.
    fn op_gather(&mut self, op: &Op) -> Option<Handle> {
        if op.block.is_some() || op.params.is_empty() {
            return None;
        }
        let bytes: u64 = op
            .params
            .iter()
            .filter_map(|p| self.g.params.get(p.0 as usize))
            .map(|p| self.shards.full_weight(p))
            .sum();
        self.mem
            .alloc(Cat::Parameters, self.sharded(Sharded::OpGather(bytes)))
    }

    /// All-gathers a block's parameters (ZeRO-3 / FSDP full shard).
    fn gather(&mut self, block: Option<u32>) {
        let Some(b) = block.map(|b| b as usize) else {
            return;
        };
        if self.gathered.get(b).is_none_or(Option::is_some) {
            return;
        }
        let bytes = entry(&self.shards.block_gather, b);
        let h = self
            .mem
            .alloc(Cat::Parameters, self.sharded(Sharded::BlockGather(bytes)));
        if let Some(slot) = self.gathered.get_mut(b) {
            *slot = h;
        }
    }

    fn release_gather(&mut self, block: Option<u32>) {
        let h = block
            .and_then(|b| self.gathered.get_mut(b as usize))
            .and_then(Option::take);
        self.mem.free(h);
    }

    /// Re-runs a checkpointed segment's forward just before its backward.
    fn recompute(&mut self, seg: Segment) {
        let g = self.g;
        self.scratch.stamp = self.scratch.stamp.wrapping_add(1);
        let stamp = self.scratch.stamp;
        if self.scratch.last_use.len() < g.tensors.len() {
            self.scratch.last_use.resize(g.tensors.len(), (0, 0));
        }
        for i in seg.start..=seg.end {
            let Some(op) = g.ops.get(i) else { continue };
            for t in op.inputs.iter().chain(op.outputs.iter()) {
                let s = self.storage(*t);
                if let Some(last) = self.scratch.last_use.get_mut(s) {
                    *last = (stamp, i);
                }
            }
            for s in unique_storages(&op.saved, &self.plan.storage) {
                if let Some(h) = self.holds.get_mut(s) {
                    *h += 1;
                }
            }
        }
        for i in seg.start..=seg.end {
            let last_use =
                |sim: &Self, s| sim.scratch.last_use.get(s) == Some(&(stamp, i)) && !sim.cached(s);
            // An op whose outputs were kept from forward is not run again: it
            // hands them over, and its hold from forward ends.
            if entry(&self.plan.kept, i) {
                let outputs = g.ops.get(i).map_or(&[][..], |op| &op.outputs[..]);
                for s in unique_storages(outputs, &self.plan.storage) {
                    let marked = self.plan.holders.get(s).is_some_and(|h| h.contains(&i));
                    if let Some(h) = self.holds.get_mut(s).filter(|_| marked) {
                        *h = h.saturating_sub(1);
                    }
                }
                self.free_after_use(i, &last_use);
            } else {
                self.run_forward_op(i, Phase::Backward, &last_use);
            }
        }
        // The recomputation runs under the autocast state of the forward
        // (`torch.utils.checkpoint`), a region of its own.
        if !self.cache_through_backward() {
            self.exit_autocast(seg.start..seg.end + 1);
        }
    }

    fn backward(&mut self) {
        if self.step == 1 && self.micro == 1 {
            self.cublas_workspace();
        }
        let buckets = self
            .mem
            .alloc(Cat::Temporary, self.sharded(Sharded::ZeroBuckets));
        self.backward_ops();
        self.mem.free(buckets);
    }

    fn backward_ops(&mut self) {
        self.grad_of.iter_mut().for_each(|g| *g = None);
        self.grads.clear();
        // The loss's gradient: a scalar of ones.
        if let Some(t) = self
            .g
            .ops
            .iter()
            .rev()
            .find(|o| o.kind == OpKind::Loss)
            .and_then(|o| o.outputs.first())
        {
            let h = self
                .mem
                .alloc(Cat::Temporary, Size::Fixed(ALLOCATION_QUANTUM));
            self.grads.push(GradBuffer {
                handle: h,
                users: 1,
            });
            if let Some(slot) = self.grad_of.get_mut(t.0 as usize) {
                *slot = Some(self.grads.len() - 1);
            }
        }
        let mut current = None;
        for i in (0..self.g.ops.len()).rev() {
            let block = self.g.ops.get(i).and_then(|o| o.block);
            if block != current {
                // Backward gathers the block again and prefetches the next one
                // (FSDP's BACKWARD_PRE default, ZeRO-3's prefetch bucket).
                self.release_gather(current);
                self.gather(block);
                self.gather(block.and_then(|b| b.checked_sub(1)));
                current = block;
            }
            let segment = self
                .plan
                .op_segment
                .get(i)
                .copied()
                .flatten()
                .and_then(|k| self.plan.segments.get(k).copied());
            if let Some(seg) = segment.filter(|s| s.end == i) {
                self.recompute(seg);
            }
            if entry(&self.plan.needs_backward, i) {
                self.backward_op(i);
            }
        }
        self.release_gather(current);
        let root = self.root_gathered.take();
        self.mem.free(root);
    }

    fn backward_op(&mut self, i: usize) {
        let g = self.g;
        let Some(op) = g.ops.get(i) else { return };
        let (mut transient, mut fresh) = (
            std::mem::take(&mut self.scratch.transient),
            std::mem::take(&mut self.scratch.fresh),
        );
        self.input_grads(op, &mut transient);
        // Without autocast the op's backward makes the parameter gradient itself
        // (AccumulateGrad then keeps it as `.grad`); with autocast a later
        // ToCopyBackward node converts the half-precision gradient.
        if !op.param_grad_via_cast {
            self.param_grads(i, op, &mut transient, &mut fresh);
        }
        transient.push(
            self.mem
                .alloc(Cat::Temporary, self.op_temp(op, op.backward_temp)),
        );
        transient.push(self.op_gather(op));
        self.observe(Phase::Backward, i);
        transient.drain(..).for_each(|h| self.mem.free(h));
        self.settle(&mut fresh);
        self.consume_output_grads(op);
        self.release(i);
        if op.param_grad_via_cast
            && op
                .params
                .iter()
                .any(|p| g.params.get(p.0 as usize).is_some_and(|p| p.trainable))
        {
            // ToCopyBackward: the half gradient and the new fp32 one coexist.
            transient.push(
                self.mem
                    .alloc(Cat::Temporary, self.temp_bytes(op.backward_temp)),
            );
            self.param_grads(i, op, &mut transient, &mut fresh);
            self.observe(Phase::Backward, i);
            transient.drain(..).for_each(|h| self.mem.free(h));
            self.settle(&mut fresh);
        }
        self.scratch.transient = transient;
        self.scratch.fresh = fresh;
    }

    /// Gradients of the op's inputs: a new buffer, a view of the output's
    /// gradient (passthrough ops of the same dtype), or a transient added in
    /// place into an existing buffer.
    fn input_grads(&mut self, op: &Op, transient: &mut Vec<Option<Handle>>) {
        let g = self.g;
        let out_grad = op
            .outputs
            .first()
            .and_then(|t| self.grad_of.get(t.0 as usize).copied().flatten());
        let out = op.outputs.first().and_then(|t| g.tensor(*t));
        let out_dtype = out.map(|t| t.dtype);
        for x in &op.inputs {
            let Some(info) = g.tensor(*x) else { continue };
            if !info.requires_grad {
                continue;
            }
            let xi = x.0 as usize;
            let size = self.bytes.get(xi).copied().flatten();
            // A broadcast operand's gradient is reduced to its shape
            // (`sum_to_size`): a new tensor, not a view of the output's.
            let view = op.grad_passthrough
                && Some(info.dtype) == out_dtype
                && out.is_some_and(|o| o.numel == info.numel);
            match (self.grad_of.get(xi).copied().flatten(), view, out_grad) {
                (Some(_), true, _) => {}
                (Some(_), false, _) => transient.push(self.mem.alloc_sized(Cat::Temporary, size)),
                (None, true, Some(buffer)) => {
                    if let Some(b) = self.grads.get_mut(buffer) {
                        b.users += 1;
                    }
                    if let Some(slot) = self.grad_of.get_mut(xi) {
                        *slot = Some(buffer);
                    }
                }
                (None, _, _) => {
                    let h = self.mem.alloc_sized(Cat::Temporary, size);
                    self.grads.push(GradBuffer {
                        handle: h,
                        users: 1,
                    });
                    if let Some(slot) = self.grad_of.get_mut(xi) {
                        *slot = Some(self.grads.len() - 1);
                    }
                }
            }
        }
    }

    /// Parameter gradients: the first in a step become `.grad` (temporaries
    /// until AccumulateGrad runs, as MemTracker labels them: `fresh`); later
    /// ones (accumulation, shared weights) are transients added in place.
    fn param_grads(
        &mut self,
        i: usize,
        op: &Op,
        transient: &mut Vec<Option<Handle>>,
        fresh: &mut Vec<Fresh>,
    ) {
        for p in &op.params {
            let pi = p.0 as usize;
            let Some(param) = self.g.params.get(pi) else {
                continue;
            };
            if !param.trainable {
                continue;
            }
            // More ops read this weight (earlier in forward): autograd sums
            // their contributions in an input buffer before `.grad` exists.
            let more_to_come = self.first_use.get(pi).is_some_and(|&f| f < i);
            if let Some(Some((whole, _))) = self.param_grad.get(pi) {
                if self.buffered.get(pi).copied().unwrap_or(false) && !more_to_come {
                    // The last contribution: the buffer becomes `.grad`.
                    fresh.push(Fresh::Grad(*whole));
                    if let Some(b) = self.buffered.get_mut(pi) {
                        *b = false;
                    }
                }
            }
            if self.param_grad.get(pi).is_some_and(Option::is_some) {
                // Accumulated in place into `.grad` (or its shard, after the reduce-scatter).
                transient.push(
                    self.mem
                        .alloc(Cat::Temporary, Size::Fixed(self.shards.full_grad(param))),
                );
                continue;
            }
            // Computed full-size: kept whole as `.grad`, or reduce-scattered
            // after this op, when the kept shard appears (one of the two is empty).
            let i = id32(pi);
            transient.push(
                self.mem
                    .alloc(Cat::Temporary, self.sharded(Sharded::ReducedGrad(i))),
            );
            let whole = self
                .mem
                .alloc(Cat::Temporary, self.sharded(Sharded::WholeGrad(i)));
            if let Some(slot) = self.param_grad.get_mut(pi) {
                *slot = Some((whole, None));
            }
            if more_to_come {
                if let Some(b) = self.buffered.get_mut(pi) {
                    *b = true;
                }
            } else {
                fresh.push(Fresh::Grad(whole));
            }
            fresh.push(Fresh::Shard(pi));
        }
    }

    /// After an op's moment: new gradients become `.grad`; sharded ones are allocated.
    fn settle(&mut self, fresh: &mut Vec<Fresh>) {
        for f in fresh.drain(..) {
            match f {
                Fresh::Grad(h) => self.mem.relabel(h, Cat::Gradients),
                Fresh::Shard(pi) => {
                    let h = self
                        .mem
                        .alloc(Cat::Gradients, self.sharded(Sharded::GradShard(id32(pi))));
                    if let Some(Some(handles)) = self.param_grad.get_mut(pi) {
                        handles.1 = h;
                    }
                }
            }
        }
    }

    fn consume_output_grads(&mut self, op: &Op) {
        for t in &op.outputs {
            let Some(buffer) = self.grad_of.get_mut(t.0 as usize).and_then(Option::take) else {
                continue;
            };
            if let Some(b) = self.grads.get_mut(buffer) {
                b.users = b.users.saturating_sub(1);
                if b.users == 0 {
                    let h = b.handle.take();
                    self.mem.free(h);
                }
            }
        }
    }

    /// After op `i`'s backward: drop its holds on saved tensors (and, at the
    /// start of a segment, the segment's holds on its inputs).
    fn release(&mut self, i: usize) {
        let Some(op) = self.g.ops.get(i) else { return };
        let mut list = std::mem::take(&mut self.scratch.storages);
        unique_storages_into(&op.saved, &self.plan.storage, &mut list);
        if let Some(k) = self.plan.op_segment.get(i).copied().flatten() {
            if self.plan.segments.get(k).is_some_and(|seg| seg.start == i) {
                list.extend(
                    self.plan
                        .segment_inputs
                        .get(k)
                        .into_iter()
                        .flatten()
                        .copied(),
                );
            }
        }
        let cache_held = self.cache_through_backward();
        for s in list.drain(..) {
            if let Some(h) = self.holds.get_mut(s) {
                *h = h.saturating_sub(1);
                if *h == 0 && !self.is_input(s) && !(cache_held && self.cached(s)) {
                    self.free_storage(s);
                }
            }
        }
        self.scratch.storages = list;
    }

    fn end_micro_batch(&mut self) {
        for s in 0..self.alive.len() {
            self.free_storage(s);
        }
        for b in &mut self.grads {
            let h = b.handle.take();
            self.mem.free(h);
        }
    }

    /// The optimizer's state (created lazily by the first step) and the
    /// step's temporaries, with sizes read at replay: one tape serves every
    /// optimizer (the planner's and the comparison's variants share it).
    fn optimizer_step(&mut self, last: bool) {
        if self.states.is_none() {
            self.mem.mark_optimizer();
            // Each parameter's state tensors, parameter by parameter.
            let count = id32(self.g.params.len() * states::STATE_TENSORS);
            let states = (0..count)
                .map(|i| self.mem.alloc_once(Cat::States, Size::State(i)))
                .collect();
            self.states = Some(states);
        }
        let temps: Vec<Option<Handle>> = (0..self.step_temps)
            .map(|k| self.mem.alloc(Cat::Temporary, Size::StepTemp(k)))
            .collect();
        self.micro = 0;
        self.observe(Phase::Optimizer, OPTIMIZER_OP);
        // The model states and the step's temporaries, at this moment.
        self.landmark(last);
        temps.into_iter().for_each(|h| self.mem.free(h));
        if self.cfg.zero_grad == ZeroGrad::Zeros {
            // zero_grad(set_to_none=False): `.grad` stays, zeroed in place.
            return;
        }
        // zero_grad(set_to_none=True)
        for slot in &mut self.param_grad {
            if let Some((whole, shard)) = slot.take() {
                self.mem.free(whole);
                self.mem.free(shard);
            }
        }
    }
}

/// How a model-state size is recorded: by name on a `shared` tape, else as
/// the recording strategy's bytes (`sizes`).
fn recorded(shared: bool, sizes: &ShardSizes, s: Sharded) -> Size {
    if shared {
        Size::Sharded(s)
    } else {
        Size::Fixed(sizes.bytes(s))
    }
}

/// Slots for the optimizer step's temporaries: the most any optimizer makes
/// under the recording strategy, or, on a shared tape, under any strategy
/// (ZeRO-3 adds an fp32 copy of each trainable gradient partition).
fn step_temp_slots(g: &Graph, shards: &Shards, cfg: &TrainConfig, shared: bool) -> usize {
    let optimizers = crate::config::Optimizer::ALL.iter();
    if shared {
        let trainable = g.params.iter().filter(|p| p.trainable).count();
        let most = optimizers
            .flat_map(|&o| {
                OptimizerImpl::ALL.iter().map(move |&i| {
                    states::optimizer_step_temps(&g.params, shards.pdtype, o, i).len()
                })
            })
            .max()
            .unwrap_or(0);
        return most + trainable;
    }
    optimizers
        .flat_map(|&optimizer| {
            OptimizerImpl::ALL.iter().map(move |&optimizer_impl| {
                let cfg = TrainConfig {
                    optimizer,
                    optimizer_impl,
                    ..*cfg
                };
                shards.step_temps(g, &cfg).len()
            })
        })
        .max()
        .unwrap_or(0)
}
