//! Transformer architecture hyper-parameters and the exact parameter count they imply.
//!
//! The count is derived tensor by tensor (embeddings, attention projections with GQA,
//! gated or plain MLP, MoE experts, norms, biases, pooler, untied head) so it matches
//! what `sum(p.numel() for p in model.parameters())` prints, not a rule of thumb. The
//! tests pin it to published counts (Llama-3.1-8B: 8 030 261 248).

use serde::{Deserialize, Serialize};

/// Feed-forward block shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mlp {
    /// SwiGLU/GeGLU: gate, up and down projections (Llama, Mistral, Qwen, Gemma, Phi-3).
    Gated,
    /// Two projections with an activation between (GPT-2, BERT, GPT-NeoX).
    Plain,
}

/// Normalisation layers: RMSNorm has a weight; LayerNorm a weight and a bias.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Norm {
    Rms,
    Layer,
}

/// Which attention projections carry a bias.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AttnBias {
    None,
    /// Q, K and V only (Qwen2/2.5).
    Qkv,
    /// Q, K, V and the output projection (GPT-2, BERT, GPT-NeoX).
    All,
}

/// Mixture-of-experts feed-forward layers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Moe {
    /// Routed experts per MoE layer.
    pub experts: u32,
    /// Routed experts each token uses.
    pub experts_per_token: u32,
    /// Intermediate size of one routed expert.
    pub expert_intermediate: u32,
    /// Always-active shared experts (DeepSeek, Qwen-MoE); 0 if none.
    #[serde(default)]
    pub shared_experts: u32,
    /// The first `dense_layers` layers use a dense MLP of `intermediate` instead.
    #[serde(default)]
    pub dense_layers: u32,
    /// The shared experts' width when it is not `shared_experts × expert_intermediate`
    /// (Qwen2-MoE's and Qwen3-Next's `shared_expert_intermediate_size`, with its
    /// one-output `shared_expert_gate`); 0 otherwise.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub shared_intermediate: u32,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

impl Moe {
    /// The width of the shared experts together (their intermediate size).
    pub fn shared_width(&self) -> u64 {
        if self.shared_intermediate > 0 {
            u64::from(self.shared_intermediate)
        } else {
            u64::from(self.shared_experts) * u64::from(self.expert_intermediate)
        }
    }
}

/// Linear-attention layers in place of most attention layers: Gated DeltaNet
/// (Qwen3-Next, Qwen3.5; transformers' `Qwen3NextGatedDeltaNet`), one full-attention
/// layer every `full_every`. A linear layer keeps no KV cache: each sequence carries a
/// fixed state instead, the short convolution's last `conv_kernel − 1` inputs and the
/// delta rule's `value_heads × key_dim × value_dim` matrix, whatever its length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinearAttention {
    /// One layer in every `full_every` attends fully (`full_attention_interval`: 4).
    pub full_every: u32,
    /// `linear_num_key_heads` and `linear_key_head_dim`.
    pub key_heads: u32,
    pub key_dim: u32,
    /// `linear_num_value_heads` and `linear_value_head_dim`.
    pub value_heads: u32,
    pub value_dim: u32,
    /// `linear_conv_kernel_dim`: the causal convolution's width.
    pub conv_kernel: u32,
    /// The config asks for the recurrent state in fp32 (Qwen3.5's `mamba_ssm_dtype`),
    /// which vLLM then allocates; otherwise it keeps the model's dtype.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ssm_fp32: bool,
}

impl LinearAttention {
    fn key_width(&self) -> u128 {
        u128::from(self.key_heads) * u128::from(self.key_dim)
    }

    fn value_width(&self) -> u128 {
        u128::from(self.value_heads) * u128::from(self.value_dim)
    }

    /// Channels of the causal convolution: queries, keys and values
    /// (`conv_dim = key_dim * 2 + value_dim`).
    pub fn conv_channels(&self) -> u64 {
        u64::try_from(2 * self.key_width() + self.value_width()).unwrap_or(u64::MAX)
    }

    /// The elements one sequence's state holds per linear layer: the convolution's
    /// last `conv_kernel − 1` inputs per channel, and the recurrent state, one
    /// `key_dim × value_dim` matrix per value head (`conv_states` and
    /// `recurrent_states` in transformers' cache; vLLM's `MambaStateShapeCalculator.
    /// gated_delta_net_state_shape`).
    pub fn state_elements(&self) -> (u64, u64) {
        let conv =
            u128::from(self.conv_kernel.saturating_sub(1)) * u128::from(self.conv_channels());
        let recurrent =
            u128::from(self.value_heads) * u128::from(self.key_dim) * u128::from(self.value_dim);
        let sat = |v: u128| u64::try_from(v).unwrap_or(u64::MAX);
        (sat(conv), sat(recurrent))
    }

