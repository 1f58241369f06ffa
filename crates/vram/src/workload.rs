//! What the user wants to run: mode, precision, optimiser, shapes and parallelism.

use serde::{Deserialize, Serialize};

use crate::dtype::Dtype;
use crate::quant::WeightFormat;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Inference,
    Train,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Finetune {
    Full,
    Lora,
    Qlora,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Optimizer {
    /// Two fp32 moments per parameter (bf16 when training purely in bf16).
    Adamw,
    /// bitsandbytes 8-bit AdamW: two int8 moments plus one fp32 absmax per 2048.
    Adamw8bit,
    /// Factored second moment (row and column vectors per matrix), no first moment.
    Adafactor,
    Sgd,
    SgdMomentum,
    /// bitsandbytes `PagedAdamW` (Trainer's `paged_adamw_32bit`): fp32 states whatever
    /// the parameters' dtype, in CUDA unified memory, which the driver evicts to CPU RAM
    /// under pressure instead of failing, at the cost of PCIe traffic.
    PagedAdamw,
    /// bitsandbytes `PagedAdamW8bit`: AdamW 8-bit states in unified memory.
    PagedAdamw8bit,
}

impl Optimizer {
    /// Whether the states live in unified (pageable) memory.
    pub fn is_paged(self) -> bool {
        matches!(self, Optimizer::PagedAdamw | Optimizer::PagedAdamw8bit)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Attention {
    /// Materialises the seq × seq score matrix per head.
    Eager,
    /// PyTorch scaled_dot_product_attention (memory-efficient / flash kernels).
    Sdpa,
    /// FlashAttention-2.
    Flash,
}

/// How training keeps and computes its weights (a full fine-tune).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// `torch.autocast` over fp32 parameters, what `Trainer(bf16=True)` does with a
    /// model loaded in fp32: fp32 weights, fp32 gradients (they take the parameter's
    /// dtype) and fp32 optimizer states, plus the 16-bit copy of every weight that
    /// autocast casts for its matmul and autograd keeps for the backward pass
    /// (pytorch.org/docs/stable/amp.html, "cache_enabled").
    Amp,
    /// 16-bit weights and gradients with an fp32 master copy and fp32 optimizer states
    /// (DeepSpeed's fp16/bf16 modes, Megatron; Rajbhandari et al. 2020, K = 12).
    Master,
    /// Everything in the weights' dtype, optimizer states included: `torch.optim.AdamW`
    /// keeps its moments in the parameter's dtype (torchtune, litgpt `bf16-true`).
    Pure,
}

/// How the loss meets the vocabulary-sized logits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Loss {
    /// The whole `batch × seq × vocab` logits tensor, upcast to fp32 for the loss
    /// (transformers' `ForCausalLMLoss`: `logits = logits.float()`, then
    /// `cross_entropy`, whose log-softmax output and gradients are fp32 too).
    Full,
    /// The output projection in chunks, each upcast on its own (torchtune's
    /// `CEWithChunkedOutputLoss`, 8 chunks): the 16-bit logits exist whole, their
    /// fp32 copies one chunk at a time.
    ChunkedOutput { chunks: u32 },
    /// Projection and cross-entropy fused per chunk of tokens (Unsloth, Liger,
    /// TRL's `chunked_nll`): no vocabulary-sized tensor beyond one chunk.
    Fused,
}

/// A linear of a transformer block, as transformers' decoders name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Linear {
    Q,
    K,
    V,
    O,
    Gate,
    Up,
    Down,
}

impl Linear {
    pub const ALL: [Linear; 7] = [
        Linear::Q,
        Linear::K,
        Linear::V,
        Linear::O,
        Linear::Gate,
        Linear::Up,
        Linear::Down,
    ];

    /// The module name PEFT's `target_modules` matches in Llama-style decoders.
    pub fn name(self) -> &'static str {
        match self {
            Linear::Q => "q_proj",
            Linear::K => "k_proj",
            Linear::V => "v_proj",
            Linear::O => "o_proj",
            Linear::Gate => "gate_proj",
            Linear::Up => "up_proj",
            Linear::Down => "down_proj",
        }
    }

    /// The linears one name stands for, as PEFT's `target_modules` (transformers'
    /// names) or torchtune's `lora_attn_modules` write them (`output_proj`; `mlp` is its
    /// `apply_lora_to_mlp`, `w1`/`w2`/`w3` its MLP's gate, down and up). Fused
    /// projections (Phi-3's `qkv_proj`, `gate_up_proj`) carry one adapter for several
    /// outputs, which these separate linears cannot count, so they are refused.
    fn named(name: &str) -> Option<&'static [Linear]> {
        use Linear::*;
        const NAMES: &[(&str, &[Linear])] = &[
            ("q_proj", &[Q]),
            ("k_proj", &[K]),
            ("v_proj", &[V]),
            ("o_proj", &[O]),
            ("output_proj", &[O]),
            ("gate_proj", &[Gate]),
            ("up_proj", &[Up]),
            ("down_proj", &[Down]),
            ("w1", &[Gate]),
            ("w3", &[Up]),
            ("w2", &[Down]),
            ("mlp", &[Gate, Up, Down]),
        ];
        NAMES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, l)| *l)
    }
}

