//! llama.cpp's compute buffer: reserved once for the worst-case graph of a micro-batch,
//! the largest of its phases (output, attention, feed-forward) with the attention mask
//! beside every layer's; and op offload, which copies CPU-resident weights into it.

use super::cells::kv_cells;
use crate::arch::{Architecture, ParamCount};
use crate::dtype::Dtype;
use crate::quant::{WeightFormat, mix_of};
use crate::workload::{Attention, Workload};

/// The smallest micro-batch for which ggml's CUDA backend takes an operation whose
/// weights live in CPU memory (`ggml_backend_cuda_device_offload_op` in
/// ggml/src/ggml-cuda/ggml-cuda.cu: `min_batch_size = 32`).
pub const OP_OFFLOAD_MIN_BATCH: u64 = 32;

/// The compute buffer llama.cpp reserves on the GPU for its worst-case graph: a
/// micro-batch of `n_ubatch` tokens (512 by default), every one producing logits
/// (`graph_reserve` in src/llama-context.cpp asks for `n_outputs = n_tokens`). ggml's
/// allocator reuses memory between operations, so the buffer is the largest phase, all
/// in f32: the output (logits over the vocabulary plus the last hidden states), the
/// attention (Q, K, V and its output, and without flash attention the
/// micro-batch × cells × heads score matrix, which the softmax overwrites in place), or
/// the feed-forward block; the layers' phases also hold the attention mask.
pub fn compute_buffer(a: &Architecture, w: &Workload) -> u64 {
    let p = phases(a, w);
    p.output.max(p.layers)
}

/// The phases of ggml's worst-case graph, in bytes: the output (logits and hidden
/// states) and the largest phase inside a layer (attention or feed-forward).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phases {
    pub output: u64,
    pub layers: u64,
    /// The feed-forward phase alone (part of `layers`).
    pub ffn: u64,
    /// The attention mask every layer reads (inside `layers` and `ffn`).
    pub mask: u64,
    /// One micro-batch of hidden states in f32: what one GPU hands the next.
    pub hidden: u64,
}

/// See [`compute_buffer`].
pub fn phases(a: &Architecture, w: &Workload) -> Phases {
    let cells = u128::from(kv_cells(w).max(1));
    let ub = u128::from(w.ubatch.max(1)).min(cells);
    let f32 = 4u128;
    let h = u128::from(a.hidden);
    let output = if a.encoder_only {
        0
    } else {
        ub * f32 * (u128::from(a.vocab) + h)
    };
    let scores = if w.attention == Attention::Flash {
        0
    } else {
        ub * cells * u128::from(a.heads) * f32
    };
    let attention =
        ub * f32 * (u128::from(a.q_width()) + 2 * u128::from(a.kv_width()) + h) + scores;
    let inter = u128::from(a.token_intermediate());
    // Gate, up and their product alive together; for MoE layers the expert matmul
    // (`MUL_MAT_ID` in `build_moe_ffn`, src/llama-graph.cpp) then writes one hidden
    // vector per routed expert and token, beside the product it reads, before the
    // weighting (in place) and the sum over experts.
    let routed = a
        .moe
        .map_or(0, |m| u128::from(m.experts_per_token.min(m.experts)));
    // The attention mask is a graph input every layer reads (`build_attn_inp_kv` in
    // src/llama-graph.cpp): [cells, micro-batch padded to GGML_KQ_MASK_PAD = 64] in
    // f32, cast once to f16 for flash attention, so ggml-alloc keeps it (the f16 copy
    // with flash attention) from the first layer to the last: it sits beside every
    // layer's phase, but not beside the output's.
    let mask = if w.attention == Attention::Flash {
        cells * ub.div_ceil(64) * 64 * 2
    } else {
        cells * ub.div_ceil(64) * 64 * f32
    };
    let ffn = ub * f32 * (h + (3 * inter).max(inter + h * routed)) + mask;
    let attention = attention + mask;
    let bytes = |v: u128| u64::try_from(v).unwrap_or(u64::MAX);
    Phases {
        output: bytes(output),
        layers: bytes(attention.max(ffn)),
        ffn: bytes(ffn),
        mask: bytes(mask),
        hidden: bytes(ub * f32 * h),
    }
}

