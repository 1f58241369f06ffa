//! Data parallelism as PyTorch frameworks run it: DDP's gradient buckets, DeepSpeed's
//! reduce bucket, offload buffer and ZeRO-3's gathered modules, PyTorch FSDP's
//! unsharded root and layer, and what ZeRO-Offload moves to CPU RAM.

use serde::{Deserialize, Serialize};

use crate::arch::{Architecture, Mlp};
use crate::estimate::{Sharded, mul};
use crate::quant::WeightFormat;
use crate::workload::{Finetune, Mode, Workload};

/// The parameters PyTorch's FSDP holds whole on every GPU while it trains, in bytes:
/// `(root, layer)`.
///
/// - `root`: the root unit, whatever no wrapped layer owns (the embeddings, an untied
///   output head, the final norm). FSDP never reshards it after the forward pass,
///   because backward needs it at once (FSDP1: "Do not free the root's parameters in
///   the post-forward for FULL_SHARD", `_post_forward_reshard` in
///   torch/distributed/fsdp/_runtime_utils.py; FSDP2: the root gets no post-forward
///   reshard, `_lazy_init` in torch/distributed/fsdp/_fully_shard/_fsdp_state.py), so
///   its full copy lives beside its shard from the forward pass to the end of backward.
/// - `layer`: the decoder layer being worked on, all-gathered for its forward and
///   again for its backward. At least one is whole at any time; the prefetch of the
///   next one (backward prefetch, on by default) may add a second, not counted.
///
/// In the dtype FSDP computes in (its `param_dtype`; a 4-bit QLoRA base keeps its
/// packed linears). Zero without FSDP or with one GPU (unless the parameters live in RAM, `offload_params`). Not counted: a full
/// fine-tune's unsharded gradient of that layer before its reduce-scatter, and tensor
/// parallelism's split of the root (FSDP with TP is rare).
pub fn fsdp_unsharded(a: &Architecture, w: &Workload) -> (u64, u64) {
    let (param_shards, _, _) = w.shards();
    // Offloaded parameters are gathered onto the GPU even when one GPU holds them all.
    if !w.fsdp || param_shards <= 1 && !params_offloaded(w) || w.mode != Mode::Train {
        return (0, 0);
    }
    let pc = a.param_count();
    let c = w.compute_dtype().bytes_for(1);
    let root = mul(&[
        pc.embeddings
            .saturating_add(pc.lm_head)
            .saturating_add(u64::from(a.hidden)),
        c,
    ]);
    let layers = u64::from(a.layers.max(1));
    let linear = pc.layer_linear / layers;
    let rest = pc
        .total
        .saturating_sub(pc.embeddings)
        .saturating_sub(pc.lm_head)
        .saturating_sub(pc.layer_linear)
        / layers;
    let linear_bytes = match (w.finetune, w.weights) {
        (Finetune::Qlora, WeightFormat::Plain { .. }) => {
            WeightFormat::Nf4 { double_quant: true }.linear_bytes(linear)
        }
        (Finetune::Qlora, format) => format.linear_bytes(linear),
        _ => mul(&[linear, c]),
    };
    let layer = linear_bytes.saturating_add(mul(&[rest, c])) / u64::from(w.tp.max(1));
    (root, layer)
}

/// What keeping data-parallel GPUs' gradients in step adds to each GPU, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GradSync {
    /// Buffers present through every backward pass, counted with the gradients:
    /// PyTorch DDP's buckets, a second copy of every gradient, or DeepSpeed's reduce
    /// bucket (and, offloading at ZeRO-1/2, its GPU accumulation buffer).
    pub buckets: u64,
    /// DeepSpeed: its reduce bucket, among `buckets`.
    pub bucket: u64,
    /// DeepSpeed offloading at ZeRO-1/2: the GPU buffer as large as the largest
    /// parameter that trains, among `buckets`.
    pub staging: u64,
    /// ZeRO-3: the parameters still gathered where forward turns into backward, counted
    /// with the activations.
    pub reused: u64,
    /// Parameters among `reused`.
    pub reused_params: u64,
    /// Whether more than the output head stays gathered.
    pub reused_beyond_head: bool,
    /// ZeRO-2/3 in a full fine-tune: the output head's whole gradient until it is
    /// reduced, alive with the logits' gradient at the head's backward (and through
    /// all of backward when the head is tied to the embeddings).
    pub head_gradient: u64,
    /// The same for a layer's largest module, during that layer's backward.
    pub layer_gradient: u64,
}

