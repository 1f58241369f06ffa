use super::*;
use proptest::prelude::*;
use std::collections::HashMap;

fn web(pairs: &[(&str, &str)]) -> (Settings, Vec<SettingError>) {
    let map: HashMap<&str, &str> = pairs.iter().copied().collect();
    Settings::read(&Settings::web_default(), |k| {
        map.get(k).map(|v| (*v).to_owned())
    })
}

#[test]
fn web_defaults_and_task_defaults() {
    let (s, errors) = web(&[]);
    assert!(errors.is_empty());
    assert_eq!(s, Settings::web_default());
    assert_eq!(s.gpu.map(|g| g.id.as_str()), Some("rtx-4090"));

    // QLoRA: NF4 with double quantisation and checkpointing, as PEFT/TRL users get.
    let (q, _) = web(&[("modo", "qlora")]);
    assert_eq!(q.format, WeightFormat::Nf4 { double_quant: true });
    assert!(q.checkpointing);
    // Old links spelled the task in English.
    assert_eq!(web(&[("modo", "full")]).0.task, Task::Full);
    assert_eq!(web(&[("modo", "entrenamiento")]).0.task, Task::Full);
    // A value the reader set survives the task switch; defaults follow the task.
    let (q, _) = web(&[("modo", "qlora"), ("formato", "gptq-4bit-128g")]);
    assert_eq!(q.format.id(), "gptq-4bit-128g");
    let back = q.with_task(Task::Inference);
    assert_eq!(back.format.id(), "gptq-4bit-128g");
    assert!(!back.checkpointing);
    // Every other task loads the checkpoint as its runtime does, bf16 for most.
    let full = web(&[("modo", "qlora")]).0.with_task(Task::Full);
    assert_eq!(full.format.id(), "auto");
    assert_eq!(full.weights_for(None).id(), "bf16");
}

#[test]
fn n_cpu_moe_reads_a_count_or_every_layer() {
    assert_eq!(web(&[("expertos-cpu", "20")]).0.cpu_moe, 20);
    for all in ["todas", "all", "-1"] {
        let (s, errors) = web(&[("expertos-cpu", all)]);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(s.cpu_moe, CPU_MOE_ALL);
        assert_eq!(
            s.text(Field::CpuMoe, Surface::Web).as_deref(),
            Some("todas")
        );
        assert_eq!(s.text(Field::CpuMoe, Surface::Cli).as_deref(), Some("all"));
    }
    assert_eq!(Settings::web_default().cpu_moe, 0);
}

#[test]
fn token_suffixes_are_powers_of_two() {
    let (s, errors) = web(&[("contexto", "4k"), ("nuevos", "2k")]);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!((s.seq, s.new_tokens), (Some(4096), 2048));
    let mut cli = Settings::for_task(Task::Inference);
    cli.set(Field::Seq, "128k", Surface::Cli).unwrap();
    assert_eq!(cli.seq, Some(131_072));
}

#[test]
fn bad_values_name_the_setting_and_its_bounds() {
    let cases: [(&str, &str, &str); 10] = [
        (
            "lote",
            "-4",
            "El lote debe ser un entero entre 1 y 1\u{202f}048\u{202f}576; «-4» no lo es.",
        ),
        ("lote", "2.5", "El lote debe ser un entero entre 1 y"),
        ("lote", "99999999", "«99999999» no lo es"),
        (
            "contexto",
            "0",
            "El contexto debe ser auto (vLLM, llama.cpp, Ollama) o un entero entre 1 y 16\u{202f}777\u{202f}216 (también 4k = 4096",
        ),
        (
            "gpus",
            "0",
            "El número de GPU debe ser un entero entre 1 y 65\u{202f}536",
        ),
        (
            "modo",
            "jugar",
            "El modo «jugar» no existe; usa inferencia, entrenamiento, lora o qlora.",
        ),
        (
            "gpu",
            "rtx-9999",
            "No hay ninguna GPU «rtx-9999» en el catálogo.",
        ),
        (
            "formato",
            "q9",
            "Formato de los pesos: El tipo de dato «q9» no existe",
        ),
        ("checkpointing", "quizá", "usa si o no"),
        (
            "expertos-cpu",
            "-3",
            "El número de capas con expertos en la CPU debe ser todas o un entero entre 0 y 1024",
        ),
    ];
    for (key, value, want) in cases {
        let (s, errors) = web(&[(key, value)]);
        assert_eq!(errors.len(), 1, "{key}={value}");
        let text = errors[0].to_string();
        assert!(
            text.starts_with(want) || text.contains(want),
            "{key}={value}: {text}"
        );
        // The bad value leaves the default in place.
        assert_eq!(s, Settings::web_default(), "{key}={value}");
    }
    // The CLI's words list its own spellings.
    let mut s = Settings::for_task(Task::Inference);
    let e = s.set(Field::Task, "jugar", Surface::Cli).unwrap_err();
    assert!(
        e.to_string().contains("inference, full, lora o qlora"),
        "{e}"
    );
    let e = s.set(Field::Gpu, "x", Surface::Cli).unwrap_err();
    assert!(e.to_string().contains("vramlab gpus"), "{e}");
}

