//! The estimator's pure half: the reader's inputs as typed, and what the page shows
//! for them. No Leptos here, so the tests exercise exactly what the island renders.

use vram::catalog::{self, Gpu};
use vram::estimate::{Breakdown, ModelInput, estimate};
use vram::serving::ServingPlan;
use vram::solve;
use vram::workload::{Attention, Finetune, Mode, Optimizer, Workload};
use vram::{WeightFormat, parse_count};

/// The `modelo` value that selects the reader's imported config.json.
pub const CUSTOM: &str = "propio";

/// vLLM's defaults for the serving plan: `gpu_memory_utilization=0.9`, blocks of 16.
const SERVE_UTILIZATION: u8 = 90;
const SERVE_BLOCK: u32 = 16;

/// Most GPUs the page accepts (the engine takes more; the page's solvers stay fast).
const MAX_PAGE_GPUS: u64 = 1024;

/// Sequence lengths of the memory-versus-context chart.
const CURVE_SEQS: [u64; 9] = [512, 1024, 2048, 4096, 8192, 16_384, 32_768, 65_536, 131_072];

/// Optimizers offered for training: (id, label).
pub const OPTIMIZERS: &[(&str, &str)] = &[
    ("adamw", "AdamW"),
    ("adamw8bit", "AdamW 8 bits"),
    ("paged-adamw8bit", "AdamW 8 bits paginado"),
    ("paged-adamw", "AdamW paginado"),
    ("adafactor", "Adafactor"),
    ("sgd-momentum", "SGD con momento"),
];

/// Inputs as the reader typed them.
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    pub model: String,
    pub gpu: String,
    pub mode: String,
    pub format: String,
    pub batch: String,
    pub seq: String,
    pub checkpointing: bool,
    pub attention: String,
    /// How many GPUs of the chosen kind.
    pub gpus: String,
    /// ZeRO stage "0"–"3" when training on several GPUs ("3" is also FSDP).
    pub zero: String,
    pub optimizer: String,
    /// Budget a vLLM-style server instead of one request.
    pub serve: bool,
}

impl Inputs {
    /// The author's defaults from the shortcode, with everything else at its default.
    pub fn new(
        model: String,
        gpu: String,
        mode: String,
        format: String,
        batch: String,
        seq: String,
    ) -> Self {
        Inputs {
            model,
            gpu,
            mode,
            format,
            batch,
            seq,
            checkpointing: false,
            attention: "sdpa".into(),
            gpus: "1".into(),
            zero: "0".into(),
            optimizer: "adamw".into(),
            serve: false,
        }
    }

    pub fn is_training(&self) -> bool {
        matches!(self.mode.as_str(), "full" | "lora" | "qlora")
    }
}

/// What the page shows for a set of inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub breakdown: Breakdown,
    pub per_gpu: u64,
    pub total: u64,
    pub gpus: u32,
    pub gpu: Option<&'static Gpu>,
    pub max_batch: Option<u64>,
    pub max_seq: Option<u64>,
    pub speed: Option<vram::speed::SpeedHint>,
    pub serving: Option<ServingPlan>,
    /// Spanish remarks from the engine and the page (CUDA context basis, offload, …).
    pub notes: Vec<String>,
    /// (sequence length, bytes with eager attention, bytes with SDPA/Flash).
    pub curve: Vec<(u64, u64, u64)>,
}

pub use vram::import::Imported;

fn optimizer(id: &str) -> Optimizer {
    match id {
        "adamw8bit" => Optimizer::Adamw8bit,
        "paged-adamw" => Optimizer::PagedAdamw,
        "paged-adamw8bit" => Optimizer::PagedAdamw8bit,
        "adafactor" => Optimizer::Adafactor,
        "sgd-momentum" => Optimizer::SgdMomentum,
        _ => Optimizer::Adamw,
    }
}

