//! The families outside the CUDA caching allocator: CUDA and library errors, Apple's MPS
//! allocator and vLLM's KV-cache check.
//!
//! - MPS (`aten/src/ATen/mps/MPSAllocator.mm`): `MPS backend out of memory (MPS
//!   allocated: A, other allocations: O[, max allowed: M]). Tried to allocate X on
//!   private|shared pool.` Its own `format_size` writes KB/MB/GB but divides by 1024.
//! - vLLM: `The model's max seq len (N) is larger than the maximum number of tokens that
//!   can be stored in KV cache (M).` and, in the V1 engine, `To serve at least one request
//!   with the model's max seq len (N), (X GiB KV cache is needed, which is larger than the
//!   available KV cache memory (Y GiB). Based on the available memory, the estimated
//!   maximum model length is E.`

use super::{Span, anchor};
use crate::model::{Decoded, Kind, KvCacheShortfall};
use crate::scan::Text;
use crate::size::SiPrefixes;

/// A message with no numbers: the anchor is all there is.
pub(super) fn bare(kind: Kind, span: Span) -> (Decoded, usize) {
    (Decoded::new(kind), span.hit.end)
}

/// A library error that names its device on the line ("CUBLAS_STATUS_ALLOC_FAILED ;
/// GPU=0 ;", as CNTK prints it).
pub(super) fn with_gpu_field(
    t: &Text,
    (mut d, consumed): (Decoded, usize),
    span: Span,
) -> (Decoded, usize) {
    let end = t.line_end(span.hit.end, span.end);
    if let Some((_, e)) = t.find(span.hit.end, end, b"gpu~=")
        && let Some((n, _)) = t.int_after(e, end)
    {
        d.gpu_index = u32::try_from(n).ok();
    }
    (d, consumed)
}

/// CUDA itself out of memory. What may follow in the same log: the device
/// ("current device: 1", ggml-cuda) and the size NCCL failed to get ("Failed to CUDA
/// calloc N bytes").
pub(super) fn driver(t: &Text, span: Span) -> (Decoded, usize) {
    let (mut d, mut consumed) = bare(Kind::DriverOom, span);
    d.gpu_index = nccl_device(t, span);
    let near = span.hit.end.saturating_add(400).min(span.end);
    if let Some((_, e)) = t.find(span.hit.end, near, b"current device:")
        && let Some((n, e)) = t.int_after(e, near)
    {
        d.gpu_index = u32::try_from(n).ok();
        consumed = consumed.max(e);
    }
    for phrase in [&b"failed to cuda calloc"[..], b"failed to cuda malloc"] {
        if let Some((_, e)) = t.find(span.hit.end, near, phrase)
            && let Some((n, e)) = t.int_after(e, near)
        {
            d.requested_bytes = Some(n);
            consumed = consumed.max(t.match_at(e, near, b" bytes").unwrap_or(e));
            break;
        }
    }
    (d, consumed)
}

/// XLA's allocator: "Out of memory while trying to allocate N bytes." (the anchor is
/// the "Out of memory").
pub(super) fn xla(t: &Text, span: Span) -> (Decoded, usize) {
    let mut d = Decoded::new(Kind::XlaOom);
    let end = span.hit.end.saturating_add(80).min(span.end);
    let mut consumed = span.hit.end;
    if let Some((_, e)) = t.find(span.hit.end, end, b"trying to allocate")
        && let Some((n, e)) = t.int_after(e, end)
    {
        d.requested_bytes = Some(n);
        consumed = t.match_at(e, end, b" bytes").unwrap_or(e);
    } else if let Some((_, e)) = t.find(span.hit.end, end, b"trying to allocate")
        && let Some((n, e)) = t.size_after(e, end, crate::size::SiPrefixes::Binary)
    {
        // Newer XLA prints a size: "…allocate 16.00GiB."
        d.requested_bytes = Some(n);
        consumed = e;
    }
    (d, consumed)
}

