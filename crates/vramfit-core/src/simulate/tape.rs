//! The simulation's allocations and frees as a batch-independent tape.
//!
//! What a training step allocates and frees, and in which order, does not
//! depend on the micro-batch size; only the sizes do (each is affine in the
//! batch before rounding). So [`super::step`] walks the graph once and
//! records a [`Tape`] whose sizes are symbolic ([`Size`]); [`replay`] then
//! evaluates it at any batch, with or without the caching-allocator model.
//! The largest-batch search, the batch curve and the planner replay one tape
//! many times instead of walking the graph again.

use super::allocator::{Block, CachingAllocator, Settings};
use super::memory::{Cat, Memory};
use super::shard::{ShardSizes, Sharded};
use super::{Breakdown, Phase, Point};
use super::{entry, id32};
use crate::graph::Numel;
use crate::states::ALLOCATION_QUANTUM;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

/// A byte count, recorded once and evaluated per micro-batch size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Size {
    /// Exactly this many bytes.
    Fixed(u64),
    /// `numel` elements of the given byte width, rounded up to the
    /// allocation quantum (zero elements stay zero bytes).
    Rounded(Numel, u64),
    /// The preallocated KV cache, unrounded ([`Eval::kv_cache`] elements at the batch;
    /// read at replay, so that one tape serves every context length).
    KvCache,
    /// An op's transient buffer: its workspace bytes (rounded), cuDNN's
    /// workspace when it is a convolution, and a rounded extra buffer
    /// (a dequantized weight or an int32 accumulator).
    OpTemp {
        temp: Numel,
        conv: bool,
        extra: (Numel, u64),
    },
    /// One cuBLAS handle's workspace.
    CublasWorkspace,
    /// The activations a pipeline stage keeps for the other micro-batches in flight.
    InFlight,
    /// The optimizer's `i`-th state tensor: parameter `i / STATE_TENSORS`'s
    /// tensor `i % STATE_TENSORS` (the optimizer is chosen at replay).
    State(u32),
    /// The optimizer step's `k`-th temporary (zero when the optimizer has fewer).
    StepTemp(u32),
    /// A model-state size that depends on the data-parallel strategy (read at replay).
    Sharded(Sharded),
}

/// `numel × width` rounded up to the allocation quantum.
fn rounded(numel: Numel, width: u64, batch: u64) -> u64 {
    match numel.at(batch).saturating_mul(width) {
        0 => 0,
        b => b
            .div_ceil(ALLOCATION_QUANTUM)
            .saturating_mul(ALLOCATION_QUANTUM),
    }
}

impl Size {
    /// Whether this size is zero at every batch (nothing is ever allocated for it).
    pub fn is_zero(self) -> bool {
        let none = |n: Numel| n.fixed == 0 && n.per_sample == 0;
        match self {
            Size::Fixed(b) => b == 0,
            Size::Rounded(n, w) => none(n) || w == 0,
            Size::OpTemp { temp, conv, extra } => {
                none(temp) && !conv && (none(extra.0) || extra.1 == 0)
            }
            Size::CublasWorkspace
            | Size::InFlight
            | Size::KvCache
            | Size::State(_)
            | Size::StepTemp(_)
            | Size::Sharded(_) => false,
        }
    }

    fn at(self, e: &Eval<'_>) -> u64 {
        match self {
            Size::Fixed(b) => b,
            Size::Rounded(n, w) => rounded(n, w, e.batch),
            Size::KvCache => e.kv_cache.at(e.batch),
            Size::OpTemp { temp, conv, extra } => rounded(temp, 1, e.batch)
                .saturating_add(if conv { e.conv_workspace } else { 0 })
                .saturating_add(rounded(extra.0, extra.1, e.batch)),
            Size::CublasWorkspace => e.cublas_workspace,
            Size::InFlight => e.in_flight,
            Size::State(i) => entry(e.states, i as usize),
            // The tape holds as many step-temporary slots as the optimizer
            // with the most; the replayed one leaves the rest empty.
            Size::StepTemp(k) => e.step_temps.get(k as usize).copied().unwrap_or(0),
            Size::Sharded(s) => e.shards.bytes(s),
        }
    }
}

