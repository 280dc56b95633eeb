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

/// Segments by pool (`c10/cuda/CUDACachingAllocator.h`, `SegmentInfo::is_large`):
/// the small pool's are 2 MiB, the large pool's 20 MiB or bigger.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Segments {
    /// Small-pool segments.
    pub small: u64,
    /// Large-pool segments.
    pub large: u64,
    /// The largest segment, where sizes are known.
    pub largest: Option<crate::units::Bytes>,
    /// Segments of 1 GiB or more, where sizes are known.
    pub over_gib: Option<u64>,
}

impl Segments {
    /// The tally of segments given as `(size, small pool)` pairs.
    pub fn from_sizes(sizes: impl IntoIterator<Item = (u64, bool)>) -> Segments {
        let mut s = Segments {
            largest: Some(crate::units::Bytes::ZERO),
            over_gib: Some(0),
            ..Segments::default()
        };
        for (size, small) in sizes {
            if small {
                s.small += 1;
            } else {
                s.large += 1;
            }
            s.largest = s.largest.max(Some(crate::units::Bytes(size)));
            if size >= crate::units::GIB {
                s.over_gib = s.over_gib.map(|n| n + 1);
            }
        }
        s
    }

    /// All segments.
    pub fn count(&self) -> u64 {
        self.small + self.large
    }
}

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
#[derive(Clone, Debug)]
struct Pool {
    /// Each entry is `key << 32 | id`: one integer compares as the pair does.
    classes: Vec<Vec<u128>>,
    nonempty: u128,
}

/// A pool entry: the block's key, then its id.
fn entry_of(key: u64, id: u32) -> u128 {
    (u128::from(key) << 32) | u128::from(id)
}

/// The block id of a pool entry (its low 32 bits).
fn id_of(entry: u128) -> u32 {
    (entry & u128::from(u32::MAX)) as u32
}

/// Entries a pool compares from the end of a list before it searches it.
const SCAN: usize = 16;

/// Size classes: four per power of two of the size in 512-byte units (at most 2^32).
const CLASSES: usize = 128;

impl Default for Pool {
    fn default() -> Pool {
        Pool {
            classes: vec![Vec::new(); CLASSES],
            nonempty: 0,
        }
    }
}

fn units(bytes: u64) -> u64 {
    (bytes / MIN_BLOCK).min(u64::from(u32::MAX))
}

fn key(e: &Entry) -> u64 {
    key_of(e.size, e.addr)
}

/// A block's pool key from its size and address.
fn key_of(size: u64, addr: u64) -> u64 {
    (units(size) << 32) | units(addr)
}

/// The class of a size in units: non-decreasing in the size.
fn class(units: u64) -> usize {
    if units == 0 {
        return 0;
    }
    let log = 63 - units.leading_zeros() as u64;
    let sub = if log >= 2 {
        (units >> (log - 2)) & 3
    } else {
        (units << (2 - log)) & 3
    };
    ((4 * log + sub) as usize).min(CLASSES - 1)
}

impl Pool {
    // The pool's operations are inlined into the allocator's (they run a few
    // hundred thousand times per planner call).
    #[inline(always)]
    fn insert(&mut self, key: u64, id: u32) {
        let c = class(key >> 32);
        if let Some(list) = self.classes.get_mut(c) {
            let e = entry_of(key, id);
            // Lists are sorted descending: a block below every other goes last.
            match list.last() {
                None => {
                    list.push(e);
                    self.nonempty |= 1u128 << c;
                }
                Some(last) if *last > e => list.push(e),
                Some(_) => {
                    // Usually a few places from the end (a run of one size
                    // ordered by address): a short scan, then a binary search.
                    let tail = list.iter().rev().take(SCAN).take_while(|x| **x < e).count();
                    let at = if tail < SCAN {
                        list.len() - tail
                    } else {
                        list.partition_point(|x| *x > e)
                    };
                    list.insert(at, e);
                }
            }
        }
    }

