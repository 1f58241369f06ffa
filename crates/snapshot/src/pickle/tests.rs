#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn empty_input_has_no_stop() {
    assert_eq!(unpickle(b""), Err(PickleError::NoStop));
}

#[test]
fn memo_hit_shares_the_node() {
    // [[], <memo 0>] : PROTO 4, EMPTY_LIST, MEMOIZE, MARK, EMPTY_LIST, MEMOIZE, BINGET 1, APPENDS, STOP
    let bytes = [0x80, 4, b']', 0x94, b'(', b']', 0x94, b'h', 1, b'e', b'.'];
    let doc = unpickle(&bytes).unwrap();
    let Node::List(items) = doc.get(doc.root()) else {
        panic!("not a list")
    };
    assert_eq!(items.len(), 2);
    assert_eq!(items[0], items[1]);
    assert_eq!(doc.len(), 2);
}

#[test]
fn global_is_refused_with_its_offset() {
    let err = unpickle(b"\x80\x04cos\nsystem\n").unwrap_err();
    assert_eq!(
        err,
        PickleError::Refused {
            name: "GLOBAL",
            offset: 2
        }
    );
    assert!(err.to_string().contains("GLOBAL"));
}

#[test]
fn long1_reads_twos_complement() {
    assert_eq!(long(&[0xff]), Node::Int(-1));
    assert_eq!(
        long(&[0, 0, 0, 0, 0, 0, 0, 0x80, 0]),
        Node::Int(1i128 << 63)
    );
    assert_eq!(long(&[]), Node::Int(0));
    assert_eq!(long(&[0; 17]), Node::BigInt);
}

#[test]
fn values_cap_is_enforced() {
    let mut bytes = vec![0x80, 4, b'('];
    bytes.extend(std::iter::repeat_n(b'N', 100));
    bytes.extend(b"l.");
    let limits = Limits {
        max_values: 50,
        ..Limits::default()
    };
    assert_eq!(
        unpickle_with(&bytes, limits),
        Err(PickleError::TooManyValues { cap: 50 })
    );
}

#[test]
fn marks_cannot_be_crossed() {
    // NONE, MARK, POP: the NONE below the mark is out of reach.
    assert!(matches!(
        unpickle(b"N(0."),
        Err(PickleError::StackUnderflow { name: "POP", .. })
    ));
}
