//! The estimator's figures: the stacked bar against the GPU's capacity, the chart of
//! memory against context length, and the table of catalog GPUs. Plain SVG and HTML
//! rendered by Leptos, so they read without JavaScript too.

use leptos::prelude::*;
use vram::ByteSize;
use vram::catalog;

use super::compute::Outcome;
use crate::numbers::fixed;

/// The six categories with their Spanish names and CSS classes.
pub const CATEGORIES: [(&str, &str); 6] = [
    ("Pesos", "seg-weights"),
    ("Gradientes", "seg-grads"),
    ("Optimizador", "seg-optim"),
    ("Activaciones", "seg-acts"),
    ("Caché KV", "seg-kv"),
    ("Sobrecarga", "seg-overhead"),
];

/// Memory against sequence length, eager attention (quadratic) versus SDPA/Flash
/// (linear), on a log₂ x axis, with the GPU's capacity as a horizontal line.
pub fn chart(o: &Outcome) -> impl IntoView + use<> {
    let cap = o.capacity();
    let top = o
        .curve
        .iter()
        .map(|&(_, e, f)| e.max(f))
        .max()
        .unwrap_or(1)
        .max(cap)
        .max(1) as f64;
    let n = o.curve.len().max(2) - 1;
    let (w, h) = (300.0, 120.0);
    let point = |i: usize, bytes: u64| {
        let x = 30.0 + i as f64 / n as f64 * (w - 40.0);
        let y = h - 15.0 - bytes as f64 / top * (h - 25.0);
        format!("{},{}", fixed(x, 1), fixed(y, 1))
    };
    let line = |pick: fn(&(u64, u64, u64)) -> u64| {
        o.curve
            .iter()
            .enumerate()
            .map(|(i, p)| point(i, pick(p)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let eager = line(|p| p.1);
    let flash = line(|p| p.2);
    let cap_y = h - 15.0 - cap as f64 / top * (h - 25.0);
    let labels = o
        .curve
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(i, &(s, _, _))| {
            let x = 30.0 + i as f64 / n as f64 * (w - 40.0);
            let text = if s >= 1024 {
                format!("{}k", s / 1024)
            } else {
                s.to_string()
            };
            view! { <text x=fixed(x, 1) y=fixed(h - 2.0, 0) class="axis">{text}</text> }
        })
        .collect_view();
    let top_label = ByteSize(top as u64).binary();
    view! {
        <figure class="est-chart">
            <svg viewBox=format!("0 0 {} {}", fixed(w, 0), fixed(h, 0)) role="img"
                aria-label="Memoria por GPU según la longitud de secuencia, con atención ingenua y con SDPA o FlashAttention">
                <line class="axis-line" x1="30" y1=fixed(h - 15.0, 0) x2=fixed(w - 10.0, 0) y2=fixed(h - 15.0, 0) />
                <text x="2" y="12" class="axis">{top_label}</text>
                {(cap > 0).then(|| view! {
                    <line class="cap-line" x1="30" x2=fixed(w - 10.0, 0) y1=fixed(cap_y, 1) y2=fixed(cap_y, 1) />
                })}
                <polyline class="curve-eager" points=eager />
                <polyline class="curve-flash" points=flash />
                {labels}
            </svg>
            <figcaption>
                <span class="key key-eager"></span>"Atención ingenua (N×N) "
                <span class="key key-flash"></span>"SDPA / FlashAttention "
                <span class="key key-cap"></span>"Capacidad de la GPU · eje x: tokens por secuencia"
            </figcaption>
        </figure>
    }
}

/// Every catalog GPU and whether the workload fits on it: with room when the error
/// band's high end (`high`) fits, at the limit when only the estimate does.
pub fn gpu_table(per_gpu: u64, high: u64) -> impl IntoView {
    let state = |usable: u64| {
        if high <= usable {
            ("fits", "Cabe con margen")
        } else if per_gpu <= usable {
            ("tight", "Al límite")
        } else {
            ("does-not-fit", "No cabe")
        }
    };
    let rows = catalog::gpus()
        .iter()
        .map(|g| {
            let (id, text) = state(g.usable_bytes);
            view! {
                <tr data-verdict=id>
                    <td>{g.name.clone()}</td>
                    <td>{ByteSize(g.usable_bytes).binary()}</td>
                    <td>{text}</td>
                </tr>
            }
        })
        .collect_view();
    let count = |want: &str| {
        catalog::gpus()
            .iter()
            .filter(|g| state(g.usable_bytes).0 == want)
            .count()
    };
    let summary = format!(
        "¿En qué GPU cabe? Con margen en {} de {}, al límite en {}",
        count("fits"),
        catalog::gpus().len(),
        count("tight")
    );
    view! {
        <details class="est-gpus">
            <summary>{summary}</summary>
            <table class="calc-table">
                <thead><tr><th scope="col">"GPU"</th><th scope="col">"Memoria"</th><th scope="col">"¿Cabe?"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </details>
    }
}

/// A horizontal stacked bar: each category's share of max(total, capacity), with a
/// marker at the GPU's capacity.
pub fn bar(o: &Outcome) -> impl IntoView + use<> {
    let cap = o.capacity();
    let per_gpu = o.eval.estimate.per_gpu_bytes;
    let scale = per_gpu.max(cap).max(1) as f64;
    let mut x = 0.0;
    let segments = o
        .eval
        .estimate
        .breakdown
        .parts()
        .into_iter()
        .zip(CATEGORIES)
        .filter(|(v, _)| *v > 0)
        .map(|(v, (name, class))| {
            let width = v as f64 / scale * 100.0;
            let start = x;
            x += width;
            view! {
                <rect class=class x=fixed(start, 3) y="0" width=fixed(width, 3) height="10">
                    <title>{format!("{name}: {}", ByteSize(v).binary())}</title>
                </rect>
            }
        })
        .collect_view();
    let marker = (cap > 0).then(|| {
        let at = cap as f64 / scale * 100.0;
        view! { <line class="cap-line" x1=fixed(at, 3) x2=fixed(at, 3) y1="-1" y2="11" /> }
    });
    let label = format!(
        "Memoria necesaria {} frente a {} de la GPU",
        ByteSize(per_gpu).binary(),
        ByteSize(cap).binary()
    );
    view! {
        <svg class="est-bar" viewBox="0 -1 100 12" preserveAspectRatio="none" role="img" aria-label=label>
            {segments}
            {marker}
        </svg>
    }
}
