//! Live memory during the simulation: bytes per category (what
//! `torch.cuda.memory_allocated()` would report, split by role) and the
//! caching-allocator model behind `torch.cuda.memory_reserved()`.

use super::Breakdown;
use super::allocator::{Block, CachingAllocator, Settings};
use crate::units::Bytes;

/// The role of an allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cat {
    /// Model weights.
    Parameters,
    /// `param.grad`.
    Gradients,
    /// Optimizer state.
    States,
    /// Forward tensors kept for backward.
    Activations,
    /// Short-lived buffers.
    Temporary,
    /// Inputs and buffers.
    Other,
    /// The KV cache.
    KvCache,
}

impl Cat {
    fn idx(self) -> usize {
        match self {
            Cat::Parameters => 0,
            Cat::Gradients => 1,
            Cat::States => 2,
            Cat::Activations => 3,
            Cat::Temporary => 4,
            Cat::Other => 5,
            Cat::KvCache => 6,
        }
    }
}

/// Allocated bytes by category, plus (optionally) the allocator model, for
/// one replay of a [`super::tape::Tape`]: live allocations sit in the slots
/// the tape assigned.
#[derive(Debug)]
pub struct Memory {
    now: [u64; 7],
    total: u64,
    allocator: Option<CachingAllocator>,
    peak_reserved: u64,
    live: Vec<Option<(Cat, u64, Option<Block>)>>,
}

impl Memory {
    /// Empty memory with `slots` slots, modelling reserved memory with
    /// these allocator settings when given (their limit is not enforced:
    /// the replay measures, it does not fail).
    pub fn new(slots: usize, allocator: Option<Settings>) -> Memory {
        Memory {
            now: [0; 7],
            total: 0,
            allocator: allocator.map(|s| {
                CachingAllocator::new(Settings {
                    limit: u64::MAX,
                    ..s
                })
            }),
            peak_reserved: 0,
            live: vec![None; slots],
        }
    }

    /// Allocates `bytes` (already rounded) in category `cat` into `slot`.
    /// Zero bytes allocate nothing. A `transient` allocation is freed before
    /// any other allocation or free: the allocator model takes and returns
    /// its block at once ([`CachingAllocator::alloc_and_free`]), and only the
    /// counts wait for its free.
    pub fn alloc(&mut self, slot: u32, cat: Cat, bytes: u64, transient: bool) {
        if bytes == 0 {
            return;
        }
        if let Some(v) = self.now.get_mut(cat.idx()) {
            *v = v.saturating_add(bytes);
        }
        self.total = self.total.saturating_add(bytes);
        let block = self.allocator.as_mut().and_then(|a| {
            // Without a limit no request fails.
            let block = if transient {
                a.alloc_and_free(bytes);
                None
            } else {
                a.alloc(bytes)
            };
            self.peak_reserved = a.peak();
            block
        });
        if let Some(e) = self.live.get_mut(slot as usize) {
            *e = Some((cat, bytes, block));
        }
    }

    /// Frees the allocation in `slot` (no-op when it holds none).
    pub fn free(&mut self, slot: u32) {
        let Some(entry) = self.live.get_mut(slot as usize) else {
            return;
        };
        let Some((cat, bytes, block)) = entry.take() else {
            return;
        };
        if let Some(v) = self.now.get_mut(cat.idx()) {
            *v = v.saturating_sub(bytes);
        }
        self.total = self.total.saturating_sub(bytes);
        if let (Some(a), Some(block)) = (self.allocator.as_mut(), block) {
            a.free(block);
        }
    }

    /// Changes the role of a live allocation (a computed gradient becomes `.grad`).
    pub fn relabel(&mut self, slot: u32, to: Cat) {
        let Some(Some((cat, bytes, _))) = self.live.get_mut(slot as usize) else {
            return;
        };
        let from = *cat;
        *cat = to;
        let bytes = *bytes;
        if let Some(v) = self.now.get_mut(from.idx()) {
            *v = v.saturating_sub(bytes);
        }
        if let Some(v) = self.now.get_mut(to.idx()) {
            *v = v.saturating_add(bytes);
        }
    }

    /// Allocated bytes in all categories.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Allocated bytes by category now.
    pub fn breakdown(&self) -> Breakdown {
        let [p, g, s, a, t, o, kv] = self.now;
        Breakdown {
            parameters: Bytes(p),
            gradients: Bytes(g),
            optimizer_states: Bytes(s),
            activations: Bytes(a),
            temporary: Bytes(t),
            other: Bytes(o),
            kv_cache: Bytes(kv),
        }
    }

    /// The allocator model's segments (none without it).
    pub fn segments(&self) -> super::allocator::Segments {
        self.allocator
            .as_ref()
            .map(super::allocator::CachingAllocator::segments)
            .unwrap_or_default()
    }

    /// The highest reserved memory so far (0 without the allocator model).
    pub fn peak_reserved(&self) -> Bytes {
        Bytes(self.peak_reserved)
    }
}