    #[inline(always)]
    fn remove(&mut self, key: u64, id: u32) {
        let c = class(key >> 32);
        if let Some(list) = self.classes.get_mut(c) {
            let e = entry_of(key, id);
            if list.last() == Some(&e) {
                list.pop();
            } else if let Ok(at) = list.binary_search_by(|x| e.cmp(x)) {
                list.remove(at);
            }
            if list.is_empty() {
                self.nonempty &= !(1u128 << c);
            }
        }
    }

    /// Where the best-fitting free block for `size` is (its class and
    /// index): the smallest size that holds it, and the lowest address among those.
    #[inline(always)]
    fn find(&self, size: u64, blocks: &[Entry]) -> Option<(usize, usize)> {
        let first = class(units(size));
        let start = entry_of(units(size) << 32, 0);
        // A key at least `start` holds the request unless sizes saturate the
        // key (2 TiB): only then is the block's real size read.
        let exact = units(size) < u64::from(u32::MAX);
        let holds = |e: u128| {
            exact
                || blocks
                    .get(id_of(e) as usize)
                    .is_some_and(|b| b.size >= size)
        };
        let mut c = first;
        loop {
            let list = self.classes.get(c)?;
            // Free lists are mostly runs of one size: the last block (the
            // smallest, at the lowest address) is usually the answer.
            if let Some(&last) = list.last() {
                if last >= start && holds(last) {
                    return Some((c, list.len() - 1));
                }
            }
            // Blocks at least `size` long, the smallest (best fit) last.
            let end = if c == first {
                list.partition_point(|x| *x >= start)
            } else {
                list.len()
            };
            if let Some(at) = list
                .get(..end)
                .and_then(|fits| fits.iter().rposition(|x| holds(*x)))
            {
                return Some((c, at));
            }
            // The next non-empty class above `c`.
            let above = if c + 1 >= CLASSES {
                0
            } else {
                self.nonempty & (u128::MAX << (c + 1))
            };
            if above == 0 {
                return None;
            }
            c = above.trailing_zeros() as usize;
        }
    }

    /// Empties the pool, keeping its lists' capacity.
    fn clear(&mut self) {
        for list in &mut self.classes {
            list.clear();
        }
        self.nonempty = 0;
    }

    /// Takes the best-fitting free block for `size` from `blocks` (see [`Pool::find`]).
    #[inline(always)]
    fn take(&mut self, size: u64, blocks: &[Entry]) -> Option<u32> {
        let (c, at) = self.find(size, blocks)?;
        let list = self.classes.get_mut(c)?;
        // Usually the last entry: popped without a move of the rest.
        let entry = if at + 1 == list.len() {
            list.pop()?
        } else {
            list.remove(at)
        };
        let id = id_of(entry);
        if list.is_empty() {
            self.nonempty &= !(1u128 << c);
        }
        Some(id)
    }
}

/// The allocator's state: a table of blocks with neighbour links (for
/// merging) and each pool's free blocks.
#[derive(Clone, Debug, Default)]
pub struct CachingAllocator {
    blocks: Vec<Entry>,
    unused: Vec<u32>,
    small: Pool,
    large: Pool,
    reserved: u64,
}

impl CachingAllocator {
    /// Back to no segments, keeping the tables' capacity for the next run.
    pub fn clear(&mut self) {
        self.blocks.clear();
        self.unused.clear();
        self.small.clear();
        self.large.clear();
        self.reserved = 0;
    }

    /// Bytes held in segments.
    pub fn reserved(&self) -> u64 {
        self.reserved
    }

    /// The segments reserved so far (none is ever released), by size and pool:
    /// a segment is the chain of blocks from one without a predecessor.
    pub fn segments(&self) -> Segments {
        let mut stale = vec![false; self.blocks.len()];
        for &id in &self.unused {
            if let Some(s) = stale.get_mut(id as usize) {
                *s = true;
            }
        }
        let heads = self
            .blocks
            .iter()
            .zip(&stale)
            .filter(|(e, stale)| !**stale && e.prev == NONE);
        Segments::from_sizes(heads.map(|(head, _)| {
            let mut size = head.size;
            let mut next = head.next;
            while let Some(n) = self.entry(next) {
                size = size.saturating_add(n.size);
                next = n.next;
            }
            (size, head.small)
        }))
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
        if small {
            &mut self.small
        } else {
            &mut self.large
        }
    }

