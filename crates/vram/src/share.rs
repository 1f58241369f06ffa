//! An imported architecture as text that fits in a link or a widget attribute.
//!
//! The site lets a reader share an estimate of their own `config.json`. Sending the
//! whole config would make links of several KiB, and the site has no server to store
//! it, so the link carries the [`Architecture`] itself, in a compact positional text
//! (`a1:` + numbers + `:` + family, about 80 characters) that the browser bundles read
//! without a JSON parser: keeping serde_json out of the estimator's and the widget's
//! bundles saves about 17 KB gzip each. Links written before it carried the
//! architecture as JSON; [`decode_json`] still reads those (the importer bundle calls
//! it, loaded only when such a link arrives).
//!
//! What comes back from a URL is untrusted: both decoders bound the size and check
//! every dimension exactly as the `config.json` importer does, so an edited link can
//! never reach arithmetic the importer would have refused.

use crate::arch::LayerExperts;
use crate::arch::{
    Architecture, AttnBias, LinearAttention, Mla, Mlp, Moe, Norm, Rope, SlidingWindow, Vision,
};
use crate::dtype::Dtype;
use crate::hf_config::{ConfigError, MAX_DIM};
use crate::import::StoredWeights;
use crate::quant::WeightFormat;

/// The link keys of a shared model, the same on the estimator page and in the
/// widget's "open in vramlab" link: the architecture as [`encode`]'s text, and the
/// exact weights (bytes, parameters and where they came from, read by [`weights`]).
pub const ARCH_KEY: &str = "arquitectura";
pub const WEIGHTS_KEY: &str = "pesos";
pub const PARAMS_KEY: &str = "parametros";
pub const SOURCE_KEY: &str = "origen";
/// A GGUF file's expert tensors per block ([`encode_experts`]).
pub const EXPERTS_KEY: &str = "expertos-gguf";

/// Longest encoded architecture accepted (JSON ones are about 500 bytes).
pub const MAX_SHARED_BYTES: usize = 4096;

/// The version tag of the compact text.
const TAG: &str = "a1";