/// What a replay needs besides the tape.
#[derive(Clone, Copy, Debug)]
pub struct Eval<'a> {
    /// The micro-batch size.
    pub batch: u64,
    /// Whether the step has more than one micro-batch (gradient accumulation).
    pub accumulates: bool,
    /// Bytes of one cuBLAS workspace.
    pub cublas_workspace: u64,
    /// Bytes of cuDNN's workspace per convolution call.
    pub conv_workspace: u64,
    /// Bytes for [`Size::InFlight`] at this batch.
    pub in_flight: u64,
    /// Bytes of each optimizer state tensor ([`Size::State`]).
    pub states: &'a [u64],
    /// Bytes of the optimizer step's temporaries ([`Size::StepTemp`]).
    pub step_temps: &'a [u64],
    /// Bytes of the KV cache ([`Size::KvCache`]).
    pub kv_cache: Numel,
    /// The strategy's model-state sizes ([`Size::Sharded`]).
    pub shards: &'a ShardSizes,
    /// The caching allocator's configuration (its limit is set per replay).
    pub allocator: Settings,
}

/// A hasher for the tape's size index: folds each word in with a multiply
/// (the sizes are a handful of integers; recording hashes one per allocation).
#[derive(Default)]
struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        // The multiplier of Fibonacci hashing (2^64 / golden ratio).
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }

    fn write_isize(&mut self, i: isize) {
        self.write_u64(i as u64);
    }
}

/// An empty place of the size index.
const EMPTY: u32 = u32::MAX;

fn hash_of(size: &Size) -> u64 {
    BuildHasherDefault::<WordHasher>::default().hash_one(size)
}

/// A slot for one live allocation; slots are reused once freed.
pub type Slot = u32;

/// A size registered on a tape ([`Tape::size`]): its index in the tape's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeId(u32);

/// One recorded event (small: sizes live in the tape's table, evaluated once per replay).
#[derive(Clone, Copy, Debug)]
enum Event {
    Alloc {
        slot: Slot,
        cat: Cat,
        size: SizeId,
        /// Freed again before any other allocation or free (a workspace
        /// around one op): the allocator model can take and return it in one step.
        transient: bool,
    },
    Free {
        slot: Slot,
    },
    Relabel {
        slot: Slot,
        to: Cat,
    },
    /// A moment of the timeline (right after an op's allocations).
    Observe {
        step: u32,
        micro: u32,
        phase: Phase,
        op: u32,
    },
    /// The state before the first op: the peak starts here, the timeline does not.
    Baseline,
    /// The next `len` events are the second micro-batch of a step, which
    /// runs only with gradient accumulation.
    Accumulating {
        len: u32,
    },
}

/// Records events, handing out slots.
#[derive(Debug, Default)]
pub struct Tape {
    events: Vec<Event>,
    /// Each distinct size once: a model's layers repeat a few hundred shapes
    /// over thousands of allocations, so a replay evaluates a short table.
    sizes: Vec<Size>,
    /// Where each size is in `sizes`: an open-addressing table of ids by the size's hash
    /// ([`EMPTY`] where none), at most half full: small (4 bytes an entry)
    /// beside a map keyed by the sizes themselves.
    size_index: Vec<u32>,
    /// For each size, an event index no later than its first use.
    first_use: Vec<usize>,
    /// Where the optimizer's first allocation is ([`Tape::mark_optimizer`]).
    optimizer_at: Option<usize>,
    /// Events that a repeated step leaves out ([`Tape::alloc_once`]), in order.
    once: Vec<usize>,
    /// Each slot's role and size while it is live (`None`: free).
    live: Vec<Option<(Cat, SizeId)>>,
    free_slots: Vec<Slot>,
    open: Option<usize>,
    /// Where the last training step starts, and what is live then.
    last_step: Option<LastStep>,
    /// Moments recorded ([`Event::Observe`]): a recording replay's timeline holds at most this many.
    moments: usize,
    /// The allocations live at a few points, each at or just after a
    /// moment with only frees since ([`Tape::landmark`]), and whether it
    /// lies within the events that run only with gradient accumulation.
    landmarks: Vec<(Vec<SizeId>, bool)>,
}

