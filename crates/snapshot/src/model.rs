//! The typed snapshot, as `torch.cuda.memory._snapshot()` documents it.
//!
//! Fields that some PyTorch version does not write are `Option`s; unknown keys are
//! ignored and unknown state or action names are kept as text, so a newer PyTorch
//! still reads. Frame lists are shared (`Arc`) wherever they are equal, and so are the
//! texts inside them: a JSON snapshot repeats the same tracebacks for every allocation
//! of a training step, and keeping each once is most of what keeps a large snapshot
//! within memory.

use serde::Serialize;
use std::sync::Arc;

/// A whole snapshot: the allocator's segments now and, if history was recorded, the
/// trace of actions per device that led here.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Snapshot {
    pub segments: Vec<Segment>,
    /// One list per device, oldest entry first.
    pub device_traces: Vec<Vec<TraceEntry>>,
}

/// A shared, read-only list of frames (innermost call first).
pub type Frames = Arc<[Frame]>;

/// One `cudaMalloc` (or one expandable range) the caching allocator holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Segment {
    pub device: Option<i64>,
    pub address: u64,
    pub total_size: u64,
    pub allocated_size: Option<u64>,
    pub active_size: Option<u64>,
    pub requested_size: Option<u64>,
    pub stream: Option<u64>,
    pub segment_type: Option<SegmentType>,
    pub segment_pool_id: Option<(i64, i64)>,
    pub is_expandable: Option<bool>,
    pub frames: Frames,
    /// In address order, tiling the segment.
    pub blocks: Vec<Block>,
}

/// The pool a segment belongs to: blocks of at most 1 MiB, or larger ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SegmentType {
    Small,
    Large,
}

/// A piece of a segment: handed out to a tensor, waiting to be freed, or cached.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Block {
    /// Written by PyTorch ≥ 2.0; before that it is derived from the segment's address.
    pub address: u64,
    pub size: u64,
    pub requested_size: Option<u64>,
    pub state: BlockState,
    pub frames: Frames,
}

/// A block's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockState {
    /// In use by a tensor.
    ActiveAllocated,
    /// Freed, but a stream still uses it (`active_pending_free`; documented as
    /// `active_awaiting_free`).
    ActivePendingFree,
    /// Cached and free for reuse.
    Inactive,
    /// A name this reader does not know.
    Other(String),
}

/// One line of a traceback. Its texts are shared: a snapshot names a few hundred call
/// sites millions of times, and each is kept once.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Frame {
    pub filename: Arc<str>,
    pub line: Option<i64>,
    pub name: Arc<str>,
}

/// One action of the allocator, recorded by `_record_memory_history()`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceEntry {
    pub action: Action,
    pub addr: Option<u64>,
    pub size: Option<u64>,
    pub stream: Option<u64>,
    pub frames: Frames,
    pub time_us: Option<i64>,
    /// Only on `oom`: what CUDA still reported free.
    pub device_free: Option<u64>,
}

/// What a trace entry records.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Alloc,
    FreeRequested,
    FreeCompleted,
    SegmentAlloc,
    SegmentFree,
    SegmentMap,
    SegmentUnmap,
    Snapshot,
    Oom,
    /// An action this reader does not know (newer PyTorch: `annotate`…).
    Other(String),
}

impl Action {
    /// The name PyTorch writes.
    pub fn name(&self) -> &str {
        match self {
            Action::Alloc => "alloc",
            Action::FreeRequested => "free_requested",
            Action::FreeCompleted => "free_completed",
            Action::SegmentAlloc => "segment_alloc",
            Action::SegmentFree => "segment_free",
            Action::SegmentMap => "segment_map",
            Action::SegmentUnmap => "segment_unmap",
            Action::Snapshot => "snapshot",
            Action::Oom => "oom",
            Action::Other(name) => name,
        }
    }

    pub(crate) fn from_name(name: &str) -> Action {
        match name {
            "alloc" => Action::Alloc,
            "free_requested" => Action::FreeRequested,
            "free_completed" => Action::FreeCompleted,
            "segment_alloc" => Action::SegmentAlloc,
            "segment_free" => Action::SegmentFree,
            "segment_map" => Action::SegmentMap,
            "segment_unmap" => Action::SegmentUnmap,
            "snapshot" => Action::Snapshot,
            "oom" => Action::Oom,
            other => Action::Other(other.to_owned()),
        }
    }
}

impl BlockState {
    pub(crate) fn from_name(name: &str) -> BlockState {
        match name {
            "active_allocated" => BlockState::ActiveAllocated,
            "active_pending_free" | "active_awaiting_free" => BlockState::ActivePendingFree,
            "inactive" => BlockState::Inactive,
            other => BlockState::Other(other.to_owned()),
        }
    }
}