/// Why shared architecture text was refused. `Display` is Spanish.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShareError {
    #[error("La arquitectura del enlace es demasiado larga ({0} bytes).")]
    TooLarge(usize),
    #[error("La arquitectura del enlace está dañada ({0}).")]
    Damaged(&'static str),
    #[error("La arquitectura del enlace está dañada: {0}")]
    Invalid(#[from] ConfigError),
    #[error("{0}")]
    OverBudget(crate::arch::OverBudget),
}

fn flag(b: bool) -> u32 {
    u32::from(b)
}

/// An architecture as [`encode`] writes it, held as text by a page that never
/// evaluates it: the estimator's page passes it to the engine's bundle in the link,
/// which decodes it, so the page's own bundle carries neither [`encode`] nor
/// [`decode`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArchText(pub String);

/// An architecture as a page holds it, read from and written to `vram::share` text.
pub trait Shared: Sized {
    /// Its `vram::share` text.
    fn to_share(&self) -> String;
    /// From `vram::share` text.
    fn from_share(text: &str) -> Result<Self, ShareError>;
}

impl Shared for Architecture {
    fn to_share(&self) -> String {
        encode(self)
    }
    fn from_share(text: &str) -> Result<Self, ShareError> {
        decode(text)
    }
}

/// Kept as it came; [`decode`] checks it where it is evaluated. Only its length is
/// checked here, as [`decode`] checks it first.
impl Shared for ArchText {
    fn to_share(&self) -> String {
        self.0.clone()
    }
    fn from_share(text: &str) -> Result<Self, ShareError> {
        if text.len() > MAX_SHARED_BYTES {
            return Err(ShareError::TooLarge(text.len()));
        }
        Ok(ArchText(text.to_owned()))
    }
}

/// The architecture as compact text: `a1:` + dot-separated numbers (optional parts as
/// `-` or comma-separated groups) + `:` + the family.
pub fn encode(a: &Architecture) -> String {
    let group = |values: Option<Vec<u32>>| match values {
        None => "-".to_owned(),
        Some(v) => v.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
    };
    let numbers = [
        a.layers,
        a.hidden,
        a.heads,
        a.kv_heads,
        a.head_dim,
        a.intermediate,
        match a.mlp {
            Mlp::Gated => 0,
            Mlp::Plain => 1,
        },
        a.vocab,
        flag(a.tied_embeddings),
        match a.norm {
            Norm::Rms => 0,
            Norm::Layer => 1,
        },
        a.norms_per_layer,
        match a.attn_bias {
            AttnBias::None => 0,
            AttnBias::Qkv => 1,
            AttnBias::All => 2,
        },
        flag(a.mlp_bias),
        flag(a.qk_norm),
        a.learned_positions,
        a.token_types,
        flag(a.pooler),
        flag(a.encoder_only),
        flag(a.dropout),
        a.max_positions,
    ];
    let mut parts: Vec<String> = numbers.iter().map(u32::to_string).collect();
    parts.push(group(a.moe.map(|m| {
        vec![
            m.experts,
            m.experts_per_token,
            m.expert_intermediate,
            m.shared_experts,
            m.dense_layers,
        ]
    })));
    parts.push(group(
        a.sliding_window.map(|w| vec![w.window, w.global_every]),
    ));
    parts.push(group(a.mla.map(|m| {
        vec![
            m.q_lora_rank,
            m.kv_lora_rank,
            m.qk_nope_head_dim,
            m.qk_rope_head_dim,
            m.v_head_dim,
        ]
    })));
    // Added after the first links were written: both left out when there is nothing to
    // say, so those links and these read alike.
    let vision = a.vision.map(|v| {
        vec![
            v.layers,
            v.hidden,
            v.intermediate,
            v.patch,
            v.image,
            v.tokens_per_image,
            v.heads,
        ]
    });
    // Added for the hybrid and 2025–26 models: the shared experts' own width, the
    // gated attention output and attention sinks, then Gated DeltaNet.
    let shared = a.moe.map_or(0, |m| m.shared_intermediate);
    let stored = checkpoint_code(a.checkpoint);
    let extra = (shared > 0 || a.attn_gate || a.sinks || stored > 0)
        .then(|| vec![shared, flag(a.attn_gate), flag(a.sinks), stored]);
    let linear = a.linear.map(|l| {
        vec![
            l.full_every,
            l.key_heads,
            l.key_dim,
            l.value_heads,
            l.value_dim,
            l.conv_kernel,
            flag(l.ssm_fp32),
        ]
    });
    let later = extra.is_some() || linear.is_some();
    if !a.rope.is_default() || vision.is_some() || later {
        parts.push(group(
            (!a.rope.is_default()).then(|| vec![a.rope.linear_factor, flag(a.rope.local)]),
        ));
        parts.push(group(vision));
    }
    if later {
        parts.push(group(extra));
        parts.push(group(linear));
    }
    format!("{TAG}:{}:{}", parts.join("."), a.family)
}

/// The checkpoint's storage as one number of the extras group: 0 when it is 16-bit,
/// small codes for the fixed formats, `100000 × bits + group` for GPTQ/AWQ.
fn checkpoint_code(stored: Option<WeightFormat>) -> u32 {
    match stored {
        None => 0,
        Some(WeightFormat::Mxfp4) => 1,
        Some(WeightFormat::Nvfp4) => 2,
        Some(WeightFormat::Fp8Block) => 3,
        Some(WeightFormat::Plain { dtype: Dtype::Fp8 }) => 4,
        Some(WeightFormat::Plain { dtype: Dtype::Fp32 }) => 5,
        Some(WeightFormat::Plain { dtype: Dtype::Int8 }) => 6,
        Some(WeightFormat::Nf4 {
            double_quant: false,
        }) => 7,
        Some(WeightFormat::Nf4 { double_quant: true }) => 8,
        Some(WeightFormat::GroupQuant { bits, group }) => 100_000 * u32::from(bits) + group,
        // No importer stores any other format as a checkpoint's.
        Some(_) => 0,
    }
}

/// Reads back [`checkpoint_code`], refusing a code it never writes.
fn checkpoint_from_code(code: u32) -> Result<Option<WeightFormat>, ShareError> {
    Ok(Some(match code {
        0 => return Ok(None),
        1 => WeightFormat::Mxfp4,
        2 => WeightFormat::Nvfp4,
        3 => WeightFormat::Fp8Block,
        4 => WeightFormat::Plain { dtype: Dtype::Fp8 },
        5 => WeightFormat::Plain { dtype: Dtype::Fp32 },
        6 => WeightFormat::Plain { dtype: Dtype::Int8 },
        7 => WeightFormat::Nf4 {
            double_quant: false,
        },
        8 => WeightFormat::Nf4 { double_quant: true },
        c if (200_008..=804_096).contains(&c) && (2..=8).contains(&(c / 100_000)) => {
            let group = c % 100_000;
            if !(8..=4096).contains(&group) {
                return Err(ShareError::Damaged("formato del checkpoint"));
            }
            WeightFormat::GroupQuant {
                bits: (c / 100_000) as u8,
                group,
            }
        }
        _ => return Err(ShareError::Damaged("formato del checkpoint")),
    }))
}

/// Reads back what [`encode`] wrote, refusing anything the importer would refuse.
pub fn decode(text: &str) -> Result<Architecture, ShareError> {
    if text.len() > MAX_SHARED_BYTES {
        return Err(ShareError::TooLarge(text.len()));
    }
    let rest = text
        .trim()
        .strip_prefix(TAG)
        .and_then(|r| r.strip_prefix(':'))
        .ok_or(ShareError::Damaged("versión"))?;
    let (numbers, family) = rest.split_once(':').ok_or(ShareError::Damaged("familia"))?;
    let mut parts: Vec<&str> = numbers.split('.').collect();
    // Optional trailing parts: rope and vision, then the extras and Gated DeltaNet.
    let (extra, linear) = if parts.len() == 27 {
        let linear = parts.pop().unwrap_or("-");
        let extra = parts.pop().unwrap_or("-");
        (extra, linear)
    } else {
        ("-", "-")
    };
    let (rope, vision) = if parts.len() == 25 {
        let vision = parts.pop().unwrap_or("-");
        let rope = parts.pop().unwrap_or("-");
        (rope, vision)
    } else {
        ("-", "-")
    };
    let [
        layers,
        hidden,
        heads,
        kv_heads,
        head_dim,
        intermediate,
        mlp,
        vocab,
        tied,
        norm,
        norms_per_layer,
        attn_bias,
        mlp_bias,
        qk_norm,
        learned_positions,
        token_types,
        pooler,
        encoder_only,
        dropout,
        max_positions,
        moe,
        window,
        mla,
    ] = parts.as_slice()
    else {
        return Err(ShareError::Damaged("número de campos"));
    };
    let n = |t: &str| t.parse::<u32>().map_err(|_| ShareError::Damaged("número"));
    let b = |t: &str| match t {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err(ShareError::Damaged("sí o no")),
    };
    let group = |t: &str, len: usize| -> Result<Option<Vec<u32>>, ShareError> {
        if t == "-" {
            return Ok(None);
        }
        let v = t.split(',').map(n).collect::<Result<Vec<u32>, _>>()?;
        if v.len() == len {
            Ok(Some(v))
        } else {
            Err(ShareError::Damaged("grupo"))
        }
    };
    // Links written before the checkpoint format joined the group carry three numbers.
    let extra = match group(extra, 4) {
        Err(_) => group(extra, 3)?.map(|mut v| {
            v.push(0);
            v
        }),
        read => read?,
    }
    .unwrap_or_else(|| vec![0, 0, 0, 0]);
    let bit = |v: u32| match v {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(ShareError::Damaged("sí o no")),
    };
    let a = Architecture {
        family: family.to_owned(),
        layers: n(layers)?,
        hidden: n(hidden)?,
        heads: n(heads)?,
        kv_heads: n(kv_heads)?,
        head_dim: n(head_dim)?,
        intermediate: n(intermediate)?,
        mlp: match *mlp {
            "0" => Mlp::Gated,
            "1" => Mlp::Plain,
            _ => return Err(ShareError::Damaged("MLP")),
        },
        vocab: n(vocab)?,
        tied_embeddings: b(tied)?,
        norm: match *norm {
            "0" => Norm::Rms,
            "1" => Norm::Layer,
            _ => return Err(ShareError::Damaged("normalización")),
        },
        norms_per_layer: n(norms_per_layer)?,
        attn_bias: match *attn_bias {
            "0" => AttnBias::None,
            "1" => AttnBias::Qkv,
            "2" => AttnBias::All,
            _ => return Err(ShareError::Damaged("sesgos")),
        },
        mlp_bias: b(mlp_bias)?,
        qk_norm: b(qk_norm)?,
        learned_positions: n(learned_positions)?,
        token_types: n(token_types)?,
        pooler: b(pooler)?,
        encoder_only: b(encoder_only)?,
        dropout: b(dropout)?,
        max_positions: n(max_positions)?,
        moe: group(moe, 5)?.map(|v| Moe {
            experts: v[0],
            experts_per_token: v[1],
            expert_intermediate: v[2],
            shared_experts: v[3],
            dense_layers: v[4],
            shared_intermediate: extra[0],
        }),
        attn_gate: bit(extra[1])?,
        sinks: bit(extra[2])?,
        checkpoint: checkpoint_from_code(extra[3])?,
        linear: match group(linear, 7)? {
            Some(v) => Some(LinearAttention {
                full_every: v[0],
                key_heads: v[1],
                key_dim: v[2],
                value_heads: v[3],
                value_dim: v[4],
                conv_kernel: v[5],
                ssm_fp32: bit(v[6])?,
            }),
            None => None,
        },
        sliding_window: group(window, 2)?.map(|v| SlidingWindow {
            window: v[0],
            global_every: v[1],
        }),
        mla: group(mla, 5)?.map(|v| Mla {
            q_lora_rank: v[0],
            kv_lora_rank: v[1],
            qk_nope_head_dim: v[2],
            qk_rope_head_dim: v[3],
            v_head_dim: v[4],
        }),
        rope: match group(rope, 2)? {
            None => Rope::default(),
            Some(v) => Rope {
                linear_factor: v[0],
                local: match v[1] {
                    0 => false,
                    1 => true,
                    _ => return Err(ShareError::Damaged("sí o no")),
                },
            },
        },
        // Links written before the tower's heads were carried have six numbers.
        vision: group(vision, if vision.split(',').count() == 6 { 6 } else { 7 })?.map(|v| {
            Vision {
                layers: v[0],
                hidden: v[1],
                heads: v
                    .get(6)
                    .copied()
                    .unwrap_or_else(|| Vision::siglip_heads(v[1])),
                intermediate: v[2],
                patch: v[3],
                image: v[4],
                tokens_per_image: v[5],
            }
        }),
    };
    checked(a).map_err(|e| match e {
        ConfigError::OverBudget(b) => ShareError::OverBudget(b),
        e => ShareError::Invalid(e),
    })
}

/// Reads an architecture as links carried it before [`encode`]'s compact text: the
/// JSON of its serde form. Read through `serde_json::Value`, which the importer bundle
/// already carries for `config.json`, field by field: a derived deserializer would add
/// about 20 KB to that bundle for links that are no longer written.
pub fn decode_json(text: &str) -> Result<Architecture, ShareError> {
    use serde_json::Value;
    if text.len() > MAX_SHARED_BYTES {
        return Err(ShareError::TooLarge(text.len()));
    }
    let damaged = || ShareError::Damaged("JSON");
    let v: Value = serde_json::from_str(text).map_err(|_| damaged())?;
    let object = |v: &Value| v.as_object().cloned().ok_or_else(damaged);
    let top = object(&v)?;
    let n = |o: &serde_json::Map<String, Value>, k: &str, default: Option<u32>| match o.get(k) {
        Some(x) => x
            .as_u64()
            .and_then(|x| u32::try_from(x).ok())
            .ok_or_else(damaged),
        None => default.ok_or_else(damaged),
    };
    let b = |k: &str| match top.get(k) {
        Some(x) => x.as_bool().ok_or_else(damaged),
        None => Ok(false),
    };
    let word = |k: &str| top.get(k).and_then(Value::as_str).ok_or_else(damaged);
    let optional = |k: &str| match top.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => object(x).map(Some),
    };
    let a = Architecture {
        family: word("family")?.to_owned(),
        layers: n(&top, "layers", None)?,
        hidden: n(&top, "hidden", None)?,
        heads: n(&top, "heads", None)?,
        kv_heads: n(&top, "kv_heads", None)?,
        head_dim: n(&top, "head_dim", None)?,
        intermediate: n(&top, "intermediate", None)?,
        mlp: match word("mlp")? {
            "gated" => Mlp::Gated,
            "plain" => Mlp::Plain,
            _ => return Err(damaged()),
        },
        vocab: n(&top, "vocab", None)?,
        tied_embeddings: b("tied_embeddings")?,
        norm: match word("norm")? {
            "rms" => Norm::Rms,
            "layer" => Norm::Layer,
            _ => return Err(damaged()),
        },
        norms_per_layer: n(&top, "norms_per_layer", Some(2))?,
        attn_bias: match word("attn_bias")? {
            "none" => AttnBias::None,
            "qkv" => AttnBias::Qkv,
            "all" => AttnBias::All,
            _ => return Err(damaged()),
        },
        mlp_bias: b("mlp_bias")?,
        qk_norm: b("qk_norm")?,
        learned_positions: n(&top, "learned_positions", Some(0))?,
        token_types: n(&top, "token_types", Some(0))?,
        pooler: b("pooler")?,
        encoder_only: b("encoder_only")?,
        dropout: b("dropout")?,
        moe: match optional("moe")? {
            None => None,
            Some(m) => Some(Moe {
                experts: n(&m, "experts", None)?,
                experts_per_token: n(&m, "experts_per_token", None)?,
                expert_intermediate: n(&m, "expert_intermediate", None)?,
                shared_experts: n(&m, "shared_experts", Some(0))?,
                dense_layers: n(&m, "dense_layers", Some(0))?,
                shared_intermediate: n(&m, "shared_intermediate", Some(0))?,
            }),
        },
        sliding_window: match optional("sliding_window")? {
            None => None,
            Some(w) => Some(SlidingWindow {
                window: n(&w, "window", None)?,
                global_every: n(&w, "global_every", None)?,
            }),
        },
        linear: match optional("linear")? {
            None => None,
            Some(l) => Some(LinearAttention {
                full_every: n(&l, "full_every", None)?,
                key_heads: n(&l, "key_heads", None)?,
                key_dim: n(&l, "key_dim", None)?,
                value_heads: n(&l, "value_heads", None)?,
                value_dim: n(&l, "value_dim", None)?,
                conv_kernel: n(&l, "conv_kernel", None)?,
                ssm_fp32: l.get("ssm_fp32").and_then(Value::as_bool).unwrap_or(false),
            }),
        },
        attn_gate: b("attn_gate")?,
        sinks: b("sinks")?,
        checkpoint: match top.get("checkpoint") {
            None | Some(Value::Null) => None,
            // Through the link's code, so that only formats a checkpoint can have pass.
            Some(v) => match v.as_str().map(WeightFormat::parse) {
                Some(Ok(f)) if checkpoint_code(Some(f)) > 0 => {
                    checkpoint_from_code(checkpoint_code(Some(f))).map_err(|_| damaged())?
                }
                _ => return Err(damaged()),
            },
        },
        mla: match optional("mla")? {
            None => None,
            Some(m) => Some(Mla {
                q_lora_rank: n(&m, "q_lora_rank", None)?,
                kv_lora_rank: n(&m, "kv_lora_rank", None)?,
                qk_nope_head_dim: n(&m, "qk_nope_head_dim", None)?,
                qk_rope_head_dim: n(&m, "qk_rope_head_dim", None)?,
                v_head_dim: n(&m, "v_head_dim", None)?,
            }),
        },
        rope: match optional("rope")? {
            None => Rope::default(),
            Some(r) => Rope {
                linear_factor: n(&r, "linear_factor", Some(1))?,
                local: match r.get("local") {
                    Some(x) => x.as_bool().ok_or_else(damaged)?,
                    None => false,
                },
            },
        },
        vision: match optional("vision")? {
            None => None,
            Some(v) => Some(Vision {
                layers: n(&v, "layers", None)?,
                hidden: n(&v, "hidden", None)?,
                heads: match v.get("heads") {
                    Some(_) => n(&v, "heads", None)?,
                    None => Vision::siglip_heads(n(&v, "hidden", None)?),
                },
                intermediate: n(&v, "intermediate", None)?,
                patch: n(&v, "patch", None)?,
                image: n(&v, "image", None)?,
                tokens_per_image: n(&v, "tokens_per_image", None)?,
            }),
        },
        max_positions: n(&top, "max_positions", None)?,
    };
    checked(a).map_err(|e| match e {
        ConfigError::OverBudget(b) => ShareError::OverBudget(b),
        e => ShareError::Invalid(e),
    })
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

/// Every dimension within the importer's bounds.
fn checked(a: Architecture) -> Result<Architecture, ConfigError> {
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
    if let Some(l) = a.linear {
        check("full_attention_interval", l.full_every, 2)?;
        check("linear_num_key_heads", l.key_heads, 1)?;
        check("linear_key_head_dim", l.key_dim, 1)?;
        check("linear_num_value_heads", l.value_heads, 1)?;
        check("linear_value_head_dim", l.value_dim, 1)?;
        check("linear_conv_kernel_dim", l.conv_kernel, 1)?;
    }
    if let Some(m) = a.moe {
        check("shared_expert_intermediate_size", m.shared_intermediate, 0)?;
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
    if !(1..=1024).contains(&a.rope.linear_factor) {
        return Err(ConfigError::Invalid {
            field: "rope_scaling.factor",
            value: a.rope.linear_factor.to_string(),
        });
    }
    if let Some(v) = a.vision {
        check("vision_config.num_hidden_layers", v.layers, 1)?;
        check("vision_config.hidden_size", v.hidden, 1)?;
        check("vision_config.num_attention_heads", v.heads, 1)?;
        check("vision_config.intermediate_size", v.intermediate, 1)?;
        check("vision_config.patch_size", v.patch, 1)?;
        check("vision_config.image_size", v.image, 1)?;
        check("mm_tokens_per_image", v.tokens_per_image, 1)?;
    }
    a.within_budget()?;
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
        experts: Vec::new(),
        shard: None,
    })
}

