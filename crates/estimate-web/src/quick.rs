//! The home page's "¿Cabe mi modelo?" as HTML text: a catalog model, a GPU and a task,
//! read as the embeddable widget reads its attributes (`embed::spec`) and evaluated by
//! the widget's own `embed::compute` (the same `vram::evaluate` as the estimator page
//! and the CLI). The site generator writes the first answer; this crate's bundle, loaded
//! on the reader's first change, writes the others, so the home page carries no engine.

use std::fmt::Write;

use embed::compute::{Outcome, Shown};
use embed::render::esc;
use vram::{ByteSize, Settings};

/// The quick estimate of one query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quick {
    /// The answer as HTML, or why there is none.
    pub html: String,
    /// `vram::Verdict::id` ("fits", "tight", "does-not-fit"…), empty without an answer.
    pub state: String,
}

/// The widget's configuration for `query` ("modelo=…&gpu=…&modo=…"). Values the widget
/// would refuse fall back to its defaults, as the widget does; nothing here fails.
fn config(query: &str) -> embed::spec::Config {
    let pairs = crate::view::query_pairs(query);
    let get = |key: &str| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
    embed::spec::read(get).0
}

/// The estimator page's query for the same settings ("?modelo=…&gpu=…&modo=…"): the
/// link under the answer. It needs no evaluation.
pub fn link(query: &str) -> String {
    embed::compute::page_query(&config(query), false)
}

/// Evaluates `query`.
pub fn quick(query: &str) -> Quick {
    let config = config(query);
    match embed::compute::compute(&config, None) {
        Ok(Shown::Ready(o)) => Quick {
            html: answer(&o, &config.settings),
            state: o.eval.verdict.map_or("", vram::Verdict::id).to_owned(),
        },
        Ok(Shown::Loading(text)) | Err(text) => Quick {
            html: crate::view::error(&text),
            state: String::new(),
        },
    }
}

/// Title, total against capacity, verdict, the bar of the six categories (SVG
/// attributes, not inline styles: the site's Content-Security-Policy blocks those), its
/// legend and the limits.
fn answer(o: &Outcome, s: &Settings) -> String {
    let mut legend = String::new();
    let parts = o.eval.estimate.breakdown.parts();
    for (v, c) in parts
        .into_iter()
        .zip(vram::palette::CATEGORIES)
        .filter(|(v, _)| *v > 0)
    {
        let _ = write!(
            legend,
            r#"<li><span class="swatch {}"></span>{}: {}</li>"#,
            c.class,
            c.label,
            ByteSize(v).binary()
        );
    }
    let bar = vram::palette::bar_svg(
        parts,
        o.capacity(),
        vram::palette::BarClasses {
            bar: "quick-bar",
            cap: "cap-line",
        },
        None,
    );
    let state = o.eval.verdict.map_or("", vram::Verdict::id);
    format!(
        r#"<p class="quick-title">{title}</p><p class="quick-total"><strong>{total}</strong> por GPU, de {capacity}</p><p class="quick-verdict" data-verdict="{state}" data-cabe="{fits}">{verdict}</p>{bar}<ul class="quick-legend">{legend}</ul><p class="calc-hint">{limits}</p>"#,
        title = esc(&o.title(s)),
        total = ByteSize(o.per_gpu()).binary(),
        capacity = ByteSize(o.capacity()).binary(),
        fits = matches!(state, "fits" | "serves"),
        verdict = esc(&o.verdict()),
        limits = esc(&o.limits()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The issue's user: QLoRA of Llama 3.1 8B on a 24 GB RTX 4090, with the defaults
    /// PEFT/TRL users get (NF4 with double quantisation, checkpointing on).
    #[test]
    fn qlora_of_an_8b_model_fits_a_4090_and_links_to_the_same_settings() {
        let q = quick("modelo=llama-3.1-8b&gpu=rtx-4090&modo=qlora");
        assert!(
            q.html
                .starts_with("<p class=\"quick-title\">Llama 3.1 8B en GeForce RTX 4090"),
            "{}",
            q.html
        );
        assert_eq!(q.state, "fits");
        assert!(
            q.html
                .contains("data-verdict=\"fits\" data-cabe=\"true\">Cabe")
        );
        assert!(q.html.contains("class=\"seg-weights\""), "{}", q.html);
        // The bar's parts fit in it, and the capacity line is at its end.
        assert!(q.html.contains("x1=\"1000\" x2=\"1000\""), "{}", q.html);
        let link = link("modelo=llama-3.1-8b&gpu=rtx-4090&modo=qlora");
        assert!(
            link.contains("modelo=llama-3.1-8b")
                && link.contains("gpu=rtx-4090")
                && link.contains("modo=qlora"),
            "{link}"
        );
    }

    #[test]
    fn a_model_too_big_does_not_fit_and_bad_values_fall_back() {
        let q = quick("modelo=llama-3.1-70b&gpu=rtx-4090&modo=full");
        assert_eq!(q.state, "does-not-fit", "{q:?}");
        assert!(q.html.contains(">No cabe"), "{}", q.html);
        // Forged values are the widget's defaults, never a panic, and nothing of them
        // reaches the page unescaped.
        let q = quick("modelo=%FF%FE&gpu=<script>&modo=x&lote=99999999999999999999");
        assert!(!q.html.is_empty() && !q.html.contains("<script"), "{q:?}");
        let q = quick(&"a=b&".repeat(10_000));
        assert!(!q.html.is_empty());
    }
}
