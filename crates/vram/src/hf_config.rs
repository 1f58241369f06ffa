//! Import of a Hugging Face `config.json` into an [`Architecture`].
//!
//! Field names differ by family (GPT-2 says `n_embd`, Llama `hidden_size`), defaults
//! differ too (Gemma ties embeddings unless told otherwise, Llama does not), and
//! multimodal configs nest the language model under `text_config`. Unknown families
//! fall back to the common field names with a warning. Nothing here panics: a
//! malformed file is a [`ConfigError`] with a Spanish message.

use serde_json::{Map, Value};

use crate::arch::{Architecture, AttnBias, Mla, Mlp, Moe, Norm, SlidingWindow};
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
    "gpt2",
    "gpt_neox",
    "gpt_bigcode",
    "bert",
    "deepseek",
    "deepseek_v2",
    "deepseek_v3",
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
    let value: Value = serde_json::from_str(text)
        .map_err(|e| ConfigError::Json(crate::units::json_problem(&e)))?;
    let root = value.as_object().ok_or(ConfigError::NotObject)?;
    let mut warnings = Vec::new();
    // Multimodal configs (Gemma 3, Llava, Mistral 3) nest the language model.
    let obj = match root.get("text_config").and_then(Value::as_object) {
        Some(text_config) => {
            warnings.push(
                "Se usa text_config (el modelo de lenguaje); la torre de visión no se cuenta."
                    .into(),
            );
            text_config
        }
        None => root,
    };
    let f = Fields(obj);
    let root_fields = Fields(root);
    let family = f
        .text("model_type")
        .or_else(|| root_fields.text("model_type"))
        .unwrap_or("desconocido")
        .to_owned();
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
        _ => hidden / heads,
    };
    let intermediate = match f.uint(&["intermediate_size", "n_inner", "ffn_dim"])? {
        Some(i) if i > 0 => i as u32,
        _ if plain => 4 * hidden,
        _ => return Err(ConfigError::Missing("intermediate_size")),
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
    } else if is(&["qwen2", "qwen2_moe"]) {
        AttnBias::Qkv
    } else if f.flag("attention_bias") == Some(true) {
        AttnBias::All
    } else {
        AttnBias::None
    };

    let experts = f
        .uint(&["num_local_experts", "num_experts", "n_routed_experts"])?
        .unwrap_or(0);
    let moe = if experts > 1 {
        Some(Moe {
            experts: experts as u32,
            experts_per_token: f.uint(&["num_experts_per_tok"])?.unwrap_or(2) as u32,
            expert_intermediate: f
                .uint(&["moe_intermediate_size"])?
                .map_or(intermediate, |v| v as u32),
            shared_experts: f.uint(&["n_shared_experts"])?.unwrap_or(0) as u32,
            dense_layers: f.uint(&["first_k_dense_replace"])?.unwrap_or(0) as u32,
        })
    } else {
        None
    };

    let sliding_window = match f.uint(&["sliding_window"])? {
        Some(w) if w > 0 && f.flag("use_sliding_window") != Some(false) => {
            let global_every = if is(&["gemma2"]) {
                2
            } else if is(&["gemma3", "gemma3_text"]) {
                f.uint(&["sliding_window_pattern"])?.map_or(6, |p| p as u32)
            } else {
                0
            };
            Some(SlidingWindow {
                window: w as u32,
                global_every,
            })
        }
        _ => None,
    };
    let mla = match f.uint(&["kv_lora_rank"])? {
        Some(kv_lora_rank) if kv_lora_rank > 0 => Some(Mla {
            q_lora_rank: f.uint(&["q_lora_rank"])?.unwrap_or(0) as u32,
            kv_lora_rank: kv_lora_rank as u32,
            qk_nope_head_dim: f.required(&["qk_nope_head_dim"])?,
            qk_rope_head_dim: f.required(&["qk_rope_head_dim"])?,
            v_head_dim: f.required(&["v_head_dim"])?,
        }),
        _ => None,
    };
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
        mlp_bias: plain || f.flag("mlp_bias") == Some(true),
        qk_norm: is(&["qwen3", "qwen3_moe", "gemma3", "gemma3_text"]),
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
        max_positions,
    };
    Ok((arch, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;
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
    }
}
