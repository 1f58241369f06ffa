//! The lab's input: the reader's own file as an allocator trace, from `vramlab
//! simulate`'s JSON lines or from a memory snapshot whose recorded history is replayed.

use allocator::{Trace, TraceOp};

/// The reader's own file as a trace: `vramlab simulate`'s JSON lines, or a memory
/// snapshot whose recorded history is replayed (GPU 0). Spanish errors name the file.
pub fn load(name: &str, bytes: &[u8]) -> Result<Trace, String> {
    let as_trace = std::str::from_utf8(bytes).ok().map(allocator::parse_trace);
    if let Some(Ok(t)) = as_trace {
        if t.events.is_empty() {
            return Err(format!("{name}: la traza no tiene eventos"));
        }
        return Ok(t);
    }
    match snapshot::parse(bytes) {
        // JSON that is neither: an object with no snapshot keys reads as an empty
        // snapshot, but the trace parser's message is the useful one.
        Ok(s) if s.segments.is_empty() && s.device_traces.is_empty() => Err(match as_trace {
            Some(Err(t)) => format!("{name}: {t}"),
            _ => format!("{name}: no es una traza JSON lines ni un snapshot con historial"),
        }),
        Ok(s) => {
            let (events, _skipped) =
                snapshot::tensor_events(&s, 0).map_err(|e| format!("{name}: {e}"))?;
            Ok(Trace::from_ops(events.into_iter().map(|e| match e {
                snapshot::TensorEvent::Alloc { id, bytes } => TraceOp::Alloc { id, bytes },
                snapshot::TensorEvent::Free { id } => TraceOp::Free { id },
            })))
        }
        // Neither: say what a trace line would have needed if it looked like one.
        Err(e) => Err(match as_trace {
            Some(Err(t)) if bytes.first() == Some(&b'{') && !bytes.contains(&b'[') => {
                format!("{name}: {t}")
            }
            _ => format!("{name}: {e}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn own_traces_and_snapshots_load() {
        let lines = "{\"op\":\"alloc\",\"id\":1,\"bytes\":1048576}\n{\"op\":\"free\",\"id\":1}\n";
        assert_eq!(load("t.jsonl", lines.as_bytes()).unwrap().events.len(), 2);
        let snap = r#"{"segments": [], "device_traces": [[{"action": "alloc", "addr": 1, "size": 4096}]]}"#;
        assert_eq!(load("s.json", snap.as_bytes()).unwrap().events.len(), 1);
        assert!(
            load("x.bin", b"\x00\x01")
                .unwrap_err()
                .starts_with("x.bin: ")
        );
        assert!(
            load("bad.jsonl", b"{\"op\":\"volar\"}")
                .unwrap_err()
                .starts_with("bad.jsonl: ")
        );
    }
}
