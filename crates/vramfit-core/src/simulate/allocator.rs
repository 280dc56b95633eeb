//! A model of PyTorch's CUDA caching allocator (`c10/cuda/CUDACachingAllocator.cpp`),
//! for `torch.cuda.memory_reserved()`: requests of ≤ 1 MiB come from a small
//! pool of 2 MiB segments; larger ones from a large pool, where requests under
//! 10 MiB get a 20 MiB segment and bigger ones a segment rounded up to 2 MiB.
//! A free request takes the best-fitting cached block and splits it (small
//! pool: if ≥ 512 B remain; large pool: if > 1 MiB remains); freed blocks
//! merge with free neighbours. Segments are never returned (no `empty_cache`),
//! so reserved memory only grows; the gap to allocated memory is
//! fragmentation plus cached free blocks.

use std::collections::{BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

/// A multiplicative hasher for the allocator's small integer keys (the
/// standard SipHash is several times slower and needs no DoS resistance here).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

type KeyMap<V> = HashMap<(usize, u64), V, BuildHasherDefault<KeyHasher>>;

/// Requests up to this size use the small pool (`kSmallSize`).
pub const SMALL_SIZE: u64 = 1 << 20;
/// Small-pool segment size (`kSmallBuffer`).
pub const SMALL_BUFFER: u64 = 2 << 20;
/// Large-pool segment for requests below [`MIN_LARGE_ALLOC`] (`kLargeBuffer`).
pub const LARGE_BUFFER: u64 = 20 << 20;
/// Requests from this size get their own segment (`kMinLargeAlloc`).
pub const MIN_LARGE_ALLOC: u64 = 10 << 20;
/// Large segments are rounded to this (`kRoundLarge`).
pub const ROUND_LARGE: u64 = 2 << 20;
/// Smallest block (`kMinBlockSize`).
pub const MIN_BLOCK: u64 = 512;

/// Where a live block sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    segment: usize,
    offset: u64,
    size: u64,
}

/// The allocator's state: free blocks indexed for best fit (per pool, by
/// size) and for merging (by start and by end within their segment).
#[derive(Debug, Default)]
pub struct CachingAllocator {
    small: BTreeSet<(u64, usize, u64)>,
    large: BTreeSet<(u64, usize, u64)>,
    /// (segment, offset) -> size of a free block.
    free_start: KeyMap<u64>,
    /// (segment, end) -> offset of a free block.
    free_end: KeyMap<u64>,
    /// Whether each segment belongs to the small pool.
    segment_small: Vec<bool>,
    reserved: u64,
}

impl CachingAllocator {
    /// Bytes held in segments.
    pub fn reserved(&self) -> u64 {
        self.reserved
    }

    fn pool(&mut self, small: bool) -> &mut BTreeSet<(u64, usize, u64)> {
        if small { &mut self.small } else { &mut self.large }
    }

    fn add_free(&mut self, segment: usize, offset: u64, size: u64) {
        let small = self.segment_small.get(segment).copied().unwrap_or(false);
        self.pool(small).insert((size, segment, offset));
        self.free_start.insert((segment, offset), size);
        self.free_end.insert((segment, offset + size), offset);
    }

    fn remove_free(&mut self, segment: usize, offset: u64, size: u64) {
        let small = self.segment_small.get(segment).copied().unwrap_or(false);
        self.pool(small).remove(&(size, segment, offset));
        self.free_start.remove(&(segment, offset));
        self.free_end.remove(&(segment, offset + size));
    }

    /// Allocates `size` bytes (already rounded to 512) and returns the block.
    pub fn alloc(&mut self, size: u64) -> Block {
        let size = size.max(MIN_BLOCK);
        let small = size <= SMALL_SIZE;
        let found = self.pool(small).range((size, 0, 0)..).next().copied();
        let (bsize, segment, offset) = match found {
            Some((bsize, segment, offset)) => {
                self.remove_free(segment, offset, bsize);
                (bsize, segment, offset)
            }
            None => {
                let seg_size = if small {
                    SMALL_BUFFER
                } else if size < MIN_LARGE_ALLOC {
                    LARGE_BUFFER
                } else {
                    size.div_ceil(ROUND_LARGE).saturating_mul(ROUND_LARGE)
                };
                self.reserved = self.reserved.saturating_add(seg_size);
                self.segment_small.push(small);
                (seg_size, self.segment_small.len() - 1, 0)
            }
        };
        let remaining = bsize - size;
        let split = if small { remaining >= MIN_BLOCK } else { remaining > SMALL_SIZE };
        let used = if split { size } else { bsize };
        if split {
            self.add_free(segment, offset + used, remaining);
        }
        Block { segment, offset, size: used }
    }

    /// Returns a block to its pool, merging it with free neighbours.
    pub fn free(&mut self, block: Block) {
        let (segment, mut offset, mut size) = (block.segment, block.offset, block.size);
        if let Some(&prev) = self.free_end.get(&(segment, offset)) {
            let prev_size = offset - prev;
            self.remove_free(segment, prev, prev_size);
            offset = prev;
            size += prev_size;
        }
        if let Some(&next_size) = self.free_start.get(&(segment, offset + size)) {
            self.remove_free(segment, offset + size, next_size);
            size += next_size;
        }
        self.add_free(segment, offset, size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_requests_share_a_two_mib_segment() {
        let mut a = CachingAllocator::default();
        let blocks: Vec<Block> = (0..4).map(|_| a.alloc(512 * 1024)).collect();
        assert_eq!(a.reserved(), SMALL_BUFFER);
        a.alloc(512);
        assert_eq!(a.reserved(), 2 * SMALL_BUFFER);
        for b in blocks {
            a.free(b);
        }
        // The freed space is reused, not reserved again.
        a.alloc(1 << 20);
        assert_eq!(a.reserved(), 2 * SMALL_BUFFER);
    }

    #[test]
    fn mid_sized_requests_get_twenty_mib_segments_and_big_ones_their_own() {
        let mut a = CachingAllocator::default();
        let x = a.alloc(4 << 20);
        assert_eq!(a.reserved(), LARGE_BUFFER);
        let _y = a.alloc(4 << 20);
        assert_eq!(a.reserved(), LARGE_BUFFER, "split from the same segment");
        let _big = a.alloc((100 << 20) + 512);
        assert_eq!(a.reserved(), LARGE_BUFFER + (102 << 20));
        a.free(x);
        let _z = a.alloc(3 << 20);
        assert_eq!(a.reserved(), LARGE_BUFFER + (102 << 20), "best fit reuses the freed block");
    }

    #[test]
    fn fragmentation_forces_a_new_segment() {
        let mut a = CachingAllocator::default();
        // Two 40 MiB tensors, free the first, then ask for 60 MiB: the hole is too small.
        let first = a.alloc(40 << 20);
        let _second = a.alloc(40 << 20);
        a.free(first);
        a.alloc(60 << 20);
        assert_eq!(a.reserved(), (40 + 40 + 60) << 20);
    }
}
