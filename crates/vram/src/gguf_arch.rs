//! A GGUF header's metadata as an [`Architecture`], so a dropped `.gguf` file sizes its
//! own KV cache and activations, not a preset's.
//!
//! llama.cpp's converter writes the Hugging Face hyper-parameters under
//! `<arch>.block_count`, `<arch>.embedding_length`, `<arch>.attention.head_count`… (see
//! `gguf-py/gguf/constants.py`). What the metadata does not say (biases, a gated MLP,
//! a tied head) is read from which tensors block 0 and the top level hold. The weight
//! bytes themselves never come from here: the header's tensor table gives them exactly.

use crate::arch::{
    Architecture, AttnBias, LinearAttention, Mla, Mlp, Moe, Norm, Rope, SlidingWindow,
};
use crate::gguf::{GgufError, GgufHeader, MetaValue};
use crate::hf_config::MAX_DIM;

/// Architectures whose blocks are bidirectional encoders (no KV cache).
const ENCODERS: [&str; 4] = ["bert", "nomic-bert", "jina-bert-v2", "roberta"];

struct Meta<'a> {
    h: &'a GgufHeader,
    arch: &'a str,
}

impl Meta<'_> {
    /// `<arch>.<field>` as a dimension: absent is `Ok(None)`; a per-layer array, a
    /// negative or a huge value is an error naming the key.
    fn dim(&self, field: &str) -> Result<Option<u32>, GgufError> {
        let key = format!("{}.{field}", self.arch);
        match self.h.metadata.get(&key) {
            None => Ok(None),
            Some(MetaValue::Int(v)) => u32::try_from(*v)
                .ok()
                .filter(|&v| u64::from(v) <= MAX_DIM)
                .map(Some)
                .ok_or_else(|| GgufError::Invalid(format!("«{key}» = {v} está fuera de rango"))),
            Some(MetaValue::Array { .. }) => Err(GgufError::Invalid(format!(
                "«{key}» cambia de una capa a otra, y esta calculadora supone capas iguales"
            ))),
            Some(_) => Err(GgufError::Invalid(format!(
                "«{key}» no es un número entero"
            ))),
        }
    }

    fn required(&self, field: &str) -> Result<u32, GgufError> {
        self.dim(field)?
            .filter(|&v| v > 0)
            .ok_or_else(|| GgufError::Missing(format!("{}.{field}", self.arch)))
    }

    fn has(&self, tensor: &str) -> bool {
        self.h.names.contains(tensor)
    }
}

/// llama.cpp's architectures with Gated DeltaNet layers (Qwen3-Next, Qwen3.5), whose
/// converter writes the linear attention's widths as `ssm.*` keys.
const GATED_DELTANET: &[&str] = &["qwen3next", "qwen35", "qwen35moe"];

/// The Gated DeltaNet layers a Qwen3-Next or Qwen3.5 GGUF declares: llama.cpp's
/// converter writes `ssm.conv_kernel`, `ssm.state_size` (the key head dim),
/// `ssm.group_count` (the key heads), `ssm.time_step_rank` (the value heads),
/// `ssm.inner_size` (value heads × value head dim) and `full_attention_interval`. Any
/// other architecture with `ssm.*` keys (Mamba, Jamba, Granite 4 hybrids, Nemotron-H,
/// LFM2, Falcon-H1) keeps a state the estimator does not model: refused.
fn linear_attention(m: &Meta) -> Result<Option<LinearAttention>, GgufError> {
    let ssm = m.dim("ssm.inner_size")?.or(m.dim("ssm.conv_kernel")?);
    if ssm.is_none() {
        return Ok(None);
    }
    if !GATED_DELTANET.contains(&m.arch) {
        return Err(GgufError::Unmodelled(format!(
            "el estado recurrente de «{}» (claves ssm.*)",
            crate::units::clip(m.arch)
        )));
    }
    let value_heads = m.required("ssm.time_step_rank")?;
    Ok(Some(LinearAttention {
        full_every: m.required("full_attention_interval")?.max(2),
        key_heads: m.required("ssm.group_count")?,
        key_dim: m.required("ssm.state_size")?,
        value_heads,
        value_dim: (m.required("ssm.inner_size")? / value_heads).max(1),
        conv_kernel: m.required("ssm.conv_kernel")?,
        ssm_fp32: false,
    }))
}

