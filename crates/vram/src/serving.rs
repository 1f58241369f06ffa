//! Serving-engine budgeting, the way vLLM does it at start-up: take
//! `gpu_memory_utilization` of the card, subtract the weights, the peak of its profile
//! run and the non-PyTorch memory (CUDA context, NCCL), and give the rest to the paged
//! KV cache in blocks of `block_size` tokens.
//!
//! The profile run (`profile_run` in vllm/v1/worker/gpu_model_runner.py) is a forward
//! pass over `max_num_batched_tokens` tokens followed by a dummy sampler pass over
//! `max_num_seqs` rows of logits (`_dummy_sampler_run`). With a vocabulary of 128k–256k
//! the sampler is the larger of the two: its logits stay alive in the model's dtype
//! while the sampler holds an fp32 copy (`logits.to(torch.float32)` in
//! vllm/v1/sample/sampler.py), the fp32 probabilities (`logits.softmax(dim=-1,
//! dtype=torch.float32)`) and the fp32 exponential noise it divides them by
//! (`random_sample` in vllm/v1/sample/ops/topk_topp_sampler.py).

use serde::{Deserialize, Serialize};

use crate::arch::Architecture;
use crate::estimate::{Estimate, kv_cache, prefill_activations};
use crate::units::ByteSize;
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

/// What vLLM's start-up profile runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    /// `max_num_batched_tokens`: the tokens of the profiling forward pass.
    pub batched_tokens: u64,
    /// `max_num_seqs`: the rows of logits the dummy sampler pass takes.
    pub sequences: u64,
}

impl Profile {
    /// vLLM v1's defaults for its OpenAI-compatible server (`get_batch_defaults` in
    /// vllm/engine/arg_utils.py): on GPUs with at least 70 GiB that are not A100s, 8192
    /// tokens and 1024 sequences; elsewhere 2048 and 256. `max_num_seqs` never exceeds
    /// `max_num_batched_tokens`.
    pub fn vllm_default(total_memory: u64, is_a100: bool) -> Profile {
        let big = total_memory >= 70 * ByteSize::GIB && !is_a100;
        let (batched_tokens, sequences) = if big { (8192, 1024) } else { (2048, 256) };
        Profile {
            batched_tokens,
            sequences: sequences.min(batched_tokens),
        }
    }
}

/// Bytes of the profile run's peak: the larger of the forward pass over
/// `batched_tokens` tokens and the sampler pass over `sequences` rows of logits (see the
/// module documentation for the tensors it holds).
pub fn profile_peak(a: &Architecture, w: &Workload, p: Profile) -> u64 {
    let forward = prefill_activations(
        a,
        &Workload {
            batch: 1,
            seq: p.batched_tokens.max(1),
            new_tokens: 0,
            ..w.clone()
        },
    );
    let c = w.compute_dtype().bytes_for(1);
    // The model-dtype logits, their fp32 copy (none when they already are fp32), the
    // fp32 probabilities and the fp32 noise.
    let per_element = c + if c < 4 { 4 } else { 0 } + 4 + 4;
    let sampler =
        u64::try_from(u128::from(p.sequences) * u128::from(a.vocab) * u128::from(per_element))
            .unwrap_or(u64::MAX);
    forward.max(sampler)
}

/// Plans a serving deployment. `utilization_percent` is vLLM's
/// `gpu_memory_utilization` × 100; `est` must be an inference estimate of one sequence
/// (its weights and overhead are used); `profile_peak` is [`profile_peak`]'s bytes.
pub fn plan(
    a: &Architecture,
    w: &Workload,
    est: &Estimate,
    capacity: u64,
    utilization_percent: u8,
    block_size: u32,
    profile_peak: u64,
) -> ServingPlan {
    let budget =
        u64::try_from(u128::from(capacity) * u128::from(utilization_percent.min(100)) / 100)
            .unwrap_or(capacity);
    // vLLM itself (`memory_profiling` in vllm/utils/mem_utils.py) charges the weights,
    // the profile's allocated peak and only the *growth* of non-PyTorch memory since the
    // worker's first snapshot (0.25 GiB on one H100 and 2.07 GiB with TP 2 or 4 in vLLM
    // 0.19's logs), not the CUDA context that snapshot already holds. Charging the whole
    // estimated overhead instead is conservative by about a context on one GPU; the
    // growth's parts (lazily loaded kernels, custom all-reduce buffers) are not modelled.
    let b = &est.breakdown;
    let used = b
        .weights
        .saturating_add(profile_peak)
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
        let p = plan(&a, &w, &e, kv, 100, 16, 0);
        assert_eq!(p.kv_bytes_per_token, 131_072);
        assert_eq!(p.tokens, 37_680);
        assert_eq!(p.tokens % 16, 0);
        assert_eq!(p.max_sequences, 37_680 / 4096);
    }

    /// The profile run's peak is the sampler's for large vocabularies: Llama-3.1-8B on
    /// an H100 holds 1024 × 128 256 logits in bf16, their fp32 copy, the probabilities
    /// and the noise (14 bytes each); vLLM 0.19 logged a torch peak of 1.89 GiB for it.
    #[test]
    fn profile_peak_is_the_sampler_for_big_vocabularies() {
        let a = model("llama-3.1-8b").unwrap().arch.clone();
        let w = Workload::default();
        let h100 = Profile::vllm_default(80 * ByteSize::GIB, false);
        assert_eq!(
            h100,
            Profile {
                batched_tokens: 8192,
                sequences: 1024
            }
        );
        assert_eq!(profile_peak(&a, &w, h100), 1024 * 128_256 * 14);
        // An A100 80GB and a 24 GB card get the small defaults.
        let small = Profile {
            batched_tokens: 2048,
            sequences: 256,
        };
        assert_eq!(Profile::vllm_default(80 * ByteSize::GIB, true), small);
        assert_eq!(Profile::vllm_default(24 * ByteSize::GIB, false), small);
        // fp32 logits need no fp32 copy.
        let fp32 = Workload {
            weights: crate::quant::WeightFormat::Plain {
                dtype: crate::dtype::Dtype::Fp32,
            },
            ..Workload::default()
        };
        let sampler_only = Profile {
            batched_tokens: 1,
            sequences: 1024,
        };
        assert_eq!(profile_peak(&a, &fp32, sampler_only), 1024 * 128_256 * 12);
        // A small vocabulary leaves the forward pass as the peak.
        let opt = model("tinyllama-1.1b").unwrap().arch.clone();
        let tiny = Profile {
            batched_tokens: 8192,
            sequences: 8,
        };
        assert!(profile_peak(&opt, &w, tiny) > 8 * 32_000 * 14);
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
        let peak = profile_peak(&a, &w, Profile::vllm_default(24 * ByteSize::GIB, false));
        let p = plan(&a, &w, &e, 24 * ByteSize::GIB, 90, 16, peak);
        assert_eq!((p.kv_budget_bytes, p.tokens, p.max_sequences), (0, 0, 0));
    }
}
