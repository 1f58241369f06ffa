//! Out-of-memory messages of the runtimes outside PyTorch's allocator: llama.cpp's ggml
//! backends (which Ollama, LM Studio and llama-cpp-python print too) and the host-RAM
//! failures (PyTorch's CPU allocator, Ollama's system-memory check).
//!
//! Formats, from the sources:
//! - ggml-cuda `ggml_backend_cuda_buffer_type_alloc_buffer`: `"%s: allocating %.2f MiB
//!   on device %d: cudaMalloc failed: %s"`.
//! - ggml-backend `alloc_tensor_range` (model weights) and ggml-alloc
//!   `ggml_gallocr_reserve_n` (compute graph): `"%s: failed to allocate %s buffer of size
//!   %zu"`, the buffer type's name (`CUDA0`, `CUDA_Host`, `Vulkan1`, `CPU`) and bytes.
//! - llama.cpp: `unable to allocate CUDA0 buffer` (loading the model), `failed to allocate
//!   buffer for kv cache`, `failed to allocate compute buffers`.
//! - PyTorch `c10/core/impl/alloc_cpu.cpp`: `DefaultCPUAllocator: not enough memory: you
//!   tried to allocate N bytes.` (older: `can't allocate memory: … Error code 12`).
//! - Ollama `llm/server.go`: `model requires more system memory (X) than is available
//!   (Y)`, sizes from `format.HumanBytes2` (binary units).
//! - Ollama's scheduler (`llm/memory.go`, logged by `server.go`): one `slog` line
//!   `msg="offload to cuda" layers.requested=-1 layers.model=33 layers.offload=31 …
//!   memory.available="[22.7 GiB]" memory.required.full="23.5 GiB" …` (older builds:
//!   `msg=offload library=cuda`), values quoted when they hold a space.

use super::Span;
use crate::model::{Decoded, GgmlBuffer, GgmlMemory, Kind, OllamaMemory};
use crate::scan::Text;
use crate::size::SiPrefixes;

/// The longest backend name read ("CUDA_Host", "Vulkan12", "ROCm0").
const MAX_BACKEND: usize = 24;
/// How far before its anchor a ggml line's head is searched (the function name and the
/// size come first on the line, which a paste may have wrapped).
const HEAD: usize = 160;

/// Where the head of the anchor's line may start: [`HEAD`] bytes back, never before the
/// previous message.
fn head(span: Span) -> usize {
    span.floor.max(span.hit.start.saturating_sub(HEAD))
}

/// "… allocating X MiB on device N: cudaMalloc failed: out of memory" (the anchor is the
/// final "out of memory"; the numbers are before it on its line).
pub(super) fn cuda_malloc_failed(t: &Text, span: Span) -> (Decoded, usize) {
    let mut d = Decoded::new(Kind::GgmlOom);
    let line = head(span);
    if let Some((_, e)) = t.find(line, span.hit.start, b"allocating ") {
        d.requested_bytes = t
            .size_after(e, span.hit.start, SiPrefixes::Binary)
            .map(|(v, _)| v);
    }
    if let Some((_, e)) = t.find(line, span.hit.start, b"on device ") {
        d.gpu_index = t
            .int_after(e, span.hit.start)
            .and_then(|(n, _)| u32::try_from(n).ok());
    }
    d.backend = Some(
        if t.find(line, span.hit.start, b"hipmalloc").is_some() {
            "ROCm"
        } else {
            "CUDA"
        }
        .to_owned(),
    );
    (d, span.hit.end)
}

