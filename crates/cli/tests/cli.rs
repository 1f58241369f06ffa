//! The `vramlab` binary as users run it: JSON contract, exit codes, Spanish errors.
#![allow(clippy::unwrap_used)] // A panic here is a failed test.

mod common;
use common::{json, vramlab};

#[test]
fn estimate_json_contract() {
    let v = json(&[
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "rtx-4090",
        "--json",
    ]);
    // Every key of the documented example is there.
    for key in documented_example_keys() {
        assert!(v.get(&key).is_some(), "falta {key}: {v}");
    }
    let b = &v["breakdown"];
    let sum: u64 = [
        "weights",
        "gradients",
        "optimizer",
        "activations",
        "kv_cache",
        "overhead",
    ]
    .iter()
    .map(|k| b[k].as_u64().unwrap())
    .sum();
    assert_eq!(sum, v["per_gpu_bytes"].as_u64().unwrap());
    assert_eq!(b["weights"].as_u64(), Some(16_060_522_496));
    // The weights are most of it: even the band's high end fits.
    assert_eq!(v["verdict"], serde_json::json!("fits"));
    assert_eq!(v["fits"], serde_json::json!(true));
    assert!(v["band"]["p10"].as_f64().unwrap() < 0.0, "{v}");
    assert!(v["band"]["cases"].as_u64().unwrap() >= 3, "{v}");
    // A 20k context fits by the estimate, not at the band's high end.
    let long = json(&[
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "rtx-4090",
        "--seq",
        "20k",
        "--json",
    ]);
    assert_eq!(long["verdict"], serde_json::json!("tight"));
    assert_eq!(long["fits"], serde_json::json!(false));

    // Without a GPU the solvers do not answer.
    let v = json(&["estimate", "--params", "7B", "--json"]);
    assert!(v["fits"].is_null() && v["max_batch_fit"].is_null());
    assert_eq!(v["breakdown"]["weights"].as_u64(), Some(14_000_000_000));
}

#[test]
fn zero_paper_figure_one() {
    let base = [
        "estimate",
        "--params",
        "7.5e9",
        "--mode",
        "train",
        "--dtype",
        "fp16",
        "--mixed-precision",
        "--gpus",
        "64",
        "--json",
    ];
    let states = |runtime: &str, zero: &str| {
        let mut args = base.to_vec();
        args.extend(["--runtime", runtime, "--zero", zero]);
        let v = json(&args);
        let b = &v["breakdown"];
        b["weights"].as_u64().unwrap()
            + b["gradients"].as_u64().unwrap()
            + b["optimizer"].as_u64().unwrap()
    };
    // The paper counts model states alone: DeepSpeed's engine adds no DDP buckets
    // (and, given only a parameter count, no reduce bucket either).
    assert_eq!(states("deepspeed", "0"), 120_000_000_000);
    assert_eq!(states("deepspeed", "1"), 31_406_250_000);
    assert_eq!(states("deepspeed", "3"), 1_875_000_000);
    // PyTorch DDP (accelerate, Trainer) adds its bucket copy of the 16-bit gradients.
    assert_eq!(states("transformers", "0"), 135_000_000_000);
}

