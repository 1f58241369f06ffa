//! Finding and decoding every OOM message in a paste.
//!
//! A paste is searched for *anchors*: short phrases every family prints ("out of
//! memory", "CUBLAS_STATUS_ALLOC_FAILED", "max seq len (", "memory summary, device ID").
//! Each anchor opens a message whose fields are searched for in a *span*: from the
//! anchor's line to the next anchor (or [`WINDOW`] bytes), so two messages in one paste
//! never lend each other numbers. Fields are searched independently, in any order, so a
//! message cut short keeps what it has and reports itself `truncated`.
//!
//! Cost: one forward scan for anchors, one for span ends (cached, so it never goes
//! back), and a bounded amount of work per message; at most [`MAX_MESSAGES`] are kept.

mod allocator;
mod anchor;
mod others;
mod runtimes;
mod vllm_report;

use crate::model::{Decoded, Kind};
use crate::scan::Text;
use anchor::{Anchor, Hit, SpanEnds};

/// The most messages decoded from one paste.
pub const MAX_MESSAGES: usize = 32;
/// The longest span a message's fields are searched in.
const WINDOW: usize = 8 * 1024;
/// How far back from its anchor a message's line may start.
const LOOKBEHIND: usize = 160;
/// The longest excerpt kept per message.
const EXCERPT: usize = 2000;

/// Messages found, in paste order, and whether the paste held more than were kept.
#[derive(Debug)]
pub(crate) struct Found {
    pub messages: Vec<Decoded>,
    pub more: bool,
}

/// Where a message's text lies: `floor` (the end of the message before it), `hit` (its
/// anchor) and `end` (its span end).
#[derive(Debug, Clone, Copy)]
pub(super) struct Span {
    pub floor: usize,
    pub hit: Hit,
    pub end: usize,
}

impl Span {
    /// The start of the anchor's line (for the excerpt and the exception name), not
    /// before `floor` nor more than [`LOOKBEHIND`] bytes back.
    pub(super) fn start(&self, t: &Text) -> usize {
        t.line_start(
            self.hit.start,
            self.floor.max(self.hit.start.saturating_sub(LOOKBEHIND)),
        )
    }

    /// Up to `max` bytes before the anchor, within this message, compacted (see
    /// [`Text::compact_before`]).
    pub(super) fn compact_before(&self, t: &Text, max: usize) -> String {
        let from = self.floor.max(self.hit.start.saturating_sub(max));
        t.compact_before(self.hit.start, self.hit.start.saturating_sub(from))
    }
}

/// Finds every message in cleaned text.
pub(crate) fn find_all(text: &str) -> Found {
    let t = Text::new(text);
    let mut spans = SpanEnds::default();
    let mut messages = Vec::new();
    let mut pos = 0;
    let mut floor = 0;
    while let Some(hit) = anchor::next(&t, pos, t.len()) {
        if messages.len() == MAX_MESSAGES {
            return Found {
                messages,
                more: true,
            };
        }
        let end = spans
            .next_after(&t, hit.end)
            .unwrap_or(t.len())
            .min(hit.start.saturating_add(WINDOW));
        let span = Span { floor, hit, end };
        match decode(&t, span) {
            Some((mut d, consumed)) => {
                let consumed = consumed.max(hit.end);
                let start = span.start(&t);
                d.excerpt = t.slice_lossy(start, consumed.min(start + EXCERPT));
                messages.push(d);
                pos = consumed;
                floor = consumed;
            }
            None => pos = hit.end,
        }
    }
    Found {
        messages,
        more: false,
    }
}

