//! A whole trace through the allocator, summarised as a [`Report`] (the JSON of
//! `vramlab simulate --json` and the data of the site's simulator).
//!
//! The report stays small whatever the trace length: the timeline is downsampled to at
//! most [`MAX_TIMELINE_POINTS`] buckets, each carrying the *maximum* allocated and
//! reserved bytes of its events (so no peak disappears from a chart), and at most
//! [`MAX_OOM_EVENTS`] OOMs keep their message. An OOM does not stop the simulation:
//! as after a caught `OutOfMemoryError`, the trace goes on and the failed id's free is
//! ignored.
//!
//! Fragmentation is reported at the moment it matters: right after the first OOM, or,
//! if there is none, when reserved memory first reached its peak — the moment a smaller
//! device would have failed (found in a first pass, then reached again by replaying
//! the trace: the simulation is deterministic).

use std::collections::HashSet;

use serde::Serialize;

use crate::allocator::{AllocError, Allocator};
use crate::config::{Config, ConfigError};
use crate::oom::Oom;
use crate::snapshot::{Fragmentation, Stats};
use crate::trace::{MAX_WARNINGS, Trace, TraceEvent, TraceOp};

/// Timeline buckets in a report.
pub const MAX_TIMELINE_POINTS: usize = 10_000;
/// OOM events kept (with their message) in a report; the rest are only counted.
pub const MAX_OOM_EVENTS: usize = 10_000;
/// Segments listed in the report's fragmentation.
pub const MAX_REPORT_SEGMENTS: usize = 1_000;

/// One entry of the report's timeline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    /// The last event of a bucket, with the bucket's maxima.
    Point {
        /// Index (0-based) of the bucket's last event in the trace.
        event: u64,
        allocated_bytes: u64,
        reserved_bytes: u64,
    },
    /// An allocation that failed.
    Oom {
        event: u64,
        line: u64,
        id: u64,
        requested_bytes: u64,
        alloc_size_bytes: u64,
        allocated_bytes: u64,
        reserved_bytes: u64,
        message: String,
    },
}

/// When the report's fragmentation was measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Moment {
    FirstOom,
    /// The first event after which reserved memory was at its peak.
    PeakReserved,
}

/// Fragmentation at a chosen moment of the trace.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FragmentationReport {
    pub at: Moment,
    /// Index of the event after which it was measured.
    pub event: u64,
    #[serde(flatten)]
    pub fragmentation: Fragmentation,
    /// Segments left out of `segments` (at most [`MAX_REPORT_SEGMENTS`] are listed).
    pub segments_omitted: u64,
}

/// The result of a simulation (`docs/cli-json.md`: `vramlab simulate --json`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub peak_allocated_bytes: u64,
    pub peak_reserved_bytes: u64,
    pub peak_requested_bytes: u64,
    pub ooms: u64,
    pub alloc_retries: u64,
    pub fragmentation: FragmentationReport,
    pub events: Vec<Event>,
    /// Trace events per timeline bucket.
    pub timeline_stride: u64,
    pub events_total: u64,
    pub oom_events_omitted: u64,
    pub first_oom_message: Option<String>,
    /// Statistics after the last event.
    pub stats: Stats,
    pub warnings: Vec<String>,
    pub warnings_total: u64,
    pub config: Config,
}

