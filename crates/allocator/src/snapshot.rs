//! Read-only views of the allocator: statistics, the segment/block map a UI can draw,
//! fragmentation metrics, and the invariant checker the property tests run.

use serde::Serialize;

use crate::allocator::Allocator;
use crate::blocks::BlockId;
use crate::sizes::Pool;

/// `torch.cuda.memory_stats()`, the parts a single-stream simulation can produce.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// `allocated_bytes.all.current`: rounded sizes of live blocks.
    pub allocated_bytes: u64,
    pub peak_allocated_bytes: u64,
    /// `requested_bytes.all.current`: what the caller asked for (before rounding).
    pub requested_bytes: u64,
    pub peak_requested_bytes: u64,
    /// `reserved_bytes.all.current`: segments and mapped pages.
    pub reserved_bytes: u64,
    pub peak_reserved_bytes: u64,
    /// `active_bytes`: equal to allocated with one stream (no pending stream uses).
    pub active_bytes: u64,
    /// `inactive_split_bytes`: free bytes in segments that also hold live blocks, which
    /// `empty_cache()` cannot return. PyTorch excludes expandable segments; so do we.
    pub inactive_split_bytes: u64,
    /// `num_alloc_retries`: times every cached segment was freed to retry `cudaMalloc`.
    pub alloc_retries: u64,
    /// `num_ooms`.
    pub ooms: u64,
    /// Segments holding memory (an expandable segment counts while it has pages).
    pub segments: u64,
    /// `num_device_alloc` / `num_device_free`: `cudaMalloc`s or page mappings, and
    /// `cudaFree`s or unmappings.
    pub device_allocs: u64,
    pub device_frees: u64,
    /// Live allocations.
    pub allocations: u64,
}

/// What a block holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockState {
    Allocated,
    /// Cached: mapped memory the allocator keeps for reuse.
    Free,
    /// Address space of an expandable segment with no memory behind it.
    Unmapped,
}

/// One block of a segment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BlockInfo {
    pub offset: u64,
    pub size: u64,
    pub state: BlockState,
    /// The trace id of an allocated block.
    pub request_id: Option<u64>,
    /// Bytes the caller asked for (0 unless allocated).
    pub requested_bytes: u64,
}

/// One segment with its blocks in address order (`torch.cuda.memory_snapshot()`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SegmentInfo {
    /// Creation number; also the address order of segments.
    pub id: u64,
    pub pool: Pool,
    pub expandable: bool,
    /// Bytes of address space: the segment size, or the whole reservation of an
    /// expandable segment (1⅛ of the capacity, most of it unmapped).
    pub size: u64,
    /// Bytes backed by memory.
    pub reserved_bytes: u64,
    pub allocated_bytes: u64,
    /// End of the last mapped block: how much of an expandable segment to draw.
    pub mapped_extent_bytes: u64,
    pub blocks: Vec<BlockInfo>,
}

/// How badly the cache is fragmented.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fragmentation {
    /// `reserved − allocated`.
    pub reserved_unallocated_bytes: u64,
    /// Bytes in free cached blocks (equal to the above).
    pub free_bytes: u64,
    /// The largest free cached block: the biggest request the cache can serve without
    /// asking the device (in the small pool, at most 1 MiB of it is usable).
    pub largest_free_block_bytes: u64,
    /// `1 − largest_free / free`: 0 when the free memory is one block (or none), near
    /// 1 when it is scattered in many small pieces.
    pub ratio: f64,
    pub segments: Vec<SegmentFragmentation>,
}

/// Fragmentation of one segment.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SegmentFragmentation {
    pub id: u64,
    pub pool: Pool,
    pub reserved_bytes: u64,
    pub allocated_bytes: u64,
    pub free_bytes: u64,
    pub largest_free_block_bytes: u64,
    pub ratio: f64,
}

fn ratio(largest: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        1.0 - largest as f64 / total as f64
    }
}

