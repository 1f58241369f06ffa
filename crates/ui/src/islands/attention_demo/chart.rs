//! The demo's two figures, drawn as inline SVG from the measurements: time over N for
//! both kernels (log–log, the naive line ending in a cross where it ran out of memory),
//! and the extra memory of each kernel at the largest N measured.

use leptos::prelude::*;
use vram::ByteSize;

use super::model::{Outcome, Point};
use numfmt::{fixed, fixed_es};

const W: f64 = 520.0;
const H: f64 = 260.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 40.0;

/// Maps a value to a log-scale coordinate between `lo` and `hi` pixels.
fn log_scale(v: f64, min: f64, max: f64, lo: f64, hi: f64) -> f64 {
    let (a, b) = (min.log10(), max.log10());
    if b - a < 1e-9 {
        return (lo + hi) / 2.0;
    }
    lo + (v.log10() - a) / (b - a) * (hi - lo)
}

/// Powers of ten between `min` and `max` (at least the two ends).
fn decades(min: f64, max: f64) -> Vec<f64> {
    let (a, b) = (min.log10().floor() as i32, max.log10().ceil() as i32);
    (a..=b).map(|e| 10f64.powi(e)).collect()
}

fn ms_label(ms: f64) -> String {
    if ms >= 1.0 {
        format!("{} ms", fixed_es(ms, 0))
    } else {
        format!("{} ms", fixed_es(ms, 3))
    }
}

/// Time over N. Empty until at least one kernel has a time.
pub fn time_chart(points: &[Point]) -> impl IntoView + use<> {
    let times: Vec<f64> = points
        .iter()
        .flat_map(|p| [&p.naive, &p.tiled])
        .filter_map(|o| o.as_ref().and_then(Outcome::ms))
        .filter(|t| *t > 0.0)
        .collect();
    if times.is_empty() || points.is_empty() {
        return None;
    }
    let (tmin, tmax) = times
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &t| (a.min(t), b.max(t)));
    let ticks = decades(tmin, tmax);
    let (ymin, ymax) = (ticks[0], ticks[ticks.len() - 1]);
    let nmin = f64::from(points.iter().map(|p| p.n).min().unwrap_or(1));
    let nmax = f64::from(points.iter().map(|p| p.n).max().unwrap_or(1));
    let x = move |n: u32| log_scale(f64::from(n), nmin, nmax.max(nmin * 2.0), LEFT, W - RIGHT);
    let y = move |t: f64| log_scale(t, ymin, ymax, H - BOTTOM, TOP);
    let series = |pick: fn(&Point) -> &Option<Outcome>, class: &'static str| {
        let pts: Vec<(f64, f64)> = points
            .iter()
            .filter_map(|p| {
                pick(p)
                    .as_ref()
                    .and_then(Outcome::ms)
                    .map(|t| (x(p.n), y(t)))
            })
            .collect();
        let line = pts
            .iter()
            .map(|(a, b)| format!("{},{}", fixed(*a, 1), fixed(*b, 1)))
            .collect::<Vec<_>>()
            .join(" ");
        let dots = pts
            .iter()
            .map(|(a, b)| view! { <circle class=class cx=fixed(*a, 1) cy=fixed(*b, 1) r="4" /> })
            .collect_view();
        view! { <polyline class=class points=line fill="none" />{dots} }
    };
    let ooms = points
        .iter()
        .filter(|p| matches!(p.naive, Some(Outcome::OutOfMemory { .. })))
        .map(|p| {
            let (cx, cy) = (x(p.n), TOP + 8.0);
            // Near the right edge the label ends at the mark instead of centring on it.
            let anchor = if cx > W - RIGHT - 40.0 { "end" } else { "middle" };
            let tx = if anchor == "end" { cx + 4.0 } else { cx };
            view! {
                <g class="attn-oom-mark">
                    <path d=format!("M{} {}l8 8m0 -8l-8 8", fixed(cx - 4.0, 1), fixed(cy - 4.0, 1)) />
                    <text x=fixed(tx, 1) y=fixed(cy + 18.0, 1) text-anchor=anchor>"sin memoria"</text>
                </g>
            }
        })
        .collect_view();
    let x_ticks = points
        .iter()
        .map(|p| {
            let cx = fixed(x(p.n), 1);
            view! { <text class="attn-tick" x=cx y=fixed(H - BOTTOM + 18.0, 1) text-anchor="middle">{p.n.to_string()}</text> }
        })
        .collect_view();
    let y_ticks = ticks
        .iter()
        .map(|&t| {
            let cy = fixed(y(t), 1);
            view! {
                <line class="attn-grid" x1=fixed(LEFT, 1) x2=fixed(W - RIGHT, 1) y1=cy.clone() y2=cy.clone() />
                <text class="attn-tick" x=fixed(LEFT - 6.0, 1) y=cy text-anchor="end">{ms_label(t)}</text>
            }
        })
        .collect_view();
    Some(view! {
        <figure class="attn-figure">
            <svg viewBox=format!("0 0 {W} {H}") role="img" aria-label="Tiempo de cada kernel según la longitud de secuencia N, en escala logarítmica">
                {y_ticks}
                {x_ticks}
                <text class="attn-tick" x=fixed((LEFT + W - RIGHT) / 2.0, 1) y=fixed(H - 4.0, 1) text-anchor="middle">"longitud de secuencia N"</text>
                {series(|p| &p.naive, "attn-naive")}
                {series(|p| &p.tiled, "attn-tiled")}
                {ooms}
            </svg>
            <figcaption>
                <span class="attn-key attn-naive">"ingenuo (matriz N × N)"</span>
                <span class="attn-key attn-tiled">"por bloques"</span>
                " Tiempo mediano por ejecución; ambos ejes en escala logarítmica."
            </figcaption>
        </figure>
    })
}