/// Decodes the message an anchor opens: the message and where its text ends.
fn decode(t: &Text, span: Span) -> Option<(Decoded, usize)> {
    let (mut d, consumed) = match span.hit.anchor {
        Anchor::OutOfMemory => out_of_memory(t, span)?,
        Anchor::TriedToAllocate => allocator::headless(t, span)?,
        Anchor::CapacityList => allocator::list_only(t, span)?,
        Anchor::ErrorName => others::error_name_only(t, span)?,
        Anchor::CublasAlloc => others::with_gpu_field(t, others::bare(Kind::CublasOom, span), span),
        Anchor::CudnnAlloc | Anchor::CudnnNoAlgorithm => {
            others::with_gpu_field(t, others::bare(Kind::CudnnOom, span), span)
        }
        Anchor::CudnnNotSupported => others::cudnn_not_supported(t, span)?,
        Anchor::CudaErrorCode => others::bare(Kind::DriverOom, span),
        Anchor::VllmMaxSeqLen => others::vllm_max_seq_len(t, span)?,
        Anchor::VllmNoCacheMemory => others::bare(Kind::VllmKvCache, span),
        Anchor::SummaryHeader => crate::summary::parse(t, span.hit.end)?,
        Anchor::DefaultCpuAllocator => runtimes::default_cpu_allocator(t, span),
        Anchor::OllamaSystemMemory => runtimes::ollama_system_memory(t, span),
        Anchor::FailedToAllocate => {
            others::stream_executor(t, span).or_else(|| runtimes::ggml_buffer(t, span))?
        }
        Anchor::UnableToAllocate => runtimes::ggml_buffer(t, span)?,
        Anchor::OllamaTooLarge => runtimes::ollama_too_large(t, span),
        Anchor::VllmReport => vllm_report::report(t, span),
        Anchor::VllmStartup => vllm_report::startup(t, span),
        Anchor::DeviceMemoryAllocation => runtimes::vulkan_allocation(t, span)?,
        Anchor::GgmlBufferSize => runtimes::load_buffer(t, span)?,
        Anchor::OllamaOffload => runtimes::ollama_offload(t, span),
        Anchor::TfOom => others::tensorflow(t, span),
    };
    if d.exception.is_none() {
        d.exception = exception_name(t, span);
    }
    Some((d, consumed))
}

/// "… out of memory": which family, from the words just before it.
fn out_of_memory(t: &Text, span: Span) -> Option<(Decoded, usize)> {
    // Compared without whitespace, so a line wrapped inside these words still matches.
    let before = span.compact_before(t, 60);
    // NCCL: "Cuda failure 'out of memory'" and, newer, "Cuda failure 2 'out of memory'".
    let nccl = before
        .strip_suffix('\'')
        .map(|b| b.trim_end_matches(|c: char| c.is_ascii_digit()))
        .is_some_and(|b| b.ends_with("cudafailure"));
    let driver = before.ends_with("cudaerror:")
        || before.ends_with("cudadrivererror:")
        || before.ends_with("hiperror:")
        || nccl
        || before.contains("runtimeerror(2)")
        // PyTorch 0.x: "THCudaCheck FAIL file=… line=405 error=2 : out of memory".
        || before.ends_with("error=2:")
        // spconv: "cuda failed with error 2 out of memory".
        || before.ends_with("error2")
        // Caffe2's CUDA_ENFORCE: "Error at: caffe2/core/event_gpu.cc:33: out of memory".
        || before.contains("errorat:");
    // ggml-cuda's older CUDA_CHECK: "CUDA error 2 at …/ggml-cuda.cu:5509: out of memory"
    // then "current device: 1".
    let cuda_error_at = before.rsplit_once("cudaerror").is_some_and(|(_, rest)| {
        rest.trim_start_matches(|c: char| c.is_ascii_digit())
            .starts_with("at")
    });
    if driver || cuda_error_at {
        return Some(others::driver(t, span));
    }
    // llama.cpp's ggml backends: "… on device 1: cudaMalloc failed: out of memory".
    if before.ends_with("cudamallocfailed:") || before.ends_with("hipmallocfailed:") {
        return Some(runtimes::cuda_malloc_failed(t, span));
    }
    if before.ends_with("allowedmemory.(") {
        return Some(allocator::malloc_async(t, span));
    }
    if before.ends_with("mpsbackend") {
        return Some(others::mps(t, span));
    }
    // XLA (JAX, TensorFlow): "RESOURCE_EXHAUSTED: Out of memory while trying to
    // allocate N bytes."
    if before.ends_with("resource_exhausted:") {
        return Some(others::xla(t, span));
    }
    let kind = if before.ends_with("hip") {
        Kind::HipOom
    } else if before.ends_with("xpu") {
        Kind::XpuOom
    } else if before.ends_with("npu") {
        // torch_npu: its sentence always goes on with "Tried to allocate".
        let near = span.hit.end.saturating_add(40).min(span.end);
        t.find(span.hit.end, near, b"tried to allocate")?;
        Kind::NpuOom
    } else if before.ends_with("cuda") {
        // "If you encounter CUDA out of memory, try …" is advice, not a message: the
        // allocator's sentence ends with a period.
        let next = t.skip_ws(span.hit.end, span.end);
        if t.at(next) == Some(b',') {
            return None;
        }
        Kind::PytorchOom
    } else {
        // Another vendor's port of PyTorch's allocator ("<device> out of memory. Tried
        // to allocate …") still speaks its format; anything else is not ours to explain.
        let near = span.hit.end.saturating_add(40).min(span.end);
        t.find(span.hit.end, near, b"tried to allocate")?;
        Kind::PytorchOom
    };
    Some(allocator::parse(t, kind, span))
}

