//! The allocation and free paths of `DeviceCachingAllocator`, one stream, one device.
//!
//! `alloc` follows `malloc` step by step: round the request, pick the pool, look for a
//! cached block (`get_free_block`), run the garbage collector if configured, then
//! `cudaMalloc` a new segment (`alloc_block`); when that fails, free cached oversize
//! blocks and retry, then free every unsplit cached segment and retry once more
//! (counted as a "cudaMalloc retry"), and only then raise the OOM. `free` returns the
//! block to its pool and merges it with free neighbours. Expandable segments and the
//! release paths live in `expandable.rs` and `release.rs`; they are `impl` blocks of the
//! same type.
//!
//! Things PyTorch does that are not modelled, because a single-stream trace of sizes
//! cannot exercise them: multiple streams (blocks are only reused on their own stream),
//! `record_stream` events, CUDA graph private pools, free-memory callbacks, IPC.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use thiserror::Error;

use crate::blocks::{Arena, Block, BlockId, BlockPool, Segment};
use crate::config::{Config, ConfigError};
use crate::oom::Oom;
use crate::sizes::{LARGE_BUFFER, MAX_BYTES, MIN_BLOCK_SIZE, Pool, SMALL_SIZE};
use crate::sizes::{allocation_size, round_size};

/// Where an allocation landed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BlockRef {
    /// The caller's id.
    pub id: u64,
    /// Number of the segment holding it (segments are numbered in creation order).
    pub segment: u64,
    /// Offset of the block in its segment.
    pub offset: u64,
    /// Bytes the block occupies (the rounded request).
    pub size: u64,
    /// Bytes the caller asked for.
    pub requested: u64,
    pub pool: Pool,
}

/// Why `alloc` did not return a block.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum AllocError {
    #[error("{0}")]
    OutOfMemory(Box<Oom>),
    #[error("el id {0} ya está reservado y no se ha liberado")]
    DuplicateId(u64),
    /// PyTorch does not call the allocator for empty tensors.
    #[error("el id {0} pide 0 bytes: PyTorch no reserva nada para un tensor vacío")]
    Empty(u64),
    #[error("el id {id} pide {bytes} bytes, más de 1 PiB")]
    TooLarge { id: u64, bytes: u64 },
}

/// `free` of an id that is not allocated.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("el id {0} no está reservado")]
pub struct UnknownId(pub u64);

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Counters {
    pub allocated: u64,
    pub requested: u64,
    pub reserved: u64,
    pub peak_allocated: u64,
    pub peak_requested: u64,
    pub peak_reserved: u64,
    pub alloc_retries: u64,
    pub ooms: u64,
    pub device_allocs: u64,
    pub device_frees: u64,
}

/// A simulated `CUDACachingAllocator` on one device with one stream.
#[derive(Clone, Debug)]
pub struct Allocator {
    pub(crate) config: Config,
    pub(crate) arena: Arena,
    pub(crate) small: BlockPool,
    pub(crate) large: BlockPool,
    pub(crate) segments: BTreeMap<u64, Segment>,
    next_segment: u64,
    pub(crate) live: HashMap<u64, BlockId>,
    pub(crate) c: Counters,
}

