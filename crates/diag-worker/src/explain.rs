//! The OOM explainer's work: `oom::explain` on the reader's paste, and, for a vLLM or
//! llama.cpp start-up log that names a catalog model, the estimate of the same run set
//! against it term by term ([`crate::reconcile`]). The page shows this; `vramlab
//! explain` prints it.

use oom::{Decoded, Explanation, Kind};
use serde::{Deserialize, Serialize};

pub use crate::plan::{PlanView, StepView};
pub use crate::reconcile::{ReconcileRow, Reconciliation};

/// What the explainer shows for one paste, ready to draw: the page deserialises these
/// strings, not `oom`'s model, so neither the parsers nor the model's decoders weigh on
/// the page's bundle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExplainView {
    /// `Kind::title` of the main message, and the kind's name (for `data-kind`).
    pub title: String,
    pub kind: String,
    /// "Formato de PyTorch 2.1 o posterior.", when the wording says.
    pub era: Option<String>,
    pub truncated: bool,
    /// (label, value) for every number the main message gave.
    pub numbers: Vec<(String, String)>,
    pub causes: Vec<CauseView>,
    pub notes: Vec<String>,
    /// One line per other message of the paste (each rank of a multi-GPU log).
    pub others: Vec<String>,
    pub reconciliation: Option<Reconciliation>,
    /// The run the log describes in the estimator, with its plan when it failed.
    #[serde(default)]
    pub plan: Option<PlanView>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CauseView {
    pub title: String,
    pub explanation: String,
    pub fix: String,
    /// A path of the site ("/memoria-reservada/#fragmentacion").
    pub guide: String,
}

/// Explains `text` (see the module docs).
pub fn explain(text: &str) -> ExplainView {
    view(oom::explain(text))
}

/// What the page draws for an explanation.
pub fn view(e: Explanation) -> ExplainView {
    let d = &e.primary;
    let reconciliation = crate::reconcile::of(d);
    let plan = crate::plan::view(d);
    let others = e
        .messages
        .iter()
        .map(|m| {
            let numbers = oom::format::key_numbers(m);
            if numbers.is_empty() {
                m.kind.title().to_owned()
            } else {
                format!("{}: {numbers}", m.kind.title())
            }
        })
        .collect();
    ExplainView {
        title: d.kind.title().to_owned(),
        kind: format!("{:?}", d.kind),
        era: d.pytorch_era.map(|era| {
            match era {
                oom::Era::V2018 => "Formato de PyTorch 1.0–1.3 (2018–2019).",
                oom::Era::V14To20 => "Formato de PyTorch 1.4–2.0.",
                oom::Era::V21Plus => "Formato de PyTorch 2.1 o posterior.",
            }
            .to_owned()
        }),
        truncated: d.truncated,
        numbers: rows(d)
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .chain(d.ggml_memory.iter().flat_map(oom::format::ggml_rows))
            .chain(d.ollama_memory.iter().flat_map(oom::format::ollama_rows))
            .chain(
                d.frontend_memory
                    .iter()
                    .flat_map(oom::format::frontend_rows),
            )
            .collect(),
        causes: e
            .diagnosis
            .into_iter()
            .map(|c| CauseView {
                title: c.title,
                explanation: c.explanation,
                fix: c.fix,
                guide: c.guide,
            })
            .collect(),
        notes: e.notes,
        others,
        reconciliation,
        plan,
    }
}

