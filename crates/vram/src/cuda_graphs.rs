//! The memory of vLLM's CUDA graphs, and where vLLM takes it from.
//!
//! vLLM V1 replays the decoder through CUDA graphs captured at start-up, one per batch
//! size in `cudagraph_capture_sizes` and per mode (`FULL_AND_PIECEWISE` by default:
//! piecewise graphs between the attention ops, and whole-model graphs for uniform
//! decode batches). They are captured in `compile_or_warm_up_model`, after the KV cache
//! has been allocated, into one shared graph memory pool. What that pool takes depends
//! on the version:
//!
//! - up to 0.20, nothing reserved room for it: the KV cache took all of
//!   `gpu_memory_utilization` and the graphs came on top ("Actual usage is … and
//!   0.91 GiB for CUDAGraph memory" in vLLM 0.19's log for Llama-3.1-8B), so a
//!   utilisation close to 1 runs out of memory while "Capturing CUDA graphs";
//! - from 0.21 (`VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1` by default, vLLM PR
//!   #30515 and "CUDA graph memory profiling is enabled (default since v0.21.0)" in
//!   its logs), the memory profile captures two graphs per mode with a dummy KV cache
//!   and subtracts the extrapolated estimate from the KV cache, so everything stays
//!   within the budget;
//! - `--enforce-eager` captures none.
//!
//! vLLM's estimate (`profile_cudagraph_memory` in vllm/v1/worker/gpu_model_runner.py)
//! is the larger mode's first capture plus, per mode, the second capture's growth times
//! the other sizes. A piecewise graph holds one piece per layer and a full graph every
//! layer's kernels, so that growth scales with the layers on the GPU; the first
//! capture is the pool's working set for the largest batch. [`bytes`] uses the figures
//! vLLM 0.19 measured for Llama-3.1-8B on an H100 (llm-d-planner's logs, commit
//! d3121e0: "Estimated PIECEWISE CUDA graph memory: 138.00 MiB first-capture +
//! (51-1) × 6.00 MiB per-graph", FULL "260.00 MiB … + (51-1) × 6.00 MiB", 0.84 GiB
//! estimated, 0.91 GiB actual): 260 MiB, and 12 MiB per graph over its 32 layers.

use serde::{Deserialize, Serialize};

use crate::units::ByteSize;

/// Where vLLM's CUDA graphs take their memory from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CudaGraphs {
    /// vLLM 0.21 and later: estimated at start-up and subtracted from the KV cache.
    #[default]
    Profiled,
    /// vLLM 0.20 and earlier (or `VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0`):
    /// captured after the KV cache, on top of `gpu_memory_utilization`.
    AfterKv,
    /// `--enforce-eager`: no graphs.
    Off,
}

/// The batch sizes vLLM captures by default (`_set_cudagraph_sizes` in
/// vllm/config/vllm.py, without speculative decoding): 1, 2 and 4, every multiple of 8
/// below 256 and every multiple of 16 from 256, up to `min(2 × max_num_seqs, 512)` and
/// never past `max_num_batched_tokens`, which is captured itself when it is the
/// largest. Piecewise graphs take every size; full graphs replay uniform decode batches
/// of one token per sequence, so only the sizes up to `max_num_seqs` ("PIECEWISE=51
/// (largest=512), FULL=35 (largest=256)" in vLLM 0.21's log with 256 sequences).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Captures {
    pub piecewise: u64,
    pub full: u64,
    /// The largest piecewise size.
    pub largest: u64,
}

/// Sizes of the grid up to `limit`.
fn grid(limit: u64) -> u64 {
    let small = [1, 2, 4].iter().filter(|&&s| s <= limit).count() as u64;
    let eights = limit.min(255) / 8;
    let sixteens = if limit >= 256 {
        (limit - 256) / 16 + 1
    } else {
        0
    };
    small + eights + sixteens
}

fn on_grid(n: u64) -> bool {
    (n <= 4 && n.is_power_of_two()) || (n.is_multiple_of(8) && (n < 256 || n.is_multiple_of(16)))
}

impl Captures {
    pub fn of(sequences: u64, batched_tokens: u64) -> Captures {
        let largest = sequences
            .saturating_mul(2)
            .min(512)
            .min(batched_tokens)
            .max(1);
        let extra = u64::from(batched_tokens <= largest && !on_grid(batched_tokens));
        Captures {
            piecewise: grid(largest) + extra,
            full: grid(largest.min(sequences)),
            largest,
        }
    }
}

/// The first capture: the graph pool's working set for the largest batch (vLLM 0.19,
/// Llama-3.1-8B's full-graph first capture; most dense models logged 228–268 MiB).
const FIRST_CAPTURE: u64 = 260 * ByteSize::MIB;

