//! Snapshots written as protocol-4 pickles and as JSON, read and analysed.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Py, dict, dumps, i, s, sample, to_json};
use snapshot::{Action, BlockState, ReadError, SegmentType, analyze, parse};

const MIB: u64 = 1 << 20;

#[test]
fn sample_pickle_reads_every_field() {
    let snap = parse(&dumps(&sample())).unwrap();
    assert_eq!(snap.segments.len(), 2);
    let a = &snap.segments[0];
    assert_eq!(a.address, 0x7f00_0000_0000);
    assert_eq!(a.total_size, 20 * MIB);
    assert_eq!(a.segment_type, Some(SegmentType::Large));
    assert_eq!(a.segment_pool_id, Some((0, 0)));
    assert_eq!(a.is_expandable, Some(false));
    assert_eq!(a.blocks.len(), 4);
    assert_eq!(a.blocks[1].state, BlockState::Inactive);
    assert_eq!(a.blocks[0].frames.len(), 3);
    assert_eq!(&*a.blocks[0].frames[2].filename, "/home/ana/train.py");
    assert_eq!(a.blocks[0].frames[2].line, Some(10));
    assert_eq!(
        snap.segments[1].blocks[1].state,
        BlockState::ActivePendingFree
    );
    assert_eq!(snap.device_traces.len(), 1);
    assert_eq!(snap.device_traces[0][6].action, Action::Oom);
    assert_eq!(snap.device_traces[0][6].device_free, Some(3 * MIB));
    assert_eq!(
        snap.device_traces[0][0].time_us,
        Some(1_700_000_000_000_000)
    );
}

#[test]
fn json_form_reads_the_same() {
    let from_pickle = parse(&dumps(&sample())).unwrap();
    let from_json = parse(to_json(&sample()).as_bytes()).unwrap();
    assert_eq!(from_pickle, from_json);
}

#[test]
fn analysis_of_the_sample() {
    let a = analyze(&parse(&dumps(&sample())).unwrap(), 2);
    let t = &a.totals;
    assert_eq!((t.segments, t.blocks), (2, 7));
    assert_eq!(t.reserved_bytes, 22 * MIB);
    assert_eq!(t.allocated_bytes, 14 * MIB + MIB / 2);
    assert_eq!(t.active_bytes, 15 * MIB);
    assert_eq!(t.inactive_bytes, 7 * MIB);
    assert_eq!(t.requested_bytes, 14 * MIB + MIB / 2 - 48);
    assert_eq!(t.largest_inactive_block_bytes, 4 * MIB);
    assert_eq!(t.fragmentation, 0.4286);
    assert_eq!(a.segments[0].inactive_blocks, 2);
    assert_eq!(a.segments[0].fragmentation, 0.3333);
    assert_eq!(a.segments[1].fragmentation, 0.0);

    assert_eq!(a.largest_allocations.len(), 2);
    assert_eq!(a.largest_allocations[0].size, 8 * MIB);
    assert_eq!(a.largest_allocations[1].size, 6 * MIB);
    let frames = &a.largest_allocations[0].frames;
    assert_eq!(frames.len(), 1, "torch and C++ frames are hidden");
    assert_eq!(&*frames[0].name, "main");
    assert_eq!(a.largest_allocations[0].frames_total, 3);

    let trace = &a.traces[0];
    assert_eq!(trace.entries, 8);
    assert_eq!(trace.actions["alloc"], 3);
    assert_eq!(trace.actions["free_completed"], 1);
    assert_eq!(trace.actions["oom"], 1);
    assert_eq!(trace.ooms.len(), 1);
    assert_eq!(trace.ooms[0].size, Some(30 * MIB));
    assert_eq!(trace.ooms[0].index, 6);
    assert_eq!(trace.peak_rise_bytes, 14 * MIB);
    assert_eq!(trace.peak_entry, Some(5));
    assert_eq!(trace.allocated_at_start_bytes, Some(MIB));
    assert_eq!(trace.peak_allocated_bytes, Some(15 * MIB));
    assert_eq!(trace.peak_reserved_rise_bytes, 20 * MIB);
}

