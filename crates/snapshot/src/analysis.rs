//! What a snapshot says about an OOM: totals, fragmentation, who holds the memory, and
//! what the trace did.
//!
//! Everything is arithmetic on the file's own numbers. Fragmentation of a set of free
//! blocks is `1 − largest / total` (0 when the free memory is one piece): the caching
//! allocator can only serve a request from one block, so a high value with many free
//! bytes is the "reserved but unallocated" OOM. Frames are shown user code first:
//! torch's own Python and C++ frames are hidden where other frames remain.

use crate::model::{Action, BlockState, Frame, SegmentType, Snapshot, TraceEntry};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Frames kept per allocation or OOM.
pub const FRAMES_SHOWN: usize = 5;

/// The whole analysis; its JSON form is the CLI's `--json` contract.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    pub totals: Totals,
    /// Every segment, in the file's order.
    pub segments: Vec<SegmentReport>,
    /// The largest `active_allocated` blocks, largest first.
    pub largest_allocations: Vec<Allocation>,
    /// One summary per device trace (empty without recorded history).
    pub traces: Vec<TraceSummary>,
}

/// Sums over all segments and blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    pub segments: usize,
    pub blocks: usize,
    /// Sum of segment sizes: what `memory_reserved()` reports.
    pub reserved_bytes: u64,
    /// Blocks in use by tensors: what `memory_allocated()` reports.
    pub allocated_bytes: u64,
    /// Allocated plus blocks freed but still used by a stream.
    pub active_bytes: u64,
    /// Cached free blocks.
    pub inactive_bytes: u64,
    /// What the live tensors asked for, before rounding (where the file says).
    pub requested_bytes: u64,
    pub largest_inactive_block_bytes: u64,
    /// Over all inactive blocks; see the module docs.
    pub fragmentation: f64,
}

/// One segment's occupancy and fragmentation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SegmentReport {
    pub address: u64,
    pub device: Option<i64>,
    pub segment_type: Option<SegmentType>,
    pub is_expandable: Option<bool>,
    pub stream: Option<u64>,
    pub total_size: u64,
    pub allocated_bytes: u64,
    pub inactive_bytes: u64,
    pub inactive_blocks: usize,
    pub largest_inactive_block_bytes: u64,
    pub fragmentation: f64,
}

/// A live allocation and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Allocation {
    pub address: u64,
    pub size: u64,
    pub requested_size: Option<u64>,
    pub segment_address: u64,
    pub device: Option<i64>,
    pub stream: Option<u64>,
    /// At most [`FRAMES_SHOWN`], innermost first, torch internals hidden where possible.
    pub frames: Vec<Frame>,
    pub frames_total: usize,
}

/// What one device's trace recorded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceSummary {
    pub device: usize,
    pub entries: usize,
    /// Entries per action name.
    pub actions: BTreeMap<String, u64>,
    pub ooms: Vec<OomEntry>,
    /// Highest allocated bytes over the trace, relative to its first entry.
    pub peak_rise_bytes: u64,
    /// Index of the entry where that peak was reached.
    pub peak_entry: Option<usize>,
    /// Allocated bytes before the first entry: the snapshot's live blocks on this
    /// device minus the trace's net change; `None` where that is negative (the trace
    /// and the segments disagree).
    pub allocated_at_start_bytes: Option<u64>,
    /// `allocated_at_start_bytes + peak_rise_bytes`.
    pub peak_allocated_bytes: Option<u64>,
    /// Highest reserved bytes over the trace (segment alloc/map minus free/unmap),
    /// relative to its first entry.
    pub peak_reserved_rise_bytes: u64,
}

/// An `oom` entry: the request that failed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OomEntry {
    pub index: usize,
    pub size: Option<u64>,
    pub device_free: Option<u64>,
    pub stream: Option<u64>,
    pub time_us: Option<i64>,
    pub frames: Vec<Frame>,
}

