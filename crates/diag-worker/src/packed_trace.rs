//! A trace as the worker sends it to the page: the events as little-endian `u64`
//! bytes, transferred beside the JSON reply as an `ArrayBuffer`, and only the warnings
//! in the JSON.
//!
//! Why: a 300,000-event trace as JSON (even as a flat array of numbers) kept the page's
//! thread busy for 250–520 ms in one task (the string's copy into wasm and serde's
//! parse); the bytes are one `memcpy` and a loop. The page checks what it reads: a cut
//! buffer, a count that disagrees or a wrong tag is a Spanish error, not a panic.

use allocator::{Trace, TraceEvent, TraceOp};
use serde::{Deserialize, Serialize};

/// Bytes per event: `line`, tag (0 alloc, 1 free), `id`, `bytes`, each a `u64`.
pub const EVENT_BYTES: usize = 32;

/// A trace whose events travel as bytes (`ops`, skipped by serde) and whose warnings
/// travel as JSON.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackedTrace {
    /// The events, [`EVENT_BYTES`] each; moved out before the JSON is written and put
    /// back when the page reads it.
    #[serde(skip)]
    pub ops: Vec<u8>,
    /// How many events `ops` holds: a buffer of any other length is refused.
    pub events: u64,
    pub warnings: Vec<String>,
    pub warnings_total: u64,
}

impl PackedTrace {
    pub fn pack(trace: &Trace) -> PackedTrace {
        let mut ops = Vec::with_capacity(trace.events.len().saturating_mul(EVENT_BYTES));
        for e in &trace.events {
            let (tag, id, bytes) = match e.op {
                TraceOp::Alloc { id, bytes } => (0u64, id, bytes),
                TraceOp::Free { id } => (1, id, 0),
            };
            for n in [e.line, tag, id, bytes] {
                ops.extend_from_slice(&n.to_le_bytes());
            }
        }
        PackedTrace {
            ops,
            events: trace.events.len() as u64,
            warnings: trace.warnings.clone(),
            warnings_total: trace.warnings_total,
        }
    }

    /// The trace back, or a Spanish error when the bytes are not what the JSON says.
    pub fn unpack(self) -> Result<Trace, String> {
        let bad = || "El trabajador envió una traza incompleta.".to_owned();
        let expected = usize::try_from(self.events)
            .ok()
            .and_then(|n| n.checked_mul(EVENT_BYTES));
        if expected != Some(self.ops.len()) {
            return Err(bad());
        }
        let word = |b: &[u8]| {
            let mut w = [0u8; 8];
            w.copy_from_slice(b);
            u64::from_le_bytes(w)
        };
        let events = self
            .ops
            .chunks_exact(EVENT_BYTES)
            .map(|c| {
                let (line, tag, id, bytes) = (
                    word(&c[0..8]),
                    word(&c[8..16]),
                    word(&c[16..24]),
                    word(&c[24..32]),
                );
                let op = match tag {
                    0 => TraceOp::Alloc { id, bytes },
                    1 => TraceOp::Free { id },
                    _ => return Err(bad()),
                };
                Ok(TraceEvent { line, op })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Trace {
            events,
            warnings: self.warnings,
            warnings_total: self.warnings_total,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    fn sample() -> Trace {
        allocator::parse_trace(
            "{\"op\":\"alloc\",\"id\":7,\"bytes\":1024}\n{\"op\":\"free\",\"id\":7}\n{\"op\":\"free\",\"id\":9}\n",
        )
        .unwrap()
    }

    #[test]
    fn a_trace_round_trips_and_its_bytes_are_little_endian_words() {
        let trace = sample();
        let p = PackedTrace::pack(&trace);
        assert_eq!(p.events, 2);
        assert_eq!(p.ops.len(), 2 * EVENT_BYTES);
        assert_eq!(&p.ops[..8], &1u64.to_le_bytes());
        assert_eq!(&p.ops[24..32], &1024u64.to_le_bytes());
        assert_eq!(&p.ops[40..48], &1u64.to_le_bytes(), "the free's tag");
        assert_eq!(p.warnings_total, 1);
        assert_eq!(p.unpack().unwrap(), trace);
    }

    #[test]
    fn forged_buffers_are_spanish_errors() {
        let good = PackedTrace::pack(&sample());
        let mut cut = good.clone();
        cut.ops.pop();
        let mut short_count = good.clone();
        short_count.events = 1;
        let mut huge_count = good.clone();
        huge_count.events = u64::MAX;
        let mut bad_tag = good.clone();
        bad_tag.ops[8] = 9;
        let mut missing = good;
        missing.ops.clear();
        for forged in [cut, short_count, huge_count, bad_tag, missing] {
            let e = forged.unpack().unwrap_err();
            assert!(e.contains("incompleta"), "{e}");
        }
    }

    proptest! {
        #[test]
        fn any_bytes_and_count_unpack_or_refuse_without_panicking(
            ops in proptest::collection::vec(any::<u8>(), 0..200),
            events in 0u64..10,
        ) {
            let p = PackedTrace { ops, events, ..PackedTrace::default() };
            if let Ok(t) = p.clone().unpack() {
                prop_assert_eq!(t.events.len() as u64, events);
                prop_assert_eq!(PackedTrace::pack(&t).ops, p.ops);
            }
        }
    }
}