    /// Weights of one layer's `nn.Linear` modules: `in_proj_qkvz` (queries, keys,
    /// values and the output gate z), `in_proj_ba` (the beta and alpha gates per value
    /// head) and `out_proj`.
    pub fn linear_params(&self, hidden: u32) -> u128 {
        let h = u128::from(hidden);
        let (k, v) = (self.key_width(), self.value_width());
        h * (2 * k + 2 * v) + h * 2 * u128::from(self.value_heads) + v * h
    }

    /// Every parameter of one layer: the linears, the depthwise convolution (no bias),
    /// `dt_bias` and `A_log` per value head, and the gated RMSNorm over a head.
    pub fn layer_params(&self, hidden: u32) -> u128 {
        self.linear_params(hidden)
            + u128::from(self.conv_channels()) * u128::from(self.conv_kernel)
            + 2 * u128::from(self.value_heads)
            + u128::from(self.value_dim)
    }
}

/// Sliding-window attention on some layers (Mistral v0.1, Gemma 2/3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlidingWindow {
    /// Tokens each windowed layer attends to.
    pub window: u32,
    /// One layer in every `global_every` attends globally (Gemma 3: 6, Gemma 2: 2);
    /// 0 means every layer is windowed (Mistral 7B v0.1).
    pub global_every: u32,
}

/// The rotary embeddings' position tables. vLLM builds one `cos_sin_cache` of
/// `[rows, rotary_dim]` in the model's dtype per distinct rope (`get_rope` in
/// vllm/model_executor/layers/rotary_embedding/__init__.py caches them by their
/// settings), and the caching allocator counts it with the weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rope {
    /// Linear position scaling (`rope_scaling: {"rope_type": "linear", "factor": 8}` in
    /// Gemma 3 4B and larger); 1 without. `LinearScalingRotaryEmbedding` tabulates
    /// `max_positions × factor` rows.
    pub linear_factor: u32,
    /// A second, unscaled rope with its own base for the sliding-window layers
    /// (Gemma 3's `rope_local_base_freq`): a second table of `max_positions` rows.
    pub local: bool,
}

impl Default for Rope {
    fn default() -> Self {
        Rope {
            linear_factor: 1,
            local: false,
        }
    }
}

impl Rope {
    pub fn is_default(&self) -> bool {
        *self == Rope::default()
    }

    /// Rows of every table together, for a model trained on `max_positions` tokens.
    pub fn rows(&self, max_positions: u32) -> u64 {
        let positions = u64::from(max_positions);
        let global = positions.saturating_mul(u64::from(self.linear_factor.max(1)));
        global.saturating_add(if self.local { positions } else { 0 })
    }
}

/// A vision encoder the checkpoint carries beside the language model, and the
/// projector into it: Gemma 3's SigLIP tower (`vision_config`, model_type
/// `siglip_vision_model`) and `Gemma3MultiModalProjector`. Engines that build the
/// multimodal class (vLLM's `Gemma3ForConditionalGeneration`) load it whether or not
/// images ever arrive, and profile it at start-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vision {
    pub layers: u32,
    pub hidden: u32,
    /// Attention heads (`num_attention_heads`: 16 in Gemma 3's SigLIP).
    pub heads: u32,
    pub intermediate: u32,
    /// Side of a square patch, in pixels.
    pub patch: u32,
    /// Side of the square image the encoder takes, in pixels.
    pub image: u32,
    /// Language-model tokens each image becomes (`mm_tokens_per_image`: 256).
    pub tokens_per_image: u32,
}

impl Vision {
    /// SigLIP so400m's head width: what a link written before the head count was
    /// carried implies (Gemma 3's tower was the only one such links could hold).
    pub const SIGLIP_HEAD_DIM: u32 = 72;

    /// The heads of a tower of `hidden` width with SigLIP so400m's head width.
    pub fn siglip_heads(hidden: u32) -> u32 {
        hidden.div_ceil(Self::SIGLIP_HEAD_DIM).max(1)
    }

    /// Patches per image: the encoder's sequence length.
    pub fn patches(&self) -> u64 {
        let side = u64::from(self.image / self.patch.max(1));
        side * side
    }

    /// Exact parameters of the tower and the projector into a language model of
    /// `text_hidden`, tensor by tensor as transformers' `SiglipVisionModel` and
    /// `Gemma3MultiModalProjector` declare them: a biased 3-channel patch convolution,
    /// learned position embeddings, pre-LayerNorm layers with biased q/k/v/out and
    /// fc1/fc2, a final LayerNorm; then an RMSNorm weight and a bias-free projection.
    pub fn params(&self, text_hidden: u32) -> u64 {
        let h = u128::from(self.hidden);
        let p = u128::from(self.patch);
        let embeddings = 3 * p * p * h + h + u128::from(self.patches()) * h;
        let projector = h * u128::from(text_hidden) + h;
        let rest = u64::try_from(embeddings + 2 * h + projector).unwrap_or(u64::MAX);
        rest.saturating_add(self.layer_params())
    }

