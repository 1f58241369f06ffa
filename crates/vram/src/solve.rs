//! Solvers: the largest batch and the longest context that fit in a memory budget,
//! the most layers llama.cpp can offload and the fewest MoE layers whose experts it
//! must keep in CPU RAM, and the smallest catalog GPU that holds a workload.
//!
//! Memory is monotonic in batch and sequence length (a property test checks it), so a
//! binary search over the estimate is exact.

use crate::catalog::{Gpu, gpus};
use crate::estimate::{Estimate, MAX_BATCH, MAX_SEQ, ModelInput, estimate};
use crate::workload::{Engine, Mode, Workload};

/// Largest `v` in `1..=max` with `fits(v)`, or `None` if even 1 does not fit.
fn largest(max: u64, fits: impl Fn(u64) -> bool) -> Option<u64> {
    if !fits(1) {
        return None;
    }
    let (mut lo, mut hi) = (1u64, max);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Some(lo)
}

fn fits(model: &ModelInput, w: &Workload, capacity: u64) -> bool {
    estimate(model, w).is_ok_and(|e| e.per_gpu_bytes <= capacity)
}

/// The largest batch that fits in `capacity` bytes per GPU.
pub fn max_batch(model: &ModelInput, w: &Workload, capacity: u64) -> Option<u64> {
    max_batch_by(model, w, |e| e.per_gpu_bytes <= capacity)
}

/// The largest batch whose estimate passes `ok` (the band's high end fitting, say).
pub fn max_batch_by(
    model: &ModelInput,
    w: &Workload,
    ok: impl Fn(&Estimate) -> bool,
) -> Option<u64> {
    largest(MAX_BATCH, |b| {
        estimate(
            model,
            &Workload {
                batch: b,
                ..w.clone()
            },
        )
        .is_ok_and(|e| ok(&e))
    })
}

/// The longest sequence that fits, never beyond the context length the model was
/// trained for (prompt plus generated tokens).
pub fn max_seq(model: &ModelInput, w: &Workload, capacity: u64) -> Option<u64> {
    max_seq_by(model, w, |e| e.per_gpu_bytes <= capacity)
}

/// The longest sequence whose estimate passes `ok`, within the trained context.
pub fn max_seq_by(model: &ModelInput, w: &Workload, ok: impl Fn(&Estimate) -> bool) -> Option<u64> {
    let limit = match model {
        ModelInput::Arch { arch, .. } => u64::from(arch.max_positions)
            .saturating_sub(w.new_tokens)
            .max(1),
        ModelInput::Params(_) => MAX_SEQ,
    };
    largest(limit.min(MAX_SEQ), |s| {
        estimate(
            model,
            &Workload {
                seq: s,
                ..w.clone()
            },
        )
        .is_ok_and(|e| ok(&e))
    })
}

/// llama.cpp: the most layers `-ngl` can put on a GPU of `capacity` bytes, where the
/// model's layer count plus one means every layer and the output (what llama.cpp's
/// `--fit` looks for). `None` outside llama.cpp/Ollama inference, without an
/// architecture, or when even no layer fits (the compute buffer alone is too big).
pub fn max_gpu_layers(model: &ModelInput, w: &Workload, capacity: u64) -> Option<u32> {
    let ModelInput::Arch { arch, .. } = model else {
        return None;
    };
    if w.engine != Engine::Ggml || w.mode != Mode::Inference {
        return None;
    }
    let at = |layers: u64| {
        fits(
            model,
            &Workload {
                gpu_layers: Some(u32::try_from(layers).unwrap_or(u32::MAX)),
                ..w.clone()
            },
            capacity,
        )
    };
    // `largest` searches 1..=max; shift by one so that 0 layers is a candidate.
    let most = u64::from(arch.layers) + 1;
    largest(most + 1, |v| at(v - 1)).map(|v| u32::try_from(v - 1).unwrap_or(u32::MAX))
}

