//! PyTorch's caching-allocator messages (CUDA, ROCm/HIP, XPU), in every wording.
//!
//! From `c10/cuda/CUDACachingAllocator.cpp` across releases:
//!
//! - 1.0–1.3: `Tried to allocate X (GPU n; T total capacity; A already allocated;
//!   F free; C cached)`, where "cached" is what the allocator holds *beyond* the
//!   allocated bytes (`amount_cached - amount_allocated`): reserved but unallocated.
//! - 1.4–2.0: `… F free; [L allowed; ]R reserved in total by PyTorch)`, later with the
//!   `max_split_size_mb` hint.
//! - 2.1+: `Tried to allocate X. GPU n has a total capacity of T of which F is free.`,
//!   then `Process P has M memory in use.` per NVML process (`Including non-PyTorch
//!   memory, this process has M …` for itself), `L allowed; `, and `Of the allocated
//!   memory A is allocated by PyTorch, [with C allocated in private pools (e.g., CUDA
//!   Graphs), ]and U is reserved by PyTorch but unallocated.` (A includes C.)
//! - `backend:cudaMallocAsync`: `Allocation on device n would exceed allowed memory.
//!   (out of memory)` then `Currently allocated : …` lines.

use super::Span;
use crate::model::{Allocator, Decoded, Era, Kind, ProcessUse};
use crate::scan::Text;
use crate::size::SiPrefixes;

const SI: SiPrefixes = SiPrefixes::Decimal;
/// The most `Process P has …` lines kept.
const MAX_PROCESSES: usize = 64;

/// Tracks how far into the span the message's text reaches.
struct Reader<'t, 'a> {
    t: &'t Text<'a>,
    from: usize,
    end: usize,
    consumed: usize,
}

impl Reader<'_, '_> {
    fn find(&mut self, phrase: &[u8]) -> Option<(usize, usize)> {
        let found = self.t.find(self.from, self.end, phrase);
        if let Some((_, e)) = found {
            self.consumed = self.consumed.max(e);
        }
        found
    }

    /// The size after `phrase`.
    fn size_after(&mut self, phrase: &[u8]) -> Option<u64> {
        let (_, e) = self.find(phrase)?;
        let (v, e) = self.t.size_after(e, self.end, SI)?;
        self.consumed = self.consumed.max(e);
        Some(v)
    }

    /// The size before `phrase` ("3.24 GiB is reserved …").
    fn size_before(&mut self, phrase: &[u8]) -> Option<u64> {
        let (s, _) = self.find(phrase)?;
        self.t.size_before(s, self.from, SI)
    }
}

/// A message opened by "out of memory" (CUDA, HIP, XPU or another device's copy).
pub(super) fn parse(t: &Text, kind: Kind, span: Span) -> (Decoded, usize) {
    let mut d = Decoded::new(kind);
    d.allocator = Some(Allocator::Native);
    let mut r = Reader {
        t,
        from: span.hit.start,
        end: span.end,
        consumed: span.hit.end,
    };
    body(&mut r, &mut d);
    (d, r.consumed)
}

/// A message cut before its request (pasted from its second line): it starts at the
/// `(GPU n; T total capacity; …)` list of the releases before 2.1, whose opening
/// parenthesis must be just before the anchor. It reads as truncated: the request is
/// lost.
pub(super) fn list_only(t: &Text, span: Span) -> Option<(Decoded, usize)> {
    let from = span.hit.start.saturating_sub(48).max(span.floor);
    let (open, _) = t
        .find(from, span.hit.start, b"(gpu")
        .or_else(|| t.find(from, span.hit.start, b"(npu"))?;
    let mut d = Decoded::new(Kind::PytorchOom);
    d.allocator = Some(Allocator::Native);
    let mut r = Reader {
        t,
        from: open,
        end: span.end,
        consumed: span.hit.end,
    };
    if !old_list(&mut r, &mut d) {
        return None;
    }
    d.truncated = true;
    finish(&mut r, &mut d);
    Some((d, r.consumed))
}

