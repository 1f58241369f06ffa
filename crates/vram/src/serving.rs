//! Serving-engine budgeting, the way vLLM does it at start-up: take
//! `gpu_memory_utilization` of the card, subtract the weights, the peak of its profile
//! run, the non-PyTorch memory (CUDA context, NCCL) and, since vLLM 0.21, the estimate
//! of its CUDA graphs ([`crate::cuda_graphs`]), and give the rest to the paged KV cache
//! in blocks of `block_size` tokens.
//!
//! The profile run (`profile_run` in vllm/v1/worker/gpu_model_runner.py) is a forward
//! pass over `max_num_batched_tokens` tokens followed by a dummy sampler pass over
//! `max_num_seqs` rows of logits (`_dummy_sampler_run`). With a vocabulary of 128k–256k
//! the sampler is the larger of the two: its logits stay alive in the model's dtype
//! while the sampler holds an fp32 copy (`logits.to(torch.float32)` in
//! vllm/v1/sample/sampler.py), the fp32 probabilities (`logits.softmax(dim=-1,
//! dtype=torch.float32)`) and the fp32 exponential noise it divides them by
//! (`random_sample` in vllm/v1/sample/ops/topk_topp_sampler.py). The forward pass's
//! output is alive meanwhile: `profile_run` holds `hidden_states` (every token's) and
//! the gathered `last_hidden_states` (a row per sequence) until the sampler returns,
//! and `_dummy_sampler_run` makes a third, `torch.rand_like` copy of the latter. Two
//! buffers that outlive the profile are counted too, because vLLM reads the caching
//! allocator's peak (`allocated_bytes.all.peak` in vllm/v1/worker/gpu_worker.py): the
//! top-k/top-p Triton kernel's cached fp32 buffer of one row per multiprocessor
//! (vllm/v1/sample/ops/topk_topp_triton.py, since 0.19) and PyTorch's cuBLAS workspace,
//! allocated through the caching allocator on the first matmul
//! (aten/src/ATen/cuda/CublasHandlePool.cpp).

use serde::{Deserialize, Serialize};

use crate::arch::Architecture;
use crate::catalog::Gpu;
use crate::cuda_graphs::{self, CudaGraphs};
use crate::estimate::Estimate;
use crate::estimate::kv::kv_cache;
use crate::estimate::torch::activations::prefill_activations;
use crate::units::ByteSize;
use crate::workload::Workload;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServingPlan {
    /// Memory the engine may use: capacity × utilisation.
    pub budget_bytes: u64,
    /// The weights as vLLM charges them when it loads them ([`loaded_weights`]).
    pub weights_bytes: u64,
    /// What is left for the KV cache (0 when the model does not fit).
    pub kv_budget_bytes: u64,
    pub kv_bytes_per_token: u64,
    /// Whole blocks that fit, and the tokens they hold.
    pub blocks: u64,
    pub tokens: u64,
    /// Sequences of `seq + new_tokens` tokens that can be in flight at once.
    pub max_sequences: u64,
    /// Where the CUDA graphs take their memory from, and how much ([`cuda_graphs`]):
    /// already out of `kv_budget_bytes` when profiled, on top of `budget_bytes` when
    /// captured after the KV cache.
    pub cuda_graphs: CudaGraphs,
    pub cuda_graph_bytes: u64,
}

/// What vLLM's start-up profile runs, and the GPU facts its buffers depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    /// `max_num_batched_tokens`: the tokens of the profiling forward pass.
    pub batched_tokens: u64,
    /// `max_num_seqs`: the rows of logits the dummy sampler pass takes.
    pub sequences: u64,
    /// The GPU's multiprocessors, which size the top-k/top-p kernel's buffer.
    pub sms: u64,
    /// PyTorch's cuBLAS workspace on this GPU ([`crate::context::cublas_workspace`]).
    pub blas_workspace: u64,
    /// Where the CUDA graphs captured after the profile take their memory from.
    pub graphs: CudaGraphs,
}

/// Multiprocessors assumed for a GPU that is not in the catalog: an H100's 132, the
/// usual serving card (choosing the GPU gives its own count).
pub const UNKNOWN_SMS: u64 = 132;

impl Profile {
    /// vLLM v1's defaults for its OpenAI-compatible server (`get_batch_defaults` in
    /// vllm/engine/arg_utils.py): on GPUs with at least 70 GiB that are not A100s, 8192
    /// tokens and 1024 sequences; elsewhere 2048 and 256. `max_num_seqs` never exceeds
    /// `max_num_batched_tokens`. `gpu` is the catalog's card, if one was chosen.
    pub fn vllm_default(total_memory: u64, gpu: Option<&Gpu>) -> Profile {
        let is_a100 = gpu.is_some_and(|g| g.id.starts_with("a100"));
        let big = total_memory >= 70 * ByteSize::GIB && !is_a100;
        let (batched_tokens, sequences) = if big { (8192, 1024) } else { (2048, 256) };
        Profile {
            batched_tokens,
            sequences: sequences.min(batched_tokens),
            sms: gpu.map_or(UNKNOWN_SMS, |g| u64::from(g.sms)),
            blas_workspace: crate::context::cublas_workspace(gpu.map(|g| g.family.as_str())),
            graphs: CudaGraphs::default(),
        }
    }

    /// The profile with the reader's CUDA graph mode.
    pub fn with_graphs(self, graphs: CudaGraphs) -> Profile {
        Profile { graphs, ..self }
    }

    /// The batch sizes vLLM captures CUDA graphs for with this profile's limits.
    pub fn captures(self) -> cuda_graphs::Captures {
        cuda_graphs::Captures::of(self.sequences, self.batched_tokens)
    }

    /// The CUDA graphs' memory on one GPU of a stage holding `layers` layers.
    pub fn graph_bytes(self, layers: u64) -> u64 {
        cuda_graphs::bytes(self.graphs, layers, self.captures())
    }

    /// The profile with the reader's `max_num_batched_tokens`, if one was given; the
    /// sampler's rows stay at `max_num_seqs`, which never exceeds the tokens.
    pub fn with_tokens(self, tokens: Option<u64>) -> Profile {
        match tokens {
            Some(t) => Profile {
                batched_tokens: t.max(1),
                sequences: self.sequences.min(t.max(1)),
                ..self
            },
            None => self,
        }
    }

