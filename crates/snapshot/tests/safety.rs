//! Hostile input: refused opcodes, forged lengths, caps, and no panics on any bytes.
#![allow(clippy::unwrap_used)]

mod common;

use proptest::prelude::*;
use snapshot::pickle::{Limits, PickleError, unpickle, unpickle_with};
use snapshot::{ReadError, parse};

#[test]
fn forged_huge_string_is_an_error_without_allocating() {
    // BINUNICODE8 claiming 2^60 bytes: must fail before reserving anything.
    let mut bytes = vec![0x80, 4, 0x8d];
    bytes.extend((1u64 << 60).to_le_bytes());
    bytes.extend(b"abc.");
    let err = unpickle(&bytes).unwrap_err();
    assert_eq!(
        err,
        PickleError::Truncated {
            name: "BINUNICODE8",
            offset: 2,
            needed: 1 << 60,
            left: 4
        }
    );
    assert!(err.to_string().contains("BINUNICODE8"));
}

#[test]
fn forged_frame_and_long4_are_errors() {
    let mut frame = vec![0x80, 4, 0x95];
    frame.extend(u64::MAX.to_le_bytes());
    assert!(matches!(
        unpickle(&frame),
        Err(PickleError::Truncated { .. })
    ));
    let long4 = [0x80, 4, 0x8b, 0xff, 0xff, 0xff, 0xff, 1, b'.'];
    assert!(matches!(
        unpickle(&long4),
        Err(PickleError::Truncated { .. })
    ));
}

#[test]
fn code_execution_opcodes_are_refused() {
    // What `pickle.dumps(os.system)`-style payloads start with.
    for (bytes, name) in [
        (
            &b"\x80\x04\x8c\x02os\x8c\x06system\x93."[..],
            "STACK_GLOBAL",
        ),
        (&b"cos\nsystem\n(S'ls'\ntR."[..], "GLOBAL"),
        (&b"\x80\x02N)R."[..], "REDUCE"),
        (&b"\x80\x02}b."[..], "BUILD"),
        (&b"(i__main__\nX\n."[..], "INST"),
        (&b"\x80\x02N)\x81."[..], "NEWOBJ"),
        (&b"P1\n."[..], "PERSID"),
    ] {
        match unpickle(bytes) {
            Err(PickleError::Refused { name: got, .. }) => assert_eq!(got, name),
            other => panic!("{name}: {other:?}"),
        }
    }
    let err = parse(b"\x80\x04\x8c\x02os\x8c\x06system\x93.").unwrap_err();
    assert!(matches!(err, ReadError::Pickle(_)));
    assert!(err.to_string().contains("STACK_GLOBAL (byte 14)"), "{err}");
}

#[test]
fn shared_lists_cannot_explode_the_reader() {
    // segments = [S]*1000 where S["blocks"] = [B]*1000: 10^6 blocks from 4 KB.
    let mut b = vec![0x80, 4, b'}', 0x94, 0x8c, 8];
    b.extend(b"segments");
    b.extend([0x94, b']', 0x94, b'(', b'}', 0x94, 0x8c, 6]);
    b.extend(b"blocks");
    b.extend([0x94, b']', 0x94, b'(', b'}', 0x94, 0x8c, 4]);
    b.extend(b"size");
    b.extend([0x94, b'K', 1, b's']);
    for _ in 0..999 {
        b.extend([b'h', 6]);
    }
    b.extend([b'e', b's']);
    for _ in 0..999 {
        b.extend([b'h', 3]);
    }
    b.extend([b'e', b's', b'.']);
    let doc = snapshot::decode(&b).unwrap();
    assert!(
        doc.len() < 20,
        "sharing is not copying: {} nodes",
        doc.len()
    );
    assert_eq!(
        snapshot::from_document_with(&doc, 100_000),
        Err(ReadError::Budget { cap: 100_000 })
    );
    // Under the default budget it is simply a million one-byte blocks.
    let snap = snapshot::from_document(&doc).unwrap();
    assert_eq!(snap.segments.len(), 1000);
    assert_eq!(snap.segments[999].blocks.len(), 1000);
}

#[test]
fn nesting_is_capped() {
    let bytes: Vec<u8> = std::iter::repeat_n(b'(', 5000).collect();
    assert_eq!(unpickle(&bytes), Err(PickleError::TooDeep { cap: 1000 }));
}

#[test]
fn memo_is_capped() {
    let mut bytes = vec![0x80, 4, b'N'];
    for n in 0..10u32 {
        bytes.push(b'r');
        bytes.extend(n.to_le_bytes());
    }
    bytes.push(b'.');
    let limits = Limits {
        max_memo: 5,
        ..Limits::default()
    };
    assert_eq!(
        unpickle_with(&bytes, limits),
        Err(PickleError::MemoFull { cap: 5 })
    );
}

