//! Time of one estimator update, as the page runs it on every keystroke: the estimate,
//! both solvers and the memory-versus-context curve. Measured natively (the browser runs
//! the same code compiled to wasm, typically 1.5–3× slower), median of repeats.

use serde::Serialize;
use std::hint::black_box;
use std::time::Instant;
use vram::catalog::model;
use vram::estimate::{ModelInput, estimate};
use vram::solve;
use vram::workload::{Attention, Mode, Workload};

#[derive(Debug, Serialize)]
pub struct EstimatorTiming {
    pub case: &'static str,
    pub repeats: usize,
    pub median_us: f64,
    pub min_us: f64,
    pub max_us: f64,
}

fn one_update(m: &ModelInput, w: &Workload, capacity: u64) -> u64 {
    let mut acc = estimate(m, w).map(|e| e.per_gpu_bytes).unwrap_or(0);
    acc ^= solve::max_batch(m, w, capacity).unwrap_or(0);
    acc ^= solve::max_seq(m, w, capacity).unwrap_or(0);
    for seq in [
        512u64, 1024, 2048, 4096, 8192, 16_384, 32_768, 65_536, 131_072,
    ] {
        for attention in [Attention::Eager, Attention::Sdpa] {
            let point = Workload {
                seq,
                attention,
                ..w.clone()
            };
            acc ^= estimate(m, &point).map(|e| e.per_gpu_bytes).unwrap_or(0);
        }
    }
    acc
}

pub fn run() -> Vec<EstimatorTiming> {
    let cases = [
        (
            "llama-3.1-8b inferencia, 24 GiB",
            "llama-3.1-8b",
            Mode::Inference,
        ),
        ("llama-3.1-70b QLoRA, 24 GiB", "llama-3.1-70b", Mode::Train),
    ];
    let mut out = Vec::new();
    for (case, id, mode) in cases {
        let Some(preset) = model(id) else { continue };
        let m = ModelInput::Arch {
            arch: Box::new(preset.arch.clone()),
            total_params: None,
        };
        let w = Workload {
            mode,
            finetune: if mode == Mode::Train {
                vram::workload::Finetune::Qlora
            } else {
                vram::workload::Finetune::Full
            },
            ..Workload::default()
        };
        let capacity = 24u64 << 30;
        let repeats = 200;
        let mut samples: Vec<f64> = (0..repeats)
            .map(|_| {
                let t = Instant::now();
                black_box(one_update(black_box(&m), black_box(&w), capacity));
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