    /// Weights of the encoder layers' `nn.Linear` modules (q/k/v/out, fc1, fc2; no
    /// biases): what bitsandbytes quantises and LoRA can adapt.
    pub fn linear_params(&self) -> u64 {
        let h = u128::from(self.hidden);
        let i = u128::from(self.intermediate);
        u64::try_from(u128::from(self.layers) * (4 * h * h + 2 * h * i)).unwrap_or(u64::MAX)
    }

    /// Parameters of the encoder layers alone (two LayerNorms, q/k/v/out, fc1/fc2).
    pub fn layer_params(&self) -> u64 {
        let h = u128::from(self.hidden);
        let i = u128::from(self.intermediate);
        let layer = 2 * h + 4 * (h * h + h) + 2 * h + (h * i + i) + (i * h + h);
        u64::try_from(u128::from(self.layers) * layer).unwrap_or(u64::MAX)
    }
}

/// DeepSeek's multi-head latent attention (MLA, DeepSeek-V2 §2.1): keys and values are
/// rebuilt from one compressed latent per token, and serving engines (vLLM, SGLang)
/// cache only that latent plus the shared rotary key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mla {
    /// Rank of the query compression; 0 when queries are projected directly (V2-Lite).
    pub q_lora_rank: u32,
    /// Width of the compressed KV latent (512 in V2 and V3).
    pub kv_lora_rank: u32,
    /// Per-head query/key width without rotary embedding.
    pub qk_nope_head_dim: u32,
    /// Width of the rotary key part, shared by all heads.
    pub qk_rope_head_dim: u32,
    /// Per-head value width.
    pub v_head_dim: u32,
}

impl Mla {
    /// Projection weights of one layer's attention (DeepSeek's `q_a_proj`, `q_b_proj`
    /// or `q_proj`, `kv_a_proj_with_mqa`, `kv_b_proj`, `o_proj`).
    fn weights(&self, hidden: u128, heads: u128) -> u128 {
        let (nope, rope, v) = (
            u128::from(self.qk_nope_head_dim),
            u128::from(self.qk_rope_head_dim),
            u128::from(self.v_head_dim),
        );
        let q_out = heads * (nope + rope);
        let q = match u128::from(self.q_lora_rank) {
            0 => hidden * q_out,
            r => hidden * r + r * q_out,
        };
        let kv_lora = u128::from(self.kv_lora_rank);
        q + hidden * (kv_lora + rope) + kv_lora * heads * (nope + v) + heads * v * hidden
    }

    /// Elements cached per token and layer: the latent plus the rotary key.
    pub fn cached_width(&self) -> u64 {
        u64::from(self.kv_lora_rank) + u64::from(self.qk_rope_head_dim)
    }
}

/// The most an architecture may declare, so that every estimate and solver stays
/// bounded in work whatever a link, a widget attribute, a `config.json` or a GGUF header
/// claims: a solver estimates a workload tens of times and an estimate walks every
/// layer. Each bound is the largest released model with a wide margin (December 2026):
/// 126 layers (Llama 3.1 405B), 512 routed experts (Qwen3.5-397B-A17B), 128 attention
/// heads (DeepSeek-V3, Llama 3.1 405B).
pub const MAX_LAYERS: u32 = 1024;
/// See [`MAX_LAYERS`].
pub const MAX_EXPERTS: u32 = 4096;
/// See [`MAX_LAYERS`].
pub const MAX_HEADS: u32 = 2048;

/// An architecture beyond [`MAX_LAYERS`], [`MAX_EXPERTS`] or [`MAX_HEADS`]. `Display`
/// is one Spanish sentence naming the limit.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "El modelo declara {value} {what}; vramlab admite hasta {max} (los mayores modelos publicados tienen {largest}), para que ningún cálculo se haga eterno."
)]
pub struct OverBudget {
    pub what: &'static str,
    pub value: u64,
    pub max: u64,
    pub largest: u64,
}

