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
    /// The allocator's count of free-block searches when the block last
    /// became free (its age for garbage collection, PyTorch's `gc_count_base`).
    since: u64,
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

pub use crate::overheads::AllocatorSettings as Settings;

/// Where each pool's expandable segment starts in the model address space
/// (far apart, below the 2 TiB the pool keys hold).
const EXPANDABLE_BASE: PerPool<u64> = PerPool {
    small: 1 << 40,
    large: 0,
};

/// Page size of the expandable segments of each pool (`ExpandableSegment::segment_size_`).
const EXPANDABLE_PAGE: PerPool<u64> = PerPool {
    small: SMALL_BUFFER,
    large: LARGE_BUFFER,
};

/// The allocator's state: a table of blocks with neighbour links (for
/// merging) and each pool's free blocks.
#[derive(Clone, Debug, Default)]
pub struct CachingAllocator {
    blocks: Vec<Entry>,
    unused: Vec<u32>,
    small: Pool,
    large: Pool,
    reserved: u64,
    /// The highest `reserved` so far.
    peak: u64,
    /// Bytes of the blocks in use (`reserved` less this is cached).
    in_use: u64,
    /// Where the next `cudaMalloc`'d segment starts (addresses only grow).
    next_addr: u64,
    /// Whether segments were returned to the driver (under the limit or by
    /// garbage collection): the state then depends on the limit.
    released: bool,
    /// Free-block searches so far (ages blocks for garbage collection).
    searches: u64,
    /// Each pool's expandable segment (small, large): its last block and its end.
    tail: PerPool<u32>,
    end: PerPool<u64>,
    settings: Settings,
}

/// One value for each pool.
#[derive(Clone, Copy, Debug, Default)]
struct PerPool<T> {
    small: T,
    large: T,
}

impl<T: Copy> PerPool<T> {
    fn get(&self, small: bool) -> T {
        if small { self.small } else { self.large }
    }

    fn set(&mut self, small: bool, v: T) {
        if small {
            self.small = v;
        } else {
            self.large = v;
        }
    }
}

impl CachingAllocator {
    /// An empty allocator with `settings`.
    pub fn new(settings: Settings) -> CachingAllocator {
        let mut a = CachingAllocator::default();
        a.reset(settings);
        a
    }

    /// Back to no segments under `settings`, keeping the tables' capacity for the next run.
    pub fn reset(&mut self, settings: Settings) {
        self.blocks.clear();
        self.unused.clear();
        self.small.clear();
        self.large.clear();
        self.reserved = 0;
        self.peak = 0;
        self.in_use = 0;
        self.next_addr = 0;
        self.released = false;
        self.searches = 0;
        self.tail = PerPool {
            small: NONE,
            large: NONE,
        };
        self.end = EXPANDABLE_BASE;
        self.settings = settings;
    }

    /// Bytes held in segments now.
    pub fn reserved(&self) -> u64 {
        self.reserved
    }

    /// The segments held now, by size and pool: a segment is the chain of
    /// blocks from one without a predecessor (a released segment's blocks
    /// are unused).
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

    /// The most bytes held in segments at any time.
    pub fn peak(&self) -> u64 {
        self.peak
    }

    /// The settings in force.
    pub fn settings(&self) -> Settings {
        self.settings
    }

    /// Raises the limit (a state reached without returning any segment
    /// is the same under any limit it stayed within).
    pub fn set_limit(&mut self, limit: u64) {
        self.settings.limit = limit;
    }

    /// Whether any segment was returned to the driver.
    pub fn released(&self) -> bool {
        self.released
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
        let since = self.searches;
        self.pool(e.small).insert(key(&e), id);
        self.set(id, |e| {
            e.free = true;
            e.since = since;
        });
    }

    fn grow(&mut self, bytes: u64) {
        self.reserved = self.reserved.saturating_add(bytes);
        self.peak = self.peak.max(self.reserved);
    }