/// A message whose head was lost: it starts at "Tried to allocate". Only a size after
/// it makes it a message.
pub(super) fn headless(t: &Text, span: Span) -> Option<(Decoded, usize)> {
    if span.compact_before(t, 16).ends_with("you") {
        // "DefaultCPUAllocator: not enough memory: you tried to allocate N bytes."
        return None;
    }
    let (_, after) = t.size_after(span.hit.end, span.end, SI)?;
    let near = after.saturating_add(24).min(span.end);
    if t.find(after, near, b"pool").is_some() {
        return Some(super::others::mps(t, span));
    }
    t.find(after, near, b"gpu")?;
    Some(parse(t, Kind::PytorchOom, span))
}

fn body(r: &mut Reader, d: &mut Decoded) {
    let after_request = match r.find(b"tried to allocate") {
        Some((_, e)) => {
            if let Some((v, e2)) = r.t.size_after(e, r.end, SI) {
                d.requested_bytes = Some(v);
                r.consumed = r.consumed.max(e2);
                e2
            } else {
                e
            }
        }
        None => {
            d.truncated = true;
            return;
        }
    };
    r.from = after_request;
    let old = old_list(r, d);
    if !old {
        new_clauses(r, d);
    }
    finish(r, d);
}

/// What every allocator message ends with: the `max_split_size_mb` hint that dates it,
/// and the derived figures.
fn finish(r: &mut Reader, d: &mut Decoded) {
    let max_split_hint = r.find(b"max_split_size_mb").is_some();
    r.find(b"pytorch_cuda_alloc_conf");
    if d.pytorch_era.is_none() && max_split_hint {
        d.pytorch_era = Some(Era::V14To20);
    }
    if matches!(d.kind, Kind::XpuOom | Kind::NpuOom) {
        // Intel's and Ascend's wordings are not PyTorch's CUDA releases.
        d.pytorch_era = None;
    }
    derive(d);
}

/// The `(GPU n; T total capacity; …)` list of releases before 2.1. Returns whether it
/// was there.
fn old_list(r: &mut Reader, d: &mut Decoded) -> bool {
    let t = r.t;
    let near = r.from.saturating_add(24).min(r.end);
    // Ascend's torch_npu keeps this layout with its own device word ("(NPU 3; …;
    // 27.03 GiB current active; …)"); labels this reader does not know are skipped.
    let Some((_, e)) = t
        .find(r.from, near, b"(gpu")
        .or_else(|| t.find(r.from, near, b"(npu"))
    else {
        return false;
    };
    let mut j = e;
    if let Some((gpu, e)) = t.int_after(j, r.end) {
        d.gpu_index = u32::try_from(gpu).ok();
        j = e;
    }
    j = t.skip_ws(j, r.end);
    if t.at(j) == Some(b';') {
        j += 1;
    }
    let mut closed = false;
    let mut cached = None;
    // The list's last number: "reserved in total by PyTorch" (1.4–2.0, torch_npu) or
    // "cached" (1.0–1.3).
    let mut last_read = false;
    while let Some((value, e)) = t.size_after(j, r.end, SI) {
        let (label, e, terminator) = label(t, e, r.end);
        // A label cut by the end of the paste still names its field ("total capa").
        let label = match terminator {
            None if label.len() >= 3 => LABELS
                .iter()
                .find(|l| l.starts_with(label.as_str()))
                .map_or(label, |l| (*l).to_owned()),
            _ => label,
        };
        last_read = matches!(label.as_str(), "reservedintotalbypytorch" | "cached");
        match label.as_str() {
            "totalcapacity" => d.total_bytes = Some(value),
            "alreadyallocated" => d.allocated_bytes = Some(value),
            "currentactive" => d.active_bytes = Some(value),
            "free" => d.free_bytes = Some(value),
            "allowed" => d.allowed_bytes = Some(value),
            "reservedintotalbypytorch" => {
                d.reserved_total_bytes = Some(value);
                d.pytorch_era = Some(Era::V14To20);
            }
            "cached" => {
                cached = Some(value);
                d.pytorch_era = Some(Era::V2018);
            }
            _ => {}
        }
        j = e;
        r.consumed = r.consumed.max(e);
        match terminator {
            Some(b')') => {
                closed = true;
                break;
            }
            Some(_) => {}
            None => break,
        }
    }
    if t.at(t.skip_ws(j, r.end)) == Some(b')') {
        closed = true;
    }
    // 1.0–1.3 printed cached − allocated: the reserved bytes no tensor uses.
    d.reserved_unallocated_bytes = cached;
    if let (Some(a), Some(c)) = (d.allocated_bytes, cached) {
        d.reserved_total_bytes = a.checked_add(c);
    }
    // Cut after its last number (only the ")" missing), the message lost no number.
    d.truncated = !closed && !last_read;
    true
}