/// Runs `trace` on a fresh allocator configured by `config`.
pub fn simulate(trace: &Trace, config: &Config) -> Result<Report, ConfigError> {
    let mut run = Replay::new(config)?;
    let total = trace.events.len();
    let stride = total.div_ceil(MAX_TIMELINE_POINTS).max(1);
    let mut events = Vec::new();
    let mut oom_events = 0usize;
    let mut oom_events_omitted = 0u64;
    let mut first_oom: Option<(usize, Fragmentation)> = None;
    let mut first_oom_message = None;
    let mut peak_reserved = (0usize, 0u64);
    let (mut bucket_allocated, mut bucket_reserved) = (0, 0);
    for (i, e) in trace.events.iter().enumerate() {
        if let Some(oom) = run.apply(e) {
            if first_oom.is_none() {
                first_oom = Some((i, run.alloc.fragmentation()));
                first_oom_message = Some(oom.message());
            }
            if oom_events < MAX_OOM_EVENTS {
                oom_events += 1;
                events.push(Event::Oom {
                    event: i as u64,
                    line: e.line,
                    id: oom.id,
                    requested_bytes: oom.requested_bytes,
                    alloc_size_bytes: oom.alloc_size_bytes,
                    allocated_bytes: oom.allocated_bytes,
                    reserved_bytes: oom.reserved_bytes,
                    message: oom.message(),
                });
            } else {
                oom_events_omitted += 1;
            }
        }
        let (allocated, reserved) = (run.alloc.allocated(), run.alloc.reserved());
        if reserved > peak_reserved.1 {
            peak_reserved = (i, reserved);
        }
        bucket_allocated = bucket_allocated.max(allocated);
        bucket_reserved = bucket_reserved.max(reserved);
        if (i + 1) % stride == 0 || i + 1 == total {
            events.push(Event::Point {
                event: i as u64,
                allocated_bytes: bucket_allocated,
                reserved_bytes: bucket_reserved,
            });
            (bucket_allocated, bucket_reserved) = (0, 0);
        }
    }
    let stats = run.alloc.stats();
    let (at, event, fragmentation) = match first_oom {
        Some((i, f)) => (Moment::FirstOom, i, f),
        None => {
            let (i, _) = peak_reserved;
            let mut replay = Replay::new(config)?;
            for e in trace.events.iter().take(i + 1) {
                replay.apply(e);
            }
            (Moment::PeakReserved, i, replay.alloc.fragmentation())
        }
    };
    let mut warnings = trace.warnings.clone();
    warnings.extend(run.warnings);
    warnings.truncate(MAX_WARNINGS);
    Ok(Report {
        peak_allocated_bytes: stats.peak_allocated_bytes,
        peak_reserved_bytes: stats.peak_reserved_bytes,
        peak_requested_bytes: stats.peak_requested_bytes,
        ooms: stats.ooms,
        alloc_retries: stats.alloc_retries,
        fragmentation: bounded(at, event, fragmentation),
        events,
        timeline_stride: stride as u64,
        events_total: total as u64,
        oom_events_omitted,
        first_oom_message,
        stats,
        warnings,
        warnings_total: trace.warnings_total + run.warnings_total,
        config: config.clone(),
    })
}

fn bounded(at: Moment, event: usize, mut fragmentation: Fragmentation) -> FragmentationReport {
    let omitted = fragmentation
        .segments
        .len()
        .saturating_sub(MAX_REPORT_SEGMENTS);
    fragmentation.segments.truncate(MAX_REPORT_SEGMENTS);
    FragmentationReport {
        at,
        event: event as u64,
        fragmentation,
        segments_omitted: omitted as u64,
    }
}

/// An allocator fed with trace events one at a time (a UI stepping through a trace
/// uses this), tolerant of inconsistent built traces: what cannot be applied becomes a
/// warning.
#[derive(Clone, Debug)]
pub struct Replay {
    alloc: Allocator,
    /// Ids that hold no block: empty tensors and failed allocations.
    blockless: HashSet<u64>,
    warnings: Vec<String>,
    warnings_total: u64,
}

impl Replay {
    pub fn new(config: &Config) -> Result<Replay, ConfigError> {
        Ok(Replay {
            alloc: Allocator::new(config.clone())?,
            blockless: HashSet::new(),
            warnings: Vec::new(),
            warnings_total: 0,
        })
    }

    /// The allocator after the events applied so far.
    pub fn allocator(&self) -> &Allocator {
        &self.alloc
    }

    /// Warnings so far (at most [`MAX_WARNINGS`]) and their total count.
    pub fn warnings(&self) -> (&[String], u64) {
        (&self.warnings, self.warnings_total)
    }

    /// Applies one event; returns the OOM if it was a failed allocation.
    pub fn apply(&mut self, e: &TraceEvent) -> Option<Box<Oom>> {
        match e.op {
            TraceOp::Alloc { id, bytes } => {
                if self.blockless.contains(&id) {
                    self.warn(format!(
                        "línea {}: el id {id} ya está en uso; se ignora",
                        e.line
                    ));
                    return None;
                }
                match self.alloc.alloc(id, bytes) {
                    Ok(_) => None,
                    Err(AllocError::OutOfMemory(oom)) => {
                        self.blockless.insert(id);
                        Some(oom)
                    }
                    Err(AllocError::Empty(_)) => {
                        self.blockless.insert(id);
                        None
                    }
                    Err(other) => {
                        self.warn(format!("línea {}: {other}; se ignora", e.line));
                        None
                    }
                }
            }
            TraceOp::Free { id } => {
                if !self.blockless.remove(&id)
                    && let Err(err) = self.alloc.free(id)
                {
                    self.warn(format!("línea {}: {err}; se ignora", e.line));
                }
                None
            }
        }
    }

