use super::*;
use crate::catalog;
use crate::cuda_graphs::CudaGraphs;
use crate::settings::{Field, Surface, Task};
use crate::units::ByteSize;
use crate::workload::Attention;

fn preset(id: &str) -> Model {
    Model::new(ModelInput::Arch {
        arch: Box::new(catalog::model(id).unwrap().arch.clone()),
        total_params: None,
    })
}

fn settings(pairs: &[(Field, &str)]) -> Settings {
    let mut s = Settings::for_task(Task::Inference);
    for &(f, v) in pairs {
        if f == Field::Task {
            let mut probe = s.clone();
            probe.set(f, v, Surface::Cli).unwrap();
            s = s.with_task(probe.task);
        } else {
            s.set(f, v, Surface::Cli).unwrap();
        }
    }
    s
}

#[test]
fn verdict_and_solvers_against_the_gpu() {
    let e = evaluate(
        &preset("llama-3.1-8b"),
        &settings(&[(Field::Gpu, "rtx-4090")]),
    )
    .unwrap();
    assert_eq!(e.estimate.breakdown.weights, 16_060_522_496);
    // The weights are most of it: even the band's high end fits a 4090.
    let band = crate::band::of(crate::settings::Runtime::Transformers, false).unwrap();
    let weights = e.estimate.breakdown.weights;
    let high = band.high_bytes(e.estimate.per_gpu_bytes, weights);
    assert!(high > e.estimate.per_gpu_bytes && high < e.capacity.unwrap());
    assert!(matches!(e.verdict, Some(Verdict::Fits { spare, spare_high }) if spare > spare_high));
    assert!(
        e.notes.iter().any(|n| matches!(n, Note::Band { .. })),
        "{:?}",
        e.notes
    );
    // A 20k context: the estimate still fits, the band's high end does not.
    let long = evaluate(
        &preset("llama-3.1-8b"),
        &settings(&[(Field::Gpu, "rtx-4090"), (Field::Seq, "20k")]),
    )
    .unwrap();
    assert!(
        matches!(long.verdict, Some(Verdict::Tight { spare, short }) if spare > 0 && short > 0),
        "{:?}",
        long.verdict
    );
    assert!(!long.verdict.unwrap().fits());
    let text = long
        .verdict_text(Some("GeForce RTX 4090"), Surface::Web)
        .unwrap();
    assert!(
        text.starts_with("Al límite en GeForce RTX 4090 (23,65 GiB): el cálculo deja"),
        "{text}"
    );
    // An 80 GB card holds even the high end.
    let roomy = evaluate(
        &preset("llama-3.1-8b"),
        &settings(&[(Field::Gpu, "h100-sxm")]),
    )
    .unwrap();
    match roomy.verdict {
        Some(Verdict::Fits { spare, spare_high }) => assert!(spare > spare_high),
        v => panic!("{v:?}"),
    }
    assert!(
        roomy
            .verdict_text(None, Surface::Web)
            .unwrap()
            .starts_with("Cabe con margen: sobran")
    );
    assert!(e.max_batch.unwrap() >= 1 && e.max_seq.unwrap() > 4096);
    assert_eq!(e.min_gpus, Some(1));
    assert!(e.smallest_gpu.unwrap().memory_bytes >= e.estimate.per_gpu_bytes);
    assert!(
        matches!(
            e.notes[0],
            Note::Capacity {
                usable: 25_393_994_138,
                ..
            }
        ),
        "{:?}",
        e.notes
    );
    assert!(
        matches!(e.notes[1], Note::CudaContext { .. }),
        "{:?}",
        e.notes
    );
    // What the display or other processes hold comes off the capacity.
    let mut busy = settings(&[(Field::Gpu, "rtx-4090")]);
    busy.set(Field::Reserve, "1GiB", Surface::Cli).unwrap();
    let b = evaluate(&preset("llama-3.1-8b"), &busy).unwrap();
    assert_eq!(b.capacity, Some(25_393_994_138 - (1 << 30)));
    let big = evaluate(
        &preset("llama-3.1-70b"),
        &settings(&[(Field::Gpu, "rtx-4090")]),
    )
    .unwrap();
    assert!(matches!(big.verdict, Some(Verdict::DoesNotFit { .. })));
    assert!(big.min_gpus.unwrap() > 1);
    // No GPU, no verdict.
    let none = evaluate(&preset("gpt2"), &settings(&[])).unwrap();
    assert_eq!((none.verdict, none.max_batch), (None, None));
}

/// A context past the model's own, and a tensor-parallel degree that does not divide
/// the heads, are said.
#[test]
fn contexts_past_the_model_and_uneven_tensor_parallelism_are_said() {
    let past = settings(&[
        (Field::Gpu, "h200"),
        (Field::Runtime, "llama.cpp"),
        (Field::Seq, "256k"),
    ]);
    let e = evaluate(&preset("llama-3.1-8b"), &past).unwrap();
    assert!(e.notes.iter().any(|n| matches!(
        n,
        Note::BeyondTrainedContext {
            asked: 262_144,
            trained: 131_072,
            vllm: false
        }
    )));
    let within = settings(&[(Field::Gpu, "h200"), (Field::Seq, "8k")]);
    let e = evaluate(&preset("llama-3.1-8b"), &within).unwrap();
    assert!(
        !e.notes
            .iter()
            .any(|n| matches!(n, Note::BeyondTrainedContext { .. }))
    );
    let tp3 = settings(&[
        (Field::Gpu, "h200"),
        (Field::Runtime, "vllm"),
        (Field::Gpus, "3"),
        (Field::Seq, "8k"),
    ]);
    let e = evaluate(&preset("qwen3-8b"), &tp3).unwrap();
    // With a GPU the verdict is vLLM's refusal, with the degrees that would start.
    assert_eq!(e.verdict, Some(Verdict::TpRefused { heads: 32, tp: 3 }));
    assert!(!e.verdict.unwrap().fits() && !e.verdict.unwrap().starts());
    assert_eq!(e.max_batch, None);
    let cli = e.verdict_text(None, Surface::Cli).unwrap();
    assert!(
        cli.contains("Usa --tp 2 o 4") && cli.contains("--tp 1 --pp 3"),
        "{cli}"
    );
    assert_eq!((e.smallest_gpu, e.min_gpus, e.speed), (None, None, None));
    let web = e.verdict_text(None, Surface::Web).unwrap();
    assert!(
        web.contains("Usa un número de GPU que divida 32: 2 o 4.") && !web.contains("--"),
        "{web}"
    );
    assert!(!e.notes.iter().any(|n| matches!(n, Note::TpHeads { .. })));
    // Without one, a note says it.
    let mut no_gpu = tp3.clone();
    no_gpu.gpu = None;
    let e = evaluate(&preset("qwen3-8b"), &no_gpu).unwrap();
    assert_eq!(e.verdict, None);
    assert!(
        e.notes
            .iter()
            .any(|n| matches!(n, Note::TpHeads { heads: 32, tp: 3 }))
    );
    // Other runtimes split layers or do not check.
    let mut hf = tp3.clone();
    hf.runtime = crate::settings::Runtime::Transformers;
    let e = evaluate(&preset("qwen3-8b"), &hf).unwrap();
    assert_ne!(e.verdict, Some(Verdict::TpRefused { heads: 32, tp: 3 }));
}