fn valid() -> Vec<u8> {
    common::dumps(&common::sample())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = parse(&bytes);
        let mut pickled = vec![0x80, 4];
        pickled.extend(&bytes);
        let _ = parse(&pickled);
    }

    #[test]
    fn mutated_pickles_never_panic(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let mut bytes = valid();
        for (at, byte) in edits {
            let n = at.index(bytes.len());
            bytes[n] = byte;
        }
        if truncate {
            bytes.truncate(cut.index(bytes.len()));
        }
        if let Ok(snap) = parse(&bytes) {
            let _ = snapshot::analyze(&snap, 10);
        }
    }

    #[test]
    fn caps_hold(bytes in proptest::collection::vec(any::<u8>(), 0..2048), cap in 1usize..64) {
        let limits = Limits { max_values: cap, max_memo: cap, max_depth: cap };
        let mut pickled = vec![0x80, 4];
        pickled.extend(&bytes);
        if let Ok(doc) = unpickle_with(&pickled, limits) {
            prop_assert!(doc.len() <= cap);
        }
    }

    #[test]
    fn mutated_json_never_panics(edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let mut bytes = common::to_json(&common::sample()).into_bytes();
        for (at, byte) in edits {
            let n = at.index(bytes.len());
            bytes[n] = byte;
        }
        if let Ok(snap) = parse(&bytes) {
            let _ = snapshot::analyze(&snap, 10);
        }
    }
}

#[test]
fn deep_json_is_an_error_not_a_stack_overflow() {
    let mut text = "[".repeat(100_000);
    text.push_str(&"]".repeat(100_000));
    let err = parse(text.as_bytes()).unwrap_err();
    assert!(matches!(err, ReadError::Json(_)), "{err}");
}

#[test]
fn unknown_opcodes_and_trailing_bytes() {
    assert_eq!(
        unpickle(b"\x80\x04\xff."),
        Err(PickleError::UnknownOpcode {
            code: 0xff,
            offset: 2
        })
    );
    // Python's pickle.loads stops at STOP and ignores what follows.
    assert!(unpickle(b"\x80\x04N.garbage").is_ok());
    assert!(matches!(
        unpickle(b"\x80\x09N."),
        Err(PickleError::Protocol { protocol: 9, .. })
    ));
}

/// The 25 KB attack: `E = {'action': 'y' * 3000}; T = [E] * 10000;
/// {'segments': [], 'device_traces': [T] * 1000}`, written with the memo as Python's
/// pickler writes it (E and T stored once, then referenced). Read naively it copies
/// the 3,000-byte name 10 million times (30 GB).
pub fn shared_traces_pickle(name_len: usize, per_trace: usize, traces: usize) -> Vec<u8> {
    let mut b = vec![0x80, 4];
    let short = |b: &mut Vec<u8>, text: &str| {
        b.push(0x8c);
        b.push(text.len() as u8);
        b.extend(text.as_bytes());
    };
    // E, memo 0.
    b.extend(b"}(");
    short(&mut b, "action");
    b.push(b'X');
    b.extend((name_len as u32).to_le_bytes());
    b.extend(std::iter::repeat_n(b'y', name_len));
    b.extend(b"uq\x000");
    // T, memo 1.
    b.extend(b"](");
    for _ in 0..per_trace {
        b.extend(b"h\x00");
    }
    b.extend(b"eq\x010");
    // The root.
    b.extend(b"}(");
    short(&mut b, "segments");
    b.push(b']');
    short(&mut b, "device_traces");
    b.extend(b"](");
    for _ in 0..traces {
        b.extend(b"h\x01");
    }
    b.extend(b"eu.");
    b
}

#[test]
fn a_small_pickle_of_shared_strings_is_refused_at_the_byte_budget() {
    let bytes = shared_traces_pickle(3000, 10_000, 1000);
    assert!(bytes.len() < 30_000, "{}", bytes.len());
    let start = std::time::Instant::now();
    let err = parse(&bytes).unwrap_err();
    assert!(matches!(err, ReadError::Bytes { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("256 MiB") && text.contains("device_traces["),
        "{text}"
    );
    // Generous: the refusal comes after ~160,000 entries, not 10 million.
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
}

#[test]
fn the_same_sharing_at_a_sane_size_still_reads() {
    // 20 entries of a short unknown action: read, names kept.
    let bytes = shared_traces_pickle(10, 10, 2);
    let snapshot = parse(&bytes).unwrap();
    assert_eq!(snapshot.device_traces.len(), 2);
    assert_eq!(snapshot.device_traces[1].len(), 10);
}
