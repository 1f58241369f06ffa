//! The estimator: model + workload → bytes per GPU, split into the six terms the guide
//! explains (weights, gradients, optimizer, activations, KV cache, overhead).
//!
//! [`estimate`] is a short pipeline: validate the workload, count the parameters, size
//! the model states and shard them, then let the engine that allocates the rest say
//! how (PyTorch's caching allocator, AutoAWQ's fused modules, or ggml's fixed buffers),
//! then add the overhead. Each term has its own function, in the module of the
//! mechanism it models, so tests can pin it to a formula or a published figure.
//! Arithmetic is in u128 and saturates into u64: absurd inputs give absurd but finite
//! numbers, never an overflow panic.
//!
//! | term | shared | PyTorch (`torch/`) | ggml (`ggml/`) |
//! | --- | --- | --- | --- |
//! | weights | [`weights`] (formats, GGUF mixes, vision tower), [`lora`] | FSDP's unsharded root and layer ([`torch::parallel`]), PEFT's fp32 upcast ([`torch::peft`]) | layers `-ngl` leaves on the GPU ([`ggml::offload`]), experts `--n-cpu-moe` moves ([`ggml::experts`]) |
//! | gradients, optimizer | [`states`] (precision modes, optimizers) | DDP buckets, DeepSpeed buffers, ZeRO-Offload ([`torch::parallel`]) | — |
//! | activations | — | saved tensors, loss peak, prefill ([`torch::activations`]); bitsandbytes' copies ([`torch::bnb`]); Trainer's evaluation ([`torch::eval`]) | one compute buffer per GPU ([`ggml::compute`]) |
//! | KV cache | [`kv`] (GQA, MLA, sliding windows, quantised caches) | `generate`'s old double cache ([`kv::previous_step_cache`]) | padded cells, the iSWA cache ([`ggml::cells`]) |
//! | overhead | [`overhead`] (CUDA context, NCCL) | the caching allocator's margin | none: ggml sizes its buffers once |
//!
//! vLLM's paged cache and start-up profile live in [`crate::serving`]; they start from
//! an inference estimate of this module.

use serde::{Deserialize, Serialize};

use crate::arch::{Architecture, ParamCount};
use crate::workload::{Engine, Mode, Workload};
use torch::activations;
use torch::parallel::{self, GradSync};

pub mod ggml;
pub mod kv;
pub mod lora;
pub mod overhead;
pub mod states;
#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;
pub mod torch;
pub mod weights;

/// What is known about the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ModelInput {
    /// The full architecture; `total_params` (e.g. from safetensors metadata) wins over
    /// the derived count when given.
    Arch {
        arch: Box<Architecture>,
        total_params: Option<u64>,
    },
    /// Only a parameter count: weights and optimizer are exact, activations and KV
    /// cache cannot be estimated.
    Params(u64),
}

/// Bytes per GPU, by category.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Breakdown {
    pub weights: u64,
    pub gradients: u64,
    pub optimizer: u64,
    pub activations: u64,
    pub kv_cache: u64,
    pub overhead: u64,
}

impl Breakdown {
    /// The six categories in display order: weights, gradients, optimizer,
    /// activations, KV cache, overhead.
    pub fn parts(&self) -> [u64; 6] {
        [
            self.weights,
            self.gradients,
            self.optimizer,
            self.activations,
            self.kv_cache,
            self.overhead,
        ]
    }

    pub fn total(&self) -> u64 {
        self.parts().iter().fold(0u64, |a, &b| a.saturating_add(b))
    }

    /// Weights + gradients + optimizer states: what ZeRO shards.
    pub fn model_states(&self) -> u64 {
        self.weights
            .saturating_add(self.gradients)
            .saturating_add(self.optimizer)
    }
}