#[test]
fn query_strings_carry_settings_and_the_rest() {
    let mut s = Settings::web_default().with_task(Task::Qlora);
    s.seq = Some(8192);
    let q = s.to_query(
        &Settings::web_default(),
        &[("modelo", "qwen2.5-7b")],
        &[("hf", "a/b")],
    );
    assert_eq!(
        q,
        "modelo=qwen2.5-7b&gpu=rtx-4090&modo=qlora&formato=nf4-dq&lote=1&contexto=8k&hf=a%2Fb"
    );
    let (back, errors, rest) = Settings::from_query(&Settings::web_default(), &format!("?{q}"));
    assert!(errors.is_empty());
    assert_eq!(back, s);
    assert_eq!(
        rest,
        [
            ("modelo".to_owned(), "qwen2.5-7b".to_owned()),
            ("hf".to_owned(), "a/b".to_owned())
        ]
    );
}

#[test]
fn utilisation_as_a_fraction_or_a_percentage() {
    let mut s = Settings::for_task(Task::Inference);
    for (text, want, printed) in [
        ("0.9", 9000, "0.9"),
        ("0,95", 9500, "0.95"),
        ("90%", 9000, "0.9"),
        ("85", 8500, "0.85"),
        ("1", 10_000, "1"),
        ("0.05", 500, "0.05"),
        // vLLM takes any float: the finest seen in its logs has four decimals.
        ("0.905", 9050, "0.905"),
        ("0.9764", 9764, "0.9764"),
        ("92.5%", 9250, "0.925"),
    ] {
        s.set(Field::Utilization, text, Surface::Cli).unwrap();
        assert_eq!(s.utilization, want, "{text}");
        assert_eq!(
            s.text(Field::Utilization, Surface::Cli).as_deref(),
            Some(printed)
        );
    }
    assert_eq!(
        [9000, 9764, 9250, 10_000].map(percent_text),
        ["90", "97,64", "92,5", "100"]
    );
    for bad in [
        "0.97645", "92.555%", "1.5", "0.01", "101%", "-0.9", "mucho", "1e99",
    ] {
        assert!(
            s.set(Field::Utilization, bad, Surface::Cli).is_err(),
            "{bad}"
        );
    }
    let mut s = Settings::for_task(Task::Inference);
    s.set(Field::Checkpointing, "SÍ", Surface::Web).unwrap();
    assert!(s.checkpointing);
}

#[test]
fn unknown_keys_change_nothing() {
    let (s, errors) = web(&[("checkpointingx", "true"), ("zzz", "1")]);
    assert!(errors.is_empty());
    assert_eq!(s, Settings::web_default());
}

#[test]
fn table_is_consistent() {
    assert_eq!(FIELDS.len(), Field::ALL.len());
    for (spec, &f) in FIELDS.iter().zip(Field::ALL) {
        assert_eq!(spec.field, f);
        assert_eq!(Field::by_key(spec.key), Some(f));
        assert!(!f.help().is_empty() && !spec.label.is_empty());
        assert!(
            spec.key
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'-'),
            "{}",
            spec.key
        );
        assert!(!f.accepts(Surface::Web).is_empty(), "{}", f.id());
    }
    for keys in [
        FIELDS.iter().map(|s| s.key).collect::<Vec<_>>(),
        FIELDS.iter().map(|s| s.field.cli()).collect(),
        FIELDS.iter().map(|s| s.field.id()).collect(),
    ] {
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), keys.len(), "{keys:?}");
    }
    assert!(Field::by_key(MODEL_KEY).is_none());
}

