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

/// Applies event `i` to `a` and says what happened; an OOM is recorded in `oom`.
fn apply(a: &mut Allocator, op: &TraceOp, i: usize, oom: &mut Option<(usize, String)>) -> String {
    match *op {
        TraceOp::Alloc { id, bytes } => match a.alloc(id, bytes) {
            Ok(b) => format!(
                "Paso {}: el tensor {id} pide {} y recibe un bloque de {} en el segmento {}.",
                i + 1,
                size(bytes),
                size(b.size),
                b.segment
            ),
            Err(AllocError::OutOfMemory(o)) => {
                *oom = Some((i + 1, o.message()));
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
    }
}

/// Replays `trace` up to `step` events (clamped) on a fresh allocator: the reference
/// [`Prepared::frame`] is tested against.
#[cfg(test)]
pub fn replay(trace: &Trace, config: &Config, step: usize) -> Result<Frame, String> {
    let a = Allocator::new(config.clone()).map_err(|e| e.to_string())?;
    Ok(replay_from(trace, a, 0, None, step))
}

/// Replays events `from..step` on `a` (the state after `from` events, with the most
/// recent OOM so far).
fn replay_from(
    trace: &Trace,
    mut a: Allocator,
    from: usize,
    mut oom: Option<(usize, String)>,
    step: usize,
) -> Frame {
    let step = step.min(trace.events.len());
    let mut last = None;
    for (i, e) in trace.events.iter().enumerate().take(step).skip(from) {
        last = Some(apply(&mut a, &e.op, i, &mut oom));
    }
    Frame {
        step,
        total: trace.events.len(),
        capacity: a.config().capacity,
        stats: a.stats(),
        segments: a.segments(),
        last,
        oom,
    }
}

/// A frame replays at most this many events: the allocator's state is kept every
/// `EVERY` events while the trace is prepared.
pub const EVERY: usize = 8_192;

/// The state after `step` events.
#[derive(Clone, Debug)]
struct Saved {
    step: usize,
    allocator: Allocator,
    oom: Option<(usize, String)>,
}

/// A trace replayed once under one configuration, in bounded chunks (the page yields
/// between them, so a long trace never freezes it): the allocator kept every
/// [`EVERY`] events, so any frame is at most that many events away, and the chart's
/// timeline, bucketed as `allocator::simulate` buckets it.
#[derive(Clone, Debug)]
pub struct Prepared {
    saved: Vec<Saved>,
    live: Saved,
    stride: usize,
    bucket: (u64, u64),
    ooms_kept: usize,
    pub timeline: Timeline,
}

impl PartialEq for Prepared {
    /// Two preparations are the same when they reached the same point of the same
    /// timeline (enough for the page's memos).
    fn eq(&self, other: &Self) -> bool {
        self.live.step == other.live.step && self.timeline == other.timeline
    }
}

impl Prepared {
    pub fn start(trace: &Trace, config: &Config) -> Result<Prepared, String> {
        let allocator = Allocator::new(config.clone()).map_err(|e| e.to_string())?;
        let live = Saved {
            step: 0,
            allocator,
            oom: None,
        };
        Ok(Prepared {
            saved: vec![live.clone()],
            live,
            stride: trace
                .events
                .len()
                .div_ceil(allocator::MAX_TIMELINE_POINTS)
                .max(1),
            bucket: (0, 0),
            ooms_kept: 0,
            timeline: Timeline::default(),
        })
    }

    /// Events prepared so far.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub fn prepared(&self) -> usize {
        self.live.step
    }

    /// Replays up to `events` more events; returns whether the whole trace is done.
    pub fn advance(&mut self, trace: &Trace, events: usize) -> bool {
        let total = trace.events.len();
        let until = self.live.step.saturating_add(events).min(total);
        for i in self.live.step..until {
            let op = &trace.events[i].op;
            let before = self.live.oom.as_ref().map(|(at, _)| *at);
            // The description is only needed for a frame; here the state is.
            match *op {
                TraceOp::Alloc { id, bytes } => {
                    if let Err(AllocError::OutOfMemory(o)) = self.live.allocator.alloc(id, bytes) {
                        self.live.oom = Some((i + 1, o.message()));
                    }
                }
                TraceOp::Free { id } => {
                    let _ = self.live.allocator.free(id);
                }
            }
            if self.live.oom.as_ref().map(|(at, _)| *at) != before
                && self.ooms_kept < allocator::MAX_OOM_EVENTS
            {
                self.ooms_kept += 1;
                self.timeline.ooms.push(i as u64 + 1);
            }
            let (a, r) = (
                self.live.allocator.allocated(),
                self.live.allocator.reserved(),
            );
            self.bucket = (self.bucket.0.max(a), self.bucket.1.max(r));
            if (i + 1).is_multiple_of(self.stride) || i + 1 == total {
                self.timeline
                    .points
                    .push((i as u64 + 1, self.bucket.0, self.bucket.1));
                self.bucket = (0, 0);
            }
            self.live.step = i + 1;
            if self.live.step.is_multiple_of(EVERY) {
                self.saved.push(self.live.clone());
            }
        }
        self.live.step >= total
    }

    /// The frame after `step` events, replayed from the nearest kept state (at most
    /// [`EVERY`] events, or the events not yet prepared).
    pub fn frame(&self, trace: &Trace, step: usize) -> Frame {
        let step = step.min(trace.events.len());
        // Strictly before `step`, so the frame's last event is replayed and described.
        let base = self
            .saved
            .iter()
            .rev()
            .find(|s| s.step < step)
            .unwrap_or(&self.saved[0]);
        replay_from(
            trace,
            base.allocator.clone(),
            base.step,
            base.oom.clone(),
            step,
        )
    }

    /// The first OOM after `from`, from the prepared timeline.
    pub fn next_oom(&self, from: usize) -> Option<usize> {
        self.timeline
            .ooms
            .iter()
            .map(|&e| e as usize)
            .find(|&e| e > from)
    }
}

/// The whole trace's memory over time, for the chart: (event, allocated, reserved)
/// points at the simulator's bounded resolution, and the events where an OOM happened.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    pub points: Vec<(u64, u64, u64)>,
    pub ooms: Vec<u64>,
}

