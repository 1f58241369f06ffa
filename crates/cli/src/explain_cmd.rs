//! `vramlab explain`: an OOM message, a traceback or a `memory_summary()` table → the
//! numbers it holds and a ranked diagnosis (the `oom` crate), as Spanish text or JSON.
//!
//! Exit codes follow `docs/cli-json.md`: a recognised message (even cut short) and unrecognised
//! text both exit 0 (the latter with `"kind": "unknown"`); only input that cannot be
//! read (missing file, over 64 MiB) is an error, exit 2.

use oom::{Decoded, Era, Explanation, Kind};
use vram::ByteSize;

/// The largest paste read; a whole training log rarely reaches it.
const MAX_INPUT_BYTES: u64 = 64 << 20;
/// Width the explanations are wrapped to.
const WIDTH: usize = 88;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Archivo con el mensaje de error o la tabla de torch.cuda.memory_summary() («-» o
    /// nada: la entrada estándar).
    #[arg(value_name = "ARCHIVO")]
    pub file: Option<String>,
    /// Escribe el resultado en JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &Args) -> Result<String, String> {
    let text = read(args.file.as_deref().unwrap_or("-"))?;
    let explanation = oom::explain(&text);
    if args.json {
        let json = Json {
            plan: diag_worker::plan::of(&explanation.primary),
            explanation: &explanation,
        };
        return serde_json::to_string_pretty(&json)
            .map(|s| s + "\n")
            .map_err(|e| e.to_string());
    }
    Ok(human(&explanation))
}

/// `--json`: the explanation, with the run the log describes in the estimator.
#[derive(serde::Serialize)]
struct Json<'a> {
    #[serde(flatten)]
    explanation: &'a Explanation,
    plan: Option<diag_worker::plan::RunPlan>,
}

