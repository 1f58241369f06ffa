//! SVG of the device memory: a map of the capacity with every segment in creation
//! order, the largest segments one per row, and the counters `memory_stats()` reports.

use allocator::{BlockState, Pool, SegmentInfo};
use leptos::prelude::*;
use vram::ByteSize;

use super::replay::{Frame, Timeline};
use numfmt::fixed;

/// Segments drawn one per row; the rest are summarised.
const ROWS: usize = 10;
/// Upper bound on rectangles in the map, so a pathological trace cannot bloat the DOM.
const MAX_RECTS: usize = 3000;

fn class(state: BlockState) -> &'static str {
    match state {
        BlockState::Allocated => "blk-used",
        BlockState::Free => "blk-cached",
        BlockState::Unmapped => "blk-unmapped",
    }
}

/// Bytes of a segment worth drawing: its mapped part (expandable segments reserve far
/// more address space than they back with memory).
fn drawn_size(s: &SegmentInfo) -> u64 {
    if s.expandable {
        s.mapped_extent_bytes
    } else {
        s.size
    }
}

/// The whole capacity as one strip of width 1000.
fn map(f: &Frame) -> impl IntoView + use<> {
    let scale = 1000.0 / f.capacity.max(1) as f64;
    let mut x = 0.0;
    let mut rects = Vec::new();
    for s in &f.segments {
        for b in s.blocks.iter().filter(|b| b.state != BlockState::Unmapped) {
            if rects.len() >= MAX_RECTS {
                break;
            }
            let bx = x + b.offset as f64 * scale;
            let w = (b.size as f64 * scale).max(0.3);
            rects.push(view! {
                <rect class=class(b.state) x=fixed(bx, 2) y="0" width=fixed(w, 2) height="30" />
            });
        }
        x += drawn_size(s) as f64 * scale;
    }
    view! {
        <svg class="alloc-map" viewBox="0 0 1000 30" preserveAspectRatio="none" role="img"
            aria-label="Mapa de la memoria de la GPU: segmentos en orden de creación">
            <rect class="blk-device" x="0" y="0" width="1000" height="30" />
            {rects}
        </svg>
    }
}

