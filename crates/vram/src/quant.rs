//! Weight formats beyond plain dtypes: bitsandbytes, GPTQ/AWQ, GGUF block types and
//! EXL2, each with its exact storage cost per weight.
//!
//! Block formats store a small header per block of weights (scales, minimums), so a
//! "4-bit" format costs more than 4 bits: GGUF Q4_0 packs 32 weights in 18 bytes
//! (4.5 bits), Q4_K packs 256 in 144 (4.5 bits), GPTQ with group size 128 adds an fp16
//! scale and a packed zero per group. Costs are exact fractions (bytes, weights).

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::dtype::Dtype;
use crate::units::{ParseError, clip};

/// A GGUF tensor type with its block layout: (bytes per block, weights per block),
/// from llama.cpp's `ggml_type_traits` (ggml/src/ggml.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GgufType {
    F32,
    F16,
    Bf16,
    Q8_0,
    Q6K,
    Q5_0,
    Q5_1,
    Q5K,
    Q4_0,
    Q4_1,
    Q4K,
    Iq4Xs,
    Iq4Nl,
    Q3K,
    Iq3S,
    Iq3Xxs,
    Q2K,
    Iq2S,
    Iq2Xs,
    Iq2Xxs,
    Iq1S,
    /// OCP MXFP4 (gpt-oss's experts): 16 bytes of e2m1 pairs and an e8m0 scale per 32.
    Mxfp4,
}

impl GgufType {
    pub const ALL: [GgufType; 22] = [
        GgufType::F32,
        GgufType::F16,
        GgufType::Bf16,
        GgufType::Q8_0,
        GgufType::Q6K,
        GgufType::Q5_0,
        GgufType::Q5_1,
        GgufType::Q5K,
        GgufType::Q4_0,
        GgufType::Q4_1,
        GgufType::Q4K,
        GgufType::Iq4Xs,
        GgufType::Iq4Nl,
        GgufType::Q3K,
        GgufType::Iq3S,
        GgufType::Iq3Xxs,
        GgufType::Q2K,
        GgufType::Iq2S,
        GgufType::Iq2Xs,
        GgufType::Iq2Xxs,
        GgufType::Iq1S,
        GgufType::Mxfp4,
    ];

    /// (bytes per block, weights per block).
    pub fn block(self) -> (u64, u64) {
        match self {
            GgufType::F32 => (4, 1),
            GgufType::F16 | GgufType::Bf16 => (2, 1),
            GgufType::Q8_0 => (34, 32),
            GgufType::Q6K => (210, 256),
            GgufType::Q5_0 => (22, 32),
            GgufType::Q5_1 => (24, 32),
            GgufType::Q5K => (176, 256),
            GgufType::Q4_0 => (18, 32),
            GgufType::Q4_1 => (20, 32),
            GgufType::Q4K => (144, 256),
            GgufType::Iq4Xs => (136, 256),
            GgufType::Iq4Nl => (18, 32),
            GgufType::Q3K => (110, 256),
            GgufType::Iq3S => (110, 256),
            GgufType::Iq3Xxs => (98, 256),
            GgufType::Q2K => (84, 256),
            GgufType::Iq2S => (82, 256),
            GgufType::Iq2Xs => (74, 256),
            GgufType::Iq2Xxs => (66, 256),
            GgufType::Iq1S => (50, 256),
            GgufType::Mxfp4 => (17, 32),
        }
    }