/// A server's longest sequence is the cache's, but never past the model's own context
/// (vLLM refuses a larger max_model_len); llama.cpp and Ollama have no paged server.
#[test]
fn a_servers_longest_sequence_stops_at_the_models_context() {
    let s = settings(&[
        (Field::Gpu, "h200"),
        (Field::Runtime, "vllm"),
        (Field::Seq, "32k"),
        (Field::Serve, "true"),
    ]);
    let e = evaluate(&preset("qwen3-8b"), &s).unwrap();
    let plan = e.serving.unwrap();
    assert!(plan.tokens > 40_960, "{}", plan.tokens);
    assert_eq!(e.max_seq, Some(40_960));
    assert_eq!(e.margin.seq, Some(40_960));
    let ggml = settings(&[
        (Field::Gpu, "rtx-4090"),
        (Field::Runtime, "llama.cpp"),
        (Field::Serve, "true"),
    ]);
    assert!(!ggml.serving());
    assert!(
        evaluate(&preset("gemma-3-27b"), &ggml)
            .unwrap()
            .serving
            .is_none()
    );
}

/// Llama-3.1-8B in bf16 on an L4 with a 32k context: the weights fit, but vLLM would
/// refuse to start because the KV cache left cannot hold one sequence. (Qwen2.5-7B,
/// with a quarter of the KV per token, starts: vLLM v1 profiles 2048 tokens there.)
#[test]
fn serving_verdict_fails_without_room_for_one_sequence() {
    let s = settings(&[
        (Field::Gpu, "l4"),
        (Field::Seq, "32k"),
        (Field::Serve, "true"),
    ]);
    let e = evaluate(&preset("llama-3.1-8b"), &s).unwrap();
    let plan = e.serving.unwrap();
    assert_eq!(plan.max_sequences, 0, "{plan:?}");
    let qwen = evaluate(&preset("qwen2.5-7b"), &s).unwrap();
    assert!(
        matches!(qwen.verdict, Some(Verdict::Serves { sequences: 2, .. })),
        "{:?}",
        qwen.verdict
    );
    // vLLM 0.21 and later take the CUDA graphs' estimate out of the KV cache first;
    // older versions captured them after it.
    let mut old = s.clone();
    old.set(Field::CudaGraphs, "after-kv", Surface::Cli)
        .unwrap();
    let qwen_old = evaluate(&preset("qwen2.5-7b"), &old).unwrap();
    let (new_plan, old_plan) = (qwen.serving.unwrap(), qwen_old.serving.unwrap());
    assert_eq!(
        old_plan.kv_budget_bytes - new_plan.kv_budget_bytes,
        new_plan.cuda_graph_bytes
    );
    assert!(new_plan.tokens < old_plan.tokens);
    match e.verdict {
        Some(Verdict::CannotServe {
            kv_budget,
            needed,
            longest,
        }) => {
            assert!(kv_budget < needed, "{kv_budget} vs {needed}");
            // The context vLLM would start with fits the KV cache left, in whole blocks,
            // and is shorter than the one asked for.
            let per_token = needed / e.workload.seq;
            assert!(longest * per_token <= kv_budget, "{longest}");
            assert!(
                kv_budget - longest * per_token < 16 * per_token,
                "{longest}"
            );
            assert_eq!(longest % 16, 0);
            assert!(longest < e.workload.seq);
        }
        other => panic!("{other:?}"),
    }
    assert!(!e.verdict.unwrap().fits());
    let web = e.verdict_text(Some("NVIDIA L4"), Surface::Web).unwrap();
    assert!(
        web.starts_with("No arranca como servidor en NVIDIA L4 (22,03 GiB): quedan"),
        "{web}"
    );
    assert!(!web.contains("--"), "{web}");
    let cli = e.verdict_text(None, Surface::Cli).unwrap();
    assert!(
        cli.starts_with("No arranca como servidor: quedan")
            && cli.contains("Arrancaría con --seq ")
            && cli.contains("(max_model_len ")
            && cli.contains(" con margen)"),
        "{cli}"
    );
    assert!(
        web.contains("Arrancaría con un contexto de hasta "),
        "{web}"
    );
    // A short context serves several sequences.
    let s = settings(&[
        (Field::Gpu, "l4"),
        (Field::Seq, "2k"),
        (Field::Serve, "true"),
    ]);
    let e = evaluate(&preset("qwen2.5-7b"), &s).unwrap();
    assert!(matches!(e.verdict, Some(Verdict::Serves { sequences, .. }) if sequences > 1));
}

