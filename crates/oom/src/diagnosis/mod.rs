//! From decoded numbers to a ranked list of causes, each with its fix, in Spanish.
//!
//! The rules are arithmetic on what the message said, never on what it did not: a cause
//! whose inputs are missing is not offered, and a cause that is only likely says so
//! ("probablemente"). Every rule has a score; causes are sorted by score (ties keep the
//! order the rules ran in), so the first one is the best explanation of *this* message.
//! Notes are caveats that are not causes (block rounding, truncation, units).

mod allocator;
mod frontends;
mod others;
mod runtimes;
mod summary;

use serde::{Deserialize, Serialize};

use crate::format;
use crate::model::{Decoded, Kind};

/// A stable identifier for a cause: the site links to its guide by it, tests pin it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CauseId {
    /// Reserved-but-unallocated memory exists but is split into unusable holes.
    Fragmentation,
    /// Another process holds part of the GPU.
    OtherProcess,
    /// The workload (or one tensor) does not fit.
    TooBig,
    /// CUDA Graphs' private pools keep memory.
    PrivatePools,
    /// vLLM ran out capturing its CUDA graphs, after its KV cache took the budget.
    GraphCapture,
    /// `set_per_process_memory_fraction` caps this process.
    MemoryFraction,
    /// The request is tiny: memory was already full.
    SmallRequest,
    /// CUDA itself failed, outside PyTorch's allocator.
    DriverContext,
    /// This process holds much memory outside PyTorch's allocator.
    NonPytorchMemory,
    /// cuBLAS or cuDNN could not get their workspace.
    LibraryWorkspace,
    /// vLLM's KV cache cannot hold one full-length request.
    KvCacheBudget,
    /// The message reports more free memory than was requested.
    FreeAtReport,
    /// Apple's MPS high-watermark limit.
    MpsWatermark,
    /// memory_summary: the allocator had to flush its cache and retry cudaMalloc.
    AllocRetries,
    /// memory_summary: PyTorch's cache holds much free memory.
    CacheHeld,
    /// memory_summary: the peak is far above current use.
    PeakUsage,
    /// memory_summary: nothing in the table points at pressure.
    NoPressure,
    /// The host ran out of RAM, not the GPU.
    CpuRam,
    /// llama.cpp's ggml could not allocate a weights, KV-cache or compute buffer.
    GgmlBuffer,
    /// llama.cpp's `--fit` gave up because the layers (or tensor placement) were fixed
    /// by hand, so nothing moved to the CPU before the allocation failed.
    FitBlocked,
    /// Ollama put only part of the layers on the GPU (or all of them, by its estimate).
    OllamaOffload,
    /// XLA (JAX) ran out: its preallocated pool or the card itself.
    XlaPool,
    /// What ComfyUI or AUTOMATIC1111 printed about memory next to the error.
    FrontendMemory,
    /// The text is not a message this crate knows.
    Unrecognized,
}

/// One possible cause, ready to show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cause {
    pub id: CauseId,
    /// A short Spanish title.
    pub title: String,
    /// Why, citing the decoded numbers.
    pub explanation: String,
    /// What to change, concretely.
    pub fix: String,
    /// A path on the site ("/memoria-reservada/#fragmentacion").
    pub guide: String,
}

impl Cause {
    /// The guide section as a full URL of the published site.
    pub fn guide_url(&self) -> String {
        format!("{SITE_ORIGIN}{}", self.guide)
    }
}

/// Causes, best first, and caveats.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnosis {
    pub causes: Vec<Cause>,
    pub notes: Vec<String>,
}

/// The published site the guide paths belong to (`content/site.toml`'s `url`; sitegen's
/// build checks they agree), for output read outside the site, like the CLI's.
pub const SITE_ORIGIN: &str = "https://vramlab.dev";

pub(crate) const GUIDE_FRAGMENTATION: &str = "/memoria-reservada/#fragmentacion";
pub(crate) const GUIDE_RESERVED: &str = "/memoria-reservada/";
pub(crate) const GUIDE_OTHER_PROCESS: &str = "/memoria-reservada/#otros-procesos";
pub(crate) const GUIDE_CUDA_GRAPHS: &str = "/memoria-reservada/#cuda-graphs";
pub(crate) const GUIDE_STRATEGIES: &str = "/estrategias/";
pub(crate) const GUIDE_ESTIMATOR: &str = "/estimador/";
pub(crate) const GUIDE_ANATOMY: &str = "/anatomia-vram/";

/// Every guide path a cause can link to. The site's build fails if one of them is not
/// a page (and anchor) of the guide, so a diagnosis never links to nothing.
pub const GUIDE_PATHS: &[&str] = &[
    GUIDE_FRAGMENTATION,
    GUIDE_RESERVED,
    GUIDE_OTHER_PROCESS,
    GUIDE_CUDA_GRAPHS,
    GUIDE_STRATEGIES,
    GUIDE_ESTIMATOR,
    GUIDE_ANATOMY,
];

/// Causes collected with their scores.
#[derive(Debug, Default)]
pub(crate) struct Ranking {
    causes: Vec<(u8, Cause)>,
    pub notes: Vec<String>,
}

