//! vramlab's estimate beside what a running engine logged, term by term: the check a
//! reader can make with their own start-up log, and the way the estimator's serving
//! terms are kept honest.
//!
//! vLLM's worker logs its budget at start-up (weights, the profile run's activation
//! peak, memory outside PyTorch, and what is left for the KV cache with its size in
//! tokens). Each of those is a term of [`crate::serving::plan`]; this module pairs them
//! and says, for the terms that are defined differently, why they differ.

use serde::{Deserialize, Serialize};

use crate::evaluate::{Evaluation, Note};

/// What a vLLM start-up log said (any of it may be missing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VllmLog {
    pub weights: Option<u64>,
    pub activation_peak: Option<u64>,
    pub non_torch: Option<u64>,
    pub kv_cache: Option<u64>,
    pub kv_tokens: Option<u64>,
}

/// A quantity's unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Bytes,
    Tokens,
}

/// One term: the log's value, vramlab's, and (Spanish) why they are not the same
/// quantity when they are not.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Term {
    pub name: &'static str,
    pub unit: Unit,
    pub logged: u64,
    pub estimated: u64,
    pub why: Option<&'static str>,
}

impl Term {
    /// (estimated − logged) / logged, in percent.
    pub fn error_percent(&self) -> Option<f64> {
        (self.logged > 0)
            .then(|| (self.estimated as f64 - self.logged as f64) / self.logged as f64 * 100.0)
    }
}

/// Pairs a vLLM log with a serving evaluation of the same model, GPU and
/// `gpu_memory_utilization`. Empty when the evaluation has no serving plan.
pub fn vllm(e: &Evaluation, log: &VllmLog) -> Vec<Term> {
    let Some(plan) = &e.serving else {
        return Vec::new();
    };
    let profile = e.notes.iter().find_map(|n| match n {
        Note::ServingProfile { bytes, .. } => Some(*bytes),
        _ => None,
    });
    let b = &e.estimate.breakdown;
    let mut out = Vec::new();
    let mut term = |name, unit, logged: Option<u64>, estimated: Option<u64>, why| {
        if let (Some(logged), Some(estimated)) = (logged, estimated) {
            out.push(Term {
                name,
                unit,
                logged,
                estimated,
                why,
            });
        }
    };
    term("Pesos", Unit::Bytes, log.weights, Some(b.weights), None);
    term(
        "Pico de activaciones del perfilado",
        Unit::Bytes,
        log.activation_peak,
        profile,
        Some(
            "depende de --max-num-batched-tokens y --max-num-seqs: vramlab usa los valores por \
             defecto de vLLM para esa GPU",
        ),
    );
    term(
        "Fuera de PyTorch",
        Unit::Bytes,
        log.non_torch,
        Some(b.overhead),
        Some(
            "vLLM resta solo lo que creció durante el perfilado; vramlab reserva el contexto \
             CUDA entero (más prudente)",
        ),
    );
    term(
        "Caché KV",
        Unit::Bytes,
        log.kv_cache,
        Some(plan.kv_budget_bytes),
        None,
    );
    let logged_per_token = match (log.kv_cache, log.kv_tokens) {
        (Some(bytes), Some(tokens)) if tokens > 0 => Some(bytes / tokens),
        _ => None,
    };
    term(
        "Bytes de caché por token",
        Unit::Bytes,
        logged_per_token,
        Some(plan.kv_bytes_per_token),
        Some("el registro reparte la caché entre bloques enteros: su cifra incluye el resto"),
    );
    term(
        "Tokens en la caché KV",
        Unit::Tokens,
        log.kv_tokens,
        Some(plan.tokens),
        None,
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;
    use crate::estimate::ModelInput;
    use crate::evaluate::{Model, evaluate};
    use crate::settings::{Runtime, Settings, Task};
    use crate::units::ByteSize;

    /// Llama 3.1 8B on an 80 GB card, as the vLLM 0.7 start-up log in the oom corpus
    /// (`vllm_profile_then_max_seq_len`'s sibling cases) prints it.
    #[test]
    fn every_logged_term_is_paired_and_kv_per_token_is_exact() {
        let model = Model::new(ModelInput::Arch {
            arch: Box::new(catalog::model("llama-3.1-8b").unwrap().arch.clone()),
            total_params: None,
        });
        let mut s = Settings::defaults(Task::Inference, Runtime::Vllm);
        s.gpu_memory = Some(79 * ByteSize::GIB);
        let e = evaluate(&model, &s).unwrap();
        // Llama 3.1 8B in bf16: 32 layers × 8 KV heads × 128 × 2 (K and V) × 2 bytes.
        let per_token = 32 * 8 * 128 * 2 * 2;
        let log = VllmLog {
            weights: Some(16_094_603_837),
            activation_peak: Some(1_331_439_862),
            non_torch: Some(375_809_638),
            kv_cache: Some(58_647_000_000),
            kv_tokens: Some(58_647_000_000 / per_token),
        };
        let terms = vllm(&e, &log);
        let names: Vec<&str> = terms.iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            [
                "Pesos",
                "Pico de activaciones del perfilado",
                "Fuera de PyTorch",
                "Caché KV",
                "Bytes de caché por token",
                "Tokens en la caché KV"
            ]
        );
        let per = terms
            .iter()
            .find(|t| t.name == "Bytes de caché por token")
            .unwrap();
        assert_eq!(per.estimated, per_token);
        assert!(per.error_percent().unwrap().abs() < 0.01);
        let weights = &terms[0];
        assert!(weights.error_percent().unwrap().abs() < 1.0, "{weights:?}");
    }

    #[test]
    fn nothing_to_pair_without_a_serving_plan() {
        let model = Model::new(ModelInput::Params(7_000_000_000));
        let s = Settings::defaults(Task::Inference, Runtime::Transformers);
        let e = evaluate(&model, &s).unwrap();
        assert!(vllm(&e, &VllmLog::default()).is_empty());
    }
}
