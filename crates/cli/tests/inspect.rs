//! `vramlab inspect` on real files written here: a safetensors file with its weights,
//! a GGUF header, and files that are neither.
#![allow(clippy::unwrap_used)] // A panic here is a failed test.

use std::path::PathBuf;

mod common;
use common::vramlab;
use vram::gguf_writer::Writer;

/// `vramlab inspect PATH`, which must succeed; its output with plain spaces
/// (group_digits separates thousands with a narrow no-break space).
fn inspect_ok(path: &std::path::Path) -> String {
    let out = vramlab(&["inspect", path.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).replace(['\u{a0}', '\u{202f}'], " ")
}

fn scratch(name: &str, bytes: &[u8]) -> PathBuf {
    common::scratch("inspect", name, bytes)
}

#[test]
fn safetensors_file_with_weights() {
    let header = r#"{"__metadata__":{"format":"pt"},"a":{"dtype":"BF16","shape":[1024,512],"data_offsets":[0,1048576]},"b":{"dtype":"F32","shape":[512],"data_offsets":[1048576,1050624]}}"#;
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.resize(bytes.len() + 1_050_624, 0);
    let path = scratch("m.safetensors", &bytes);
    let text = inspect_ok(&path);
    assert!(text.contains("formato: safetensors"), "{text}");
    assert!(text.contains("BF16") && text.contains("524 288"), "{text}");
    assert!(
        text.contains("total") && text.contains("1,00 MiB"),
        "{text}"
    );
}

#[test]
fn gguf_header() {
    let mut g = Writer::v3(1, 2);
    g.kv_str("general.architecture", "llama")
        .kv_u32("llama.block_count", 32)
        // token_embd.weight: 2 dimensions, Q4_K (12), offset 0.
        .tensor("token_embd.weight", &[4096, 256], 12);
    let b = g.0;
    let path = scratch("m.gguf", &b);
    let text = inspect_ok(&path);
    for needle in [
        "GGUF versión 3",
        "arquitectura: llama",
        "capas: 32",
        "Q4_K",
        "1 048 576",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
}

#[test]
fn bad_files_get_spanish_errors() {
    for (name, bytes, want) in [
        ("corto.bin", &b"abc"[..], "demasiado corto"),
        ("falso.safetensors", &u64::MAX.to_le_bytes()[..], "64 MiB"),
        ("roto.gguf", &b"GGUF\x01\0\0\0"[..], "Versión de GGUF 1"),
    ] {
        let path = scratch(name, bytes);
        let out = vramlab(&["inspect", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{name}: {err}");
    }
    let out = vramlab(&["inspect", "/no/existe.gguf"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no existe"));
}

/// A Llama-3.1-8B-shaped GGUF header (metadata, a 128 256-token vocabulary that makes
/// the header longer than the first 1 MiB read, and three tensors).
fn llama_gguf() -> (Vec<u8>, u64) {
    let ints = [
        ("llama.block_count", 32),
        ("llama.embedding_length", 4096),
        ("llama.attention.head_count", 32),
        ("llama.attention.head_count_kv", 8),
        ("llama.feed_forward_length", 14_336),
        ("llama.context_length", 131_072),
    ];
    let mut g = Writer::v3(4, ints.len() as u64 + 2);
    g.kv_str("general.architecture", "llama");
    for (k, v) in ints {
        g.kv_u32(k, v);
    }
    g.kv_strs("tokenizer.ggml.tokens", &["t"; 128_256]);
    let mut bytes = 0;
    for (name, dims, ggml, per_256) in [
        ("token_embd.weight", [4096u64, 128_256], 12, 144),
        ("output.weight", [4096, 128_256], 14, 210),
        ("blk.0.ffn_gate.weight", [4096, 14_336], 12, 144),
        // The rest of Llama 3.1 8B's 8 030 261 248 parameters in one tensor, so that
        // the file's weights are the model's.
        ("blk.1.ffn_up.weight", [256, 27_034_640], 12, 144),
    ] {
        g.tensor(name, &dims, ggml);
        bytes += dims[0] * dims[1] / 256 * per_256;
    }
    (g.0, bytes)
}

fn estimate_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["estimate", "--json"];
    all.extend_from_slice(args);
    common::json(&all)
}

#[test]
fn estimate_reads_the_architecture_and_exact_weights_of_a_gguf() {
    let (bytes, weights) = llama_gguf();
    assert!(
        bytes.len() > 1 << 20,
        "the header must outgrow the first read"
    );
    let path = scratch("llama.gguf", &bytes);
    let file = estimate_json(&["--model", path.to_str().unwrap(), "--seq", "8192"]);
    let preset = estimate_json(&["--model", "llama-3.1-8b", "--seq", "8192"]);
    assert_eq!(file["breakdown"]["weights"], weights);
    assert_eq!(
        file["breakdown"]["kv_cache"],
        preset["breakdown"]["kv_cache"]
    );
    assert_eq!(
        file["breakdown"]["kv_cache"],
        8192u64 * 32 * 2 * 8 * 128 * 2
    );
    let notes = file["notes"].to_string();
    assert!(notes.contains("exactos, de la cabecera"), "{notes}");
}

#[test]
fn weights_file_gives_a_preset_exact_bytes() {
    let file = |name: &str, shape: &str, bytes: u64| {
        let header =
            format!(r#"{{"w":{{"dtype":"F8_E4M3","shape":{shape},"data_offsets":[0,{bytes}]}}}}"#);
        let mut b = (header.len() as u64).to_le_bytes().to_vec();
        b.extend_from_slice(header.as_bytes());
        scratch(name, &b)
    };
    // Llama 3.1 8B's parameter count in FP8.
    let path = file("fp8.safetensors", "[8030261248]", 8_030_261_248);
    let out = estimate_json(&[
        "--model",
        "llama-3.1-8b",
        "--weights-file",
        path.to_str().unwrap(),
    ]);
    assert_eq!(out["breakdown"]["weights"], 8_030_261_248u64);
    assert_eq!(out["params"], 8_030_261_248u64);
    // One 4096 × 4096 tensor, an empty file or one shard of four are not its weights.
    let small = file("small.safetensors", "[4096,4096]", 16_777_216);
    let empty = scratch("empty.safetensors", b"\x02\0\0\0\0\0\0\0{}");
    let shard = file(
        "model-00002-of-00004.safetensors",
        "[8030261248]",
        8_030_261_248,
    );
    for (f, said) in [
        (&small, "16 777 216 parámetros y el modelo 8 030 261 248"),
        (&empty, "0 parámetros"),
        (&shard, "la parte 2 de 4"),
    ] {
        let out = vramlab(&[
            "estimate",
            "--model",
            "llama-3.1-8b",
            "--gpu",
            "rtx-3060",
            "--weights-file",
            f.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&out.stderr).replace('\u{202f}', " ");
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(said), "{err}");
    }
    let bad = vramlab(&[
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--weights-file",
        "/no/existe.safetensors",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no existe"));
}

/// A Qwen3-MoE-shaped GGUF header whose two blocks store their experts differently
/// (block 0: Q4_K gate/up and Q6_K down; block 1: Q8_0 all), as imatrix mixes do.
fn moe_gguf() -> (Vec<u8>, [u64; 2]) {
    let ints = [
        ("qwen3moe.block_count", 2),
        ("qwen3moe.embedding_length", 2048),
        ("qwen3moe.attention.head_count", 32),
        ("qwen3moe.attention.head_count_kv", 4),
        ("qwen3moe.attention.key_length", 128),
        ("qwen3moe.feed_forward_length", 6144),
        ("qwen3moe.context_length", 40_960),
        ("qwen3moe.expert_count", 128),
        ("qwen3moe.expert_used_count", 8),
        ("qwen3moe.expert_feed_forward_length", 768),
        ("qwen3moe.vocab_size", 151_936),
    ];
    let tensors: [(&str, [u64; 3], u32, u64, u64); 7] = [
        ("token_embd.weight", [2048, 151_936, 1], 12, 144, 256),
        ("blk.0.ffn_gate_exps.weight", [2048, 768, 128], 12, 144, 256),
        ("blk.0.ffn_up_exps.weight", [2048, 768, 128], 12, 144, 256),
        ("blk.0.ffn_down_exps.weight", [768, 2048, 128], 14, 210, 256),
        ("blk.1.ffn_gate_exps.weight", [2048, 768, 128], 8, 34, 32),
        ("blk.1.ffn_up_exps.weight", [2048, 768, 128], 8, 34, 32),
        ("blk.1.ffn_down_exps.weight", [768, 2048, 128], 8, 34, 32),
    ];
    let mut g = Writer::v3(tensors.len() as u64, ints.len() as u64 + 1);
    g.kv_str("general.architecture", "qwen3moe");
    for (k, v) in ints {
        g.kv_u32(k, v);
    }
    let mut experts = [0u64; 2];
    for (name, dims, ggml, per_block, block) in tensors {
        g.tensor(name, &dims, ggml);
        let bytes = dims.iter().product::<u64>() / block * per_block;
        match name.as_bytes()[4] {
            b'0' if name.starts_with("blk.") => experts[0] += bytes,
            b'1' if name.starts_with("blk.") => experts[1] += bytes,
            _ => {}
        }
    }
    (g.0, experts)
}

#[test]
fn n_cpu_moe_moves_the_experts_the_gguf_header_lists() {
    let (bytes, experts) = moe_gguf();
    let path = scratch("moe.gguf", &bytes);
    let run = |n: &str| {
        estimate_json(&[
            "--model",
            path.to_str().unwrap(),
            "--runtime",
            "llama.cpp",
            "--seq",
            "4096",
            "--n-cpu-moe",
            n,
        ])
    };
    let weights = |v: &serde_json::Value| v["breakdown"]["weights"].as_u64().unwrap();
    let host = |v: &serde_json::Value| v["host_bytes"].as_u64().unwrap();
    let (none, one, both) = (run("0"), run("1"), run("all"));
    // Block 0's experts exactly as stored (Q4_K, Q4_K, Q6_K), then block 1's (Q8_0).
    assert_eq!(weights(&none) - weights(&one), experts[0]);
    assert_eq!(weights(&one) - weights(&both), experts[1]);
    assert_eq!(host(&both) - host(&none), experts[0] + experts[1]);
}
