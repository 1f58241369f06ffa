//! Time of one estimator update, as the page runs it on every keystroke: the estimate,
//! both solvers and the memory-versus-context curve. Measured natively (the browser runs
//! the same code compiled to wasm, typically 1.5–3× slower), median of repeats. The last
//! case is the worst a link may ask for: a MoE at the architecture budget
//! (`vram::arch::MAX_LAYERS` layers of `MAX_EXPERTS` experts) on llama.cpp, whose
//! `--n-cpu-moe` solver once froze the tab.

use serde::Serialize;
use std::hint::black_box;
use std::time::Instant;
use vram::catalog::model;
use vram::estimate::ModelInput;
use vram::runtime::Runtime;
use vram::{Model, Settings, Task};

#[derive(Debug, Serialize)]
pub struct EstimatorTiming {
    pub case: &'static str,
    pub repeats: usize,
    pub median_us: f64,
    pub min_us: f64,
    pub max_us: f64,
}

/// What the page computes per input change: `vram::evaluate` (estimate, verdict, both
/// solvers, smallest and fewest GPUs, notes) and the memory-versus-context curve.
fn one_update(m: &Model, s: &Settings) -> u64 {
    let Ok(e) = vram::evaluate(m, s) else {
        return 0;
    };
    let mut acc = e.estimate.per_gpu_bytes ^ e.max_batch.unwrap_or(0) ^ e.max_seq.unwrap_or(0);
    for (seq, eager, sdpa) in vram::evaluate::context_curve(m, &e.workload) {
        acc ^= seq ^ eager ^ sdpa;
    }
    acc
}

pub fn run() -> Vec<EstimatorTiming> {
    let cases = [
        (
            "llama-3.1-8b inferencia, RTX 4090",
            "llama-3.1-8b",
            Task::Inference,
        ),
        (
            "llama-3.1-70b QLoRA, RTX 4090",
            "llama-3.1-70b",
            Task::Qlora,
        ),
    ];
    let mut out = Vec::new();
    let widest = "MoE en el límite (1024 capas × 4096 expertos), llama.cpp";
    let cases = cases
        .into_iter()
        .chain([(widest, "qwen3-30b-a3b", Task::Inference)]);
    for (case, id, task) in cases {
        let Some(preset) = model(id) else { continue };
        let mut arch = preset.arch.clone();
        let mut s = Settings::web_default().with_task(task);
        if case == widest {
            arch.layers = vram::arch::MAX_LAYERS;
            if let Some(moe) = arch.moe.as_mut() {
                moe.experts = vram::arch::MAX_EXPERTS;
            }
            s = s.with_runtime(Runtime::LlamaCpp);
        }
        let m = Model::new(ModelInput::Arch {
            arch: Box::new(arch),
            total_params: None,
        });
        let repeats = 200;
        let mut samples: Vec<f64> = (0..repeats)
            .map(|_| {
                let t = Instant::now();
                black_box(one_update(black_box(&m), black_box(&s)));
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        samples.sort_by(f64::total_cmp);
        out.push(EstimatorTiming {
            case,
            repeats,
            median_us: samples[repeats / 2],
            min_us: samples[0],
            max_us: samples[repeats - 1],
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[ignore = "times the bench; run with --ignored --nocapture"]
    fn print_the_bench() {
        for t in run() {
            println!(
                "{}: median {:.0} µs (min {:.0}, max {:.0})",
                t.case, t.median_us, t.min_us, t.max_us
            );
        }
    }
}
