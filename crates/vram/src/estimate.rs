//! The estimator: model + workload → bytes per GPU, split into the six terms the guide
//! explains (weights, gradients, optimizer, activations, KV cache, overhead).
//!
//! Each term has its own function so tests can pin it to a formula or a published
//! figure. Arithmetic is in u128 and saturates into u64: absurd inputs give absurd but
//! finite numbers, never an overflow panic.

use serde::{Deserialize, Serialize};

use crate::arch::{Architecture, Mlp, Norm, ParamCount};
use crate::dtype::Dtype;
use crate::quant::{WeightFormat, mix_of, use_more_bits};
use crate::workload::{
    Attention, Engine, Finetune, Linear, LoraTargets, Loss, Mode, Optimizer, Precision, Workload,
};

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
}

/// Upper bounds that keep every product far from overflow and reject typos.
pub const MAX_BATCH: u64 = 1 << 20;
pub const MAX_SEQ: u64 = 1 << 24;
pub const MAX_GPUS: u32 = 1 << 16;

/// Default CUDA context when the workload names no GPU (see [`crate::context`] for
/// the per-family defaults the CLI and the site apply when a GPU is chosen).
pub const DEFAULT_CUDA_CONTEXT: u64 = crate::context::GENERIC.bytes;

/// Share of the dynamic memory (activations, KV cache, gradients) added for the caching
/// allocator's rounding and fragmentation: 5%.
pub const ALLOCATOR_MARGIN_PERCENT: u64 = 5;

/// GPU memory of one NCCL communicator after its first all-reduce, per GPU, in a group
/// of two GPUs and in a larger one: 544 MiB and 688 MiB, measured with PyTorch process
/// groups on four A100s with NVLink (NVIDIA/nccl#964). NCCL's buffers grow with its
/// channel count (NVIDIA/nccl#986), which is higher on H100, so there it is a floor.
pub const NCCL_COMM_PAIR: u64 = 544 << 20;
pub const NCCL_COMM_GROUP: u64 = 688 << 20;

fn communicator(ranks: u64) -> u64 {
    match ranks {
        0 | 1 => 0,
        2 => NCCL_COMM_PAIR,
        _ => NCCL_COMM_GROUP,
    }
}

/// NCCL buffers per GPU: one communicator for the tensor-parallel group (vLLM's and
/// Megatron's all-reduces), and in training one for the data-parallel group (DDP's
/// gradient all-reduce, ZeRO's reduce-scatter and all-gather). Pipeline stages only
/// send and receive activations, and vLLM's start-up profile shows no NCCL memory for
/// them, so they add none here.
pub fn communication_bytes(w: &Workload) -> u64 {
    let tp = u64::from(w.tp.max(1));
    let split = tp * u64::from(w.pp.max(1));
    let dp = (u64::from(w.gpus.max(1)) / split).max(1);
    let data = match w.mode {
        Mode::Train => communicator(dp),
        Mode::Inference => 0,
    };
    communicator(tp).saturating_add(data)
}

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

/// Weight bytes of the whole (unsharded) model in `format`.
pub fn weight_bytes(pc: &ParamCount, arch: Option<&Architecture>, format: WeightFormat) -> u64 {
    let sixteen = Dtype::Bf16;
    match (format, arch) {
        // FP8 is a quantisation of the linear layers only: vLLM's `Fp8LinearMethod`
        // (online `quantization="fp8"` and compressed-tensors FP8 checkpoints) applies to
        // `LinearBase` layers, so the embedding table and `ParallelLMHead` stay in 16
        // bits, as in FP8 checkpoints on the Hub ("Model loading took 8.49 GiB" for
        // Llama-3.1-8B with `quantization: fp8` in vLLM 0.19: 6.98 B linear weights in
        // one byte plus two 525 M tables in two). The per-tensor or per-channel fp32
        // scales are a few MiB and not counted.
        (WeightFormat::Plain { dtype: Dtype::Fp8 }, Some(_)) => Dtype::Fp8
            .bytes_for(pc.layer_linear)
            .saturating_add(sixteen.bytes_for(pc.total.saturating_sub(pc.layer_linear))),
        (WeightFormat::Plain { dtype }, _) => dtype.bytes_for(pc.total),
        (WeightFormat::Gguf { mix }, Some(a)) => {
            // Each group of tensors in its type for the width of its rows (`ne[0]`, the
            // input features): q, k, v, gate and up read the hidden state, the
            // attention output reads the heads, the down projection the feed-forward.
            let mix = mix_of(mix);
            let h = u64::from(a.hidden);
            let layers = u64::from(a.layers);
            let inner = u64::from(a.moe.map_or(a.intermediate, |m| m.expert_intermediate));
            let down = match a.moe {
                Some(m) => mul(&[inner, u64::from(m.experts), h]),
                None => mul(&[inner, h]),
            };
            let boosted_layers = (0..a.layers)
                .filter(|&i| use_more_bits(i, a.layers))
                .count() as u64;
            let linear = pc.layer_linear;
            let v_boosted = mul(&[boosted_layers, h, a.kv_width()]).min(linear);
            let down_boosted = mul(&[boosted_layers, down]).min(linear - v_boosted);
            let down_rest =
                mul(&[layers - boosted_layers, down]).min(linear - v_boosted - down_boosted);
            // MLA's output projection reads `heads × v_head_dim`, not `q_width`.
            let (o_cols, o) = match a.mla {
                None => (a.q_width(), mul(&[layers, a.q_width(), h])),
                Some(_) => (h, 0),
            };
            let o = o.min(linear - v_boosted - down_boosted - down_rest);
            let hidden_rows = linear - v_boosted - down_boosted - down_rest - o;
            // A tied table is stored in the output's type.
            let embeddings = if a.tied_embeddings {
                mix.output_for(h)
            } else {
                mix.base_for(h)
            };
            // Norms and biases stay F32 in GGUF files.
            let rest = pc
                .total
                .saturating_sub(pc.layer_linear)
                .saturating_sub(pc.embeddings)
                .saturating_sub(pc.lm_head);
            mix.base_for(h)
                .bytes_for(hidden_rows)
                .saturating_add(mix.base_for(o_cols).bytes_for(o))
                .saturating_add(mix.base_for(inner).bytes_for(down_rest))
                .saturating_add(mix.boosted_for(h).bytes_for(v_boosted))
                .saturating_add(mix.boosted_for(inner).bytes_for(down_boosted))
                .saturating_add(embeddings.bytes_for(pc.embeddings))
                .saturating_add(mix.output_for(h).bytes_for(pc.lm_head))
                .saturating_add(mul(&[4, rest]))
        }
        (WeightFormat::Gguf { mix }, None) => mix_of(mix).base.bytes_for(pc.total),
        (_, Some(_)) => {
            // Quantised linears; embeddings, head, norms and biases stay 16-bit.
            format
                .linear_bytes(pc.layer_linear)
                .saturating_add(sixteen.bytes_for(pc.total.saturating_sub(pc.layer_linear)))
        }
        (_, None) => format.linear_bytes(pc.total),
    }
}

/// Bytes of the input embedding table llama.cpp keeps in CPU RAM: "there is very
/// little benefit to offloading the input layer, so always keep it on the CPU"
/// (src/llama-model.cpp). With tied embeddings the table is there too, and the output
/// layer is a second copy of it on the GPU (`TENSOR_DUPLICATED`): the GPU then holds as
/// much as the file, and RAM the table besides ([`embeddings_off_gpu`]).
pub fn embeddings_on_cpu(
    pc: &ParamCount,
    arch: Option<&Architecture>,
    format: WeightFormat,
) -> u64 {
    match arch {
        Some(a) if !a.encoder_only => match format {
            WeightFormat::Gguf { mix } => {
                let mix = mix_of(mix);
                let h = u64::from(a.hidden);
                if a.tied_embeddings {
                    mix.output_for(h)
                } else {
                    mix.base_for(h)
                }
                .bytes_for(pc.embeddings)
            }
            WeightFormat::Plain { dtype } => dtype.bytes_for(pc.embeddings),
            _ => Dtype::Bf16.bytes_for(pc.embeddings),
        },
        _ => 0,
    }
}

/// What the embedding table takes off the GPU's share of the file: all of it, unless
/// the output layer on the GPU is a copy of the same table (tied embeddings).
pub fn embeddings_off_gpu(
    pc: &ParamCount,
    arch: Option<&Architecture>,
    format: WeightFormat,
) -> u64 {
    match arch {
        Some(a) if a.tied_embeddings => 0,
        _ => embeddings_on_cpu(pc, arch, format),
    }
}

/// LoRA adapter parameters: rank × (in + out) for every adapted linear of the layers
/// (q and v with PEFT's defaults, a list of modules, or every linear with
/// `target_modules="all-linear"`). PEFT matches module names by suffix, so a vision
/// tower's layers get theirs too: SigLIP names its projections `q_proj`, `k_proj`,
/// `v_proj`, `out_proj` (which "o_proj" does not match), `fc1` and `fc2`, which only
/// "all-linear" reaches.
pub fn lora_params(a: &Architecture, rank: u32, targets: LoraTargets) -> u64 {
    let tower = a.vision.map_or(0, |v| {
        let (h, i) = (u64::from(v.hidden), u64::from(v.intermediate));
        let per_layer = match targets {
            LoraTargets::Modules(set) => {
                let named = [Linear::Q, Linear::K, Linear::V]
                    .iter()
                    .filter(|&&l| set.contains(l))
                    .count() as u64;
                named * (h + h)
            }
            LoraTargets::AllLinear => 4 * (h + h) + 2 * (h + i),
        };
        mul(&[u64::from(rank), u64::from(v.layers), per_layer])
    });
    lora_params_text(a, rank, targets).saturating_add(tower)
}

/// [`lora_params`] of the language model alone. A plain MLP (GPT-2's `c_fc`, Phi's
/// `fc1`) has no gate; an MoE's experts and shared experts each carry the MLP's.
fn lora_params_text(a: &Architecture, rank: u32, targets: LoraTargets) -> u64 {
    let h = u64::from(a.hidden);
    let (q, kv) = (a.q_width(), a.kv_width());
    let experts = a.moe.map_or(1, |m| {
        // u32 sum widened first: experts + shared experts can pass u32::MAX.
        u64::from(m.experts) + u64::from(m.shared_experts)
    });
    let inter = a.moe.map_or(u64::from(a.intermediate), |m| {
        u64::from(m.expert_intermediate)
    });
    let per_layer: u64 = Linear::ALL
        .iter()
        .filter(|&&l| targets.adapts(l))
        .map(|&l| match l {
            Linear::Q => h + q,
            Linear::K | Linear::V => h + kv,
            Linear::O => q + h,
            Linear::Gate if matches!(a.mlp, Mlp::Plain) => 0,
            Linear::Gate | Linear::Up | Linear::Down => experts.saturating_mul(h + inter),
        })
        .fold(0, u64::saturating_add);
    mul(&[u64::from(rank), u64::from(a.layers), per_layer])
}

/// Optimizer bytes per trainable parameter, as (numerator, denominator). PyTorch's
/// AdamW keeps its moments in the parameter's dtype (`zeros_like`, `state_bytes`);
/// bitsandbytes' 32-bit optimizers (the paged AdamW, Trainer's `paged_adamw_32bit`) keep
/// them in fp32 whatever the parameter's dtype (`Optimizer2State.init_state`:
/// `get_state_buffer(p, dtype=torch.float32)`), so pure bf16 with it has fp32 states.
fn optimizer_per_param(opt: Optimizer, state_bytes: u64) -> (u64, u64) {
    match opt {
        Optimizer::Adamw => (2 * state_bytes, 1),
        Optimizer::PagedAdamw => (2 * 4, 1),
        // Two int8 moments + two fp32 absmax per block of 2048.
        Optimizer::Adamw8bit | Optimizer::PagedAdamw8bit => (2 * 2048 + 8, 2048),
        // Factored: about (rows + cols) × 4 bytes per matrix; for 4096-wide matrices
        // that is 8 / 4096 bytes per parameter.
        Optimizer::Adafactor => (8, 4096),
        Optimizer::Sgd => (0, 1),
        Optimizer::SgdMomentum => (state_bytes, 1),
    }
}

/// A checkpoint's vision tower in training: its parameters, and those of them in
/// `nn.Linear` weights. `AutoModelForCausalLM` loads it for training as for inference
/// (see [`vision_bytes`]); with LoRA and QLoRA PEFT freezes it with the rest of the
/// base (bitsandbytes quantising its linears like the language model's), and a full
/// fine-tune trains it unless the script freezes it. A text-only batch never runs it:
/// no activations.
fn tower_params(arch: Option<&Architecture>) -> (u64, u64) {
    arch.and_then(|a| a.vision.map(|v| (v.params(a.hidden), v.linear_params())))
        .unwrap_or((0, 0))
}

/// Bytes of a checkpoint's vision tower and projector ([`Architecture::vision`]) as a
/// PyTorch engine loads them for inference: transformers' `AutoModelForCausalLM` maps a
/// `gemma3` config to `Gemma3ForConditionalGeneration` (`MODEL_FOR_CAUSAL_LM_MAPPING_NAMES`
/// in transformers/models/auto/modeling_auto.py) and vLLM builds the same class, so both
/// load the tower whether or not images arrive, in the model's dtype (a quantisation
/// that also packs the tower's linears would make it smaller: counted whole, on the safe
/// side). ggml runtimes read it from a separate mmproj file, and exact checkpoint bytes
/// already include it: 0 for both. Training counts it its own way ([`tower_params`]).
pub fn vision_bytes(arch: Option<&Architecture>, w: &Workload) -> u64 {
    let loaded =
        w.mode == Mode::Inference && w.engine != Engine::Ggml && w.stored_weights.is_none();
    if loaded {
        w.compute_dtype().bytes_for(tower_params(arch).0)
    } else {
        0
    }
}

/// Weights, gradients and optimizer states of the whole model (before sharding), and
/// the number of trainable parameters.
fn model_states(
    pc: &ParamCount,
    arch: Option<&Architecture>,
    w: &Workload,
) -> Result<(Breakdown, u64), EstimateError> {
    let mut b = Breakdown::default();
    if w.mode == Mode::Inference {
        b.weights = w
            .stored_weights
            .unwrap_or_else(|| weight_bytes(pc, arch, w.weights))
            .saturating_sub(if w.engine == Engine::Ggml {
                embeddings_off_gpu(pc, arch, w.weights)
            } else {
                0
            })
            .saturating_add(vision_bytes(arch, w));
        return Ok((b, 0));
    }
    let (tower, tower_linear) = tower_params(arch);
    match w.finetune {
        Finetune::Full => {
            let WeightFormat::Plain { dtype } = w.weights else {
                return Err(EstimateError::FullNeedsPlainWeights);
            };
            let trainable = pc.total.saturating_add(tower);
            let bytes = dtype.bytes_for(1);
            // fp32 weights leave nothing for mixed precision to keep apart.
            let precision = if bytes >= 4 {
                Precision::Pure
            } else {
                w.precision
            };
            match precision {
                Precision::Amp => {
                    // fp32 parameters and gradients, fp32 states, and the 16-bit copy
                    // of each weight autocast made for the forward pass.
                    b.weights = mul(&[trainable, 4 + bytes]);
                    b.gradients = mul(&[trainable, 4]);
                    let (num, den) = optimizer_per_param(w.optimizer, 4);
                    b.optimizer = mul(&[trainable, num]).div_ceil(den);
                }
                Precision::Master => {
                    b.weights = dtype.bytes_for(trainable);
                    b.gradients = mul(&[trainable, bytes]);
                    let (num, den) = optimizer_per_param(w.optimizer, 4);
                    b.optimizer = mul(&[trainable, num])
                        .div_ceil(den)
                        .saturating_add(mul(&[trainable, 4]));
                }
                Precision::Pure => {
                    b.weights = dtype.bytes_for(trainable);
                    b.gradients = mul(&[trainable, bytes]);
                    let (num, den) = optimizer_per_param(w.optimizer, bytes);
                    b.optimizer = mul(&[trainable, num]).div_ceil(den);
                }
            }
            Ok((b, trainable))
        }
        Finetune::Lora | Finetune::Qlora => {
            let a = arch.ok_or(EstimateError::AdaptersNeedArchitecture)?;
            if w.lora_rank == 0 {
                return Err(EstimateError::Zero("El rango de LoRA"));
            }
            let base = if w.finetune == Finetune::Qlora
                && matches!(w.weights, WeightFormat::Plain { .. })
            {
                // QLoRA: 4-bit NF4 base with double quantisation (Dettmers et al. 2023).
                WeightFormat::Nf4 { double_quant: true }
            } else {
                w.weights
            };
            let adapters = lora_params(a, w.lora_rank, w.lora_targets);
            // PEFT keeps adapters in fp32 (`autocast_adapter_dtype=True`): 4-byte
            // weights and gradients, fp32 optimizer states. Pure 16-bit training
            // (torchtune) keeps them in the compute dtype.
            let adapter_bytes = match w.precision {
                Precision::Pure => w.compute_dtype().bytes_for(1),
                Precision::Amp | Precision::Master => 4,
            };
            // The frozen tower: its linears in the base's format, the rest (patch
            // convolution, position table, norms, biases, projector) in 16 bits.
            let tower_rest = tower.saturating_sub(tower_linear);
            let tower_bytes = base
                .linear_bytes(tower_linear)
                .saturating_add(w.compute_dtype().bytes_for(tower_rest));
            let tower_upcast = if kbit_prepared(w) {
                mul(&[2, tower_rest])
            } else {
                0
            };
            b.weights = weight_bytes(pc, Some(a), base)
                .saturating_add(kbit_upcast_bytes(pc, w))
                .saturating_add(tower_bytes)
                .saturating_add(tower_upcast)
                .saturating_add(mul(&[adapters, adapter_bytes]));
            b.gradients = mul(&[adapters, adapter_bytes]);
            let (num, den) = optimizer_per_param(w.optimizer, adapter_bytes);
            b.optimizer = mul(&[adapters, num]).div_ceil(den);
            Ok((b, adapters))
        }
    }
}

/// Whether PEFT's `prepare_model_for_kbit_training` ran on this QLoRA base
/// (`Workload::kbit_fp32`): it prepares bitsandbytes bases (NF4, or int8 and 16-bit
/// weights loaded through bitsandbytes) and skips GPTQ and the other quantisers
/// (peft/utils/other.py).
fn kbit_prepared(w: &Workload) -> bool {
    w.kbit_fp32
        && w.finetune == Finetune::Qlora
        && matches!(
            w.weights,
            WeightFormat::Nf4 { .. } | WeightFormat::Plain { .. }
        )
}

/// The bytes `prepare_model_for_kbit_training` adds to the weights: it casts every
/// fp16/bf16 parameter that is not `Params4bit` (embeddings, head, norms, biases) to
/// fp32, 2 more bytes each.
pub fn kbit_upcast_bytes(pc: &ParamCount, w: &Workload) -> u64 {
    if kbit_prepared(w) {
        mul(&[2, pc.total.saturating_sub(pc.layer_linear)])
    } else {
        0
    }
}

/// Whether a linear layer's weight gets a gradient (a full fine-tune) or a LoRA adapter.
/// A frozen layer's backward needs only its weight: autograd saves an operand of a
/// product only when the other one requires grad (`derivatives.yaml`'s conditional
/// saves), so a frozen projection does not keep its input.
fn trains(w: &Workload, l: Linear) -> bool {
    match w.finetune {
        Finetune::Full => true,
        Finetune::Lora | Finetune::Qlora => w.lora_targets.adapts(l),
    }
}

/// Copies of one input that the trained linears reading it save. A full fine-tune
/// without autocast shares one tensor. Autocast casts the fp32 input to 16 bits once per
/// call (its cache holds only the casts of weights): each trained reader saves its own
/// 16-bit copy. So it goes with LoRA wherever the adapter's input is cast: PEFT's
/// linears cast it to the adapter's dtype (`_cast_input_dtype` in
/// peft/tuners/lora/layer.py; fp32 adapters, `autocast_adapter_dtype=True`) before
/// autocast casts it back, and an fp32 residual stream (PEFT's k-bit preparation) is
/// cast by every reader. Adapters in the compute dtype (pure precision: PEFT's cast is
/// a no-op, torchtune reads `x` itself) and PEFT's bitsandbytes layers under autocast
/// (they cast only without it: `requires_conversion = not torch.is_autocast_enabled()`
/// in peft/tuners/lora/bnb.py) read the 16-bit input itself: one tensor for all.
fn input_copies(w: &Workload, amp: bool, readers: &[Linear]) -> u128 {
    let n = readers.iter().filter(|&&l| trains(w, l)).count() as u128;
    let shared = match w.finetune {
        Finetune::Full => !amp,
        Finetune::Lora | Finetune::Qlora => {
            (w.precision == Precision::Pure || bnb_base(w)) && !kbit_prepared(w)
        }
    };
    if shared { n.min(1) } else { n }
}

