//! Roofline speed hints for inference, clearly an upper bound on speed: prefill is
//! compute-bound (FLOPs ÷ peak FP16/BF16 throughput), decoding is memory-bound (bytes
//! read per step ÷ memory bandwidth). Real kernels reach roughly 40–70% of either peak,
//! so actual times are longer; the hints tell which resource limits which phase.

use serde::{Deserialize, Serialize};

use crate::arch::Architecture;
use crate::catalog::Gpu;
use crate::estimate::Estimate;
use crate::workload::{Engine, Mode, Workload};

pub use crate::workload::DEFAULT_RAM_GBS;

/// `gbs` GB/s in bytes per second (at least 1 GB/s).
pub fn ram_bytes_per_second(gbs: u32) -> f64 {
    f64::from(gbs.max(1)) * 1e9
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpeedHint {
    /// FLOPs of the prefill: 2 × active parameters × prompt tokens + attention.
    pub prefill_flops: f64,
    /// Time to first token at peak throughput, seconds.
    pub ttft_seconds: f64,
    /// Bytes read from GPU memory per decoding step (weights + KV cache).
    pub bytes_per_step: f64,
    /// llama.cpp: bytes the CPU reads from RAM per decoding step (layers and experts
    /// left there), at the workload's RAM bandwidth (`Workload::ram_gbs`).
    #[serde(default)]
    pub host_bytes_per_step: f64,
    /// Generated tokens per second per sequence at peak bandwidth.
    pub decode_tokens_per_second: f64,
    /// Generated tokens per second across the batch.
    pub decode_tokens_per_second_total: f64,
}

/// Speed hints for an inference estimate on `gpu`; `None` for training.
pub fn speed(a: &Architecture, w: &Workload, est: &Estimate, gpu: &Gpu) -> Option<SpeedHint> {
    if w.mode != Mode::Inference || gpu.fp16_tflops <= 0.0 || gpu.bandwidth_gbs <= 0.0 {
        return None;
    }
    let tp = f64::from(w.tp.max(1));
    let (b, s) = (w.batch as f64, w.seq as f64);
    let active_ratio = est.params.active as f64 / est.params.total.max(1) as f64;
    // Linear layers: 2 FLOPs per active parameter per token; attention scores and
    // values: 2 × 2 × s² × q_width per layer, halved by the causal mask.
    let linear = 2.0 * est.params.active as f64 * s * b;
    let attention = 2.0 * s * s * b * a.q_width() as f64 * f64::from(a.layers);
    let prefill_flops = (linear + attention) / tp;
    // llama.cpp's pipeline works on several micro-batches of a long prompt at once
    // (the copies of each GPU's inputs exist for that): at best its GPUs divide the
    // prefill among them, up to one micro-batch each.
    let overlap = if w.engine == Engine::Ggml && crate::estimate::ggml::pipeline(a, w) {
        let ubatches = w.seq.div_ceil(w.ubatch.max(1)).max(1);
        crate::estimate::ggml::devices(w).min(ubatches) as f64
    } else {
        1.0
    };
    let ttft_seconds = prefill_flops / overlap / (gpu.fp16_tflops * 1e12);
    // One decoding step reads the active weights once and the whole KV cache. Pipeline
    // stages run one after another for a sequence: a step reads every stage's share
    // (llama.cpp sums its GPUs' own; other engines split evenly among `pp` stages).
    let bytes_per_step = if est.gpu_read_per_token > 0 {
        est.gpu_read_per_token as f64
    } else {
        (est.breakdown.weights as f64 * active_ratio + est.breakdown.kv_cache as f64)
            * f64::from(w.pp.max(1))
    };
    // Layers run one after another: the CPU's share of a step adds to the GPU's.
    let host_bytes_per_step = est.host_read_per_token as f64;
    let step = bytes_per_step / (gpu.bandwidth_gbs * 1e9)
        + host_bytes_per_step / ram_bytes_per_second(w.ram_gbs);
    let per_seq = if step > 0.0 { 1.0 / step } else { 0.0 };
    Some(SpeedHint {
        prefill_flops,
        ttft_seconds,
        bytes_per_step,
        host_bytes_per_step,
        decode_tokens_per_second: per_seq,
        decode_tokens_per_second_total: per_seq * b,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{gpu, model};
    use crate::estimate::{ModelInput, estimate};

    #[test]
    fn llama_8b_on_a_4090() {
        let a = model("llama-3.1-8b").unwrap().arch.clone();
        let w = Workload::default().seq(1);
        let m = ModelInput::Arch {
            arch: Box::new(a.clone()),
            total_params: None,
        };
        let e = estimate(&m, &w).unwrap();
        let g = gpu("rtx-4090").unwrap();
        let h = speed(&a, &w, &e, g).unwrap();
        // 16 GB of bf16 weights at 1008 GB/s: about 63 tokens/s at most.
        assert!((60.0..66.0).contains(&h.decode_tokens_per_second), "{h:?}");
        // One token of prefill: 2 × 8.03e9 FLOPs.
        assert!((h.prefill_flops - 2.0 * 8_030_261_248.0 - 2.0 * 4096.0 * 32.0).abs() < 1.0);
        let train = (w).mode(Mode::Train);
        assert!(speed(&a, &train, &e, g).is_none());
    }

    /// Pipeline stages (vLLM's `--pp`) run one after another for a sequence: two of
    /// them generate no faster than one GPU reading everything, while tensor
    /// parallelism reads half on each at once and halves the prefill's bound.
    #[test]
    fn pipeline_stages_add_their_reads() {
        let a = model("llama-3.1-8b").unwrap().arch.clone();
        let m = ModelInput::Arch {
            arch: Box::new(a.clone()),
            total_params: None,
        };
        let g = gpu("h100-sxm").unwrap();
        let hint = |gpus: u32, tp: u32, pp: u32| {
            let w = Workload::default().seq(4096).gpus(gpus).tp(tp).pp(pp);
            speed(&a, &w, &estimate(&m, &w).unwrap(), g).unwrap()
        };
        let (one, tp2, pp2) = (hint(1, 1, 1), hint(2, 2, 1), hint(2, 1, 2));
        let near = |x: f64, y: f64| (x / y - 1.0).abs() < 0.01;
        assert!(
            near(pp2.bytes_per_step, one.bytes_per_step),
            "{pp2:?} vs {one:?}"
        );
        assert!(
            near(tp2.bytes_per_step * 2.0, one.bytes_per_step),
            "{tp2:?}"
        );
        assert!(near(pp2.ttft_seconds, one.ttft_seconds));
        assert!(near(tp2.ttft_seconds * 2.0, one.ttft_seconds));
    }

    /// Qwen3-30B-A3B in Q4_K_M on an RTX 4090 through ggml, 4096 tokens: its speed
    /// hint with `-ngl`, `--n-cpu-moe` and the RAM bandwidth given.
    fn moe_hint(gpu_layers: Option<u32>, cpu_moe: u32, ram_gbs: u32) -> SpeedHint {
        let a = model("qwen3-30b-a3b").unwrap().arch.clone();
        let m = ModelInput::Arch {
            arch: Box::new(a.clone()),
            total_params: None,
        };
        let w = Workload::default()
            .seq(4096)
            .gpu_layers(gpu_layers)
            .cpu_moe(cpu_moe)
            .ram_gbs(ram_gbs)
            .engine(crate::workload::Engine::Ggml)
            .weights(crate::quant::WeightFormat::parse("Q4_K_M").unwrap());
        let e = estimate(&m, &w).unwrap();
        speed(&a, &w, &e, gpu("rtx-4090").unwrap()).unwrap()
    }

    /// Layers and experts llama.cpp leaves in RAM are read by the CPU at RAM speed:
    /// moving them off the GPU frees memory but slows generation, never speeds it up.
    #[test]
    fn what_stays_in_ram_slows_generation() {
        let tps = |gpu_layers, cpu_moe| moe_hint(gpu_layers, cpu_moe, DEFAULT_RAM_GBS);
        let all = tps(None, 0);
        assert_eq!(all.host_bytes_per_step, 0.0);
        let experts = tps(None, 24);
        let layers = tps(Some(24), 0);
        for slower in [experts, layers] {
            assert!(slower.host_bytes_per_step > 0.0);
            assert!(
                slower.decode_tokens_per_second < all.decode_tokens_per_second,
                "{slower:?} vs {all:?}"
            );
        }
        // Half the layers on the CPU read more from RAM than half the experts alone.
        assert!(layers.host_bytes_per_step > experts.host_bytes_per_step);
    }

    /// The reader's RAM bandwidth sets the CPU's share of a step, and only that: the
    /// step time is the GPU's read plus the RAM's read at that bandwidth.
    #[test]
    fn ram_bandwidth_bounds_only_what_stays_in_ram() {
        let g = gpu("rtx-4090").unwrap();
        let hint = |cpu_moe, ram_gbs| moe_hint(None, cpu_moe, ram_gbs);
        // Nothing in RAM: the bandwidth changes nothing.
        assert_eq!(hint(0, 50), hint(0, 400));
        let (slow, fast) = (hint(24, 50), hint(24, 400));
        assert_eq!(slow.host_bytes_per_step, fast.host_bytes_per_step);
        assert!(fast.decode_tokens_per_second > slow.decode_tokens_per_second);
        for (h, gbs) in [(slow, 50.0), (fast, 400.0)] {
            let step =
                h.bytes_per_step / (g.bandwidth_gbs * 1e9) + h.host_bytes_per_step / (gbs * 1e9);
            assert!(
                (h.decode_tokens_per_second - 1.0 / step).abs() < 1e-9,
                "{h:?}"
            );
        }
    }
}