/// Bytes of the output projection on the GPU: the head in the file's output type, or
/// with tied embeddings the copy of the embedding table llama.cpp makes for it.
pub fn output_bytes(pc: &ParamCount, arch: Option<&Architecture>, format: WeightFormat) -> u64 {
    // The head and a tied table are both stored in the output's type.
    let table = |n: u64, ncols: u64| match format {
        WeightFormat::Gguf { mix } => mix_of(mix).output_for(ncols).bytes_for(n),
        WeightFormat::Plain { dtype } => dtype.bytes_for(n),
        WeightFormat::Mxfp4Moe => crate::quant::GgufType::Q8_0.bytes_for(n),
        _ => Dtype::Bf16.bytes_for(n),
    };
    match arch {
        Some(a) if a.encoder_only => 0,
        Some(a) if a.tied_embeddings => table(pc.embeddings, u64::from(a.hidden)),
        Some(a) => table(pc.lm_head, u64::from(a.hidden)),
        None => table(pc.lm_head, 256),
    }
}

/// Whether ggml's scheduler runs CPU-resident matmuls on the GPU for this micro-batch
/// (`op_offload`; the CUDA backend's `offload_op` takes batches of 32 tokens or more),
/// copying their weights into the compute buffer.
pub fn op_offload(w: &Workload) -> bool {
    w.ubatch.min(kv_cells(w)) >= OP_OFFLOAD_MIN_BATCH
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::testing::*;

    #[test]
    fn ggml_pads_cells_and_sizes_one_compute_buffer() {
        let ggml = |seq, attention| {
            Workload::default()
                .seq(seq)
                .attention(attention)
                .engine(crate::workload::Engine::Ggml)
                .weights(WeightFormat::parse("Q4_K_M").unwrap())
        };
        // Cells: padded to 256 with flash attention, 32 without.
        assert_eq!(kv_cells(&ggml(1000, Attention::Flash)), 1024);
        assert_eq!(kv_cells(&ggml(1000, Attention::Sdpa)), 1024);
        assert_eq!(kv_cells(&ggml(1001, Attention::Sdpa)), 1024);
        assert_eq!(kv_cells(&ggml(1025, Attention::Sdpa)), 1056);
        assert_eq!(kv_cells(&ggml(1025, Attention::Flash)), 1280);
        let a = model("llama-3.1-8b").unwrap().arch.clone();
        // A short context: the output phase, 512 tokens of f32 logits and hidden states.
        let short = compute_buffer(&a, &ggml(512, Attention::Sdpa));
        assert_eq!(short, 512 * (128_256 + 4096) * 4);
        // A long one without flash attention: the 512 × cells × heads f32 scores win.
        let long = compute_buffer(&a, &ggml(32_768, Attention::Sdpa));
        assert!(long >= 512 * 32_768 * 32 * 4, "{long}");
        // Flash attention keeps it at the output phase.
        assert_eq!(compute_buffer(&a, &ggml(32_768, Attention::Flash)), short);
        // No caching-allocator margin, and the input embeddings stay in CPU RAM.
        let m = preset("llama-3.1-8b");
        let e = estimate(&m, &ggml(512, Attention::Sdpa)).unwrap();
        assert_eq!(e.breakdown.overhead, DEFAULT_CUDA_CONTEXT);
        let torch = estimate(
            &m,
            &ggml(512, Attention::Sdpa).engine(crate::workload::Engine::Torch),
        )
        .unwrap();
        let pc = a.param_count();
        assert_eq!(
            torch.breakdown.weights - e.breakdown.weights,
            embeddings_on_cpu(&pc, Some(&a), WeightFormat::parse("Q4_K_M").unwrap())
        );
    }
}
