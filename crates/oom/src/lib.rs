//! `oom` explains a GPU out-of-memory error after it happened: paste the message (or a
//! `torch.cuda.memory_summary()` table) into [`explain`] and get the numbers decoded and
//! a ranked diagnosis with concrete fixes, in Spanish.
//!
//! Why a parser at all: PyTorch's OOM message holds the whole story (what was
//! requested, what is free, what PyTorch reserved but cannot use, whether another
//! process holds the GPU), but in a sentence whose wording changed three times since
//! 2018 and whose numbers most people cannot read at 2 a.m. The formats come from
//! PyTorch's own format strings (`c10/cuda/CUDACachingAllocator.cpp`,
//! `torch/cuda/memory.py`, the MPS allocator) and vLLM's start-up check; the corpus in
//! `tests/corpus/` pins each wording.
//!
//! The pipeline is pure and linear in the size of the paste:
//!
//! 1. [`clean`](crate::clean) strips colours, line endings and log prefixes
//!    (`[rank0]:`, timestamps, `(VllmWorker pid=…)`), one copy of the input.
//! 2. [`message`] finds every message by its anchor phrases and decodes each one's
//!    fields within its own span; [`summary`] reads tables. At most
//!    [`MAX_MESSAGES`] are kept.
//! 3. [`diagnosis`] turns the richest message into ranked causes.
//!
//! Like `vram`, this crate does no I/O and depends only on serde and thiserror, so it
//! builds for native and wasm32 alike. Nothing panics on any input: every index is
//! checked, arithmetic saturates or is checked, and what the text does not say stays
//! `None` instead of becoming a guess.

mod clean;
pub mod diagnosis;
pub mod format;
mod frontends;
mod message;
mod model;
mod scan;
pub mod size;
pub mod summary;

use serde::{Deserialize, Serialize};

pub use diagnosis::{Cause, CauseId, Diagnosis, diagnose};
pub use message::MAX_MESSAGES;
pub use model::{
    Allocator, Decoded, Era, FrontendMemory, GgmlBuffer, GgmlMemory, Kind, KvCacheShortfall,
    OllamaMemory, ProcessUse, VllmMemory,
};
pub use size::{SiPrefixes, SizeError, parse_size, parse_size_as};
pub use summary::{Cells, Metric, RowUnit, SummaryRow, SummaryTable};

/// Everything `vramlab explain` prints: the main message's numbers (flattened into the
/// top level of the JSON), its diagnosis, caveats, and the other messages of the paste.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Explanation {
    /// The message the diagnosis is about: the one that says the most.
    #[serde(flatten)]
    pub primary: Decoded,
    /// Causes, most likely first.
    pub diagnosis: Vec<Cause>,
    /// Caveats that are not causes.
    pub notes: Vec<String>,
    /// Every other message found in the paste, in order (without diagnosis; call
    /// [`diagnose`] on one to get it).
    pub messages: Vec<Decoded>,
}

