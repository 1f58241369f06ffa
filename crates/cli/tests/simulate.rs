//! `vramlab simulate` as users run it: JSON contract, Spanish text, exit codes.
#![allow(clippy::unwrap_used)] // A panic here is a failed test.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn vramlab(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vramlab"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A refusal may come before the input is read (a missing --capacity): the pipe
    // is then closed, and that is not the test's failure.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

fn json(args: &[&str], stdin: &str) -> serde_json::Value {
    let out = vramlab(args, stdin);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Two 8 MiB tensors share a 20 MiB segment; freeing the first leaves 12 MiB cached
/// in a split segment, so 30 MiB more does not fit in 40 MiB.
const FRAGMENTED: &str = r#"{"op":"alloc","id":1,"bytes":8388608}
{"op":"alloc","id":2,"bytes":8388608}
{"op":"free","id":1}
{"op":"alloc","id":3,"bytes":31457280}
{"op":"free","id":3}
{"op":"free","id":2}
"#;

#[test]
fn json_contract_on_a_trace_file() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fragmented.jsonl");
    std::fs::write(&path, FRAGMENTED).unwrap();
    let v = json(
        &[
            "simulate",
            "--trace",
            path.to_str().unwrap(),
            "--capacity",
            "40MiB",
            "--json",
        ],
        "",
    );
    assert_eq!(v["peak_allocated_bytes"], 16 << 20);
    assert_eq!(v["peak_reserved_bytes"], 20 << 20);
    assert_eq!(v["ooms"], 1);
    assert_eq!(v["alloc_retries"], 1);
    assert_eq!(v["fragmentation"]["at"], "first_oom");
    assert_eq!(v["fragmentation"]["reserved_unallocated_bytes"], 12 << 20);
    assert_eq!(v["fragmentation"]["largest_free_block_bytes"], 8 << 20);
    let events = v["events"].as_array().unwrap();
    let oom = events.iter().find(|e| e["kind"] == "oom").unwrap();
    assert_eq!(oom["line"], 4);
    assert!(
        oom["message"]
            .as_str()
            .unwrap()
            .starts_with("CUDA out of memory. Tried to allocate 30.00 MiB. GPU 0 has a total capacity of 40.00 MiB of which 20.00 MiB is free.")
    );
    assert_eq!(v["source"]["trace"], path.to_str().unwrap());
    assert_eq!(v["config"]["capacity"], 40 << 20);
}

#[test]
fn stdin_and_options() {
    // Expandable segments fit the same trace: 8 + 8 + 30 MiB in one growing segment.
    let v = json(
        &[
            "simulate",
            "--trace",
            "-",
            "--capacity",
            "60MiB",
            "--expandable-segments",
            "--json",
        ],
        FRAGMENTED,
    );
    assert_eq!(v["ooms"], 0);
    assert_eq!(v["config"]["expandable_segments"], true);
    let v = json(
        &[
            "simulate",
            "--trace",
            "-",
            "--capacity",
            "1GB",
            "--max-split-size-mb",
            "128",
            "--garbage-collection-threshold",
            "0,6",
            "--roundup-power2-divisions",
            "4",
            "--json",
        ],
        FRAGMENTED,
    );
    assert_eq!(v["config"]["max_split_size"], 128 << 20);
    assert_eq!(v["config"]["garbage_collection_threshold"], 0.6);
    assert_eq!(v["ooms"], 0);
}

#[test]
fn scenarios_oom_by_default_and_survive_with_expandable_segments() {
    for name in ["training", "kv-cache", "mixed"] {
        let v = json(&["simulate", "--scenario", name, "--json"], "");
        assert!(v["ooms"].as_u64().unwrap() > 0, "{name}");
        assert_eq!(v["source"]["scenario"], name);
        let v = json(
            &[
                "simulate",
                "--scenario",
                name,
                "--expandable-segments",
                "--json",
            ],
            "",
        );
        assert_eq!(v["ooms"], 0, "{name}");
    }
}