/// Whether the frozen base is a bitsandbytes one (NF4, or LLM.int8), whose PEFT
/// layers leave the input to autocast.
fn bnb_base(w: &Workload) -> bool {
    match w.weights {
        WeightFormat::Nf4 { .. } => true,
        WeightFormat::Plain { .. } => w.finetune == Finetune::Qlora || bnb_int8(w),
        _ => false,
    }
}

/// The MLP width one token runs through: a dense model's intermediate size, or an
/// MoE's routed and shared experts together.
fn token_intermediate(a: &Architecture) -> u64 {
    a.moe.map_or(u64::from(a.intermediate), |m| {
        u64::from(m.expert_intermediate).saturating_mul(
            u64::from(m.experts_per_token.min(m.experts)) + u64::from(m.shared_experts),
        )
    })
}

/// The widest single MLP matrix's intermediate side: a dense model's, or an MoE's
/// wider of one expert and its dense layers.
fn widest_intermediate(a: &Architecture) -> u64 {
    a.moe.map_or(u64::from(a.intermediate), |m| {
        u64::from(m.expert_intermediate).max(u64::from(a.intermediate))
    })
}

/// Activations saved for backward by one layer, in bytes (Korthikanti et al. 2022,
/// "Reducing Activation Recomputation in Large Transformer Models", §4.1, adapted to
/// GQA, gated MLPs, dropout-free models, fused attention kernels, frozen projections and
/// autocast), as transformers' decoder layers run under `Trainer`. Checked against
/// peaks measured on an H200 (`tools/device/measure_memory.py`).
pub fn layer_activations(a: &Architecture, w: &Workload) -> u64 {
    let c = u128::from(w.compute_dtype().bytes_for(1));
    let (s, b) = (u128::from(w.seq), u128::from(w.batch));
    let tp = u128::from(w.tp.max(1));
    let h = u128::from(a.hidden);
    let q = u128::from(a.q_width()) / tp;
    let kv = u128::from(a.kv_width()).div_ceil(tp);
    let heads = u128::from(a.heads).div_ceil(tp);
    let sb = s * b;
    // Autocast over fp32 weights keeps some activations in fp32.
    let amp = w.mode == Mode::Train && w.precision == Precision::Amp && c < 4;
    let inter = u128::from(token_intermediate(a)) / tp;
    let lse = 4 * heads * sb;
    if w.fused_layers && w.finetune != Finetune::Full && a.mlp == Mlp::Gated && !a.dropout {
        // Unsloth's kernels (unsloth/kernels/fast_lora.py, rms_layernorm.py,
        // rope_embedding.py): `LoRA_QKV` saves the block's input once, rotary
        // embeddings are applied in place, `LoRA_W` saves the output projection's input,
        // `LoRA_MLP` saves its input and the gate and up outputs (its backward
        // overwrites them), and `Fast_RMS_Layernorm` keeps its 16-bit input and one fp32
        // rstd per row. The attention kernel keeps its output too; FlashAttention's
        // layout makes it the output projection's input, SDPA's needs a transposed copy.
        let kernel_out = if w.attention == Attention::Flash {
            0
        } else {
            q
        };
        let attn = c * sb * (h + q + 2 * kv + kernel_out + q) + lse;
        let mlp = c * sb * (h + 2 * inter);
        let norms = u128::from(a.norms_per_layer) * (c * sb * h + 4 * sb);
        return u64::try_from(attn + mlp + norms).unwrap_or(u64::MAX);
    }
    // bitsandbytes' 8-bit layers keep their input whether or not anything in them
    // trains (`ctx.tensors = (CAt, subA, A)` in `MatMul8bitLt.forward`): at least one
    // tensor per input, the one the adapters reading it may save as well.
    let int8 = u128::from(w.mode == Mode::Train && bnb_int8(w));
    let o_input = if trains(w, Linear::O) || int8 == 1 {
        q
    } else {
        0
    };
    // Attention: the block's input (once per trained reader), Q and K after rotary and
    // V (the attention kernel saves them), the output projection's input.
    let qkv_inputs = input_copies(w, amp, &[Linear::Q, Linear::K, Linear::V]).max(int8);
    let mut attn = c * sb * (h * qkv_inputs + q + 2 * kv + o_input);
    match w.attention {
        Attention::Eager => {
            // Softmax output; with dropout also its mask (1 byte) and output. Under
            // autocast, softmax runs in fp32 (it is on autocast's float32 list), so its
            // output is saved in fp32 and the PV matmul saves a 16-bit copy.
            let scores = heads * s * s * b;
            let (kept, cast) = if amp { (4, c) } else { (c, 0) };
            attn +=
                kept * scores + cast * scores + if a.dropout { scores + kept * scores } else { 0 };
        }
        // Fused kernels keep the fp32 log-sum-exp per row and their own output. SDPA's
        // (batch, heads, tokens) layout makes the output projection read a contiguous
        // transposed copy; FlashAttention's (batch, tokens, heads) output is that input
        // already, so it counts once (above, when the projection trains).
        Attention::Sdpa => attn += lse + c * sb * q,
        Attention::Flash => attn += lse + if o_input == 0 { c * sb * q } else { 0 },
    }
    if a.dropout {
        attn += sb * h; // mask after the output projection
    }
    let down_input = if trains(w, Linear::Down) || int8 == 1 {
        inter
    } else {
        0
    };
    let mlp = c * sb * h * input_copies(w, amp, &[Linear::Gate, Linear::Up]).max(int8)
        + match a.mlp {
            // gate (the activation's input), act(gate) and up (the product's operands),
            // and the product (the down projection's input)
            Mlp::Gated => c * sb * (3 * inter + down_input),
            // fc1 output (the activation's input), the activation's output
            Mlp::Plain => c * sb * (inter + down_input),
        }
        + if a.dropout { sb * h } else { 0 };
    // Each norm saves its input for backward. RMSNorm as transformers and torchtune
    // write it upcasts that input to fp32 first (`hidden_states.to(torch.float32)`), and
    // under autocast `layer_norm` runs in fp32: 4 bytes then; the compute dtype
    // otherwise.
    let norm_bytes = match (a.norm, amp) {
        (Norm::Rms, _) | (Norm::Layer, true) => c.max(4),
        (Norm::Layer, false) => c,
    };
    // transformers' RMSNorm ends with `self.weight * hidden_states.to(input_dtype)`:
    // when that weight trains (a full fine-tune), the multiply saves the normalized
    // tensor as well, in the residual stream's dtype (fp32 under autocast over fp32
    // weights, the compute dtype otherwise). LayerNorm is one fused op that does not.
    let trained_norm = match a.norm {
        Norm::Rms if w.mode == Mode::Train && w.finetune == Finetune::Full => {
            if amp {
                4
            } else {
                c
            }
        }
        _ => 0,
    };
    let norms = u128::from(a.norms_per_layer) * (norm_bytes + trained_norm) * sb * h;
    u64::try_from(attn + mlp + norms).unwrap_or(u64::MAX)
}

/// Tokens per chunk of a fused projection + cross-entropy (Unsloth, Liger, TRL's
/// `chunked_nll`). Those kernels split the tokens into chunks of a few thousand at most;
/// 1024 counts one chunk's fp32 working set without pretending to know each library's
/// exact split, and it is small next to every other term at any length that fits.
pub const FUSED_CHUNK_TOKENS: u64 = 1024;

/// The peak of the loss over the vocabulary-sized logits, in bytes.
///
/// Full loss, as transformers computes it (`ForCausalLMLoss` in
/// `transformers/loss/loss_utils.py`: `logits.float()`, then `cross_entropy`): the
/// forward holds the 16-bit logits, their fp32 copy and the fp32 log-softmax output
/// (c + 8 bytes per logit); backward starts with that log-softmax output, its gradient
/// and the gradient of its input (12 bytes). The logits themselves are gone by then:
/// `Trainer.compute_loss` returns the loss alone, so the model's output object and its
/// logits are freed before `backward`, and the fp32 copy is not saved for backward. The
/// larger of the two, 12 bytes for 16-bit and fp32 logits alike, is the peak.
/// Measured on an H200 (`tools/device/measure_memory.py`, 2026-12-04): 12.1 bytes per
/// logit for Qwen2.5-0.5B trained in bf16 with `Trainer`.
///
/// Chunked and fused losses keep the 16-bit logits (torchtune's chunked output) or only
/// one chunk of them, and the same fp32 working set per chunk.
///
/// Under the whole loss sits [`head_cast`]: the 16-bit copy of an fp32, frozen output
/// projection that autocast makes and autograd keeps until the head's backward.
pub fn loss_peak(a: &Architecture, w: &Workload) -> u64 {
    if a.encoder_only {
        // Encoders used for classification have no vocabulary-sized output.
        return 0;
    }
    let c = w.compute_dtype().bytes_for(1);
    let vocab = u64::from(a.vocab) / u64::from(w.tp.max(1));
    let tokens = mul(&[w.batch, w.seq]);
    let logits = match w.loss {
        Loss::Full => mul(&[tokens, vocab, (c + 8).max(12)]),
        Loss::ChunkedOutput { chunks } => mul(&[tokens, vocab, c]).saturating_add(mul(&[
            tokens.div_ceil(u64::from(chunks.max(1))),
            vocab,
            12,
        ])),
        Loss::Fused => mul(&[tokens.min(FUSED_CHUNK_TOKENS), vocab, c + 12]),
    };
    logits.saturating_add(head_cast(a, w))
}

/// The 16-bit copy of the output projection that autocast makes on every forward pass
/// when the head is an fp32 weight that does not train: what PEFT's
/// `prepare_model_for_kbit_training` leaves behind in QLoRA (it casts every parameter
/// that is not 4-bit to fp32 and freezes it; bitsandbytes never quantises the head,
/// `get_keys_to_not_convert` in transformers' bitsandbytes integration). Autocast caches
/// the casts of fp32 leaves only when they require grad (`cached_cast` in
/// aten/src/ATen/autocast_mode.cpp: `arg.requires_grad() && arg.is_leaf()`), so the
/// frozen head is cast afresh, and the product saves that copy for the gradient of its
/// input (the hidden states require grad when adapters train below). It lives from the
/// head's forward to the head's backward, which wraps the whole loss. A fused loss
/// takes the weight itself, and a model without autocast casts nothing.
pub fn head_cast(a: &Architecture, w: &Workload) -> u64 {
    let c = w.compute_dtype().bytes_for(1);
    if !kbit_prepared(w) || c >= 4 || w.loss == Loss::Fused {
        return 0;
    }
    mul(&[u64::from(a.vocab), u64::from(a.hidden), c]) / u64::from(w.tp.max(1))
}

/// Training activations at their peak: every layer's saved tensors (or only layer
/// inputs under checkpointing), plus the larger of the loss's peak over the logits
/// (which comes first, as backward starts) and the backward working set of one layer.
///
/// Pipeline parallelism does not divide this: with the 1F1B schedule the first stage
/// holds `pp` micro-batches in flight, each through `layers / pp` layers, which is the
/// whole model's activations for one micro-batch (Korthikanti et al. 2022, §4.2.3).
///
/// `absent_gradients` are the gradient bytes that do not exist yet when the loss peaks:
/// all of them where the training loop frees gradients between steps
/// (`zero_grad(set_to_none=True)`, PyTorch 2's default, which `Trainer` and torchtune
/// call), so the loss's peak overlaps the gradients only by what exceeds them; none where
/// gradients live in persistent buffers (DeepSpeed).
///
/// `sync` adds what ZeRO-2/3 hold while they reduce a module's whole gradient
/// ([`grad_sync`]): a layer's largest module during that layer's backward, and the
/// output head's at its own backward, when the loss has shrunk to the logits' gradient
/// (through all of backward when the head is tied to the embeddings, whose gradient
/// is complete only after the embedding's backward).
pub fn training_activations(
    a: &Architecture,
    w: &Workload,
    absent_gradients: u64,
    sync: &GradSync,
) -> u64 {
    let layer = layer_activations(a, w);
    let c = w.compute_dtype().bytes_for(1);
    let layers = u64::from(a.layers);
    // After the loss, backward works through one layer at a time: its gradients (about
    // one layer's activations), plus, under checkpointing, that layer recomputed.
    let (saved, working) = if w.grad_checkpointing {
        // Offloaded checkpoints keep two layers' inputs on the GPU: the one in use and
        // the next, copied back ahead of time.
        let kept = if w.checkpoint_offload {
            layers.min(2)
        } else {
            layers
        };
        // After PEFT's k-bit preparation the residual stream is fp32 (fp32 embeddings
        // and norm weights promote it), and so is every layer input kept.
        let input = if kbit_prepared(w) { 4 } else { c };
        (
            mul(&[kept, input, w.seq, w.batch, u64::from(a.hidden)]),
            layer.saturating_mul(2),
        )
    } else {
        (mul(&[layers, layer]), layer)
    };
    // FSDP gathers the layer it works on: while backward runs through the layers, not
    // at the loss, whose layers are all resharded by then.
    let tied = if a.tied_embeddings {
        sync.head_gradient
    } else {
        0
    };
    // bitsandbytes' copies: a 16-bit weight in a layer's backward, LLM.int8's quantized
    // input and int32 product in a layer's forward: the last layer's, on top of every
    // layer's saved activations, or, under checkpointing, the recomputation's in
    // backward.
    let (int8_forward, int8_backward) = if w.grad_checkpointing {
        (0, bnb_int8_scratch(a, w))
    } else {
        (bnb_int8_scratch(a, w), 0)
    };
    let working = working
        .saturating_add(bnb_dequant_bytes(a, w).max(int8_backward))
        .saturating_add(fsdp_unsharded(a, w).1)
        .saturating_add(sync.layer_gradient)
        .saturating_add(tied);
    let head = if sync.head_gradient > 0 {
        let logits_gradient = match w.loss {
            Loss::Fused => 0,
            Loss::Full | Loss::ChunkedOutput { .. } => mul(&[
                w.batch,
                w.seq,
                u64::from(a.vocab) / u64::from(w.tp.max(1)),
                w.compute_dtype().bytes_for(1),
            ]),
        };
        logits_gradient.saturating_add(sync.head_gradient)
    } else {
        0
    };
    saved.saturating_add(
        working
            .max(loss_peak(a, w).saturating_sub(absent_gradients))
            .max(head)
            .max(int8_forward),
    )
}

/// The parameters PyTorch's FSDP holds whole on every GPU while it trains, in bytes:
/// `(root, layer)`.
///
/// - `root`: the root unit, whatever no wrapped layer owns (the embeddings, an untied
///   output head, the final norm). FSDP never reshards it after the forward pass,
///   because backward needs it at once (FSDP1: "Do not free the root's parameters in
///   the post-forward for FULL_SHARD", `_post_forward_reshard` in
///   torch/distributed/fsdp/_runtime_utils.py; FSDP2: the root gets no post-forward
///   reshard, `_lazy_init` in torch/distributed/fsdp/_fully_shard/_fsdp_state.py), so
///   its full copy lives beside its shard from the forward pass to the end of backward.
/// - `layer`: the decoder layer being worked on, all-gathered for its forward and
///   again for its backward. At least one is whole at any time; the prefetch of the
///   next one (backward prefetch, on by default) may add a second, not counted.
///
/// In the dtype FSDP computes in (its `param_dtype`; a 4-bit QLoRA base keeps its
/// packed linears). Zero without FSDP or with one GPU (unless the parameters live in RAM, `offload_params`). Not counted: a full
/// fine-tune's unsharded gradient of that layer before its reduce-scatter, and tensor
/// parallelism's split of the root (FSDP with TP is rare).
pub fn fsdp_unsharded(a: &Architecture, w: &Workload) -> (u64, u64) {
    let (param_shards, _, _) = w.shards();
    // Offloaded parameters are gathered onto the GPU even when one GPU holds them all.
    if !w.fsdp || param_shards <= 1 && !params_offloaded(w) || w.mode != Mode::Train {
        return (0, 0);
    }
    let pc = a.param_count();
    let c = w.compute_dtype().bytes_for(1);
    let root = mul(&[
        pc.embeddings
            .saturating_add(pc.lm_head)
            .saturating_add(u64::from(a.hidden)),
        c,
    ]);
    let layers = u64::from(a.layers.max(1));
    let linear = pc.layer_linear / layers;
    let rest = pc
        .total
        .saturating_sub(pc.embeddings)
        .saturating_sub(pc.lm_head)
        .saturating_sub(pc.layer_linear)
        / layers;
    let linear_bytes = match (w.finetune, w.weights) {
        (Finetune::Qlora, WeightFormat::Plain { .. }) => {
            WeightFormat::Nf4 { double_quant: true }.linear_bytes(linear)
        }
        (Finetune::Qlora, format) => format.linear_bytes(linear),
        _ => mul(&[linear, c]),
    };
    let layer = linear_bytes.saturating_add(mul(&[rest, c])) / u64::from(w.tp.max(1));
    (root, layer)
}

/// What keeping data-parallel GPUs' gradients in step adds to each GPU, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GradSync {
    /// Buffers present through every backward pass, counted with the gradients:
    /// PyTorch DDP's buckets, a second copy of every gradient, or DeepSpeed's reduce
    /// bucket (and, offloading at ZeRO-1/2, its GPU accumulation buffer).
    pub buckets: u64,
    /// DeepSpeed: its reduce bucket, among `buckets`.
    pub bucket: u64,
    /// DeepSpeed offloading at ZeRO-1/2: the GPU buffer as large as the largest
    /// parameter that trains, among `buckets`.
    pub staging: u64,
    /// ZeRO-3: the parameters still gathered where forward turns into backward, counted
    /// with the activations.
    pub reused: u64,
    /// Parameters among `reused`.
    pub reused_params: u64,
    /// Whether more than the output head stays gathered.
    pub reused_beyond_head: bool,
    /// ZeRO-2/3 in a full fine-tune: the output head's whole gradient until it is
    /// reduced, alive with the logits' gradient at the head's backward (and through
    /// all of backward when the head is tied to the embeddings).
    pub head_gradient: u64,
    /// The same for a layer's largest module, during that layer's backward.
    pub layer_gradient: u64,
}

/// Whether ZeRO-Offload keeps the gradient partitions in CPU RAM beside the optimizer
/// states. DeepSpeed at ZeRO-2 and 3: with `offload_optimizer` its ZeRO optimizer
/// works on the CPU (`self.device = … 'cpu'` in deepspeed/runtime/zero/stage_1_and_2.py,
/// where gradients accumulate into CPU buffers, `async_accumulate_grad_in_cpu_via_gpu`;
/// stage3.py allocates `grad_partitions_flat_buffer` on that device), and the GPU keeps
/// the buffers they pass through ([`grad_sync`]). ZeRO-1 does not partition gradients:
/// each GPU keeps its whole 16-bit gradients until `reduce_gradients` runs after
/// backward, so they stay counted.
///
/// FSDP's CPU offload moves the gradients too, but only with the parameters
/// (`CPUOffload(offload_params=True)`: "gradients are offloaded to CPU as well").
pub fn offloads_gradients(w: &Workload) -> bool {
    w.mode == Mode::Train && w.cpu_offload && (w.deepspeed && w.zero >= 2 || params_offloaded(w))
}

/// Whether ZeRO-Offload keeps an fp32 gradient partition in CPU RAM: DeepSpeed's at
/// every stage (ZeRO-1 too, beside the whole 16-bit gradients its GPU still holds),
/// and FSDP's with the parameters.
pub fn ram_gradients(w: &Workload) -> bool {
    w.mode == Mode::Train && w.cpu_offload && (w.deepspeed && w.zero >= 1 || params_offloaded(w))
}

/// Whether ZeRO-3 keeps the parameter shards in CPU RAM (`Workload::offload_params`,
/// honoured only when training at stage 3 with the optimizer offloaded too).
pub fn params_offloaded(w: &Workload) -> bool {
    w.mode == Mode::Train && w.offload_params && w.zero >= 3 && w.cpu_offload
}

/// DeepSpeed's default `stage3_max_reuse_distance`, in parameters (`max_reuse_distance:
/// int = Field(pp_int(1e9), …)` in deepspeed/runtime/zero/config.py; the config files
/// of Trainer's docs set the same 1e9). A module is not released after use when it
/// comes back within that many parameters of the module trace
/// (`__params_to_release` in partitioned_param_coordinator.py): where forward turns
/// into backward, the output head and the last layers stay gathered.
pub const DEEPSPEED_REUSE_DISTANCE: u64 = 1_000_000_000;

/// DeepSpeed's own default `reduce_bucket_size`, in elements (`reduce_bucket_size:
/// int = Field(pp_int(5e8))` in deepspeed/runtime/zero/config.py), used where a config
/// gives a number instead of Trainer's "auto".
pub const DEEPSPEED_REDUCE_BUCKET: u64 = 500_000_000;

/// The largest module inside a layer: its widest linear, or a MoE layer's routed
/// experts, which Transformers keeps in one module of 3-D tensors (`MixtralExperts`
/// and its siblings: `gate_up_proj` [experts, 2 × intermediate, hidden] and
/// `down_proj`).
pub fn largest_layer_module_params(a: &Architecture) -> u64 {
    let mut widest = a.q_width().max(u64::from(a.intermediate));
    if let Some(m) = a.moe {
        widest = widest.max(u64::from(m.expert_intermediate) * u64::from(m.shared_experts.max(1)));
    }
    mul(&[widest, u64::from(a.hidden)]).max(routed_experts_params(a, mlp_matrices(a)))
}

