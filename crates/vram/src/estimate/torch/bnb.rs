//! bitsandbytes at run time: the 16-bit copy of the 4-bit (or, in backward, 8-bit)
//! linear being multiplied, LLM.int8's quantized input and int32 product, and the
//! inputs its 8-bit layers keep outside checkpointing's hooks.

use crate::arch::Architecture;
use crate::dtype::Dtype;
use crate::estimate::mul;
use crate::quant::WeightFormat;
use crate::workload::{Engine, Finetune, Mode, Workload};

/// Whether the frozen base is a bitsandbytes one (NF4, or LLM.int8), whose PEFT
/// layers leave the input to autocast.
pub(crate) fn bnb_base(w: &Workload) -> bool {
    match w.weights {
        WeightFormat::Nf4 { .. } => true,
        WeightFormat::Plain { .. } => w.finetune == Finetune::Qlora || bnb_int8(w),
        _ => false,
    }
}

/// Whether the base linears are bitsandbytes' LLM.int8 (`load_in_8bit`: `Linear8bitLt`,
/// multiplied through `MatMul8bitLt`), the format `Dtype::Int8` stands for on PyTorch
/// engines. A QLoRA over plain weights loads its base in NF4 instead (`model_states`).
pub(crate) fn bnb_int8(w: &Workload) -> bool {
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
    let inter = u128::from(a.widest_intermediate()) / tp;
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
    let inter = a.token_intermediate();
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
    let inter = a.widest_intermediate();
    mul(&[
        a.q_width().max(inter),
        u64::from(a.hidden),
        w.compute_dtype().bytes_for(1),
    ]) / u64::from(w.tp.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::testing::*;

    /// bitsandbytes multiplies by a 16-bit copy of each 4-bit linear, one at a time:
    /// Llama 3.1 8B's widest is an MLP matrix, 14 336 × 4096.
    #[test]
    fn bnb_dequantizes_one_linear_at_a_time() {
        let a = model("llama-3.1-8b").unwrap().arch.clone();
        let nf4 = Workload::default()
            .weights(WeightFormat::Nf4 { double_quant: true })
            .seq(2048);
        assert_eq!(bnb_dequant_bytes(&a, &nf4), 14_336 * 4096 * 2);
        let bf16 = nf4
            .clone()
            .weights(WeightFormat::Plain { dtype: Dtype::Bf16 });
        assert_eq!(bnb_dequant_bytes(&a, &bf16), 0);
        // In a prefill, not for one token (bitsandbytes' gemv kernel reads 4 bits).
        let prefill = |w: &Workload| prefill_activations(&a, w);
        assert_eq!(
            prefill(&nf4) - prefill(&nf4.clone().weights(bf16.weights)),
            14_336 * 4096 * 2
        );
        let one = nf4.clone().seq(1);
        assert_eq!(prefill(&one), prefill(&one.clone().weights(bf16.weights)));
        // And in training, inside a layer's backward.
        let train = nf4
            .clone()
            .mode(Mode::Train)
            .finetune(Finetune::Qlora)
            .loss(Loss::Fused)
            .seq(32_768);
        let sync = GradSync::default();
        let gptq = train.clone().weights(WeightFormat::GroupQuant {
            bits: 4,
            group: 128,
        });
        // GPTQ's kernels read the packed weight; the residual stream is fp32 only after
        // PEFT's k-bit preparation of a bitsandbytes base.
        let grow =
            training_activations(&a, &train, 0, &sync) - training_activations(&a, &gptq, 0, &sync);
        assert!(grow >= 14_336 * 4096 * 2, "{grow}");
        // QLoRA over plain weights still loads an NF4 base.
        let plain = train.clone().weights(bf16.weights);
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
        let int8 = Workload::default()
            .weights(WeightFormat::Plain { dtype: Dtype::Int8 })
            .seq(8192);
        let bf16 = int8
            .clone()
            .weights(WeightFormat::Plain { dtype: Dtype::Bf16 });
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
        let lora = int8
            .clone()
            .mode(Mode::Train)
            .finetune(Finetune::Lora)
            .lora_targets(LoraTargets::QUERY_VALUE)
            .attention(Attention::Flash)
            .loss(Loss::Fused)
            .grad_checkpointing(false)
            .seq(4096);
        assert_eq!(bnb_dequant_bytes(&a, &lora), 14_336 * 4096 * 2);
        // The frozen o, gate/up and down projections keep their inputs: the attention
        // output (FlashAttention's own, already saved), the MLP's input and the
        // product.
        let lora_bf16 = lora.clone().weights(bf16.weights);
        assert_eq!(
            layer_activations(&a, &lora) - layer_activations(&a, &lora_bf16),
            2 * 4096 * (4096 + 14_336)
        );
        // Non-reentrant checkpointing would leave every layer's four inputs alive.
        assert_eq!(bnb_int8_unhooked_inputs(&a, &lora), 0);
        let checkpointed = lora.clone().grad_checkpointing(true);
        assert_eq!(
            bnb_int8_unhooked_inputs(&a, &checkpointed),
            32 * 4096 * (4096 + 4096 + 4096 + 14_336) * 2
        );
        // A QLoRA over int8 weights loads NF4 and behaves like one.
        let qlora = lora.clone().finetune(Finetune::Qlora);
        assert_eq!(bnb_int8_scratch(&a, &qlora), 0);
        assert_eq!(
            layer_activations(&a, &qlora),
            layer_activations(&a, &qlora.clone().weights(bf16.weights))
        );
    }
}