    pub fn id(self) -> &'static str {
        match self {
            GgufType::F32 => "F32",
            GgufType::F16 => "F16",
            GgufType::Bf16 => "BF16",
            GgufType::Q8_0 => "Q8_0",
            GgufType::Q6K => "Q6_K",
            GgufType::Q5_0 => "Q5_0",
            GgufType::Q5_1 => "Q5_1",
            GgufType::Q5K => "Q5_K",
            GgufType::Q4_0 => "Q4_0",
            GgufType::Q4_1 => "Q4_1",
            GgufType::Q4K => "Q4_K",
            GgufType::Iq4Xs => "IQ4_XS",
            GgufType::Iq4Nl => "IQ4_NL",
            GgufType::Q3K => "Q3_K",
            GgufType::Iq3S => "IQ3_S",
            GgufType::Iq3Xxs => "IQ3_XXS",
            GgufType::Q2K => "Q2_K",
            GgufType::Iq2S => "IQ2_S",
            GgufType::Iq2Xs => "IQ2_XS",
            GgufType::Iq2Xxs => "IQ2_XXS",
            GgufType::Iq1S => "IQ1_S",
            GgufType::Mxfp4 => "MXFP4",
        }
    }

    /// Bytes for `n` weights, whole blocks (a tensor's rows are padded to blocks).
    pub fn bytes_for(self, n: u64) -> u64 {
        let (bytes, per) = self.block();
        n.div_ceil(per).saturating_mul(bytes)
    }

    /// The type `llama-quantize` stores a tensor in when its rows are `ncols` wide: a
    /// block must not straddle two rows, so a 256-weight type falls back to a 32-weight
    /// one when `ncols` is not a multiple of 256 (Q4_K → Q5_0, Q5_K → Q5_1, Q6_K →
    /// Q8_0, Q2_K and Q3_K → Q4_0, the IQ types → IQ4_NL), and to F16 when even that
    /// does not divide it (`tensor_type_fallback` in src/llama-quant.cpp). Qwen2.5-0.5B
    /// (896 wide) and Gemma 3 1B (1152) store most of their Q4_K_M layers as Q5_0.
    pub fn fallback(self, ncols: u64) -> GgufType {
        let (_, per) = self.block();
        if per <= 1 || ncols.is_multiple_of(per) {
            return self;
        }
        let legacy = match self {
            GgufType::Q4K => GgufType::Q5_0,
            GgufType::Q5K => GgufType::Q5_1,
            GgufType::Q6K => GgufType::Q8_0,
            GgufType::Q2K | GgufType::Q3K => GgufType::Q4_0,
            GgufType::Iq4Xs
            | GgufType::Iq3S
            | GgufType::Iq3Xxs
            | GgufType::Iq2S
            | GgufType::Iq2Xs
            | GgufType::Iq2Xxs
            | GgufType::Iq1S => GgufType::Iq4Nl,
            other => other,
        };
        if ncols.is_multiple_of(legacy.block().1) {
            legacy
        } else {
            GgufType::F16
        }
    }
}

/// The "file type" mixes `llama-quantize` produces: a base type for most tensors and
/// more bits for the tensors quantisation hurts most. Modelled after llama.cpp's
/// `llama_tensor_get_type`: `output.weight` gets `output`; `attn_v` and `ffn_down` get
/// `boosted` on the layers `use_more_bits` picks (the first and last eighth of the
/// layers and every third layer between, about 42% of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GgufMix {
    pub name: &'static str,
    pub base: GgufType,
    pub boosted: GgufType,
    pub output: GgufType,
}

pub const GGUF_MIXES: [GgufMix; 9] = [
    GgufMix {
        name: "Q8_0",
        base: GgufType::Q8_0,
        boosted: GgufType::Q8_0,
        output: GgufType::Q8_0,
    },
    GgufMix {
        name: "Q6_K",
        base: GgufType::Q6K,
        boosted: GgufType::Q6K,
        output: GgufType::Q6K,
    },
    GgufMix {
        name: "Q5_K_M",
        base: GgufType::Q5K,
        boosted: GgufType::Q6K,
        output: GgufType::Q6K,
    },
    GgufMix {
        name: "Q5_K_S",
        base: GgufType::Q5K,
        boosted: GgufType::Q5K,
        output: GgufType::Q6K,
    },
    GgufMix {
        name: "Q4_K_M",
        base: GgufType::Q4K,
        boosted: GgufType::Q6K,
        output: GgufType::Q6K,
    },
    GgufMix {
        name: "Q4_K_S",
        base: GgufType::Q4K,
        boosted: GgufType::Q5K,
        output: GgufType::Q6K,
    },
    GgufMix {
        name: "Q3_K_M",
        base: GgufType::Q3K,
        boosted: GgufType::Q4K,
        output: GgufType::Q6K,
    },
    GgufMix {
        name: "Q2_K",
        base: GgufType::Q2K,
        boosted: GgufType::Q3K,
        output: GgufType::Q6K,
    },
    // Ollama's default tags until 2024: `use_more_bits` boosts only the K-quant
    // mixes, and `output.weight` goes to Q6_K as for every mix but Q8_0.
    GgufMix {
        name: "Q4_0",
        base: GgufType::Q4_0,
        boosted: GgufType::Q4_0,
        output: GgufType::Q6K,
    },
];