/// TensorFlow's BFC allocator: "OOM when allocating tensor with shape[32,1024,1024] and
/// type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc".
/// The bytes are not printed (only the shape), so none are decoded.
pub(super) fn tensorflow(t: &Text, span: Span) -> (Decoded, usize) {
    let mut d = Decoded::new(Kind::TfOom);
    let end = t.line_end(span.hit.end, span.end.min(span.hit.end.saturating_add(400)));
    let mut consumed = span.hit.end;
    if let Some((_, e)) = t.find(span.hit.end, end, b"device:gpu:")
        && let Some((n, e)) = t.int_after(e, end)
    {
        d.gpu_index = u32::try_from(n).ok();
        consumed = e;
    }
    if let Some((_, e)) = t.find(consumed, end, b"_bfc") {
        consumed = e;
    }
    (d, consumed)
}

/// TensorFlow's stream executor: "failed to allocate 17.79G (19104890880 bytes) from
/// device: CUDA_ERROR_OUT_OF_MEMORY: out of memory" (the exact bytes are in the
/// parentheses). Not TensorFlow's: `None`.
pub(super) fn stream_executor(t: &Text, span: Span) -> Option<(Decoded, usize)> {
    // The line goes on past the next anchor ("CUDA_ERROR_OUT_OF_MEMORY"), which is
    // part of this message.
    let end = t.line_end(span.hit.end, span.hit.end.saturating_add(200));
    let paren = t.find(span.hit.end, end.min(span.hit.end + 24), b" (")?;
    let (n, e) = t.int_after(paren.1, end)?;
    let e = t.match_at(e, end, b" bytes) from device")?;
    let mut d = Decoded::new(Kind::DriverOom);
    d.requested_bytes = Some(n);
    // The rest of the line ("…: CUDA_ERROR_OUT_OF_MEMORY: out of memory") is this
    // message, not another.
    let consumed = t.find(e, end, b"out of memory").map_or(e, |(_, stop)| stop);
    Some((d, consumed))
}

/// NCCL's log prefix names the CUDA device: `host:pid:tid [cudaDev] file:line NCCL WARN`
/// (`ncclDebugLog` in src/debug.cc).
fn nccl_device(t: &Text, span: Span) -> Option<u32> {
    let line = t.line_start(
        span.hit.start,
        span.floor.max(span.hit.start.saturating_sub(200)),
    );
    let head = t.slice_lossy(line, span.hit.start);
    let warn = head.find(" NCCL WARN")?;
    let before = head.get(..warn)?;
    let open = before.rfind(" [")?;
    let close = open + before.get(open..)?.find(']')?;
    before.get(open + 2..close)?.parse().ok()
}

/// "torch.OutOfMemoryError:" with no message we recognise after it (the rest was cut
/// off, or it is a wording we do not know). Not in code (`except …OutOfMemoryError:`),
/// not another runtime's class (`java.lang.OutOfMemoryError`).
pub(super) fn error_name_only(t: &Text, span: Span) -> Option<(Decoded, usize)> {
    let before = span.compact_before(t, 80);
    let (package, rest) = if let Some(rest) = before.strip_suffix("torch.cuda.") {
        ("torch.cuda.", rest)
    } else if let Some(rest) = before.strip_suffix("torch.") {
        ("torch.", rest)
    } else {
        ("", before.as_str())
    };
    if rest.ends_with('.')
        || rest.ends_with("except")
        || rest.ends_with("except(")
        || rest.ends_with(',')
    {
        return None;
    }
    let after = t.skip_ws(span.hit.end, span.end);
    if t.at(after) != Some(b':') {
        return None;
    }
    // Followed closely by a message we know: that message will carry the name.
    let near = span.hit.end.saturating_add(120).min(t.len());
    if anchor::next(t, span.hit.end, near).is_some() {
        return None;
    }
    let mut d = Decoded::new(Kind::PytorchOom);
    d.truncated = true;
    d.exception = Some(format!("{package}OutOfMemoryError"));
    Some((d, t.line_end(span.hit.end, span.end)))
}

