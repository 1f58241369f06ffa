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