#[test]
fn qlora_with_plain_weights_says_what_it_counts() {
    let mut s = settings(&[(Field::Task, "qlora")]);
    let nf4 = evaluate(&preset("llama-3.1-8b"), &s).unwrap();
    assert!(
        nf4.notes
            .iter()
            .all(|n| !matches!(n, Note::QloraBase { .. }))
    );
    s.set(Field::Format, "bf16", Surface::Cli).unwrap();
    let asked_bf16 = evaluate(&preset("llama-3.1-8b"), &s).unwrap();
    assert!(
        asked_bf16
            .notes
            .iter()
            .any(|n| matches!(n, Note::QloraBase { .. }))
    );
    // The default (NF4 with double quantisation) is exactly what the engine computes.
    assert_eq!(
        nf4.estimate.breakdown.weights,
        asked_bf16.estimate.breakdown.weights
    );
}

#[test]
fn exact_weights_replace_the_formula_in_inference_only() {
    let mut m = preset("gpt2");
    m.stored = Some(StoredWeights {
        bytes: 99_000_000,
        params: Some(124_439_808),
        source: "gpt2.gguf".into(),
        experts: Vec::new(),
        shard: None,
    });
    let e = evaluate(&m, &settings(&[])).unwrap();
    assert_eq!(e.estimate.breakdown.weights, 99_000_000);
    assert!(
        e.notes
            .iter()
            .any(|n| matches!(n, Note::ExactWeights { .. }))
    );
    let t = evaluate(&m, &settings(&[(Field::Task, "full")])).unwrap();
    // Training counts weights by format and precision: transformers 5 trains the
    // checkpoint's bf16 weights as they are (2 bytes per parameter)…
    assert_eq!(t.estimate.breakdown.weights, 2 * 124_439_808);
    // … and transformers 4's autocast kept fp32 weights plus their 16-bit copies (6).
    let amp = evaluate(
        &m,
        &settings(&[(Field::Task, "full"), (Field::Precision, "amp")]),
    )
    .unwrap();
    assert_eq!(amp.estimate.breakdown.weights, 6 * 124_439_808);
    assert!(
        t.notes
            .iter()
            .any(|n| matches!(n, Note::ExactWeightsIgnored { .. }))
    );
}

/// Parameters in RAM take the optimizer with them, and only ZeRO-3 can do it.
#[test]
fn offloaded_parameters_need_zero3() {
    let s = settings(&[
        (Field::Task, "full"),
        (Field::Runtime, "deepspeed"),
        (Field::OffloadParams, "true"),
        (Field::Zero, "3"),
    ]);
    let e = evaluate(&preset("llama-3.1-8b"), &s).unwrap();
    assert!(e.workload.cpu_offload && e.workload.offload_params);
    assert_eq!(e.estimate.breakdown.weights, 0);
    assert!(e.notes.iter().any(|n| matches!(
        n,
        Note::CpuOffload {
            params: true,
            gradients: true,
            ..
        }
    )));
    let s = settings(&[
        (Field::Task, "full"),
        (Field::OffloadParams, "true"),
        (Field::Zero, "2"),
    ]);
    let e = evaluate(&preset("llama-3.1-8b"), &s).unwrap();
    assert!(!e.workload.offload_params && !e.workload.cpu_offload);
    assert!(e.estimate.breakdown.weights > 0);
    assert!(e.notes.contains(&Note::OffloadParamsNeedZero3));
}

/// `--n-cpu-moe` on a dense model changes nothing, and the estimate says so.
#[test]
fn experts_on_the_cpu_of_a_dense_model_are_noted() {
    let ask = |model: &str, layers: &str| {
        let s = settings(&[(Field::Runtime, "llama.cpp"), (Field::CpuMoe, layers)]);
        evaluate(&preset(model), &s).unwrap()
    };
    let dense = ask("llama-3.1-8b", "4");
    assert!(dense.notes.contains(&Note::CpuMoeDense));
    assert_eq!(
        dense.estimate.per_gpu_bytes,
        ask("llama-3.1-8b", "0").estimate.per_gpu_bytes
    );
    assert!(!ask("qwen3-30b-a3b", "4").notes.contains(&Note::CpuMoeDense));
    assert!(!ask("llama-3.1-8b", "0").notes.contains(&Note::CpuMoeDense));
}

/// Trainer evaluates 8 sequences at a time: at 2048 tokens Llama 3.1 8B's loss over the
/// logits needs 8 × 2048 × 128 256 × (2 + 8) bytes, and a 4090 that trains LoRA holds 3.
#[test]
fn trainer_evaluation_is_noted_with_what_fits() {
    let run = |runtime: &str| {
        let s = settings(&[
            (Field::Task, "lora"),
            (Field::Runtime, runtime),
            (Field::Gpu, "rtx-4090"),
            (Field::Seq, "2048"),
        ]);
        evaluate(&preset("llama-3.1-8b"), &s).unwrap()
    };
    let e = run("transformers");
    let note = e.notes.iter().find_map(|n| match n {
        Note::TrainerEval {
            batch,
            peak,
            fits,
            kept,
            kept_fit,
        } => Some((*batch, *peak, *fits, *kept, *kept_fit)),
        _ => None,
    });
    let (batch, peak, fits, kept, kept_fit) = note.unwrap();
    assert_eq!((batch, peak), (8, 8 * 2048 * 128_256 * 10));
    // Under autocast accelerate hands the logits back in fp32.
    assert_eq!(kept, 2048 * 128_256 * 4 + 2048 * 8);
    assert_eq!(fits, Some(3));
    // Three sequences' loss leaves no room for 2 GiB of kept logits per sequence.
    assert_eq!(kept_fit, Some(0));
    // torchtune evaluates in its own loop; Unsloth's evaluation (its fused loss returns
    // no logits in training) is not modelled.
    for other in ["torchtune", "unsloth"] {
        assert!(
            !run(other)
                .notes
                .iter()
                .any(|n| matches!(n, Note::TrainerEval { .. }))
        );
    }
}

