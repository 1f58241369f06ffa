//! Puts the pieces together: the busiest GPU's weights, KV cache and compute buffer,
//! and what host RAM keeps and the CPU reads per token.

use super::cells::LayerCache;
use super::compute::{op_offload, output_bytes, phases};
use super::experts::{cpu_experts, cpu_experts_in, experts_of, stored_scale};
use super::layers::{SCHED_COPIES, devices, gpu_shares, pipeline, placement};
use crate::arch::{Architecture, ParamCount};
use crate::estimate::Breakdown;
use crate::estimate::weights::embeddings_on_cpu;
use crate::workload::Workload;

/// Moves what `-ngl` leaves off the GPU into host RAM and deals the rest among the
/// GPUs, keeping in `b` the busiest GPU's share. llama.cpp puts the last `gpu_layers`
/// layers on the GPUs (`i_gpu_start = n_layer - n_gpu_layers` in src/llama-model.cpp),
/// their KV cache with them, and the output layer only when `n_gpu_layers > n_layer`;
/// without it the output's compute runs on the CPU too. Several GPUs split the layers
/// ([`device_starts`]); each has its own compute buffer for its layers' phases,
/// the last one also the output's. As a pipeline ([`pipeline`]) each GPU keeps
/// [`SCHED_COPIES`] copies of its inputs (the hidden states it receives and the
/// attention mask) for the whole graph: the scheduler adds them as leafs flagged as
/// outputs, which ggml-alloc never frees (`ggml_backend_sched_split_graph`,
/// `ggml_gallocr_free_node`). With `--n-cpu-moe` the first layers' expert tensors move
/// to host RAM as well ([`cpu_experts`]). Returns what the host holds: its bytes
/// (the input embeddings included), the weights among them and what the CPU reads per
/// token.
pub(crate) fn offload(a: &Architecture, pc: &ParamCount, w: &Workload, b: &mut Breakdown) -> Host {
    let n = u64::from(a.layers.max(1));
    let (blocks, output_on_gpu) = placement(a.layers.max(1), w);
    let on_gpu = u64::from(blocks);
    let first_gpu_layer = n - on_gpu;
    let output = output_bytes(pc, Some(a), w.weights).min(b.weights);
    // A tied table left in RAM as the output is the input table itself (one mapping
    // of the file).
    let cpu_embeddings = if a.tied_embeddings && !output_on_gpu {
        0
    } else {
        embeddings_on_cpu(pc, Some(a), w.weights)
    };
    let repeating = b.weights - output;
    let ratio = |bytes: u64, num: u64, den: u64| {
        u64::try_from(u128::from(bytes) * u128::from(num) / u128::from(den.max(1))).unwrap_or(bytes)
    };
    let layer = |l: u64| u32::try_from(l).unwrap_or(u32::MAX);
    // Routed experts are counted layer by layer (a MoE's first layers may be dense);
    // the rest of the repeating weights is the same in every layer.
    let scale = stored_scale(a, pc, w);
    // Each layer's experts once per estimate, as running totals (u128: no layer count
    // can overflow them), so a range of layers costs two lookups.
    let mut totals = vec![0u128];
    for l in 0..layer(n) {
        let sum = totals.last().copied().unwrap_or(0);
        totals.push(sum + u128::from(experts_of(a, w, l, scale).bytes));
    }
    let experts_in = |from: u64, to: u64| {
        let at = |l: u64| {
            usize::try_from(l)
                .ok()
                .and_then(|i| totals.get(i).copied())
                .unwrap_or(0)
        };
        u64::try_from(at(to).saturating_sub(at(from))).unwrap_or(u64::MAX)
    };
    // Stored experts that outweigh the formula's repeating weights (a file whose other
    // tensors the architecture does not describe) are spread with the rest instead.
    let (uniform, layered) = match repeating.checked_sub(experts_in(0, n)) {
        Some(rest) => (rest, true),
        None => (repeating, false),
    };
    let experts_in = |from: u64, to: u64| if layered { experts_in(from, to) } else { 0 };
    let experts = cpu_experts(a, pc, w);
    let phases = phases(a, w);
    let op_offload = op_offload(w);
    // Op offload of the expert matmuls (`MUL_MAT_ID`, offloaded from 32 tokens like any
    // matmul, `get_op_batch_size` in ggml-cuda.cu): the scheduler copies each CPU expert
    // tensor into the compute buffer in turn, beside the feed-forward phase's
    // activations. It offloads to the first GPU that takes the operation, the first.
    let expert_copies = if op_offload && experts.layers > 0 {
        experts.largest.saturating_add(phases.ffn)
    } else {
        0
    };
    let pipeline = pipeline(a, w);
    let inputs = SCHED_COPIES.saturating_mul(phases.hidden.saturating_add(phases.mask));
    let transient = phases.layers - phases.mask;
    let active = |bytes: u64| ratio(bytes, pc.active, pc.total);
    let devices = devices(w);
    // Each layer's cache as its kind keeps it; anything the kinds do not account for
    // is spread evenly.
    let cache = LayerCache::of(a, w);
    let whole_cache = cache.before(a, a.layers);
    let cache_in = |from: u64, to: u64| {
        cache
            .before(a, layer(to))
            .saturating_sub(cache.before(a, layer(from)))
    };
    let (mut gpu_weights, mut gpu_kv, mut gpu_read) = (0u64, 0u64, 0u64);
    let mut gpu_total = 0u64;
    let mut busiest = (0u64, 0u64, 0u64);
    for (d, share) in gpu_shares(on_gpu, output_on_gpu, devices)
        .into_iter()
        .enumerate()
    {
        let (from, to, has_output) = (share.from, share.to, share.output);
        let first = d == 0;
        if to == from && !has_output && !first {
            continue;
        }
        // Shares by cumulative bounds, so the GPUs' shares add up to the whole.
        let span = |bytes: u64| {
            ratio(bytes, first_gpu_layer + to, n) - ratio(bytes, first_gpu_layer + from, n)
        };
        let (lo, hi) = (first_gpu_layer + from, first_gpu_layer + to);
        let own_cpu_experts = cpu_experts_in(a, pc, w, layer(lo)..layer(hi));
        let own_output = if has_output { output } else { 0 };
        let weights = span(uniform)
            .saturating_add(experts_in(lo, hi))
            .saturating_add(own_output)
            .saturating_sub(own_cpu_experts.bytes);
        let layers_weights = weights.saturating_sub(own_output);
        let kv = cache_in(lo, hi).saturating_add(span(b.kv_cache.saturating_sub(whole_cache)));
        let compute = if pipeline {
            inputs.saturating_add(if has_output {
                transient.max(phases.output)
            } else {
                transient
            })
        } else if has_output {
            phases.output.max(phases.layers)
        } else if first && op_offload && !output_on_gpu {
            // Op offload: for a micro-batch this large the scheduler runs the
            // CPU-resident output projection on the GPU, copying its weight into the
            // compute buffer next to the f32 hidden states and logits
            // (`ggml_backend_sched` with `op_offload`, the CUDA backend's `offload_op`
            // from 32 tokens). The CPU layers' matrices are copied the same way, one at
            // a time, and are smaller than the output head.
            phases.layers.max(output.saturating_add(phases.output))
        } else {
            phases.layers
        }
        .max(if first { expert_copies } else { 0 });
        gpu_weights = gpu_weights.saturating_add(weights);
        gpu_kv = gpu_kv.saturating_add(kv);
        gpu_read = gpu_read
            .saturating_add(active(layers_weights))
            .saturating_add(own_output)
            .saturating_add(kv);
        let total = weights.saturating_add(kv).saturating_add(compute);
        gpu_total = gpu_total.saturating_add(total);
        if total
            >= busiest
                .0
                .saturating_add(busiest.1)
                .saturating_add(busiest.2)
        {
            busiest = (weights, kv, compute);
        }
    }
    let host_weights = b
        .weights
        .saturating_sub(gpu_weights)
        .saturating_add(cpu_embeddings);
    // The graph's inputs live on the CPU (`ggml_backend_sched_backend_id_from_cur`
    // keeps tensors flagged as inputs on the last backend, the CPU, whose buffer is
    // the first GPU's pinned host memory: the "CUDA_Host compute buffer"): the
    // attention mask, once or, as a pipeline, once per copy, and the input
    // embeddings' rows for a micro-batch.
    let copies = if pipeline { SCHED_COPIES } else { 1 };
    let host_inputs = copies
        .saturating_mul(phases.mask)
        .saturating_add(phases.hidden);
    let host = host_weights
        .saturating_add(b.kv_cache.saturating_sub(gpu_kv))
        .saturating_add(if output_on_gpu { 0 } else { phases.output })
        .saturating_add(host_inputs);
    // Per generated token the CPU reads its layers' active weights (a MoE layer reads
    // the experts the router picks) and their KV cache, and the output layer if it
    // stayed there; only one row of the input embeddings.
    let cpu_layers = repeating
        .saturating_sub(ratio(uniform, on_gpu, n))
        .saturating_sub(experts_in(first_gpu_layer, n));
    let read = active(cpu_layers)
        .saturating_add(b.kv_cache.saturating_sub(gpu_kv))
        .saturating_add(if output_on_gpu { 0 } else { output })
        .saturating_add(experts.read_per_token);
    (b.weights, b.kv_cache, b.activations) = busiest;
    Host {
        bytes: host,
        weights: host_weights,
        read_per_token: read,
        gpu_read_per_token: gpu_read,
        gpu_total,
    }
}