/// The architecture the header describes, with Spanish notes on what was assumed.
pub fn architecture(h: &GgufHeader) -> Result<(Architecture, Vec<String>), GgufError> {
    let arch = h
        .architecture()
        .ok_or_else(|| GgufError::Missing("general.architecture".into()))?;
    let m = Meta { h, arch };
    let mut notes = Vec::new();
    let layers = m.required("block_count")?;
    let hidden = m.required("embedding_length")?;
    let heads = m.required("attention.head_count")?;
    let kv_heads = m.dim("attention.head_count_kv")?.unwrap_or(heads).max(1);
    let head_dim = match m.dim("attention.key_length")? {
        Some(k) if k > 0 => k,
        // More heads than channels: each would have none, and the cache would be 0 B.
        _ if heads > hidden => {
            return Err(GgufError::Invalid(format!(
                "attention.head_count ({heads}) es mayor que embedding_length ({hidden}) y no hay attention.key_length: cada cabeza tendría 0 dimensiones"
            )));
        }
        _ => hidden / heads,
    };
    let intermediate = match m.dim("feed_forward_length")? {
        Some(f) if f > 0 => f,
        _ => {
            notes.push("El GGUF no da feed_forward_length: se supone 4 × el ancho.".into());
            hidden.saturating_mul(4)
        }
    };
    let vocab = match (
        m.dim("vocab_size")?,
        h.metadata.get("tokenizer.ggml.tokens"),
    ) {
        (Some(v), _) if v > 0 => v,
        (_, Some(MetaValue::Array { len })) if *len > 0 && *len <= MAX_DIM => *len as u32,
        _ => return Err(GgufError::Missing("tokenizer.ggml.tokens".into())),
    };
    let max_positions = match m.dim("context_length")? {
        Some(c) if c > 0 => c,
        _ => {
            notes.push("El GGUF no da context_length: se supone 4096.".into());
            4096
        }
    };
    let moe = match m.dim("expert_count")? {
        Some(experts) if experts > 1 => Some(Moe {
            experts,
            experts_per_token: m.dim("expert_used_count")?.unwrap_or(1).max(1),
            expert_intermediate: m.dim("expert_feed_forward_length")?.unwrap_or(intermediate),
            shared_experts: m.dim("expert_shared_count")?.unwrap_or(0),
            dense_layers: m.dim("leading_dense_block_count")?.unwrap_or(0),
            shared_intermediate: m.dim("expert_shared_feed_forward_length")?.unwrap_or(0),
        }),
        _ => None,
    };
    let mla = match m.dim("attention.kv_lora_rank")? {
        Some(kv_lora_rank) if kv_lora_rank > 0 => {
            let rope = m.dim("rope.dimension_count")?.unwrap_or(64);
            Some(Mla {
                q_lora_rank: m.dim("attention.q_lora_rank")?.unwrap_or(0),
                kv_lora_rank,
                qk_nope_head_dim: head_dim.saturating_sub(rope),
                qk_rope_head_dim: rope,
                v_head_dim: m.dim("attention.value_length")?.unwrap_or(head_dim),
            })
        }
        _ => None,
    };
    // Gemma 2 and gpt-oss alternate local and global layers (`set_swa_pattern(2)` in
    // llama.cpp's loader); Gemma 3 has one global in six.
    let sliding_window = match m.dim("attention.sliding_window")? {
        Some(window) if window > 0 => Some(SlidingWindow {
            window,
            global_every: match arch {
                "gemma2" | "gpt-oss" => 2,
                "gemma3" => 6,
                _ => 0,
            },
        }),
        _ => None,
    };
    let linear = linear_attention(&m)?;
    let block = |t: &str| m.has(&format!("blk.0.{t}"));
    let attn_bias = match (
        block("attn_output.bias"),
        block("attn_q.bias") || block("attn_qkv.bias"),
    ) {
        (true, _) => AttnBias::All,
        (false, true) => AttnBias::Qkv,
        _ => AttnBias::None,
    };
    let norms = [
        "attn_norm.weight",
        "ffn_norm.weight",
        "post_attention_norm.weight",
        "post_ffw_norm.weight",
    ]
    .iter()
    .filter(|t| block(t))
    .count() as u32;
    let encoder_only = ENCODERS.contains(&arch);
    let a = Architecture {
        family: arch.chars().take(40).collect(),
        layers,
        hidden,
        heads,
        kv_heads,
        head_dim,
        intermediate,
        mlp: if block("ffn_gate.weight") || block("ffn_gate_exps.weight") {
            Mlp::Gated
        } else {
            Mlp::Plain
        },
        vocab,
        tied_embeddings: !m.has("output.weight"),
        norm: if block("attn_norm.bias") {
            Norm::Layer
        } else {
            Norm::Rms
        },
        norms_per_layer: if norms == 0 { 2 } else { norms },
        attn_bias,
        mlp_bias: block("ffn_up.bias"),
        qk_norm: block("attn_q_norm.weight"),
        learned_positions: if m.has("position_embd.weight") {
            max_positions
        } else {
            0
        },
        token_types: if m.has("token_types.weight") { 2 } else { 0 },
        pooler: false,
        encoder_only,
        dropout: false,
        moe,
        sliding_window,
        mla,
        linear,
        // Qwen3-Next and Qwen3.5 gate their attention output with a doubled query.
        attn_gate: linear.is_some(),
        sinks: m.has("blk.0.attn_sinks.weight") || arch == "gpt-oss",
        // The file's own bytes come from its header.
        checkpoint: None,
        // GGUF files carry no vision tower (llama.cpp loads it from an mmproj file).
        rope: Rope::default(),
        vision: None,
        max_positions,
    };
    a.within_budget()?;
    Ok((a, notes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn header(arch: &str, ints: &[(&str, i128)], names: &[&str]) -> GgufHeader {
        let mut metadata = BTreeMap::new();
        metadata.insert(
            "general.architecture".to_owned(),
            MetaValue::Text(arch.into()),
        );
        for (k, v) in ints {
            metadata.insert(format!("{arch}.{k}"), MetaValue::Int(*v));
        }
        metadata.insert(
            "tokenizer.ggml.tokens".into(),
            MetaValue::Array { len: 128_256 },
        );
        GgufHeader {
            version: 3,
            metadata,
            names: names.iter().map(|s| (*s).to_owned()).collect(),
            ..GgufHeader::default()
        }
    }

    const LLAMA_TENSORS: [&str; 10] = [
        "token_embd.weight",
        "output_norm.weight",
        "output.weight",
        "blk.0.attn_norm.weight",
        "blk.0.attn_q.weight",
        "blk.0.attn_k.weight",
        "blk.0.attn_output.weight",
        "blk.0.ffn_norm.weight",
        "blk.0.ffn_gate.weight",
        "blk.0.ffn_up.weight",
    ];

    /// Llama-3.1-8B as llama.cpp's converter writes it maps back to the preset's
    /// architecture, so the parameter count is the published 8 030 261 248.
    #[test]
    fn llama_31_8b_round_trips() {
        let h = header(
            "llama",
            &[
                ("block_count", 32),
                ("embedding_length", 4096),
                ("attention.head_count", 32),
                ("attention.head_count_kv", 8),
                ("feed_forward_length", 14_336),
                ("context_length", 131_072),
                ("vocab_size", 128_256),
            ],
            &LLAMA_TENSORS,
        );
        let (a, notes) = architecture(&h).unwrap_or_else(|e| panic!("{e}"));
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(a.param_count().total, 8_030_261_248);
        assert_eq!((a.kv_heads, a.head_dim, a.mlp), (8, 128, Mlp::Gated));
        assert!(!a.tied_embeddings);
    }

    /// More heads than channels and no key length: refused, not a 0-byte KV cache.
    #[test]
    fn more_heads_than_channels_is_refused() {
        let h = header(
            "llama",
            &[
                ("block_count", 2),
                ("embedding_length", 64),
                ("attention.head_count", 128),
                ("feed_forward_length", 128),
            ],
            &LLAMA_TENSORS,
        );
        let e = architecture(&h).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains("cada cabeza tendría 0 dimensiones"), "{e}");
    }

    #[test]
    fn tensors_decide_biases_head_and_norms() {
        let h = header(
            "qwen2",
            &[
                ("block_count", 24),
                ("embedding_length", 896),
                ("attention.head_count", 14),
                ("attention.head_count_kv", 2),
                ("feed_forward_length", 4864),
            ],
            &[
                "blk.0.attn_q.bias",
                "blk.0.ffn_gate.weight",
                "blk.0.attn_norm.weight",
            ],
        );
        let (a, notes) = architecture(&h).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.attn_bias, AttnBias::Qkv);
        assert!(a.tied_embeddings, "no output.weight means a tied head");
        assert_eq!(a.vocab, 128_256, "from the tokenizer's token list");
        assert_eq!(a.max_positions, 4096);
        assert_eq!(notes.len(), 1, "{notes:?}");
    }

    #[test]
    fn deepseek_mla_and_moe() {
        let h = header(
            "deepseek2",
            &[
                ("block_count", 27),
                ("embedding_length", 2048),
                ("attention.head_count", 16),
                ("attention.head_count_kv", 16),
                ("attention.key_length", 192),
                ("attention.value_length", 128),
                ("attention.kv_lora_rank", 512),
                ("rope.dimension_count", 64),
                ("feed_forward_length", 10_944),
                ("expert_count", 64),
                ("expert_used_count", 6),
                ("expert_shared_count", 2),
                ("expert_feed_forward_length", 1408),
                ("leading_dense_block_count", 1),
                ("context_length", 163_840),
            ],
            &["blk.0.ffn_gate.weight", "output.weight"],
        );
        let (a, _) = architecture(&h).unwrap_or_else(|e| panic!("{e}"));
        let mla = a.mla.unwrap_or_else(|| panic!("MLA expected"));
        assert_eq!(
            (mla.kv_lora_rank, mla.qk_rope_head_dim, mla.qk_nope_head_dim),
            (512, 64, 128)
        );
        let moe = a.moe.unwrap_or_else(|| panic!("MoE expected"));
        assert_eq!(
            (moe.experts, moe.experts_per_token, moe.dense_layers),
            (64, 6, 1)
        );
    }

    #[test]
    fn missing_or_odd_fields_are_spanish_errors() {
        let h = header("llama", &[("embedding_length", 4096)], &[]);
        let e = architecture(&h).unwrap_err().to_string();
        assert!(e.contains("llama.block_count"), "{e}");
        let mut h = header(
            "openelm",
            &[("block_count", 16), ("embedding_length", 1280)],
            &[],
        );
        h.metadata.insert(
            "openelm.attention.head_count".into(),
            MetaValue::Array { len: 16 },
        );
        let e = architecture(&h).unwrap_err().to_string();
        assert!(e.contains("cambia de una capa a otra"), "{e}");
        let h = header(
            "llama",
            &[
                ("block_count", -3),
                ("embedding_length", 4096),
                ("attention.head_count", 32),
            ],
            &[],
        );
        let e = architecture(&h).unwrap_err().to_string();
        assert!(e.contains("fuera de rango"), "{e}");
        assert!(architecture(&GgufHeader::default()).is_err());
    }
}