/// llama.cpp with a MoE model: the fewest first layers whose routed experts must stay in
/// CPU RAM (`--n-cpu-moe`) for the workload to fit in `capacity` bytes, with `-ngl` as
/// set; `Some(0)` when everything fits on the GPU. `None` outside llama.cpp/Ollama
/// inference, for dense models, or when even `--cpu-moe` does not fit.
pub fn min_cpu_moe(model: &ModelInput, w: &Workload, capacity: u64) -> Option<u32> {
    min_cpu_moe_by(model, w, |e| e.per_gpu_bytes <= capacity)
}

/// The fewest such layers whose estimate passes `ok` (the band's high end fitting, say).
///
/// The first layer with CPU experts adds the copy of one expert tensor to the compute
/// buffer, so memory is not monotonic between 0 and 1 layers: 0 is tried on its own.
/// From one layer on, each further layer takes its experts off the GPU while the copy
/// grows by less than that, so a bisection finds the first that passes in O(log n)
/// estimates (a property test checks it against a scan of every count), and the work
/// stays bounded whatever the model declares ([`crate::arch::MAX_LAYERS`]).
pub fn min_cpu_moe_by(
    model: &ModelInput,
    w: &Workload,
    ok: impl Fn(&Estimate) -> bool,
) -> Option<u32> {
    let ModelInput::Arch { arch, .. } = model else {
        return None;
    };
    if w.engine != Engine::Ggml || w.mode != Mode::Inference || arch.moe.is_none() {
        return None;
    }
    let passes = |n: u32| {
        estimate(
            model,
            &Workload {
                cpu_moe: n,
                ..w.clone()
            },
        )
        .is_ok_and(|e| ok(&e))
    };
    if passes(0) {
        return Some(0);
    }
    let layers = arch.layers;
    if layers == 0 || !passes(layers) {
        return None;
    }
    let (mut lo, mut hi) = (1, layers);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if passes(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}

/// The catalog GPU with the least memory that still fits the workload next to `reserve`
/// bytes of the display and other processes.
pub fn smallest_gpu(
    model: &ModelInput,
    w: &Workload,
    reserve: u64,
    runs_on: impl Fn(&Gpu) -> bool,
) -> Option<&'static Gpu> {
    let per_gpu = estimate(model, w).ok()?.per_gpu_bytes;
    gpus()
        .iter()
        .filter(|g| runs_on(g) && g.usable_bytes.saturating_sub(reserve) >= per_gpu)
        .min_by_key(|g| g.usable_bytes)
}

