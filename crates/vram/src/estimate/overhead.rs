//! What a process pays before any tensor: the CUDA context (per GPU family, see
//! [`crate::context`]), NCCL's communicators for each parallel group, and the caching
//! allocator's margin over the memory that comes and goes.

use super::{Breakdown, mul};
use crate::workload::{Mode, Workload};

/// Default CUDA context when the workload names no GPU (see [`crate::context`] for
/// the per-family defaults the CLI and the site apply when a GPU is chosen).
pub const DEFAULT_CUDA_CONTEXT: u64 = crate::context::GENERIC.bytes;

/// Share of the dynamic memory (activations, KV cache, gradients) added for the caching
/// allocator's rounding and fragmentation: 5%.
pub const ALLOCATOR_MARGIN_PERCENT: u64 = 5;

/// GPU memory of one NCCL communicator after its first all-reduce, per GPU, in a group
/// of two GPUs and in a larger one: 544 MiB and 688 MiB, measured with PyTorch process
/// groups on four A100s with NVLink (NVIDIA/nccl#964). NCCL's buffers grow with its
/// channel count (NVIDIA/nccl#986), which is higher on H100, so there it is a floor.
pub const NCCL_COMM_PAIR: u64 = 544 << 20;
pub const NCCL_COMM_GROUP: u64 = 688 << 20;

fn communicator(ranks: u64) -> u64 {
    match ranks {
        0 | 1 => 0,
        2 => NCCL_COMM_PAIR,
        _ => NCCL_COMM_GROUP,
    }
}

/// NCCL buffers per GPU: one communicator for the tensor-parallel group (vLLM's and
/// Megatron's all-reduces), and in training one for the data-parallel group (DDP's
/// gradient all-reduce, ZeRO's reduce-scatter and all-gather). Pipeline stages only
/// send and receive activations, and vLLM's start-up profile shows no NCCL memory for
/// them, so they add none here.
pub fn communication_bytes(w: &Workload) -> u64 {
    let tp = u64::from(w.tp.max(1));
    let split = tp * u64::from(w.pp.max(1));
    let dp = (u64::from(w.gpus.max(1)) / split).max(1);
    let data = match w.mode {
        Mode::Train => communicator(dp),
        Mode::Inference => 0,
    };
    communicator(tp).saturating_add(data)
}

/// The overhead term: the CUDA context, NCCL's communicators and, where PyTorch's
/// caching allocator hands out the memory that comes and goes (activations, KV cache,
/// gradients), its margin for rounding and fragmentation. ggml sizes its buffers once,
/// exactly: no margin.
pub fn overhead_bytes(b: &Breakdown, w: &Workload, ggml: bool) -> u64 {
    let dynamic = b
        .activations
        .saturating_add(b.kv_cache)
        .saturating_add(b.gradients);
    w.cuda_context
        .unwrap_or(DEFAULT_CUDA_CONTEXT)
        .saturating_add(communication_bytes(w))
        .saturating_add(if ggml {
            0
        } else {
            mul(&[dynamic, ALLOCATOR_MARGIN_PERCENT]) / 100
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::testing::*;

    #[test]
    fn nccl_buffers_per_parallel_group() {
        let w = |mode, gpus, tp, pp| Workload::default().mode(mode).gpus(gpus).tp(tp).pp(pp);
        // One GPU, or inference replicas without tensor parallelism: no communicator.
        assert_eq!(communication_bytes(&w(Mode::Inference, 1, 1, 1)), 0);
        assert_eq!(communication_bytes(&w(Mode::Inference, 4, 1, 1)), 0);
        assert_eq!(communication_bytes(&w(Mode::Inference, 2, 1, 2)), 0);
        // Tensor parallelism: one group of 2 or of 4.
        assert_eq!(
            communication_bytes(&w(Mode::Inference, 2, 2, 1)),
            NCCL_COMM_PAIR
        );
        assert_eq!(
            communication_bytes(&w(Mode::Inference, 4, 4, 1)),
            NCCL_COMM_GROUP
        );
        // Training on 8 GPUs with TP 2: a TP pair and a data-parallel group of 4.
        assert_eq!(
            communication_bytes(&w(Mode::Train, 8, 2, 1)),
            NCCL_COMM_PAIR + NCCL_COMM_GROUP
        );
        // It lands in the overhead.
        let two = estimate(&preset("llama-3.1-8b"), &w(Mode::Inference, 2, 2, 1)).unwrap();
        let b = two.breakdown;
        let dynamic = b.activations + b.kv_cache + b.gradients;
        assert_eq!(
            b.overhead,
            DEFAULT_CUDA_CONTEXT + NCCL_COMM_PAIR + dynamic * ALLOCATOR_MARGIN_PERCENT / 100
        );
    }
}
