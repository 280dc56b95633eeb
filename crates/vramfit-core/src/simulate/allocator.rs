//! A model of PyTorch's CUDA caching allocator (`c10/cuda/CUDACachingAllocator.cpp`),
//! for `torch.cuda.memory_reserved()`: requests of ≤ 1 MiB come from a small
//! pool of 2 MiB segments; larger ones from a large pool, where requests under
//! 10 MiB get a 20 MiB segment and bigger ones a segment rounded up to 2 MiB.
//! A free request takes the best-fitting cached block and splits it (small
//! pool: if ≥ 512 B remain; large pool: if > 1 MiB remains); freed blocks
//! merge with free neighbours. Segments are never returned (no `empty_cache`),
//! so reserved memory only grows; the gap to allocated memory is
//! fragmentation plus cached free blocks.

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

/// A live block: its index in the allocator's block table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block(u32);

const NONE: u32 = u32::MAX;

/// One block of a segment; neighbours are linked, as in PyTorch's `Block`.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// Where the block starts in a model address space in which segments
    /// follow each other in the order they were reserved.
    addr: u64,
    size: u64,
    prev: u32,
    next: u32,
    free: bool,
    small: bool,
}

/// One pool's free blocks ordered for best fit: by size, then by address,
/// as PyTorch's `BlockComparatorSize` (addresses of later segments are
/// higher, as the order of `cudaMalloc`s makes them in practice). Size and
/// address, in 512-byte units, are packed into one `u64` key (saturating
/// beyond 2 TiB, where `take` checks the real size); the block id keeps
/// entries unique.
///
/// The entries are split into size classes (four per power of two), each a
/// short vector sorted in descending order (the best fit, the smallest
/// block, is last: reusing a just-freed block of a common size shifts
/// little), with a bitmap of the classes that hold any: a request searches
/// its own class, then the first non-empty larger one.
/// Same order as one sorted set, at a fraction of a tree's cost.
#[derive(Debug)]
struct Pool {
    classes: Vec<Vec<(u64, u32)>>,
    nonempty: u128,
}

/// Size classes: four per power of two of the size in 512-byte units (at most 2^32).
const CLASSES: usize = 128;

impl Default for Pool {
    fn default() -> Pool {
        Pool { classes: vec![Vec::new(); CLASSES], nonempty: 0 }
    }
}

fn units(bytes: u64) -> u64 {
    (bytes / MIN_BLOCK).min(u64::from(u32::MAX))
}

fn key(e: &Entry) -> u64 {
    (units(e.size) << 32) | units(e.addr)
}

/// The class of a size in units: non-decreasing in the size.
fn class(units: u64) -> usize {
    if units == 0 {
        return 0;
    }
    let log = 63 - units.leading_zeros() as u64;
    let sub = if log >= 2 { (units >> (log - 2)) & 3 } else { (units << (2 - log)) & 3 };
    ((4 * log + sub) as usize).min(CLASSES - 1)
}

impl Pool {
    fn insert(&mut self, key: u64, id: u32) {
        let c = class(key >> 32);
        if let Some(list) = self.classes.get_mut(c) {
            let at = list.partition_point(|e| *e > (key, id));
            list.insert(at, (key, id));
            self.nonempty |= 1u128 << c;
        }
    }

    fn remove(&mut self, key: u64, id: u32) {
        let c = class(key >> 32);
        if let Some(list) = self.classes.get_mut(c) {
            if let Ok(at) = list.binary_search_by(|e| (key, id).cmp(e)) {
                list.remove(at);
            }
            if list.is_empty() {
                self.nonempty &= !(1u128 << c);
            }
        }
    }

    /// Takes the best-fitting free block for `size` from `blocks`: the
    /// smallest size that holds it, and the lowest address among those.
    fn take(&mut self, size: u64, blocks: &[Entry]) -> Option<u32> {
        let first = class(units(size));
        let start = (units(size) << 32, 0);
        let holds = |id: u32| blocks.get(id as usize).is_some_and(|e| e.size >= size);
        let mut c = first;
        loop {
            let list = self.classes.get_mut(c)?;
            // Blocks at least `size` long, the smallest (best fit) last.
            let end = if c == first { list.partition_point(|e| *e >= start) } else { list.len() };
            if let Some(at) = list.get(..end).and_then(|fits| fits.iter().rposition(|e| holds(e.1))) {
                let (_, id) = list.remove(at);
                if list.is_empty() {
                    self.nonempty &= !(1u128 << c);
                }
                return Some(id);
            }
            // The next non-empty class above `c`.
            let above = if c + 1 >= CLASSES { 0 } else { self.nonempty & (u128::MAX << (c + 1)) };
            if above == 0 {
                return None;
            }
            c = above.trailing_zeros() as usize;
        }
    }
}

