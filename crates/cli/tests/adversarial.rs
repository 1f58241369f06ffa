//! The attacks of the hardening pass, kept as regressions: each input is generated here
//! (nothing large is committed) and each run has a bound — a virtual-memory limit, a
//! time limit and the exit code (2 with a Spanish message, never a panic's 101).
#![allow(clippy::unwrap_used)] // A panic here is a failed test.

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_vramlab");

fn scratch(name: &str, bytes: &[u8]) -> PathBuf {
    common::scratch("adversarial", name, bytes)
}

/// `vramlab args…` with at most `mib` MiB of address space and `secs` seconds, through
/// bash's `ulimit -v` and coreutils' `timeout`; `shell_tail` is appended to the command
/// line (redirections).
fn bounded(mib: u64, secs: u64, args: &[&str], shell_tail: &str) -> (Output, Duration) {
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let script = format!(
        "ulimit -v {}; exec timeout {secs} '{BIN}' {} {shell_tail}",
        mib * 1024,
        quoted.join(" ")
    );
    let start = Instant::now();
    let out = Command::new("bash").args(["-c", &script]).output().unwrap();
    (out, start.elapsed())
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Refused cleanly: exit 2, a Spanish line, no panic, no timeout (124), no abort.
fn refused(out: &Output, expect: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.starts_with("vramlab: error: "), "{err}");
    assert!(err.contains(expect), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// `E = {'action': 'y' * 3000}; T = [E] * 10000; {'segments': [], 'device_traces':
/// [T] * 1000}` as Python's pickler writes it (E and T memoised once): 25 KB that a
/// naive reader expands to 30 GB.
fn shared_strings_pickle() -> Vec<u8> {
    let mut b = vec![0x80, 4, b'}', b'(', 0x8c, 6];
    b.extend(b"action");
    b.push(b'X');
    b.extend(3000u32.to_le_bytes());
    b.extend([b'y'; 3000]);
    b.extend(b"uq\x000](");
    b.extend(b"h\x00".repeat(10_000));
    b.extend(b"eq\x010}(\x8c\x08segments]\x8c\x0ddevice_traces](");
    b.extend(b"h\x01".repeat(1000));
    b.extend(b"eu.");
    b
}

#[test]
fn a_small_pickle_of_shared_strings_stays_within_memory() {
    let bytes = shared_strings_pickle();
    assert!(bytes.len() < 30_000);
    let path = scratch("compartido.pickle", &bytes);
    let (out, took) = bounded(2048, 60, &["snapshot", path.to_str().unwrap()], "");
    refused(&out, "256 MiB");
    assert!(took < Duration::from_secs(60), "{took:?}");
}

#[test]
fn a_config_from_an_endless_pipe_or_device_is_capped() {
    for source in ["/dev/zero", "/dev/urandom"] {
        let (out, _) = bounded(
            2048,
            30,
            &["estimate", "--model", "/dev/stdin"],
            &format!("< {source}"),
        );
        refused(&out, "pasa de 1,00 MiB");
    }
    let (out, _) = bounded(2048, 30, &["estimate", "--model", "/dev/zero"], "");
    refused(&out, "pasa de 1,00 MiB");
}

#[test]
fn a_full_disk_on_stdout_is_an_error_not_a_silent_success() {
    let (out, _) = bounded(2048, 30, &["models"], "> /dev/full");
    refused(&out, "no queda espacio en el disco");
    // Help goes to stdout too.
    let (out, _) = bounded(2048, 30, &["--help"], "> /dev/full");
    refused(&out, "no queda espacio");
}

#[test]
fn a_full_disk_on_stderr_does_not_panic() {
    // Nothing can be said; the exit code still says it failed.
    let (out, _) = bounded(2048, 30, &["estimate", "--model", "nadie"], "2> /dev/full");
    assert_eq!(out.status.code(), Some(2));
    let (out, _) = bounded(2048, 30, &["--no-such-flag"], "2> /dev/full");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let mut child = Command::new(BIN)
        .arg("models")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// A GGUF whose tensors claim shapes near 2^64 and whose metadata is at the edge of
/// every range: the debug binary (overflow checks on) must answer, not panic.
#[test]
fn forged_gguf_and_safetensors_headers_do_not_overflow() {
    let mut w = vram::gguf_writer::Writer::v3(4, 4);
    w.kv_str("general.architecture", "llama");
    for key in [
        "llama.block_count",
        "llama.embedding_length",
        "llama.feed_forward_length",
    ] {
        w.kv_u32(key, u32::MAX);
    }
    for (i, dims) in [
        vec![u64::MAX / 2, 2],
        vec![1 << 32, 1 << 31],
        vec![u64::MAX / 4, 3],
        vec![1 << 40],
    ]
    .iter()
    .enumerate()
    {
        // F32 tensors.
        w.tensor(&format!("blk.{i}.ffn_up.weight"), dims, 0);
    }
    let b = w.0;
    let gguf = scratch("forjado.gguf", &b);
    let gguf = gguf.to_str().unwrap();
    answers_without_panic(&["inspect", gguf]);
    answers_without_panic(&["estimate", "--model", gguf]);
    answers_without_panic(&[
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--weights-file",
        gguf,
    ]);

    let header = br#"{"a":{"dtype":"F32","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,0]},"b":{"dtype":"F64","shape":[9223372036854775807],"data_offsets":[0,0]}}"#;
    let mut st = (header.len() as u64).to_le_bytes().to_vec();
    st.extend(header);
    let safetensors = scratch("forjado.safetensors", &st);
    let safetensors = safetensors.to_str().unwrap();
    answers_without_panic(&["inspect", safetensors]);
    answers_without_panic(&[
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--weights-file",
        safetensors,
    ]);
}

/// An answer or a clean refusal (exit 0 or 2), never a panic.
fn answers_without_panic(args: &[&str]) {
    let out = common::vramlab(args);
    let err = stderr(&out);
    assert!(matches!(out.status.code(), Some(0 | 2)), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

#[test]
fn os_and_json_errors_are_spanish() {
    let (out, _) = bounded(2048, 30, &["inspect", "/dev/zero"], "");
    refused(&out, "el texto se corta antes de terminar");
    let mut child = Command::new(BIN)
        .args(["inspect", "/dev/stdin"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(b"GGUF");
    let out = child.wait_with_output().unwrap();
    refused(&out, "no se puede recorrer");
    for (args, english) in [
        (vec!["inspect", "/no/existe.gguf"], "os error"),
        (
            vec!["estimate", "--model", "/no/existe/config.json"],
            "os error",
        ),
        (vec!["explain", "/no/existe.txt"], "os error"),
    ] {
        let out = common::vramlab(&args);
        let err = stderr(&out);
        assert!(!err.contains(english), "{args:?}: {err}");
        refused(&out, "no existe");
    }
}

#[test]
fn sizes_and_counts_are_bounded_where_they_are_parsed() {
    for (args, expect) in [
        (
            vec![
                "estimate",
                "--model",
                "llama-3.1-8b",
                "--gpu-memory=-5.00GiB",
            ],
            "no es un tamaño válido",
        ),
        (
            vec![
                "estimate",
                "--model",
                "llama-3.1-8b",
                "--mode",
                "lora",
                "--lora-rank",
                "4294967295",
            ],
            "debe ser un entero entre 1 y",
        ),
        (
            vec![
                "estimate",
                "--model",
                "llama-3.1-8b",
                "--gpu-memory",
                "2PiB",
            ],
            "1 PiB",
        ),
    ] {
        let out = common::vramlab(&args);
        refused(&out, expect);
    }
    // The largest size is written in a unit the parser takes.
    let out = common::vramlab(&[
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--gpu-memory",
        "1PiB",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// The hardening pass's freezing models: a MoE with 20 000 layers as a 466-byte GGUF
/// and as a config.json, on llama.cpp with `--n-cpu-moe` (whose solver once walked
/// every layer for every layer count). Refused at once, naming the limit.
#[test]
fn a_model_with_absurdly_many_layers_is_refused_at_once() {
    let mut w = vram::gguf_writer::Writer::v3(0, 7);
    w.kv_str("general.architecture", "qwen3moe");
    for (k, v) in [
        ("qwen3moe.block_count", 20_000),
        ("qwen3moe.embedding_length", 2048),
        ("qwen3moe.attention.head_count", 32),
        ("qwen3moe.expert_count", 128),
        ("qwen3moe.expert_used_count", 8),
    ] {
        w.kv_u32(k, v);
    }
    w.kv_strs("tokenizer.ggml.tokens", &["a", "b"]);
    let gguf = scratch("capas.gguf", &w.0);
    let config = scratch(
        "capas.json",
        br#"{"model_type":"qwen3_moe","num_hidden_layers":20000,"hidden_size":2048,"num_attention_heads":32,"num_key_value_heads":4,"intermediate_size":6144,"moe_intermediate_size":768,"num_experts":128,"num_experts_per_tok":8,"vocab_size":151936}"#,
    );
    for model in [&gguf, &config] {
        let (out, took) = bounded(
            2048,
            30,
            &[
                "estimate",
                "--model",
                model.to_str().unwrap(),
                "--runtime",
                "llama.cpp",
                "--gpu",
                "rtx-3060",
                "--n-cpu-moe",
                "10",
            ],
            "",
        );
        refused(&out, "20000 capas; vramlab admite hasta 1024");
        assert!(took < Duration::from_secs(10), "{took:?}");
    }
}

/// Escape sequences inside files (a config's `model_type`, a GGUF's architecture and
/// name) are printed escaped: no ESC or 8-bit CSI byte reaches the terminal, in text,
/// in JSON or in an error on stderr.
#[test]
fn no_escape_sequence_from_a_file_reaches_the_terminal() {
    let evil = "x\u{1b}]52;c;ZWNobw==\u{7}\u{1b}[2J\u{9b}31m";
    let config = scratch(
        "escape.json",
        format!(
            r#"{{"model_type":"{}","num_hidden_layers":2,"hidden_size":64,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100}}"#,
            evil.replace('\u{1b}', "\\u001b").replace('\u{7}', "\\u0007").replace('\u{9b}', "\\u009b")
        )
        .as_bytes(),
    );
    let mut w = vram::gguf_writer::Writer::v3(0, 3);
    w.kv_str("general.architecture", evil);
    w.kv_str("general.name", evil);
    w.kv_u32("x.block_count", 2);
    let gguf = scratch("escape.gguf", &w.0);
    for model in [&config, &gguf] {
        for json in [false, true] {
            let mut args = vec![
                "estimate",
                "--model",
                model.to_str().unwrap(),
                "--gpu",
                "rtx-3060",
            ];
            if json {
                args.push("--json");
            }
            let (out, _) = bounded(2048, 30, &args, "");
            for (name, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
                let text = String::from_utf8_lossy(bytes);
                assert!(!bytes.contains(&0x1b), "{name}: {text}");
                assert!(!text.contains('\u{9b}'), "{name}: {text}");
            }
            // Escaped the way JSON escapes, so the output still parses.
            if json && out.status.success() {
                serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap();
            }
        }
    }
}

/// A FIFO nobody writes to: every command that reads a file returns at once with a
/// Spanish message instead of blocking for ever in `open()`; a pipe with a writer
/// behind `/dev/stdin` is still read.
#[test]
fn a_fifo_without_a_writer_does_not_block() {
    let dir = scratch("fifo-base", b"")
        .parent()
        .map(PathBuf::from)
        .unwrap();
    let fifo = dir.join("tuberia.json");
    let _ = std::fs::remove_file(&fifo);
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let fifo = fifo.to_string_lossy().into_owned();
    // `explain` reads empty text as a paste it does not recognise (exit 0, by contract).
    let runs: [(Vec<&str>, bool); 5] = [
        (vec!["estimate", "--model", &fifo], true),
        (vec!["inspect", &fifo], true),
        (vec!["explain", &fifo], false),
        (vec!["snapshot", &fifo], true),
        (
            vec!["simulate", "--trace", &fifo, "--capacity", "1GiB"],
            true,
        ),
    ];
    for (args, refusal) in runs {
        let (out, took) = bounded(2048, 20, &args, "");
        let err = stderr(&out);
        assert_ne!(out.status.code(), Some(124), "{args:?} blocked");
        assert!(took < Duration::from_secs(10), "{args:?}: {took:?}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        if refusal {
            refused(&out, "");
        } else {
            assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        }
    }
    let config = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../vram/tests/configs/gpt-oss-20b.json"),
    )
    .unwrap();
    let mut child = Command::new(BIN)
        .args(["estimate", "--model", "/dev/stdin", "--gpu", "rtx-4090"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(&config);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// The messages the hardening pass found misleading now say what happened.
#[test]
fn messages_say_what_happened() {
    let bom = scratch(
        "bom.json",
        &[
            "\u{feff}".as_bytes(),
            &std::fs::read(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../vram/tests/configs/gpt-oss-20b.json"),
            )
            .unwrap(),
        ]
        .concat(),
    );
    let deep = scratch(
        "deep.json",
        format!("{{\"a\": {}", "[".repeat(100_000)).as_bytes(),
    );
    let zeros = scratch("ceros.gguf", &[0u8; 4096]);
    let (bom, deep, zeros) = (
        bom.to_string_lossy().into_owned(),
        deep.to_string_lossy().into_owned(),
        zeros.to_string_lossy().into_owned(),
    );
    let out = common::vramlab(&["estimate", "--model", &bom, "--gpu", "rtx-4090"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for (args, expect) in [
        (
            vec!["estimate", "--model", &deep],
            "anida más de 128 niveles",
        ),
        (vec!["inspect", &zeros], "no es un GGUF"),
        (vec!["estimate", "--model", &zeros], "no es un GGUF"),
        (
            vec!["estimate", "--model", "llama-3.1-8b", "--gpu-memory", "1.5"],
            "escribe la unidad",
        ),
        (
            vec!["simulate", "--snapshot", &bom, "--device", "-1"],
            "el número de una GPU",
        ),
        (
            vec!["bench", "attention", "--warmup-seconds", "-1"],
            "entre 0 y 60",
        ),
        (
            vec![
                "simulate",
                "--scenario",
                "training",
                "--roundup-power2-divisions",
                "6",
            ],
            "potencia de dos",
        ),
    ] {
        let out = common::vramlab(&args);
        refused(&out, expect);
    }
    // 2^32 is a power of two, and PyTorch (a size_t) takes it.
    let out = common::vramlab(&[
        "simulate",
        "--scenario",
        "training",
        "--roundup-power2-divisions",
        "4294967296",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // A missing --capacity is said before a large trace is read.
    let (out, took) = bounded(2048, 30, &["simulate", "--trace", "/dev/zero"], "");
    refused(&out, "falta --capacity");
    assert!(took < Duration::from_secs(5), "{took:?}");
}
