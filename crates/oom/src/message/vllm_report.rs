//! vLLM's start-up memory report: the numbers behind "No available memory for the cache
//! blocks" and the max-seq-len refusal, and what a server that started is working with.
//!
//! Wordings, from vLLM's worker (`Worker.determine_num_available_blocks`, then
//! `gpu_worker.py`) and `kv_cache_utils.py`:
//! - 0.6–0.8: `Memory profiling takes S seconds` / `the current vLLM instance can use
//!   total_gpu_memory (79.11GiB) x gpu_memory_utilization (0.90) = 71.20GiB` / `model
//!   weights take 14.99GiB; non_torch_memory takes 0.35GiB; PyTorch activation peak
//!   memory takes 1.24GiB; the rest of the memory reserved for KV Cache is 54.62GiB.`
//! - 0.9 and later: `Memory profiling takes S seconds. Total non KV cache memory: 16.51GiB;
//!   torch peak memory increase: 1.21GiB; non-torch forward increase memory: 0.21GiB;
//!   weights memory: 14.99GiB.` / `Available KV cache memory: 55.05 GiB` / `GPU KV cache
//!   size: 447,088 tokens` / `Maximum concurrency for 32,768 tokens per request: 13.64x`.
//!
//! Sizes are `x / GiB_bytes` printed with two decimals: binary units.

use super::Span;
use crate::model::{Decoded, Kind, VllmMemory};
use crate::scan::Text;
use crate::size::SiPrefixes;

/// How far after its anchor a report's fields are searched.
const REACH: usize = 1200;