/// Longest expert list text accepted from a link.
pub const MAX_EXPERTS_TEXT: usize = 8192;

/// A GGUF file's expert tensors per block as link text: `bytes.largest` per block,
/// `_`-separated, with a run of equal blocks written once as `count*bytes.largest`
/// ("3*0.0_81*2566914048.855638016"), so a model whose blocks store their experts alike
/// costs a few dozen characters.
pub fn encode_experts(experts: &[LayerExperts]) -> String {
    let mut groups: Vec<(usize, LayerExperts)> = Vec::new();
    for &e in experts {
        match groups.last_mut() {
            Some((n, last)) if *last == e => *n += 1,
            _ => groups.push((1, e)),
        }
    }
    groups
        .iter()
        .map(|(n, e)| match n {
            1 => format!("{}.{}", e.bytes, e.largest),
            n => format!("{n}*{}.{}", e.bytes, e.largest),
        })
        .collect::<Vec<_>>()
        .join("_")
}

/// Reads [`encode_experts`]'s text from an untrusted link: at most
/// [`MAX_EXPERTS_TEXT`] bytes and [`crate::gguf::MAX_EXPERT_LAYER`] blocks, each figure
/// at most [`MAX_SHARED_WEIGHTS`] and no tensor larger than its block. Anything else is
/// refused whole.
pub fn decode_experts(text: &str) -> Result<Vec<LayerExperts>, ShareError> {
    if text.len() > MAX_EXPERTS_TEXT {
        return Err(ShareError::TooLarge(text.len()));
    }
    let damaged = || ShareError::Damaged("expertos");
    let number = |t: &str| {
        t.parse::<u64>()
            .ok()
            .filter(|&n| n <= MAX_SHARED_WEIGHTS)
            .ok_or_else(damaged)
    };
    let mut out = Vec::new();
    for group in text.split('_') {
        let (count, pair) = match group.split_once('*') {
            Some((n, pair)) => (number(n)?, pair),
            None => (1, group),
        };
        let (bytes, largest) = pair.split_once('.').ok_or_else(damaged)?;
        let e = LayerExperts {
            bytes: number(bytes)?,
            largest: number(largest)?,
        };
        let total = out.len() as u64 + count;
        if count == 0 || e.largest > e.bytes || total > u64::from(crate::gguf::MAX_EXPERT_LAYER) {
            return Err(damaged());
        }
        out.extend(std::iter::repeat_n(e, count as usize));
    }
    Ok(out)
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
            assert!(text.len() < 160, "{}: {} {text}", m.id, text.len());
            assert_eq!(decode(&text).unwrap(), m.arch, "{}", m.id);
            // Links written before the compact text still read (as JSON).
            let json = serde_json::to_string(&m.arch).unwrap();
            assert_eq!(decode_json(&json).unwrap(), m.arch, "{}", m.id);
        }
        assert_eq!(
            encode(&catalog::model("llama-3.1-8b").unwrap().arch),
            "a1:32.4096.32.8.128.14336.0.128256.0.0.2.0.0.0.0.0.0.0.0.131072.-.-.-:llama"
        );
        // A link written before the tower's heads were carried: SigLIP's 72-wide heads.
        let old = "a1:34.2560.8.4.256.10240.0.262208.1.0.4.0.0.1.0.0.0.0.0.131072.-.1024,6.-.8,1.27,1152,4304,14,896,256:gemma3";
        assert_eq!(
            decode(old).unwrap(),
            catalog::model("gemma-3-4b").unwrap().arch
        );
        // Gemma 3 carries its rotary tables and vision tower in two more groups.
        assert_eq!(
            encode(&catalog::model("gemma-3-4b").unwrap().arch),
            "a1:34.2560.8.4.256.10240.0.262208.1.0.4.0.0.1.0.0.0.0.0.131072.-.1024,6.-.8,1.27,1152,4304,14,896,256,16:gemma3"
        );
    }

    /// Every format an importer reads from a checkpoint has its code, and links from
    /// before the code (three extras) still read.
    #[test]
    fn checkpoint_formats_travel_in_the_extras() {
        for id in [
            "mxfp4",
            "nvfp4",
            "fp8-block",
            "fp8",
            "fp32",
            "int8",
            "nf4",
            "nf4-dq",
            "gptq-4bit-128g",
            "gptq-8bit-4096g",
            "gptq-2bit-8g",
        ] {
            let f = WeightFormat::parse(id).unwrap();
            let code = checkpoint_code(Some(f));
            assert!(code > 0, "{id}");
            assert_eq!(checkpoint_from_code(code).unwrap(), Some(f), "{id}");
        }
        for bad in [9, 99_999, 100_128, 200_007, 204_097, 900_128, u32::MAX] {
            assert!(checkpoint_from_code(bad).is_err(), "{bad}");
        }
        let oss = &catalog::model("gpt-oss-20b").unwrap().arch;
        let text = encode(oss);
        assert!(text.contains(".0,0,1,1."), "{text}");
        let old = decode(&text.replace(".0,0,1,1.", ".0,0,1.")).unwrap();
        assert_eq!(old.checkpoint, None);
        assert_eq!(
            Architecture {
                checkpoint: None,
                ..old
            },
            Architecture {
                checkpoint: None,
                ..oss.clone()
            }
        );
    }

    #[test]
    fn edited_links_are_refused_in_spanish() {
        let good = encode(&catalog::model("llama-3.1-8b").unwrap().arch);
        for (bad, want) in [
            (good.replacen("a1:32.", "a1:0.", 1), "num_hidden_layers"),
            (good.replace(".4096.", ".4000000000."), "hidden_size"),
            (good.replace(".128256.", ".-1."), "dañada (número)"),
            (good.replace(".-.-.-:", ".-.-:"), "número de campos"),
            (good.replace(".-.-.-:", ".1,2.-.-:"), "grupo"),
            (good.replace(".-.-.-:", ".-.-.-.8.-:"), "grupo"),
            (good.replace(".-.-.-:", ".-.-.-.8,2.-:"), "sí o no"),
            (good.replace(".-.-.-:", ".-.-.-.0,1.-:"), "rope_scaling"),
            (
                good.replace(".-.-.-:", ".-.-.-.-.27,0,1,1,1,1:"),
                "vision_config.hidden_size",
            ),
            (good.replace(".-.-.-:", ".-.-.-.-:"), "número de campos"),
            (good.replace("a1:", "a9:"), "versión"),
            (good.replace(":llama", ""), "familia"),
            ("{".into(), "versión"),
            ("x".repeat(MAX_SHARED_BYTES + 1), "larga"),
        ] {
            let e = decode(&bad).unwrap_err().to_string();
            assert!(e.contains(want), "{bad}: {e}");
        }
        assert!(decode_json("{").unwrap_err().to_string().contains("JSON"));
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
            let _ = decode_json(&s);
        }

        /// Forged compact text: valid prefixes with random numbers in every slot.
        #[test]
        fn forged_numbers_are_refused_or_bounded(slots in proptest::collection::vec("[-0-9,]{0,12}", 23..=25), family in ".{0,80}") {
            let text = format!("a1:{}:{family}", slots.join("."));
            if let Ok(a) = decode(&text) {
                prop_assert!(u64::from(a.hidden) <= MAX_DIM && a.layers >= 1);
                prop_assert!((1..=1024).contains(&a.rope.linear_factor));
                let _ = a.param_count();
                if let Some(v) = a.vision {
                    prop_assert!(u64::from(v.image) <= MAX_DIM);
                    let _ = v.params(a.hidden);
                }
            }
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

    #[test]
    fn expert_lists_round_trip_in_runs() {
        let e = |bytes, largest| LayerExperts { bytes, largest };
        let list = [
            vec![e(0, 0); 3],
            vec![e(2_566_914_048, 855_638_016); 81],
            vec![e(100, 60)],
        ]
        .concat();
        let text = encode_experts(&list);
        assert_eq!(text, "3*0.0_81*2566914048.855638016_100.60");
        assert_eq!(decode_experts(&text).unwrap(), list);
        assert_eq!(decode_experts("").map_err(|_| ()), Err(()));
        for bad in [
            "5000*1.1",
            "1*2.3",
            "0*1.1",
            "x.1",
            "1.",
            "1*1.1*2",
            "18446744073709551615.1",
        ] {
            assert!(decode_experts(bad).is_err(), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn expert_text_never_panics(text in "[0-9*._x]{0,40}") {
            if let Ok(list) = decode_experts(&text) {
                prop_assert!(list.len() <= crate::gguf::MAX_EXPERT_LAYER as usize);
                prop_assert_eq!(decode_experts(&encode_experts(&list)).unwrap(), list);
            }
        }
    }
}