impl GgufMix {
    /// The mix's type for most tensors, for rows `ncols` wide ([`GgufType::fallback`]).
    pub fn base_for(self, ncols: u64) -> GgufType {
        self.base.fallback(ncols)
    }

    /// The type of `attn_v` and `ffn_down` on the layers `use_more_bits` picks.
    pub fn boosted_for(self, ncols: u64) -> GgufType {
        self.boosted.fallback(ncols)
    }

    /// The type of `output.weight`, and of `token_embd.weight` when the model has no
    /// separate output (tied embeddings: "we quantize the token embeddings with the
    /// quantization of the output tensor", `llama_tensor_get_type_impl`): Q6_K for the
    /// K mixes and Q4_0, Q8_0 for Q8_0 and whenever the rows are not a multiple of 256.
    pub fn output_for(self, ncols: u64) -> GgufType {
        self.output.fallback(ncols)
    }
}

/// llama.cpp's `use_more_bits(i, n)`.
pub fn use_more_bits(layer: u32, layers: u32) -> bool {
    let eighth = layers / 8;
    layer < eighth || layer >= 7 * layers / 8 || (layer - eighth) % 3 == 2
}

/// How the weights are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum WeightFormat {
    /// A plain dtype for every tensor.
    Plain { dtype: Dtype },
    /// bitsandbytes NF4 (QLoRA): 4-bit weights, one absmax per 64; with double
    /// quantisation the absmaxes are 8-bit with an fp32 constant per 256 of them.
    Nf4 { double_quant: bool },
    /// GPTQ or AWQ: `bits`-bit weights, an fp16 scale and a `bits`-bit zero per group.
    GroupQuant { bits: u8, group: u32 },
    /// A GGUF mix such as Q4_K_M (index into [`GGUF_MIXES`]).
    Gguf { mix: u8 },
    /// EXL2 average bits per weight, in hundredths (465 = 4.65 bpw).
    Exl2 { centibits: u16 },
    /// OCP MXFP4 (gpt-oss's checkpoints, `quant_method: "mxfp4"`): 4-bit e2m1 values
    /// with one e8m0 scale byte per 32, 17 bytes per 32 weights, on a MoE's routed
    /// experts (the config's `modules_to_not_convert` keeps attention, routers,
    /// embeddings and head in 16 bits) or a dense model's linears.
    Mxfp4,
    /// llama.cpp's MXFP4_MOE file type (what ggml-org publishes gpt-oss as): MXFP4 on
    /// the routed experts, Q8_0 on every other matrix and the embeddings, F32 norms and
    /// biases (llama-quantize's MXFP4_MOE in src/llama-quant.cpp).
    Mxfp4Moe,
    /// NVIDIA's NVFP4 (ModelOpt checkpoints, `quant_algo: "NVFP4"`): e2m1 values with an
    /// fp8 scale per 16 and an fp32 scale per tensor, 9 bytes per 16 weights, on every
    /// linear of the layers but the routers.
    Nvfp4,
    /// Block-wise FP8 (DeepSeek-V3, Kimi K2, Qwen3-FP8: `quant_method: "fp8"` with
    /// `weight_block_size: [128, 128]`): fp8 weights and one fp32 scale per 128 × 128
    /// block, on every linear of the layers.
    Fp8Block,
    /// Whatever the checkpoint stores (`dtype="auto"` in transformers 5, vLLM's
    /// default): resolved from the model ([`WeightFormat::resolved`]) before estimating.
    Checkpoint,
}

