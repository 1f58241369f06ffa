//! The notes of an evaluation: typed facts about the model, the runtime and the
//! layout that the front ends word ([`Note::text`]). Collected by subject, in the
//! order the answer shows them.

use super::placement::layer_split;
use super::verdict::tp_refused;
use super::{FormatChoice, Model, Note, TowerPlace, Verdict};
use crate::band;
use crate::default_context;
use crate::estimate::{Estimate, ModelInput};
use crate::quant::WeightFormat;
use crate::settings::{Runtime, Settings, Task};
use crate::workload::{Attention, Precision, Workload};

pub(super) fn notes(model: &Model, s: &Settings, w: &Workload, est: &Estimate) -> Vec<Note> {
    let mut notes = Vec::new();
    machine_and_model(&mut notes, model, s, w);
    let runtime = crate::settings::entry(crate::settings::RUNTIMES, band::runtime_of(s))
        .label
        .split(' ')
        .next()
        .unwrap_or("el motor");
    engine(&mut notes, model, s, w, est, runtime);
    memory(&mut notes, model, s, w, est, runtime);
    layout(&mut notes, model, s, w, est);
    notes
}

/// The GPU's capacity and CUDA context, the context asked against the trained one,
/// and what is known of the model and its weights.
fn machine_and_model(notes: &mut Vec<Note>, model: &Model, s: &Settings, w: &Workload) {
    if let (None, Some(g)) = (s.gpu_memory, s.gpu) {
        notes.push(Note::Capacity {
            gpu: g.name.clone(),
            kind: super::note::DeviceKind::of(g),
            usable: g.usable_bytes,
            nominal: g.memory_bytes,
            source: g.sources().usable.to_owned(),
            reserve: s.reserve,
        });
    }
    if let Some(a) = model.arch()
        && !a.encoder_only
    {
        let asked = w.seq.saturating_add(w.new_tokens);
        let trained = u64::from(a.max_positions);
        if !s.task.is_training() && asked > trained && trained > 0 {
            notes.push(Note::BeyondTrainedContext {
                asked,
                trained,
                vllm: s.runtime == crate::settings::Runtime::Vllm,
            });
        }
        // With a GPU the verdict says it ([`Verdict::TpRefused`]).
        if s.capacity().is_none()
            && let Some(Verdict::TpRefused { .. }) = tp_refused(model, s, w)
        {
            notes.push(Note::TpHeads {
                heads: a.heads,
                tp: w.tp,
            });
        }
    }
    // A context given to Ollama: say what it would have opened by itself.
    if s.runtime == crate::settings::Runtime::Ollama
        && !s.task.is_training()
        && s.seq.is_some()
        && let Some(vram) = s.total_vram()
    {
        let trained = model.arch().map(|a| u64::from(a.max_positions));
        notes.push(Note::OllamaContext {
            vram,
            default: default_context::opened(s.runtime, trained, Some(vram)).tokens(),
            seq: w.seq.saturating_add(w.new_tokens),
        });
    }
    if let (None, Some(g)) = (s.cuda_context, s.gpu)
        && let d = crate::context::for_family(&g.family)
        && d.bytes > 0
    {
        notes.push(Note::CudaContext {
            bytes: d.bytes,
            gpu: g.name.clone(),
            basis: d.basis,
        });
    }
    match &model.input {
        ModelInput::Arch {
            arch,
            total_params: Some(given),
        } => {
            let derived = arch.param_count().total;
            if *given > 0 && *given != derived {
                notes.push(Note::TotalParams {
                    given: *given,
                    derived,
                });
            }
        }
        ModelInput::Arch { .. } => {}
        ModelInput::Params(_) => notes.push(Note::ParamsOnly),
    }
    if let Some(note) = checkpoint_format(model, s, w) {
        notes.push(note);
    }
    if let Some(st) = &model.stored {
        notes.push(if s.task.is_training() {
            Note::ExactWeightsIgnored {
                source: st.source.clone(),
            }
        } else {
            Note::ExactWeights {
                bytes: st.bytes,
                params: st.params,
                tensors: model.tensors,
                source: st.source.clone(),
            }
        });
    }
}

/// What `auto` made of a checkpoint stored quantised ([`Settings::weights_for`]).
fn checkpoint_format(model: &Model, s: &Settings, w: &Workload) -> Option<Note> {
    let stored = model.arch()?.checkpoint?;
    if s.format != WeightFormat::Checkpoint || model.stored.is_some() {
        return None;
    }
    let why = match w.weights {
        WeightFormat::Mxfp4Moe => FormatChoice::Gguf,
        f if f == stored => FormatChoice::Kept {
            transformers: s.runtime != Runtime::Vllm && stored == WeightFormat::Mxfp4,
        },
        _ if s.task.is_training() => FormatChoice::Training,
        WeightFormat::Plain { .. } if stored == WeightFormat::Mxfp4 => FormatChoice::OldGpu,
        // A GGUF of another checkpoint is the Q4_K_M the settings default to, as before.
        _ => return None,
    };
    Some(Note::CheckpointFormat {
        stored: stored.id(),
        used: w.weights.id(),
        why,
    })
}