/// What llama.cpp keeps in CPU RAM ([`Estimate::host_bytes`],
/// [`Estimate::host_weights_bytes`], [`Estimate::host_read_per_token`]).
#[derive(Clone, Copy, Default)]
pub(crate) struct Host {
    pub bytes: u64,
    pub weights: u64,
    pub read_per_token: u64,
    pub gpu_read_per_token: u64,
    /// Weights, KV and compute buffers of every GPU together.
    pub gpu_total: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::ggml::layer_experts;
    use crate::estimate::testing::*;

    /// Two GPUs: each holds its layers' weights and KV, the last one the output; as a
    /// pipeline every GPU keeps four copies of its inputs; no NCCL; the tensor degree
    /// asked of llama.cpp is the same layer split.
    #[test]
    fn ggml_splits_layers_and_pipelines_inputs() {
        let a = model("qwen2.5-0.5b").unwrap().arch.clone();
        let m = preset("qwen2.5-0.5b");
        let w = |gpus: u32, gpu_layers: Option<u32>, cpu_moe: u32| {
            Workload::default()
                .seq(32_768)
                .attention(Attention::Sdpa)
                .engine(crate::workload::Engine::Ggml)
                .weights(WeightFormat::parse("Q4_0").unwrap())
                .gpus(gpus)
                .tp(1)
                .pp(gpus)
                .gpu_layers(gpu_layers)
                .cpu_moe(cpu_moe)
        };
        let one = estimate(&m, &w(1, None, 0)).unwrap();
        let two = estimate(&m, &w(2, None, 0)).unwrap();
        let p = phases(&a, &w(2, None, 0));
        // 24 layers and the output over two GPUs: 13 layers, then 11 and the output.
        assert_eq!(two.breakdown.kv_cache, one.breakdown.kv_cache * 11 / 24);
        let output = output_bytes(&one.params, Some(&a), w(1, None, 0).weights);
        let layers = one.breakdown.weights - output;
        assert_eq!(two.breakdown.weights, layers - layers * 13 / 24 + output);
        // Each GPU keeps four copies of the hidden states it receives and of the mask
        // beside its layers' largest phase; one GPU has the mask once.
        assert_eq!(p.hidden, 512 * 896 * 4);
        assert_eq!(p.mask, 32_768 * 512 * 4);
        assert_eq!(one.breakdown.activations, p.layers);
        assert_eq!(
            two.breakdown.activations,
            4 * (p.hidden + p.mask) + (p.layers - p.mask).max(p.output)
        );
        assert!(pipeline(&a, &w(2, None, 0)) && !pipeline(&a, &w(1, None, 0)));
        // llama.cpp has no NCCL in its layer split; the total is the GPUs' own sum,
        // less than twice the busier one.
        assert_eq!(two.breakdown.overhead, one.breakdown.overhead);
        assert!(two.total_bytes < 2 * two.per_gpu_bytes && two.total_bytes > one.per_gpu_bytes);
        // A tensor degree asked of llama.cpp is the same split.
        let tp = w(2, None, 0).tp(2).pp(1);
        assert_eq!(estimate(&m, &tp).unwrap(), two);
        // Not every layer on the GPUs: no pipeline, no copies; the host keeps the rest.
        // `-ngl 20` is the output and 19 layers: 10 on the first GPU, 9 and the output
        // (the busier) on the second.
        let partial = estimate(&m, &w(2, Some(20), 0)).unwrap();
        assert!(!pipeline(&a, &w(2, Some(20), 0)));
        assert_eq!(partial.breakdown.kv_cache, one.breakdown.kv_cache * 9 / 24);
        assert!(partial.breakdown.activations <= p.layers.max(output + p.output));
        assert!(partial.host_bytes > 0);
        // The pinned host buffer holds the graph's inputs: the f32 mask (four copies
        // as a pipeline) and a micro-batch of input embeddings. The published log has
        // "CUDA_Host compute buffer size = 257.77 MiB" (4 × 64 + 1.75 and small
        // inputs); a one-GPU log (Ollama #6926, 8192 cells, 4096 wide) has 24.01
        // MiB (16 + 8).
        let inputs = |e: &Estimate| e.host_bytes - e.host_weights_bytes;
        assert_eq!(inputs(&two), 4 * (32_768 * 512 * 4) + 512 * 896 * 4);
        assert_eq!(inputs(&one), 32_768 * 512 * 4 + 512 * 896 * 4);
        // The host holds what the GPUs do not, whatever the number of GPUs.
        let single_partial = estimate(&m, &w(1, Some(20), 0)).unwrap();
        assert_eq!(
            partial.host_weights_bytes,
            single_partial.host_weights_bytes
        );
        assert_eq!(two.host_weights_bytes, one.host_weights_bytes);
    }