/// A set of [`Linear`]s of every block (bit i is `Linear::ALL[i]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Linears(u8);

impl Linears {
    pub const fn of(list: &[Linear]) -> Linears {
        let mut bits = 0;
        let mut i = 0;
        while i < list.len() {
            bits |= 1 << list[i] as u8;
            i += 1;
        }
        Linears(bits)
    }

    pub fn contains(self, l: Linear) -> bool {
        self.0 & (1 << l as u8) != 0
    }

    /// Reads a comma-separated list of module names ("q_proj,k_proj,v_proj"); `None`
    /// when a name is unknown or the list names nothing.
    pub fn parse(text: &str) -> Option<Linears> {
        let mut bits = 0u8;
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            for &l in Linear::named(name)? {
                bits |= 1 << l as u8;
            }
        }
        (bits != 0).then_some(Linears(bits))
    }

    /// The list as PEFT's module names, in block order: "q_proj,v_proj".
    pub fn names(self) -> String {
        Linear::ALL
            .iter()
            .filter(|&&l| self.contains(l))
            .map(|l| l.name())
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// The linear layers that get LoRA adapters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoraTargets {
    /// The named linears of every block: PEFT's `target_modules` list, torchtune's
    /// `lora_attn_modules` with `apply_lora_to_mlp`. PEFT matches by suffix, so a
    /// vision tower's `q_proj`, `k_proj` and `v_proj` match too.
    Modules(Linears),
    /// Every linear of the blocks, a vision tower's included (PEFT's `"all-linear"`,
    /// Unsloth's notebooks).
    AllLinear,
}

impl LoraTargets {
    /// `q_proj` and `v_proj`: PEFT's default for Llama, Mistral, Qwen and most
    /// decoder families (`TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING`).
    pub const QUERY_VALUE: LoraTargets = LoraTargets::Modules(Linears::of(&[Linear::Q, Linear::V]));
    /// The four attention projections.
    pub const ATTENTION: LoraTargets =
        LoraTargets::Modules(Linears::of(&[Linear::Q, Linear::K, Linear::V, Linear::O]));
    /// torchtune's LoRA configs (`recipes/configs/llama3_1/8B_lora_single_device.yaml`
    /// and the rest of its Llama, Qwen 2.5 and Llama 3.3 configs):
    /// `lora_attn_modules: ['q_proj', 'v_proj', 'output_proj']`, `apply_lora_to_mlp:
    /// True`.
    pub const TORCHTUNE: LoraTargets = LoraTargets::Modules(Linears::of(&[
        Linear::Q,
        Linear::V,
        Linear::O,
        Linear::Gate,
        Linear::Up,
        Linear::Down,
    ]));

    /// Whether the linear `l` of a text block gets an adapter.
    pub fn adapts(self, l: Linear) -> bool {
        match self {
            LoraTargets::Modules(set) => set.contains(l),
            LoraTargets::AllLinear => true,
        }
    }
}

/// Storage of the KV cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KvDtype {
    /// The model's compute dtype: 16 bits, or 32 with fp32 weights (vLLM's
    /// `kv_cache_dtype="auto"`, transformers' cache in the model's dtype).
    Auto,
    Fp16,
    Fp8,
    Int8,
    Int4,
}

impl KvDtype {
    /// Bits per cached element when the model computes in `compute`.
    pub fn bits(self, compute: Dtype) -> u64 {
        match self {
            KvDtype::Auto => compute.bytes_for(8),
            KvDtype::Fp16 => 16,
            KvDtype::Fp8 | KvDtype::Int8 => 8,
            KvDtype::Int4 => 4,
        }
    }