/// (label, value) rows for every number the message gave.
fn rows(d: &Decoded) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let mut bytes = |label: &'static str, v: Option<u64>| {
        if let Some(b) = v {
            out.push((label, oom::format::both(b)));
        }
    };
    // Only PyTorch's caching allocator rounds requests into blocks; the host and
    // llama.cpp messages print what was asked, and free host memory is RAM.
    let outside = matches!(d.kind, Kind::GgmlOom | Kind::HostOom | Kind::XlaOom);
    bytes(
        if outside {
            "Se pidió"
        } else {
            "Se pidió (bloque redondeado)"
        },
        d.requested_bytes,
    );
    bytes("Capacidad total de la GPU", d.total_bytes);
    bytes(
        if d.kind == Kind::HostOom {
            "RAM disponible"
        } else {
            "Libre en la GPU"
        },
        d.free_bytes,
    );
    bytes(
        "En uso por este proceso (todo incluido)",
        d.process_in_use_bytes,
    );
    bytes("Asignada por PyTorch (tensores vivos)", d.allocated_bytes);
    bytes("Activa (current active)", d.active_bytes);
    bytes(
        "Reservada sin asignar (caché)",
        d.reserved_unallocated_bytes,
    );
    bytes("Reservada en total por PyTorch", d.reserved_total_bytes);
    bytes("En pools privados (CUDA Graphs)", d.private_pools_bytes);
    bytes("Límite permitido al proceso", d.allowed_bytes);
    bytes("Otras asignaciones (MPS)", d.other_allocations_bytes);
    bytes(
        "Límite del espacio de trabajo de cuDNN",
        d.workspace_limit_bytes,
    );
    bytes("Pico de memoria asignada", d.peak_allocated_bytes);
    bytes("Pico de memoria reservada", d.peak_reserved_bytes);
    bytes(
        "No liberable (huecos en bloques en caché)",
        d.non_releasable_bytes,
    );
    if d.fraction_unset {
        out.push((
            "Límite de PyTorch (fracción)",
            "ninguno: imprime 2^64 bytes, el valor de «sin límite»".to_owned(),
        ));
    }
    if let Some(n) = d.cuda_malloc_retries {
        out.push(("cudaMalloc retries", oom::format::count(n)));
    }
    if let Some(n) = d.cuda_ooms {
        out.push(("CUDA OOMs", oom::format::count(n)));
    }
    if let Some(i) = d.gpu_index {
        out.push(("GPU", i.to_string()));
    }
    if let Some(m) = &d.vllm_memory {
        out.extend(oom::format::vllm_rows(m));
    }
    if let Some(b) = &d.backend {
        out.push(("Dispositivo del búfer", b.clone()));
    }
    if let Some(b) = d.buffer.as_deref() {
        out.push((
            "Para qué era el búfer",
            oom::format::buffer_purpose(b).to_owned(),
        ));
    }
    for p in &d.other_processes {
        let who = if p.likely_self {
            "Proceso (probablemente este)"
        } else {
            "Otro proceso"
        };
        out.push((
            who,
            format!("PID {}: {}", p.pid, oom::format::both(p.bytes)),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const LOG: &str = "$ vllm serve meta-llama/Llama-3.1-8B-Instruct\n\
        INFO worker.py:241] Memory profiling takes 11.85 seconds\n\
        the current vLLM instance can use total_gpu_memory (79.11GiB) x gpu_memory_utilization (0.90) = 71.20GiB\n\
        model weights take 14.99GiB; non_torch_memory takes 0.35GiB; PyTorch activation peak memory takes 1.24GiB;\n\
        the rest of the memory reserved for KV Cache is 54.62GiB.\n\
        INFO kv_cache_utils.py:566] GPU KV cache size: 447,488 tokens";

    #[test]
    fn a_vllm_log_naming_a_catalog_model_is_reconciled() {
        let v = explain(LOG);
        let r = v.reconciliation.unwrap();
        assert!(
            r.title.contains("Llama 3.1 8B") && r.title.contains("79,11 GiB"),
            "{}",
            r.title
        );
        let per_token = r
            .rows
            .iter()
            .find(|row| row.name == "Bytes de caché por token")
            .unwrap();
        assert_eq!(
            (per_token.logged.as_str(), per_token.estimated.as_str()),
            ("127,99 KiB", "128,00 KiB")
        );
        // vLLM 0.19's weights: the parameters, the rotary cache and whole allocator
        // segments, as vramlab counts them.
        assert_eq!(r.rows[0].name, "Pesos");
        assert_eq!(
            (r.rows[0].logged.as_str(), r.rows[0].estimated.as_str()),
            ("14,99 GiB", "14,99 GiB"),
            "{:?}",
            r.rows[0]
        );
    }

    #[test]
    fn no_model_or_no_catalog_match_means_no_reconciliation() {
        assert!(
            explain(&LOG.replace("$ vllm serve meta-llama/Llama-3.1-8B-Instruct\n", ""))
                .reconciliation
                .is_none()
        );
        assert!(
            explain(&LOG.replace("Llama-3.1-8B", "Zzz-9000B"))
                .reconciliation
                .is_none()
        );
        assert!(
            explain("CUDA out of memory. Tried to allocate 2.00 GiB")
                .reconciliation
                .is_none()
        );
    }
}
