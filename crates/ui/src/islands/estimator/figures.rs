//! The estimator's figures: the stacked bar against the GPU's capacity, the chart of
//! memory against context length, and the table of catalog GPUs. Plain SVG and HTML
//! rendered by Leptos, so they read without JavaScript too.

use leptos::prelude::*;
use vram::ByteSize;
use vram::catalog;

use super::compute::Outcome;
use crate::numbers::fixed;

/// The six categories with their Spanish names and CSS classes (`vram::palette`).
pub fn categories() -> impl Iterator<Item = (&'static str, &'static str)> {
    vram::palette::CATEGORIES.iter().map(|c| (c.label, c.class))
}

/// "4k", "512": a token count as the chart's axis writes it.
fn tokens_short(s: u64) -> String {
    if s >= 1024 && s.is_multiple_of(1024) {
        format!("{}k", s / 1024)
    } else {
        vram::group_digits(s)
    }
}

/// A "nice" tick step (1, 2 or 5 × 10^k GiB) for about four ticks up to `top_gib`.
fn tick_step(top_gib: f64) -> f64 {
    let raw = (top_gib / 4.0).max(1e-3);
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|&step| step >= raw)
        .unwrap_or(10.0 * magnitude)
}

/// Memory against sequence length, eager attention (quadratic) versus SDPA/Flash
/// (linear), on a log₂ x axis, with the GPU's capacity as a horizontal line.
///
/// The y axis stops a little above the capacity (or the current estimate), so the
/// reader's curve and the capacity line stay readable; the naive curve, which grows
/// with the square of the context, leaves the chart at the top. The reader's point is
/// marked, and so is where their curve crosses the capacity: the solver's maximum
/// context, labelled with its value. Every point carries its values for a pointer or
/// the keyboard, and the same values are in a table below for touch screens.
pub fn chart(o: &Outcome) -> Option<impl IntoView + use<>> {
    let cap = o.capacity();
    let curve = &o.curve;
    if curve.len() < 2 {
        return None;
    }
    let eager_attention = o.settings.attention == vram::workload::Attention::Eager;
    let mine = |p: &(u64, u64, u64)| if eager_attention { p.1 } else { p.2 };
    let now_bytes = o.eval.estimate.per_gpu_bytes;
    let lowest = curve.iter().map(mine).min().unwrap_or(1);
    let top = if cap > 0 {
        (cap as f64 * 1.3).max(now_bytes as f64 * 1.1)
    } else {
        curve.iter().map(mine).max().unwrap_or(1) as f64 * 1.1
    }
    .max(lowest as f64 * 1.2)
    .max(1.0);
    let (w, h) = (320.0, 170.0);
    let (left, right, top_pad, bottom) = (46.0, 14.0, 10.0, 20.0);
    let (x0, x1, y0, y1) = (left, w - right, h - bottom, top_pad);
    let (s0, s1) = (
        (curve[0].0.max(1) as f64).log2(),
        (curve[curve.len() - 1].0.max(2) as f64).log2(),
    );
    let x_of = |seq: u64| x0 + ((seq.max(1) as f64).log2() - s0) / (s1 - s0).max(1e-9) * (x1 - x0);
    let y_of = |bytes: u64| y0 - (bytes as f64 / top).min(1.5) * (y0 - y1);
    let points = |pick: &dyn Fn(&(u64, u64, u64)) -> u64| {
        curve
            .iter()
            .map(|p| format!("{},{}", fixed(x_of(p.0), 1), fixed(y_of(pick(p)), 1)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let eager = points(&|p| p.1);
    let flash = points(&|p| p.2);
    let gib = ByteSize::GIB as f64;
    let step = tick_step(top / gib);
    let ticks = (1..)
        .map(|k| k as f64 * step)
        .take_while(|&v| v * gib <= top)
        .map(|v| {
            let y = y_of((v * gib) as u64);
            let label = if step < 1.0 {
                format!("{} GiB", crate::numbers::fixed_es(v, 1))
            } else {
                format!("{v:.0} GiB")
            };
            view! {
                <line class="grid-line" x1=fixed(x0, 0) x2=fixed(x1, 0) y1=fixed(y, 1) y2=fixed(y, 1) />
                <text x=fixed(x0 - 3.0, 0) y=fixed(y + 3.0, 1) class="axis" text-anchor="end">{label}</text>
            }
        })
        .collect_view();
    let last = curve.len() - 1;
    let x_labels = curve
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 2 == 0 || *i == last)
        .map(|(i, &(s, _, _))| {
            let anchor = if i == last { "end" } else { "middle" };
            view! { <text x=fixed(x_of(s), 1) y=fixed(h - 6.0, 0) class="axis" text-anchor=anchor>{tokens_short(s)}</text> }
        })
        .collect_view();
    let values = curve
        .iter()
        .map(|p| {
            let text = format!(
                "{} tokens: {} con SDPA/FlashAttention, {} con atención ingenua",
                vram::group_digits(p.0),
                ByteSize(p.2).binary(),
                ByteSize(p.1).binary()
            );
            view! {
                <circle class="est-chart-pt" tabindex="0" cx=fixed(x_of(p.0), 1) cy=fixed(y_of(mine(p)).max(y1), 1) r="3.5">
                    <title>{text}</title>
                </circle>
            }
        })
        .collect_view();
    let now_seq = o.settings.seq.saturating_add(o.settings.new_tokens);
    let in_range = |seq: u64| seq >= curve[0].0 && seq <= curve[last].0;
    let now = in_range(now_seq).then(|| {
        let (x, y) = (x_of(now_seq), y_of(now_bytes).max(y1));
        let anchor = if x > (x0 + x1) / 2.0 { "end" } else { "start" };
        let dx = if anchor == "end" { -6.0 } else { 6.0 };
        view! {
            <circle class="est-chart-now" cx=fixed(x, 1) cy=fixed(y, 1) r="4.5" data-tokens=now_seq.to_string() />
            <text class="axis est-chart-now-label" x=fixed(x + dx, 1) y=fixed(y + 12.0, 1) text-anchor=anchor>
                {format!("Ahora: {}", tokens_short(now_seq))}
            </text>
        }
    });
    // Where the reader's curve crosses the capacity: the solver's maximum context.
    let crossing = o
        .eval
        .max_seq
        .filter(|&m| cap > 0 && in_range(m))
        .map(|m| {
            let (x, y) = (x_of(m), y_of(cap));
            let anchor = if x > (x0 + x1) / 2.0 { "end" } else { "start" };
            let dx = if anchor == "end" { -5.0 } else { 5.0 };
            view! {
                <line class="est-chart-drop" x1=fixed(x, 1) x2=fixed(x, 1) y1=fixed(y, 1) y2=fixed(y0, 1) />
                <circle class="est-chart-cross" cx=fixed(x, 1) cy=fixed(y, 1) r="3.5" />
                <text class="axis est-chart-max" x=fixed(x + dx, 1) y=fixed(y - 5.0, 1) text-anchor=anchor data-tokens=m.to_string()>
                    {format!("Máximo: {} tokens", vram::group_digits(m))}
                </text>
            }
        });
    let cap_line = (cap > 0).then(|| {
        let y = y_of(cap);
        view! {
            <line class="cap-line" x1=fixed(x0, 0) x2=fixed(x1, 0) y1=fixed(y, 1) y2=fixed(y, 1) />
            <text class="axis" x=fixed(x0 + 4.0, 0) y=fixed(y + 11.0, 1) text-anchor="start">
                {format!("GPU: {}", ByteSize(cap).binary())}
            </text>
        }
    });
    let rows = curve
        .iter()
        .map(|p| {
            view! {
                <tr>
                    <td>{vram::group_digits(p.0)}</td>
                    <td>{ByteSize(p.2).binary()}</td>
                    <td>{ByteSize(p.1).binary()}</td>
                </tr>
            }
        })
        .collect_view();
    let label = format!(
        "Memoria por GPU según la longitud de secuencia{}",
        o.eval
            .max_seq
            .filter(|_| cap > 0)
            .map_or_else(String::new, |m| format!(
                "; cabe hasta {} tokens",
                vram::group_digits(m)
            ))
    );
    Some(view! {
        <figure class="est-chart">
            <svg viewBox=format!("0 0 {} {}", fixed(w, 0), fixed(h, 0)) role="img" aria-label=label>
                <defs>
                    <clipPath id="est-chart-area">
                        <rect x=fixed(x0, 0) y=fixed(y1, 0) width=fixed(x1 - x0, 0) height=fixed(y0 - y1, 0) />
                    </clipPath>
                </defs>
                {ticks}
                <line class="axis-line" x1=fixed(x0, 0) y1=fixed(y0, 0) x2=fixed(x1, 0) y2=fixed(y0, 0) />
                <text x=fixed(x0 - 3.0, 0) y=fixed(y0 + 3.0, 0) class="axis" text-anchor="end">"0"</text>
                {cap_line}
                <g clip-path="url(#est-chart-area)">
                    <polyline class="curve-eager" points=eager />
                    <polyline class="curve-flash" points=flash />
                </g>
                {crossing}
                {values}
                {now}
                {x_labels}
            </svg>
            <figcaption>
                <span class="key key-flash"></span>"SDPA / FlashAttention "
                <span class="key key-eager"></span>"Atención ingenua (N×N, crece con el cuadrado y sale por arriba) "
                <span class="key key-cap"></span>"Capacidad de la GPU · eje x: tokens por secuencia"
            </figcaption>
            <details class="est-chart-values">
                <summary>"Ver los valores"</summary>
                <table class="calc-table">
                    <thead><tr><th scope="col">"Tokens"</th><th scope="col">"SDPA / Flash"</th><th scope="col">"Ingenua"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </details>
        </figure>
    })
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
        .zip(categories())
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::islands::estimator::compute::{Imported, Inputs, compute};

    /// Llama 3.1 8B on a 4090 (the page's first screen): the crossing is labelled with
    /// the solver's maximum context, the reader's point is marked, every point has its
    /// values, and nothing is drawn past the plot except the naive curve, clipped.
    #[test]
    fn the_chart_marks_the_crossing_at_the_solvers_maximum_and_the_current_point() {
        let i = Inputs::new("llama-3.1-8b".into(), vram::Settings::web_default());
        let o = compute(&i, &Imported::default()).unwrap();
        let max = o.eval.max_seq.unwrap();
        let html = chart(&o).to_html();
        assert!(
            html.contains(&format!("Máximo: {} tokens", vram::group_digits(max)))
                && html.contains(&format!("data-tokens=\"{max}\"")),
            "{html}"
        );
        assert!(html.contains("class=\"est-chart-now\""), "{html}");
        assert_eq!(
            html.matches("class=\"est-chart-pt\"").count(),
            o.curve.len()
        );
        assert!(html.contains("clip-path=\"url(#est-chart-area)\""));
        assert!(html.contains("Ver los valores"));
        // The axis stops near the capacity (23,65 GiB): ticks in GiB up to 30, none in
        // TiB, although the naive curve reaches 3 TiB at 128k tokens.
        assert!(
            html.contains(">30 GiB</text>") && !html.contains("TiB</text>"),
            "{html}"
        );
    }

    #[test]
    fn ticks_are_round_numbers() {
        assert_eq!(tick_step(30.7), 10.0);
        assert_eq!(tick_step(104.0), 50.0);
        assert_eq!(tick_step(3.0), 1.0);
        assert_eq!(tick_step(0.4), 0.1);
    }
}