#[test]
fn workload_follows_the_task() {
    let mut s = Settings::web_default();
    s.gpus = 4;
    let w = s.workload();
    assert_eq!((w.tp, w.zero), (4, 0));
    // The GPU's family gives the CUDA context.
    assert_eq!(
        w.cuda_context,
        Some(crate::context::for_family("ada").bytes)
    );
    let mut t = s.with_task(Task::Full);
    t.zero = 3;
    let w = t.workload();
    assert_eq!(
        (w.tp, w.zero, w.precision, w.grad_checkpointing),
        (1, 3, Precision::Pure, true)
    );
    // LoRA keeps PEFT's fp32 adapters under autocast.
    assert_eq!(s.with_task(Task::Lora).workload().precision, Precision::Amp);
}

const FORMATS: &[&str] = &[
    "bf16",
    "fp16",
    "fp32",
    "fp8",
    "int8",
    "nf4",
    "nf4-dq",
    "gptq-4bit-128g",
    "gptq-3bit-64g",
    "Q4_K_M",
    "Q8_0",
    "4.65bpw",
    "auto",
    "mxfp4",
    "MXFP4_MOE",
    "nvfp4",
    "fp8-block",
];

fn any_settings() -> impl Strategy<Value = Settings> {
    let gpus = crate::catalog::gpus();
    (
        (
            proptest::option::of(0..gpus.len()),
            proptest::option::of(1u64..(1 << 40)),
            (0..TASKS.len(), 0u64..(1 << 36)),
            0..FORMATS.len(),
            1..=MAX_BATCH,
            proptest::option::of(1..=MAX_SEQ),
            0..=MAX_SEQ,
            0..ATTENTIONS.len(),
        ),
        (
            any::<bool>(),
            0..OPTIMIZERS.len(),
            (
                0..PRECISIONS.len(),
                0..RUNTIMES.len(),
                0..LOSSES.len(),
                prop_oneof![
                    (0..LORA_TARGETS.len()).prop_map(|i| LORA_TARGETS[i].value),
                    // Any non-empty set of a block's linears.
                    (1u8..128).prop_map(|bits| {
                        let list: Vec<_> = crate::workload::Linear::ALL
                            .into_iter()
                            .enumerate()
                            .filter(|(i, _)| bits & (1 << i) != 0)
                            .map(|(_, l)| l)
                            .collect();
                        crate::workload::LoraTargets::Modules(crate::workload::Linears::of(&list))
                    }),
                ],
            ),
            1u32..=16_384,
            0..KV_DTYPES.len(),
            1u32..=MAX_GPUS,
            0..ZERO_STAGES.len(),
            proptest::option::of(1u32..=MAX_GPUS),
            0..CUDA_GRAPHS.len(),
            any::<bool>(),
        ),
        (
            1u32..=MAX_GPUS,
            any::<bool>(),
            any::<bool>(),
            500u16..=10_000,
            1u32..=1024,
            proptest::option::of(0u64..(1 << 36)),
            prop_oneof![
                Just(None),
                (0u32..=1024).prop_map(Some),
                Just(Some(GPU_LAYERS_ALL))
            ],
            1u32..=65_536,
            proptest::option::of(1u64..=(1 << 24)),
            proptest::option::of(1u64..=(1 << 20)),
            prop_oneof![0u32..=1024, Just(CPU_MOE_ALL)],
            1u32..=10_000,
        ),
    )
        .prop_map(move |(a, b, c)| Settings {
            gpu: a.0.map(|i| &gpus[i]),
            gpu_memory: a.1,
            reserve: a.2.1,
            task: TASKS[a.2.0].value,
            runtime: {
                let (task, r) = (TASKS[a.2.0].value, RUNTIMES[b.2.1].value);
                if r.runs(task) {
                    r
                } else {
                    Runtime::default_for(task)
                }
            },
            format: WeightFormat::parse(FORMATS[a.3]).unwrap_or(WeightFormat::Plain {
                dtype: crate::Dtype::Bf16,
            }),
            batch: a.4,
            // `auto` only where the runtime chooses a context.
            seq: {
                let (task, r) = (TASKS[a.2.0].value, RUNTIMES[b.2.1].value);
                let opens =
                    r.runs(task) && !task.is_training() && crate::default_context::opens_context(r);
                match a.5 {
                    None if opens => None,
                    given => Some(given.unwrap_or(4096)),
                }
            },
            new_tokens: a.6,
            attention: ATTENTIONS[a.7].value,
            checkpointing: b.0,
            optimizer: OPTIMIZERS[b.1].value,
            precision: PRECISIONS[b.2.0].value,
            loss: LOSSES[b.2.2].value,
            lora_targets: b.2.3,
            lora_rank: b.3,
            kv_dtype: KV_DTYPES[b.4].value,
            gpus: b.5,
            zero: ZERO_STAGES[b.6].value,
            tp: b.7,
            pp: c.0,
            cpu_offload: c.1,
            // No strategy slot left in the tuples: both values from two switches.
            offload_params: c.1 != c.2,
            serve: c.2,
            utilization: c.3,
            block_size: c.4,
            cuda_context: c.5,
            gpu_layers: c.6,
            ubatch: c.7,
            batched_tokens: c.8,
            max_seqs: c.9,
            cuda_graphs: CUDA_GRAPHS[b.8].value,
            mmproj: b.9,
            slots: None,
            ngl_output_first: true,
            cpu_moe: c.10,
            ram_gbs: c.11,
        })
}

