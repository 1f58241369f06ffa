//! What the image and video front ends print about memory next to the error itself:
//! ComfyUI's model loader and AUTOMATIC1111's (and Forge's) memory footer. Neither is an
//! error; both say how the memory was being used when the error came, so they are read
//! from the whole paste and attached to the message the diagnosis is about.
//!
//! - ComfyUI `comfy/model_patcher.py` (`ModelPatcher.load`): `loaded partially; {:.2f}
//!   MB usable, {:.2f} MB loaded, {:.2f} MB offloaded[, {:.2f} MB buffer reserved],
//!   lowvram patches: {}` and `loaded completely; {:.2f} MB usable, {:.2f} MB loaded,
//!   full load: {}`, every figure divided by `1024 * 1024` (so "MB" is MiB); the model's
//!   name comes from `Requested to load X` (`comfy/model_management.py`).
//! - AUTOMATIC1111 `modules/call_queue.py`: `A: {:.2f} GB, R: {:.2f} GB, Sys:
//!   {:.1f}/{:g} GB ({:.1f}%)`, from `modules/memmon.py`'s peaks of
//!   `active_bytes.all.peak`, `reserved_bytes.all.peak` and `total − free`
//!   (`cudaMemGetInfo`), each rounded up to MiB and divided by 1024 (so "GB" is GiB).

use crate::model::FrontendMemory;
use crate::scan::Text;
use crate::size::SiPrefixes;

/// The last ComfyUI load line and the last webui footer of the paste, if any.
pub(crate) fn read(cleaned: &str) -> Option<FrontendMemory> {
    let t = Text::new(cleaned);
    comfy(&t).or_else(|| webui(&t))
}

/// Start of the last match of `phrase` (each search resumes after the previous match,
/// so the walk is linear).
fn last(t: &Text, phrase: &[u8]) -> Option<(usize, usize)> {
    let mut found = None;
    let mut from = 0;
    while let Some((s, e)) = t.find(from, t.len(), phrase) {
        found = Some((s, e));
        from = e.max(s + 1);
    }
    found
}

