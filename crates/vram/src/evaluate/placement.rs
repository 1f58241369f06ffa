//! The runtime's own placement before the verdict: llama.cpp's `--fit` (an automatic
//! context lowered until 1 GiB stays free, then a MoE's experts and whole layers moved
//! to the CPU), Ollama's one-GPU rule, and how llama.cpp deals layers among GPUs.

use super::Note;
use crate::default_context::{self, Opened};
use crate::estimate::{Estimate, EstimateError, ModelInput, estimate};
use crate::settings::{Runtime, Settings};
use crate::solve;
use crate::units::ByteSize;
use crate::workload::Workload;

/// The workload and estimate after the runtime placed the model, with what it did.
pub(super) struct Placed {
    pub w: Workload,
    pub est: Estimate,
    /// With `--seq auto`, the context the runtime opens (after `--fit`).
    pub opened: Option<Opened>,
    /// The workload before any layer moved to the CPU: what the smallest GPU and the
    /// GPU count are for.
    pub whole: Workload,
    /// When layers or experts moved: the per-GPU bytes and weights of the model whole.
    pub whole_bytes: Option<(u64, u64)>,
    /// Ollama's one-GPU rule and `--fit`'s placement, when they acted.
    pub notes: Vec<Note>,
}

/// Runs the runtime's own placement for `model` under `s` on `capacity`.
pub(super) fn place(
    model: &super::Model,
    s: &Settings,
    capacity: Option<u64>,
) -> Result<Placed, EstimateError> {
    let input = &model.input;
    let mut opened = super::opened(model, s);
    let mut w = super::workload(model, s);
    let mut est = estimate(input, &w)?;
    // llama-server's `--fit` lowers an automatic context until 1 GiB stays free.
    if let (Some(Opened::LlamaCpp { trained, .. }), Some(free)) = (opened, capacity) {
        let at_min = Workload {
            seq: s.prompt(Some(Opened::LlamaCpp {
                trained: default_context::LLAMA_FIT_MIN,
                fit: None,
            })),
            ..w.clone()
        };
        let used_min = estimate(input, &at_min)?.per_gpu_bytes;
        if let Some(fit) = default_context::llama_fit(trained, est.per_gpu_bytes, used_min, free) {
            let fitted = Opened::LlamaCpp {
                trained,
                fit: Some(fit),
            };
            opened = Some(fitted);
            w.seq = s.prompt(opened);
            est = estimate(input, &w)?;
        }
    }
    let mut notes = Vec::new();
    // Ollama loads a model on one GPU when its estimate takes at most 80 % of that
    // GPU's free memory (`bestSingleGPUFit` in server/sched.go), unless
    // OLLAMA_SCHED_SPREAD is set; only larger models are split among the GPUs.
    if s.runtime == Runtime::Ollama
        && !s.task.is_training()
        && w.pp > 1
        && let Some(c) = capacity
    {
        let single = Workload {
            gpus: 1,
            tp: 1,
            pp: 1,
            ..w.clone()
        };
        let alone = estimate(input, &single)?;
        if u128::from(alone.per_gpu_bytes) * 100
            <= u128::from(c) * default_context::OLLAMA_ONE_GPU_PERCENT
        {
            notes.push(Note::OllamaOneGpu { gpus: w.pp });
            w = single;
            est = alone;
        }
    }
    // The smallest GPU and the GPU count are for the model whole, before any layer
    // moves to the CPU to fit this one.
    let whole = w.clone();
    // Then `--fit` places the layers (Ollama 0.30+ leaves that to it too): when the
    // model does not leave 1 GiB free, a MoE's experts go to the CPU first, then whole
    // layers from the front. A context it has just lowered was sized to leave that
    // GiB by its own linear projection, and llama.cpp stops there.
    let mut whole_bytes = None;
    let context_fitted = matches!(
        opened,
        Some(Opened::LlamaCpp { fit: Some(f), .. }) if !f.layers_next
    );
    if matches!(s.runtime, Runtime::LlamaCpp | Runtime::Ollama)
        && !s.task.is_training()
        && !context_fitted
        && s.gpu_layers.is_none()
        && s.cpu_moe == 0
        && let Some(c) = capacity
        && c.saturating_sub(est.per_gpu_bytes) < default_context::LLAMA_FIT_MARGIN
        && let Some((gpu_layers, cpu_moe)) = fit_layers(
            input,
            &w,
            c.saturating_sub(default_context::LLAMA_FIT_MARGIN),
        )
    {
        whole_bytes = Some((est.per_gpu_bytes, est.breakdown.weights));
        w.gpu_layers = gpu_layers;
        w.cpu_moe = cpu_moe;
        est = estimate(input, &w)?;
        notes.push(Note::FittedLayers {
            gpu_layers,
            layers: model.arch().map_or(0, |a| a.layers),
            cpu_moe,
            llama_cpp: s.runtime == Runtime::LlamaCpp,
            output_first: w.ngl_output_first,
        });
    }
    Ok(Placed {
        w,
        est,
        opened,
        whole,
        whole_bytes,
        notes,
    })
}

