//! `vramlab explain` as users run it: files and stdin, JSON contract, exit codes.
#![allow(clippy::unwrap_used)] // A panic here is a failed test.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../oom/tests")
        .join(name)
}

fn vramlab(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vramlab"))
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(bytes) = stdin {
        child.stdin.take().unwrap().write_all(bytes).unwrap();
    }
    child.wait_with_output().unwrap()
}

fn json(args: &[&str], stdin: Option<&[u8]>) -> serde_json::Value {
    let out = vramlab(args, stdin);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn json_contract_for_a_message() {
    let path = corpus("corpus/v21_fragmentation.txt");
    let v = json(&["explain", path.to_str().unwrap(), "--json"], None);
    for key in [
        "kind",
        "requested_bytes",
        "total_bytes",
        "free_bytes",
        "process_in_use_bytes",
        "allocated_bytes",
        "reserved_unallocated_bytes",
        "reserved_total_bytes",
        "private_pools_bytes",
        "allowed_bytes",
        "gpu_index",
        "pytorch_era",
        "other_processes",
        "diagnosis",
        "messages",
    ] {
        assert!(v.get(key).is_some(), "falta {key}: {v}");
    }
    assert_eq!(v["kind"], "pytorch-oom");
    assert_eq!(v["pytorch_era"], "2.1+");
    assert_eq!(v["requested_bytes"], 764u64 << 20);
    assert_eq!(v["reserved_unallocated_bytes"], 3_478_923_510u64);
    assert!(v["private_pools_bytes"].is_null());
    let first = &v["diagnosis"][0];
    assert_eq!(first["id"], "fragmentation");
    for key in ["title", "explanation", "fix", "guide"] {
        assert!(first[key].as_str().is_some_and(|s| !s.is_empty()), "{key}");
    }
}

#[test]
fn stdin_with_dash_or_nothing() {
    let text = std::fs::read(corpus("corpus/2018_basic.txt")).unwrap();
    for args in [&["explain", "-", "--json"][..], &["explain", "--json"][..]] {
        let v = json(args, Some(&text));
        assert_eq!(v["kind"], "pytorch-oom");
        assert_eq!(v["pytorch_era"], "2018");
        assert_eq!(v["gpu_index"], 0);
    }
}

#[test]
fn human_output_is_spanish_with_both_units() {
    let path = corpus("corpus/v21_too_big.txt");
    let out = vramlab(&["explain", path.to_str().unwrap()], None);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "Cifras del mensaje",
        "Pedido («Tried to allocate»)",
        "19,68 GiB",
        "21,13 GB",
        "Diagnóstico, de más a menos probable",
        "1. La carga no cabe en la GPU",
        "Qué hacer:",
        "Guía: https://vramlab.dev/estrategias/",
    ] {
        assert!(text.contains(needle), "falta «{needle}»:\n{text}");
    }
}

#[test]
fn memory_summary_tables() {
    let path = corpus("summaries/summary_v1_full.txt");
    let v = json(&["explain", path.to_str().unwrap(), "--json"], None);
    assert_eq!(v["kind"], "memory-summary");
    assert_eq!(v["allocated_bytes"], 7412u64 << 20);
    assert_eq!(v["peak_allocated_bytes"], 10118u64 << 20);
    assert_eq!(v["reserved_total_bytes"], 10450u64 << 20);
    assert_eq!(v["cuda_malloc_retries"], 3);
    assert_eq!(v["cuda_ooms"], 1);
    let out = vramlab(&["explain", path.to_str().unwrap()], None);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Reintentos de cudaMalloc: 3"), "{text}");
    assert!(text.contains("Qué significa cada fila"), "{text}");
}

#[test]
fn truncated_and_unknown_text_exit_zero() {
    let v = json(
        &["explain", "--json"],
        Some(b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a tot"),
    );
    assert_eq!(v["kind"], "pytorch-oom");
    assert_eq!(v["truncated"], true);
    let v = json(&["explain", "--json"], Some(b"KeyError: 'input_ids'\n"));
    assert_eq!(v["kind"], "unknown");
    assert_eq!(v["diagnosis"][0]["id"], "unrecognized");
    let out = vramlab(&["explain"], Some(b"hola"));
    assert!(out.status.success());
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("No reconozco")
    );
}