/// A serving plan is vLLM's paged cache: it takes vLLM's band whatever the runtime.
#[test]
fn a_serving_plan_takes_vllms_band() {
    let s = settings(&[
        (Field::Gpu, "l4"),
        (Field::Seq, "32768"),
        (Field::Serve, "si"),
    ]);
    assert_eq!(s.runtime, crate::settings::Runtime::Transformers);
    let e = evaluate(&preset("qwen2.5-7b"), &s).unwrap();
    assert_eq!(
        e.band,
        crate::band::of(crate::settings::Runtime::Vllm, false)
    );
}

/// torchtune on two GPUs is FSDP even at stage 0: no DDP bucket copy, a note saying so.
#[test]
fn torchtune_on_two_gpus_is_fsdp() {
    let run = |runtime: &str| {
        let s = settings(&[
            (Field::Task, "full"),
            (Field::Runtime, runtime),
            (Field::Gpus, "2"),
        ]);
        evaluate(&preset("llama-3.1-8b"), &s).unwrap()
    };
    let (tune, trainer) = (run("torchtune"), run("transformers"));
    assert!(tune.workload.fsdp && tune.notes.contains(&Note::TorchtuneFsdp));
    assert_eq!(tune.estimate.grad_sync.buckets, 0);
    assert!(tune.estimate.per_gpu_bytes < trainer.estimate.per_gpu_bytes);
    assert!(!trainer.notes.contains(&Note::TorchtuneFsdp));
    assert!(trainer.estimate.grad_sync.buckets > 0);
}

#[test]
fn offload_and_paged_optimizers_are_noted() {
    let s = settings(&[
        (Field::Task, "full"),
        (Field::CpuOffload, "true"),
        (Field::Gpus, "8"),
        (Field::Zero, "3"),
    ]);
    let e = evaluate(&preset("llama-3.1-8b"), &s).unwrap();
    assert_eq!(e.estimate.breakdown.optimizer, 0);
    assert!(
        e.notes
            .iter()
            .any(|n| matches!(n, Note::CpuOffload { bytes, .. } if *bytes > 0))
    );
    let s = settings(&[
        (Field::Task, "qlora"),
        (Field::Optimizer, "paged-adamw8bit"),
    ]);
    let e = evaluate(&preset("llama-3.1-8b"), &s).unwrap();
    assert!(
        e.notes
            .iter()
            .any(|n| matches!(n, Note::PagedOptimizer { .. }))
    );
}

#[test]
fn the_curve_stops_at_the_models_context() {
    let gpt2 = preset("gpt2");
    let curve = context_curve(&gpt2, &evaluate(&gpt2, &settings(&[])).unwrap().workload);
    assert_eq!(curve.last().map(|p| p.0), Some(1024));
    assert!(curve.iter().all(|&(_, eager, sdpa)| eager >= sdpa));
}

#[test]
fn the_curve_meets_the_estimate_at_the_readers_length() {
    // llama.cpp with flash attention pads cells to 256 and keeps no score matrix: the
    // fused curve is the reader's kernel, so at their length it is their estimate.
    let s = settings(&[
        (Field::Runtime, "llama.cpp"),
        (Field::Format, "Q4_K_M"),
        (Field::Attention, "flash"),
        (Field::Seq, "32768"),
        (Field::CpuMoe, "28"),
    ]);
    let m = preset("qwen3-30b-a3b");
    let e = evaluate(&m, &s).unwrap();
    let curve = context_curve(&m, &e.workload);
    let at = curve.iter().find(|p| p.0 == 32_768).unwrap();
    assert_eq!(at.2, e.estimate.per_gpu_bytes);
    // Also where `--fit` moved layers to the CPU: the curve is the fitted placement's.
    let s = settings(&[
        (Field::Gpu, "rtx-3060"),
        (Field::Runtime, "llama.cpp"),
        (Field::Seq, "4096"),
    ]);
    let m = preset("qwen2.5-32b");
    let e = evaluate(&m, &s).unwrap();
    assert!(
        e.workload.gpu_layers.is_some_and(|l| l < 64),
        "{:?}",
        e.workload.gpu_layers
    );
    let curve = context_curve(&m, &e.workload);
    let at = curve.iter().find(|p| p.0 == 4096).unwrap();
    assert_eq!(at.2, e.estimate.per_gpu_bytes);
    // The whole model, which the list of GPUs compares, does not fit this card.
    let (whole, _) = e.whole.unwrap();
    assert!(whole > e.capacity.unwrap() && whole > e.estimate.per_gpu_bytes);
}

#[test]
fn limits_with_margin_hold_at_the_band_high_end() {
    // Llama 3.1 8B bf16 on a 4090 with transformers: the plain limits use the estimate,
    // the margin ones the band's high end, which is never more.
    let s = settings(&[(Field::Gpu, "rtx-4090")]);
    let e = evaluate(&preset("llama-3.1-8b"), &s).unwrap();
    let (batch, margin) = (e.max_batch.unwrap(), e.margin.batch.unwrap());
    assert!(margin <= batch, "{margin} vs {batch}");
    assert!(e.margin.seq.unwrap() <= e.max_seq.unwrap());
    // The margin batch passes the high end; one more does not.
    let band = band::of(s.runtime, false).unwrap();
    let cap = e.capacity.unwrap();
    let at = |b: u64| {
        let mut t = s.clone();
        t.batch = b;
        let x = evaluate(&preset("llama-3.1-8b"), &t).unwrap().estimate;
        band.high_bytes(x.per_gpu_bytes, x.breakdown.weights) <= cap
    };
    assert!(at(margin));
    assert!(!at(margin + 1));
    assert_eq!(crate::with_margin(8, Some(3), ""), "8 (3 con margen)");
    assert_eq!(
        crate::with_margin(35_931, Some(15_029), " tokens"),
        "35\u{202f}931 tokens (15\u{202f}029 con margen)"
    );
    assert_eq!(crate::with_margin(4, Some(4), ""), "4");
    assert_eq!(crate::with_margin(1, None, ""), "1 (ninguno con margen)");
}