/// Analyses `snapshot`, listing the `top` largest live allocations.
pub fn analyze(snapshot: &Snapshot, top: usize) -> Analysis {
    let segments: Vec<SegmentReport> = snapshot.segments.iter().map(segment_report).collect();
    let inactive: Vec<u64> = snapshot
        .segments
        .iter()
        .flat_map(|s| s.blocks.iter())
        .filter(|b| b.state == BlockState::Inactive)
        .map(|b| b.size)
        .collect();
    let mut totals = Totals {
        segments: segments.len(),
        blocks: snapshot.segments.iter().map(|s| s.blocks.len()).sum(),
        reserved_bytes: sum(snapshot.segments.iter().map(|s| s.total_size)),
        allocated_bytes: 0,
        active_bytes: 0,
        inactive_bytes: sum(inactive.iter().copied()),
        requested_bytes: 0,
        largest_inactive_block_bytes: inactive.iter().copied().max().unwrap_or(0),
        fragmentation: 0.0,
    };
    totals.fragmentation =
        fragmentation(totals.largest_inactive_block_bytes, totals.inactive_bytes);
    for block in snapshot.segments.iter().flat_map(|s| s.blocks.iter()) {
        match block.state {
            BlockState::ActiveAllocated => {
                totals.allocated_bytes = totals.allocated_bytes.saturating_add(block.size);
                totals.active_bytes = totals.active_bytes.saturating_add(block.size);
                totals.requested_bytes = totals
                    .requested_bytes
                    .saturating_add(block.requested_size.unwrap_or(block.size));
            }
            BlockState::ActivePendingFree => {
                totals.active_bytes = totals.active_bytes.saturating_add(block.size);
            }
            _ => {}
        }
    }
    let traces = snapshot
        .device_traces
        .iter()
        .enumerate()
        .map(|(device, trace)| trace_summary(snapshot, device, trace))
        .collect();
    Analysis {
        totals,
        segments,
        largest_allocations: largest(snapshot, top),
        traces,
    }
}

fn sum(values: impl Iterator<Item = u64>) -> u64 {
    values.fold(0u64, u64::saturating_add)
}

/// `1 − largest / total`, rounded to four decimals so the JSON is stable.
pub fn fragmentation(largest: u64, total: u64) -> f64 {
    if total == 0 {
        return 0.0;
    }
    let free_elsewhere = total.saturating_sub(largest) as u128;
    let ten_thousandths = (free_elsewhere * 10_000 + total as u128 / 2) / total as u128;
    ten_thousandths as f64 / 10_000.0
}

fn segment_report(s: &crate::model::Segment) -> SegmentReport {
    let inactive = s.blocks.iter().filter(|b| b.state == BlockState::Inactive);
    let inactive_bytes = sum(inactive.clone().map(|b| b.size));
    let largest = inactive.clone().map(|b| b.size).max().unwrap_or(0);
    SegmentReport {
        address: s.address,
        device: s.device,
        segment_type: s.segment_type,
        is_expandable: s.is_expandable,
        stream: s.stream,
        total_size: s.total_size,
        allocated_bytes: sum(s
            .blocks
            .iter()
            .filter(|b| b.state == BlockState::ActiveAllocated)
            .map(|b| b.size)),
        inactive_bytes,
        inactive_blocks: inactive.count(),
        largest_inactive_block_bytes: largest,
        fragmentation: fragmentation(largest, inactive_bytes),
    }
}

fn largest(snapshot: &Snapshot, top: usize) -> Vec<Allocation> {
    let mut live: Vec<(&crate::model::Segment, &crate::model::Block)> = snapshot
        .segments
        .iter()
        .flat_map(|s| s.blocks.iter().map(move |b| (s, b)))
        .filter(|(_, b)| b.state == BlockState::ActiveAllocated)
        .collect();
    live.sort_by(|a, b| b.1.size.cmp(&a.1.size).then(a.1.address.cmp(&b.1.address)));
    live.into_iter()
        .take(top)
        .map(|(s, b)| Allocation {
            address: b.address,
            size: b.size,
            requested_size: b.requested_size,
            segment_address: s.address,
            device: s.device,
            stream: s.stream,
            frames: user_frames(&b.frames),
            frames_total: b.frames.len(),
        })
        .collect()
}

