//! `evaluate`: a model and its settings → everything a front end shows: the estimate,
//! the verdict against the GPU, the largest batch and context that fit, the smallest
//! GPU and the fewest GPUs, speed hints, the serving plan and the notes.
//!
//! The CLI's table and JSON, the estimator page, the widget and its embed snippet all
//! render one [`Evaluation`], so they cannot disagree. Numbers are computed without
//! building any text: notes are typed ([`Note`]) and worded by each front end.

mod note;

pub use note::{Note, TowerPlace};

use crate::band::{self, Band};
use crate::catalog::Gpu;
use crate::cuda_graphs::CudaGraphs;
use crate::default_context::{self, Opened};
use crate::estimate::{Estimate, EstimateError, ModelInput, estimate};
use crate::import::StoredWeights;
use crate::quant::WeightFormat;
use crate::serving::ServingPlan;
use crate::settings::{Runtime, Settings, Surface, Task};
use crate::speed::SpeedHint;
use crate::units::{ByteSize, group_digits};
use crate::workload::{Attention, Precision, Workload};
use crate::{serving, solve, speed};

/// What is known of the model.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub input: ModelInput,
    /// Exact bytes of the weights as a file stores them: in inference they replace the
    /// format's formula.
    pub stored: Option<StoredWeights>,
    /// Tensors in that file, when a header said.
    pub tensors: Option<u64>,
}

impl Model {
    pub fn new(input: ModelInput) -> Model {
        Model {
            input,
            stored: None,
            tensors: None,
        }
    }

    pub fn arch(&self) -> Option<&crate::Architecture> {
        match &self.input {
            ModelInput::Arch { arch, .. } => Some(arch),
            ModelInput::Params(_) => None,
        }
    }
}

/// Whether the workload fits one GPU, read against the error band of its runtime
/// ([`Band`]): "fits" only when the band's high end fits too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The band's high end fits: `spare` left by the estimate, `spare_high` by the
    /// high end.
    Fits {
        spare: u64,
        spare_high: u64,
    },
    /// The estimate fits with `spare` left, but the band's high end needs `short` more
    /// than the GPU has: it may run out of memory.
    Tight {
        spare: u64,
        short: u64,
    },
    DoesNotFit {
        missing: u64,
    },
    /// Serving: the KV cache left holds this many sequences of the context at once,
    /// `at_least` at the band's low end (0: the server may refuse to start).
    Serves {
        sequences: u64,
        at_least: u64,
    },
    /// Serving: not even one sequence of the context fits in the KV cache left (vLLM
    /// refuses to start).
    CannotServe {
        /// KV cache bytes left after weights, activations and overhead.
        kv_budget: u64,
        /// KV cache bytes one sequence of the context needs.
        needed: u64,
        /// The longest context (`max_model_len`) that would start: the tokens the KV
        /// cache left holds, in whole blocks, as vLLM's own estimate in its refusal.
        longest: u64,
    },
    /// Serving: vLLM refuses to start before loading anything, because the GPU's free
    /// memory is less than `gpu_memory_utilization` × its total (`init_device` in
    /// vllm/v1/worker/gpu_worker.py: "Free memory on device … on startup is less than
    /// desired GPU memory utilization").
    WontStart {
        /// Free memory at start-up: the total less what other processes hold and the
        /// process's own CUDA context.
        free: u64,
        /// `gpu_memory_utilization` × the total.
        requested: u64,
        /// The largest `gpu_memory_utilization` that starts, in percent.
        max_percent: u8,
    },
    /// vLLM refuses the tensor-parallel degree before loading anything: the model's
    /// attention heads must split evenly ("Total number of attention heads … must be
    /// divisible by tensor parallel size", `verify_with_parallel_config` in
    /// vllm/config/model.py).
    TpRefused {
        heads: u32,
        tp: u32,
    },
    /// Serving: vLLM starts and fills `gpu_memory_utilization` with the KV cache, then
    /// runs out of memory capturing its CUDA graphs, which versions up to 0.20 did not
    /// reserve room for ([`crate::cuda_graphs`]).
    GraphsDoNotFit {
        /// Free memory at start-up, as in [`Verdict::WontStart`].
        free: u64,
        /// `gpu_memory_utilization` × the total, all of it taken before the capture.
        requested: u64,
        /// What the graphs need on top.
        graphs: u64,
        /// The largest `gpu_memory_utilization` that leaves them room, in percent.
        max_percent: u8,
    },
}

