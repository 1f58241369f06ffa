//! `vramlab inspect` on real files written here: a safetensors file with its weights,
//! a GGUF header, and files that are neither.
#![allow(clippy::unwrap_used)] // A panic here is a failed test.

use std::path::PathBuf;

mod common;
use common::vramlab;

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
    let dir = std::env::temp_dir().join(format!("vramlab-inspect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
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
    let mut b = b"GGUF".to_vec();
    let u32le = |b: &mut Vec<u8>, v: u32| b.extend_from_slice(&v.to_le_bytes());
    let u64le = |b: &mut Vec<u8>, v: u64| b.extend_from_slice(&v.to_le_bytes());
    let s = |b: &mut Vec<u8>, t: &str| {
        b.extend_from_slice(&(t.len() as u64).to_le_bytes());
        b.extend_from_slice(t.as_bytes());
    };
    u32le(&mut b, 3);
    u64le(&mut b, 1);
    u64le(&mut b, 2);
    s(&mut b, "general.architecture");
    u32le(&mut b, 8);
    s(&mut b, "llama");
    s(&mut b, "llama.block_count");
    u32le(&mut b, 4);
    u32le(&mut b, 32);
    s(&mut b, "token_embd.weight");
    u32le(&mut b, 2);
    u64le(&mut b, 4096);
    u64le(&mut b, 256);
    u32le(&mut b, 12); // Q4_K
    u64le(&mut b, 0);
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
