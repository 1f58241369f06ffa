//! A device's recorded history as tensor lifetimes: what a simulator needs to replay
//! it (`vramlab simulate --snapshot`, the site's allocator lab).
//!
//! Only `alloc` and `free_completed` matter to the allocator's books: an address is a
//! tensor from its `alloc` to its `free_completed`. The history is a ring buffer, so it
//! can start mid-run: frees of blocks allocated before the first entry are skipped and
//! counted, and those blocks are not replayed.

use std::collections::HashMap;

use crate::model::{Action, Snapshot};

/// One tensor event, with ids numbered from 1 in order of allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TensorEvent {
    Alloc { id: u64, bytes: u64 },
    Free { id: u64 },
}

/// The tensor events of `device`, and how many frees had no recorded allocation.
pub fn tensor_events(s: &Snapshot, device: usize) -> Result<(Vec<TensorEvent>, u64), String> {
    let entries = s.device_traces.get(device).ok_or_else(|| {
        format!(
            "el snapshot no tiene historial de la GPU {device} (tiene {}); grábalo con torch.cuda.memory._record_memory_history()",
            s.device_traces.len()
        )
    })?;
    let mut live: HashMap<u64, u64> = HashMap::new();
    let mut next_id = 1u64;
    let mut skipped = 0u64;
    let mut out = Vec::new();
    for e in entries {
        match (&e.action, e.addr, e.size) {
            (Action::Alloc, Some(addr), Some(bytes)) if bytes > 0 => {
                // An address reused without a free in between: the earlier block's free
                // fell outside the recorded window; close it first.
                if let Some(old) = live.insert(addr, next_id) {
                    out.push(TensorEvent::Free { id: old });
                }
                out.push(TensorEvent::Alloc { id: next_id, bytes });
                next_id += 1;
            }
            (Action::FreeCompleted, Some(addr), _) => match live.remove(&addr) {
                Some(id) => out.push(TensorEvent::Free { id }),
                None => skipped += 1,
            },
            _ => {}
        }
    }
    if out.is_empty() {
        return Err(format!(
            "el historial de la GPU {device} no tiene reservas (alloc) que reproducir"
        ));
    }
    Ok((out, skipped))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn snap(json: &str) -> Snapshot {
        crate::parse(json.as_bytes()).unwrap()
    }

    #[test]
    fn allocs_and_completed_frees_become_lifetimes() {
        let s = snap(
            r#"{"segments": [], "device_traces": [[
              {"action": "free_completed", "addr": 7, "size": 512},
              {"action": "alloc", "addr": 100, "size": 2097152},
              {"action": "segment_alloc", "addr": 100, "size": 20971520},
              {"action": "alloc", "addr": 200, "size": 1024},
              {"action": "free_requested", "addr": 100, "size": 2097152},
              {"action": "free_completed", "addr": 100, "size": 2097152},
              {"action": "alloc", "addr": 100, "size": 4096},
              {"action": "alloc", "addr": 200, "size": 8192}]]}"#,
        );
        let (events, skipped) = tensor_events(&s, 0).unwrap();
        use TensorEvent::*;
        assert_eq!(
            events,
            vec![
                Alloc {
                    id: 1,
                    bytes: 2_097_152
                },
                Alloc { id: 2, bytes: 1024 },
                Free { id: 1 },
                Alloc { id: 3, bytes: 4096 },
                Free { id: 2 },
                Alloc { id: 4, bytes: 8192 },
            ]
        );
        assert_eq!(skipped, 1);
        assert!(tensor_events(&s, 3).unwrap_err().contains("GPU 3"));
        let empty = snap(r#"{"segments": [], "device_traces": [[]]}"#);
        assert!(
            tensor_events(&empty, 0)
                .unwrap_err()
                .contains("no tiene reservas")
        );
    }
}