/// The fewest GPUs of `capacity` bytes that hold the workload: ZeRO-3 sharding for
/// training; for inference tensor parallelism over as many of them as split the
/// attention heads evenly (vLLM refuses otherwise) and pipeline stages for the rest
/// (llama.cpp deals whole layers, which `estimate` handles). Any count up to 1024: the
/// first power of two that holds it, then the fewest above the previous one (memory
/// per GPU falls as GPUs are added).
pub fn fewest_gpus(model: &ModelInput, w: &Workload, capacity: u64) -> Option<u32> {
    let heads = match model {
        ModelInput::Arch { arch, .. } => arch.heads,
        ModelInput::Params(_) => 0,
    };
    let holds = |n: u32| {
        let split = match w.mode {
            // ZeRO-3 is FSDP outside DeepSpeed, as the settings make it, and TRL skips
            // the k-bit preparation of a sharded QLoRA base (`Workload::kbit_fp32`).
            crate::workload::Mode::Train => Workload {
                gpus: n,
                zero: 3,
                fsdp: !w.deepspeed,
                kbit_fp32: w.kbit_fp32 && n <= 1,
                tp: 1,
                pp: 1,
                ..w.clone()
            },
            crate::workload::Mode::Inference => {
                let tp = if heads > 0 { gcd(n, heads) } else { n };
                Workload {
                    gpus: n,
                    tp,
                    pp: n / tp,
                    ..w.clone()
                }
            }
        };
        fits(model, &split, capacity)
    };
    let upper = (0..=10).map(|p| 1u32 << p).find(|&n| holds(n))?;
    // The fewest in (upper / 2, upper]: `hi` always holds, `lo` never does.
    let (mut lo, mut hi) = (upper / 2, upper);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if holds(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a.max(1) } else { gcd(b, a % b) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::model;
    use crate::units::ByteSize;

    fn llama() -> ModelInput {
        ModelInput::Arch {
            arch: Box::new(model("llama-3.1-8b").unwrap().arch.clone()),
            total_params: None,
        }
    }

    #[test]
    fn largest_is_exact() {
        assert_eq!(largest(100, |v| v <= 37), Some(37));
        assert_eq!(largest(100, |_| true), Some(100));
        assert_eq!(largest(100, |_| false), None);
    }

    #[test]
    fn solutions_fit_and_one_more_does_not() {
        let w = Workload::default();
        let cap = 24 * ByteSize::GIB;
        let b = max_batch(&llama(), &w, cap).unwrap();
        let at = |batch| {
            estimate(&llama(), &w.clone().batch(batch))
                .unwrap()
                .per_gpu_bytes
        };
        assert!(at(b) <= cap && at(b + 1) > cap, "{b}");
        let s = max_seq(&llama(), &w, cap).unwrap();
        let at = |seq| {
            estimate(&llama(), &w.clone().seq(seq))
                .unwrap()
                .per_gpu_bytes
        };
        assert!(at(s) <= cap && at(s + 1) > cap, "{s}");
        // 8B in bf16 does not fit in 12 GiB at all.
        assert_eq!(max_batch(&llama(), &w, 12 * ByteSize::GIB), None);
    }

    #[test]
    fn context_length_caps_max_seq() {
        let w = Workload::default();
        assert_eq!(max_seq(&llama(), &w, 1 << 40), Some(131_072));
        let generating = (w).new_tokens(1000);
        assert_eq!(max_seq(&llama(), &generating, 1 << 40), Some(130_072));
    }

    #[test]
    fn fewest_gpus_for_70b() {
        let m = ModelInput::Arch {
            arch: Box::new(model("llama-3.1-70b").unwrap().arch.clone()),
            total_params: None,
        };
        // 141 GB of bf16 weights: two 80 GiB cards with tensor parallelism.
        assert_eq!(
            fewest_gpus(&m, &Workload::default(), 80 * ByteSize::GIB),
            Some(2)
        );
        assert_eq!(
            fewest_gpus(&llama(), &Workload::default(), 80 * ByteSize::GIB),
            Some(1)
        );
    }

    /// Training spreads over ZeRO-3: FSDP, with its root unit whole on every GPU,
    /// unless DeepSpeed trains.
    #[test]
    fn fewest_gpus_for_training_shards_as_the_runtime_does() {
        let m = ModelInput::Arch {
            arch: Box::new(model("llama-3.1-8b").unwrap().arch.clone()),
            total_params: None,
        };
        let w = Workload::default()
            .mode(crate::workload::Mode::Train)
            .seq(2048)
            .grad_checkpointing(true);
        let capacity = 24 * ByteSize::GIB;
        for deepspeed in [false, true] {
            let w = w.clone().deepspeed(deepspeed);
            let n = fewest_gpus(&m, &w, capacity).unwrap();
            let at = |gpus: u32| w.clone().gpus(gpus).zero(3).fsdp(!deepspeed);
            assert!(
                fits(&m, &at(n), capacity),
                "{n} GPUs, DeepSpeed {deepspeed}"
            );
            assert!(
                !fits(&m, &at(n - 1), capacity),
                "{n} GPUs, DeepSpeed {deepspeed}"
            );
        }
    }

    /// Tensor degrees must split the heads: Qwen2.5-7B's 28 heads take tensor
    /// parallelism over 4 of 8 GPUs and two pipeline stages, which hold more per GPU
    /// than an even 8-way split would.
    #[test]
    fn fewest_gpus_split_the_heads() {
        assert_eq!(
            (gcd(8, 28), gcd(4, 28), gcd(1, 28), gcd(16, 32)),
            (4, 4, 1, 16)
        );
        let m = ModelInput::Arch {
            arch: Box::new(model("qwen2.5-7b").unwrap().arch.clone()),
            total_params: None,
        };
        let w = Workload::default().seq(1024);
        let cap = 3 * ByteSize::GIB;
        let n = fewest_gpus(&m, &w, cap).unwrap();
        assert!(n >= 8, "{n}");
        let at = |tp: u32, pp: u32| fits(&m, &w.clone().gpus(n).tp(tp).pp(pp), cap);
        let tp = gcd(n, 28);
        assert!(at(tp, n / tp), "{n}");
        // Any count, not only powers of two: one fewer does not hold it.
        let fewer = n - 1;
        assert!(!at(gcd(fewer, 28), fewer / gcd(fewer, 28)) || fewer == 0);
        assert!(!fits(
            &m,
            &w.clone()
                .gpus(n / 2)
                .tp(gcd(n / 2, 28))
                .pp(n / 2 / gcd(n / 2, 28)),
            cap
        ));
    }

    #[test]
    fn smallest_gpu_fits() {
        let w = Workload::default();
        let g = smallest_gpu(&llama(), &w, 0, |_| true).unwrap();
        // What the display and other processes take is not there for the model.
        let h = smallest_gpu(&llama(), &w, 8 << 30, |_| true).unwrap();
        let need = estimate(&llama(), &w).unwrap().per_gpu_bytes;
        assert!(h.usable_bytes >= need + (8 << 30) && h.usable_bytes > g.usable_bytes);
        assert!(g.usable_bytes >= need);
        assert!(
            gpus()
                .iter()
                .all(|o| o.usable_bytes < need || o.usable_bytes >= g.usable_bytes)
        );
    }
}

#[cfg(test)]
mod gpu_layer_tests {
    use super::*;
    use crate::catalog::model;
    use crate::units::ByteSize;
    use crate::workload::Engine;

    /// Llama-3.1-70B in Q4_K_M does not fit a 24 GB card whole; llama.cpp can put
    /// some of its 80 layers there, more with a smaller context, none of them outside
    /// llama.cpp.
    #[test]
    fn max_gpu_layers_is_what_fits() {
        let m = ModelInput::Arch {
            arch: Box::new(model("llama-3.1-70b").unwrap().arch.clone()),
            total_params: None,
        };
        let w = |seq| Workload {
            seq,
            engine: Engine::Ggml,
            weights: crate::quant::WeightFormat::parse("Q4_K_M").unwrap(),
            ..Workload::default()
        };
        let cap = 24 * ByteSize::GIB;
        let long = max_gpu_layers(&m, &w(32_768), cap).unwrap();
        let short = max_gpu_layers(&m, &w(2048), cap).unwrap();
        assert!(0 < long && long < short && short < 80, "{long} {short}");
        // The answer fits and one more layer does not.
        let at = |g| {
            estimate(
                &m,
                &Workload {
                    gpu_layers: Some(g),
                    ..w(2048)
                },
            )
            .unwrap()
            .per_gpu_bytes
        };
        assert!(at(short) <= cap && at(short + 1) > cap);
        // A big card takes every layer and the output.
        assert_eq!(max_gpu_layers(&m, &w(2048), 80 * ByteSize::GIB), Some(81));
        // Not llama.cpp: no answer.
        let torch = Workload {
            engine: Engine::Torch,
            ..w(2048)
        };
        assert_eq!(max_gpu_layers(&m, &torch, cap), None);
        // Fewer layers on the GPU move bytes to the host, never lose them.
        let full = estimate(&m, &w(2048)).unwrap();
        let half = estimate(
            &m,
            &Workload {
                gpu_layers: Some(40),
                ..w(2048)
            },
        )
        .unwrap();
        assert!(half.per_gpu_bytes < full.per_gpu_bytes);
        assert!(half.host_bytes > full.host_bytes);
        let kept = |e: &crate::estimate::Estimate| {
            e.breakdown.weights + e.breakdown.kv_cache + e.host_bytes
        };
        // Weights and KV are conserved; only the output's compute buffer moves sides.
        assert!(kept(&half) >= kept(&full));
    }
}

#[cfg(test)]
mod cpu_moe_tests {
    use super::*;
    use crate::catalog::model;
    use crate::units::ByteSize;
    use crate::workload::Engine;

    /// Qwen3-30B-A3B in Q4_K_M (about 17 GiB) with a 32k context: a 12 GiB card needs
    /// the experts of its first layers in CPU RAM, a 24 GiB card none, and a dense
    /// model has no answer.
    #[test]
    fn min_cpu_moe_is_the_fewest_layers_that_fit() {
        let input = |id: &str| ModelInput::Arch {
            arch: Box::new(model(id).unwrap().arch.clone()),
            total_params: None,
        };
        let m = input("qwen3-30b-a3b");
        let w = Workload {
            seq: 32_768,
            attention: crate::workload::Attention::Flash,
            engine: Engine::Ggml,
            weights: crate::quant::WeightFormat::parse("Q4_K_M").unwrap(),
            ..Workload::default()
        };
        let cap = 12 * ByteSize::GIB;
        let n = min_cpu_moe(&m, &w, cap).unwrap();
        assert!(0 < n && n < 48, "{n}");
        let at = |cpu_moe| {
            estimate(
                &m,
                &Workload {
                    cpu_moe,
                    ..w.clone()
                },
            )
            .unwrap()
            .per_gpu_bytes
        };
        assert!(at(n) <= cap && at(n - 1) > cap, "{} {}", at(n), at(n - 1));
        assert_eq!(min_cpu_moe(&m, &w, 24 * ByteSize::GIB), Some(0));
        // Even every expert in RAM leaves attention, KV and the output on the GPU.
        assert_eq!(min_cpu_moe(&m, &w, ByteSize::GIB), None);
        assert_eq!(min_cpu_moe(&input("llama-3.1-8b"), &w, cap), None);
        let torch = Workload {
            engine: Engine::Torch,
            ..w
        };
        assert_eq!(min_cpu_moe(&m, &torch, cap), None);
    }

    proptest::proptest! {
        /// The bisection finds what a scan of every layer count finds, for every MoE of
        /// the catalog, on one or several GPUs, with any `-ngl`, format and context, at
        /// capacities from nothing fitting to everything fitting.
        #[test]
        fn bisection_agrees_with_a_scan(
            id in proptest::sample::select(vec![
                "qwen3-30b-a3b", "mixtral-8x7b", "deepseek-v2-lite", "deepseek-moe-16b",
                "qwen3-235b-a22b", "deepseek-v3",
            ]),
            format in proptest::sample::select(vec!["Q4_K_M", "Q8_0", "Q2_K", "Q6_K"]),
            seq in 512u64..65_536,
            gpus in 1u32..4,
            gpu_layers in proptest::option::of(0u32..70),
            flash: bool,
            share in 0u64..1000,
        ) {
            let m = ModelInput::Arch {
                arch: Box::new(model(id).unwrap().arch.clone()),
                total_params: None,
            };
            let w = Workload {
                seq,
                attention: if flash {
                    crate::workload::Attention::Flash
                } else {
                    crate::workload::Attention::Sdpa
                },
                engine: Engine::Ggml,
                weights: crate::quant::WeightFormat::parse(format).unwrap(),
                gpus,
                tp: 1,
                pp: gpus,
                gpu_layers,
                ..Workload::default()
            };
            let bytes = |cpu_moe| {
                estimate(&m, &Workload { cpu_moe, ..w.clone() }).map(|e| e.per_gpu_bytes)
            };
            // Capacities between what every expert in RAM needs and what none does.
            let (low, high) = (bytes(u32::MAX).unwrap(), bytes(0).unwrap());
            let cap = low.saturating_sub(1 << 30) + (high + (1 << 30) - low.min(high)) / 1000 * share;
            let layers = model(id).unwrap().arch.layers;
            let scan = (0..=layers).find(|&n| bytes(n).is_ok_and(|b| b <= cap));
            proptest::prop_assert_eq!(min_cpu_moe(&m, &w, cap), scan);
        }
    }
}