pub(super) fn report(t: &Text, span: Span) -> (Decoded, usize) {
    const SI: SiPrefixes = SiPrefixes::Binary;
    let (from, end) = (
        span.hit.start,
        span.hit.start.saturating_add(REACH).min(span.end),
    );
    let mut consumed = span.hit.end;
    let mut m = VllmMemory::default();
    let mut size = |phrase: &[u8]| -> Option<u64> {
        let (_, e) = t.find(from, end, phrase)?;
        let (v, e) = t.size_after(e, end, SI)?;
        consumed = consumed.max(e);
        Some(v)
    };
    // Three layouts name the same numbers: "name (X)" / "name takes X" (0.6–0.8),
    // "name=X" (0.6's one-line "Memory profiling results"), and "name   X" (the table
    // of later 0.6 builds); the first that reads is taken.
    m.total_gpu_bytes = size(b"total_gpu_memory~(")
        .or_else(|| size(b"total_gpu_memory~="))
        .or_else(|| size(b"total_gpu_memory"));
    m.weights_bytes = size(b"model weights take").or_else(|| size(b"weights memory:"));
    // "Loading model weights took 14.9888 GB" (0.4–0.6) and "Model loading took 14.9889
    // GiB" (V1) print GiB, whatever the unit says.
    m.model_loading_bytes =
        size(b"loading model weights took").or_else(|| size(b"model loading took"));
    m.peak_torch_bytes = size(b"peak_torch_memory~=");
    m.initial_usage_bytes = size(b"initial_memory_usage~=");
    m.post_profile_usage_bytes = size(b"memory_usage_post_profile~=");
    m.non_torch_bytes = size(b"non_torch_memory takes")
        .or_else(|| size(b"non_torch_memory~="))
        .or_else(|| size(b"non_torch_memory"))
        .or_else(|| size(b"non-torch forward increase memory:"));
    m.activation_peak_bytes = size(b"pytorch activation peak memory takes")
        .or_else(|| size(b"pytorch activation peak memory"))
        .or_else(|| size(b"torch peak memory increase:"));
    m.non_kv_bytes = size(b"total non kv cache memory:");
    m.kv_cache_bytes = size(b"reserved for kv cache is")
        .or_else(|| size(b"available kv cache memory:"))
        .or_else(|| size(b"available_kv_cache_memory"))
        .or_else(|| size(b"kv_cache_size~="));
    let utilization = [
        &b"gpu_memory_utilization~("[..],
        b"gpu_memory_utilization~=",
        b"gpu_memory_utilization",
    ]
    .iter()
    .find_map(|p| {
        let (_, e) = t.find(from, end, p)?;
        basis_points(t, e, end)
    });
    if let Some((bp, e)) = utilization {
        m.utilization_bp = u32::try_from(bp).ok();
        m.utilization_percent = u32::try_from(bp / 100).ok();
        consumed = consumed.max(e);
        if let Some(e) = t.match_at(t.skip_ws(e, end), end, b")~=")
            && let Some((v, e)) = t.size_after(e, end, SI)
        {
            m.budget_bytes = Some(v);
            consumed = consumed.max(e);
        }
    }
    if m.budget_bytes.is_none()
        && let Some((_, e)) = t.find(from, end, b"the current vllm instance can use")
        && let Some((v, e)) = t.size_after(e, end, SI)
    {
        m.budget_bytes = Some(v);
        consumed = consumed.max(e);
    }
    if let Some((_, e)) = t.find(from, end, b"gpu kv cache size:")
        && let Some((n, e)) = grouped_int(t, e, end)
    {
        m.kv_cache_tokens = Some(n);
        consumed = consumed.max(t.match_at(e, end, b" tokens").unwrap_or(e));
    }
    if let Some((_, e)) = t.find(from, end, b"maximum concurrency for")
        && let Some((n, e)) = grouped_int(t, e, end)
    {
        m.concurrency_tokens = Some(n);
        consumed = consumed.max(e);
        if let Some(e) = t.match_at(e, end, b" tokens per request:")
            && let Some((x, e)) = hundredths(t, e, end)
        {
            m.concurrency_x100 = Some(x);
            consumed = consumed.max(t.match_at(e, end, b"x").unwrap_or(e));
        }
    }
    let mut blocks = |phrase: &[u8]| {
        let (_, e) = t.find(from, end, phrase)?;
        let (n, e) = t.int_after(e, end)?;
        consumed = consumed.max(e);
        Some(n)
    };
    // vLLM 0.7's executor says "# CUDA blocks: 6001".
    m.gpu_blocks = blocks(b"gpu blocks:").or_else(|| blocks(b"cuda blocks:"));
    m.cpu_blocks = blocks(b"cpu blocks:");
    // vLLM 0.19 and 0.21+ say whether the CUDA graphs' estimate came out of the KV
    // cache, right after "Available KV cache memory".
    m.cuda_graphs_reserved = [
        (&b"cuda graph memory profiling is enabled"[..], true),
        (b"cuda graph memory profiling will be enabled", false),
    ]
    .iter()
    .find_map(|&(phrase, reserved)| {
        let (_, e) = t.find(from, end, phrase)?;
        consumed = consumed.max(e);
        Some(reserved)
    });
    let mut d = Decoded::new(Kind::VllmProfile);
    d.vllm_memory = Some(m);
    (d, consumed)
}

