//! LoRA adapters: rank × (in + out) for every adapted linear, as PEFT matches module
//! names (a vision tower's layers included).

use super::mul;
use crate::arch::{Architecture, Mlp};
use crate::workload::{Linear, LoraTargets};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::testing::*;

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
        let w = Workload::default()
            .mode(Mode::Train)
            .finetune(Finetune::Qlora)
            .grad_checkpointing(true)
            .loss(Loss::Fused)
            .seq(32_768);
        let on_gpu = training_activations(&a, &w, 0, &GradSync::default());
        let offloaded =
            training_activations(&a, &(w).checkpoint_offload(true), 0, &GradSync::default());
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
        let lora = Workload::default()
            .mode(Mode::Train)
            .finetune(Finetune::Lora)
            .precision(Precision::Amp);
        let qlora = lora.clone().finetune(Finetune::Qlora);
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
}
