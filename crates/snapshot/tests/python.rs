//! Pickles written by CPython itself (`fixtures/make_python_pickles.py`), not by the
//! test pickler: BINPUT/LONG_BINGET memos, frames, batched APPENDS, one shared frame list.
#![allow(clippy::unwrap_used)]

use snapshot::{Action, BlockState, SegmentType, analyze, decode, parse};
use std::sync::Arc;

const MIB: u64 = 1 << 20;
const BASE: u64 = 0x7f3a_0000_0000;

fn check(bytes: &[u8], n: u64) {
    let snap = parse(bytes).unwrap();
    let seg = &snap.segments[0];
    assert_eq!(seg.address, BASE);
    assert_eq!(seg.total_size, n * MIB);
    assert_eq!(seg.segment_type, Some(SegmentType::Large));
    assert_eq!(seg.is_expandable, Some(true));
    assert_eq!(seg.segment_pool_id, Some((0, 0)));
    assert_eq!(seg.blocks.len() as u64, n);
    assert_eq!(seg.blocks[0].state, BlockState::Inactive);
    assert_eq!(seg.blocks[1].state, BlockState::ActiveAllocated);
    assert_eq!(seg.blocks[1].address, BASE + MIB);
    assert_eq!(seg.blocks[1].requested_size, Some(MIB - 8));
    // One list in Python, one allocation here.
    assert!(Arc::ptr_eq(&seg.blocks[0].frames, &seg.blocks[1].frames));
    assert_eq!(&*seg.blocks[0].frames[2].filename, "train.py");
    assert_eq!(snap.device_traces.len(), 2);
    let trace = &snap.device_traces[0];
    assert_eq!(trace.len() as u64, n + 1);
    assert_eq!(trace[1].time_us, Some(1_000_000_000_000_001));
    assert_eq!(trace[n as usize].action, Action::Oom);
    assert_eq!(trace[n as usize].size, Some(1 << 40));

    let a = analyze(&snap, 3);
    let inactive = n.div_ceil(3);
    assert_eq!(a.totals.inactive_bytes, inactive * MIB);
    assert_eq!(a.totals.allocated_bytes, (n - inactive) * MIB);
    assert_eq!(a.largest_allocations[0].address, BASE + MIB);
    assert_eq!(&*a.largest_allocations[0].frames[0].name, "step");
    assert_eq!(a.traces[0].actions["alloc"], n);
    assert_eq!(a.traces[0].peak_rise_bytes, n * MIB);
    assert_eq!(a.traces[1].entries, 0);
}

#[test]
fn cpython_protocol_2() {
    check(include_bytes!("fixtures/python_protocol2.pickle"), 40);
}

#[test]
fn cpython_protocol_4() {
    let bytes = include_bytes!("fixtures/python_protocol4.pickle");
    check(bytes, 1100);
    // Memo hits are shared nodes: far fewer nodes than values read.
    assert!(decode(bytes).unwrap().len() < 30_000);
}