/// The allocator's state: a table of blocks with neighbour links (for
/// merging) and each pool's free blocks.
#[derive(Debug, Default)]
pub struct CachingAllocator {
    blocks: Vec<Entry>,
    unused: Vec<u32>,
    small: Pool,
    large: Pool,
    reserved: u64,
}

impl CachingAllocator {
    /// Bytes held in segments.
    pub fn reserved(&self) -> u64 {
        self.reserved
    }

    fn entry(&self, id: u32) -> Option<Entry> {
        self.blocks.get(id as usize).copied()
    }

    fn set(&mut self, id: u32, f: impl FnOnce(&mut Entry)) {
        if let Some(e) = self.blocks.get_mut(id as usize) {
            f(e);
        }
    }

    fn new_entry(&mut self, e: Entry) -> u32 {
        match self.unused.pop() {
            Some(id) => {
                self.set(id, |slot| *slot = e);
                id
            }
            None => {
                self.blocks.push(e);
                u32::try_from(self.blocks.len() - 1).unwrap_or(NONE)
            }
        }
    }

    fn pool(&mut self, small: bool) -> &mut Pool {
        if small { &mut self.small } else { &mut self.large }
    }

    fn insert_free(&mut self, id: u32) {
        let Some(e) = self.entry(id) else { return };
        self.pool(e.small).insert(key(&e), id);
        self.set(id, |e| e.free = true);
    }

    fn remove_free(&mut self, id: u32) {
        let Some(e) = self.entry(id) else { return };
        self.pool(e.small).remove(key(&e), id);
        self.set(id, |e| e.free = false);
    }

    /// Allocates `size` bytes (already rounded to 512) and returns the block.
    pub fn alloc(&mut self, size: u64) -> Block {
        let size = size.max(MIN_BLOCK);
        let small = size <= SMALL_SIZE;
        let pool = if small { &mut self.small } else { &mut self.large };
        let id = match pool.take(size, &self.blocks) {
            Some(id) => {
                self.set(id, |e| e.free = false);
                id
            }
            None => {
                let seg_size = if small {
                    SMALL_BUFFER
                } else if size < MIN_LARGE_ALLOC {
                    LARGE_BUFFER
                } else {
                    size.div_ceil(ROUND_LARGE).saturating_mul(ROUND_LARGE)
                };
                let addr = self.reserved;
                self.reserved = self.reserved.saturating_add(seg_size);
                self.new_entry(Entry { addr, size: seg_size, prev: NONE, next: NONE, free: false, small })
            }
        };
        let Some(found) = self.entry(id) else { return Block(id) };
        let remaining = found.size.saturating_sub(size);
        let split = if small { remaining >= MIN_BLOCK } else { remaining > SMALL_SIZE };
        if split {
            let rest = self.new_entry(Entry {
                addr: found.addr.saturating_add(size),
                size: remaining,
                prev: id,
                next: found.next,
                free: false,
                small,
            });
            self.set(found.next, |n| n.prev = rest);
            self.set(id, |e| {
                e.size = size;
                e.next = rest;
            });
            self.insert_free(rest);
        }
        Block(id)
    }

    /// Returns a block to its pool, merging it with free neighbours.
    pub fn free(&mut self, block: Block) {
        let id = block.0;
        let Some(mut e) = self.entry(id) else { return };
        if let Some(prev) = self.entry(e.prev).filter(|p| p.free) {
            // Absorb into the previous block, which keeps its id.
            self.remove_free(e.prev);
            let (pid, next) = (e.prev, e.next);
            self.set(pid, |p| {
                p.size += e.size;
                p.next = next;
            });
            self.set(next, |n| n.prev = pid);
            self.unused.push(id);
            e = Entry { size: prev.size + e.size, next, ..prev };
            return self.merge_next(pid, e);
        }
        self.merge_next(id, e);
    }

    fn merge_next(&mut self, id: u32, e: Entry) {
        if let Some(next) = self.entry(e.next).filter(|n| n.free) {
            self.remove_free(e.next);
            let (nid, after) = (e.next, next.next);
            self.set(id, |b| {
                b.size += next.size;
                b.next = after;
            });
            self.set(after, |a| a.prev = id);
            self.unused.push(nid);
        }
        self.insert_free(id);
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