impl Verdict {
    /// Whether the run fits even at the band's high end.
    pub fn fits(self) -> bool {
        match self {
            Verdict::Fits { .. } => true,
            Verdict::Serves { at_least, .. } => at_least >= 1,
            Verdict::Tight { .. }
            | Verdict::DoesNotFit { .. }
            | Verdict::CannotServe { .. }
            | Verdict::WontStart { .. }
            | Verdict::TpRefused { .. }
            | Verdict::GraphsDoNotFit { .. } => false,
        }
    }

    /// Whether a server gets as far as serving: false when vLLM refuses to start or
    /// dies capturing its CUDA graphs (its plan is then what it would have had).
    pub fn starts(self) -> bool {
        !matches!(
            self,
            Verdict::WontStart { .. } | Verdict::GraphsDoNotFit { .. } | Verdict::TpRefused { .. }
        )
    }

    /// The verdict's id in the CLI's JSON.
    pub fn id(self) -> &'static str {
        match self {
            Verdict::Fits { .. } => "fits",
            Verdict::Tight { .. } => "tight",
            Verdict::DoesNotFit { .. } => "does-not-fit",
            Verdict::Serves { at_least: 0, .. } => "tight-serve",
            Verdict::Serves { .. } => "serves",
            Verdict::CannotServe { .. } => "cannot-serve",
            Verdict::WontStart { .. } => "wont-start",
            Verdict::TpRefused { .. } => "refused",
            Verdict::GraphsDoNotFit { .. } => "graphs-do-not-fit",
        }
    }
}

/// How many of a model's layers llama.cpp can put on the GPU (`-ngl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LayerFit {
    /// The most that fit (`-ngl`); `layers + 1` means every layer and the output.
    pub fit: u32,
    /// The model's layers.
    pub layers: u32,
    /// `-ngl` counts the output layer first (`estimate::ggml_placement`).
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
    /// there too (`estimate::ggml_placement`).
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
    fn of(a: &crate::Architecture, w: &Workload, est: &Estimate) -> Option<CpuSplit> {
        if w.engine != crate::workload::Engine::Ggml || w.mode != crate::workload::Mode::Inference {
            return None;
        }
        let layers = a.layers;
        let (on_gpu, output) = crate::estimate::ggml_placement(layers, w);
        let experts = crate::estimate::ggml_cpu_experts(a, &est.params, w);
        let cpu_moe = if experts.layers > 0 { w.cpu_moe } else { 0 };
        (on_gpu < layers || !output || cpu_moe > 0).then_some(CpuSplit {
            gpu_layers: w.gpu_layers.filter(|_| on_gpu < layers || !output),
            layers_on_gpu: on_gpu,
            output_on_gpu: output,
            layers,
            cpu_moe,
            host_bytes: est.host_bytes,
            several_gpus: crate::estimate::ggml_devices(w) > 1,
        })
    }

    /// " con parte en la CPU (42 de 80 capas y la de salida en la GPU; la RAM guarda
    /// 20,35 GiB)".
    fn text(self) -> String {
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

/// Everything the front ends show for one model and one set of settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    pub workload: Workload,
    pub estimate: Estimate,
    /// Memory of one GPU, when a GPU or a size was given.
    pub capacity: Option<u64>,
    pub verdict: Option<Verdict>,
    pub max_batch: Option<u64>,
    pub max_seq: Option<u64>,
    /// The same limits with the band's high end fitting: what «cabe con margen» would
    /// allow. Equal to the plain limits where there is no band or no difference.
    pub margin: Margin,
    /// llama.cpp/Ollama: the most layers that fit on the GPU.
    pub max_gpu_layers: Option<LayerFit>,
    /// llama.cpp with a MoE model: the fewest first layers whose experts must stay in
    /// CPU RAM (`--n-cpu-moe`) for it to fit even at the band's high end, with the
    /// model's layers; 0 when nothing has to.
    pub min_cpu_moe: Option<CpuMoeFit>,
    /// The catalog GPU with the least memory that holds the workload.
    pub smallest_gpu: Option<&'static Gpu>,
    /// With `--seq auto`, the context the runtime opens (after llama.cpp's `--fit`).
    pub opened: Option<Opened>,
    /// When `-ngl auto` moved layers or experts to the CPU: the per-GPU bytes and the
    /// weights of the model whole on the GPU, what a list of GPUs it fits compares.
    pub whole: Option<(u64, u64)>,
    /// The fewest GPUs of this capacity that hold it (ZeRO-3 for training, tensor
    /// parallelism for inference, llama.cpp's layer split).
    pub min_gpus: Option<u32>,
    /// llama.cpp/Ollama with layers or experts in CPU RAM.
    pub cpu_split: Option<CpuSplit>,
    pub speed: Option<SpeedHint>,
    pub serving: Option<ServingPlan>,
    /// The error band of the runtime and phase, from the validation cases.
    pub band: Option<Band>,
    pub notes: Vec<Note>,
}

