//! Memory against context for the estimator page's chart.

use super::Model;
use crate::estimate::estimate;
use crate::workload::{Attention, Workload};

/// Memory against context for the page's chart: (tokens, bytes with eager attention,
/// bytes with SDPA/Flash) at powers of two from 512 up to the model's context, for the
/// workload an evaluation settled on (`Evaluation::workload`: with the layers llama.cpp's
/// `--fit` moved, so that the curve meets the verdict at the reader's length).
pub fn context_curve(model: &Model, w: &Workload) -> Vec<(u64, u64, u64)> {
    const SEQS: [u64; 9] = [512, 1024, 2048, 4096, 8192, 16_384, 32_768, 65_536, 131_072];
    let Some(arch) = model.arch() else {
        return Vec::new();
    };
    SEQS.iter()
        .filter(|&&seq| seq <= u64::from(arch.max_positions))
        .filter_map(|&seq| {
            let at = |attention| {
                estimate(
                    &model.input,
                    &Workload {
                        seq,
                        attention,
                        ..w.clone()
                    },
                )
                .ok()
                .map(|e| e.per_gpu_bytes)
            };
            // The fused curve is the reader's own kernel when it is one (llama.cpp's
            // flash attention also pads the KV cells differently), so the curve meets
            // the verdict at the reader's length.
            let fused = match w.attention {
                Attention::Eager => Attention::Sdpa,
                other => other,
            };
            Some((seq, at(Attention::Eager)?, at(fused)?))
        })
        .collect()
}