/// Decodes and diagnoses a paste: an OOM message, a traceback, a log, a
/// `memory_summary()` table, or several of them. Never panics.
pub fn explain(text: &str) -> Explanation {
    let cleaned = clean::clean(text);
    let found = message::find_all(&cleaned);
    let mut messages = merge_ggml_reports(merge_vllm_reports(found.messages));
    // What the log says once about the whole load, read at most once.
    let mut facts_read: Option<GgmlMemory> = None;
    if messages.iter().any(|m| m.ggml_memory.is_some()) {
        let facts = facts_read.insert(ggml_facts(&cleaned));
        for m in &mut messages {
            if let Some(g) = m.ggml_memory.as_mut() {
                g.n_ctx = g.n_ctx.or(facts.n_ctx);
                g.layers_on_gpu = g.layers_on_gpu.or(facts.layers_on_gpu);
                g.layers_total = g.layers_total.or(facts.layers_total);
                g.output_on_gpu = g.output_on_gpu.or(facts.output_on_gpu);
                g.file_type = g.file_type.take().or_else(|| facts.file_type.clone());
                g.model = g.model.take().or_else(|| facts.model.clone());
                g.n_ubatch = g.n_ubatch.or(facts.n_ubatch);
                g.n_seq_max = g.n_seq_max.or(facts.n_seq_max);
                g.kv_unified = g.kv_unified.or(facts.kv_unified);
                g.flash_attn = g.flash_attn.or(facts.flash_attn);
                g.kv_type = g.kv_type.take().or_else(|| facts.kv_type.clone());
                g.kv_total_bytes = g.kv_total_bytes.or(facts.kv_total_bytes);
                g.kv_k_bytes = g.kv_k_bytes.or(facts.kv_k_bytes);
                g.kv_v_bytes = g.kv_v_bytes.or(facts.kv_v_bytes);
                g.kv_ckv_bytes = g.kv_ckv_bytes.or(facts.kv_ckv_bytes);
                g.kv_kvt_bytes = g.kv_kvt_bytes.or(facts.kv_kvt_bytes);
                g.kv_cells = g.kv_cells.or(facts.kv_cells);
                g.kv_swa_cells = g.kv_swa_cells.or(facts.kv_swa_cells);
                g.kv_swa_layers = g.kv_swa_layers.or(facts.kv_swa_layers);
                g.kv_layers = g.kv_layers.or(facts.kv_layers);
                g.n_batch = g.n_batch.or(facts.n_batch);
                g.n_ctx_per_seq = g.n_ctx_per_seq.or(facts.n_ctx_per_seq);
                g.n_ctx_train = g.n_ctx_train.or(facts.n_ctx_train);
                g.n_copies = g.n_copies.or(facts.n_copies);
                g.n_slots = g.n_slots.or(facts.n_slots);
                g.n_ctx_slot = g.n_ctx_slot.or(facts.n_ctx_slot);
                g.model_size_bytes = g.model_size_bytes.or(facts.model_size_bytes);
                g.bits_per_weight_x100 = g.bits_per_weight_x100.or(facts.bits_per_weight_x100);
                g.ctx_size_bytes = g.ctx_size_bytes.or(facts.ctx_size_bytes);
                g.device = g.device.take().or_else(|| facts.device.clone());
            }
        }
    }
    // The paste is searched for the model only when it holds a vLLM report.
    if messages.iter().any(|m| m.vllm_memory.is_some())
        && let Some(name) = vllm_model_name(&cleaned)
    {
        for m in &mut messages {
            if let Some(v) = m.vllm_memory.as_mut() {
                v.model.get_or_insert_with(|| name.clone());
            }
        }
    }
    let Some(best) = best_index(&messages) else {
        let Diagnosis { causes, notes } = diagnosis::unrecognized(&cleaned);
        let mut primary = Decoded::new(Kind::Unknown);
        primary.excerpt = excerpt(&cleaned);
        return Explanation {
            primary,
            diagnosis: causes,
            notes,
            messages,
        };
    };
    let mut primary = messages.remove(best);
    ggml_buffer_from_caller(&mut primary, messages.get(best..).unwrap_or_default());
    vllm_report_for_error(&mut primary, &messages);
    let llama_family = matches!(
        primary.kind,
        Kind::GgmlOom | Kind::GgmlReport | Kind::HostOom | Kind::OllamaOffload
    );
    // An Ollama log holds its scheduler's plan and the runner's (llama.cpp's) load log;
    // a failure explains itself with both, and each report with the other.
    if llama_family && primary.ggml_memory.is_none() {
        primary.ggml_memory = messages
            .iter()
            .rev()
            .find(|m| m.kind == Kind::GgmlReport)
            .and_then(|m| m.ggml_memory.clone());
    }
    if llama_family && primary.ollama_memory.is_none() {
        primary.ollama_memory = messages
            .iter()
            .rev()
            .find(|m| m.kind == Kind::OllamaOffload)
            .and_then(|m| m.ollama_memory.clone());
    }
    // llama-server's slots and a context line still describe a failure whose log has no
    // buffer lines.
    if llama_family && primary.ggml_memory.is_none() {
        let facts = facts_read.unwrap_or_else(|| ggml_facts(&cleaned));
        if facts != GgmlMemory::default() {
            primary.ggml_memory = Some(facts);
        }
    }
    primary.frontend_memory = frontends::read(&cleaned);
    primary.graph_capture =
        matches!(primary.kind, Kind::PytorchOom | Kind::DriverOom) && graph_capture(&cleaned);
    if primary.kind == Kind::GgmlOom {
        primary.fit_blocked = fit_blocked(&cleaned);
    }
    let Diagnosis { causes, mut notes } = diagnose(&primary);
    if !messages.is_empty() {
        notes.push(format!(
            "El texto tiene {} {} más; el diagnóstico es del que más datos trae.",
            messages.len(),
            if messages.len() == 1 {
                "mensaje"
            } else {
                "mensajes"
            }
        ));
    }
    if found.more {
        notes.push(format!(
            "Solo se analizaron los primeros {MAX_MESSAGES} mensajes del texto."
        ));
    }
    Explanation {
        primary,
        diagnosis: causes,
        notes,
        messages,
    }
}