/// Settings in the ranges people use (for the corpus recorder): a handful of GPUs,
/// small batches, real contexts.
fn realistic_settings() -> impl Strategy<Value = Settings> {
    let gpus = crate::catalog::gpus();
    (
        (
            proptest::option::of(0..gpus.len()),
            prop_oneof![4 => Just(None), 1 => (8u64..=192).prop_map(|g| Some(g << 30))],
            (0..TASKS.len(), prop_oneof![Just(0u64), Just(1u64 << 30)]),
            0..FORMATS.len(),
            1u64..=16,
            proptest::option::of(prop_oneof![
                Just(512u64),
                Just(2048),
                Just(4096),
                Just(8192),
                Just(32_768),
                Just(131_072),
                1u64..=200_000
            ]),
            prop_oneof![Just(0u64), Just(256), Just(1024), 1u64..=4096],
            0..ATTENTIONS.len(),
        ),
        (
            any::<bool>(),
            0..OPTIMIZERS.len(),
            (
                0..PRECISIONS.len(),
                0..RUNTIMES.len(),
                0..LOSSES.len(),
                prop_oneof![
                    (0..LORA_TARGETS.len()).prop_map(|i| LORA_TARGETS[i].value),
                    // Any non-empty set of a block's linears.
                    (1u8..128).prop_map(|bits| {
                        let list: Vec<_> = crate::workload::Linear::ALL
                            .into_iter()
                            .enumerate()
                            .filter(|(i, _)| bits & (1 << i) != 0)
                            .map(|(_, l)| l)
                            .collect();
                        crate::workload::LoraTargets::Modules(crate::workload::Linears::of(&list))
                    }),
                ],
            ),
            prop_oneof![Just(8u32), Just(16), Just(64)],
            0..KV_DTYPES.len(),
            prop_oneof![4 => Just(1u32), 1 => Just(2), 1 => Just(4), 1 => Just(8)],
            0..ZERO_STAGES.len(),
            proptest::option::of(prop_oneof![Just(1u32), Just(2)]),
            0..CUDA_GRAPHS.len(),
            any::<bool>(),
        ),
        (
            Just(1u32),
            any::<bool>(),
            any::<bool>(),
            prop_oneof![Just(9000u16), 7000u16..=9800],
            prop_oneof![Just(16u32), Just(32)],
            prop_oneof![4 => Just(None), 1 => (300u64..=600).prop_map(|m| Some(m << 20))],
            prop_oneof![
                Just(None),
                (0u32..=100).prop_map(Some),
                Just(Some(GPU_LAYERS_ALL))
            ],
            prop_oneof![Just(512u32), Just(256), Just(2048)],
            proptest::option::of(prop_oneof![Just(2048u64), Just(8192), Just(16_384)]),
            proptest::option::of(prop_oneof![Just(16u64), Just(64), Just(256)]),
            prop_oneof![4 => Just(0u32), 1 => 1u32..=40, 1 => Just(CPU_MOE_ALL)],
            prop_oneof![Just(60u32), Just(100)],
        ),
    )
        .prop_map(move |(a, b, c)| Settings {
            gpu: a.0.map(|i| &gpus[i]),
            gpu_memory: a.1,
            reserve: a.2.1,
            task: TASKS[a.2.0].value,
            runtime: {
                let (task, r) = (TASKS[a.2.0].value, RUNTIMES[b.2.1].value);
                if r.runs(task) {
                    r
                } else {
                    Runtime::default_for(task)
                }
            },
            format: WeightFormat::parse(FORMATS[a.3]).unwrap_or(WeightFormat::Plain {
                dtype: crate::Dtype::Bf16,
            }),
            batch: a.4,
            // `auto` only where the runtime chooses a context.
            seq: {
                let (task, r) = (TASKS[a.2.0].value, RUNTIMES[b.2.1].value);
                let opens =
                    r.runs(task) && !task.is_training() && crate::default_context::opens_context(r);
                match a.5 {
                    None if opens => None,
                    given => Some(given.unwrap_or(4096)),
                }
            },
            new_tokens: a.6,
            attention: ATTENTIONS[a.7].value,
            checkpointing: b.0,
            optimizer: OPTIMIZERS[b.1].value,
            precision: PRECISIONS[b.2.0].value,
            loss: LOSSES[b.2.2].value,
            lora_targets: b.2.3,
            lora_rank: b.3,
            kv_dtype: KV_DTYPES[b.4].value,
            gpus: b.5,
            zero: ZERO_STAGES[b.6].value,
            tp: b.7,
            pp: c.0,
            cpu_offload: c.1,
            // No strategy slot left in the tuples: both values from two switches.
            offload_params: c.1 != c.2,
            serve: c.2,
            utilization: c.3,
            block_size: c.4,
            cuda_context: c.5,
            gpu_layers: c.6,
            ubatch: c.7,
            batched_tokens: c.8,
            max_seqs: c.9,
            cuda_graphs: CUDA_GRAPHS[b.8].value,
            mmproj: b.9,
            slots: None,
            ngl_output_first: true,
            cpu_moe: c.10,
            ram_gbs: c.11,
        })
}