/// A decimal integer that may group thousands with commas ("447,088").
/// vLLM's worker start-up check (`init_device` in vllm/v1/worker/gpu_worker.py): "Free
/// memory on device (31.44/47.38 GiB) on startup is less than desired GPU memory
/// utilization (0.95, 45.01 GiB). Decrease GPU memory utilization or reduce GPU memory
/// used by other processes." Newer builds name the device ("on device cuda:0 (…)"). The
/// anchor is the middle of the sentence: free and total memory come before it on its
/// line, the utilization and the memory it asks for after. Sizes are GiB with two
/// decimals (`round(x / GiB_bytes, 2)`).
pub(super) fn startup(t: &Text, span: Span) -> (Decoded, usize) {
    const GIB: u64 = 1 << 30;
    // round(x · 2^30), as every other size this crate reads.
    let gib = |hundredths: u64| hundredths.saturating_mul(GIB).saturating_add(50) / 100;
    let mut d = Decoded::new(Kind::VllmStartup);
    let mut m = VllmMemory::default();
    let line = t.line_start(span.hit.start, span.floor);
    let before = span.hit.start;
    if let Some((_, e)) = t.find(line, before, b"free memory on device") {
        if let Some((_, c)) = t.find(e, before, b"cuda:") {
            d.gpu_index = t
                .int_after(c, before)
                .and_then(|(n, _)| u32::try_from(n).ok());
        }
        let pair = t.position(e, before, |b| b == b'(').and_then(|open| {
            let (free, j) = hundredths(t, open + 1, before)?;
            let slash = t.skip_ws(j, before);
            (t.at(slash) == Some(b'/')).then_some(())?;
            let (total, k) = hundredths(t, slash + 1, before)?;
            t.match_at(t.skip_ws(k, before), before, b"gib")?;
            Some((gib(free), gib(total)))
        });
        if let Some((free, total)) = pair {
            d.free_bytes = Some(free);
            d.total_bytes = Some(total);
            m.total_gpu_bytes = Some(total);
        }
    }
    let end = span.hit.end.saturating_add(200).min(span.end);
    let mut consumed = span.hit.end;
    if let Some(open) = t.position(span.hit.end, end, |b| b == b'(')
        && let Some((bp, j)) = basis_points(t, open + 1, end)
    {
        m.utilization_bp = u32::try_from(bp).ok();
        m.utilization_percent = u32::try_from(bp / 100).ok();
        consumed = j;
        let comma = t.skip_ws(j, end);
        if t.at(comma) == Some(b',')
            && let Some((asked, k)) = t.size_after(comma + 1, end, SiPrefixes::Binary)
        {
            m.budget_bytes = Some(asked);
            consumed = k;
        }
    }
    if let Some((_, e)) = t.find(consumed, end, b"used by other processes") {
        consumed = e;
    }
    d.truncated = d.free_bytes.is_none() || m.budget_bytes.is_none();
    d.vllm_memory = Some(m);
    (d, consumed)
}

fn grouped_int(t: &Text, i: usize, end: usize) -> Option<(u64, usize)> {
    let (mut value, mut j) = t.int_after(i, end)?;
    while t.at(j) == Some(b',') && j < end && t.at(j + 1).is_some_and(|b| b.is_ascii_digit()) {
        let (group, e) = t.int_after(j + 1, end)?;
        if e - (j + 1) != 3 {
            break;
        }
        value = value.checked_mul(1000)?.checked_add(group)?;
        j = e;
    }
    Some((value, j))
}

/// "0.90" or "13.64" in hundredths (90, 1364); one decimal counts as tenths.
fn hundredths(t: &Text, i: usize, end: usize) -> Option<(u64, usize)> {
    fixed(t, i, end, 2)
}

/// A fraction of the card in basis points: "0.9764" → 9764 (vLLM prints the float as
/// given, "0.9" as often as "0.90").
fn basis_points(t: &Text, i: usize, end: usize) -> Option<(u64, usize)> {
    fixed(t, i, end, 4)
}