/// The message to diagnose: allocator messages first (they carry numbers), then tables,
/// then library and driver errors; among equals, the one with more numbers, then the
/// first.
fn best_index(messages: &[Decoded]) -> Option<usize> {
    let rank = |d: &Decoded| match d.kind {
        Kind::PytorchOom
        | Kind::HipOom
        | Kind::XpuOom
        | Kind::NpuOom
        | Kind::MpsOom
        | Kind::VllmKvCache
        | Kind::VllmStartup => 3,
        Kind::MemorySummary => 2,
        Kind::VllmProfile | Kind::GgmlReport | Kind::OllamaOffload => 0,
        Kind::GgmlOom | Kind::HostOom | Kind::XlaOom | Kind::TfOom => 2,
        Kind::DriverOom | Kind::CublasOom | Kind::CudnnOom => 1,
        Kind::Unknown => 0,
    };
    let mut best: Option<(usize, (u8, usize))> = None;
    for (i, d) in messages.iter().enumerate() {
        let key = (rank(d), d.number_count());
        if best.is_none_or(|(_, k)| key > k) {
            best = Some((i, key));
        }
    }
    best.map(|(i, _)| i)
}

/// vLLM logs its start-up report over several lines, some of which open a message of
/// their own ("Available KV cache memory: …" after "Memory profiling takes …"): each run
/// of report messages becomes one, with every number any of them gave.
fn merge_vllm_reports(messages: Vec<Decoded>) -> Vec<Decoded> {
    merge_runs(messages, Kind::VllmProfile, |into, from| {
        match (into.vllm_memory.as_mut(), from.vllm_memory.as_ref()) {
            // A second worker's report (tensor parallelism) starts over: keep it apart.
            (Some(a), Some(b)) if !(a.weights_bytes.is_some() && b.weights_bytes.is_some()) => {
                a.fill_from(b);
                true
            }
            _ => false,
        }
    })
}

/// Runs of consecutive messages of `kind` folded into their first one by `merge`
/// (which says `false` to start a new message instead).
fn merge_runs(
    messages: Vec<Decoded>,
    kind: Kind,
    merge: impl Fn(&mut Decoded, &Decoded) -> bool,
) -> Vec<Decoded> {
    let mut out: Vec<Decoded> = Vec::with_capacity(messages.len());
    for m in messages {
        if m.kind == kind
            && let Some(last) = out.last_mut()
            && last.kind == kind
            && merge(last, &m)
        {
            if last.excerpt.len() < 4000 {
                last.excerpt.push('\n');
                last.excerpt.push_str(&m.excerpt);
            }
            continue;
        }
        out.push(m);
    }
    out
}

/// The model a vLLM log names, wherever it does: "Starting to load model X…" (the
/// worker), "model='X'" (the engine's config line), "vllm serve X" (the command).
fn vllm_model_name(cleaned: &str) -> Option<String> {
    let t = scan::Text::new(cleaned);
    let is_name = |b: u8| b.is_ascii_alphanumeric() || b"._/-".contains(&b);
    for phrase in [&b"starting to load model "[..], b"model='", b"vllm serve "] {
        let Some((_, start)) = t.find(0, t.len(), phrase) else {
            continue;
        };
        let mut end = start;
        while end < t.len() && end - start < 200 && t.at(end).is_some_and(is_name) {
            end += 1;
        }
        // "Starting to load model X..." ends with the ellipsis.
        let name = t.slice_lossy(start, end).trim_end_matches('.').to_owned();
        if name.len() >= 3 {
            return Some(name);
        }
    }
    None
}