    /// Bits per 32 cached elements as `engine` stores them. ggml quantises the cache in
    /// blocks of 32 with an fp16 scale each (`block_q8_0` and `block_q4_0` in
    /// ggml/src/ggml-common.h: 34 and 18 bytes), so llama.cpp's `--cache-type-k q8_0` is
    /// 8.5 bits per element and `q4_0` 4.5; PyTorch engines keep a scale per tensor or
    /// head, negligible beside the cache.
    pub fn bits_per_32(self, compute: Dtype, engine: Engine) -> u64 {
        match (engine, self) {
            (Engine::Ggml, KvDtype::Int8) => 34 * 8,
            (Engine::Ggml, KvDtype::Int4) => 18 * 8,
            _ => self.bits(compute) * 32,
        }
    }
}

/// The library that runs inference, which decides how activations and the KV cache are
/// allocated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// PyTorch (transformers, vLLM): activations come and go through the caching
    /// allocator.
    #[default]
    Torch,
    /// ggml (llama.cpp, Ollama): one compute buffer reserved at start for the
    /// worst-case graph of a micro-batch, and a KV cache of padded cells.
    Ggml,
    /// AutoAWQ's fused modules (awq/modules/fused/attn.py, `QuantAttentionFused`):
    /// every layer allocates a `WindowedCache` of `max_seq_len` tokens for the whole
    /// batch when the model is loaded, in fp16, and the prefill computes attention
    /// eagerly (`F.softmax(scores.float())`: the fp16 scores, their fp32 copy and the
    /// fp32 softmax are alive together), with K and V repeated to every query head.
    AwqFused,
}

/// A whole workload. [`Workload::default`] is bf16 inference of one sequence of 4096
/// tokens on one GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    pub mode: Mode,
    pub finetune: Finetune,
    /// Storage of the (base) weights.
    pub weights: WeightFormat,
    /// How a full fine-tune keeps its weights.
    pub precision: Precision,
    /// How the loss meets the logits (training).
    pub loss: Loss,
    /// Which linears get LoRA adapters.
    pub lora_targets: LoraTargets,
    pub optimizer: Optimizer,
    pub batch: u64,
    /// Prompt (or training sequence) length in tokens.
    pub seq: u64,
    /// Tokens generated after the prompt (inference).
    pub new_tokens: u64,
    pub grad_checkpointing: bool,
    /// Checkpointed layer inputs live in CPU RAM, copied back one layer ahead of
    /// backward (Unsloth's `use_gradient_checkpointing="unsloth"`: "we offload
    /// activations to system RAM", unsloth.ai/blog/long-context).
    pub checkpoint_offload: bool,
    pub attention: Attention,
    pub lora_rank: u32,
    pub kv_dtype: KvDtype,
    pub gpus: u32,
    /// ZeRO stage 0–3 (data parallel sharding).
    pub zero: u8,
    /// PyTorch FSDP full sharding: ZeRO-3 for the states, plus the parameters FSDP
    /// keeps whole while it computes (`estimate::torch::parallel::fsdp_unsharded`). DeepSpeed's ZeRO-3
    /// is `zero: 3` without it.
    pub fsdp: bool,
    /// Tensor-parallel degree.
    pub tp: u32,
    /// Pipeline-parallel degree.
    pub pp: u32,
    /// ZeRO-Offload: optimizer states (and fp32 master weights) live in CPU memory.
    pub cpu_offload: bool,
    /// ZeRO-3 with the parameter shards in CPU memory as well (DeepSpeed's
    /// `offload_param`, FSDP's `CPUOffload(offload_params=True)`): the GPU only holds
    /// what it gathers to compute ([`crate::estimate::torch::parallel::grad_sync`],
    /// [`crate::estimate::torch::parallel::fsdp_unsharded`]).
    #[serde(default)]
    pub offload_params: bool,
    /// Overrides the CUDA context estimate, in bytes.
    pub cuda_context: Option<u64>,
    /// Exact bytes of the weights as a file stores them (a safetensors or GGUF
    /// header): in inference they replace the weight format's formula.
    #[serde(default)]
    pub stored_weights: Option<u64>,
    /// Inference from a GGUF file: its routed expert tensors per layer, read from the
    /// header (empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stored_experts: Vec<crate::arch::LayerExperts>,
    /// The inference engine.
    #[serde(default)]
    pub engine: Engine,
    /// Training under DeepSpeed's engine instead of PyTorch's DDP or FSDP: gradients
    /// keep their memory between steps (its gradient buffers) instead of being freed by
    /// `zero_grad(set_to_none=True)` and allocated again during backward; ZeRO reduces
    /// them through its own buckets and, at stage 3, gathers whole modules
    /// (`estimate::torch::parallel::grad_sync`).
    #[serde(default)]
    pub deepspeed: bool,
    /// Training with Unsloth's fused LoRA, RMSNorm and RoPE kernels, which save less per
    /// layer than the modules they replace.
    #[serde(default)]
    pub fused_layers: bool,
    /// QLoRA prepared by PEFT's `prepare_model_for_kbit_training` (what TRL's
    /// `SFTTrainer` and PEFT's QLoRA guide do for a 4-bit base): every parameter that is
    /// not 4-bit (embeddings, head, norms, biases) is cast to fp32, so the residual
    /// stream, and the layer inputs that checkpointing keeps, are fp32 too.
    #[serde(default)]
    pub kbit_fp32: bool,
    /// ggml only: `-ngl`, how many layers live on the GPU (`estimate::ggml::placement`
    /// says which); `None` or more than the layers puts every layer and the output
    /// there.
    #[serde(default)]
    pub gpu_layers: Option<u32>,
    /// ggml only: `-ngl` counts the output layer first, as llama.cpp does since
    /// December 2025 (PR 18148); false for earlier builds, which offloaded the last
    /// `-ngl` repeating layers and the output only with every layer.
    #[serde(default = "yes")]
    pub ngl_output_first: bool,
    /// ggml only: the micro-batch its compute buffer is reserved for (`n_ubatch`).
    #[serde(default = "default_ubatch")]
    pub ubatch: u64,
    /// ggml only: llama-server's `-np auto` (its default) opens this many slots over
    /// one KV pool (`kv_unified`), which sizes the sliding-window cache for that many
    /// windows; 0 when the `batch` slots are separate streams (`-np N` given, as
    /// Ollama does). See `estimate::ggml::swa_cells`.
    #[serde(default)]
    pub shared_slots: u32,
    /// PyTorch only: the cuBLAS workspaces its caching allocator holds for the run
    /// (`context::cublas_workspace` per handle: one for inference, two for training,
    /// whose backward runs on the autograd engine's own thread and so its own handle).
    #[serde(default)]
    pub blas_workspace: u64,
    /// ggml only: the first this-many layers keep their routed experts in CPU RAM
    /// (`--n-cpu-moe`; more than the layers is `--cpu-moe`). Nothing for dense models.
    #[serde(default)]
    pub cpu_moe: u32,
    /// ggml only: the vision tower's projector file is loaded (`--mmproj`; Ollama does
    /// it for the models that carry one), with its own compute buffer.
    #[serde(default)]
    pub mmproj: bool,
    /// Peak bandwidth of the CPU's RAM, GB/s: bounds generation by what llama.cpp
    /// leaves in RAM (speed hints only, never memory).
    #[serde(default = "default_ram_gbs")]
    pub ram_gbs: u32,
}