/// C++ frames (the allocator, the dispatcher) say nothing about the user's program.
fn is_native(f: &Frame) -> bool {
    let file = &*f.filename;
    file.is_empty()
        || file == "??"
        || [".cpp", ".cc", ".c", ".h", ".hpp", ".cu", ".cuh"]
            .iter()
            .any(|ext| file.ends_with(ext))
}

/// Python frames inside the torch package itself, and the interpreter's own.
fn is_torch_python(f: &Frame) -> bool {
    let file = f.filename.replace('\\', "/");
    file.contains("/torch/") || file.starts_with("torch/") || file.starts_with("<frozen")
}

/// The frames worth showing, innermost first: without native and torch frames if any
/// remain, else without native ones, else all of them.
pub fn user_frames(frames: &[Frame]) -> Vec<Frame> {
    let pick = |keep: &dyn Fn(&Frame) -> bool| -> Vec<Frame> {
        frames
            .iter()
            .filter(|f| keep(f))
            .take(FRAMES_SHOWN)
            .cloned()
            .collect()
    };
    let user = pick(&|f| !is_native(f) && !is_torch_python(f));
    if !user.is_empty() {
        return user;
    }
    let python = pick(&|f| !is_native(f));
    if !python.is_empty() {
        return python;
    }
    pick(&|_| true)
}

fn trace_summary(snapshot: &Snapshot, device: usize, trace: &[TraceEntry]) -> TraceSummary {
    let mut actions = BTreeMap::new();
    let mut ooms = Vec::new();
    let (mut current, mut peak, mut peak_entry) = (0i128, 0i128, None);
    let (mut reserved, mut peak_reserved) = (0i128, 0i128);
    for (index, entry) in trace.iter().enumerate() {
        *actions
            .entry(entry.action.name().to_owned())
            .or_insert(0u64) += 1;
        let size = i128::from(entry.size.unwrap_or(0));
        match entry.action {
            Action::Alloc => current += size,
            Action::FreeCompleted => current -= size,
            Action::SegmentAlloc | Action::SegmentMap => reserved += size,
            Action::SegmentFree | Action::SegmentUnmap => reserved -= size,
            Action::Oom => ooms.push(OomEntry {
                index,
                size: entry.size,
                device_free: entry.device_free,
                stream: entry.stream,
                time_us: entry.time_us,
                frames: user_frames(&entry.frames),
            }),
            _ => {}
        }
        if current > peak {
            peak = current;
            peak_entry = Some(index);
        }
        peak_reserved = peak_reserved.max(reserved);
    }
    // Live bytes on this device now, in the trace's terms (freed-but-pending counts).
    let live_now = snapshot
        .segments
        .iter()
        .filter(|s| s.device.unwrap_or(0) == device as i64)
        .flat_map(|s| s.blocks.iter())
        .filter(|b| {
            matches!(
                b.state,
                BlockState::ActiveAllocated | BlockState::ActivePendingFree
            )
        })
        .fold(0i128, |acc, b| acc + i128::from(b.size));
    let start = u64::try_from(live_now - current).ok();
    let rise = u64::try_from(peak).unwrap_or(u64::MAX);
    TraceSummary {
        device,
        entries: trace.len(),
        actions,
        ooms,
        peak_rise_bytes: rise,
        peak_entry,
        allocated_at_start_bytes: start,
        peak_allocated_bytes: start.map(|s| s.saturating_add(rise)),
        peak_reserved_rise_bytes: u64::try_from(peak_reserved).unwrap_or(u64::MAX),
    }
}