/// The exception type printed before a message on its line: "torch.OutOfMemoryError".
fn exception_name(t: &Text, span: Span) -> Option<String> {
    let line = t.slice_lossy(span.start(t), span.hit.start);
    // "RuntimeError:CUDA out of memory" (no space) names its exception too.
    line.split(' ')
        .filter_map(|tok| tok.split_once(':').map(|(name, _)| name))
        .find(|tok| {
            tok.len() > 5
                && (tok.ends_with("Error") || tok.ends_with("Exception"))
                && tok
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_')
        })
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn two_messages_do_not_share_fields() {
        let text = "CUDA out of memory. Tried to allocate 2.00 MiB\n\
                    CUDA out of memory. Tried to allocate 4.00 MiB (GPU 1; 8.00 GiB total capacity;";
        let found = find_all(text);
        assert_eq!(found.messages.len(), 2);
        let [a, b] = found.messages.as_slice() else {
            panic!()
        };
        assert_eq!(a.requested_bytes, Some(2 << 20));
        assert_eq!(a.total_bytes, None);
        assert_eq!(a.gpu_index, None);
        assert_eq!(b.requested_bytes, Some(4 << 20));
        assert_eq!(b.gpu_index, Some(1));
    }

    #[test]
    fn exception_names() {
        let found = find_all("torch.OutOfMemoryError: CUDA out of memory.");
        assert_eq!(found.messages.len(), 1);
        assert_eq!(
            found.messages[0].exception.as_deref(),
            Some("torch.OutOfMemoryError")
        );
        let found = find_all("RuntimeError: CUDA error: out of memory");
        assert_eq!(found.messages[0].kind, Kind::DriverOom);
        assert_eq!(found.messages[0].exception.as_deref(), Some("RuntimeError"));
        let found = find_all("RuntimeError:CUDA out of memory. Tried to allocate 20.00 MiB");
        assert_eq!(found.messages[0].exception.as_deref(), Some("RuntimeError"));
    }

    #[test]
    fn foreign_out_of_memory_is_not_ours() {
        // Java's heap is not a GPU (JAX's XLA is decoded: `xla-oom`).
        let jax = find_all(
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1 bytes.",
        );
        assert_eq!(jax.messages[0].kind, Kind::XlaOom);
        assert_eq!(jax.messages[0].requested_bytes, Some(1));
        for text in [
            "java.lang.OutOfMemoryError: Java heap space",
            "except torch.cuda.OutOfMemoryError:",
            "timeout of memory",
        ] {
            assert!(find_all(text).messages.is_empty(), "{text}");
        }
    }

    #[test]
    fn the_cap_is_reported() {
        let text = "CUDA out of memory.\n".repeat(MAX_MESSAGES + 3);
        let found = find_all(&text);
        assert_eq!(found.messages.len(), MAX_MESSAGES);
        assert!(found.more);
    }
}