/// The runtime's error band, ggml's buffers and placement, and the vision tower.
fn engine(
    notes: &mut Vec<Note>,
    model: &Model,
    s: &Settings,
    w: &Workload,
    est: &Estimate,
    runtime: &'static str,
) {
    if let Some(g) = s.gpu.filter(|g| !s.runs_on(g)) {
        notes.push(Note::RuntimeOffDevice {
            runtime,
            gpu: g.name.clone(),
        });
    }
    if let (Some(band), Some(_)) = (band::for_settings(s), s.capacity()) {
        notes.push(Note::Band {
            runtime,
            training: s.task.is_training(),
            serving: s.serving(),
            band,
        });
    }
    if let (crate::workload::Engine::Ggml, Some(a)) = (w.engine, model.arch()) {
        notes.push(Note::Ggml {
            runtime,
            ngl: w.gpu_layers.map_or(a.layers + 1, |g| g.min(a.layers + 1)),
            placement: crate::estimate::ggml::placement(a.layers, w),
            layers: a.layers,
            host: est.host_bytes,
            cells: crate::estimate::ggml::kv_cells(w),
            swa: crate::estimate::ggml::window_cells(a, w).map(|cells| (cells, w.shared_slots)),
            flash: w.attention == Attention::Flash,
            compute: est
                .breakdown
                .activations
                .saturating_sub(est.projector.map_or(0, |p| p.compute)),
            embeddings_on_cpu: crate::estimate::weights::embeddings_on_cpu(
                &a.param_count(),
                Some(a),
                w.weights,
            ),
            ubatch: w.ubatch.min(crate::estimate::ggml::kv_cells(w).max(1)),
        });
        let experts = crate::estimate::ggml::cpu_experts(a, &est.params, w);
        if experts.layers > 0 {
            notes.push(Note::CpuExperts {
                layers: experts.layers,
                asked: (s.runtime == Runtime::LlamaCpp).then_some(w.cpu_moe),
                bytes: experts.bytes,
                per_token: experts.read_per_token,
                ram_gbs: w.ram_gbs,
                copies: if crate::estimate::ggml::op_offload(w) {
                    experts.largest
                } else {
                    0
                },
            });
        }
    }
    if let Some(a) = model.arch()
        && let Some(v) = a.vision
        // Exact checkpoint bytes already hold the tower (training ignores them).
        && (model.stored.is_none() || s.task.is_training())
    {
        let place = if s.task == Task::Full {
            TowerPlace::Trained
        } else if s.task.is_training() {
            TowerPlace::Frozen
        } else if w.engine == crate::workload::Engine::Ggml {
            if est.projector.is_some() {
                TowerPlace::ProjectorLoaded
            } else {
                TowerPlace::Projector
            }
        } else {
            TowerPlace::Loaded
        };
        let (bytes, compute) = match (place, est.projector) {
            (TowerPlace::Loaded, _) => (crate::estimate::weights::vision_bytes(Some(a), w), 0),
            // What the estimate loaded.
            (TowerPlace::ProjectorLoaded, Some(p)) => (p.weights, p.compute),
            // What an F16 mmproj file would add.
            (TowerPlace::Projector | TowerPlace::ProjectorLoaded, _) => (
                crate::mmproj::weights(&v, a.hidden),
                crate::mmproj::compute(&v, w.attention == crate::workload::Attention::Flash),
            ),
            // The tower's size in 16 bits, for scale.
            (TowerPlace::Frozen | TowerPlace::Trained, _) => {
                (v.params(a.hidden).saturating_mul(2), 0)
            }
        };
        notes.push(Note::VisionTower {
            bytes,
            place,
            compute,
        });
    }
}

/// The mechanisms of the runtime that cost memory: how it trains, `generate`'s old
/// cache, PEFT's upcast, bitsandbytes' paged states, FSDP's unsharded units.
fn memory(
    notes: &mut Vec<Note>,
    model: &Model,
    s: &Settings,
    w: &Workload,
    est: &Estimate,
    runtime: &'static str,
) {
    if s.task.is_training() {
        notes.push(Note::Runtime {
            runtime,
            precision: (s.task == Task::Full).then_some(w.precision),
            loss: w.loss,
            targets: (s.task != Task::Full).then_some(w.lora_targets),
            offload: w.checkpoint_offload,
        });
    }
    if s.runtime == crate::settings::Runtime::Transformers
        && !s.task.is_training()
        && !s.serving()
        && let Some(a) = model.arch()
    {
        let bytes = crate::estimate::kv::previous_step_cache(a, w);
        if bytes > 0 {
            notes.push(Note::OldGenerateCache { bytes });
        }
    }
    if let Some(a) = model.arch() {
        let bytes = crate::estimate::torch::peft::kbit_upcast_bytes(&a.param_count(), w);
        if bytes > 0 {
            notes.push(Note::KbitFp32 {
                bytes,
                head: crate::estimate::torch::activations::head_cast(a, w),
            });
        }
    }
    if s.task == Task::Qlora && matches!(s.format, WeightFormat::Plain { .. }) {
        notes.push(Note::QloraBase {
            asked: s.format.id(),
        });
    }
    let optimizer = est.breakdown.optimizer;
    if w.optimizer.is_paged() && optimizer > 0 {
        notes.push(Note::PagedOptimizer { bytes: optimizer });
    }
    if let Some(a) = model.arch() {
        let (root, layer) = crate::estimate::torch::parallel::fsdp_unsharded(a, w);
        if root > 0 {
            notes.push(Note::FsdpUnsharded { root, layer });
        }
    }
}