proptest! {
    /// Settings → link query / widget attributes → settings, on either web base.
    #[test]
    fn web_pairs_round_trip(s in any_settings(), cli_base in any::<bool>()) {
        // Web pages always show a GPU; a link cannot say "none" on top of one.
        let base = if cli_base || s.gpu.is_none() {
            Settings::for_task(Task::Inference)
        } else {
            Settings::web_default()
        };
        let pairs: HashMap<&str, String> = s.pairs(&base).into_iter().collect();
        let (back, errors) = Settings::read(&base, |k| pairs.get(k).cloned());
        prop_assert!(errors.is_empty(), "{:?}", errors);
        prop_assert_eq!(back, s);
    }

    /// Settings → CLI flags → settings.
    #[test]
    fn cli_args_round_trip(s in any_settings()) {
        let args = s.cli_args();
        let flags: HashMap<String, String> = args
            .chunks(2)
            .map(|p| (p[0].trim_start_matches('-').to_owned(), p[1].clone()))
            .collect();
        let (back, errors) = Settings::read_with(
            &Settings::for_task(Task::Inference),
            Surface::Cli,
            |spec| flags.get(spec.field.cli()).cloned(),
        );
        prop_assert!(errors.is_empty(), "{:?}", errors);
        prop_assert_eq!(back, s);
    }

    /// Any text in any field is a value or a Spanish sentence, never a panic.
    #[test]
    fn any_text_is_read_or_refused(i in 0..FIELDS.len(), text in "\\PC{0,30}") {
        let mut s = Settings::web_default();
        if let Err(e) = s.set(FIELDS[i].field, &text, Surface::Web) {
            prop_assert!(!e.to_string().is_empty());
        }
    }
}