/// The start of the last training step: its first event and the allocations live then.
#[derive(Debug)]
struct LastStep {
    start: usize,
    live: Vec<(Slot, Cat, SizeId)>,
}

/// A live recorded allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handle(Slot);

impl Tape {
    /// An empty tape with room for `events` events and `sizes` sizes.
    pub fn with_capacity(events: usize, sizes: usize) -> Tape {
        Tape {
            events: Vec::with_capacity(events),
            sizes: Vec::with_capacity(sizes),
            size_index: vec![EMPTY; sizes.max(32).next_power_of_two()],
            first_use: Vec::with_capacity(sizes),
            ..Tape::default()
        }
    }

    /// Registers a size for [`Tape::alloc_sized`] (the same size twice gets
    /// the same id); `None` when it is zero at every batch.
    pub fn size(&mut self, size: Size) -> Option<SizeId> {
        if size.is_zero() {
            return None;
        }
        if self.sizes.len() * 2 >= self.size_index.len() {
            self.grow_size_index();
        }
        let mask = self.size_index.len() - 1;
        let mut at = hash_of(&size) as usize & mask;
        loop {
            match self.size_index.get(at).copied() {
                Some(id) if id != EMPTY && self.sizes.get(id as usize) == Some(&size) => {
                    return Some(SizeId(id));
                }
                Some(id) if id != EMPTY => at = (at + 1) & mask,
                _ => break,
            }
        }
        let id = u32::try_from(self.sizes.len()).unwrap_or(EMPTY);
        if let Some(slot) = self.size_index.get_mut(at) {
            *slot = id;
        }
        self.sizes.push(size);
        self.first_use.push(self.events.len());
        Some(SizeId(id))
    }

    /// Doubles the size index and files every size again.
    fn grow_size_index(&mut self) {
        let len = (self.size_index.len() * 2).max(32);
        let mut index = vec![EMPTY; len];
        for (id, size) in self.sizes.iter().enumerate() {
            let mut at = hash_of(size) as usize & (len - 1);
            while index.get(at).is_some_and(|slot| *slot != EMPTY) {
                at = (at + 1) & (len - 1);
            }
            if let Some(slot) = index.get_mut(at) {
                *slot = u32::try_from(id).unwrap_or(EMPTY);
            }
        }
        self.size_index = index;
    }

    /// Records an allocation; `None` when the size is zero at every batch.
    pub fn alloc(&mut self, cat: Cat, size: Size) -> Option<Handle> {
        let id = self.size(size);
        self.alloc_sized(cat, id)
    }

    /// Records an allocation that happens only in the first step (a cuBLAS
    /// workspace, the optimizer state): [`Tape::repeat`] leaves it out.
    pub fn alloc_once(&mut self, cat: Cat, size: Size) -> Option<Handle> {
        let at = self.events.len();
        let h = self.alloc(cat, size);
        if h.is_some() {
            self.once.push(at);
        }
        h
    }

    /// Where the next event goes.
    pub fn position(&self) -> usize {
        self.events.len()
    }

