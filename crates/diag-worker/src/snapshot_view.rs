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
    /// Live memory grouped by the line of the reader's code that allocated it (as
    /// PyTorch's memory_viz groups it), largest first.
    pub sites: Vec<SiteRow>,
    /// What the fragmentation figure means for the next request, in Spanish.
    pub fragmentation_text: Option<String>,
    pub traces: Vec<TraceRow>,
    /// The recorded OOMs, first ones first (at most [`OOMS_SHOWN`]).
    pub ooms: Vec<OomRow>,
}

/// Call sites listed.
pub const SITES: usize = 10;
/// Recorded OOMs listed.
pub const OOMS_SHOWN: usize = 3;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SiteRow {
    /// `file:line en function` of the innermost user frame, or "(sin pila)".
    pub site: String,
    pub blocks: usize,
    pub bytes: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OomRow {
    pub device: usize,
    /// Position of the `oom` entry in its device's trace.
    pub index: usize,
    pub size: Option<u64>,
    pub device_free: Option<u64>,
    /// Where it was asked for, user code first.
    pub frames: Vec<String>,
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
            frames: a.frames.iter().map(frame_text).collect(),
        })
        .collect();
    let ooms = analysis
        .traces
        .iter()
        .flat_map(|t| t.ooms.iter().map(move |o| (t.device, o)))
        .take(OOMS_SHOWN)
        .map(|(device, o)| OomRow {
            device,
            index: o.index,
            size: o.size,
            device_free: o.device_free,
            frames: o.frames.iter().map(frame_text).collect(),
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
    let fragmentation_text = fragmentation_text(&analysis.totals);
    SnapshotView {
        name: name.to_owned(),
        sites: sites(s),
        fragmentation_text,
        ooms,
        totals: analysis.totals,
        segments,
        hidden_segments: s.segments.len().saturating_sub(SEGMENTS_DRAWN),
        allocations,
        traces,
    }
}

fn frame_text(f: &snapshot::Frame) -> String {
    let line = f.line.map_or_else(|| "?".to_owned(), |l| l.to_string());
    format!("{}:{line} en {}", f.filename, f.name)
}

/// Live blocks grouped by their innermost user frame.
fn sites(s: &Snapshot) -> Vec<SiteRow> {
    let mut by_site: std::collections::HashMap<String, (usize, u64)> = Default::default();
    for b in s.segments.iter().flat_map(|g| g.blocks.iter()) {
        if b.state != BlockState::ActiveAllocated {
            continue;
        }
        let site = snapshot::analysis::user_frames(&b.frames)
            .first()
            .map_or_else(|| "(sin pila)".to_owned(), frame_text);
        let entry = by_site.entry(site).or_default();
        entry.0 += 1;
        entry.1 = entry.1.saturating_add(b.size);
    }
    let mut rows: Vec<SiteRow> = by_site
        .into_iter()
        .map(|(site, (blocks, bytes))| SiteRow {
            site,
            blocks,
            bytes,
        })
        .collect();
    rows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.site.cmp(&b.site)));
    rows.truncate(SITES);
    rows
}

/// What the fragmentation means: the largest request the cache can still serve.
fn fragmentation_text(t: &Totals) -> Option<String> {
    if t.inactive_bytes == 0 {
        return None;
    }
    let b = |n: u64| vram::ByteSize(n).binary();
    let mut text = format!(
        "La caché guarda {} libres, pero su mayor hueco es de {}: una petición mayor no cabe \
         en ella y obliga a pedir memoria nueva a CUDA (o falla si no queda).",
        b(t.inactive_bytes),
        b(t.largest_inactive_block_bytes)
    );
    if t.fragmentation >= 0.5 {
        text.push_str(
            " Con la memoria tan troceada, PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
             suele recuperar esos huecos.",
        );
    }
    Some(text)
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
    fn sites_group_live_memory_and_fragmentation_is_explained() {
        let json = r#"{"segments": [{"address": 0, "total_size": 10485760, "blocks": [
            {"address": 0, "size": 2097152, "state": "active_allocated",
             "frames": [{"filename": "/x/torch/nn/functional.py", "line": 9, "name": "linear"},
                        {"filename": "train.py", "line": 42, "name": "forward"}]},
            {"address": 2097152, "size": 1048576, "state": "inactive"},
            {"address": 3145728, "size": 4194304, "state": "active_allocated",
             "frames": [{"filename": "train.py", "line": 42, "name": "forward"}]},
            {"address": 7340032, "size": 3145728, "state": "inactive"}]}],
            "device_traces": [[{"action": "oom", "addr": 0, "size": 8388608, "device_free": 1048576,
               "frames": [{"filename": "train.py", "line": 50, "name": "step"}]}]]}"#;
        let v = open("s.json", json.as_bytes()).unwrap();
        assert_eq!(
            v.sites,
            [SiteRow {
                site: "train.py:42 en forward".into(),
                blocks: 2,
                bytes: 6 << 20
            }]
        );
        let text = v.fragmentation_text.unwrap();
        assert!(
            text.contains("4,00 MiB libres") && text.contains("3,00 MiB"),
            "{text}"
        );
        assert_eq!(v.ooms.len(), 1);
        assert_eq!(
            (v.ooms[0].size, v.ooms[0].device_free),
            (Some(8 << 20), Some(1 << 20))
        );
        assert_eq!(v.ooms[0].frames, ["train.py:50 en step"]);
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
