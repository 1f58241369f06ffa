//! `cargo xtask build`: wasm bundles, bindings, optimisation, then the static pages.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{cmd, root, system};

pub use crate::system::WASM_TARGET;

#[derive(Debug, Clone, Default)]
pub struct Options {
    pub release: bool,
    pub base: Option<String>,
}

/// Where the build wrote things.
#[derive(Debug, Clone)]
pub struct Built {
    pub dist: PathBuf,
}

pub fn build(opts: &Options) -> Result<Built> {
    system::ensure_wasm_target()?;
    let profile = if opts.release { "wasm-release" } else { "dev" };
    // Each bundle in its own cargo invocation, so `ui`'s features do not unify between
    // the light `hydrate` bundle and the heavy ones.
    for b in bundles::ALL {
        cmd::run(cmd::cargo().args([
            "build",
            "--target",
            WASM_TARGET,
            "--profile",
            profile,
            "-p",
            b.krate,
        ]))?;
    }

    let profile_dir = if opts.release {
        "wasm-release"
    } else {
        "debug"
    };
    let wasm_dir = target_dir().join(WASM_TARGET).join(profile_dir);
    let pkg = target_dir().join("site-pkg");
    if pkg.exists() {
        std::fs::remove_dir_all(&pkg)?;
    }
    std::fs::create_dir_all(&pkg)?;
    for stem in bundles::ALL.map(|b| b.stem) {
        let input = wasm_dir.join(format!("{stem}.wasm"));
        eprintln!("==> wasm-bindgen {}", input.display());
        wasm_bindgen_cli_support::Bindgen::new()
            .input_path(&input)
            .web(true)?
            .typescript(false)
            .out_name(stem)
            .debug(!opts.release)
            .generate(&pkg)
            .with_context(|| format!("wasm-bindgen falló con {}", input.display()))?;
        if opts.release && std::env::var_os("VRAMLAB_NO_WASM_OPT").is_none() {
            wasm_opt(&pkg.join(format!("{stem}_bg.wasm")))?;
        }
    }

    let dist = root().join("dist");
    let mut site = cmd::cargo();
    site.args(["run", "--quiet", "-p", "sitegen", "--"])
        // Relative paths (cargo runs in the root) keep error messages short:
        // `content/es/x.md:12: …`.
        .args(["--content", "content", "--site", "site"])
        .arg("--pkg")
        .arg(&pkg)
        .arg("--out")
        .arg(&dist);
    if let Some(base) = &opts.base {
        site.args(["--base", base]);
    }
    cmd::run(&mut site)?;
    Ok(Built { dist })
}

pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from)
}

/// Shrinks a bundle with binaryen's `wasm-opt -Oz`.
///
/// Debian 12 ships binaryen 108, which turns wasm-bindgen's externref table into a
/// funcref table (the page then fails with "WebAssembly.Table.set(): Argument 1 is
/// invalid"). So the optimiser comes from npm's `binaryen` package (a registry
/// package, installed by `npm ci` in crates/xtask/js, run by node). Without node the
/// site still works, only larger: a warning, not an error.
fn wasm_opt(file: &Path) -> Result<()> {
    let Some(tool) = ensure_binaryen() else {
        eprintln!(
            "xtask: aviso: no hay node/npm para instalar binaryen; el wasm queda sin optimizar"
        );
        return Ok(());
    };
    let optimized = file.with_extension("opt.wasm");
    // The features rustc enables by default for wasm32 since 1.82/1.87.
    cmd::run(
        Command::new("node")
            .arg(tool)
            .arg("-Oz")
            .args([
                "--enable-bulk-memory",
                "--enable-mutable-globals",
                "--enable-nontrapping-float-to-int",
                "--enable-sign-ext",
                "--enable-reference-types",
                "--enable-multivalue",
                "--strip-debug",
                "--strip-producers",
            ])
            .arg(file)
            .arg("-o")
            .arg(&optimized),
    )?;
    std::fs::rename(&optimized, file)?;
    Ok(())
}

/// Path of npm binaryen's wasm-opt script, installing it with `npm ci` if needed.
fn ensure_binaryen() -> Option<PathBuf> {
    let dir = root().join("crates").join("xtask").join("js");
    let tool = dir
        .join("node_modules")
        .join("binaryen")
        .join("bin")
        .join("wasm-opt");
    if tool.is_file() {
        return Some(tool);
    }
    cmd::output(Command::new("node").arg("--version"))?;
    cmd::run(
        Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&dir),
    )
    .ok()?;
    tool.is_file().then_some(tool)
}