impl WeightFormat {
    /// Bytes for `n` weights of a quantised linear layer.
    pub fn linear_bytes(self, n: u64) -> u64 {
        let bits = |num: u128, den: u128| -> u64 {
            let b = (u128::from(n) * num).div_ceil(den * 8);
            u64::try_from(b).unwrap_or(u64::MAX)
        };
        match self {
            WeightFormat::Plain { dtype } => dtype.bytes_for(n),
            // 4 bits + 32/64 (fp32 absmax per 64).
            WeightFormat::Nf4 {
                double_quant: false,
            } => bits(4 * 64 + 32, 64),
            // 4 bits + 8/64 (int8 absmax per 64) + 32/(64*256) (fp32 per 256 absmaxes).
            WeightFormat::Nf4 { double_quant: true } => bits(4 * 16384 + 8 * 256 + 32, 16384),
            WeightFormat::GroupQuant { bits: b, group } => {
                let g = u128::from(group.max(1));
                bits(u128::from(b) * g + 16 + u128::from(b), g)
            }
            WeightFormat::Gguf { mix } => mix_of(mix).base.bytes_for(n),
            WeightFormat::Exl2 { centibits } => bits(u128::from(centibits), 100),
            WeightFormat::Mxfp4 | WeightFormat::Mxfp4Moe => bits(17 * 8, 32),
            WeightFormat::Nvfp4 => bits(9 * 8, 16),
            // 8 bits and 32 per 128 × 128.
            WeightFormat::Fp8Block => bits(8 * 16_384 + 32, 16_384),
            // Unresolved, the checkpoint is taken as 16-bit.
            WeightFormat::Checkpoint => Dtype::Bf16.bytes_for(n),
        }
    }

    /// The format to estimate with: [`WeightFormat::Checkpoint`] becomes the
    /// checkpoint's own (`stored`, or bf16 when nothing says), every other format
    /// stays. Training never runs on a checkpoint's quantised storage: transformers
    /// dequantises MXFP4, NVFP4 and FP8 checkpoints to bf16 when it loads them to train.
    pub fn resolved(self, stored: Option<WeightFormat>, training: bool) -> WeightFormat {
        let bf16 = WeightFormat::Plain { dtype: Dtype::Bf16 };
        match (self, stored) {
            (WeightFormat::Checkpoint, Some(WeightFormat::Plain { dtype })) => {
                WeightFormat::Plain { dtype }
            }
            (WeightFormat::Checkpoint, Some(_)) if training => bf16,
            (WeightFormat::Checkpoint, Some(f)) => f,
            (WeightFormat::Checkpoint, None) => bf16,
            (f, _) => f,
        }
    }

    /// Whether embeddings and the LM head stay in 16-bit (true for bitsandbytes,
    /// GPTQ, AWQ and EXL2, which skip them; GGUF quantises them itself).
    pub fn keeps_head_in_16bit(self) -> bool {
        !matches!(self, WeightFormat::Gguf { .. } | WeightFormat::Plain { .. })
    }

    /// Parses a CLI/URL id: a dtype (`bf16`), `nf4`, `nf4-dq`, `gptq-4bit-128g`,
    /// `awq` (4-bit, group 128), a GGUF mix or type (`Q4_K_M`, `q8_0`), or EXL2 bits
    /// (`4.65bpw`).
    pub fn parse(input: &str) -> Result<WeightFormat, ParseError> {
        let s = input.trim().to_ascii_lowercase();
        let err = || ParseError::UnknownDtype { input: clip(input) };
        if let Some(bpw) = s.strip_suffix("bpw") {
            let v: f64 = bpw.trim().replace(',', ".").parse().map_err(|_| err())?;
            if !(1.0..=16.0).contains(&v) {
                return Err(err());
            }
            return Ok(WeightFormat::Exl2 {
                centibits: (v * 100.0).round() as u16,
            });
        }
        match s.as_str() {
            "auto" | "checkpoint" => return Ok(WeightFormat::Checkpoint),
            // llama.cpp's MXFP4_MOE file type is this format on the experts.
            "mxfp4" => return Ok(WeightFormat::Mxfp4),
            "mxfp4_moe" | "mxfp4-moe" => return Ok(WeightFormat::Mxfp4Moe),
            "nvfp4" => return Ok(WeightFormat::Nvfp4),
            "fp8-block" | "fp8_block" | "fp8-128" => return Ok(WeightFormat::Fp8Block),
            "nf4" | "4bit" => {
                return Ok(WeightFormat::Nf4 {
                    double_quant: false,
                });
            }
            "nf4-dq" | "nf4-double" => return Ok(WeightFormat::Nf4 { double_quant: true }),
            "awq" | "gptq" => {
                return Ok(WeightFormat::GroupQuant {
                    bits: 4,
                    group: 128,
                });
            }
            _ => {}
        }
        if let Some(rest) = s.strip_prefix("gptq-").or_else(|| s.strip_prefix("awq-")) {
            // "4bit-128g"
            let (b, g) = rest.split_once("bit-").ok_or_else(err)?;
            let bits: u8 = b.parse().map_err(|_| err())?;
            let group: u32 = g.trim_end_matches('g').parse().map_err(|_| err())?;
            if !(2..=8).contains(&bits) || !(8..=4096).contains(&group) {
                return Err(err());
            }
            return Ok(WeightFormat::GroupQuant { bits, group });
        }
        if let Some(i) = GGUF_MIXES
            .iter()
            .position(|m| m.name.eq_ignore_ascii_case(&s))
        {
            return Ok(WeightFormat::Gguf { mix: i as u8 });
        }
        s.parse::<Dtype>()
            .map(|dtype| WeightFormat::Plain { dtype })
            .map_err(|_| err())
    }

