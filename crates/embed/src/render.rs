//! The widget's markup, as strings: the controls, the result and the lines around them.
//! Pure (and compiled natively, so it is tested here); `widget.rs` puts these strings in
//! the shadow root. Plain strings instead of a UI framework keep the bundle that other
//! sites load small (issue 20: 150 KB gzip); every text and attribute value is escaped.

use std::fmt::Write;

use vram::{ByteSize, Field, Surface, catalog};

use crate::compute::{Outcome, Shown};
use crate::spec::{Config, Custom, Problem};

/// The model select's value for the custom model.
pub const CUSTOM_OPTION: &str = "propio";
/// The `name` of the model select and of the Hub id field.
pub const MODEL_NAME: &str = "modelo";
pub const HUB_NAME: &str = "hf";

/// `text` escaped for HTML text and quoted attributes (`numfmt::escape_html`).
pub use numfmt::escape_html as esc;

/// The Hub id the reader sees in the field: the one shown, if any.
pub fn shown_repo(c: &Config) -> String {
    match (&c.custom, c.use_custom) {
        (Some(Custom::Hub { repo }), true) => repo.clone(),
        _ => String::new(),
    }
}

/// Whether the picker shows the custom model (not after a failed import, when the
/// widget fell back to the catalog one).
pub fn custom_shown(c: &Config, failed: bool) -> bool {
    c.use_custom && !failed
}

/// The custom model's option, if there is one: its label changes when its import
/// fails.
fn custom_option(c: &Config, failed: bool) -> String {
    c.custom_name()
        .map(|name| {
            let label = if failed {
                format!("{name} (no se pudo importar)")
            } else {
                name
            };
            format!(
                r#"<option value="{CUSTOM_OPTION}">{}</option>"#,
                esc(&label)
            )
        })
        .unwrap_or_default()
}

/// The controls: model, GPU, batch, context and a Hub id. Their values are set by
/// the widget after it puts them in place (`values`), so one markup serves every state
/// with the same custom option.
pub fn controls(c: &Config, failed: bool) -> String {
    let mut models = custom_option(c, failed);
    for m in catalog::models() {
        let _ = write!(
            models,
            r#"<option value="{}">{}</option>"#,
            esc(&m.id),
            esc(&m.name)
        );
    }
    let mut gpus = String::new();
    for g in catalog::gpus() {
        let _ = write!(
            gpus,
            r#"<option value="{}">{}</option>"#,
            esc(&g.id),
            esc(&g.label())
        );
    }
    let number = |f: Field| {
        let spec = f.spec();
        format!(
            r#"<label><span>{}</span><input type="text" inputmode="numeric" name="{}"></label>"#,
            esc(spec.label),
            spec.key
        )
    };
    format!(
        r#"<div class="vw-controls"><label><span>Modelo</span><select name="{MODEL_NAME}">{models}</select></label><label><span>GPU</span><select name="{gpu}">{gpus}</select></label>{batch}{seq}<label class="vw-hub"><span>O un modelo del Hub de Hugging Face</span><input type="text" name="{HUB_NAME}" placeholder="organización/modelo" spellcheck="false" autocomplete="off"></label></div>"#,
        gpu = Field::Gpu.spec().key,
        batch = number(Field::Batch),
        seq = number(Field::Seq),
    )
}

/// What each control shows for `c`: (name, value).
pub fn values(c: &Config, failed: bool) -> Vec<(&'static str, String)> {
    let model = if custom_shown(c, failed) {
        CUSTOM_OPTION.to_owned()
    } else {
        c.model.clone()
    };
    let text = |f: Field| c.settings.text(f, Surface::Web).unwrap_or_default();
    vec![
        (MODEL_NAME, model),
        (
            Field::Gpu.spec().key,
            c.settings.gpu.map(|g| g.id.clone()).unwrap_or_default(),
        ),
        (Field::Batch.spec().key, text(Field::Batch)),
        (Field::Seq.spec().key, text(Field::Seq)),
        (HUB_NAME, shown_repo(c)),
    ]
}