/// Allocated and reserved memory over the whole trace, the capacity, the OOMs and
/// where the replay is now.
pub fn chart(t: &Timeline, capacity: u64, step: usize, total: usize) -> impl IntoView + use<> {
    let (w, h) = (300.0, 80.0);
    let top = capacity.max(1) as f64;
    let n = total.max(1) as f64;
    let x = |event: u64| 2.0 + event as f64 / n * (w - 4.0);
    let y = |bytes: u64| h - 2.0 - bytes as f64 / top * (h - 10.0);
    let line = |pick: fn(&(u64, u64, u64)) -> u64| {
        t.points
            .iter()
            .map(|p| format!("{},{}", fixed(x(p.0), 1), fixed(y(pick(p)), 1)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let ooms = t
        .ooms
        .iter()
        .map(|&e| view! { <line class="alloc-oom-mark" x1=fixed(x(e), 1) x2=fixed(x(e), 1) y1="6" y2=fixed(h - 2.0, 0) /> })
        .collect_view();
    let now = fixed(x(step as u64), 1);
    view! {
        <figure class="alloc-chart">
            <svg viewBox=format!("0 0 {} {}", fixed(w, 0), fixed(h, 0)) role="img"
                aria-label="Memoria asignada y reservada a lo largo de la traza, con la capacidad y los OOM">
                <line class="cap-line" x1="2" x2=fixed(w - 2.0, 0) y1=fixed(y(capacity), 1) y2=fixed(y(capacity), 1) />
                {ooms}
                <polyline class="curve-reserved" points=line(|p| p.2) />
                <polyline class="curve-allocated" points=line(|p| p.1) />
                <line class="alloc-now" x1=now.clone() x2=now y1="2" y2=fixed(h - 2.0, 0) />
            </svg>
            <figcaption>
                <span class="key blk-used"></span>"Asignada "
                <span class="key blk-cached"></span>"Reservada "
                <span class="key key-cap"></span>"Capacidad "
                <span class="key key-oom"></span>"OOM · la línea fina marca el evento actual"
            </figcaption>
        </figure>
    }
}

fn segment_row(s: &SegmentInfo, widest: u64) -> impl IntoView + use<> {
    let size = drawn_size(s).max(1);
    let width = size as f64 / widest.max(1) as f64 * 100.0;
    let rects = s
        .blocks
        .iter()
        .filter(|b| b.offset < size)
        .map(|b| {
            let x = b.offset as f64 / size as f64 * width;
            let w = (b.size.min(size - b.offset) as f64 / size as f64 * width).max(0.15);
            view! { <rect class=class(b.state) x=fixed(x, 3) y="0" width=fixed(w, 3) height="10" /> }
        })
        .collect_view();
    let pool = match s.pool {
        Pool::Small => "pequeña",
        Pool::Large => "grande",
    };
    let label = format!(
        "Segmento {} · {} · reserva {}{} · {} en uso",
        s.id,
        ByteSize(s.reserved_bytes).binary(),
        pool,
        if s.expandable { " · expandible" } else { "" },
        ByteSize(s.allocated_bytes).binary()
    );
    view! {
        <li>
            <span class="alloc-seg-label">{label}</span>
            <svg class="alloc-seg" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">{rects}</svg>
        </li>
    }
}

pub fn frame_view(f: &Frame) -> impl IntoView + use<> {
    let st = &f.stats;
    let unallocated = st.reserved_bytes.saturating_sub(st.allocated_bytes);
    let largest_free = f
        .segments
        .iter()
        .flat_map(|s| s.blocks.iter())
        .filter(|b| b.state == BlockState::Free)
        .map(|b| b.size)
        .max()
        .unwrap_or(0);
    let mut by_size: Vec<&SegmentInfo> = f.segments.iter().collect();
    by_size.sort_by_key(|s| std::cmp::Reverse(drawn_size(s)));
    let widest = by_size.first().map_or(1, |s| drawn_size(s));
    let rows = by_size
        .iter()
        .take(ROWS)
        .map(|s| segment_row(s, widest))
        .collect_view();
    let hidden = f.segments.len().saturating_sub(ROWS);
    let stat = |name: &'static str, value: String| {
        view! { <div><dt>{name}</dt><dd>{value}</dd></div> }
    };
    view! {
        <p class="alloc-last">{f.last.clone().unwrap_or_else(|| "Aún no ha pasado nada: pulsa Reproducir o Adelante.".into())}</p>
        {map(f)}
        <p class="alloc-legend">
            <span class="key blk-used"></span>"En uso (asignada) "
            <span class="key blk-cached"></span>"En caché (reservada sin asignar) "
            <span class="key blk-device"></span>"Libre en la GPU"
        </p>
        <dl class="alloc-stats">
            {stat("Asignada", ByteSize(st.allocated_bytes).binary())}
            {stat("Reservada", ByteSize(st.reserved_bytes).binary())}
            {stat("Reservada sin asignar", ByteSize(unallocated).binary())}
            {stat("Mayor bloque en caché", ByteSize(largest_free).binary())}
            {stat("Pico reservado", ByteSize(st.peak_reserved_bytes).binary())}
            {stat("Segmentos", st.segments.to_string())}
            {stat("cudaMalloc retries", st.alloc_retries.to_string())}
            {stat("CUDA OOMs", st.ooms.to_string())}
        </dl>
        {f.oom.clone().map(|(at, msg)| view! {
            <div class="alloc-oom" role="status">
                <p><strong>{format!("OutOfMemoryError en el evento {at}.")}</strong>
                    " Este es el mensaje que imprimiría PyTorch con estas cifras:"</p>
                <pre><code>{msg}</code></pre>
            </div>
        })}
        {(f.total > 0 && f.step >= f.total && st.ooms == 0).then(|| view! {
            <p class="alloc-done" role="status">{format!(
                "La traza terminó sin OOM: los {} eventos caben en esta capacidad (pico reservado {}).",
                f.total,
                ByteSize(st.peak_reserved_bytes).binary()
            )}</p>
        })}
        <ul class="alloc-segments">{rows}</ul>
        {(hidden > 0).then(|| view! { <p class="calc-hint">{format!("… y {hidden} segmentos más pequeños.")}</p> })}
    }
}
