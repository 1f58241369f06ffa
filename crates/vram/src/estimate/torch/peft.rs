//! PEFT's `prepare_model_for_kbit_training`: the fp32 copies of every parameter that
//! is not 4-bit in a QLoRA base.

use crate::arch::ParamCount;
use crate::estimate::mul;
use crate::quant::WeightFormat;
use crate::workload::{Finetune, Workload};

/// Whether PEFT's `prepare_model_for_kbit_training` ran on this QLoRA base
/// (`Workload::kbit_fp32`): it prepares bitsandbytes bases (NF4, or int8 and 16-bit
/// weights loaded through bitsandbytes) and skips GPTQ and the other quantisers
/// (peft/utils/other.py).
pub(crate) fn kbit_prepared(w: &Workload) -> bool {
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

#[cfg(test)]
mod tests {
    use crate::estimate::testing::*;

    /// PEFT's `prepare_model_for_kbit_training` casts what is not 4-bit to fp32: two
    /// more bytes for each of Llama 3.1 8B's embeddings, head and norms, fp32 layer
    /// inputs under checkpointing, and a 16-bit copy of the frozen head under the loss.
    /// A GPTQ base is left as it is.
    #[test]
    fn peft_kbit_preparation_upcasts_the_rest_to_fp32() {
        let m = preset("llama-3.1-8b");
        let a = model("llama-3.1-8b").unwrap().arch.clone();
        let pc = a.param_count();
        let plain = Workload::default()
            .mode(Mode::Train)
            .finetune(Finetune::Qlora)
            .weights(WeightFormat::Nf4 { double_quant: true })
            .grad_checkpointing(true)
            .batch(1)
            .seq(4096);
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
        let fused = prepared.clone().loss(Loss::Fused);
        assert_eq!(head_cast(&a, &fused), 0);
        // GPTQ: nothing to cast.
        let gptq = WeightFormat::GroupQuant {
            bits: 4,
            group: 128,
        };
        let g0 = estimate(&m, &plain.clone().weights(gptq)).unwrap();
        let g1 = estimate(&m, &prepared.clone().weights(gptq)).unwrap();
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
}