proptest::proptest! {
    /// What a forged `.gguf` or safetensors header hands the estimator (any parameter
    /// count, byte total and tensor count) goes through the whole evaluation, for every
    /// task, serving or not, without an overflow panic (tests run with overflow checks).
    #[test]
    fn forged_weight_headers_never_panic(
        params in proptest::prelude::any::<u64>(),
        bytes in proptest::prelude::any::<u64>(),
        tensors in proptest::prelude::any::<u64>(),
        task in 0usize..4,
        serve in proptest::prelude::any::<bool>(),
    ) {
        let mut model = Model::new(ModelInput::Arch {
            arch: Box::new(catalog::model("llama-3.1-8b").unwrap().arch.clone()),
            total_params: Some(params),
        });
        model.stored = Some(crate::import::StoredWeights {
            bytes,
            params: Some(params),
            source: "forjado.gguf".into(),
            experts: Vec::new(),
            shard: None,
        });
        model.tensors = Some(tensors);
        let task = [Task::Inference, Task::Full, Task::Lora, Task::Qlora][task];
        let mut s = Settings::for_task(task);
        s.set(Field::Gpu, "rtx-4090", Surface::Cli).unwrap();
        s.serve = serve;
        if let Ok(e) = evaluate(&model, &s) {
            proptest::prop_assert_eq!(e.estimate.breakdown.total(), e.estimate.per_gpu_bytes);
        }
    }
}

#[test]
fn experts_in_ram_are_noted_and_solved_for_llama_cpp_only() {
    let base = [
        (Field::Gpu, "rtx-3060"),
        (Field::Runtime, "llama.cpp"),
        (Field::Format, "Q4_K_M"),
        (Field::Seq, "32768"),
        (Field::GpuLayers, "all"),
    ];
    let e = evaluate(&preset("qwen3-30b-a3b"), &settings(&base)).unwrap();
    let fit = e.min_cpu_moe.unwrap();
    assert!(fit.fit > 0 && fit.fit < fit.layers, "{fit:?}");
    assert!(!e.notes.iter().any(|n| matches!(n, Note::CpuExperts { .. })));
    // Left to llama.cpp (`-ngl auto`), its `--fit` moves experts, not layers.
    let auto = evaluate(&preset("qwen3-30b-a3b"), &settings(&base[..4])).unwrap();
    assert!(auto.verdict.unwrap().fits(), "{:?}", auto.verdict);
    assert!(auto.notes.iter().any(|n| matches!(
        n,
        Note::FittedLayers { gpu_layers: None, cpu_moe, .. } if *cpu_moe > 0 && *cpu_moe < fit.layers
    )));
    // With that many layers' experts in RAM it fits, and the note says what moved.
    let n = fit.fit.to_string();
    let mut with = base.to_vec();
    with.push((Field::CpuMoe, n.as_str()));
    let e = evaluate(&preset("qwen3-30b-a3b"), &settings(&with)).unwrap();
    assert!(e.verdict.unwrap().fits(), "{:?}", e.verdict);
    let note = e
        .notes
        .iter()
        .find(|n| matches!(n, Note::CpuExperts { .. }))
        .unwrap();
    let Note::CpuExperts {
        layers,
        bytes,
        per_token,
        copies,
        ..
    } = note
    else {
        unreachable!()
    };
    assert_eq!(*layers, fit.fit);
    // A token uses 8 of the 128 experts of each of those layers.
    assert_eq!(*per_token, bytes * 8 / 128);
    assert!(*copies > 0);
    assert!(
        note.text(Surface::Cli)
            .contains(&format!("--n-cpu-moe {n}"))
    );
    // Ollama has no such flag; a dense model has no experts.
    let mut ollama = base.to_vec();
    ollama[1] = (Field::Runtime, "ollama");
    assert!(
        evaluate(&preset("qwen3-30b-a3b"), &settings(&ollama))
            .unwrap()
            .min_cpu_moe
            .is_none()
    );
    assert!(
        evaluate(&preset("llama-3.1-8b"), &settings(&base))
            .unwrap()
            .min_cpu_moe
            .is_none()
    );
}

/// vLLM's start-up check: `gpu_memory_utilization` of the whole card must be free when
/// its worker starts. An RTX 4090 (23,65 GiB) with 2 GiB held by the desktop and a
/// 500 MiB CUDA context has 21,16 GiB free; 90 % asks for 21,29: vLLM refuses, and 89 %
/// starts, with the KV cache sized from the whole card.
#[test]
fn serving_refuses_to_start_when_utilization_exceeds_free_memory() {
    let mut s = settings(&[(Field::Gpu, "rtx-4090"), (Field::Serve, "true")]);
    s.set(Field::Reserve, "2GiB", Surface::Cli).unwrap();
    let e = evaluate(&preset("qwen2.5-0.5b"), &s).unwrap();
    let usable = 25_393_994_138u64;
    let free = usable - (2 << 30) - (500 << 20);
    assert_eq!(
        e.verdict,
        Some(Verdict::WontStart {
            free,
            requested: usable * 90 / 100,
            max_percent: 89,
        })
    );
    assert!(!e.verdict.unwrap().fits());
    assert_eq!(e.verdict.unwrap().id(), "wont-start");
    // A server that does not start has no limits to show.
    assert_eq!((e.max_batch, e.max_seq), (None, None));
    assert_eq!(e.margin, Margin::default());
    let cli = e.verdict_text(None, Surface::Cli).unwrap();
    assert!(cli.contains("--gpu-memory-utilization a 89%"), "{cli}");
    let web = e.verdict_text(None, Surface::Web).unwrap();
    assert!(web.contains("al 89 %") && !web.contains("--"), "{web}");

    s.set(Field::Utilization, "0.89", Surface::Cli).unwrap();
    let starts = evaluate(&preset("qwen2.5-0.5b"), &s).unwrap();
    assert!(
        matches!(starts.verdict, Some(Verdict::Serves { .. })),
        "{:?}",
        starts.verdict
    );
    // The budget is a share of the whole card, not of what the desktop leaves.
    assert_eq!(starts.serving.unwrap().budget_bytes, usable * 89 / 100);

    // Nothing else on the card: 98 % is more than the CUDA context leaves.
    let mut full = settings(&[(Field::Gpu, "rtx-4090"), (Field::Serve, "true")]);
    full.set(Field::Utilization, "0.98", Surface::Cli).unwrap();
    let e = evaluate(&preset("qwen2.5-0.5b"), &full).unwrap();
    assert!(
        matches!(
            e.verdict,
            Some(Verdict::WontStart {
                max_percent: 97,
                ..
            })
        ),
        "{:?}",
        e.verdict
    );
    // A context measured by the reader replaces the family's.
    full.set(Field::CudaContext, "100MiB", Surface::Cli)
        .unwrap();
    let e = evaluate(&preset("qwen2.5-0.5b"), &full).unwrap();
    assert!(
        matches!(e.verdict, Some(Verdict::Serves { .. })),
        "{:?}",
        e.verdict
    );
}

