//! `expandable_segments:True`: one large reservation of address space per pool, backed
//! by physical pages only where needed.
//!
//! PyTorch reserves virtual address space for 1⅛ times the device's memory and maps
//! pages (2 MiB in the small pool, 20 MiB in the large one) with `cuMemMap` as
//! allocations need them. A request that does not fit a cached block maps pages at the
//! lowest address where free and unmapped space together are large enough (usually the
//! end of the segment), so a slightly larger tensor extends the segment instead of
//! needing a new contiguous `cudaMalloc`. Under memory pressure, whole free pages
//! anywhere in the segment are unmapped and can be mapped again elsewhere: this is why
//! fragmentation that kills the default allocator is survivable here.
//!
//! Modelled as blocks with `mapped == false` for unmapped ranges. Boundaries between
//! mapped and unmapped blocks are always page-aligned, so the reserved bytes are the
//! sum of the mapped blocks. A mapping fails when the device has no room for its pages.

use crate::allocator::Allocator;
use crate::blocks::{Block, BlockId, Segment};
use crate::sizes::Pool;

impl Allocator {
    /// `try_allocate_expandable_block`: maps enough pages for `size` bytes and returns
    /// the free block (outside the pool) that holds them.
    pub(crate) fn try_allocate_expandable_block(
        &mut self,
        pool: Pool,
        size: u64,
    ) -> Option<BlockId> {
        let mut candidate = self.find_expandable_block(pool, size)?;
        if !self.arena[candidate].mapped {
            let want = self.arena[candidate].size.min(size);
            if !self.map_block(candidate, want) {
                return None;
            }
        }
        // Invariant: candidate is free and mapped, followed by unmapped space.
        while self.arena[candidate].size < size {
            let remaining = size - self.arena[candidate].size;
            let next = self.arena[candidate].next?;
            if self.arena[next].mapped || self.arena[next].allocated {
                return None;
            }
            let want = remaining.min(self.arena[next].size);
            if !self.map_block(next, want) {
                return None;
            }
            // map_block merged the old candidate into `next`.
            candidate = next;
        }
        self.remove_free(candidate);
        Some(candidate)
    }

    /// `find_expandable_block`: the lowest address where free and unmapped blocks add up
    /// to `size`; a new segment's address space when there is none.
    fn find_expandable_block(&mut self, pool: Pool, size: u64) -> Option<BlockId> {
        for &unmapped in self.pool(pool).unmapped.values() {
            let mut start = unmapped;
            // A free mapped block right before the gap counts too.
            if let Some(p) = self.arena[unmapped].prev
                && !self.arena[p].allocated
            {
                start = p;
            }
            if self.has_available_address_space(start, size) {
                return Some(start);
            }
        }
        let page = pool.page_size();
        let capacity = self.config.capacity;
        let space = (capacity + capacity / 8).div_ceil(page) * page;
        if space < size {
            // No address space reservation could hold it (PyTorch would fail to map).
            return None;
        }
        let segment = self.new_segment_number();
        let mut block = Block::new(pool, segment, 0, space, true);
        block.mapped = false;
        let id = self.arena.insert(block);
        self.segments.insert(
            segment,
            Segment {
                pool,
                expandable: true,
                size: space,
                reserved: 0,
                head: id,
            },
        );
        self.insert_unmapped(id);
        Some(id)
    }

    fn has_available_address_space(&self, start: BlockId, size: u64) -> bool {
        let mut bytes = 0;
        let mut cursor = Some(start);
        while bytes < size {
            match cursor {
                Some(b) if !self.arena[b].allocated => {
                    bytes += self.arena[b].size;
                    cursor = self.arena[b].next;
                }
                _ => break,
            }
        }
        bytes >= size
    }

    /// `map_block`: backs the first `size` bytes (rounded up to pages) of the unmapped
    /// block `b` with memory, merges it with free mapped neighbours and caches it.
    fn map_block(&mut self, b: BlockId, size: u64) -> bool {
        let block = &self.arena[b];
        let page = block.pool.page_size();
        let begin = block.offset / page;
        let end = (block.offset + size).div_ceil(page);
        let mapped = (end - begin) * page;
        if mapped == 0 || mapped > block.size || self.c.reserved + mapped > self.config.capacity {
            return false;
        }
        let (segment, offset, total, next) = (block.segment, block.offset, block.size, block.next);
        self.remove_unmapped(b);
        self.arena[b].mapped = true;
        if mapped < total {
            let mut rest = Block::new(
                self.arena[b].pool,
                segment,
                offset + mapped,
                total - mapped,
                true,
            );
            rest.mapped = false;
            rest.prev = Some(b);
            rest.next = next;
            let rest = self.arena.insert(rest);
            self.link_after(rest, b);
            self.insert_unmapped(rest);
            self.arena[b].size = mapped;
        }
        let (prev, next) = (self.arena[b].prev, self.arena[b].next);
        self.try_merge(b, prev);
        self.try_merge(b, next);
        self.insert_free(b);
        self.add_reserved(mapped);
        if let Some(s) = self.segments.get_mut(&segment) {
            s.reserved += mapped;
        }
        self.c.device_allocs += 1;
        true
    }

    /// `unmap_block`: gives back the whole pages inside the free mapped block `b`; the
    /// partial pages at either end stay mapped as free slivers.
    pub(crate) fn unmap_block(&mut self, b: BlockId) {
        let block = &self.arena[b];
        let page = block.pool.page_size();
        let first = block.offset.div_ceil(page);
        let last = (block.offset + block.size) / page;
        if first >= last {
            return;
        }
        let (pool, segment, offset, end) = (
            block.pool,
            block.segment,
            block.offset,
            block.offset + block.size,
        );
        let (start, stop) = (first * page, last * page);
        self.remove_free(b);
        if start > offset {
            let mut before = Block::new(pool, segment, offset, start - offset, true);
            before.prev = self.arena[b].prev;
            before.next = Some(b);
            let before = self.arena.insert(before);
            self.link_before(before, b);
            self.insert_free(before);
        }
        if end > stop {
            let mut after = Block::new(pool, segment, stop, end - stop, true);
            after.prev = Some(b);
            after.next = self.arena[b].next;
            let after = self.arena.insert(after);
            self.link_after(after, b);
            self.insert_free(after);
        }
        let unmapped = &mut self.arena[b];
        unmapped.offset = start;
        unmapped.size = stop - start;
        unmapped.mapped = false;
        let (prev, next) = (unmapped.prev, unmapped.next);
        self.try_merge(b, prev);
        self.try_merge(b, next);
        self.insert_unmapped(b);
        self.c.reserved -= stop - start;
        if let Some(s) = self.segments.get_mut(&segment) {
            s.reserved -= stop - start;
        }
        self.c.device_frees += 1;
    }

    /// `release_expandable_segment`: drops a segment that is one unmapped block.
    pub(crate) fn release_expandable_segment(&mut self, b: BlockId) {
        self.remove_unmapped(b);
        self.segments.remove(&self.arena[b].segment);
        self.arena.remove(b);
    }
}