/// `allocator::simulate`'s timeline: the reference [`Prepared`]'s is tested against.
#[cfg(test)]
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

/// The first step after `from` at which the allocator runs out of memory (the
/// reference for [`Prepared::next_oom`]).
#[cfg(test)]
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

    /// The prepared replay, in chunks of any size, gives the frames and the timeline of
    /// a replay from the start.
    #[test]
    fn prepared_frames_and_timeline_match_a_full_replay() {
        for s in Scenario::ALL {
            let trace = s.trace();
            for expandable in [false, true] {
                let c = config(s.demo_capacity(), expandable);
                let mut p = Prepared::start(&trace, &c).unwrap();
                while !p.advance(&trace, 777) {}
                assert_eq!(p.timeline, timeline(&trace, &c).unwrap(), "{}", s.id());
                assert_eq!(p.next_oom(0), next_oom(&trace, &c, 0));
                let n = trace.events.len();
                for step in [0, 1, n / 2, n, n + 5] {
                    assert_eq!(
                        p.frame(&trace, step),
                        replay(&trace, &c, step).unwrap(),
                        "{} {step}",
                        s.id()
                    );
                }
            }
        }
        // A trace longer than several kept states, with OOMs under a small capacity.
        let mut lines = String::new();
        for k in 0..(3 * EVERY as u64 + 500) {
            let bytes = (k % 7 + 1) * 3 * 1024 * 1024 + k % 513;
            lines.push_str(&format!(
                "{{\"op\":\"alloc\",\"id\":{k},\"bytes\":{bytes}}}\n"
            ));
            if k >= 5 {
                lines.push_str(&format!("{{\"op\":\"free\",\"id\":{}}}\n", k - 5));
            }
        }
        let trace = allocator::parse_trace(&lines).unwrap();
        let c = config(96 << 20, false);
        let mut p = Prepared::start(&trace, &c).unwrap();
        while !p.advance(&trace, 5_000) {}
        assert_eq!(p.timeline, timeline(&trace, &c).unwrap());
        let n = trace.events.len();
        for step in [EVERY - 1, EVERY, EVERY + 3, 2 * EVERY + 17, n - 1, n] {
            assert_eq!(
                p.frame(&trace, step),
                replay(&trace, &c, step).unwrap(),
                "{step}"
            );
        }
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
