//! The lab's pure half: replay the first `step` events of a scenario through the
//! allocator simulator and describe the state the page draws.
//!
//! Every frame is a replay from the start, so scrubbing backwards is as exact as
//! stepping forwards; the scenarios are a few thousand events, which the simulator
//! replays in well under a frame.

use allocator::scenarios::Scenario;
use allocator::{AllocError, Allocator, Config, SegmentInfo, Stats, Trace, TraceOp};
use vram::ByteSize;

/// Sizes as the rest of the page writes them ("9,79 GiB"); only PyTorch's own OOM
/// message keeps its English "488.00 MiB".
fn size(bytes: u64) -> String {
    ByteSize(bytes).binary()
}

/// What the page shows after `step` events.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    pub step: usize,
    pub total: usize,
    pub capacity: u64,
    pub stats: Stats,
    pub segments: Vec<SegmentInfo>,
    /// Spanish description of the last event.
    pub last: Option<String>,
    /// PyTorch's message for the most recent OOM, and the step it happened at.
    pub oom: Option<(usize, String)>,
}

/// The scenario for a `escenario` id, or the first one.
pub fn scenario(id: &str) -> Scenario {
    Scenario::from_id(id).unwrap_or(Scenario::Training)
}

pub fn config(capacity: u64, expandable: bool) -> Config {
    let c = Config::new(capacity);
    if expandable { c.expandable() } else { c }
}

/// Replays `trace` up to `step` events (clamped) on a fresh allocator.
pub fn replay(trace: &Trace, config: &Config, step: usize) -> Result<Frame, String> {
    let mut a = Allocator::new(config.clone()).map_err(|e| e.to_string())?;
    let step = step.min(trace.events.len());
    let mut last = None;
    let mut oom = None;
    for (i, e) in trace.events.iter().take(step).enumerate() {
        last = Some(match e.op {
            TraceOp::Alloc { id, bytes } => match a.alloc(id, bytes) {
                Ok(b) => format!(
                    "Paso {}: el tensor {id} pide {} y recibe un bloque de {} en el segmento {}.",
                    i + 1,
                    size(bytes),
                    size(b.size),
                    b.segment
                ),
                Err(AllocError::OutOfMemory(o)) => {
                    oom = Some((i + 1, o.message()));
                    format!(
                        "Paso {}: el tensor {id} pide {} y no cabe: OutOfMemoryError.",
                        i + 1,
                        size(bytes)
                    )
                }
                Err(other) => format!("Paso {}: {other}.", i + 1),
            },
            TraceOp::Free { id } => match a.free(id) {
                Ok(()) => format!(
                    "Paso {}: se libera el tensor {id}; su bloque queda en la caché.",
                    i + 1
                ),
                // The tensor that hit the OOM was never allocated: nothing to free.
                Err(_) => format!("Paso {}: el tensor {id} no llegó a existir.", i + 1),
            },
        });
    }
    Ok(Frame {
        step,
        total: trace.events.len(),
        capacity: config.capacity,
        stats: a.stats(),
        segments: a.segments(),
        last,
        oom,
    })
}

/// The whole trace's memory over time, for the chart: (event, allocated, reserved)
/// points at the simulator's bounded resolution, and the events where an OOM happened.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    pub points: Vec<(u64, u64, u64)>,
    pub ooms: Vec<u64>,
}

pub fn timeline(trace: &Trace, config: &Config) -> Result<Timeline, String> {
    let report = allocator::simulate(trace, config).map_err(|e| e.to_string())?;
    let mut t = Timeline::default();
    for e in report.events {
        match e {
            allocator::Event::Point {
                event,
                allocated_bytes,
                reserved_bytes,
            } => t.points.push((event + 1, allocated_bytes, reserved_bytes)),
            allocator::Event::Oom { event, .. } => t.ooms.push(event + 1),
        }
    }
    Ok(t)
}

/// The first step after `from` at which the allocator runs out of memory.
pub fn next_oom(trace: &Trace, config: &Config, from: usize) -> Option<usize> {
    let mut a = Allocator::new(config.clone()).ok()?;
    for (i, e) in trace.events.iter().enumerate() {
        match e.op {
            TraceOp::Alloc { id, bytes } => {
                if let Err(AllocError::OutOfMemory(_)) = a.alloc(id, bytes)
                    && i + 1 > from
                {
                    return Some(i + 1);
                }
            }
            TraceOp::Free { id } => {
                let _ = a.free(id);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn default_allocator_ooms_where_expandable_segments_survive() {
        for s in Scenario::ALL {
            let trace = s.trace();
            let cap = s.demo_capacity();
            let oom_at = next_oom(&trace, &config(cap, false), 0).unwrap();
            let frame = replay(&trace, &config(cap, false), oom_at).unwrap();
            let (at, msg) = frame.oom.clone().unwrap();
            assert_eq!(at, oom_at);
            assert!(
                msg.starts_with("CUDA out of memory. Tried to allocate"),
                "{msg}"
            );
            assert!(frame.last.unwrap().contains("no cabe"));
            assert_eq!(next_oom(&trace, &config(cap, true), 0), None, "{}", s.id());
            let end = replay(&trace, &config(cap, true), usize::MAX).unwrap();
            assert_eq!(end.step, trace.events.len());
            assert!(end.oom.is_none());
        }
    }

    #[test]
    fn timeline_agrees_with_the_replay() {
        let s = Scenario::Training;
        let (trace, c) = (s.trace(), config(s.demo_capacity(), false));
        let t = timeline(&trace, &c).unwrap();
        assert!(!t.points.is_empty());
        // The first OOM of the chart is the one stepping finds, and the chart never
        // shows more reserved memory than the capacity.
        assert_eq!(
            t.ooms.first().copied(),
            next_oom(&trace, &c, 0).map(|s| s as u64)
        );
        assert!(t.points.iter().all(|&(_, a, r)| a <= r && r <= c.capacity));
        assert!(
            timeline(&trace, &config(s.demo_capacity(), true))
                .unwrap()
                .ooms
                .is_empty()
        );
    }

    #[test]
    fn replay_is_deterministic_and_clamped() {
        let trace = Scenario::Mixed.trace();
        let c = config(Scenario::Mixed.demo_capacity(), false);
        assert_eq!(
            replay(&trace, &c, 40).unwrap(),
            replay(&trace, &c, 40).unwrap()
        );
        let start = replay(&trace, &c, 0).unwrap();
        assert_eq!((start.stats.reserved_bytes, start.last), (0, None));
        // A capacity of 0 is refused with the simulator's Spanish message.
        assert!(
            replay(&trace, &config(0, false), 3)
                .unwrap_err()
                .contains("capacidad")
        );
        assert_eq!(scenario("nada"), Scenario::Training);
    }
}