fn comfy(t: &Text) -> Option<FrontendMemory> {
    let partial = last(t, b"loaded partially;");
    let complete = last(t, b"loaded completely;");
    let (start, e) = match (partial, complete) {
        (Some(p), Some(c)) => {
            if p.0 > c.0 {
                p
            } else {
                c
            }
        }
        (p, c) => p.or(c)?,
    };
    // The rest of the line (flattened pastes put the error on it too: at most 240 bytes).
    let end = t.line_end(e, e.saturating_add(240));
    let mut m = FrontendMemory {
        frontend: "comfyui".to_owned(),
        ..FrontendMemory::default()
    };
    let mib = |phrase: &[u8]| {
        let (s, _) = t.find(e, end, phrase)?;
        t.size_before(s, e, SiPrefixes::Binary)
    };
    m.usable_bytes = mib(b" usable");
    m.loaded_bytes = mib(b" loaded");
    m.offloaded_bytes = mib(b" offloaded");
    m.buffer_reserved_bytes = mib(b" buffer reserved");
    m.lowvram_patches = t
        .find(e, end, b"lowvram patches:")
        .and_then(|(_, p)| t.int_after(p, end))
        .map(|(n, _)| n);
    if m.usable_bytes.is_none() && m.loaded_bytes.is_none() {
        return None;
    }
    m.full_load = t.find(e, end, b"full load:~").and_then(|(_, p)| {
        if t.match_at(p, end, b"true").is_some() {
            Some(true)
        } else if t.match_at(p, end, b"false").is_some() {
            Some(false)
        } else {
            None
        }
    });
    // "Requested to load WAN21" before it (a word: letters, digits, '_', '.', '-').
    let window = start.saturating_sub(400);
    let mut name_at = None;
    let mut from = window;
    while let Some((_, p)) = t.find(from, start, b"requested to load ") {
        name_at = Some(p);
        from = p;
    }
    m.model = name_at.and_then(|p| {
        let p = t.skip_ws(p, start);
        let mut q = p;
        while q < start
            && q - p < 80
            && t.at(q)
                .is_some_and(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
        {
            q += 1;
        }
        (q > p).then(|| t.slice_lossy(p, q))
    });
    Some(m)
}

fn webui(t: &Text) -> Option<FrontendMemory> {
    // "A: 2.82 GB, R: 2.90 GB, Sys: 3.8/3.8125 GB (99.7%)"
    let (_, e) = last(t, b"sys:~")?;
    let line_start = t.line_start(e, 0);
    let line_end = t.line_end(e, t.len());
    let mut m = FrontendMemory {
        frontend: "webui".to_owned(),
        ..FrontendMemory::default()
    };
    // "A:" and "R:" as keys of their own, not the end of a longer word ("data:").
    let gib = |phrase: &[u8]| {
        let mut from = line_start;
        loop {
            let (s, p) = t.find(from, line_end, phrase)?;
            if s == line_start || !t.at(s - 1).is_some_and(|b| b.is_ascii_alphabetic()) {
                return t
                    .size_after(p, line_end, SiPrefixes::Binary)
                    .map(|(v, _)| v);
            }
            from = p;
        }
    };
    m.active_peak_bytes = gib(b"a:");
    m.reserved_peak_bytes = gib(b"r:");
    // "3.8/3.8125 GB": the peak's unit is the total's.
    let peak_end = t.position(e, line_end, |b| b == b'/')?;
    let peak_text = t.slice_lossy(e, peak_end);
    let peak_text = peak_text.trim();
    if peak_text.is_empty() || !peak_text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let (total, after) = t.size_after(peak_end + 1, line_end, SiPrefixes::Binary)?;
    let unit = t.slice_lossy(t.skip_ws(after.saturating_sub(3), line_end), after);
    m.system_total_bytes = Some(total);
    m.system_peak_bytes =
        crate::size::parse_size_as(&format!("{peak_text} {}", unit.trim()), SiPrefixes::Binary)
            .ok();
    // A footer needs at least the two peaks PyTorch measured.
    (m.active_peak_bytes.is_some() || m.reserved_peak_bytes.is_some()).then_some(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
    const MIB: f64 = 1024.0 * 1024.0;

    fn bytes(x: f64, unit: f64) -> Option<u64> {
        Some((x * unit).round() as u64)
    }

    #[test]
    fn comfyui_partial_load_with_and_without_the_buffer() {
        for (line, buffer) in [
            (
                "Requested to load WAN21\nloaded partially; 5167.08 MB usable, 5167.08 MB loaded, \
                 4633.39 MB offloaded, lowvram patches: 0\n",
                None,
            ),
            (
                "got prompt\nRequested to load Flux\nloaded partially; 10240.00 MB usable, \
                 10239.50 MB loaded, 12000.25 MB offloaded, 512.00 MB buffer reserved, \
                 lowvram patches: 3\n",
                bytes(512.0, MIB),
            ),
        ] {
            let m = read(line).unwrap();
            assert_eq!(m.frontend, "comfyui");
            assert_eq!(m.buffer_reserved_bytes, buffer, "{line}");
            assert!(m.usable_bytes.is_some() && m.loaded_bytes.is_some());
            assert!(m.offloaded_bytes.is_some() && m.lowvram_patches.is_some());
            assert_eq!(m.full_load, None);
        }
        let m = read("Requested to load WAN21\nloaded partially; 5167.08 MB usable, 5167.08 MB loaded, 4633.39 MB offloaded, lowvram patches: 0").unwrap();
        assert_eq!(m.model.as_deref(), Some("WAN21"));
        assert_eq!(m.offloaded_bytes, bytes(4633.39, MIB));
        assert_eq!(m.lowvram_patches, Some(0));
    }

    #[test]
    fn comfyui_complete_load_and_the_last_line_wins() {
        let text = "Requested to load SDXL\nloaded partially; 100.00 MB usable, 90.00 MB loaded, \
                    10.00 MB offloaded, lowvram patches: 0\nRequested to load AutoencoderKL\n\
                    loaded completely; 2048.00 MB usable, 159.56 MB loaded, full load: True\n";
        let m = read(text).unwrap();
        assert_eq!(m.model.as_deref(), Some("AutoencoderKL"));
        assert_eq!(m.usable_bytes, bytes(2048.0, MIB));
        assert_eq!(m.loaded_bytes, bytes(159.56, MIB));
        assert_eq!(m.offloaded_bytes, None);
        assert_eq!(m.full_load, Some(true));
    }

    #[test]
    fn webui_footer() {
        let m = read("Time taken: 9.1 sec.\nA: 2.82 GB, R: 2.90 GB, Sys: 3.8/3.8125 GB (99.7%)\n")
            .unwrap();
        assert_eq!(m.frontend, "webui");
        assert_eq!(m.active_peak_bytes, bytes(2.82, GIB));
        assert_eq!(m.reserved_peak_bytes, bytes(2.90, GIB));
        assert_eq!(m.system_peak_bytes, bytes(3.8, GIB));
        assert_eq!(m.system_total_bytes, bytes(3.8125, GIB));
    }

    #[test]
    fn lookalikes_and_cut_lines_say_nothing() {
        for text in [
            "",
            "Sys: 3.8/",
            "Sys: abc/3 GB",
            "Sys: 3.8/3.8125 GB",
            "data: 1 GB, Sys: 3.8/3.8125 GB",
            "loaded partially;",
            "loaded partially; lowvram patches: 0",
        ] {
            assert_eq!(read(text), None, "{text:?}");
        }
    }
}