/// Everything about a model that decides its memory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Architecture {
    /// Hugging Face `model_type` ("llama", "qwen2", "bert", ...).
    pub family: String,
    pub layers: u32,
    pub hidden: u32,
    pub heads: u32,
    pub kv_heads: u32,
    pub head_dim: u32,
    pub intermediate: u32,
    pub mlp: Mlp,
    pub vocab: u32,
    pub tied_embeddings: bool,
    pub norm: Norm,
    /// Norms per layer: 2 (pre-attention, pre-MLP), 4 in Gemma 2/3 (also post).
    #[serde(default = "two")]
    pub norms_per_layer: u32,
    pub attn_bias: AttnBias,
    #[serde(default)]
    pub mlp_bias: bool,
    /// Per-head RMSNorm on queries and keys (Qwen3, Gemma 3).
    #[serde(default)]
    pub qk_norm: bool,
    /// Learned absolute position embeddings (GPT-2, BERT); 0 with rotary.
    #[serde(default)]
    pub learned_positions: u32,
    /// Token-type embeddings (BERT); 0 otherwise.
    #[serde(default)]
    pub token_types: u32,
    /// BERT's pooler (a hidden × hidden dense layer with bias).
    #[serde(default)]
    pub pooler: bool,
    /// Encoder-only models (BERT) have no KV cache and no causal decoding.
    #[serde(default)]
    pub encoder_only: bool,
    /// Dropout active in training (BERT, GPT-2); modern LLMs train without it, which
    /// removes the dropout masks from the saved activations.
    #[serde(default)]
    pub dropout: bool,
    #[serde(default)]
    pub moe: Option<Moe>,
    #[serde(default)]
    pub sliding_window: Option<SlidingWindow>,
    /// Multi-head latent attention (DeepSeek-V2/V3) instead of plain GQA projections.
    #[serde(default)]
    pub mla: Option<Mla>,
    /// Gated DeltaNet layers in place of most attention layers (Qwen3-Next, Qwen3.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linear: Option<LinearAttention>,
    /// The attention output is gated by a second half of the query projection
    /// (`attn_output_gate`: Qwen3-Next, Qwen3.5): `q_proj` is twice as wide.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub attn_gate: bool,
    /// A learned sink logit per attention head (gpt-oss's `sinks`): one value each.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sinks: bool,
    /// How the published checkpoint stores its weights when it is not 16-bit (gpt-oss's
    /// MXFP4 experts, DeepSeek's and Kimi's block FP8): what the `auto` format
    /// resolves to ([`crate::WeightFormat::resolved`]).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "checkpoint_id"
    )]
    pub checkpoint: Option<crate::quant::WeightFormat>,
    #[serde(default, skip_serializing_if = "Rope::is_default")]
    pub rope: Rope,
    /// A vision encoder loaded with the model (see [`Vision`]); not in
    /// [`Architecture::param_count`], which counts the language model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision: Option<Vision>,
    /// Context length the model was trained for.
    pub max_positions: u32,
}

fn two() -> u32 {
    2
}

/// Parameters split the way the estimator needs them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParamCount {
    /// Everything.
    pub total: u64,
    /// Input embeddings (token, position, token type).
    pub embeddings: u64,
    /// The output projection when it is not tied to the embeddings.
    pub lm_head: u64,
    /// Norm weights and biases (often kept in high precision when quantising).
    pub norms: u64,
    /// Linear weights inside the layers: what quantisation and LoRA act on.
    pub layer_linear: u64,
    /// Parameters a token actually uses (differs from `total` only for MoE).
    pub active: u64,
    /// The routed experts' weight matrices (no biases): what MXFP4 checkpoints quantise.
    #[serde(default)]
    pub routed_experts: u64,
}

/// A checkpoint's format in JSON as the id `--format` reads ("mxfp4", "fp8-block").
mod checkpoint_id {
    use crate::quant::WeightFormat;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(f: &Option<WeightFormat>, s: S) -> Result<S::Ok, S::Error> {
        match f {
            Some(f) => s.serialize_str(&f.id()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<WeightFormat>, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(id) => WeightFormat::parse(&id)
                .map(Some)
                .map_err(serde::de::Error::custom),
        }
    }
}

/// Layers by what they keep per sequence ([`Architecture::kinds_before`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LayerCounts {
    pub global: u32,
    pub windowed: u32,
    pub linear: u32,
}

impl Architecture {
    /// Layers with attention (and a KV cache): all of them, or with Gated DeltaNet
    /// layers only one in every `full_every`.
    pub fn attention_layers(&self) -> u32 {
        match self.linear {
            Some(l) => self.layers / l.full_every.max(1),
            None => self.layers,
        }
    }

    /// Gated DeltaNet layers (no KV cache, a fixed state per sequence).
    pub fn linear_layers(&self) -> u32 {
        self.layers - self.attention_layers()
    }