/// llama.cpp's `--fit` placing layers for `target` bytes (the free memory less its
/// margin): a MoE model moves the routed experts of the fewest layers it can to the CPU
/// (the first ones, as `--n-cpu-moe`; `--fit` moves the last ones, the same bytes), and
/// with every expert there, or for a dense model, keeps the most layers on the GPU
/// that fit (`-ngl`, counted from the back as llama.cpp fills them). `(gpu_layers,
/// cpu_moe)`, or `None` when not even that fits. Layers split across devices are not
/// modelled: `--fit` may also place part of one more layer.
fn fit_layers(input: &ModelInput, w: &Workload, target: u64) -> Option<(Option<u32>, u32)> {
    let moe = matches!(input, ModelInput::Arch { arch, .. } if arch.moe.is_some());
    if moe && let Some(n) = solve::min_cpu_moe(input, w, target) {
        return Some((None, n));
    }
    let cpu_moe = if moe {
        crate::settings::CPU_MOE_ALL
    } else {
        w.cpu_moe
    };
    let rest = Workload {
        cpu_moe,
        ..w.clone()
    };
    solve::max_gpu_layers(input, &rest, target).map(|l| (Some(l), cpu_moe))
}

/// How many of a model's layers llama.cpp can put on the GPU (`-ngl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LayerFit {
    /// The most that fit (`-ngl`); `layers + 1` means every layer and the output.
    pub fit: u32,
    /// The model's layers.
    pub layers: u32,
    /// `-ngl` counts the output layer first (`estimate::ggml::placement`).
    pub output_first: bool,
}

impl LayerFit {
    /// Every layer and the output fit.
    pub fn all(self) -> bool {
        self.fit > self.layers
    }

    /// What `fit` puts on the GPU, in words: "41 de 80 y la de salida", "solo la de
    /// salida", "ninguna", or an older build's "42 de 80".
    pub fn placed_text(self) -> String {
        let n = self.layers;
        match self.fit {
            0 => "ninguna".to_owned(),
            k if k > n => format!("todas ({n} y la de salida)"),
            1 if self.output_first => "solo la de salida".to_owned(),
            k if self.output_first => format!("{} de {n} y la de salida", k - 1),
            k => format!("{k} de {n}"),
        }
    }
}

/// llama.cpp with a MoE model: how many first layers must keep their experts in CPU
/// RAM (`--n-cpu-moe`) for the workload to fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuMoeFit {
    /// The fewest such layers; 0 when every expert fits on the GPU.
    pub fit: u32,
    /// The model's layers.
    pub layers: u32,
}

/// llama.cpp or Ollama with part of the model in CPU RAM: the layers below `-ngl`
/// (chosen, or placed by the automatic fit) and the experts of `--n-cpu-moe`. The
/// verdict names it, since «cabe» then means the GPU's part fits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CpuSplit {
    /// `-ngl` when some layer stays on the CPU.
    pub gpu_layers: Option<u32>,
    /// Repeating layers on the GPU (the last ones), and whether the output layer is
    /// there too (`estimate::ggml::placement`).
    pub layers_on_gpu: u32,
    pub output_on_gpu: bool,
    /// The model's layers.
    pub layers: u32,
    /// First layers whose routed experts stay in RAM (`--n-cpu-moe`; at least
    /// `layers` means every layer's); 0 when none do (a dense model, or only dense
    /// layers among them).
    pub cpu_moe: u32,
    /// What CPU RAM holds: the layers and experts left there, their KV cache, the
    /// input embeddings and the output's compute buffer when the output stays too.
    pub host_bytes: u64,
    /// Several GPUs share the GPU part.
    pub several_gpus: bool,
}

