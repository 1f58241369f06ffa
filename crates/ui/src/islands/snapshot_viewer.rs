//! The snapshot viewer: open a `torch.cuda.memory._dump_snapshot()` file (pickle or
//! JSON) and see its segments and blocks, the fragmentation, the largest live
//! allocations with the Python lines that made them, and what the recorded trace holds.
//!
//! The file is read in the browser and decoded by `snapshot`, a data-only unpickler
//! that never runs code; nothing is uploaded. The same engine is behind
//! `vramlab snapshot`.

use leptos::prelude::*;
use snapshot::{Analysis, BlockState, Snapshot};
use vram::ByteSize;

use crate::numbers::fixed;

// Used by the browser path only (and the tests).
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
/// Largest file read (a snapshot with a long history is tens of MiB).
pub const MAX_SNAPSHOT_BYTES: usize = 256 << 20;
/// Segments drawn, largest first.
const SEGMENTS_DRAWN: usize = 24;
/// Live allocations listed.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
const TOP: usize = 10;

/// What the viewer shows for a file.
#[derive(Clone, Debug, PartialEq)]
pub struct Opened {
    pub name: String,
    pub snapshot: Snapshot,
    pub analysis: Analysis,
}

#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
/// Decodes and analyses `bytes`, or says why not (Spanish).
pub fn open(name: String, bytes: &[u8]) -> Result<Opened, String> {
    let snapshot = snapshot::parse(bytes).map_err(|e| format!("{name}: {e}"))?;
    let analysis = snapshot::analyze(&snapshot, TOP);
    Ok(Opened {
        name,
        snapshot,
        analysis,
    })
}

fn block_class(s: &BlockState) -> &'static str {
    match s {
        BlockState::ActiveAllocated => "blk-used",
        BlockState::ActivePendingFree => "blk-pending",
        BlockState::Inactive | BlockState::Other(_) => "blk-cached",
    }
}

fn segments_view(s: &Snapshot) -> impl IntoView + use<> {
    let mut order: Vec<&snapshot::Segment> = s.segments.iter().collect();
    order.sort_by_key(|g| std::cmp::Reverse(g.total_size));
    let widest = order.first().map_or(1, |g| g.total_size.max(1));
    let rows = order
        .iter()
        .take(SEGMENTS_DRAWN)
        .map(|g| {
            let size = g.total_size.max(1);
            let width = size as f64 / widest as f64 * 100.0;
            let rects = g
                .blocks
                .iter()
                .filter_map(|b| {
                    let offset = b.address.checked_sub(g.address)?;
                    (offset < size).then(|| {
                        let x = offset as f64 / size as f64 * width;
                        let w = (b.size.min(size - offset) as f64 / size as f64 * width).max(0.15);
                        view! { <rect class=block_class(&b.state) x=fixed(x, 3) y="0" width=fixed(w, 3) height="10" /> }
                    })
                })
                .collect_view();
            let used: u64 = g
                .blocks
                .iter()
                .filter(|b| b.state == BlockState::ActiveAllocated)
                .map(|b| b.size)
                .sum();
            let label = format!(
                "Segmento 0x{:x} · {} · {} en uso{}",
                g.address,
                ByteSize(g.total_size).binary(),
                ByteSize(used).binary(),
                if g.is_expandable == Some(true) { " · expandible" } else { "" }
            );
            view! {
                <li>
                    <span class="alloc-seg-label">{label}</span>
                    <svg class="alloc-seg" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">{rects}</svg>
                </li>
            }
        })
        .collect_view();
    let hidden = s.segments.len().saturating_sub(SEGMENTS_DRAWN);
    view! {
        <ul class="alloc-segments">{rows}</ul>
        {(hidden > 0).then(|| view! { <p class="calc-hint">{format!("… y {hidden} segmentos más pequeños.")}</p> })}
    }
}

