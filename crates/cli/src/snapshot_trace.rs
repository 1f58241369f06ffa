//! A memory snapshot's recorded history as a simulator trace, so
//! `vramlab simulate --snapshot` replays what really happened on the user's GPU with
//! other allocator settings (the lifetimes come from `snapshot::tensor_events`).

use allocator::{Trace, TraceOp};
use snapshot::{Snapshot, TensorEvent};

/// The trace of `device`, and how many frees it had to skip.
pub fn from_snapshot(s: &Snapshot, device: usize) -> Result<(Trace, u64), String> {
    let (events, skipped) = snapshot::tensor_events(s, device)?;
    let ops = events.into_iter().map(|e| match e {
        TensorEvent::Alloc { id, bytes } => TraceOp::Alloc { id, bytes },
        TensorEvent::Free { id } => TraceOp::Free { id },
    });
    Ok((Trace::from_ops(ops), skipped))
}