    /// The profile with the reader's `max_num_seqs`, if one was given (at most the
    /// tokens: each sequence takes at least one).
    pub fn with_sequences(self, sequences: Option<u64>) -> Profile {
        match sequences {
            Some(n) => Profile {
                sequences: n.clamp(1, self.batched_tokens.max(1)),
                ..self
            },
            None => self,
        }
    }
}

/// What a model with a vision encoder adds to vLLM's profile run (`profile_run` in
/// vllm/v1/worker/gpu_model_runner.py, for models that `supports_mm_inputs`): before the
/// language model's dummy pass it encodes as many dummy images of the largest size as
/// the encoder budget holds (`max(max_num_batched_tokens, tokens per image)` tokens:
/// "profiled with 32 image items" in vLLM 0.19's log for Gemma 3 at 8192), and keeps
/// both the images' pixels (`batched_dummy_mm_inputs`, in the model's dtype) and their
/// encoder outputs (`self.encoder_cache`, one row of the language model's width per
/// image token) alive until the sampler pass is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncoderProfile {
    /// Dummy images encoded.
    pub images: u64,
    /// Bytes alive through the language model's pass and the sampler's.
    pub alive: u64,
    /// The encoder pass's own peak: the pixels plus one layer's widest moment, the
    /// MLP's activation (`SiglipMLP`: the residual, fc1's output and the GELU's
    /// out-of-place result), the intermediate width split across tensor-parallel ranks.
    pub peak: u64,
}

impl EncoderProfile {
    /// `None` for a model without a vision encoder.
    pub fn of(a: &Architecture, w: &Workload, p: Profile) -> Option<EncoderProfile> {
        let v = a.vision?;
        let c = u128::from(w.compute_dtype().bytes_for(1));
        let per_image = u128::from(v.tokens_per_image.max(1));
        let items = (u128::from(p.batched_tokens).max(per_image) / per_image).max(1);
        let pixels = items * 3 * u128::from(v.image) * u128::from(v.image) * c;
        let outputs = items * per_image * u128::from(a.hidden) * c;
        let tp = u128::from(w.tp.max(1));
        let widest = u128::from(v.hidden) + 2 * u128::from(v.intermediate).div_ceil(tp);
        let layer = items * u128::from(v.patches()) * widest * c;
        let sat = |b: u128| u64::try_from(b).unwrap_or(u64::MAX);
        Some(EncoderProfile {
            images: sat(items),
            alive: sat(pixels + outputs),
            peak: sat(pixels + layer),
        })
    }
}

/// Bytes of the profile run's peak: the larger of the forward pass over
/// `batched_tokens` tokens and the sampler pass over `sequences` rows of logits, with
/// the forward pass's output still alive beside it, plus the cuBLAS workspace (see the
/// module documentation for the tensors it holds). A model with a vision encoder adds
/// its dummy images' pass first ([`EncoderProfile`]).
pub fn profile_peak(a: &Architecture, w: &Workload, p: Profile) -> u64 {
    let forward = prefill_activations(
        a,
        &Workload {
            batch: 1,
            seq: p.batched_tokens.max(1),
            new_tokens: 0,
            ..w.clone()
        },
    );
    let c = w.compute_dtype().bytes_for(1);
    // The model-dtype logits, their fp32 copy (none when they already are fp32), the
    // fp32 probabilities and the fp32 noise.
    let per_element = c + if c < 4 { 4 } else { 0 } + 4 + 4;
    let logits = u128::from(p.sequences) * u128::from(a.vocab) * u128::from(per_element);
    // While the sampler runs, the forward pass's output is still alive: `profile_run`
    // keeps `hidden_states` (every token's, the full hidden size on each tensor-parallel
    // rank) and passes `last_hidden_states` (one row per sequence, gathered into a new
    // tensor) to `_dummy_sampler_run`, and deletes them only after it.
    // `_dummy_sampler_run` replaces its argument with `torch.rand_like(hidden_states)`:
    // one more row per sequence.
    let rows = u128::from(p.batched_tokens) + 2 * u128::from(p.sequences);
    let hidden = rows * u128::from(a.hidden) * u128::from(c);
    // From 8 sequences on, top-k/top-p runs as a Triton kernel that caches an fp32
    // buffer of `min(next_power_of_two(min(sms, sequences)), sms)` vocabulary rows
    // (`apply_top_k_top_p_triton`), alive from then on.
    let topk = if p.sequences >= 8 {
        let programs = p.sms.max(1).min(p.sequences);
        let rows = programs.next_power_of_two().min(p.sms.max(1));
        u128::from(rows) * u128::from(a.vocab) * 4
    } else {
        0
    };
    let sampler = u64::try_from(logits + hidden + topk).unwrap_or(u64::MAX);
    let language = forward.max(sampler);
    let peak = match EncoderProfile::of(a, w, p) {
        Some(e) => language.saturating_add(e.alive).max(e.peak),
        None => language,
    };
    peak.saturating_add(p.blas_workspace)
}

/// Bytes vLLM charges for the weights on one GPU ("Model loading took", the
/// `weights_memory` of its budget): the growth of `torch.cuda.memory_allocated()`
/// while the model is built (`DeviceMemoryProfiler` in vllm/utils/mem_utils.py), which
/// is `weights` plus two things the parameter count misses:
/// - the rotary embedding's `cos_sin_cache`, `[max_position_embeddings, rotary_dim]` in
///   the model's dtype, one buffer for all layers (`get_rope`'s cache in
///   vllm/model_executor/layers/rotary_embedding), on every tensor-parallel rank;
/// - the caching allocator's charge for each weight ([`crate::torch_alloc::charged`]),
///   with vLLM's fused layout on each rank: `qkv_proj`, `o_proj`, `gate_up_proj`,
///   `down_proj` per layer, each MoE layer's experts as two tensors (`w13`, `w2`), and
///   the embedding and output head over a vocabulary padded to 64
///   (vllm/model_executor/layers/vocab_parallel_embedding.py).
///
/// Only plain 16- and 32-bit weights are laid out here; a quantised checkpoint's
/// packed tensors and scales follow each method's own layout, and get `weights`
/// plus the rotary cache.
///
/// Gemma 3 adds a second rotary table, because its global layers scale positions
/// linearly by 8 over the windowed layers' unscaled one ([`crate::arch::Rope`]); its
/// vision tower is already in `weights` ([`crate::estimate::weights::vision_bytes`]). With both,
/// vLLM 0.19's "Model loading took 8.58 / 23.31 / 51.45 GiB" for
/// gemma-3-4b/12b/27b-it come out as 8.57 / 23.31 / 51.44 here.
pub fn loaded_weights(a: &Architecture, w: &Workload, weights: u64) -> u64 {
    let c = match w.weights {
        crate::quant::WeightFormat::Plain { dtype } => Some(dtype.bytes_for(1)),
        _ => None,
    };
    let model_bytes = w.compute_dtype().bytes_for(1);
    let rope = if a.learned_positions == 0 && !a.encoder_only {
        let dim = a.mla.map_or(a.head_dim, |m| m.qk_rope_head_dim);
        a.rope
            .rows(a.max_positions)
            .saturating_mul(u64::from(dim))
            .saturating_mul(model_bytes)
    } else {
        0
    };
    let rounding = c.map_or(0, |c| rounding_surplus(a, w, c));
    weights.saturating_add(rope).saturating_add(rounding)
}