fn opened_view(o: &Opened) -> impl IntoView + use<> {
    let t = &o.analysis.totals;
    let stat =
        |name: &'static str, value: String| view! { <div><dt>{name}</dt><dd>{value}</dd></div> };
    let allocations = o
        .analysis
        .largest_allocations
        .iter()
        .map(|a| {
            let frames = a
                .frames
                .iter()
                .map(|f| {
                    let line = f.line.map_or_else(|| "?".to_owned(), |l| l.to_string());
                    format!("{}:{line} en {}", f.filename, f.name)
                })
                .collect::<Vec<_>>()
                .join("\n");
            let frames = if frames.is_empty() {
                "(sin pila: graba con torch.cuda.memory._record_memory_history())".to_owned()
            } else {
                frames
            };
            view! {
                <tr>
                    <td>{ByteSize(a.size).binary()}</td>
                    <td><pre class="snap-frames">{frames}</pre></td>
                </tr>
            }
        })
        .collect_view();
    let traces = o
        .analysis
        .traces
        .iter()
        .map(|tr| {
            let actions = tr
                .actions
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect::<Vec<_>>()
                .join(" · ");
            let text = format!(
                "GPU {}: {} acciones grabadas ({actions}); {} OOM; el pico asignado subió {} durante la traza.",
                tr.device,
                tr.entries,
                tr.ooms.len(),
                ByteSize(tr.peak_rise_bytes).binary()
            );
            view! { <li>{text}</li> }
        })
        .collect_view();
    view! {
        <p class="snap-name"><strong>{o.name.clone()}</strong></p>
        <dl class="alloc-stats">
            {stat("Reservada", ByteSize(t.reserved_bytes).binary())}
            {stat("Asignada", ByteSize(t.allocated_bytes).binary())}
            {stat("En caché (inactiva)", ByteSize(t.inactive_bytes).binary())}
            {stat("Mayor bloque inactivo", ByteSize(t.largest_inactive_block_bytes).binary())}
            {stat("Fragmentación", format!("{}\u{a0}%", fixed(t.fragmentation * 100.0, 0)))}
            {stat("Segmentos", t.segments.to_string())}
            {stat("Bloques", t.blocks.to_string())}
        </dl>
        <p class="alloc-legend">
            <span class="key blk-used"></span>"En uso "
            <span class="key blk-pending"></span>"Liberado, esperando a un stream "
            <span class="key blk-cached"></span>"En caché (inactivo)"
        </p>
        {segments_view(&o.snapshot)}
        <table class="calc-table snap-top">
            <caption>"Las asignaciones vivas más grandes"</caption>
            <thead><tr><th scope="col">"Tamaño"</th><th scope="col">"Dónde se creó (tu código primero)"</th></tr></thead>
            <tbody>{allocations}</tbody>
        </table>
        {(!o.analysis.traces.is_empty()).then(|| view! { <ul class="est-notes snap-traces">{traces}</ul> })}
    }
}

#[island]
pub fn SnapshotViewer() -> impl IntoView {
    let opened: RwSignal<Option<Result<Opened, String>>> = RwSignal::new(None);
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let on_file = move |ev: leptos::ev::Event| {
        #[cfg(target_arch = "wasm32")]
        super::file_text::read_first_bytes(
            ev,
            MAX_SNAPSHOT_BYTES,
            move |name, bytes| opened.set(Some(open(name, &bytes))),
            error,
        );
        #[cfg(not(target_arch = "wasm32"))]
        let _ = ev;
    };
    view! {
        <div class="calc snapshot-viewer" role="group" aria-label="Visor de instantáneas de memoria">
            <p class="calc-hint">"Abre el archivo que escribió torch.cuda.memory._dump_snapshot() (pickle o JSON). Se lee en tu navegador, sin ejecutar nada de su contenido, y no se envía a ningún sitio."</p>
            <label><span>"Instantánea de memoria"</span>
                <input name="snapshot" type="file" accept=".pickle,.pkl,.json,application/octet-stream" on:change=on_file />
            </label>
            {move || error.get().map(|e| view! { <p class="calc-error" role="alert">{e}</p> })}
            <output aria-live="polite">
                {move || opened.with(|o| match o {
                    None => None,
                    Some(Err(e)) => Some(view! { <p class="calc-error" role="alert">{e.clone()}</p> }.into_any()),
                    Some(Ok(o)) => Some(opened_view(o).into_any()),
                })}
            </output>
        </div>
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn json_snapshot_opens_and_bad_files_are_spanish_messages() {
        let json = r#"{"segments": [{"device": 0, "address": 1048576, "total_size": 20971520,
            "allocated_size": 2097152, "active_size": 2097152, "requested_size": 2000000,
            "stream": 0, "segment_type": "large", "blocks": [
              {"address": 1048576, "size": 2097152, "requested_size": 2000000, "state": "active_allocated",
               "frames": [{"filename": "train.py", "line": 42, "name": "forward"}]},
              {"address": 3145728, "size": 18874368, "state": "inactive", "frames": []}]}],
            "device_traces": []}"#;
        let o = open("a.json".into(), json.as_bytes()).unwrap();
        assert_eq!(o.analysis.totals.reserved_bytes, 20_971_520);
        assert_eq!(o.analysis.totals.allocated_bytes, 2_097_152);
        assert_eq!(o.analysis.largest_allocations[0].frames[0].line, Some(42));
        let bad = open("x.bin".into(), b"hola").unwrap_err();
        assert!(
            bad.starts_with("x.bin: ") && bad.contains("snapshot"),
            "{bad}"
        );
        // A pickle that asks for code to run is refused, not executed.
        let evil = open("evil.pickle".into(), b"\x80\x04cos\nsystem\n.").unwrap_err();
        assert!(evil.contains("evil.pickle"), "{evil}");
    }
}