/// The result of an estimate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub params: ParamCount,
    pub trainable_params: u64,
    pub breakdown: Breakdown,
    pub per_gpu_bytes: u64,
    /// Summed over all GPUs.
    pub total_bytes: u64,
    pub gpus: u32,
    /// Bytes per GPU that ZeRO-Offload keeps in CPU RAM instead: the optimizer states
    /// and, under DeepSpeed, the gradient partitions ([`offloads_gradients`]).
    pub offloaded_to_ram: u64,
    /// llama.cpp: what lives in CPU RAM instead of the GPU (the input embeddings, the
    /// layers and their KV cache left off the GPU, the output's compute buffer, the
    /// graph's inputs in pinned memory).
    #[serde(default)]
    pub host_bytes: u64,
    /// llama.cpp: the weights among `host_bytes` (the input embeddings, the layers left
    /// off the GPU and, below all layers, the output layer): its CPU model buffer.
    #[serde(default)]
    pub host_weights_bytes: u64,
    /// llama.cpp: bytes the CPU reads from RAM for each generated token: the active
    /// weights and the KV cache of the layers left off the GPU, the output layer when
    /// it stays there, and the routed experts a token uses in the layers whose experts
    /// stay in RAM (`--n-cpu-moe`).
    #[serde(default)]
    pub host_read_per_token: u64,
    /// llama.cpp: bytes all its GPUs read for each generated token (their layers'
    /// active weights, the output layer and their KV cache), which run one after
    /// another; 0 for other engines, whose reads follow from the breakdown.
    #[serde(default)]
    pub gpu_read_per_token: u64,
    /// llama.cpp and Ollama with `--mmproj`: the vision projector's weights and image
    /// compute buffer, already in the breakdown's weights and activations.
    #[serde(default)]
    pub projector: Option<crate::mmproj::Projector>,
    /// Training on several GPUs: DDP's or DeepSpeed's gradient buffers and ZeRO-3's
    /// gathered module, already in the breakdown's gradients and activations.
    #[serde(default)]
    pub grad_sync: GradSync,
}

/// Why a workload cannot be estimated. `Display` is Spanish.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EstimateError {
    #[error("{0} debe ser al menos 1.")]
    Zero(&'static str),
    #[error("{name} = {value} es demasiado grande (máximo {max}).")]
    TooLarge {
        name: &'static str,
        value: u64,
        max: u64,
    },
    #[error("El número de GPU ({gpus}) debe ser múltiplo de tp × pp ({tp} × {pp}).")]
    Parallelism { gpus: u32, tp: u32, pp: u32 },
    #[error(
        "El ajuste completo necesita pesos en fp32, fp16 o bf16; con pesos cuantizados, elige QLoRA."
    )]
    FullNeedsPlainWeights,
    #[error(
        "LoRA y QLoRA necesitan la arquitectura del modelo: elige un modelo del catálogo o un config.json, no solo un número de parámetros."
    )]
    AdaptersNeedArchitecture,
    #[error(transparent)]
    OverBudget(#[from] crate::arch::OverBudget),
    /// Exact weights that cannot be the model's ([`crate::import::StoredWeights::check`]).
    #[error("{0}")]
    WeightsMismatch(String),
}

/// Upper bounds that keep every product far from overflow and reject typos.
pub const MAX_BATCH: u64 = 1 << 20;
pub const MAX_SEQ: u64 = 1 << 24;
pub const MAX_GPUS: u32 = 1 << 16;

fn mul(values: &[u64]) -> u64 {
    let p = values
        .iter()
        .try_fold(1u128, |acc, &v| acc.checked_mul(u128::from(v)));
    p.and_then(|p| u64::try_from(p).ok()).unwrap_or(u64::MAX)
}