    /// Records events `from..to` again as step `step`, without those that
    /// happen only once, with landmarks where the events at `landmarks`
    /// would come: a training step allocates and frees exactly as the one
    /// before it, apart from what the first creates for good, so the walk
    /// of one step records them all.
    pub fn repeat(&mut self, from: usize, to: usize, step: u32, landmarks: &[usize]) {
        self.events.reserve(to.saturating_sub(from));
        // Each recorded slot's handle in the repetition.
        let mut handle: Vec<Option<Handle>> = vec![None; self.live.len()];
        let mut ends: Vec<usize> = Vec::new();
        let skipped = std::mem::take(&mut self.once);
        let (mut once, mut landmarks) = (
            skipped.iter().copied().filter(|&i| i >= from).peekable(),
            landmarks.iter().peekable(),
        );
        for i in from..to {
            while landmarks.next_if(|&&at| at <= i).is_some() {
                self.landmark();
            }
            while ends.last() == Some(&i) {
                ends.pop();
                self.end_accumulating();
            }
            if once.next_if_eq(&i).is_some() {
                continue;
            }
            let Some(&event) = self.events.get(i) else {
                break;
            };
            match event {
                Event::Alloc {
                    slot, cat, size, ..
                } => {
                    let h = self.alloc_sized(cat, Some(size));
                    if let Some(at) = handle.get_mut(slot as usize) {
                        *at = h;
                    }
                }
                Event::Free { slot } => {
                    let h = handle.get_mut(slot as usize).and_then(Option::take);
                    self.free(h);
                }
                Event::Relabel { slot, to } => {
                    self.relabel(handle.get(slot as usize).copied().flatten(), to)
                }
                Event::Observe {
                    micro, phase, op, ..
                } => {
                    self.events.push(Event::Observe {
                        step,
                        micro,
                        phase,
                        op,
                    });
                    self.moments += 1;
                }
                Event::Baseline => self.baseline(),
                Event::Accumulating { len } => {
                    self.begin_accumulating();
                    ends.push(i + 1 + len as usize);
                }
            }
        }
        while ends.pop().is_some() {
            self.end_accumulating();
        }
        for _ in landmarks {
            self.landmark();
        }
        self.once = skipped;
    }

    /// Records an allocation of a registered size (`None`: nothing to allocate).
    pub fn alloc_sized(&mut self, cat: Cat, size: Option<SizeId>) -> Option<Handle> {
        let size = size?;
        let slot = match self.free_slots.pop() {
            Some(s) => s,
            None => {
                self.live.push(None);
                Slot::try_from(self.live.len() - 1).unwrap_or(Slot::MAX)
            }
        };
        if let Some(l) = self.live.get_mut(slot as usize) {
            *l = Some((cat, size));
        }
        self.events.push(Event::Alloc {
            slot,
            cat,
            size,
            transient: false,
        });
        Some(Handle(slot))
    }

    /// Marks the start of the last training step. Its every moment holds at
    /// least what the same moment of the earlier step held (the optimizer
    /// state and the cuBLAS workspaces, created during the first step, stay;
    /// everything else repeats), so the peak of allocated memory can be read
    /// from the last step alone, starting from what is live here.
    pub fn mark_last_step(&mut self) {
        let live = self
            .live
            .iter()
            .enumerate()
            .filter_map(|(slot, held)| {
                held.map(|(cat, size)| (Slot::try_from(slot).unwrap_or(Slot::MAX), cat, size))
            })
            .collect();
        self.last_step = Some(LastStep {
            start: self.events.len(),
            live,
        });
    }

    /// Marks where the optimizer's first allocation comes: every event
    /// before it is the same whatever the optimizer ([`Workspace`]).
    pub fn mark_optimizer(&mut self) {
        self.optimizer_at.get_or_insert(self.events.len());
    }

    /// Keeps what is live now as a landmark ([`landmark_allocated`]): the
    /// caller records it at most frees after the last moment.
    pub fn landmark(&mut self) {
        let live = self
            .live
            .iter()
            .filter_map(|held| held.map(|(_, size)| size))
            .collect();
        self.landmarks.push((live, self.open.is_some()));
    }

