//! The allocator simulator on a trace built to stress its out-of-memory path: 80 GiB
//! filled with 3 MiB tensors, every other one freed (thousands of split free blocks
//! that can never be released), then a long run of 64 MiB requests that all fail. The
//! same pattern at two lengths, about 1 MB and 10 MB of JSON lines: time per event
//! should not grow with the trace (the OOM path once walked every free block, and a
//! 7.7 MB trace took 227 s). Parsing and simulation, median of repeats.

use serde::Serialize;
use std::time::Instant;

use allocator::{Config, parse_trace, simulate};

#[derive(Debug, Serialize)]
pub struct AllocatorTiming {
    pub trace_bytes: usize,
    pub events: usize,
    pub ooms: u64,
    pub repeats: usize,
    pub median_ms: f64,
    pub ns_per_event: f64,
}

#[derive(Debug, Serialize)]
pub struct AllocatorBench {
    pub runs: Vec<AllocatorTiming>,
    /// ns per event of the long trace over the short one: about 1 when the cost of an
    /// event does not depend on how many came before.
    pub scaling: Option<f64>,
}

/// `fill` 3 MiB allocations, every other one freed, then `failing` 64 MiB requests.
fn trace(fill: u64, failing: u64) -> String {
    let mut out = String::new();
    for id in 1..=fill {
        out.push_str(&format!(
            "{{\"op\":\"alloc\",\"id\":{id},\"bytes\":3145728}}\n"
        ));
    }
    for id in (1..=fill).step_by(2) {
        out.push_str(&format!("{{\"op\":\"free\",\"id\":{id}}}\n"));
    }
    for id in fill + 1..=fill + failing {
        out.push_str(&format!(
            "{{\"op\":\"alloc\",\"id\":{id},\"bytes\":67108864}}\n"
        ));
    }
    out
}

pub fn run() -> AllocatorBench {
    let config = Config::new(80 << 30);
    let mut runs = Vec::new();
    for failing in [2_000u64, 180_000] {
        let text = trace(27_000, failing);
        let repeats = 3;
        let mut ooms = 0;
        let mut events = 0;
        let mut samples: Vec<f64> = (0..repeats)
            .map(|_| {
                let t = Instant::now();
                if let Ok(trace) = parse_trace(&text) {
                    events = trace.events.len();
                    if let Ok(report) = simulate(&trace, &config) {
                        ooms = report.ooms;
                    }
                }
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        samples.sort_by(f64::total_cmp);
        let median_ms = samples[repeats / 2];
        runs.push(AllocatorTiming {
            trace_bytes: text.len(),
            events,
            ooms,
            repeats,
            median_ms,
            ns_per_event: median_ms * 1e6 / events.max(1) as f64,
        });
    }
    let scaling = match runs.as_slice() {
        [short, long] if short.ns_per_event > 0.0 => Some(long.ns_per_event / short.ns_per_event),
        _ => None,
    };
    AllocatorBench { runs, scaling }
}

pub fn markdown(b: &AllocatorBench) -> String {
    let mut md = String::from(
        "\n## Allocator simulator, out-of-memory path (native, median of 3)\n\n| trace | events | OOMs | ms | ns per event |\n| ---: | ---: | ---: | ---: | ---: |\n",
    );
    for r in &b.runs {
        md.push_str(&format!(
            "| {:.1} MB | {} | {} | {:.0} | {:.0} |\n",
            r.trace_bytes as f64 / 1e6,
            r.events,
            r.ooms,
            r.median_ms,
            r.ns_per_event
        ));
    }
    if let Some(s) = b.scaling {
        md.push_str(&format!(
            "\nTime per event, long trace over short: {s:.2}× (about 1 when an event's cost does not grow with the trace).\n"
        ));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trace_fails_where_it_should() {
        let text = trace(40, 5);
        let trace = parse_trace(&text).unwrap_or_default();
        assert_eq!(trace.events.len(), 40 + 20 + 5);
        // 40 × 3 MiB fit in 200 MiB; the 64 MiB requests do not once it is full.
        let report = simulate(&trace, &Config::new(130 << 20));
        assert!(report.is_ok_and(|r| r.ooms >= 5));
    }

    #[test]
    #[ignore = "times the bench; run with --ignored --nocapture"]
    fn print_the_bench() {
        println!("{}", markdown(&run()));
    }
}