const LABELS: &[&str] = &[
    "totalcapacity",
    "alreadyallocated",
    "currentactive",
    "free",
    "allowed",
    "reservedintotalbypytorch",
    "cached",
];

/// The label after a size in the old list, as lowercase letters only ("totalcapacity"),
/// with the position after its `;` or `)` and which one it was.
fn label(t: &Text, from: usize, end: usize) -> (String, usize, Option<u8>) {
    let mut out = String::new();
    let mut j = from;
    let stop = from.saturating_add(64).min(end);
    while j < stop {
        match t.at(j) {
            Some(b @ (b';' | b')')) => return (out, j + 1, Some(b)),
            Some(b) if b.is_ascii_alphabetic() => out.push(char::from(b.to_ascii_lowercase())),
            Some(b'(') | None => break,
            _ => {}
        }
        j += 1;
    }
    (out, j, None)
}

/// The sentences of 2.1 and later.
fn new_clauses(r: &mut Reader, d: &mut Decoded) {
    let t = r.t;
    let near = r.from.saturating_add(24).min(r.end);
    if let Some((_, e)) = t.find(r.from, near, b"gpu ")
        && let Some((gpu, e)) = t.int_after(e, r.end)
    {
        d.gpu_index = u32::try_from(gpu).ok();
        r.consumed = r.consumed.max(e);
    }
    d.total_bytes = r
        .size_after(b"total capacity of")
        .or_else(|| r.size_after(b"total capacty of"));
    d.free_bytes = r.size_after(b"of which");
    r.find(b"is free");
    d.process_in_use_bytes = r.size_after(b"this process has");
    processes(r, d);
    d.allowed_bytes = r.size_before(b"allowed;");
    d.allocated_bytes = r.size_after(b"of the allocated memory");
    r.find(b"is allocated by pytorch");
    d.private_pools_bytes = r.size_before(b"allocated in private pools");
    r.find(b"cuda graphs)");
    d.reserved_unallocated_bytes = r.size_before(b"is reserved by pytorch but unallocated");
    r.find(b"expandable_segments");
    r.find(b"environment-variables)");
    r.find(b"release all unoccupied cached memory.");
    let new_format = d.total_bytes.is_some()
        || d.free_bytes.is_some()
        || d.allocated_bytes.is_some()
        || d.reserved_unallocated_bytes.is_some();
    if new_format {
        d.pytorch_era = Some(Era::V21Plus);
    }
    d.truncated = d.reserved_unallocated_bytes.is_none();
}

/// Every `Process P has M memory in use.` line.
fn processes(r: &mut Reader, d: &mut Decoded) {
    let t = r.t;
    let mut from = r.from;
    while d.other_processes.len() < MAX_PROCESSES {
        let Some((_, e)) = t.find(from, r.end, b"process ") else {
            break;
        };
        from = e;
        let Some((pid, e)) = t.int_after(e, r.end) else {
            continue;
        };
        let Some(e) = t.match_at(t.skip_ws(e, r.end), r.end, b"has") else {
            continue;
        };
        let Some((bytes, e)) = t.size_after(e, r.end, SI) else {
            continue;
        };
        d.other_processes.push(ProcessUse {
            pid,
            bytes,
            likely_self: false,
        });
        from = e;
        r.consumed = r.consumed.max(e);
    }
}

