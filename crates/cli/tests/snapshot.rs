//! `vramlab snapshot` as users run it: a pickle or JSON file, human text, JSON
//! contract, and one Spanish line with exit code 2 for files it cannot read.
#![allow(clippy::unwrap_used)] // A panic here is a failed test.

#[path = "../../snapshot/tests/common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

/// Writes `bytes` to a file of this test's own in the temp directory.
fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let path = std::env::temp_dir().join(format!("vramlab-{}-{name}", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    path
}

fn vramlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vramlab"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn human_output_for_a_pickle() {
    let path = temp_file("human.pickle", &common::dumps(&common::sample()));
    let out = vramlab(&["snapshot", path.to_str().unwrap(), "--top", "2"]);
    std::fs::remove_file(&path).unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for needle in [
        "2 segmentos, 7 bloques",
        "Reservado por PyTorch (segmentos)",
        "22,00 MiB",
        "23,07 MB",
        "Fragmentación: 43\u{a0}%",
        "Las 2 asignaciones vivas más grandes",
        "8,00 MiB (8,39 MB)",
        "/home/ana/train.py:10 en main",
        "Traza del dispositivo 0: 8 entradas",
        "alloc 3",
        "OOM (entrada 6): se pidieron 30,00 MiB",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

#[test]
fn json_contract() {
    let path = temp_file("contract.pickle", &common::dumps(&common::sample()));
    let out = vramlab(&["snapshot", path.to_str().unwrap(), "--json", "--top", "1"]);
    std::fs::remove_file(&path).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["format"], "pickle");
    for key in [
        "segments",
        "blocks",
        "reserved_bytes",
        "allocated_bytes",
        "active_bytes",
        "inactive_bytes",
        "requested_bytes",
        "largest_inactive_block_bytes",
        "fragmentation",
    ] {
        assert!(v["totals"].get(key).is_some(), "totals.{key}");
    }
    assert_eq!(v["totals"]["reserved_bytes"], 22 << 20);
    assert_eq!(v["largest_allocations"].as_array().unwrap().len(), 1);
    assert_eq!(v["largest_allocations"][0]["frames"][0]["line"], 10);
    assert_eq!(v["segments"][0]["segment_type"], "large");
    assert_eq!(v["traces"][0]["actions"]["oom"], 1);
    assert_eq!(v["traces"][0]["peak_allocated_bytes"], 15 << 20);
}

#[test]
fn json_input_from_stdin() {
    let json = common::to_json(&common::sample());
    let mut child = Command::new(env!("CARGO_BIN_EXE_vramlab"))
        .args(["snapshot", "-", "--json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), json.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["format"], "json");
}

#[test]
fn bad_files_are_one_spanish_line_and_exit_2() {
    let evil = temp_file("evil.pickle", b"\x80\x04\x8c\x02os\x8c\x06system\x93.");
    let cases = [
        (evil.to_str().unwrap().to_owned(), "STACK_GLOBAL"),
        ("/no/existe.pickle".to_owned(), "no existe"),
    ];
    for (path, needle) in cases {
        let out = vramlab(&["snapshot", &path]);
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(out.stdout.is_empty());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("vramlab: error: "), "{err}");
        assert!(err.contains(needle), "{err}");
    }
    std::fs::remove_file(&evil).unwrap();
}