/// What the caching allocator charges above the exact bytes of vLLM's fused weights
/// on one rank, `c` bytes per parameter.
fn rounding_surplus(a: &Architecture, w: &Workload, c: u64) -> u64 {
    // Products in u128: catalog shapes are small, imported ones may be forged.
    let tp = u128::from(w.tp.max(1));
    let hidden = u128::from(a.hidden);
    let extra = |elements: u128| -> u128 {
        let bytes = u64::try_from(elements * u128::from(c)).unwrap_or(u64::MAX);
        let exact = bytes.div_ceil(512).saturating_mul(512);
        u128::from(crate::torch_alloc::charged(bytes).saturating_sub(exact))
    };
    let head_dim = u128::from(a.head_dim);
    // KV heads are split across ranks, or replicated when there are fewer than ranks.
    let kv = (u128::from(a.kv_heads) / tp).max(1) * head_dim;
    let q = u128::from(a.heads) * head_dim / tp;
    let attention = if a.mla.is_some() {
        // MLA's projections have their own shapes; not laid out here.
        0
    } else {
        extra((q + 2 * kv) * hidden) + extra(hidden * q)
    };
    let mlp = |intermediate: u128| {
        let per_rank = intermediate / tp;
        let up = if a.mlp == crate::arch::Mlp::Gated {
            2 * per_rank
        } else {
            per_rank
        };
        extra(up * hidden) + extra(hidden * per_rank)
    };
    let dense = mlp(u128::from(a.intermediate));
    let layers = u128::from(a.layers);
    let (dense_layers, moe_layers, moe) = match a.moe {
        Some(m) => {
            let dense_layers = u128::from(m.dense_layers).min(layers);
            let experts = u128::from(m.experts);
            let per_rank = u128::from(m.expert_intermediate) / tp;
            let moe = extra(experts * 2 * per_rank * hidden) + extra(experts * hidden * per_rank);
            (dense_layers, layers - dense_layers, moe)
        }
        None => (layers, 0, 0),
    };
    let pp = u128::from(w.pp.max(1));
    let stage = |n: u128| n.div_ceil(pp);
    let vocab = u128::from(a.vocab).div_ceil(64) * 64 / tp;
    let heads = if a.tied_embeddings { 1 } else { 2 };
    let total = stage(layers) * attention
        + stage(dense_layers) * dense
        + stage(moe_layers) * moe
        + heads * extra(vocab * hidden);
    u64::try_from(total).unwrap_or(u64::MAX)
}

/// How vLLM's hybrid KV cache manager lays out a model whose layers attend in two ways
/// (`_get_kv_cache_groups_uniform_page_size` in vllm/v1/core/kv_cache_utils.py): the
/// layers of each kind are split into groups of `group_size` layers, the last group of
/// a kind padded to full size, and every group draws its blocks from one shared pool in
/// which a block holds `group_size` layers' pages. The group size is the smaller kind's
/// count, or the larger one's when it is under 1.5× the smaller (so Gemma 3's 52
/// windowed + 10 global layers become 6 + 1 groups of 10: 70 layers' worth of memory per
/// token, and Gemma 2's 23 + 23 stay 2 groups of 23).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct HybridLayout {
    group_size: u64,
    windowed_groups: u64,
    global_groups: u64,
    window: u64,
}

impl HybridLayout {
    /// `None` for a model whose layers all attend the same way (one group, no padding).
    fn of(a: &Architecture, pp: u32) -> Option<HybridLayout> {
        let window = a.sliding_window?;
        let (windowed, global) = a.windowed_layers();
        // Each pipeline stage groups its own layers.
        let pp = pp.max(1);
        let (windowed, global) = (
            u64::from(windowed.div_ceil(pp)),
            u64::from(global.div_ceil(pp)),
        );
        if windowed == 0 || global == 0 {
            return None;
        }
        let (small, large) = (windowed.min(global), windowed.max(global));
        // `max_num_layers < min_num_layers * 1.5`, in integers.
        let group_size = if 2 * large < 3 * small { large } else { small };
        Some(HybridLayout {
            group_size,
            windowed_groups: windowed.div_ceil(group_size),
            global_groups: global.div_ceil(group_size),
            window: u64::from(window.window),
        })
    }

    fn groups(&self) -> u64 {
        self.windowed_groups + self.global_groups
    }

    /// Blocks one request of `len` tokens may hold in every group
    /// (`get_max_concurrency_for_kv_cache_config`: a global group needs the whole
    /// length; a windowed one `window - 1 + max_num_batched_tokens` tokens at most, plus
    /// one block).
    fn blocks_per_request(&self, len: u64, block: u64, batched_tokens: u64) -> u64 {
        let global = len.div_ceil(block);
        let windowed = (self.window.saturating_sub(1).saturating_add(batched_tokens))
            .min(len)
            .div_ceil(block)
            .saturating_add(1);
        self.global_groups
            .saturating_mul(global)
            .saturating_add(self.windowed_groups.saturating_mul(windowed))
    }
}