impl Allocator {
    pub fn stats(&self) -> Stats {
        let mut inactive_split = 0;
        let mut segments = 0;
        for s in self.segments.values() {
            if s.reserved > 0 {
                segments += 1;
            }
            if s.expandable {
                continue;
            }
            let blocks = self.segment_blocks(s.head);
            if blocks.len() > 1 {
                inactive_split += blocks
                    .iter()
                    .filter(|&&b| !self.arena[b].allocated)
                    .map(|&b| self.arena[b].size)
                    .sum::<u64>();
            }
        }
        Stats {
            allocated_bytes: self.c.allocated,
            peak_allocated_bytes: self.c.peak_allocated,
            requested_bytes: self.c.requested,
            peak_requested_bytes: self.c.peak_requested,
            reserved_bytes: self.c.reserved,
            peak_reserved_bytes: self.c.peak_reserved,
            active_bytes: self.c.allocated,
            inactive_split_bytes: inactive_split,
            alloc_retries: self.c.alloc_retries,
            ooms: self.c.ooms,
            segments,
            device_allocs: self.c.device_allocs,
            device_frees: self.c.device_frees,
            allocations: self.live.len() as u64,
        }
    }

    /// Every segment holding memory, in address order, with its blocks.
    pub fn segments(&self) -> Vec<SegmentInfo> {
        self.segments
            .iter()
            .filter(|(_, s)| s.reserved > 0)
            .map(|(&id, s)| {
                let blocks: Vec<BlockInfo> = self
                    .segment_blocks(s.head)
                    .into_iter()
                    .map(|b| {
                        let block = &self.arena[b];
                        BlockInfo {
                            offset: block.offset,
                            size: block.size,
                            state: if block.allocated {
                                BlockState::Allocated
                            } else if block.mapped {
                                BlockState::Free
                            } else {
                                BlockState::Unmapped
                            },
                            request_id: block.request,
                            requested_bytes: block.requested,
                        }
                    })
                    .collect();
                let allocated_bytes = blocks
                    .iter()
                    .filter(|b| b.state == BlockState::Allocated)
                    .map(|b| b.size)
                    .sum();
                let mapped_extent_bytes = blocks
                    .iter()
                    .filter(|b| b.state != BlockState::Unmapped)
                    .map(|b| b.offset + b.size)
                    .max()
                    .unwrap_or(0);
                SegmentInfo {
                    id,
                    pool: s.pool,
                    expandable: s.expandable,
                    size: s.size,
                    reserved_bytes: s.reserved,
                    allocated_bytes,
                    mapped_extent_bytes,
                    blocks,
                }
            })
            .collect()
    }

    /// Fragmentation now, overall and per segment.
    pub fn fragmentation(&self) -> Fragmentation {
        let mut segments = Vec::new();
        let (mut free, mut largest) = (0, 0);
        for s in self.segments() {
            let frees = s.blocks.iter().filter(|b| b.state == BlockState::Free);
            let seg_free: u64 = frees.clone().map(|b| b.size).sum();
            let seg_largest = frees.map(|b| b.size).max().unwrap_or(0);
            free += seg_free;
            largest = largest.max(seg_largest);
            segments.push(SegmentFragmentation {
                id: s.id,
                pool: s.pool,
                reserved_bytes: s.reserved_bytes,
                allocated_bytes: s.allocated_bytes,
                free_bytes: seg_free,
                largest_free_block_bytes: seg_largest,
                ratio: ratio(seg_largest, seg_free),
            });
        }
        Fragmentation {
            reserved_unallocated_bytes: self.c.reserved - self.c.allocated,
            free_bytes: free,
            largest_free_block_bytes: largest,
            ratio: ratio(largest, free),
            segments,
        }
    }

    fn segment_blocks(&self, head: BlockId) -> Vec<BlockId> {
        let mut out = Vec::new();
        let mut cursor = Some(head);
        while let Some(b) = cursor {
            out.push(b);
            cursor = self.arena[b].next;
        }
        out
    }

