//! Random traces never panic and never break the allocator's invariants.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use allocator::{AllocError, Allocator, Config, Trace, TraceOp, parse_trace, simulate};
use proptest::prelude::*;

const MIB: u64 = 1 << 20;

fn config() -> impl Strategy<Value = Config> {
    (
        prop_oneof![
            Just(64 * MIB),
            Just(200 * MIB),
            Just(1024 * MIB),
            1u64..(3 << 30)
        ],
        any::<bool>(),
        prop_oneof![Just(None), (20u64..300).prop_map(|m| Some(m * MIB))],
        prop_oneof![Just(None), (0.05f64..0.95).prop_map(Some)],
        prop_oneof![Just(None), (0u32..4).prop_map(|k| Some(1 << k))],
    )
        .prop_map(|(capacity, expandable, max_split, gc, divisions)| Config {
            capacity,
            expandable_segments: expandable,
            max_split_size: max_split,
            garbage_collection_threshold: gc,
            roundup_power2_divisions: divisions,
        })
}

/// Sizes around every threshold: small, 1–10 MiB, large, and odd byte counts.
fn size() -> impl Strategy<Value = u64> {
    prop_oneof![
        1u64..4096,
        1u64..(1 << 20),
        (1u64 << 20)..(3 << 20),
        (1u64 << 20)..(12 << 20),
        (10u64 << 20)..(120 << 20),
        (100u64 << 20)..(400 << 20),
    ]
}

fn ops() -> impl Strategy<Value = Vec<(u64, u64)>> {
    prop::collection::vec((0u64..24, size()), 1..300)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn invariants_hold_after_every_event(config in config(), ops in ops()) {
        let mut a = Allocator::new(config.clone()).unwrap();
        let mut live = std::collections::HashSet::new();
        for (id, bytes) in ops {
            if live.remove(&id) {
                a.free(id).unwrap();
            } else {
                match a.alloc(id, bytes) {
                    Ok(b) => {
                        prop_assert!(b.size >= bytes);
                        live.insert(id);
                    }
                    Err(AllocError::OutOfMemory(oom)) => {
                        prop_assert!(oom.message().starts_with("CUDA out of memory."));
                    }
                    Err(e) => prop_assert!(false, "{e}"),
                }
            }
            if let Err(e) = a.check_invariants() {
                prop_assert!(false, "{e}");
            }
            let s = a.stats();
            prop_assert!(s.allocated_bytes <= s.reserved_bytes);
            prop_assert!(s.reserved_bytes <= config.capacity);
            prop_assert!(s.peak_reserved_bytes <= config.capacity);
            for seg in a.segments() {
                let sum: u64 = seg.blocks.iter().map(|b| b.size).sum();
                prop_assert_eq!(sum, seg.size);
                for pair in seg.blocks.windows(2) {
                    prop_assert_eq!(pair[0].offset + pair[0].size, pair[1].offset);
                }
            }
            let f = a.fragmentation();
            prop_assert!((0.0..=1.0).contains(&f.ratio));
            prop_assert_eq!(f.free_bytes, f.reserved_unallocated_bytes);
        }
        for id in live {
            a.free(id).unwrap();
        }
        a.empty_cache();
        a.check_invariants().unwrap();
        prop_assert_eq!(a.reserved(), 0);
        prop_assert!(a.segments().is_empty());
    }

    #[test]
    fn simulate_never_panics(config in config(), ops in ops()) {
        let mut live = std::collections::HashSet::new();
        let trace = Trace::from_ops(ops.into_iter().map(|(id, bytes)| {
            if live.remove(&id) {
                TraceOp::Free { id }
            } else {
                live.insert(id);
                TraceOp::Alloc { id, bytes }
            }
        }));
        let report = simulate(&trace, &config).unwrap();
        prop_assert!(report.peak_allocated_bytes <= report.peak_reserved_bytes);
        prop_assert!(report.peak_reserved_bytes <= config.capacity);
        prop_assert!(report.events.len() <= trace.events.len() * 2);
        prop_assert_eq!(report.first_oom_message.is_some(), report.ooms > 0);
        // The text form parses back to the same events.
        let again = parse_trace(&trace.to_jsonl()).unwrap();
        prop_assert_eq!(again.events, trace.events);
    }

    #[test]
    fn any_text_parses_or_fails_cleanly(text in "(\\PC|\n){0,200}") {
        let _ = parse_trace(&text);
    }

    #[test]
    fn json_like_lines_parse_or_fail_cleanly(
        lines in prop::collection::vec(
            (
                prop_oneof![Just("alloc"), Just("free"), Just("x"), Just("")],
                prop_oneof![Just("1".to_string()), Just("-3".to_string()), Just("1.5".to_string()),
                            Just("\"a\"".to_string()), any::<u64>().prop_map(|v| v.to_string())],
                prop_oneof![Just("0".to_string()), Just("null".to_string()),
                            any::<u64>().prop_map(|v| v.to_string()), Just("1e400".to_string())],
            ),
            0..20,
        )
    ) {
        let text: String = lines
            .iter()
            .map(|(op, id, bytes)| format!("{{\"op\":\"{op}\",\"id\":{id},\"bytes\":{bytes}}}\n"))
            .collect();
        if let Ok(trace) = parse_trace(&text) {
            let report = simulate(&trace, &Config::new(1 << 30)).unwrap();
            prop_assert!(report.peak_reserved_bytes <= 1 << 30);
        }
    }
}
