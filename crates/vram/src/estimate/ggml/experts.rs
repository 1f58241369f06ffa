//! Routed experts per layer as a GGUF stores them, and those `--n-cpu-moe` keeps in
//! CPU RAM.

use super::layers::placement;
use crate::arch::{Architecture, LayerExperts, Mlp, ParamCount};
use crate::estimate::mul;
use crate::estimate::weights::weight_bytes;
use crate::quant::{WeightFormat, mix_of, use_more_bits};
use crate::workload::Workload;

/// See [`LayerExperts`].
pub fn layer_experts(a: &Architecture, pc: &ParamCount, w: &Workload, layer: u32) -> LayerExperts {
    experts_of(a, w, layer, stored_scale(a, pc, w))
}

/// Exact stored weights and the formula's bytes they replace, by which
/// [`experts_of`] scales its formula; computed once per estimate.
pub(crate) fn stored_scale(a: &Architecture, pc: &ParamCount, w: &Workload) -> Option<(u64, u64)> {
    w.stored_weights
        .map(|stored| (stored, weight_bytes(pc, Some(a), w.weights).max(1)))
}

pub(crate) fn experts_of(
    a: &Architecture,
    w: &Workload,
    layer: u32,
    scale: Option<(u64, u64)>,
) -> LayerExperts {
    // A GGUF header read from the file lists every expert tensor: exact.
    if !w.stored_experts.is_empty() {
        return usize::try_from(layer)
            .ok()
            .and_then(|i| w.stored_experts.get(i).copied())
            .unwrap_or_default();
    }
    let Some(m) = a.moe else {
        return LayerExperts::default();
    };
    if layer < m.dense_layers || layer >= a.layers {
        return LayerExperts::default();
    }
    let one = mul(&[
        u64::from(m.experts),
        u64::from(m.expert_intermediate),
        u64::from(a.hidden),
    ]);
    let inputs = match a.mlp {
        Mlp::Gated => 2,
        Mlp::Plain => 1,
    };
    let (input, down) = match w.weights {
        WeightFormat::Gguf { mix } => {
            let mix = mix_of(mix);
            let inner = u64::from(m.expert_intermediate);
            let down = if use_more_bits(layer, a.layers) {
                mix.boosted_for(inner)
            } else {
                mix.base_for(inner)
            };
            (
                mix.base_for(u64::from(a.hidden)).bytes_for(one),
                down.bytes_for(one),
            )
        }
        WeightFormat::Plain { dtype } => (dtype.bytes_for(one), dtype.bytes_for(one)),
        format => (format.linear_bytes(one), format.linear_bytes(one)),
    };
    let scaled = |bytes: u64| match scale {
        Some((stored, formula)) => {
            u64::try_from(u128::from(bytes) * u128::from(stored) / u128::from(formula))
                .unwrap_or(bytes)
        }
        None => bytes,
    };
    LayerExperts {
        bytes: scaled(input.saturating_mul(inputs).saturating_add(down)),
        largest: scaled(input.max(down)),
    }
}

/// The routed experts `--n-cpu-moe` keeps in CPU RAM while the rest of their layers is
/// on the GPU: those of the first `cpu_moe` layers (llama.cpp's
/// `llm_ffn_exps_block_regex(i)` for `i < N`, bound to the CPU buffer type in
/// common/arg.cpp) among the layers `-ngl` put on the GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuExperts {
    /// Layers whose experts stay in CPU RAM (dense layers among the first N count
    /// nothing).
    pub layers: u32,
    pub bytes: u64,
    /// The largest expert tensor among them: what the compute buffer holds while one
    /// expert matmul is offloaded to the GPU (ggml's scheduler starts a new split at
    /// each offloaded weight, so one copy's memory is reused for the next).
    pub largest: u64,
    /// What a generated token reads of them: the experts the router picks per layer.
    pub read_per_token: u64,
}

/// See [`CpuExperts`]; nothing for dense models or without `--n-cpu-moe`.
pub fn cpu_experts(a: &Architecture, pc: &ParamCount, w: &Workload) -> CpuExperts {
    let n = a.layers;
    let (on_gpu, _) = placement(n, w);
    cpu_experts_in(a, pc, w, n - on_gpu.min(n)..n)
}