    /// Whether a cached block of `block` bytes may serve a request of `size`
    /// (`get_free_block`'s rules for oversize blocks).
    fn serves(&self, block: u64, size: u64) -> bool {
        let max = self.settings.max_split;
        let oversize_for_small = size < max && block >= max;
        let too_big = size >= max && block >= size.saturating_add(LARGE_BUFFER);
        !(oversize_for_small || too_big)
    }

    /// Takes the cached block that serves `size`, if any: the best fit
    /// (`get_free_block`), except that an expandable segment's last block,
    /// which can grow, goes only when no other block holds the request.
    fn take_cached(&mut self, size: u64, small: bool) -> Option<u32> {
        self.searches += 1;
        if !self.settings.expandable && self.settings.max_split == u64::MAX {
            // Plain best fit (the default), in one search.
            let (pool, blocks) = if small {
                (&mut self.small, &self.blocks)
            } else {
                (&mut self.large, &self.blocks)
            };
            return pool.take(size, blocks);
        }
        let tail = self.tail.get(small);
        let tail = self
            .entry(tail)
            .filter(|t| self.settings.expandable && t.free)
            .map(|t| (tail, t));
        if let Some((id, t)) = tail {
            self.pool(small).remove(key(&t), id);
        }
        let found = {
            let (pool, blocks) = if small {
                (&self.small, &self.blocks)
            } else {
                (&self.large, &self.blocks)
            };
            pool.find(size, blocks)
                .and_then(|(c, at)| pool.classes.get(c)?.get(at).copied())
                .map(id_of)
        };
        let found = found.filter(|&id| self.entry(id).is_some_and(|b| self.serves(b.size, size)));
        if let Some(id) = found {
            if let Some(b) = self.entry(id) {
                self.pool(small).remove(key(&b), id);
            }
        }
        match (found, tail) {
            (Some(id), Some((tid, t))) => {
                self.pool(small).insert(key(&t), tid);
                Some(id)
            }
            (Some(id), None) => Some(id),
            (None, Some((tid, t))) if t.size >= size && self.serves(t.size, size) => Some(tid),
            (None, Some((tid, t))) => {
                self.pool(small).insert(key(&t), tid);
                None
            }
            (None, None) => None,
        }
    }

