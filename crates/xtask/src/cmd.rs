//! Running child processes with their command line echoed, the way CI logs read best.

use anyhow::{Context, Result, bail};
use std::process::Command;
use std::time::Instant;

/// Runs `cmd`, echoing it first; fails with its exit status.
pub fn run(cmd: &mut Command) -> Result<()> {
    let shown = format!("{cmd:?}").replace('"', "");
    eprintln!("\n==> {shown}");
    let start = Instant::now();
    let status = cmd
        .status()
        .with_context(|| format!("no se pudo ejecutar {shown}"))?;
    eprintln!("    ({:.1} s)", start.elapsed().as_secs_f64());
    if !status.success() {
        bail!("falló: {shown} ({status})");
    }
    Ok(())
}

/// Runs `cmd` quietly and returns its stdout, or `None` if it cannot run or fails.
pub fn output(cmd: &mut Command) -> Option<String> {
    let out = cmd.output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `cargo` as invoked by the running cargo (respects `CARGO`).
pub fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(crate::root());
    cmd
}
