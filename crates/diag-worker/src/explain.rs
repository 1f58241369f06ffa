//! The OOM explainer's work: `oom::explain` on the reader's paste, and, for a vLLM
//! start-up log that names a catalog model, the estimator's serving plan set against it
//! term by term (`vram::reconcile`). The page shows this; `vramlab explain` prints it.

use oom::{Explanation, VllmMemory};
use serde::{Deserialize, Serialize};
use vram::estimate::ModelInput;
use vram::reconcile::{Unit, VllmLog};
use vram::settings::Runtime;
use vram::{ByteSize, Model, Settings, Task};

/// What the explainer shows for one paste.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExplainView {
    pub explanation: Explanation,
    pub reconciliation: Option<Reconciliation>,
}

/// The estimator beside a vLLM log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reconciliation {
    /// "Frente al estimador (vLLM, Llama 3.1 8B en bf16, 79,22 GiB, …)".
    pub title: String,
    pub rows: Vec<ReconcileRow>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReconcileRow {
    pub name: String,
    /// The log's value and vramlab's, formatted ("14,96 GiB", "447 488").
    pub logged: String,
    pub estimated: String,
    /// "+1,5 %", or empty.
    pub difference: String,
    /// Why the two are not the same quantity, when they are not.
    pub why: Option<String>,
}

/// Explains `text` (see the module docs).
pub fn explain(text: &str) -> ExplainView {
    let explanation = oom::explain(text);
    let reconciliation = explanation.primary.vllm_memory.as_ref().and_then(reconcile);
    ExplainView {
        explanation,
        reconciliation,
    }
}

/// The comparison, or `None` when the log names no catalog model. The GPU is the one
/// the log measured ("total_gpu_memory"); without it only the terms that do not depend
/// on the card are compared.
pub fn reconcile(m: &VllmMemory) -> Option<Reconciliation> {
    let name = m.model.as_deref()?;
    let query = vram::model_search::ModelQuery::new(name);
    let preset = vram::catalog::models().iter().find(|p| query.matches(p))?;
    let mut s = Settings::defaults(Task::Inference, Runtime::Vllm);
    s.gpu_memory = Some(m.total_gpu_bytes.unwrap_or(80 * ByteSize::GIB));
    if let Some(p) = m.utilization_percent.and_then(|p| u8::try_from(p).ok()) {
        s.utilization = p.clamp(1, 100);
    }
    let model = Model::new(ModelInput::Arch {
        arch: Box::new(preset.arch.clone()),
        total_params: None,
    });
    let e = vram::evaluate(&model, &s).ok()?;
    let card_known = m.total_gpu_bytes.is_some();
    let log = VllmLog {
        weights: m.weights_bytes,
        activation_peak: m.activation_peak_bytes,
        non_torch: m.non_torch_bytes,
        kv_cache: m.kv_cache_bytes.filter(|_| card_known),
        kv_tokens: m.kv_cache_tokens.filter(|_| card_known),
    };
    let mut terms = vram::reconcile::vllm(&e, &log);
    // The per-token size needs only the log's own two numbers.
    if !card_known
        && let (Some(bytes), Some(tokens)) = (m.kv_cache_bytes, m.kv_cache_tokens)
        && let Some(plan) = &e.serving
        && tokens > 0
    {
        terms.push(vram::reconcile::Term {
            name: "Bytes de caché por token",
            unit: Unit::Bytes,
            logged: bytes / tokens,
            estimated: plan.kv_bytes_per_token,
            why: None,
        });
    }
    if terms.is_empty() {
        return None;
    }
    let card = m.total_gpu_bytes.map_or_else(
        || "GPU sin tamaño en el registro".to_owned(),
        |t| ByteSize(t).binary(),
    );
    let rows = terms
        .iter()
        .map(|t| {
            let show = |v: u64| match t.unit {
                Unit::Bytes => ByteSize(v).binary(),
                Unit::Tokens => vram::group_digits(v),
            };
            ReconcileRow {
                name: t.name.to_owned(),
                logged: show(t.logged),
                estimated: show(t.estimated),
                difference: t.error_percent().map_or_else(String::new, |p| {
                    format!("{} %", format!("{p:+.1}").replace('.', ","))
                }),
                why: t.why.map(str::to_owned),
            }
        })
        .collect();
    Some(Reconciliation {
        title: format!(
            "Frente al estimador (vLLM, {} en bf16, {card}, gpu_memory_utilization {} %)",
            preset.name, s.utilization
        ),
        rows,
    })
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
        assert_eq!(r.rows[0].name, "Pesos");
        assert!(r.rows[0].difference.starts_with('-'), "{:?}", r.rows[0]);
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
