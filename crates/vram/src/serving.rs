//! Serving-engine budgeting, the way vLLM does it at start-up: take
//! `gpu_memory_utilization` of the card, subtract the weights, the activation peak of a
//! profiling forward pass and the non-PyTorch memory (CUDA context), and give the rest
//! to the paged KV cache in blocks of `block_size` tokens.

use serde::{Deserialize, Serialize};

use crate::arch::Architecture;
use crate::estimate::{Estimate, kv_cache};
use crate::workload::Workload;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServingPlan {
    /// Memory the engine may use: capacity × utilisation.
    pub budget_bytes: u64,
    /// What is left for the KV cache (0 when the model does not fit).
    pub kv_budget_bytes: u64,
    pub kv_bytes_per_token: u64,
    /// Whole blocks that fit, and the tokens they hold.
    pub blocks: u64,
    pub tokens: u64,
    /// Sequences of `seq + new_tokens` tokens that can be in flight at once.
    pub max_sequences: u64,
}

/// Plans a serving deployment. `utilization_percent` is vLLM's
/// `gpu_memory_utilization` × 100; `est` must be an inference estimate of one sequence.
pub fn plan(
    a: &Architecture,
    w: &Workload,
    est: &Estimate,
    capacity: u64,
    utilization_percent: u8,
    block_size: u32,
) -> ServingPlan {
    let budget =
        u64::try_from(u128::from(capacity) * u128::from(utilization_percent.min(100)) / 100)
            .unwrap_or(capacity);
    let b = &est.breakdown;
    let used = b
        .weights
        .saturating_add(b.activations)
        .saturating_add(b.overhead);
    let kv_budget = budget.saturating_sub(used);
    // Each pipeline stage caches its own layers.
    let per_token = kv_cache(
        a,
        &Workload {
            seq: 1,
            new_tokens: 0,
            batch: 1,
            ..w.clone()
        },
    )
    .div_ceil(u64::from(w.pp.max(1)))
    .max(1);
    let block = u64::from(block_size.max(1));
    let blocks = kv_budget / per_token.saturating_mul(block);
    let tokens = blocks * block;
    let seq_tokens = w.seq.saturating_add(w.new_tokens).max(1);
    ServingPlan {
        budget_bytes: budget,
        kv_budget_bytes: kv_budget,
        kv_bytes_per_token: per_token,
        blocks,
        tokens,
        max_sequences: tokens / seq_tokens,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::model;
    use crate::estimate::{Breakdown, ModelInput, estimate};
    use crate::units::ByteSize;

    /// vLLM's start-up log for Llama-3.1-8B: 4.60 GiB of KV cache hold 37 696 tokens
    /// (public-cases kv-2).
    #[test]
    fn vllm_block_rounding() {
        let a = model("llama-3.1-8b").unwrap().arch.clone();
        let w = Workload::default();
        let m = ModelInput::Arch {
            arch: Box::new(a.clone()),
            total_params: None,
        };
        let mut e = estimate(&m, &w).unwrap();
        // Force a KV budget of exactly 4.60 GiB.
        let kv = (4.60 * ByteSize::GIB as f64) as u64;
        e.breakdown = Breakdown {
            weights: 0,
            activations: 0,
            overhead: 0,
            ..e.breakdown
        };
        let p = plan(&a, &w, &e, kv, 100, 16);
        assert_eq!(p.kv_bytes_per_token, 131_072);
        assert_eq!(p.tokens, 37_680);
        assert_eq!(p.tokens % 16, 0);
        assert_eq!(p.max_sequences, 37_680 / 4096);
    }

    #[test]
    fn no_room_means_no_tokens() {
        let a = model("llama-3.1-70b").unwrap().arch.clone();
        let w = Workload::default();
        let m = ModelInput::Arch {
            arch: Box::new(a.clone()),
            total_params: None,
        };
        let e = estimate(&m, &w).unwrap();
        let p = plan(&a, &w, &e, 24 * ByteSize::GIB, 90, 16);
        assert_eq!((p.kv_budget_bytes, p.tokens, p.max_sequences), (0, 0, 0));
    }
}