    fn insert_free(&mut self, id: u32) {
        let Some(e) = self.entry(id) else { return };
        self.pool(e.small).insert(key(&e), id);
        self.set(id, |e| e.free = true);
    }

    /// Allocates `size` bytes (already rounded to 512) and returns the block.
    pub fn alloc(&mut self, size: u64) -> Block {
        let size = size.max(MIN_BLOCK);
        let small = size <= SMALL_SIZE;
        let pool = if small {
            &mut self.small
        } else {
            &mut self.large
        };
        let id = match pool.take(size, &self.blocks) {
            Some(id) => id,
            None => self.reserve_segment(size, small),
        };
        let Some(found) = self.blocks.get_mut(id as usize) else {
            return Block(id);
        };
        found.free = false;
        let remaining = found.size.saturating_sub(size);
        let split = if small {
            remaining >= MIN_BLOCK
        } else {
            remaining > SMALL_SIZE
        };
        if split {
            let (addr, next) = (found.addr.saturating_add(size), found.next);
            found.size = size;
            let rest = Entry {
                addr,
                size: remaining,
                prev: id,
                next,
                free: true,
                small,
            };
            let rest_id = self.new_entry(rest);
            self.set(next, |n| n.prev = rest_id);
            self.set(id, |e| e.next = rest_id);
            self.pool(small).insert(key(&rest), rest_id);
        }
        Block(id)
    }

    /// A new segment for a request of `size` bytes that no cached block holds.
    fn reserve_segment(&mut self, size: u64, small: bool) -> u32 {
        let seg_size = if small {
            SMALL_BUFFER
        } else if size < MIN_LARGE_ALLOC {
            LARGE_BUFFER
        } else {
            size.div_ceil(ROUND_LARGE).saturating_mul(ROUND_LARGE)
        };
        let addr = self.reserved;
        self.reserved = self.reserved.saturating_add(seg_size);
        self.new_entry(Entry {
            addr,
            size: seg_size,
            prev: NONE,
            next: NONE,
            free: false,
            small,
        })
    }

    /// [`CachingAllocator::alloc`] of `size` bytes immediately followed by
    /// the block's [`CachingAllocator::free`], in one step: the pair leaves
    /// the cached blocks as they were (the split block merges back whole),
    /// except that a request no cached block holds first reserves a segment,
    /// which then stays cached, free.
    pub fn alloc_and_free(&mut self, size: u64) {
        let size = size.max(MIN_BLOCK);
        let small = size <= SMALL_SIZE;
        let pool = if small { &self.small } else { &self.large };
        if pool.find(size, &self.blocks).is_none() {
            let id = self.reserve_segment(size, small);
            self.insert_free(id);
        }
    }

    /// Returns a block to its pool, merging it with free neighbours (the
    /// merged block keeps the lowest one's id).
    pub fn free(&mut self, block: Block) {
        let CachingAllocator {
            blocks,
            unused,
            small,
            large,
            ..
        } = self;
        let id = block.0;
        let Some(&e) = blocks.get(id as usize) else {
            return;
        };
        let pool = if e.small { small } else { large };
        let (mut first, mut addr, mut size, mut next) = (id, e.addr, e.size, e.next);
        if let Some(&p) = blocks.get(e.prev as usize).filter(|p| p.free) {
            pool.remove(key_of(p.size, p.addr), e.prev);
            unused.push(id);
            (first, addr, size) = (e.prev, p.addr, p.size + size);
        }
        if let Some(&n) = blocks.get(next as usize).filter(|n| n.free) {
            pool.remove(key_of(n.size, n.addr), next);
            unused.push(next);
            (size, next) = (size + n.size, n.next);
        }
        if let Some(b) = blocks.get_mut(first as usize) {
            (b.size, b.next, b.free) = (size, next, true);
        }
        if let Some(n) = blocks.get_mut(next as usize) {
            n.prev = first;
        }
        pool.insert(key_of(size, addr), first);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_tallied_by_pool_and_whole_size_after_splits_and_merges() {
        let mut a = CachingAllocator::default();
        let x = a.alloc(512 * 1024);
        let y = a.alloc(4 << 20);
        let z = a.alloc(4 << 20);
        let big = a.alloc(3 << 30);
        a.free(y);
        a.free(x);
        a.free(z);
        a.free(big);
        let s = a.segments();
        assert_eq!((s.small, s.large), (1, 2));
        assert_eq!(s.largest, Some(crate::units::Bytes(3 << 30)));
        assert_eq!(s.over_gib, Some(1));
        assert_eq!(a.reserved(), SMALL_BUFFER + LARGE_BUFFER + (3 << 30));
    }

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
        assert_eq!(
            a.reserved(),
            LARGE_BUFFER + (102 << 20),
            "best fit reuses the freed block"
        );
    }

