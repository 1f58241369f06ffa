//! What the snapshot viewer draws, computed where the file is decoded: totals, the
//! largest segments as rows of block rectangles, the largest live allocations with
//! their frames, and a line per recorded trace.
//!
//! The drawing is bounded whatever the file holds: at most [`SEGMENTS_DRAWN`] rows,
//! neighbouring blocks in the same state are one rectangle, and a row with more than
//! [`MAX_RECTS`] rectangles is drawn at that resolution (each slot takes the state
//! holding most of its bytes), so a forged file cannot make the page build a million
//! SVG elements.

use serde::{Deserialize, Serialize};
use snapshot::analysis::Totals;
use snapshot::{BlockState, Segment, Snapshot};

/// Segments drawn, largest first.
pub const SEGMENTS_DRAWN: usize = 24;
/// Live allocations listed.
pub const TOP: usize = 10;
/// Rectangles drawn per segment at most.
pub const MAX_RECTS: usize = 1000;
/// Narrowest rectangle drawn, in percent of the widest segment (so a small block
/// stays visible).
const MIN_WIDTH: f64 = 0.15;

/// Everything the viewer shows for one file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapshotView {
    pub name: String,
    pub totals: Totals,
    pub segments: Vec<SegmentRow>,
    /// Segments not drawn (the smaller ones).
    pub hidden_segments: usize,
    pub allocations: Vec<AllocationRow>,
    pub traces: Vec<TraceRow>,
}

/// One drawn segment. Geometry is in percent of the widest segment's width.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SegmentRow {
    pub address: u64,
    pub total_size: u64,
    pub used_bytes: u64,
    pub expandable: bool,
    pub rects: Vec<Rect>,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rect {
    pub kind: BlockKind,
    pub x: f64,
    pub w: f64,
}

/// How a block is coloured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    /// In use by a tensor.
    Used,
    /// Freed, waiting for a stream.
    Pending,
    /// Cached, free for reuse.
    Cached,
}

