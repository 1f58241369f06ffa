//! An `Evaluation` for the terminal (a table and sentences) or as the JSON contract.

use serde::Serialize;
use std::collections::BTreeMap;

use vram::estimate::Breakdown;
use vram::settings::FIELDS;
use vram::{ByteSize, Evaluation, Settings, Surface, Verdict, group_digits};

use super::model::Loaded;
use crate::table;
use vram::launch::Launch;

/// The JSON contract (docs/cli-json.md).
#[derive(Debug, Serialize)]
struct Output<'a> {
    model: Option<&'a str>,
    params: u64,
    active_params: u64,
    trainable_params: u64,
    total_bytes: u64,
    breakdown: Breakdown,
    per_gpu_bytes: u64,
    gpus: u32,
    gpu: Option<&'a str>,
    capacity_bytes: Option<u64>,
    fits: Option<bool>,
    /// "fits", "tight", "does-not-fit", "serves", "tight-serve", "cannot-serve",
    /// "wont-start", "graphs-do-not-fit" or "refused".
    verdict: Option<&'static str>,
    /// The runtime's error band from the validation cases.
    band: Option<vram::band::Band>,
    max_batch_fit: Option<u64>,
    max_seq_fit: Option<u64>,
    max_batch_fit_margin: Option<u64>,
    max_seq_fit_margin: Option<u64>,
    /// llama.cpp/Ollama: the most layers `-ngl` fits (layers + 1 = all and the output).
    max_gpu_layers_fit: Option<u32>,
    /// The model's layers, with `max_gpu_layers_fit`.
    layers: Option<u32>,
    /// llama.cpp with a MoE model: the fewest first layers whose experts must stay in
    /// CPU RAM (`--n-cpu-moe`) to fit; 0 when every expert fits on the GPU.
    min_cpu_moe_fit: Option<u32>,
    /// llama.cpp/Ollama: bytes in CPU RAM (embeddings, layers and experts left off the
    /// GPU).
    host_bytes: u64,
    /// llama.cpp/Ollama with layers or experts in CPU RAM: how the estimate splits
    /// the model (after `-ngl auto`'s fit, or as `--gpu-layers`/`--n-cpu-moe` asked).
    cpu_split: Option<vram::evaluate::CpuSplit>,
    /// llama.cpp/Ollama with `--mmproj`: the vision projector's weights and compute
    /// buffer, already in the breakdown.
    projector: Option<vram::mmproj::Projector>,
    smallest_gpu: Option<&'a str>,
    min_gpus: Option<u32>,
    speed: Option<vram::speed::SpeedHint>,
    serving: Option<vram::serving::ServingPlan>,
    /// The prompt tokens estimated: `--seq`, or with `--seq auto` the context the
    /// runtime opens less `--new-tokens`.
    seq_tokens: u64,
    /// The format the weights were counted in: `--dtype`, or what `auto` resolved to.
    weights_format: String,
    /// The architecture is none the engine models: a generic transformer's figures.
    approximate: bool,
    /// Every setting in effect, by canonical id: numbers, booleans, or the CLI's ids.
    settings: BTreeMap<&'static str, serde_json::Value>,
    /// The command that runs it (vLLM, llama.cpp, Ollama), each flag with its reason.
    launch: Option<Launch>,
    /// When it does not fit with margin: the levers that make it fit, cheapest first.
    plan: Vec<vram::plan::Candidate>,
    notes: Vec<String>,
}

fn notes(loaded: &Loaded, e: &Evaluation) -> Vec<String> {
    loaded
        .notes
        .iter()
        .cloned()
        .chain(e.notes.iter().map(|n| n.text(Surface::Cli)))
        .collect()
}