/// A llama.cpp load log prints one line per buffer: consecutive buffer lines are one
/// report.
fn merge_ggml_reports(messages: Vec<Decoded>) -> Vec<Decoded> {
    merge_runs(messages, Kind::GgmlReport, |into, from| {
        match (into.ggml_memory.as_mut(), from.ggml_memory.as_ref()) {
            (Some(a), Some(b)) => {
                a.buffers.extend(b.buffers.iter().cloned());
                true
            }
            _ => false,
        }
    })
}

/// What a llama.cpp log says once about the whole load.
fn ggml_facts(cleaned: &str) -> GgmlMemory {
    let t = scan::Text::new(cleaned);
    let end = t.len();
    let int_after = |phrase: &[u8]| {
        let (_, e) = t.find(0, end, phrase)?;
        t.int_after(e, end)
    };
    let rest_of_line = |phrase: &[u8]| {
        let (_, e) = t.find(0, end, phrase)?;
        let start = t.skip_ws(e, end);
        let stop = t.line_end(start, start.saturating_add(120));
        let text = t.slice_lossy(start, stop).trim().to_owned();
        (!text.is_empty()).then_some(text)
    };
    let word_after = |phrase: &[u8]| {
        let (_, e) = t.find(0, end, phrase)?;
        let start = t.skip_ws(e, end);
        let mut stop = start;
        while stop < end.min(start + 16)
            && t.at(stop)
                .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            stop += 1;
        }
        (stop > start).then(|| t.slice_lossy(start, stop).to_ascii_lowercase())
    };
    // "auto" resolves later in the log: "Flash Attention was auto, set to enabled".
    let flash_attn = word_after(b"flash attention was auto, set to")
        .or_else(|| word_after(b"flash_attn~="))
        .and_then(|w| match w.as_str() {
            "1" | "true" | "on" | "enabled" => Some(true),
            "0" | "false" | "off" | "disabled" => Some(false),
            _ => None,
        });
    let mut g = GgmlMemory {
        n_ctx: int_after(b"n_ctx~=").map(|(n, _)| n),
        file_type: rest_of_line(b"file type~=").or_else(|| rest_of_line(b"model ftype~=")),
        model: rest_of_line(b"general.name str~=").or_else(|| rest_of_line(b"general.name~=")),
        n_ubatch: int_after(b"n_ubatch~=").map(|(n, _)| n),
        n_batch: int_after(b"n_batch~=").map(|(n, _)| n),
        n_ctx_per_seq: int_after(b"n_ctx_per_seq~=").map(|(n, _)| n),
        // "print_info: n_ctx_train = 131072", or the warning "n_ctx_per_seq (2048) <
        // n_ctx_train (131072)".
        n_ctx_train: int_after(b"n_ctx_train~=")
            .or_else(|| int_after(b"n_ctx_train~("))
            .map(|(n, _)| n),
        // "pipeline parallelism enabled (n_copies=4)"; 2026 builds print it only when
        // verbose, and end the reserve with "sched_reserve: … sched copies = 4".
        n_copies: int_after(b"(n_copies=")
            .or_else(|| int_after(b"sched copies~="))
            .map(|(n, _)| n),
        n_slots: int_after(b"n_slots~=").map(|(n, _)| n),
        n_ctx_slot: int_after(b"n_ctx_slot~=").map(|(n, _)| n),
        n_seq_max: int_after(b"n_seq_max~=").map(|(n, _)| n),
        kv_unified: word_after(b"kv_unified~=").and_then(|w| match w.as_str() {
            "1" | "true" => Some(true),
            "0" | "false" => Some(false),
            _ => None,
        }),
        flash_attn,
        // "…seqs), K (f16): …" (llama_kv_cache) or "KV self size = …, K (f16): …".
        kv_type: word_after(b"), k (").or_else(|| word_after(b"mib, k (")),
        ..GgmlMemory::default()
    };
    // The whole KV cache: "KV self size  = 5120.00 MiB, K (f16): 2560.00 MiB, V (f16):
    // 2560.00 MiB" (older) or "llama_kv_cache: size = 6144.00 MiB ( 65536 cells,  48
    // layers,  4/1 seqs), K (f16): 3072.00 MiB, V (f16): 3072.00 MiB".
    // A sliding-window model prints one such line per cache (the global layers', then
    // the windowed ones'): the totals add up, and the second one's cells are kept apart.
    let mut from = 0;
    let mut caches = 0;
    while caches < 2 {
        let kv_line = t
            .find(from, end, b"kv self size~=")
            .or_else(|| t.find(from, end, b"kv_cache: size~="))
            .or_else(|| t.find(from, end, b"kv_cache_unified: size~="));
        let Some((_, e)) = kv_line else { break };
        let line_end = t.line_end(e, end);
        from = line_end;
        let size = |from: usize| t.size_after(from, line_end, crate::size::SiPrefixes::Binary);
        let Some((total, e2)) = size(e) else { continue };
        let add = |field: &mut Option<u64>, v: Option<u64>| {
            if let Some(v) = v {
                *field = Some(field.unwrap_or(0).saturating_add(v));
            }
        };
        add(&mut g.kv_total_bytes, Some(total));
        let mut shape = (None, None);
        if let Some((_, c)) = t.find(e2, line_end, b"(")
            && let Some((cells, c)) = t.int_after(c, line_end)
            && let Some(c) = t.match_at(c, line_end, b" cells,")
        {
            shape.0 = Some(cells);
            if let Some((layers, c)) = t.int_after(c, line_end)
                && t.match_at(c, line_end, b" layers").is_some()
            {
                shape.1 = Some(layers);
            }
        }
        if caches == 0 {
            (g.kv_cells, g.kv_layers) = shape;
        } else {
            (g.kv_swa_cells, g.kv_swa_layers) = shape;
        }
        // ", K (f16): …", ", V (f16): …", or ik_llama's MLA halves ", c^KV (f16): …",
        // ", kv^T (f16): …".
        for (half, field) in [
            (&b", k ("[..], &mut g.kv_k_bytes),
            (b", v (", &mut g.kv_v_bytes),
            (b", c^kv (", &mut g.kv_ckv_bytes),
            (b", kv^t (", &mut g.kv_kvt_bytes),
        ] {
            if let Some((_, h)) = t.find(e2, line_end, half)
                && let Some((_, h)) = t.find(h, line_end, b"):")
            {
                add(field, size(h).map(|(v, _)| v));
            }
        }
        caches += 1;
    }
    if let Some((_, e)) = t.find(0, end, b"ggml ctx size~=") {
        g.ctx_size_bytes = t
            .size_after(e, t.line_end(e, end), crate::size::SiPrefixes::Binary)
            .map(|(v, _)| v);
    }
    // "model size       = 1.87 GiB (5.01 BPW)".
    if let Some((_, e)) = t.find(0, end, b"model size~=") {
        let line_end = t.line_end(e, end);
        if let Some((bytes, e)) = t.size_after(e, line_end, crate::size::SiPrefixes::Binary) {
            g.model_size_bytes = Some(bytes);
            if let Some((_, p)) = t.find(e, line_end, b"(")
                && let Some((whole, p)) = t.int_after(p, line_end)
                && t.at(p) == Some(b'.')
                && let Some((frac, p2)) = t.int_after(p + 1, line_end)
                && p2 - (p + 1) == 2
                && t.find(p2, line_end, b"bpw").is_some()
            {
                g.bits_per_weight_x100 = whole.checked_mul(100).and_then(|w| w.checked_add(frac));
            }
        }
    }
    g.device = ggml_device(&t);
    g.output_on_gpu = if t.find(0, end, b"offloading output layer to gpu").is_some() {
        Some(true)
    } else if t.find(0, end, b"repeating layers to gpu").is_some() {
        Some(false)
    } else {
        None
    };
    if let Some((on, e)) = int_after(b"offloaded ")
        && t.at(e) == Some(b'/')
        && let Some((total, _)) = t.int_after(e + 1, end)
    {
        g.layers_on_gpu = Some(on);
        g.layers_total = Some(total);
    }
    g
}

