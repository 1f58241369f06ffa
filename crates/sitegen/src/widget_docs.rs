//! The widget's documentation, generated from `embed::spec::docs()` (the attributes
//! the widget reads: its own and every `vram::settings` field): the attribute table, copy-paste snippets whose URLs are this site's,
//! and live examples. A `{{< widget parte="…" >}}` shortcode places each part.

use embed::spec::docs;

use crate::html::escape;

/// Where the widget's script is served from, absolute (for snippets other sites paste).
pub fn script_url(origin: &str, base: &str) -> String {
    format!("{origin}{base}embed/vram-estimador.js")
}

/// A highlighted HTML block, marked up as the Markdown renderer marks up fences
/// (focusable, since a wide block scrolls).
fn code(text: &str) -> String {
    let inner = crate::highlight::highlight("html", text).unwrap_or_else(|_| escape(text));
    format!(
        "<div class=\"code\"><pre tabindex=\"0\"><code class=\"language-html\">{inner}</code></pre></div>\n"
    )
}

/// The attribute table.
pub fn attributes() -> String {
    let rows: String = docs()
        .iter()
        .map(|a| {
            format!(
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                a.name,
                escape(&a.accepts),
                if a.default.is_empty() {
                    "—".to_owned()
                } else {
                    format!("<code>{}</code>", escape(&a.default))
                },
                escape(a.help)
            )
        })
        .collect();
    format!(
        "<div class=\"table-scroll\" tabindex=\"0\"><table><caption>Atributos de &lt;vram-estimador&gt;</caption>\
         <thead><tr><th>atributo</th><th>valores</th><th>por defecto</th><th>qué hace</th></tr></thead>\
         <tbody>{rows}</tbody></table></div>"
    )
}

/// The script-and-element snippet with the attributes people change most, at their
/// defaults (the others are in the table; the custom-model ones have their own example).
pub fn snippet(origin: &str, base: &str) -> String {
    const SHOWN: [&str; 9] = [
        "modelo",
        "gpu",
        "modo",
        "formato",
        "lote",
        "contexto",
        "gpus",
        "tema",
        "controles",
    ];
    let attrs: String = docs()
        .iter()
        .filter(|a| SHOWN.contains(&a.name))
        .map(|a| format!("\n  {}=\"{}\"", a.name, a.default))
        .collect();
    code(&format!(
        "<script type=\"module\" src=\"{}\"></script>\n<vram-estimador{attrs}>\n</vram-estimador>",
        script_url(origin, base)
    ))
}

/// The iframe snippet, with the optional listener that sizes the frame to its content.
pub fn iframe(origin: &str, base: &str) -> String {
    code(&format!(
        "<iframe src=\"{origin}{base}embed/?modelo=llama-3.1-8b&gpu=rtx-4090&contexto=8192\"\n  \
         title=\"Estimador de VRAM\" width=\"100%\" height=\"460\" loading=\"lazy\"></iframe>\n\
         <script>\n  // Opcional: ajusta la altura del iframe a su contenido.\n  \
         addEventListener(\"message\", (e) => {{\n    \
         if (e.data?.tipo !== \"vramlab:altura\") return;\n    \
         for (const f of document.querySelectorAll(\"iframe\"))\n      \
         if (f.contentWindow === e.source) f.height = e.data.altura;\n  }});\n</script>"
    ))
}

/// Two live widgets on this page, each with the markup that makes it.
pub fn demo(base: &str) -> String {
    let examples = [
        r#"<vram-estimador modelo="llama-3.1-8b" gpu="rtx-4090" contexto="8192"></vram-estimador>"#,
        r#"<vram-estimador modelo="llama-3.1-70b" gpu="h100-sxm" gpus="4" modo="inferencia" tema="oscuro" controles="no"></vram-estimador>"#,
    ];
    let mut html =
        format!("<script type=\"module\" src=\"{base}embed/vram-estimador.js\"></script>\n");
    for e in examples {
        html.push_str(&code(e));
        html.push_str(e);
        html.push('\n');
    }
    html
}

/// A model outside the catalog: a Hub id (fetched when the page opens, so shown as
/// code only) and, live, an architecture as the estimator's links carry it (no
/// network), written from the catalog's GPT-2 so it always parses.
pub fn custom(base: &str) -> String {
    let hub = r#"<vram-estimador hf="Qwen/Qwen2.5-7B-Instruct" gpu="rtx-4090" contexto="32768"></vram-estimador>"#;
    let arch = vram::catalog::model("gpt2")
        .map(|m| vram::share::encode(&m.arch))
        .unwrap_or_default();
    let rest = r#"nombre="Mi GPT-2" gpu="rtx-3060" lote="8" contexto="1024""#;
    let mut html = format!(
        "<script type=\"module\" src=\"{base}embed/vram-estimador.js\"></script>\n{}",
        code(hub)
    );
    html.push_str(&code(&format!(
        "<vram-estimador arquitectura=\"{arch}\"\n  {rest}></vram-estimador>"
    )));
    html.push_str(&format!(
        "<vram-estimador id=\"widget-propio\" arquitectura=\"{}\" {rest}></vram-estimador>\n",
        escape(&arch)
    ));
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_come_from_the_attribute_table() {
        let table = attributes();
        let snippet = snippet("https://vramlab.dev", "/");
        for a in docs() {
            assert!(
                table.contains(&format!("<code>{}</code>", a.name)),
                "{}",
                a.name
            );
        }
        assert!(snippet.contains("contexto=&quot;4k&quot;"), "{snippet}");
        let custom = custom("/");
        assert!(
            custom.contains("hf=&quot;Qwen/")
                && custom.contains("id=\"widget-propio\" arquitectura=\"a1:"),
            "{custom}"
        );
        assert!(snippet.contains("https://vramlab.dev/embed/vram-estimador.js"));
        assert!(iframe("https://x.dev", "/sub/").contains("https://x.dev/sub/embed/?modelo="));
        assert!(demo("/").matches("<vram-estimador ").count() >= 2);
    }
}