    /// More GPUs than items leave the last ones empty, and only the GPU with the
    /// output item holds it; a MoE's dense first layers weigh what they weigh on
    /// whichever GPU holds them, and the GPUs' weights add up to the whole.
    #[test]
    fn ggml_shares_follow_each_gpus_own_layers() {
        let m = preset("deepseek-v2-lite");
        let a = model("deepseek-v2-lite").unwrap().arch.clone();
        let w = |gpus: u32, gpu_layers: Option<u32>| {
            Workload::default()
                .seq(4096)
                .engine(crate::workload::Engine::Ggml)
                .weights(WeightFormat::parse("Q4_K_M").unwrap())
                .gpus(gpus)
                .tp(1)
                .pp(gpus)
                .gpu_layers(gpu_layers)
        };
        let one = estimate(&m, &w(1, None)).unwrap();
        // -ngl 3 on 8 GPUs: two layers and the output on the first three GPUs.
        let many = estimate(&m, &w(8, Some(3))).unwrap();
        let single = estimate(&m, &w(1, Some(3))).unwrap();
        assert_eq!(many.host_weights_bytes, single.host_weights_bytes);
        let output = output_bytes(&one.params, Some(&a), w(1, None).weights);
        assert!(many.breakdown.weights >= output, "{:?}", many.breakdown);
        // Two GPUs, every layer: the first holds the dense layer 0 and 13 MoE layers,
        // the second 13 MoE layers and the output; together, the whole model.
        let two = estimate(&m, &w(2, None)).unwrap();
        assert_eq!(two.host_weights_bytes, one.host_weights_bytes);
        let per_moe_layer = layer_experts(&a, &one.params, &w(1, None), 1).bytes;
        assert!(per_moe_layer > 0);
        assert_eq!(layer_experts(&a, &one.params, &w(1, None), 0).bytes, 0);
        assert!(two.breakdown.weights < one.breakdown.weights);
        // Several GPUs read, per generated token, what one GPU would.
        let near = |x: u64, y: u64| x.abs_diff(y) <= 32;
        assert!(
            near(two.gpu_read_per_token, one.gpu_read_per_token),
            "{} vs {}",
            two.gpu_read_per_token,
            one.gpu_read_per_token
        );
    }

