//! `cargo xtask`: the project's build automation, in Rust, with no other tool to
//! install first (the matklad/cargo-xtask pattern).
//!
//! - `build [--release]`: wasm bundles (own cargo invocation for wasm32), wasm-bindgen
//!   through its library, `wasm-opt -Oz` from npm's binaryen, then sitegen.
//! - `serve`: builds, then serves `dist/` on loopback with the production headers.
//! - `test`: the one command CI runs; installs what is missing, then every check.
//! - `layout`: the code-shape check `test` starts with (module cycles, long files and
//!   functions).
//! - `bench`: sizes, estimator update time and attention kernel speeds, written to
//!   `target/bench/`.
//! - `device-bench --pack DIR`: the folder one call on an NVIDIA machine runs.
//!
//! Nothing here downloads a binary: system packages come from apt, browser-test
//! packages from npm, Rust crates from crates.io.

mod bench;
mod bench_allocator;
mod bench_attention;
mod bench_estimator;
mod bench_lighthouse;
mod bench_snapshot;
mod build;
mod cmd;
mod device_bench;
mod layout;
mod serve;
mod serve_gzip;
mod system;
mod test;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    about = "Construye, sirve, prueba y mide vramlab"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Construye el sitio completo en dist/.
    Build {
        /// Wasm optimizado para tamaño (perfil wasm-release + wasm-opt -Oz).
        #[arg(long)]
        release: bool,
        /// Ruta base del sitio, p. ej. /vramlab/.
        #[arg(long)]
        base: Option<String>,
    },
    /// Construye y sirve dist/ en http://127.0.0.1:PORT.
    Serve {
        #[arg(long, default_value_t = 8080)]
        port: u16,
        #[arg(long)]
        release: bool,
        #[arg(long)]
        base: Option<String>,
        /// Sirve dist/ tal como está, sin reconstruir.
        #[arg(long)]
        no_build: bool,
        /// Comprime con gzip lo que el navegador acepte, como un alojamiento real.
        #[arg(long)]
        gzip: bool,
    },
    /// Ejecuta todas las comprobaciones (lo mismo que CI).
    Test {
        /// Omite las pruebas en el navegador.
        #[arg(long)]
        no_browser: bool,
    },
    /// Comprueba la forma del código: sin ciclos de módulos, archivos y funciones cortos.
    Layout {
        /// Raíz del espacio de trabajo que comprobar (por defecto, este).
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
    },
    /// Mide tamaños, velocidades y Lighthouse; escribe target/bench/report.json y report.md.
    Bench {
        /// Pasadas de Lighthouse por página (se informa la mediana); 0 lo omite.
        #[arg(long, default_value_t = 1)]
        lighthouse_runs: usize,
    },
    /// Prepara en DIR el banco de una GPU NVIDIA: vramlab, el cargador de Vulkan y los
    /// guiones de PyTorch; luego se ejecuta DIR/run.sh en esa máquina.
    DeviceBench {
        #[arg(long, value_name = "DIR")]
        pack: PathBuf,
    },
}

/// The workspace root: xtask lives in crates/xtask.
pub fn root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(2)
        .map_or_else(|| manifest.clone(), PathBuf::from)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Build { release, base } => {
            build::build(&build::Options { release, base }).map(|_| ())
        }
        Command::Serve {
            port,
            release,
            base,
            no_build,
            gzip,
        } => {
            let opts = build::Options { release, base };
            let built = if no_build {
                Ok(())
            } else {
                build::build(&opts).map(|_| ())
            };
            built.and_then(|()| {
                serve::serve_forever(&root().join("dist"), port, opts.base.as_deref(), gzip)
            })
        }
        Command::Test { no_browser } => test::run(!no_browser),
        Command::Layout { root: dir } => layout::check(&dir.unwrap_or_else(root)),
        Command::Bench { lighthouse_runs } => bench::run(lighthouse_runs),
        Command::DeviceBench { pack } => device_bench::pack(&pack),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
