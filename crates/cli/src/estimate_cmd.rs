//! `vramlab estimate`: flags → model + workload → table or JSON.

use clap::ValueEnum;
use serde::Serialize;
use std::path::Path;

use vram::catalog::{self, Gpu};
use vram::estimate::{Breakdown, ModelInput, estimate};
use vram::safetensors::TensorTotal;
use vram::solve;
use vram::workload::{Attention, Finetune, KvDtype, Mode, Optimizer, Workload};
use vram::{ByteSize, WeightFormat, gguf_arch, group_digits, hf_config, parse_count};

use crate::input::shown;
use crate::inspect_cmd::{Header, read_header};
use crate::table;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ModeArg {
    #[value(alias = "inferencia")]
    Inference,
    #[value(alias = "entrenamiento")]
    Train,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FinetuneArg {
    Full,
    Lora,
    Qlora,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OptimizerArg {
    Adamw,
    Adamw8bit,
    Adafactor,
    Sgd,
    SgdMomentum,
    PagedAdamw,
    PagedAdamw8bit,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AttentionArg {
    Eager,
    Sdpa,
    Flash,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum KvArg {
    Fp16,
    Fp8,
    Int8,
    Int4,
}

fn count(s: &str) -> Result<u64, String> {
    parse_count(s).map_err(|e| e.to_string())
}

fn size(s: &str) -> Result<u64, String> {
    ByteSize::parse(s).map(|b| b.0).map_err(|e| e.to_string())
}

fn format(s: &str) -> Result<WeightFormat, String> {
    WeightFormat::parse(s).map_err(|_| {
        format!(
            "formato desconocido; usa fp32, fp16, bf16, fp8, int8, nf4, nf4-dq, gptq-4bit-128g, awq, \
             {} o bits por peso como 4.65bpw",
            vram::quant::GGUF_MIXES.map(|m| m.name).join(", ")
        )
    })
}

/// "0.9" or "90%" → 90.
fn fraction(s: &str) -> Result<u8, String> {
    let t = s.trim().replace(',', ".");
    let v: f64 = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| "escribe una fracción entre 0 y 1, como 0.9".to_owned())?;
    if !(0.05..=1.0).contains(&v) {
        return Err("la fracción debe estar entre 0,05 y 1".into());
    }
    Ok((v * 100.0).round() as u8)
}

fn zero_stage(s: &str) -> Result<u8, String> {
    match s.trim() {
        "0" => Ok(0),
        "1" => Ok(1),
        "2" => Ok(2),
        "3" => Ok(3),
        _ => Err("la etapa de ZeRO es 0, 1, 2 o 3".into()),
    }
}

fn small(s: &str) -> Result<u32, String> {
    count(s).and_then(|n| u32::try_from(n).map_err(|_| "demasiado grande".to_owned()))
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
    #[arg(long, value_enum, default_value = "inference")]
    pub mode: ModeArg,
    #[arg(long, value_enum, default_value = "full")]
    pub finetune: FinetuneArg,
    /// Formato de los pesos: fp32, bf16, nf4, gptq-4bit-128g, Q4_K_M, 4.65bpw…
    #[arg(long, value_parser = format, default_value = "bf16")]
    pub dtype: WeightFormat,
    #[arg(long, value_enum, default_value = "adamw")]
    pub optimizer: OptimizerArg,
    /// Copia maestra de los pesos en FP32 (precisión mixta).
    #[arg(long)]
    pub mixed_precision: bool,
    #[arg(long, allow_hyphen_values = true, value_parser = count, default_value = "1")]
    pub batch: u64,
    /// Longitud de la secuencia (o del prompt) en tokens.
    #[arg(long, allow_hyphen_values = true, value_parser = count, default_value = "4096")]
    pub seq: u64,
    /// Tokens generados tras el prompt.
    #[arg(long, allow_hyphen_values = true, value_parser = count, default_value = "0")]
    pub new_tokens: u64,
    #[arg(long)]
    pub grad_checkpointing: bool,
    #[arg(long, value_enum, default_value = "sdpa")]
    pub attention: AttentionArg,
    #[arg(long, allow_hyphen_values = true, value_parser = small, default_value = "16")]
    pub lora_rank: u32,
    #[arg(long, value_enum, default_value = "fp16")]
    pub kv_dtype: KvArg,
    #[arg(long, allow_hyphen_values = true, value_parser = small, default_value = "1")]
    pub gpus: u32,
    /// Etapa de ZeRO (0-3).
    #[arg(long, value_parser = zero_stage, default_value = "0")]
    pub zero: u8,
    #[arg(long)]
    pub fsdp: bool,
    #[arg(long, allow_hyphen_values = true, value_parser = small, default_value = "1")]
    pub tp: u32,
    #[arg(long, allow_hyphen_values = true, value_parser = small, default_value = "1")]
    pub pp: u32,
    /// GPU del catálogo (vramlab gpus).
    #[arg(long, conflicts_with = "gpu_memory")]
    pub gpu: Option<String>,
    /// Memoria por GPU: 24GiB, 80GB…
    #[arg(long, allow_hyphen_values = true, value_parser = size)]
    pub gpu_memory: Option<u64>,
    /// Descarga los estados del optimizador a la CPU (ZeRO-Offload).
    #[arg(long)]
    pub cpu_offload: bool,
    /// Planifica un servidor tipo vLLM: cuántos tokens de caché KV caben.
    #[arg(long)]
    pub serve: bool,
    /// Fracción de la GPU que usa el servidor (gpu_memory_utilization de vLLM).
    #[arg(long, value_parser = fraction, default_value = "0.9")]
    pub gpu_memory_utilization: u8,
    /// Tokens por bloque de la caché paginada.
    #[arg(long, allow_hyphen_values = true, value_parser = small, default_value = "16")]
    pub block_size: u32,
    /// Contexto CUDA (por defecto, el de la familia de --gpu; 500 MiB sin GPU).
    #[arg(long, allow_hyphen_values = true, value_parser = size)]
    pub cuda_context: Option<u64>,
    /// Salida en JSON.
    #[arg(long)]
    pub json: bool,
}

/// The JSON contract of DESIGN.md, plus context.
#[derive(Debug, Serialize)]
struct Output {
    model: Option<String>,
    params: u64,
    active_params: u64,
    trainable_params: u64,
    total_bytes: u64,
    breakdown: Breakdown,
    per_gpu_bytes: u64,
    gpus: u32,
    gpu: Option<String>,
    capacity_bytes: Option<u64>,
    fits: Option<bool>,
    max_batch_fit: Option<u64>,
    max_seq_fit: Option<u64>,
    /// Smallest catalog GPU that holds the workload.
    smallest_gpu: Option<String>,
    /// Fewest GPUs of the chosen capacity (ZeRO-3 for training, TP for inference).
    min_gpus: Option<u32>,
    speed: Option<vram::speed::SpeedHint>,
    serving: Option<vram::serving::ServingPlan>,
    notes: Vec<String>,
}

/// The model, its display name, notes, and the exact weights of a file when given.
struct Loaded {
    model: ModelInput,
    name: Option<String>,
    notes: Vec<String>,
    stored: Option<TensorTotal>,
}

fn arch_model(arch: vram::Architecture, total_params: Option<u64>) -> ModelInput {
    ModelInput::Arch {
        arch: Box::new(arch),
        total_params,
    }
}

fn load_model(args: &Args) -> Result<Loaded, String> {
    let mut loaded = match (&args.model, args.params) {
        (Some(m), _) => {
            if let Some(p) = catalog::model(m) {
                Loaded {
                    model: arch_model(p.arch.clone(), args.total_params),
                    name: Some(p.name.clone()),
                    notes: Vec::new(),
                    stored: None,
                }
            } else if m.ends_with(".gguf") {
                let Header::Gguf(h) = read_header(m)? else {
                    return Err(format!("{}: no es un archivo GGUF", shown(m)));
                };
                let (arch, notes) =
                    gguf_arch::architecture(&h).map_err(|e| format!("{}: {e}", shown(m)))?;
                Loaded {
                    model: arch_model(arch, args.total_params.or(Some(h.total.params))),
                    name: Some(shown(m)),
                    notes,
                    stored: Some(h.total),
                }
            } else {
                let path = Path::new(m);
                let looks_like_file = m.ends_with(".json") || m.contains('/') || m.contains('\\');
                if !looks_like_file {
                    return Err(format!(
                        "no hay ningún modelo «{}» en el catálogo (mira «vramlab models») ni es una ruta a un config.json o a un .gguf",
                        vram::units::clip(m)
                    ));
                }
                let meta = std::fs::metadata(path)
                    .map_err(|e| format!("no se puede leer {}: {e}", path.display()))?;
                if meta.len() > hf_config::MAX_CONFIG_BYTES as u64 {
                    return Err(format!(
                        "{} es demasiado grande para ser un config.json",
                        path.display()
                    ));
                }
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("no se puede leer {}: {e}", path.display()))?;
                let (arch, notes) =
                    hf_config::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
                Loaded {
                    model: arch_model(arch, args.total_params),
                    name: Some(path.display().to_string()),
                    notes,
                    stored: None,
                }
            }
        }
        (None, Some(n)) => Loaded {
            model: ModelInput::Params(n),
            name: None,
            notes: Vec::new(),
            stored: None,
        },
        (None, None) => {
            return Err("indica --model <id, config.json o .gguf> o --params <número>".into());
        }
    };
    if let Some(f) = &args.weights_file {
        let total = read_header(f)?.total();
        if let ModelInput::Arch { total_params, .. } = &mut loaded.model
            && args.total_params.is_none()
        {
            *total_params = Some(total.params);
        }
        loaded.stored = Some(total);
    }
    if let (Some(t), Some(file)) = (
        loaded.stored,
        args.weights_file.as_ref().or(args.model.as_ref()),
    ) {
        loaded.notes.push(match args.mode {
            ModeArg::Inference => format!(
                "Pesos: {} exactos, de la cabecera de {} ({} tensores, {} parámetros).",
                ByteSize(t.bytes).binary(),
                shown(file),
                group_digits(t.tensors),
                group_digits(t.params)
            ),
            ModeArg::Train => format!(
                "Los bytes exactos de {} solo valen para inferencia: al entrenar, los pesos se cuentan con --dtype.",
                shown(file)
            ),
        });
    }
    Ok(loaded)
}

fn workload(args: &Args) -> Workload {
    Workload {
        mode: match args.mode {
            ModeArg::Inference => Mode::Inference,
            ModeArg::Train => Mode::Train,
        },
        finetune: match args.finetune {
            FinetuneArg::Full => Finetune::Full,
            FinetuneArg::Lora => Finetune::Lora,
            FinetuneArg::Qlora => Finetune::Qlora,
        },
        weights: args.dtype,
        mixed_precision: args.mixed_precision,
        optimizer: match args.optimizer {
            OptimizerArg::Adamw => Optimizer::Adamw,
            OptimizerArg::Adamw8bit => Optimizer::Adamw8bit,
            OptimizerArg::Adafactor => Optimizer::Adafactor,
            OptimizerArg::Sgd => Optimizer::Sgd,
            OptimizerArg::SgdMomentum => Optimizer::SgdMomentum,
            OptimizerArg::PagedAdamw => Optimizer::PagedAdamw,
            OptimizerArg::PagedAdamw8bit => Optimizer::PagedAdamw8bit,
        },
        batch: args.batch,
        seq: args.seq,
        new_tokens: args.new_tokens,
        grad_checkpointing: args.grad_checkpointing,
        attention: match args.attention {
            AttentionArg::Eager => Attention::Eager,
            AttentionArg::Sdpa => Attention::Sdpa,
            AttentionArg::Flash => Attention::Flash,
        },
        lora_rank: args.lora_rank,
        kv_dtype: match args.kv_dtype {
            KvArg::Fp16 => KvDtype::Fp16,
            KvArg::Fp8 => KvDtype::Fp8,
            KvArg::Int8 => KvDtype::Int8,
            KvArg::Int4 => KvDtype::Int4,
        },
        gpus: args.gpus,
        zero: args.zero,
        fsdp: args.fsdp,
        tp: args.tp,
        pp: args.pp,
        cpu_offload: args.cpu_offload,
        cuda_context: args.cuda_context,
        stored_weights: None,
    }
}

pub fn run(args: &Args) -> Result<String, String> {
    let Loaded {
        model,
        name: model_name,
        mut notes,
        stored,
    } = load_model(args)?;
    let mut w = workload(args);
    w.stored_weights = stored.map(|t| t.bytes);
    let gpu: Option<&Gpu> = match &args.gpu {
        Some(id) => Some(catalog::gpu(id).ok_or_else(|| {
            format!(
                "no hay ninguna GPU «{}» en el catálogo (mira «vramlab gpus»)",
                vram::units::clip(id)
            )
        })?),
        None => None,
    };
    let capacity = gpu.map(|g| g.memory_bytes).or(args.gpu_memory);
    if let (None, Some(g)) = (args.cuda_context, gpu) {
        let d = vram::context::for_family(&g.family);
        w.cuda_context = Some(d.bytes);
        notes.push(format!(
            "Contexto CUDA de {} para {}: {}. Mide el tuyo con nvidia-smi tras torch.ones(1).cuda() y pásalo con --cuda-context.",
            ByteSize(d.bytes).binary(),
            g.name,
            d.basis
        ));
    }
    let est = estimate(&model, &w).map_err(|e| e.to_string())?;
    notes.extend(est.notes.iter().cloned());
    let arch = match &model {
        ModelInput::Arch { arch, .. } => Some(arch.as_ref()),
        ModelInput::Params(_) => None,
    };
    let speed = match (arch, gpu) {
        (Some(a), Some(g)) => vram::speed::speed(a, &w, &est, g),
        _ => None,
    };
    let serving = if args.serve {
        let (Some(a), Some(cap)) = (arch, capacity) else {
            return Err(
                "--serve necesita un modelo con arquitectura y --gpu o --gpu-memory".into(),
            );
        };
        if w.mode != Mode::Inference {
            return Err("--serve solo tiene sentido con --mode inference".into());
        }
        Some(vram::serving::plan(
            a,
            &w,
            &est,
            cap,
            args.gpu_memory_utilization,
            args.block_size,
        ))
    } else {
        None
    };
    let out = Output {
        model: model_name,
        params: est.params.total,
        active_params: est.params.active,
        trainable_params: est.trainable_params,
        total_bytes: est.total_bytes,
        breakdown: est.breakdown,
        per_gpu_bytes: est.per_gpu_bytes,
        gpus: est.gpus,
        gpu: gpu.map(|g| g.name.clone()),
        capacity_bytes: capacity,
        fits: capacity.map(|c| est.per_gpu_bytes <= c),
        max_batch_fit: capacity.and_then(|c| solve::max_batch(&model, &w, c)),
        max_seq_fit: capacity.and_then(|c| solve::max_seq(&model, &w, c)),
        smallest_gpu: solve::smallest_gpu(&model, &w).map(|g| g.name.clone()),
        min_gpus: capacity.and_then(|c| solve::fewest_gpus(&model, &w, c)),
        speed,
        serving,
        notes,
    };
    if args.json {
        return serde_json::to_string_pretty(&out)
            .map(|s| s + "\n")
            .map_err(|e| e.to_string());
    }
    let mut text = String::new();
    if let Some(name) = &out.model {
        text.push_str(&format!("Modelo: {name}\n"));
    }
    text.push_str(&format!(
        "Parámetros: {}{}\n",
        vram::group_digits(out.params),
        if out.active_params != out.params {
            format!(
                " ({} activos por token)",
                vram::group_digits(out.active_params)
            )
        } else {
            String::new()
        }
    ));
    if out.trainable_params > 0 {
        text.push_str(&format!(
            "Entrenables: {}\n",
            vram::group_digits(out.trainable_params)
        ));
    }
    text.push('\n');
    let b = &out.breakdown;
    let rows = [
        ("Pesos", b.weights),
        ("Gradientes", b.gradients),
        ("Optimizador", b.optimizer),
        ("Activaciones", b.activations),
        ("Caché KV", b.kv_cache),
        ("Sobrecarga (CUDA + asignador)", b.overhead),
    ];
    text.push_str(&table::bytes_table(
        &rows,
        "Total por GPU",
        out.per_gpu_bytes,
    ));
    if out.gpus > 1 {
        text.push_str(&format!(
            "Total en {} GPU: {}\n",
            out.gpus,
            ByteSize(out.total_bytes)
        ));
    }
    if let (Some(c), Some(fits)) = (out.capacity_bytes, out.fits) {
        let target = out.gpu.clone().unwrap_or_else(|| "la GPU".into());
        text.push('\n');
        if fits {
            text.push_str(&format!(
                "Cabe en {target} ({}): sobran {}.\n",
                ByteSize(c).binary(),
                ByteSize(c - out.per_gpu_bytes).binary()
            ));
        } else {
            text.push_str(&format!(
                "No cabe en {target} ({}): faltan {}.\n",
                ByteSize(c).binary(),
                ByteSize(out.per_gpu_bytes - c).binary()
            ));
        }
        match out.max_batch_fit {
            Some(n) => text.push_str(&format!(
                "Lote máximo que cabe: {}\n",
                vram::group_digits(n)
            )),
            None => text.push_str("Ni siquiera un lote de 1 cabe.\n"),
        }
        if let Some(n) = out.max_seq_fit {
            text.push_str(&format!(
                "Secuencia máxima que cabe: {} tokens\n",
                vram::group_digits(n)
            ));
        }
    }
    if let Some(name) = &out.smallest_gpu {
        text.push_str(&format!(
            "GPU más pequeña del catálogo en la que cabe: {name}\n"
        ));
    }
    if let Some(n) = out.min_gpus.filter(|&n| n > 1) {
        text.push_str(&format!(
            "GPU de esa capacidad necesarias como mínimo: {n}\n"
        ));
    }
    if let Some(h) = &out.speed {
        text.push_str(&format!(
            "\nVelocidad máxima teórica (roofline; en la práctica, un 40-70 %):\n  tiempo hasta el primer token ≥ {:.1} ms\n  generación ≤ {:.0} tokens/s por secuencia ({:.0} en total)\n",
            h.ttft_seconds * 1000.0,
            h.decode_tokens_per_second,
            h.decode_tokens_per_second_total
        ).replace('.', ","));
    }
    if let Some(p) = &out.serving {
        text.push_str(&format!(
            "\nServidor (gpu_memory_utilization {} %): {} para la caché KV = {} bloques = {} tokens; {} secuencias de {} tokens a la vez.\n",
            args.gpu_memory_utilization,
            ByteSize(p.kv_budget_bytes).binary(),
            vram::group_digits(p.blocks),
            vram::group_digits(p.tokens),
            vram::group_digits(p.max_sequences),
            vram::group_digits(args.seq.saturating_add(args.new_tokens))
        ));
    }
    for note in &out.notes {
        text.push_str(&format!("Nota: {note}\n"));
    }
    Ok(text)
}