    /// Checks every structural invariant; the error names the first one broken. Cheap
    /// enough for tests after every event, too slow for production loops.
    pub fn check_invariants(&self) -> Result<(), String> {
        let (mut reserved, mut allocated, mut free_blocks, mut unmapped_blocks) = (0, 0, 0, 0);
        for (&id, s) in &self.segments {
            let blocks = self.segment_blocks(s.head);
            let mut offset = 0;
            let mut prev = None;
            let mut mapped = 0;
            for &b in &blocks {
                let block = &self.arena[b];
                let here = format!("segmento {id}, bloque en {}", block.offset);
                if block.segment != id || block.pool != s.pool || block.expandable != s.expandable {
                    return Err(format!("{here}: pertenece a otro segmento"));
                }
                if block.offset != offset || block.prev != prev || block.size == 0 {
                    return Err(format!("{here}: enlaces o desplazamientos incoherentes"));
                }
                if block.allocated {
                    allocated += block.size;
                    match block.request.and_then(|r| self.live.get(&r)) {
                        Some(&live) if live == b => {}
                        _ => return Err(format!("{here}: reservado sin id vivo")),
                    }
                } else if block.mapped {
                    free_blocks += 1;
                    let cache = self.pool(s.pool);
                    let key = block.free_key();
                    if cache.free.get(&key) != Some(&b) {
                        return Err(format!("{here}: libre pero fuera de la caché"));
                    }
                    let whole = !block.expandable && !block.is_split();
                    if (cache.whole.get(&key) == Some(&b)) != whole
                        || (cache.expandable.get(&key) == Some(&b)) != block.expandable
                    {
                        return Err(format!("{here}: índices de la caché incoherentes"));
                    }
                } else {
                    unmapped_blocks += 1;
                    let page = s.pool.page_size();
                    if !block.offset.is_multiple_of(page) || !block.size.is_multiple_of(page) {
                        return Err(format!("{here}: hueco sin mapear no alineado a página"));
                    }
                    if self.pool(s.pool).unmapped.get(&block.addr_key()) != Some(&b) {
                        return Err(format!("{here}: sin mapear pero fuera del conjunto"));
                    }
                }
                if block.mapped {
                    mapped += block.size;
                }
                if !s.expandable && !block.mapped {
                    return Err(format!("{here}: sin mapear en un segmento normal"));
                }
                if let Some(p) = prev {
                    let before = &self.arena[p];
                    if !before.allocated && !block.allocated && before.mapped == block.mapped {
                        return Err(format!("{here}: dos bloques libres contiguos sin fusionar"));
                    }
                }
                offset += block.size;
                prev = Some(b);
            }
            if offset != s.size {
                return Err(format!(
                    "segmento {id}: sus bloques suman {offset}, no {}",
                    s.size
                ));
            }
            if mapped != s.reserved {
                return Err(format!(
                    "segmento {id}: {mapped} mapeados, {} reservados",
                    s.reserved
                ));
            }
            reserved += s.reserved;
        }
        let pooled = self.small.free.len() + self.large.free.len();
        let indexed = [&self.small, &self.large]
            .iter()
            .map(|p| p.whole.len() + p.expandable.len())
            .sum::<usize>();
        if indexed > pooled {
            return Err("los índices de la caché tienen bloques que no están libres".into());
        }
        let pooled_unmapped = self.small.unmapped.len() + self.large.unmapped.len();
        if pooled != free_blocks || pooled_unmapped != unmapped_blocks {
            return Err("la caché tiene bloques que no están en ningún segmento".into());
        }
        if reserved != self.c.reserved || allocated != self.c.allocated {
            return Err(format!(
                "contadores: reservado {} frente a {reserved}, asignado {} frente a {allocated}",
                self.c.reserved, self.c.allocated
            ));
        }
        if !(self.c.allocated <= self.c.reserved && self.c.reserved <= self.config.capacity) {
            return Err("no se cumple asignado ≤ reservado ≤ capacidad".into());
        }
        if self.live.len()
            != self
                .live
                .values()
                .filter(|&&b| self.arena[b].allocated)
                .count()
        {
            return Err("un id vivo apunta a un bloque libre".into());
        }
        Ok(())
    }
}
