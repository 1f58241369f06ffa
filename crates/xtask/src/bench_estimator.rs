//! Time of one estimator update, as the page runs it on every keystroke: the estimate,
//! both solvers and the memory-versus-context curve. Measured natively (the browser runs
//! the same code compiled to wasm, typically 1.5–3× slower), median of repeats.

use serde::Serialize;
use std::hint::black_box;
use std::time::Instant;
use vram::catalog::model;
use vram::estimate::ModelInput;
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
    for (case, id, task) in cases {
        let Some(preset) = model(id) else { continue };
        let m = Model::new(ModelInput::Arch {
            arch: Box::new(preset.arch.clone()),
            total_params: None,
        });
        let s = Settings::web_default().with_task(task);
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
