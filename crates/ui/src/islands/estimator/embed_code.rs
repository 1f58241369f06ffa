//! "Insértalo en tu web": the `<vram-estimador>` snippet for what the estimator shows,
//! imported model included (as its architecture and exact weights, so the embed needs
//! no network), the way a video page offers its embed code. The widget reads every
//! setting through the same table as the page (`vram::settings`), so the snippet
//! carries all of them: the core ones always, the rest when they differ from the
//! task's default. Pure and tested here; the view only shows it.

use leptos::prelude::*;
use vram::Settings;

use super::compute::{CUSTOM, Imported, Inputs};

/// Text for an HTML attribute between double quotes.
use numfmt::escape_html as attr;

/// The script and element that embed these settings; `script` is the widget's URL.
/// `None` while the custom model is chosen but nothing was imported.
pub fn snippet(script: &str, i: &Inputs, imported: &Imported) -> Option<String> {
    let mut attrs = Vec::new();
    match (&imported.arch, i.model == CUSTOM) {
        (Some((a, _)), true) => attrs.push(format!("arquitectura=\"{}\"", attr(&a.0))),
        (None, true) => return None,
        (_, false) => attrs.push(format!(
            "{}=\"{}\"",
            vram::settings::MODEL_KEY,
            attr(&i.model)
        )),
    }
    for (name, value) in i.settings.pairs(&Settings::web_default()) {
        attrs.push(format!("{name}=\"{}\"", attr(&value)));
    }
    if let Some(w) = &imported.weights {
        attrs.push(format!("pesos=\"{}\"", w.bytes));
        if let Some(p) = w.params {
            attrs.push(format!("parametros=\"{p}\""));
        }
    }
    Some(format!(
        "<script type=\"module\" src=\"{}\"></script>\n<vram-estimador {}></vram-estimador>",
        attr(script),
        attrs.join("\n  ")
    ))
}

/// The disclosure with the snippet, as a code block: the site's copy script gives it
/// its «Copiar» button (and copies what the block shows when clicked).
pub fn view(
    inputs: RwSignal<Inputs>,
    imported: RwSignal<Imported>,
    script: String,
) -> impl IntoView {
    // The docs page on this same site: the script's path without its origin.
    let path = script
        .split_once("://")
        .and_then(|(_, rest)| rest.find('/').map(|at| &rest[at..]))
        .unwrap_or("/");
    let docs = path.replace("embed/vram-estimador.js", "widget/");
    let code = move || {
        inputs
            .with(|i| imported.with(|m| snippet(&script, i, m)))
            .unwrap_or_else(|| {
                "Importa un modelo o elige uno del catálogo para obtener el código.".into()
            })
    };
    view! {
        <details class="est-embed">
            <summary>"Insértalo en tu web"</summary>
            <p>"Pega este código en tu blog, tu wiki o la ficha del modelo y tus lectores verán este mismo cálculo, con los selectores para cambiar la GPU, el lote o el contexto. "
                <a href=docs>"Cómo funciona el widget"</a>"."</p>
            <div class="code"><pre class="est-embed-code" tabindex="0"><code>{code}</code></pre></div>
        </details>
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use vram::import::StoredWeights;
    use vram::{Field, Surface, Task};

    fn inputs() -> Inputs {
        let mut s = Settings::web_default().with_task(Task::Lora);
        for (f, v) in [
            (Field::Gpu, "rtx-3060"),
            (Field::Format, "nf4"),
            (Field::Batch, "2"),
            (Field::Seq, "2048"),
        ] {
            s.set(f, v, Surface::Web).unwrap();
        }
        Inputs::new("qwen2.5-7b".into(), s)
    }

    #[test]
    fn settings_become_attributes() {
        let s = snippet(
            "https://vramlab.dev/embed/vram-estimador.js",
            &inputs(),
            &Imported::default(),
        )
        .unwrap();
        assert_eq!(
            s,
            "<script type=\"module\" src=\"https://vramlab.dev/embed/vram-estimador.js\"></script>\n\
             <vram-estimador modelo=\"qwen2.5-7b\"\n  gpu=\"rtx-3060\"\n  modo=\"lora\"\n  formato=\"nf4\"\n  \
             lote=\"2\"\n  contexto=\"2k\"></vram-estimador>"
        );
        // Settings beyond the core ones travel when they differ from the task's default.
        let mut i = inputs();
        i.choose(Field::Optimizer, "adafactor");
        i.choose(Field::Checkpointing, "no");
        let s = snippet("x", &i, &Imported::default()).unwrap();
        assert!(
            s.contains("checkpointing=\"no\"\n  optimizador=\"adafactor\""),
            "{s}"
        );
        // "propio" with nothing imported has no code to give.
        i.model = CUSTOM.into();
        assert_eq!(snippet("x", &i, &Imported::default()), None);
    }

    #[test]
    fn an_imported_model_travels_whole() {
        let mut i = inputs();
        i.model = CUSTOM.into();
        let mut arch = vram::catalog::model("gpt2").unwrap().arch.clone();
        arch.family = "it's & co".into();
        let imported = Imported {
            arch: Some((
                vram::share::ArchText(vram::share::encode(&arch)),
                String::new(),
            )),
            weights: Some(StoredWeights {
                bytes: 99_000_000,
                params: Some(124_439_808),
                source: "gpt2.gguf".into(),
                experts: Vec::new(),
                shard: None,
            }),
        };
        let s = snippet("x", &i, &imported).unwrap();
        assert!(!s.contains("modelo="), "{s}");
        assert!(
            s.contains("pesos=\"99000000\"\n  parametros=\"124439808\""),
            "{s}"
        );
        let text = s
            .split("arquitectura=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        // What the browser's attribute parser gives back.
        let text = text
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&");
        assert_eq!(vram::share::decode(&text).unwrap(), arch);
    }

    /// A model id from a link, whatever it holds, stays inside its attribute.
    #[test]
    fn text_never_escapes_its_attribute() {
        for text in ["\"", "' onload='x", "<script>", "a&b\"c", "\n", "“”"] {
            let mut i = inputs();
            i.model = text.into();
            let s = snippet("x\"y", &i, &Imported::default()).unwrap();
            let element = s.split_once('\n').unwrap().1;
            assert_eq!(element.matches('"').count(), 2 * 6, "{element}");
            assert!(!element.contains("<script>"), "{element}");
        }
    }
}