/// What each further captured size adds per layer on the GPU, in one mode: 6 MiB per
/// graph over Llama-3.1-8B's 32 layers, in bytes.
const PER_GRAPH_PER_LAYER: u64 = 6 * ByteSize::MIB / 32;

/// The memory vLLM's CUDA graphs take on one GPU whose pipeline stage holds `layers`
/// layers; 0 with `--enforce-eager`.
///
/// Against the other dense models in the same logs (their "Estimated CUDA graph
/// memory" and actual pool): Qwen2.5-72B with TP 2, 1.72 GiB here against 1.63 and
/// 1.61; Llama-3.1-8B with PP 2, 0.55 against 0.54 and 0.65; Gemma-2-2B, 0.73 against
/// 0.52 and 0.71. Mixture-of-experts and MLA layers launch more kernels per layer and
/// come out low: Qwen3-30B-A3B 1.13 against 1.24 and 1.41, DeepSeek-V2-Lite 0.75
/// against 1.39 and 1.57. Off Hopper and in later versions the graphs are smaller than
/// this, which leaves the KV cache on the safe side: Qwen3-8B on an RTX A5000 with
/// vLLM 0.21 (LMCache/LMCache#3430) estimated 0.52 GiB, 0.81 here; Qwen2.5-7B with 128
/// sequences and vLLM 0.22, 0.37 estimated and 0.31 actual, 0.52 here.
pub fn bytes(mode: CudaGraphs, layers: u64, captures: Captures) -> u64 {
    if mode == CudaGraphs::Off || captures.piecewise == 0 {
        return 0;
    }
    let graphs = captures
        .piecewise
        .saturating_sub(1)
        .saturating_add(captures.full.saturating_sub(1));
    FIRST_CAPTURE.saturating_add(
        graphs
            .saturating_mul(layers)
            .saturating_mul(PER_GRAPH_PER_LAYER),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gib(b: u64) -> f64 {
        b as f64 / ByteSize::GIB as f64
    }

    /// The capture grids vLLM logged ("PIECEWISE=51 (largest=512), FULL=51
    /// (largest=512)" in 0.19 with 1024 sequences, "PIECEWISE=51 (largest=512),
    /// FULL=35 (largest=256)" in 0.21 with 256, "PIECEWISE=35 (largest=256), FULL=19
    /// (largest=128)" in 0.22 with 128), and smaller limits.
    #[test]
    fn capture_sizes_follow_vllms_grid() {
        for (sequences, tokens, largest, piecewise, full) in [
            (1024, 8192, 512, 51, 51),
            (256, 2048, 512, 51, 35),
            (128, 2048, 256, 35, 19),
            (16, 8192, 32, 7, 5),
            (2, 8192, 4, 3, 2),
            (1, 8192, 2, 2, 1),
            // max_num_batched_tokens caps the grid, and is captured itself.
            (256, 100, 100, 16, 15),
            (256, 96, 96, 15, 15),
        ] {
            let c = Captures::of(sequences, tokens);
            assert_eq!(
                (c.largest, c.piecewise, c.full),
                (largest, piecewise, full),
                "{sequences} {tokens}"
            );
        }
    }

    /// Llama-3.1-8B on one H100 with vLLM 0.19's defaults: the estimate it logged,
    /// 0.84 GiB, from its own first capture and per-graph growth.
    #[test]
    fn llama_8b_matches_vllms_own_estimate() {
        let h100 = Captures::of(1024, 8192);
        let b = bytes(CudaGraphs::Profiled, 32, h100);
        assert_eq!(b, (260 + 50 * 6 + 50 * 6) * ByteSize::MIB);
        assert!((gib(b) - 0.84).abs() < 0.01);
        assert_eq!(bytes(CudaGraphs::AfterKv, 32, h100), b);
        assert_eq!(bytes(CudaGraphs::Off, 32, h100), 0);
        // Pipeline stages capture their own layers: Llama-3.1-8B with PP 2 and 4
        // estimated 0.54 and 0.49 GiB.
        assert!((gib(bytes(CudaGraphs::Profiled, 16, h100)) - 0.55).abs() < 0.02);
        assert!(bytes(CudaGraphs::Profiled, 8, h100) < bytes(CudaGraphs::Profiled, 16, h100));
        // Fewer sequences, fewer full graphs.
        assert!(bytes(CudaGraphs::Profiled, 32, Captures::of(256, 2048)) < b);
    }

    #[test]
    fn forged_sizes_saturate() {
        let c = Captures::of(u64::MAX, u64::MAX);
        assert_eq!((c.piecewise, c.full), (51, 51));
        assert_eq!(bytes(CudaGraphs::Profiled, u64::MAX, c), u64::MAX);
        assert_eq!(Captures::of(0, 0).piecewise, 1);
        assert_eq!(Captures::of(0, 0).full, 0);
    }
}
