//! Live memory during the simulation: bytes per category (what
//! `torch.cuda.memory_allocated()` would report, split by role) and the
//! caching-allocator model behind `torch.cuda.memory_reserved()`.

use super::Breakdown;
use super::allocator::{Block, CachingAllocator};
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

/// A live allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handle(usize);

/// Allocated bytes by category, plus the allocator model.
#[derive(Debug, Default)]
pub struct Memory {
    now: [u64; 7],
    allocator: CachingAllocator,
    peak_reserved: u64,
    live: Vec<Option<(Cat, u64, Block)>>,
    free_slots: Vec<usize>,
}

impl Memory {
    /// Allocates `bytes` (already rounded) in category `cat`. Zero bytes allocate nothing.
    pub fn alloc(&mut self, cat: Cat, bytes: u64) -> Option<Handle> {
        if bytes == 0 {
            return None;
        }
        if let Some(v) = self.now.get_mut(cat.idx()) {
            *v = v.saturating_add(bytes);
        }
        let block = self.allocator.alloc(bytes);
        self.peak_reserved = self.peak_reserved.max(self.allocator.reserved());
        let entry = Some((cat, bytes, block));
        let slot = match self.free_slots.pop() {
            Some(s) => {
                if let Some(e) = self.live.get_mut(s) {
                    *e = entry;
                }
                s
            }
            None => {
                self.live.push(entry);
                self.live.len() - 1
            }
        };
        Some(Handle(slot))
    }

    /// Frees an allocation (no-op for `None` or an already freed handle).
    pub fn free(&mut self, h: Option<Handle>) {
        let Some(Handle(slot)) = h else { return };
        let Some(entry) = self.live.get_mut(slot) else { return };
        let Some((cat, bytes, block)) = entry.take() else { return };
        if let Some(v) = self.now.get_mut(cat.idx()) {
            *v = v.saturating_sub(bytes);
        }
        self.allocator.free(block);
        self.free_slots.push(slot);
    }

    /// Changes the role of a live allocation (a computed gradient becomes `.grad`).
    pub fn relabel(&mut self, h: Option<Handle>, to: Cat) {
        let Some(Handle(slot)) = h else { return };
        let Some(Some((cat, bytes, _))) = self.live.get_mut(slot) else { return };
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

    /// The highest reserved memory so far.
    pub fn peak_reserved(&self) -> Bytes {
        Bytes(self.peak_reserved)
    }
}
