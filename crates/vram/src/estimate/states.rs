//! Model states before sharding: weights, gradients and optimizer states by precision
//! mode (AMP over fp32 weights, 16-bit with an fp32 master, pure) and optimizer
//! (AdamW, bitsandbytes' 8-bit and paged ones, Adafactor, SGD), for a full fine-tune,
//! LoRA and QLoRA. What ZeRO and FSDP shard.

use super::lora::lora_params;
use super::torch::peft::{kbit_prepared, kbit_upcast_bytes};
use super::weights::{embeddings_off_gpu, tower_params, vision_bytes, weight_bytes};
use super::{Breakdown, EstimateError, mul};
use crate::arch::{Architecture, ParamCount};
use crate::quant::WeightFormat;
use crate::workload::{Engine, Finetune, Mode, Optimizer, Precision, Workload};

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

/// Weights, gradients and optimizer states of the whole model (before sharding), and
/// the number of trainable parameters.
pub(crate) fn model_states(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::testing::*;

    #[test]
    fn full_training_costs_16_bytes_per_parameter() {
        // fp32 AdamW: 4 (weights) + 4 (grads) + 8 (moments).
        let w = Workload::default()
            .mode(Mode::Train)
            .weights(WeightFormat::Plain { dtype: Dtype::Fp32 });
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
            let w = Workload::default()
                .mode(Mode::Train)
                .weights(WeightFormat::Plain { dtype: Dtype::Bf16 })
                .precision(precision);
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

    /// Paging moves no byte: the 8-bit paged AdamW holds what the 8-bit one does, and
    /// the 32-bit paged AdamW holds fp32 moments, 8 bytes per trainable parameter, even
    /// where PyTorch's AdamW keeps them in the parameters' bf16.
    #[test]
    fn paged_optimizers_count_their_states() {
        let m = preset("llama-3.1-8b");
        let full = |optimizer| {
            Workload::default()
                .mode(Mode::Train)
                .finetune(Finetune::Full)
                .precision(Precision::Pure)
                .optimizer(optimizer)
        };
        let states = |w: &Workload| estimate(&m, w).unwrap().breakdown.optimizer;
        let trainable = estimate(&m, &full(Optimizer::Adamw))
            .unwrap()
            .trainable_params;
        assert_eq!(states(&full(Optimizer::Adamw)), 4 * trainable);
        assert_eq!(states(&full(Optimizer::PagedAdamw)), 8 * trainable);
        let w = Workload::default()
            .mode(Mode::Train)
            .finetune(Finetune::Qlora)
            .optimizer(Optimizer::Adamw8bit);
        let paged = w.clone().optimizer(Optimizer::PagedAdamw8bit);
        assert_eq!(
            estimate(&m, &w).unwrap().breakdown,
            estimate(&m, &paged).unwrap().breakdown
        );
    }
}