/// Peak bandwidth, in GB/s, of the RAM the CPU reads llama.cpp's offloaded layers from
/// when the reader does not say (`Workload::ram_gbs`): a desktop's dual-channel
/// DDR5-5000 (2 channels × 8 bytes × 5000 MT/s). Servers with more channels read
/// faster (8 × DDR5-4800: 307 GB/s), laptops and DDR4 slower (2 × DDR4-3200: 51 GB/s).
pub const DEFAULT_RAM_GBS: u32 = 80;

/// ggml's micro-batch (`n_ubatch`, 512 by default in llama.cpp and Ollama): the most
/// tokens one pass of the compute graph takes.
pub const GGML_UBATCH: u32 = 512;

fn default_ram_gbs() -> u32 {
    DEFAULT_RAM_GBS
}

fn yes() -> bool {
    true
}

fn default_ubatch() -> u64 {
    u64::from(GGML_UBATCH)
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            mode: Mode::Inference,
            finetune: Finetune::Full,
            weights: WeightFormat::Plain { dtype: Dtype::Bf16 },
            precision: Precision::Pure,
            loss: Loss::Full,
            lora_targets: LoraTargets::AllLinear,
            optimizer: Optimizer::Adamw,
            batch: 1,
            seq: 4096,
            new_tokens: 0,
            grad_checkpointing: false,
            checkpoint_offload: false,
            attention: Attention::Sdpa,
            lora_rank: 16,
            kv_dtype: KvDtype::Auto,
            gpus: 1,
            zero: 0,
            fsdp: false,
            tp: 1,
            pp: 1,
            cpu_offload: false,
            offload_params: false,
            cuda_context: None,
            stored_weights: None,
            stored_experts: Vec::new(),
            engine: Engine::Torch,
            deepspeed: false,
            fused_layers: false,
            kbit_fp32: false,
            gpu_layers: None,
            ubatch: default_ubatch(),
            shared_slots: 0,
            ngl_output_first: true,
            blas_workspace: 0,
            cpu_moe: 0,
            mmproj: false,
            ram_gbs: default_ram_gbs(),
        }
    }
}