impl BlockKind {
    fn of(state: &BlockState) -> Self {
        match state {
            BlockState::ActiveAllocated => BlockKind::Used,
            BlockState::ActivePendingFree => BlockKind::Pending,
            BlockState::Inactive | BlockState::Other(_) => BlockKind::Cached,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AllocationRow {
    pub size: u64,
    /// `file:line en function`, user code first; empty without recorded stacks.
    pub frames: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceRow {
    pub device: usize,
    pub entries: usize,
    /// Entries per action, by name.
    pub actions: Vec<(String, u64)>,
    pub ooms: usize,
    pub peak_rise_bytes: u64,
}

/// Decodes and analyses `bytes`, or says why not (Spanish, naming the file).
pub fn open(name: &str, bytes: &[u8]) -> Result<SnapshotView, String> {
    let snapshot = snapshot::parse(bytes).map_err(|e| format!("{name}: {e}"))?;
    Ok(view(name, &snapshot))
}

/// The view of a decoded snapshot.
pub fn view(name: &str, s: &Snapshot) -> SnapshotView {
    let analysis = snapshot::analyze(s, TOP);
    let mut order: Vec<&Segment> = s.segments.iter().collect();
    order.sort_by_key(|g| std::cmp::Reverse(g.total_size));
    let widest = order.first().map_or(1, |g| g.total_size.max(1));
    let segments = order
        .iter()
        .take(SEGMENTS_DRAWN)
        .map(|g| segment_row(g, widest))
        .collect();
    let allocations = analysis
        .largest_allocations
        .iter()
        .map(|a| AllocationRow {
            size: a.size,
            frames: a
                .frames
                .iter()
                .map(|f| {
                    let line = f.line.map_or_else(|| "?".to_owned(), |l| l.to_string());
                    format!("{}:{line} en {}", f.filename, f.name)
                })
                .collect(),
        })
        .collect();
    let traces = analysis
        .traces
        .iter()
        .map(|t| TraceRow {
            device: t.device,
            entries: t.entries,
            actions: t.actions.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            ooms: t.ooms.len(),
            peak_rise_bytes: t.peak_rise_bytes,
        })
        .collect();
    SnapshotView {
        name: name.to_owned(),
        totals: analysis.totals,
        segments,
        hidden_segments: s.segments.len().saturating_sub(SEGMENTS_DRAWN),
        allocations,
        traces,
    }
}

/// A run of bytes in one state: (kind, offset in the segment, length).
type Run = (BlockKind, u64, u64);

fn segment_row(g: &Segment, widest: u64) -> SegmentRow {
    let size = g.total_size.max(1);
    // Blocks inside the segment, clipped to it, neighbours in one state merged.
    let mut runs: Vec<Run> = Vec::new();
    for b in &g.blocks {
        let Some(offset) = b.address.checked_sub(g.address) else {
            continue;
        };
        if offset >= size {
            continue;
        }
        push_run(
            &mut runs,
            (BlockKind::of(&b.state), offset, b.size.min(size - offset)),
        );
    }
    if runs.len() > MAX_RECTS {
        runs = resample(&runs, size);
    }
    let scale = size as f64 / widest as f64 * 100.0;
    let rects = runs
        .iter()
        .map(|&(kind, offset, len)| Rect {
            kind,
            x: offset as f64 / size as f64 * scale,
            w: (len as f64 / size as f64 * scale).max(MIN_WIDTH),
        })
        .collect();
    let used_bytes = g
        .blocks
        .iter()
        .filter(|b| b.state == BlockState::ActiveAllocated)
        .fold(0u64, |sum, b| sum.saturating_add(b.size));
    SegmentRow {
        address: g.address,
        total_size: g.total_size,
        used_bytes,
        expandable: g.is_expandable == Some(true),
        rects,
    }
}

/// Appends a run, merging it into the previous one when it continues it in the same
/// state.
fn push_run(runs: &mut Vec<Run>, run: Run) {
    if let Some(last) = runs.last_mut()
        && last.0 == run.0
        && last.1.saturating_add(last.2) == run.1
    {
        last.2 = last.2.saturating_add(run.2);
        return;
    }
    runs.push(run);
}

/// `runs` redrawn on [`MAX_RECTS`] equal slots of the segment: each slot takes the
/// state holding most of its bytes.
fn resample(runs: &[Run], size: u64) -> Vec<Run> {
    let slots = MAX_RECTS as u64;
    let slot_of = |offset: u64| ((offset as u128 * slots as u128) / size as u128) as u64;
    let start_of = |slot: u64| ((slot as u128 * size as u128) / slots as u128) as u64;
    // Bytes per kind in each slot (Used, Pending, Cached).
    let mut bytes = vec![[0u64; 3]; MAX_RECTS];
    for &(kind, offset, len) in runs {
        let k = kind as usize;
        let end = offset.saturating_add(len).min(size);
        let mut at = offset;
        while at < end {
            let slot = slot_of(at).min(slots - 1);
            let slot_end = start_of(slot + 1).max(at + 1).min(end);
            if let Some(b) = bytes.get_mut(slot as usize) {
                b[k] = b[k].saturating_add(slot_end - at);
            }
            at = slot_end;
        }
    }
    let kinds = [BlockKind::Used, BlockKind::Pending, BlockKind::Cached];
    let mut out = Vec::new();
    for (slot, b) in bytes.iter().enumerate() {
        let Some((k, _)) = b
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .max_by_key(|(_, n)| **n)
        else {
            continue;
        };
        let start = start_of(slot as u64);
        push_run(
            &mut out,
            (kinds[k], start, start_of(slot as u64 + 1) - start),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const JSON: &str = r#"{"segments": [{"device": 0, "address": 1048576, "total_size": 20971520,
        "allocated_size": 2097152, "active_size": 2097152, "requested_size": 2000000,
        "stream": 0, "segment_type": "large", "blocks": [
          {"address": 1048576, "size": 2097152, "requested_size": 2000000, "state": "active_allocated",
           "frames": [{"filename": "train.py", "line": 42, "name": "forward"}]},
          {"address": 3145728, "size": 18874368, "state": "inactive", "frames": []}]}],
        "device_traces": []}"#;

    #[test]
    fn a_snapshot_becomes_what_the_viewer_draws() {
        let v = open("a.json", JSON.as_bytes()).unwrap();
        assert_eq!(v.totals.reserved_bytes, 20_971_520);
        assert_eq!(v.totals.allocated_bytes, 2_097_152);
        assert_eq!(v.allocations[0].frames, ["train.py:42 en forward"]);
        let row = &v.segments[0];
        assert_eq!(row.used_bytes, 2_097_152);
        assert_eq!(row.rects.len(), 2);
        assert_eq!(row.rects[0].kind, BlockKind::Used);
        assert!((row.rects[0].w - 10.0).abs() < 1e-9, "{:?}", row.rects);
        assert!((row.rects[1].x - 10.0).abs() < 1e-9);
        // JSON in and out: the page receives exactly this.
        let text = serde_json::to_string(&v).unwrap();
        assert_eq!(serde_json::from_str::<SnapshotView>(&text).unwrap(), v);
    }

    #[test]
    fn bad_files_are_spanish_messages_naming_the_file() {
        let bad = open("x.bin", b"hola").unwrap_err();
        assert!(
            bad.starts_with("x.bin: ") && bad.contains("snapshot"),
            "{bad}"
        );
        // A pickle that asks for code to run is refused, not executed.
        let evil = open("evil.pickle", b"\x80\x04cos\nsystem\n.").unwrap_err();
        assert!(evil.starts_with("evil.pickle: "), "{evil}");
    }

    /// A segment of `n` 512-byte blocks alternating in state.
    fn striped(n: u64) -> String {
        let blocks: Vec<String> = (0..n)
            .map(|i| {
                let state = if i % 2 == 0 {
                    "active_allocated"
                } else {
                    "inactive"
                };
                format!(
                    r#"{{"address": {}, "size": 512, "state": "{state}"}}"#,
                    4096 + i * 512
                )
            })
            .collect();
        format!(
            r#"{{"segments": [{{"address": 4096, "total_size": {}, "blocks": [{}]}}]}}"#,
            n * 512,
            blocks.join(",")
        )
    }

    #[test]
    fn drawing_is_bounded_and_keeps_the_proportions() {
        let small = open("s.json", striped(10).as_bytes()).unwrap();
        assert_eq!(small.segments[0].rects.len(), 10);
        let v = open("b.json", striped(100_000).as_bytes()).unwrap();
        let rects = &v.segments[0].rects;
        assert!(rects.len() <= MAX_RECTS, "{}", rects.len());
        assert!(!rects.is_empty());
        // Rectangles stay inside the row, in order.
        assert!(rects.windows(2).all(|w| w[0].x < w[1].x));
        assert!(
            rects
                .iter()
                .all(|r| r.x >= 0.0 && r.x + r.w <= 100.0 + MIN_WIDTH)
        );
        // Neighbours in one state merge: a segment of one state is one rectangle.
        let uniform = striped(4).replace("inactive", "active_allocated");
        assert_eq!(
            open("u.json", uniform.as_bytes()).unwrap().segments[0]
                .rects
                .len(),
            1
        );
    }

    #[test]
    fn resampling_gives_each_slot_its_majority() {
        // 3/4 used then 1/4 cached, in many small runs: two rectangles, in proportion.
        let mut runs = Vec::new();
        for i in 0..4000u64 {
            let kind = if i < 3000 {
                BlockKind::Used
            } else {
                BlockKind::Cached
            };
            runs.push((kind, i * 10, 10));
        }
        let out = resample(&runs, 40_000);
        assert_eq!(
            out,
            [
                (BlockKind::Used, 0, 30_000),
                (BlockKind::Cached, 30_000, 10_000)
            ]
        );
    }
}
