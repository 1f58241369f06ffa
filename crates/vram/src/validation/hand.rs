//! The hand-written cases: figures whose quantity needs its own computation (weights of
//! a bare parameter count, model states of the ZeRO paper, KV caches of one layer shape).

use crate::catalog;
use crate::dtype::Dtype;
use crate::estimate::kv::kv_cache;
use crate::estimate::{ModelInput, estimate};
use crate::quant::WeightFormat;
use crate::units::ByteSize;
use crate::workload::{Attention, Mode, Optimizer, Precision, Workload};

use super::{Case, Unit};

/// CUDA context of the Hugging Face cases: the V100's family default, which is the
/// hf-1 measurement (1,343 MB as nvidia-smi prints it, i.e. MiB).
fn hf_context() -> u64 {
    crate::context::for_family("volta").bytes
}

/// A catalog preset as model input. The ids used here are checked by the tests; a
/// missing one yields no case rather than a panic.
fn arch(id: &str) -> Option<ModelInput> {
    catalog::model(id).map(|m| ModelInput::Arch {
        arch: Box::new(m.arch.clone()),
        total_params: None,
    })
}

/// A case of pure arithmetic (no runtime behind it), in binary units.
fn arithmetic(
    id: &'static str,
    what: &'static str,
    source: &'static str,
    published: u64,
    estimated: u64,
) -> Case {
    Case {
        id,
        what,
        source,
        published,
        estimated,
        unit: Unit::Binary,
        runtime: "—",
        training: false,
        weights: None,
        weights_only: false,
    }
}

fn plain(dtype: Dtype) -> WeightFormat {
    WeightFormat::Plain { dtype }
}

