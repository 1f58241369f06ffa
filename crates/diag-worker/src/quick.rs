//! The home page's "¿Cabe mi modelo?": a catalog model, a GPU and a task, read as the
//! embeddable widget reads its attributes (`embed::spec`), evaluated by the widget's
//! own `embed::compute` (the same `vram::evaluate` as the estimator page and the CLI),
//! and drawn from strings. It runs in the diagnostics worker, so the home page carries
//! no estimator engine until the reader changes a setting; the first answer is computed
//! at build time.

use serde::{Deserialize, Serialize};
use vram::ByteSize;

/// One part of the bar: its label, size, and width in thousandths of the bar.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuickPart {
    pub label: String,
    /// "seg-weights", "seg-kv"… (the CSS class of its colour).
    pub class: String,
    pub value: String,
    pub permille: u32,
}

/// What the quick estimator shows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuickView {
    /// "Llama 3.1 8B en GeForce RTX 4090 · QLoRA".
    pub title: String,
    /// "17,32 GiB" per GPU, of "23,65 GiB".
    pub total: String,
    pub capacity: String,
    /// "Cabe con margen: sobran …", "No cabe: faltan …".
    pub verdict: String,
    /// `vram::Verdict::id` ("fits", "tight", "does-not-fit"…), empty on an error.
    pub state: String,
    pub parts: Vec<QuickPart>,
    /// Where the GPU's capacity falls on the bar, in thousandths.
    pub capacity_permille: u32,
    /// "Lote máximo: 4 (1 con margen) · contexto máximo: …".
    pub limits: String,
    /// The estimator page's query for the same settings ("?modelo=…&gpu=…").
    pub query: String,
}

/// Evaluates `query` ("modelo=llama-3.1-8b&gpu=rtx-4090&modo=qlora"). Values the widget
/// would refuse fall back to its defaults, as the widget does; nothing here fails.
pub fn quick(query: &str) -> QuickView {
    let pairs: Vec<(String, String)> =
        form_urlencoded::parse(query.trim_start_matches('?').as_bytes())
            .take(64)
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
    let get = |key: &str| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
    let (config, _) = embed::spec::read(get);
    let link = embed::compute::page_query(&config, false);
    match embed::compute::compute(&config, None) {
        Ok(embed::compute::Shown::Ready(o)) => view_of(&o, &config.settings, link),
        Ok(embed::compute::Shown::Loading(text)) | Err(text) => QuickView {
            title: String::new(),
            total: String::new(),
            capacity: String::new(),
            verdict: text,
            state: String::new(),
            parts: Vec::new(),
            capacity_permille: 0,
            limits: String::new(),
            query: link,
        },
    }
}

fn view_of(o: &embed::compute::Outcome, s: &vram::Settings, query: String) -> QuickView {
    let b = &o.eval.estimate.breakdown;
    let top = o.per_gpu().max(o.capacity()).max(1);
    let permille = |v: u64| u32::try_from(u128::from(v) * 1000 / u128::from(top)).unwrap_or(1000);
    let parts: Vec<QuickPart> = b
        .parts()
        .into_iter()
        .zip(vram::palette::CATEGORIES)
        .filter(|(v, _)| *v > 0)
        .map(|(v, c)| QuickPart {
            label: c.label.to_owned(),
            class: c.class.to_owned(),
            value: ByteSize(v).binary(),
            permille: permille(v),
        })
        .collect();
    QuickView {
        title: o.title(s),
        total: ByteSize(o.per_gpu()).binary(),
        capacity: ByteSize(o.capacity()).binary(),
        verdict: o.verdict(),
        state: o.eval.verdict.map_or("", vram::Verdict::id).to_owned(),
        parts,
        capacity_permille: permille(o.capacity()),
        limits: o.limits(),
        query,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The user: QLoRA of Llama 3.1 8B on a 24 GB RTX 4090, with the defaults
    /// PEFT/TRL users get (NF4 with double quantisation, checkpointing on).
    #[test]
    fn qlora_of_an_8b_model_fits_a_4090_and_links_to_the_same_settings() {
        let v = quick("modelo=llama-3.1-8b&gpu=rtx-4090&modo=qlora");
        assert!(
            v.title.starts_with("Llama 3.1 8B en GeForce RTX 4090"),
            "{v:?}"
        );
        assert!(v.verdict.starts_with("Cabe"), "{v:?}");
        assert_eq!(v.state, "fits");
        assert!(
            v.query.contains("modelo=llama-3.1-8b")
                && v.query.contains("gpu=rtx-4090")
                && v.query.contains("modo=qlora"),
            "{}",
            v.query
        );
        let widths: u32 = v.parts.iter().map(|p| p.permille).sum();
        assert!(widths <= 1000 && v.capacity_permille == 1000, "{v:?}");
    }

    #[test]
    fn a_model_too_big_does_not_fit_and_bad_values_fall_back() {
        let v = quick("modelo=llama-3.1-70b&gpu=rtx-4090&modo=full");
        assert_eq!(v.state, "does-not-fit", "{v:?}");
        assert!(v.verdict.starts_with("No cabe"), "{v:?}");
        assert_eq!(v.capacity_permille.min(1000), v.capacity_permille);
        // Forged values are the widget's defaults, never a panic.
        let v = quick("modelo=%FF%FE&gpu=<script>&modo=x&lote=99999999999999999999");
        assert!(!v.verdict.is_empty(), "{v:?}");
        let v = quick(&"a=b&".repeat(10_000));
        assert!(!v.verdict.is_empty());
    }
}
