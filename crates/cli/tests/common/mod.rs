//! Shared by the CLI's integration tests: running the built `vramlab` binary.
#![allow(clippy::unwrap_used)] // A panic here is a failed test.

use std::process::{Command, Output};

/// Runs `vramlab` with `args` and waits for it.
pub fn vramlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vramlab"))
        .args(args)
        .output()
        .unwrap()
}

/// `vramlab args…`, which must succeed, with its stdout parsed as JSON.
#[allow(dead_code)] // Not every test binary reads JSON.
pub fn json(args: &[&str]) -> serde_json::Value {
    let out = vramlab(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Writes `bytes` to `name` in this test process's own temporary folder, named after
/// `prefix`, and returns its path.
#[allow(dead_code)] // Not every test binary writes files.
pub fn scratch(prefix: &str, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("vramlab-{prefix}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}