/// Whether ZeRO-Offload keeps the gradient partitions in CPU RAM beside the optimizer
/// states. DeepSpeed at ZeRO-2 and 3: with `offload_optimizer` its ZeRO optimizer
/// works on the CPU (`self.device = … 'cpu'` in deepspeed/runtime/zero/stage_1_and_2.py,
/// where gradients accumulate into CPU buffers, `async_accumulate_grad_in_cpu_via_gpu`;
/// stage3.py allocates `grad_partitions_flat_buffer` on that device), and the GPU keeps
/// the buffers they pass through ([`grad_sync`]). ZeRO-1 does not partition gradients:
/// each GPU keeps its whole 16-bit gradients until `reduce_gradients` runs after
/// backward, so they stay counted.
///
/// FSDP's CPU offload moves the gradients too, but only with the parameters
/// (`CPUOffload(offload_params=True)`: "gradients are offloaded to CPU as well").
pub fn offloads_gradients(w: &Workload) -> bool {
    w.mode == Mode::Train && w.cpu_offload && (w.deepspeed && w.zero >= 2 || params_offloaded(w))
}

/// Whether ZeRO-Offload keeps an fp32 gradient partition in CPU RAM: DeepSpeed's at
/// every stage (ZeRO-1 too, beside the whole 16-bit gradients its GPU still holds),
/// and FSDP's with the parameters.
pub fn ram_gradients(w: &Workload) -> bool {
    w.mode == Mode::Train && w.cpu_offload && (w.deepspeed && w.zero >= 1 || params_offloaded(w))
}

/// Whether ZeRO-3 keeps the parameter shards in CPU RAM (`Workload::offload_params`,
/// honoured only when training at stage 3 with the optimizer offloaded too).
pub fn params_offloaded(w: &Workload) -> bool {
    w.mode == Mode::Train && w.offload_params && w.zero >= 3 && w.cpu_offload
}

/// DeepSpeed's default `stage3_max_reuse_distance`, in parameters (`max_reuse_distance:
/// int = Field(pp_int(1e9), …)` in deepspeed/runtime/zero/config.py; the config files
/// of Trainer's docs set the same 1e9). A module is not released after use when it
/// comes back within that many parameters of the module trace
/// (`__params_to_release` in partitioned_param_coordinator.py): where forward turns
/// into backward, the output head and the last layers stay gathered.
pub const DEEPSPEED_REUSE_DISTANCE: u64 = 1_000_000_000;

/// DeepSpeed's own default `reduce_bucket_size`, in elements (`reduce_bucket_size:
/// int = Field(pp_int(5e8))` in deepspeed/runtime/zero/config.py), used where a config
/// gives a number instead of Trainer's "auto".
pub const DEEPSPEED_REDUCE_BUCKET: u64 = 500_000_000;

/// The largest module inside a layer: its widest linear, or a MoE layer's routed
/// experts, which Transformers keeps in one module of 3-D tensors (`MixtralExperts`
/// and its siblings: `gate_up_proj` [experts, 2 × intermediate, hidden] and
/// `down_proj`).
pub fn largest_layer_module_params(a: &Architecture) -> u64 {
    let mut widest = a.q_width().max(u64::from(a.intermediate));
    if let Some(m) = a.moe {
        widest = widest.max(u64::from(m.expert_intermediate) * u64::from(m.shared_experts.max(1)));
    }
    mul(&[widest, u64::from(a.hidden)]).max(routed_experts_params(a, mlp_matrices(a)))
}

/// Weight matrices in an MLP: gate, up and down, or up and down.
fn mlp_matrices(a: &Architecture) -> u64 {
    match a.mlp {
        Mlp::Gated => 3,
        Mlp::Plain => 2,
    }
}