/// The paste from a file or stdin, decoded lossily (logs are not always UTF-8).
fn read(path: &str) -> Result<String, String> {
    let bytes = crate::input::read_capped(path, MAX_INPUT_BYTES, "")?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

fn human(e: &Explanation) -> String {
    let mut out = String::new();
    let d = &e.primary;
    out.push_str(&headline(d));
    out.push('\n');
    if let Some(exception) = &d.exception {
        out.push_str(&format!("Excepción: {exception}\n"));
    }
    if d.truncated {
        out.push_str("Aviso: el texto parece cortado; lo que falta no es cero, es desconocido.\n");
    }
    let mut numbers = match d.kind {
        Kind::MemorySummary => summary_table(d),
        Kind::VllmKvCache => kv_cache(d),
        _ => message_numbers(d),
    };
    if let Some(g) = &d.ggml_memory {
        numbers.push_str("Reparto de llama.cpp al cargar\n");
        for (label, value) in oom::format::ggml_rows(g) {
            numbers.push_str(&format!("  {label}: {value}\n"));
        }
    }
    if let Some(m) = &d.ollama_memory {
        numbers.push_str("Cálculo de Ollama al cargar\n");
        for (label, value) in oom::format::ollama_rows(m) {
            let label = label.strip_prefix("Ollama: ").unwrap_or(&label);
            numbers.push_str(&format!("  {label}: {value}\n"));
        }
    }
    if let Some(m) = &d.frontend_memory {
        numbers.push_str(if m.frontend == "comfyui" {
            "Carga del modelo en ComfyUI\n"
        } else {
            "Pie de memoria de la webui\n"
        });
        for (label, value) in oom::format::frontend_rows(m) {
            let label = label.split_once(": ").map_or(label.as_str(), |(_, l)| l);
            numbers.push_str(&format!("  {label}: {value}\n"));
        }
    }
    if let Some(m) = &d.vllm_memory {
        numbers.push_str("Reparto de vLLM al arrancar\n");
        for (label, value) in oom::format::vllm_rows(m) {
            numbers.push_str(&format!("  {label}: {value}\n"));
        }
    }
    if let Some(text) = crate::explain_reconcile::reconciliation(d) {
        numbers.push('\n');
        numbers.push_str(&text);
    }
    if let Some(text) = crate::explain_reconcile::plan(d) {
        numbers.push('\n');
        numbers.push_str(&text);
    }
    if !numbers.is_empty() {
        out.push('\n');
        out.push_str(&numbers);
    }
    out.push_str("\nDiagnóstico, de más a menos probable\n");
    for (i, cause) in e.diagnosis.iter().enumerate() {
        out.push_str(&format!("{}. {}\n", i + 1, cause.title));
        out.push_str(&wrap(&cause.explanation, "   "));
        out.push_str(&wrap(&format!("Qué hacer: {}", cause.fix), "   "));
        out.push_str(&format!("   Guía: {}\n", cause.guide_url()));
    }
    if !e.notes.is_empty() {
        out.push_str("\nNotas\n");
        for note in &e.notes {
            out.push_str(&wrap(&format!("- {note}"), "  ").replacen("  - ", "- ", 1));
        }
    }
    if !e.messages.is_empty() {
        out.push_str("\nOtros mensajes del texto (usa --json para ver todas sus cifras):\n");
        for m in &e.messages {
            let numbers = oom::format::key_numbers(m);
            if numbers.is_empty() {
                out.push_str(&format!("- {}\n", headline(m)));
            } else {
                out.push_str(&format!("- {}: {numbers}\n", headline(m)));
            }
        }
    }
    out
}

fn headline(d: &Decoded) -> String {
    let what = match d.kind {
        Kind::PytorchOom if d.allocator == Some(oom::Allocator::CudaMallocAsync) => {
            "Error de memoria de PyTorch con CUDA (asignador cudaMallocAsync)"
        }
        kind => kind.title(),
    };
    let mut line = what.to_owned();
    if let Some(era) = d.pytorch_era {
        line.push_str(match era {
            Era::V2018 => ", formato de PyTorch 1.0–1.3 (2018–2019)",
            Era::V14To20 => ", formato de PyTorch 1.4–2.0",
            Era::V21Plus => ", formato de PyTorch 2.1 o posterior",
        });
    }
    if let Some(gpu) = d.gpu_index {
        line.push_str(&format!(", GPU {gpu}"));
    }
    if let Some(b) = d.buffer.as_deref() {
        line.push_str(&format!(", búfer para {}", oom::format::buffer_purpose(b)));
    }
    line
}

/// Aligned `label   binary   decimal` rows.
fn rows(rows: &[(String, u64)]) -> String {
    let width = rows
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (label, bytes) in rows {
        let pad = width - label.chars().count();
        out.push_str(&format!(
            "  {label}{}  {:>12}  {:>12}\n",
            " ".repeat(pad),
            ByteSize(*bytes).binary(),
            ByteSize(*bytes).decimal()
        ));
    }
    out
}

fn message_numbers(d: &Decoded) -> String {
    let mps = d.kind == Kind::MpsOom;
    let outside = matches!(d.kind, Kind::GgmlOom | Kind::HostOom | Kind::XlaOom);
    let fields: [(&str, Option<u64>); 12] = [
        (
            if outside {
                "Pedido"
            } else {
                "Pedido («Tried to allocate»)"
            },
            d.requested_bytes,
        ),
        (
            if mps {
                "Tope de MPS («max allowed»)"
            } else {
                "Capacidad total de la GPU"
            },
            d.total_bytes,
        ),
        (
            if d.kind == Kind::HostOom {
                "RAM disponible"
            } else {
                "Libre en la GPU"
            },
            d.free_bytes,
        ),
        ("En uso por este proceso", d.process_in_use_bytes),
        (
            if mps {
                "Asignado por MPS (tensores)"
            } else {
                "Asignado por PyTorch (tensores)"
            },
            d.allocated_bytes,
        ),
        ("Activo (current active)", d.active_bytes),
        (
            "Reservado por PyTorch sin usar",
            d.reserved_unallocated_bytes,
        ),
        ("Reservado por PyTorch en total", d.reserved_total_bytes),
        ("En pools privados (CUDA Graphs)", d.private_pools_bytes),
        ("Tope del proceso (memory fraction)", d.allowed_bytes),
        ("Otras reservas de Metal", d.other_allocations_bytes),
        (
            "Límite del espacio de trabajo de cuDNN",
            d.workspace_limit_bytes,
        ),
    ];
    let mut list: Vec<(String, u64)> = fields
        .iter()
        .filter_map(|(l, v)| v.map(|v| ((*l).to_owned(), v)))
        .collect();
    for p in &d.other_processes {
        let who = if p.likely_self {
            format!("Proceso {} (probablemente este mismo)", p.pid)
        } else {
            format!("Otro proceso, PID {}", p.pid)
        };
        list.push((who, p.bytes));
    }
    let unset = if d.fraction_unset {
        "  Límite de PyTorch (fracción): ninguno; imprime 2^64 bytes, el valor de «sin límite»\n"
    } else {
        ""
    };
    if list.is_empty() && unset.is_empty() {
        return String::new();
    }
    format!("Cifras del mensaje\n{}{unset}", rows(&list))
}

fn kv_cache(d: &Decoded) -> String {
    let Some(kv) = &d.kv_cache else {
        return String::new();
    };
    let mut out = String::from("Cifras del mensaje\n");
    let tokens = |label: &str, v: Option<u64>| {
        v.map(|n| format!("  {label}: {} tokens\n", oom::format::count(n)))
            .unwrap_or_default()
    };
    out.push_str(&tokens(
        "Longitud máxima del modelo (max_model_len)",
        kv.max_seq_len,
    ));
    out.push_str(&tokens("Tokens que caben en la caché KV", kv.max_kv_tokens));
    out.push_str(&tokens(
        "Longitud máxima estimada con esa memoria",
        kv.estimated_max_len,
    ));
    let sizes: Vec<(String, u64)> = [
        ("Caché KV necesaria", kv.needed_bytes),
        ("Caché KV disponible", kv.available_bytes),
    ]
    .iter()
    .filter_map(|(l, v)| v.map(|v| ((*l).to_owned(), v)))
    .collect();
    out.push_str(&rows(&sizes));
    out
}

fn summary_table(d: &Decoded) -> String {
    let Some(table) = &d.summary else {
        return String::new();
    };
    let mut out = String::new();
    let counters = [
        ("Reintentos de cudaMalloc", table.cuda_malloc_retries),
        ("OOMs de CUDA", table.cuda_ooms),
    ];
    let counters: Vec<String> = counters
        .iter()
        .filter_map(|(l, v)| v.map(|v| format!("{l}: {v}")))
        .collect();
    if !counters.is_empty() {
        out.push_str(&format!("{}\n\n", counters.join(" · ")));
    }
    let cell = |row: &oom::SummaryRow, v: Option<u64>| match (row.unit, v) {
        (_, None) => "?".to_owned(),
        (oom::RowUnit::Bytes, Some(b)) => {
            format!("{} ({})", ByteSize(b).binary(), ByteSize(b).decimal())
        }
        (oom::RowUnit::Count, Some(n)) => oom::format::count(n),
    };
    let lines: Vec<(String, String, String)> = table
        .rows
        .iter()
        .map(|r| (r.label.clone(), cell(r, r.all.current), cell(r, r.all.peak)))
        .collect();
    let w0 = lines.iter().map(|l| l.0.chars().count()).max().unwrap_or(0);
    let w1 = lines
        .iter()
        .map(|l| l.1.chars().count())
        .chain(["Actual".len()])
        .max()
        .unwrap_or(0);
    out.push_str(&format!("  {}  {:<w1$}  Pico\n", " ".repeat(w0), "Actual"));
    for (label, current, peak) in &lines {
        let pad0 = w0 - label.chars().count();
        let pad1 = w1 - current.chars().count();
        out.push_str(&format!(
            "  {label}{}  {current}{}  {peak}\n",
            " ".repeat(pad0),
            " ".repeat(pad1)
        ));
    }
    out.push_str("\nQué significa cada fila\n");
    for row in &table.rows {
        out.push_str(
            &wrap(&format!("- {}. {}", row.label, row.meaning), "  ").replacen("  - ", "- ", 1),
        );
    }
    out
}

/// Wraps `text` at [`WIDTH`] columns, every line starting with `indent`.
fn wrap(text: &str, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::from(indent);
    let mut empty = true;
    for word in text.split_whitespace() {
        let len = line.chars().count() + word.chars().count() + usize::from(!empty);
        if !empty && len > WIDTH {
            out.push_str(&line);
            out.push('\n');
            line = String::from(indent);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    if !empty {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_words_and_indent() {
        let text = "palabra ".repeat(30);
        let wrapped = wrap(&text, "   ");
        assert!(
            wrapped
                .lines()
                .all(|l| l.starts_with("   ") && l.chars().count() <= WIDTH)
        );
        assert_eq!(wrapped.split_whitespace().count(), 30);
        assert_eq!(wrap("", "  "), "");
    }
}
