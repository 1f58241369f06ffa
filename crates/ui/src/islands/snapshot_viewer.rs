//! The snapshot viewer: open a `torch.cuda.memory._dump_snapshot()` file (pickle or
//! JSON) and see its segments and blocks, the fragmentation, the largest live
//! allocations with the Python lines that made them, and what the recorded trace holds.
//!
//! The file is read in the browser and decoded in the diagnostics worker
//! (`diag_worker::snapshot_view`, on top of `snapshot`, a data-only unpickler that never
//! runs code); nothing is uploaded, and the page stays responsive while a large file
//! is decoded. The same engine is behind `vramlab snapshot`.

use diag_worker::SnapshotView;
use diag_worker::snapshot_view::BlockKind;
use leptos::either::Either;
use leptos::prelude::*;
use vram::ByteSize;

use super::background::{FileJobs, WorkerUrls};
use diag_worker::Job;
use numfmt::fixed;

fn block_class(kind: BlockKind) -> &'static str {
    match kind {
        BlockKind::Used => "blk-used",
        BlockKind::Pending => "blk-pending",
        BlockKind::Cached => "blk-cached",
    }
}

fn segments_view(v: &SnapshotView) -> impl IntoView + use<> {
    let rows = v
        .segments
        .iter()
        .map(|g| {
            let rects = g
                .rects
                .iter()
                .map(|r| view! { <rect class=block_class(r.kind) x=fixed(r.x, 3) y="0" width=fixed(r.w, 3) height="10" /> })
                .collect_view();
            let label = format!(
                "Segmento 0x{:x} · {} · {} en uso{}",
                g.address,
                ByteSize(g.total_size).binary(),
                ByteSize(g.used_bytes).binary(),
                if g.expandable { " · expandible" } else { "" }
            );
            view! {
                <li>
                    <span class="alloc-seg-label">{label}</span>
                    <svg class="alloc-seg" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">{rects}</svg>
                </li>
            }
        })
        .collect_view();
    let hidden = v.hidden_segments;
    view! {
        <ul class="alloc-segments">{rows}</ul>
        {(hidden > 0).then(|| view! { <p class="calc-hint">{format!("… y {hidden} segmentos más pequeños.")}</p> })}
    }
}

fn opened_view(v: &SnapshotView) -> impl IntoView + use<> {
    let t = &v.totals;
    let stat =
        |name: &'static str, value: String| view! { <div><dt>{name}</dt><dd>{value}</dd></div> };
    let allocations = v
        .allocations
        .iter()
        .map(|a| {
            let frames = if a.frames.is_empty() {
                "(sin pila: graba con torch.cuda.memory._record_memory_history())".to_owned()
            } else {
                a.frames.join("\n")
            };
            view! {
                <tr>
                    <td>{ByteSize(a.size).binary()}</td>
                    <td><pre class="snap-frames">{frames}</pre></td>
                </tr>
            }
        })
        .collect_view();
    let traces = v
        .traces
        .iter()
        .map(|tr| {
            let actions = tr
                .actions
                .iter()
                .map(|(k, n)| format!("{k}: {n}"))
                .collect::<Vec<_>>()
                .join(" · ");
            let text = format!(
                "GPU {}: {} acciones grabadas ({actions}); {} OOM; el pico asignado subió {} durante la traza.",
                tr.device,
                tr.entries,
                tr.ooms,
                ByteSize(tr.peak_rise_bytes).binary()
            );
            view! { <li>{text}</li> }
        })
        .collect_view();
    let sites = v
        .sites
        .iter()
        .map(|site| {
            view! {
                <tr>
                    <td>{ByteSize(site.bytes).binary()}</td>
                    <td>{site.blocks.to_string()}</td>
                    <td><code>{site.site.clone()}</code></td>
                </tr>
            }
        })
        .collect_view();
    let ooms = v
        .ooms
        .iter()
        .map(|o| {
            let size = o.size.map_or_else(|| "un tamaño que no consta".to_owned(), |b| ByteSize(b).binary());
            let free = o
                .device_free
                .map_or_else(String::new, |b| format!(" con {} libres en la GPU", ByteSize(b).binary()));
            let at = o
                .frames
                .first()
                .map_or_else(String::new, |f| format!("; lo pidió {f}"));
            view! { <li>{format!("GPU {}, entrada {} de la traza: pidió {size}{free}{at}.", o.device, o.index)}</li> }
        })
        .collect_view();
    view! {
        <p class="snap-name"><strong>{v.name.clone()}</strong></p>
        <dl class="alloc-stats">
            {stat("Reservada", ByteSize(t.reserved_bytes).binary())}
            {stat("Asignada", ByteSize(t.allocated_bytes).binary())}
            {stat("En caché (inactiva)", ByteSize(t.inactive_bytes).binary())}
            {stat("Mayor bloque inactivo", ByteSize(t.largest_inactive_block_bytes).binary())}
            {stat("Fragmentación", numfmt::percent(t.fragmentation * 100.0, 0))}
            {stat("Segmentos", t.segments.to_string())}
            {stat("Bloques", t.blocks.to_string())}
        </dl>
        <p class="alloc-legend">
            <span class="key blk-used"></span>"En uso "
            <span class="key blk-pending"></span>"Liberado, esperando a un stream "
            <span class="key blk-cached"></span>"En caché (inactivo)"
        </p>
        {v.fragmentation_text.clone().map(|t| view! { <p class="snap-frag">{t}</p> })}
        {(!v.ooms.is_empty()).then(|| view! {
            <div class="alloc-oom snap-ooms" role="status">
                <p><strong>"El OOM que grabó la traza"</strong></p>
                <ul>{ooms}</ul>
            </div>
        })}
        {segments_view(v)}
        <table class="calc-table snap-top">
            <caption>"Las asignaciones vivas más grandes"</caption>
            <thead><tr><th scope="col">"Tamaño"</th><th scope="col">"Dónde se creó (tu código primero)"</th></tr></thead>
            <tbody>{allocations}</tbody>
        </table>
        {(!v.sites.is_empty()).then(|| view! {
            <table class="calc-table snap-sites">
                <caption>"Memoria viva por línea de tu código"</caption>
                <thead><tr><th scope="col">"Total"</th><th scope="col">"Bloques"</th><th scope="col">"Dónde"</th></tr></thead>
                <tbody>{sites}</tbody>
            </table>
        })}
        {(!v.traces.is_empty()).then(|| view! { <ul class="est-notes snap-traces">{traces}</ul> })}
    }
}