    /// Records a free (nothing for `None` or an already freed handle).
    pub fn free(&mut self, h: Option<Handle>) {
        let Some(Handle(slot)) = h else { return };
        match self.live.get_mut(slot as usize) {
            Some(l) if l.is_some() => *l = None,
            _ => return,
        }
        self.free_slots.push(slot);
        // Freed right after its allocation (only moments or relabels between)?
        let last = self
            .events
            .iter_mut()
            .rev()
            .find(|e| !matches!(e, Event::Observe { .. } | Event::Relabel { .. }));
        if let Some(Event::Alloc {
            slot: s, transient, ..
        }) = last
        {
            if *s == slot {
                *transient = true;
            }
        }
        self.events.push(Event::Free { slot });
    }

    /// Records a change of role of a live allocation.
    pub fn relabel(&mut self, h: Option<Handle>, to: Cat) {
        let Some(Handle(slot)) = h else { return };
        if let Some(Some(held)) = self.live.get_mut(slot as usize) {
            held.0 = to;
            self.events.push(Event::Relabel { slot, to });
        }
    }

    /// Records a moment of the timeline.
    pub fn observe(&mut self, step: u32, micro: u32, phase: Phase, op: usize) {
        // `usize::MAX`, the optimizer's step, reads back as `u32::MAX`.
        let op = u32::try_from(op).unwrap_or(u32::MAX);
        self.events.push(Event::Observe {
            step,
            micro,
            phase,
            op,
        });
        self.moments += 1;
    }

    /// Records the moment before the first op.
    pub fn baseline(&mut self) {
        self.events.push(Event::Baseline);
    }

    /// Starts the events that only run with gradient accumulation.
    pub fn begin_accumulating(&mut self) {
        self.open = Some(self.events.len());
        self.events.push(Event::Accumulating { len: 0 });
    }

    /// Ends what [`Tape::begin_accumulating`] started.
    pub fn end_accumulating(&mut self) {
        let Some(at) = self.open.take() else { return };
        let len = id32(self.events.len() - at - 1);
        if let Some(e) = self.events.get_mut(at) {
            *e = Event::Accumulating { len };
        }
    }

    /// Every registered size in bytes at `e`, by [`SizeId`].
    fn evaluate(&self, e: &Eval<'_>) -> Vec<u64> {
        self.sizes.iter().map(|s| s.at(e)).collect()
    }

    /// Slots the replay needs.
    fn slots(&self) -> usize {
        self.live.len()
    }
}

/// What one replay found.
#[derive(Clone, Debug)]
pub struct Replay {
    /// The highest moment of allocated memory.
    pub peak: Point,
    /// Every moment, when asked for.
    pub timeline: Vec<Point>,
    /// The caching-allocator model's peak reserved bytes (0 without it).
    pub peak_reserved: u64,
    /// The allocator model's segments at the end (none without it).
    pub segments: super::allocator::Segments,
}

/// Evaluates `tape` at `e`; with `allocator`, also models reserved memory;
/// with `record`, keeps every moment.
///
/// Without the allocator model and without recording, only the last step is
/// replayed (from what is live when it starts; see [`Tape::mark_last_step`]):
/// the peak total is the same, at half the cost. The peak's breakdown is
/// then the last step's highest moment, which may differ from an earlier
/// moment of equal total.
pub fn replay(tape: &Tape, e: &Eval<'_>, allocator: bool, record: bool) -> Replay {
    let mut mem = Memory::new(tape.slots(), allocator.then_some(e.allocator));
    let sizes = tape.evaluate(e);
    let mut peak = Point {
        step: 0,
        micro_batch: 0,
        phase: Phase::Forward,
        op: 0,
        breakdown: Breakdown::default(),
    };
    let mut peak_total = 0u64;
    let mut timeline = if record {
        Vec::with_capacity(tape.moments)
    } else {
        Vec::new()
    };
    let mut i = 0usize;
    if let (false, false, Some(last)) = (allocator, record, &tape.last_step) {
        for &(slot, cat, size) in &last.live {
            mem.alloc(slot, cat, entry(&sizes, size.0 as usize), false);
        }
        peak_total = mem.total();
        peak.breakdown = mem.breakdown();
        i = last.start;
    }
    while let Some(event) = tape.events.get(i) {
        i += 1;
        match *event {
            Event::Alloc {
                slot,
                cat,
                size,
                transient,
            } => mem.alloc(slot, cat, entry(&sizes, size.0 as usize), transient),
            Event::Free { slot } => mem.free(slot),
            Event::Relabel { slot, to } => mem.relabel(slot, to),
            Event::Observe {
                step,
                micro,
                phase,
                op,
            } => {
                let total = mem.total();
                if total > peak_total || record {
                    let op = if op == u32::MAX {
                        super::OPTIMIZER_OP
                    } else {
                        op as usize
                    };
                    let point = Point {
                        step,
                        micro_batch: micro,
                        phase,
                        op,
                        breakdown: mem.breakdown(),
                    };
                    if total > peak_total {
                        peak_total = total;
                        peak = point.clone();
                    }
                    if record {
                        timeline.push(point);
                    }
                }
            }
            Event::Baseline => {
                peak_total = mem.total();
                peak.breakdown = mem.breakdown();
            }
            Event::Accumulating { len } => {
                if !e.accumulates {
                    i = i.saturating_add(len as usize);
                }
            }
        }
    }
    Replay {
        peak,
        timeline,
        peak_reserved: mem.peak_reserved().0,
        segments: mem.segments(),
    }
}

