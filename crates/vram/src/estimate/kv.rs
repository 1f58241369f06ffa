//! The KV cache as PyTorch engines keep it: K and V per layer and token (MLA's latent
//! instead), sliding-window layers capped at their window, quantised caches paying
//! their scales; the fixed state of Gated DeltaNet layers per sequence; and the second
//! cache old `generate` kept alive.

use crate::arch::Architecture;
use crate::workload::{Engine, Mode, Workload};

/// KV cache bytes: 2 (K and V) × layers × kv_heads × head_dim × bytes × tokens ×
/// batch, with sliding-window layers capped at their window. MLA models cache
/// (kv_lora_rank + qk_rope_head_dim) elements per token and layer instead, as vLLM and
/// SGLang do (Transformers' eager code caches the decompressed K and V).
pub fn kv_cache(a: &Architecture, w: &Workload) -> u64 {
    if a.encoder_only || w.mode == Mode::Train {
        return 0;
    }
    let tokens = w.seq.saturating_add(w.new_tokens);
    let window = a
        .sliding_window
        .map_or(tokens, |sw| u64::from(sw.window).min(tokens));
    kv_bytes(a, w, tokens, window, w.batch)
}

/// KV bytes for `global` tokens in each global layer and `windowed` tokens in each
/// sliding-window layer, `times` over (sequences, or 1 for a pool counted whole).
pub(crate) fn kv_bytes(
    a: &Architecture,
    w: &Workload,
    global: u64,
    windowed: u64,
    times: u64,
) -> u64 {
    let (windowed_layers, global_layers) = a.windowed_layers();
    let layer_tokens = u128::from(global_layers) * u128::from(global)
        + u128::from(windowed_layers) * u128::from(windowed);
    // Elements cached per token and layer. MLA caches one latent plus the rotary key,
    // replicated on every tensor-parallel rank; GQA caches K and V split across ranks.
    let width = match a.mla {
        Some(m) => u128::from(m.cached_width()),
        None => {
            2 * u128::from(a.kv_heads).div_ceil(u128::from(w.tp.max(1))) * u128::from(a.head_dim)
        }
    };
    let bits_per_32 = u128::from(w.kv_dtype.bits_per_32(w.compute_dtype(), w.engine));
    let bits = layer_tokens * width * bits_per_32 * u128::from(times);
    u64::try_from(bits.div_ceil(8 * 32)).unwrap_or(u64::MAX)
}

/// The state transformers keeps for each Gated DeltaNet layer and sequence
/// (`Qwen3NextDynamicCache`'s `conv_states` and `recurrent_states`), which does not
/// grow with the context: the convolution's last inputs in the compute dtype, and the
/// delta rule's matrix in fp32, the dtype `chunk_gated_delta_rule` computes and returns
/// its final state in (both transformers' own `torch_chunk_gated_delta_rule`, which
/// casts q, k and v to float32, and flash-linear-attention's kernels). Tensor
/// parallelism splits the heads. Zero for models without such layers and in training.
pub fn linear_state(a: &Architecture, w: &Workload) -> u64 {
    let Some(l) = a.linear else {
        return 0;
    };
    if w.mode == Mode::Train {
        return 0;
    }
    let (conv, recurrent) = l.state_elements();
    let c = u128::from(w.compute_dtype().bytes_for(1));
    let per_layer = (u128::from(conv) * c + u128::from(recurrent) * 4) / u128::from(w.tp.max(1));
    let bytes = per_layer * u128::from(a.linear_layers()) * u128::from(w.batch);
    u64::try_from(bytes).unwrap_or(u64::MAX)
}

/// AutoAWQ's fused modules allocate each layer's `WindowedCache` when the model is
/// loaded: `max_seq_len` tokens (its `max_new_tokens`, which must hold the prompt) for
/// the whole batch, in fp16, whatever the generation then uses.
pub fn awq_fused_cache(a: &Architecture, w: &Workload) -> u64 {
    kv_cache(
        a,
        &Workload {
            seq: w.seq.max(w.new_tokens),
            new_tokens: 0,
            kv_dtype: crate::workload::KvDtype::Fp16,
            ..w.clone()
        },
    )
}

/// The KV cache of the step before the last one of `generate`: what transformers kept
/// alive beside the new cache until 2024. Its model forward received the previous
/// step's cache as a tuple of tensors, `torch.cat` made each layer's new cache a copy,
/// and the tuple `generate` held kept the old one from being freed, so "the current
/// implementation basically has 2 copies of the full cache in every iteration"
/// (huggingface/transformers#30536; also #25930). Newer versions update the cache
/// object in place. Zero when nothing is generated or the cache is not PyTorch's.
pub fn previous_step_cache(a: &Architecture, w: &Workload) -> u64 {
    if w.new_tokens == 0 || w.engine != Engine::Torch {
        return 0;
    }
    kv_cache(
        a,
        &Workload {
            new_tokens: w.new_tokens - 1,
            ..w.clone()
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::testing::*;

    #[test]
    fn kv_cache_windows_and_dtypes() {
        let gemma = model("gemma-3-4b").unwrap().arch.clone();
        let w = Workload::default().seq(32_768);
        // 34 layers: 29 windowed at 1024 tokens, 5 global at 32 768.
        let per_token_layer = 2 * 4 * 256 * 2;
        assert_eq!(
            kv_cache(&gemma, &w),
            per_token_layer * (5 * 32_768 + 29 * 1024)
        );
        let fp8 = w.clone().kv_dtype(KvDtype::Fp8);
        assert_eq!(kv_cache(&gemma, &fp8) * 2, kv_cache(&gemma, &w));
        let bert = model("bert-base-uncased").unwrap().arch.clone();
        assert_eq!(kv_cache(&bert, &w), 0);
    }

    #[test]
    fn mla_caches_the_latent() {
        let a = crate::arch::tests::deepseek_v2_lite();
        let w = Workload::default().seq(1000);
        // 27 layers × (512 + 64) elements × 2 bytes per token.
        assert_eq!(kv_cache(&a, &w), 1000 * 27 * 576 * 2);
        // Tensor parallelism replicates the latent instead of splitting heads.
        assert_eq!(kv_cache(&a, &w.clone().tp(2)), kv_cache(&a, &w));
        let gqa = Architecture { mla: None, ..a };
        assert!(kv_cache(&gqa, &w) > 10 * 1000 * 27 * 576 * 2);
    }
}