/// vLLM up to 0.20 captured its CUDA graphs after the KV cache had taken the whole
/// budget. Llama-3.1-8B on an RTX 4090 (23,65 GiB, a 500 MiB CUDA context) at 95 %:
/// 22,47 GiB requested leaves 0,69 GiB, and the graphs of its 32 layers need 0,75:
/// out of memory while capturing, as vLLM users see it. 94 % leaves room; vLLM 0.21's
/// reservation and `--enforce-eager` start at 95 %.
#[test]
fn graphs_captured_after_the_kv_cache_must_fit_in_what_it_leaves() {
    let mut s = settings(&[
        (Field::Gpu, "rtx-4090"),
        (Field::Serve, "true"),
        (Field::Utilization, "0.95"),
        (Field::CudaGraphs, "after-kv"),
    ]);
    let e = evaluate(&preset("llama-3.1-8b"), &s).unwrap();
    let usable = 25_393_994_138u64;
    let captures = crate::cuda_graphs::Captures::of(256, 2048);
    let graphs = crate::cuda_graphs::bytes(CudaGraphs::AfterKv, 32, captures);
    assert_eq!(e.serving.unwrap().cuda_graph_bytes, graphs);
    assert_eq!(
        e.verdict,
        Some(Verdict::GraphsDoNotFit {
            free: usable - (500 << 20),
            requested: usable * 95 / 100,
            graphs,
            max_percent: 94,
        })
    );
    let v = e.verdict.unwrap();
    assert!(!v.fits() && !v.starts());
    assert_eq!(v.id(), "graphs-do-not-fit");
    assert_eq!((e.max_batch, e.max_seq), (None, None));
    let cli = e.verdict_text(None, Surface::Cli).unwrap();
    assert!(
        cli.contains("grafos CUDA") && cli.contains("--gpu-memory-utilization a 94%"),
        "{cli}"
    );
    let web = e.verdict_text(None, Surface::Web).unwrap();
    assert!(web.contains("al 94 %") && !web.contains("--"), "{web}");

    for (field, value) in [
        (Field::Utilization, "0.94"),
        (Field::CudaGraphs, "profiled"),
        (Field::CudaGraphs, "off"),
    ] {
        let mut t = s.clone();
        t.set(field, value, Surface::Cli).unwrap();
        let e = evaluate(&preset("llama-3.1-8b"), &t).unwrap();
        assert!(
            matches!(e.verdict, Some(Verdict::Serves { .. })),
            "{value}: {:?}",
            e.verdict
        );
    }
    // The reservation costs KV cache; no graphs give it back.
    let mut tokens = |value: &str| {
        s.set(Field::CudaGraphs, value, Surface::Cli).unwrap();
        evaluate(&preset("llama-3.1-8b"), &s)
            .unwrap()
            .serving
            .unwrap()
            .tokens
    };
    let (reserved, after, off) = (tokens("profiled"), tokens("after-kv"), tokens("off"));
    assert!(reserved < after && after == off, "{reserved} {after} {off}");
    assert_eq!((after - reserved) / 16, graphs / (128 * 1024 * 16));
}

/// Ollama's defaults: flash attention (`--flash-attn auto` since 0.30), gemma3's vision
/// projector, and the context it chooses by the VRAM (`auto`); a context given instead
/// gets a note naming Ollama's own.
#[test]
fn ollama_defaults_follow_ollama() {
    let s = Settings::defaults(Task::Inference, crate::settings::Runtime::Ollama);
    assert_eq!(
        (s.attention, s.mmproj, s.seq),
        (Attention::Flash, true, None)
    );
    let mut s = s;
    s.set(Field::Gpu, "rtx-4090", Surface::Cli).unwrap();
    let e = evaluate(&preset("gemma-3-4b"), &s).unwrap();
    assert!(e.estimate.projector.is_some());
    assert_eq!(e.workload.seq, 32_768);
    assert!(e.notes.iter().any(|n| matches!(
        n,
        Note::OpenedContext {
            opened: Opened::Ollama { tier: 32_768, .. },
            ..
        }
    )));
    s.set(Field::Seq, "4096", Surface::Cli).unwrap();
    let e = evaluate(&preset("gemma-3-4b"), &s).unwrap();
    let note = e
        .notes
        .iter()
        .find(|n| matches!(n, Note::OllamaContext { .. }))
        .unwrap();
    assert!(matches!(
        note,
        Note::OllamaContext {
            default: 32_768,
            seq: 4096,
            ..
        }
    ));
    assert!(note.text(Surface::Cli).contains("--seq auto"));
    assert!(
        !e.notes
            .iter()
            .any(|n| matches!(n, Note::OpenedContext { .. }))
    );
}