/// The peak of allocated memory when the tape is evaluated at `e`: the
/// total [`replay`] finds without the allocator model and without recording
/// (from the last step), without the per-category accounting.
pub fn peak_allocated(tape: &Tape, e: &Eval<'_>) -> u64 {
    let sizes = tape.evaluate(e);
    let size = |id: SizeId| entry(&sizes, id.0 as usize);
    let mut live = vec![0u64; tape.slots()];
    let mut total = 0u64;
    let mut i = 0usize;
    if let Some(last) = &tape.last_step {
        for &(slot, _, id) in &last.live {
            let bytes = size(id);
            if let Some(l) = live.get_mut(slot as usize) {
                *l = bytes;
            }
            total = total.saturating_add(bytes);
        }
        i = last.start;
    }
    let mut peak = total;
    while let Some(event) = tape.events.get(i) {
        i += 1;
        match *event {
            Event::Alloc { slot, size: id, .. } => {
                let bytes = size(id);
                if let Some(l) = live.get_mut(slot as usize) {
                    *l = bytes;
                }
                total = total.saturating_add(bytes);
            }
            Event::Free { slot } => {
                if let Some(l) = live.get_mut(slot as usize) {
                    total = total.saturating_sub(std::mem::take(l));
                }
            }
            Event::Observe { .. } => peak = peak.max(total),
            Event::Baseline => peak = total,
            Event::Accumulating { len } => {
                if !e.accumulates {
                    i = i.saturating_add(len as usize);
                }
            }
            Event::Relabel { .. } => {}
        }
    }
    peak
}

/// The highest allocated total at the tape's landmarks when it is evaluated
/// at `e`: each is a moment's total or less, so this is a lower bound of
/// [`peak_allocated`], from a few thousand sizes instead of a replay.
pub fn landmark_allocated(tape: &Tape, e: &Eval<'_>) -> u64 {
    let sizes = tape.evaluate(e);
    let total = |live: &Vec<SizeId>| {
        live.iter()
            .map(|id| entry(&sizes, id.0 as usize))
            .fold(0u64, u64::saturating_add)
    };
    tape.landmarks
        .iter()
        .filter(|(_, accumulating)| e.accumulates || !accumulating)
        .map(|(live, _)| total(live))
        .max()
        .unwrap_or(0)
}