#[test]
fn human_output_is_spanish_with_both_units() {
    let out = vramlab(&["simulate", "--scenario", "mixed"], "");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "Escenario «mixed»",
        "Capacidad: 1,27 GiB (1,36 GB)",
        "Pico reservado: ",
        "OOM: 16",
        "Primer OOM, en la línea",
        "CUDA out of memory. Tried to allocate 20.00 MiB.",
        "Reintentos de cudaMalloc tras vaciar la caché: 17",
        "índice de fragmentación: 0,98",
        "prueba --expandable-segments",
    ] {
        assert!(text.contains(needle), "falta «{needle}» en:\n{text}");
    }
    let out = vramlab(
        &["simulate", "--trace", "-", "--capacity", "1GiB"],
        "{\"op\":\"free\",\"id\":4}\n{\"op\":\"alloc\",\"id\":1,\"bytes\":100}\n",
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Pico reservado: 2,00 MiB (2,10 MB)"),
        "{text}"
    );
    assert!(
        text.contains("línea 1: free del id 4, que no está reservado; se ignora"),
        "{text}"
    );
}

#[test]
fn bad_input_is_one_spanish_line_and_exit_2() {
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["simulate", "--trace", "-"],
            FRAGMENTED,
            "falta --capacity",
        ),
        (
            &["simulate", "--trace", "-", "--capacity", "1GiB"],
            "{\"op\":\"alloc\",\"id\":1,\"bytes\":5}\n{oops}\n",
            "entrada estándar: línea 2, columna 2: no es JSON válido",
        ),
        (
            &["simulate", "--trace", "-", "--capacity", "1GiB"],
            "{\"op\":\"alloc\",\"id\":1,\"bytes\":5}\n{\"op\":\"alloc\",\"id\":1,\"bytes\":5}\n",
            "línea 2: el id 1 ya está reservado desde la línea 1",
        ),
        (
            &[
                "simulate",
                "--trace",
                "/no/existe.jsonl",
                "--capacity",
                "1GiB",
            ],
            "",
            "no se puede leer la traza /no/existe.jsonl: no existe",
        ),
        (
            &["simulate", "--scenario", "nada"],
            "",
            "escenario desconocido",
        ),
        (
            &["simulate", "--scenario", "mixed", "--trace", "-"],
            "",
            "no se puede usar junto con",
        ),
        (&["simulate"], "", "falta el argumento obligatorio --trace"),
        (
            &[
                "simulate",
                "--scenario",
                "mixed",
                "--max-split-size-mb",
                "19",
            ],
            "",
            "max_split_size_mb debe estar entre 20",
        ),
        (
            &[
                "simulate",
                "--scenario",
                "mixed",
                "--garbage-collection-threshold",
                "1.5",
            ],
            "",
            "entre 0 y 1",
        ),
        (
            &[
                "simulate",
                "--scenario",
                "mixed",
                "--roundup-power2-divisions",
                "3",
            ],
            "",
            "potencia de dos",
        ),
        (
            &["simulate", "--scenario", "mixed", "--capacity", "-1GiB"],
            "",
            "--capacity",
        ),
    ];
    for (args, stdin, expected) in cases {
        let out = vramlab(args, stdin);
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn a_snapshot_history_replays_with_other_settings() {
    // A recorded history: growing 12 MiB-ish tensors with a small one kept alive each
    // time, the pattern that fragments 20 MiB segments.
    let mut entries = Vec::new();
    let mut addr = 1u64 << 32;
    for i in 0..40u64 {
        let big = (6 + i % 5) << 20;
        entries.push(format!(
            r#"{{"action": "alloc", "addr": {addr}, "size": {big}}}"#
        ));
        entries.push(format!(
            r#"{{"action": "alloc", "addr": {}, "size": 1048576}}"#,
            addr + big
        ));
        entries.push(format!(
            r#"{{"action": "free_completed", "addr": {addr}, "size": {big}}}"#
        ));
        addr += 64 << 20;
    }
    entries.push(r#"{"action": "free_completed", "addr": 12345, "size": 512}"#.to_owned());
    let json = format!(
        r#"{{"segments": [], "device_traces": [[{}]]}}"#,
        entries.join(",")
    );
    let dir = std::env::temp_dir().join(format!("vramlab-simsnap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("snap.json");
    std::fs::write(&file, json).unwrap();
    let path = file.to_str().unwrap();

    let out = Command::new(env!("CARGO_BIN_EXE_vramlab"))
        .args([
            "simulate",
            "--snapshot",
            path,
            "--capacity",
            "8GiB",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["events_total"].as_u64(), Some(120));
    assert!(
        v["warnings"].to_string().contains("antes de que empezara"),
        "{}",
        v["warnings"]
    );

    // No recorded history for that GPU: one Spanish line, exit 2.
    let out = Command::new(env!("CARGO_BIN_EXE_vramlab"))
        .args([
            "simulate",
            "--snapshot",
            path,
            "--device",
            "2",
            "--capacity",
            "8GiB",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("GPU 2"));
}