    #[test]
    fn alloc_and_free_leaves_the_cache_as_the_pair_does() {
        // Each request on two allocators: one runs alloc then free, the other the fused step.
        let sizes = [
            512,
            4 << 20,
            700 << 10,
            30 << 20,
            4 << 20,
            512 << 10,
            90 << 20,
            3 << 20,
            1 << 20,
            12 << 20,
        ];
        let (mut pair, mut fused) = (CachingAllocator::default(), CachingAllocator::default());
        let mut held = Vec::new();
        for (i, &size) in sizes.iter().cycle().take(60).enumerate() {
            if i % 3 == 0 {
                // Keep some allocations live so that the cached blocks fragment.
                held.push((pair.alloc(size), fused.alloc(size)));
                continue;
            }
            if i % 7 == 0 {
                if let Some((a, b)) = held.pop() {
                    pair.free(a);
                    fused.free(b);
                }
            }
            let b = pair.alloc(size);
            pair.free(b);
            fused.alloc_and_free(size);
            assert_eq!(pair.reserved(), fused.reserved(), "request {i}");
            let free = |a: &CachingAllocator| {
                let mut blocks: Vec<(u64, u64)> = a
                    .blocks
                    .iter()
                    .enumerate()
                    .filter(|(id, e)| e.free && !a.unused.contains(&(*id as u32)))
                    .map(|(_, e)| (e.addr, e.size))
                    .collect();
                blocks.sort_unstable();
                blocks
            };
            assert_eq!(free(&pair), free(&fused), "request {i}");
        }
    }

    /// The pool's answer is the best fit a scan of every free block finds:
    /// the smallest block that holds the request, the lowest address among
    /// equals (PyTorch's `BlockComparator`), over random allocations and frees.
    #[test]
    fn every_allocation_takes_the_best_fitting_free_block() {
        let mut a = CachingAllocator::default();
        let mut held: Vec<Block> = Vec::new();
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        // Repeated sizes (as the same layer's tensors are) and a spread of others, in both pools.
        let sizes = [
            512,
            4 << 10,
            256 << 10,
            1 << 20,
            3 << 20,
            4 << 20,
            12 << 20,
            40 << 20,
        ];
        for step in 0..20_000 {
            if next() % 5 < 2 && !held.is_empty() {
                let b = held.swap_remove((next() % held.len() as u64) as usize);
                a.free(b);
                continue;
            }
            let pick = (next() % sizes.len() as u64) as usize;
            let size = sizes.get(pick).copied().unwrap_or(512) + 512 * (next() % 4);
            let small = size <= SMALL_SIZE;
            let best = a
                .blocks
                .iter()
                .enumerate()
                .filter(|(id, e)| {
                    e.free
                        && e.small == small
                        && e.size >= size
                        && !a.unused.contains(&(*id as u32))
                })
                .map(|(_, e)| (e.size, e.addr))
                .min();
            let b = a.alloc(size);
            let got = a.entry(b.0).map(|e| e.addr);
            if let Some((_, addr)) = best {
                assert_eq!(got, Some(addr), "step {step}: request {size}");
            }
            held.push(b);
        }
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
