//! `sitegen`: builds the static site. Usually run by `cargo xtask build`.

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;

/// Genera el sitio estático de vramlab a partir de content/.
#[derive(Debug, Parser)]
#[command(name = "sitegen", version)]
struct Args {
    /// Carpeta con site.toml y es/*.md.
    #[arg(long, default_value = "content")]
    content: PathBuf,
    /// Recursos estáticos (CSS, scripts, iconos).
    #[arg(long, default_value = "site")]
    site: PathBuf,
    /// Salida de wasm-bindgen (hydrate.js, gpu_web.js…).
    #[arg(long)]
    pkg: Option<PathBuf>,
    /// Carpeta de salida.
    #[arg(long, default_value = "dist")]
    out: PathBuf,
    /// Ruta base, p. ej. /vramlab/ (sustituye a base_path de site.toml).
    #[arg(long)]
    base: Option<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let opts = sitegen::BuildOptions {
        content: args.content,
        site: args.site,
        pkg: args.pkg,
        out: args.out,
        base: args.base,
    };
    match sitegen::build(&opts) {
        Ok(report) => {
            println!(
                "sitegen: {} páginas ({} con islas) en {}",
                report.pages,
                report.pages_with_islands,
                opts.out.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("sitegen: {e:#}");
            ExitCode::FAILURE
        }
    }
}
