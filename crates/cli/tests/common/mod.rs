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