impl Evaluation {
    /// The verdict as one Spanish sentence: naming `gpu` ("Cabe en GeForce RTX 4090
    /// (23,99 GiB): sobran 7,62 GiB.") or, without a name, short ("Cabe: sobran …").
    /// The CLI's words may name its flags; the web's never do.
    pub fn verdict_text(&self, gpu: Option<&str>, surface: Surface) -> Option<String> {
        let v = self.verdict?;
        let bytes = |b: u64| ByteSize(b).binary();
        let target = match gpu {
            Some(name) => {
                let each = if self.estimate.gpus > 1 {
                    ", por GPU"
                } else {
                    ""
                };
                let cap = self.capacity.map(bytes).unwrap_or_default();
                format!(" en {name} ({cap}{each})")
            }
            None => String::new(),
        };
        // «Cabe» with layers in RAM is the GPU's part: say so where the verdict is read.
        let target = match self.cpu_split {
            Some(split) => format!("{target}{}", split.text()),
            None => target,
        };
        let context = group_digits(self.workload.seq.saturating_add(self.workload.new_tokens));
        Some(match v {
            Verdict::Fits { spare, spare_high } => format!(
                "Cabe con margen{target}: sobran {}, y {} aun en el extremo alto de la banda de error.",
                bytes(spare),
                bytes(spare_high)
            ),
            Verdict::Tight { spare, short } => format!(
                "Al límite{target}: el cálculo deja {} libres, pero en el extremo alto de la banda de error faltarían {}; puede quedarse sin memoria.",
                bytes(spare),
                bytes(short)
            ),
            Verdict::DoesNotFit { missing } => {
                format!("No cabe{target}: faltan {}.", bytes(missing))
            }
            Verdict::Serves {
                sequences,
                at_least: 0,
            } => format!(
                "Al límite como servidor{target}: el cálculo da {} de {context} tokens a la vez, pero en el extremo bajo de la banda de error no cabría ninguna y el servidor no arrancaría. {}",
                crate::units::counted(sequences, "secuencia", "secuencias"),
                match surface {
                    Surface::Cli => "Baja --seq (max_model_len) o sube --gpu-memory-utilization.",
                    Surface::Web => "Reduce el contexto (max_model_len de vLLM).",
                }
            ),
            Verdict::Serves {
                sequences,
                at_least,
            } if at_least < sequences => format!(
                "Cabe como servidor{target}: {} de {context} tokens a la vez ({} en el extremo bajo de la banda de error).",
                crate::units::counted(sequences, "secuencia", "secuencias"),
                group_digits(at_least)
            ),
            Verdict::Serves { sequences, .. } => format!(
                "Cabe como servidor{target}: {} de {context} tokens a la vez.",
                crate::units::counted(sequences, "secuencia", "secuencias")
            ),
            Verdict::CannotServe {
                kv_budget,
                needed,
                longest,
            } => {
                let prompt = longest.saturating_sub(self.workload.new_tokens);
                // The longest prompt that also starts at the band's unfavourable end.
                let margin = self
                    .margin
                    .seq
                    .filter(|&m| m > 0 && m < prompt)
                    .map(|m| {
                        let longest = m.saturating_add(self.workload.new_tokens);
                        match surface {
                            // A value to pass as a flag, written as the flag takes it.
                            Surface::Cli => format!("; {longest} con margen"),
                            Surface::Web => format!("; {} con margen", group_digits(longest)),
                        }
                    })
                    .unwrap_or_default();
                let advice = match surface {
                    _ if prompt == 0 => {
                        "No queda sitio ni para un contexto corto: hace falta más memoria por GPU o más GPU.".to_owned()
                    }
                    Surface::Cli => format!(
                        "Arrancaría con --seq {prompt} o menos (max_model_len {longest}{margin}), o subiendo --gpu-memory-utilization.",
                    ),
                    Surface::Web => format!(
                        "Arrancaría con un contexto de hasta {} tokens (max_model_len de vLLM{margin}).",
                        group_digits(longest)
                    ),
                };
                format!(
                    "No arranca como servidor{target}: quedan {} para la caché KV y una secuencia de {context} tokens necesita {}. {advice}",
                    bytes(kv_budget),
                    bytes(needed),
                )
            }
            Verdict::WontStart {
                free,
                requested,
                max_percent,
            } => {
                let advice = match surface {
                    _ if max_percent == 0 => {
                        "Libera la GPU: otros procesos ocupan casi toda su memoria.".to_owned()
                    }
                    Surface::Cli => format!(
                        "Baja --gpu-memory-utilization a {}% o menos, o libera memoria de la GPU (--reserve dice cuánto ocupa ya).",
                        max_percent
                    ),
                    Surface::Web => format!(
                        "Baja gpu_memory_utilization al {} % o menos, o libera memoria de la GPU.",
                        max_percent
                    ),
                };
                format!(
                    "No arranca como servidor{target}: vLLM pide al arrancar {} (gpu_memory_utilization por la memoria total) y solo hay {} libres, descontados su contexto CUDA y lo que ya ocupan otros procesos. {advice}",
                    bytes(requested),
                    bytes(free),
                )
            }
            Verdict::TpRefused { heads, tp } => {
                // The nearest degrees that split the heads, below and above.
                let divides = |d: &u32| heads.is_multiple_of(*d);
                let below = (1..tp).rev().find(divides).unwrap_or(1);
                let above = (tp + 1..=heads).find(divides);
                let choices = match above {
                    Some(a) => format!("{below} o {a}"),
                    None => below.to_string(),
                };
                let how = match surface {
                    Surface::Cli => format!(
                        "Usa --tp {choices} (con --gpus múltiplo de ese número), o reparte por capas con --tp 1 --pp {tp}."
                    ),
                    Surface::Web => format!("Usa un número de GPU que divida {heads}: {choices}."),
                };
                format!(
                    "vLLM no arrancaría{target}: sus {heads} cabezas de atención no se reparten por igual entre {tp} GPU, y vLLM lo comprueba antes de cargar nada. {how}"
                )
            }
            Verdict::GraphsDoNotFit {
                free,
                requested,
                graphs,
                max_percent,
            } => {
                let advice = match surface {
                    Surface::Cli => format!(
                        "Baja --gpu-memory-utilization a {max_percent}% o menos, arranca vLLM con --enforce-eager (--cuda-graphs off) o usa vLLM 0.21 o posterior, que los descuenta de la caché KV (--cuda-graphs profiled)."
                    ),
                    Surface::Web => format!(
                        "Baja gpu_memory_utilization al {max_percent} % o menos, arranca vLLM sin grafos (enforce_eager) o usa vLLM 0.21 o posterior, que los descuenta de la caché KV."
                    ),
                };
                format!(
                    "Se quedaría sin memoria al arrancar como servidor{target}: la caché KV llena los {} de gpu_memory_utilization y después vLLM captura sus grafos CUDA, que piden unos {} más, pero solo quedan {} libres. {advice}",
                    bytes(requested),
                    bytes(graphs),
                    bytes(free.saturating_sub(requested)),
                )
            }
        })
    }
}