/// `matrices` of a MoE layer's routed experts, all experts together (as Transformers
/// stores them, one 3-D tensor per matrix kind); 0 for a dense model.
fn routed_experts_params(a: &Architecture, matrices: u64) -> u64 {
    a.moe.map_or(0, |m| {
        mul(&[
            u64::from(m.experts),
            matrices,
            u64::from(m.expert_intermediate),
            u64::from(a.hidden),
        ])
    })
}

/// The buffers data-parallel training uses to reduce gradients, per GPU, given the
/// gradient bytes each GPU keeps and the bytes of the whole model's weights (split by
/// tensor and pipeline parallelism, not by ZeRO).
///
/// - PyTorch DDP (ZeRO stage 0 outside DeepSpeed, more than one data-parallel rank):
///   its `Reducer` allocates bucket tensors covering every parameter that trains, in
///   its dtype, when DDP is built, and copies each gradient into them for the
///   all-reduce, unless DDP is built with `gradient_as_bucket_view=True` ("the saved
///   memory size will be equal to the total gradients size", DDP's docs;
///   pytorch/pytorch#41954). accelerate's `DistributedDataParallelKwargs`, and so
///   `Trainer`, leave it `False`, as does Lightning's `DDPStrategy` (litgpt): the
///   buckets are a second copy of the gradients. Needs no architecture.
/// - DeepSpeed ZeRO (stages 1–3): gradients go through a contiguous bucket of
///   `reduce_bucket_size` elements in the model's 16-bit type
///   (`torch.empty(self.reduce_bucket_size, …)` in deepspeed/runtime/zero/stage3.py and
///   stage_1_and_2.py, `contiguous_gradients` on by default), which `Trainer` and
///   accelerate fill as hidden² for "auto" (`trainer_config_finalize` in
///   transformers/integrations/deepspeed.py). One bucket: stages 1–2 take a second one
///   only with `overlap_comm`, off by default there; stage 3 always has one. Offloading
///   at stages 1–2 adds `temp_grad_buffer_for_gpu_offload`, a GPU buffer as large as
///   the largest parameter.
/// - A parameter larger than the bucket is reduced from its own whole gradient, which
///   exists until it is reduced: at stages 2 and 3, where gradients are partitioned,
///   the largest module's whole gradient (when it trains) comes on top of each GPU's
///   partition, at the output head's backward, right at the loss.
/// - DeepSpeed ZeRO-3 gathers each module's parameters whole while it runs and does
///   not release those it will use again within `stage3_max_reuse_distance`
///   parameters ([`DEEPSPEED_REUSE_DISTANCE`]): where forward turns into backward, the
///   output head and the last layers stay gathered, up to that many parameters and the
///   module that passes it. Its
///   own estimator charges less, `4 * largest_layer_params`
///   (`estimate_zero3_model_states_mem_needs`). One GPU gathers nothing unless the
///   parameters live in CPU RAM.
///
/// FSDP has its own account ([`fsdp_unsharded`]).
pub fn grad_sync(a: Option<&Architecture>, w: &Workload, gradients: u64, weights: u64) -> GradSync {
    if w.mode != Mode::Train || w.fsdp {
        return GradSync::default();
    }
    let split = u64::from(w.tp.max(1)) * u64::from(w.pp.max(1));
    let dp = (u64::from(w.gpus.max(1)) / split).max(1);
    let c = w.compute_dtype().bytes_for(1);
    if !w.deepspeed {
        return GradSync {
            buckets: if w.zero == 0 && dp > 1 { gradients } else { 0 },
            ..GradSync::default()
        };
    }
    let Some(a) = a.filter(|_| w.zero >= 1) else {
        return GradSync::default();
    };
    let tp = u64::from(w.tp.max(1));
    let h = u64::from(a.hidden);
    let full = w.finetune == Finetune::Full;
    let bytes = |params: u64| mul(&[params, c]) / tp;
    let bucket = mul(&[h, h, c]);
    let staging = if w.cpu_offload && w.zero < 3 && full {
        bytes(largest_tensor_params(a))
    } else {
        0
    };
    let gathers = w.zero >= 3 && (dp > 1 || params_offloaded(w));
    let partitioned = w.zero >= 2 && (dp > 1 || offloads_gradients(w)) && full;
    let reused_params = if gathers {
        deepspeed_reused_params(a)
    } else {
        0
    };
    GradSync {
        buckets: bucket.saturating_add(staging),
        bucket,
        staging,
        reused: bytes(reused_params).min(weights),
        reused_params,
        reused_beyond_head: reused_params > head_params(a),
        head_gradient: if partitioned {
            bytes(head_params(a))
        } else {
            0
        },
        layer_gradient: if partitioned {
            bytes(largest_layer_module_params(a))
        } else {
            0
        },
    }
}

