//! The model and GPU catalogs, from versioned data files in `data/` (each row names its
//! source). `build.rs` compiles them into constants; the tests parse the same files
//! with serde to check nothing was lost on the way.

use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

use crate::arch::{
    Architecture, AttnBias, LinearAttention, Mla, Mlp, Moe, Norm, Rope, SlidingWindow, Vision,
};

/// A model preset.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelPreset {
    pub id: String,
    pub name: String,
    pub hf_repo: String,
    pub arch: Architecture,
}

impl ModelPreset {
    /// Where its `config.json` was read (a Hub page): kept apart from the preset so a
    /// bundle that never shows it does not carry the text (see `build.rs`).
    pub fn source(&self) -> &'static str {
        MODEL_SOURCES
            .iter()
            .find(|(id, _)| *id == self.id)
            .map_or("", |(_, s)| s)
    }
}

/// A GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Gpu {
    pub id: String,
    pub name: String,
    /// Architecture family ("hopper", "ampere", ...).
    pub family: String,
    /// Memory as nvidia-smi's total shows it, in bytes.
    pub memory_bytes: u64,
    /// What the driver reports to PyTorch (`cudaMemGetInfo`'s total, the "total
    /// capacity" of every OOM message): the memory a process can actually get. Less
    /// than nvidia-smi's total by what the driver keeps (and ECC on workstation cards).
    pub usable_bytes: u64,
    pub bandwidth_gbs: f64,
    /// Dense FP16/BF16 tensor throughput with FP32 accumulation, TFLOP/s.
    pub fp16_tflops: f64,
    pub fp32_tflops: f64,
    /// Streaming multiprocessors (compute units on AMD): `multi_processor_count` in
    /// `torch.cuda.get_device_properties`, which sizes some engines' buffers.
    pub sms: u32,
    /// Memory shared with the CPU (Apple Silicon, DGX Spark, Strix Halo): `usable_bytes`
    /// is the share the OS lets the GPU hold, not a card's own memory.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unified: bool,
}

/// Where a GPU's figures were published. Kept apart from [`Gpu`], in a table only the
/// code that shows a source references, so the estimator's page bundle, which never
/// does, leaves the text out (see `build.rs`).
#[derive(Debug, PartialEq, Eq)]
pub struct GpuSources {
    pub id: &'static str,
    /// nvidia-smi's total (`memory_bytes`).
    pub memory: &'static str,
    /// The usable figure (`usable_bytes`): a real OOM message or
    /// `get_device_properties`.
    pub usable: &'static str,
    /// The multiprocessor count (`sms`).
    pub sms: &'static str,
    /// The card's specifications.
    pub source: &'static str,
}

/// A catalog row as compiled in by `build.rs` (static strings, no parsing at run time).
struct ArchRow {
    family: &'static str,
    layers: u64,
    hidden: u64,
    heads: u64,
    kv_heads: u64,
    head_dim: u64,
    intermediate: u64,
    mlp: Mlp,
    vocab: u64,
    tied_embeddings: bool,
    norm: Norm,
    norms_per_layer: u64,
    attn_bias: AttnBias,
    mlp_bias: bool,
    qk_norm: bool,
    learned_positions: u64,
    token_types: u64,
    pooler: bool,
    encoder_only: bool,
    dropout: bool,
    moe: Option<Moe>,
    sliding_window: Option<SlidingWindow>,
    mla: Option<Mla>,
    linear: Option<LinearAttention>,
    attn_gate: bool,
    sinks: bool,
    checkpoint: Option<crate::quant::WeightFormat>,
    rope: Rope,
    vision: Option<Vision>,
    max_positions: u64,
}

struct ModelRow {
    id: &'static str,
    name: &'static str,
    hf_repo: &'static str,
    arch: ArchRow,
}

struct GpuRow {
    id: &'static str,
    name: &'static str,
    family: &'static str,
    memory_bytes: u64,
    usable_bytes: u64,
    bandwidth_gbs: f64,
    fp16_tflops: f64,
    fp32_tflops: f64,
    sms: u64,
    unified: bool,
}

include!(concat!(env!("OUT_DIR"), "/catalog_data.rs"));

