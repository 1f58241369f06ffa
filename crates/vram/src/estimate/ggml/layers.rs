//! Which layers live where: `-ngl`'s placement (the output first since December 2025)
//! and `--split-mode layer`'s deal among GPUs, and when the GPUs run as a pipeline.

use crate::arch::Architecture;
use crate::workload::Workload;

/// Copies of each micro-batch's inputs that ggml's scheduler keeps when llama.cpp
/// runs a model split over several GPUs as a pipeline (`GGML_SCHED_MAX_COPIES` in
/// ggml/src/ggml-backend.cpp): up to four micro-batches in flight.
pub const SCHED_COPIES: u64 = 4;

/// The GPUs llama.cpp deals a model's layers among (`--split-mode layer`, its
/// default): every GPU of the workload, whatever tensor or pipeline degree was asked.
pub fn devices(w: &Workload) -> u64 {
    u64::from(w.tp.max(1)) * u64::from(w.pp.max(1))
}

/// The first of the `items` offloaded items (the layers `-ngl` puts on the GPUs, then
/// the output layer) that each of `devices` identical GPUs holds, and `items` at the
/// end. llama.cpp gives item `j` to the first device whose cumulative share of the
/// free memory exceeds `j / items` (`std::upper_bound(splits, float(il - i_gpu_start)
/// / act_gpu_layers)` in `llama_model::load_tensors`, src/llama-model.cpp), so device
/// `d` starts at ⌈d × items / devices⌉: the first GPUs take the extra layer, and the
/// output layer, the last item, lands on the last GPU.
pub fn device_starts(items: u64, devices: u64) -> Vec<u64> {
    let devices = devices.max(1);
    (0..=devices)
        .map(|d| {
            u64::try_from((u128::from(d) * u128::from(items)).div_ceil(u128::from(devices)))
                .unwrap_or(items)
        })
        .collect()
}

/// Where `-ngl` puts a model's `layers` repeating layers and its output: how many of
/// the last layers are on the GPU, and whether the output layer is. Since December 2025
/// (PR 18148, "offload output layer to GPU first") llama.cpp offloads the output first
/// and then the last `k − 1` layers (`i_gpu_start = n_layer + 1 - n_gpu_layers` in
/// `llama_model::load_tensors`, src/llama-model.cpp); before it, the last `k` layers, and
/// the output only when `k` passed the layer count. `None` puts everything there.
pub fn placement(layers: u32, w: &Workload) -> (u32, bool) {
    match w.gpu_layers {
        None => (layers, true),
        Some(k) if k > layers => (layers, true),
        Some(k) if w.ngl_output_first => (k.saturating_sub(1), k >= 1),
        Some(k) => (k, false),
    }
}

/// One GPU's part of llama.cpp's layer split ([`device_starts`]): its layers among
/// the `on_gpu` the GPUs hold (`from..to`, counted from the first of them) and whether
/// it holds the output layer, the last item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuShare {
    pub from: u64,
    pub to: u64,
    pub output: bool,
}

impl GpuShare {
    pub fn layers(self) -> u64 {
        self.to - self.from
    }
}

/// Each of `devices` GPUs' share of `on_gpu` layers and, with `output`, the output
/// layer.
pub fn gpu_shares(on_gpu: u64, output: bool, devices: u64) -> Vec<GpuShare> {
    device_starts(on_gpu + u64::from(output), devices)
        .windows(2)
        .map(|p| GpuShare {
            from: p[0].min(on_gpu),
            to: p[1].min(on_gpu),
            output: output && p[0] <= on_gpu && on_gpu < p[1],
        })
        .collect()
}

/// Whether llama.cpp runs its GPUs as a pipeline with [`SCHED_COPIES`] copies of
/// the inputs: several GPUs, every layer and the output on them, and no tensor
/// overrides such as `--n-cpu-moe` (`pipeline_parallel` in the `llama_context`
/// constructor, src/llama-context.cpp).
pub fn pipeline(a: &Architecture, w: &Workload) -> bool {
    let n = u64::from(a.layers.max(1));
    devices(w) > 1 && w.gpu_layers.is_none_or(|g| u64::from(g) > n) && w.cpu_moe == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// llama.cpp deals layers and the output among GPUs as `upper_bound` over equal
    /// shares does: the first GPUs take the odd layer, the last the output.
    #[test]
    fn ggml_deals_layers_among_gpus() {
        let cases: &[(u64, u64, &[u64])] = &[
            (81, 1, &[0, 81]),
            (81, 2, &[0, 41, 81]),
            (25, 2, &[0, 13, 25]),
            (25, 3, &[0, 9, 17, 25]),
            (3, 4, &[0, 1, 2, 3, 3]),
            (0, 2, &[0, 0, 0]),
        ];
        for &(items, devices, want) in cases {
            assert_eq!(device_starts(items, devices), want, "{items} / {devices}");
        }
    }

    /// `-ngl k` offloads the output and then k − 1 layers (llama.cpp since December
    /// 2025); older builds offloaded k layers and the output only with all of them.
    #[test]
    fn ngl_counts_the_output_first() {
        let w =
            |k: Option<u32>, first: bool| Workload::default().gpu_layers(k).ngl_output_first(first);
        let cases = [
            (None, true, (32, true)),
            (Some(33), true, (32, true)),
            (Some(32), true, (31, true)),
            (Some(1), true, (0, true)),
            (Some(0), true, (0, false)),
            (Some(32), false, (32, false)),
            (Some(20), false, (20, false)),
            (Some(33), false, (32, true)),
        ];
        for (k, first, want) in cases {
            assert_eq!(placement(32, &w(k, first)), want, "{k:?} {first}");
        }
    }
}
