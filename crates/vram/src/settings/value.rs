//! Reading and writing one setting's value as text: the spellings each field accepts,
//! its canonical text per surface, and the Spanish error when a value is refused.

use std::fmt;

use super::choice::{
    self, ATTENTIONS, CUDA_GRAPHS, Choice, KV_DTYPES, LORA_TARGETS, LOSSES, OPTIMIZERS, PRECISIONS,
    RUNTIMES, TASKS, ZERO_STAGES,
};
use super::count::CountProblem;
use super::field::{Field, print_fraction};
use super::{BASIS_POINTS, CPU_MOE_ALL, GPU_LAYERS_ALL, Settings, Surface, UTILIZATION};
use crate::catalog;
use crate::quant::WeightFormat;
use crate::units::{ByteSize, clip};
use crate::workload::{Linears, LoraTargets};

/// Why a value was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// A count that is empty, not whole or out of bounds.
    Count(CountProblem),
    /// Not one of a closed list's spellings.
    Unknown,
    /// Not in the catalog.
    NotInCatalog,
    /// Another parser's Spanish message (sizes, formats).
    Invalid(String),
}

/// A setting that could not be read. `Display` is one Spanish sentence that names the
/// setting and what it accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingError {
    pub field: Field,
    /// The text refused, clipped for echoing.
    pub input: String,
    pub problem: Problem,
    pub surface: Surface,
}

/// "El lote" from "el lote". ASCII only (every subject starts with an ASCII letter):
/// Unicode case tables would cost the browser bundles kilobytes.
fn capitalised(s: &str) -> String {
    let mut out = s.to_owned();
    if let Some(first) = out.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    out
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let spec = self.field.spec();
        let accepts = self.field.accepts(self.surface);
        let subject = capitalised(spec.subject);
        match &self.problem {
            Problem::Count(CountProblem::Empty) => {
                write!(f, "Escribe {}: {accepts}.", spec.subject)
            }
            Problem::Count(_) => write!(
                f,
                "{subject} debe ser {accepts}; «{}» no lo es.",
                self.input
            ),
            Problem::Unknown => write!(f, "{subject} «{}» no existe; usa {accepts}.", self.input),
            Problem::NotInCatalog => match self.surface {
                Surface::Cli => write!(
                    f,
                    "no hay ninguna GPU «{}» en el catálogo (mira «vramlab gpus»)",
                    self.input
                ),
                Surface::Web => write!(f, "No hay ninguna GPU «{}» en el catálogo.", self.input),
            },
            Problem::Invalid(message) => write!(f, "{}: {message}", spec.label),
        }
    }
}

impl std::error::Error for SettingError {}

fn pick<T: Copy>(list: &'static [Choice<T>], input: &str) -> Result<T, Problem> {
    choice::find(list, input).ok_or(Problem::Unknown)
}

fn switch(input: &str) -> Result<bool, Problem> {
    let t = input.trim();
    let is = |words: &[&str]| words.iter().any(|w| w.eq_ignore_ascii_case(t));
    if is(&["si", "sí", "SÍ", "true", "1", "yes", "on"]) {
        Ok(true)
    } else if is(&["no", "false", "0", "off"]) {
        Ok(false)
    } else {
        Err(Problem::Unknown)
    }
}

fn count(f: Field, input: &str) -> Result<u64, Problem> {
    f.bounds()
        .ok_or(Problem::Unknown)?
        .parse(input)
        .map_err(Problem::Count)
}

fn small(f: Field, input: &str) -> Result<u32, Problem> {
    // Every u32 field's bounds are within u32.
    count(f, input).map(|v| u32::try_from(v).unwrap_or(u32::MAX))
}

fn size(input: &str, min: u64) -> Result<u64, Problem> {
    match ByteSize::parse(input) {
        Ok(ByteSize(b)) if b >= min => Ok(b),
        Ok(_) => Err(Problem::Invalid("debe ser mayor que 0.".into())),
        Err(e) => Err(Problem::Invalid(e.to_string())),
    }
}

fn auto(input: &str) -> bool {
    input.trim().eq_ignore_ascii_case("auto")
}

/// "todas" (or "all", or -1): every layer (and, for `-ngl`, the output). For `-ngl`,
/// llama.cpp's -1 is its automatic placement and is read as `auto` first.
fn all_layers(input: &str) -> bool {
    let t = input.trim();
    ["todas", "all", "-1"]
        .iter()
        .any(|w| t.eq_ignore_ascii_case(w))
}