/// PyTorch keeps a cuBLAS workspace per handle and stream, and handles are per thread:
/// inference multiplies on one thread, training's backward on the autograd engine's
/// own, so it holds two. ggml has none, and a vLLM server's profile counts its own.
#[test]
fn cublas_workspaces_follow_the_threads_that_multiply() {
    let ws = |task, runtime: &str, serve: bool, gpu: &str| {
        let mut s = Settings::for_task(task);
        s.set(Field::Gpu, gpu, Surface::Cli).unwrap();
        s.set(Field::Runtime, runtime, Surface::Cli).unwrap();
        s.serve = serve;
        s.workload().blas_workspace
    };
    let hopper = 32 << 20;
    let other = 4096 * 1024 * 2 + 16 * 1024 * 8;
    assert_eq!(
        ws(Task::Inference, "transformers", false, "h100-sxm"),
        hopper
    );
    assert_eq!(
        ws(Task::Lora, "transformers", false, "h100-sxm"),
        2 * hopper
    );
    assert_eq!(ws(Task::Full, "torchtune", false, "rtx-4090"), 2 * other);
    assert_eq!(ws(Task::Inference, "llama.cpp", false, "rtx-4090"), 0);
    assert_eq!(ws(Task::Inference, "vllm", true, "h100-sxm"), 0);
    assert_eq!(ws(Task::Inference, "vllm", false, "h100-sxm"), hopper);
}

#[test]
fn torchtune_shards_with_fsdp_on_several_gpus() {
    let stage = |runtime: &str, gpus: u32, zero: u8| {
        let mut s = Settings::for_task(Task::Full);
        s.set(Field::Runtime, runtime, Surface::Cli).unwrap();
        s.gpus = gpus;
        s.zero = zero;
        let w = s.workload();
        (w.zero, w.fsdp)
    };
    // torchtune has no DDP: stages 0 and 1 run as FSDP's full sharding.
    assert_eq!(stage("torchtune", 2, 0), (3, true));
    assert_eq!(stage("torchtune", 2, 1), (3, true));
    // fsdp_reshard_after_forward: False keeps the gathered weights (ZeRO-2).
    assert_eq!(stage("torchtune", 2, 2), (2, false));
    assert_eq!(stage("torchtune", 1, 0), (0, false));
    // The others run DDP at stage 0.
    assert_eq!(stage("transformers", 2, 0), (0, false));
    assert_eq!(stage("deepspeed", 2, 3), (3, false));
}

#[test]
fn lora_targets_take_a_preset_or_a_module_list() {
    let mut s = Settings::for_task(Task::Lora);
    for (input, cli, web) in [
        ("qv", "qv", "qv"),
        ("v_proj,q_proj", "qv", "qv"),
        ("torchtune", "qvo-mlp", "qvo-mlp"),
        ("q_proj,v_proj,output_proj,mlp", "qvo-mlp", "qvo-mlp"),
        (
            "q_proj,k_proj,v_proj",
            "q_proj,k_proj,v_proj",
            "q_proj,k_proj,v_proj",
        ),
        ("todas", "all-linear", "todas"),
    ] {
        s.set(Field::LoraTargets, input, Surface::Cli).unwrap();
        assert_eq!(s.text(Field::LoraTargets, Surface::Cli).unwrap(), cli);
        assert_eq!(s.text(Field::LoraTargets, Surface::Web).unwrap(), web);
    }
    let e = s
        .set(Field::LoraTargets, "q_proj,lm_head", Surface::Cli)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "El conjunto de capas con LoRA «q_proj,lm_head» no existe; usa qv, attention, qvo-mlp o all-linear, o módulos separados por comas (q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj)."
    );
    // torchtune's own default.
    let t = Settings::for_task(Task::Lora).with_runtime(Runtime::Torchtune);
    assert_eq!(t.lora_targets, crate::workload::LoraTargets::TORCHTUNE);
}