/// `backend:cudaMallocAsync`'s message.
pub(super) fn malloc_async(t: &Text, span: Span) -> (Decoded, usize) {
    let mut d = Decoded::new(Kind::PytorchOom);
    d.allocator = Some(Allocator::CudaMallocAsync);
    if let Some((_, e)) = t.find(span.start(t), span.hit.start, b"allocation on device") {
        d.gpu_index = t
            .int_after(e, span.hit.start)
            .and_then(|(g, _)| u32::try_from(g).ok());
    }
    let mut r = Reader {
        t,
        from: span.hit.end,
        end: span.end,
        consumed: span.hit.end,
    };
    d.allocated_bytes = r.size_after(b"currently allocated~:");
    d.requested_bytes = r.size_after(b"requested~:");
    d.total_bytes = r.size_after(b"device limit~:");
    d.free_bytes = r.size_after(b"free (according to cuda)~:");
    let limit = r.size_after(b"pytorch limit (set by user-supplied memory fraction)~:");
    // Without a fraction the limit prints as 2^64 bytes (size_t's maximum, rounded):
    // no limit at all. Anything from 2^63 bytes up can only be that.
    d.fraction_unset = limit.is_some_and(|l| l >= 1 << 63);
    d.allowed_bytes = limit.filter(|&l| l < 1 << 63 && d.total_bytes.is_none_or(|t| l < t));
    d.truncated = d.free_bytes.is_none();
    (d, r.consumed)
}

/// Fields that follow from others by arithmetic, never by estimate.
fn derive(d: &mut Decoded) {
    match d.pytorch_era {
        Some(Era::V14To20) | None if d.reserved_total_bytes.is_some() => {
            if d.reserved_unallocated_bytes.is_none()
                && let (Some(r), Some(a)) = (d.reserved_total_bytes, d.allocated_bytes)
            {
                d.reserved_unallocated_bytes = r.checked_sub(a);
            }
        }
        Some(Era::V21Plus) | None => {
            if let (Some(a), Some(u)) = (d.allocated_bytes, d.reserved_unallocated_bytes) {
                d.reserved_total_bytes = a.checked_add(u);
            }
        }
        _ => {}
    }
    mark_likely_self(d);
}