fn validate(w: &Workload) -> Result<(), EstimateError> {
    for (name, v) in [("El lote", w.batch), ("La longitud de secuencia", w.seq)] {
        if v == 0 {
            return Err(EstimateError::Zero(name));
        }
    }
    if w.gpus == 0 || w.tp == 0 || w.pp == 0 {
        return Err(EstimateError::Zero("El número de GPU (y tp, pp)"));
    }
    for (name, v, max) in [
        ("batch", w.batch, MAX_BATCH),
        ("seq", w.seq, MAX_SEQ),
        ("new_tokens", w.new_tokens, MAX_SEQ),
        ("gpus", u64::from(w.gpus), u64::from(MAX_GPUS)),
        ("tp", u64::from(w.tp), u64::from(MAX_GPUS)),
        ("pp", u64::from(w.pp), u64::from(MAX_GPUS)),
    ] {
        if v > max {
            return Err(EstimateError::TooLarge {
                name,
                value: v,
                max,
            });
        }
    }
    if !u64::from(w.gpus).is_multiple_of(u64::from(w.tp) * u64::from(w.pp)) {
        return Err(EstimateError::Parallelism {
            gpus: w.gpus,
            tp: w.tp,
            pp: w.pp,
        });
    }
    Ok(())
}

/// Estimates `w` for `model`: the model states sharded, the engine's own terms, then
/// the overhead.
pub fn estimate(model: &ModelInput, w: &Workload) -> Result<Estimate, EstimateError> {
    validate(w)?;
    let ggml = w.engine == Engine::Ggml && w.mode == Mode::Inference;
    // llama.cpp splits the model by layers over every GPU (`--split-mode layer`), never
    // each layer: it deals the whole model itself ([`ggml::offload`]).
    let layered;
    let w = if ggml && w.tp > 1 {
        layered = Workload {
            tp: 1,
            pp: w.tp.saturating_mul(w.pp.max(1)),
            ..w.clone()
        };
        &layered
    } else {
        w
    };
    let (arch, pc) = param_count(model);
    if let Some(a) = arch {
        a.within_budget()?;
    }
    let (states, trainable) = states::model_states(&pc, arch, w)?;
    // Tensor and pipeline parallelism split the layers' weights across GPUs; llama.cpp
    // deals its layers itself.
    let model_split = if ggml && arch.is_some() {
        1
    } else {
        u64::from(w.tp.max(1)) * u64::from(w.pp.max(1))
    };
    let shards = Sharded::of(&states, arch, w, model_split);
    let mut b = shards.breakdown;
    let sync = parallel::grad_sync(
        arch,
        w,
        shards.gradients,
        states.weights.div_ceil(model_split),
    );
    let mut host = ggml::Host::default();
    let mut projector = None;
    if let Some(a) = arch {
        let engine = if ggml { Engine::Ggml } else { w.engine };
        match (w.mode, engine) {
            (Mode::Train, _) => {
                let absent = if w.deepspeed { 0 } else { b.gradients };
                b.activations = activations::training_activations(a, w, absent, &sync);
                b.kv_cache = kv::kv_cache(a, w);
            }
            (Mode::Inference, Engine::Ggml) => {
                b.activations = ggml::compute_buffer(a, w);
                b.kv_cache = ggml::kv_cache(a, w).saturating_add(ggml::recurrent_state(a, w));
            }
            (Mode::Inference, Engine::AwqFused) => {
                b.activations = activations::prefill_activations(a, w);
                b.kv_cache = kv::awq_fused_cache(a, w);
            }
            (Mode::Inference, Engine::Torch) => {
                b.activations = activations::prefill_activations(a, w);
                b.kv_cache = kv::kv_cache(a, w).saturating_add(kv::linear_state(a, w));
            }
        }
        b.activations = b
            .activations
            .saturating_add(w.blas_workspace)
            .saturating_add(sync.reused);
        if ggml {
            host = ggml::offload(a, &pc, w, &mut b);
            // The projector stays on the GPU whatever `-ngl` leaves there.
            projector = crate::mmproj::of(a, w);
            if let Some(p) = projector {
                b.weights = b.weights.saturating_add(p.weights);
                b.activations = b.activations.saturating_add(p.compute);
            }
        } else {
            b.kv_cache = b.kv_cache.div_ceil(u64::from(w.pp.max(1)));
        }
    }
    // After the activations: the buckets exist at the loss, unlike freed gradients.
    b.gradients = b.gradients.saturating_add(sync.buckets);
    b.overhead = overhead::overhead_bytes(&b, w, ggml);
    let per_gpu = b.total();
    Ok(Estimate {
        params: pc,
        trainable_params: trainable,
        breakdown: b,
        per_gpu_bytes: per_gpu,
        // llama.cpp's GPUs differ by a layer and the output: their own sum.
        total_bytes: if ggml && host.gpu_total > 0 && w.gpus > 1 {
            host.gpu_total
                .saturating_add(projector.map_or(0, |p| p.weights.saturating_add(p.compute)))
                .saturating_add(mul(&[b.overhead, u64::from(w.gpus)]))
        } else {
            mul(&[per_gpu, u64::from(w.gpus)])
        },
        gpus: w.gpus,
        offloaded_to_ram: parallel::offloaded_to_ram(
            &shards,
            arch.is_some(),
            w,
            trainable,
            model_split,
        ),
        host_bytes: host.bytes,
        host_weights_bytes: host.weights,
        host_read_per_token: host.read_per_token,
        gpu_read_per_token: host.gpu_read_per_token,
        projector,
        grad_sync: sync,
    })
}