/// Weight matrices in an MLP: gate, up and down, or up and down.
fn mlp_matrices(a: &Architecture) -> u64 {
    match a.mlp {
        Mlp::Gated => 3,
        Mlp::Plain => 2,
    }
}

/// `matrices` of a MoE layer's routed experts, all experts together (as Transformers
/// stores them, one 3-D tensor per matrix kind); 0 for a dense model.
fn routed_experts_params(a: &Architecture, matrices: u64) -> u64 {
    a.moe.map_or(0, |m| {
        mul(&[
            u64::from(m.experts),
            matrices,
            u64::from(m.expert_intermediate),
            u64::from(a.hidden),
        ])
    })
}

/// The buffers data-parallel training uses to reduce gradients, per GPU, given the
/// gradient bytes each GPU keeps and the bytes of the whole model's weights (split by
/// tensor and pipeline parallelism, not by ZeRO).
///
/// - PyTorch DDP (ZeRO stage 0 outside DeepSpeed, more than one data-parallel rank):
///   its `Reducer` allocates bucket tensors covering every parameter that trains, in
///   its dtype, when DDP is built, and copies each gradient into them for the
///   all-reduce, unless DDP is built with `gradient_as_bucket_view=True` ("the saved
///   memory size will be equal to the total gradients size", DDP's docs;
///   pytorch/pytorch#41954). accelerate's `DistributedDataParallelKwargs`, and so
///   `Trainer`, leave it `False`, as does Lightning's `DDPStrategy` (litgpt): the
///   buckets are a second copy of the gradients. Needs no architecture.
/// - DeepSpeed ZeRO (stages 1–3): gradients go through a contiguous bucket of
///   `reduce_bucket_size` elements in the model's 16-bit type
///   (`torch.empty(self.reduce_bucket_size, …)` in deepspeed/runtime/zero/stage3.py and
///   stage_1_and_2.py, `contiguous_gradients` on by default), which `Trainer` and
///   accelerate fill as hidden² for "auto" (`trainer_config_finalize` in
///   transformers/integrations/deepspeed.py). One bucket: stages 1–2 take a second one
///   only with `overlap_comm`, off by default there; stage 3 always has one. Offloading
///   at stages 1–2 adds `temp_grad_buffer_for_gpu_offload`, a GPU buffer as large as
///   the largest parameter.
/// - A parameter larger than the bucket is reduced from its own whole gradient, which
///   exists until it is reduced: at stages 2 and 3, where gradients are partitioned,
///   the largest module's whole gradient (when it trains) comes on top of each GPU's
///   partition, at the output head's backward, right at the loss.
/// - DeepSpeed ZeRO-3 gathers each module's parameters whole while it runs and does
///   not release those it will use again within `stage3_max_reuse_distance`
///   parameters ([`DEEPSPEED_REUSE_DISTANCE`]): where forward turns into backward, the
///   output head and the last layers stay gathered, up to that many parameters and the
///   module that passes it. Its
///   own estimator charges less, `4 * largest_layer_params`
///   (`estimate_zero3_model_states_mem_needs`). One GPU gathers nothing unless the
///   parameters live in CPU RAM.
///
/// FSDP has its own account ([`fsdp_unsharded`]).
pub fn grad_sync(a: Option<&Architecture>, w: &Workload, gradients: u64, weights: u64) -> GradSync {
    if w.mode != Mode::Train || w.fsdp {
        return GradSync::default();
    }
    let split = u64::from(w.tp.max(1)) * u64::from(w.pp.max(1));
    let dp = (u64::from(w.gpus.max(1)) / split).max(1);
    let c = w.compute_dtype().bytes_for(1);
    if !w.deepspeed {
        return GradSync {
            buckets: if w.zero == 0 && dp > 1 { gradients } else { 0 },
            ..GradSync::default()
        };
    }
    let Some(a) = a.filter(|_| w.zero >= 1) else {
        return GradSync::default();
    };
    let tp = u64::from(w.tp.max(1));
    let h = u64::from(a.hidden);
    let full = w.finetune == Finetune::Full;
    let bytes = |params: u64| mul(&[params, c]) / tp;
    let bucket = mul(&[h, h, c]);
    let staging = if w.cpu_offload && w.zero < 3 && full {
        bytes(largest_tensor_params(a))
    } else {
        0
    };
    let gathers = w.zero >= 3 && (dp > 1 || params_offloaded(w));
    let partitioned = w.zero >= 2 && (dp > 1 || offloads_gradients(w)) && full;
    let reused_params = if gathers {
        deepspeed_reused_params(a)
    } else {
        0
    };
    GradSync {
        buckets: bucket.saturating_add(staging),
        bucket,
        staging,
        reused: bytes(reused_params).min(weights),
        reused_params,
        reused_beyond_head: reused_params > head_params(a),
        head_gradient: if partitioned {
            bytes(head_params(a))
        } else {
            0
        },
        layer_gradient: if partitioned {
            bytes(largest_layer_module_params(a))
        } else {
            0
        },
    }
}

/// Parameters of the output projection (the embedding table when tied).
fn head_params(a: &Architecture) -> u64 {
    mul(&[u64::from(a.vocab), u64::from(a.hidden)])
}

/// The largest single parameter tensor: the embedding table or head, a layer's widest
/// linear, or a MoE layer's fused `gate_up_proj` [experts, 2 × intermediate, hidden].
/// DeepSpeed's offload buffer at ZeRO-1/2 is this large (`largest_param_numel` over the
/// parameters that train, stage_1_and_2.py).
fn largest_tensor_params(a: &Architecture) -> u64 {
    let widest = mul(&[
        a.q_width().max(u64::from(a.intermediate)),
        u64::from(a.hidden),
    ]);
    // `gate_up_proj` holds every input matrix; `down_proj` is smaller or equal.
    let gate_up = routed_experts_params(a, mlp_matrices(a) - 1);
    head_params(a).max(widest).max(gate_up)
}

/// `per_device_eval_batch_size` in transformers' `TrainingArguments` (and TRL's
/// `SFTConfig`, which keeps it): evaluation runs 8 sequences at a time whatever the
/// training batch.
pub const TRAINER_EVAL_BATCH: u64 = 8;

/// The loss of one evaluation batch of `batch` sequences over the logits, in bytes:
/// `Trainer.prediction_step` computes the loss under `no_grad` from the logits in the
/// compute dtype, their fp32 copy and its fp32 log-softmax (`ForCausalLMLoss`), alive
/// together (c + 8 bytes per logit). Nothing is saved for a backward.
pub fn eval_loss_bytes(a: &Architecture, w: &Workload, batch: u64) -> u64 {
    if a.encoder_only {
        return 0;
    }
    let vocab = u64::from(a.vocab) / u64::from(w.tp.max(1));
    mul(&[batch, w.seq, vocab, w.compute_dtype().bytes_for(1) + 8])
}

/// What `Trainer` keeps on the GPU per evaluated sequence when `compute_metrics` is set:
/// its logits and its int64 labels, gathered into `EvalLoopContainer`s that only go to
/// the CPU every `eval_accumulation_steps` (never, by default: `evaluation_loop` in
/// transformers/trainer.py). Each new batch is concatenated to the ones before
/// (`nested_concat`), so for a moment the old and the new tensor both exist: twice this
/// per sequence. The logits are fp32 when accelerate runs the model under autocast
/// (`Trainer(bf16=True)`: `prepare_model` wraps the forward in
/// `convert_outputs_to_fp32`), in the compute dtype otherwise (pure bf16, DeepSpeed).
pub fn eval_kept_bytes(a: &Architecture, w: &Workload, autocast_outputs: bool) -> u64 {
    if a.encoder_only {
        return 0;
    }
    let vocab = u64::from(a.vocab) / u64::from(w.tp.max(1));
    let per_logit = if autocast_outputs {
        4
    } else {
        w.compute_dtype().bytes_for(1)
    };
    mul(&[w.seq, vocab, per_logit]).saturating_add(mul(&[w.seq, 8]))
}

/// Whether the base linears are bitsandbytes' LLM.int8 (`load_in_8bit`: `Linear8bitLt`,
/// multiplied through `MatMul8bitLt`), the format `Dtype::Int8` stands for on PyTorch
/// engines. A QLoRA over plain weights loads its base in NF4 instead (`model_states`).
fn bnb_int8(w: &Workload) -> bool {
    w.engine == Engine::Torch
        && matches!(w.weights, WeightFormat::Plain { dtype: Dtype::Int8 })
        && !(w.mode == Mode::Train && w.finetune == Finetune::Qlora)
}

/// The working tensors of one LLM.int8 product besides its output, in bytes, for the
/// linear that needs most. `MatMul8bitLt.forward` (bitsandbytes/autograd/_functions.py)
/// first quantizes the input row by row, `int8_vectorwise_quant(A.to(torch.float16))`:
/// an fp16 copy of a bf16 input, the int8 rows and an fp32 scale per row, and, with
/// transformers' `llm_int8_threshold` of 6.0, `A.abs()` and its boolean outlier mask
/// for a moment (bitsandbytes/backends/cuda/ops.py). Then it multiplies into an int32
/// matrix (`int8_linear_matmul`, bitsandbytes/backends/default/ops.py) that
/// `int8_mm_dequant` scales into an fp16 output, converted to a bf16 input's dtype
/// only after that (`out.to(dtype)`). Every token the pass takes goes through it: the
/// prefill, and each training step's forward (and its recomputation under
/// checkpointing). The outlier columns' 16-bit slices, a few columns wide, are not
/// counted. An MoE counts its widest expert over all the tokens, more than its router
/// sends to one.
pub fn bnb_int8_scratch(a: &Architecture, w: &Workload) -> u64 {
    if !bnb_int8(w) {
        return 0;
    }
    let tokens = u128::from(w.seq) * u128::from(w.batch);
    let tp = u128::from(w.tp.max(1));
    let h = u128::from(a.hidden);
    let q = u128::from(a.q_width()) / tp;
    let kv = u128::from(a.kv_width()).div_ceil(tp);
    let inter = u128::from(widest_intermediate(a)) / tp;
    // Beside the int8 input and its scales: the fp16 copy (of a bf16 input), `abs()`
    // and the mask while quantizing; the int32 product and the fp16 output (before a
    // bf16 one) while multiplying.
    let cast = if w.compute_dtype() == Dtype::Fp16 {
        0
    } else {
        2
    };
    let product = |(inputs, outputs): (u128, u128)| {
        let quantize = (cast + 2 + 1) * inputs;
        let multiply = (4 + cast) * outputs;
        tokens * (inputs + 4 + quantize.max(multiply))
    };
    let widest = [(h, q), (h, kv), (q, h), (h, inter), (inter, h)]
        .into_iter()
        .map(product)
        .max()
        .unwrap_or(0);
    u64::try_from(widest).unwrap_or(u64::MAX)
}

/// What LLM.int8 keeps beyond checkpointing when that checkpointing is non-reentrant
/// (`use_reentrant=False`), in bytes: `MatMul8bitLt` holds its input as a `ctx`
/// attribute (`ctx.tensors`), not through `save_for_backward`, so the saved-tensor hooks
/// of `torch.utils.checkpoint` never free it, and every layer keeps its q/k/v input,
/// the attention output, the MLP's input and the product `down_proj` reads. Reentrant
/// checkpointing (transformers' default, `gradient_checkpointing_kwargs=None`) runs the
/// forward without autograd and keeps none of them. Zero unless LLM.int8 trains with
/// checkpointing.
pub fn bnb_int8_unhooked_inputs(a: &Architecture, w: &Workload) -> u64 {
    if !(w.mode == Mode::Train && w.grad_checkpointing && bnb_int8(w)) {
        return 0;
    }
    let h = u64::from(a.hidden);
    let inter = token_intermediate(a);
    let per_token = h
        .saturating_add(a.q_width())
        .saturating_add(h)
        .saturating_add(inter);
    mul(&[
        u64::from(a.layers),
        w.seq,
        w.batch,
        per_token,
        w.compute_dtype().bytes_for(1),
    ]) / u64::from(w.tp.max(1))
}

/// The 16-bit copy of one 4-bit linear that bitsandbytes makes to multiply by it, in
/// bytes: `MatMul4Bit` runs `linear(A, dequantize_4bit(B, quant_state).t())` in forward
/// and dequantizes again for the input's gradient in backward
/// (bitsandbytes/autograd/_functions.py); `matmul_4bit` skips it only for one token
/// without gradient (the `gemv_4bit` kernel, decoding). One linear at a time, freed
/// after its product: the widest of the attention projections and the MLP's matrices
/// (an MoE's per expert), in the compute dtype. The output head is never quantised.
/// torchao's NF4 (torchtune's QLoRA) also multiplies by the whole 16-bit weight
/// (`linear_nf4`: `weight.to(dtype)`); compiled, as torchtune's recipes run it, that is
/// this one copy (uncompiled, its dequantization holds more intermediates for a moment).
/// LLM.int8 makes the same copy in backward only, for the input's gradient
/// (`state.CB.to(ctx.dtype_A, copy=True)` in `MatMul8bitLt.backward`); its forward
/// quantizes the input instead ([`bnb_int8_scratch`]).
pub fn bnb_dequant_bytes(a: &Architecture, w: &Workload) -> u64 {
    // QLoRA over plain weights still loads the base in NF4 (`model_states`).
    let copies = match w.weights {
        WeightFormat::Nf4 { .. } => true,
        WeightFormat::Plain { .. } if w.mode == Mode::Train && w.finetune == Finetune::Qlora => {
            true
        }
        WeightFormat::Plain { .. } => w.mode == Mode::Train && bnb_int8(w),
        _ => false,
    };
    if !copies {
        return 0;
    }
    let inter = widest_intermediate(a);
    mul(&[
        a.q_width().max(inter),
        u64::from(a.hidden),
        w.compute_dtype().bytes_for(1),
    ]) / u64::from(w.tp.max(1))
}

/// The parameters DeepSpeed's ZeRO-3 leaves gathered after the forward pass: a module
/// is not released when its next use comes within `stage3_max_reuse_distance`
/// parameters of the trace (`__params_to_release`, walked from the next module). After
/// forward, a module's next use is its own backward, past every module after it twice
/// (forward, then backward in reverse): it stays when those modules hold fewer than
/// half the distance. The output head always stays; the last layer's modules follow
/// while they fit (Llama 3.1 8B: the head alone; Llama 2 70B: the head and the last
/// `down_proj` and `up_proj`; Mixtral: the head and the last layer's experts).
pub fn deepspeed_reused_params(a: &Architecture) -> u64 {
    let h = u64::from(a.hidden);
    let q = a.q_width();
    let kv = a.kv_width();
    // The last layer's modules in backward order (the reverse of forward).
    let matrices = mlp_matrices(a);
    let mut modules: Vec<u64> = match a.moe {
        Some(m) => {
            let mut v = Vec::new();
            if m.shared_experts > 0 {
                let shared = mul(&[
                    u64::from(m.expert_intermediate),
                    u64::from(m.shared_experts),
                    h,
                ]);
                v.extend(std::iter::repeat_n(shared, matrices as usize));
            }
            v.push(routed_experts_params(a, matrices));
            // The router.
            v.push(mul(&[u64::from(m.experts), h]));
            v
        }
        None => vec![mul(&[u64::from(a.intermediate), h]); matrices as usize],
    };
    modules.extend([mul(&[q, h]), mul(&[kv, h]), mul(&[kv, h]), mul(&[q, h])]);
    let mut after = head_params(a);
    let mut kept = after;
    // Whole layers repeat the same modules: at most the layers the distance spans.
    let layers = u64::from(a.layers.max(1));
    for module in modules.iter().cycle().take(modules.len() * layers as usize) {
        if after.saturating_mul(2) >= DEEPSPEED_REUSE_DISTANCE {
            break;
        }
        kept = kept.saturating_add(*module);
        after = after.saturating_add(*module);
    }
    kept
}

/// Peak of the transient tensors during a prefill forward pass (no autograd).
pub fn prefill_activations(a: &Architecture, w: &Workload) -> u64 {
    let c = u128::from(w.compute_dtype().bytes_for(1));
    let tp = u128::from(w.tp.max(1));
    let (s, b) = (u128::from(w.seq), u128::from(w.batch));
    let h = u128::from(a.hidden);
    let q = u128::from(a.q_width()) / tp;
    let kv = u128::from(a.kv_width()).div_ceil(tp);
    let heads = u128::from(a.heads).div_ceil(tp);
    let residual = 2 * c * s * b * h;
    let scores = match (w.engine, w.attention) {
        // AutoAWQ's fused attention: fp16 scores, `scores.float()` and the fp32
        // softmax of that copy, alive together; K and V repeated to every query head
        // (`torch.repeat_interleave`) before the product.
        (Engine::AwqFused, _) => heads * s * s * b * (2 + 4 + 4) + 2 * 2 * s * b * q,
        // Scores in 16-bit and the fp32 softmax Transformers computes.
        (_, Attention::Eager) => heads * s * s * b * (c + 4),
        (_, Attention::Sdpa | Attention::Flash) => 4 * heads * s * b,
    };
    let attn_phase = residual + c * s * b * (q + 2 * kv) + scores;
    let inter = u128::from(token_intermediate(a)) / tp;
    let mlp_phase = residual
        + match a.mlp {
            Mlp::Gated => 3 * c * s * b * inter,
            Mlp::Plain => 2 * c * s * b * inter,
        };
    // Only the last position's logits are computed when generating.
    let logits = if a.encoder_only {
        0
    } else {
        b * u128::from(a.vocab) * (c + 4)
    };
    // bitsandbytes dequantizes each 4-bit linear it multiplies by more than one token.
    let dequant = if s * b > 1 {
        u128::from(bnb_dequant_bytes(a, w))
    } else {
        0
    };
    // LLM.int8 quantizes the input of each linear instead.
    let int8 = u128::from(bnb_int8_scratch(a, w));
    u64::try_from(attn_phase.max(mlp_phase) + dequant + int8 + logits).unwrap_or(u64::MAX)
}

/// ggml's micro-batch (`n_ubatch`, 512 by default in llama.cpp and Ollama): the most
/// tokens one pass of the compute graph takes.
pub const GGML_UBATCH: u32 = 512;

/// The smallest micro-batch for which ggml's CUDA backend takes an operation whose
/// weights live in CPU memory (`ggml_backend_cuda_device_offload_op` in
/// ggml/src/ggml-cuda/ggml-cuda.cu: `min_batch_size = 32`).
pub const GGML_OP_OFFLOAD_MIN_BATCH: u64 = 32;

/// Whether llama.cpp applies the model's sliding window: Gemma 2 and 3, Cohere 2 and
/// gpt-oss build a sliding-window cache. Mistral 7B v0.1 is converted to GGUF as
/// architecture `llama`, which has none (its load log prints `n_swa = 0` and a
/// full-context KV cache), and llama.cpp leaves Phi-3's window off ("Phi SWA is
/// currently disabled", src/llama-model.cpp), so theirs keep the whole context.
pub fn ggml_honours_window(a: &Architecture) -> bool {
    matches!(
        a.family.as_str(),
        "gemma2" | "gemma3" | "gemma3_text" | "cohere2" | "gpt_oss"
    )
}

/// KV cells llama.cpp allocates for every slot's tokens: the context padded to 256
/// with flash attention and to 32 without (`llama_kv_cache::get_padding` in
/// src/llama-kv-cache.cpp).
pub fn ggml_kv_cells(w: &Workload) -> u64 {
    let pad = if w.attention == Attention::Flash {
        256
    } else {
        32
    };
    w.seq
        .saturating_add(w.new_tokens)
        .saturating_mul(w.batch)
        .div_ceil(pad)
        .saturating_mul(pad)
}

/// The slots llama-server opens when `-np` is left at `auto` (its default), all
/// sharing one KV pool (`kv_unified`): tools/server/server.cpp, "n_parallel is set to
/// auto, using n_parallel = 4 and kv_unified = true".
pub const LLAMA_SERVER_AUTO_SLOTS: u32 = 4;

/// Cells of llama.cpp's sliding-window KV cache, all slots together, for `cells` cells
/// of the full-context cache (`llama_kv_cache_iswa` in src/llama-kv-cache-iswa.cpp):
/// each stream holds its window for every sequence that shares it plus one micro-batch
/// (`n_swa × (unified ? n_seq_max : 1) + n_ubatch`), never more than the full cache,
/// padded to 256. One pool shared by `w.shared_slots` slots at a batch of one
/// (llama-server's `-np auto`, or a log's `kv_unified`), else `w.batch` streams of
/// their own (`-np N`, Ollama). llama-server and
/// Ollama's llama-server leave `swa_full` off; with it, or before that cache existed
/// (May 2025, PR 13194), every layer keeps the whole context.
pub fn ggml_swa_cells(window: u64, cells: u64, w: &Workload) -> u64 {
    let ubatch = w.ubatch.max(1);
    // The pool is shared at a batch of one; asking for more sequences is `-np N`.
    if w.shared_slots > 0 && w.batch <= 1 {
        let wanted = window
            .saturating_mul(u64::from(w.shared_slots))
            .saturating_add(ubatch);
        return cells.min(wanted).div_ceil(256).saturating_mul(256);
    }
    let streams = w.batch.max(1);
    let per_stream = cells.div_ceil(streams);
    per_stream
        .min(window.saturating_add(ubatch))
        .div_ceil(256)
        .saturating_mul(256)
        .saturating_mul(streams)
}