/// Without a "this process has" line, the one process holding at least what PyTorch
/// reserved (and not much more) is this one, seen through a container's pid namespace.
fn mark_likely_self(d: &mut Decoded) {
    if d.process_in_use_bytes.is_some() {
        return;
    }
    let Some(reserved) = d.reserved_total_bytes else {
        return;
    };
    let slack = d.total_bytes.map_or(4 << 30, |t| (t / 4).max(4 << 30));
    let best = d
        .other_processes
        .iter_mut()
        .filter(|p| p.bytes >= reserved && p.bytes - reserved <= slack)
        .min_by_key(|p| p.bytes - reserved);
    if let Some(p) = best {
        p.likely_self = true;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use crate::message::find_all;
    use crate::model::{Era, Kind};

    const GIB: u64 = 1 << 30;
    const MIB: u64 = 1 << 20;

    #[test]
    fn era_2018_cached_is_reserved_but_unallocated() {
        let m = &find_all(
            "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 11.00 GiB \
             total capacity; 10.00 GiB already allocated; 1.00 MiB free; 4.00 MiB cached)",
        )
        .messages[0];
        assert_eq!(m.pytorch_era, Some(Era::V2018));
        assert_eq!(m.reserved_unallocated_bytes, Some(4 * MIB));
        assert_eq!(m.reserved_total_bytes, Some(10 * GIB + 4 * MIB));
        assert!(!m.truncated);
    }

    /// Pasted from its second line: the `(GPU n; …)` list alone is still the message,
    /// marked cut; inside a whole message the list opens nothing of its own.
    #[test]
    fn a_list_without_its_first_line_is_still_decoded() {
        let found = find_all(
            "(GPU 0; 15.75 GiB total capacity; 79.11 MiB already allocated; 14.28 GiB free; \
             100.00 MiB reserved in total by PyTorch)",
        );
        let m = &found.messages[0];
        assert_eq!(m.kind, Kind::PytorchOom);
        assert_eq!(m.gpu_index, Some(0));
        assert_eq!(m.allocated_bytes, Some(82_952_847));
        assert_eq!(m.reserved_total_bytes, Some(100 * MIB));
        assert_eq!(m.requested_bytes, None);
        assert!(m.truncated);
        let whole = find_all(
            "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.75 GiB total capacity; \
             79.11 MiB already allocated; 14.28 GiB free; 100.00 MiB reserved in total by PyTorch)",
        );
        assert_eq!(whole.messages.len(), 1);
        assert_eq!(whole.messages[0].requested_bytes, Some(20 * MIB));
        assert_eq!(whole.messages[0].reserved_total_bytes, Some(100 * MIB));
        // "total capacity;" in running text without the list is no message.
        assert!(
            find_all("the total capacity; of the cluster")
                .messages
                .is_empty()
        );
    }

    #[test]
    fn era_14_reserved_in_total() {
        let m = &find_all(
            "CUDA out of memory. Tried to allocate 1.00 GiB (GPU 2; 16.00 GiB total capacity; \
             12.00 GiB already allocated; 512.00 MiB free; 14.00 GiB allowed; 13.00 GiB reserved \
             in total by PyTorch)",
        )
        .messages[0];
        assert_eq!(m.pytorch_era, Some(Era::V14To20));
        assert_eq!(m.gpu_index, Some(2));
        assert_eq!(m.allowed_bytes, Some(14 * GIB));
        assert_eq!(m.reserved_unallocated_bytes, Some(GIB));
    }

    #[test]
    fn era_21_sentences_and_processes() {
        let m = &find_all(
            "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of \
             24.00 GiB of which 1.00 GiB is free. Process 42 has 3.00 GiB memory in use. \
             Including non-PyTorch memory, this process has 20.00 GiB memory in use. Of the \
             allocated memory 16.00 GiB is allocated by PyTorch, with 1.00 GiB allocated in \
             private pools (e.g., CUDA Graphs), and 3.00 GiB is reserved by PyTorch but unallocated.",
        )
        .messages[0];
        assert_eq!(m.kind, Kind::PytorchOom);
        assert_eq!(m.pytorch_era, Some(Era::V21Plus));
        assert_eq!(m.process_in_use_bytes, Some(20 * GIB));
        assert_eq!(m.other_processes.len(), 1);
        assert_eq!(m.other_processes[0].pid, 42);
        assert!(!m.other_processes[0].likely_self);
        assert_eq!(m.private_pools_bytes, Some(GIB));
        assert_eq!(m.reserved_total_bytes, Some(19 * GIB));
        assert!(!m.truncated);
    }

    #[test]
    fn container_pid_is_probably_this_process() {
        let m = &find_all(
            "CUDA out of memory. Tried to allocate 1.25 GiB. GPU 1 has a total capacity of 93.02 \
             GiB of which 1.18 GiB is free. Process 2752205 has 91.82 GiB memory in use. Of the \
             allocated memory 90.63 GiB is allocated by PyTorch, and 120.54 MiB is reserved by \
             PyTorch but unallocated.",
        )
        .messages[0];
        assert!(m.other_processes[0].likely_self);
        assert_eq!(m.process_in_use_bytes, None);
    }

    #[test]
    fn an_old_list_cut_after_its_last_number_lost_nothing() {
        let m = &find_all(
            "CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 8.00 GiB total capacity; \
             6.00 GiB already allocated; 1.00 MiB free; 7.00 GiB reserved in total by PyTorch",
        )
        .messages[0];
        assert!(!m.truncated);
        assert_eq!(m.reserved_total_bytes, Some(7 * GIB));
    }

    #[test]
    fn truncated_old_list() {
        let m =
            &find_all("CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 8.00 GiB total capa")
                .messages[0];
        assert!(m.truncated);
        assert_eq!(m.pytorch_era, None);
        assert_eq!(m.total_bytes, Some(8 * GIB));
        assert_eq!(m.gpu_index, Some(0));
    }

    #[test]
    fn malloc_async_backend() {
        let m = &find_all(
            "torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of \
             memory)\nCurrently allocated : 9.43 GiB\nRequested : 640.00 MiB\nDevice limit : \
             11.59 GiB\nFree (according to CUDA): 7.12 MiB\nPyTorch limit (set by user-supplied \
             memory fraction)\n : 17179869184.00 GiB",
        )
        .messages[0];
        assert_eq!(m.kind, Kind::PytorchOom);
        assert_eq!(m.gpu_index, Some(0));
        assert_eq!(m.requested_bytes, Some(640 * MIB));
        assert_eq!(m.allowed_bytes, None);
        assert!(m.fraction_unset);
        assert!(!m.truncated);
    }
}