impl Ranking {
    pub(crate) fn add(
        &mut self,
        score: u8,
        id: CauseId,
        title: &str,
        explanation: String,
        fix: String,
        guide: &str,
    ) {
        if self.has(id) {
            return;
        }
        self.causes.push((
            score,
            Cause {
                id,
                title: title.to_owned(),
                explanation,
                fix,
                guide: guide.to_owned(),
            },
        ));
    }

    pub(crate) fn has(&self, id: CauseId) -> bool {
        self.causes.iter().any(|(_, c)| c.id == id)
    }

    pub(crate) fn score(&self, id: CauseId) -> Option<u8> {
        self.causes
            .iter()
            .find(|(_, c)| c.id == id)
            .map(|(s, _)| *s)
    }

    pub(crate) fn note(&mut self, note: String) {
        self.notes.push(note);
    }

    fn finish(mut self) -> Diagnosis {
        // A stable sort keeps rule order among equal scores.
        self.causes.sort_by_key(|c| std::cmp::Reverse(c.0));
        Diagnosis {
            causes: self.causes.into_iter().map(|(_, c)| c).collect(),
            notes: self.notes,
        }
    }
}

/// Diagnoses one decoded message or table.
pub fn diagnose(d: &Decoded) -> Diagnosis {
    let mut r = Ranking::default();
    match d.kind {
        Kind::PytorchOom | Kind::HipOom | Kind::XpuOom | Kind::NpuOom => {
            allocator::diagnose(d, &mut r)
        }
        Kind::MpsOom => others::mps(d, &mut r),
        Kind::MemorySummary => summary::diagnose(d, &mut r),
        Kind::DriverOom => others::driver(d, &mut r),
        Kind::CublasOom | Kind::CudnnOom => others::library(d, &mut r),
        Kind::VllmKvCache => others::vllm(d, &mut r),
        Kind::VllmProfile => runtimes::vllm_report(d, &mut r),
        Kind::VllmStartup => runtimes::vllm_startup(d, &mut r),
        Kind::GgmlOom => runtimes::ggml(d, &mut r),
        Kind::GgmlReport => runtimes::ggml_report(d, &mut r),
        Kind::OllamaOffload => runtimes::ollama_offload(d, &mut r),
        Kind::HostOom => runtimes::host(d, &mut r),
        Kind::XlaOom => others::xla(d, &mut r),
        Kind::TfOom => others::tensorflow(d, &mut r),
        Kind::Unknown => others::unrecognized(&d.excerpt, &mut r),
    }
    frontends::diagnose(d, &mut r);
    // The block-rounding note is about PyTorch's CUDA caching allocator only.
    if let Some(req) = d.requested_bytes
        && !matches!(
            d.kind,
            Kind::MpsOom
                | Kind::GgmlOom
                | Kind::GgmlReport
                | Kind::HostOom
                | Kind::OllamaOffload
                | Kind::XlaOom
                | Kind::TfOom
        )
    {
        r.note(rounding_note(req));
    }
    if d.truncated {
        r.note(
            "El texto parece cortado: faltan datos que este formato siempre imprime. Lo que \
             aparece como desconocido no es cero; pega el mensaje completo para afinar."
                .to_owned(),
        );
    }
    r.finish()
}

/// Diagnoses a paste in which nothing was recognised; `text` is the cleaned paste.
pub(crate) fn unrecognized(text: &str) -> Diagnosis {
    let mut r = Ranking::default();
    others::unrecognized(text, &mut r);
    r.finish()
}

fn rounding_note(requested: u64) -> String {
    let small = requested <= 20 << 20;
    format!(
        "«Tried to allocate» ({}) es el tamaño ya redondeado por el asignador, no el del \
         tensor: las peticiones de hasta 1 MiB se sirven con bloques de 2,00 MiB, las de 1 a \
         10 MiB con bloques de 20,00 MiB y las mayores se redondean a múltiplos de 2 MiB. \
         Un 2,00 MiB o un 20,00 MiB suele ser una petición pequeña.{}",
        format::binary(requested),
        if small {
            " Aquí lo es: lo que llenó la GPU vino antes."
        } else {
            ""
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranking_is_by_score_then_rule_order() {
        let mut r = Ranking::default();
        r.add(
            30,
            CauseId::SmallRequest,
            "a",
            String::new(),
            String::new(),
            "/",
        );
        r.add(
            80,
            CauseId::Fragmentation,
            "b",
            String::new(),
            String::new(),
            "/",
        );
        r.add(30, CauseId::TooBig, "c", String::new(), String::new(), "/");
        r.add(
            99,
            CauseId::TooBig,
            "duplicate",
            String::new(),
            String::new(),
            "/",
        );
        let ids: Vec<_> = r.finish().causes.iter().map(|c| c.id).collect();
        assert_eq!(
            ids,
            [
                CauseId::Fragmentation,
                CauseId::SmallRequest,
                CauseId::TooBig
            ]
        );
    }

    #[test]
    fn cause_ids_serialise_kebab_case() {
        let json = serde_json::to_string(&CauseId::KvCacheBudget).unwrap_or_default();
        assert_eq!(json, "\"kv-cache-budget\"");
    }

    #[test]
    fn rounding_note_flags_small_requests() {
        assert!(rounding_note(2 << 20).contains("Aquí lo es"));
        assert!(!rounding_note(1 << 30).contains("Aquí lo es"));
    }
}
