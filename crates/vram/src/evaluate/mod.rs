//! `evaluate`: a model and its settings → everything a front end shows: the estimate,
//! the verdict against the GPU, the largest batch and context that fit, the smallest
//! GPU and the fewest GPUs, speed hints, the serving plan and the notes.
//!
//! The CLI's table and JSON, the estimator page, the widget and its embed snippet all
//! render one [`Evaluation`], so they cannot disagree. Numbers are computed without
//! building any text: notes are typed ([`Note`]) and worded by each front end.

mod curve;
mod limits;
mod note;
mod notes;
mod placement;
mod serve;
mod verdict;

pub use curve::context_curve;
pub use note::{DeviceKind, FormatChoice, Note, TowerPlace};
pub use placement::{CpuMoeFit, CpuSplit, LayerFit};
pub use verdict::Verdict;

use crate::band::{self, Band};
use crate::catalog::Gpu;
use crate::default_context::Opened;
use crate::estimate::{Estimate, EstimateError, ModelInput};
use crate::import::StoredWeights;
use crate::serving::ServingPlan;
use crate::settings::Settings;
use crate::speed::{self, SpeedHint};
use crate::units::group_digits;
use crate::workload::Workload;

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
    /// The architecture's family is none the importer models layer by layer
    /// ([`crate::hf_config::KNOWN_FAMILIES`]) and no file gave the exact weights: the
    /// figures are a generic transformer's, and the verdict says so
    /// ([`Note::Approximate`]).
    pub approximate: bool,
    pub notes: Vec<Note>,
}

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
    w.weights = s.weights_for(model.arch().and_then(|a| a.checkpoint));
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

/// Evaluates `model` under `s`: the runtime places the model, then the notes, the
/// serving plan, the verdict and the limits are read off the placed workload.
pub fn evaluate(model: &Model, s: &Settings) -> Result<Evaluation, EstimateError> {
    if let (Some(a), Some(stored)) = (model.arch(), &model.stored) {
        stored.check(a).map_err(EstimateError::WeightsMismatch)?;
    }
    let capacity = s.capacity();
    let placement::Placed {
        w,
        est,
        opened,
        whole,
        whole_bytes,
        notes: placed,
    } = placement::place(model, s, capacity)?;
    let arch = model.arch();
    let approximate = arch.is_some_and(|a| {
        !crate::hf_config::KNOWN_FAMILIES.contains(&a.family.as_str()) && model.stored.is_none()
    });
    let mut notes = notes::notes(model, s, &w, &est);
    if approximate && let Some(a) = arch {
        notes.insert(
            0,
            Note::Approximate {
                family: crate::units::clip(&a.family),
            },
        );
    }
    notes.extend(placed);
    if let Some(opened) = opened {
        notes.push(Note::OpenedContext {
            opened,
            new_tokens: w.new_tokens,
        });
    }
    let serving = serve::plan(s, arch, &w, &est, capacity, &mut notes);
    let band = band::for_settings(s);
    let refused = verdict::tp_refused(model, s, &w);
    let verdict = capacity.map(|c| {
        refused
            .or_else(|| serving.as_ref().and_then(|p| verdict::start_check(s, c, p)))
            .unwrap_or_else(|| verdict::judge(&est, serving.as_ref(), band, &w, c))
    });
    let fits = limits::Limits::of(
        model,
        s,
        &limits::Placed {
            w: &w,
            whole: &whole,
            serving: serving.as_ref(),
        },
        band,
        capacity,
        refused.is_some(),
        verdict,
    );
    Ok(Evaluation {
        max_batch: fits.max_batch,
        max_seq: fits.max_seq,
        margin: fits.margin,
        max_gpu_layers: fits.max_gpu_layers,
        min_cpu_moe: fits.min_cpu_moe,
        smallest_gpu: fits.smallest_gpu,
        whole: whole_bytes,
        opened,
        min_gpus: fits.min_gpus,
        cpu_split: arch.and_then(|a| CpuSplit::of(a, &w, &est)),
        speed: match (arch, s.gpu) {
            (Some(a), Some(g)) if refused.is_none() => speed::speed(a, &w, &est, g),
            _ => None,
        },
        approximate,
        notes,
        serving,
        verdict,
        band,
        capacity,
        estimate: est,
        workload: w,
    })
}

#[cfg(test)]
mod tests;
