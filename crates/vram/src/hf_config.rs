//! Import of a Hugging Face `config.json` into an [`Architecture`].
//!
//! Field names differ by family (GPT-2 says `n_embd`, Llama `hidden_size`), defaults
//! differ too (Gemma ties embeddings unless told otherwise, Llama does not), and
//! multimodal configs nest the language model under `text_config`. Unknown families
//! fall back to the common field names with a warning. Nothing here panics: a
//! malformed file is a [`ConfigError`] with a Spanish message.

use serde_json::{Map, Value};

use crate::arch::{
    Architecture, AttnBias, LinearAttention, Mla, Mlp, Moe, Norm, Rope, SlidingWindow, Vision,
};
use crate::dtype::Dtype;
use crate::quant::WeightFormat;
use crate::units::clip;

/// Largest config accepted, in bytes (real ones are a few KiB).
pub const MAX_CONFIG_BYTES: usize = 1 << 20;
/// Largest value accepted for any dimension.
pub(crate) const MAX_DIM: u64 = 1 << 24;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("El config.json no es JSON válido: {0}.")]
    Json(String),
    #[error("El config.json debe ser un objeto JSON ({{ … }}).")]
    NotObject,
    #[error("El config.json es demasiado grande ({0} bytes; máximo 1 MiB).")]
    TooLarge(usize),
    #[error("Falta el campo «{0}» en el config.json.")]
    Missing(&'static str),
    #[error("El campo «{field}» tiene un valor no válido: {value}.")]
    Invalid { field: &'static str, value: String },
    #[error(transparent)]
    OverBudget(#[from] crate::arch::OverBudget),
    #[error(
        "El config.json declara {what}, que vramlab aún no modela: un cálculo sin ello no sería fiable, así que no se da ninguno."
    )]
    Unmodelled { what: String },
}

/// Families whose layout this importer knows.
pub const KNOWN_FAMILIES: &[&str] = &[
    "llama",
    "mistral",
    "mixtral",
    "qwen2",
    "qwen2_moe",
    "qwen3",
    "qwen3_moe",
    "gemma",
    "gemma2",
    "gemma3",
    "gemma3_text",
    "phi3",
    // Granite 3: Llama's layout with scalar multipliers that cost no memory.
    "granite",
    "gpt2",
    "gpt_neox",
    "gpt_bigcode",
    "bert",
    "deepseek",
    "deepseek_v2",
    "deepseek_v3",
    "kimi_k2",
    "gpt_oss",
    "qwen3_next",
    "qwen3_5_text",
    "qwen3_5_moe_text",
    "llama4_text",
    "glm4_moe",
];

/// Keys of mechanisms the estimator does not model: a config that declares one is
/// refused (fail closed) rather than estimated as if the mechanism were not there.
const UNMODELLED_KEYS: &[(&str, &str)] = &[
    (
        "hybrid_override_pattern",
        "capas Mamba-2 («hybrid_override_pattern»)",
    ),
    ("layers_block_type", "capas Mamba («layers_block_type»)"),
    ("mamba_d_state", "estado de Mamba («mamba_d_state»)"),
    ("ssm_state_size", "estado de Mamba («ssm_state_size»)"),
    ("mamba_n_heads", "capas Mamba-2 («mamba_n_heads»)"),
    (
        "conv_L_cache",
        "convoluciones cortas de LFM2 («conv_L_cache»)",
    ),
    (
        "index_topk",
        "el indexador de la atención dispersa de DeepSeek V3.2 («index_topk»)",
    ),
    (
        "global_head_dim",
        "cabezas de otro ancho en las capas globales («global_head_dim»)",
    ),
    (
        "kv_lora_rank_indexer",
        "el indexador de la atención dispersa",
    ),
    (
        "moe_latent_size",
        "expertos en un espacio latente («moe_latent_size»)",
    ),
];

struct Fields<'a>(&'a Map<String, Value>);

