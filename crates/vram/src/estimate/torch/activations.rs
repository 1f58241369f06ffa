//! Activations under PyTorch: the tensors autograd saves per layer (Korthikanti et al.
//! 2022, adapted to GQA, gated MLPs, fused attention kernels, frozen projections,
//! autocast, PEFT's input casts and Unsloth's fused kernels), the loss's peak over the
//! logits (whole, chunked or fused), the training peak around them, and a prefill's
//! transient tensors (AutoAWQ's eager fused attention included).

use super::bnb::{bnb_base, bnb_dequant_bytes, bnb_int8, bnb_int8_scratch};
use super::parallel::{GradSync, fsdp_unsharded};
use super::peft::kbit_prepared;
use crate::arch::{Architecture, Mlp, Norm};
use crate::estimate::mul;
use crate::workload::{Attention, Engine, Finetune, Linear, Loss, Mode, Precision, Workload};

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
    let inter = u128::from(a.token_intermediate()) / tp;
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
    let inter = u128::from(a.token_intermediate()) / tp;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::testing::*;

    /// AutoAWQ 0.1.x's fused modules (read in awq/modules/fused/attn.py and cache.py at
    /// v0.1.6): the cache is allocated for `max_seq_len` tokens of the whole batch, and
    /// the prefill's eager attention keeps fp16 scores, their fp32 copy and the fp32
    /// softmax alive together (10 bytes per score, 6 in transformers' eager path).
    #[test]
    fn autoawq_fused_modules_allocate_their_cache_and_attend_eagerly() {
        let a = model("mistral-7b-v0.3").unwrap().arch.clone();
        let w = |engine, attention, new_tokens| {
            Workload::default()
                .seq(2048)
                .new_tokens(new_tokens)
                .batch(1)
                .engine(engine)
                .attention(attention)
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
    fn korthikanti_formula_for_gpt_style_layers() {
        // A GPT-style layer (plain MLP with 4h, MHA, dropout, eager) in 16-bit:
        // sbh(34 + 5as/h) bytes.
        let a = model("gpt2").unwrap().arch.clone();
        let w = Workload::default()
            .mode(Mode::Train)
            .weights(WeightFormat::Plain { dtype: Dtype::Bf16 })
            .batch(2)
            .seq(1024)
            .attention(Attention::Eager);
        let (s, b, h, heads) = (1024u64, 2u64, 768u64, 12u64);
        let want = s * b * h * 34 + 5 * heads * s * s * b;
        assert_eq!(layer_activations(&a, &w), want);
        // FlashAttention removes the s² term, keeping the fp32 log-sum-exp; its output is
        // the output projection's input, counted once.
        let flash = w.clone().attention(Attention::Flash);
        assert_eq!(
            layer_activations(&a, &flash),
            s * b * h * 34 + 4 * heads * s * b
        );
        // SDPA's output layout needs a transposed copy for the projection: 2sbh more.
        let sdpa = (w).attention(Attention::Sdpa);
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
        let full = Workload::default().mode(Mode::Train).seq(2048);
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
        let lora = full
            .clone()
            .finetune(Finetune::Lora)
            .lora_targets(LoraTargets::QUERY_VALUE)
            .precision(Precision::Amp);
        let lora_rest = 2 * sb * (q + 2 * kv + q) + lse + 2 * sb * 3 * inter + 2 * 4 * sb * h;
        assert_eq!(layer_activations(&a, &lora), 2 * sb * 2 * h + lora_rest);
        // Adapters in the compute dtype read the input itself: one tensor for both.
        // So do PEFT's bitsandbytes layers under autocast, which leave the cast to it,
        // unless PEFT's k-bit preparation made the residual stream fp32.
        let pure = lora.clone().precision(Precision::Pure);
        assert_eq!(layer_activations(&a, &pure), 2 * sb * h + lora_rest);
        let nf4 = lora
            .clone()
            .finetune(Finetune::Qlora)
            .weights(WeightFormat::Nf4 { double_quant: true });
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
        let amp = full
            .clone()
            .weights(WeightFormat::Plain { dtype: Dtype::Fp32 })
            .precision(Precision::Amp);
        assert_eq!(
            layer_activations(&a, &amp) - layer_activations(&a, &full),
            2 * sb * (2 * h + h) + 2 * 2 * sb * h
        );
    }

    /// transformers upcasts the whole logits; torchtune's chunked output upcasts one
    /// chunk at a time; fused losses never hold more than one chunk of tokens.
    #[test]
    fn the_loss_peak_follows_how_the_loss_is_computed() {
        let a = model("llama-3.1-8b").unwrap().arch.clone();
        let w = Workload::default().mode(Mode::Train).batch(2).seq(2048);
        let elements = 2 * 2048 * 128_256u64;
        assert_eq!(loss_peak(&a, &w), elements * 12);
        let chunked = w.clone().loss(Loss::ChunkedOutput { chunks: 8 });
        assert_eq!(loss_peak(&a, &chunked), elements * 2 + elements / 8 * 12);
        let fused = w.clone().loss(Loss::Fused);
        assert_eq!(loss_peak(&a, &fused), FUSED_CHUNK_TOKENS * 128_256 * 14);
        // An encoder for classification has no vocabulary-sized output.
        let bert = model("bert-base-uncased").unwrap().arch.clone();
        assert_eq!(loss_peak(&bert, &w), 0);
    }

    #[test]
    fn pipeline_parallel_keeps_first_stage_activations() {
        let m = preset("llama-3.1-8b");
        let w = Workload::default().mode(Mode::Train).seq(2048).gpus(4);
        let one = estimate(&m, &w).unwrap();
        let pp = estimate(&m, &(w).pp(4)).unwrap();
        assert_eq!(pp.breakdown.activations, one.breakdown.activations);
        assert_eq!(pp.breakdown.weights, one.breakdown.weights.div_ceil(4));
    }
}