/// `vllm serve` with no `--max-model-len` takes the model's whole context: Llama 3.1
/// 8B in bf16 on a 4090 does not start, as vLLM refuses it, and the verdict names the
/// longest context that would.
#[test]
fn vllm_opens_the_models_context_by_default() {
    let mut s = Settings::defaults(Task::Inference, crate::settings::Runtime::Vllm);
    s.set(Field::Gpu, "rtx-4090", Surface::Cli).unwrap();
    let e = evaluate(&preset("llama-3.1-8b"), &s).unwrap();
    assert_eq!(e.workload.seq, 131_072);
    let Some(Verdict::CannotServe { longest, .. }) = e.verdict else {
        panic!("{:?}", e.verdict);
    };
    assert!(longest > 4096 && longest < 131_072, "{longest}");
    // Generated tokens come out of the same max_model_len.
    s.set(Field::NewTokens, "1024", Surface::Cli).unwrap();
    assert_eq!(
        evaluate(&preset("llama-3.1-8b"), &s).unwrap().workload.seq,
        131_072 - 1024
    );
    s.set(Field::Seq, "8k", Surface::Cli).unwrap();
    assert!(matches!(
        evaluate(&preset("llama-3.1-8b"), &s).unwrap().verdict,
        Some(Verdict::Serves { .. })
    ));
}

/// llama-server opens the trained context and `--fit` lowers it to leave 1 GiB free:
/// Llama 3.1 8B Q4_K_M on a 12 GB card gets a context between 4096 and 131 072, a
/// multiple of 256, that leaves about that much; a small card gets the floor.
#[test]
fn llama_cpp_fits_its_automatic_context() {
    let mut s = Settings::defaults(Task::Inference, crate::settings::Runtime::LlamaCpp);
    let e = evaluate(&preset("llama-3.1-8b"), &s).unwrap();
    assert_eq!(e.workload.seq, 131_072, "no GPU: nothing to fit");
    s.set(Field::Gpu, "rtx-3060", Surface::Cli).unwrap();
    let e = evaluate(&preset("llama-3.1-8b"), &s).unwrap();
    let seq = e.workload.seq;
    assert!(
        seq > 4096 && seq < 131_072 && seq.is_multiple_of(256),
        "{seq}"
    );
    let free = e.capacity.unwrap() - e.estimate.per_gpu_bytes;
    assert!(
        (ByteSize::GIB - (64 << 20)..ByteSize::GIB + (256 << 20)).contains(&free),
        "{free}"
    );
    assert!(e.verdict.is_some_and(Verdict::fits));
    s.set(Field::GpuMemory, "6GiB", Surface::Cli).unwrap();
    let e = evaluate(&preset("llama-3.1-8b"), &s).unwrap();
    assert_eq!(e.workload.seq, 4096);
    assert!(e.notes.iter().any(|n| matches!(
        n,
        Note::OpenedContext {
            opened: Opened::LlamaCpp {
                fit: Some(crate::default_context::Fit {
                    layers_next: true,
                    ..
                }),
                ..
            },
            ..
        }
    )));
}

/// `auto` is the servers' own choice; elsewhere it is refused in Spanish.
#[test]
fn auto_context_only_where_the_runtime_chooses() {
    let mut s = Settings::for_task(Task::Inference);
    let e = s.set(Field::Seq, "auto", Surface::Cli).unwrap_err();
    assert!(e.to_string().contains("vLLM, llama.cpp u Ollama"), "{e}");
    assert_eq!(s.seq, Some(4096));
    let vllm = s.with_runtime(crate::settings::Runtime::Vllm);
    assert_eq!(vllm.seq, None);
    assert_eq!(
        vllm.with_runtime(crate::settings::Runtime::Transformers)
            .seq,
        Some(4096)
    );
    let mut given = vllm.clone();
    given.set(Field::Seq, "16k", Surface::Cli).unwrap();
    assert_eq!(
        given.with_runtime(crate::settings::Runtime::LlamaCpp).seq,
        Some(16_384)
    );
}

#[test]
fn a_verdict_with_layers_in_ram_names_the_split() {
    // (model, settings, the verdict's words about the split): the automatic fit, a
    // chosen `-ngl`, experts in RAM, and nothing split.
    type Case<'a> = (&'a str, &'a [(Field, &'a str)], Option<&'a str>);
    let cases: &[Case] = &[
        (
            "qwen2.5-32b",
            &[
                (Field::Gpu, "rtx-3060"),
                (Field::Runtime, "llama.cpp"),
                (Field::Seq, "4096"),
            ],
            Some(" con parte en la CPU ("),
        ),
        (
            "llama-3.1-8b",
            &[
                (Field::Gpu, "rtx-3060"),
                (Field::Runtime, "ollama"),
                (Field::GpuLayers, "32"),
            ],
            Some(" con parte en la CPU (31 de 32 capas y la de salida en la GPU; la RAM guarda "),
        ),
        (
            "llama-3.1-8b",
            &[
                (Field::Gpu, "rtx-3060"),
                (Field::Runtime, "llama.cpp"),
                (Field::GpuLayers, "10"),
            ],
            Some(" con parte en la CPU (9 de 32 capas y la de salida en la GPU; la RAM guarda "),
        ),
        (
            "qwen3-30b-a3b",
            &[
                (Field::Gpu, "rtx-3060"),
                (Field::Runtime, "llama.cpp"),
                (Field::CpuMoe, "all"),
            ],
            Some(" con parte en la CPU (los expertos de todas las capas en la RAM; la RAM guarda "),
        ),
        (
            "llama-3.1-8b",
            &[
                (Field::Gpu, "rtx-4090"),
                (Field::Runtime, "llama.cpp"),
                (Field::Seq, "4096"),
            ],
            None,
        ),
        // Transformers never splits with the CPU this way.
        ("llama-3.1-8b", &[(Field::Gpu, "rtx-3060")], None),
    ];
    for (model, fields, words) in cases {
        let e = evaluate(&preset(model), &settings(fields)).unwrap();
        let text = e.verdict_text(Some("GPU"), Surface::Web).unwrap();
        match words {
            Some(w) => {
                let split = e.cpu_split.expect(model);
                assert!(split.host_bytes > 0, "{model}: {split:?}");
                assert_eq!(split.host_bytes, e.estimate.host_bytes);
                assert!(text.contains(w), "{model} {fields:?}: {text}");
                assert!(
                    text.contains(&ByteSize(split.host_bytes).binary()),
                    "{text}"
                );
            }
            None => {
                assert_eq!(e.cpu_split, None, "{model} {fields:?}");
                assert!(!text.contains("con parte en la CPU"), "{text}");
            }
        }
    }
}

