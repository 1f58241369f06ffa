//! `vramlab estimate`: flags → model + `vram::Settings` → `vram::evaluate` → a table
//! or the JSON contract (`docs/cli-json.md`).
//!
//! The settings flags come from `vram::settings::FIELDS` (`flags.rs`), so they are
//! named, bounded and worded exactly as the site's links and the widget's attributes.

mod flags;
mod model;
mod render;

use vram::settings::{Field, Runtime, TASKS};
use vram::{Settings, Surface, Task, parse_count};

pub use flags::{SettingsArgs, is_switch};

/// A parameter count: a model has at least one.
fn count(s: &str) -> Result<u64, String> {
    match parse_count(s).map_err(|e| e.to_string())? {
        0 => Err("un modelo tiene al menos un parámetro; «0» no vale".into()),
        n => Ok(n),
    }
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Modelo: id del catálogo (vramlab models), ruta a un config.json o a un .gguf.
    #[arg(long, conflicts_with = "params")]
    pub model: Option<String>,
    /// Archivo de pesos (.safetensors o .gguf): sus bytes exactos, leídos de la cabecera, sustituyen a la fórmula en inferencia.
    #[arg(long)]
    pub weights_file: Option<String>,
    /// Número de parámetros (7B, 7e9…) si no hay modelo.
    #[arg(long, allow_hyphen_values = true, value_parser = count)]
    pub params: Option<u64>,
    /// Total exacto de parámetros (p. ej. de model.safetensors.index.json); manda sobre el derivado.
    #[arg(long, allow_hyphen_values = true, value_parser = count)]
    pub total_params: Option<u64>,
    /// Método de ajuste al entrenar (full, lora o qlora); equivale a --mode con ese valor.
    #[arg(long, value_parser = ["full", "lora", "qlora"])]
    pub finetune: Option<String>,
    /// Precisión mixta (copia maestra en FP32); equivale a --precision mixed.
    #[arg(long, conflicts_with = "precision")]
    pub mixed_precision: bool,
    /// FSDP con reparto completo; equivale a --zero 3.
    #[arg(long, conflicts_with = "zero")]
    pub fsdp: bool,
    #[command(flatten)]
    pub settings: SettingsArgs,
    /// Salida en JSON.
    #[arg(long, conflicts_with = "emit")]
    pub json: bool,
    /// Escribe solo lo que lo lanza, listo para copiar: la orden de vLLM, llama.cpp u Ollama, o el guion de Python de transformers, TRL o Unsloth (o la orden de torchtune).
    #[arg(long)]
    pub emit: bool,
    /// Para guiones y CI: sale con 0 si cabe con margen, 1 si queda justo o no cabe, 2 si la entrada es mala.
    #[arg(long)]
    pub check: bool,
}

/// The settings the flags give, the aliases (`--finetune`, `--mixed-precision`,
/// `--fsdp`) folded in.
fn settings(args: &Args) -> Result<Settings, String> {
    let mut given = args.settings.clone();
    if let Some(f) = &args.finetune {
        let mode = given
            .get(Field::Task)
            .and_then(|m| vram::settings::find(TASKS, m));
        if mode == Some(Task::Inference) {
            return Err("--finetune solo tiene sentido al entrenar (--mode train)".into());
        }
        given.set(Field::Task, f);
    }
    if args.mixed_precision {
        given.set(Field::Precision, "mixed");
    }
    if args.fsdp {
        given.set(Field::Zero, "3");
    }
    let (s, errors) =
        Settings::read_with(&Settings::for_task(Task::Inference), Surface::Cli, |spec| {
            given.get(spec.field).map(str::to_owned)
        });
    match errors.first() {
        Some(e) => Err(e.to_string()),
        None => Ok(s),
    }
}

/// The output, and with `--check` why it is a failure when it does not fit with margin.
pub fn run(args: &Args) -> Result<(String, Option<String>), String> {
    let s = settings(args)?;
    let loaded = model::load(args)?;
    if s.gpu_layers.is_some() && !matches!(s.runtime, Runtime::LlamaCpp | Runtime::Ollama) {
        return Err("--gpu-layers solo tiene sentido con --runtime llama.cpp u ollama".into());
    }
    if s.cpu_moe > 0 && s.runtime != Runtime::LlamaCpp {
        return Err("--n-cpu-moe solo tiene sentido con --runtime llama.cpp".into());
    }
    if args.settings.get(Field::RamBandwidth).is_some()
        && !matches!(s.runtime, Runtime::LlamaCpp | Runtime::Ollama)
    {
        return Err(
            "--ram-bandwidth solo tiene sentido con --runtime llama.cpp u ollama, que dejan capas o expertos en la RAM".into(),
        );
    }
    if s.layer_split() && (s.tp.is_some_and(|t| t > 1) || s.pp > 1) {
        return Err("llama.cpp y Ollama reparten capas enteras entre las GPU (--split-mode layer, su modo por defecto): --tp y --pp no se aplican; basta con --gpus".into());
    }
    if s.serve {
        if s.task.is_training() {
            return Err("--serve solo tiene sentido con --mode inference".into());
        }
        if matches!(
            s.runtime,
            Runtime::LlamaCpp | Runtime::Ollama | Runtime::AutoAwq
        ) {
            return Err("--serve planifica una caché KV paginada como la de vLLM; llama.cpp y Ollama reservan la suya entera al cargar (sus ranuras son --batch) y AutoAWQ no sirve peticiones: quita --serve o usa --runtime vllm".into());
        }
        if loaded.model.arch().is_none() || s.capacity().is_none() {
            let what = if s.runtime == Runtime::Vllm {
                "vLLM como servidor (lo que hace --runtime vllm)"
            } else {
                "--serve"
            };
            let why = if loaded.model.arch().is_none() {
                "un modelo con arquitectura (--model, no --params): la caché KV sale de sus capas y cabezas"
            } else {
                "--gpu o --gpu-memory: sin la GPU no hay presupuesto de gpu_memory_utilization que repartir"
            };
            return Err(format!(
                "{what} necesita {why} (o pasa --serve false para un cálculo sin servidor)"
            ));
        }
    }
    if args.check && s.capacity().is_none() {
        return Err("--check necesita --gpu o --gpu-memory: sin la GPU no hay veredicto".into());
    }
    let e = vram::evaluate(&loaded.model, &s).map_err(|e| e.to_string())?;
    let out = if args.emit {
        match render::launch(&loaded, &s, &e) {
            Some(l) => l.command + "\n",
            None => {
                return Err(
                    "--emit: vramlab no escribe cómo lanzar AutoAWQ, una biblioteca ya sin desarrollo; para un modelo GPTQ/AWQ usa --runtime vllm o transformers".into(),
                );
            }
        }
    } else if args.json {
        render::json(&loaded, &s, &e)?
    } else {
        render::text(&loaded, &s, &e)
    };
    let failed = args.check.then(|| check(&e)).flatten();
    Ok((out, failed))
}

/// `--check`: `None` when it fits with margin, else why (exit code 1).
fn check(e: &vram::Evaluation) -> Option<String> {
    let Some(v) = e.verdict else {
        return Some("--check: no hay veredicto".into());
    };
    if e.approximate {
        return Some(
            "--check: la arquitectura no está modelada; el resultado es aproximado".into(),
        );
    }
    (!v.fits()).then(|| format!("--check: no cabe con margen (veredicto «{}»)", v.id()))
}
