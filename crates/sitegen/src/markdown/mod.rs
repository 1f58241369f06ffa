//! Markdown to HTML for one page: pulldown-cmark with explicit options, then a chain
//! of passes over its event stream, in the manner of mdBook's preprocessors. Each pass
//! does one thing and has its own tests:
//!
//! 1. `shortcodes`: widget shortcodes become islands; the page's hydrate bundle.
//! 2. `headings`: ids, anchors and the table of contents.
//! 3. `search_text` (read only): the text of each h2/h3 section for the search index.
//! 4. `code_blocks`: highlighted code.
//! 5. `math`: LaTeX to MathML.
//! 6. `links`: the base path on internal links, recorded for the link checker.
//! 7. `table_cells`: column alignment as classes, not inline styles.
//!
//! A pass that finds a problem stops the page with `(line, Spanish message)`.

mod code_blocks;
mod headings;
mod links;
mod math;
mod search_text;
mod shortcodes;
mod table_cells;

use std::ops::Range;

use pulldown_cmark::{Event, Options, Parser};
use ui::layout::TocEntry;

use crate::error::LineIndex;
use crate::widgets::{Bundle, WidgetContext};

/// One event and the source bytes it came from.
type Spanned<'a> = (Event<'a>, Range<usize>);
/// Where a page stops: the file line and a Spanish message.
type Failure = (usize, String);

/// The parser options every page uses.
pub fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_MATH
}

/// An internal link found in the page, for the link checker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InternalLink {
    /// Path without base: "/anatomia-vram/" or "" for same-page anchors.
    pub path: String,
    pub anchor: Option<String>,
    pub line: usize,
}

/// One rendered page body.
#[derive(Debug, Clone, Default)]
pub struct Rendered {
    pub html: String,
    pub toc: Vec<TocEntry>,
    /// Every id the page defines (headings), for anchor checks.
    pub ids: Vec<String>,
    pub links: Vec<InternalLink>,
    pub has_islands: bool,
    /// The hydrate bundle that carries every island of the page loaded at once.
    pub bundle: Bundle,
    /// The bundle of the islands woken only when they near the screen
    /// (`Widget::deferrable`, below the page's first island), if the page has any.
    pub later: Option<Bundle>,
    /// The page has a code block (and gets the copy buttons' script).
    pub has_code: bool,
    /// The page's text split at its h2/h3 headings, for the search index. The first
    /// section (id `None`) is the text before the first heading.
    pub sections: Vec<SectionText>,
}

/// The plain text of one section of a page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SectionText {
    pub id: Option<String>,
    pub heading: String,
    pub text: String,
}

