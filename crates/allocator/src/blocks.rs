//! Blocks, segments and pools: the data structures of the allocator, without policy.
//!
//! PyTorch links `Block`s with raw `prev`/`next` pointers and keeps the free ones in a
//! `std::set` ordered by (stream, size, address). Here blocks live in an arena and are
//! named by index; each pool keeps its free, mapped blocks in a `BTreeMap` ordered by
//! (size, address), so `range((size, 0, 0)..)` is PyTorch's `lower_bound`: the best fit.
//! The simulator has a single stream, so the stream part of the key is dropped.
//!
//! An address is (segment number, offset). Segment numbers grow with every new
//! segment, so ordering by address is the same as a bump allocator of device addresses
//! that never reuses one: equal-size blocks tie-break towards older segments, and no
//! address arithmetic can overflow however long the trace.

use std::collections::BTreeMap;

use crate::sizes::Pool;

pub(crate) type BlockId = usize;
/// (size, segment, offset): the order of a pool's free set.
pub(crate) type FreeKey = (u64, u64, u64);
/// (segment, offset): the order of a pool's unmapped set.
pub(crate) type AddrKey = (u64, u64);

/// A contiguous range of one segment: allocated, free, or (expandable segments only)
/// unmapped address space with no physical memory behind it.
#[derive(Clone, Debug)]
pub(crate) struct Block {
    pub segment: u64,
    pub offset: u64,
    pub size: u64,
    /// The caller's original size (before rounding); 0 when free.
    pub requested: u64,
    pub allocated: bool,
    pub mapped: bool,
    pub expandable: bool,
    pub pool: Pool,
    pub prev: Option<BlockId>,
    pub next: Option<BlockId>,
    /// The trace id occupying the block.
    pub request: Option<u64>,
    /// The pool's `get_free_block` call count when the block was cached (GC age).
    pub gc_count_base: u64,
}

impl Block {
    pub fn new(pool: Pool, segment: u64, offset: u64, size: u64, expandable: bool) -> Block {
        Block {
            segment,
            offset,
            size,
            requested: 0,
            allocated: false,
            mapped: true,
            expandable,
            pool,
            prev: None,
            next: None,
            request: None,
            gc_count_base: 0,
        }
    }

    pub fn is_split(&self) -> bool {
        self.prev.is_some() || self.next.is_some()
    }

    pub fn free_key(&self) -> FreeKey {
        (self.size, self.segment, self.offset)
    }

    pub fn addr_key(&self) -> AddrKey {
        (self.segment, self.offset)
    }
}

/// Storage for blocks; ids of removed blocks are reused.
#[derive(Clone, Debug, Default)]
pub(crate) struct Arena {
    slots: Vec<Block>,
    vacant: Vec<BlockId>,
}

impl Arena {
    pub fn insert(&mut self, block: Block) -> BlockId {
        match self.vacant.pop() {
            Some(id) => {
                self.slots[id] = block;
                id
            }
            None => {
                self.slots.push(block);
                self.slots.len() - 1
            }
        }
    }

    pub fn remove(&mut self, id: BlockId) {
        self.vacant.push(id);
    }
}

impl std::ops::Index<BlockId> for Arena {
    type Output = Block;
    fn index(&self, id: BlockId) -> &Block {
        &self.slots[id]
    }
}

impl std::ops::IndexMut<BlockId> for Arena {
    fn index_mut(&mut self, id: BlockId) -> &mut Block {
        &mut self.slots[id]
    }
}

/// One pool's cache: free mapped blocks by best fit, unmapped ranges by address.
///
/// Two indexes over `free` keep the out-of-memory path from walking every cached block
/// (a trace with thousands of OOMs and thousands of split free blocks took minutes):
/// `whole` holds the free blocks that are a whole plain segment (what `cudaFree` can
/// release), `expandable` the free blocks of expandable segments (what can be unmapped).
/// A free block's split state never changes while it is cached (splits and merges take
/// it out first), so both stay exact; `Allocator::check_invariants` verifies them.
#[derive(Clone, Debug, Default)]
pub(crate) struct BlockPool {
    pub free: BTreeMap<FreeKey, BlockId>,
    pub whole: BTreeMap<FreeKey, BlockId>,
    pub expandable: BTreeMap<FreeKey, BlockId>,
    pub unmapped: BTreeMap<AddrKey, BlockId>,
    /// `get_free_blocks_call_count`, counted only when garbage collection is on.
    pub free_calls: u64,
}

/// A `cudaMalloc`ed segment, or an expandable segment's reserved address space.
#[derive(Clone, Debug)]
pub(crate) struct Segment {
    pub pool: Pool,
    pub expandable: bool,
    /// Bytes of address space (for a plain segment, also the bytes reserved).
    pub size: u64,
    /// Bytes backed by device memory: `size`, or the mapped pages of an expandable one.
    pub reserved: u64,
    /// The block at offset 0.
    pub head: BlockId,
}