    /// The format of a llama.cpp load log's `file type` line (`llama_model_ftype_name`
    /// in src/llama-model-loader.cpp: "Q4_K - Medium", "Q8_0", "F16"; older builds say
    /// "mostly Q4_K - Medium" and may add " (guessed)"). `None` for a mix vramlab does
    /// not model.
    pub fn from_llama_ftype(name: &str) -> Option<WeightFormat> {
        let s = name.trim().to_ascii_lowercase();
        let s = s.strip_suffix("(guessed)").unwrap_or(&s).trim();
        let s = s.strip_prefix("mostly ").unwrap_or(s).trim();
        let s = s.strip_prefix("all ").unwrap_or(s);
        // `LLAMA_FTYPE_MOSTLY_MXFP4_MOE` prints as "MXFP4 MoE".
        if s == "mxfp4 moe" {
            return Some(WeightFormat::Mxfp4Moe);
        }
        let id = match s.split_once(" - ") {
            // llama.cpp's Q2_K is its "Medium" mix; vramlab's Q2_K row models it.
            Some(("q2_k", "medium")) => "q2_k".to_owned(),
            Some((base, "medium")) => format!("{base}_m"),
            Some((base, "small")) => format!("{base}_s"),
            Some((base, "large")) => format!("{base}_l"),
            Some(_) => return None,
            None => s.to_owned(),
        };
        WeightFormat::parse(&id).ok()
    }

    /// The id [`WeightFormat::parse`] reads back.
    pub fn id(self) -> String {
        match self {
            WeightFormat::Plain { dtype } => dtype.id().to_owned(),
            WeightFormat::Nf4 {
                double_quant: false,
            } => "nf4".into(),
            WeightFormat::Nf4 { double_quant: true } => "nf4-dq".into(),
            WeightFormat::GroupQuant { bits, group } => format!("gptq-{bits}bit-{group}g"),
            WeightFormat::Gguf { mix } => mix_of(mix).name.to_owned(),
            WeightFormat::Exl2 { centibits } => {
                format!("{}.{:02}bpw", centibits / 100, centibits % 100)
            }
            WeightFormat::Mxfp4 => "mxfp4".into(),
            WeightFormat::Mxfp4Moe => "MXFP4_MOE".into(),
            WeightFormat::Nvfp4 => "nvfp4".into(),
            WeightFormat::Fp8Block => "fp8-block".into(),
            WeightFormat::Checkpoint => "auto".into(),
        }
    }
}

/// The mix at `index`, or Q4_K_M if the index is out of range.
pub fn mix_of(index: u8) -> GgufMix {
    GGUF_MIXES
        .get(usize::from(index))
        .copied()
        .unwrap_or(GGUF_MIXES[4])
}