/// The engine's workload for the inputs (without the GPU's CUDA context).
fn workload(i: &Inputs) -> Result<Workload, String> {
    let batch = parse_count(&i.batch).map_err(|e| format!("Lote: {e}"))?;
    let seq = parse_count(&i.seq).map_err(|e| format!("Secuencia: {e}"))?;
    let gpus = parse_count(&i.gpus).map_err(|e| format!("Número de GPU: {e}"))?;
    if gpus == 0 || gpus > MAX_PAGE_GPUS {
        return Err(format!("Número de GPU: entre 1 y {MAX_PAGE_GPUS}."));
    }
    let gpus = gpus as u32;
    let weights = WeightFormat::parse(&i.format).map_err(|e| e.to_string())?;
    let task = match i.mode.as_str() {
        "full" => Some(Finetune::Full),
        "lora" => Some(Finetune::Lora),
        "qlora" => Some(Finetune::Qlora),
        _ => None,
    };
    Ok(Workload {
        weights,
        optimizer: optimizer(&i.optimizer),
        batch,
        seq,
        grad_checkpointing: i.checkpointing,
        attention: if i.attention == "eager" {
            Attention::Eager
        } else {
            Attention::Sdpa
        },
        ..Workload::for_task(task, gpus, i.zero.parse().unwrap_or(0))
    })
}

