//! Giving cached memory back to the device: the OOM retry path, `empty_cache` and the
//! garbage collector.
//!
//! Only whole segments can be `cudaFree`d, so a segment with one live block in it keeps
//! all its cached bytes: the "reserved but unallocated" memory of an OOM message is
//! what is left after these functions did their best. Expandable segments are the
//! exception: their free whole pages are unmapped wherever they are.

use crate::allocator::Allocator;
use crate::blocks::{BlockId, FreeKey};
use crate::sizes::Pool;

impl Allocator {
    /// `release_cached_blocks`: frees every unsplit cached segment of both pools.
    pub(crate) fn release_cached_blocks(&mut self) {
        self.release_blocks(Pool::Large);
        self.release_blocks(Pool::Small);
    }

    /// `release_blocks`: `cudaFree` of unsplit free segments; for expandable segments,
    /// unmap the free pages and drop the segment if nothing is left mapped.
    fn release_blocks(&mut self, pool: Pool) {
        // Only whole plain segments and expandable blocks can give memory back: the
        // indexes hold exactly those, so this does not walk the split free blocks.
        let whole: Vec<BlockId> = self.pool(pool).whole.values().copied().collect();
        for b in whole {
            self.release_block(b);
        }
        let to_unmap: Vec<(FreeKey, BlockId)> = self
            .pool(pool)
            .expandable
            .iter()
            .map(|(&key, &b)| (key, b))
            .collect();
        for (key, b) in to_unmap {
            if !self.still_cached(pool, key, b) {
                continue;
            }
            self.unmap_block(b);
            let block = &self.arena[b];
            if !block.mapped && !block.is_split() {
                self.release_expandable_segment(b);
            }
        }
    }

    /// `release_block`: `cudaFree` of a cached segment that is one free block.
    fn release_block(&mut self, b: BlockId) {
        self.remove_free(b);
        let block = &self.arena[b];
        let size = block.size;
        self.segments.remove(&block.segment);
        self.arena.remove(b);
        self.c.reserved -= size;
        self.c.device_frees += 1;
    }

    /// `release_available_cached_blocks`: with `max_split_size` set, frees the smallest
    /// cached oversize segment that is large enough, or else oversize segments from the
    /// largest down until their total covers the request. Returns whether it did.
    ///
    /// Blocks of expandable segments are skipped, as PyTorch does since
    /// pytorch/pytorch#134338 (before it, it could assert here); so are split blocks,
    /// which `cudaFree` could not release (PyTorch assumes oversize blocks are unsplit).
    pub(crate) fn release_available_cached_blocks(&mut self, pool: Pool, size: u64) -> bool {
        let Some(max_split) = self.config.max_split_size else {
            return false;
        };
        let target = size.max(max_split);
        let whole = &self.pool(pool).whole;
        let single = whole.range((target, 0, 0)..).map(|(_, &b)| b).next();
        if let Some(b) = single {
            self.release_block(b);
            return true;
        }
        let largest_first: Vec<(u64, BlockId)> = whole
            .range(..(target, 0, 0))
            .rev()
            .map(|(key, &b)| (key.0, b))
            .take_while(|&(s, _)| s >= max_split)
            .collect();
        let mut released = 0;
        for (block_size, b) in largest_first {
            if released >= target {
                break;
            }
            released += block_size;
            self.release_block(b);
        }
        released >= target
    }

    /// `garbage_collect_cached_blocks`: once reserved memory passes the threshold
    /// fraction of the capacity, frees unsplit cached large-pool segments that have gone
    /// unused for longer than average (age = `get_free_block` calls since cached), in
    /// rounds, until the excess is reclaimed or nothing old enough is left.
    pub(crate) fn garbage_collect_cached_blocks(&mut self) {
        let Some(fraction) = self.config.garbage_collection_threshold else {
            return;
        };
        // PyTorch: static_cast<size_t>(threshold * allowed_memory_maximum).
        let threshold = (fraction * self.config.capacity as f64) as u64;
        if self.c.reserved <= threshold {
            return;
        }
        let target = self.c.reserved - threshold;
        let calls = self.large.free_calls;
        let age = |a: &Allocator, b: BlockId| calls.saturating_sub(a.arena[b].gc_count_base);
        // Freeable: unsplit plain segments, the `whole` index.
        let mut total_age = 0u64;
        let mut count = 0u64;
        for &b in self.large.whole.values() {
            total_age += age(self, b);
            count += 1;
        }
        let mut reclaimed = 0;
        let mut freed = true;
        while reclaimed < target && freed && count > 0 {
            let age_threshold = total_age as f64 / count as f64;
            freed = false;
            let whole: Vec<BlockId> = self.large.whole.values().copied().collect();
            for b in whole {
                let block_age = age(self, b);
                if block_age as f64 >= age_threshold {
                    freed = true;
                    reclaimed += self.arena[b].size;
                    total_age = total_age.saturating_sub(block_age);
                    count = count.saturating_sub(1);
                    self.release_block(b);
                }
            }
        }
    }

    fn still_cached(&self, pool: Pool, key: FreeKey, b: BlockId) -> bool {
        self.pool(pool).free.get(&key) == Some(&b)
    }
}