    /// Attention layers that attend with a sliding window, and those with full
    /// attention.
    pub fn windowed_layers(&self) -> (u32, u32) {
        let layers = self.attention_layers();
        match self.sliding_window {
            None => (0, layers),
            Some(SlidingWindow {
                global_every: 0, ..
            }) => (layers, 0),
            Some(SlidingWindow { global_every, .. }) => {
                let global = layers / global_every;
                (layers - global, global)
            }
        }
    }

    /// How many of layers `0..to` keep a full-context cache, a windowed one and a
    /// fixed linear-attention state, in the order the configs lay them out: a linear
    /// model's attention layer closes each group of `full_every` (Qwen3-Next and
    /// Qwen3.5: layers 3, 7, 11…), and among attention layers the global one closes
    /// each group of `global_every` (gpt-oss and Gemma 2: every second; Gemma 3: every
    /// sixth; Llama 4: every fourth). At `to = layers` these are
    /// [`Architecture::windowed_layers`] and [`Architecture::linear_layers`].
    pub fn kinds_before(&self, to: u32) -> LayerCounts {
        let to = to.min(self.layers);
        let attention = match self.linear {
            Some(l) => to / l.full_every.max(1),
            None => to,
        };
        let global = match self.sliding_window {
            None => attention,
            Some(SlidingWindow {
                global_every: 0, ..
            }) => 0,
            Some(SlidingWindow { global_every, .. }) => attention / global_every,
        };
        LayerCounts {
            global,
            windowed: attention - global,
            linear: to - attention,
        }
    }

