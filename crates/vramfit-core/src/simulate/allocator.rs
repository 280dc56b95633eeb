//! A model of PyTorch's CUDA caching allocator (`c10/cuda/CUDACachingAllocator.cpp`),
//! for `torch.cuda.memory_reserved()`: requests of ≤ 1 MiB come from a small
//! pool of 2 MiB segments; larger ones from a large pool, where requests under
//! 10 MiB get a 20 MiB segment and bigger ones a segment rounded up to 2 MiB.
//! A free request takes the best-fitting cached block and splits it (small
//! pool: if ≥ 512 B remain; large pool: if > 1 MiB remains); freed blocks
//! merge with free neighbours. Segments are never returned (no `empty_cache`),
//! so reserved memory only grows; the gap to allocated memory is
//! fragmentation plus cached free blocks.

use std::collections::{BTreeMap, BTreeSet};

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

#[derive(Debug, Default)]
struct Pool {
    /// Free blocks ordered by (size, segment, offset) for best fit.
    free: BTreeSet<(u64, usize, u64)>,
}

#[derive(Debug)]
struct SegmentBlocks {
    small: bool,
    /// offset -> (size, is_free)
    blocks: BTreeMap<u64, (u64, bool)>,
}

/// The allocator's state.
#[derive(Debug, Default)]
pub struct CachingAllocator {
    small: Pool,
    large: Pool,
    segments: Vec<SegmentBlocks>,
    reserved: u64,
}

impl CachingAllocator {
    /// Bytes held in segments.
    pub fn reserved(&self) -> u64 {
        self.reserved
    }

    fn pool(&mut self, small: bool) -> &mut Pool {
        if small { &mut self.small } else { &mut self.large }
    }

    /// Allocates `size` bytes (already rounded to 512) and returns the block.
    pub fn alloc(&mut self, size: u64) -> Block {
        let size = size.max(MIN_BLOCK);
        let small = size <= SMALL_SIZE;
        let found = self.pool(small).free.range((size, 0, 0)..).next().copied();
        let (bsize, segment, offset) = match found {
            Some(f) => {
                self.pool(small).free.remove(&f);
                f
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
                let mut blocks = BTreeMap::new();
                blocks.insert(0, (seg_size, false));
                self.segments.push(SegmentBlocks { small, blocks });
                (seg_size, self.segments.len() - 1, 0)
            }
        };
        let remaining = bsize - size;
        let split = if small { remaining >= MIN_BLOCK } else { remaining > SMALL_SIZE };
        let used = if split { size } else { bsize };
        if let Some(seg) = self.segments.get_mut(segment) {
            seg.blocks.insert(offset, (used, false));
            if split {
                seg.blocks.insert(offset + used, (remaining, true));
            }
        }
        if split {
            self.pool(small).free.insert((remaining, segment, offset + used));
        }
        Block { segment, offset, size: used }
    }

    /// Returns a block to its pool, merging it with free neighbours.
    pub fn free(&mut self, block: Block) {
        let Some(seg) = self.segments.get_mut(block.segment) else { return };
        let small = seg.small;
        let mut offset = block.offset;
        let mut size = block.size;
        let mut merged = Vec::new();
        if let Some((&prev_off, &(prev_size, true))) = seg.blocks.range(..offset).next_back() {
            if prev_off + prev_size == offset {
                merged.push((prev_size, block.segment, prev_off));
                seg.blocks.remove(&offset);
                offset = prev_off;
                size += prev_size;
            }
        }
        if let Some(&(next_size, true)) = seg.blocks.get(&(block.offset + block.size)) {
            merged.push((next_size, block.segment, block.offset + block.size));
            seg.blocks.remove(&(block.offset + block.size));
            size += next_size;
        }
        seg.blocks.insert(offset, (size, true));
        let pool = if small { &mut self.small } else { &mut self.large };
        for m in merged {
            pool.free.remove(&m);
        }
        pool.free.insert((size, block.segment, offset));
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