/// llama.cpp on several GPUs says how it deals the layers; Ollama keeps a model that
/// takes at most 80 % of one GPU on that GPU alone, and splits a larger one.
#[test]
fn several_gpus_in_llama_cpp_and_ollama() {
    let run = |runtime: &str, model: &str| {
        evaluate(
            &preset(model),
            &settings(&[
                (Field::Gpu, "rtx-3090"),
                (Field::Gpus, "2"),
                (Field::Runtime, runtime),
                (Field::Format, "Q4_K_M"),
                (Field::Attention, "flash"),
                (Field::Seq, "8192"),
            ]),
        )
        .unwrap()
    };
    let split = run("llama.cpp", "llama-3.1-70b");
    assert_eq!((split.workload.tp, split.workload.pp), (1, 2));
    assert!(
        split.notes.iter().any(|n| matches!(
            n,
            Note::LayerSplit {
                gpus: 2,
                first: 41,
                last: 39,
                output: true,
                pipeline: Some(_),
                ..
            }
        )),
        "{:?}",
        split.notes
    );
    assert!(
        !split
            .notes
            .iter()
            .any(|n| matches!(n, Note::Communication { .. }))
    );
    // A small model: Ollama loads it on one of the two GPUs; llama.cpp splits it.
    let small = run("ollama", "llama-3.1-8b");
    assert_eq!(small.workload.pp, 1);
    assert_eq!(small.estimate.gpus, 1);
    assert!(
        small
            .notes
            .iter()
            .any(|n| matches!(n, Note::OllamaOneGpu { gpus: 2 }))
    );
    assert!(
        !small
            .notes
            .iter()
            .any(|n| matches!(n, Note::LayerSplit { .. }))
    );
    let shared = run("llama.cpp", "llama-3.1-8b");
    assert_eq!(shared.workload.pp, 2);
    assert!(shared.estimate.per_gpu_bytes < small.estimate.per_gpu_bytes);
    // A large one: Ollama splits it as llama.cpp does.
    let large = run("ollama", "llama-3.1-70b");
    assert_eq!(large.workload.pp, 2);
    assert!(
        !large
            .notes
            .iter()
            .any(|n| matches!(n, Note::OllamaOneGpu { .. }))
    );
}

/// The layers that fit, in words, as `-ngl` places them today and in older builds.
#[test]
fn layers_that_fit_are_said_as_placed() {
    let fit = |fit, output_first| LayerFit {
        fit,
        layers: 80,
        output_first,
    };
    let cases = [
        (fit(81, true), "todas (80 y la de salida)"),
        (fit(42, true), "41 de 80 y la de salida"),
        (fit(1, true), "solo la de salida"),
        (fit(0, true), "ninguna"),
        (fit(42, false), "42 de 80"),
    ];
    for (f, want) in cases {
        assert_eq!(f.placed_text(), want, "{f:?}");
    }
}

/// A Mac's capacity is the share of unified memory Metal lets the GPU wire, with no
/// CUDA context; vLLM does not run there, and the smallest GPU a vLLM answer names
/// is one that runs it.
#[test]
fn apple_silicon_is_unified_memory_for_the_runtimes_that_run_there() {
    let mac = |runtime: &str| {
        evaluate(
            &preset("gpt-oss-20b"),
            &settings(&[(Field::Gpu, "m4-max-36gb"), (Field::Runtime, runtime)]),
        )
        .unwrap()
    };
    let ollama = mac("ollama");
    assert_eq!(ollama.capacity, Some(28_991_029_248));
    let capacity = ollama
        .notes
        .iter()
        .find(|n| matches!(n, Note::Capacity { .. }))
        .map(|n| n.text(Surface::Web))
        .unwrap();
    assert!(
        capacity.contains("memoria unificada") && capacity.contains("recommendedMaxWorkingSetSize"),
        "{capacity}"
    );
    assert!(
        !ollama
            .notes
            .iter()
            .any(|n| matches!(n, Note::CudaContext { .. } | Note::RuntimeOffDevice { .. }))
    );
    assert_eq!(ollama.workload.cuda_context, Some(0));
    let vllm = mac("vllm");
    assert!(
        vllm.notes.iter().any(|n| matches!(
            n,
            Note::RuntimeOffDevice {
                runtime: "vLLM",
                ..
            }
        )),
        "{:?}",
        vllm.notes
    );
    assert_ne!(vllm.smallest_gpu.map(|g| g.family.as_str()), Some("apple"));
}

/// A config of a family the importer does not know is answered, marked «aproximado»
/// in the verdict and its first note; no catalog model is.
#[test]
fn unknown_families_are_marked_approximate() {
    let config = r#"{"model_type": "brand_new_lm", "hidden_size": 2048, "intermediate_size": 8192,
        "num_attention_heads": 16, "num_hidden_layers": 24, "num_key_value_heads": 4,
        "vocab_size": 32000, "max_position_embeddings": 8192}"#;
    let (arch, _) = crate::hf_config::parse(config).unwrap();
    let model = Model::new(ModelInput::Arch {
        arch: Box::new(arch),
        total_params: None,
    });
    let e = evaluate(&model, &settings(&[(Field::Gpu, "rtx-4090")])).unwrap();
    assert!(e.approximate);
    assert!(matches!(&e.notes[0], Note::Approximate { family } if family == "brand_new_lm"));
    let verdict = e.verdict_text(None, Surface::Web).unwrap();
    assert!(verdict.starts_with("Aproximado"), "{verdict}");
    for p in catalog::models() {
        let e = evaluate(&preset(&p.id), &settings(&[])).unwrap();
        assert!(!e.approximate, "{}", p.id);
    }
}