/// The first GPU a llama.cpp log names: "using device CUDA0 (NVIDIA GeForce RTX 4090) -
/// 23008 MiB free" (`llama_model_load_from_file_impl`, 2025 on; a PCI id may follow the
/// description), or ggml-cuda's "Device 0: NVIDIA GeForce RTX 3060, compute capability
/// 8.6, VMM: yes".
fn ggml_device(t: &scan::Text) -> Option<String> {
    const MAX: usize = 120;
    let end = t.len();
    let clip = |start: usize, stop: usize| {
        let name = t.slice_lossy(start, stop.min(start.saturating_add(MAX)));
        let name = name.trim();
        (!name.is_empty()).then(|| name.to_owned())
    };
    if let Some((_, e)) = t.find(0, end, b"using device ") {
        let line_end = t.line_end(e, end);
        if let Some((_, open)) = t.find(e, line_end, b"(")
            && let Some((close, _)) = t.find(open, line_end, b")")
        {
            return clip(open, close);
        }
    }
    let (_, e) = t.find(0, end, b"device 0: ")?;
    let line_end = t.line_end(e, end);
    let (comma, _) = t.find(e, line_end, b", compute capability")?;
    clip(e, comma)
}

/// A vLLM error explains itself better with the start-up report printed before it.
/// vLLM's capture progress ("Capturing CUDA graphs (mixed prefill-decode, PIECEWISE)"
/// in V1, "Capturing cudagraphs for decoding" and "Capturing the model for CUDA graphs"
/// before) or a vLLM traceback through the capture (`capture_model`, or PyTorch's
/// `capture_end` under vllm/), without the line that says it finished ("Graph capturing
/// finished").
fn graph_capture(cleaned: &str) -> bool {
    let t = scan::Text::new(cleaned);
    let has = |phrase: &[u8]| t.find(0, t.len(), phrase).is_some();
    let capturing = [
        &b"capturing cuda graph"[..],
        b"capturing cudagraph",
        b"capturing the model for cuda graphs",
        b"capture_model",
    ]
    .iter()
    .any(|p| has(p))
        || (has(b"capture_end") && has(b"vllm"));
    capturing && !has(b"graph capturing finished")
}

