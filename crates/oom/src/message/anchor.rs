//! The phrases that open a message, and a forward-only search for them.

use crate::scan::Text;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// "CUDA out of memory", "HIP out of memory", "CUDA error: out of memory", …
    OutOfMemory,
    /// "Tried to allocate": inside a message, or the start of one whose head was lost.
    TriedToAllocate,
    /// A PyTorch message before 2.1 pasted without its first line, from its
    /// `(GPU n; T total capacity; …)` list.
    CapacityList,
    /// "torch.OutOfMemoryError" with nothing recognisable after it.
    ErrorName,
    CublasAlloc,
    CudnnAlloc,
    /// Only an OOM when the message speaks of a workspace.
    CudnnNotSupported,
    /// "Unable to find a valid cuDNN algorithm to run convolution".
    CudnnNoAlgorithm,
    /// `CUDA_ERROR_OUT_OF_MEMORY`, `cudaErrorMemoryAllocation`.
    CudaErrorCode,
    /// vLLM: "max seq len (N)".
    VllmMaxSeqLen,
    /// vLLM: "No available memory for the cache blocks."
    VllmNoCacheMemory,
    /// vLLM's start-up check: "… on startup is less than desired GPU memory
    /// utilization (…)".
    VllmStartup,
    /// "PyTorch CUDA memory summary, device ID N".
    SummaryHeader,
    /// PyTorch's host allocator: "DefaultCPUAllocator: not enough memory: you tried to
    /// allocate N bytes".
    DefaultCpuAllocator,
    /// Ollama: "model requires more system memory (X) than is available (Y)".
    OllamaSystemMemory,
    /// ggml: "failed to allocate CUDA0 buffer of size N", "failed to allocate buffer for
    /// kv cache", "failed to allocate compute buffers" (only when a buffer follows).
    FailedToAllocate,
    /// llama.cpp: "unable to allocate CUDA0 buffer" (only when a buffer follows).
    UnableToAllocate,
    /// vLLM's start-up report: "Memory profiling takes", "Memory profiling results",
    /// "the current vLLM instance can use", "Available KV cache memory:", "GPU KV cache
    /// size:".
    VllmReport,
    /// ggml-vulkan: "Device memory allocation of size N failed."
    DeviceMemoryAllocation,
    /// llama.cpp's load log: "… buffer size = X MiB".
    GgmlBufferSize,
    /// Ollama's offload line: `memory.required.full="…"`.
    OllamaOffload,
    /// TensorFlow's BFC allocator: "OOM when allocating tensor".
    TfOom,
    /// Ollama's first system check (2023): "requested model (X) is too large for this
    /// system (Y)".
    OllamaTooLarge,
}

const ANCHORS: &[(&[u8], Anchor)] = &[
    (b"out of memory", Anchor::OutOfMemory),
    (b"outofmemoryerror", Anchor::ErrorName),
    (b"tried to allocate", Anchor::TriedToAllocate),
    (b"total capacity;", Anchor::CapacityList),
    (b"cublas_status_alloc_failed", Anchor::CublasAlloc),
    (b"cudnn_status_alloc_failed", Anchor::CudnnAlloc),
    (b"cudnn_status_not_supported", Anchor::CudnnNotSupported),
    (b"cudnn_status_not_initialized", Anchor::CudnnAlloc),
    (
        b"unable to find a valid cudnn algorithm",
        Anchor::CudnnNoAlgorithm,
    ),
    (b"cuda_error_out_of_memory", Anchor::CudaErrorCode),
    (b"cudaerrormemoryallocation", Anchor::CudaErrorCode),
    (b"max seq len~(", Anchor::VllmMaxSeqLen),
    (
        b"on startup is less than desired gpu memory utilization",
        Anchor::VllmStartup,
    ),
    (
        b"no available memory for the cache blocks",
        Anchor::VllmNoCacheMemory,
    ),
    (b"memory summary, device id", Anchor::SummaryHeader),
    (b"defaultcpuallocator", Anchor::DefaultCpuAllocator),
    (
        b"model requires more system memory",
        Anchor::OllamaSystemMemory,
    ),
    (b"failed to allocate ", Anchor::FailedToAllocate),
    (b"unable to allocate ", Anchor::UnableToAllocate),
    (b"memory profiling takes", Anchor::VllmReport),
    (b"memory profiling results", Anchor::VllmReport),
    (b"the current vllm instance can use", Anchor::VllmReport),
    (
        b"device memory allocation of size",
        Anchor::DeviceMemoryAllocation,
    ),
    (b"buffer size~=", Anchor::GgmlBufferSize),
    (b"memory.required.full=", Anchor::OllamaOffload),
    (b"oom when allocating tensor", Anchor::TfOom),
    (b"is too large for this system", Anchor::OllamaTooLarge),
    (b"available kv cache memory:", Anchor::VllmReport),
    (b"gpu kv cache size:", Anchor::VllmReport),
    (b"gpu blocks:", Anchor::VllmReport),
    (b"cuda blocks:", Anchor::VllmReport),
    (b"loading model weights took", Anchor::VllmReport),
    (b"model loading took", Anchor::VllmReport),
];