/// [`cpu_experts`] among the layers `layers` only (one GPU's share).
pub(crate) fn cpu_experts_in(
    a: &Architecture,
    pc: &ParamCount,
    w: &Workload,
    layers: std::ops::Range<u32>,
) -> CpuExperts {
    let scale = stored_scale(a, pc, w);
    let mut out = CpuExperts::default();
    for layer in layers.start..w.cpu_moe.min(layers.end) {
        let experts = experts_of(a, w, layer, scale);
        if experts.bytes > 0 {
            out.layers += 1;
            out.bytes = out.bytes.saturating_add(experts.bytes);
            out.largest = out.largest.max(experts.largest);
        }
    }
    if let Some(m) = a.moe {
        out.read_per_token = u64::try_from(
            u128::from(out.bytes) * u128::from(m.experts_per_token) / u128::from(m.experts.max(1)),
        )
        .unwrap_or(out.bytes);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::ggml::phases;
    use crate::estimate::testing::*;

    #[test]
    fn n_cpu_moe_keeps_the_first_layers_experts_in_ram() {
        let q4km = WeightFormat::parse("Q4_K_M").unwrap();
        let run = |model: &str, gpu_layers, cpu_moe, ubatch| {
            estimate(
                &preset(model),
                &Workload::default()
                    .seq(4096)
                    .gpu_layers(gpu_layers)
                    .cpu_moe(cpu_moe)
                    .ubatch(ubatch)
                    .attention(Attention::Flash)
                    .engine(crate::workload::Engine::Ggml)
                    .weights(q4km),
            )
            .unwrap()
        };
        let a = model("qwen3-30b-a3b").unwrap().arch.clone();
        let pc = a.param_count();
        let w = Workload::default().weights(q4km);
        // One layer's experts: 128 × 768 × 2048 per matrix, gate and up in Q4_K (144
        // bytes per 256 weights), down in Q6_K (210 bytes) on the layers
        // `use_more_bits` picks (layer 0 is one) and Q4_K elsewhere.
        let one = 128 * 768 * 2048 / 256;
        let layer = |i| layer_experts(&a, &pc, &w, i);
        assert_eq!(layer(0).bytes, one * (2 * 144 + 210));
        assert_eq!(layer(0).largest, one * 210);
        assert_eq!(layer(6).bytes, one * 3 * 144);
        let all = run("qwen3-30b-a3b", None, 0, 512);
        let ten = run("qwen3-30b-a3b", None, 10, 512);
        let experts: u64 = (0..10).map(|i| layer(i).bytes).sum();
        assert_eq!(all.breakdown.weights - ten.breakdown.weights, experts);
        assert_eq!(ten.host_weights_bytes - all.host_weights_bytes, experts);
        // The KV cache and attention stay on the GPU.
        assert_eq!(ten.breakdown.kv_cache, all.breakdown.kv_cache);
        // Prompt processing copies one CPU expert tensor at a time into the compute
        // buffer (op offload from 32 tokens); 31 tokens compute them on the CPU.
        let largest = layer(0).largest;
        let ffn = |ubatch| {
            phases(
                &a,
                &Workload::default()
                    .seq(4096)
                    .ubatch(ubatch)
                    .attention(Attention::Flash),
            )
            .ffn
        };
        assert_eq!(
            ten.breakdown.activations,
            all.breakdown.activations.max(largest + ffn(512))
        );
        let small = |cpu_moe| {
            run("qwen3-30b-a3b", None, cpu_moe, 31)
                .breakdown
                .activations
        };
        assert_eq!(small(10), small(0));
        // `--cpu-moe` (every layer) is 48 layers' worth; asking for more changes nothing.
        let every = run("qwen3-30b-a3b", None, u32::MAX, 512);
        assert_eq!(
            every.breakdown.weights,
            run("qwen3-30b-a3b", None, 48, 512).breakdown.weights
        );
        // Layers `-ngl` left on the CPU already hold their experts there: with the
        // output and the last 40 layers on the GPU (`-ngl 41`), `--n-cpu-moe 10` moves
        // only layers 8 and 9.
        let partial = run("qwen3-30b-a3b", Some(41), 0, 512);
        let both = run("qwen3-30b-a3b", Some(41), 10, 512);
        let two = layer(8).bytes + layer(9).bytes;
        assert_eq!(partial.breakdown.weights - both.breakdown.weights, two);
        // A dense model has no experts to move.
        assert_eq!(
            run("llama-3.1-8b", None, 10, 512).breakdown,
            run("llama-3.1-8b", None, 0, 512).breakdown
        );
    }
}