impl Fields<'_> {
    fn uint(&self, names: &[&'static str]) -> Result<Option<u64>, ConfigError> {
        for &name in names {
            match self.0.get(name) {
                None | Some(Value::Null) => continue,
                Some(v) => {
                    let n = v.as_u64().filter(|&n| n <= MAX_DIM).ok_or_else(|| {
                        ConfigError::Invalid {
                            field: name,
                            value: clip(&v.to_string()),
                        }
                    })?;
                    return Ok(Some(n));
                }
            }
        }
        Ok(None)
    }

    fn required(&self, names: &[&'static str]) -> Result<u32, ConfigError> {
        let first = names.first().copied().unwrap_or("?");
        let n = self.uint(names)?.ok_or(ConfigError::Missing(first))?;
        if n == 0 {
            return Err(ConfigError::Invalid {
                field: first,
                value: "0".into(),
            });
        }
        Ok(n as u32)
    }

    fn flag(&self, name: &str) -> Option<bool> {
        self.0.get(name).and_then(Value::as_bool)
    }

    fn text(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(Value::as_str)
    }
}

/// Parses `config.json` text. Returns the architecture and Spanish warnings.
pub fn parse(text: &str) -> Result<(Architecture, Vec<String>), ConfigError> {
    if text.len() > MAX_CONFIG_BYTES {
        return Err(ConfigError::TooLarge(text.len()));
    }
    // Windows editors save with a byte-order mark; JSON itself has none.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let value: Value = serde_json::from_str(text)
        .map_err(|e| ConfigError::Json(crate::units::json_problem(&e)))?;
    let root = value.as_object().ok_or(ConfigError::NotObject)?;
    let mut warnings = Vec::new();
    // Multimodal configs (Gemma 3, Llava, Mistral 3) nest the language model.
    let obj = root
        .get("text_config")
        .and_then(Value::as_object)
        .unwrap_or(root);
    let root_fields = Fields(root);
    let family = Fields(obj)
        .text("model_type")
        .or_else(|| root_fields.text("model_type"))
        .unwrap_or("desconocido")
        .to_owned();
    let obj = &with_class_defaults(obj, &family);
    let f = Fields(obj);
    let known = KNOWN_FAMILIES.contains(&family.as_str());
    if !known {
        warnings.push(format!(
            "model_type «{}» no está entre los conocidos; se usan los campos genéricos (MLP con compuerta, RMSNorm).",
            clip(&family)
        ));
    }
    let is = |names: &[&str]| names.contains(&family.as_str());
    let gpt2_like = is(&["gpt2", "gpt_bigcode"]);
    let plain = gpt2_like || is(&["gpt_neox", "bert"]);

    let layers = f.required(&["num_hidden_layers", "n_layer", "num_layers"])?;
    let hidden = f.required(&["hidden_size", "n_embd", "d_model"])?;
    let heads = f.required(&["num_attention_heads", "n_head"])?;
    let kv_heads = if f.flag("multi_query") == Some(true) {
        1
    } else {
        f.uint(&["num_key_value_heads"])?
            .map_or(heads, |k| k as u32)
            .max(1)
    };
    let head_dim = match f.uint(&["head_dim"])? {
        Some(d) if d > 0 => d as u32,
        // More heads than channels: each would have none, and the cache would be 0 B.
        _ if heads > hidden => {
            return Err(ConfigError::Invalid {
                field: "num_attention_heads",
                value: format!(
                    "{heads}, más que hidden_size ({hidden}) sin un head_dim que lo explique: cada cabeza tendría 0 dimensiones"
                ),
            });
        }
        _ => hidden / heads,
    };
    // A MoE whose every layer has experts (Qwen3.5-35B-A3B) names no dense width.
    let intermediate = match f.uint(&["intermediate_size", "n_inner", "ffn_dim"])? {
        Some(i) if i > 0 => i as u32,
        _ if plain => 4 * hidden,
        _ => match f.uint(&["moe_intermediate_size"])? {
            Some(i) if i > 0 => i as u32,
            _ => return Err(ConfigError::Missing("intermediate_size")),
        },
    };
    let vocab = f.required(&["vocab_size"])?;
    let max_positions = f
        .uint(&["max_position_embeddings", "n_positions", "seq_length"])?
        .map_or(4096, |v| v as u32);

    let tied_default = is(&[
        "gemma",
        "gemma2",
        "gemma3",
        "gemma3_text",
        "gpt2",
        "gpt_bigcode",
        "bert",
    ]);
    let tied_embeddings = f
        .flag("tie_word_embeddings")
        .or_else(|| root_fields.flag("tie_word_embeddings"))
        .unwrap_or(tied_default);
    let norm =
        if plain || obj.contains_key("layer_norm_eps") || obj.contains_key("layer_norm_epsilon") {
            Norm::Layer
        } else {
            Norm::Rms
        };
    let attn_bias = if plain {
        AttnBias::All
    } else if is(&["qwen2", "qwen2_moe"])
        || is(&["glm4_moe"]) && f.flag("attention_bias") == Some(true)
    {
        // GLM-4.5+ biases q, k and v only (`Glm4MoeAttention`).
        AttnBias::Qkv
    } else if f.flag("attention_bias") == Some(true) {
        AttnBias::All
    } else {
        AttnBias::None
    };

    refuse_unmodelled(obj)?;
    let moe = moe(&f, &family, intermediate)?;
    let (sliding_window, linear) = layer_pattern(&f, &family, layers)?;
    let mla = mla(&f)?;
    // Gemma 3 (4B and up) tabulates its global layers' rope over `max_position_embeddings
    // × factor` positions and its windowed layers' separately (`rope_local_base_freq`).
    let rope = Rope {
        linear_factor: linear_rope_factor(obj, &mut warnings)?,
        // `Gemma3TextConfig` always has one (10 000 by default).
        local: is(&["gemma3", "gemma3_text"]) || obj.contains_key("rope_local_base_freq"),
    };
    let vision = vision(root, hidden, &mut warnings)?;
    // With MLA a query/key head is nope + rope wide; activations use that width.
    let head_dim = mla.map_or(head_dim, |m| m.qk_nope_head_dim + m.qk_rope_head_dim);

    let arch = Architecture {
        family: clip(&family),
        layers,
        hidden,
        heads,
        kv_heads,
        head_dim,
        intermediate,
        mlp: if plain { Mlp::Plain } else { Mlp::Gated },
        vocab,
        tied_embeddings,
        norm,
        norms_per_layer: if is(&["gemma2", "gemma3", "gemma3_text"]) {
            4
        } else {
            2
        },
        attn_bias,
        // gpt-oss's experts carry biases (`gate_up_proj_bias`, `down_proj_bias`).
        mlp_bias: plain || is(&["gpt_oss"]) || f.flag("mlp_bias") == Some(true),
        qk_norm: is(&[
            "qwen3",
            "qwen3_moe",
            "gemma3",
            "gemma3_text",
            "qwen3_next",
            "qwen3_5_text",
            "qwen3_5_moe_text",
        ]),
        learned_positions: if gpt2_like || is(&["bert"]) {
            max_positions
        } else {
            0
        },
        token_types: if is(&["bert"]) {
            f.uint(&["type_vocab_size"])?.unwrap_or(2) as u32
        } else {
            0
        },
        pooler: is(&["bert"]),
        encoder_only: is(&["bert"]),
        dropout: gpt2_like || is(&["bert"]),
        moe,
        sliding_window,
        mla,
        linear,
        // Qwen3-Next always gates its attention output; Qwen3.5 says so.
        attn_gate: is(&["qwen3_next"]) || f.flag("attn_output_gate") == Some(true),
        sinks: is(&["gpt_oss"]),
        checkpoint: checkpoint(root, obj)?,
        rope,
        vision,
        max_positions,
    };
    arch.within_budget()?;
    Ok((arch, warnings))
}

/// Gemma 3's SigLIP tower and projector from `vision_config` (and a warning saying
/// what is counted); other multimodal configs' towers are not modelled, and say so.
fn vision(
    root: &serde_json::Map<String, Value>,
    hidden: u32,
    warnings: &mut Vec<String>,
) -> Result<Option<Vision>, ConfigError> {
    let root_fields = Fields(root);
    Ok(match root.get("vision_config").and_then(Value::as_object) {
        Some(v) if root_fields.text("model_type") == Some("gemma3") => {
            let v = &with_class_defaults(v, "siglip_vision_model");
            let v = Fields(v);
            let vision = Vision {
                layers: v.required(&["num_hidden_layers"])?,
                hidden: v.required(&["hidden_size"])?,
                heads: v.required(&["num_attention_heads"])?,
                intermediate: v.required(&["intermediate_size"])?,
                patch: v.required(&["patch_size"])?,
                image: v.required(&["image_size"])?,
                tokens_per_image: match root_fields.uint(&["mm_tokens_per_image"])? {
                    Some(n) if n > 0 => n as u32,
                    _ => 256,
                },
            };
            warnings.push(format!(
                "Se usan text_config (el modelo de lenguaje) y vision_config: la torre de visión SigLIP y su proyector ({} parámetros) se cuentan donde el motor los carga (vLLM).",
                crate::units::group_digits(vision.params(hidden))
            ));
            Some(vision)
        }
        _ => {
            if root.contains_key("text_config") {
                warnings.push(
                    "Se usa text_config (el modelo de lenguaje); la torre de visión no se cuenta."
                        .into(),
                );
            }
            None
        }
    })
}

/// A mixture of experts, when the config names more than one expert.
fn moe(f: &Fields, family: &str, intermediate: u32) -> Result<Option<Moe>, ConfigError> {
    let experts = f
        .uint(&["num_local_experts", "num_experts", "n_routed_experts"])?
        .unwrap_or(0);
    if experts <= 1 {
        return Ok(None);
    }
    Ok(Some(Moe {
        experts: experts as u32,
        experts_per_token: f
            .uint(&["num_experts_per_tok", "experts_per_token"])?
            .unwrap_or(2) as u32,
        expert_intermediate: f
            .uint(&["moe_intermediate_size"])?
            .map_or(intermediate, |v| v as u32),
        // Llama 4's one shared expert has no key of its own.
        shared_experts: match f.uint(&["n_shared_experts"])? {
            Some(n) => n as u32,
            None if family == "llama4_text" => 1,
            None => 0,
        },
        dense_layers: f.uint(&["first_k_dense_replace"])?.unwrap_or(0) as u32,
        shared_intermediate: f.uint(&["shared_expert_intermediate_size"])?.unwrap_or(0) as u32,
    }))
}

/// How the checkpoint stores its weights, from `quantization_config` (on the root or,
/// in multimodal configs, beside the text config) and, without one, `torch_dtype` /
/// `dtype` when it is not 16-bit: what the `auto` format resolves to. A quantisation
/// method the estimator does not model is refused rather than counted as bf16.
fn checkpoint(
    root: &serde_json::Map<String, Value>,
    obj: &serde_json::Map<String, Value>,
) -> Result<Option<WeightFormat>, ConfigError> {
    let q = root
        .get("quantization_config")
        .or_else(|| obj.get("quantization_config"))
        .and_then(Value::as_object);
    let Some(q) = q else {
        let (inner, outer) = (Fields(obj), Fields(root));
        let dtype = inner
            .text("torch_dtype")
            .or_else(|| inner.text("dtype"))
            .or_else(|| outer.text("torch_dtype"))
            .or_else(|| outer.text("dtype"));
        return Ok(match dtype {
            Some("float32") => Some(WeightFormat::Plain { dtype: Dtype::Fp32 }),
            _ => None,
        });
    };
    let f = Fields(q);
    let method = f.text("quant_method").unwrap_or("");
    let unmodelled = || ConfigError::Unmodelled {
        what: format!("pesos cuantizados con «{}»", clip(method)),
    };
    Ok(Some(match method {
        "mxfp4" => WeightFormat::Mxfp4,
        "fp8" if q.contains_key("weight_block_size") => WeightFormat::Fp8Block,
        "fp8" | "fbgemm_fp8" => WeightFormat::Plain { dtype: Dtype::Fp8 },
        "modelopt" | "nvfp4" => match f.text("quant_algo") {
            Some("NVFP4") | None => WeightFormat::Nvfp4,
            Some("FP8") => WeightFormat::Plain { dtype: Dtype::Fp8 },
            Some(_) => return Err(unmodelled()),
        },
        "bitsandbytes" if f.flag("load_in_4bit") == Some(true) => WeightFormat::Nf4 {
            double_quant: f.flag("bnb_4bit_use_double_quant") == Some(true),
        },
        "bitsandbytes" if f.flag("load_in_8bit") == Some(true) => {
            WeightFormat::Plain { dtype: Dtype::Int8 }
        }
        "compressed-tensors" => compressed_tensors(q).ok_or_else(unmodelled)?,
        "gptq" | "awq" => WeightFormat::GroupQuant {
            bits: f.uint(&["bits", "w_bit"])?.unwrap_or(4).clamp(2, 8) as u8,
            group: f
                .uint(&["group_size", "q_group_size"])?
                .filter(|&g| (8..=4096).contains(&g))
                .unwrap_or(128) as u32,
        },
        _ => return Err(unmodelled()),
    }))
}

/// llm-compressor's `compressed-tensors` checkpoints (Red Hat's FP8 and W4A16 models,
/// NVIDIA's NVFP4 exports): the first group's weight scheme, 8-bit floats (per block
/// when `strategy` is "block"), 4-bit floats in groups of 16 (NVFP4) or `num_bits`
/// integers in groups (GPTQ-like W4A16). `None` for any other scheme.
fn compressed_tensors(q: &serde_json::Map<String, Value>) -> Option<WeightFormat> {
    let groups = q.get("config_groups")?.as_object()?;
    let weights = Fields(groups.values().next()?.get("weights")?.as_object()?);
    let bits = weights.uint(&["num_bits"]).ok()??;
    let group = weights.uint(&["group_size"]).ok()?;
    match (weights.text("type")?, bits, group) {
        ("float", 8, _) if weights.text("strategy") == Some("block") => {
            Some(WeightFormat::Fp8Block)
        }
        ("float", 8, _) => Some(WeightFormat::Plain { dtype: Dtype::Fp8 }),
        ("float", 4, Some(16)) => Some(WeightFormat::Nvfp4),
        ("int", 2..=8, Some(g)) if (8..=4096).contains(&g) => Some(WeightFormat::GroupQuant {
            bits: bits as u8,
            group: g as u32,
        }),
        ("int", 8, None) => Some(WeightFormat::Plain { dtype: Dtype::Int8 }),
        _ => None,
    }
}

/// Refuses a config that declares a mechanism the estimator does not model
/// ([`UNMODELLED_KEYS`]), and a MoE that alternates with dense layers.
fn refuse_unmodelled(obj: &serde_json::Map<String, Value>) -> Result<(), ConfigError> {
    if let Some((_, what)) = UNMODELLED_KEYS
        .iter()
        .find(|(key, _)| obj.get(*key).is_some_and(|v| !v.is_null()))
    {
        return Err(ConfigError::Unmodelled {
            what: (*what).to_owned(),
        });
    }
    // Llama 4 Maverick alternates dense and MoE layers; Scout (1) has MoE everywhere.
    if Fields(obj)
        .uint(&["interleave_moe_layer_step"])?
        .is_some_and(|s| s > 1)
    {
        return Err(ConfigError::Unmodelled {
            what: "capas densas y de expertos alternas («interleave_moe_layer_step»)".into(),
        });
    }
    Ok(())
}

/// How the layers attend: with a sliding window (or Llama 4's chunks) on some, and
/// Gated DeltaNet on others. Read from `layer_types` (one kind per layer) when the
/// config lists them, else from `sliding_window` (Gemma 2 every other layer global,
/// Gemma 3 one in `sliding_window_pattern`, others all windowed), Llama 4's
/// `attention_chunk_size` (one NoPE global layer in four) and Qwen3-Next's
/// `full_attention_interval`. A kind the estimator does not know, or a pattern that is
/// not one global layer every N, is refused.
fn layer_pattern(
    f: &Fields,
    family: &str,
    layers: u32,
) -> Result<(Option<SlidingWindow>, Option<LinearAttention>), ConfigError> {
    let unmodelled = |what: String| ConfigError::Unmodelled { what };
    let window = f
        .uint(&["sliding_window"])?
        .filter(|&w| w > 0 && f.flag("use_sliding_window") != Some(false))
        .or(f.uint(&["attention_chunk_size"])?.filter(|&c| c > 0));
    let kinds: Option<Vec<&str>> =
        f.0.get("layer_types")
            .and_then(Value::as_array)
            .map(|list| list.iter().map(|k| k.as_str().unwrap_or("?")).collect());
    let (mut full, mut windowed, mut linear) = (0u32, 0u32, 0u32);
    if let Some(kinds) = &kinds {
        for &kind in kinds {
            match kind {
                "full_attention" => full += 1,
                "sliding_attention" | "chunked_attention" => windowed += 1,
                "linear_attention" => linear += 1,
                other => {
                    return Err(unmodelled(format!(
                        "capas de tipo «{}» en layer_types",
                        clip(other)
                    )));
                }
            }
        }
        if full + windowed + linear != layers {
            return Err(ConfigError::Invalid {
                field: "layer_types",
                value: format!("{} tipos para {layers} capas", kinds.len()),
            });
        }
    }
    // One global layer in every `n` of `total`, checked to give exactly `global`.
    let every = |total: u32, global: u32| -> Result<u32, ConfigError> {
        if global == 0 {
            return Ok(0);
        }
        let n = total / global;
        if n == 0 || total / n != global {
            return Err(unmodelled(
                "un patrón de capas que no es una global cada N".into(),
            ));
        }
        Ok(n)
    };
    let linear_attention = if kinds.is_some() && linear > 0
        || kinds.is_none() && f.0.contains_key("linear_num_value_heads")
    {
        let full_every = match &kinds {
            Some(_) => every(layers, full)?,
            None => f.required(&["full_attention_interval"])?,
        };
        if full_every < 2 {
            return Err(ConfigError::Invalid {
                field: "full_attention_interval",
                value: full_every.to_string(),
            });
        }
        Some(LinearAttention {
            full_every,
            key_heads: f.required(&["linear_num_key_heads"])?,
            key_dim: f.required(&["linear_key_head_dim"])?,
            value_heads: f.required(&["linear_num_value_heads"])?,
            value_dim: f.required(&["linear_value_head_dim"])?,
            conv_kernel: f.required(&["linear_conv_kernel_dim"])?,
            ssm_fp32: f.text("mamba_ssm_dtype") == Some("float32"),
        })
    } else {
        None
    };
    let sliding = match (window, &kinds) {
        // The listed kinds decide which layers are windowed.
        (Some(w), Some(_)) if windowed > 0 => Some(SlidingWindow {
            window: w as u32,
            global_every: every(full + windowed, full)?,
        }),
        (_, Some(_)) => None,
        (Some(w), None) => {
            let global_every = match family {
                "gemma2" => 2,
                "gemma3" | "gemma3_text" => {
                    f.uint(&["sliding_window_pattern"])?.map_or(6, |p| p as u32)
                }
                // Llama 4: every fourth layer is a global NoPE layer.
                "llama4_text" => 4,
                _ => 0,
            };
            Some(SlidingWindow {
                window: w as u32,
                global_every,
            })
        }
        (None, None) => None,
    };
    Ok((sliding, linear_attention))
}

/// DeepSeek's multi-head latent attention, when the config has a KV LoRA rank.
fn mla(f: &Fields) -> Result<Option<Mla>, ConfigError> {
    Ok(match f.uint(&["kv_lora_rank"])? {
        Some(kv_lora_rank) if kv_lora_rank > 0 => Some(Mla {
            q_lora_rank: f.uint(&["q_lora_rank"])?.unwrap_or(0) as u32,
            kv_lora_rank: kv_lora_rank as u32,
            qk_nope_head_dim: f.required(&["qk_nope_head_dim"])?,
            qk_rope_head_dim: f.required(&["qk_rope_head_dim"])?,
            v_head_dim: f.required(&["v_head_dim"])?,
        }),
        _ => None,
    })
}

/// The config with what its transformers config class fills in when a field is left
/// out (`__init__` defaults). Gemma 3's released checkpoints rely on it:
/// google/gemma-3-4b-it's `text_config` names only its hidden and intermediate sizes,
/// layers, rope scaling and window, and no Gemma 3 config names its vocabulary.
/// Defaults from transformers' `Gemma3TextConfig` and `SiglipVisionConfig`.
fn with_class_defaults(obj: &Map<String, Value>, family: &str) -> Map<String, Value> {
    let defaults: &[(&str, u64)] = match family {
        "gemma3" | "gemma3_text" => &[
            ("vocab_size", 262_208),
            ("hidden_size", 2304),
            ("intermediate_size", 9216),
            ("num_hidden_layers", 26),
            ("num_attention_heads", 8),
            ("num_key_value_heads", 4),
            ("head_dim", 256),
            ("max_position_embeddings", 131_072),
            ("sliding_window", 4096),
            ("sliding_window_pattern", 6),
        ],
        "siglip_vision_model" => &[
            ("hidden_size", 768),
            ("intermediate_size", 3072),
            ("num_hidden_layers", 12),
            ("image_size", 224),
            ("patch_size", 16),
        ],
        _ => &[],
    };
    let mut merged = obj.clone();
    for &(key, value) in defaults {
        merged.entry(key).or_insert(Value::from(value));
    }
    merged
}

/// The factor of a linear `rope_scaling` (other kinds tabulate the trained positions
/// only, or scale from `original_max_position_embeddings`, and keep 1). vLLM tabulates
/// `max_positions × factor` rows; a fractional factor is rounded up, with a warning.
fn linear_rope_factor(
    obj: &Map<String, Value>,
    warnings: &mut Vec<String>,
) -> Result<u32, ConfigError> {
    let Some(scaling) = obj.get("rope_scaling").and_then(Value::as_object) else {
        return Ok(1);
    };
    let kind = scaling
        .get("rope_type")
        .or_else(|| scaling.get("type"))
        .and_then(Value::as_str);
    if kind != Some("linear") {
        return Ok(1);
    }
    let invalid = |v: &Value| ConfigError::Invalid {
        field: "rope_scaling.factor",
        value: clip(&v.to_string()),
    };
    let Some(value) = scaling.get("factor") else {
        return Ok(1);
    };
    let factor = value
        .as_f64()
        .filter(|f| f.is_finite() && (1.0..=1024.0).contains(f))
        .ok_or_else(|| invalid(value))?;
    if factor.fract() != 0.0 {
        warnings.push(format!(
            "rope_scaling.factor = {factor} no es entero: se cuenta la tabla de posiciones con {}.",
            factor.ceil()
        ));
    }
    // In 1..=1024 after the filter, so the cast is exact.
    Ok(factor.ceil() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real configs of 2025–26 models (tests/configs, sources in its README) read as
    /// transformers' modules store them, against counts derived by hand from those
    /// modules: every parameter (gpt-oss's sinks and expert and router biases, the gated
    /// query and the Gated DeltaNet layers of Qwen3-Next and Qwen3.5, their shared
    /// experts), which layers keep a KV cache, and the state a sequence carries.
    #[test]
    fn models_of_2025_and_2026_read_as_their_modules_store_them() {
        // (file, parameters, attention layers, windowed of them, linear layers,
        // PyTorch state per sequence and linear layer, llama.cpp's per slot).
        let cases: &[(&str, u64, u32, u32, u32, u64, u64)] = &[
            ("gpt-oss-20b", 20_914_757_184, 24, 12, 0, 0, 0),
            ("gpt-oss-120b", 116_829_156_672, 36, 18, 0, 0, 0),
            // conv: (2·16·128 + 32·128) × 3 in bf16; recurrent: 32·128·128 in fp32.
            (
                "qwen3-next-80b-a3b-instruct",
                79_674_391_296,
                12,
                0,
                36,
                2_146_304,
                2_195_456,
            ),
            (
                "qwen3.5-27b",
                26_895_998_464,
                16,
                0,
                48,
                3_207_168,
                3_268_608,
            ),
            (
                "qwen3.5-35b-a3b",
                34_660_610_688,
                10,
                0,
                30,
                2_146_304,
                2_195_456,
            ),
        ];
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/configs");
        for &(file, params, attention, windowed, linear, torch, ggml) in cases {
            let text = std::fs::read_to_string(dir.join(format!("{file}.json"))).unwrap();
            let (a, _) = parse(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(a.param_count().total, params, "{file}");
            assert_eq!(a.attention_layers(), attention, "{file}");
            assert_eq!(a.windowed_layers().0, windowed, "{file}");
            assert_eq!(a.linear_layers(), linear, "{file}");
            let (conv, recurrent) = a.linear.map_or((0, 0), |l| l.state_elements());
            assert_eq!(conv * 2 + recurrent * 4, torch, "{file}");
            assert_eq!((conv + recurrent) * 4, ggml, "{file}");
        }
    }
    /// The checkpoint's storage, from each quantiser's `quantization_config` as the
    /// Hub's configs write it (gpt-oss, DeepSeek/Kimi/Qwen3-FP8, ModelOpt NVFP4,
    /// llm-compressor FP8 and W4A16, bitsandbytes, AWQ) or an fp32 `torch_dtype`.
    #[test]
    fn checkpoints_say_how_they_store_their_weights() {
        let cases: &[(&str, Result<Option<&str>, ()>)] = &[
            (r#""torch_dtype": "bfloat16""#, Ok(None)),
            (r#""torch_dtype": "float32""#, Ok(Some("fp32"))),
            (r#""dtype": "float32""#, Ok(Some("fp32"))),
            (
                r#""quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn"]}"#,
                Ok(Some("mxfp4")),
            ),
            (
                r#""quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]}"#,
                Ok(Some("fp8-block")),
            ),
            (
                r#""quantization_config": {"quant_method": "fp8"}"#,
                Ok(Some("fp8")),
            ),
            (
                r#""quantization_config": {"quant_algo": "NVFP4", "quant_method": "modelopt"}"#,
                Ok(Some("nvfp4")),
            ),
            (
                r#""quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float", "strategy": "channel", "group_size": null}}}}"#,
                Ok(Some("fp8")),
            ),
            (
                r#""quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float", "strategy": "block"}}}}"#,
                Ok(Some("fp8-block")),
            ),
            (
                r#""quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "float", "group_size": 16}}}}"#,
                Ok(Some("nvfp4")),
            ),
            (
                r#""quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int", "group_size": 128}}}}"#,
                Ok(Some("gptq-4bit-128g")),
            ),
            (
                r#""quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": true, "bnb_4bit_use_double_quant": true}"#,
                Ok(Some("nf4-dq")),
            ),
            (
                r#""quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 64}"#,
                Ok(Some("gptq-4bit-64g")),
            ),
            (r#""quantization_config": {"quant_method": "hqq"}"#, Err(())),
            (
                r#""quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 3, "type": "float"}}}}"#,
                Err(()),
            ),
        ];
        for (fields, expected) in cases {
            let text = LLAMA_31_8B
                .replace(r#""torch_dtype": "bfloat16","#, "")
                .replacen('{', &format!("{{{fields},"), 1);
            let got = parse(&text).map(|(a, _)| a.checkpoint.map(|f| f.id()));
            match (got, expected) {
                (Ok(got), Ok(want)) => assert_eq!(got.as_deref(), *want, "{fields}"),
                (Err(ConfigError::Unmodelled { what }), Err(())) => {
                    assert!(what.contains("cuantizados"), "{what}")
                }
                (got, _) => panic!("{fields}: {got:?}"),
            }
        }
    }

    use crate::catalog::model;

    const LLAMA_31_8B: &str = r#"{
      "architectures": ["LlamaForCausalLM"], "attention_bias": false, "hidden_act": "silu",
      "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 131072,
      "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 32,
      "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "tie_word_embeddings": false,
      "torch_dtype": "bfloat16", "vocab_size": 128256
    }"#;

    const GPT2: &str = r#"{"model_type": "gpt2", "n_embd": 768, "n_head": 12, "n_layer": 12,
      "n_positions": 1024, "vocab_size": 50257, "layer_norm_epsilon": 1e-05}"#;

    #[test]
    fn imports_match_presets() {
        let (a, warnings) = parse(LLAMA_31_8B).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(a, model("llama-3.1-8b").unwrap().arch);
        let (g, _) = parse(GPT2).unwrap();
        assert_eq!(g.param_count().total, 124_439_808);
    }

    #[test]
    fn nested_text_config_and_unknown_family() {
        let nested = format!(r#"{{"model_type": "llava", "text_config": {LLAMA_31_8B}}}"#);
        let (a, w) = parse(&nested).unwrap();
        assert_eq!(a.param_count().total, 8_030_261_248);
        assert_eq!(w.len(), 1);
        let unknown = LLAMA_31_8B.replace("\"llama\"", "\"nuevo\"");
        let (_, w) = parse(&unknown).unwrap();
        assert!(w[0].contains("nuevo"), "{w:?}");
    }

    /// google/gemma-3-4b-it's and gemma-3-27b-it's config.json as released: sparse,
    /// transformers' config classes fill the rest. Both match the catalog, vision tower
    /// and rotary tables included.
    #[test]
    fn gemma3_it_configs_import_with_class_defaults_and_vision() {
        let vision = r#""vision_config": {"hidden_size": 1152, "image_size": 896,
            "intermediate_size": 4304, "model_type": "siglip_vision_model",
            "num_attention_heads": 16, "num_hidden_layers": 27, "patch_size": 14,
            "vision_use_head": false}"#;
        let four = format!(
            r#"{{"architectures": ["Gemma3ForConditionalGeneration"], "mm_tokens_per_image": 256,
              "model_type": "gemma3", "torch_dtype": "bfloat16",
              "text_config": {{"hidden_size": 2560, "intermediate_size": 10240,
                "model_type": "gemma3_text", "num_hidden_layers": 34,
                "rope_scaling": {{"factor": 8.0, "rope_type": "linear"}}, "sliding_window": 1024}},
              {vision}}}"#
        );
        let twenty_seven = format!(
            r#"{{"architectures": ["Gemma3ForConditionalGeneration"], "mm_tokens_per_image": 256,
              "model_type": "gemma3",
              "text_config": {{"head_dim": 128, "hidden_size": 5376, "intermediate_size": 21504,
                "model_type": "gemma3_text", "num_attention_heads": 32, "num_hidden_layers": 62,
                "num_key_value_heads": 16, "query_pre_attn_scalar": 168,
                "rope_scaling": {{"factor": 8.0, "rope_type": "linear"}}, "sliding_window": 1024}},
              {vision}}}"#
        );
        for (text, id) in [(four, "gemma-3-4b"), (twenty_seven, "gemma-3-27b")] {
            let (a, warnings) = parse(&text).unwrap();
            let preset = model(id).unwrap().arch.clone();
            assert_eq!(
                Architecture {
                    family: preset.family.clone(),
                    ..a
                },
                preset,
                "{id}"
            );
            assert_eq!(warnings.len(), 1, "{warnings:?}");
            assert!(warnings[0].contains("SigLIP"), "{warnings:?}");
        }
        // Gemma 3 1B: a text-only config, no scaling, still two rotary tables.
        let one = r#"{"model_type": "gemma3_text", "hidden_size": 1152,
          "intermediate_size": 6912, "num_hidden_layers": 26, "num_attention_heads": 4,
          "num_key_value_heads": 1, "max_position_embeddings": 32768, "rope_scaling": null,
          "sliding_window": 512, "vocab_size": 262144}"#;
        let (a, warnings) = parse(one).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(a.vision, None);
        assert_eq!((a.rope.linear_factor, a.rope.local), (1, true));
        assert_eq!(a.rope.rows(a.max_positions), 65_536);
    }

    #[test]
    fn rope_scaling_is_read_only_when_linear() {
        let with = |scaling: &str| {
            LLAMA_31_8B.replace(
                r#""vocab_size": 128256"#,
                &format!(r#""vocab_size": 128256, "rope_scaling": {scaling}"#),
            )
        };
        for (scaling, factor, warned) in [
            (r#"{"rope_type": "linear", "factor": 4.0}"#, 4, false),
            (r#"{"type": "linear", "factor": 2}"#, 2, false),
            (r#"{"rope_type": "linear", "factor": 2.5}"#, 3, true),
            (r#"{"rope_type": "llama3", "factor": 8.0}"#, 1, false),
            (r#"{"rope_type": "yarn", "factor": 4.0}"#, 1, false),
            ("null", 1, false),
        ] {
            let (a, warnings) = parse(&with(scaling)).unwrap();
            assert_eq!(a.rope.linear_factor, factor, "{scaling}");
            assert_eq!(!warnings.is_empty(), warned, "{scaling}: {warnings:?}");
        }
        for bad in [
            r#"{"rope_type": "linear", "factor": 0.5}"#,
            r#"{"rope_type": "linear", "factor": 1e9}"#,
            r#"{"rope_type": "linear", "factor": "ocho"}"#,
        ] {
            let e = parse(&with(bad)).unwrap_err().to_string();
            assert!(e.contains("rope_scaling.factor"), "{bad}: {e}");
        }
    }

    #[test]
    fn deepseek_v2_lite_imports_mla() {
        // The fields of deepseek-ai/DeepSeek-V2-Lite's config.json that matter here.
        let text = r#"{"model_type": "deepseek_v2", "hidden_size": 2048,
          "intermediate_size": 10944, "moe_intermediate_size": 1408,
          "num_hidden_layers": 27, "num_attention_heads": 16, "num_key_value_heads": 16,
          "n_shared_experts": 2, "n_routed_experts": 64, "num_experts_per_tok": 6,
          "first_k_dense_replace": 1, "kv_lora_rank": 512, "q_lora_rank": null,
          "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128,
          "max_position_embeddings": 163840, "vocab_size": 102400,
          "tie_word_embeddings": false, "rms_norm_eps": 1e-06}"#;
        let (a, warnings) = parse(text).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(a, model("deepseek-v2-lite").unwrap().arch);
        assert_eq!(a.param_count().total, 15_706_484_224);
        // An MLA config without its head widths is an error, not a guess.
        let broken = text.replace(r#""v_head_dim": 128,"#, "");
        assert!(
            parse(&broken)
                .unwrap_err()
                .to_string()
                .contains("v_head_dim")
        );
    }

    #[test]
    fn malformed_configs_are_spanish_errors() {
        let cases = [
            ("", "JSON"),
            ("[1,2]", "objeto"),
            ("{}", "num_hidden_layers"),
            (r#"{"num_hidden_layers": -3}"#, "num_hidden_layers"),
            (r#"{"num_hidden_layers": 1e30}"#, "num_hidden_layers"),
            (
                r#"{"num_hidden_layers": 2, "hidden_size": 0}"#,
                "hidden_size",
            ),
            (
                r#"{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10}"#,
                "intermediate_size",
            ),
        ];
        for (text, want) in cases {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
        assert!(matches!(
            parse(&" ".repeat(MAX_CONFIG_BYTES + 1)),
            Err(ConfigError::TooLarge(_))
        ));
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,200}") {
            let _ = parse(&s);
        }

        #[test]
        fn mutated_configs_never_panic(cut in 0usize..400, byte in 0u8..128) {
            let mut text = LLAMA_31_8B.as_bytes().to_vec();
            let at = cut.min(text.len().saturating_sub(1));
            text[at] = byte;
            if let Ok(s) = std::str::from_utf8(&text)
                && let Ok((a, _)) = parse(s)
            {
                let _ = a.param_count();
            }
        }

        /// A field the importer does not read changes nothing; a mechanism it does not
        /// model is refused by name; a family it does not know still reads, with a
        /// warning (and the evaluation marks it approximate).
        #[test]
        fn unknown_fields_are_ignored_or_refused(
            key in "x_[a-z_]{1,20}",
            value in proptest::prop_oneof![
                proptest::strategy::Just("null".to_owned()),
                "-?[1-9][0-9]{0,11}",
                "\"[a-z ]{0,12}\"",
                proptest::strategy::Just("[1, 2, 3]".to_owned()),
                proptest::strategy::Just("{\"a\": true}".to_owned()),
            ],
            unmodelled in 0..UNMODELLED_KEYS.len(),
            family in "[a-z][a-z0-9_]{0,15}",
        ) {
            let base = parse(LLAMA_31_8B).unwrap().0;
            let with = |field: &str| LLAMA_31_8B.replacen('{', &format!("{{{field},"), 1);
            let (a, _) = parse(&with(&format!("\"{key}\": {value}"))).unwrap();
            proptest::prop_assert_eq!(&a, &base);
            let (name, what) = UNMODELLED_KEYS[unmodelled];
            match parse(&with(&format!("\"{name}\": [4, 8]"))) {
                Err(ConfigError::Unmodelled { what: said }) => proptest::prop_assert_eq!(said, what),
                other => proptest::prop_assert!(false, "{name}: {other:?}"),
            }
            let renamed = LLAMA_31_8B.replace("\"model_type\": \"llama\"", &format!("\"model_type\": \"{family}\""));
            let (a, warnings) = parse(&renamed).unwrap();
            proptest::prop_assert_eq!(&a.family, &family);
            proptest::prop_assert_eq!(
                warnings.iter().any(|w| w.contains("no está entre los conocidos")),
                !KNOWN_FAMILIES.contains(&family.as_str())
            );
        }
    }

    /// A config saved with a byte-order mark reads as without it; a document nested
    /// past serde_json's limit says so instead of pointing at a column.
    #[test]
    fn a_byte_order_mark_is_skipped_and_deep_nesting_is_named() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/configs");
        let text = std::fs::read_to_string(dir.join("gpt-oss-20b.json")).unwrap();
        let (a, _) = parse(&format!("\u{feff}{text}")).unwrap();
        assert_eq!(a.param_count().total, 20_914_757_184);
        let deep = format!("{{\"a\": {}", "[".repeat(100_000));
        let e = parse(&deep).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains("anida más de 128 niveles"), "{e}");
        let wide = r#"{"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
            "num_attention_heads": 128, "intermediate_size": 128, "vocab_size": 100}"#;
        let e = parse(wide).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains("cada cabeza tendría 0 dimensiones"), "{e}");
        // With its own head_dim, such a config is fine.
        let fine = wide.replace(r#""vocab_size""#, r#""head_dim": 16, "vocab_size""#);
        assert_eq!(parse(&fine).map(|(a, _)| a.head_dim).ok(), Some(16));
    }
}