impl CpuSplit {
    /// The split for a ggml workload `w` on `a`, or `None` when the whole model (all
    /// but the input embeddings) is on the GPU.
    pub(super) fn of(a: &crate::Architecture, w: &Workload, est: &Estimate) -> Option<CpuSplit> {
        if w.engine != crate::workload::Engine::Ggml || w.mode != crate::workload::Mode::Inference {
            return None;
        }
        let layers = a.layers;
        let (on_gpu, output) = crate::estimate::ggml::placement(layers, w);
        let experts = crate::estimate::ggml::cpu_experts(a, &est.params, w);
        let cpu_moe = if experts.layers > 0 { w.cpu_moe } else { 0 };
        (on_gpu < layers || !output || cpu_moe > 0).then_some(CpuSplit {
            gpu_layers: w.gpu_layers.filter(|_| on_gpu < layers || !output),
            layers_on_gpu: on_gpu,
            output_on_gpu: output,
            layers,
            cpu_moe,
            host_bytes: est.host_bytes,
            several_gpus: crate::estimate::ggml::devices(w) > 1,
        })
    }

    /// " con parte en la CPU (42 de 80 capas y la de salida en la GPU; la RAM guarda
    /// 20,35 GiB)".
    pub(super) fn text(self) -> String {
        let n = self.layers;
        let gpu = if self.several_gpus {
            "las GPU"
        } else {
            "la GPU"
        };
        let layers = match (self.layers_on_gpu, self.output_on_gpu) {
            (0, true) => Some(format!("solo la capa de salida en {gpu}")),
            (0, false) => Some(format!("ninguna capa en {gpu}")),
            (g, true) if g < n => Some(format!("{g} de {n} capas y la de salida en {gpu}")),
            (g, false) if g < n => Some(format!("{g} de {n} capas en {gpu}")),
            (_, false) => Some("solo la capa de salida queda en la CPU".to_owned()),
            _ => None,
        };
        let experts = match self.cpu_moe {
            0 => None,
            m if m >= n => Some("los expertos de todas las capas en la RAM".to_owned()),
            m => Some(format!("los expertos de {m} de {n} capas en la RAM")),
        };
        let parts: Vec<String> = layers.into_iter().chain(experts).collect();
        format!(
            " con parte en la CPU ({}; la RAM guarda {})",
            parts.join("; "),
            ByteSize(self.host_bytes).binary()
        )
    }
}

/// llama.cpp or Ollama on several GPUs: the layers on the first and last GPU and the
/// pipeline's extra copies ([`crate::estimate::ggml::offload`]'s placement).
pub(super) fn layer_split(a: &crate::Architecture, s: &Settings, w: &Workload) -> Option<Note> {
    use crate::estimate::ggml::{SCHED_COPIES, devices, gpu_shares, phases};
    let gpus = devices(w);
    let (on_gpu, output) = crate::estimate::ggml::placement(a.layers, w);
    if w.engine != crate::workload::Engine::Ggml
        || w.mode != crate::workload::Mode::Inference
        || gpus < 2
        || on_gpu == 0
    {
        return None;
    }
    let shares = gpu_shares(u64::from(on_gpu), output, gpus);
    let layers = |d: usize| u32::try_from(shares[d].layers()).unwrap_or(u32::MAX);
    // The last GPU that holds anything (more GPUs than layers leave some empty).
    let last = shares
        .iter()
        .rposition(|s| s.layers() > 0 || s.output)
        .unwrap_or(0);
    // One GPU keeps the mask once; each GPU of the pipeline keeps four copies of it
    // and of the hidden states it receives.
    let pipeline = crate::estimate::ggml::pipeline(a, w).then(|| {
        let p = phases(a, w);
        SCHED_COPIES
            .saturating_mul(p.hidden.saturating_add(p.mask))
            .saturating_sub(p.mask)
    });
    Some(Note::LayerSplit {
        runtime: if s.runtime == Runtime::Ollama {
            "Ollama"
        } else {
            "llama.cpp"
        },
        gpus: u32::try_from(gpus).unwrap_or(u32::MAX),
        first: layers(0),
        last: layers(last),
        output,
        pipeline,
    })
}
