//! A memory snapshot's recorded history (`device_traces`) as a simulator trace, so
//! `vramlab simulate --snapshot` replays what really happened on the user's GPU with
//! other allocator settings.
//!
//! Only `alloc` and `free_completed` matter to the allocator's books: an address is a
//! tensor from its `alloc` to its `free_completed`. The history is a ring buffer, so it
//! can start mid-run: frees of blocks allocated before the first entry are skipped and
//! counted, and those blocks are not simulated (the capacity should leave room for them).

use std::collections::HashMap;

use allocator::{Trace, TraceOp};
use snapshot::{Action, Snapshot};

/// The trace of `device`, and how many frees it had to skip.
pub fn from_snapshot(s: &Snapshot, device: usize) -> Result<(Trace, u64), String> {
    let entries = s.device_traces.get(device).ok_or_else(|| {
        format!(
            "el snapshot no tiene historial de la GPU {device} (tiene {}); grábalo con torch.cuda.memory._record_memory_history()",
            s.device_traces.len()
        )
    })?;
    let mut live: HashMap<u64, u64> = HashMap::new();
    let mut next_id = 1u64;
    let mut skipped = 0u64;
    let mut ops = Vec::new();
    for e in entries {
        match (&e.action, e.addr, e.size) {
            (Action::Alloc, Some(addr), Some(bytes)) if bytes > 0 => {
                // An address reused without a free in between: the earlier block's free
                // fell outside the recorded window; close it first.
                if let Some(old) = live.insert(addr, next_id) {
                    ops.push(TraceOp::Free { id: old });
                }
                ops.push(TraceOp::Alloc { id: next_id, bytes });
                next_id += 1;
            }
            (Action::FreeCompleted, Some(addr), _) => match live.remove(&addr) {
                Some(id) => ops.push(TraceOp::Free { id }),
                None => skipped += 1,
            },
            _ => {}
        }
    }
    if ops.is_empty() {
        return Err(format!(
            "el historial de la GPU {device} no tiene reservas (alloc) que simular"
        ));
    }
    Ok((Trace::from_ops(ops), skipped))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn snap(json: &str) -> Snapshot {
        snapshot::parse(json.as_bytes()).unwrap()
    }

    #[test]
    fn allocs_and_completed_frees_become_a_trace() {
        let s = snap(
            r#"{"segments": [], "device_traces": [[
              {"action": "free_completed", "addr": 7, "size": 512},
              {"action": "alloc", "addr": 100, "size": 2097152},
              {"action": "segment_alloc", "addr": 100, "size": 20971520},
              {"action": "alloc", "addr": 200, "size": 1024},
              {"action": "free_requested", "addr": 100, "size": 2097152},
              {"action": "free_completed", "addr": 100, "size": 2097152},
              {"action": "alloc", "addr": 100, "size": 4096}]]}"#,
        );
        let (t, skipped) = from_snapshot(&s, 0).unwrap();
        let ops: Vec<TraceOp> = t.events.iter().map(|e| e.op).collect();
        assert_eq!(
            ops,
            vec![
                TraceOp::Alloc {
                    id: 1,
                    bytes: 2_097_152
                },
                TraceOp::Alloc { id: 2, bytes: 1024 },
                TraceOp::Free { id: 1 },
                TraceOp::Alloc { id: 3, bytes: 4096 },
            ]
        );
        assert_eq!(skipped, 1);
        assert!(from_snapshot(&s, 3).unwrap_err().contains("GPU 3"));
        let empty = snap(r#"{"segments": [], "device_traces": [[]]}"#);
        assert!(
            from_snapshot(&empty, 0)
                .unwrap_err()
                .contains("no tiene reservas")
        );
    }
}