/// Extra memory of both kernels at the largest N that has both numbers, with the
/// limit the naive one passed when it was refused.
pub fn memory_bars(points: &[Point]) -> impl IntoView + use<> {
    let p = points.iter().rev().find(|p| {
        p.naive.as_ref().and_then(Outcome::extra_bytes).is_some()
            && p.tiled.as_ref().and_then(Outcome::extra_bytes).is_some()
    })?;
    let naive = p.naive.as_ref().and_then(Outcome::extra_bytes)?;
    let tiled = p.tiled.as_ref().and_then(Outcome::extra_bytes)?;
    // The limit line belongs on the S bar only when S itself passed a per-buffer limit;
    // a total limit is said in the caption instead.
    let (limit, total_limit) = match &p.naive {
        Some(Outcome::OutOfMemory {
            limit,
            per_buffer: true,
            ..
        }) => (Some(*limit), None),
        Some(Outcome::OutOfMemory { limit, needed, .. }) => (None, Some((*needed, *limit))),
        _ => (None, None),
    };
    let max = naive.max(tiled).max(limit.unwrap_or(0)).max(1) as f64;
    // A bar never vanishes entirely: the tiled one is often 0.01 % of the naive one.
    // SVG geometry, not inline styles: the site's CSP forbids style attributes.
    let width = |b: u64| fixed((b as f64 / max * 100.0).max(0.4), 2);
    let ratio = if tiled > 0 {
        naive as f64 / tiled as f64
    } else {
        0.0
    };
    let bar = |label: &'static str, bytes: u64, class: &'static str, limit: Option<u64>| {
        view! {
            <div class="attn-bar-row">
                <span class="attn-bar-label">{label}</span>
                <svg class="attn-bar-track" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">
                    <rect class=class x="0" y="0" height="10" width=width(bytes) />
                    {limit.map(|l| view! { <rect class="attn-limit" x=width(l) y="0" width="0.6" height="10" /> })}
                </svg>
                <span class="attn-bar-value">{ByteSize(bytes).binary()}</span>
            </div>
        }
    };
    Some(view! {
        <figure class="attn-figure attn-bars">
            {bar("ingenuo: S = QKᵀ", naive, "attn-naive", limit)}
            {bar("por bloques: log-sum-exp", tiled, "attn-tiled", None)}
            <figcaption>
                {format!(
                    "Memoria extra (además de Q, K, V y O) con N = {}: el kernel ingenuo necesita {}× más.",
                    p.n,
                    fixed_es(ratio, 0)
                )}
                {limit.map(|l| format!(" La línea marca el límite por búfer que superó: {}.", ByteSize(l).binary()))}
                {total_limit.map(|(needed, l)| format!(
                    " Con Q, K, V y O, el ingenuo necesitaba {} en total y la memoria permitida es {}.",
                    ByteSize(needed).binary(),
                    ByteSize(l).binary()
                ))}
            </figcaption>
        </figure>
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_scale_maps_ends_and_middle() {
        assert_eq!(log_scale(1.0, 1.0, 100.0, 0.0, 200.0), 0.0);
        assert_eq!(log_scale(100.0, 1.0, 100.0, 0.0, 200.0), 200.0);
        assert!((log_scale(10.0, 1.0, 100.0, 0.0, 200.0) - 100.0).abs() < 1e-9);
        assert_eq!(log_scale(5.0, 5.0, 5.0, 0.0, 200.0), 100.0);
    }

    #[test]
    fn decades_cover_the_range() {
        assert_eq!(decades(0.5, 20.0), vec![0.1, 1.0, 10.0, 100.0]);
    }
}