#[test]
fn config_json_files() {
    let dir = std::env::temp_dir().join(format!("vramlab-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("config.json");
    std::fs::write(
        &good,
        r#"{"model_type": "gpt2", "n_embd": 768, "n_head": 12, "n_layer": 12, "n_positions": 1024, "vocab_size": 50257}"#,
    )
    .unwrap();
    let v = json(&["estimate", "--model", good.to_str().unwrap(), "--json"]);
    assert_eq!(v["params"].as_u64(), Some(124_439_808));

    let bad = dir.join("roto.json");
    std::fs::write(&bad, "{ esto no es json").unwrap();
    let out = vramlab(&["estimate", "--model", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("no es JSON válido"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn bad_input_is_one_spanish_line_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["estimate", "--model", "llama-9"], "no hay ningún modelo"),
        (&["estimate", "--params", "siete"], "no es un número válido"),
        (&["estimate", "--params", "-7B"], "no es un número válido"),
        (&["estimate", "--params", "1e30"], "demasiado grande"),
        (
            &["estimate", "--params", "7B", "--batch", "0"],
            "--batch: El lote debe ser un entero entre 1 y 1\u{202f}048\u{202f}576; «0» no lo es.",
        ),
        (
            &["estimate", "--params", "7B", "--batch", "-4"],
            "El lote debe ser un entero entre 1 y",
        ),
        (
            &["estimate", "--params", "7B", "--batch", "2.5"],
            "«2.5» no lo es",
        ),
        (
            &["estimate", "--params", "7B", "--seq", "99999999"],
            "El contexto debe ser auto (vLLM, llama.cpp, Ollama) o un entero entre 1 y 16\u{202f}777\u{202f}216 (también 4k = 4096",
        ),
        (
            &["estimate", "--model", "qwen3-30b-a3b", "--n-cpu-moe", "8"],
            "--n-cpu-moe solo tiene sentido con --runtime llama.cpp",
        ),
        (
            &[
                "estimate",
                "--model",
                "llama-3.1-8b",
                "--ram-bandwidth",
                "300",
            ],
            "--ram-bandwidth solo tiene sentido con --runtime llama.cpp u ollama",
        ),
        (
            &[
                "estimate",
                "--model",
                "qwen3-30b-a3b",
                "--runtime",
                "llama.cpp",
                "--ram-bandwidth",
                "0",
            ],
            "El ancho de banda de la RAM debe ser un entero entre 1 y 10",
        ),
        (
            &["estimate", "--params", "7B", "--mode", "vuela"],
            "El modo «vuela» no existe; usa inference, full, lora o qlora.",
        ),
        (
            &[
                "estimate",
                "--params",
                "7B",
                "--mode",
                "inference",
                "--finetune",
                "lora",
            ],
            "--finetune solo tiene sentido al entrenar",
        ),
        (
            &["estimate", "--params", "7B", "--gpu", "rtx-9999"],
            "no hay ninguna GPU",
        ),
        (
            &["estimate", "--params", "7B", "--gpu-memory", "24 GiBs"],
            "unidad",
        ),
        (
            &["estimate", "--params", "7B", "--gpus", "3", "--tp", "2"],
            "múltiplo",
        ),
        (
            &["estimate", "--params", "7B", "--dtype", "q9"],
            "El tipo de dato «q9» no existe",
        ),
        (
            &["estimate", "--params", "7B", "--zero", "5"],
            "La etapa de ZeRO «5» no existe; usa 0, 1, 2 o 3.",
        ),
        (
            &[
                "estimate",
                "--params",
                "7B",
                "--runtime",
                "llama.cpp",
                "--gpu-layers",
                "treinta",
            ],
            "El número de capas en la GPU debe ser auto, todas o un entero entre 0 y 1024; «treinta» no lo es.",
        ),
        (
            &["estimate", "--params", "7B", "--gpu-layers", "20"],
            "--gpu-layers solo tiene sentido con --runtime llama.cpp u ollama",
        ),
        (
            &[
                "estimate",
                "--model",
                "gemma-3-27b",
                "--runtime",
                "llama.cpp",
                "--gpu",
                "rtx-4090",
                "--serve",
            ],
            "--serve planifica una caché KV paginada como la de vLLM",
        ),
        (
            &[
                "estimate",
                "--model",
                "llama-3.1-70b",
                "--runtime",
                "ollama",
                "--gpus",
                "2",
                "--tp",
                "2",
            ],
            "llama.cpp y Ollama reparten capas enteras entre las GPU",
        ),
        (&["estimate"], "--model"),
        (&["estimate", "--bogus"], "argumento desconocido"),
        (&["vuela"], "orden desconocida «vuela»"),
        (&["estimat"], "¿querías decir «"),
        (&["estimate", "--model"], "falta el valor de --model"),
        (&["estimate", "--params", "0"], "al menos un parámetro"),
        (
            &["estimate", "--model", "llama-3.1-8b", "--runtime", "vllm"],
            "vLLM como servidor",
        ),
        (
            &[
                "estimate",
                "--model",
                "llama-3.1-8b",
                "--mode",
                "lora",
                "--lora-targets",
                "q_proj,lm_head",
            ],
            "módulos separados por comas",
        ),
    ];
    for (args, want) in cases {
        let out = vramlab(args);
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn catalogs_and_help() {
    let models = json(&["models", "--json"]);
    assert!(models.as_array().unwrap().len() >= 30);
    let gpus = json(&["gpus", "--json"]);
    assert!(gpus.as_array().unwrap().len() >= 30);
    let help = vramlab(&["estimate", "--help"]);
    assert!(help.status.success());
    let text = String::from_utf8(help.stdout).unwrap();
    assert!(
        text.contains("Uso:") && text.contains("Opciones:"),
        "{text}"
    );
    assert!(!text.contains("Usage:"), "{text}");
}

#[test]
fn gpu_family_sets_the_cuda_context_and_paged_optimizers_are_accepted() {
    let base = [
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--seq",
        "1024",
        "--json",
        "--gpu",
    ];
    let on = |gpu: &str| {
        let mut args = base.to_vec();
        args.push(gpu);
        json(&args)
    };
    // Same workload; only the CUDA context differs: V100 (measured 1343 MiB) vs A100.
    let volta = on("v100-32gb");
    let ampere = on("a100-80gb");
    let overhead = |v: &serde_json::Value| v["breakdown"]["overhead"].as_u64().unwrap();
    assert_eq!(overhead(&volta) - overhead(&ampere), (1343 - 500) << 20);
    assert!(
        volta["notes"].to_string().contains("V100"),
        "{}",
        volta["notes"]
    );
    // An explicit --cuda-context wins.
    let mut args = base.to_vec();
    args.extend(["v100-32gb", "--cuda-context", "500MiB"]);
    assert_eq!(overhead(&json(&args)), overhead(&ampere));

    let paged = json(&[
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--mode",
        "train",
        "--finetune",
        "qlora",
        "--optimizer",
        "paged-adamw8bit",
        "--json",
    ]);
    assert!(
        paged["notes"].to_string().contains("paginado"),
        "{}",
        paged["notes"]
    );
}

#[test]
fn deepseek_mla_caches_the_compressed_latent() {
    let v = json(&[
        "estimate",
        "--model",
        "deepseek-v3",
        "--dtype",
        "fp8",
        "--seq",
        "32768",
        "--json",
    ]);
    // 61 layers × (512 + 64) elements × 2 bytes × 32768 tokens.
    assert_eq!(
        v["breakdown"]["kv_cache"].as_u64(),
        Some(61 * 576 * 2 * 32_768)
    );
    assert_eq!(v["params"].as_u64(), Some(671_026_404_352));
}

/// `--seq auto`, the servers' default: the context the runtime opens by itself; given
/// to a runtime that has none, one Spanish line and exit 2.
#[test]
fn auto_context_is_the_runtimes_own() {
    let v = json(&[
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "rtx-4090",
        "--seq",
        "auto",
        "--runtime",
        "vllm",
        "--json",
    ]);
    assert_eq!(v["settings"]["seq"], serde_json::json!("auto"));
    assert_eq!(v["seq_tokens"], serde_json::json!(131_072));
    assert_eq!(v["verdict"], serde_json::json!("cannot-serve"));
    let ollama = json(&[
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "rtx-3060",
        "--runtime",
        "ollama",
        "--json",
    ]);
    assert_eq!(ollama["settings"]["seq"], serde_json::json!("auto"));
    assert_eq!(ollama["seq_tokens"], serde_json::json!(4096));
    let out = vramlab(&["estimate", "--params", "7B", "--seq", "auto"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("«auto» solo vale para inferencia con vLLM"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// The settings flags come from the shared table: token suffixes, switches with an
/// optional value, task defaults, and the settings echoed in the JSON.
#[test]
fn settings_flags_follow_the_shared_vocabulary() {
    let v = json(&[
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "l4",
        "--seq",
        "32k",
        "--serve",
        "--json",
    ]);
    assert_eq!(v["settings"]["seq"], serde_json::json!(32_768));
    assert_eq!(v["settings"]["serve"], serde_json::json!(true));
    // vLLM would refuse to start: the KV cache left cannot hold one 32k sequence.
    assert_eq!(v["verdict"], serde_json::json!("cannot-serve"));
    assert_eq!(v["fits"], serde_json::json!(false));
    assert_eq!(v["serving"]["max_sequences"], serde_json::json!(0));
    // With 2 GiB held by other processes, 90 % of an RTX 4090 is more than is free
    // when vLLM starts: it refuses before loading anything.
    let busy = json(&[
        "estimate",
        "--model",
        "qwen2.5-7b",
        "--gpu",
        "rtx-4090",
        "--reserve",
        "2GiB",
        "--serve",
        "--json",
    ]);
    assert_eq!(busy["verdict"], serde_json::json!("wont-start"));
    assert_eq!(busy["fits"], serde_json::json!(false));
    assert_eq!(busy["max_batch_fit"], serde_json::Value::Null);
    // vLLM 0.20 and earlier captured CUDA graphs after filling 95 % with the KV cache:
    // no room left for them on an RTX 4090.
    let graphs = json(&[
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "rtx-4090",
        "--serve",
        "--gpu-memory-utilization",
        "0.95",
        "--cuda-graphs",
        "after-kv",
        "--json",
    ]);
    assert_eq!(graphs["verdict"], serde_json::json!("graphs-do-not-fit"));
    assert_eq!(
        graphs["settings"]["cuda_graphs"],
        serde_json::json!("after-kv")
    );
    assert_eq!(
        graphs["serving"]["cuda_graphs"],
        serde_json::json!("after-kv")
    );
    assert!(graphs["serving"]["cuda_graph_bytes"].as_u64().unwrap() > 500 << 20);
    // Ollama loads gemma3's vision projector from the model's blob; llama.cpp only
    // with --mmproj.
    let ollama = json(&[
        "estimate",
        "--model",
        "gemma-3-4b",
        "--runtime",
        "ollama",
        "--json",
    ]);
    assert_eq!(
        ollama["projector"]["weights"],
        serde_json::json!(851_226_048u64)
    );
    assert_eq!(ollama["settings"]["mmproj"], serde_json::json!(true));
    let plain = json(&[
        "estimate",
        "--model",
        "gemma-3-4b",
        "--runtime",
        "llama.cpp",
        "--json",
    ]);
    assert_eq!(plain["projector"], serde_json::Value::Null);
    let with = json(&[
        "estimate",
        "--model",
        "gemma-3-4b",
        "--runtime",
        "llama.cpp",
        "--mmproj",
        "--json",
    ]);
    assert_eq!(
        with["projector"]["compute"],
        serde_json::json!(127_139_840u64)
    );

    // QLoRA gets its users' defaults, and each can be turned off.
    let q = json(&[
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--mode",
        "qlora",
        "--json",
    ]);
    assert_eq!(q["settings"]["format"], serde_json::json!("nf4-dq"));
    assert_eq!(q["settings"]["checkpointing"], serde_json::json!(true));
    let legacy = json(&[
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--mode",
        "train",
        "--finetune",
        "qlora",
        "--json",
    ]);
    assert_eq!(legacy["breakdown"], q["breakdown"]);
    let off = json(&[
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--mode",
        "qlora",
        "--grad-checkpointing=false",
        "--json",
    ]);
    assert_eq!(off["settings"]["checkpointing"], serde_json::json!(false));
    assert!(
        off["breakdown"]["activations"].as_u64() > q["breakdown"]["activations"].as_u64(),
        "{off} vs {q}"
    );
    let on = json(&[
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--mode",
        "qlora",
        "--grad-checkpointing",
        "--json",
    ]);
    assert_eq!(on["breakdown"], q["breakdown"]);
}

#[test]
fn llama_cpp_partial_offload_reports_the_layers_that_fit() {
    // Llama 3.1 8B in Q4_K_M with 32k of context does not fit 8 GiB whole; the
    // JSON says how many of its 32 blocks do, and `-ngl` with fewer moves the rest (and
    // their KV cells) to host RAM.
    let base = [
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--runtime",
        "llama.cpp",
        "--dtype",
        "q4_k_m",
        "--gpu-memory",
        "8GiB",
        "--seq",
        "32k",
        "--json",
    ];
    let all = json(&base);
    assert_eq!(all["layers"].as_u64(), Some(32));
    let fit = all["max_gpu_layers_fit"]
        .as_u64()
        .expect("max_gpu_layers_fit");
    assert!(fit > 0 && fit < 32, "{fit}");

    let mut args = base.to_vec();
    args.extend(["--gpu-layers", "10"]);
    let part = json(&args);
    let total = |v: &serde_json::Value| v["total_bytes"].as_u64().unwrap();
    let host = |v: &serde_json::Value| v["host_bytes"].as_u64().unwrap();
    assert!(
        total(&part) < total(&all),
        "{} vs {}",
        total(&part),
        total(&all)
    );
    assert!(
        host(&part) > host(&all),
        "{} vs {}",
        host(&part),
        host(&all)
    );
    // Whatever leaves the GPU lands in host RAM: the two add up to at least the
    // weights both ways.
    let gpu_drop = total(&all) - total(&part);
    let host_gain = host(&part) - host(&all);
    assert!(
        host_gain + (1 << 30) >= gpu_drop,
        "{host_gain} vs {gpu_drop}"
    );
}

#[test]
fn llama_cpp_moe_experts_in_ram_fit_a_small_card() {
    // Qwen3-30B-A3B in Q4_K_M with 32k of context does not fit a 12 GB RTX 3060; the
    // JSON says how many first layers must keep their experts in RAM, and with that
    // `--n-cpu-moe` it fits, the experts counted in host RAM.
    let base = [
        "estimate",
        "--model",
        "qwen3-30b-a3b",
        "--runtime",
        "llama.cpp",
        "--dtype",
        "Q4_K_M",
        "--gpu",
        "rtx-3060",
        "--seq",
        "32k",
        "--gpu-layers",
        "all",
        "--json",
    ];
    let all = json(&base);
    assert_eq!(all["fits"].as_bool(), Some(false));
    // Left to llama.cpp (`-ngl auto`, the default), its `--fit` moves experts itself.
    let auto: Vec<&str> = base
        .iter()
        .copied()
        .filter(|a| !matches!(*a, "--gpu-layers" | "all"))
        .collect();
    let fitted = json(&auto);
    assert_eq!(fitted["fits"].as_bool(), Some(true));
    assert_eq!(fitted["settings"]["gpu_layers"].as_str(), Some("auto"));
    assert!(fitted["host_bytes"].as_u64() > all["host_bytes"].as_u64());
    let n = all["min_cpu_moe_fit"].as_u64().expect("min_cpu_moe_fit");
    assert!(n > 0 && n < 48, "{n}");
    let n = n.to_string();
    let mut args = base.to_vec();
    args.extend(["--n-cpu-moe", &n]);
    let part = json(&args);
    assert_eq!(part["fits"].as_bool(), Some(true));
    assert_eq!(part["settings"]["n_cpu_moe"].as_u64(), n.parse().ok());
    let host = |v: &serde_json::Value| v["host_bytes"].as_u64().unwrap();
    assert!(host(&part) > host(&all) + (4u64 << 30));
    // The text names the flag and the RAM the experts take.
    args.retain(|a| *a != "--json");
    let out = vramlab(&args);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(&format!("(--n-cpu-moe {n})")), "{text}");
    assert!(text.contains("se quedan en la RAM"), "{text}");
    // `all` is --cpu-moe.
    let mut every = base.to_vec();
    every.extend(["--n-cpu-moe", "all"]);
    assert_eq!(json(&every)["settings"]["n_cpu_moe"].as_str(), Some("all"));
    // The reader's RAM bandwidth bounds generation: the same experts, read from a
    // server's eight DDR5 channels, allow more tokens per second than from a desktop's.
    let tps = |v: &serde_json::Value| v["speed"]["decode_tokens_per_second"].as_f64().unwrap();
    let mut server = base.to_vec();
    server.extend(["--n-cpu-moe", &n, "--ram-bandwidth", "307"]);
    let fast = json(&server);
    assert_eq!(fast["settings"]["ram_gbs"].as_u64(), Some(307));
    assert_eq!(host(&fast), host(&part), "memory does not change");
    assert!(
        tps(&fast) > tps(&part) * 1.3,
        "{} vs {}",
        tps(&fast),
        tps(&part)
    );
    server.retain(|a| *a != "--json");
    let text = String::from_utf8(vramlab(&server).stdout).unwrap();
    assert!(
        text.contains("se leen de la RAM de la CPU, a 307 GB/s"),
        "{text}"
    );
}

/// The top-level keys of the example in `docs/cli-json.md`, the contract's one list.
fn documented_example_keys() -> Vec<String> {
    let doc = include_str!("../../../docs/cli-json.md");
    let block = doc
        .split("```json")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .unwrap();
    let example: serde_json::Value = serde_json::from_str(block).unwrap();
    example.as_object().unwrap().keys().cloned().collect()
}

/// Every key the JSON prints anywhere (training on several GPUs, a vLLM server,
/// llama.cpp with layers in RAM and its projector) is named in `docs/cli-json.md`: the
/// contract cannot grow a field nobody documented.
#[test]
fn every_json_key_is_documented() {
    fn keys(v: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    out.insert(k.clone());
                    // Settings are the flags' table, documented there by flag.
                    if k != "settings" {
                        keys(v, out);
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|i| keys(i, out)),
            _ => {}
        }
    }
    let doc = include_str!("../../../docs/cli-json.md");
    let mut found = std::collections::BTreeSet::new();
    for args in [
        &[
            "estimate",
            "--model",
            "llama-3.1-8b",
            "--gpu",
            "rtx-4090",
            "--json",
        ][..],
        &[
            "estimate",
            "--model",
            "llama-3.1-8b",
            "--gpu",
            "l4",
            "--runtime",
            "vllm",
            "--json",
        ],
        &[
            "estimate",
            "--model",
            "gemma-3-12b",
            "--gpu",
            "rtx-3060",
            "--runtime",
            "llama.cpp",
            "--dtype",
            "Q4_K_M",
            "--seq",
            "32k",
            "--mmproj",
            "--gpu-layers",
            "20",
            "--json",
        ],
        &[
            "estimate",
            "--model",
            "qwen3-30b-a3b",
            "--gpu",
            "rtx-3060",
            "--runtime",
            "llama.cpp",
            "--dtype",
            "Q4_K_M",
            "--n-cpu-moe",
            "20",
            "--json",
        ],
        &[
            "estimate",
            "--model",
            "llama-3.1-8b",
            "--mode",
            "full",
            "--runtime",
            "deepspeed",
            "--gpus",
            "4",
            "--zero",
            "3",
            "--cpu-offload",
            "--gpu",
            "a100-80gb",
            "--json",
        ],
    ] {
        keys(&json(args), &mut found);
    }
    let missing: Vec<_> = found
        .iter()
        .filter(|k| !doc.contains(&format!("`{k}`")) && !doc.contains(&format!("\"{k}\"")))
        .collect();
    assert!(
        missing.is_empty(),
        "claves sin documentar en docs/cli-json.md: {missing:?}"
    );
}

/// The command that runs what was estimated: `launch` in the JSON, only the command with
/// `--emit`, and `--check`'s exit codes for scripts (0 fits with margin, 1 does not, 2 bad
/// input).
#[test]
fn the_answer_is_a_command_and_a_check() {
    let v = json(&[
        "estimate",
        "--model",
        "qwen2.5-7b",
        "--runtime",
        "vllm",
        "--gpu",
        "l4",
        "--seq",
        "32768",
        "--new-tokens",
        "0",
        "--json",
    ]);
    assert_eq!(
        v["launch"]["command"],
        "vllm serve Qwen/Qwen2.5-7B \\\n  --max-model-len 32768 \\\n  --gpu-memory-utilization 0.9"
    );
    assert_eq!(v["launch"]["args"][0]["flag"], "--max-model-len");
    assert_eq!(v["launch"]["fits"], true);
    assert!(v["launch"]["placeholder"].is_null());
    let out = vramlab(&[
        "estimate",
        "--model",
        "qwen3-30b-a3b",
        "--runtime",
        "llama.cpp",
        "--gpu",
        "rtx-3060",
        "--seq",
        "16384",
        "--new-tokens",
        "0",
        "--kv-dtype",
        "int8",
        "--emit",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "llama-server \\\n  -m MODELO.gguf \\\n  -c 16384 \\\n  -ctk q8_0 \\\n  -ctv q8_0\n"
    );
    let out = vramlab(&[
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--mode",
        "qlora",
        "--gpu",
        "rtx-4090",
        "--emit",
    ]);
    // Training is a Python script: `--emit > entrenar.py` gives a file to run.
    assert_eq!(out.status.code(), Some(0));
    let script = String::from_utf8_lossy(&out.stdout);
    assert!(
        script.starts_with("# transformers 5, PEFT 0.22"),
        "{script}"
    );
    assert!(
        script.contains("MODELO = \"meta-llama/Llama-3.1-8B\""),
        "{script}"
    );
    assert!(
        script.contains("bnb_4bit_use_double_quant=True"),
        "{script}"
    );
    let out = vramlab(&[
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--runtime",
        "autoawq",
        "--dtype",
        "gptq-4bit-128g",
        "--gpu",
        "rtx-4090",
        "--emit",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("AutoAWQ"));
    let v = json(&[
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--mode",
        "qlora",
        "--gpu",
        "rtx-4090",
        "--json",
    ]);
    assert_eq!(v["launch"]["language"], "python");
    // A miss comes with its plan: the cheapest lever that fits first, and applying its
    // flags gives the bytes it promised.
    let base = [
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--mode",
        "qlora",
        "--gpu",
        "rtx-3060",
    ];
    let with_json = |extra: &[&str]| {
        let mut all = base.to_vec();
        all.extend_from_slice(extra);
        all.push("--json");
        json(&all)
    };
    let v = with_json(&[]);
    assert_eq!(v["fits"], false);
    let first = &v["plan"][0];
    assert_eq!(first["fits"], true, "{first}");
    let flags: Vec<&str> = first["flags"]
        .as_array()
        .map(|a| a.iter().filter_map(|f| f.as_str()).collect())
        .unwrap_or_default();
    assert_eq!(flags, ["--runtime", "unsloth"]);
    let applied = with_json(&flags);
    assert_eq!(applied["per_gpu_bytes"], first["per_gpu_bytes"]);
    assert_eq!(applied["plan"], serde_json::json!([]));
    for (args, code) in [
        (
            &[
                "--model",
                "llama-3.1-8b",
                "--gpu",
                "rtx-4090",
                "--seq",
                "4096",
            ][..],
            0,
        ),
        (
            &[
                "--model",
                "llama-3.1-70b",
                "--runtime",
                "vllm",
                "--gpu",
                "rtx-4090",
            ][..],
            1,
        ),
        (
            &[
                "--model",
                "llama-3.1-8b",
                "--mode",
                "full",
                "--gpu",
                "rtx-3060",
            ][..],
            1,
        ),
        (&["--model", "llama-3.1-8b"][..], 2),
    ] {
        let mut all = vec!["estimate"];
        all.extend_from_slice(args);
        all.push("--check");
        let out = vramlab(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        if code == 1 {
            assert!(
                err.starts_with("vramlab: error: --check: no cabe con margen"),
                "{err}"
            );
            assert!(String::from_utf8_lossy(&out.stdout).contains("Total por GPU"));
        }
    }
}