impl Allocator {
    /// An empty allocator (nothing reserved yet), as at the start of a process.
    pub fn new(config: Config) -> Result<Allocator, ConfigError> {
        config.validate()?;
        Ok(Allocator {
            config,
            arena: Arena::default(),
            small: BlockPool::default(),
            large: BlockPool::default(),
            segments: BTreeMap::new(),
            next_segment: 0,
            live: HashMap::new(),
            c: Counters::default(),
        })
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Bytes currently allocated (rounded block sizes, `memory_allocated()`).
    pub fn allocated(&self) -> u64 {
        self.c.allocated
    }

    /// Bytes currently reserved from the device (`memory_reserved()`).
    pub fn reserved(&self) -> u64 {
        self.c.reserved
    }

    /// Size of the largest free cached block, in either pool.
    pub fn largest_free_block(&self) -> u64 {
        let last = |p: &BlockPool| p.free.last_key_value().map_or(0, |(k, _)| k.0);
        last(&self.small).max(last(&self.large))
    }

    /// The block holding `id`, if it is allocated.
    pub fn block(&self, id: u64) -> Option<BlockRef> {
        self.live.get(&id).map(|&b| self.block_ref(b))
    }

    /// Allocates `bytes` for `id` (`torch.empty(bytes, dtype=torch.uint8, device="cuda")`).
    pub fn alloc(&mut self, id: u64, bytes: u64) -> Result<BlockRef, AllocError> {
        if self.live.contains_key(&id) {
            return Err(AllocError::DuplicateId(id));
        }
        if bytes == 0 {
            return Err(AllocError::Empty(id));
        }
        if bytes > MAX_BYTES {
            return Err(AllocError::TooLarge { id, bytes });
        }
        let size = round_size(bytes, self.config.divisions());
        let pool = Pool::for_size(size);
        let alloc_size = allocation_size(size);

        let mut found = self.get_free_block(pool, size);
        if found.is_none() {
            if self.config.garbage_collection_threshold.is_some() {
                self.garbage_collect_cached_blocks();
            }
            found = self.alloc_block(pool, size, alloc_size, false);
            if found.is_none() && self.release_available_cached_blocks(pool, size) {
                found = self.alloc_block(pool, size, alloc_size, false);
            }
            if found.is_none() {
                self.release_cached_blocks();
                found = self.alloc_block(pool, size, alloc_size, true);
            }
        }
        let Some(block) = found else {
            self.c.ooms += 1;
            return Err(AllocError::OutOfMemory(Box::new(Oom {
                id,
                requested_bytes: bytes,
                rounded_bytes: size,
                alloc_size_bytes: alloc_size,
                capacity_bytes: self.config.capacity,
                free_bytes: self.config.capacity.saturating_sub(self.c.reserved),
                allocated_bytes: self.c.allocated,
                reserved_bytes: self.c.reserved,
            })));
        };
        let split = self.should_split(block, size);
        Ok(self.alloc_found_block(block, id, size, bytes, split))
    }

    /// Frees `id` (the tensor's last reference dies). The block goes back to the cache;
    /// nothing is returned to the device.
    pub fn free(&mut self, id: u64) -> Result<(), UnknownId> {
        let Some(b) = self.live.remove(&id) else {
            return Err(UnknownId(id));
        };
        let block = &mut self.arena[b];
        block.allocated = false;
        block.request = None;
        let (size, requested) = (block.size, std::mem::take(&mut block.requested));
        self.c.allocated -= size;
        self.c.requested -= requested;
        self.free_block(b);
        Ok(())
    }

    /// `torch.cuda.empty_cache()`: returns every unsplit cached segment (and every
    /// free page of an expandable segment) to the device.
    pub fn empty_cache(&mut self) {
        self.release_cached_blocks();
    }

    // ----- the allocation path -------------------------------------------------------

    /// `get_free_block`: the smallest cached block of at least `size` bytes, subject to
    /// the `max_split_size` rules.
    fn get_free_block(&mut self, pool: Pool, size: u64) -> Option<BlockId> {
        if self.config.garbage_collection_threshold.is_some() {
            self.pool_mut(pool).free_calls += 1;
        }
        let mut candidates = self.pool(pool).free.range((size, 0, 0)..);
        let (_, &first) = candidates.next()?;
        let mut id = first;
        if self.arena[id].expandable && self.config.expandable_segments {
            // A block followed by unmapped space can grow: for best fit its size is what
            // it can grow to, so a larger block that cannot grow may fit better.
            for (_, &next) in candidates {
                if self.expandable_size(next) < self.expandable_size(id) {
                    id = next;
                } else {
                    break;
                }
            }
        }
        let max_split = self.config.max_split();
        let found = self.arena[id].size;
        // An oversize block is never handed to a request below max_split_size ...
        if size < max_split && found >= max_split {
            return None;
        }
        // ... and serves a large request only if it wastes less than 20 MiB.
        if size >= max_split && found >= size.saturating_add(LARGE_BUFFER) {
            return None;
        }
        self.remove_free(id);
        Some(id)
    }

    fn expandable_size(&self, b: BlockId) -> u64 {
        let block = &self.arena[b];
        let tail = block
            .next
            .filter(|&n| !self.arena[n].mapped)
            .map_or(0, |n| self.arena[n].size);
        block.size + tail
    }

    /// `alloc_block`: a new segment from the device, or more pages of an expandable one.
    fn alloc_block(
        &mut self,
        pool: Pool,
        size: u64,
        alloc_size: u64,
        is_retry: bool,
    ) -> Option<BlockId> {
        if is_retry {
            self.c.alloc_retries += 1;
        }
        // With garbage collection the capacity stands for set_per_process_memory_fraction,
        // which PyTorch checks against the full segment size before anything else.
        if self.config.garbage_collection_threshold.is_some()
            && self.c.reserved + alloc_size > self.config.capacity
        {
            return None;
        }
        if self.config.expandable_segments {
            return self.try_allocate_expandable_block(pool, size);
        }
        if self.c.reserved + alloc_size > self.config.capacity {
            return None;
        }
        let segment = self.new_segment_number();
        let id = self
            .arena
            .insert(Block::new(pool, segment, 0, alloc_size, false));
        self.segments.insert(
            segment,
            Segment {
                pool,
                expandable: false,
                size: alloc_size,
                reserved: alloc_size,
                head: id,
            },
        );
        self.add_reserved(alloc_size);
        self.c.device_allocs += 1;
        Some(id)
    }

    /// `should_split`: the small pool and expandable segments split whenever at least
    /// 512 B would remain; the large pool only when more than 1 MiB would remain and the
    /// request is below `max_split_size`.
    fn should_split(&self, block: BlockId, size: u64) -> bool {
        let b = &self.arena[block];
        let remaining = b.size - size;
        if b.pool == Pool::Small || self.config.expandable_segments {
            remaining >= MIN_BLOCK_SIZE
        } else {
            size < self.config.max_split() && remaining > SMALL_SIZE
        }
    }

    /// `alloc_found_block`: carves `size` bytes off the front of `block`; the rest
    /// goes back to the pool.
    fn alloc_found_block(
        &mut self,
        block: BlockId,
        id: u64,
        size: u64,
        requested: u64,
        split: bool,
    ) -> BlockRef {
        let mut taken = block;
        if split {
            let rest = &self.arena[block];
            let mut front = Block::new(rest.pool, rest.segment, rest.offset, size, rest.expandable);
            front.prev = rest.prev;
            front.next = Some(block);
            let front = self.arena.insert(front);
            self.link_before(front, block);
            let rest = &mut self.arena[block];
            rest.offset += size;
            rest.size -= size;
            self.insert_free(block);
            taken = front;
        }
        let b = &mut self.arena[taken];
        b.allocated = true;
        b.requested = requested;
        b.request = Some(id);
        let size = b.size;
        self.live.insert(id, taken);
        self.c.allocated += size;
        self.c.requested += requested;
        self.c.peak_allocated = self.c.peak_allocated.max(self.c.allocated);
        self.c.peak_requested = self.c.peak_requested.max(self.c.requested);
        self.block_ref(taken)
    }

    // ----- block bookkeeping shared by every path ------------------------------------

    /// `free_block`: merge with free neighbours, then cache.
    pub(crate) fn free_block(&mut self, b: BlockId) {
        let (prev, next) = (self.arena[b].prev, self.arena[b].next);
        self.try_merge(b, prev);
        self.try_merge(b, next);
        self.insert_free(b);
    }

    /// `try_merge_blocks`: `dst` absorbs its neighbour `src` when `src` is free and
    /// equally mapped. `dst` must not be in any set. Returns the bytes absorbed.
    pub(crate) fn try_merge(&mut self, dst: BlockId, src: Option<BlockId>) -> u64 {
        let Some(src) = src else { return 0 };
        let s = self.arena[src].clone();
        if s.allocated || s.mapped != self.arena[dst].mapped {
            return 0;
        }
        if s.mapped {
            self.remove_free(src);
        } else {
            self.remove_unmapped(src);
        }
        if self.arena[dst].prev == Some(src) {
            let d = &mut self.arena[dst];
            d.offset = s.offset;
            d.prev = s.prev;
            match s.prev {
                Some(p) => self.arena[p].next = Some(dst),
                None => self.set_head(s.segment, dst),
            }
        } else {
            self.arena[dst].next = s.next;
            if let Some(n) = s.next {
                self.arena[n].prev = Some(dst);
            }
        }
        self.arena[dst].size += s.size;
        self.arena.remove(src);
        s.size
    }

    /// Completes the links of `new`, already pointing at its neighbours, placed right
    /// before `block`.
    pub(crate) fn link_before(&mut self, new: BlockId, block: BlockId) {
        match self.arena[new].prev {
            Some(p) => self.arena[p].next = Some(new),
            None => {
                let segment = self.arena[new].segment;
                self.set_head(segment, new);
            }
        }
        self.arena[block].prev = Some(new);
    }

    /// Completes the links of `new`, already pointing at its neighbours, placed right
    /// after `block`.
    pub(crate) fn link_after(&mut self, new: BlockId, block: BlockId) {
        if let Some(n) = self.arena[new].next {
            self.arena[n].prev = Some(new);
        }
        self.arena[block].next = Some(new);
    }

    fn set_head(&mut self, segment: u64, head: BlockId) {
        if let Some(s) = self.segments.get_mut(&segment) {
            s.head = head;
        }
    }

    /// `insert_into_blocks`: caches a free mapped block and stamps its GC age.
    pub(crate) fn insert_free(&mut self, b: BlockId) {
        let (pool, key) = (self.arena[b].pool, self.arena[b].free_key());
        let (expandable, split) = (self.arena[b].expandable, self.arena[b].is_split());
        let calls = self.pool(pool).free_calls;
        self.arena[b].gc_count_base = calls;
        let cache = self.pool_mut(pool);
        cache.free.insert(key, b);
        if expandable {
            cache.expandable.insert(key, b);
        } else if !split {
            cache.whole.insert(key, b);
        }
    }

    pub(crate) fn remove_free(&mut self, b: BlockId) {
        let (pool, key) = (self.arena[b].pool, self.arena[b].free_key());
        let cache = self.pool_mut(pool);
        cache.free.remove(&key);
        cache.whole.remove(&key);
        cache.expandable.remove(&key);
    }

    pub(crate) fn insert_unmapped(&mut self, b: BlockId) {
        let (pool, key) = (self.arena[b].pool, self.arena[b].addr_key());
        self.pool_mut(pool).unmapped.insert(key, b);
    }

    pub(crate) fn remove_unmapped(&mut self, b: BlockId) {
        let (pool, key) = (self.arena[b].pool, self.arena[b].addr_key());
        self.pool_mut(pool).unmapped.remove(&key);
    }

    pub(crate) fn pool(&self, pool: Pool) -> &BlockPool {
        match pool {
            Pool::Small => &self.small,
            Pool::Large => &self.large,
        }
    }

    pub(crate) fn pool_mut(&mut self, pool: Pool) -> &mut BlockPool {
        match pool {
            Pool::Small => &mut self.small,
            Pool::Large => &mut self.large,
        }
    }

    pub(crate) fn new_segment_number(&mut self) -> u64 {
        self.next_segment += 1;
        self.next_segment
    }

    /// Adds to the device's reserved bytes, keeping the peak.
    pub(crate) fn add_reserved(&mut self, bytes: u64) {
        self.c.reserved += bytes;
        self.c.peak_reserved = self.c.peak_reserved.max(self.c.reserved);
    }

    fn block_ref(&self, b: BlockId) -> BlockRef {
        let block = &self.arena[b];
        BlockRef {
            id: block.request.unwrap_or_default(),
            segment: block.segment,
            offset: block.offset,
            size: block.size,
            requested: block.requested,
            pool: block.pool,
        }
    }
}
