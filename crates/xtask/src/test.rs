//! `cargo xtask test`: every check, in the order that fails fastest. CI runs exactly
//! this; on a fresh Debian machine it installs what it needs first.

use anyhow::{Result, bail};
use std::process::Command;
use std::time::Instant;

use crate::{bench, build, cmd, layout, root, serve, system};

/// Crates that must also build (and pass clippy) for wasm32, besides the bundles.
const WASM_CRATES: &[&str] = &["vram", "oom", "attention", "ui", "allocator"];

pub fn run(browser: bool) -> Result<()> {
    let start = Instant::now();
    system::ensure_packages(browser)?;
    system::ensure_wasm_target()?;

    cmd::run(cmd::cargo().args(["fmt", "--all", "--check"]))?;
    layout::check(&root())?;
    cmd::run(cmd::cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    let mut wasm_clippy = cmd::cargo();
    wasm_clippy.args(["clippy", "--target", build::WASM_TARGET]);
    for krate in WASM_CRATES {
        wasm_clippy.args(["-p", krate]);
    }
    cmd::run(wasm_clippy.args(["--", "-D", "warnings"]))?;
    // Each bundle on its own, as the build compiles it: `ui`'s features must not unify,
    // or code that only one bundle uses would hide dead code in the others.
    for krate in bundles::ALL.map(|b| b.krate) {
        cmd::run(cmd::cargo().args([
            "clippy",
            "--target",
            build::WASM_TARGET,
            "-p",
            krate,
            "--",
            "-D",
            "warnings",
        ]))?;
    }

    // GPU tests must find lavapipe (or a real GPU): a missing adapter is a failure here.
    let mut tests = cmd::cargo();
    tests
        .args(["test", "--workspace"])
        .env("VRAMLAB_REQUIRE_GPU", "1");
    system::gpu_env(&mut tests);
    cmd::run(&mut tests)?;

    let built = build::build(&build::Options {
        release: true,
        base: None,
    })?;
    // What readers download stays within its budgets (the bench reports the same
    // weights with the rest of its figures).
    let over = bench::over_budget(&bench::weigh(&built.dist)?);
    if !over.is_empty() {
        bail!("fuera de presupuesto: {}", over.join("; "));
    }
    eprintln!("xtask: paquetes y páginas dentro de su presupuesto");

    if browser {
        browser_tests(&built)?;
    } else {
        eprintln!("xtask: pruebas de navegador omitidas (--no-browser)");
    }
    eprintln!(
        "\nxtask: todo en verde en {:.0} s",
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

fn browser_tests(built: &build::Built) -> Result<()> {
    let e2e = root().join("tests").join("e2e");
    cmd::run(
        Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&e2e),
    )?;
    // Served gzipped, as a real host serves the site. One run, no retry: the page-load
    // hang that once needed one was the old hand-written server's thread pool.
    let server = serve::start(&built.dist, 0, None, true)?;
    let mut node = Command::new("node");
    node.args(["--test", "--test-concurrency=1"])
        .current_dir(&e2e)
        .env("VRAMLAB_URL", &server.url)
        .env("CHROMIUM", system::CHROMIUM)
        .env("SCREENSHOT_DIR", build::target_dir().join("e2e"))
        // The CLI built by `cargo test`: browser numbers are checked against it.
        .env(
            "VRAMLAB_BIN",
            build::target_dir().join("debug").join("vramlab"),
        );
    system::gpu_env(&mut node);
    let result = cmd::run(&mut node);
    drop(server);
    if result.is_ok() {
        return Ok(());
    }
    bail!("fallaron las pruebas en el navegador (capturas en target/e2e/)")
}