/// Several GPUs and the CPU: layer splits, gradient buffers, NCCL, ZeRO-Offload,
/// pipelines; then evaluation, torchtune's FSDP and the settings that do nothing.
fn layout(notes: &mut Vec<Note>, model: &Model, s: &Settings, w: &Workload, est: &Estimate) {
    if let Some(a) = model.arch()
        && let Some(note) = layer_split(a, s, w)
    {
        notes.push(note);
    }
    let sync = est.grad_sync;
    if sync.buckets > 0 && !w.deepspeed {
        notes.push(Note::DdpBuckets {
            bytes: sync.buckets,
        });
    } else if sync.buckets > 0 {
        notes.push(Note::DeepspeedBuffers {
            sync,
            default_bucket: crate::estimate::torch::parallel::DEEPSPEED_REDUCE_BUCKET
                .saturating_mul(w.compute_dtype().bytes_for(1)),
        });
    }
    let communication = crate::estimate::overhead::communication_bytes(w);
    if communication > 0 {
        notes.push(Note::Communication {
            bytes: communication,
        });
    }
    if est.offloaded_to_ram > 0 {
        notes.push(Note::CpuOffload {
            bytes: est.offloaded_to_ram,
            gradients: crate::estimate::torch::parallel::ram_gradients(w),
            whole_on_gpu: !crate::estimate::torch::parallel::offloads_gradients(w),
            params: w.offload_params,
        });
    }
    if s.task.is_training() && w.pp > 1 && model.arch().is_some() {
        notes.push(Note::Pipeline { pp: w.pp });
    }
    if s.task.is_training() && s.offload_params && w.zero < 3 {
        notes.push(Note::OffloadParamsNeedZero3);
    }
    // Evaluation matters once training fits.
    if let Some(a) = model.arch()
        && s.task.is_training()
        && !a.encoder_only
        && s.capacity().is_none_or(|c| est.per_gpu_bytes <= c)
        && matches!(s.runtime, Runtime::Transformers | Runtime::Deepspeed)
    {
        notes.push(trainer_eval(a, s, w, est));
    }
    if s.fsdp_forced() {
        notes.push(Note::TorchtuneFsdp);
    }
    if let Some(a) = model.arch() {
        let bytes = crate::estimate::torch::bnb::bnb_int8_unhooked_inputs(a, w);
        if bytes > 0 {
            notes.push(Note::Int8Checkpointing { bytes });
        }
    }
    if s.cpu_moe > 0 && model.arch().is_some_and(|a| a.moe.is_none()) {
        notes.push(Note::CpuMoeDense);
    }
}

/// What `Trainer`'s evaluation asks beside what stays through it: the weights, the
/// optimizer states, DDP's buckets and DeepSpeed's gradient partitions stay; the
/// gradients `zero_grad` freed and the training activations do not.
fn trainer_eval(a: &crate::Architecture, s: &Settings, w: &Workload, est: &Estimate) -> Note {
    use crate::estimate::torch::eval::{TRAINER_EVAL_BATCH, eval_kept_bytes, eval_loss_bytes};
    let freed = if w.deepspeed {
        0
    } else {
        est.breakdown
            .gradients
            .saturating_sub(est.grad_sync.buckets)
    };
    let stays = est
        .per_gpu_bytes
        .saturating_sub(est.breakdown.activations)
        .saturating_sub(freed);
    let room = s.capacity().map(|c| c.saturating_sub(stays));
    let autocast_outputs = s.runtime == Runtime::Transformers && w.precision != Precision::Pure;
    let kept = eval_kept_bytes(a, w, autocast_outputs);
    let fits = room.map(|r| r / eval_loss_bytes(a, w, 1).max(1));
    // The kept logits meet the next batch's loss: what is left beside that batch's peak,
    // halved by the concatenation's copy.
    let kept_fit = room.zip(fits).map(|(r, f)| {
        let batch = f.clamp(1, TRAINER_EVAL_BATCH);
        r.saturating_sub(eval_loss_bytes(a, w, batch)) / kept.saturating_mul(2).max(1)
    });
    Note::TrainerEval {
        batch: TRAINER_EVAL_BATCH,
        peak: eval_loss_bytes(a, w, TRAINER_EVAL_BATCH),
        fits,
        kept,
        kept_fit,
    }
}