    #[test]
    fn ggml_windows_cap_each_sequence_and_op_offload_copies_the_head() {
        let ggml = |model: &str, batch, gpu_layers, ubatch| {
            let e = estimate(
                &preset(model),
                &Workload::default()
                    .seq(32_768)
                    .batch(batch)
                    .gpu_layers(gpu_layers)
                    .ubatch(ubatch)
                    .attention(Attention::Flash)
                    .engine(crate::workload::Engine::Ggml)
                    .weights(WeightFormat::parse("Q4_K_M").unwrap()),
            )
            .unwrap();
            e.breakdown
        };
        // Gemma 2's windowed layers are capped per sequence: four sequences hold four
        // times the KV of one, not one window for the whole pool.
        let one = ggml("gemma-2-9b", 1, None, 512).kv_cache;
        assert_eq!(ggml("gemma-2-9b", 4, None, 512).kv_cache, 4 * one);
        // Mistral 7B v0.1's config has a 4096-token window, but its GGUF (architecture
        // `llama`) keeps the whole context: 32 768 cells × 128 KiB.
        assert_eq!(ggml("mistral-7b-v0.1", 1, None, 512).kv_cache, 32_768 << 17);
        // With the output head on the CPU (`-ngl 0`; older builds also with `-ngl 20`), a
        // micro-batch of 32 or more copies it into the GPU's compute buffer; 31 tokens
        // do not.
        let a = model("mistral-7b-v0.1").unwrap().arch.clone();
        let head = output_bytes(
            &a.param_count(),
            Some(&a),
            WeightFormat::parse("Q4_K_M").unwrap(),
        );
        let with = ggml("mistral-7b-v0.1", 1, Some(0), 256).activations;
        assert_eq!(with, head + 256 * 4 * (32_000 + 4096));
        let without = ggml("mistral-7b-v0.1", 1, Some(0), 31).activations;
        assert!(without < head, "{without}");
    }
}