#[test]
fn json_fixture() {
    let bytes = include_bytes!("fixtures/small.json");
    let a = analyze(&parse(bytes).unwrap(), 10);
    assert_eq!(a.totals.reserved_bytes, 2 * MIB);
    assert_eq!(a.totals.allocated_bytes, MIB);
    assert_eq!(a.totals.inactive_bytes, MIB);
    assert_eq!(a.largest_allocations.len(), 1);
    assert_eq!(&*a.largest_allocations[0].frames[0].filename, "model.py");
    assert_eq!(a.traces[0].ooms[0].size, Some(4 * MIB));
    assert_eq!(a.traces[0].allocated_at_start_bytes, Some(0));
}

#[test]
fn bare_segment_list_is_accepted() {
    // `torch.cuda.memory_snapshot()`: the list of segments, no traces; old blocks
    // without addresses tile the segment.
    let seg = dict(vec![
        ("address", i(4096)),
        ("total_size", i(3000)),
        (
            "blocks",
            Py::List(vec![
                dict(vec![("size", i(1000)), ("state", s("active_allocated"))]),
                dict(vec![("size", i(2000)), ("state", s("inactive"))]),
            ]),
        ),
    ]);
    let snap = parse(&dumps(&Py::List(vec![seg]))).unwrap();
    assert_eq!(snap.segments[0].blocks[1].address, 5096);
    assert!(snap.device_traces.is_empty());
}

#[test]
fn wrong_types_name_the_path() {
    let bad = dict(vec![(
        "segments",
        Py::List(vec![dict(vec![(
            "blocks",
            Py::List(vec![dict(vec![("size", s("grande"))])]),
        )])]),
    )]);
    let err = parse(&dumps(&bad)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "segments[0].blocks[0].size: se esperaba un entero y hay un texto"
    );
    let negative = dict(vec![(
        "segments",
        Py::List(vec![dict(vec![("total_size", i(-1))])]),
    )]);
    assert!(matches!(
        parse(&dumps(&negative)).unwrap_err(),
        ReadError::Range { path, .. } if path == "segments[0].total_size"
    ));
    let missing = dict(vec![(
        "segments",
        Py::List(vec![dict(vec![("blocks", Py::List(vec![dict(vec![])]))])]),
    )]);
    assert_eq!(
        parse(&dumps(&missing)).unwrap_err().to_string(),
        "falta la clave «size» en segments[0].blocks[0]"
    );
}

#[test]
fn other_formats_are_refused_in_spanish() {
    assert_eq!(parse(b"").unwrap_err(), ReadError::Empty);
    assert_eq!(parse(b"hola").unwrap_err(), ReadError::UnknownFormat);
    let err = parse(b"{\"segments\": [").unwrap_err().to_string();
    assert!(err.starts_with("JSON no válido"), "{err}");
}

#[test]
fn big_addresses_use_long1() {
    let seg = dict(vec![
        ("address", i(0xffff_ffff_ffff_0000)),
        ("total_size", i(1)),
    ]);
    let bytes = dumps(&Py::List(vec![seg]));
    assert!(bytes.contains(&0x8a));
    assert_eq!(
        parse(&bytes).unwrap().segments[0].address,
        0xffff_ffff_ffff_0000
    );
}

#[test]
fn legacy_history_gives_frames_and_real_size() {
    // PyTorch ≤ 2.0: no `frames` on blocks, `history: [{addr, real_size, frames}]`.
    let block = dict(vec![
        ("size", i(2048)),
        ("state", s("active_allocated")),
        (
            "history",
            Py::List(vec![dict(vec![
                ("addr", i(4096)),
                ("real_size", i(2000)),
                ("frames", common::frames(77)),
            ])]),
        ),
    ]);
    let seg = dict(vec![
        ("address", i(4096)),
        ("total_size", i(2048)),
        ("blocks", Py::List(vec![block])),
    ]);
    let snap = parse(&dumps(&dict(vec![("segments", Py::List(vec![seg]))]))).unwrap();
    let b = &snap.segments[0].blocks[0];
    assert_eq!(b.requested_size, Some(2000));
    assert_eq!(b.frames.len(), 3);
    assert_eq!(b.frames[2].line, Some(77));
}
