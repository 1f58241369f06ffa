//! "Insértalo en tu web": the `<vram-estimador>` snippet for what the estimator shows,
//! imported model included (as its architecture and exact weights, so the embed needs
//! no network), the way a video page offers its embed code. The snippet is pure and
//! tested here; the view only shows it.

use leptos::prelude::*;

use super::compute::{CUSTOM, Imported, Inputs};

/// The widget's `modo` for the page's mode.
fn widget_mode(mode: &str) -> &'static str {
    match mode {
        "full" => "entrenamiento",
        "lora" => "lora",
        "qlora" => "qlora",
        _ => "inferencia",
    }
}

/// Text for an HTML attribute between double quotes.
fn attr(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}

/// The script and element that embed these settings; `script` is the widget's URL.
/// `None` while the custom model is chosen but nothing was imported.
pub fn snippet(script: &str, i: &Inputs, imported: &Imported) -> Option<String> {
    let mut attrs = Vec::new();
    match (&imported.arch, i.model == CUSTOM) {
        // Single quotes keep the JSON readable; `'` and `&` inside are escaped.
        (Some((a, _)), true) => attrs.push(format!(
            "arquitectura='{}'",
            vram::share::encode(a)
                .replace('&', "&amp;")
                .replace('\'', "&#39;")
        )),
        (None, true) => return None,
        (_, false) => attrs.push(format!("modelo=\"{}\"", attr(&i.model))),
    }
    for (name, value) in [
        ("gpu", i.gpu.as_str()),
        ("modo", widget_mode(&i.mode)),
        ("formato", &i.format),
        ("lote", &i.batch),
        ("contexto", &i.seq),
        ("gpus", &i.gpus),
    ] {
        attrs.push(format!("{name}=\"{}\"", attr(value.trim())));
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

/// The page's settings the widget does not have, in Spanish, when any differs from
/// what the widget assumes (AdamW, SDPA, no checkpointing, ZeRO-3 on several GPUs).
pub fn left_out(i: &Inputs) -> Option<String> {
    let several = i.gpus.trim() != "1";
    let mut out = Vec::new();
    if i.is_training() && i.optimizer != "adamw" {
        out.push("el optimizador");
    }
    if i.is_training() && i.checkpointing {
        out.push("el gradient checkpointing");
    }
    if i.is_training() && several && i.zero != "3" {
        out.push("el reparto entre GPU");
    }
    if i.attention == "eager" {
        out.push("la atención ingenua");
    }
    if i.serve && !i.is_training() {
        out.push("el modo servidor");
    }
    let last = out.pop()?;
    let list = if out.is_empty() {
        last.to_owned()
    } else {
        format!("{} ni {last}", out.join(", "))
    };
    Some(format!(
        "El widget no deja elegir {list}: usa AdamW, SDPA y, al entrenar en varias GPU, ZeRO-3, así que su número puede diferir del de esta página."
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
    let note = move || {
        inputs
            .with(left_out)
            .map(|n| view! { <p class="calc-hint">{n}</p> })
    };
    view! {
        <details class="est-embed">
            <summary>"Insértalo en tu web"</summary>
            <p>"Pega este código en tu blog, tu wiki o la ficha del modelo y tus lectores verán este mismo cálculo, con los selectores para cambiar la GPU, el lote o el contexto. "
                <a href=docs>"Cómo funciona el widget"</a>"."</p>
            <div class="code"><pre class="est-embed-code" tabindex="0"><code>{code}</code></pre></div>
            {note}
        </details>
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use vram::import::StoredWeights;

    fn inputs() -> Inputs {
        Inputs::new(
            "qwen2.5-7b".into(),
            "rtx-3060".into(),
            "lora".into(),
            "nf4".into(),
            "2".into(),
            "2048".into(),
        )
    }

    #[test]
    fn catalog_settings_become_attributes() {
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
             lote=\"2\"\n  contexto=\"2048\"\n  gpus=\"1\"></vram-estimador>"
        );
        // Whatever the reader typed stays inside its attribute.
        let mut i = inputs();
        i.batch = "\"><script>".into();
        assert!(
            snippet("x", &i, &Imported::default())
                .unwrap()
                .contains("lote=\"&quot;>&lt;script>\"")
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
            arch: Some((arch.clone(), String::new())),
            weights: Some(StoredWeights {
                bytes: 99_000_000,
                params: Some(124_439_808),
                source: "gpt2.gguf".into(),
            }),
        };
        let s = snippet("x", &i, &imported).unwrap();
        assert!(!s.contains("modelo="), "{s}");
        assert!(
            s.contains("pesos=\"99000000\"\n  parametros=\"124439808\""),
            "{s}"
        );
        let json = s
            .split("arquitectura='")
            .nth(1)
            .unwrap()
            .split('\'')
            .next()
            .unwrap();
        let json = json.replace("&#39;", "'").replace("&amp;", "&");
        assert_eq!(vram::share::decode(&json).unwrap(), arch);
    }

    #[test]
    fn what_the_widget_cannot_show_is_said() {
        let mut i = inputs();
        assert_eq!(left_out(&i), None);
        i.optimizer = "adafactor".into();
        i.attention = "eager".into();
        let note = left_out(&i).unwrap();
        assert!(
            note.starts_with("El widget no deja elegir el optimizador ni la atención ingenua:"),
            "{note}"
        );
        i.checkpointing = true;
        let three = left_out(&i).unwrap();
        assert!(
            three.starts_with(
                "El widget no deja elegir el optimizador, el gradient checkpointing ni la atención ingenua:"
            ),
            "{three}"
        );
        i.checkpointing = false;
        i.mode = "inference".into();
        i.optimizer = "adamw".into();
        i.attention = "sdpa".into();
        i.gpus = "4".into();
        assert_eq!(left_out(&i), None, "inference splits with TP in both");
    }

    /// Whatever the reader typed, each value stays inside its attribute: the element
    /// has exactly one attribute per setting, each quoted once.
    #[test]
    fn typed_text_never_escapes_its_attribute() {
        for text in ["\"", "' onload='x", "<script>", "a&b\"c", "\n", "“”"] {
            let mut i = inputs();
            i.batch = text.into();
            i.seq = text.into();
            i.format = text.into();
            let s = snippet("x\"y", &i, &Imported::default()).unwrap();
            let element = s.split_once('\n').unwrap().1;
            assert_eq!(element.matches('"').count(), 2 * 7, "{element}");
            assert!(!element.contains("<script>"), "{element}");
        }
    }
}