#[test]
fn bytes_that_are_not_utf8_are_read_anyway() {
    let mut bytes = b"\xff\xfe caf\xe9 \x80 ".to_vec();
    bytes.extend_from_slice(b"RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 3; 11.17 GiB total capacity; 10.66 GiB already allocated; 1.81 MiB free; 4.06 MiB cached)");
    let v = json(&["explain", "--json"], Some(&bytes));
    assert_eq!(v["kind"], "pytorch-oom");
    assert_eq!(v["gpu_index"], 3);
}

#[test]
fn unreadable_input_is_one_spanish_line_and_exit_2() {
    let out = vramlab(&["explain", "/no/existe/oom.txt"], None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("vramlab: error: no se puede leer /no/existe/oom.txt: no existe"),
        "{err}"
    );

    let dir = std::env::temp_dir().join(format!("vramlab-explain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("grande.log");
    let file = std::fs::File::create(&big).unwrap();
    file.set_len((64 << 20) + 1).unwrap();
    let out = vramlab(&["explain", big.to_str().unwrap()], None);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("pasa de 64,00 MiB"), "{err}");
}

#[test]
fn missing_subcommand_lists_explain() {
    let out = vramlab(&[], None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("«vramlab explain»") && err.contains("«vramlab simulate»"),
        "{err}"
    );
}

#[test]
fn help_is_spanish() {
    let out = vramlab(&["explain", "--help"], None);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Uso:") && text.contains("[ARCHIVO]") && text.contains("--json"),
        "{text}"
    );
}

#[test]
fn a_vllm_log_is_set_against_the_estimator() {
    // The corpus's real vLLM 0.6 table log names its model on the command line.
    let out = vramlab(
        &[
            "explain",
            corpus("corpus/gh_rt_29_vllm_report_table_format.txt")
                .to_str()
                .unwrap(),
        ],
        None,
    );
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "Frente al estimador (vLLM, Llama 3.1 8B en bf16, 79,22 GiB, gpu_memory_utilization 90 %)",
        // vLLM 0.6's figure is the parameters alone; 0.19, which vramlab models, also
        // counts the rotary cache (32 MiB for Llama 3.1).
        "Pesos: registro 14,96 GiB, vramlab 14,99 GiB",
        "Caché KV: registro 53,29 GiB, vramlab",
    ] {
        assert!(text.contains(needle), "falta «{needle}»:\n{text}");
    }
}

/// A vLLM log that names its model and refuses its context: the text and the JSON
/// carry the estimator's plan for that run, each candidate with its command, and the
/// `vramlab estimate` line that reproduces it gives the same bytes.
#[test]
fn a_failed_vllm_start_gets_the_estimators_plan() {
    let log = b"$ vllm serve meta-llama/Llama-3.1-8B-Instruct\n\
INFO worker.py:241] the current vLLM instance can use total_gpu_memory (22.05GiB) x gpu_memory_utilization (0.90) = 19.85GiB\n\
INFO worker.py:241] model weights take 14.99GiB; non_torch_memory takes 0.12GiB; PyTorch activation peak memory takes 1.24GiB; the rest of the memory reserved for KV Cache is 3.50GiB.\n\
ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (3.50 GiB). Based on the available memory, the estimated maximum model length is 28672.\n";
    let out = vramlab(&["explain"], Some(log));
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Este arranque en el estimador"), "{text}");
    assert!(text.contains("Para que quepa"), "{text}");
    assert!(
        text.contains("vllm serve meta-llama/Llama-3.1-8B"),
        "{text}"
    );
    let v = json(&["explain", "--json"], Some(log));
    let plan = &v["plan"];
    assert_eq!(plan["model"], "llama-3.1-8b");
    assert_eq!(plan["fits"], false);
    let candidates = plan["candidates"].as_array().unwrap();
    assert!(!candidates.is_empty());
    assert!(candidates[0]["launch"]["command"].is_string(), "{plan}");
    // The run's flags reproduce the estimate.
    let mut args = vec!["estimate", "--model", "llama-3.1-8b", "--json"];
    let flags: Vec<&str> = plan["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    args.extend(flags);
    let estimate = json(&args, None);
    assert_eq!(estimate["per_gpu_bytes"], plan["per_gpu_bytes"]);
    assert_eq!(
        estimate["plan"].as_array().unwrap().len(),
        candidates.len(),
        "{estimate}"
    );
}