    /// Allocates `size` bytes (already rounded to 512) and returns the block;
    /// `None` when the request fails under the limit even after the cached
    /// segments are returned to the driver (an out-of-memory error).
    pub fn alloc(&mut self, size: u64) -> Option<Block> {
        let size = size.max(MIN_BLOCK);
        let small = size <= SMALL_SIZE;
        let id = match self.take_cached(size, small) {
            Some(id) => id,
            None => self.new_memory(size, small)?,
        };
        let expandable = self.settings.expandable;
        let max_split = self.settings.max_split;
        let is_tail = self.tail.get(small) == id;
        let found = self.blocks.get_mut(id as usize)?;
        found.free = false;
        let remaining = found.size.saturating_sub(size);
        // `should_split`.
        let split = if small || expandable {
            remaining >= MIN_BLOCK
        } else {
            size < max_split && remaining > SMALL_SIZE
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
                since: self.searches,
            };
            let rest_id = self.new_entry(rest);
            self.set(next, |n| n.prev = rest_id);
            self.set(id, |e| e.next = rest_id);
            self.pool(small).insert(key(&rest), rest_id);
            if is_tail {
                self.tail.set(small, rest_id);
            }
        }
        let taken = self.entry(id).map_or(0, |e| e.size);
        self.in_use = self.in_use.saturating_add(taken);
        Some(Block(id))
    }

    /// Memory for a request no cached block serves, as `malloc` gets it:
    /// garbage collection when set, `cudaMalloc`; when that fails, the
    /// oversize cached blocks (`release_available_cached_blocks`), then
    /// every cached segment (`release_cached_blocks`), retrying after each.
    fn new_memory(&mut self, size: u64, small: bool) -> Option<u32> {
        if let (Some(t), true) = (self.settings.gc_threshold, self.settings.limit != u64::MAX) {
            let at = (t * self.settings.limit as f64) as u64;
            if self.reserved > at {
                self.collect_garbage(self.reserved - at);
            }
        }
        if let Some(id) = self.reserve(size, small) {
            return Some(id);
        }
        // Even with every cached byte returned the request would not fit:
        // out of memory without the search.
        if self.in_use.saturating_add(size) > self.settings.limit {
            return None;
        }
        if self.settings.max_split != u64::MAX && self.release_oversize(size, small) {
            if let Some(id) = self.reserve(size, small) {
                return Some(id);
            }
        }
        if self.release_cached() {
            return self.reserve(size, small);
        }
        None
    }

    /// `cudaMalloc` of a segment for `size` bytes, or the growth of the
    /// pool's expandable segment; `None` past the limit. The block returned
    /// is in no pool.
    fn reserve(&mut self, size: u64, small: bool) -> Option<u32> {
        if self.settings.expandable {
            return self.expand(size, small);
        }
        let seg_size = if small {
            SMALL_BUFFER
        } else if size < MIN_LARGE_ALLOC {
            LARGE_BUFFER
        } else {
            size.div_ceil(ROUND_LARGE).saturating_mul(ROUND_LARGE)
        };
        if self.reserved.saturating_add(seg_size) > self.settings.limit {
            return None;
        }
        let addr = self.next_addr;
        self.next_addr = self.next_addr.saturating_add(seg_size);
        self.grow(seg_size);
        Some(self.new_entry(Entry {
            addr,
            size: seg_size,
            prev: NONE,
            next: NONE,
            free: false,
            small,
            since: self.searches,
        }))
    }

    /// Maps pages at the end of the pool's expandable segment so that its
    /// last block, if free, grown by them holds `size` (`try_allocate_expandable_block`).
    fn expand(&mut self, size: u64, small: bool) -> Option<u32> {
        let page = EXPANDABLE_PAGE.get(small);
        let last = self.tail.get(small);
        let tail = self.entry(last).filter(|t| t.free);
        let need = size.saturating_sub(tail.map_or(0, |t| t.size));
        let add = need.div_ceil(page).saturating_mul(page);
        if self.reserved.saturating_add(add) > self.settings.limit {
            return None;
        }
        self.grow(add);
        let end = self.end.get(small);
        self.end.set(small, end.saturating_add(add));
        match tail {
            Some(t) => {
                self.pool(small).remove(key(&t), last);
                self.set(last, |e| e.size += add);
                Some(last)
            }
            None => {
                let id = self.new_entry(Entry {
                    addr: end,
                    size: add,
                    prev: last,
                    next: NONE,
                    free: false,
                    small,
                    since: self.searches,
                });
                self.set(last, |e| e.next = id);
                self.tail.set(small, id);
                Some(id)
            }
        }
    }

    /// Returns a whole cached segment (a free block with no neighbours) to the driver.
    fn release(&mut self, id: u32) {
        let Some(e) = self.entry(id) else { return };
        self.pool(e.small).remove(key(&e), id);
        self.reserved = self.reserved.saturating_sub(e.size);
        self.unused.push(id);
        self.set(id, |e| e.free = false);
        self.released = true;
    }

    /// Whole cached segments of the large pool (or both), as `(id, entry)`.
    fn whole_free(&self, large_only: bool) -> Vec<(u32, Entry)> {
        self.blocks
            .iter()
            .enumerate()
            .filter(|(id, e)| {
                e.free
                    && e.prev == NONE
                    && e.next == NONE
                    && !(large_only && e.small)
                    && *id != NONE as usize
            })
            .filter_map(|(id, e)| Some((u32::try_from(id).ok()?, *e)))
            .collect()
    }

    /// `release_available_cached_blocks`: the cached oversize blocks of the
    /// request's pool, the smallest that covers it or else from the largest
    /// down until as many bytes are freed.
    fn release_oversize(&mut self, size: u64, small: bool) -> bool {
        let want = size.max(self.settings.max_split);
        let mut oversize: Vec<(u32, Entry)> = self
            .whole_free(false)
            .into_iter()
            .filter(|(_, e)| e.small == small && e.size >= self.settings.max_split)
            .collect();
        oversize.sort_by_key(|(id, e)| (e.size, e.addr, *id));
        if let Some(&(id, _)) = oversize.iter().find(|(_, e)| e.size >= want) {
            self.release(id);
            return true;
        }
        let mut freed = 0;
        for &(id, e) in oversize.iter().rev() {
            if freed >= want {
                break;
            }
            self.release(id);
            freed += e.size;
        }
        freed >= want
    }

    /// `release_cached_blocks`: every cached segment of both pools. The free
    /// pages of expandable segments are not unmapped in this model (PyTorch
    /// does), so with them it reads high near the limit.
    fn release_cached(&mut self) -> bool {
        let whole = self.whole_free(false);
        for &(id, _) in &whole {
            self.release(id);
        }
        !whole.is_empty()
    }

    /// `garbage_collect_cached_blocks`: whole cached segments of the large
    /// pool, those idle at least as long as the average first, until
    /// `target` bytes are returned.
    fn collect_garbage(&mut self, target: u64) {
        let mut freeable = self.whole_free(true);
        let mut reclaimed = 0;
        while reclaimed < target && !freeable.is_empty() {
            let age = |e: &Entry| self.searches.saturating_sub(e.since);
            let average =
                freeable.iter().map(|(_, e)| age(e)).sum::<u64>() as f64 / freeable.len() as f64;
            let (old, young): (Vec<_>, Vec<_>) = freeable
                .into_iter()
                .partition(|(_, e)| age(e) as f64 >= average);
            if old.is_empty() {
                break;
            }
            for (id, e) in old {
                self.release(id);
                reclaimed += e.size;
            }
            freeable = young;
        }
    }

    /// [`CachingAllocator::alloc`] of `size` bytes immediately followed by
    /// the block's [`CachingAllocator::free`], in one step: the pair leaves
    /// the cached blocks as they were (the split block merges back whole),
    /// except that a request no cached block holds first reserves a segment,
    /// which then stays cached, free. `None`: out of memory.
    pub fn alloc_and_free(&mut self, size: u64) -> Option<()> {
        let size = size.max(MIN_BLOCK);
        let small = size <= SMALL_SIZE;
        if self.settings.expandable || self.settings.max_split != u64::MAX {
            // The simple path below assumes plain best fit.
            let block = self.alloc(size)?;
            self.free(block);
            return Some(());
        }
        let pool = if small { &self.small } else { &self.large };
        if pool.find(size, &self.blocks).is_none() {
            let id = self.new_memory(size, small)?;
            self.insert_free(id);
        }
        Some(())
    }

    /// Returns a block to its pool, merging it with free neighbours (the
    /// merged block keeps the lowest one's id).
    pub fn free(&mut self, block: Block) {
        let since = self.searches;
        let expandable = self.settings.expandable;
        let CachingAllocator {
            blocks,
            unused,
            small,
            large,
            tail,
            in_use,
            ..
        } = self;
        let id = block.0;
        let Some(&e) = blocks.get(id as usize) else {
            return;
        };
        *in_use = in_use.saturating_sub(e.size);
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
            if let Some(dead) = blocks.get_mut(next as usize) {
                dead.free = false;
            }
            (size, next) = (size + n.size, n.next);
        }
        if first != id {
            if let Some(dead) = blocks.get_mut(id as usize) {
                dead.free = false;
            }
        }
        if let Some(b) = blocks.get_mut(first as usize) {
            (b.size, b.next, b.free, b.since) = (size, next, true, since);
        }
        if let Some(n) = blocks.get_mut(next as usize) {
            n.prev = first;
        }
        if expandable && next == NONE {
            tail.set(e.small, first);
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
        let x = a.alloc(512 * 1024).unwrap();
        let y = a.alloc(4 << 20).unwrap();
        let z = a.alloc(4 << 20).unwrap();
        let big = a.alloc(3 << 30).unwrap();
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
        let blocks: Vec<Block> = (0..4).map(|_| a.alloc(512 * 1024).unwrap()).collect();
        assert_eq!(a.reserved(), SMALL_BUFFER);
        a.alloc(512).unwrap();
        assert_eq!(a.reserved(), 2 * SMALL_BUFFER);
        for b in blocks {
            a.free(b);
        }
        // The freed space is reused, not reserved again.
        a.alloc(1 << 20).unwrap();
        assert_eq!(a.reserved(), 2 * SMALL_BUFFER);
    }

    #[test]
    fn mid_sized_requests_get_twenty_mib_segments_and_big_ones_their_own() {
        let mut a = CachingAllocator::default();
        let x = a.alloc(4 << 20).unwrap();
        assert_eq!(a.reserved(), LARGE_BUFFER);
        let _y = a.alloc(4 << 20).unwrap();
        assert_eq!(a.reserved(), LARGE_BUFFER, "split from the same segment");
        let _big = a.alloc((100 << 20) + 512).unwrap();
        assert_eq!(a.reserved(), LARGE_BUFFER + (102 << 20));
        a.free(x);
        let _z = a.alloc(3 << 20).unwrap();
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
                held.push((pair.alloc(size).unwrap(), fused.alloc(size).unwrap()));
                continue;
            }
            if i % 7 == 0 {
                if let Some((a, b)) = held.pop() {
                    pair.free(a);
                    fused.free(b);
                }
            }
            let b = pair.alloc(size).unwrap();
            pair.free(b);
            fused.alloc_and_free(size).unwrap();
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
            let b = a.alloc(size).unwrap();
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
        let first = a.alloc(40 << 20).unwrap();
        let _second = a.alloc(40 << 20).unwrap();
        a.free(first);
        a.alloc(60 << 20).unwrap();
        assert_eq!(a.reserved(), (40 + 40 + 60) << 20);
    }

    const MB: u64 = 1 << 20;

    fn with(settings: Settings) -> CachingAllocator {
        CachingAllocator::new(settings)
    }

    #[test]
    fn blocks_above_max_split_size_are_not_split_and_serve_only_near_sizes() {
        let mut a = with(Settings {
            max_split: 128 * MB,
            ..Settings::default()
        });
        let big = a.alloc(200 * MB).unwrap();
        a.free(big);
        // A 50 MiB request may not take the cached 200 MiB block.
        let small = a.alloc(50 * MB).unwrap();
        assert_eq!(a.reserved(), 250 * MB);
        a.free(small);
        // 150 MiB is 50 MiB short of it: more than kLargeBuffer, so a new segment.
        let _x = a.alloc(150 * MB).unwrap();
        assert_eq!(a.reserved(), 400 * MB);
        // 190 MiB is within 20 MiB of it: served by it, whole (not split).
        let _y = a.alloc(190 * MB).unwrap();
        assert_eq!(a.reserved(), 400 * MB);
        // Without the setting, the 50 MiB request splits the cached block.
        let mut plain = CachingAllocator::default();
        let big = plain.alloc(200 * MB).unwrap();
        plain.free(big);
        plain.alloc(50 * MB).unwrap();
        assert_eq!(plain.reserved(), 200 * MB);
    }

    #[test]
    fn an_expandable_segment_grows_its_free_end_by_pages() {
        let mut a = with(Settings {
            expandable: true,
            ..Settings::default()
        });
        let _first = a.alloc(40 * MB).unwrap();
        let second = a.alloc(40 * MB).unwrap();
        assert_eq!(a.reserved(), 80 * MB);
        a.free(second);
        // The free 40 MiB at the end grows by one 20 MiB page to hold 60 MiB.
        let _third = a.alloc(60 * MB).unwrap();
        assert_eq!(a.reserved(), 100 * MB);
        // Separate segments need a new 60 MiB one.
        let mut plain = CachingAllocator::default();
        let _f = plain.alloc(40 * MB).unwrap();
        let s2 = plain.alloc(40 * MB).unwrap();
        plain.free(s2);
        plain.alloc(60 * MB).unwrap();
        assert_eq!(plain.reserved(), 140 * MB);
        // Small requests map 2 MiB pages of their own segment.
        a.alloc(512).unwrap();
        assert_eq!(a.reserved(), 102 * MB);
    }

    #[test]
    fn an_expandable_segment_fills_an_inner_hole_before_growing() {
        let mut a = with(Settings {
            expandable: true,
            ..Settings::default()
        });
        let first = a.alloc(40 * MB).unwrap();
        let _second = a.alloc(40 * MB).unwrap();
        a.free(first);
        a.alloc(30 * MB).unwrap();
        assert_eq!(a.reserved(), 80 * MB);
    }

    #[test]
    fn at_the_limit_cached_segments_go_back_to_the_driver_before_failing() {
        let limit = Settings {
            limit: 100 * MB,
            ..Settings::default()
        };
        let mut a = with(limit);
        let x = a.alloc(60 * MB).unwrap();
        a.free(x);
        // 60 cached + 80 new would pass the limit: the cached segment is returned first.
        a.alloc(80 * MB).unwrap();
        assert_eq!((a.reserved(), a.peak()), (80 * MB, 80 * MB));
        assert!(a.released());
        // Live memory cannot be returned: out of memory.
        let mut b = with(limit);
        let _live = b.alloc(60 * MB).unwrap();
        assert!(b.alloc(60 * MB).is_none());
        // Without a limit both stay cached.
        let mut c = CachingAllocator::default();
        let x = c.alloc(60 * MB).unwrap();
        c.free(x);
        c.alloc(80 * MB).unwrap();
        assert_eq!(c.reserved(), 140 * MB);
    }

    #[test]
    fn the_smallest_oversize_block_that_covers_the_request_is_returned_first() {
        let mut a = with(Settings {
            max_split: 64 * MB,
            limit: 300 * MB,
            ..Settings::default()
        });
        let held: Vec<Block> = [30, 100, 150]
            .iter()
            .map(|&m| a.alloc(m * MB).unwrap())
            .collect();
        held.into_iter().for_each(|b| a.free(b));
        // 120 MiB: the cached 150 is 30 MiB too big to serve it, and 280 + 120
        // passes 300, so the 150 MiB block goes back; the 30 and 100 stay.
        a.alloc(120 * MB).unwrap();
        assert_eq!(a.reserved(), 250 * MB);
        // When the oversize blocks together fall short, every cached segment goes.
        let mut b = with(Settings {
            max_split: 64 * MB,
            limit: 300 * MB,
            ..Settings::default()
        });
        let held: Vec<Block> = [30, 100]
            .iter()
            .map(|&m| b.alloc(m * MB).unwrap())
            .collect();
        held.into_iter().for_each(|x| b.free(x));
        b.alloc(200 * MB).unwrap();
        assert_eq!(b.reserved(), 200 * MB);
    }

    #[test]
    fn garbage_collection_returns_idle_segments_past_its_threshold() {
        let settings = Settings {
            limit: 1000 * MB,
            gc_threshold: Some(0.1),
            ..Settings::default()
        };
        let mut a = with(settings);
        let x = a.alloc(120 * MB).unwrap();
        a.free(x);
        // 120 MiB reserved is past 10 % of 1000 MiB: the idle segment goes first.
        a.alloc(130 * MB).unwrap();
        assert_eq!(a.reserved(), 130 * MB);
        let mut b = with(Settings {
            gc_threshold: None,
            ..settings
        });
        let x = b.alloc(120 * MB).unwrap();
        b.free(x);
        b.alloc(130 * MB).unwrap();
        assert_eq!(b.reserved(), 250 * MB);
    }
}