/// "0.9", "90%" or "90" → 9000 basis points, in exact decimal arithmetic: a fraction
/// has up to four decimals (vLLM takes any float; 0.9764 is the finest seen in logs), a
/// percentage up to two.
fn fraction(input: &str) -> Result<u16, Problem> {
    let t = input.trim();
    let (number, is_percent) = match t.strip_suffix('%') {
        Some(p) => (p.trim(), true),
        None => (t, false),
    };
    let d = crate::units::parse_decimal(number, false)
        .map_err(|_| Problem::Count(CountProblem::NotWhole))?;
    // A number above 1 is already a percentage.
    let above_one = d
        .times(1)
        .is_none_or(|(v, inexact)| v > 1 || (v == 1 && inexact));
    let factor = if is_percent || above_one {
        BASIS_POINTS / 100
    } else {
        BASIS_POINTS
    };
    let (v, inexact) = d
        .times(u128::from(factor))
        .ok_or(Problem::Count(CountProblem::OutOfRange))?;
    if inexact {
        return Err(Problem::Count(CountProblem::NotWhole));
    }
    match u16::try_from(v) {
        Ok(p) if (UTILIZATION.0..=UTILIZATION.1).contains(&p) => Ok(p),
        _ => Err(Problem::Count(CountProblem::OutOfRange)),
    }
}

/// "24GiB" when whole GiB, "500MiB" when whole MiB, else bytes.
fn print_size(b: u64) -> String {
    if b > 0 && b.is_multiple_of(ByteSize::GIB) {
        format!("{}GiB", b / ByteSize::GIB)
    } else if b > 0 && b.is_multiple_of(ByteSize::MIB) {
        format!("{}MiB", b / ByteSize::MIB)
    } else {
        b.to_string()
    }
}

fn print_choice<T: Copy + PartialEq>(list: &'static [Choice<T>], v: T, s: Surface) -> String {
    let c = choice::entry(list, v);
    match s {
        Surface::Cli => c.id,
        Surface::Web => c.web,
    }
    .to_owned()
}

fn print_switch(on: bool, s: Surface) -> String {
    match (s, on) {
        (Surface::Cli, true) => "true",
        (Surface::Cli, false) => "false",
        (Surface::Web, true) => "si",
        (Surface::Web, false) => "no",
    }
    .to_owned()
}

pub(super) fn text(s: &Settings, f: Field, surface: Surface) -> Option<String> {
    // Links and attributes write tokens as people do ("8k"); the CLI and its JSON
    // write plain numbers.
    let bounds = f.bounds().filter(|_| surface == Surface::Web);
    let n = |v: u64| bounds.map_or_else(|| v.to_string(), |b| b.print(v));
    Some(match f {
        Field::Gpu => s.gpu?.id.clone(),
        Field::GpuMemory => print_size(s.gpu_memory?),
        Field::Reserve => print_size(s.reserve),
        Field::Task => print_choice(TASKS, s.task, surface),
        Field::Format => s.format.id(),
        Field::Batch => n(s.batch),
        Field::Seq => s.seq.map_or_else(|| "auto".to_owned(), n),
        Field::NewTokens => n(s.new_tokens),
        Field::Attention => print_choice(ATTENTIONS, s.attention, surface),
        Field::Checkpointing => print_switch(s.checkpointing, surface),
        Field::Optimizer => print_choice(OPTIMIZERS, s.optimizer, surface),
        Field::Precision => print_choice(PRECISIONS, s.precision, surface),
        Field::Runtime => print_choice(RUNTIMES, s.runtime, surface),
        Field::Loss => print_choice(LOSSES, s.loss, surface),
        Field::LoraTargets => match s.lora_targets {
            LoraTargets::Modules(set)
                if !LORA_TARGETS.iter().any(|c| c.value == s.lora_targets) =>
            {
                set.names()
            }
            targets => print_choice(LORA_TARGETS, targets, surface),
        },
        Field::LoraRank => n(u64::from(s.lora_rank)),
        Field::KvDtype => print_choice(KV_DTYPES, s.kv_dtype, surface),
        Field::Gpus => n(u64::from(s.gpus)),
        Field::Zero => print_choice(ZERO_STAGES, s.zero, surface),
        Field::Tp => n(u64::from(s.tp?)),
        Field::GpuLayers => match s.gpu_layers {
            None => "auto".to_owned(),
            Some(GPU_LAYERS_ALL) if surface == Surface::Web => "todas".to_owned(),
            Some(GPU_LAYERS_ALL) => "all".to_owned(),
            Some(l) => n(u64::from(l)),
        },
        Field::CpuMoe if s.cpu_moe == CPU_MOE_ALL => if surface == Surface::Web {
            "todas"
        } else {
            "all"
        }
        .to_owned(),
        Field::CpuMoe => n(u64::from(s.cpu_moe)),
        Field::Ubatch => n(u64::from(s.ubatch)),
        Field::RamBandwidth => n(u64::from(s.ram_gbs)),
        Field::Pp => n(u64::from(s.pp)),
        Field::CpuOffload => print_switch(s.cpu_offload, surface),
        Field::OffloadParams => print_switch(s.offload_params, surface),
        Field::Serve => print_switch(s.serve, surface),
        Field::Mmproj => print_switch(s.mmproj, surface),
        Field::Utilization => print_fraction(s.utilization),
        Field::BatchedTokens => n(s.batched_tokens?),
        Field::MaxSeqs => n(s.max_seqs?),
        Field::CudaGraphs => print_choice(CUDA_GRAPHS, s.cuda_graphs, surface),
        Field::BlockSize => n(u64::from(s.block_size)),
        Field::CudaContext => print_size(s.cuda_context?),
    })
}