impl fmt::Display for WeightFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tensor_type_fallback` in llama.cpp's src/llama-quant.cpp, row width by row width.
    #[test]
    fn k_quants_fall_back_when_rows_do_not_hold_whole_blocks() {
        let cases = [
            (GgufType::Q4K, 4096, GgufType::Q4K),
            (GgufType::Q4K, 896, GgufType::Q5_0),
            (GgufType::Q5K, 1152, GgufType::Q5_1),
            (GgufType::Q6K, 1408, GgufType::Q8_0),
            (GgufType::Q3K, 1152, GgufType::Q4_0),
            (GgufType::Q2K, 1152, GgufType::Q4_0),
            (GgufType::Iq4Xs, 896, GgufType::Iq4Nl),
            (GgufType::Q4_0, 896, GgufType::Q4_0),
            (GgufType::Q6K, 1600, GgufType::Q8_0),
            // Not even a multiple of 32: F16.
            (GgufType::Q4K, 1000, GgufType::F16),
            (GgufType::F16, 1000, GgufType::F16),
        ];
        for (t, ncols, want) in cases {
            assert_eq!(t.fallback(ncols), want, "{} with {ncols} columns", t.id());
        }
        let q4km = mix_of(4);
        assert_eq!(q4km.name, "Q4_K_M");
        assert_eq!(q4km.output_for(4096), GgufType::Q6K);
        assert_eq!(q4km.output_for(1152), GgufType::Q8_0);
        assert_eq!(q4km.boosted_for(1408), GgufType::Q8_0);
    }

    #[test]
    fn llama_cpp_file_types_map_to_formats() {
        for (printed, id) in [
            ("Q4_K - Medium", Some("Q4_K_M")),
            ("mostly Q4_K - Medium", Some("Q4_K_M")),
            ("Q5_K - Small", Some("Q5_K_S")),
            ("Q8_0", Some("Q8_0")),
            ("Q4_0", Some("Q4_0")),
            ("Q6_K", Some("Q6_K")),
            ("Q2_K - Medium", Some("Q2_K")),
            ("F16", Some("fp16")),
            ("BF16", Some("bf16")),
            ("all F32", Some("fp32")),
            ("mostly F16 (guessed)", Some("fp16")),
            ("Q3_K - Large", None),
            ("IQ4_XS - 4.25 bpw", None),
            ("", None),
        ] {
            assert_eq!(
                WeightFormat::from_llama_ftype(printed).map(WeightFormat::id),
                id.map(str::to_owned),
                "{printed}"
            );
        }
    }

    #[test]
    fn gguf_block_sizes_from_ggml() {
        let cases = [
            (GgufType::Q4_0, 18, 32),
            (GgufType::Q8_0, 34, 32),
            (GgufType::Q2K, 84, 256),
            (GgufType::Q3K, 110, 256),
            (GgufType::Q4K, 144, 256),
            (GgufType::Q5K, 176, 256),
            (GgufType::Q6K, 210, 256),
            (GgufType::Iq4Xs, 136, 256),
        ];
        for (t, bytes, per) in cases {
            assert_eq!(t.block(), (bytes, per), "{}", t.id());
        }
        // Partial blocks round up.
        assert_eq!(GgufType::Q4_0.bytes_for(33), 36);
    }

    #[test]
    fn bits_per_weight() {
        let n = 1 << 20;
        let bpw = |f: WeightFormat| f.linear_bytes(n) as f64 * 8.0 / n as f64;
        assert_eq!(
            bpw(WeightFormat::Nf4 {
                double_quant: false
            }),
            4.5
        );
        assert!((bpw(WeightFormat::Nf4 { double_quant: true }) - 4.127).abs() < 0.001);
        // GPTQ 4-bit, group 128: 4 + (16 + 4)/128 = 4.15625.
        assert_eq!(
            bpw(WeightFormat::GroupQuant {
                bits: 4,
                group: 128
            }),
            4.15625
        );
        assert!((bpw(WeightFormat::Exl2 { centibits: 465 }) - 4.65).abs() < 1e-5);
        assert_eq!(bpw(WeightFormat::Gguf { mix: 4 }), 4.5);
    }

    #[test]
    fn parse_roundtrip() {
        for id in [
            "bf16",
            "fp32",
            "nf4",
            "nf4-dq",
            "gptq-4bit-128g",
            "gptq-3bit-32g",
            "Q4_K_M",
            "Q8_0",
            "4.65bpw",
        ] {
            let f = WeightFormat::parse(id).unwrap();
            assert_eq!(WeightFormat::parse(&f.id()).unwrap(), f, "{id}");
        }
        assert_eq!(
            WeightFormat::parse("q4_k_m").unwrap(),
            WeightFormat::parse("Q4_K_M").unwrap()
        );
        for bad in [
            "",
            "q9_k",
            "0.5bpw",
            "gptq-9bit-128g",
            "gptq-4bit-0g",
            "99bpw",
        ] {
            assert!(WeightFormat::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn more_bits_layers() {
        let n = 32;
        let boosted = (0..n).filter(|&i| use_more_bits(i, n)).count();
        // 4 + 4 at the ends and every third of the 24 between.
        assert_eq!(boosted, 16);
    }
}