/// `CUDNN_STATUS_NOT_SUPPORTED` is an OOM only when its message blames a workspace.
pub(super) fn cudnn_not_supported(t: &Text, span: Span) -> Option<(Decoded, usize)> {
    let end = span.hit.end.saturating_add(300).min(span.end);
    let (at, e) = t.find(span.start(t), end, b"workspace")?;
    let mut d = Decoded::new(Kind::CudnnOom);
    // cuDNN frontend: "no engine config fits the 4.00 GiB workspace limit".
    if t.match_at(e, end, b" limit").is_some() {
        d.workspace_limit_bytes = t.size_before(at, span.hit.end, SiPrefixes::Binary);
    }
    Some((d, e.max(span.hit.end)))
}

/// Apple's Metal allocator.
pub(super) fn mps(t: &Text, span: Span) -> (Decoded, usize) {
    const SI: SiPrefixes = SiPrefixes::Binary;
    let mut d = Decoded::new(Kind::MpsOom);
    let (from, end) = (span.hit.start, span.end);
    let mut consumed = span.hit.end;
    let mut size_after = |phrase: &[u8]| {
        let (_, e) = t.find(from, end, phrase)?;
        let (v, e) = t.size_after(e, end, SI)?;
        consumed = consumed.max(e);
        Some(v)
    };
    d.allocated_bytes = size_after(b"mps allocated~:");
    d.other_allocations_bytes = size_after(b"other allocations~:");
    d.total_bytes = size_after(b"max allowed~:");
    d.requested_bytes = size_after(b"tried to allocate");
    for pool in ["private", "shared"] {
        let phrase = format!("on {pool} pool");
        if let Some((_, e)) = t.find(from, end, phrase.as_bytes()) {
            d.pool = Some(pool.to_owned());
            consumed = consumed.max(e);
        }
    }
    if let Some((_, e)) = t.find(from, end, b"may cause system failure).") {
        consumed = consumed.max(e);
    }
    d.truncated = d.requested_bytes.is_none() || d.pool.is_none();
    (d, consumed)
}

