//! An imported architecture as text that fits in a link.
//!
//! The site lets a reader share an estimate of their own `config.json`. Sending the
//! whole config would make links of several KiB, and the site has no server to store
//! it, so the link carries the [`Architecture`] itself as compact JSON. What comes back
//! from a URL is untrusted: [`decode`] bounds its size and every dimension exactly as
//! the `config.json` importer does, so an edited link can never reach arithmetic the
//! importer would have refused.

use crate::arch::Architecture;
use crate::hf_config::{ConfigError, MAX_DIM};
use crate::import::StoredWeights;

/// Longest encoded architecture accepted (real ones are about 500 bytes).
pub const MAX_SHARED_BYTES: usize = 4096;

/// The architecture as compact JSON.
pub fn encode(a: &Architecture) -> String {
    serde_json::to_string(a).unwrap_or_default()
}

fn check(field: &'static str, v: u32, min: u32) -> Result<(), ConfigError> {
    if v < min || u64::from(v) > MAX_DIM {
        return Err(ConfigError::Invalid {
            field,
            value: v.to_string(),
        });
    }
    Ok(())
}

/// Reads back what [`encode`] wrote, refusing anything the importer would refuse.
pub fn decode(text: &str) -> Result<Architecture, ConfigError> {
    if text.len() > MAX_SHARED_BYTES {
        return Err(ConfigError::TooLarge(text.len()));
    }
    let a: Architecture = serde_json::from_str(text).map_err(|e| {
        ConfigError::Json(format!(
            "la arquitectura del enlace está dañada ({})",
            e.column()
        ))
    })?;
    for (field, v, min) in [
        ("num_hidden_layers", a.layers, 1),
        ("hidden_size", a.hidden, 1),
        ("num_attention_heads", a.heads, 1),
        ("num_key_value_heads", a.kv_heads, 1),
        ("head_dim", a.head_dim, 1),
        ("intermediate_size", a.intermediate, 1),
        ("vocab_size", a.vocab, 1),
        ("max_position_embeddings", a.max_positions, 1),
        ("norms_per_layer", a.norms_per_layer, 0),
        ("learned_positions", a.learned_positions, 0),
        ("type_vocab_size", a.token_types, 0),
    ] {
        check(field, v, min)?;
    }
    if a.norms_per_layer > 8 {
        return Err(ConfigError::Invalid {
            field: "norms_per_layer",
            value: a.norms_per_layer.to_string(),
        });
    }
    if let Some(m) = a.moe {
        check("n_routed_experts", m.experts, 1)?;
        check("num_experts_per_tok", m.experts_per_token, 0)?;
        check("moe_intermediate_size", m.expert_intermediate, 1)?;
        check("n_shared_experts", m.shared_experts, 0)?;
        check("first_k_dense_replace", m.dense_layers, 0)?;
    }
    if let Some(w) = a.sliding_window {
        check("sliding_window", w.window, 1)?;
        check("sliding_window_pattern", w.global_every, 0)?;
    }
    if let Some(m) = a.mla {
        check("q_lora_rank", m.q_lora_rank, 0)?;
        check("kv_lora_rank", m.kv_lora_rank, 1)?;
        check("qk_nope_head_dim", m.qk_nope_head_dim, 1)?;
        check("qk_rope_head_dim", m.qk_rope_head_dim, 0)?;
        check("v_head_dim", m.v_head_dim, 1)?;
    }
    if a.family.chars().count() > 64 {
        return Err(ConfigError::Invalid {
            field: "model_type",
            value: crate::units::clip(&a.family),
        });
    }
    Ok(a)
}

/// No real checkpoint is over 2^50 bytes (1 PiB); a larger number is a tampered link.
pub const MAX_SHARED_WEIGHTS: u64 = 1 << 50;

/// Exact weights as a link or an attribute carries them: `bytes` and `params` as
/// decimal text, `source` the name shown (bounded to 120 characters). A missing or
/// unreadable parameter count means none; unreadable bytes are an error.
pub fn weights(
    bytes: &str,
    params: Option<&str>,
    source: Option<&str>,
) -> Result<StoredWeights, String> {
    let number = |t: &str| {
        t.trim()
            .parse::<u64>()
            .ok()
            .filter(|&n| n > 0 && n <= MAX_SHARED_WEIGHTS)
    };
    let bytes = number(bytes).ok_or("no es un número de bytes válido (entero de 1 a 2^50).")?;
    let source = source
        .map(|s| s.trim().chars().take(120).collect::<String>())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "un enlace compartido".into());
    Ok(StoredWeights {
        bytes,
        params: params.and_then(number),
        source,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::catalog;
    use proptest::prelude::*;

    #[test]
    fn every_preset_round_trips_in_a_short_link() {
        for m in catalog::models() {
            let text = encode(&m.arch);
            assert!(text.len() < 1024, "{}: {}", m.id, text.len());
            assert_eq!(decode(&text).unwrap(), m.arch, "{}", m.id);
        }
    }

    #[test]
    fn edited_links_are_refused_in_spanish() {
        let good = encode(&catalog::model("llama-3.1-8b").unwrap().arch);
        for (bad, want) in [
            (
                good.replace("\"layers\":32", "\"layers\":0"),
                "num_hidden_layers",
            ),
            (
                good.replace("\"hidden\":4096", "\"hidden\":4000000000"),
                "hidden_size",
            ),
            (good.replace("\"vocab\":128256", "\"vocab\":-1"), "dañada"),
            ("{".into(), "dañada"),
            ("x".repeat(MAX_SHARED_BYTES + 1), "grande"),
        ] {
            let e = decode(&bad).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
    }

    #[test]
    fn shared_weights_are_bounded_numbers() {
        let w = weights("16060522496", Some("8030261248"), Some(" m.gguf ")).unwrap();
        assert_eq!(
            (w.bytes, w.params, w.source.as_str()),
            (16_060_522_496, Some(8_030_261_248), "m.gguf")
        );
        let w = weights("100", Some("muchos"), None).unwrap();
        assert_eq!(
            (w.params, w.source.as_str()),
            (None, "un enlace compartido")
        );
        for bad in [
            "",
            "0",
            "-5",
            "1e9",
            "1125899906842625",
            "99999999999999999999",
        ] {
            assert!(
                weights(bad, None, None).unwrap_err().contains("bytes"),
                "{bad}"
            );
        }
        assert_eq!(
            weights("1", None, Some(&"x".repeat(500)))
                .unwrap()
                .source
                .len(),
            120
        );
    }

    proptest! {
        #[test]
        fn decode_never_panics(s in ".{0,600}") {
            let _ = decode(&s);
        }

        #[test]
        fn decoded_architectures_estimate_without_panicking(
            layers in 1u32..(1 << 24), hidden in 1u32..(1 << 24), vocab in 1u32..(1 << 24),
        ) {
            let mut a = catalog::model("qwen3-30b-a3b").unwrap().arch.clone();
            a.layers = layers;
            a.hidden = hidden;
            a.vocab = vocab;
            if let Ok(a) = decode(&encode(&a)) {
                let _ = a.param_count();
            }
        }
    }
}