/// The setting that made llama.cpp's `--fit` give up ("common_fit_params: failed to fit
/// params to free device memory: n_gpu_layers already set by user to 99, abort"; older
/// builds print `llama_params_fit:`), as the flag a user passes.
fn fit_blocked(cleaned: &str) -> Option<String> {
    let t = scan::Text::new(cleaned);
    let (_, after) = t.find(0, t.len(), b"failed to fit params to free device memory")?;
    let end = after.saturating_add(200).min(t.len());
    let has = |phrase: &[u8]| t.find(after, end, phrase).is_some();
    if let Some((_, e)) = t.find(after, end, b"n_gpu_layers already set by user to") {
        let layers = t
            .int_after(t.skip_ws(e, end), end)
            .map_or_else(String::new, |(n, _)| format!(" {n}"));
        return Some(format!("-ngl{layers}"));
    }
    if has(b"tensor_split already set by user") {
        return Some("--tensor-split".to_owned());
    }
    if has(b"tensor_buft_overrides already set by user") {
        return Some("-ot / --n-cpu-moe".to_owned());
    }
    None
}

fn vllm_report_for_error(primary: &mut Decoded, others: &[Decoded]) {
    if primary.kind != Kind::VllmKvCache || primary.vllm_memory.is_some() {
        return;
    }
    primary.vllm_memory = others
        .iter()
        .rev()
        .find(|m| m.kind == Kind::VllmProfile)
        .and_then(|m| m.vllm_memory.clone());
}