    fn warn(&mut self, message: String) {
        self.warnings_total += 1;
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(message);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn timeline_is_bounded_and_keeps_the_peak() {
        // 30 000 events: the reserved peak happens once, in the middle.
        let mut ops = Vec::new();
        for i in 0..15_000u64 {
            let bytes = if i == 7_777 { 900 * MIB } else { MIB };
            ops.push(TraceOp::Alloc { id: i, bytes });
            ops.push(TraceOp::Free { id: i });
        }
        let report = simulate(&Trace::from_ops(ops), &Config::new(1 << 30));
        let report = report.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(report.timeline_stride, 3);
        assert_eq!(report.events.len(), 10_000);
        let max = report
            .events
            .iter()
            .filter_map(|e| match e {
                Event::Point { reserved_bytes, .. } => Some(*reserved_bytes),
                Event::Oom { .. } => None,
            })
            .max();
        assert_eq!(max, Some(report.peak_reserved_bytes));
        assert_eq!(report.peak_reserved_bytes, 902 * MIB);
        assert!(matches!(
            report.events.last(),
            Some(Event::Point { event: 29_999, .. })
        ));
    }

    #[test]
    fn ooms_are_events_and_the_json_has_the_contract_keys() {
        let ops = [
            TraceOp::Alloc {
                id: 1,
                bytes: 8 * MIB,
            },
            TraceOp::Alloc {
                id: 2,
                bytes: 8 * MIB,
            },
            TraceOp::Free { id: 1 },
            TraceOp::Alloc {
                id: 3,
                bytes: 30 * MIB,
            },
            TraceOp::Free { id: 3 },
            TraceOp::Free { id: 2 },
        ];
        let report = simulate(&Trace::from_ops(ops), &Config::new(40 * MIB));
        let report = report.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((report.ooms, report.alloc_retries), (1, 1));
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
        let oom = report
            .events
            .iter()
            .find(|e| matches!(e, Event::Oom { .. }));
        assert!(matches!(
            oom,
            Some(Event::Oom {
                event: 3,
                line: 4,
                id: 3,
                ..
            })
        ));
        assert_eq!(report.fragmentation.at, Moment::FirstOom);
        // [8 free][8][4 free] when it failed: 12 MiB free, the largest piece 8 MiB.
        let f = &report.fragmentation.fragmentation;
        assert_eq!(
            (f.free_bytes, f.largest_free_block_bytes),
            (12 * MIB, 8 * MIB)
        );
        assert!((f.ratio - 1.0 / 3.0).abs() < 1e-9);
        let json = serde_json::to_value(&report).unwrap_or_default();
        for key in [
            "peak_allocated_bytes",
            "peak_reserved_bytes",
            "ooms",
            "alloc_retries",
        ] {
            assert!(json[key].is_u64(), "{key}");
        }
        assert_eq!(json["fragmentation"]["at"], "first_oom");
        assert!(json["fragmentation"]["ratio"].is_f64());
        assert_eq!(json["events"][0]["kind"], "point");
        assert!(
            json["events"][3]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("CUDA out of memory. Tried to allocate 30.00 MiB."))
        );
    }

    #[test]
    fn without_oom_fragmentation_is_measured_at_the_reserved_peak() {
        let mb = |bytes: u64| bytes * MIB;
        let ops = [
            TraceOp::Alloc {
                id: 1,
                bytes: mb(8),
            },
            TraceOp::Alloc {
                id: 2,
                bytes: mb(8),
            },
            TraceOp::Free { id: 1 },
            // A second segment: the peak (50 MiB), with [8 free][8][4 free] in the first.
            TraceOp::Alloc {
                id: 3,
                bytes: mb(30),
            },
            TraceOp::Free { id: 2 },
            TraceOp::Free { id: 3 },
        ];
        let report = simulate(&Trace::from_ops(ops), &Config::new(1 << 30));
        let report = report.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(report.fragmentation.at, Moment::PeakReserved);
        assert_eq!(report.fragmentation.event, 3);
        let f = &report.fragmentation.fragmentation;
        assert_eq!((f.free_bytes, f.largest_free_block_bytes), (mb(12), mb(8)));
        assert_eq!(f.segments.len(), 2);
        assert_eq!(report.first_oom_message, None);
    }

    #[test]
    fn stepping_a_replay_matches_the_report() {
        let trace = crate::scenarios::Scenario::Mixed.trace();
        let config = Config::new(crate::scenarios::Scenario::Mixed.demo_capacity());
        let mut replay = Replay::new(&config).unwrap_or_else(|e| panic!("{e}"));
        let ooms = trace.events.iter().filter_map(|e| replay.apply(e)).count();
        let report = simulate(&trace, &config).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ooms as u64, report.ooms);
        assert_eq!(replay.allocator().stats(), report.stats);
        assert_eq!(replay.warnings().1, 0);
    }

    #[test]
    fn inconsistent_built_traces_only_warn() {
        let ops = [
            TraceOp::Free { id: 5 },
            TraceOp::Alloc { id: 1, bytes: 0 },
            TraceOp::Free { id: 1 },
            TraceOp::Alloc { id: 2, bytes: 10 },
            TraceOp::Alloc { id: 2, bytes: 10 },
        ];
        let report = simulate(&Trace::from_ops(ops), &Config::new(1 << 30));
        let report = report.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(report.warnings_total, 2, "{:?}", report.warnings);
        assert!(report.warnings[0].starts_with("línea 1: el id 5 no está reservado"));
        assert!(simulate(&Trace::default(), &Config::new(0)).is_err());
    }
}
