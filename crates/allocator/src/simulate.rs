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
//! if there is none, after the event with the most reserved-but-unallocated memory
//! (found in a first pass, then reached again by replaying the trace: the simulation is
//! deterministic).

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
    MostUnallocated,
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

/// The result of a simulation (DESIGN.md: `vramlab simulate --json`).
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
    let mut run = Run::new(config)?;
    let total = trace.events.len();
    let stride = total.div_ceil(MAX_TIMELINE_POINTS).max(1);
    let mut events = Vec::new();
    let mut oom_events = 0usize;
    let mut oom_events_omitted = 0u64;
    let mut first_oom: Option<(usize, Fragmentation)> = None;
    let mut first_oom_message = None;
    let mut most_unallocated = (0usize, 0u64);
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
        if reserved - allocated > most_unallocated.1 {
            most_unallocated = (i, reserved - allocated);
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
            let (i, _) = most_unallocated;
            let mut replay = Run::new(config)?;
            for e in trace.events.iter().take(i + 1) {
                replay.apply(e);
            }
            (Moment::MostUnallocated, i, replay.alloc.fragmentation())
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

/// An allocator fed with trace events, tolerant of inconsistent built traces.
pub(crate) struct Run {
    pub alloc: Allocator,
    /// Ids that hold no block: empty tensors and failed allocations.
    blockless: HashSet<u64>,
    warnings: Vec<String>,
    warnings_total: u64,
}

impl Run {
    pub fn new(config: &Config) -> Result<Run, ConfigError> {
        Ok(Run {
            alloc: Allocator::new(config.clone())?,
            blockless: HashSet::new(),
            warnings: Vec::new(),
            warnings_total: 0,
        })
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
                if !self.blockless.remove(&id) {
                    if let Err(err) = self.alloc.free(id) {
                        self.warn(format!("línea {}: {err}; se ignora", e.line));
                    }
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