/// The compute buffer llama.cpp reserves on the GPU for its worst-case graph: a
/// micro-batch of `n_ubatch` tokens (512 by default), every one producing logits
/// (`graph_reserve` in src/llama-context.cpp asks for `n_outputs = n_tokens`). ggml's
/// allocator reuses memory between operations, so the buffer is the largest phase, all
/// in f32: the output (logits over the vocabulary plus the last hidden states), the
/// attention (Q, K, V and its output, and without flash attention the
/// micro-batch × cells × heads score matrix, which the softmax overwrites in place), or
/// the feed-forward block; the layers' phases also hold the attention mask.
pub fn ggml_compute_buffer(a: &Architecture, w: &Workload) -> u64 {
    let p = ggml_phases(a, w);
    p.output.max(p.layers)
}

/// The phases of ggml's worst-case graph, in bytes: the output (logits and hidden
/// states) and the largest phase inside a layer (attention or feed-forward).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GgmlPhases {
    pub output: u64,
    pub layers: u64,
    /// The feed-forward phase alone (part of `layers`).
    pub ffn: u64,
    /// The attention mask every layer reads (inside `layers` and `ffn`).
    pub mask: u64,
    /// One micro-batch of hidden states in f32: what one GPU hands the next.
    pub hidden: u64,
}

/// See [`ggml_compute_buffer`].
pub fn ggml_phases(a: &Architecture, w: &Workload) -> GgmlPhases {
    let cells = u128::from(ggml_kv_cells(w).max(1));
    let ub = u128::from(w.ubatch.max(1)).min(cells);
    let f32 = 4u128;
    let h = u128::from(a.hidden);
    let output = if a.encoder_only {
        0
    } else {
        ub * f32 * (u128::from(a.vocab) + h)
    };
    let scores = if w.attention == Attention::Flash {
        0
    } else {
        ub * cells * u128::from(a.heads) * f32
    };
    let attention =
        ub * f32 * (u128::from(a.q_width()) + 2 * u128::from(a.kv_width()) + h) + scores;
    let inter = u128::from(token_intermediate(a));
    // Gate, up and their product alive together; for MoE layers the expert matmul
    // (`MUL_MAT_ID` in `build_moe_ffn`, src/llama-graph.cpp) then writes one hidden
    // vector per routed expert and token, beside the product it reads, before the
    // weighting (in place) and the sum over experts.
    let routed = a
        .moe
        .map_or(0, |m| u128::from(m.experts_per_token.min(m.experts)));
    // The attention mask is a graph input every layer reads (`build_attn_inp_kv` in
    // src/llama-graph.cpp): [cells, micro-batch padded to GGML_KQ_MASK_PAD = 64] in
    // f32, cast once to f16 for flash attention, so ggml-alloc keeps it (the f16 copy
    // with flash attention) from the first layer to the last: it sits beside every
    // layer's phase, but not beside the output's.
    let mask = if w.attention == Attention::Flash {
        cells * ub.div_ceil(64) * 64 * 2
    } else {
        cells * ub.div_ceil(64) * 64 * f32
    };
    let ffn = ub * f32 * (h + (3 * inter).max(inter + h * routed)) + mask;
    let attention = attention + mask;
    let bytes = |v: u128| u64::try_from(v).unwrap_or(u64::MAX);
    GgmlPhases {
        output: bytes(output),
        layers: bytes(attention.max(ffn)),
        ffn: bytes(ffn),
        mask: bytes(mask),
        hidden: bytes(ub * f32 * h),
    }
}

/// Bytes of the output projection on the GPU: the head in the file's output type, or
/// with tied embeddings the copy of the embedding table llama.cpp makes for it.
pub fn ggml_output_bytes(
    pc: &ParamCount,
    arch: Option<&Architecture>,
    format: WeightFormat,
) -> u64 {
    // The head and a tied table are both stored in the output's type.
    let table = |n: u64, ncols: u64| match format {
        WeightFormat::Gguf { mix } => mix_of(mix).output_for(ncols).bytes_for(n),
        WeightFormat::Plain { dtype } => dtype.bytes_for(n),
        _ => Dtype::Bf16.bytes_for(n),
    };
    match arch {
        Some(a) if a.encoder_only => 0,
        Some(a) if a.tied_embeddings => table(pc.embeddings, u64::from(a.hidden)),
        Some(a) => table(pc.lm_head, u64::from(a.hidden)),
        None => table(pc.lm_head, 256),
    }
}

/// Layer `layer`'s routed experts (`ffn_gate_exps`, `ffn_up_exps`, `ffn_down_exps`) as
/// the weights are stored: the tensors `--n-cpu-moe` keeps in CPU RAM. From a GGUF
/// header (`Workload::stored_experts`) they are the file's own tensors. Otherwise a
/// GGUF mix stores gate and up in its base type and the down projection in its boosted
/// type on the layers `use_more_bits` picks, as [`weight_bytes`] counts them, and exact
/// stored weights scale that formula by the file's own size. Zero for dense layers and
/// models.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerExperts {
    /// The layer's expert tensors together.
    pub bytes: u64,
    /// Its largest expert tensor.
    pub largest: u64,
}

/// See [`LayerExperts`].
pub fn ggml_layer_experts(
    a: &Architecture,
    pc: &ParamCount,
    w: &Workload,
    layer: u32,
) -> LayerExperts {
    layer_experts(a, w, layer, stored_scale(a, pc, w))
}

/// Exact stored weights and the formula's bytes they replace, by which
/// [`layer_experts`] scales its formula; computed once per estimate.
fn stored_scale(a: &Architecture, pc: &ParamCount, w: &Workload) -> Option<(u64, u64)> {
    w.stored_weights
        .map(|stored| (stored, weight_bytes(pc, Some(a), w.weights).max(1)))
}

fn layer_experts(
    a: &Architecture,
    w: &Workload,
    layer: u32,
    scale: Option<(u64, u64)>,
) -> LayerExperts {
    // A GGUF header read from the file lists every expert tensor: exact.
    if !w.stored_experts.is_empty() {
        return usize::try_from(layer)
            .ok()
            .and_then(|i| w.stored_experts.get(i).copied())
            .unwrap_or_default();
    }
    let Some(m) = a.moe else {
        return LayerExperts::default();
    };
    if layer < m.dense_layers || layer >= a.layers {
        return LayerExperts::default();
    }
    let one = mul(&[
        u64::from(m.experts),
        u64::from(m.expert_intermediate),
        u64::from(a.hidden),
    ]);
    let inputs = match a.mlp {
        Mlp::Gated => 2,
        Mlp::Plain => 1,
    };
    let (input, down) = match w.weights {
        WeightFormat::Gguf { mix } => {
            let mix = mix_of(mix);
            let inner = u64::from(m.expert_intermediate);
            let down = if use_more_bits(layer, a.layers) {
                mix.boosted_for(inner)
            } else {
                mix.base_for(inner)
            };
            (
                mix.base_for(u64::from(a.hidden)).bytes_for(one),
                down.bytes_for(one),
            )
        }
        WeightFormat::Plain { dtype } => (dtype.bytes_for(one), dtype.bytes_for(one)),
        format => (format.linear_bytes(one), format.linear_bytes(one)),
    };
    let scaled = |bytes: u64| match scale {
        Some((stored, formula)) => {
            u64::try_from(u128::from(bytes) * u128::from(stored) / u128::from(formula))
                .unwrap_or(bytes)
        }
        None => bytes,
    };
    LayerExperts {
        bytes: scaled(input.saturating_mul(inputs).saturating_add(down)),
        largest: scaled(input.max(down)),
    }
}

/// The routed experts `--n-cpu-moe` keeps in CPU RAM while the rest of their layers is
/// on the GPU: those of the first `cpu_moe` layers (llama.cpp's
/// `llm_ffn_exps_block_regex(i)` for `i < N`, bound to the CPU buffer type in
/// common/arg.cpp) among the layers `-ngl` put on the GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuExperts {
    /// Layers whose experts stay in CPU RAM (dense layers among the first N count
    /// nothing).
    pub layers: u32,
    pub bytes: u64,
    /// The largest expert tensor among them: what the compute buffer holds while one
    /// expert matmul is offloaded to the GPU (ggml's scheduler starts a new split at
    /// each offloaded weight, so one copy's memory is reused for the next).
    pub largest: u64,
    /// What a generated token reads of them: the experts the router picks per layer.
    pub read_per_token: u64,
}

/// See [`CpuExperts`]; nothing for dense models or without `--n-cpu-moe`.
pub fn ggml_cpu_experts(a: &Architecture, pc: &ParamCount, w: &Workload) -> CpuExperts {
    let n = a.layers;
    let (on_gpu, _) = ggml_placement(n, w);
    cpu_experts_in(a, pc, w, n - on_gpu.min(n)..n)
}

/// [`ggml_cpu_experts`] among the layers `layers` only (one GPU's share).
fn cpu_experts_in(
    a: &Architecture,
    pc: &ParamCount,
    w: &Workload,
    layers: std::ops::Range<u32>,
) -> CpuExperts {
    let scale = stored_scale(a, pc, w);
    let mut out = CpuExperts::default();
    for layer in layers.start..w.cpu_moe.min(layers.end) {
        let experts = layer_experts(a, w, layer, scale);
        if experts.bytes > 0 {
            out.layers += 1;
            out.bytes = out.bytes.saturating_add(experts.bytes);
            out.largest = out.largest.max(experts.largest);
        }
    }
    if let Some(m) = a.moe {
        out.read_per_token = u64::try_from(
            u128::from(out.bytes) * u128::from(m.experts_per_token) / u128::from(m.experts.max(1)),
        )
        .unwrap_or(out.bytes);
    }
    out
}

/// Whether ggml's scheduler runs CPU-resident matmuls on the GPU for this micro-batch
/// (`op_offload`; the CUDA backend's `offload_op` takes batches of 32 tokens or more),
/// copying their weights into the compute buffer.
pub fn ggml_op_offload(w: &Workload) -> bool {
    w.ubatch.min(ggml_kv_cells(w)) >= GGML_OP_OFFLOAD_MIN_BATCH
}

/// Copies of each micro-batch's inputs that ggml's scheduler keeps when llama.cpp
/// runs a model split over several GPUs as a pipeline (`GGML_SCHED_MAX_COPIES` in
/// ggml/src/ggml-backend.cpp): up to four micro-batches in flight.
pub const GGML_SCHED_COPIES: u64 = 4;

/// The GPUs llama.cpp deals a model's layers among (`--split-mode layer`, its
/// default): every GPU of the workload, whatever tensor or pipeline degree was asked.
pub fn ggml_devices(w: &Workload) -> u64 {
    u64::from(w.tp.max(1)) * u64::from(w.pp.max(1))
}

/// The first of the `items` offloaded items (the layers `-ngl` puts on the GPUs, then
/// the output layer) that each of `devices` identical GPUs holds, and `items` at the
/// end. llama.cpp gives item `j` to the first device whose cumulative share of the
/// free memory exceeds `j / items` (`std::upper_bound(splits, float(il - i_gpu_start)
/// / act_gpu_layers)` in `llama_model::load_tensors`, src/llama-model.cpp), so device
/// `d` starts at ⌈d × items / devices⌉: the first GPUs take the extra layer, and the
/// output layer, the last item, lands on the last GPU.
pub fn ggml_device_starts(items: u64, devices: u64) -> Vec<u64> {
    let devices = devices.max(1);
    (0..=devices)
        .map(|d| {
            u64::try_from((u128::from(d) * u128::from(items)).div_ceil(u128::from(devices)))
                .unwrap_or(items)
        })
        .collect()
}

/// Where `-ngl` puts a model's `layers` repeating layers and its output: how many of
/// the last layers are on the GPU, and whether the output layer is. Since December 2025
/// (PR 18148, "offload output layer to GPU first") llama.cpp offloads the output first
/// and then the last `k − 1` layers (`i_gpu_start = n_layer + 1 - n_gpu_layers` in
/// `llama_model::load_tensors`, src/llama-model.cpp); before it, the last `k` layers, and
/// the output only when `k` passed the layer count. `None` puts everything there.
pub fn ggml_placement(layers: u32, w: &Workload) -> (u32, bool) {
    match w.gpu_layers {
        None => (layers, true),
        Some(k) if k > layers => (layers, true),
        Some(k) if w.ngl_output_first => (k.saturating_sub(1), k >= 1),
        Some(k) => (k, false),
    }
}

/// One GPU's part of llama.cpp's layer split ([`ggml_device_starts`]): its layers among
/// the `on_gpu` the GPUs hold (`from..to`, counted from the first of them) and whether
/// it holds the output layer, the last item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuShare {
    pub from: u64,
    pub to: u64,
    pub output: bool,
}

impl GpuShare {
    pub fn layers(self) -> u64 {
        self.to - self.from
    }
}

/// Each of `devices` GPUs' share of `on_gpu` layers and, with `output`, the output
/// layer.
pub fn ggml_gpu_shares(on_gpu: u64, output: bool, devices: u64) -> Vec<GpuShare> {
    ggml_device_starts(on_gpu + u64::from(output), devices)
        .windows(2)
        .map(|p| GpuShare {
            from: p[0].min(on_gpu),
            to: p[1].min(on_gpu),
            output: output && p[0] <= on_gpu && on_gpu < p[1],
        })
        .collect()
}

/// Whether llama.cpp runs its GPUs as a pipeline with [`GGML_SCHED_COPIES`] copies of
/// the inputs: several GPUs, every layer and the output on them, and no tensor
/// overrides such as `--n-cpu-moe` (`pipeline_parallel` in the `llama_context`
/// constructor, src/llama-context.cpp).
pub fn ggml_pipeline(a: &Architecture, w: &Workload) -> bool {
    let n = u64::from(a.layers.max(1));
    ggml_devices(w) > 1 && w.gpu_layers.is_none_or(|g| u64::from(g) > n) && w.cpu_moe == 0
}

/// Moves what `-ngl` leaves off the GPU into host RAM and deals the rest among the
/// GPUs, keeping in `b` the busiest GPU's share. llama.cpp puts the last `gpu_layers`
/// layers on the GPUs (`i_gpu_start = n_layer - n_gpu_layers` in src/llama-model.cpp),
/// their KV cache with them, and the output layer only when `n_gpu_layers > n_layer`;
/// without it the output's compute runs on the CPU too. Several GPUs split the layers
/// ([`ggml_device_starts`]); each has its own compute buffer for its layers' phases,
/// the last one also the output's. As a pipeline ([`ggml_pipeline`]) each GPU keeps
/// [`GGML_SCHED_COPIES`] copies of its inputs (the hidden states it receives and the
/// attention mask) for the whole graph: the scheduler adds them as leafs flagged as
/// outputs, which ggml-alloc never frees (`ggml_backend_sched_split_graph`,
/// `ggml_gallocr_free_node`). With `--n-cpu-moe` the first layers' expert tensors move
/// to host RAM as well ([`ggml_cpu_experts`]). Returns what the host holds: its bytes
/// (the input embeddings included), the weights among them and what the CPU reads per
/// token.
fn ggml_offload(a: &Architecture, pc: &ParamCount, w: &Workload, b: &mut Breakdown) -> Host {
    let n = u64::from(a.layers.max(1));
    let (blocks, output_on_gpu) = ggml_placement(a.layers.max(1), w);
    let on_gpu = u64::from(blocks);
    let first_gpu_layer = n - on_gpu;
    let output = ggml_output_bytes(pc, Some(a), w.weights).min(b.weights);
    // A tied table left in RAM as the output is the input table itself (one mapping
    // of the file).
    let cpu_embeddings = if a.tied_embeddings && !output_on_gpu {
        0
    } else {
        embeddings_on_cpu(pc, Some(a), w.weights)
    };
    let repeating = b.weights - output;
    let ratio = |bytes: u64, num: u64, den: u64| {
        u64::try_from(u128::from(bytes) * u128::from(num) / u128::from(den.max(1))).unwrap_or(bytes)
    };
    let layer = |l: u64| u32::try_from(l).unwrap_or(u32::MAX);
    // Routed experts are counted layer by layer (a MoE's first layers may be dense);
    // the rest of the repeating weights is the same in every layer.
    let scale = stored_scale(a, pc, w);
    let experts_in = |from: u64, to: u64| {
        (layer(from)..layer(to))
            .map(|l| layer_experts(a, w, l, scale).bytes)
            .fold(0u64, u64::saturating_add)
    };
    // Stored experts that outweigh the formula's repeating weights (a file whose other
    // tensors the architecture does not describe) are spread with the rest instead.
    let (uniform, layered) = match repeating.checked_sub(experts_in(0, n)) {
        Some(rest) => (rest, true),
        None => (repeating, false),
    };
    let experts_in = |from: u64, to: u64| if layered { experts_in(from, to) } else { 0 };
    let experts = ggml_cpu_experts(a, pc, w);
    let phases = ggml_phases(a, w);
    let op_offload = ggml_op_offload(w);
    // Op offload of the expert matmuls (`MUL_MAT_ID`, offloaded from 32 tokens like any
    // matmul, `get_op_batch_size` in ggml-cuda.cu): the scheduler copies each CPU expert
    // tensor into the compute buffer in turn, beside the feed-forward phase's
    // activations. It offloads to the first GPU that takes the operation, the first.
    let expert_copies = if op_offload && experts.layers > 0 {
        experts.largest.saturating_add(phases.ffn)
    } else {
        0
    };
    let pipeline = ggml_pipeline(a, w);
    let inputs = GGML_SCHED_COPIES.saturating_mul(phases.hidden.saturating_add(phases.mask));
    let transient = phases.layers - phases.mask;
    let active = |bytes: u64| ratio(bytes, pc.active, pc.total);
    let devices = ggml_devices(w);
    let (mut gpu_weights, mut gpu_kv, mut gpu_read) = (0u64, 0u64, 0u64);
    let mut gpu_total = 0u64;
    let mut busiest = (0u64, 0u64, 0u64);
    for (d, share) in ggml_gpu_shares(on_gpu, output_on_gpu, devices)
        .into_iter()
        .enumerate()
    {
        let (from, to, has_output) = (share.from, share.to, share.output);
        let first = d == 0;
        if to == from && !has_output && !first {
            continue;
        }
        // Shares by cumulative bounds, so the GPUs' shares add up to the whole.
        let span = |bytes: u64| {
            ratio(bytes, first_gpu_layer + to, n) - ratio(bytes, first_gpu_layer + from, n)
        };
        let (lo, hi) = (first_gpu_layer + from, first_gpu_layer + to);
        let own_cpu_experts = cpu_experts_in(a, pc, w, layer(lo)..layer(hi));
        let own_output = if has_output { output } else { 0 };
        let weights = span(uniform)
            .saturating_add(experts_in(lo, hi))
            .saturating_add(own_output)
            .saturating_sub(own_cpu_experts.bytes);
        let layers_weights = weights.saturating_sub(own_output);
        let kv = span(b.kv_cache);
        let compute = if pipeline {
            inputs.saturating_add(if has_output {
                transient.max(phases.output)
            } else {
                transient
            })
        } else if has_output {
            phases.output.max(phases.layers)
        } else if first && op_offload && !output_on_gpu {
            // Op offload: for a micro-batch this large the scheduler runs the
            // CPU-resident output projection on the GPU, copying its weight into the
            // compute buffer next to the f32 hidden states and logits
            // (`ggml_backend_sched` with `op_offload`, the CUDA backend's `offload_op`
            // from 32 tokens). The CPU layers' matrices are copied the same way, one at
            // a time, and are smaller than the output head.
            phases.layers.max(output.saturating_add(phases.output))
        } else {
            phases.layers
        }
        .max(if first { expert_copies } else { 0 });
        gpu_weights = gpu_weights.saturating_add(weights);
        gpu_kv = gpu_kv.saturating_add(kv);
        gpu_read = gpu_read
            .saturating_add(active(layers_weights))
            .saturating_add(own_output)
            .saturating_add(kv);
        let total = weights.saturating_add(kv).saturating_add(compute);
        gpu_total = gpu_total.saturating_add(total);
        if total
            >= busiest
                .0
                .saturating_add(busiest.1)
                .saturating_add(busiest.2)
        {
            busiest = (weights, kv, compute);
        }
    }
    let host_weights = b
        .weights
        .saturating_sub(gpu_weights)
        .saturating_add(cpu_embeddings);
    // The graph's inputs live on the CPU (`ggml_backend_sched_backend_id_from_cur`
    // keeps tensors flagged as inputs on the last backend, the CPU, whose buffer is
    // the first GPU's pinned host memory: the "CUDA_Host compute buffer"): the
    // attention mask, once or, as a pipeline, once per copy, and the input
    // embeddings' rows for a micro-batch.
    let copies = if pipeline { GGML_SCHED_COPIES } else { 1 };
    let host_inputs = copies
        .saturating_mul(phases.mask)
        .saturating_add(phases.hidden);
    let host = host_weights
        .saturating_add(b.kv_cache.saturating_sub(gpu_kv))
        .saturating_add(if output_on_gpu { 0 } else { phases.output })
        .saturating_add(host_inputs);
    // Per generated token the CPU reads its layers' active weights (a MoE layer reads
    // the experts the router picks) and their KV cache, and the output layer if it
    // stayed there; only one row of the input embeddings.
    let cpu_layers = repeating
        .saturating_sub(ratio(uniform, on_gpu, n))
        .saturating_sub(experts_in(first_gpu_layer, n));
    let read = active(cpu_layers)
        .saturating_add(b.kv_cache.saturating_sub(gpu_kv))
        .saturating_add(if output_on_gpu { 0 } else { output })
        .saturating_add(experts.read_per_token);
    (b.weights, b.kv_cache, b.activations) = busiest;
    Host {
        bytes: host,
        weights: host_weights,
        read_per_token: read,
        gpu_read_per_token: gpu_read,
        gpu_total,
    }
}