/// The peak of reserved memory (the caching-allocator model) when the tape
/// is evaluated at `e`, if it stays at most `limit`; `None` as soon as it
/// exceeds it. The same allocations as [`replay`] with the allocator, without
/// the allocated-memory accounting and the moments: what the largest-batch
/// search and the planner ask most often.
///
/// The replay runs in `work`'s tables. When `work` keeps snapshots, a
/// replay that agrees with a kept one up to the optimizer's first
/// allocation (one that differs only in the optimizer) resumes from that
/// one's state there, and a replay that gets there keeps its state.
pub fn peak_reserved_within(
    tape: &Tape,
    e: &Eval<'_>,
    limit: u64,
    work: &mut Workspace,
) -> Option<u64> {
    let sizes = tape.evaluate(e);
    let settings = Settings {
        limit,
        ..e.allocator
    };
    let Workspace { state, snapshots } = work;
    let (Some(snapshots), Some(at)) = (snapshots.as_mut(), tape.optimizer_at) else {
        state.reset(tape, settings);
        state.run(tape, &sizes, e, 0, usize::MAX)?;
        return Some(state.allocator.peak());
    };
    // A kept state serves when the replay reaches the optimizer the same
    // way: no segment was returned to the driver on the way, and its peak
    // stays within this limit (so no request would have failed here).
    match snapshots.iter().find(|s| {
        s.resumes(tape, &sizes, e.accumulates)
            && !s.state.allocator.released()
            && s.state.allocator.peak() <= limit
            && Settings {
                limit,
                ..s.state.allocator.settings()
            } == settings
    }) {
        Some(s) => {
            state.clone_from(&s.state);
            state.allocator.set_limit(limit);
        }
        None => {
            state.reset(tape, settings);
            state.run(tape, &sizes, e, 0, at)?;
            if snapshots.len() >= SNAPSHOTS_KEPT {
                snapshots.remove(0);
            }
            snapshots.push(Snapshot {
                sizes: sizes.clone(),
                accumulates: e.accumulates,
                state: state.clone(),
            });
        }
    }
    state.run(tape, &sizes, e, at, usize::MAX)?;
    Some(state.allocator.peak())
}

/// Where reserved-memory replays run: tables reused from one replay to the
/// next, and, when kept ([`Workspace::keeping_snapshots`]), replays' states
/// at the optimizer's first allocation: the planner replays each
/// configuration with the chosen optimizer and with 8-bit AdamW, which
/// allocate alike until there.
#[derive(Debug, Default)]
pub struct Workspace {
    state: ReservedReplay,
    snapshots: Option<Vec<Snapshot>>,
}

impl Workspace {
    /// A workspace that keeps snapshots.
    pub fn keeping_snapshots() -> Workspace {
        Workspace {
            snapshots: Some(Vec::new()),
            ..Workspace::default()
        }
    }
}

/// The allocator model and the live blocks of a reserved-memory replay.
#[derive(Clone, Debug, Default)]
struct ReservedReplay {
    allocator: CachingAllocator,
    live: Vec<Option<Block>>,
}

impl ReservedReplay {
    /// Back to the start of `tape` under `settings`, keeping the tables' capacity.
    fn reset(&mut self, tape: &Tape, settings: Settings) {
        self.allocator.reset(settings);
        self.live.clear();
        self.live.resize(tape.slots(), None);
    }

    /// Replays events `from..to` with the evaluated `sizes`; `None` as soon
    /// as a request fails under the allocator's limit (out of memory).
    fn run(
        &mut self,
        tape: &Tape,
        sizes: &[u64],
        e: &Eval<'_>,
        from: usize,
        to: usize,
    ) -> Option<()> {
        let mut i = from;
        while let Some(event) = tape.events.get(i).filter(|_| i < to) {
            i += 1;
            match *event {
                Event::Alloc {
                    slot,
                    size,
                    transient,
                    ..
                } => {
                    let bytes = entry(sizes, size.0 as usize);
                    if bytes == 0 {
                        continue;
                    }
                    if transient {
                        // Its free (next) finds the slot empty.
                        self.allocator.alloc_and_free(bytes)?;
                    } else if let Some(l) = self.live.get_mut(slot as usize) {
                        *l = Some(self.allocator.alloc(bytes)?);
                    }
                }
                Event::Free { slot } => {
                    if let Some(block) = self.live.get_mut(slot as usize).and_then(Option::take) {
                        self.allocator.free(block);
                    }
                }
                Event::Accumulating { len } => {
                    if !e.accumulates {
                        i = i.saturating_add(len as usize);
                    }
                }
                Event::Relabel { .. } | Event::Observe { .. } | Event::Baseline => {}
            }
        }
        Some(())
    }
}