/// Parameters of the output projection (the embedding table when tied).
fn head_params(a: &Architecture) -> u64 {
    mul(&[u64::from(a.vocab), u64::from(a.hidden)])
}

/// The largest single parameter tensor: the embedding table or head, a layer's widest
/// linear, or a MoE layer's fused `gate_up_proj` [experts, 2 × intermediate, hidden].
/// DeepSpeed's offload buffer at ZeRO-1/2 is this large (`largest_param_numel` over the
/// parameters that train, stage_1_and_2.py).
fn largest_tensor_params(a: &Architecture) -> u64 {
    let widest = mul(&[
        a.q_width().max(u64::from(a.intermediate)),
        u64::from(a.hidden),
    ]);
    // `gate_up_proj` holds every input matrix; `down_proj` is smaller or equal.
    let gate_up = routed_experts_params(a, mlp_matrices(a) - 1);
    head_params(a).max(widest).max(gate_up)
}

/// The parameters DeepSpeed's ZeRO-3 leaves gathered after the forward pass: a module
/// is not released when its next use comes within `stage3_max_reuse_distance`
/// parameters of the trace (`__params_to_release`, walked from the next module). After
/// forward, a module's next use is its own backward, past every module after it twice
/// (forward, then backward in reverse): it stays when those modules hold fewer than
/// half the distance. The output head always stays; the last layer's modules follow
/// while they fit (Llama 3.1 8B: the head alone; Llama 2 70B: the head and the last
/// `down_proj` and `up_proj`; Mixtral: the head and the last layer's experts).
pub fn deepspeed_reused_params(a: &Architecture) -> u64 {
    let h = u64::from(a.hidden);
    let q = a.q_width();
    let kv = a.kv_width();
    // The last layer's modules in backward order (the reverse of forward).
    let matrices = mlp_matrices(a);
    let mut modules: Vec<u64> = match a.moe {
        Some(m) => {
            let mut v = Vec::new();
            if m.shared_experts > 0 {
                let shared = mul(&[
                    u64::from(m.expert_intermediate),
                    u64::from(m.shared_experts),
                    h,
                ]);
                v.extend(std::iter::repeat_n(shared, matrices as usize));
            }
            v.push(routed_experts_params(a, matrices));
            // The router.
            v.push(mul(&[u64::from(m.experts), h]));
            v
        }
        None => vec![mul(&[u64::from(a.intermediate), h]); matrices as usize],
    };
    modules.extend([mul(&[q, h]), mul(&[kv, h]), mul(&[kv, h]), mul(&[q, h])]);
    let mut after = head_params(a);
    let mut kept = after;
    // Whole layers repeat the same modules: at most the layers the distance spans.
    let layers = u64::from(a.layers.max(1));
    for module in modules.iter().cycle().take(modules.len() * layers as usize) {
        if after.saturating_mul(2) >= DEEPSPEED_REUSE_DISTANCE {
            break;
        }
        kept = kept.saturating_add(*module);
        after = after.saturating_add(*module);
    }
    kept
}

