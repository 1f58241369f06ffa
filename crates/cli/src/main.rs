//! `vramlab`: the same engines as the site, on the command line.
//!
//! Output contract (`docs/cli-json.md`): JSON on stdout with `--json`, human text on stdout
//! otherwise, errors on stderr as one Spanish line with exit code 2 for bad input.
//! clap's own messages are English, so parse errors are rewritten in Spanish here.

mod bench_cmd;
mod catalog_cmd;
mod errors;
mod estimate_cmd;
mod explain_cmd;
mod explain_reconcile;
mod input;
mod inspect_cmd;
mod mcp_cmd;
mod quiet;
mod simulate_cmd;
mod snapshot_cmd;
mod snapshot_trace;
mod table;
mod terminal;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

pub(crate) const HELP_TEMPLATE: &str = "\
{before-help}{about-with-newline}
Uso: {usage}

{all-args}{after-help}";

#[derive(Debug, Parser)]
#[command(
    name = "vramlab",
    version,
    about = "Calcula y explica la memoria de GPU que usan los modelos de lenguaje.",
    help_template = HELP_TEMPLATE,
    disable_help_subcommand = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Estima la memoria de un modelo y una carga de trabajo.
    #[command(help_template = HELP_TEMPLATE)]
    Estimate(estimate_cmd::Args),
    /// Lista los modelos del catálogo.
    #[command(help_template = HELP_TEMPLATE)]
    Models(catalog_cmd::Args),
    /// Lista las GPU del catálogo.
    #[command(help_template = HELP_TEMPLATE)]
    Gpus(catalog_cmd::Args),
    /// Explica un error de memoria (OutOfMemoryError) o una tabla de torch.cuda.memory_summary().
    #[command(help_template = HELP_TEMPLATE)]
    Explain(explain_cmd::Args),
    /// Simula el asignador de memoria de PyTorch sobre una traza de reservas.
    #[command(help_template = HELP_TEMPLATE)]
    Simulate(simulate_cmd::Args),
    /// Analiza un snapshot de torch.cuda.memory._dump_snapshot() (pickle o JSON) sin ejecutarlo.
    #[command(help_template = HELP_TEMPLATE)]
    Snapshot(snapshot_cmd::Args),
    /// Lee la cabecera de un .safetensors o .gguf: bytes exactos de los pesos por tipo.
    #[command(help_template = HELP_TEMPLATE)]
    Inspect(inspect_cmd::Args),
    /// Mide kernels en la GPU (vramlab bench attention).
    #[command(help_template = HELP_TEMPLATE)]
    Bench(bench_cmd::Args),
    /// Servidor de Model Context Protocol por stdio: estimate, plan y explain para agentes.
    #[command(help_template = HELP_TEMPLATE)]
    Mcp(mcp_cmd::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return errors::clap_error(&e),
    };
    let result = match cli.command {
        Command::Estimate(args) => match estimate_cmd::run(&args) {
            Ok((text, Some(why))) => return errors::finish_failed(&text, &why),
            other => other.map(|(text, _)| text),
        },
        Command::Models(args) => catalog_cmd::models(&args),
        Command::Gpus(args) => catalog_cmd::gpus(&args),
        Command::Explain(args) => explain_cmd::run(&args),
        Command::Simulate(args) => simulate_cmd::run(&args),
        Command::Snapshot(args) => snapshot_cmd::run(&args),
        Command::Inspect(args) => inspect_cmd::run(&args),
        Command::Mcp(args) => mcp_cmd::run(&args),
        Command::Bench(args) => match &args.what {
            bench_cmd::What::Attention(a) => match bench_cmd::run_attention(a) {
                Ok((text, Some(why))) => return errors::finish_failed(&text, &why),
                other => other.map(|(text, _)| text),
            },
        },
    };
    errors::finish(result)
}