/// Snapshots kept (the oldest goes first).
const SNAPSHOTS_KEPT: usize = 4;

/// One replay's state at the optimizer's first allocation, with what decided it.
#[derive(Debug)]
struct Snapshot {
    sizes: Vec<u64>,
    accumulates: bool,
    state: ReservedReplay,
}

impl Snapshot {
    /// Whether a replay with `sizes` reaches the optimizer in this state:
    /// every size used before it is the same (and so is the accumulation).
    fn resumes(&self, tape: &Tape, sizes: &[u64], accumulates: bool) -> bool {
        let Some(at) = tape.optimizer_at else {
            return false;
        };
        accumulates == self.accumulates
            && self.sizes.len() == sizes.len()
            && self
                .sizes
                .iter()
                .zip(sizes)
                .zip(&tape.first_use)
                .all(|((a, b), first)| a == b || *first >= at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static NO_SHARDS: ShardSizes = ShardSizes::NONE;

    fn eval(batch: u64, accumulates: bool) -> Eval<'static> {
        Eval {
            batch,
            accumulates,
            cublas_workspace: 1 << 20,
            conv_workspace: 0,
            in_flight: 0,
            states: &[4096],
            step_temps: &[],
            kv_cache: Numel {
                fixed: 1,
                per_sample: 100,
            },
            shards: &NO_SHARDS,
            allocator: Settings::default(),
        }
    }

    #[test]
    fn sizes_scale_with_the_batch_and_round_per_allocation() {
        let n = Numel {
            fixed: 1,
            per_sample: 100,
        };
        let e = eval(3, false);
        assert_eq!(
            Size::Rounded(n, 4).at(&e),
            1536,
            "301 × 4 = 1204 B rounds to 1536"
        );
        assert_eq!(Size::KvCache.at(&e), 301);
        assert_eq!(Size::CublasWorkspace.at(&e), 1 << 20);
        assert_eq!(Size::State(0).at(&e), 4096);
        assert_eq!(
            Size::StepTemp(0).at(&e),
            0,
            "an optimizer without this temporary allocates nothing"
        );
        assert!(Size::Rounded(Numel::fixed(0), 4).is_zero());
        assert!(!Size::Rounded(Numel::per_sample(1), 4).is_zero());
    }

    #[test]
    fn replay_finds_the_peak_and_skips_the_second_micro_batch_without_accumulation() {
        let mut t = Tape::default();
        let w = t.alloc(Cat::Parameters, Size::Fixed(1024));
        t.baseline();
        let a = t.alloc(Cat::Activations, Size::Rounded(Numel::per_sample(256), 4));
        t.observe(1, 1, Phase::Forward, 0);
        t.free(a);
        t.begin_accumulating();
        let b = t.alloc(Cat::Activations, Size::Rounded(Numel::per_sample(512), 4));
        t.observe(1, 2, Phase::Forward, 0);
        t.free(b);
        t.end_accumulating();
        t.free(w);
        t.free(w); // a second free of the same handle records nothing
        let single = replay(&t, &eval(2, false), true, true);
        assert_eq!(single.peak.breakdown.total().0, 1024 + 2048);
        assert_eq!(single.timeline.len(), 1);
        let accumulating = replay(&t, &eval(2, true), true, true);
        assert_eq!(accumulating.peak.breakdown.total().0, 1024 + 4096);
        assert_eq!(
            (accumulating.peak.step, accumulating.peak.micro_batch),
            (1, 2)
        );
        assert_eq!(accumulating.timeline.len(), 2);
        assert!(accumulating.peak_reserved >= 1024 + 4096);
    }
}