    /// Whether the architecture stays within the work budget ([`MAX_LAYERS`] and its
    /// siblings), checked by every importer and by [`crate::estimate`].
    pub fn within_budget(&self) -> Result<(), OverBudget> {
        let over = |what, value: u32, max: u32, largest| {
            (value > max).then_some(OverBudget {
                what,
                value: u64::from(value),
                max: u64::from(max),
                largest,
            })
        };
        let found = over("capas", self.layers, MAX_LAYERS, 126)
            .or_else(|| over("cabezas de atención", self.heads, MAX_HEADS, 128))
            .or_else(|| over("cabezas de K y V", self.kv_heads, MAX_HEADS, 128))
            .or_else(|| {
                self.moe
                    .and_then(|m| over("expertos por capa", m.experts, MAX_EXPERTS, 512))
            })
            .or_else(|| {
                self.vision
                    .and_then(|v| over("capas en la torre de visión", v.layers, MAX_LAYERS, 126))
            });
        match found {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Width of the K (and V) projections: kv_heads × head_dim.
    pub fn kv_width(&self) -> u64 {
        u64::from(self.kv_heads) * u64::from(self.head_dim)
    }

    /// Width of the Q projection: heads × head_dim (not always `hidden`: Gemma 7B,
    /// Qwen3).
    pub fn q_width(&self) -> u64 {
        u64::from(self.heads) * u64::from(self.head_dim)
    }

    /// The MLP width one token runs through: a dense model's intermediate size, or an
    /// MoE's routed and shared experts together.
    pub fn token_intermediate(&self) -> u64 {
        self.moe.map_or(u64::from(self.intermediate), |m| {
            u64::from(m.expert_intermediate).saturating_mul(
                u64::from(m.experts_per_token.min(m.experts)) + u64::from(m.shared_experts),
            )
        })
    }

    /// The widest single MLP matrix's intermediate side: a dense model's, or an MoE's
    /// wider of one expert and its dense layers.
    pub fn widest_intermediate(&self) -> u64 {
        self.moe.map_or(u64::from(self.intermediate), |m| {
            u64::from(m.expert_intermediate).max(u64::from(self.intermediate))
        })
    }

    /// Exact parameter count, by tensor groups.
    pub fn param_count(&self) -> ParamCount {
        let h = u128::from(self.hidden);
        let layers = u128::from(self.layers);
        let norm_params = match self.norm {
            Norm::Rms => h,
            Norm::Layer => 2 * h,
        };

        let embeddings = u128::from(self.vocab) * h
            + u128::from(self.learned_positions) * h
            + u128::from(self.token_types) * h
            // BERT normalises the embeddings.
            + if self.token_types > 0 { norm_params } else { 0 };

        // Attention, on the layers that have it; Gated DeltaNet on the others.
        let attention_layers = u128::from(self.attention_layers());
        let linear_layers = layers - attention_layers;
        let (q, kv) = (u128::from(self.q_width()), u128::from(self.kv_width()));
        // A gated output doubles the query projection's rows.
        let q_rows = if self.attn_gate { 2 * q } else { q };
        let attn_weights = match self.mla {
            None => h * q_rows + 2 * h * kv + q * h,
            Some(m) => m.weights(h, u128::from(self.heads)),
        };
        let (linear_weights, linear_rest) = self.linear.map_or((0, 0), |l| {
            let weights = l.linear_params(self.hidden);
            (weights, l.layer_params(self.hidden) - weights)
        });
        let sinks = if self.sinks {
            u128::from(self.heads)
        } else {
            0
        };
        let attn_bias = match self.attn_bias {
            AttnBias::None => 0,
            AttnBias::Qkv => q + 2 * kv,
            AttnBias::All => q + 2 * kv + h,
        };
        let qk_norm = if self.qk_norm {
            2 * u128::from(self.head_dim)
        } else {
            0
        };

        // Feed-forward.
        let mlp = |inter: u128| -> u128 {
            let (mats, bias) = match self.mlp {
                Mlp::Gated => (3 * h * inter, 2 * inter + h),
                Mlp::Plain => (2 * h * inter, inter + h),
            };
            mats + if self.mlp_bias { bias } else { 0 }
        };
        let dense_mlp = mlp(u128::from(self.intermediate));
        let routed_experts = self.moe.map_or(0, |m| {
            let moe_layers = layers - u128::from(m.dense_layers.min(self.layers));
            let mats = match self.mlp {
                Mlp::Gated => 3,
                Mlp::Plain => 2,
            };
            moe_layers * u128::from(m.experts) * mats * h * u128::from(m.expert_intermediate)
        });
        let (mlp_total, mlp_active) = match self.moe {
            None => (dense_mlp * layers, dense_mlp * layers),
            Some(m) => {
                let dense = u128::from(m.dense_layers.min(self.layers));
                let moe_layers = layers - dense;
                let expert = mlp(u128::from(m.expert_intermediate));
                // The router has a bias where the experts do (gpt-oss).
                let router = h * u128::from(m.experts)
                    + if self.mlp_bias {
                        u128::from(m.experts)
                    } else {
                        0
                    };
                // The shared experts as one MLP of their whole width; a separate width
                // comes with its one-output gate.
                let shared = if m.shared_intermediate > 0 {
                    mlp(u128::from(m.shared_intermediate)) + h
                } else {
                    expert * u128::from(m.shared_experts)
                };
                let per_layer = expert * u128::from(m.experts) + router + shared;
                let per_layer_active =
                    expert * u128::from(m.experts_per_token.min(m.experts)) + router + shared;
                (
                    dense * dense_mlp + moe_layers * per_layer,
                    dense * dense_mlp + moe_layers * per_layer_active,
                )
            }
        };

        // MLA normalises its compressed latents (RMSNorm weights).
        let mla_norms = self.mla.map_or(0, |m| {
            u128::from(m.q_lora_rank) + u128::from(m.kv_lora_rank)
        });
        let norms = layers * u128::from(self.norms_per_layer) * norm_params
            + attention_layers * (qk_norm + mla_norms)
            // Final norm: decoders have one after the last layer; BERT normalises inside
            // each layer and its embeddings instead.
            + if self.encoder_only { 0 } else { norm_params };
        let layer_linear_dense = attention_layers * attn_weights + linear_layers * linear_weights;
        let layer_bias = attention_layers * (attn_bias + sinks) + linear_layers * linear_rest;
        let pooler = if self.pooler { h * h + h } else { 0 };
        let lm_head = if self.tied_embeddings || self.encoder_only {
            0
        } else {
            u128::from(self.vocab) * h
        };

        let total =
            embeddings + layer_linear_dense + layer_bias + mlp_total + norms + pooler + lm_head;
        let active = total - mlp_total + mlp_active;
        // Dimensions are bounded (importers cap them at 2^24), but their products can
        // still pass u64: saturate instead of wrapping or panicking.
        let sat = |v: u128| u64::try_from(v).unwrap_or(u64::MAX);
        ParamCount {
            total: sat(total),
            embeddings: sat(embeddings),
            lm_head: sat(lm_head),
            norms: sat(norms),
            layer_linear: sat(layer_linear_dense + mlp_total),
            routed_experts: sat(routed_experts),
            active: sat(active),
        }
    }
}

/// Layer `layer`'s routed experts (`ffn_gate_exps`, `ffn_up_exps`, `ffn_down_exps`) as
/// the weights are stored: the tensors `--n-cpu-moe` keeps in CPU RAM. From a GGUF
/// header (`Workload::stored_experts`) they are the file's own tensors. Otherwise a
/// GGUF mix stores gate and up in its base type and the down projection in its boosted
/// type on the layers `use_more_bits` picks, as [`crate::estimate::weights::weight_bytes`] counts them, and exact
/// stored weights scale that formula by the file's own size. Zero for dense layers and
/// models.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerExperts {
    /// The layer's expert tensors together.
    pub bytes: u64,
    /// Its largest expert tensor.
    pub largest: u64,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Layer kinds in the order the configs list them, counted up to a layer.
    #[test]
    fn layer_kinds_follow_the_configs_order() {
        let m = |id: &str| crate::catalog::model(id).unwrap().arch.clone();
        let counts = |g, w, l| LayerCounts {
            global: g,
            windowed: w,
            linear: l,
        };
        // (model, layers before, global, windowed, linear)
        let cases = [
            // gpt-oss: sliding on even layers, full on odd ones.
            ("gpt-oss-20b", 1, counts(0, 1, 0)),
            ("gpt-oss-20b", 2, counts(1, 1, 0)),
            ("gpt-oss-20b", 24, counts(12, 12, 0)),
            // Qwen3.5-27B: full attention on layers 3, 7, … 63.
            ("qwen3.5-27b", 3, counts(0, 0, 3)),
            ("qwen3.5-27b", 4, counts(1, 0, 3)),
            ("qwen3.5-27b", 39, counts(9, 0, 30)),
            ("qwen3.5-27b", 64, counts(16, 0, 48)),
            // Gemma 3: five local layers, then a global one.
            ("gemma-3-4b", 6, counts(1, 5, 0)),
            ("gemma-3-4b", 34, counts(5, 29, 0)),
            ("llama-3.1-8b", 20, counts(20, 0, 0)),
        ];
        for (id, to, want) in cases {
            assert_eq!(m(id).kinds_before(to), want, "{id} {to}");
        }
        for p in crate::catalog::models() {
            let a = &p.arch;
            let all = a.kinds_before(a.layers);
            assert_eq!((all.windowed, all.global), a.windowed_layers(), "{}", p.id);
            assert_eq!(all.linear, a.linear_layers(), "{}", p.id);
        }
    }

    /// Llama 3.1 8B, from its config.json.
    pub fn llama31_8b() -> Architecture {
        Architecture {
            family: "llama".into(),
            layers: 32,
            hidden: 4096,
            heads: 32,
            kv_heads: 8,
            head_dim: 128,
            intermediate: 14336,
            mlp: Mlp::Gated,
            vocab: 128_256,
            tied_embeddings: false,
            norm: Norm::Rms,
            norms_per_layer: 2,
            attn_bias: AttnBias::None,
            mlp_bias: false,
            qk_norm: false,
            learned_positions: 0,
            token_types: 0,
            pooler: false,
            encoder_only: false,
            dropout: false,
            moe: None,
            sliding_window: None,
            mla: None,
            linear: None,
            attn_gate: false,
            sinks: false,
            checkpoint: None,
            rope: Rope::default(),
            vision: None,
            max_positions: 131_072,
        }
    }

    /// Gemma 3's vision tower: the technical report's Table 1 gives "Vision Encoder
    /// 417M" for every size from 4B up; the projector adds 1152 × hidden + 1152.
    #[test]
    fn gemma3_vision_tower_exact() {
        let v = crate::catalog::model("gemma-3-27b")
            .and_then(|m| m.arch.vision)
            .expect("Gemma 3 27B carries its vision tower");
        let projector = 1152 * 5376 + 1152;
        assert_eq!(v.patches(), 4096);
        assert_eq!(v.params(5376) - projector, 416_866_032);
        assert_eq!(v.layer_params(), 27 * 15_239_504);
    }

    #[test]
    fn rope_tables_scale_linearly_and_add_the_local_one() {
        let cases = [
            (Rope::default(), 131_072),
            (
                Rope {
                    linear_factor: 8,
                    local: false,
                },
                1_048_576,
            ),
            (
                Rope {
                    linear_factor: 8,
                    local: true,
                },
                1_179_648,
            ),
            (
                Rope {
                    linear_factor: 1,
                    local: true,
                },
                262_144,
            ),
        ];
        for (rope, rows) in cases {
            assert_eq!(rope.rows(131_072), rows, "{rope:?}");
        }
    }

    #[test]
    fn llama_31_8b_exact() {
        let p = llama31_8b().param_count();
        assert_eq!(p.total, 8_030_261_248);
        assert_eq!(p.embeddings, 525_336_576);
        assert_eq!(p.lm_head, 525_336_576);
        assert_eq!(p.active, p.total);
    }

    #[test]
    fn qwen25_7b_with_qkv_bias() {
        let a = Architecture {
            family: "qwen2".into(),
            layers: 28,
            hidden: 3584,
            heads: 28,
            kv_heads: 4,
            intermediate: 18944,
            vocab: 152_064,
            attn_bias: AttnBias::Qkv,
            ..llama31_8b()
        };
        assert_eq!(a.param_count().total, 7_615_616_512);
    }

    #[test]
    fn gpt2_small() {
        let a = Architecture {
            family: "gpt2".into(),
            layers: 12,
            hidden: 768,
            heads: 12,
            kv_heads: 12,
            head_dim: 64,
            intermediate: 3072,
            mlp: Mlp::Plain,
            vocab: 50_257,
            tied_embeddings: true,
            norm: Norm::Layer,
            attn_bias: AttnBias::All,
            mlp_bias: true,
            learned_positions: 1024,
            max_positions: 1024,
            ..llama31_8b()
        };
        assert_eq!(a.param_count().total, 124_439_808);
    }

    #[test]
    fn bert_base_and_large() {
        let base = Architecture {
            family: "bert".into(),
            layers: 12,
            hidden: 768,
            heads: 12,
            kv_heads: 12,
            head_dim: 64,
            intermediate: 3072,
            mlp: Mlp::Plain,
            vocab: 30_522,
            tied_embeddings: true,
            norm: Norm::Layer,
            attn_bias: AttnBias::All,
            mlp_bias: true,
            learned_positions: 512,
            token_types: 2,
            pooler: true,
            encoder_only: true,
            max_positions: 512,
            ..llama31_8b()
        };
        assert_eq!(base.param_count().total, 109_482_240);
        let large = Architecture {
            layers: 24,
            hidden: 1024,
            heads: 16,
            kv_heads: 16,
            intermediate: 4096,
            ..base
        };
        assert_eq!(large.param_count().total, 335_141_888);
    }

    #[test]
    fn moe_active_params() {
        // Mixtral 8x7B: 46.7B total, 12.9B active (Mistral AI's announcement).
        let a = Architecture {
            family: "mixtral".into(),
            vocab: 32_000,
            moe: Some(Moe {
                experts: 8,
                experts_per_token: 2,
                expert_intermediate: 14336,
                shared_experts: 0,
                dense_layers: 0,
                shared_intermediate: 0,
            }),
            max_positions: 32_768,
            ..llama31_8b()
        };
        let p = a.param_count();
        assert_eq!(p.total, 46_702_792_704);
        assert_eq!(p.active, 12_879_925_248);
    }

    /// DeepSeek-V2-Lite from its config.json: MLA without query compression, 64 routed
    /// experts and 2 shared, first layer dense.
    pub fn deepseek_v2_lite() -> Architecture {
        Architecture {
            family: "deepseek_v2".into(),
            layers: 27,
            hidden: 2048,
            heads: 16,
            kv_heads: 16,
            head_dim: 192,
            intermediate: 10944,
            vocab: 102_400,
            moe: Some(Moe {
                experts: 64,
                experts_per_token: 6,
                expert_intermediate: 1408,
                shared_experts: 2,
                dense_layers: 1,
                shared_intermediate: 0,
            }),
            mla: Some(Mla {
                q_lora_rank: 0,
                kv_lora_rank: 512,
                qk_nope_head_dim: 128,
                qk_rope_head_dim: 64,
                v_head_dim: 128,
            }),
            max_positions: 163_840,
            ..llama31_8b()
        }
    }

    #[test]
    fn deepseek_mla_counts() {
        // 15.7B published (the Hub's safetensors count is 15,706,484,224).
        assert_eq!(deepseek_v2_lite().param_count().total, 15_706_484_224);
        // DeepSeek-V3: "671B total parameters, 37B activated" (technical report). The
        // router's score-correction bias (256 per MoE layer) is left out.
        let v3 = Architecture {
            family: "deepseek_v3".into(),
            layers: 61,
            hidden: 7168,
            heads: 128,
            kv_heads: 128,
            intermediate: 18432,
            vocab: 129_280,
            moe: Some(Moe {
                experts: 256,
                experts_per_token: 8,
                expert_intermediate: 2048,
                shared_experts: 1,
                dense_layers: 3,
                shared_intermediate: 0,
            }),
            mla: Some(Mla {
                q_lora_rank: 1536,
                ..deepseek_v2_lite().mla.unwrap()
            }),
            ..deepseek_v2_lite()
        };
        let p = v3.param_count();
        assert_eq!(p.total, 671_026_404_352);
        assert!(
            (36_000_000_000..38_000_000_000).contains(&p.active),
            "{}",
            p.active
        );
    }

    #[test]
    fn sliding_window_split() {
        let mut a = llama31_8b();
        assert_eq!(a.windowed_layers(), (0, 32));
        a.sliding_window = Some(SlidingWindow {
            window: 4096,
            global_every: 0,
        });
        assert_eq!(a.windowed_layers(), (32, 0));
        a.sliding_window = Some(SlidingWindow {
            window: 1024,
            global_every: 6,
        });
        assert_eq!(a.windowed_layers(), (27, 5));
    }
}