/// The share of one GPU's free memory under which Ollama's scheduler keeps a model on
/// that GPU alone (`bestSingleGPUFit` in server/sched.go).
pub const OLLAMA_ONE_GPU_PERCENT: u128 = 80;

/// Limits that hold even at the band's unfavourable end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Margin {
    pub batch: Option<u64>,
    pub seq: Option<u64>,
}

/// "8" or "8 (6 con margen)", "35 931 tokens (15 029 con margen)": a limit and, when it
/// differs, the one that holds at the band's unfavourable end. One wording for the CLI,
/// the page and the widget; `unit` follows the number ("" or " tokens").
pub fn with_margin(limit: u64, margin: Option<u64>, unit: &str) -> String {
    let n = group_digits(limit);
    match margin {
        Some(m) if m < limit => format!("{n}{unit} ({} con margen)", group_digits(m)),
        None => format!("{n}{unit} (ninguno con margen)"),
        _ => format!("{n}{unit}"),
    }
}

/// The engine's model input and workload for `model` and `s`.
pub fn workload(model: &Model, s: &Settings) -> Workload {
    let mut w = s.workload();
    w.seq = s.prompt(opened(model, s));
    if !s.task.is_training() {
        w.stored_weights = model.stored.as_ref().map(|st| st.bytes);
        w.stored_experts = model
            .stored
            .as_ref()
            .map(|st| st.experts.clone())
            .unwrap_or_default();
    }
    w
}