/// Renders `body` (whose first line is file line `lines`' first line). Errors carry the
/// file line they refer to.
pub fn render(
    body: &str,
    lines: &LineIndex,
    base: &str,
    widgets: &WidgetContext,
) -> Result<Rendered, Failure> {
    let mut out = Rendered::default();
    let events: Vec<Spanned<'_>> = Parser::new_ext(body, options())
        .into_offset_iter()
        .collect();
    let events = shortcodes::expand(events, body, lines, widgets, &mut out)?;
    let events = headings::anchor(events, lines, &mut out)?;
    search_text::collect(&events, &mut out);
    let events = code_blocks::highlight(events, lines, &mut out)?;
    let events = math::render(events, lines)?;
    let events = links::rebase(events, base, lines, &mut out);
    let events = table_cells::without_styles(events.into_iter().map(|(e, _)| e));
    pulldown_cmark::html::push_html(&mut out.html, events);
    // Tables scroll sideways on narrow screens: a keyboard must be able to reach them
    // (axe: scrollable-region-focusable). Table cells never hold a raw "<table>": text
    // is escaped, and widget HTML is written before this point only as whole tables.
    out.html = out.html.replace("<table>", "<table tabindex=\"0\">");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> WidgetContext {
        WidgetContext {
            gpu_js: "/pkg/g.js".into(),
            gpu_wasm: "/pkg/g.wasm".into(),
            import_js: "/pkg/i.js".into(),
            import_wasm: "/pkg/i.wasm".into(),
            estimate_js: "/pkg/e.js".into(),
            estimate_wasm: "/pkg/e.wasm".into(),
            worker: ui::islands::background::WorkerUrls {
                loader: "/assets/w.js".into(),
                js: "/pkg/w.js".into(),
                wasm: "/pkg/w.wasm".into(),
            },
            ..WidgetContext::default()
        }
    }

    fn go(body: &str) -> Result<Rendered, (usize, String)> {
        render(body, &LineIndex::new(body, 10), "/base/", &ctx())
    }

    #[test]
    fn headings_get_anchors_and_toc() {
        let r = go("## ¿Qué es?\n\ntexto\n\n### Detalle\n\n## ¿Qué es?\n").unwrap();
        assert_eq!(r.ids, vec!["que-es", "detalle", "que-es-2"]);
        assert_eq!(r.toc.len(), 3);
        assert_eq!(r.toc[1].level, 3);
        assert!(
            r.html
                .contains(r##"<h2 id="que-es">¿Qué es?<a class="anchor" href="#que-es""##),
            "{}",
            r.html
        );
        assert!(!r.has_islands);
    }

    #[test]
    fn sections_split_at_h2_and_h3() {
        let r = go("Intro *con* `código`.\n\n## Caché KV\n\n- uno\n- dos\n\n| a | b |\n|---|---|\n| x | y |\n\n#### Menor\n\nfin\n\n### Detalle {#det}\n\n```python\nx = 1\n```\n\n{{< pesos >}}\n").unwrap();
        let got: Vec<(Option<&str>, &str, &str)> = r
            .sections
            .iter()
            .map(|s| (s.id.as_deref(), s.heading.as_str(), s.text.trim()))
            .collect();
        assert_eq!(
            got,
            [
                (None, "", "Intro con código."),
                (Some("cache-kv"), "Caché KV", "uno dos a b x y Menor fin"),
                (Some("det"), "Detalle", "x = 1"),
            ]
        );
    }

    #[test]
    fn math_becomes_mathml() {
        let r = go("Una matriz de $N \\times N$.\n\n$$O = PV$$\n").unwrap();
        assert!(r.html.contains(r#"<math display="inline">"#), "{}", r.html);
        assert!(r.html.contains(r#"<math display="block">"#), "{}", r.html);
        assert!(!r.html.contains('$'), "{}", r.html);
    }

    #[test]
    fn explicit_heading_ids_win() {
        let r = go("## Pesos {#weights}\n").unwrap();
        assert_eq!(r.ids, vec!["weights"]);
    }

    #[test]
    fn each_page_gets_its_bundles() {
        assert_eq!(go("{{< pesos >}}\n").unwrap().bundle, Bundle::Light);
        // The explainer rides with the snapshot viewer, or alone in the home page's
        // bundle, the lighter one; the lab comes later from its own.
        let r = go("{{< explicador-oom >}}\n\n{{< visor-snapshot >}}\n").unwrap();
        assert_eq!(r.bundle, Bundle::Diag);
        let r = go("{{< explicador-oom >}}\n\n{{< laboratorio-asignador >}}\n").unwrap();
        assert_eq!((r.bundle, r.later), (Bundle::Home, Some(Bundle::Lab)));
        // As the page's first island, a heavy island is woken at once.
        let r = go("{{< laboratorio-asignador >}}\n").unwrap();
        assert_eq!((r.bundle, r.later), (Bundle::Lab, None));
        let r = go("{{< estimador >}}\n").unwrap();
        assert_eq!((r.bundle, r.later), (Bundle::Tools, None));
        // Below the weights calculator the estimator comes later.
        let r = go("{{< pesos >}}\n\n{{< estimador >}}\n").unwrap();
        assert_eq!((r.bundle, r.later), (Bundle::Light, Some(Bundle::Tools)));
        let r = go("{{< visor-snapshot >}}\n\n{{< laboratorio-asignador >}}\n").unwrap();
        assert_eq!((r.bundle, r.later), (Bundle::Diag, Some(Bundle::Lab)));
        // A bundle carries only the islands listed for it.
        let (line, msg) = go("{{< pesos >}}\n\n{{< atencion-por-bloques >}}\n").unwrap_err();
        assert_eq!(line, 12);
        assert!(msg.contains("la calculadora de pesos"), "{msg}");
        assert!(msg.contains("la demo de atención por bloques"), "{msg}");
        let (_, msg) = go("{{< estimador >}}\n\n{{< prueba-webgpu >}}\n").unwrap_err();
        assert!(msg.contains("la prueba de WebGPU"), "{msg}");
        // Two heavy islands below the first must share their later bundle too.
        let (_, msg) = go("{{< pesos >}}\n\n{{< estimador >}}\n\n{{< laboratorio-asignador >}}\n")
            .unwrap_err();
        assert!(msg.contains("el laboratorio del asignador"), "{msg}");
    }

    #[test]
    fn shortcodes_become_islands() {
        let r = go("Antes.\n\n{{< pesos parametros=\"70B\" >}}\n\nDespués.\n").unwrap();
        assert!(r.has_islands);
        assert!(r.html.contains("<leptos-island"), "{}", r.html);
        assert!(!r.html.contains("{{<"), "{}", r.html);
        assert!(r.html.contains("<p>Después.</p>"));
    }

    #[test]
    fn shortcodes_in_code_are_left_alone() {
        let r = go("```\n{{< pesos >}}\n```\n\nUsa `{{< pesos >}}` así.\n").unwrap();
        assert!(!r.has_islands);
        assert!(r.html.contains("{{&lt; pesos &gt;}}"), "{}", r.html);
    }

    #[test]
    fn errors_point_at_the_line() {
        let cases = [
            ("texto\n\n{{< nada >}}\n", 12, "desconocido"),
            ("# Título\n", 10, "h1"),
            ("uno\n\ndos {{< pesos >}} tres\n", 12, "solo"),
            ("\n\n\n{{< pesos parametros=\"x\" >}}\n", 13, "parametros"),
            ("uno\n\ncon $\\frac{a}$ roto\n", 12, "LaTeX"),
        ];
        for (body, line, want) in cases {
            let (l, msg) = go(body).unwrap_err();
            assert!(msg.contains(want), "{body}: {msg}");
            assert_eq!(l, line, "{body}: {msg}");
        }
    }

    #[test]
    fn internal_links_get_the_base_path() {
        let r = go("[a](/anatomia-vram/#pesos) [b](#x) [c](https://pytorch.org/)\n").unwrap();
        assert!(
            r.html.contains(r#"href="/base/anatomia-vram/#pesos""#),
            "{}",
            r.html
        );
        assert!(r.html.contains(r#"href="https://pytorch.org/""#));
        assert_eq!(r.links.len(), 2);
        assert_eq!(r.links[0].path, "/anatomia-vram/");
        assert_eq!(r.links[0].anchor.as_deref(), Some("pesos"));
        assert_eq!(r.links[1].path, "");
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,200}") {
            let _ = go(&s);
        }
    }
}
