//! Weight bytes: a format's bytes per parameter (plain dtypes, FP8 linears, bitsandbytes,
//! GPTQ/AWQ groups, GGUF mixes tensor by tensor as llama.cpp's quantizer picks their
//! types), what llama.cpp keeps of the embeddings in RAM, and a checkpoint's vision
//! tower as PyTorch engines load it.

use super::mul;
use crate::arch::{Architecture, ParamCount};
use crate::dtype::Dtype;
use crate::quant::{GgufType, WeightFormat, mix_of, use_more_bits};
use crate::workload::{Engine, Mode, Workload};

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
        // MXFP4 checkpoints quantise a MoE's routed experts only (gpt-oss's
        // `modules_to_not_convert`: attention, routers, embeddings, head); the rest is
        // 16-bit in the checkpoint and Q8_0 in llama.cpp's MXFP4_MOE files, with norms
        // and biases in F32 there.
        (WeightFormat::Mxfp4, Some(_)) if pc.routed_experts > 0 => format
            .linear_bytes(pc.routed_experts)
            .saturating_add(sixteen.bytes_for(pc.total.saturating_sub(pc.routed_experts))),
        (WeightFormat::Mxfp4Moe, Some(_)) => {
            let matrices = pc
                .layer_linear
                .saturating_add(pc.embeddings)
                .saturating_add(pc.lm_head);
            let rest = pc.total.saturating_sub(matrices);
            let experts = pc.routed_experts.min(matrices);
            format
                .linear_bytes(experts)
                .saturating_add(GgufType::Q8_0.bytes_for(matrices - experts))
                .saturating_add(mul(&[4, rest]))
        }
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
            WeightFormat::Mxfp4Moe => GgufType::Q8_0.bytes_for(pc.embeddings),
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

/// A checkpoint's vision tower in training: its parameters, and those of them in
/// `nn.Linear` weights. `AutoModelForCausalLM` loads it for training as for inference
/// (see [`vision_bytes`]); with LoRA and QLoRA PEFT freezes it with the rest of the
/// base (bitsandbytes quantising its linears like the language model's), and a full
/// fine-tune trains it unless the script freezes it. A text-only batch never runs it:
/// no activations.
pub(crate) fn tower_params(arch: Option<&Architecture>) -> (u64, u64) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::testing::*;

    /// llama.cpp stores each tensor in its mix's type for the width of its rows, and a
    /// tied table in the output's type, on the CPU for the input and again on the GPU
    /// for the output. Two load logs, to the hundredth of a MiB.
    #[test]
    fn gguf_tensors_take_the_type_their_rows_allow() {
        let gguf = |model: &ModelInput, mix: &str, seq| {
            estimate(
                model,
                &Workload::default()
                    .seq(seq)
                    .engine(crate::workload::Engine::Ggml)
                    .weights(WeightFormat::parse(mix).unwrap()),
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

    /// gpt-oss as its runtimes hold it: vLLM and transformers keep the checkpoint's
    /// MXFP4 experts (17 bytes per 32 weights) and the rest in bf16; llama.cpp's
    /// MXFP4_MOE file keeps the experts and stores the other matrices in Q8_0, with
    /// the input table on the CPU. gpt-oss-20b on an Apple M5 (llama.cpp b7217,
    /// ggml-org/gpt-oss-20b-GGUF): "CPU_Mapped model buffer size = 586.82 MiB" is the
    /// Q8_0 table, and "Metal_Mapped model buffer size = 11536.18 MiB" the file's
    /// whole tensor data, which Metal maps at once on unified memory (the file is
    /// "11.27 GiB (4.63 BPW)" in the RTX 3070 log of the same conversion).
    #[test]
    fn mxfp4_checkpoints_keep_their_experts_in_four_bits() {
        let oss = preset("gpt-oss-20b");
        let ModelInput::Arch { arch, .. } = &oss else {
            unreachable!()
        };
        assert_eq!(arch.checkpoint, Some(WeightFormat::Mxfp4));
        let pc = arch.param_count();
        // 24 layers × 32 experts × 3 matrices of 2880 × 2880.
        assert_eq!(pc.routed_experts, 24 * 32 * 3 * 2880 * 2880);
        let held = |format: &str, engine| {
            estimate(
                &oss,
                &Workload::default()
                    .seq(4096)
                    .engine(engine)
                    .weights(WeightFormat::parse(format).unwrap()),
            )
            .unwrap()
        };
        let torch = held("mxfp4", crate::workload::Engine::Torch);
        assert_eq!(
            torch.breakdown.weights,
            pc.routed_experts * 17 / 32 + 2 * (pc.total - pc.routed_experts)
        );
        let bf16 = held("bf16", crate::workload::Engine::Torch);
        assert_eq!(bf16.breakdown.weights, 2 * pc.total);
        let mib = |bytes: u64| bytes as f64 / f64::from(1 << 20);
        let gguf = held("MXFP4_MOE", crate::workload::Engine::Ggml);
        assert!((mib(gguf.host_weights_bytes) - 586.82).abs() < 0.01);
        let file = mib(gguf.breakdown.weights + gguf.host_weights_bytes);
        assert!((file - 11536.18).abs() / 11536.18 < 0.005, "{file}");
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
        let lora = Workload::default()
            .mode(Mode::Train)
            .finetune(Finetune::Lora)
            .lora_targets(LoraTargets::QUERY_VALUE)
            .precision(Precision::Amp);
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
        let full = Workload::default()
            .mode(Mode::Train)
            .finetune(Finetune::Full)
            .precision(Precision::Amp);
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
        let text = weights(
            &Workload::default()
                .weights(WeightFormat::parse("Q8_0").unwrap())
                .engine(Engine::Torch),
        );
        let ggml = Workload::default()
            .weights(WeightFormat::parse("Q8_0").unwrap())
            .engine(Engine::Ggml);
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
            Workload::default().stored_weights(Some(54_900_000_000)),
            Workload::default().mode(Mode::Train),
        ] {
            assert_eq!(vision_bytes(Some(arch), &w), 0, "{w:?}");
        }
        assert_eq!(vision_bytes(None, &bf16), 0);
    }
}