/// Not a check but a recorder for refactors that must change no number: writes, for a
/// fixed seed, 1 200 (model, settings) pairs with everything `evaluate` returns, its
/// worded verdicts and notes on both surfaces, the context chart and the CLI flags that
/// give the settings (for a CLI replay). Compare two runs' files with `cmp`.
/// `VRAMLAB_CORPUS=/tmp/a.txt cargo test -p vram --lib dump_corpus -- --ignored`
#[test]
#[ignore = "writes a corpus file for before/after comparisons"]
fn dump_corpus() {
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    use std::fmt::Write as _;
    let Ok(path) = std::env::var("VRAMLAB_CORPUS") else {
        return;
    };
    let models = crate::catalog::models();
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let strategy = (
        0..models.len() + 1,
        prop_oneof![5 => realistic_settings(), 1 => any_settings()],
    );
    let mut out = String::new();
    let mut flags = String::new();
    for i in 0..1200 {
        let (m, s) = strategy
            .new_tree(&mut runner)
            .map(|t| proptest::strategy::ValueTree::current(&t))
            .unwrap_or_else(|e| panic!("{e}"));
        let (model, id) = match models.get(m) {
            Some(p) => (
                crate::Model::new(crate::ModelInput::Arch {
                    arch: Box::new(p.arch.clone()),
                    total_params: None,
                }),
                p.id.as_str(),
            ),
            None => (
                crate::Model::new(crate::ModelInput::Params(7_000_000_000)),
                "params:7e9",
            ),
        };
        let _ = writeln!(out, "## case {i} {id} {s:?}");
        match crate::evaluate(&model, &s) {
            Ok(e) => {
                let _ = writeln!(out, "{e:?}");
                for surface in [Surface::Cli, Surface::Web] {
                    let _ = writeln!(out, "{:?}", e.verdict_text(Some("GPU"), surface));
                    let _ = writeln!(out, "{:?}", e.verdict_text(None, surface));
                    for n in &e.notes {
                        let _ = writeln!(out, "{}", n.text(surface));
                    }
                }
                let _ = writeln!(
                    out,
                    "{:?}",
                    crate::evaluate::context_curve(&model, &e.workload)
                );
            }
            Err(err) => {
                let _ = writeln!(out, "error: {err}");
            }
        }
        let model_flag = match models.get(m) {
            Some(p) => format!("--model\t{}", p.id),
            None => "--params\t7e9".to_owned(),
        };
        let _ = writeln!(flags, "{model_flag}\t{}", s.cli_args().join("\t"));
    }
    std::fs::write(&path, out).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(format!("{path}.flags"), flags).unwrap_or_else(|e| panic!("{e}"));
}

/// What `auto` and an explicit format become for each runtime, task, GPU and
/// checkpoint ([`Settings::weights_for`]).
#[test]
fn auto_loads_the_checkpoint_as_each_runtime_does() {
    let mxfp4 = Some(WeightFormat::Mxfp4);
    let fp8 = Some(WeightFormat::Fp8Block);
    // (settings, checkpoint, format held)
    type Case<'a> = (&'a [(&'a str, &'a str)], Option<WeightFormat>, &'a str);
    let cases: [Case; 12] = [
        (&[("motor", "vllm")], mxfp4, "mxfp4"),
        (&[("motor", "vllm")], None, "bf16"),
        (&[("motor", "vllm")], fp8, "fp8-block"),
        (&[("motor", "transformers")], mxfp4, "mxfp4"),
        // transformers dequantises MXFP4 below compute capability 7.5; vLLM does not.
        (
            &[("motor", "transformers"), ("gpu", "v100-32gb")],
            mxfp4,
            "bf16",
        ),
        (&[("motor", "vllm"), ("gpu", "v100-32gb")], mxfp4, "mxfp4"),
        (&[("modo", "lora")], mxfp4, "bf16"),
        (&[("modo", "full")], fp8, "bf16"),
        (&[("motor", "llamacpp")], mxfp4, "MXFP4_MOE"),
        (&[("motor", "ollama")], None, "Q4_K_M"),
        (
            &[("motor", "llamacpp"), ("formato", "mxfp4")],
            None,
            "MXFP4_MOE",
        ),
        (&[("motor", "vllm"), ("formato", "bf16")], mxfp4, "bf16"),
    ];
    for (pairs, stored, held) in cases {
        let (s, errors) = web(pairs);
        assert!(errors.is_empty(), "{pairs:?}: {errors:?}");
        assert_eq!(s.weights_for(stored).id(), held, "{pairs:?} {stored:?}");
    }
}