pub fn compute(i: &Inputs, imported: &Imported) -> Result<Outcome, String> {
    let custom = imported.arch.as_ref().map(|(a, _)| a);
    let arch = match (i.model.as_str(), custom) {
        (CUSTOM, Some(a)) => a.clone(),
        _ => catalog::model(&i.model)
            .ok_or("Elige un modelo del catálogo o importa un config.json.")?
            .arch
            .clone(),
    };
    let stored = imported.weights.as_ref();
    let model = ModelInput::Arch {
        arch: Box::new(arch.clone()),
        total_params: stored.and_then(|s| s.params),
    };
    let mut w = workload(i)?;
    let mut notes = Vec::new();
    match (stored, w.mode) {
        (Some(s), Mode::Inference) => w.stored_weights = Some(s.bytes),
        (Some(s), Mode::Train) => notes.push(format!(
            "Los pesos exactos de {} solo valen para inferencia: al entrenar se cuentan con el formato elegido.",
            s.source
        )),
        (None, _) => {}
    }
    let gpu = catalog::gpu(&i.gpu);
    if let Some(g) = gpu {
        let d = vram::context::for_family(&g.family);
        w.cuda_context = Some(d.bytes);
        notes.push(format!(
            "Contexto CUDA de {} por GPU: {}.",
            vram::ByteSize(d.bytes).binary(),
            d.basis
        ));
    }
    let est = estimate(&model, &w).map_err(|e| e.to_string())?;
    notes.extend(est.notes.iter().cloned());
    let cap = gpu.map(|g| g.memory_bytes);
    let curve = CURVE_SEQS
        .iter()
        .filter(|&&s| s <= u64::from(arch.max_positions))
        .filter_map(|&s| {
            let at = |attention| {
                estimate(
                    &model,
                    &Workload {
                        seq: s,
                        attention,
                        ..w.clone()
                    },
                )
                .ok()
                .map(|e| e.per_gpu_bytes)
            };
            Some((s, at(Attention::Eager)?, at(Attention::Sdpa)?))
        })
        .collect();
    let serving = match (i.serve && w.mode == Mode::Inference, cap) {
        (true, Some(c)) => Some(vram::serving::plan(
            &arch,
            &w,
            &est,
            c,
            SERVE_UTILIZATION,
            SERVE_BLOCK,
        )),
        _ => None,
    };
    Ok(Outcome {
        breakdown: est.breakdown,
        per_gpu: est.per_gpu_bytes,
        total: est.total_bytes,
        gpus: est.gpus,
        gpu,
        max_batch: cap.and_then(|c| solve::max_batch(&model, &w, c)),
        max_seq: cap.and_then(|c| solve::max_seq(&model, &w, c)),
        speed: gpu.and_then(|g| vram::speed::speed(&arch, &w, &est, g)),
        serving,
        notes,
        curve,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use vram::import::StoredWeights;

    fn inputs() -> Inputs {
        Inputs::new(
            "llama-3.1-8b".into(),
            "rtx-4090".into(),
            "inference".into(),
            "bf16".into(),
            "1".into(),
            "4096".into(),
        )
    }

    #[test]
    fn computes_what_the_cli_computes() {
        let o = compute(&inputs(), &Imported::default()).unwrap();
        assert_eq!(o.breakdown.weights, 16_060_522_496);
        assert!(o.max_batch.is_some());
        assert!(
            o.notes.iter().any(|n| n.contains("Contexto CUDA")),
            "{:?}",
            o.notes
        );
        // The GPU's family sets the CUDA context: Hopper 600 MiB, Ada 500 MiB; the rest
        // of the overhead (the allocator margin) does not depend on the card.
        let mut h100 = inputs();
        h100.gpu = "h100-sxm".into();
        let h = compute(&h100, &Imported::default()).unwrap();
        assert_eq!(
            h.breakdown.overhead - o.breakdown.overhead,
            100 * vram::ByteSize::MIB
        );
    }

    #[test]
    fn several_gpus_shard_training_and_split_inference() {
        let mut i = inputs();
        i.model = "llama-3.1-70b".into();
        i.gpu = "h100-sxm".into();
        let one = compute(&i, &Imported::default()).unwrap();
        i.gpus = "4".into();
        let four = compute(&i, &Imported::default()).unwrap();
        // Tensor parallelism splits the weights four ways.
        assert_eq!(four.breakdown.weights, one.breakdown.weights.div_ceil(4));
        assert_eq!(four.gpus, 4);
        i.mode = "full".into();
        let ddp = compute(&i, &Imported::default()).unwrap();
        i.zero = "3".into();
        let zero3 = compute(&i, &Imported::default()).unwrap();
        assert!(
            zero3.per_gpu < ddp.per_gpu / 3,
            "{} vs {}",
            zero3.per_gpu,
            ddp.per_gpu
        );
        i.gpus = "0".into();
        assert!(
            compute(&i, &Imported::default())
                .unwrap_err()
                .contains("GPU")
        );
    }

    #[test]
    fn serving_plan_only_for_inference_on_a_gpu() {
        let mut i = inputs();
        i.serve = true;
        let plan = compute(&i, &Imported::default()).unwrap().serving.unwrap();
        assert_eq!(plan.kv_bytes_per_token, 131_072);
        assert!(plan.max_sequences > 0);
        i.mode = "lora".into();
        assert!(compute(&i, &Imported::default()).unwrap().serving.is_none());
    }

    #[test]
    fn paged_optimizer_is_explained() {
        let mut i = inputs();
        i.mode = "qlora".into();
        i.optimizer = "paged-adamw8bit".into();
        let o = compute(&i, &Imported::default()).unwrap();
        assert!(
            o.notes.iter().any(|n| n.contains("paginado")),
            "{:?}",
            o.notes
        );
    }

    #[test]
    fn imported_architecture_is_used() {
        let mut i = inputs();
        i.model = CUSTOM.into();
        let gpt2 = catalog::model("gpt2").unwrap().arch.clone();
        let imported = Imported {
            arch: Some((gpt2, String::new())),
            weights: None,
        };
        let custom = compute(&i, &imported).unwrap();
        assert_eq!(custom.breakdown.weights, 2 * 124_439_808);
        // Exact weights from a file replace the formula in inference, not in training.
        let exact = Imported {
            weights: Some(StoredWeights {
                bytes: 99_000_000,
                params: Some(124_439_808),
                source: "gpt2.gguf".into(),
            }),
            ..imported
        };
        assert_eq!(compute(&i, &exact).unwrap().breakdown.weights, 99_000_000);
        i.mode = "full".into();
        let train = compute(&i, &exact).unwrap();
        assert_eq!(train.breakdown.weights, 2 * 124_439_808);
        assert!(
            train
                .notes
                .iter()
                .any(|n| n.contains("solo valen para inferencia"))
        );
        i.mode = "inference".into();
        // Without an import, "propio" is a clear message, not a panic.
        assert!(
            compute(&i, &Imported::default())
                .unwrap_err()
                .contains("config.json")
        );
    }

    #[test]
    fn bad_inputs_are_messages() {
        type Edit = fn(&mut Inputs);
        let cases: [(Edit, &str); 5] = [
            (|i| i.batch = "cero".into(), "Lote"),
            (|i| i.seq = "0".into(), "al menos 1"),
            (|i| i.model = "x".into(), "modelo"),
            (|i| i.format = "q9".into(), "no existe"),
            (|i| i.gpus = "99999".into(), "entre 1 y"),
        ];
        for (edit, want) in cases {
            let mut i = inputs();
            edit(&mut i);
            let e = compute(&i, &Imported::default()).unwrap_err();
            assert!(e.contains(want), "{e}");
        }
    }
}