/// How vLLM lays out a model with Gated DeltaNet layers (Qwen3-Next, Qwen3.5): every
/// layer's state for one request is a "page" of the one pool the attention layers draw
/// their KV blocks from. The attention layers' block grows until one attention page
/// holds a whole state (`_align_hybrid_block_size` in vllm/platforms/interface.py: the
/// kernel's block, `max(16, block_size)`, times `cdiv(state, kernel × page of one
/// token)`), each state is padded to that page (`mamba_page_size_padded`), and the
/// layers are grouped as for sliding windows (`_get_kv_cache_groups_uniform_page_size`:
/// groups of the smaller kind's count, or the larger's under 1.5×). A request holds
/// its context's blocks in each attention group and a fixed number of pages in each
/// linear group: two in the "align" mode vLLM switches hybrids to when prefix caching
/// is on, its default (`MambaSpec.max_memory_usage_bytes`: `2 + num_speculative_blocks
/// + num_prefill_checkpoint_blocks`; the checkpoint block is not counted). The state is
/// in the model's dtype, its recurrent part in fp32 when the config asks for it
/// (Qwen3.5's `mamba_ssm_dtype`), and tensor parallelism splits its heads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LinearLayout {
    /// One attention layer's KV bytes for one token.
    token_page: u64,
    /// Tokens per block after the alignment.
    block: u64,
    group_size: u64,
    attention_groups: u64,
    linear_groups: u64,
}

/// Pages a request holds in each linear group ([`LinearLayout`]).
const LINEAR_PAGES_PER_REQUEST: u64 = 2;

impl LinearLayout {
    fn of(a: &Architecture, w: &Workload, per_token: u64, block: u64) -> Option<LinearLayout> {
        let l = a.linear?;
        let pp = u64::from(w.pp.max(1));
        let tp = u128::from(w.tp.max(1));
        let attention = u64::from(a.attention_layers()).div_ceil(pp);
        let linear = u64::from(a.linear_layers()).div_ceil(pp);
        if attention == 0 || linear == 0 {
            return None;
        }
        let token_page = per_token.div_ceil(attention).max(1);
        let c = u128::from(w.compute_dtype().bytes_for(1));
        let (conv, recurrent) = l.state_elements();
        let ssm = if l.ssm_fp32 { 4 } else { c };
        let state = u64::try_from((u128::from(conv) * c + u128::from(recurrent) * ssm) / tp)
            .unwrap_or(u64::MAX);
        let kernel = block.max(16);
        let aligned = kernel.saturating_mul(state.div_ceil(kernel.saturating_mul(token_page)));
        let (small, large) = (attention.min(linear), attention.max(linear));
        let group_size = if 2 * large < 3 * small { large } else { small };
        Some(LinearLayout {
            token_page,
            block: aligned.max(block),
            group_size,
            attention_groups: attention.div_ceil(group_size),
            linear_groups: linear.div_ceil(group_size),
        })
    }

    fn groups(&self) -> u64 {
        self.attention_groups + self.linear_groups
    }

    /// A block of the pool: one page of every layer of a group.
    fn bytes_per_block(&self) -> u64 {
        self.token_page
            .saturating_mul(self.block)
            .saturating_mul(self.group_size)
    }

    fn blocks_per_request(&self, len: u64) -> u64 {
        self.attention_groups
            .saturating_mul(len.div_ceil(self.block))
            .saturating_add(self.linear_groups.saturating_mul(LINEAR_PAGES_PER_REQUEST))
    }
}

/// For a model whose layers attend in two ways, the layers' worth of KV cache vLLM's
/// hybrid manager gives each token (groups × group size, padding included) and the
/// layers the model has per pipeline stage; `None` when every layer attends alike.
pub fn hybrid_padding(a: &Architecture, pp: u32) -> Option<(u64, u64)> {
    let h = HybridLayout::of(a, pp)?;
    let layers = u64::from(a.layers.div_ceil(pp.max(1)));
    Some((h.groups().saturating_mul(h.group_size), layers))
}

/// What vLLM charges beside the weights and the profile's peak: the growth of the
/// memory PyTorch does not allocate since the worker's first snapshot
/// (`memory_profiling` in vllm/utils/mem_utils.py: `non_torch_increase`), taken after
/// the CUDA context exists, so the context itself is never charged, and no margin for
/// the caching allocator (the KV cache is one allocation sized from what is left). On
/// one GPU that growth is lazily loaded kernels, a few hundred MiB at most (0.01 GiB on
/// a T4, 0.10 on an A100-40GB, 0.25 on an H100 in vLLM's own logs), not modelled. With
/// several GPUs it holds NCCL's buffers, vLLM's custom all-reduce and, on Hopper, NVLink
/// SHARP: 2.07 GiB per H100 with TP 2 or 4 in vLLM 0.19's logs, more than the NCCL
/// communicator the estimate models ([`crate::estimate::overhead::communication_bytes`], measured
/// on A100s); there the whole estimated overhead (CUDA context and allocator margin
/// included) stands in for the rest, on the safe side.
fn non_torch_growth(w: &Workload, overhead: u64) -> u64 {
    if pays_whole_overhead(w) {
        overhead
    } else {
        crate::estimate::overhead::communication_bytes(w)
    }
}

/// Whether the plan charges the whole estimated overhead for vLLM's non-PyTorch growth
/// (several GPUs, [`non_torch_growth`]).
pub fn pays_whole_overhead(w: &Workload) -> bool {
    w.gpus > 1
}