/// With `auto` context, the one the runtime opens `model` with under `s` (before
/// llama.cpp's `--fit`, which needs the estimate).
fn opened(model: &Model, s: &Settings) -> Option<Opened> {
    s.opened(model.arch().map(|a| u64::from(a.max_positions)))
}

/// Evaluates `model` under `s`.
pub fn evaluate(model: &Model, s: &Settings) -> Result<Evaluation, EstimateError> {
    let input = &model.input;
    let capacity = s.capacity();
    let mut opened = opened(model, s);
    let mut w = workload(model, s);
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
    // Ollama loads a model on one GPU when its estimate takes at most 80 % of that
    // GPU's free memory (`bestSingleGPUFit` in server/sched.go), unless
    // OLLAMA_SCHED_SPREAD is set; only larger models are split among the GPUs.
    let mut one_gpu = None;
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
        if u128::from(alone.per_gpu_bytes) * 100 <= u128::from(c) * OLLAMA_ONE_GPU_PERCENT {
            one_gpu = Some(Note::OllamaOneGpu { gpus: w.pp });
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
    let mut placed = None;
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
        placed = Some(Note::FittedLayers {
            gpu_layers,
            layers: model.arch().map_or(0, |a| a.layers),
            cpu_moe,
            llama_cpp: s.runtime == Runtime::LlamaCpp,
            output_first: w.ngl_output_first,
        });
    }
    let arch = model.arch();
    let mut notes = notes(model, s, &w, &est);
    notes.extend(one_gpu);
    notes.extend(placed);
    if let Some(opened) = opened {
        notes.push(Note::OpenedContext {
            opened,
            new_tokens: w.new_tokens,
        });
    }
    let serving = match (s.serving(), arch, capacity) {
        (true, Some(a), Some(c)) => {
            let total = s.card_total().unwrap_or(c);
            // vLLM takes `gpu_memory_utilization` of the whole card as the driver
            // reports it, not of what other processes leave: they only decide whether
            // it starts (`start_check`).
            let usable = s.card_memory().unwrap_or(c);
            let profile = serving::Profile::vllm_default(total, s.gpu)
                .with_tokens(s.batched_tokens)
                .with_sequences(s.max_seqs)
                .with_graphs(s.cuda_graphs);
            let peak = serving::profile_peak(a, &w, profile);
            notes.push(Note::ServingProfile {
                tokens: profile.batched_tokens,
                sequences: profile.sequences,
                bytes: peak,
                chosen_tokens: s.batched_tokens.is_some(),
                chosen_sequences: s.max_seqs.is_some(),
                several_gpus: serving::pays_whole_overhead(&w),
            });
            if let Some(e) = serving::EncoderProfile::of(a, &w, profile) {
                notes.push(Note::VisionEncoder {
                    images: e.images,
                    alive: e.alive,
                });
            }
            if let Some((padded, layers)) = serving::hybrid_padding(a, w.pp)
                && padded > layers
            {
                notes.push(Note::HybridKv { padded, layers });
            }
            let plan = serving::plan(
                a,
                &w,
                &est,
                usable,
                s.utilization,
                s.block_size,
                profile,
                peak,
            );
            notes.push(Note::CudaGraphs {
                mode: s.cuda_graphs,
                captures: profile.captures(),
                bytes: plan.cuda_graph_bytes,
                sparse: a.moe.is_some() || a.mla.is_some(),
            });
            Some(plan)
        }
        _ => None,
    };
    let band = band::for_settings(s);
    let refused = tp_refused(model, s, &w);
    let verdict = capacity.map(|c| {
        refused
            .or_else(|| serving.as_ref().and_then(|p| start_check(s, c, p)))
            .unwrap_or_else(|| verdict(&est, serving.as_ref(), band, &w, c))
    });
    // A server's limits are its KV cache's: the sequences it holds at once, and the
    // longest context (less the generated tokens) that one sequence can have.
    let starts = verdict.is_none_or(Verdict::starts);
    // vLLM refuses a max_model_len beyond the model's own (`_get_and_verify_max_len`),
    // however much cache there is.
    let model_limit = |tokens: u64| {
        model.arch().map_or(tokens, |a| {
            tokens.min(u64::from(a.max_positions).saturating_sub(w.new_tokens))
        })
    };
    let (max_batch, max_seq) = match &serving {
        Some(p) => (
            Some(p.max_sequences).filter(|&n| n > 0 && starts),
            Some(model_limit(p.tokens.saturating_sub(w.new_tokens))).filter(|&n| n > 0 && starts),
        ),
        // Nothing runs where vLLM refuses the parallel layout.
        None if refused.is_some() => (None, None),
        None => (
            capacity.and_then(|c| solve::max_batch(input, &w, c)),
            capacity.and_then(|c| solve::max_seq(input, &w, c)),
        ),
    };
    let margin = match (&serving, band, capacity) {
        (Some(_), _, _) if !starts => Margin::default(),
        (Some(p), Some(b), _) => {
            let low = b.low_count(p.tokens);
            Margin {
                batch: Some(low / w.seq.saturating_add(w.new_tokens).max(1)).filter(|&n| n > 0),
                seq: Some(model_limit(low.saturating_sub(w.new_tokens))).filter(|&n| n > 0),
            }
        }
        (None, Some(b), Some(c)) => {
            let ok = |e: &Estimate| b.high_bytes(e.per_gpu_bytes, e.breakdown.weights) <= c;
            Margin {
                batch: max_batch.and_then(|_| solve::max_batch_by(input, &w, ok)),
                seq: max_seq.and_then(|_| solve::max_seq_by(input, &w, ok)),
            }
        }
        _ => Margin {
            batch: max_batch,
            seq: max_seq,
        },
    };
    Ok(Evaluation {
        max_batch,
        max_seq,
        margin,
        max_gpu_layers: capacity.and_then(|c| {
            Some(LayerFit {
                fit: solve::max_gpu_layers(input, &whole, c)?,
                layers: arch?.layers,
                output_first: whole.ngl_output_first,
            })
        }),
        // Recommended where it fits even at the band's high end, as «cabe con margen».
        min_cpu_moe: capacity
            .filter(|_| s.runtime == crate::settings::Runtime::LlamaCpp)
            .and_then(|c| {
                let fit = match band {
                    Some(b) => solve::min_cpu_moe_by(input, &whole, |e| {
                        b.high_bytes(e.per_gpu_bytes, e.breakdown.weights) <= c
                    }),
                    None => solve::min_cpu_moe(input, &whole, c),
                };
                Some(CpuMoeFit {
                    fit: fit?,
                    layers: arch?.layers,
                })
            }),
        // A layout vLLM refuses runs nowhere: no GPU list, count or speed for it.
        smallest_gpu: solve::smallest_gpu(input, &whole, s.reserve).filter(|_| refused.is_none()),
        whole: whole_bytes,
        opened,
        min_gpus: capacity
            .filter(|_| refused.is_none())
            .and_then(|c| solve::fewest_gpus(input, &whole, c)),
        cpu_split: arch.and_then(|a| CpuSplit::of(a, &w, &est)),
        speed: match (arch, s.gpu) {
            (Some(a), Some(g)) if refused.is_none() => speed::speed(a, &w, &est, g),
            _ => None,
        },
        notes,
        serving,
        verdict,
        band,
        capacity,
        estimate: est,
        workload: w,
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

/// llama.cpp or Ollama on several GPUs: the layers on the first and last GPU and the
/// pipeline's extra copies ([`crate::estimate::ggml_offload`]'s placement).
fn layer_split(a: &crate::Architecture, s: &Settings, w: &Workload) -> Option<Note> {
    use crate::estimate::{GGML_SCHED_COPIES, ggml_devices, ggml_gpu_shares, ggml_phases};
    let gpus = ggml_devices(w);
    let (on_gpu, output) = crate::estimate::ggml_placement(a.layers, w);
    if w.engine != crate::workload::Engine::Ggml
        || w.mode != crate::workload::Mode::Inference
        || gpus < 2
        || on_gpu == 0
    {
        return None;
    }
    let shares = ggml_gpu_shares(u64::from(on_gpu), output, gpus);
    let layers = |d: usize| u32::try_from(shares[d].layers()).unwrap_or(u32::MAX);
    // The last GPU that holds anything (more GPUs than layers leave some empty).
    let last = shares
        .iter()
        .rposition(|s| s.layers() > 0 || s.output)
        .unwrap_or(0);
    // One GPU keeps the mask once; each GPU of the pipeline keeps four copies of it
    // and of the hidden states it receives.
    let pipeline = crate::estimate::ggml_pipeline(a, w).then(|| {
        let p = ggml_phases(a, w);
        GGML_SCHED_COPIES
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

/// vLLM's refusal of a tensor-parallel degree that does not divide the attention heads
/// ([`Verdict::TpRefused`]).
fn tp_refused(model: &Model, s: &Settings, w: &Workload) -> Option<Verdict> {
    let heads = model.arch()?.heads;
    (s.runtime == Runtime::Vllm
        && !s.task.is_training()
        && w.tp > 1
        && heads > 0
        && !heads.is_multiple_of(w.tp))
    .then_some(Verdict::TpRefused { heads, tp: w.tp })
}

/// vLLM's start-up check for a GPU of `capacity` bytes left by other processes: the
/// free memory its worker sees first (that capacity less the CUDA context it has just
/// created, [`Settings::start_context`]) must reach what it requested, the serving
/// plan's budget (`gpu_memory_utilization` × the whole card). Where the CUDA graphs
/// are captured after the KV cache has filled that budget, the same free memory must
/// hold them too. `None` when it starts and serves.
fn start_check(s: &Settings, capacity: u64, plan: &ServingPlan) -> Option<Verdict> {
    let usable = u128::from(s.card_memory().unwrap_or(capacity).max(1));
    let free = capacity.saturating_sub(s.start_context());
    let requested = plan.budget_bytes;
    let percent = |bytes: u64| u8::try_from(u128::from(bytes) * 100 / usable).unwrap_or(100);
    if free < requested {
        return Some(Verdict::WontStart {
            free,
            requested,
            max_percent: percent(free),
        });
    }
    let graphs = plan.cuda_graph_bytes;
    (plan.cuda_graphs == CudaGraphs::AfterKv && free - requested < graphs).then(|| {
        Verdict::GraphsDoNotFit {
            free,
            requested,
            graphs,
            max_percent: percent(free.saturating_sub(graphs)),
        }
    })
}

/// The verdict of `est` (and its serving plan) on a GPU of `capacity` bytes.
fn verdict(
    est: &Estimate,
    serving: Option<&ServingPlan>,
    band: Option<Band>,
    w: &Workload,
    capacity: u64,
) -> Verdict {
    let context = w.seq.saturating_add(w.new_tokens);
    if let Some(p) = serving {
        return if p.max_sequences >= 1 {
            Verdict::Serves {
                sequences: p.max_sequences,
                at_least: band.map_or(p.max_sequences, |b| b.low_count(p.tokens) / context.max(1)),
            }
        } else {
            Verdict::CannotServe {
                kv_budget: p.kv_budget_bytes,
                needed: p.kv_bytes_per_token.saturating_mul(context),
                longest: p.tokens,
            }
        };
    }
    let need = est.per_gpu_bytes;
    let high = band.map_or(need, |b| b.high_bytes(need, est.breakdown.weights));
    if need > capacity {
        Verdict::DoesNotFit {
            missing: need - capacity,
        }
    } else if high > capacity {
        Verdict::Tight {
            spare: capacity - need,
            short: high - capacity,
        }
    } else {
        Verdict::Fits {
            spare: capacity - need,
            spare_high: capacity - high,
        }
    }
}

fn notes(model: &Model, s: &Settings, w: &Workload, est: &Estimate) -> Vec<Note> {
    let mut notes = Vec::new();
    if let (None, Some(g)) = (s.gpu_memory, s.gpu) {
        notes.push(Note::Capacity {
            gpu: g.name.clone(),
            usable: g.usable_bytes,
            nominal: g.memory_bytes,
            source: g.usable_source.clone(),
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
    if let (None, Some(g)) = (s.cuda_context, s.gpu) {
        let d = crate::context::for_family(&g.family);
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
    let runtime = crate::settings::entry(crate::settings::RUNTIMES, band::runtime_of(s))
        .label
        .split(' ')
        .next()
        .unwrap_or("el motor");
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
            placement: crate::estimate::ggml_placement(a.layers, w),
            layers: a.layers,
            host: est.host_bytes,
            cells: crate::estimate::ggml_kv_cells(w),
            swa: crate::estimate::ggml_window_cells(a, w).map(|cells| (cells, w.shared_slots)),
            flash: w.attention == Attention::Flash,
            compute: est
                .breakdown
                .activations
                .saturating_sub(est.projector.map_or(0, |p| p.compute)),
            embeddings_on_cpu: crate::estimate::embeddings_on_cpu(
                &a.param_count(),
                Some(a),
                w.weights,
            ),
            ubatch: w.ubatch.min(crate::estimate::ggml_kv_cells(w).max(1)),
        });
        let experts = crate::estimate::ggml_cpu_experts(a, &est.params, w);
        if experts.layers > 0 {
            notes.push(Note::CpuExperts {
                layers: experts.layers,
                asked: (s.runtime == Runtime::LlamaCpp).then_some(w.cpu_moe),
                bytes: experts.bytes,
                per_token: experts.read_per_token,
                ram_gbs: w.ram_gbs,
                copies: if crate::estimate::ggml_op_offload(w) {
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
            (TowerPlace::Loaded, _) => (crate::estimate::vision_bytes(Some(a), w), 0),
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
        let bytes = crate::estimate::previous_step_cache(a, w);
        if bytes > 0 {
            notes.push(Note::OldGenerateCache { bytes });
        }
    }
    if let Some(a) = model.arch() {
        let bytes = crate::estimate::kbit_upcast_bytes(&a.param_count(), w);
        if bytes > 0 {
            notes.push(Note::KbitFp32 {
                bytes,
                head: crate::estimate::head_cast(a, w),
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
        let (root, layer) = crate::estimate::fsdp_unsharded(a, w);
        if root > 0 {
            notes.push(Note::FsdpUnsharded { root, layer });
        }
    }
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
            default_bucket: crate::estimate::DEEPSPEED_REDUCE_BUCKET
                .saturating_mul(w.compute_dtype().bytes_for(1)),
        });
    }
    let communication = crate::estimate::communication_bytes(w);
    if communication > 0 {
        notes.push(Note::Communication {
            bytes: communication,
        });
    }
    if est.offloaded_to_ram > 0 {
        notes.push(Note::CpuOffload {
            bytes: est.offloaded_to_ram,
            gradients: crate::estimate::ram_gradients(w),
            whole_on_gpu: !crate::estimate::offloads_gradients(w),
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
        let bytes = crate::estimate::bnb_int8_unhooked_inputs(a, w);
        if bytes > 0 {
            notes.push(Note::Int8Checkpointing { bytes });
        }
    }
    if s.cpu_moe > 0 && model.arch().is_some_and(|a| a.moe.is_none()) {
        notes.push(Note::CpuMoeDense);
    }
    notes
}

/// What `Trainer`'s evaluation asks beside what stays through it: the weights, the
/// optimizer states, DDP's buckets and DeepSpeed's gradient partitions stay; the
/// gradients `zero_grad` freed and the training activations do not.
fn trainer_eval(a: &crate::Architecture, s: &Settings, w: &Workload, est: &Estimate) -> Note {
    use crate::estimate::{TRAINER_EVAL_BATCH, eval_kept_bytes, eval_loss_bytes};
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

/// Memory against context for the page's chart: (tokens, bytes with eager attention,
/// bytes with SDPA/Flash) at powers of two from 512 up to the model's context, for the
/// workload an evaluation settled on (`Evaluation::workload`: with the layers llama.cpp's
/// `--fit` moved, so that the curve meets the verdict at the reader's length).
pub fn context_curve(model: &Model, w: &Workload) -> Vec<(u64, u64, u64)> {
    const SEQS: [u64; 9] = [512, 1024, 2048, 4096, 8192, 16_384, 32_768, 65_536, 131_072];
    let Some(arch) = model.arch() else {
        return Vec::new();
    };
    SEQS.iter()
        .filter(|&&seq| seq <= u64::from(arch.max_positions))
        .filter_map(|&seq| {
            let at = |attention| {
                estimate(
                    &model.input,
                    &Workload {
                        seq,
                        attention,
                        ..w.clone()
                    },
                )
                .ok()
                .map(|e| e.per_gpu_bytes)
            };
            // The fused curve is the reader's own kernel when it is one (llama.cpp's
            // flash attention also pads the KV cells differently), so the curve meets
            // the verdict at the reader's length.
            let fused = match w.attention {
                Attention::Eager => Attention::Sdpa,
                other => other,
            };
            Some((seq, at(Attention::Eager)?, at(fused)?))
        })
        .collect()
}

#[cfg(test)]
mod tests;