impl Workload {
    /// The dtype activations are computed in: fp32 only for pure fp32 training (or
    /// inference) on fp32 weights; fp16 on fp16 weights; bf16 otherwise (autocast's
    /// default on current GPUs).
    pub fn compute_dtype(&self) -> Dtype {
        let pure = self.mode == Mode::Inference || self.precision == Precision::Pure;
        match self.weights {
            WeightFormat::Plain { dtype: Dtype::Fp32 } if pure => Dtype::Fp32,
            WeightFormat::Plain { dtype: Dtype::Fp16 } => Dtype::Fp16,
            _ => Dtype::Bf16,
        }
    }

    /// The sharding factor for parameters, gradients and optimizer states.
    pub fn shards(&self) -> (u64, u64, u64) {
        let split = u64::from(self.tp.max(1)) * u64::from(self.pp.max(1));
        let dp = u64::from(self.gpus.max(1)) / split;
        let dp = dp.max(1);
        let stage = if self.fsdp { 3 } else { self.zero.min(3) };
        let params = if stage >= 3 { dp } else { 1 };
        let grads = if stage >= 2 { dp } else { 1 };
        let optim = if stage >= 1 { dp } else { 1 };
        (params, grads, optim)
    }
}

/// Test builders: `Workload::default().seq(32_768).gpus(2)`, one setter per field,
/// for the tests of every module that estimates a workload.
#[cfg(test)]
macro_rules! setters {
    ($($field:ident: $ty:ty),* $(,)?) => {
        // A setter for every field: not every test sets every one.
        #[allow(dead_code)]
        impl Workload {
            $(
                pub(crate) fn $field(mut self, value: $ty) -> Self {
                    self.$field = value;
                    self
                }
            )*
        }
    };
}

#[cfg(test)]
setters! {
    mode: Mode,
    finetune: Finetune,
    weights: WeightFormat,
    precision: Precision,
    loss: Loss,
    lora_targets: LoraTargets,
    optimizer: Optimizer,
    batch: u64,
    seq: u64,
    new_tokens: u64,
    grad_checkpointing: bool,
    checkpoint_offload: bool,
    attention: Attention,
    lora_rank: u32,
    kv_dtype: KvDtype,
    gpus: u32,
    zero: u8,
    fsdp: bool,
    tp: u32,
    pp: u32,
    cpu_offload: bool,
    offload_params: bool,
    cuda_context: Option<u64>,
    stored_weights: Option<u64>,
    stored_experts: Vec<crate::arch::LayerExperts>,
    engine: Engine,
    deepspeed: bool,
    fused_layers: bool,
    kbit_fp32: bool,
    gpu_layers: Option<u32>,
    ngl_output_first: bool,
    ubatch: u64,
    shared_slots: u32,
    blas_workspace: u64,
    cpu_moe: u32,
    mmproj: bool,
    ram_gbs: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_lists_read_peft_and_torchtune_names() {
        use Linear::*;
        for (text, want) in [
            ("q_proj,v_proj", Some(&[Q, V][..])),
            (" V_PROJ , q_proj ,", Some(&[Q, V])),
            (
                "q_proj,v_proj,output_proj,mlp",
                Some(&[Q, V, O, Gate, Up, Down]),
            ),
            ("wq", None),
            ("w1,w3,w2", Some(&[Gate, Up, Down])),
            ("qkv_proj", None),
            ("out_proj", None),
            ("q_proj,lm_head", None),
            ("", None),
            (",,", None),
        ] {
            assert_eq!(Linears::parse(text), want.map(Linears::of), "{text}");
        }
        assert_eq!(Linears::of(&[V, Q]).names(), "q_proj,v_proj");
        assert_eq!(
            LoraTargets::Modules(Linears::parse("v_proj,q_proj").unwrap()),
            LoraTargets::QUERY_VALUE
        );
        assert!(LoraTargets::TORCHTUNE.adapts(O) && !LoraTargets::TORCHTUNE.adapts(K));
    }
}