/// Catalog dimensions are small integers; `build.rs` emits them as u64 literals.
fn dim(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

fn to_preset(r: &ModelRow) -> ModelPreset {
    let a = &r.arch;
    ModelPreset {
        id: r.id.to_owned(),
        name: r.name.to_owned(),
        hf_repo: r.hf_repo.to_owned(),
        arch: Architecture {
            family: a.family.to_owned(),
            layers: dim(a.layers),
            hidden: dim(a.hidden),
            heads: dim(a.heads),
            kv_heads: dim(a.kv_heads),
            head_dim: dim(a.head_dim),
            intermediate: dim(a.intermediate),
            mlp: a.mlp,
            vocab: dim(a.vocab),
            tied_embeddings: a.tied_embeddings,
            norm: a.norm,
            norms_per_layer: dim(a.norms_per_layer),
            attn_bias: a.attn_bias,
            mlp_bias: a.mlp_bias,
            qk_norm: a.qk_norm,
            learned_positions: dim(a.learned_positions),
            token_types: dim(a.token_types),
            pooler: a.pooler,
            encoder_only: a.encoder_only,
            dropout: a.dropout,
            moe: a.moe,
            sliding_window: a.sliding_window,
            mla: a.mla,
            linear: a.linear,
            attn_gate: a.attn_gate,
            sinks: a.sinks,
            checkpoint: a.checkpoint,
            rope: a.rope,
            vision: a.vision,
            max_positions: dim(a.max_positions),
        },
    }
}

/// Every model preset.
pub fn models() -> &'static [ModelPreset] {
    static MODELS: OnceLock<Vec<ModelPreset>> = OnceLock::new();
    MODELS.get_or_init(|| MODEL_ROWS.iter().map(to_preset).collect())
}

impl Gpu {
    /// Where its figures were published.
    pub fn sources(&self) -> &'static GpuSources {
        const NONE: GpuSources = GpuSources {
            id: "",
            memory: "",
            usable: "",
            sms: "",
            source: "",
        };
        GPU_SOURCES
            .iter()
            .find(|s| s.id == self.id)
            .unwrap_or(&NONE)
    }

    /// How pickers list it, with the memory a process gets: "GeForce RTX 4090 (23,65 GiB)".
    pub fn label(&self) -> String {
        format!(
            "{} ({})",
            self.name,
            crate::ByteSize(self.usable_bytes).binary()
        )
    }
}

/// Every GPU.
pub fn gpus() -> &'static [Gpu] {
    static GPUS: OnceLock<Vec<Gpu>> = OnceLock::new();
    GPUS.get_or_init(|| {
        GPU_ROWS
            .iter()
            .map(|r| Gpu {
                id: r.id.to_owned(),
                name: r.name.to_owned(),
                family: r.family.to_owned(),
                memory_bytes: r.memory_bytes,
                usable_bytes: r.usable_bytes,
                bandwidth_gbs: r.bandwidth_gbs,
                fp16_tflops: r.fp16_tflops,
                fp32_tflops: r.fp32_tflops,
                sms: dim(r.sms),
                unified: r.unified,
            })
            .collect()
    })
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

    const MODELS_JSON: &str = include_str!("../data/models.json");
    const GPUS_JSON: &str = include_str!("../data/gpus.json");

    #[test]
    fn data_files_parse_and_are_large_enough() {
        let m: Vec<ModelPreset> = serde_json::from_str(MODELS_JSON).unwrap();
        let g: Vec<Gpu> = serde_json::from_str(GPUS_JSON).unwrap();
        // The compiled-in catalog is exactly the data files, sources included.
        assert_eq!(models(), m.as_slice());
        assert_eq!(gpus(), g.as_slice());
        let rows = |json: &str| -> Vec<serde_json::Value> { serde_json::from_str(json).unwrap() };
        for (p, row) in models().iter().zip(rows(MODELS_JSON)) {
            assert_eq!(p.source(), row["source"], "{}", p.id);
        }
        for (g, row) in gpus().iter().zip(rows(GPUS_JSON)) {
            let s = g.sources();
            assert_eq!(
                [s.id, s.memory, s.usable, s.sms, s.source],
                [
                    "id",
                    "memory_source",
                    "usable_source",
                    "sms_source",
                    "source"
                ]
                .map(|k| row[k].as_str().unwrap()),
            );
        }
        assert!(m.len() >= 30, "{} modelos", m.len());
        assert!(g.len() >= 30, "{} GPU", g.len());
        assert_eq!(models().len(), m.len());
        for p in models() {
            assert!(!p.source().is_empty(), "{}", p.id);
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
            // Llama 2 7B's 6 738 415 616 with 16 more token rows in and out.
            ("codellama-7b", 6_738_546_688),
            ("gemma-7b", 8_537_680_896),
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
        let g = gpu("RTX-4090").unwrap();
        assert_eq!(g.memory_bytes, 24_564 << 20);
        // 23.65 GiB, as PyTorch's OOM messages print the card's total capacity.
        assert_eq!(g.usable_bytes, 25_393_994_138);
    }

    /// Every card's usable memory is at most nvidia-smi's total, never below 90 % of
    /// it, and says where it was published. Unified memory leaves the OS its share:
    /// macOS wires at most about two thirds to three quarters for the GPU
    /// (`recommendedMaxWorkingSetSize`), Linux's GTT limit on Strix Halo three quarters.
    #[test]
    fn usable_capacities_are_sourced_and_plausible() {
        for g in gpus() {
            assert!(g.usable_bytes <= g.memory_bytes, "{}", g.id);
            let floor = if g.unified { 6 } else { 9 };
            assert!(g.usable_bytes * 10 >= g.memory_bytes * floor, "{}", g.id);
            assert!(g.sources().usable.len() > 20, "{}", g.id);
        }
        assert!(model("no-existe").is_none());
    }
}