pub(super) fn set(
    s: &mut Settings,
    f: Field,
    input: &str,
    surface: Surface,
) -> Result<(), SettingError> {
    let fail = |problem| SettingError {
        field: f,
        input: clip(input),
        problem,
        surface,
    };
    if input.trim().is_empty() {
        return Err(fail(Problem::Count(CountProblem::Empty)));
    }
    let result: Result<(), Problem> = (|| {
        match f {
            Field::Gpu => s.gpu = Some(catalog::gpu(input.trim()).ok_or(Problem::NotInCatalog)?),
            Field::GpuMemory => s.gpu_memory = Some(size(input, 1)?),
            Field::Reserve => s.reserve = size(input, 0)?,
            Field::Task => s.task = pick(TASKS, input)?,
            Field::Format => {
                s.format =
                    WeightFormat::parse(input).map_err(|e| Problem::Invalid(e.to_string()))?;
            }
            Field::Batch => s.batch = count(f, input)?,
            Field::Seq if auto(input) => {
                if s.task.is_training() || !crate::default_context::opens_context(s.runtime) {
                    return Err(Problem::Invalid(
                        "«auto» solo vale para inferencia con vLLM, llama.cpp u Ollama, que eligen el contexto por su cuenta."
                            .to_owned(),
                    ));
                }
                s.seq = None;
            }
            Field::Seq => s.seq = Some(count(f, input)?),
            Field::NewTokens => s.new_tokens = count(f, input)?,
            Field::Attention => s.attention = pick(ATTENTIONS, input)?,
            Field::Checkpointing => s.checkpointing = switch(input)?,
            Field::Optimizer => s.optimizer = pick(OPTIMIZERS, input)?,
            Field::Precision => s.precision = pick(PRECISIONS, input)?,
            Field::Runtime => {
                let r = pick(RUNTIMES, input)?;
                if !r.runs(s.task) {
                    return Err(Problem::Invalid(format!(
                        "{} no sirve para {}.",
                        choice::entry(RUNTIMES, r).label,
                        if s.task.is_training() {
                            "entrenar"
                        } else {
                            "inferencia"
                        }
                    )));
                }
                s.runtime = r;
            }
            Field::Loss => s.loss = pick(LOSSES, input)?,
            Field::LoraTargets => {
                s.lora_targets = pick(LORA_TARGETS, input)
                    .or_else(|e| Linears::parse(input).map(LoraTargets::Modules).ok_or(e))?
            }
            Field::LoraRank => s.lora_rank = small(f, input)?,
            Field::KvDtype => s.kv_dtype = pick(KV_DTYPES, input)?,
            Field::Gpus => s.gpus = small(f, input)?,
            Field::Zero => s.zero = pick(ZERO_STAGES, input)?,
            // llama.cpp's `-ngl -1` is its automatic placement, as `auto`.
            Field::GpuLayers if auto(input) || input.trim() == "-1" => s.gpu_layers = None,
            Field::GpuLayers if all_layers(input) => s.gpu_layers = Some(GPU_LAYERS_ALL),
            Field::GpuLayers => s.gpu_layers = Some(small(f, input)?),
            Field::CpuMoe if all_layers(input) => s.cpu_moe = CPU_MOE_ALL,
            Field::CpuMoe => s.cpu_moe = small(f, input)?,
            Field::Ubatch => s.ubatch = small(f, input)?,
            Field::RamBandwidth => s.ram_gbs = small(f, input)?,
            Field::Tp if auto(input) => s.tp = None,
            Field::Tp => s.tp = Some(small(f, input)?),
            Field::Pp => s.pp = small(f, input)?,
            Field::CpuOffload => s.cpu_offload = switch(input)?,
            Field::OffloadParams => s.offload_params = switch(input)?,
            Field::Serve => s.serve = switch(input)?,
            Field::Mmproj => s.mmproj = switch(input)?,
            Field::Utilization => s.utilization = fraction(input)?,
            Field::BatchedTokens if auto(input) => s.batched_tokens = None,
            Field::BatchedTokens => s.batched_tokens = Some(count(f, input)?),
            Field::MaxSeqs if auto(input) => s.max_seqs = None,
            Field::MaxSeqs => s.max_seqs = Some(count(f, input)?),
            Field::CudaGraphs => s.cuda_graphs = pick(CUDA_GRAPHS, input)?,
            Field::BlockSize => s.block_size = small(f, input)?,
            Field::CudaContext if auto(input) => s.cuda_context = None,
            Field::CudaContext => s.cuda_context = Some(size(input, 0)?),
        }
        Ok(())
    })();
    result.map_err(fail)
}