/// Plans a serving deployment. `utilization` is vLLM's `gpu_memory_utilization` in
/// basis points (× 10 000, [`crate::settings::BASIS_POINTS`]); `est` must be an inference estimate of one sequence
/// (its weights and overhead are used); `profile` is what the start-up profile ran and
/// `profile_peak` [`profile_peak`]'s bytes for it.
#[allow(clippy::too_many_arguments)]
pub fn plan(
    a: &Architecture,
    w: &Workload,
    est: &Estimate,
    capacity: u64,
    utilization: u16,
    block_size: u32,
    profile: Profile,
    profile_peak: u64,
) -> ServingPlan {
    let whole = crate::settings::BASIS_POINTS;
    let budget = u64::try_from(
        u128::from(capacity) * u128::from(utilization.min(whole)) / u128::from(whole),
    )
    .unwrap_or(capacity);
    // vLLM itself charges the weights, the profile's allocated peak and the growth of
    // non-PyTorch memory ([`non_torch_growth`]).
    let b = &est.breakdown;
    let weights = loaded_weights(a, w, b.weights);
    let graphs = profile.graph_bytes(u64::from(a.layers.div_ceil(w.pp.max(1))));
    let reserved = if profile.graphs == CudaGraphs::Profiled {
        graphs
    } else {
        0
    };
    let used = weights
        .saturating_add(profile_peak)
        .saturating_add(non_torch_growth(w, b.overhead))
        .saturating_add(reserved);
    let kv_budget = budget.saturating_sub(used);
    // Each pipeline stage caches its own layers.
    let per_token = kv_cache(
        a,
        &Workload {
            seq: 1,
            new_tokens: 0,
            batch: 1,
            ..w.clone()
        },
    )
    .div_ceil(u64::from(w.pp.max(1)))
    .max(1);
    let block = u64::from(block_size.max(1));
    let seq_tokens = w.seq.saturating_add(w.new_tokens).max(1);
    if let Some(l) = LinearLayout::of(a, w, per_token, block) {
        let pool_blocks = kv_budget / l.bytes_per_block().max(1);
        return ServingPlan {
            budget_bytes: budget,
            weights_bytes: weights,
            kv_budget_bytes: kv_budget,
            kv_bytes_per_token: l
                .token_page
                .saturating_mul(l.group_size)
                .saturating_mul(l.attention_groups),
            blocks: pool_blocks / l.groups(),
            tokens: pool_blocks / l.groups() * l.block,
            max_sequences: pool_blocks / l.blocks_per_request(seq_tokens).max(1),
            cuda_graphs: profile.graphs,
            cuda_graph_bytes: graphs,
        };
    }
    if let Some(h) = HybridLayout::of(a, w.pp) {
        // Every layer caches the same bytes per token (one KV spec per kind).
        let per_layer = per_token
            .div_ceil(
                u64::from(a.layers.max(1))
                    .div_ceil(u64::from(w.pp.max(1)))
                    .max(1),
            )
            .max(1);
        let pool_block = per_layer.saturating_mul(block).saturating_mul(h.group_size);
        let pool_blocks = kv_budget / pool_block;
        // vLLM reports `num_blocks // len(kv_cache_groups) * block_size` tokens
        // (`_report_kv_cache_config`).
        let blocks = pool_blocks / h.groups();
        let per_request = h
            .blocks_per_request(seq_tokens, block, profile.batched_tokens)
            .max(1);
        return ServingPlan {
            budget_bytes: budget,
            weights_bytes: weights,
            kv_budget_bytes: kv_budget,
            kv_bytes_per_token: per_layer
                .saturating_mul(h.group_size)
                .saturating_mul(h.groups()),
            blocks,
            tokens: blocks * block,
            max_sequences: pool_blocks / per_request,
            cuda_graphs: profile.graphs,
            cuda_graph_bytes: graphs,
        };
    }
    let blocks = kv_budget / per_token.saturating_mul(block);
    let tokens = blocks * block;
    ServingPlan {
        budget_bytes: budget,
        weights_bytes: weights,
        kv_budget_bytes: kv_budget,
        kv_bytes_per_token: per_token,
        blocks,
        tokens,
        max_sequences: tokens / seq_tokens,
        cuda_graphs: profile.graphs,
        cuda_graph_bytes: graphs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{self, model};
    use crate::estimate::{Breakdown, ModelInput, estimate};

    /// Qwen3-Next-80B in vLLM: 12 attention layers of 2 048 bytes per token and 36 Gated
    /// DeltaNet layers of 1 097 728 bytes of bf16 state per request. The attention block
    /// grows to 16 × ⌈1 097 728 / (16 × 2 048)⌉ = 544 tokens, one group of 12 attention
    /// layers and three of 12 linear ones share a pool of 12 × 544 × 2 048-byte blocks,
    /// and a 32 768-token request takes ⌈32 768 / 544⌉ = 61 attention blocks and 2 pages
    /// in each linear group. Qwen3.5 keeps its recurrent state in fp32.
    #[test]
    fn gated_deltanet_states_are_pages_of_the_kv_pool() {
        let a = model("qwen3-next-80b-a3b").unwrap().arch.clone();
        let w = Workload::default().seq(32_768);
        let per_token = kv_cache(&a, &Workload::default().seq(1));
        assert_eq!(per_token, 12 * 2_048);
        let l = LinearLayout::of(&a, &w, per_token, 16).unwrap();
        assert_eq!(
            (
                l.token_page,
                l.block,
                l.group_size,
                l.attention_groups,
                l.linear_groups
            ),
            (2_048, 544, 12, 1, 3)
        );
        assert_eq!(l.bytes_per_block(), 12 * 544 * 2_048);
        assert_eq!(l.blocks_per_request(32_768), 61 + 3 * 2);
        let m = ModelInput::Arch {
            arch: Box::new(a.clone()),
            total_params: None,
        };
        let e = estimate(&m, &w).unwrap();
        let kv = 40 * ByteSize::GIB;
        let profile = Profile::vllm_default(kv, None).with_graphs(CudaGraphs::Off);
        let p = plan(
            &a,
            &w,
            &e,
            kv + loaded_weights(&a, &w, e.breakdown.weights),
            10_000,
            16,
            profile,
            0,
        );
        let pool = p.kv_budget_bytes / (12 * 544 * 2_048);
        assert_eq!(p.max_sequences, pool / 67);
        assert_eq!(p.tokens, pool / 4 * 544);
        // Qwen3.5's fp32 recurrent state: 48 value heads of 128 × 128 in four bytes.
        let b = model("qwen3.5-27b").unwrap().arch.clone();
        let per_token = kv_cache(&b, &Workload::default().seq(1));
        let l = LinearLayout::of(&b, &w, per_token, 16).unwrap();
        let state: u64 = 3 * (2 * 16 * 128 + 48 * 128) * 2 + 48 * 128 * 128 * 4;
        assert_eq!(l.block, 16 * state.div_ceil(16 * l.token_page));
    }

    /// vLLM's start-up log for Llama-3.1-8B: 4.60 GiB of KV cache hold 37 696 tokens
    /// (public-cases kv-2).
    #[test]
    fn vllm_block_rounding() {
        let a = model("llama-3.1-8b").unwrap().arch.clone();
        let w = Workload::default();
        let m = ModelInput::Arch {
            arch: Box::new(a.clone()),
            total_params: None,
        };
        let mut e = estimate(&m, &w).unwrap();
        // Force a KV budget of exactly 4.60 GiB.
        let kv = (4.60 * ByteSize::GIB as f64) as u64;
        e.breakdown = Breakdown {
            weights: 0,
            activations: 0,
            overhead: 0,
            ..e.breakdown
        };
        // The rotary cache and the allocator's rounding are charged beside the weights.
        let kv = kv + loaded_weights(&a, &w, 0);
        // A 0.19 log: the graphs were captured after the KV cache.
        let profile = Profile::vllm_default(kv, None).with_graphs(CudaGraphs::AfterKv);
        let p = plan(&a, &w, &e, kv, 10_000, 16, profile, 0);
        assert_eq!(p.kv_bytes_per_token, 131_072);
        assert_eq!(p.tokens, 37_680);
        assert_eq!(p.tokens % 16, 0);
        assert_eq!(p.max_sequences, 37_680 / 4096);
        assert_eq!(p.cuda_graph_bytes, profile.graph_bytes(32));

        // From vLLM 0.21 the graphs' estimate comes out of the KV cache first; with
        // --enforce-eager there are none.
        let reserved = Profile::vllm_default(kv, None);
        let p = plan(&a, &w, &e, kv, 10_000, 16, reserved, 0);
        let graphs = reserved.graph_bytes(32);
        assert_eq!(graphs, profile.graph_bytes(32));
        assert_eq!(p.cuda_graph_bytes, graphs);
        assert_eq!(
            p.tokens,
            ((4.60 * ByteSize::GIB as f64) as u64 - graphs) / (131_072 * 16) * 16
        );
        let eager = reserved.with_graphs(CudaGraphs::Off);
        let p = plan(&a, &w, &e, kv, 10_000, 16, eager, 0);
        assert_eq!((p.cuda_graph_bytes, p.tokens), (0, 37_680));
    }

    /// The profile run's peak is the sampler's for large vocabularies: Llama-3.1-8B on
    /// an H100 holds 1024 × 128 256 logits in bf16, their fp32 copy, the probabilities
    /// and the noise (14 bytes each), beside the forward pass's 8192 rows of hidden
    /// states and two copies of the 1024 last rows, the top-k/top-p kernel's buffer of
    /// 132 vocabulary rows in fp32 and Hopper's 32 MiB cuBLAS workspace.
    #[test]
    fn profile_peak_is_the_sampler_for_big_vocabularies() {
        let a = model("llama-3.1-8b").unwrap().arch.clone();
        let w = Workload::default();
        let h100 = Profile::vllm_default(80 * ByteSize::GIB, catalog::gpu("h100-sxm"));
        assert_eq!(
            h100,
            Profile {
                batched_tokens: 8192,
                sequences: 1024,
                sms: 132,
                blas_workspace: 32 * ByteSize::MIB,
                graphs: CudaGraphs::Profiled,
            }
        );
        let hidden = |rows: u64, bytes: u64| rows * 4096 * bytes;
        let topk = |rows: u64| rows * 128_256 * 4;
        assert_eq!(
            profile_peak(&a, &w, h100),
            1024 * 128_256 * 14 + hidden(8192 + 2 * 1024, 2) + topk(132) + 32 * ByteSize::MIB
        );
        // An A100 80GB and a 24 GB card get the small defaults, and a card that is not
        // Hopper the smaller cuBLAS workspace.
        let a100 = Profile::vllm_default(80 * ByteSize::GIB, catalog::gpu("a100-80gb"));
        assert_eq!((a100.batched_tokens, a100.sequences), (2048, 256));
        let rtx = Profile::vllm_default(24 * ByteSize::GIB, catalog::gpu("rtx-4090"));
        assert_eq!(
            rtx,
            Profile {
                batched_tokens: 2048,
                sequences: 256,
                sms: 128,
                blas_workspace: 8_519_680,
                graphs: CudaGraphs::Profiled,
            }
        );
        // A GPU outside the catalog is taken for an H100.
        let unknown = Profile::vllm_default(24 * ByteSize::GIB, None);
        assert_eq!(
            (unknown.sms, unknown.blas_workspace),
            (132, 32 * ByteSize::MIB)
        );
        // fp32 logits need no fp32 copy.
        let fp32 = Workload::default().weights(crate::quant::WeightFormat::Plain {
            dtype: crate::dtype::Dtype::Fp32,
        });
        let sampler_only = Profile {
            batched_tokens: 1,
            ..h100
        };
        assert_eq!(
            profile_peak(&a, &fp32, sampler_only),
            1024 * 128_256 * 12 + hidden(1 + 2 * 1024, 4) + topk(132) + 32 * ByteSize::MIB
        );
        // The kernel's rows: the next power of two of the sequences, at most the SMs;
        // under 8 sequences the kernel does not run.
        let rows = |sequences: u64, sms: u64| {
            let p = Profile {
                batched_tokens: 1,
                sequences,
                sms,
                blas_workspace: 0,
                graphs: CudaGraphs::Off,
            };
            let without = 2 * sequences + 1;
            (profile_peak(&a, &w, p) - sequences * 128_256 * 14 - hidden(without, 2))
                / (128_256 * 4)
        };
        assert_eq!(rows(1024, 132), 132);
        assert_eq!(rows(100, 132), 128);
        assert_eq!(rows(8, 58), 8);
        assert_eq!(rows(7, 58), 0);
        // A small vocabulary leaves the forward pass as the peak.
        let opt = model("tinyllama-1.1b").unwrap().arch.clone();
        let tiny = Profile {
            batched_tokens: 8192,
            sequences: 8,
            ..h100
        };
        assert!(profile_peak(&opt, &w, tiny) > 8 * 32_000 * 14);
    }

    /// "Model loading took … GiB" as vLLM 0.19.0 logged it on H100s (llm-d-planner's
    /// logs, see `validation`; two decimals): parameters, the rotary cache and the
    /// caching allocator's whole segments. Qwen2.5's shapes end half a MiB or one MiB
    /// short of a 2 MiB boundary (7B: `qkv_proj` 31.5 MiB, `gate_up_proj` 259 MiB,
    /// `down_proj` 129.5 MiB; 72B with TP 2: `down_proj` 231 MiB); Llama's do not.
    #[test]
    fn loaded_weights_match_vllm_0_19_logs() {
        // The logged Qwen2.5 runs are the Instruct checkpoints, whose config.json says
        // `max_position_embeddings: 32768` (the base models' says 131072): the rotary
        // cache is sized by it.
        for (id, positions, tp, logged) in [
            ("llama-3.1-8b", None, 1, 14.99),
            ("llama-3.1-8b", None, 2, 7.51),
            ("llama-3.1-8b", None, 4, 3.77),
            ("qwen2.5-7b", Some(32_768), 1, 14.25),
            ("qwen2.5-7b", Some(32_768), 2, 7.12),
            ("qwen2.5-7b", Some(32_768), 4, 3.55),
            ("qwen2.5-72b", Some(32_768), 2, 67.80),
            ("qwen3-8b", None, 1, 15.27),
            ("mixtral-8x7b", None, 2, 43.51),
            ("gemma-7b", None, 1, 15.91),
            ("codellama-7b", None, 1, 12.56),
            ("granite-3.1-8b", None, 1, 15.25),
        ] {
            let mut a = model(id).unwrap().arch.clone();
            a.max_positions = positions.unwrap_or(a.max_positions);
            let w = Workload::default().tp(tp).gpus(tp);
            let gib = loaded_gib(&a, &w);
            assert!(
                (gib - logged).abs() <= 0.005,
                "{id} TP {tp}: {gib:.4} GiB, log {logged}"
            );
        }
        // The 72B's surplus: 80 layers × 1 MiB of `down_proj`, and 8 MiB of rotary cache.
        let mut a = model("qwen2.5-72b").unwrap().arch.clone();
        a.max_positions = 32_768;
        let w = Workload::default().tp(2).gpus(2);
        assert_eq!(loaded_weights(&a, &w, 0), 88 * ByteSize::MIB);
        // FP8 quantises the linear layers only: the tables stay in BF16 (vLLM 0.19:
        // Llama-3.1-8B with `quantization: fp8` 8.49 GiB; RedHatAI's Llama-3.3-70B
        // fp8-dynamic 33.88 GiB per GPU with TP 2 and 16.96 with TP 4).
        for (id, tp, logged) in [
            ("llama-3.1-8b", 1, 8.49),
            ("llama-3.1-70b", 2, 33.88),
            ("llama-3.1-70b", 4, 16.96),
        ] {
            let fp8 = Workload::default()
                .weights(crate::quant::WeightFormat::parse("fp8").unwrap())
                .tp(tp)
                .gpus(tp);
            let gib = loaded_gib(&model(id).unwrap().arch, &fp8);
            assert!(
                (gib - logged).abs() <= 0.015,
                "{id} FP8 TP {tp}: {gib:.4} GiB, log {logged}"
            );
        }
        // Quantised weights get the rotary cache only.
        let gptq = (w).weights(crate::quant::WeightFormat::parse("gptq-4bit-128g").unwrap());
        assert_eq!(loaded_weights(&a, &gptq, 0), 8 * ByteSize::MIB);
    }

    /// What vLLM would log as "Model loading took" for `a` under `w`, in GiB.
    fn loaded_gib(a: &Architecture, w: &Workload) -> f64 {
        let m = ModelInput::Arch {
            arch: Box::new(a.clone()),
            total_params: None,
        };
        let weights = estimate(&m, w).unwrap().breakdown.weights;
        loaded_weights(a, w, weights) as f64 / ByteSize::GIB as f64
    }

    /// Gemma 3's multimodal checkpoints (google/gemma-3-{4b,12b,27b}-it, vLLM 0.19.0 on
    /// an H100, llm-d-planner's logs: "Model loading took 8.58 / 23.31 / 51.45 GiB"):
    /// the language model, two rotary tables (global ×8, local) and the vision tower
    /// with its projector. 4B and 27B come out 4–16 MiB short of the logged value
    /// (the log rounds to 10 MiB); no mechanism for that remainder is named yet.
    #[test]
    fn gemma3_loads_its_vision_tower_and_two_rotary_tables() {
        for (id, logged) in [
            ("gemma-3-4b", 8.58),
            ("gemma-3-12b", 23.31),
            ("gemma-3-27b", 51.45),
        ] {
            let a = model(id).unwrap().arch.clone();
            let w = Workload::default();
            let gib = loaded_gib(&a, &w);
            assert!(
                (gib - logged).abs() <= 0.015,
                "{id}: {gib:.4} GiB, log {logged}"
            );
            // Without the tower and the scaled tables, a whole GiB is missing.
            let text_only = Architecture {
                vision: None,
                rope: crate::arch::Rope::default(),
                ..a.clone()
            };
            let short = loaded_gib(&text_only, &w);
            assert!(logged - short > 1.0, "{id}: {short:.4} GiB");
        }
    }

    /// The encoder's own pass is the peak when its images outweigh the language
    /// model's pass: few sampler rows, many batched tokens.
    #[test]
    fn many_images_make_the_encoder_the_peak() {
        let a = model("gemma-3-27b").unwrap().arch.clone();
        let w = Workload::default();
        let p = Profile::vllm_default(80 * ByteSize::GIB, catalog::gpu("h100-sxm"))
            .with_tokens(Some(32_768))
            .with_sequences(Some(1));
        let e = EncoderProfile::of(&a, &w, p).unwrap();
        assert_eq!(e.images, 128);
        let pixels = 128 * 3 * 896 * 896 * 2;
        assert_eq!(e.alive, pixels + 32_768 * 5376 * 2);
        assert_eq!(e.peak, pixels + 128 * 4096 * (1152 + 2 * 4304) * 2);
        assert_eq!(profile_peak(&a, &w, p), e.peak + p.blas_workspace);
        // A budget under one image still encodes one; a text model has no encoder.
        let one = EncoderProfile::of(&a, &w, p.with_tokens(Some(100))).unwrap();
        assert_eq!(one.images, 1);
        let llama = model("llama-3.1-8b").unwrap().arch.clone();
        assert_eq!(EncoderProfile::of(&llama, &w, p), None);
    }

    /// The torch peaks vLLM 0.19.0 logged on an H100 80GB HBM3 with its default 8192
    /// tokens and 1024 sequences ("torch peak memory increase", llm-d-planner's logs,
    /// see `validation`), to the hundredth of a GiB the log prints. With tensor
    /// parallelism every rank gathers the whole vocabulary's logits.
    #[test]
    fn profile_peaks_match_vllm_0_19_logs() {
        for (id, tp, logged) in [
            ("llama-3.1-8b", 1, 1.89),
            ("qwen2.5-7b", 1, 2.21),
            ("qwen3-8b", 1, 2.21),
            ("qwen2.5-72b", 2, 2.29),
            ("llama-3.1-70b", 2, 1.96),
            ("gemma-7b", 1, 3.63),
            ("gemma-2-2b", 1, 3.62),
            ("gemma-2-9b", 1, 3.65),
            ("gemma-2-27b", 1, 3.66),
            // Multimodal: 32 dummy images (147 MiB of bf16 pixels) and their encoder
            // outputs (8192 rows of the language model's width) stay alive.
            ("gemma-3-4b", 1, 3.89),
            ("gemma-3-12b", 1, 3.94),
            ("gemma-3-27b", 1, 3.99),
        ] {
            let a = model(id).unwrap().arch.clone();
            let w = Workload::default().tp(tp).gpus(tp);
            let p = Profile::vllm_default(80 * ByteSize::GIB, catalog::gpu("h100-sxm"));
            let gib = profile_peak(&a, &w, p) as f64 / ByteSize::GIB as f64;
            assert!(
                (gib - logged).abs() < 0.01,
                "{id}: {gib:.4} GiB, log {logged}"
            );
        }
    }

    /// A long `max_num_batched_tokens` makes the prefill the peak. vLLM 0.6.4 (V0,
    /// 20 000 tokens by default for a max_model_len of 20 000) logged a torch peak of
    /// 17.06 GiB over 14.99 GiB of Llama-3.1-8B weights (vllm-project/vllm#10517):
    /// 2.07 GiB for the prefill's MLP. Ours is 1.91 GiB: the MLP's 6 × 14 336 bytes a
    /// token plus two 4096-wide vectors; the log leaves room for a third (0.15 GiB) that
    /// no source here names yet, so the test allows that gap, and the validation case
    /// `vllm-10517-llama31-8b-3090` shows it (−1.7 % in tokens).
    #[test]
    fn a_long_prefill_is_the_peak() {
        let a = model("llama-3.1-8b").unwrap().arch.clone();
        let w = Workload::default();
        let p = Profile::vllm_default(24 * ByteSize::GIB, catalog::gpu("rtx-3090"))
            .with_tokens(Some(20_000));
        assert_eq!(p.batched_tokens, 20_000);
        assert_eq!(p.sequences, 256);
        let peak = profile_peak(&a, &w, p) as f64 / ByteSize::GIB as f64;
        assert!((peak - 2.07).abs() / 2.07 < 0.10, "{peak:.3} GiB");
        // Fewer tokens than sequences caps the sampler's rows too.
        assert_eq!(p.with_tokens(Some(100)).sequences, 100);
        assert_eq!(p.with_tokens(None), p);
        // Fewer rows for the sampler: Llama 3.1 8B's 128 256-wide logits at 14 bytes.
        let fewer = p.with_sequences(Some(64));
        assert_eq!(fewer.sequences, 64);
        assert_eq!(fewer.with_sequences(Some(1 << 30)).sequences, 20_000);
        let sampler_only = Profile {
            batched_tokens: 1,
            sequences: 1,
            sms: 82,
            blas_workspace: 8_519_680,
            graphs: CudaGraphs::Profiled,
        }
        .with_tokens(Some(8))
        .with_sequences(Some(8));
        assert_eq!(
            profile_peak(&a, &w, sampler_only),
            8 * 128_256 * (14 + 4) + (8 + 2 * 8) * 4096 * 2 + 8_519_680
        );
    }

    #[test]
    fn no_room_means_no_tokens() {
        let a = model("llama-3.1-70b").unwrap().arch.clone();
        let w = Workload::default();
        let m = ModelInput::Arch {
            arch: Box::new(a.clone()),
            total_params: None,
        };
        let e = estimate(&m, &w).unwrap();
        let profile = Profile::vllm_default(24 * ByteSize::GIB, None);
        let peak = profile_peak(&a, &w, profile);
        let p = plan(&a, &w, &e, 24 * ByteSize::GIB, 9000, 16, profile, peak);
        assert_eq!((p.kv_budget_bytes, p.tokens, p.max_sequences), (0, 0, 0));
    }

    /// vLLM's hybrid layout, checked against what vLLM 0.19 logged for
    /// google/gemma-3-27b-it on an H100 (llm-d-planner's run, see `validation`):
    /// 19.53 GiB of KV cache, 2 285 blocks of 16 tokens (36 560 tokens), a block of
    /// 9 177 320 bytes per token group and a concurrency of 4.46 for 8 192 tokens.
    #[test]
    fn hybrid_layers_are_grouped_and_padded_like_vllm() {
        let gemma3 = model("gemma-3-27b").unwrap().arch.clone();
        let h = HybridLayout::of(&gemma3, 1).unwrap();
        assert_eq!(
            (h.group_size, h.windowed_groups, h.global_groups),
            (10, 6, 1)
        );
        // 8 192 tokens with max_num_batched_tokens 8 192: a windowed group holds the
        // whole length too (513 blocks), so 512 + 6 × 513 blocks per request.
        assert_eq!(h.blocks_per_request(8192, 16, 8192), 512 + 6 * 513);
        // Gemma 2 alternates: two groups, no padding.
        let gemma2 = model("gemma-2-27b").unwrap().arch.clone();
        let h2 = HybridLayout::of(&gemma2, 1).unwrap();
        assert_eq!(
            (h2.group_size, h2.windowed_groups, h2.global_groups),
            (23, 1, 1)
        );
        // One kind of layer only: one group.
        assert_eq!(
            HybridLayout::of(&model("llama-3.1-8b").unwrap().arch, 1),
            None
        );
        assert_eq!(hybrid_padding(&gemma3, 1), Some((70, 62)));
        assert_eq!(hybrid_padding(&gemma2, 1), Some((46, 46)));

        // The plan, with the KV budget vLLM logged.
        let w = Workload::default();
        let m = ModelInput::Arch {
            arch: Box::new(gemma3.clone()),
            total_params: None,
        };
        let mut e = estimate(&m, &w).unwrap();
        e.breakdown = Breakdown {
            weights: 0,
            activations: 0,
            overhead: 0,
            ..e.breakdown
        };
        let w = Workload::default().seq(8192);
        let budget = 15_995 * 16 * 8192 * 10 + loaded_weights(&gemma3, &w, 0);
        let p = plan(
            &gemma3,
            &w,
            &e,
            budget,
            10_000,
            16,
            Profile::vllm_default(80 * ByteSize::GIB, None).with_graphs(CudaGraphs::AfterKv),
            0,
        );
        assert_eq!(p.kv_bytes_per_token, 70 * 8192);
        assert_eq!((p.blocks, p.tokens), (2285, 36_560));
        // 15 995 / 3 590 = 4.46.
        assert_eq!(p.max_sequences, 4);
    }
}