/// "failed to allocate CUDA0 buffer of size N", "unable to allocate CUDA0 buffer",
/// "failed to allocate buffer for kv cache", "failed to allocate compute buffers".
/// Anything else that fails to allocate is not a ggml message.
pub(super) fn ggml_buffer(t: &Text, span: Span) -> Option<(Decoded, usize)> {
    let end = span.hit.end.saturating_add(80).min(span.end);
    let at = t.skip_ws(span.hit.end, end);
    // ggml-cuda's pinned host memory: "failed to allocate 349659.17 MiB of pinned memory".
    if let Some((v, e)) = t.size_after(at, end, SiPrefixes::Binary)
        && let Some(e) = t.match_at(e, end, b" of pinned memory")
    {
        let mut d = Decoded::new(Kind::HostOom);
        d.requested_bytes = Some(v);
        d.backend = Some("CUDA_Host".to_owned());
        return Some((d, e));
    }
    // "buffer for kv cache" / "compute buffers": no backend named.
    for (phrase, buffer) in [
        (&b"buffer for kv cache"[..], "kv-cache"),
        (b"compute buffers", "compute"),
        (b"compute buffer", "compute"),
    ] {
        if let Some(e) = t.match_at(at, end, phrase) {
            let mut d = Decoded::new(Kind::GgmlOom);
            d.buffer = Some(buffer.to_owned());
            return Some((d, e));
        }
    }
    // "<backend> buffer": a name of letters, digits and '_' (a hard wrap may split it),
    // then " buffer". A name starts with a letter ("Failed to allocate 3 buffers" has none).
    if !t.at(at).is_some_and(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    let mut backend = String::new();
    let mut name_end = at;
    while backend.len() <= MAX_BACKEND {
        let v = if name_end > at {
            t.visible(name_end)
        } else {
            name_end
        };
        // A wrap right before " buffer" loses its space when the paste is cleaned:
        // "CUDA0\nbuffer" is the name, then the word.
        if v != name_end && t.match_at(v, end, b"buffer").is_some() {
            break;
        }
        match t.at(v) {
            Some(b) if v < end && (b.is_ascii_alphanumeric() || b == b'_') => {
                backend.push(char::from(b));
                name_end = v + 1;
            }
            _ => break,
        }
    }
    let after_name = t.match_at(name_end, end, b" buffer")?;
    let host =
        backend.eq_ignore_ascii_case("cpu") || backend.to_ascii_lowercase().ends_with("_host");
    let mut d = Decoded::new(if host { Kind::HostOom } else { Kind::GgmlOom });
    let mut consumed = after_name;
    if let Some(e) = t.match_at(after_name, end, b" of size ")
        && let Some((n, e)) = t.int_after(e, end)
    {
        d.requested_bytes = Some(n);
        consumed = e;
    }
    d.gpu_index = device_index(&backend);
    // Which buffer: the function that printed it, earlier on the line.
    let line = head(span);
    d.buffer = [
        (&b"alloc_tensor_range"[..], "weights"),
        (b"llama_model_load", "weights"),
        (b"load_tensors", "weights"),
        (b"ggml_gallocr_reserve", "compute"),
        (b"kv_cache", "kv-cache"),
    ]
    .iter()
    .find(|(f, _)| t.find(line, span.hit.start, f).is_some())
    .map(|(_, b)| (*b).to_owned());
    d.backend = Some(backend);
    Some((d, consumed))
}

/// ggml-vulkan: "Device memory allocation of size N failed." (then
/// "ErrorOutOfDeviceMemory").
pub(super) fn vulkan_allocation(t: &Text, span: Span) -> Option<(Decoded, usize)> {
    let end = span.hit.end.saturating_add(60).min(span.end);
    let (n, e) = t.int_after(span.hit.end, end)?;
    let e = t.match_at(e, end, b" failed")?;
    let mut d = Decoded::new(Kind::GgmlOom);
    d.requested_bytes = Some(n);
    d.backend = Some("Vulkan".to_owned());
    Some((d, e))
}

/// One line of a llama.cpp load log: "load_tensors: CUDA0 model buffer size = 4403.49
/// MiB", "llama_kv_cache_init: CUDA0 KV buffer size = …", "llama_context: CUDA0 compute
/// buffer size = …", "CUDA_Host output buffer size = …" (older builds: "CUDA0 buffer size"
/// for the weights).
pub(super) fn load_buffer(t: &Text, span: Span) -> Option<(Decoded, usize)> {
    // The size follows on the same line, or on the next one when a terminal's hard
    // wrap fell between the "=" and the number or inside it.
    let end = t.line_end(t.line_end(span.hit.end, span.end) + 1, span.end);
    let (bytes, e) = t.size_after(span.hit.end, end, SiPrefixes::Binary)?;
    // Backwards from the anchor: an optional purpose word, then the buffer type, after
    // the line's "function:" prefix. A terminal's hard wrap may have broken the line
    // anywhere (inside a word too), so the head is read without line breaks from the
    // prefix's colon; a line without one is read from its start.
    let window = span.floor.max(span.hit.start.saturating_sub(HEAD));
    let raw = t.slice_lossy(window, span.hit.start);
    let (head, function) = match raw.rsplit_once(':') {
        Some((before, after)) => (after, before),
        None => (raw.rsplit('\n').next().unwrap_or_default(), ""),
    };
    let function: String = function.chars().filter(|&c| c != '\n').collect();
    // A line break is invisible inside a word ("CUD" / "A0") but stands for the space
    // it replaced between two ("CUDA_Host" / "output"): cleaning turned a wrap at a
    // space into a bare '\n'. Both readings are tried; one that ends in a purpose word
    // wins over one that only the older weights line explains, the joined one first.
    let joined = buffer_head(&head.replace('\n', ""), &function);
    let spaced = buffer_head(&head.replace('\n', " "), &function);
    let (device, purpose, _) = match (joined, spaced) {
        (Some(j), _) if j.2 => j,
        (_, Some(s)) if s.2 => s,
        (j, s) => j.or(s)?,
    };
    // The vision projector's own context (`--mmproj`, tools/mtmd/clip.cpp) reserves
    // its image buffer in `alloc_compute_meta`: not the language model's.
    let purpose = if purpose == "compute" && function.ends_with("alloc_compute_meta") {
        "projector-compute"
    } else {
        purpose
    };
    let mut d = Decoded::new(Kind::GgmlReport);
    d.ggml_memory = Some(GgmlMemory {
        buffers: vec![GgmlBuffer {
            device,
            purpose: purpose.to_owned(),
            bytes,
        }],
        ..GgmlMemory::default()
    });
    Some((d, e))
}

/// The buffer type and purpose before "buffer size": "CUDA0 model", "CUDA_Host
/// compute", or the older "CUDA0" of `load_tensors` (the weights'); the flag says a
/// purpose word named it.
fn buffer_head(head: &str, function: &str) -> Option<(String, &'static str, bool)> {
    let mut words = head.split_whitespace().rev();
    let mut word = words.next()?;
    let purpose = match word.to_ascii_lowercase().as_str() {
        "model" => "weights",
        "kv" => "kv-cache",
        "compute" => "compute",
        "output" => "output",
        _ => "",
    };
    if !purpose.is_empty() {
        word = words.next()?;
    }
    let device = word.trim_end_matches(':');
    if device.is_empty()
        || device.len() > MAX_BACKEND
        || !device
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        || !device
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
    {
        return None;
    }
    if purpose.is_empty() {
        // The older "llm_load_tensors: CUDA0 buffer size" line is the weights'.
        return function
            .ends_with("load_tensors")
            .then(|| (device.to_owned(), "weights", false));
    }
    Some((device.to_owned(), purpose, true))
}

/// Ollama's 2023 check: "requested model (8.4 GiB) is too large for this system
/// (1.9 GiB)" (the model's size against the system's memory).
pub(super) fn ollama_too_large(t: &Text, span: Span) -> (Decoded, usize) {
    let mut d = Decoded::new(Kind::HostOom);
    let line = head(span);
    if let Some((_, e)) = t.find(line, span.hit.start, b"requested model~(") {
        d.requested_bytes = t
            .size_after(e, span.hit.start, SiPrefixes::Binary)
            .map(|(v, _)| v);
    }
    let end = span.hit.end.saturating_add(40).min(span.end);
    let mut consumed = span.hit.end;
    if let Some(e) = t.match_at(t.skip_ws(span.hit.end, end), end, b"(")
        && let Some((v, e)) = t.size_after(e, end, SiPrefixes::Binary)
    {
        d.free_bytes = Some(v);
        consumed = t.match_at(e, end, b")").unwrap_or(e);
    }
    d.backend = Some("CPU".to_owned());
    (d, consumed)
}

/// How far back from `memory.required.full=` the offload line may start (its
/// timestamp, level, source and the `layers.*` keys come first).
const OLLAMA_LINE_HEAD: usize = 2048;
/// The most GPUs read from one of the line's lists.
const MAX_GPUS_LISTED: usize = 64;

/// Ollama's offload line: every `key=value` it printed (see the module docs).
pub(super) fn ollama_offload(t: &Text, span: Span) -> (Decoded, usize) {
    let start = t.line_start(
        span.hit.start,
        span.floor
            .max(span.hit.start.saturating_sub(OLLAMA_LINE_HEAD)),
    );
    let end = t.line_end(span.hit.end, span.end);
    // The value after `key=`, its quotes skipped: (start, end) of the value.
    let value = |key: &[u8]| -> Option<(usize, usize)> {
        let mut from = start;
        loop {
            let (at, e) = t.find(from, end, key)?;
            // A key starts a word: "layers.model=" is not the end of "xlayers.model=".
            if at == start || t.at(at - 1).is_some_and(|b| b == b' ' || b == b'\t') {
                let (v, quoted) = match t.at(e) {
                    Some(b'"') => (e + 1, true),
                    _ => (e, false),
                };
                let stop = if quoted {
                    t.position(v, end, |b| b == b'"').unwrap_or(end)
                } else {
                    t.position(v, end, |b| b == b' ' || b == b'\t')
                        .unwrap_or(end)
                };
                return Some((v, stop));
            }
            from = e;
        }
    };
    let size = |key: &[u8]| {
        let (v, stop) = value(key)?;
        t.size_after(v, stop, SiPrefixes::Binary).map(|(n, _)| n)
    };
    let int = |key: &[u8]| {
        let (v, stop) = value(key)?;
        t.int_after(v, stop).map(|(n, _)| n)
    };
    let list = |key: &[u8]| {
        let mut out = Vec::new();
        if let Some((v, stop)) = value(key) {
            let mut i = if t.at(v) == Some(b'[') { v + 1 } else { v };
            while out.len() < MAX_GPUS_LISTED
                && let Some((n, e)) = t.size_after(i, stop, SiPrefixes::Binary)
            {
                out.push(n);
                i = e;
            }
        }
        out
    };
    let word = |(v, stop): (usize, usize)| {
        let text = t.slice_lossy(v, stop.min(v + 32)).trim().to_owned();
        (!text.is_empty()).then_some(text)
    };
    let library = t
        .find(start, end, b"offload to ")
        .and_then(|(_, e)| {
            let stop = t
                .position(e, end, |b| !b.is_ascii_alphanumeric())
                .unwrap_or(end);
            word((e, stop))
        })
        .or_else(|| value(b"library=").and_then(word));
    let m = OllamaMemory {
        library: library.map(|l| l.to_ascii_lowercase()),
        layers_requested: value(b"layers.requested=").and_then(|(v, stop)| {
            let text = t.slice_lossy(v, stop.min(v + 12));
            text.trim().parse::<i64>().ok()
        }),
        layers_model: int(b"layers.model="),
        layers_offload: int(b"layers.offload=").or_else(|| int(b"layers.real=")),
        layers_split: value(b"layers.split=").and_then(word),
        available_bytes: list(b"memory.available="),
        gpu_overhead_bytes: size(b"memory.gpu_overhead="),
        required_full_bytes: size(b"memory.required.full="),
        required_partial_bytes: size(b"memory.required.partial="),
        required_kv_bytes: size(b"memory.required.kv="),
        allocations_bytes: list(b"memory.required.allocations="),
        weights_total_bytes: size(b"memory.weights.total="),
        weights_repeating_bytes: size(b"memory.weights.repeating="),
        weights_nonrepeating_bytes: size(b"memory.weights.nonrepeating="),
        graph_full_bytes: size(b"memory.graph.full="),
        graph_partial_bytes: size(b"memory.graph.partial="),
        projector_weights_bytes: size(b"projector.weights="),
        projector_graph_bytes: size(b"projector.graph="),
        ..OllamaMemory::default()
    };
    // Ollama logs the host's memory on the line before: `msg="system memory"
    // total="31.3 GiB" free="29.5 GiB" free_swap="947.6 MiB"`.
    let mut m = m;
    let before = span.floor.max(start.saturating_sub(OLLAMA_LINE_HEAD));
    if let Some((at, _)) = t.find(before, start, b"msg=\"system memory\"") {
        let line_end = t.line_end(at, start);
        let size = |key: &[u8]| {
            let (_, e) = t.find(at, line_end, key)?;
            let e = t.match_at(e, line_end, b"\"").unwrap_or(e);
            t.size_after(e, line_end, SiPrefixes::Binary)
                .map(|(v, _)| v)
        };
        m.system_total_bytes = size(b" total=");
        m.system_free_bytes = size(b" free=");
        m.system_free_swap_bytes = size(b" free_swap=");
    }
    let mut d = Decoded::new(Kind::OllamaOffload);
    // A line cut before its last key (`memory.graph.partial`, printed by every version
    // that prints `memory.required.full`) may have lost others.
    d.truncated = m.graph_partial_bytes.is_none();
    d.ollama_memory = Some(m);
    (d, end)
}

/// The device number at the end of a GPU backend's name ("CUDA1" → 1); none for host
/// buffers.
fn device_index(backend: &str) -> Option<u32> {
    if backend.to_ascii_lowercase().ends_with("_host") {
        return None;
    }
    let digits = backend.len() - backend.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    backend.get(backend.len() - digits..)?.parse().ok()
}

/// PyTorch's CPU allocator: "you tried to allocate N bytes".
pub(super) fn default_cpu_allocator(t: &Text, span: Span) -> (Decoded, usize) {
    let mut d = Decoded::new(Kind::HostOom);
    let end = span.hit.end.saturating_add(200).min(span.end);
    let mut consumed = span.hit.end;
    if let Some((_, e)) = t.find(span.hit.end, end, b"tried to allocate")
        && let Some((n, e)) = t.int_after(e, end)
    {
        d.requested_bytes = Some(n);
        consumed = t.match_at(e, end, b" bytes").unwrap_or(e);
        if let Some((_, e)) = t.find(consumed, end, b"(cannot allocate memory)") {
            consumed = e;
        }
    } else {
        d.truncated = true;
    }
    d.backend = Some("CPU".to_owned());
    (d, consumed)
}

/// Ollama: "model requires more system memory (X) than is available (Y)".
pub(super) fn ollama_system_memory(t: &Text, span: Span) -> (Decoded, usize) {
    let mut d = Decoded::new(Kind::HostOom);
    let end = span.hit.end.saturating_add(120).min(span.end);
    let mut consumed = span.hit.end;
    let at = t.skip_ws(span.hit.end, end);
    if let Some(e) = t.match_at(at, end, b"(")
        && let Some((v, e)) = t.size_after(e, end, SiPrefixes::Binary)
    {
        d.requested_bytes = Some(v);
        consumed = e;
    }
    if let Some((_, e)) = t.find(consumed, end, b"than is available~(")
        && let Some((v, e)) = t.size_after(e, end, SiPrefixes::Binary)
    {
        d.free_bytes = Some(v);
        consumed = t.match_at(e, end, b")").unwrap_or(e);
    }
    d.backend = Some("CPU".to_owned());
    (d, consumed)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use crate::message::find_all;
    use crate::model::Kind;

    const MIB: u64 = 1 << 20;

    #[test]
    fn ggml_cuda_malloc_names_size_and_device() {
        let m = &find_all(
            "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9866.00 MiB on device 1: \
             cudaMalloc failed: out of memory\n\
             alloc_tensor_range: failed to allocate CUDA1 buffer of size 10345254912\n\
             llama_model_load: error loading model: unable to allocate CUDA1 buffer",
        )
        .messages;
        assert_eq!(m.len(), 3, "{m:?}");
        assert_eq!(m[0].kind, Kind::GgmlOom);
        assert_eq!(m[0].requested_bytes, Some(9866 * MIB));
        assert_eq!(m[0].gpu_index, Some(1));
        assert_eq!(m[1].requested_bytes, Some(10_345_254_912));
        assert_eq!(m[1].backend.as_deref(), Some("CUDA1"));
        assert_eq!(m[1].buffer.as_deref(), Some("weights"));
        assert_eq!(m[2].gpu_index, Some(1));
        assert_eq!(m[2].requested_bytes, None);
    }

    /// llama.cpp's timestamped log (`1.06.520.084 E …`, corpus gh_mx_27): the next
    /// line's timestamp is not read as more digits of the size.
    #[test]
    fn a_timestamped_log_keeps_each_size_on_its_line() {
        let e = crate::explain(
            "1.06.520.084 E ggml_gallocr_reserve_n_impl: failed to allocate CUDA1 buffer of size 54262464512\n\
             1.06.520.086 E graph_reserve: failed to allocate compute buffers\n",
        );
        assert_eq!(e.primary.requested_bytes, Some(54_262_464_512));
    }

    #[test]
    fn ggml_buffers_by_purpose_and_host_buffers() {
        let m =
            &find_all("ggml_gallocr_reserve_n: failed to allocate ROCm0 buffer of size 2147483648")
                .messages[0];
        assert_eq!(
            (m.kind, m.buffer.as_deref(), m.gpu_index),
            (Kind::GgmlOom, Some("compute"), Some(0))
        );
        let m = &find_all("llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache").messages[0];
        assert_eq!(
            (m.kind, m.buffer.as_deref()),
            (Kind::GgmlOom, Some("kv-cache"))
        );
        let m =
            &find_all("alloc_tensor_range: failed to allocate CUDA_Host buffer of size 4294967296")
                .messages[0];
        assert_eq!((m.kind, m.gpu_index), (Kind::HostOom, None));
        assert_eq!(m.requested_bytes, Some(4 << 30));
    }

    /// Ollama plans the offload, then the runner (llama.cpp) fails to allocate: the
    /// failure is diagnosed with the plan it outgrew.
    #[test]
    fn an_ollama_plan_explains_the_ggml_failure_after_it() {
        let paste = "time=2024-07-24T13:50:47.458+02:00 level=INFO source=memory.go:309 \
             msg=\"offload to cuda\" layers.requested=-1 layers.model=33 layers.offload=31 \
             layers.split=\"\" memory.available=\"[22.7 GiB]\" memory.required.full=\"23.5 GiB\" \
             memory.required.partial=\"22.5 GiB\" memory.required.kv=\"9.8 GiB\" \
             memory.graph.full=\"5.1 GiB\" memory.graph.partial=\"5.4 GiB\"\n\
             ggml_backend_cuda_buffer_type_alloc_buffer: allocating 5530.00 MiB on device 0: \
             cudaMalloc failed: out of memory\n\
             ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 5798625280\n";
        let e = crate::explain(paste);
        assert_eq!(e.primary.kind, Kind::GgmlOom);
        let plan = e.primary.ollama_memory.as_ref().unwrap();
        assert_eq!(
            (plan.layers_offload, plan.layers_model),
            (Some(31), Some(33))
        );
        assert_eq!(plan.available_bytes.len(), 1);
        let cause = &e.diagnosis[0];
        assert!(
            cause.explanation.contains("Ollama calculó 23,50 GiB")
                && cause.explanation.contains("superó ese cálculo"),
            "{}",
            cause.explanation
        );
        assert!(cause.fix.contains("num_gpu, p. ej. 27"), "{}", cause.fix);
    }

    #[test]
    fn ollama_keys_start_words_and_lists_are_bounded() {
        // "xmemory.required.full" is not the key; a list of 100 GPUs keeps 64.
        let many = vec!["1.0 GiB"; 100].join(" ");
        let line = format!(
            "msg=offload library=rocm xlayers.model=9 layers.model=33 \
             memory.available=\"[{many}]\" memory.required.full=\"2.0 GiB\""
        );
        let m = &find_all(&line).messages[0];
        let o = m.ollama_memory.as_ref().unwrap();
        assert_eq!(o.library.as_deref(), Some("rocm"));
        assert_eq!(o.layers_model, Some(33));
        assert_eq!(o.available_bytes.len(), 64);
        assert!(m.truncated);
    }

    #[test]
    fn other_failures_to_allocate_are_not_ggml() {
        for text in [
            "failed to allocate memory for the page table",
            "unable to allocate a new session",
            "Failed to allocate 3 buffers",
        ] {
            assert!(find_all(text).messages.is_empty(), "{text}");
        }
    }

    #[test]
    fn host_ram_messages() {
        let m = &find_all(
            "RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not \
             enough memory: you tried to allocate 34359738368 bytes.",
        )
        .messages;
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!(
            (m[0].kind, m[0].requested_bytes),
            (Kind::HostOom, Some(32 << 30))
        );
        let m = &find_all(
            "RuntimeError: [enforce fail at CPUAllocator.cpp:64] . DefaultCPUAllocator: can't \
             allocate memory: you tried to allocate 1073741824 bytes. Error code 12 (Cannot \
             allocate memory)",
        )
        .messages;
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!(m[0].requested_bytes, Some(1 << 30));
        assert!(
            m[0].excerpt.ends_with("(Cannot allocate memory)"),
            "{}",
            m[0].excerpt
        );
        let m = &find_all(
            "Error: model requires more system memory (44.0 GiB) than is available (7.6 GiB)",
        )
        .messages[0];
        assert_eq!(m.kind, Kind::HostOom);
        assert_eq!(m.requested_bytes, Some(44 << 30));
        assert_eq!(m.free_bytes, Some(8_160_437_862));
    }

    #[test]
    fn a_llamacpp_load_log_is_one_report_per_device() {
        let e = crate::explain(LOAD_LOG);
        assert_eq!(e.primary.kind, Kind::GgmlReport);
        assert!(e.messages.is_empty(), "{:?}", e.messages);
        let g = e.primary.ggml_memory.unwrap();
        let got: Vec<(&str, &str, u64)> = g
            .buffers
            .iter()
            .map(|b| (b.device.as_str(), b.purpose.as_str(), b.bytes))
            .collect();
        let mib = |x: f64| (x * MIB as f64).round() as u64;
        assert_eq!(
            got,
            [
                ("CPU", "weights", mib(281.81)),
                ("CUDA0", "weights", mib(4403.49)),
                ("CUDA0", "kv-cache", 1024 * MIB),
                ("CUDA_Host", "output", mib(0.49)),
                ("CUDA0", "compute", 560 * MIB),
                ("CUDA_Host", "compute", mib(24.01)),
            ]
        );
        assert_eq!(
            (g.n_ctx, g.layers_on_gpu, g.layers_total),
            (Some(8192), Some(33), Some(33))
        );
        assert_eq!(g.file_type.as_deref(), Some("Q4_K - Medium"));
        assert_eq!(g.model.as_deref(), Some("Meta Llama 3.1 8B Instruct"));
        let why = &e.diagnosis[0].explanation;
        assert!(why.starts_with("llama.cpp reservó CPU: 281,81 MiB de pesos; CUDA0: 4,30 GiB de pesos, 1,00 GiB de caché KV, 560,00 MiB de cómputo"), "{why}");
    }

    #[test]
    fn a_failure_after_a_load_log_cites_it() {
        let text = format!(
            "{LOAD_LOG}ggml_backend_cuda_buffer_type_alloc_buffer: allocating 2048.00 MiB on device 0: cudaMalloc failed: out of memory\n"
        );
        let e = crate::explain(&text);
        assert_eq!(e.primary.kind, Kind::GgmlOom);
        assert!(
            e.diagnosis[0]
                .explanation
                .contains("Antes del fallo, llama.cpp reservó"),
            "{}",
            e.diagnosis[0].explanation
        );
    }

    /// `--mmproj`: the vision projector's context logs its own compute buffer
    /// (ggml-org/llama.cpp#22790), which is not the language model's.
    #[test]
    fn the_projector_compute_buffer_is_its_own() {
        let text = "llama_context:      CUDA0 compute buffer size =   517.12 MiB\n\
                    alloc_compute_meta:      CUDA0 compute buffer size =   121.25 MiB\n\
                    alloc_compute_meta:        CPU compute buffer size =     9.19 MiB\n";
        let r = crate::explain(text);
        let m = r.primary.ggml_memory.expect("a load report");
        let mut got: Vec<(&str, &str)> = m
            .buffers
            .iter()
            .map(|b| (b.device.as_str(), b.purpose.as_str()))
            .collect();
        got.sort_unstable();
        assert_eq!(
            got,
            [
                ("CPU", "projector-compute"),
                ("CUDA0", "compute"),
                ("CUDA0", "projector-compute")
            ]
        );
    }

    /// A terminal's hard wrap inside a buffer line: at a space between the buffer type
    /// and its purpose, inside the type, between "=" and the size.
    #[test]
    fn wrapped_buffer_lines_keep_their_type_and_purpose() {
        let cases = [
            (
                "llama_new_context_with_model:  CUDA_Host \n output buffer size = 0.50 MiB\n",
                "CUDA_Host",
                "output",
                524_288,
            ),
            (
                "llama_new_context_wi\nth_model:  CUDA_Host \n output buffer size =\n     0.50 MiB\n",
                "CUDA_Host",
                "output",
                524_288,
            ),
            (
                "load_tensors: CUD\nA0 model buffer size = 4403.49 MiB\n",
                "CUDA0",
                "weights",
                4_617_393_930,
            ),
            (
                "llm_load_tensors: CUDA0\nbuffer size = 4403.49 MiB\n",
                "CUDA0",
                "weights",
                4_617_393_930,
            ),
            (
                "llama_kv_cache_init: CUDA0 KV buffer size =\n1024.00 MiB\n",
                "CUDA0",
                "kv-cache",
                1 << 30,
            ),
        ];
        for (text, device, purpose, bytes) in cases {
            let e = crate::explain(text);
            assert_eq!(e.primary.kind, Kind::GgmlReport, "{text:?}");
            let b = &e.primary.ggml_memory.as_ref().unwrap().buffers[0];
            assert_eq!(
                (b.device.as_str(), b.purpose.as_str(), b.bytes),
                (device, purpose, bytes),
                "{text:?}"
            );
        }
    }

    const LOAD_LOG: &str = "llama_model_loader: - kv   2:                               general.name str              = Meta Llama 3.1 8B Instruct\n\
llm_load_print_meta: model ftype      = Q4_K - Medium\n\
llm_load_tensors: offloading 32 repeating layers to GPU\n\
llm_load_tensors: offloaded 33/33 layers to GPU\n\
llm_load_tensors:        CPU buffer size =   281.81 MiB\n\
llm_load_tensors:      CUDA0 buffer size =  4403.49 MiB\n\
llama_new_context_with_model: n_ctx      = 8192\n\
llama_kv_cache_init:      CUDA0 KV buffer size =  1024.00 MiB\n\
llama_new_context_with_model: KV self size  = 1024.00 MiB, K (f16):  512.00 MiB, V (f16):  512.00 MiB\n\
llama_new_context_with_model:  CUDA_Host  output buffer size =     0.49 MiB\n\
llama_new_context_with_model:      CUDA0 compute buffer size =   560.00 MiB\n\
llama_new_context_with_model:  CUDA_Host compute buffer size =    24.01 MiB\n\
";
}
