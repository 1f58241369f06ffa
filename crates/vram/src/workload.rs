//! What the user wants to run: mode, precision, optimiser, shapes and parallelism.

use serde::{Deserialize, Serialize};

use crate::dtype::Dtype;
use crate::quant::WeightFormat;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Inference,
    Train,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Finetune {
    Full,
    Lora,
    Qlora,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Optimizer {
    /// Two fp32 moments per parameter (bf16 when training purely in bf16).
    Adamw,
    /// bitsandbytes 8-bit AdamW: two int8 moments plus one fp32 absmax per 2048.
    Adamw8bit,
    /// Factored second moment (row and column vectors per matrix), no first moment.
    Adafactor,
    Sgd,
    SgdMomentum,
    /// bitsandbytes `PagedAdamW` (32-bit states in CUDA unified memory): the same
    /// bytes as AdamW, but the driver evicts them to CPU RAM under pressure instead of
    /// failing, at the cost of PCIe traffic.
    PagedAdamw,
    /// bitsandbytes `PagedAdamW8bit`: AdamW 8-bit states in unified memory.
    PagedAdamw8bit,
}

impl Optimizer {
    /// Whether the states live in unified (pageable) memory.
    pub fn is_paged(self) -> bool {
        matches!(self, Optimizer::PagedAdamw | Optimizer::PagedAdamw8bit)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Attention {
    /// Materialises the seq × seq score matrix per head.
    Eager,
    /// PyTorch scaled_dot_product_attention (memory-efficient / flash kernels).
    Sdpa,
    /// FlashAttention-2.
    Flash,
}

/// Storage of the KV cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KvDtype {
    Fp16,
    Fp8,
    Int8,
    Int4,
}

impl KvDtype {
    /// Bits per cached element.
    pub fn bits(self) -> u64 {
        match self {
            KvDtype::Fp16 => 16,
            KvDtype::Fp8 | KvDtype::Int8 => 8,
            KvDtype::Int4 => 4,
        }
    }
}

/// A whole workload. [`Workload::default`] is bf16 inference of one sequence of 4096
/// tokens on one GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    pub mode: Mode,
    pub finetune: Finetune,
    /// Storage of the (base) weights.
    pub weights: WeightFormat,
    /// Keep an fp32 master copy of trainable weights (mixed precision).
    pub mixed_precision: bool,
    pub optimizer: Optimizer,
    pub batch: u64,
    /// Prompt (or training sequence) length in tokens.
    pub seq: u64,
    /// Tokens generated after the prompt (inference).
    pub new_tokens: u64,
    pub grad_checkpointing: bool,
    pub attention: Attention,
    pub lora_rank: u32,
    pub kv_dtype: KvDtype,
    pub gpus: u32,
    /// ZeRO stage 0–3 (data parallel sharding).
    pub zero: u8,
    /// FSDP full sharding (equivalent to ZeRO-3 for memory).
    pub fsdp: bool,
    /// Tensor-parallel degree.
    pub tp: u32,
    /// Pipeline-parallel degree.
    pub pp: u32,
    /// ZeRO-Offload: optimizer states (and fp32 master weights) live in CPU memory.
    pub cpu_offload: bool,
    /// Overrides the CUDA context estimate, in bytes.
    pub cuda_context: Option<u64>,
    /// Exact bytes of the weights as a file stores them (a safetensors or GGUF
    /// header): in inference they replace the weight format's formula.
    #[serde(default)]
    pub stored_weights: Option<u64>,
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            mode: Mode::Inference,
            finetune: Finetune::Full,
            weights: WeightFormat::Plain { dtype: Dtype::Bf16 },
            mixed_precision: false,
            optimizer: Optimizer::Adamw,
            batch: 1,
            seq: 4096,
            new_tokens: 0,
            grad_checkpointing: false,
            attention: Attention::Sdpa,
            lora_rank: 16,
            kv_dtype: KvDtype::Fp16,
            gpus: 1,
            zero: 0,
            fsdp: false,
            tp: 1,
            pp: 1,
            cpu_offload: false,
            cuda_context: None,
            stored_weights: None,
        }
    }
}

impl Workload {
    /// What the site's estimator and widget mean by a task: inference (`None`), or
    /// training with a fine-tuning method, a full fine-tune in mixed precision. On
    /// `gpus` GPUs, inference splits the model with tensor parallelism (vLLM's
    /// `--tensor-parallel-size`) and training shards with ZeRO stage `zero`.
    pub fn for_task(task: Option<Finetune>, gpus: u32, zero: u8) -> Workload {
        match task {
            None => Workload {
                gpus,
                tp: gpus,
                ..Workload::default()
            },
            Some(finetune) => Workload {
                mode: Mode::Train,
                finetune,
                mixed_precision: finetune == Finetune::Full,
                gpus,
                zero: zero.min(3),
                ..Workload::default()
            },
        }
    }

    /// The dtype activations and gradients are computed in: fp32 only when the weights
    /// are fp32 and no mixed precision is asked for; 16-bit otherwise.
    pub fn compute_dtype(&self) -> Dtype {
        match self.weights {
            WeightFormat::Plain { dtype: Dtype::Fp32 } if !self.mixed_precision => Dtype::Fp32,
            WeightFormat::Plain { dtype: Dtype::Fp16 } => Dtype::Fp16,
            _ => Dtype::Bf16,
        }
    }

    /// The sharding factor for parameters, gradients and optimizer states.
    pub fn shards(&self) -> (u64, u64, u64) {
        let split = u64::from(self.tp.max(1)) * u64::from(self.pp.max(1));
        let dp = u64::from(self.gpus.max(1)) / split;
        let dp = dp.max(1);
        let stage = if self.fsdp { 3 } else { self.zero.min(3) };
        let params = if stage >= 3 { dp } else { 1 };
        let grads = if stage >= 2 { dp } else { 1 };
        let optim = if stage >= 1 { dp } else { 1 };
        (params, grads, optim)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_split_gpus_the_way_their_mode_does() {
        let infer = Workload::for_task(None, 4, 3);
        assert_eq!(
            (infer.mode, infer.tp, infer.zero, infer.mixed_precision),
            (Mode::Inference, 4, 0, false)
        );
        let full = Workload::for_task(Some(Finetune::Full), 4, 9);
        assert_eq!(
            (full.mode, full.tp, full.zero, full.mixed_precision),
            (Mode::Train, 1, 3, true)
        );
        let lora = Workload::for_task(Some(Finetune::Lora), 1, 0);
        assert_eq!(
            (lora.finetune, lora.mixed_precision),
            (Finetune::Lora, false)
        );
    }
}