/// Bytes per GPU that ZeRO-Offload keeps in CPU RAM: the optimizer states and, where
/// [`ram_gradients`], the fp32 gradient partitions (`single_grad_partition`, the fp32
/// master's `.grad`, even at ZeRO-1, whose GPU still holds whole 16-bit gradients),
/// whatever type the GPU computed them in; ZeRO-3 first gathers them in its 16-bit
/// `grad_partitions_flat_buffer` there as well. Offloaded parameters add their shard.
pub(crate) fn offloaded_to_ram(
    s: &Sharded,
    arch_known: bool,
    w: &Workload,
    trainable: u64,
    model_split: u64,
) -> u64 {
    match (w.cpu_offload, ram_gradients(w)) {
        (true, true) => s
            .optimizer
            .saturating_add(
                mul(&[
                    trainable,
                    if w.deepspeed && w.zero >= 3 {
                        4 + w.compute_dtype().bytes_for(1)
                    } else {
                        4
                    },
                ])
                .div_ceil(model_split)
                .div_ceil(s.optim_shards),
            )
            .saturating_add(if params_offloaded(w) && arch_known {
                s.weights
            } else {
                0
            }),
        (true, false) => s.optimizer,
        (false, _) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::testing::*;

    /// FSDP holds its root unit (embeddings, head, final norm) whole from the forward
    /// pass to the end of backward, and one gathered layer while it works on it.
    #[test]
    fn fsdp_keeps_the_root_and_one_layer_whole() {
        let a = model("llama-3.1-70b").unwrap().arch.clone();
        let m = preset("llama-3.1-70b");
        let lora = Workload::default()
            .mode(Mode::Train)
            .finetune(Finetune::Lora)
            .lora_targets(LoraTargets::ATTENTION)
            .grad_checkpointing(true)
            .batch(2)
            .seq(2048)
            .gpus(8)
            .zero(3);
        assert_eq!(fsdp_unsharded(&a, &lora), (0, 0), "DeepSpeed's ZeRO-3");
        let fsdp = lora.clone().fsdp(true);
        let (root, layer) = fsdp_unsharded(&a, &fsdp);
        // 128 256 × 8192 embeddings and as many in the untied head, and the final norm.
        assert_eq!(root, (2 * 128_256 * 8192 + 8192) * 2);
        // A layer: 856 M parameters in bf16.
        assert!((1_710_000_000..1_713_000_000).contains(&layer), "{layer}");
        let (e0, e1) = (estimate(&m, &lora).unwrap(), estimate(&m, &fsdp).unwrap());
        assert_eq!(e1.breakdown.weights - e0.breakdown.weights, root);
        // With one GPU there is nothing to gather.
        let one = fsdp.clone().gpus(1);
        assert_eq!(fsdp_unsharded(&a, &one), (0, 0));
        // The settings: ZeRO-3 is FSDP except under DeepSpeed.
        let mut s = crate::Settings::defaults(
            crate::settings::Task::Lora,
            crate::settings::Runtime::Torchtune,
        );
        s.gpus = 8;
        s.zero = 3;
        assert!(s.workload().fsdp);
        s.runtime = crate::settings::Runtime::Deepspeed;
        assert!(!s.workload().fsdp);
    }

    /// DDP copies every gradient into its buckets; DeepSpeed reduces through a bucket
    /// of hidden² elements, holds whole gradients until they are reduced (ZeRO-2/3)
    /// and, at ZeRO-3, keeps the modules it will reuse gathered; FSDP and one GPU add
    /// none of it.
    #[test]
    fn data_parallel_gradient_buffers() {
        let (m, a, h, vocab, full) = llama_8b_full();
        let one = estimate(&m, &full).unwrap();
        assert_eq!(one.grad_sync, GradSync::default());
        let ddp = estimate(&m, &full.clone().gpus(2)).unwrap();
        assert_eq!(ddp.breakdown.gradients, 2 * one.breakdown.gradients);
        assert_eq!(ddp.grad_sync.buckets, one.breakdown.gradients);
        let fsdp = full.clone().gpus(8).zero(3).fsdp(true);
        assert_eq!(estimate(&m, &fsdp).unwrap().grad_sync, GradSync::default());
        let (head, layer_module) = (2 * vocab * h, 2 * h * u64::from(a.intermediate));
        let cases: &[(u8, u32, Finetune, u64, u64)] = &[
            // (stage, GPUs, fine-tune, reused bytes, head gradient bytes)
            (1, 8, Finetune::Full, 0, 0),
            (2, 8, Finetune::Full, 0, head),
            (2, 8, Finetune::Lora, 0, 0),
            (3, 1, Finetune::Full, 0, 0),
            // Llama 3.1 8B keeps only its head gathered for reuse.
            (3, 8, Finetune::Full, head, head),
            (3, 8, Finetune::Lora, head, 0),
        ];
        for &(zero, gpus, finetune, reused, head_gradient) in cases {
            let w = full
                .clone()
                .zero(zero)
                .gpus(gpus)
                .finetune(finetune)
                .deepspeed(true);
            let e = estimate(&m, &w).unwrap();
            let sync = e.grad_sync;
            let what = format!("ZeRO-{zero} on {gpus}, {finetune:?}");
            assert_eq!(sync.buckets, 2 * h * h, "{what}");
            assert_eq!(sync.reused, reused, "{what}");
            assert_eq!(sync.head_gradient, head_gradient, "{what}");
            let layer = if head_gradient > 0 { layer_module } else { 0 };
            assert_eq!(sync.layer_gradient, layer, "{what}");
            // The same sharding outside DeepSpeed (FSDP at stage 3) has no bucket.
            let without = estimate(&m, &w.clone().deepspeed(false).fsdp(zero >= 3)).unwrap();
            assert_eq!(
                e.breakdown.gradients - without.breakdown.gradients,
                2 * h * h
            );
        }
        // DDP needs no architecture: a bare parameter count pays the copy too.
        let bare = |gpus| {
            estimate(&ModelInput::Params(1_000_000_000), &full.clone().gpus(gpus))
                .unwrap()
                .breakdown
                .gradients
        };
        assert_eq!(bare(2), 2 * bare(1));
        // Inference gathers and buckets nothing.
        let serve = Workload::default()
            .gpus(8)
            .zero(3)
            .deepspeed(true)
            .offload_params(true)
            .cpu_offload(true);
        let e = estimate(&m, &serve).unwrap();
        assert_eq!(e.grad_sync, GradSync::default());
        assert!(e.breakdown.weights > 0);
        assert_eq!(
            largest_layer_module_params(&a),
            h * u64::from(a.intermediate)
        );
        // What ZeRO-3 keeps gathered after forward: modules whose following modules,
        // walked forward and back, stay under 10⁹ parameters. Llama 2 13B's small head
        // lets the last layer and the next layer's down_proj stay.
        let l13 = model("llama-2-13b").unwrap().arch.clone();
        let (h13, mlp, attn) = (5120u64, 13_824 * 5120u64, 5120 * 5120u64);
        assert_eq!(
            deepspeed_reused_params(&l13),
            32_000 * h13 + 4 * mlp + 4 * attn
        );
        assert_eq!(
            deepspeed_reused_params(&a),
            vocab * h,
            "Llama 3.1 8B: the head"
        );
        let mixtral = model("mixtral-8x7b").unwrap().arch.clone();
        assert_eq!(
            deepspeed_reused_params(&mixtral),
            32_000 * 4096 + 8 * 3 * 14_336 * 4096,
            "the head and the last layer's experts"
        );
        // A MoE layer's routed experts are one module in Transformers.
        let moe = model("qwen3-30b-a3b").unwrap().arch.clone();
        let m = moe.moe.unwrap();
        assert_eq!(
            largest_layer_module_params(&moe),
            u64::from(m.experts) * 3 * u64::from(m.expert_intermediate) * u64::from(moe.hidden)
        );
    }

    #[test]
    fn gradients_freed_between_steps_do_not_meet_the_loss_peak() {
        let m = preset("qwen2.5-0.5b");
        let w = Workload::default()
            .mode(Mode::Train)
            .seq(2048)
            .batch(8)
            .grad_checkpointing(true);
        let freed = estimate(&m, &w).unwrap().breakdown;
        let kept = estimate(&m, &(w).deepspeed(true)).unwrap().breakdown;
        assert_eq!(freed.gradients, kept.gradients);
        assert_eq!(kept.activations - freed.activations, kept.gradients);
    }

    /// DeepSpeed's ZeRO-Offload moves the gradient partitions (fp32) with the optimizer
    /// at ZeRO-2 and 3, through the reduce bucket and a staging buffer as large as the
    /// largest parameter; ZeRO-1 keeps whole gradients until after backward, and other
    /// runtimes keep theirs.
    #[test]
    fn deepspeed_offload_moves_gradients_too() {
        let w = Workload::default()
            .mode(Mode::Train)
            .weights(WeightFormat::Plain { dtype: Dtype::Bf16 })
            .precision(Precision::Master)
            .cpu_offload(true)
            .zero(2)
            .gpus(2);
        let m = preset("qwen2.5-0.5b");
        let a = model("qwen2.5-0.5b").unwrap().arch.clone();
        let (h, vocab) = (u64::from(a.hidden), u64::from(a.vocab));
        let kept = estimate(&m, &w).unwrap();
        let ds = estimate(&m, &w.clone().deepspeed(true)).unwrap();
        assert_eq!(kept.breakdown.optimizer, 0);
        assert!(kept.breakdown.gradients > 0);
        assert_eq!(ds.breakdown.gradients, 2 * h * h + 2 * vocab * h);
        // fp32 on the CPU: twice the 16-bit gradient partition the GPU would keep.
        assert_eq!(
            ds.offloaded_to_ram,
            kept.offloaded_to_ram + 2 * kept.breakdown.gradients
        );
        let one = estimate(&m, &w.clone().deepspeed(true).zero(1)).unwrap();
        assert!(
            one.breakdown.gradients > kept.breakdown.gradients,
            "ZeRO-1 keeps them whole"
        );
        assert_eq!(
            one.offloaded_to_ram, ds.offloaded_to_ram,
            "and an fp32 partition in RAM all the same"
        );
        // The staging buffer is as large as the largest parameter that trains: an
        // adapter's, nothing to speak of.
        let lora = estimate(&m, &(w).deepspeed(true).finetune(Finetune::Lora)).unwrap();
        assert_eq!(lora.grad_sync.staging, 0);
    }

    /// ZeRO-3 with its parameters in RAM: the GPU holds what it gathers to compute
    /// (DeepSpeed's modules kept for reuse and whole gradients, even on one GPU; FSDP's
    /// root and working layer) and nothing of the model's states; RAM holds them all.
    #[test]
    fn offloaded_parameters_leave_only_what_is_gathered() {
        let (m, a, h, vocab, full) = llama_8b_full();
        let w = (full).zero(3).cpu_offload(true).offload_params(true);
        let ds = estimate(&m, &w.clone().deepspeed(true)).unwrap();
        assert_eq!(ds.breakdown.weights, 0);
        assert_eq!(ds.breakdown.optimizer, 0);
        assert_eq!(ds.breakdown.gradients, 2 * h * h, "the reduce bucket alone");
        // The head stays gathered for reuse; its gradient is whole until reduced.
        assert_eq!(ds.grad_sync.reused, 2 * vocab * h);
        assert_eq!(ds.grad_sync.head_gradient, 2 * vocab * h);
        let fsdp = estimate(&m, &w.clone().fsdp(true).gpus(2)).unwrap();
        let (root, _) = fsdp_unsharded(&a, &w.clone().fsdp(true).gpus(2));
        assert_eq!(fsdp.breakdown.weights, root);
        assert_eq!(fsdp.breakdown.gradients, 0);
        // RAM holds each GPU's shard of the weights, fp32 gradients and optimizer.
        let kept = estimate(
            &m,
            &(w).fsdp(true)
                .gpus(2)
                .cpu_offload(false)
                .offload_params(false),
        )
        .unwrap();
        assert_eq!(
            fsdp.offloaded_to_ram,
            kept.breakdown.optimizer + 2 * kept.breakdown.gradients + kept.breakdown.weights - root
        );
    }

    #[test]
    fn cpu_offload_moves_optimizer_states() {
        let w = Workload::default()
            .mode(Mode::Train)
            .weights(WeightFormat::Plain { dtype: Dtype::Bf16 })
            .precision(Precision::Master)
            .cpu_offload(true);
        let e = estimate(&ModelInput::Params(1_000_000), &w).unwrap();
        assert_eq!(e.breakdown.optimizer, 0);
        // fp32 moments (8 bytes) and the fp32 master copy (4) per parameter.
        assert_eq!(e.offloaded_to_ram, 12_000_000);
    }
}