/// vLLM's "max seq len (N)" check, in either wording.
pub(super) fn vllm_max_seq_len(t: &Text, span: Span) -> Option<(Decoded, usize)> {
    const SI: SiPrefixes = SiPrefixes::Decimal;
    let end = span.hit.end.saturating_add(600).min(span.end);
    let mut kv = KvCacheShortfall::default();
    let mut consumed = span.hit.end;
    if let Some((n, e)) = t.int_after(span.hit.end, end) {
        kv.max_seq_len = Some(n);
        consumed = e;
    }
    let mut find = |phrase: &[u8]| {
        let found = t.find(span.hit.end, end, phrase);
        if let Some((_, e)) = found {
            consumed = consumed.max(e);
        }
        found
    };
    let old = find(b"maximum number of tokens that can be stored in kv cache~(");
    if let Some((_, e)) = old {
        kv.max_kv_tokens = t.int_after(e, end).map(|(n, _)| n);
    }
    let needed = find(b"kv cache is needed");
    if let Some((s, _)) = needed {
        kv.needed_bytes = t.size_before(s, span.hit.end, SI);
    }
    if let Some((_, e)) = find(b"available kv cache memory~(") {
        kv.available_bytes = t.size_after(e, end, SI).map(|(v, _)| v);
    }
    if let Some((_, e)) = find(b"estimated maximum model length is") {
        kv.estimated_max_len = t.int_after(e, end).map(|(n, _)| n);
    }
    find(b"when initializing the engine.");
    if old.is_none()
        && needed.is_none()
        && !span
            .compact_before(t, 200)
            .contains("toserveatleastonerequest")
    {
        return None;
    }
    let mut d = Decoded::new(Kind::VllmKvCache);
    d.truncated = (old.is_some() && kv.max_kv_tokens.is_none())
        || (old.is_none() && kv.available_bytes.is_none());
    d.kv_cache = Some(kv);
    Some((d, consumed))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use crate::message::find_all;
    use crate::model::Kind;

    #[test]
    fn mps_sizes_are_binary() {
        let m = &find_all(
            "RuntimeError: MPS backend out of memory (MPS allocated: 1.00 GB, other allocations: \
             2.00 MB, max allowed: 18.13 GB). Tried to allocate 256.00 MB on private pool. Use \
             PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations \
             (may cause system failure).",
        )
        .messages[0];
        assert_eq!(m.kind, Kind::MpsOom);
        assert_eq!(m.allocated_bytes, Some(1 << 30));
        assert_eq!(m.other_allocations_bytes, Some(2 << 20));
        assert_eq!(m.requested_bytes, Some(256 << 20));
        assert_eq!(m.pool.as_deref(), Some("private"));
        assert!(!m.truncated);
        assert!(m.excerpt.ends_with("system failure)."));
    }

    #[test]
    fn vllm_both_wordings() {
        let m = &find_all(
            "ValueError: The model's max seq len (32768) is larger than the maximum number of \
             tokens that can be stored in KV cache (18224). Try increasing",
        )
        .messages[0];
        let kv = m.kv_cache.as_ref().unwrap();
        assert_eq!(
            (kv.max_seq_len, kv.max_kv_tokens),
            (Some(32768), Some(18224))
        );
        let m = &find_all(
            "ValueError: To serve at least one request with the models's max seq len (131072), \
             (16.00 GiB KV cache is needed, which is larger than the available KV cache memory \
             (8.37 GiB). Based on the available memory, the estimated maximum model length is \
             68544.",
        )
        .messages[0];
        let kv = m.kv_cache.as_ref().unwrap();
        assert_eq!(kv.needed_bytes, Some(16 << 30));
        assert_eq!(kv.available_bytes, Some(8_987_219_067));
        assert_eq!(kv.estimated_max_len, Some(68544));
        assert!(!m.truncated);
    }

    #[test]
    fn cudnn_not_supported_needs_a_workspace() {
        assert!(find_all("cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input.").messages.is_empty());
        let m = &find_all("CUDNN_STATUS_NOT_SUPPORTED: could not allocate the 2.00 GiB workspace")
            .messages[0];
        assert_eq!(m.kind, Kind::CudnnOom);
    }

    /// Older and rarer wordings: each is one message of its family, with the numbers it
    /// printed.
    #[test]
    fn rare_wordings_of_other_frameworks() {
        let tf = &find_all(
            "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when \
             allocating tensor with shape[32,1024,1024] and type float on \
             /job:localhost/replica:0/task:0/device:GPU:1 by allocator GPU_1_bfc",
        )
        .messages;
        assert_eq!(tf.len(), 1, "{tf:?}");
        assert_eq!((tf[0].kind, tf[0].gpu_index), (Kind::TfOom, Some(1)));
        for (text, kind, requested, free) in [
            (
                "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=405 error=2 : out of memory",
                Kind::DriverOom,
                None,
                None,
            ),
            (
                "cuda failed with error 2 out of memory",
                Kind::DriverOom,
                None,
                None,
            ),
            (
                "RuntimeError: [enforce fail at event_gpu.cc:33] error == cudaSuccess. 2 vs 0. \
                 Error at: caffe2/core/event_gpu.cc:33: out of memory",
                Kind::DriverOom,
                None,
                None,
            ),
            (
                "E tensorflow/stream_executor/cuda/cuda_driver.cc:806] failed to allocate 17.79G \
                 (19104890880 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
                Kind::DriverOom,
                Some(19_104_890_880),
                None,
            ),
            (
                "Error: requested model (8.4 GiB) is too large for this system (1.9 GiB)",
                Kind::HostOom,
                Some(9_019_431_322),
                Some(2_040_109_466),
            ),
        ] {
            let m = &find_all(text).messages;
            assert_eq!(m.len(), 1, "{text}: {m:?}");
            assert_eq!(
                (m[0].kind, m[0].requested_bytes, m[0].free_bytes),
                (kind, requested, free),
                "{text}"
            );
        }
    }

    #[test]
    fn error_name_alone() {
        let m = &find_all("torch.OutOfMemoryError: Allocation on dev").messages[0];
        assert_eq!(m.kind, Kind::PytorchOom);
        assert!(m.truncated);
        assert_eq!(m.exception.as_deref(), Some("torch.OutOfMemoryError"));
    }
}