/// What llama.cpp keeps in CPU RAM ([`Estimate::host_bytes`],
/// [`Estimate::host_weights_bytes`], [`Estimate::host_read_per_token`]).
#[derive(Clone, Copy, Default)]
struct Host {
    bytes: u64,
    weights: u64,
    read_per_token: u64,
    gpu_read_per_token: u64,
    /// Weights, KV and compute buffers of every GPU together.
    gpu_total: u64,
}

/// KV cache bytes: 2 (K and V) × layers × kv_heads × head_dim × bytes × tokens ×
/// batch, with sliding-window layers capped at their window. MLA models cache
/// (kv_lora_rank + qk_rope_head_dim) elements per token and layer instead, as vLLM and
/// SGLang do (Transformers' eager code caches the decompressed K and V).
pub fn kv_cache(a: &Architecture, w: &Workload) -> u64 {
    if a.encoder_only || w.mode == Mode::Train {
        return 0;
    }
    let tokens = w.seq.saturating_add(w.new_tokens);
    let window = a
        .sliding_window
        .map_or(tokens, |sw| u64::from(sw.window).min(tokens));
    kv_bytes(a, w, tokens, window, w.batch)
}

/// KV bytes for `global` tokens in each global layer and `windowed` tokens in each
/// sliding-window layer, `times` over (sequences, or 1 for a pool counted whole).
fn kv_bytes(a: &Architecture, w: &Workload, global: u64, windowed: u64, times: u64) -> u64 {
    let (windowed_layers, global_layers) = a.windowed_layers();
    let layer_tokens = u128::from(global_layers) * u128::from(global)
        + u128::from(windowed_layers) * u128::from(windowed);
    // Elements cached per token and layer. MLA caches one latent plus the rotary key,
    // replicated on every tensor-parallel rank; GQA caches K and V split across ranks.
    let width = match a.mla {
        Some(m) => u128::from(m.cached_width()),
        None => {
            2 * u128::from(a.kv_heads).div_ceil(u128::from(w.tp.max(1))) * u128::from(a.head_dim)
        }
    };
    let bits_per_32 = u128::from(w.kv_dtype.bits_per_32(w.compute_dtype(), w.engine));
    let bits = layer_tokens * width * bits_per_32 * u128::from(times);
    u64::try_from(bits.div_ceil(8 * 32)).unwrap_or(u64::MAX)
}

/// llama.cpp's KV cache: one pool of [`ggml_kv_cells`] cells for every slot's tokens
/// in the global layers, and [`ggml_swa_cells`] in the sliding-window ones (Mistral 7B
/// v0.1's GGUF has none, [`ggml_honours_window`]).
pub fn ggml_kv_cache(a: &Architecture, w: &Workload) -> u64 {
    if a.encoder_only {
        return 0;
    }
    let cells = ggml_kv_cells(w);
    kv_bytes(a, w, cells, ggml_window_cells(a, w).unwrap_or(cells), 1)
}

/// Cells of llama.cpp's sliding-window cache ([`ggml_swa_cells`]), when it builds one
/// for this model ([`ggml_honours_window`]).
pub fn ggml_window_cells(a: &Architecture, w: &Workload) -> Option<u64> {
    let sw = a.sliding_window.filter(|_| ggml_honours_window(a))?;
    Some(ggml_swa_cells(u64::from(sw.window), ggml_kv_cells(w), w))
}

/// The KV cache of the step before the last one of `generate`: what transformers kept
/// alive beside the new cache until 2024. Its model forward received the previous
/// step's cache as a tuple of tensors, `torch.cat` made each layer's new cache a copy,
/// and the tuple `generate` held kept the old one from being freed, so "the current
/// implementation basically has 2 copies of the full cache in every iteration"
/// (huggingface/transformers#30536; also #25930). Newer versions update the cache
/// object in place. Zero when nothing is generated or the cache is not PyTorch's.
pub fn previous_step_cache(a: &Architecture, w: &Workload) -> u64 {
    if w.new_tokens == 0 || w.engine != Engine::Torch {
        return 0;
    }
    kv_cache(
        a,
        &Workload {
            new_tokens: w.new_tokens - 1,
            ..w.clone()
        },
    )
}

