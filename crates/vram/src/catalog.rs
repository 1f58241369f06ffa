//! The model and GPU catalogs, from versioned data files in `data/` (each row names its
//! source). They are compiled in with `include_str!` and parsed once on first use.

use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

use crate::arch::Architecture;

/// A model preset.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelPreset {
    pub id: String,
    pub name: String,
    pub hf_repo: String,
    pub source: String,
    pub arch: Architecture,
}

/// A GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Gpu {
    pub id: String,
    pub name: String,
    /// Architecture family ("hopper", "ampere", ...).
    pub family: String,
    /// Memory as the driver reports it (nvidia-smi's total), in bytes.
    pub memory_bytes: u64,
    pub memory_source: String,
    pub bandwidth_gbs: f64,
    /// Dense FP16/BF16 tensor throughput with FP32 accumulation, TFLOP/s.
    pub fp16_tflops: f64,
    pub fp32_tflops: f64,
    pub source: String,
}

const MODELS_JSON: &str = include_str!("../data/models.json");
const GPUS_JSON: &str = include_str!("../data/gpus.json");

/// Every model preset. An unreadable data file is a build-time bug caught by the
/// tests; at run time it degrades to an empty catalog instead of a panic.
pub fn models() -> &'static [ModelPreset] {
    static MODELS: OnceLock<Vec<ModelPreset>> = OnceLock::new();
    MODELS.get_or_init(|| serde_json::from_str(MODELS_JSON).unwrap_or_default())
}

/// Every GPU.
pub fn gpus() -> &'static [Gpu] {
    static GPUS: OnceLock<Vec<Gpu>> = OnceLock::new();
    GPUS.get_or_init(|| serde_json::from_str(GPUS_JSON).unwrap_or_default())
}

/// Looks a preset up by id, case-insensitively.
pub fn model(id: &str) -> Option<&'static ModelPreset> {
    models()
        .iter()
        .find(|m| m.id.eq_ignore_ascii_case(id.trim()))
}

/// Looks a GPU up by id, case-insensitively.
pub fn gpu(id: &str) -> Option<&'static Gpu> {
    gpus().iter().find(|g| g.id.eq_ignore_ascii_case(id.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_files_parse_and_are_large_enough() {
        let m: Vec<ModelPreset> = serde_json::from_str(MODELS_JSON).unwrap();
        let g: Vec<Gpu> = serde_json::from_str(GPUS_JSON).unwrap();
        assert!(m.len() >= 30, "{} modelos", m.len());
        assert!(g.len() >= 30, "{} GPU", g.len());
        assert_eq!(models().len(), m.len());
        for p in &m {
            assert!(!p.source.is_empty(), "{}", p.id);
            assert!(p.arch.q_width() > 0, "{}", p.id);
        }
        let mut ids: Vec<&str> = m
            .iter()
            .map(|p| p.id.as_str())
            .chain(g.iter().map(|g| g.id.as_str()))
            .collect();
        ids.sort_unstable();
        let before = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), before, "ids repetidos");
    }

    /// Published parameter counts (model cards and `num_parameters()`).
    #[test]
    fn derived_counts_match_published_totals() {
        let cases = [
            ("llama-3.2-1b", 1_235_814_400),
            ("llama-3.2-3b", 3_212_749_824),
            ("llama-3.1-8b", 8_030_261_248),
            ("llama-3.1-70b", 70_553_706_496),
            ("llama-3.1-405b", 405_853_388_800),
            ("qwen2.5-7b", 7_615_616_512),
            ("qwen2.5-0.5b", 494_032_768),
            ("gpt2", 124_439_808),
            ("gpt2-xl", 1_557_611_200),
            ("bert-base-uncased", 109_482_240),
            ("bert-large-uncased", 335_141_888),
            ("mixtral-8x7b", 46_702_792_704),
            ("phi-3-mini", 3_821_079_552),
            ("gemma-2-2b", 2_614_341_888),
        ];
        for (id, want) in cases {
            let got = model(id).unwrap().arch.param_count().total;
            assert_eq!(got, want, "{id}");
        }
    }

    #[test]
    fn lookups() {
        assert_eq!(gpu("RTX-4090").unwrap().memory_bytes, 24_564 << 20);
        assert!(model("no-existe").is_none());
    }
}