/// The architecture, if known, and its parameter count: derived from the
/// architecture, with a given total (safetensors metadata, a GGUF header) moving the
/// difference into the layers' linears.
fn param_count(model: &ModelInput) -> (Option<&Architecture>, ParamCount) {
    match model {
        ModelInput::Arch { arch, total_params } => {
            let mut pc = arch.param_count();
            if let Some(total) = total_params.filter(|&t| t > 0 && t != pc.total) {
                let extra = total.saturating_sub(pc.total);
                let missing = pc.total.saturating_sub(total);
                pc.layer_linear = pc
                    .layer_linear
                    .saturating_add(extra)
                    .saturating_sub(missing);
                pc.active = pc.active.saturating_add(extra).saturating_sub(missing);
                pc.total = total;
            }
            (Some(arch.as_ref()), pc)
        }
        ModelInput::Params(n) => (
            None,
            ParamCount {
                total: *n,
                layer_linear: *n,
                active: *n,
                ..ParamCount::default()
            },
        ),
    }
}

/// The model states one GPU keeps after tensor/pipeline parallelism (`model_split`)
/// and ZeRO's or FSDP's sharding, and what ZeRO-Offload moved off it.
pub(crate) struct Sharded {
    /// Weights (with FSDP's unsharded root), gradients and optimizer states on the GPU.
    pub breakdown: Breakdown,
    /// This GPU's shard of the weights, wherever it lives.
    pub weights: u64,
    /// This GPU's shard of the gradients, wherever it lives.
    pub gradients: u64,
    /// This GPU's shard of the optimizer states, wherever it lives.
    pub optimizer: u64,
    /// The optimizer's sharding factor.
    pub optim_shards: u64,
}

impl Sharded {
    fn of(
        states: &Breakdown,
        arch: Option<&Architecture>,
        w: &Workload,
        model_split: u64,
    ) -> Sharded {
        let (param_shards, grad_shards, optim_shards) = w.shards();
        let optimizer = states
            .optimizer
            .div_ceil(model_split)
            .div_ceil(optim_shards);
        let gradients = states.gradients.div_ceil(model_split).div_ceil(grad_shards);
        let root = arch.map_or(0, |a| parallel::fsdp_unsharded(a, w).0);
        let weights = states.weights.div_ceil(model_split).div_ceil(param_shards);
        let breakdown = Breakdown {
            // Offloaded, the shard lives in RAM: the GPU holds what ZeRO-3 gathers.
            // (Without an architecture nothing gathered can be counted: they stay.)
            weights: if parallel::params_offloaded(w) && arch.is_some() {
                0
            } else {
                weights
            }
            .saturating_add(root),
            gradients: if parallel::offloads_gradients(w) {
                0
            } else {
                gradients
            },
            optimizer: if w.cpu_offload { 0 } else { optimizer },
            ..Breakdown::default()
        };
        Sharded {
            breakdown,
            weights,
            gradients,
            optimizer,
            optim_shards,
        }
    }
}