/// Estimates `w` for `model`.
pub fn estimate(model: &ModelInput, w: &Workload) -> Result<Estimate, EstimateError> {
    validate(w)?;
    // llama.cpp splits the model by layers over every GPU (`--split-mode layer`), never
    // each layer: it deals the whole model itself ([`ggml_offload`]).
    let ggml = w.engine == Engine::Ggml && w.mode == Mode::Inference;
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
    let (arch, pc) = match model {
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
    };
    let (states, trainable) = model_states(&pc, arch, w)?;
    let (param_shards, grad_shards, optim_shards) = w.shards();
    // Tensor and pipeline parallelism split the layers' weights across GPUs; llama.cpp
    // deals its layers itself.
    let model_split = if ggml && arch.is_some() {
        1
    } else {
        u64::from(w.tp.max(1)) * u64::from(w.pp.max(1))
    };
    let optimizer = states
        .optimizer
        .div_ceil(model_split)
        .div_ceil(optim_shards);
    let gradients = states.gradients.div_ceil(model_split).div_ceil(grad_shards);
    let root = arch.map_or(0, |a| fsdp_unsharded(a, w).0);
    let weights = states.weights.div_ceil(model_split).div_ceil(param_shards);
    let mut b = Breakdown {
        // Offloaded, the shard lives in RAM: the GPU holds what ZeRO-3 gathers.
        // (Without an architecture nothing gathered can be counted: they stay.)
        weights: if params_offloaded(w) && arch.is_some() {
            0
        } else {
            weights
        }
        .saturating_add(root),
        gradients: if offloads_gradients(w) { 0 } else { gradients },
        optimizer: if w.cpu_offload { 0 } else { optimizer },
        ..Breakdown::default()
    };
    let mut host = Host::default();
    let mut projector = None;
    let sync = grad_sync(arch, w, gradients, states.weights.div_ceil(model_split));
    if let Some(a) = arch {
        b.activations = match w.mode {
            Mode::Train => {
                training_activations(a, w, if w.deepspeed { 0 } else { b.gradients }, &sync)
            }
            Mode::Inference if ggml => ggml_compute_buffer(a, w),
            Mode::Inference => prefill_activations(a, w),
        }
        .saturating_add(w.blas_workspace)
        .saturating_add(sync.reused);
        b.kv_cache = if ggml {
            ggml_kv_cache(a, w)
        } else if w.engine == Engine::AwqFused && w.mode == Mode::Inference {
            // AutoAWQ allocates each layer's `WindowedCache` when the model is loaded:
            // `max_seq_len` tokens (its `max_new_tokens`, which must hold the prompt)
            // for the whole batch, in fp16, whatever the generation then uses.
            kv_cache(
                a,
                &Workload {
                    seq: w.seq.max(w.new_tokens),
                    new_tokens: 0,
                    kv_dtype: crate::workload::KvDtype::Fp16,
                    ..w.clone()
                },
            )
        } else {
            kv_cache(a, w)
        }
        .div_ceil(if ggml { 1 } else { u64::from(w.pp.max(1)) });
        if ggml {
            host = ggml_offload(a, &pc, w, &mut b);
            // The projector stays on the GPU whatever `-ngl` leaves there.
            projector = crate::mmproj::of(a, w);
            if let Some(p) = projector {
                b.weights = b.weights.saturating_add(p.weights);
                b.activations = b.activations.saturating_add(p.compute);
            }
        }
    }
    // After the activations: the buckets exist at the loss, unlike freed gradients.
    b.gradients = b.gradients.saturating_add(sync.buckets);
    let dynamic = b
        .activations
        .saturating_add(b.kv_cache)
        .saturating_add(b.gradients);
    b.overhead = w
        .cuda_context
        .unwrap_or(DEFAULT_CUDA_CONTEXT)
        .saturating_add(communication_bytes(w))
        .saturating_add(match w.engine {
            // ggml sizes its buffers once, exactly: no caching allocator to round.
            Engine::Ggml if w.mode == Mode::Inference => 0,
            _ => mul(&[dynamic, ALLOCATOR_MARGIN_PERCENT]) / 100,
        });
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
        offloaded_to_ram: match (w.cpu_offload, ram_gradients(w)) {
            // The CPU partitions are fp32 (`single_grad_partition`, the fp32 master's
            // `.grad`, even at ZeRO-1, whose GPU still holds whole 16-bit gradients),
            // whatever type the GPU computed them in; ZeRO-3 first gathers them in its
            // 16-bit `grad_partitions_flat_buffer` there as well.
            (true, true) => optimizer
                .saturating_add(
                    mul(&[
                        trainable,
                        if w.deepspeed && w.zero >= 3 {
                            4 + w.compute_dtype().bytes_for(1)
                        } else {
                            4
                        },
                    ])
                    .div_ceil(model_split)
                    .div_ceil(optim_shards),
                )
                .saturating_add(if params_offloaded(w) && arch.is_some() {
                    weights
                } else {
                    0
                }),
            (true, false) => optimizer,
            (false, _) => 0,
        },
        host_bytes: host.bytes,
        host_weights_bytes: host.weights,
        host_read_per_token: host.read_per_token,
        gpu_read_per_token: host.gpu_read_per_token,
        projector,
        grad_sync: sync,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::model;
    use crate::workload::KvDtype;
    use proptest::prelude::*;

    fn preset(id: &str) -> ModelInput {
        ModelInput::Arch {
            arch: Box::new(model(id).unwrap().arch.clone()),
            total_params: None,
        }
    }

    /// llama.cpp deals layers and the output among GPUs as `upper_bound` over equal
    /// shares does: the first GPUs take the odd layer, the last the output.
    #[test]
    fn ggml_deals_layers_among_gpus() {
        let cases: &[(u64, u64, &[u64])] = &[
            (81, 1, &[0, 81]),
            (81, 2, &[0, 41, 81]),
            (25, 2, &[0, 13, 25]),
            (25, 3, &[0, 9, 17, 25]),
            (3, 4, &[0, 1, 2, 3, 3]),
            (0, 2, &[0, 0, 0]),
        ];
        for &(items, devices, want) in cases {
            assert_eq!(
                ggml_device_starts(items, devices),
                want,
                "{items} / {devices}"
            );
        }
    }

    /// Two GPUs: each holds its layers' weights and KV, the last one the output; as a
    /// pipeline every GPU keeps four copies of its inputs; no NCCL; the tensor degree
    /// asked of llama.cpp is the same layer split.
    #[test]
    fn ggml_splits_layers_and_pipelines_inputs() {
        let a = model("qwen2.5-0.5b").unwrap().arch.clone();
        let m = preset("qwen2.5-0.5b");
        let w = |gpus: u32, gpu_layers: Option<u32>, cpu_moe: u32| Workload {
            seq: 32_768,
            attention: Attention::Sdpa,
            engine: crate::workload::Engine::Ggml,
            weights: WeightFormat::parse("Q4_0").unwrap(),
            gpus,
            tp: 1,
            pp: gpus,
            gpu_layers,
            cpu_moe,
            ..Workload::default()
        };
        let one = estimate(&m, &w(1, None, 0)).unwrap();
        let two = estimate(&m, &w(2, None, 0)).unwrap();
        let p = ggml_phases(&a, &w(2, None, 0));
        // 24 layers and the output over two GPUs: 13 layers, then 11 and the output.
        assert_eq!(two.breakdown.kv_cache, one.breakdown.kv_cache * 11 / 24);
        let output = ggml_output_bytes(&one.params, Some(&a), w(1, None, 0).weights);
        let layers = one.breakdown.weights - output;
        assert_eq!(two.breakdown.weights, layers - layers * 13 / 24 + output);
        // Each GPU keeps four copies of the hidden states it receives and of the mask
        // beside its layers' largest phase; one GPU has the mask once.
        assert_eq!(p.hidden, 512 * 896 * 4);
        assert_eq!(p.mask, 32_768 * 512 * 4);
        assert_eq!(one.breakdown.activations, p.layers);
        assert_eq!(
            two.breakdown.activations,
            4 * (p.hidden + p.mask) + (p.layers - p.mask).max(p.output)
        );
        assert!(ggml_pipeline(&a, &w(2, None, 0)) && !ggml_pipeline(&a, &w(1, None, 0)));
        // llama.cpp has no NCCL in its layer split; the total is the GPUs' own sum,
        // less than twice the busier one.
        assert_eq!(two.breakdown.overhead, one.breakdown.overhead);
        assert!(two.total_bytes < 2 * two.per_gpu_bytes && two.total_bytes > one.per_gpu_bytes);
        // A tensor degree asked of llama.cpp is the same split.
        let tp = Workload {
            tp: 2,
            pp: 1,
            ..w(2, None, 0)
        };
        assert_eq!(estimate(&m, &tp).unwrap(), two);
        // Not every layer on the GPUs: no pipeline, no copies; the host keeps the rest.
        // `-ngl 20` is the output and 19 layers: 10 on the first GPU, 9 and the output
        // (the busier) on the second.
        let partial = estimate(&m, &w(2, Some(20), 0)).unwrap();
        assert!(!ggml_pipeline(&a, &w(2, Some(20), 0)));
        assert_eq!(partial.breakdown.kv_cache, one.breakdown.kv_cache * 9 / 24);
        assert!(partial.breakdown.activations <= p.layers.max(output + p.output));
        assert!(partial.host_bytes > 0);
        // The pinned host buffer holds the graph's inputs: the f32 mask (four copies
        // as a pipeline) and a micro-batch of input embeddings. The published log has
        // "CUDA_Host compute buffer size = 257.77 MiB" (4 × 64 + 1.75 and small
        // inputs); a one-GPU log (Ollama #6926, 8192 cells, 4096 wide) has 24.01
        // MiB (16 + 8).
        let inputs = |e: &Estimate| e.host_bytes - e.host_weights_bytes;
        assert_eq!(inputs(&two), 4 * (32_768 * 512 * 4) + 512 * 896 * 4);
        assert_eq!(inputs(&one), 32_768 * 512 * 4 + 512 * 896 * 4);
        // The host holds what the GPUs do not, whatever the number of GPUs.
        let single_partial = estimate(&m, &w(1, Some(20), 0)).unwrap();
        assert_eq!(
            partial.host_weights_bytes,
            single_partial.host_weights_bytes
        );
        assert_eq!(two.host_weights_bytes, one.host_weights_bytes);
    }

    /// `-ngl k` offloads the output and then k − 1 layers (llama.cpp since December
    /// 2025); older builds offloaded k layers and the output only with all of them.
    #[test]
    fn ngl_counts_the_output_first() {
        let w = |k: Option<u32>, first: bool| Workload {
            gpu_layers: k,
            ngl_output_first: first,
            ..Workload::default()
        };
        let cases = [
            (None, true, (32, true)),
            (Some(33), true, (32, true)),
            (Some(32), true, (31, true)),
            (Some(1), true, (0, true)),
            (Some(0), true, (0, false)),
            (Some(32), false, (32, false)),
            (Some(20), false, (20, false)),
            (Some(33), false, (32, true)),
        ];
        for (k, first, want) in cases {
            assert_eq!(ggml_placement(32, &w(k, first)), want, "{k:?} {first}");
        }
    }

    /// More GPUs than items leave the last ones empty, and only the GPU with the
    /// output item holds it; a MoE's dense first layers weigh what they weigh on
    /// whichever GPU holds them, and the GPUs' weights add up to the whole.
    #[test]
    fn ggml_shares_follow_each_gpus_own_layers() {
        let m = preset("deepseek-v2-lite");
        let a = model("deepseek-v2-lite").unwrap().arch.clone();
        let w = |gpus: u32, gpu_layers: Option<u32>| Workload {
            seq: 4096,
            engine: crate::workload::Engine::Ggml,
            weights: WeightFormat::parse("Q4_K_M").unwrap(),
            gpus,
            tp: 1,
            pp: gpus,
            gpu_layers,
            ..Workload::default()
        };
        let one = estimate(&m, &w(1, None)).unwrap();
        // -ngl 3 on 8 GPUs: two layers and the output on the first three GPUs.
        let many = estimate(&m, &w(8, Some(3))).unwrap();
        let single = estimate(&m, &w(1, Some(3))).unwrap();
        assert_eq!(many.host_weights_bytes, single.host_weights_bytes);
        let output = ggml_output_bytes(&one.params, Some(&a), w(1, None).weights);
        assert!(many.breakdown.weights >= output, "{:?}", many.breakdown);
        // Two GPUs, every layer: the first holds the dense layer 0 and 13 MoE layers,
        // the second 13 MoE layers and the output; together, the whole model.
        let two = estimate(&m, &w(2, None)).unwrap();
        assert_eq!(two.host_weights_bytes, one.host_weights_bytes);
        let per_moe_layer = ggml_layer_experts(&a, &one.params, &w(1, None), 1).bytes;
        assert!(per_moe_layer > 0);
        assert_eq!(ggml_layer_experts(&a, &one.params, &w(1, None), 0).bytes, 0);
        assert!(two.breakdown.weights < one.breakdown.weights);
        // Several GPUs read, per generated token, what one GPU would.
        let near = |x: u64, y: u64| x.abs_diff(y) <= 32;
        assert!(
            near(two.gpu_read_per_token, one.gpu_read_per_token),
            "{} vs {}",
            two.gpu_read_per_token,
            one.gpu_read_per_token
        );
    }

    #[test]
    fn ggml_pads_cells_and_sizes_one_compute_buffer() {
        let ggml = |seq, attention| Workload {
            seq,
            attention,
            engine: crate::workload::Engine::Ggml,
            weights: WeightFormat::parse("Q4_K_M").unwrap(),
            ..Workload::default()
        };
        // Cells: padded to 256 with flash attention, 32 without.
        assert_eq!(ggml_kv_cells(&ggml(1000, Attention::Flash)), 1024);
        assert_eq!(ggml_kv_cells(&ggml(1000, Attention::Sdpa)), 1024);
        assert_eq!(ggml_kv_cells(&ggml(1001, Attention::Sdpa)), 1024);
        assert_eq!(ggml_kv_cells(&ggml(1025, Attention::Sdpa)), 1056);
        assert_eq!(ggml_kv_cells(&ggml(1025, Attention::Flash)), 1280);
        let a = model("llama-3.1-8b").unwrap().arch.clone();
        // A short context: the output phase, 512 tokens of f32 logits and hidden states.
        let short = ggml_compute_buffer(&a, &ggml(512, Attention::Sdpa));
        assert_eq!(short, 512 * (128_256 + 4096) * 4);
        // A long one without flash attention: the 512 × cells × heads f32 scores win.
        let long = ggml_compute_buffer(&a, &ggml(32_768, Attention::Sdpa));
        assert!(long >= 512 * 32_768 * 32 * 4, "{long}");
        // Flash attention keeps it at the output phase.
        assert_eq!(
            ggml_compute_buffer(&a, &ggml(32_768, Attention::Flash)),
            short
        );
        // No caching-allocator margin, and the input embeddings stay in CPU RAM.
        let m = preset("llama-3.1-8b");
        let e = estimate(&m, &ggml(512, Attention::Sdpa)).unwrap();
        assert_eq!(e.breakdown.overhead, DEFAULT_CUDA_CONTEXT);
        let torch = estimate(
            &m,
            &Workload {
                engine: crate::workload::Engine::Torch,
                ..ggml(512, Attention::Sdpa)
            },
        )
        .unwrap();
        let pc = a.param_count();
        assert_eq!(
            torch.breakdown.weights - e.breakdown.weights,
            embeddings_on_cpu(&pc, Some(&a), WeightFormat::parse("Q4_K_M").unwrap())
        );
    }

    /// AutoAWQ 0.1.x's fused modules (read in awq/modules/fused/attn.py and cache.py at
    /// v0.1.6): the cache is allocated for `max_seq_len` tokens of the whole batch, and
    /// the prefill's eager attention keeps fp16 scores, their fp32 copy and the fp32
    /// softmax alive together (10 bytes per score, 6 in transformers' eager path).
    #[test]
    fn autoawq_fused_modules_allocate_their_cache_and_attend_eagerly() {
        let a = model("mistral-7b-v0.3").unwrap().arch.clone();
        let w = |engine, attention, new_tokens| Workload {
            seq: 2048,
            new_tokens,
            batch: 1,
            engine,
            attention,
            ..Workload::default()
        };
        let awq = prefill_activations(&a, &w(Engine::AwqFused, Attention::Sdpa, 2048));
        let eager = prefill_activations(&a, &w(Engine::Torch, Attention::Eager, 2048));
        let scores = 32 * 2048 * 2048;
        // 4 more bytes per score, and K and V repeated to the 32 query heads.
        assert_eq!(awq - eager, scores * 4 + 2 * 2 * 2048 * 4096);
        // The cache holds max(prompt, max_new_tokens) tokens, in fp16.
        let kv = |new_tokens| {
            estimate(
                &preset("mistral-7b-v0.3"),
                &w(Engine::AwqFused, Attention::Sdpa, new_tokens),
            )
            .unwrap()
            .breakdown
            .kv_cache
        };
        let per_token = 32 * 8 * 128 * 2 * 2;
        assert_eq!(kv(2048), 2048 * per_token);
        assert_eq!(kv(512), 2048 * per_token);
        assert_eq!(kv(8192), 8192 * per_token);
    }

    #[test]
    fn ggml_quantised_kv_cache_pays_one_scale_per_32_elements() {
        // Llama 3.1 8B, 8192 cells: 32 layers × 8 KV heads × 128 × 2 (K and V) per cell.
        let elements = 8192 * 32 * 8 * 128 * 2;
        let m = preset("llama-3.1-8b");
        let kv = |engine, kv_dtype| {
            let w = Workload {
                seq: 8192,
                new_tokens: 0,
                engine,
                kv_dtype,
                attention: Attention::Flash,
                ..Workload::default()
            };
            estimate(&m, &w).unwrap().breakdown.kv_cache
        };
        use crate::workload::{Engine, KvDtype};
        assert_eq!(kv(Engine::Ggml, KvDtype::Fp16), elements * 2);
        // block_q8_0: 32 int8 values and an fp16 scale = 34 bytes.
        assert_eq!(kv(Engine::Ggml, KvDtype::Int8), elements / 32 * 34);
        // block_q4_0: 16 bytes of nibbles and an fp16 scale = 18 bytes.
        assert_eq!(kv(Engine::Ggml, KvDtype::Int4), elements / 32 * 18);
        assert_eq!(kv(Engine::Torch, KvDtype::Int8), elements);
    }

    /// llama.cpp stores each tensor in its mix's type for the width of its rows, and a
    /// tied table in the output's type, on the CPU for the input and again on the GPU
    /// for the output. Two load logs, to the hundredth of a MiB.
    #[test]
    fn gguf_tensors_take_the_type_their_rows_allow() {
        let gguf = |model: &ModelInput, mix: &str, seq| {
            estimate(
                model,
                &Workload {
                    seq,
                    engine: crate::workload::Engine::Ggml,
                    weights: WeightFormat::parse(mix).unwrap(),
                    ..Workload::default()
                },
            )
            .unwrap()
        };
        let mib = |bytes: u64| (bytes as f64 / f64::from(1 << 20) * 100.0).round() / 100.0;
        // Gemma 2 2B Q4_0 through Ollama on ROCm: "ROCm0 model buffer size = 1548.29
        // MiB" and "CPU_Mapped model buffer size = 461.43 MiB", its tied 256 000 × 2304
        // table in Q6_K ("type q6_K: 1 tensors") on both sides.
        let e = gguf(&preset("gemma-2-2b"), "Q4_0", 8192);
        assert!(
            (mib(e.breakdown.weights) - 1548.29).abs() < 0.05,
            "{}",
            mib(e.breakdown.weights)
        );
        assert_eq!(mib(e.host_weights_bytes), 461.43);
        // Gemma 3 1B Q4_K_M (llama-cli b5050): the 1152-wide rows of q, k, v, gate and
        // up fall back to Q5_0 (Q8_0 where boosted), the table to Q8_0: "CUDA0 model
        // buffer size = 762.54 MiB", "CPU_Mapped model buffer size = 306.00 MiB".
        let (arch, _) = crate::hf_config::parse(
            r#"{"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
                "head_dim": 256, "hidden_size": 1152, "intermediate_size": 6912,
                "max_position_embeddings": 32768, "num_attention_heads": 4,
                "num_hidden_layers": 26, "num_key_value_heads": 1,
                "rope_scaling": null, "sliding_window": 512,
                "sliding_window_pattern": 6, "vocab_size": 262144}"#,
        )
        .unwrap();
        let gemma3_1b = ModelInput::Arch {
            arch: Box::new(arch),
            total_params: None,
        };
        let e = gguf(&gemma3_1b, "Q4_K_M", 4096);
        assert!(
            (mib(e.breakdown.weights) - 762.54).abs() < 0.1,
            "{}",
            mib(e.breakdown.weights)
        );
        assert_eq!(mib(e.host_weights_bytes), 306.0);
    }

    #[test]
    fn ggml_windows_cap_each_sequence_and_op_offload_copies_the_head() {
        let ggml = |model: &str, batch, gpu_layers, ubatch| {
            let e = estimate(
                &preset(model),
                &Workload {
                    seq: 32_768,
                    batch,
                    gpu_layers,
                    ubatch,
                    attention: Attention::Flash,
                    engine: crate::workload::Engine::Ggml,
                    weights: WeightFormat::parse("Q4_K_M").unwrap(),
                    ..Workload::default()
                },
            )
            .unwrap();
            e.breakdown
        };
        // Gemma 2's windowed layers are capped per sequence: four sequences hold four
        // times the KV of one, not one window for the whole pool.
        let one = ggml("gemma-2-9b", 1, None, 512).kv_cache;
        assert_eq!(ggml("gemma-2-9b", 4, None, 512).kv_cache, 4 * one);
        // Mistral 7B v0.1's config has a 4096-token window, but its GGUF (architecture
        // `llama`) keeps the whole context: 32 768 cells × 128 KiB.
        assert_eq!(ggml("mistral-7b-v0.1", 1, None, 512).kv_cache, 32_768 << 17);
        // With the output head on the CPU (`-ngl 0`; older builds also with `-ngl 20`), a
        // micro-batch of 32 or more copies it into the GPU's compute buffer; 31 tokens
        // do not.
        let a = model("mistral-7b-v0.1").unwrap().arch.clone();
        let head = ggml_output_bytes(
            &a.param_count(),
            Some(&a),
            WeightFormat::parse("Q4_K_M").unwrap(),
        );
        let with = ggml("mistral-7b-v0.1", 1, Some(0), 256).activations;
        assert_eq!(with, head + 256 * 4 * (32_000 + 4096));
        let without = ggml("mistral-7b-v0.1", 1, Some(0), 31).activations;
        assert!(without < head, "{without}");
    }

    /// llama.cpp's sliding-window cache holds the window of every sequence that shares
    /// it plus one micro-batch, padded to 256 (`llama_kv_cache_iswa`). A llama-server
    /// log (build 7445, Gemma 2 2B, `-c 8192`, `-np` left at auto: "n_parallel = 4 and
    /// kv_unified = true") printed 8192 cells and 416.00 MiB for both caches.
    #[test]
    fn ggml_window_cache_holds_each_shared_window_and_a_micro_batch() {
        let gemma2 = model("gemma-2-2b").unwrap().arch.clone();
        let w = |seq, batch, shared_slots| Workload {
            seq,
            batch,
            shared_slots,
            engine: crate::workload::Engine::Ggml,
            weights: WeightFormat::parse("Q4_K_M").unwrap(),
            kv_dtype: crate::workload::KvDtype::Fp16,
            ..Workload::default()
        };
        // -np auto: min(8192, 4 × 4096 + 512) = the whole context on every layer.
        assert_eq!(ggml_swa_cells(4096, 8192, &w(8192, 1, 4)), 8192);
        assert_eq!(ggml_kv_cache(&gemma2, &w(8192, 1, 4)), (2 * 416) << 20);
        // One sequence (-np 1, Ollama): its window and a micro-batch, 4608 cells.
        assert_eq!(ggml_swa_cells(4096, 8192, &w(8192, 1, 0)), 4608);
        assert_eq!(
            ggml_kv_cache(&gemma2, &w(8192, 1, 0)),
            (416 << 20) + (416 << 20) / 8192 * 4608
        );
        // Separate streams (-np 4) each keep their own: 4 × 4608 of 4 × 8192 cells, also
        // when the settings' -np auto is asked for a batch (the solver's larger batches).
        assert_eq!(ggml_swa_cells(4096, 4 * 8192, &w(8192, 4, 0)), 4 * 4608);
        assert_eq!(ggml_swa_cells(4096, 4 * 8192, &w(8192, 4, 4)), 4 * 4608);
        // Gemma 3's 1024-token window: 1024 + 512 = 1536 cells per sequence; with a
        // 100-token micro-batch, 1124 padded to 1280.
        assert_eq!(ggml_swa_cells(1024, 32_768, &w(32_768, 1, 0)), 1536);
        let small_ubatch = Workload {
            ubatch: 100,
            ..w(32_768, 1, 0)
        };
        assert_eq!(ggml_swa_cells(1024, 32_768, &small_ubatch), 1280);
        // Never more than the full cache.
        assert_eq!(ggml_swa_cells(1024, 512, &w(512, 1, 4)), 512);
        // The settings: llama.cpp leaves -np at auto, Ollama passes -np.
        let mut s = crate::Settings::defaults(
            crate::settings::Task::Inference,
            crate::settings::Runtime::LlamaCpp,
        );
        assert_eq!(s.workload().shared_slots, LLAMA_SERVER_AUTO_SLOTS);
        s.batch = 2;
        assert_eq!(s.workload().shared_slots, 0);
        let ollama = crate::Settings::defaults(
            crate::settings::Task::Inference,
            crate::settings::Runtime::Ollama,
        );
        assert_eq!(ollama.workload().shared_slots, 0);
    }

    /// FSDP holds its root unit (embeddings, head, final norm) whole from the forward
    /// pass to the end of backward, and one gathered layer while it works on it.
    #[test]
    fn fsdp_keeps_the_root_and_one_layer_whole() {
        let a = model("llama-3.1-70b").unwrap().arch.clone();
        let m = preset("llama-3.1-70b");
        let lora = Workload {
            mode: Mode::Train,
            finetune: Finetune::Lora,
            lora_targets: LoraTargets::ATTENTION,
            grad_checkpointing: true,
            batch: 2,
            seq: 2048,
            gpus: 8,
            zero: 3,
            ..Workload::default()
        };
        assert_eq!(fsdp_unsharded(&a, &lora), (0, 0), "DeepSpeed's ZeRO-3");
        let fsdp = Workload {
            fsdp: true,
            ..lora.clone()
        };
        let (root, layer) = fsdp_unsharded(&a, &fsdp);
        // 128 256 × 8192 embeddings and as many in the untied head, and the final norm.
        assert_eq!(root, (2 * 128_256 * 8192 + 8192) * 2);
        // A layer: 856 M parameters in bf16.
        assert!((1_710_000_000..1_713_000_000).contains(&layer), "{layer}");
        let (e0, e1) = (estimate(&m, &lora).unwrap(), estimate(&m, &fsdp).unwrap());
        assert_eq!(e1.breakdown.weights - e0.breakdown.weights, root);
        // With one GPU there is nothing to gather.
        let one = Workload {
            gpus: 1,
            ..fsdp.clone()
        };
        assert_eq!(fsdp_unsharded(&a, &one), (0, 0));
        // The settings: ZeRO-3 is FSDP except under DeepSpeed.
        let mut s = crate::Settings::defaults(
            crate::settings::Task::Lora,
            crate::settings::Runtime::Torchtune,
        );
        s.gpus = 8;
        s.zero = 3;
        assert!(s.workload().fsdp);
        s.runtime = crate::settings::Runtime::Deepspeed;
        assert!(!s.workload().fsdp);
    }

    #[test]
    fn n_cpu_moe_keeps_the_first_layers_experts_in_ram() {
        let q4km = WeightFormat::parse("Q4_K_M").unwrap();
        let run = |model: &str, gpu_layers, cpu_moe, ubatch| {
            estimate(
                &preset(model),
                &Workload {
                    seq: 4096,
                    gpu_layers,
                    cpu_moe,
                    ubatch,
                    attention: Attention::Flash,
                    engine: crate::workload::Engine::Ggml,
                    weights: q4km,
                    ..Workload::default()
                },
            )
            .unwrap()
        };
        let a = model("qwen3-30b-a3b").unwrap().arch.clone();
        let pc = a.param_count();
        let w = Workload {
            weights: q4km,
            ..Workload::default()
        };
        // One layer's experts: 128 × 768 × 2048 per matrix, gate and up in Q4_K (144
        // bytes per 256 weights), down in Q6_K (210 bytes) on the layers
        // `use_more_bits` picks (layer 0 is one) and Q4_K elsewhere.
        let one = 128 * 768 * 2048 / 256;
        let layer = |i| ggml_layer_experts(&a, &pc, &w, i);
        assert_eq!(layer(0).bytes, one * (2 * 144 + 210));
        assert_eq!(layer(0).largest, one * 210);
        assert_eq!(layer(6).bytes, one * 3 * 144);
        let all = run("qwen3-30b-a3b", None, 0, 512);
        let ten = run("qwen3-30b-a3b", None, 10, 512);
        let experts: u64 = (0..10).map(|i| layer(i).bytes).sum();
        assert_eq!(all.breakdown.weights - ten.breakdown.weights, experts);
        assert_eq!(ten.host_weights_bytes - all.host_weights_bytes, experts);
        // The KV cache and attention stay on the GPU.
        assert_eq!(ten.breakdown.kv_cache, all.breakdown.kv_cache);
        // Prompt processing copies one CPU expert tensor at a time into the compute
        // buffer (op offload from 32 tokens); 31 tokens compute them on the CPU.
        let largest = layer(0).largest;
        let ffn = |ubatch| {
            ggml_phases(
                &a,
                &Workload {
                    seq: 4096,
                    ubatch,
                    attention: Attention::Flash,
                    ..Workload::default()
                },
            )
            .ffn
        };
        assert_eq!(
            ten.breakdown.activations,
            all.breakdown.activations.max(largest + ffn(512))
        );
        let small = |cpu_moe| {
            run("qwen3-30b-a3b", None, cpu_moe, 31)
                .breakdown
                .activations
        };
        assert_eq!(small(10), small(0));
        // `--cpu-moe` (every layer) is 48 layers' worth; asking for more changes nothing.
        let every = run("qwen3-30b-a3b", None, u32::MAX, 512);
        assert_eq!(
            every.breakdown.weights,
            run("qwen3-30b-a3b", None, 48, 512).breakdown.weights
        );
        // Layers `-ngl` left on the CPU already hold their experts there: with the
        // output and the last 40 layers on the GPU (`-ngl 41`), `--n-cpu-moe 10` moves
        // only layers 8 and 9.
        let partial = run("qwen3-30b-a3b", Some(41), 0, 512);
        let both = run("qwen3-30b-a3b", Some(41), 10, 512);
        let two = layer(8).bytes + layer(9).bytes;
        assert_eq!(partial.breakdown.weights - both.breakdown.weights, two);
        // A dense model has no experts to move.
        assert_eq!(
            run("llama-3.1-8b", None, 10, 512).breakdown,
            run("llama-3.1-8b", None, 0, 512).breakdown
        );
    }

    #[test]
    fn nccl_buffers_per_parallel_group() {
        let w = |mode, gpus, tp, pp| Workload {
            mode,
            gpus,
            tp,
            pp,
            ..Workload::default()
        };
        // One GPU, or inference replicas without tensor parallelism: no communicator.
        assert_eq!(communication_bytes(&w(Mode::Inference, 1, 1, 1)), 0);
        assert_eq!(communication_bytes(&w(Mode::Inference, 4, 1, 1)), 0);
        assert_eq!(communication_bytes(&w(Mode::Inference, 2, 1, 2)), 0);
        // Tensor parallelism: one group of 2 or of 4.
        assert_eq!(
            communication_bytes(&w(Mode::Inference, 2, 2, 1)),
            NCCL_COMM_PAIR
        );
        assert_eq!(
            communication_bytes(&w(Mode::Inference, 4, 4, 1)),
            NCCL_COMM_GROUP
        );
        // Training on 8 GPUs with TP 2: a TP pair and a data-parallel group of 4.
        assert_eq!(
            communication_bytes(&w(Mode::Train, 8, 2, 1)),
            NCCL_COMM_PAIR + NCCL_COMM_GROUP
        );
        // It lands in the overhead.
        let two = estimate(&preset("llama-3.1-8b"), &w(Mode::Inference, 2, 2, 1)).unwrap();
        let b = two.breakdown;
        let dynamic = b.activations + b.kv_cache + b.gradients;
        assert_eq!(
            b.overhead,
            DEFAULT_CUDA_CONTEXT + NCCL_COMM_PAIR + dynamic * ALLOCATOR_MARGIN_PERCENT / 100
        );
    }

    #[test]
    fn korthikanti_formula_for_gpt_style_layers() {
        // A GPT-style layer (plain MLP with 4h, MHA, dropout, eager) in 16-bit:
        // sbh(34 + 5as/h) bytes.
        let a = model("gpt2").unwrap().arch.clone();
        let w = Workload {
            mode: Mode::Train,
            weights: WeightFormat::Plain { dtype: Dtype::Bf16 },
            batch: 2,
            seq: 1024,
            attention: Attention::Eager,
            ..Workload::default()
        };
        let (s, b, h, heads) = (1024u64, 2u64, 768u64, 12u64);
        let want = s * b * h * 34 + 5 * heads * s * s * b;
        assert_eq!(layer_activations(&a, &w), want);
        // FlashAttention removes the s² term, keeping the fp32 log-sum-exp; its output is
        // the output projection's input, counted once.
        let flash = Workload {
            attention: Attention::Flash,
            ..w.clone()
        };
        assert_eq!(
            layer_activations(&a, &flash),
            s * b * h * 34 + 4 * heads * s * b
        );
        // SDPA's output layout needs a transposed copy for the projection: 2sbh more.
        let sdpa = Workload {
            attention: Attention::Sdpa,
            ..w
        };
        assert_eq!(
            layer_activations(&a, &sdpa),
            s * b * h * 36 + 4 * heads * s * b
        );
    }

    /// Peaks measured with `Trainer` on an H200 (`tools/device/measure_memory.py`,
    /// `validation::measured`) split by mechanism: which inputs a layer saves depends on
    /// what trains and on autocast.
    #[test]
    fn saved_inputs_follow_what_trains() {
        let a = model("qwen2.5-7b").unwrap().arch.clone();
        let full = Workload {
            mode: Mode::Train,
            seq: 2048,
            ..Workload::default()
        };
        let (sb, h, q, kv, inter) = (2048u64, 3584u64, 3584u64, 512u64, 18_944u64);
        let lse = 4 * 28 * sb;
        let norms = 2 * (4 + 2) * sb * h;
        // Full bf16: one shared input per block, Q, K, V, the kernel's output and the
        // output projection's copy, the MLP's four tensors; norms save fp32 input and
        // normalized output.
        assert_eq!(
            layer_activations(&a, &full),
            2 * sb * (h + q + 2 * kv + q + q) + lse + 2 * sb * (h + 4 * inter) + norms
        );
        // LoRA on q and v under autocast (fp32 adapters): each adapter saves its own
        // cast of the input; the frozen o, gate, up and down projections save nothing,
        // and the norms only their input.
        let lora = Workload {
            finetune: Finetune::Lora,
            lora_targets: LoraTargets::QUERY_VALUE,
            precision: Precision::Amp,
            ..full.clone()
        };
        let lora_rest = 2 * sb * (q + 2 * kv + q) + lse + 2 * sb * 3 * inter + 2 * 4 * sb * h;
        assert_eq!(layer_activations(&a, &lora), 2 * sb * 2 * h + lora_rest);
        // Adapters in the compute dtype read the input itself: one tensor for both.
        // So do PEFT's bitsandbytes layers under autocast, which leave the cast to it,
        // unless PEFT's k-bit preparation made the residual stream fp32.
        let pure = Workload {
            precision: Precision::Pure,
            ..lora.clone()
        };
        assert_eq!(layer_activations(&a, &pure), 2 * sb * h + lora_rest);
        let nf4 = Workload {
            finetune: Finetune::Qlora,
            weights: WeightFormat::Nf4 { double_quant: true },
            ..lora.clone()
        };
        assert_eq!(layer_activations(&a, &nf4), 2 * sb * h + lora_rest);
        let prepared = Workload {
            kbit_fp32: true,
            ..nf4.clone()
        };
        assert_eq!(
            layer_activations(&a, &prepared),
            layer_activations(&a, &lora)
        );
        // Autocast over fp32 weights: q, k, v and gate, up each cast the input again,
        // and the norms keep fp32 normalized outputs.
        let amp = Workload {
            weights: WeightFormat::Plain { dtype: Dtype::Fp32 },
            precision: Precision::Amp,
            ..full.clone()
        };
        assert_eq!(
            layer_activations(&a, &amp) - layer_activations(&a, &full),
            2 * sb * (2 * h + h) + 2 * 2 * sb * h
        );
    }

    /// Llama 3.1 8B, its hidden size and vocabulary, and a bf16 full fine-tune with
    /// an fp32 master copy on one GPU (1024 tokens, checkpointing).
    fn llama_8b_full() -> (ModelInput, Architecture, u64, u64, Workload) {
        let a = model("llama-3.1-8b").unwrap().arch.clone();
        let (h, vocab) = (u64::from(a.hidden), u64::from(a.vocab));
        let w = Workload {
            mode: Mode::Train,
            weights: WeightFormat::Plain { dtype: Dtype::Bf16 },
            precision: Precision::Master,
            seq: 1024,
            grad_checkpointing: true,
            ..Workload::default()
        };
        (preset("llama-3.1-8b"), a, h, vocab, w)
    }

    /// DDP copies every gradient into its buckets; DeepSpeed reduces through a bucket
    /// of hidden² elements, holds whole gradients until they are reduced (ZeRO-2/3)
    /// and, at ZeRO-3, keeps the modules it will reuse gathered; FSDP and one GPU add
    /// none of it.
    #[test]
    fn data_parallel_gradient_buffers() {
        let (m, a, h, vocab, full) = llama_8b_full();
        let one = estimate(&m, &full).unwrap();
        assert_eq!(one.grad_sync, GradSync::default());
        let ddp = estimate(
            &m,
            &Workload {
                gpus: 2,
                ..full.clone()
            },
        )
        .unwrap();
        assert_eq!(ddp.breakdown.gradients, 2 * one.breakdown.gradients);
        assert_eq!(ddp.grad_sync.buckets, one.breakdown.gradients);
        let fsdp = Workload {
            gpus: 8,
            zero: 3,
            fsdp: true,
            ..full.clone()
        };
        assert_eq!(estimate(&m, &fsdp).unwrap().grad_sync, GradSync::default());
        let (head, layer_module) = (2 * vocab * h, 2 * h * u64::from(a.intermediate));
        let cases: &[(u8, u32, Finetune, u64, u64)] = &[
            // (stage, GPUs, fine-tune, reused bytes, head gradient bytes)
            (1, 8, Finetune::Full, 0, 0),
            (2, 8, Finetune::Full, 0, head),
            (2, 8, Finetune::Lora, 0, 0),
            (3, 1, Finetune::Full, 0, 0),
            // Llama 3.1 8B keeps only its head gathered for reuse.
            (3, 8, Finetune::Full, head, head),
            (3, 8, Finetune::Lora, head, 0),
        ];
        for &(zero, gpus, finetune, reused, head_gradient) in cases {
            let w = Workload {
                zero,
                gpus,
                finetune,
                deepspeed: true,
                ..full.clone()
            };
            let e = estimate(&m, &w).unwrap();
            let sync = e.grad_sync;
            let what = format!("ZeRO-{zero} on {gpus}, {finetune:?}");
            assert_eq!(sync.buckets, 2 * h * h, "{what}");
            assert_eq!(sync.reused, reused, "{what}");
            assert_eq!(sync.head_gradient, head_gradient, "{what}");
            let layer = if head_gradient > 0 { layer_module } else { 0 };
            assert_eq!(sync.layer_gradient, layer, "{what}");
            // The same sharding outside DeepSpeed (FSDP at stage 3) has no bucket.
            let without = estimate(
                &m,
                &Workload {
                    deepspeed: false,
                    fsdp: zero >= 3,
                    ..w.clone()
                },
            )
            .unwrap();
            assert_eq!(
                e.breakdown.gradients - without.breakdown.gradients,
                2 * h * h
            );
        }
        // DDP needs no architecture: a bare parameter count pays the copy too.
        let bare = |gpus| {
            estimate(
                &ModelInput::Params(1_000_000_000),
                &Workload {
                    gpus,
                    ..full.clone()
                },
            )
            .unwrap()
            .breakdown
            .gradients
        };
        assert_eq!(bare(2), 2 * bare(1));
        // Inference gathers and buckets nothing.
        let serve = Workload {
            gpus: 8,
            zero: 3,
            deepspeed: true,
            offload_params: true,
            cpu_offload: true,
            ..Workload::default()
        };
        let e = estimate(&m, &serve).unwrap();
        assert_eq!(e.grad_sync, GradSync::default());
        assert!(e.breakdown.weights > 0);
        assert_eq!(
            largest_layer_module_params(&a),
            h * u64::from(a.intermediate)
        );
        // What ZeRO-3 keeps gathered after forward: modules whose following modules,
        // walked forward and back, stay under 10⁹ parameters. Llama 2 13B's small head
        // lets the last layer and the next layer's down_proj stay.
        let l13 = model("llama-2-13b").unwrap().arch.clone();
        let (h13, mlp, attn) = (5120u64, 13_824 * 5120u64, 5120 * 5120u64);
        assert_eq!(
            deepspeed_reused_params(&l13),
            32_000 * h13 + 4 * mlp + 4 * attn
        );
        assert_eq!(
            deepspeed_reused_params(&a),
            vocab * h,
            "Llama 3.1 8B: the head"
        );
        let mixtral = model("mixtral-8x7b").unwrap().arch.clone();
        assert_eq!(
            deepspeed_reused_params(&mixtral),
            32_000 * 4096 + 8 * 3 * 14_336 * 4096,
            "the head and the last layer's experts"
        );
        // A MoE layer's routed experts are one module in Transformers.
        let moe = model("qwen3-30b-a3b").unwrap().arch.clone();
        let m = moe.moe.unwrap();
        assert_eq!(
            largest_layer_module_params(&moe),
            u64::from(m.experts) * 3 * u64::from(m.expert_intermediate) * u64::from(moe.hidden)
        );
    }

    #[test]
    fn gradients_freed_between_steps_do_not_meet_the_loss_peak() {
        let m = preset("qwen2.5-0.5b");
        let w = Workload {
            mode: Mode::Train,
            seq: 2048,
            batch: 8,
            grad_checkpointing: true,
            ..Workload::default()
        };
        let freed = estimate(&m, &w).unwrap().breakdown;
        let kept = estimate(
            &m,
            &Workload {
                deepspeed: true,
                ..w
            },
        )
        .unwrap()
        .breakdown;
        assert_eq!(freed.gradients, kept.gradients);
        assert_eq!(kept.activations - freed.activations, kept.gradients);
    }

    /// DeepSpeed's ZeRO-Offload moves the gradient partitions (fp32) with the optimizer
    /// at ZeRO-2 and 3, through the reduce bucket and a staging buffer as large as the
    /// largest parameter; ZeRO-1 keeps whole gradients until after backward, and other
    /// runtimes keep theirs.
    #[test]
    fn deepspeed_offload_moves_gradients_too() {
        let w = Workload {
            mode: Mode::Train,
            weights: WeightFormat::Plain { dtype: Dtype::Bf16 },
            precision: Precision::Master,
            cpu_offload: true,
            zero: 2,
            gpus: 2,
            ..Workload::default()
        };
        let m = preset("qwen2.5-0.5b");
        let a = model("qwen2.5-0.5b").unwrap().arch.clone();
        let (h, vocab) = (u64::from(a.hidden), u64::from(a.vocab));
        let kept = estimate(&m, &w).unwrap();
        let ds = estimate(
            &m,
            &Workload {
                deepspeed: true,
                ..w.clone()
            },
        )
        .unwrap();
        assert_eq!(kept.breakdown.optimizer, 0);
        assert!(kept.breakdown.gradients > 0);
        assert_eq!(ds.breakdown.gradients, 2 * h * h + 2 * vocab * h);
        // fp32 on the CPU: twice the 16-bit gradient partition the GPU would keep.
        assert_eq!(
            ds.offloaded_to_ram,
            kept.offloaded_to_ram + 2 * kept.breakdown.gradients
        );
        let one = estimate(
            &m,
            &Workload {
                deepspeed: true,
                zero: 1,
                ..w.clone()
            },
        )
        .unwrap();
        assert!(
            one.breakdown.gradients > kept.breakdown.gradients,
            "ZeRO-1 keeps them whole"
        );
        assert_eq!(
            one.offloaded_to_ram, ds.offloaded_to_ram,
            "and an fp32 partition in RAM all the same"
        );
        // The staging buffer is as large as the largest parameter that trains: an
        // adapter's, nothing to speak of.
        let lora = estimate(
            &m,
            &Workload {
                deepspeed: true,
                finetune: Finetune::Lora,
                ..w
            },
        )
        .unwrap();
        assert_eq!(lora.grad_sync.staging, 0);
    }

    /// ZeRO-3 with its parameters in RAM: the GPU holds what it gathers to compute
    /// (DeepSpeed's modules kept for reuse and whole gradients, even on one GPU; FSDP's
    /// root and working layer) and nothing of the model's states; RAM holds them all.
    #[test]
    fn offloaded_parameters_leave_only_what_is_gathered() {
        let (m, a, h, vocab, full) = llama_8b_full();
        let w = Workload {
            zero: 3,
            cpu_offload: true,
            offload_params: true,
            ..full
        };
        let ds = estimate(
            &m,
            &Workload {
                deepspeed: true,
                ..w.clone()
            },
        )
        .unwrap();
        assert_eq!(ds.breakdown.weights, 0);
        assert_eq!(ds.breakdown.optimizer, 0);
        assert_eq!(ds.breakdown.gradients, 2 * h * h, "the reduce bucket alone");
        // The head stays gathered for reuse; its gradient is whole until reduced.
        assert_eq!(ds.grad_sync.reused, 2 * vocab * h);
        assert_eq!(ds.grad_sync.head_gradient, 2 * vocab * h);
        let fsdp = estimate(
            &m,
            &Workload {
                fsdp: true,
                gpus: 2,
                ..w.clone()
            },
        )
        .unwrap();
        let (root, _) = fsdp_unsharded(
            &a,
            &Workload {
                fsdp: true,
                gpus: 2,
                ..w.clone()
            },
        );
        assert_eq!(fsdp.breakdown.weights, root);
        assert_eq!(fsdp.breakdown.gradients, 0);
        // RAM holds each GPU's shard of the weights, fp32 gradients and optimizer.
        let kept = estimate(
            &m,
            &Workload {
                fsdp: true,
                gpus: 2,
                cpu_offload: false,
                offload_params: false,
                ..w
            },
        )
        .unwrap();
        assert_eq!(
            fsdp.offloaded_to_ram,
            kept.breakdown.optimizer + 2 * kept.breakdown.gradients + kept.breakdown.weights - root
        );
    }

    #[test]
    fn cpu_offload_moves_optimizer_states() {
        let w = Workload {
            mode: Mode::Train,
            weights: WeightFormat::Plain { dtype: Dtype::Bf16 },
            precision: Precision::Master,
            cpu_offload: true,
            ..Workload::default()
        };
        let e = estimate(&ModelInput::Params(1_000_000), &w).unwrap();
        assert_eq!(e.breakdown.optimizer, 0);
        // fp32 moments (8 bytes) and the fp32 master copy (4) per parameter.
        assert_eq!(e.offloaded_to_ram, 12_000_000);
    }

    #[test]
    fn full_training_costs_16_bytes_per_parameter() {
        // fp32 AdamW: 4 (weights) + 4 (grads) + 8 (moments).
        let w = Workload {
            mode: Mode::Train,
            weights: WeightFormat::Plain { dtype: Dtype::Fp32 },
            ..Workload::default()
        };
        let e = estimate(&ModelInput::Params(7_000_000_000), &w).unwrap();
        assert_eq!(e.breakdown.model_states(), 112_000_000_000);
        assert_eq!(e.trainable_params, 7_000_000_000);
    }

    /// Autocast over fp32 weights (Trainer(bf16=True) on a model loaded in fp32): fp32
    /// weights and gradients (the parameter's dtype), fp32 AdamW moments, and the
    /// 16-bit copies of the weights kept for backward: 18 bytes per parameter. A 16-bit
    /// model with an fp32 master copy (DeepSpeed) is 16, pure bf16 is 8.
    #[test]
    fn precision_modes_store_what_their_frameworks_store() {
        let per_param = |precision| {
            let w = Workload {
                mode: Mode::Train,
                weights: WeightFormat::Plain { dtype: Dtype::Bf16 },
                precision,
                ..Workload::default()
            };
            let e = estimate(&ModelInput::Params(1_000_000), &w).unwrap();
            let b = e.breakdown;
            (
                b.weights / 1_000_000,
                b.gradients / 1_000_000,
                b.optimizer / 1_000_000,
            )
        };
        assert_eq!(
            per_param(Precision::Amp),
            (6, 4, 8),
            "autocast keeps fp32 gradients"
        );
        assert_eq!(per_param(Precision::Master), (2, 2, 12));
        assert_eq!(per_param(Precision::Pure), (2, 2, 4));
    }

    /// transformers upcasts the whole logits; torchtune's chunked output upcasts one
    /// chunk at a time; fused losses never hold more than one chunk of tokens.
    #[test]
    fn the_loss_peak_follows_how_the_loss_is_computed() {
        let a = model("llama-3.1-8b").unwrap().arch.clone();
        let w = Workload {
            mode: Mode::Train,
            batch: 2,
            seq: 2048,
            ..Workload::default()
        };
        let elements = 2 * 2048 * 128_256u64;
        assert_eq!(loss_peak(&a, &w), elements * 12);
        let chunked = Workload {
            loss: Loss::ChunkedOutput { chunks: 8 },
            ..w.clone()
        };
        assert_eq!(loss_peak(&a, &chunked), elements * 2 + elements / 8 * 12);
        let fused = Workload {
            loss: Loss::Fused,
            ..w.clone()
        };
        assert_eq!(loss_peak(&a, &fused), FUSED_CHUNK_TOKENS * 128_256 * 14);
        // An encoder for classification has no vocabulary-sized output.
        let bert = model("bert-base-uncased").unwrap().arch.clone();
        assert_eq!(loss_peak(&bert, &w), 0);
    }

    /// bitsandbytes multiplies by a 16-bit copy of each 4-bit linear, one at a time:
    /// Llama 3.1 8B's widest is an MLP matrix, 14 336 × 4096.
    #[test]
    fn bnb_dequantizes_one_linear_at_a_time() {
        let a = model("llama-3.1-8b").unwrap().arch.clone();
        let nf4 = Workload {
            weights: WeightFormat::Nf4 { double_quant: true },
            seq: 2048,
            ..Workload::default()
        };
        assert_eq!(bnb_dequant_bytes(&a, &nf4), 14_336 * 4096 * 2);
        let bf16 = Workload {
            weights: WeightFormat::Plain { dtype: Dtype::Bf16 },
            ..nf4.clone()
        };
        assert_eq!(bnb_dequant_bytes(&a, &bf16), 0);
        // In a prefill, not for one token (bitsandbytes' gemv kernel reads 4 bits).
        let prefill = |w: &Workload| prefill_activations(&a, w);
        assert_eq!(
            prefill(&nf4)
                - prefill(&Workload {
                    weights: bf16.weights,
                    ..nf4.clone()
                }),
            14_336 * 4096 * 2
        );
        let one = Workload {
            seq: 1,
            ..nf4.clone()
        };
        assert_eq!(
            prefill(&one),
            prefill(&Workload {
                weights: bf16.weights,
                ..one.clone()
            })
        );
        // And in training, inside a layer's backward.
        let train = Workload {
            mode: Mode::Train,
            finetune: Finetune::Qlora,
            loss: Loss::Fused,
            seq: 32_768,
            ..nf4.clone()
        };
        let sync = GradSync::default();
        let gptq = Workload {
            weights: WeightFormat::GroupQuant {
                bits: 4,
                group: 128,
            },
            ..train.clone()
        };
        // GPTQ's kernels read the packed weight; the residual stream is fp32 only after
        // PEFT's k-bit preparation of a bitsandbytes base.
        let grow =
            training_activations(&a, &train, 0, &sync) - training_activations(&a, &gptq, 0, &sync);
        assert!(grow >= 14_336 * 4096 * 2, "{grow}");
        // QLoRA over plain weights still loads an NF4 base.
        let plain = Workload {
            weights: bf16.weights,
            ..train.clone()
        };
        assert_eq!(bnb_dequant_bytes(&a, &plain), 14_336 * 4096 * 2);
        assert_eq!(
            training_activations(&a, &train, 0, &sync),
            training_activations(&a, &plain, 0, &sync)
        );
    }

    /// LLM.int8 quantizes each linear's input and multiplies into int32 (forward),
    /// dequantizes the weight for the input's gradient (backward), and keeps every
    /// frozen linear's input for that backward.
    #[test]
    fn llm_int8_quantizes_inputs_and_keeps_them() {
        let a = model("llama-3.1-8b").unwrap().arch.clone();
        let int8 = Workload {
            weights: WeightFormat::Plain { dtype: Dtype::Int8 },
            seq: 8192,
            ..Workload::default()
        };
        let bf16 = Workload {
            weights: WeightFormat::Plain { dtype: Dtype::Bf16 },
            ..int8.clone()
        };
        // The widest product is gate/up's: 4096 inputs (int8 + an fp32 scale per row;
        // the fp16 copy of the bf16 input is gone by then), 14 336 outputs in int32,
        // then in fp16 before the bf16 output.
        let gate = 8192 * (4096 + 4 + 6 * 14_336);
        assert_eq!(bnb_int8_scratch(&a, &int8), gate);
        assert_eq!(bnb_int8_scratch(&a, &bf16), 0);
        assert_eq!(
            prefill_activations(&a, &int8) - prefill_activations(&a, &bf16),
            gate
        );
        // Inference makes no 16-bit copy of the weight; training's backward does.
        assert_eq!(bnb_dequant_bytes(&a, &int8), 0);
        let lora = Workload {
            mode: Mode::Train,
            finetune: Finetune::Lora,
            lora_targets: LoraTargets::QUERY_VALUE,
            attention: Attention::Flash,
            loss: Loss::Fused,
            grad_checkpointing: false,
            seq: 4096,
            ..int8.clone()
        };
        assert_eq!(bnb_dequant_bytes(&a, &lora), 14_336 * 4096 * 2);
        // The frozen o, gate/up and down projections keep their inputs: the attention
        // output (FlashAttention's own, already saved), the MLP's input and the
        // product.
        let lora_bf16 = Workload {
            weights: bf16.weights,
            ..lora.clone()
        };
        assert_eq!(
            layer_activations(&a, &lora) - layer_activations(&a, &lora_bf16),
            2 * 4096 * (4096 + 14_336)
        );
        // Non-reentrant checkpointing would leave every layer's four inputs alive.
        assert_eq!(bnb_int8_unhooked_inputs(&a, &lora), 0);
        let checkpointed = Workload {
            grad_checkpointing: true,
            ..lora.clone()
        };
        assert_eq!(
            bnb_int8_unhooked_inputs(&a, &checkpointed),
            32 * 4096 * (4096 + 4096 + 4096 + 14_336) * 2
        );
        // A QLoRA over int8 weights loads NF4 and behaves like one.
        let qlora = Workload {
            finetune: Finetune::Qlora,
            ..lora.clone()
        };
        assert_eq!(bnb_int8_scratch(&a, &qlora), 0);
        assert_eq!(
            layer_activations(&a, &qlora),
            layer_activations(
                &a,
                &Workload {
                    weights: bf16.weights,
                    ..qlora.clone()
                }
            )
        );
    }

    #[test]
    fn lora_targets_and_offloaded_checkpoints() {
        let a = model("llama-3.1-8b").unwrap().arch.clone();
        let qv = lora_params(&a, 16, LoraTargets::QUERY_VALUE);
        // r × layers × ((h + q) + (h + kv)): 16 × 32 × (8192 + 5120), PEFT's default.
        assert_eq!(qv, 16 * 32 * (8192 + 5120));
        assert!(qv < lora_params(&a, 16, LoraTargets::ATTENTION));
        assert!(
            lora_params(&a, 16, LoraTargets::ATTENTION)
                < lora_params(&a, 16, LoraTargets::AllLinear)
        );
        // A module list: r × layers × Σ (in + out) of the named linears.
        let list =
            |text: &str| LoraTargets::Modules(crate::workload::Linears::parse(text).unwrap());
        for (targets, per_layer) in [
            // torchtune's configs: q, v, output_proj and the MLP.
            (
                LoraTargets::TORCHTUNE,
                8192 + 5120 + 8192 + 3 * (4096 + 14336),
            ),
            (list("q_proj,k_proj,v_proj"), 8192 + 2 * 5120),
            (list("gate_proj, up_proj,down_proj"), 3 * (4096 + 14336)),
            // Every linear of a text model, named one by one, is "all-linear".
            (
                list("q_proj,k_proj,v_proj,o_proj,w1,w2,w3"),
                8192 + 2 * 5120 + 8192 + 3 * (4096 + 14336),
            ),
        ] {
            assert_eq!(
                lora_params(&a, 8, targets),
                8 * 32 * per_layer,
                "{targets:?}"
            );
        }
        assert_eq!(
            lora_params(&a, 8, list("q_proj,k_proj,v_proj,o_proj,mlp")),
            lora_params(&a, 8, LoraTargets::AllLinear)
        );
        let w = Workload {
            mode: Mode::Train,
            finetune: Finetune::Qlora,
            grad_checkpointing: true,
            loss: Loss::Fused,
            seq: 32_768,
            ..Workload::default()
        };
        let on_gpu = training_activations(&a, &w, 0, &GradSync::default());
        let offloaded = training_activations(
            &a,
            &Workload {
                checkpoint_offload: true,
                ..w
            },
            0,
            &GradSync::default(),
        );
        // 30 of the 32 layer inputs (2 bytes × 32 768 × 4096 each) go to CPU RAM.
        assert_eq!(on_gpu - offloaded, 30 * 2 * 32_768 * 4096);
    }

    #[test]
    fn lora_and_qlora() {
        let m = preset("llama-3.1-8b");
        let a = model("llama-3.1-8b").unwrap().arch.clone();
        // r × (in + out) over q, k, v, o, gate, up, down: 16 × 32 × (8192 + 2·5120 + 8192 + 3·18432).
        assert_eq!(
            lora_params(&a, 16, LoraTargets::AllLinear),
            16 * 32 * (8192 + 2 * 5120 + 8192 + 3 * 18432)
        );
        let lora = Workload {
            mode: Mode::Train,
            finetune: Finetune::Lora,
            precision: Precision::Amp,
            ..Workload::default()
        };
        let qlora = Workload {
            finetune: Finetune::Qlora,
            ..lora.clone()
        };
        let e_lora = estimate(&m, &lora).unwrap();
        let e_qlora = estimate(&m, &qlora).unwrap();
        assert_eq!(
            e_lora.trainable_params,
            lora_params(&a, 16, LoraTargets::AllLinear)
        );
        // NF4 layers; embeddings and head stay 16-bit (a large share with a 128k vocabulary).
        assert!(e_qlora.breakdown.weights * 2 < e_lora.breakdown.weights);
        assert_eq!(e_lora.breakdown.optimizer, 8 * e_lora.trainable_params);
        // Without an architecture LoRA is refused with a Spanish message.
        let err = estimate(&ModelInput::Params(1000), &lora)
            .unwrap_err()
            .to_string();
        assert!(err.contains("arquitectura"), "{err}");
    }

    /// PEFT's `prepare_model_for_kbit_training` casts what is not 4-bit to fp32: two
    /// more bytes for each of Llama 3.1 8B's embeddings, head and norms, fp32 layer
    /// inputs under checkpointing, and a 16-bit copy of the frozen head under the loss.
    /// A GPTQ base is left as it is.
    #[test]
    fn peft_kbit_preparation_upcasts_the_rest_to_fp32() {
        let m = preset("llama-3.1-8b");
        let a = model("llama-3.1-8b").unwrap().arch.clone();
        let pc = a.param_count();
        let plain = Workload {
            mode: Mode::Train,
            finetune: Finetune::Qlora,
            weights: WeightFormat::Nf4 { double_quant: true },
            grad_checkpointing: true,
            batch: 1,
            seq: 4096,
            ..Workload::default()
        };
        let prepared = Workload {
            kbit_fp32: true,
            ..plain.clone()
        };
        let (e0, e1) = (
            estimate(&m, &plain).unwrap(),
            estimate(&m, &prepared).unwrap(),
        );
        let rest = pc.total - pc.layer_linear;
        assert_eq!(e1.breakdown.weights - e0.breakdown.weights, 2 * rest);
        // 525M embeddings + 525M head + norms: about 2.1 GB more.
        assert!(
            (2_100_000_000..2_110_000_000).contains(&(2 * rest)),
            "{rest}"
        );
        // 32 layer inputs of 4096 tokens × 4096 in fp32 instead of bf16, and the bf16
        // copy of the fp32 head that autocast makes afresh (it is frozen, so not
        // cached) and the product keeps through the loss.
        assert_eq!(head_cast(&a, &plain), 0);
        assert_eq!(head_cast(&a, &prepared), 128_256 * 4096 * 2);
        assert_eq!(
            e1.breakdown.activations - e0.breakdown.activations,
            32 * 4096 * 4096 * 2 + 128_256 * 4096 * 2
        );
        // A fused loss takes the fp32 weight itself.
        let fused = Workload {
            loss: Loss::Fused,
            ..prepared.clone()
        };
        assert_eq!(head_cast(&a, &fused), 0);
        // GPTQ: nothing to cast.
        let gptq = WeightFormat::GroupQuant {
            bits: 4,
            group: 128,
        };
        let g0 = estimate(
            &m,
            &Workload {
                weights: gptq,
                ..plain.clone()
            },
        )
        .unwrap();
        let g1 = estimate(
            &m,
            &Workload {
                weights: gptq,
                ..prepared.clone()
            },
        )
        .unwrap();
        assert_eq!(g0.breakdown, g1.breakdown);
        // Only transformers prepares the base this way.
        let s = crate::Settings::for_task(crate::settings::Task::Qlora);
        assert!(s.workload().kbit_fp32);
        let unsloth = crate::Settings::defaults(
            crate::settings::Task::Qlora,
            crate::settings::Runtime::Unsloth,
        );
        assert!(!unsloth.workload().kbit_fp32);
        // Sharded QLoRA (FSDP or ZeRO-3): TRL leaves the base as it is.
        let mut sharded = crate::Settings::for_task(crate::settings::Task::Qlora);
        sharded.gpus = 2;
        sharded.zero = 3;
        assert!(!sharded.workload().kbit_fp32);
    }

    #[test]
    fn kv_cache_windows_and_dtypes() {
        let gemma = model("gemma-3-4b").unwrap().arch.clone();
        let w = Workload {
            seq: 32_768,
            ..Workload::default()
        };
        // 34 layers: 29 windowed at 1024 tokens, 5 global at 32 768.
        let per_token_layer = 2 * 4 * 256 * 2;
        assert_eq!(
            kv_cache(&gemma, &w),
            per_token_layer * (5 * 32_768 + 29 * 1024)
        );
        let fp8 = Workload {
            kv_dtype: KvDtype::Fp8,
            ..w.clone()
        };
        assert_eq!(kv_cache(&gemma, &fp8) * 2, kv_cache(&gemma, &w));
        let bert = model("bert-base-uncased").unwrap().arch.clone();
        assert_eq!(kv_cache(&bert, &w), 0);
    }

    /// Paging moves no byte: the 8-bit paged AdamW holds what the 8-bit one does, and
    /// the 32-bit paged AdamW holds fp32 moments, 8 bytes per trainable parameter, even
    /// where PyTorch's AdamW keeps them in the parameters' bf16.
    #[test]
    fn paged_optimizers_count_their_states() {
        let m = preset("llama-3.1-8b");
        let full = |optimizer| Workload {
            mode: Mode::Train,
            finetune: Finetune::Full,
            precision: Precision::Pure,
            optimizer,
            ..Workload::default()
        };
        let states = |w: &Workload| estimate(&m, w).unwrap().breakdown.optimizer;
        let trainable = estimate(&m, &full(Optimizer::Adamw))
            .unwrap()
            .trainable_params;
        assert_eq!(states(&full(Optimizer::Adamw)), 4 * trainable);
        assert_eq!(states(&full(Optimizer::PagedAdamw)), 8 * trainable);
        let w = Workload {
            mode: Mode::Train,
            finetune: Finetune::Qlora,
            optimizer: Optimizer::Adamw8bit,
            ..Workload::default()
        };
        let paged = Workload {
            optimizer: Optimizer::PagedAdamw8bit,
            ..w.clone()
        };
        assert_eq!(
            estimate(&m, &w).unwrap().breakdown,
            estimate(&m, &paged).unwrap().breakdown
        );
    }

    #[test]
    fn pipeline_parallel_keeps_first_stage_activations() {
        let m = preset("llama-3.1-8b");
        let w = Workload {
            mode: Mode::Train,
            seq: 2048,
            gpus: 4,
            ..Workload::default()
        };
        let one = estimate(&m, &w).unwrap();
        let pp = estimate(&m, &Workload { pp: 4, ..w }).unwrap();
        assert_eq!(pp.breakdown.activations, one.breakdown.activations);
        assert_eq!(pp.breakdown.weights, one.breakdown.weights.div_ceil(4));
    }

    #[test]
    fn mla_caches_the_latent() {
        let a = crate::arch::tests::deepseek_v2_lite();
        let w = Workload {
            seq: 1000,
            ..Workload::default()
        };
        // 27 layers × (512 + 64) elements × 2 bytes per token.
        assert_eq!(kv_cache(&a, &w), 1000 * 27 * 576 * 2);
        // Tensor parallelism replicates the latent instead of splitting heads.
        assert_eq!(
            kv_cache(&a, &Workload { tp: 2, ..w.clone() }),
            kv_cache(&a, &w)
        );
        let gqa = Architecture { mla: None, ..a };
        assert!(kv_cache(&gqa, &w) > 10 * 1000 * 27 * 576 * 2);
    }

    #[test]
    fn bad_workloads_are_spanish_errors() {
        let m = preset("llama-3.1-8b");
        let cases = [
            Workload {
                batch: 0,
                ..Workload::default()
            },
            Workload {
                seq: MAX_SEQ + 1,
                ..Workload::default()
            },
            Workload {
                gpus: 3,
                tp: 2,
                ..Workload::default()
            },
            Workload {
                tp: u32::MAX,
                gpus: u32::MAX,
                ..Workload::default()
            },
            Workload {
                mode: Mode::Train,
                weights: WeightFormat::Nf4 { double_quant: true },
                ..Workload::default()
            },
        ];
        for w in cases {
            let e = estimate(&m, &w).unwrap_err();
            assert!(!e.to_string().is_empty());
        }
    }

    fn workload() -> impl Strategy<Value = Workload> {
        (
            prop_oneof![Just(Mode::Inference), Just(Mode::Train)],
            prop_oneof![
                Just(Finetune::Full),
                Just(Finetune::Lora),
                Just(Finetune::Qlora)
            ],
            prop_oneof![
                Just(Attention::Eager),
                Just(Attention::Sdpa),
                Just(Attention::Flash)
            ],
            1u64..64,
            1u64..65_536,
            any::<bool>(),
            0u8..4,
            prop_oneof![Just(1u32), Just(2), Just(8), Just(64)],
        )
            .prop_map(
                |(mode, finetune, attention, batch, seq, ckpt, zero, gpus)| Workload {
                    mode,
                    finetune,
                    attention,
                    batch,
                    seq,
                    grad_checkpointing: ckpt,
                    zero,
                    gpus,
                    ..Workload::default()
                },
            )
    }

    fn any_preset() -> impl Strategy<Value = ModelInput> {
        let n = crate::catalog::models().len();
        (0..n).prop_map(|i| ModelInput::Arch {
            arch: Box::new(crate::catalog::models()[i].arch.clone()),
            total_params: None,
        })
    }

    /// Any architecture an importer can produce: every dimension up to 2^24.
    fn any_bounded_arch() -> impl Strategy<Value = Architecture> {
        let dim = || prop_oneof![1u32..64, 1u32..(1 << 24)];
        (
            (dim(), dim(), dim(), dim(), dim(), dim(), dim()),
            any::<bool>(),
            any::<bool>(),
            0u32..512,
        )
            .prop_map(
                |((layers, hidden, heads, kv, hd, inter, vocab), moe, mla, experts)| {
                    let mut a = crate::arch::tests::deepseek_v2_lite();
                    a.layers = layers;
                    a.hidden = hidden;
                    a.heads = heads;
                    a.kv_heads = kv;
                    a.head_dim = hd;
                    a.intermediate = inter;
                    a.vocab = vocab;
                    a.max_positions = inter;
                    if let Some(m) = a.moe.as_mut() {
                        m.experts = experts.max(1);
                        m.expert_intermediate = inter;
                    }
                    if !moe {
                        a.moe = None;
                    }
                    if !mla {
                        a.mla = None;
                    }
                    a
                },
            )
    }

    proptest! {
        /// A forged parameter total (a GGUF header, an index, a link) anywhere up to
        /// u64::MAX saturates; with overflow checks on (tests), nothing panics.
        #[test]
        fn forged_parameter_totals_saturate(total in any::<u64>(), train in any::<bool>()) {
            let m = ModelInput::Arch {
                arch: Box::new(model("llama-3.1-8b").unwrap().arch.clone()),
                total_params: Some(total),
            };
            let w = Workload {
                mode: if train { Mode::Train } else { Mode::Inference },
                precision: Precision::Master,
                ..Workload::default()
            };
            let e = estimate(&m, &w).unwrap();
            prop_assert_eq!(e.breakdown.total(), e.per_gpu_bytes);
        }

        #[test]
        fn huge_architectures_never_panic(
            a in any_bounded_arch(),
            w in workload(),
            fmt in prop_oneof![Just("bf16"), Just("Q4_K_M"), Just("nf4"), Just("gptq-4bit-128g")],
        ) {
            let w = Workload { weights: WeightFormat::parse(fmt).unwrap(), ..w };
            let m = ModelInput::Arch { arch: Box::new(a.clone()), total_params: None };
            if let Ok(e) = estimate(&m, &w) {
                let g = &crate::catalog::gpus()[0];
                let _ = crate::speed::speed(&a, &w, &e, g);
                let _ = crate::serving::plan(
                    &a,
                    &w,
                    &e,
                    g.memory_bytes,
                    90,
                    16,
                    crate::serving::Profile::vllm_default(g.memory_bytes, Some(g)),
                    0,
                );
                let _ = crate::solve::max_batch(&m, &w, g.memory_bytes);
            }
        }

        #[test]
        fn monotonic_in_batch_and_seq(m in any_preset(), w in workload()) {
            let base = estimate(&m, &w).unwrap().per_gpu_bytes;
            let more_batch = estimate(&m, &Workload { batch: w.batch + 1, ..w.clone() }).unwrap().per_gpu_bytes;
            let more_seq = estimate(&m, &Workload { seq: w.seq + 1, ..w.clone() }).unwrap().per_gpu_bytes;
            prop_assert!(more_batch >= base);
            prop_assert!(more_seq >= base);
        }

        #[test]
        fn sharding_never_increases_per_gpu_memory(m in any_preset(), w in workload()) {
            let w = Workload { gpus: 8, ..w };
            let mut last = u64::MAX;
            for zero in 0..=3 {
                let e = estimate(&m, &Workload { zero, ..w.clone() }).unwrap().per_gpu_bytes;
                prop_assert!(e <= last, "ZeRO-{} {} > {}", zero, e, last);
                last = e;
            }
            // FSDP keeps its root and one layer whole, still less than every parameter.
            let fsdp = Workload { zero: 3, fsdp: true, ..w.clone() };
            let two = estimate(&m, &Workload { zero: 2, ..w.clone() }).unwrap().per_gpu_bytes;
            let e = estimate(&m, &fsdp).unwrap().per_gpu_bytes;
            prop_assert!(e <= two, "FSDP {} > ZeRO-2 {}", e, two);
        }

        #[test]
        fn any_numbers_never_panic(
            params in any::<u64>(),
            batch in any::<u64>(),
            seq in any::<u64>(),
            gpus in any::<u32>(),
            tp in any::<u32>(),
        ) {
            let w = Workload { batch, seq, gpus, tp, mode: Mode::Train, ..Workload::default() };
            let _ = estimate(&ModelInput::Params(params), &w);
        }
    }

    #[test]
    fn stored_weights_replace_the_formula_in_inference_only() {
        let w = Workload {
            stored_weights: Some(4_920_000_000),
            gpus: 2,
            tp: 2,
            ..Workload::default()
        };
        let e = estimate(&preset("llama-3.1-8b"), &w).unwrap();
        assert_eq!(
            e.breakdown.weights, 2_460_000_000,
            "split by tensor parallelism"
        );
        let train = Workload {
            mode: Mode::Train,
            precision: Precision::Master,
            ..w
        };
        let formula = estimate(
            &preset("llama-3.1-8b"),
            &Workload {
                stored_weights: None,
                ..train.clone()
            },
        )
        .unwrap();
        assert_eq!(
            estimate(&preset("llama-3.1-8b"), &train).unwrap().breakdown,
            formula.breakdown
        );
    }

    /// Training loads the tower too: frozen with LoRA (its linears quantised with
    /// QLoRA, the rest upcast to fp32 by `prepare_model_for_kbit_training`), with
    /// adapters on its q/v projections; trained with a full fine-tune.
    #[test]
    fn training_loads_the_vision_tower() {
        let gemma = preset("gemma-3-4b");
        let ModelInput::Arch { arch, .. } = &gemma else {
            unreachable!()
        };
        let v = arch.vision.unwrap();
        let (tower, linear) = (v.params(arch.hidden), v.linear_params());
        // 27 layers × (4 × 1152² + 2 × 1152 × 4304).
        assert_eq!(linear, 27 * (4 * 1152 * 1152 + 2 * 1152 * 4304));
        let text_only = ModelInput::Arch {
            arch: Box::new(Architecture {
                vision: None,
                ..arch.as_ref().clone()
            }),
            total_params: None,
        };
        let both = |w: &Workload| {
            (
                estimate(&gemma, w).unwrap(),
                estimate(&text_only, w).unwrap(),
            )
        };
        // LoRA on q and v, rank 16: the tower frozen in bf16, 27 × 2 more adapters.
        let lora = Workload {
            mode: Mode::Train,
            finetune: Finetune::Lora,
            lora_targets: LoraTargets::QUERY_VALUE,
            precision: Precision::Amp,
            ..Workload::default()
        };
        let (with, without) = both(&lora);
        let adapters = 16 * 27 * 2 * (1152 + 1152);
        assert_eq!(
            with.breakdown.weights - without.breakdown.weights,
            tower * 2 + adapters * 4
        );
        // No activations of its own on text: only its adapters' gradients, absent at
        // the loss peak like every other gradient, come off that peak.
        assert_eq!(
            without.breakdown.activations - with.breakdown.activations,
            adapters * 4
        );
        // QLoRA: the tower's linears in NF4, the rest in 16 bits and then upcast to fp32.
        let qlora = Workload {
            finetune: Finetune::Qlora,
            kbit_fp32: true,
            ..lora.clone()
        };
        let (with, without) = both(&qlora);
        let nf4 = WeightFormat::Nf4 { double_quant: true };
        assert_eq!(
            with.breakdown.weights - without.breakdown.weights,
            nf4.linear_bytes(linear) + (tower - linear) * (2 + 2) + adapters * 4
        );
        // A full fine-tune trains it: AMP's 6 + 4 + 8 bytes per parameter.
        let full = Workload {
            mode: Mode::Train,
            finetune: Finetune::Full,
            precision: Precision::Amp,
            ..Workload::default()
        };
        let (with, without) = both(&full);
        let total =
            |e: &Estimate| e.breakdown.weights + e.breakdown.gradients + e.breakdown.optimizer;
        assert_eq!(total(&with) - total(&without), tower * (6 + 4 + 8));
    }

    /// Gemma 3's vision tower (423 060 336 parameters with the 27B's projector) is in
    /// the weights a PyTorch engine loads for inference.
    #[test]
    fn a_vision_tower_is_loaded_by_pytorch_inference_only() {
        let gemma = preset("gemma-3-27b");
        let weights = |w: &Workload| estimate(&gemma, w).unwrap().breakdown.weights;
        let text = weights(&Workload {
            weights: WeightFormat::parse("Q8_0").unwrap(),
            engine: Engine::Torch,
            ..Workload::default()
        });
        let ggml = Workload {
            weights: WeightFormat::parse("Q8_0").unwrap(),
            engine: Engine::Ggml,
            ..Workload::default()
        };
        let bf16 = Workload::default();
        let tower = 423_060_336 * 2;
        let ModelInput::Arch { arch, .. } = &gemma else {
            unreachable!()
        };
        assert_eq!(vision_bytes(Some(arch), &bf16), tower);
        assert_eq!(
            weights(&bf16),
            arch.param_count().total * 2 + tower,
            "bf16 inference"
        );
        let pc = arch.param_count();
        assert_eq!(
            weights(&ggml) + embeddings_off_gpu(&pc, Some(arch), ggml.weights),
            text - tower,
            "a GGUF leaves the tower to its mmproj file"
        );
        for w in [
            ggml,
            Workload {
                stored_weights: Some(54_900_000_000),
                ..Workload::default()
            },
            Workload {
                mode: Mode::Train,
                ..Workload::default()
            },
        ] {
            assert_eq!(vision_bytes(Some(arch), &w), 0, "{w:?}");
        }
        assert_eq!(vision_bytes(None, &bf16), 0);
    }
}