/// Whether `a` and `b` agree on `f`.
pub(super) fn same(a: &Settings, b: &Settings, f: Field) -> bool {
    // The canonical text is a faithful image of every typed value.
    text(a, f, Surface::Cli) == text(b, f, Surface::Cli)
}

/// Copies `f` from `from` into `to`.
pub(super) fn copy(to: &mut Settings, from: &Settings, f: Field) {
    match f {
        Field::Gpu => to.gpu = from.gpu,
        Field::GpuMemory => to.gpu_memory = from.gpu_memory,
        Field::Reserve => to.reserve = from.reserve,
        Field::Task => to.task = from.task,
        Field::Format => to.format = from.format,
        Field::Batch => to.batch = from.batch,
        Field::Seq => to.seq = from.seq,
        Field::NewTokens => to.new_tokens = from.new_tokens,
        Field::Attention => to.attention = from.attention,
        Field::Checkpointing => to.checkpointing = from.checkpointing,
        Field::Optimizer => to.optimizer = from.optimizer,
        Field::Precision => to.precision = from.precision,
        Field::Runtime => to.runtime = from.runtime,
        Field::Loss => to.loss = from.loss,
        Field::LoraTargets => to.lora_targets = from.lora_targets,
        Field::LoraRank => to.lora_rank = from.lora_rank,
        Field::KvDtype => to.kv_dtype = from.kv_dtype,
        Field::Gpus => to.gpus = from.gpus,
        Field::Zero => to.zero = from.zero,
        Field::Tp => to.tp = from.tp,
        Field::Pp => to.pp = from.pp,
        Field::CpuOffload => to.cpu_offload = from.cpu_offload,
        Field::OffloadParams => to.offload_params = from.offload_params,
        Field::Serve => to.serve = from.serve,
        Field::Mmproj => to.mmproj = from.mmproj,
        Field::Utilization => to.utilization = from.utilization,
        Field::BatchedTokens => to.batched_tokens = from.batched_tokens,
        Field::MaxSeqs => to.max_seqs = from.max_seqs,
        Field::CudaGraphs => to.cuda_graphs = from.cuda_graphs,
        Field::BlockSize => to.block_size = from.block_size,
        Field::CudaContext => to.cuda_context = from.cuda_context,
        Field::GpuLayers => to.gpu_layers = from.gpu_layers,
        Field::CpuMoe => to.cpu_moe = from.cpu_moe,
        Field::Ubatch => to.ubatch = from.ubatch,
        Field::RamBandwidth => to.ram_gbs = from.ram_gbs,
    }
}