/// A decimal at `i` times 10^`places`, further decimals skipped, not rounded.
fn fixed(t: &Text, i: usize, end: usize, places: u32) -> Option<(u64, usize)> {
    let (whole, j) = t.int_after(i, end)?;
    let whole = whole.checked_mul(10u64.pow(places))?;
    if t.at(j) != Some(b'.') || j + 1 >= end {
        return Some((whole, j));
    }
    let start = j + 1;
    let mut frac = 0u64;
    let mut k = start;
    while k < end && k - start < places as usize && t.at(k).is_some_and(|b| b.is_ascii_digit()) {
        frac = frac * 10 + u64::from(t.at(k).unwrap_or(b'0') - b'0');
        k += 1;
    }
    let read = u32::try_from(k - start).unwrap_or(places);
    if read == 0 {
        return Some((whole, j));
    }
    let frac = frac * 10u64.pow(places - read);
    while k < end && t.at(k).is_some_and(|b| b.is_ascii_digit()) {
        k += 1;
    }
    Some((whole.checked_add(frac)?, k))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use crate::explain;
    use crate::model::Kind;

    const GIB: f64 = (1u64 << 30) as f64;
    fn gib(x: f64) -> u64 {
        (x * GIB).round() as u64
    }

    /// vllm-project/vllm#20305 (v0.9.1) and, naming the device, pytorch/pytorch#175666
    /// (vLLM on an L4 with PyTorch 2.11).
    #[test]
    fn the_start_up_check_in_both_wordings() {
        let e = explain(
            "[multiproc_executor.py:492] ValueError: Free memory on device (31.44/47.38 GiB) \
             on startup is less than desired GPU memory utilization (0.95, 45.01 GiB). \
             Decrease GPU memory utilization or reduce GPU memory used by other processes.",
        );
        let d = &e.primary;
        assert_eq!(d.kind, Kind::VllmStartup);
        assert_eq!(d.free_bytes, Some(gib(31.44)));
        assert_eq!(d.total_bytes, Some(gib(47.38)));
        let m = d.vllm_memory.as_ref().unwrap();
        assert_eq!(m.utilization_bp, Some(9500));
        assert_eq!(m.budget_bytes, Some(gib(45.01)));
        assert!(!d.truncated);
        assert_eq!(e.diagnosis[0].id, crate::CauseId::OtherProcess);

        let e = explain(
            "ValueError: Free memory on device cuda:0 (19.77/22.05 GiB) on startup is less \
             than desired GPU memory utilization (0.9, 19.84 GiB). Decrease GPU memory \
             utilization or reduce GPU memory used by other processes.",
        );
        let d = &e.primary;
        assert_eq!(d.gpu_index, Some(0));
        assert_eq!(
            (d.free_bytes, d.total_bytes),
            (Some(gib(19.77)), Some(gib(22.05)))
        );
        assert_eq!(d.vllm_memory.as_ref().unwrap().utilization_bp, Some(9000));
        // Newer vLLM prints the fraction as given, to four decimals and more.
        let fine = explain(
            "ValueError: Free memory on device cuda:0 (19.77/22.05 GiB) on startup is less \
             than desired GPU memory utilization (0.97645, 21.53 GiB). Decrease GPU memory \
             utilization or reduce GPU memory used by other processes.",
        );
        let m = fine.primary.vllm_memory.as_ref().unwrap();
        assert_eq!(m.utilization_bp, Some(9764));
        assert_eq!(m.utilization_text().as_deref(), Some("97,64"));
        // The fix names the largest utilization that fits what was free: 19.77 / 22.05.
        assert!(
            e.diagnosis[0].fix.contains("0,89"),
            "{}",
            e.diagnosis[0].fix
        );

        // Cut before the numbers: still the start-up check, marked truncated.
        let e = explain("on startup is less than desired GPU memory utilization");
        assert_eq!(e.primary.kind, Kind::VllmStartup);
        assert!(e.primary.truncated);
    }

    #[test]
    fn old_report_every_number() {
        let e = explain(
            "INFO 03-14 09:13:07 [gpu_worker.py:227] Memory profiling takes 11.85 seconds\n\
             the current vLLM instance can use total_gpu_memory (79.11GiB) x gpu_memory_utilization (0.90) = 71.20GiB\n\
             model weights take 14.99GiB; non_torch_memory takes 0.35GiB; PyTorch activation peak memory takes 1.24GiB;\n\
             the rest of the memory reserved for KV Cache is 54.62GiB.\n\
             INFO 03-14 09:13:08 [kv_cache_utils.py:566] GPU KV cache size: 447,088 tokens\n\
             INFO 03-14 09:13:08 [kv_cache_utils.py:570] Maximum concurrency for 32,768 tokens per request: 13.64x",
        );
        assert_eq!(e.primary.kind, Kind::VllmProfile);
        let m = e.primary.vllm_memory.unwrap();
        assert_eq!(m.total_gpu_bytes, Some(gib(79.11)));
        assert_eq!(m.utilization_bp, Some(9000));
        assert_eq!(m.budget_bytes, Some(gib(71.20)));
        assert_eq!(m.weights_bytes, Some(gib(14.99)));
        assert_eq!(m.non_torch_bytes, Some(gib(0.35)));
        assert_eq!(m.activation_peak_bytes, Some(gib(1.24)));
        assert_eq!(m.kv_cache_bytes, Some(gib(54.62)));
        assert_eq!(m.kv_cache_tokens, Some(447_088));
        assert_eq!(
            (m.concurrency_tokens, m.concurrency_x100),
            (Some(32_768), Some(1364))
        );
    }

    /// vLLM 0.6.4's one-line report and the block counts of its era (vllm#10517).
    #[test]
    fn the_one_line_report_and_block_counts() {
        let e = explain(
            "INFO 11-20 10:00:00 model_runner.py:1077] Loading model weights took 14.9888 GB\n\
             INFO 11-20 10:00:05 worker.py:232] Memory profiling results: total_gpu_memory=23.58GiB \
             initial_memory_usage=15.34GiB peak_torch_memory=17.06GiB memory_usage_post_profile=15.35GiB \
             non_torch_memory=0.35GiB kv_cache_size=3.81GiB gpu_memory_utilization=0.90\n\
             INFO 11-20 10:00:05 gpu_executor.py:113] # GPU blocks: 1952, # CPU blocks: 2048",
        );
        assert_eq!(e.primary.kind, Kind::VllmProfile, "{e:?}");
        assert!(e.messages.is_empty(), "{:?}", e.messages);
        let m = e.primary.vllm_memory.unwrap();
        assert_eq!(m.model_loading_bytes, Some(16_094_101_452));
        assert_eq!(m.peak_torch_bytes, Some(gib(17.06)));
        assert_eq!(m.initial_usage_bytes, Some(gib(15.34)));
        assert_eq!(m.post_profile_usage_bytes, Some(gib(15.35)));
        assert_eq!(m.kv_cache_bytes, Some(gib(3.81)));
        assert_eq!((m.gpu_blocks, m.cpu_blocks), (Some(1952), Some(2048)));
    }

    #[test]
    fn new_report_spread_over_lines_is_one_message() {
        let e = explain(
            "DEBUG Memory profiling takes 1.21 seconds. Total non KV cache memory: 11.76GiB; \
             torch peak memory increase: 0.71GiB; non-torch forward increase memory: 0.21GiB; \
             weights memory: 10.84GiB.\n\
             INFO Available KV cache memory: 16.46 GiB\n\
             INFO GPU KV cache size: 119,856 tokens",
        );
        assert!(e.messages.is_empty(), "{:?}", e.messages);
        let m = e.primary.vllm_memory.unwrap();
        assert_eq!(m.non_kv_bytes, Some(gib(11.76)));
        assert_eq!(m.activation_peak_bytes, Some(gib(0.71)));
        assert_eq!(m.non_torch_bytes, Some(gib(0.21)));
        assert_eq!(m.weights_bytes, Some(gib(10.84)));
        assert_eq!(m.kv_cache_bytes, Some(gib(16.46)));
        assert_eq!(m.kv_cache_tokens, Some(119_856));
    }

    #[test]
    fn an_error_takes_the_report_printed_before_it() {
        let e = explain(
            "INFO worker.py:241] Memory profiling takes 129.95 seconds\n\
             INFO worker.py:241] the current vLLM instance can use total_gpu_memory (44.39GiB) x gpu_memory_utilization (0.92) = 40.84GiB\n\
             INFO worker.py:241] model weights take 21.67GiB; non_torch_memory takes 0.36GiB; PyTorch activation peak memory takes 15.73GiB; the rest of the memory reserved for KV Cache is 3.09GiB.\n\
             ValueError: The model's max seq len (131072) is larger than the maximum number of tokens that can be stored in KV cache (25280). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
        );
        assert_eq!(e.primary.kind, Kind::VllmKvCache);
        let m = e.primary.vllm_memory.as_ref().unwrap();
        assert_eq!(m.activation_peak_bytes, Some(gib(15.73)));
        let cause = &e.diagnosis[0];
        assert!(
            cause.explanation.contains("15,73 GiB de activaciones"),
            "{}",
            cause.explanation
        );
        assert!(
            cause.fix.contains("--max-num-batched-tokens"),
            "{}",
            cause.fix
        );
    }
}