/// ggml prints a failed allocation twice: the backend's line ("allocating 9866.00 MiB on
/// device 1: cudaMalloc failed") and then its caller's, which says what the buffer was
/// for ("alloc_tensor_range: …", "failed to allocate buffer for kv cache"). The primary
/// message takes the purpose from the next ggml message on the same device.
fn ggml_buffer_from_caller(primary: &mut Decoded, after: &[Decoded]) {
    if primary.kind != Kind::GgmlOom || primary.buffer.is_some() {
        return;
    }
    primary.buffer = after
        .iter()
        .take_while(|m| m.kind == Kind::GgmlOom)
        .find(|m| {
            m.buffer.is_some()
                && (m.gpu_index.is_none()
                    || primary.gpu_index.is_none()
                    || m.gpu_index == primary.gpu_index)
        })
        .and_then(|m| m.buffer.clone());
}

/// The start of an unrecognised paste, for the record.
fn excerpt(cleaned: &str) -> String {
    let t = scan::Text::new(cleaned);
    t.slice_lossy(0, 500)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_text_is_said_to_be_unknown() {
        let e = explain("KeyError: 'input_ids'");
        assert_eq!(e.primary.kind, Kind::Unknown);
        assert_eq!(
            e.diagnosis.first().map(|c| c.id),
            Some(CauseId::Unrecognized)
        );
        assert!(
            e.diagnosis[0]
                .explanation
                .starts_with("No encontré ningún error de memoria")
        );
    }

    #[test]
    fn the_richest_message_is_primary() {
        let e = explain(
            "RuntimeError: CUDA error: out of memory\n\
             torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a \
             total capacity of 8.00 GiB of which 1.00 GiB is free.",
        );
        assert_eq!(e.primary.kind, Kind::PytorchOom);
        assert_eq!(e.messages.len(), 1);
        assert_eq!(e.messages[0].kind, Kind::DriverOom);
    }

    #[test]
    fn json_has_every_contract_field() {
        let e = explain("CUDA out of memory. Tried to allocate 20.00 MiB");
        let v = serde_json::to_value(&e).unwrap_or_default();
        for key in [
            "kind",
            "requested_bytes",
            "total_bytes",
            "free_bytes",
            "process_in_use_bytes",
            "allocated_bytes",
            "reserved_unallocated_bytes",
            "reserved_total_bytes",
            "private_pools_bytes",
            "allowed_bytes",
            "gpu_index",
            "pytorch_era",
            "other_processes",
            "diagnosis",
            "messages",
        ] {
            assert!(v.get(key).is_some(), "falta {key}");
        }
        assert_eq!(v["kind"], "pytorch-oom");
        assert_eq!(v["requested_bytes"], 20 << 20);
        assert!(v["total_bytes"].is_null());
    }

    /// The KV layout of a llama-server log: llama-server's `-np auto` prints four slots
    /// sharing one pool; `-np 2` a stream each.
    #[test]
    fn a_llama_cpp_log_says_whether_its_slots_share_the_cache() {
        let facts = |unified: &str| {
            ggml_facts(&format!(
                "llama_context: n_seq_max     = 4\nllama_context: n_ctx         = 8192\nllama_context: kv_unified    = {unified}\n"
            ))
        };
        assert_eq!(facts("true").kv_unified, Some(true));
        assert_eq!(facts("false").kv_unified, Some(false));
        assert_eq!(facts("maybe").kv_unified, None);
        assert_eq!(facts("true").n_seq_max, Some(4));
    }

    /// The GPU a llama.cpp log names, in the wordings of each era; hostile lines give
    /// nothing or a clipped name.
    #[test]
    fn a_llama_cpp_log_names_its_gpu() {
        let long = format!("using device CUDA0 ({}) - 1 MiB free", "x".repeat(500));
        for (line, want) in [
            (
                "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4090) - 23008 MiB free",
                Some("NVIDIA GeForce RTX 4090"),
            ),
            (
                "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA RTX PRO 6000 Blackwell Workstation Edition) (0000:01:00.0) - 96000 MiB free",
                Some("NVIDIA RTX PRO 6000 Blackwell Workstation Edition"),
            ),
            (
                "ggml_cuda_init: found 1 CUDA devices:\n  Device 0: NVIDIA GeForce RTX 3060, compute capability 8.6, VMM: yes",
                Some("NVIDIA GeForce RTX 3060"),
            ),
            ("using device CUDA0 () - 1 MiB free", None),
            ("using device CUDA0 (no closing", None),
            ("Device 0: no capability here", None),
            (long.as_str(), Some(&"x".repeat(120)[..])),
        ] {
            assert_eq!(ggml_facts(line).device.as_deref(), want, "{line}");
        }
    }

    /// A sliding-window model's two caches, one size line each: the totals add up and
    /// the windowed cache's cells are kept apart.
    #[test]
    fn both_caches_of_a_sliding_window_model_are_counted() {
        let g = ggml_facts(
            "llama_kv_cache: size = 2560.00 MiB ( 32768 cells,  10 layers,  4/1 seqs), K (f16): 1280.00 MiB, V (f16): 1280.00 MiB\n\
             llama_kv_cache: size = 1872.00 MiB (  4608 cells,  52 layers,  4/1 seqs), K (f16):  936.00 MiB, V (f16):  936.00 MiB\n",
        );
        assert_eq!(g.kv_total_bytes, Some((2560 + 1872) << 20));
        assert_eq!(g.kv_k_bytes, Some((1280 + 936) << 20));
        assert_eq!((g.kv_cells, g.kv_layers), (Some(32_768), Some(10)));
        assert_eq!((g.kv_swa_cells, g.kv_swa_layers), (Some(4608), Some(52)));
        let rows = crate::format::ggml_rows(&g);
        assert!(
            rows.iter().any(|(_, v)| v
                == "32\u{202f}768 celdas × 10 capas, y 4608 × 52 en las de ventana deslizante"),
            "{rows:?}"
        );
    }

    /// A llama-server start-up with `-ngl 26` given (Qwen3.5-27B Q4_K_S on a 12 GB
    /// RTX 4070, build 8586, from a public session log): `--fit` gave up on the layers,
    /// then the compute buffer did not fit. Newer builds print `common_fit_params:`.
    #[test]
    fn a_fit_blocked_by_fixed_layers_is_the_first_cause() {
        let log = "llama_params_fit_impl: projected to use 11138 MiB of device memory vs. 10372 MiB of free device memory
llama_params_fit_impl: cannot meet free memory target of 1024 MiB, need to reduce device memory by 1790 MiB
llama_params_fit_impl: context size set by user to 131072 -> no change
llama_params_fit: failed to fit params to free device memory: n_gpu_layers already set by user to 26, abort
load_tensors: offloaded 26/65 layers to GPU
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1401.75 MiB on device 0: cudaMalloc failed: out of memory
ggml_gallocr_reserve_n_impl: failed to allocate CUDA0 buffer of size 1469841408
graph_reserve: failed to allocate compute buffers
llama_init_from_model: failed to initialize the context: failed to allocate compute pp buffers";
        let e = explain(log);
        assert_eq!(e.primary.kind, Kind::GgmlOom);
        assert_eq!(e.primary.fit_blocked.as_deref(), Some("-ngl 26"));
        assert_eq!(e.diagnosis[0].id, CauseId::FitBlocked);
        assert!(
            e.diagnosis[0].fix.starts_with("Quita -ngl 26"),
            "{}",
            e.diagnosis[0].fix
        );
        for (line, want) in [
            (
                "W common_fit_params: failed to fit params to free device memory: model_params::tensor_buft_overrides already set by user, abort",
                Some("-ot / --n-cpu-moe"),
            ),
            (
                "common_fit_params: failed to fit params to free device memory: model_params::tensor_split already set by user, abort",
                Some("--tensor-split"),
            ),
            (
                "common_fit_params: failed to fit params to free device memory: llama_params_fit is not implemented for SPLIT_MODE_TENSOR, abort",
                None,
            ),
        ] {
            let text = format!(
                "{line}\nggml_backend_cuda_buffer_type_alloc_buffer: allocating 9866.00 MiB on device 0: cudaMalloc failed: out of memory"
            );
            assert_eq!(
                explain(&text).primary.fit_blocked.as_deref(),
                want,
                "{line}"
            );
        }
        // Without the out-of-memory error there is nothing to explain by it.
        let quiet = explain(
            "common_fit_params: failed to fit params to free device memory: n_gpu_layers already set by user to 99, abort",
        );
        assert_eq!(quiet.primary.fit_blocked, None);
    }
}