/// One alert line.
pub fn problem_line(text: &str) -> String {
    format!(r#"<p class="vw-problem" role="alert">{}</p>"#, esc(text))
}

/// The attributes the widget could not use.
pub fn problems(list: &[Problem]) -> String {
    list.iter().map(|p| problem_line(&p.sentence())).collect()
}

/// The stacked bar (per GPU) against the card's capacity
/// ([`vram::palette::bar_svg`], drawn as on the site, with the widget's own classes).
fn bar(o: &Outcome) -> String {
    vram::palette::bar_svg(
        o.eval.estimate.breakdown.parts(),
        o.capacity(),
        vram::palette::BarClasses {
            bar: "vw-bar",
            cap: "vw-cap",
        },
        None,
    )
}

/// The result of one evaluation.
fn result(o: &Outcome, c: &Config) -> String {
    let mut legend = String::new();
    for (v, cat) in o
        .eval
        .estimate
        .breakdown
        .parts()
        .into_iter()
        .zip(vram::palette::CATEGORIES)
        .filter(|(v, _)| *v > 0)
    {
        let _ = write!(
            legend,
            r#"<li><span class="vw-sw {}"></span>{}: {}</li>"#,
            cat.class,
            esc(cat.label),
            ByteSize(v).binary()
        );
    }
    let state = o.eval.verdict.map_or("", vram::Verdict::id);
    format!(
        r#"{notice}<p class="vw-title">{title}</p><p class="vw-total"><strong>{total}</strong> por GPU, de {cap}</p><p class="vw-verdict" data-cabe="{fits}" data-verdict="{state}">{verdict}</p>{bar}<ul class="vw-legend">{legend}</ul><p class="vw-limits">{limits}</p>{launch}"#,
        launch = launch(o, c),
        notice = o.notice.as_deref().map(problem_line).unwrap_or_default(),
        title = esc(&o.title(&c.settings)),
        total = ByteSize(o.per_gpu()).binary(),
        cap = ByteSize(o.capacity()).binary(),
        fits = o.fits(),
        verdict = esc(&o.verdict()),
        bar = bar(o),
        limits = esc(&o.limits()),
    )
}

/// The command that runs it, for an inference engine (`vram::launch::command`, the
/// estimator's and the CLI's own), when it fits; the reasons, and the training
/// scripts, stay on the estimator page (the scripts would not fit the widget's budget).
fn launch(o: &Outcome, c: &Config) -> String {
    if !o.fits() {
        return String::new();
    }
    let hub = match (&c.custom, c.use_custom) {
        (Some(crate::spec::Custom::Hub { repo }), true) => Some(repo.clone()),
        (Some(_), true) => None,
        _ => vram::catalog::model(&c.model)
            .map(|p| p.hf_repo.clone())
            .filter(|r| !r.is_empty()),
    };
    let arg = vram::launch::model_arg(c.settings.runtime, hub.as_deref(), None);
    let Some(l) = vram::launch::command(&arg, &c.settings, &o.eval) else {
        return String::new();
    };
    format!(
        r#"<div class="vw-launch"><p>Para lanzarlo ({}):</p><pre><code>{}</code></pre></div>"#,
        esc(l.runtime),
        esc(&l.command)
    )
}

/// What the widget shows below its controls: the result, the import on its way, or
/// why there is none.
pub fn outcome(shown: &Result<Shown, String>, c: &Config) -> String {
    match shown {
        Ok(Shown::Ready(o)) => result(o, c),
        Ok(Shown::Loading(s)) => format!(r#"<p class="vw-loading" role="status">{}</p>"#, esc(s)),
        Err(e) => problem_line(e),
    }
}

/// The widget's frame: the regions `widget.rs` fills, and the link to the estimator.
/// The regions are `display: contents`, so the layout is that of their children.
pub const FRAME: &str = r#"<div class="vw" role="group" aria-label="Estimador de VRAM de vramlab"><div class="vw-slot" data-slot="problems"></div><div class="vw-slot" data-slot="controls"></div><div class="vw-slot" data-slot="typed"></div><div class="vw-slot" data-slot="out"></div><p class="vw-foot"><a class="vw-link" target="_blank" rel="noopener">El detalle, cada opción explicada y el plan si no cabe, en el estimador de vramlab ↗</a></p></div>"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compute::compute;
    use crate::spec;

    fn config(attrs: &[(&str, &str)]) -> Config {
        spec::read(|name| {
            attrs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        })
        .0
    }

    #[test]
    fn text_and_attributes_are_escaped() {
        assert_eq!(
            esc(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        let c = config(&[
            ("hf", "org/modelo"),
            ("nombre", "<script>alert(1)</script>"),
        ]);
        let html = controls(&c, false);
        assert!(!html.contains("<script>"), "{html}");
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        assert!(problem_line("a<b").contains("a&lt;b"));
    }

    #[test]
    fn controls_offer_every_catalog_entry_and_show_the_settings() {
        let c = config(&[("modelo", "qwen2.5-7b"), ("gpu", "rtx-3060"), ("lote", "4")]);
        let html = controls(&c, false);
        assert_eq!(
            html.matches("<option").count(),
            catalog::models().len() + catalog::gpus().len()
        );
        let v = values(&c, false);
        assert!(v.contains(&(MODEL_NAME, "qwen2.5-7b".to_owned())), "{v:?}");
        assert!(v.contains(&("gpu", "rtx-3060".to_owned())), "{v:?}");
        assert!(v.contains(&("lote", "4".to_owned())), "{v:?}");
        assert!(v.contains(&(HUB_NAME, String::new())), "{v:?}");
    }

    #[test]
    fn a_failed_import_shows_the_catalog_model_it_fell_back_to() {
        let c = config(&[("modelo", "qwen2.5-7b"), ("hf", "gated/llama")]);
        assert!(controls(&c, false).contains(r#"<option value="propio">gated/llama</option>"#));
        assert!(controls(&c, true).contains("gated/llama (no se pudo importar)"));
        assert_eq!(values(&c, false)[0].1, CUSTOM_OPTION);
        assert_eq!(values(&c, true)[0].1, "qwen2.5-7b");
        assert_eq!(values(&c, true)[4].1, "gated/llama");
    }

    /// The widget shows the command an inference engine would run, the estimator's
    /// own, only when it fits; training keeps its script on the estimator page.
    #[test]
    fn a_fitting_inference_shows_its_command() {
        let html = |attrs: &[(&str, &str)]| {
            let c = config(attrs);
            outcome(&compute(&c, None), &c)
        };
        let vllm = html(&[
            ("modelo", "llama-3.1-8b"),
            ("gpu", "h100-sxm"),
            ("motor", "vllm"),
        ]);
        assert!(
            vllm.contains("<pre><code>vllm serve meta-llama/Llama-3.1-8B"),
            "{vllm}"
        );
        let llama = html(&[
            ("modelo", "llama-3.1-8b"),
            ("gpu", "rtx-4090"),
            ("motor", "llamacpp"),
        ]);
        assert!(
            llama.contains("llama-server \\\n  -m MODELO.gguf"),
            "{llama}"
        );
        // Does not fit: no command that would run out of memory.
        assert!(
            !html(&[
                ("modelo", "llama-3.1-70b"),
                ("gpu", "rtx-3060"),
                ("motor", "vllm")
            ])
            .contains("vw-launch")
        );
        // Training: the script is on the estimator page.
        assert!(
            !html(&[
                ("modelo", "llama-3.2-1b"),
                ("gpu", "h100-sxm"),
                ("modo", "lora")
            ])
            .contains("vw-launch")
        );
    }

    #[test]
    fn the_result_shows_total_verdict_bar_and_legend() {
        let c = config(&[("modelo", "llama-3.1-8b"), ("gpu", "rtx-4090")]);
        let shown = compute(&c, None);
        let html = outcome(&shown, &c);
        let Ok(Shown::Ready(o)) = &shown else {
            panic!("{shown:?}")
        };
        assert!(html.contains(&format!(
            "<strong>{}</strong> por GPU",
            ByteSize(o.per_gpu()).binary()
        )));
        assert!(html.contains(r#"data-cabe="true""#), "{html}");
        assert!(html.contains("Llama 3.1 8B en GeForce RTX 4090"), "{html}");
        let parts = o
            .eval
            .estimate
            .breakdown
            .parts()
            .iter()
            .filter(|v| **v > 0)
            .count();
        assert_eq!(html.matches("<rect").count(), parts);
        assert_eq!(html.matches("<li>").count(), parts);
        assert!(html.contains(r#"class="vw-cap""#));
        // A Hub import on its way says so; an error is an alert.
        let hub = config(&[("hf", "org/modelo")]);
        assert!(outcome(&compute(&hub, None), &hub).contains(r#"class="vw-loading""#));
        assert!(outcome(&Err("mal".into()), &c).contains(r#"role="alert">mal<"#));
    }
}