/// The bytes an anchor can start with, either case: the scan skips every other byte.
/// Derived from [`ANCHORS`], so a new anchor is never skipped.
const FIRST: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < ANCHORS.len() {
        let first = ANCHORS[i].0[0];
        table[first as usize] = true;
        table[first.to_ascii_uppercase() as usize] = true;
        i += 1;
    }
    table
};

/// An anchor found at `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hit {
    pub start: usize,
    pub end: usize,
    pub anchor: Anchor,
}

/// The next anchor in `from..end`. An anchor starts a word: the byte before it is not a
/// letter or digit ("timeout of memory" is not "out of memory").
pub(crate) fn next(t: &Text, from: usize, end: usize) -> Option<Hit> {
    let mut i = from;
    while let Some(at) = t.position(i, end, |b| FIRST[usize::from(b)]) {
        let b = t.at(at)?.to_ascii_lowercase();
        let starts_word = !(at > 0 && t.at(at - 1).is_some_and(|p| p.is_ascii_alphanumeric()));
        if starts_word {
            for &(phrase, anchor) in ANCHORS {
                if phrase.first() == Some(&b)
                    && let Some(e) = t.match_at(at, end, phrase)
                {
                    return Some(Hit {
                        start: at,
                        end: e,
                        anchor,
                    });
                }
            }
        }
        i = at + 1;
    }
    None
}

/// Where spans end: the next anchor that opens a message of its own ("Tried to
/// allocate" belongs to the message before it). Remembers its last answer, so a run of
/// queries with growing `from` scans the text once.
#[derive(Debug, Default)]
pub(crate) struct SpanEnds {
    /// The last header found, and the position its search started from.
    last: Option<(usize, Option<usize>)>,
}

impl SpanEnds {
    pub(crate) fn next_after(&mut self, t: &Text, from: usize) -> Option<usize> {
        if let Some((searched_from, found)) = self.last {
            match found {
                Some(h) if searched_from <= from && h >= from => return Some(h),
                None if searched_from <= from => return None,
                _ => {}
            }
        }
        let mut pos = from;
        let found = loop {
            match next(t, pos, t.len()) {
                // Both are inside the message they may open, never after it.
                Some(hit)
                    if matches!(hit.anchor, Anchor::TriedToAllocate | Anchor::CapacityList) =>
                {
                    pos = hit.end
                }
                Some(hit) => break Some(hit.start),
                None => break None,
            }
        };
        self.last = Some((from, found));
        found
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn finds_each_anchor() {
        for (text, anchor) in [
            ("CUDA out of memory.", Anchor::OutOfMemory),
            ("torch.OutOfMemoryError: x", Anchor::ErrorName),
            ("Tried to allocate 2 MiB", Anchor::TriedToAllocate),
            (
                "(GPU 0; 15.75 GiB total capacity; 1 MiB",
                Anchor::CapacityList,
            ),
            ("CUBLAS_STATUS_ALLOC_FAILED when", Anchor::CublasAlloc),
            ("cuDNN error: CUDNN_STATUS_ALLOC_FAILED", Anchor::CudnnAlloc),
            ("CUDNN_STATUS_NOT_INITIALIZED", Anchor::CudnnAlloc),
            ("CUDNN_STATUS_NOT_SUPPORTED.", Anchor::CudnnNotSupported),
            (
                "Unable to find a valid cuDNN algorithm to run",
                Anchor::CudnnNoAlgorithm,
            ),
            ("CUDA_ERROR_OUT_OF_MEMORY: out", Anchor::CudaErrorCode),
            ("The model's max seq len (2048) is", Anchor::VllmMaxSeqLen),
            (
                "No available memory for the cache blocks.",
                Anchor::VllmNoCacheMemory,
            ),
            (
                "PyTorch CUDA memory summary, device ID 0",
                Anchor::SummaryHeader,
            ),
            (
                "DefaultCPUAllocator: not enough memory",
                Anchor::DefaultCpuAllocator,
            ),
            (
                "Error: model requires more system memory (4 GiB)",
                Anchor::OllamaSystemMemory,
            ),
            ("failed to allocate CUDA0 buffer", Anchor::FailedToAllocate),
            ("unable to allocate CUDA0 buffer", Anchor::UnableToAllocate),
            (
                "requested model (8.4 GiB) is too large for this system (1.9 GiB)",
                Anchor::OllamaTooLarge,
            ),
        ] {
            let t = Text::new(text);
            assert_eq!(
                next(&t, 0, t.len()).map(|h| h.anchor),
                Some(anchor),
                "{text}"
            );
        }
    }

    #[test]
    fn anchors_start_words() {
        let t = Text::new("timeout of memory; xCUBLAS_STATUS_ALLOC_FAILED");
        assert_eq!(next(&t, 0, t.len()), None);
    }

    #[test]
    fn span_ends_skip_tried_to_allocate_and_remember() {
        let t = Text::new("CUDA out of memory. Tried to allocate 1 MiB. HIP out of memory.");
        let mut ends = SpanEnds::default();
        assert_eq!(ends.next_after(&t, 18), Some(49));
        assert_eq!(ends.next_after(&t, 30), Some(49));
        assert_eq!(ends.next_after(&t, 50), None);
        assert_eq!(ends.next_after(&t, 60), None);
    }
}