pub fn json(loaded: &Loaded, s: &Settings, e: &Evaluation) -> Result<String, String> {
    let est = &e.estimate;
    let out = Output {
        model: loaded.name.as_deref(),
        params: est.params.total,
        active_params: est.params.active,
        trainable_params: est.trainable_params,
        total_bytes: est.total_bytes,
        breakdown: est.breakdown,
        per_gpu_bytes: est.per_gpu_bytes,
        gpus: est.gpus,
        gpu: s.gpu.map(|g| g.name.as_str()),
        capacity_bytes: e.capacity,
        fits: e.verdict.map(Verdict::fits),
        verdict: e.verdict.map(Verdict::id),
        band: e.band,
        max_batch_fit: e.max_batch,
        max_seq_fit: e.max_seq,
        max_batch_fit_margin: e.margin.batch,
        max_seq_fit_margin: e.margin.seq,
        max_gpu_layers_fit: e.max_gpu_layers.map(|l| l.fit),
        layers: e.max_gpu_layers.map(|l| l.layers),
        min_cpu_moe_fit: e.min_cpu_moe.map(|l| l.fit),
        host_bytes: est.host_bytes.saturating_add(est.offloaded_to_ram),
        cpu_split: e.cpu_split,
        projector: est.projector,
        smallest_gpu: e.smallest_gpu.map(|g| g.name.as_str()),
        min_gpus: e.min_gpus,
        speed: e.speed,
        serving: e.serving,
        seq_tokens: e.workload.seq,
        weights_format: e.workload.weights.id(),
        approximate: e.approximate,
        settings: FIELDS
            .iter()
            .filter_map(|spec| {
                let text = s.text(spec.field, Surface::Cli)?;
                let value = match (text.parse::<u64>(), text.as_str()) {
                    (Ok(n), _) => n.into(),
                    (_, "true") => true.into(),
                    (_, "false") => false.into(),
                    _ => text.into(),
                };
                Some((spec.field.id(), value))
            })
            .collect(),
        notes: notes(loaded, e),
        launch: launch(loaded, s, e),
        plan: plan(loaded, s, e),
    };
    serde_json::to_string_pretty(&out)
        .map(|s| s + "\n")
        .map_err(|e| format!("no se pudo escribir el JSON: {e}"))
}

pub fn text(loaded: &Loaded, s: &Settings, e: &Evaluation) -> String {
    let est = &e.estimate;
    let mut text = String::new();
    if let Some(name) = &loaded.name {
        text.push_str(&format!("Modelo: {name}\n"));
    }
    text.push_str(&format!("Parámetros: {}", group_digits(est.params.total)));
    if est.params.active != est.params.total {
        text.push_str(&format!(
            " ({} activos por token)",
            group_digits(est.params.active)
        ));
    }
    text.push('\n');
    if est.trainable_params > 0 {
        text.push_str(&format!(
            "Entrenables: {}\n",
            group_digits(est.trainable_params)
        ));
    }
    text.push('\n');
    let b = &est.breakdown;
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
        est.per_gpu_bytes,
    ));
    if est.gpus > 1 {
        text.push_str(&format!(
            "Total en {} GPU: {}\n",
            est.gpus,
            ByteSize(est.total_bytes)
        ));
    }
    if let Some(c) = e.opened {
        text.push_str(&format!(
            "\nContexto automático (--seq auto): {} tokens, el que abre el motor por su cuenta\n",
            group_digits(c.tokens())
        ));
    }
    let target = s.gpu.map_or("la GPU", |g| g.name.as_str());
    if let Some(verdict) = e.verdict_text(Some(target), Surface::Cli) {
        text.push('\n');
        text.push_str(&verdict);
        text.push('\n');
        match e.max_batch {
            Some(n) => text.push_str(&format!(
                "Lote máximo que cabe: {}\n",
                vram::with_margin(n, e.margin.batch, "")
            )),
            // A server that does not start has no limits; the verdict said why.
            None if e.verdict.is_some_and(|v| !v.starts()) => {}
            None => text.push_str("Ni siquiera un lote de 1 cabe.\n"),
        }
        if let Some(n) = e.max_seq {
            text.push_str(&format!(
                "Secuencia máxima que cabe: {}\n",
                vram::with_margin(n, e.margin.seq, " tokens")
            ));
        }
    }
    if let Some(l) = e.max_gpu_layers {
        text.push_str(&if l.all() {
            format!(
                "Capas en la GPU: cabrían todas ({} y la de salida; -ngl {})\n",
                l.layers, l.fit
            )
        } else {
            format!(
                "Capas que caben en la GPU, sin dejar margen: {} (-ngl {})\n",
                l.placed_text(),
                l.fit
            )
        });
    }
    if let Some(m) = e.min_cpu_moe.filter(|m| m.fit > 0) {
        text.push_str(&format!(
            "Capas con expertos en la CPU para que quepa aun en el extremo alto de la banda: {} de {} (--n-cpu-moe {})\n",
            m.fit, m.layers, m.fit
        ));
    }
    if let Some(g) = e.smallest_gpu {
        text.push_str(&format!(
            "GPU más pequeña del catálogo en la que cabe: {}\n",
            g.name
        ));
    }
    if let Some(n) = e.min_gpus.filter(|&n| n > 1) {
        let like = match (s.gpu_memory, s.gpu) {
            (None, Some(g)) => format!("como la {}", g.name),
            _ => format!("de {}", ByteSize(e.capacity.unwrap_or(0)).binary()),
        };
        text.push_str(&format!("GPU {like} necesarias como mínimo: {n}\n"));
    }
    if let Some(h) = &e.speed {
        text.push_str(&format!(
            "\nVelocidad máxima teórica (roofline; en la práctica, un 40-70 %):\n  tiempo hasta el primer token ≥ {}\n  generación ≤ {:.0} tokens/s por secuencia ({:.0} en total)\n",
            vram::duration_text(h.ttft_seconds),
            h.decode_tokens_per_second,
            h.decode_tokens_per_second_total
        ).replace('.', ","));
        if h.host_bytes_per_step > 0.0 {
            text.push_str(&format!(
                "  de cada paso, {} se leen de la RAM de la CPU, a {} GB/s{}\n",
                ByteSize(h.host_bytes_per_step as u64).binary(),
                s.ram_gbs,
                if s.ram_gbs == vram::speed::DEFAULT_RAM_GBS {
                    " (DDR5 de doble canal; --ram-bandwidth pone la tuya)"
                } else {
                    ""
                }
            ));
        }
    }
    if let Some(p) = &e.serving {
        let would = match e.verdict {
            Some(Verdict::WontStart { .. } | Verdict::TpRefused { .. }) => "Si arrancara, servidor",
            Some(Verdict::GraphsDoNotFit { .. }) => "Hasta capturar los grafos CUDA, servidor",
            _ => "Servidor",
        };
        text.push_str(&format!(
            "\n{would} (gpu_memory_utilization {} %): {} para la caché KV = {} bloques = {} tokens; {} de {} tokens a la vez.\n",
            vram::settings::percent_text(s.utilization),
            ByteSize(p.kv_budget_bytes).binary(),
            group_digits(p.blocks),
            group_digits(p.tokens),
            vram::counted(p.max_sequences, "secuencia", "secuencias"),
            group_digits(e.workload.seq.saturating_add(e.workload.new_tokens))
        ));
        if p.cuda_graph_bytes > 0 {
            text.push_str(&format!(
                "Grafos CUDA: {}, {}.\n",
                ByteSize(p.cuda_graph_bytes).binary(),
                match p.cuda_graphs {
                    vram::settings::CudaGraphs::Profiled => "ya descontados de la caché KV",
                    _ => "por encima de gpu_memory_utilization",
                }
            ));
        }
    }
    if let Some(l) = launch(loaded, s, e) {
        text.push_str(&launch_text(&l));
    }
    text.push_str(&plan_text(
        &plan(loaded, s, e),
        e.speed.map(|h| h.decode_tokens_per_second),
    ));
    for note in notes(loaded, e) {
        text.push_str(&format!("Nota: {note}\n"));
    }
    text
}

