//! Whole-estimate properties: errors in Spanish, no panic on any workload or forged
//! input, exact stored weights.

use super::*;
use crate::estimate::testing::*;

#[test]
fn bad_workloads_are_spanish_errors() {
    let m = preset("llama-3.1-8b");
    let cases = [
        Workload::default().batch(0),
        Workload::default().seq(MAX_SEQ + 1),
        Workload::default().gpus(3).tp(2),
        Workload::default().tp(u32::MAX).gpus(u32::MAX),
        Workload::default()
            .mode(Mode::Train)
            .weights(WeightFormat::Nf4 { double_quant: true }),
    ];
    for w in cases {
        let e = estimate(&m, &w).unwrap_err();
        assert!(!e.to_string().is_empty());
    }
}

fn workload() -> impl Strategy<Value = Workload> {
    (
        prop_oneof![Just(Mode::Inference), Just(Mode::Train)],
        prop_oneof![
            Just(Finetune::Full),
            Just(Finetune::Lora),
            Just(Finetune::Qlora)
        ],
        prop_oneof![
            Just(Attention::Eager),
            Just(Attention::Sdpa),
            Just(Attention::Flash)
        ],
        1u64..64,
        1u64..65_536,
        any::<bool>(),
        0u8..4,
        prop_oneof![Just(1u32), Just(2), Just(8), Just(64)],
    )
        .prop_map(
            |(mode, finetune, attention, batch, seq, ckpt, zero, gpus)| {
                Workload::default()
                    .mode(mode)
                    .finetune(finetune)
                    .attention(attention)
                    .batch(batch)
                    .seq(seq)
                    .grad_checkpointing(ckpt)
                    .zero(zero)
                    .gpus(gpus)
            },
        )
}

fn any_preset() -> impl Strategy<Value = ModelInput> {
    let n = crate::catalog::models().len();
    (0..n).prop_map(|i| ModelInput::Arch {
        arch: Box::new(crate::catalog::models()[i].arch.clone()),
        total_params: None,
    })
}

/// Any architecture an importer can produce: every dimension up to 2^24.
fn any_bounded_arch() -> impl Strategy<Value = Architecture> {
    let dim = || prop_oneof![1u32..64, 1u32..(1 << 24)];
    (
        (dim(), dim(), dim(), dim(), dim(), dim(), dim()),
        any::<bool>(),
        any::<bool>(),
        0u32..512,
    )
        .prop_map(
            |((layers, hidden, heads, kv, hd, inter, vocab), moe, mla, experts)| {
                let mut a = crate::arch::tests::deepseek_v2_lite();
                a.layers = layers;
                a.hidden = hidden;
                a.heads = heads;
                a.kv_heads = kv;
                a.head_dim = hd;
                a.intermediate = inter;
                a.vocab = vocab;
                a.max_positions = inter;
                if let Some(m) = a.moe.as_mut() {
                    m.experts = experts.max(1);
                    m.expert_intermediate = inter;
                }
                if !moe {
                    a.moe = None;
                }
                if !mla {
                    a.mla = None;
                }
                a
            },
        )
}

proptest! {
    /// A forged parameter total (a GGUF header, an index, a link) anywhere up to
    /// u64::MAX saturates; with overflow checks on (tests), nothing panics.
    #[test]
    fn forged_parameter_totals_saturate(total in any::<u64>(), train in any::<bool>()) {
        let m = ModelInput::Arch {
            arch: Box::new(model("llama-3.1-8b").unwrap().arch.clone()),
            total_params: Some(total),
        };
        let w = Workload::default().mode(if train { Mode::Train } else { Mode::Inference }).precision(Precision::Master);
        let e = estimate(&m, &w).unwrap();
        prop_assert_eq!(e.breakdown.total(), e.per_gpu_bytes);
    }

    #[test]
    fn huge_architectures_never_panic(
        a in any_bounded_arch(),
        w in workload(),
        fmt in prop_oneof![Just("bf16"), Just("Q4_K_M"), Just("nf4"), Just("gptq-4bit-128g")],
    ) {
        let w = (w).weights(WeightFormat::parse(fmt).unwrap());
        let m = ModelInput::Arch { arch: Box::new(a.clone()), total_params: None };
        if let Ok(e) = estimate(&m, &w) {
            let g = &crate::catalog::gpus()[0];
            let _ = crate::speed::speed(&a, &w, &e, g);
            let _ = crate::serving::plan(
                &a,
                &w,
                &e,
                g.memory_bytes,
                90,
                16,
                crate::serving::Profile::vllm_default(g.memory_bytes, Some(g)),
                0,
            );
            let _ = crate::solve::max_batch(&m, &w, g.memory_bytes);
        }
    }

    #[test]
    fn monotonic_in_batch_and_seq(m in any_preset(), w in workload()) {
        let base = estimate(&m, &w).unwrap().per_gpu_bytes;
        let more_batch = estimate(&m, &w.clone().batch(w.batch + 1)).unwrap().per_gpu_bytes;
        let more_seq = estimate(&m, &w.clone().seq(w.seq + 1)).unwrap().per_gpu_bytes;
        prop_assert!(more_batch >= base);
        prop_assert!(more_seq >= base);
    }

    #[test]
    fn sharding_never_increases_per_gpu_memory(m in any_preset(), w in workload()) {
        let w = (w).gpus(8);
        let mut last = u64::MAX;
        for zero in 0..=3 {
            let e = estimate(&m, &w.clone().zero(zero)).unwrap().per_gpu_bytes;
            prop_assert!(e <= last, "ZeRO-{} {} > {}", zero, e, last);
            last = e;
        }
        // FSDP keeps its root and one layer whole, still less than every parameter.
        let fsdp = w.clone().zero(3).fsdp(true);
        let two = estimate(&m, &w.clone().zero(2)).unwrap().per_gpu_bytes;
        let e = estimate(&m, &fsdp).unwrap().per_gpu_bytes;
        prop_assert!(e <= two, "FSDP {} > ZeRO-2 {}", e, two);
    }

    #[test]
    fn any_numbers_never_panic(
        params in any::<u64>(),
        batch in any::<u64>(),
        seq in any::<u64>(),
        gpus in any::<u32>(),
        tp in any::<u32>(),
    ) {
        let w = Workload::default().batch(batch).seq(seq).gpus(gpus).tp(tp).mode(Mode::Train);
        let _ = estimate(&ModelInput::Params(params), &w);
    }
}

#[test]
fn stored_weights_replace_the_formula_in_inference_only() {
    let w = Workload::default()
        .stored_weights(Some(4_920_000_000))
        .gpus(2)
        .tp(2);
    let e = estimate(&preset("llama-3.1-8b"), &w).unwrap();
    assert_eq!(
        e.breakdown.weights, 2_460_000_000,
        "split by tensor parallelism"
    );
    let train = (w).mode(Mode::Train).precision(Precision::Master);
    let formula = estimate(&preset("llama-3.1-8b"), &train.clone().stored_weights(None)).unwrap();
    assert_eq!(
        estimate(&preset("llama-3.1-8b"), &train).unwrap().breakdown,
        formula.breakdown
    );
}