#[island]
pub fn SnapshotViewer(
    /// The diagnostics worker's scripts.
    worker: WorkerUrls,
) -> impl IntoView {
    let opened: RwSignal<Option<Result<SnapshotView, String>>> = RwSignal::new(None);
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    // The file being decoded, while the worker has it.
    let reading: RwSignal<Option<String>> = RwSignal::new(None);
    let files = {
        use diag_worker::Reply;
        let on_reply = move |_name: String, reply: Reply| match reply {
            Reply::Snapshot { result, .. } => opened.set(Some(result)),
            Reply::Failed { why, .. } => opened.set(Some(Err(why))),
            Reply::Ready | Reply::Explain { .. } | Reply::Trace { .. } => {}
        };
        FileJobs::new(Job::Snapshot, worker, reading, on_reply)
    };
    let on_file = move |ev: leptos::ev::Event| files.on_file(ev, error);
    let cancel = move || files.cancel();
    view! {
        <div class="calc snapshot-viewer" role="group" aria-label="Visor de instantáneas de memoria">
            <p class="calc-hint">"Abre el archivo que escribió torch.cuda.memory._dump_snapshot() (pickle o JSON). Se lee en tu navegador, sin ejecutar nada de su contenido, y no se envía a ningún sitio."</p>
            <label><span>"Instantánea de memoria"</span>
                <input name="snapshot" type="file" accept=".pickle,.pkl,.json,application/octet-stream" on:change=on_file />
            </label>
            {move || error.get().map(|e| view! { <p class="calc-error" role="alert">{e}</p> })}
            {super::background::busy_line(reading, cancel)}
            <output aria-live="polite">
                {move || opened.with(|o| match o {
                    None => None,
                    Some(Err(e)) => Some(Either::Left(view! { <p class="calc-error" role="alert">{e.clone()}</p> })),
                    Some(Ok(v)) => Some(Either::Right(opened_view(v))),
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
    fn a_decoded_snapshot_renders_its_numbers_and_blocks() {
        let json = r#"{"segments": [{"device": 0, "address": 1048576, "total_size": 20971520,
            "blocks": [
              {"address": 1048576, "size": 2097152, "state": "active_allocated",
               "frames": [{"filename": "train.py", "line": 42, "name": "forward"}]},
              {"address": 3145728, "size": 18874368, "state": "inactive", "frames": []}]}],
            "device_traces": []}"#;
        let v = diag_worker::snapshot_view::open("a.json", json.as_bytes()).unwrap();
        let html = opened_view(&v).to_html();
        assert!(
            html.contains("20,00 MiB") && html.contains("train.py:42 en forward"),
            "{html}"
        );
        assert_eq!(html.matches("<rect").count(), 2, "{html}");
        assert!(html.contains(r#"class="blk-used""#) && html.contains(r#"class="blk-cached""#));
    }
}