/// How a launch command names the model.
fn model_arg(loaded: &Loaded, s: &Settings) -> vram::launch::ModelArg {
    vram::launch::model_arg(s.runtime, loaded.hub.as_deref(), loaded.file.as_deref())
}

/// The launch command for what was estimated, if its runtime has one.
pub fn launch(loaded: &Loaded, s: &Settings, e: &Evaluation) -> Option<Launch> {
    vram::launch::launch(&model_arg(loaded, s), s, e)
}

/// The candidates that make it fit, when it does not with margin.
fn plan(loaded: &Loaded, s: &Settings, e: &Evaluation) -> Vec<vram::plan::Candidate> {
    vram::plan::plan(
        &loaded.model,
        s,
        e,
        loaded.hub.as_deref(),
        loaded.file.as_deref(),
    )
}

/// The plan as a numbered list: what changes, its bytes and verdict, what it costs and
/// the flags that give it.
fn plan_text(candidates: &[vram::plan::Candidate], now: Option<f64>) -> String {
    if candidates.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nPara que quepa (primero lo que menos cuesta):\n");
    for (i, c) in candidates.iter().enumerate() {
        if i > 0 && !c.fits && candidates[i - 1].fits {
            out.push_str("  Ayudan, pero no bastan solos:\n");
        }
        out.push_str(&format!(
            "  {}. {}: {}\n     {}\n",
            i + 1,
            c.change,
            c.summary(now),
            c.flags.join(" ")
        ));
    }
    out
}

/// The command, indented, then each flag's reason.
fn launch_text(l: &Launch) -> String {
    let mut out = format!(
        "\nPara lanzarlo ({}){}:\n",
        l.runtime,
        if l.fits {
            ""
        } else {
            "; con esta estimación no cabe, y así se quedaría sin memoria"
        }
    );
    for line in l.command.lines() {
        out.push_str(&format!("  {line}\n"));
    }
    for a in &l.args {
        out.push_str(&format!("  · {}: {}\n", a.shown(), a.why));
    }
    if let Some(p) = &l.placeholder {
        out.push_str(&format!("  · {}: pon aquí {}\n", p.flag, p.why));
    }
    out
}