/// Every case, computed now.
pub(super) fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let seven_b = ModelInput::Params(7_000_000_000);
    for (id, what, dtype, published) in [
        (
            "seed-1",
            "7B, solo pesos, FP32",
            plain(Dtype::Fp32),
            28_000_000_000,
        ),
        (
            "seed-2",
            "7B, solo pesos, FP16/BF16",
            plain(Dtype::Fp16),
            14_000_000_000,
        ),
        (
            "seed-3",
            "7B, solo pesos, 4 bits (NF4)",
            WeightFormat::Nf4 {
                double_quant: false,
            },
            3_750_000_000,
        ),
    ] {
        let w = Workload {
            weights: dtype,
            ..Workload::default()
        };
        let est = estimate(&seven_b, &w)
            .map(|e| e.breakdown.weights)
            .unwrap_or(0);
        out.push(Case {
            id,
            what,
            source: "guía original",
            published,
            estimated: est,
            unit: Unit::Decimal,
            runtime: "—",
            training: false,
            weights: None,
            weights_only: false,
        });
    }

    // ZeRO paper, Figure 1: Ψ = 7.5B, 64 GPUs, mixed-precision Adam (K = 12).
    let zero_model = ModelInput::Params(7_500_000_000);
    for (id, what, stage, published) in [
        (
            "zero-1",
            "Ψ=7,5B, 64 GPU, paralelismo de datos: estados del modelo por GPU",
            0u8,
            120_000_000_000u64,
        ),
        (
            "zero-2",
            "Ψ=7,5B, 64 GPU, ZeRO-1: estados del modelo por GPU",
            1,
            31_400_000_000,
        ),
        (
            "zero-3",
            "Ψ=7,5B, 64 GPU, ZeRO-2: estados del modelo por GPU",
            2,
            16_600_000_000,
        ),
        (
            "zero-4",
            "Ψ=7,5B, 64 GPU, ZeRO-3: estados del modelo por GPU",
            3,
            1_900_000_000,
        ),
    ] {
        let w = Workload {
            mode: Mode::Train,
            weights: plain(Dtype::Fp16),
            precision: Precision::Master,
            optimizer: Optimizer::Adamw,
            gpus: 64,
            zero: stage,
            ..Workload::default()
        };
        // The paper counts model states alone: not PyTorch DDP's bucket copy of the
        // gradients, which the estimate adds at stage 0 (`estimate::torch::parallel::grad_sync`).
        let est = estimate(&zero_model, &w)
            .map(|e| e.breakdown.model_states() - e.grad_sync.buckets)
            .unwrap_or(0);
        out.push(Case {
            id,
            what,
            source: "Rajbhandari et al. 2020 (ZeRO), figura 1",
            published,
            estimated: est,
            unit: Unit::Decimal,
            runtime: "—",
            training: true,
            weights: None,
            weights_only: false,
        });
    }

    // Hugging Face "model memory anatomy": bert-large-uncased on a V100.
    let Some(bert) = arch("bert-large-uncased") else {
        return out;
    };
    let loaded = Workload {
        weights: plain(Dtype::Fp32),
        seq: 1,
        cuda_context: Some(hf_context()),
        ..Workload::default()
    };
    let est = estimate(&bert, &loaded)
        .map(|e| e.breakdown.weights + hf_context())
        .unwrap_or(0);
    out.push(Case {
        id: "hf-2",
        what: "bert-large cargado en FP32 (pesos + contexto CUDA medido en hf-1)",
        source: "Hugging Face Transformers, «model memory anatomy»",
        published: 2631 * ByteSize::MIB,
        estimated: est,
        unit: Unit::Binary,
        runtime: "transformers",
        training: false,
        weights: Some(est.saturating_sub(hf_context())),
        weights_only: false,
    });
    let train = Workload {
        mode: Mode::Train,
        weights: plain(Dtype::Fp32),
        optimizer: Optimizer::Adamw,
        batch: 4,
        seq: 512,
        attention: Attention::Eager,
        cuda_context: Some(hf_context()),
        ..Workload::default()
    };
    let trained = estimate(&bert, &train).ok();
    out.push(Case {
        id: "hf-3",
        what: "bert-large, entrenamiento FP32 con AdamW, lote 4 × 512 tokens (total de nvidia-smi)",
        source: "Hugging Face Transformers, «model memory anatomy»",
        published: 14_949 * ByteSize::MIB,
        estimated: trained.as_ref().map_or(0, |e| e.per_gpu_bytes),
        unit: Unit::Binary,
        runtime: "transformers",
        training: true,
        weights: trained.as_ref().map(|e| e.breakdown.weights),
        weights_only: false,
    });

    // KV caches.
    if let Some(ModelInput::Arch { arch: a, .. }) = arch("qwen3-8b") {
        let w = Workload {
            seq: 4096,
            ..Workload::default()
        };
        out.push(arithmetic(
            "kv-1",
            "caché KV (K+V), 36 capas, 8 cabezas KV × 128, 4096 tokens, F16",
            "registro de carga de llama.cpp citado en ollama #12147",
            576 * ByteSize::MIB,
            kv_cache(&a, &w),
        ));
    }
    if let Some(ModelInput::Arch { arch: a, .. }) = arch("llama-3.1-8b") {
        let w = Workload {
            seq: 1,
            ..Workload::default()
        };
        out.push(arithmetic(
            "kv-2",
            "caché KV por token de Llama-3.1-8B en FP16",
            "registro de arranque de vLLM (4,60 GiB ↔ 37 696 tokens)",
            131_072,
            kv_cache(&a, &w),
        ));
    }
    if let Some(ModelInput::Arch { arch: a, .. }) = arch("llama-3.1-8b") {
        // OPT-13B's attention shape (40 layers, 40 heads × 128, multi-head KV).
        let opt = crate::Architecture {
            family: "opt".into(),
            layers: 40,
            hidden: 5120,
            heads: 40,
            kv_heads: 40,
            head_dim: 128,
            ..a.as_ref().clone()
        };
        let w = Workload {
            seq: 1,
            ..Workload::default()
        };
        out.push(arithmetic(
            "vllm-1",
            "caché KV por token de OPT-13B en FP16 (2 × 5120 × 40 × 2 bytes)",
            "Kwon et al. 2023 (vLLM, PagedAttention), §3: «800 KB» por token",
            819_200,
            kv_cache(&opt, &w),
        ));
    }
    if let Some(ModelInput::Arch { arch: a, .. }) = arch("llama-3.1-70b") {
        let w = Workload {
            seq: 128_000,
            ..Workload::default()
        };
        out.push(arithmetic(
            "llama31-kv",
            "caché KV de Llama-3.1-70B con 128 000 tokens en FP16",
            "Hugging Face, «Llama 3.1 - 405B, 70B & 8B» (2024), tabla de memoria de inferencia: 39,06 GB (GiB)",
            3906 * ByteSize::GIB / 100,
            kv_cache(&a, &w),
        ));
    }
    if let Some(m) = arch("llama-3.1-405b") {
        let w = Workload {
            weights: plain(Dtype::Fp8),
            ..Workload::default()
        };
        out.push(Case {
            id: "llama31-fp8",
            what: "Llama-3.1-405B, solo pesos, FP8",
            source: "Hugging Face, «Llama 3.1 - 405B, 70B & 8B» (2024), tabla de memoria de inferencia: 405 GB",
            published: 405_000_000_000,
            estimated: estimate(&m, &w).map(|e| e.breakdown.weights).unwrap_or(0),
            unit: Unit::Decimal,
            runtime: "—",
            training: false,
            weights: None,
            weights_only: false,
        });
    }
    out
}
