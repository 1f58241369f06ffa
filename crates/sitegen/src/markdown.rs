//! Markdown to HTML for one page: pulldown-cmark with explicit options, plus three
//! passes over its event stream: heading anchors and the table of contents, widget
//! shortcodes turned into islands, and internal links prefixed with the base path.

use pulldown_cmark::{CodeBlockKind, CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ui::layout::TocEntry;

use crate::error::LineIndex;
use crate::highlight;
use crate::math;
use crate::shortcode::{self, CLOSE, OPEN};
use crate::slug::{IdAllocator, slugify};
use crate::table_cells::TableCells;
use crate::widgets::{Bundle, WidgetContext, render_widget};

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
    /// The hydrate bundle that carries every island of the page.
    pub bundle: Bundle,
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

impl Rendered {
    /// Appends searchable text to the current section, starting the first one if needed.
    fn push_text(&mut self, text: &str) {
        if self.sections.is_empty() {
            self.sections.push(SectionText::default());
        }
        if let Some(section) = self.sections.last_mut() {
            section.text.push_str(text);
        }
    }

    /// Ends a run of text (a paragraph, a cell, a list item): words on both sides
    /// must not run together.
    fn break_text(&mut self) {
        if let Some(section) = self.sections.last_mut()
            && !section.text.ends_with(' ')
            && !section.text.is_empty()
        {
            section.text.push(' ');
        }
    }
}

/// Renders `body` (whose first line is file line `idx`'s first line). Errors carry the
/// file line they refer to.
pub fn render(
    body: &str,
    lines: &LineIndex,
    base: &str,
    widgets: &WidgetContext,
) -> Result<Rendered, (usize, String)> {
    let mut out = Rendered::default();
    let mut ids = IdAllocator::default();
    let mut events: Vec<Event<'_>> = Vec::new();
    let mut iter = Parser::new_ext(body, options()).into_offset_iter();
    let mut cells = TableCells::default();
    // pulldown-cmark may split one run of text into several events (at '<', say), so
    // stray shortcodes are looked for in the concatenated run.
    let mut text_run = String::new();

    while let Some((event, range)) = iter.next() {
        let line = lines.line(range.start);
        if let Event::Text(t) = &event {
            text_run.push_str(t);
        } else {
            text_run.clear();
        }
        match &event {
            Event::Text(t) | Event::Code(t) => out.push_text(t),
            // Inline markup sits inside a run of text; anything else ends one.
            Event::Start(Tag::Emphasis | Tag::Strong | Tag::Strikethrough | Tag::Link { .. })
            | Event::End(
                TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Link,
            ) => {}
            _ => out.break_text(),
        }
        match event {
            Event::Start(Tag::Paragraph) => {
                let source = body.get(range.clone()).unwrap_or("").trim();
                if source.starts_with(OPEN) {
                    if !source.ends_with(CLOSE) {
                        return Err((
                            line,
                            format!(
                                "un shortcode debe ir solo en su párrafo y terminar con «{CLOSE}»"
                            ),
                        ));
                    }
                    let sc = shortcode::parse(source).map_err(|m| (line, m))?;
                    let widget = render_widget(&sc, widgets).map_err(|m| (line, m))?;
                    // Skip the paragraph's own events.
                    for (e, _) in iter.by_ref() {
                        if matches!(e, Event::End(TagEnd::Paragraph)) {
                            break;
                        }
                    }
                    out.has_islands |= widget.island;
                    if widget.island && widget.bundle != Bundle::Light {
                        if out.bundle != Bundle::Light && out.bundle != widget.bundle {
                            return Err((
                                line,
                                format!(
                                    "esta página ya usa {} y este shortcode necesita {}: cada familia de herramientas tiene su propio paquete; ponlas en páginas distintas",
                                    out.bundle.describe(),
                                    widget.bundle.describe()
                                ),
                            ));
                        }
                        out.bundle = widget.bundle;
                    }
                    events.push(Event::Html(format!("{}\n", widget.html).into()));
                } else {
                    events.push(Event::Start(Tag::Paragraph));
                }
            }
            Event::Start(Tag::Heading {
                level,
                id,
                classes,
                attrs: _,
            }) => {
                if level == HeadingLevel::H1 {
                    return Err((line, "no uses «#» (h1) en el cuerpo: el título de la página viene del front matter".into()));
                }
                let mut inner = Vec::new();
                let mut text = String::new();
                for (e, _) in iter.by_ref() {
                    match &e {
                        Event::End(TagEnd::Heading(_)) => break,
                        Event::Text(t) | Event::Code(t) => text.push_str(t),
                        _ => {}
                    }
                    inner.push(e);
                }
                let wanted = id.map_or_else(|| slugify(&text), |i| i.to_string());
                let id = ids.claim(&wanted);
                let n = heading_number(level);
                if n <= 3 {
                    out.sections.push(SectionText {
                        id: Some(id.clone()),
                        heading: text.clone(),
                        text: String::new(),
                    });
                } else {
                    out.push_text(&text);
                    out.break_text();
                }
                if n <= 3 {
                    out.toc.push(TocEntry {
                        level: n,
                        id: id.clone(),
                        text: text.clone(),
                    });
                }
                let class_attr = if classes.is_empty() {
                    String::new()
                } else {
                    format!(" class=\"{}\"", escape(&classes.join(" ")))
                };
                events.push(Event::Html(
                    format!("<h{n} id=\"{}\"{class_attr}>", escape(&id)).into(),
                ));
                events.extend(inner);
                events.push(Event::Html(
                    format!(
                        "<a class=\"anchor\" href=\"#{}\" aria-label=\"Enlace a esta sección\">#</a></h{n}>\n",
                        escape(&id)
                    )
                    .into(),
                ));
                out.ids.push(id);
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match &kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or("").to_owned()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                let mut source = String::new();
                for (e, _) in iter.by_ref() {
                    match e {
                        Event::End(TagEnd::CodeBlock) => break,
                        Event::Text(t) => source.push_str(&t),
                        _ => {}
                    }
                }
                text_run.clear();
                out.push_text(&source);
                out.break_text();
                let inner = highlight::highlight(&lang, &source).map_err(|m| (line, m))?;
                let class = if lang.is_empty() {
                    String::new()
                } else {
                    format!(" class=\"language-{}\"", escape(&lang))
                };
                // tabindex: a block wider than the screen scrolls, and must be
                // reachable by keyboard to be scrolled.
                events.push(Event::Html(
                    format!("<div class=\"code\"><pre tabindex=\"0\"><code{class}>{inner}</code></pre></div>\n")
                        .into(),
                ));
                out.has_code = true;
            }
            Event::InlineMath(latex) => {
                let html = math::render(&latex, false).map_err(|m| (line, m))?;
                events.push(Event::InlineHtml(html.into()));
            }
            Event::DisplayMath(latex) => {
                let html = math::render(&latex, true).map_err(|m| (line, m))?;
                events.push(Event::InlineHtml(html.into()));
            }
            Event::Text(_) if text_run.contains(OPEN) => {
                return Err((
                    line,
                    format!("un shortcode «{OPEN} … {CLOSE}» debe ir solo en su propio párrafo"),
                ));
            }
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let dest_url =
                    internal(&dest_url, base, line, &mut out.links).map_or(dest_url, CowStr::from);
                events.push(Event::Start(Tag::Link {
                    link_type,
                    dest_url,
                    title,
                    id,
                }));
            }
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let dest_url =
                    internal(&dest_url, base, line, &mut Vec::new()).map_or(dest_url, CowStr::from);
                events.push(Event::Start(Tag::Image {
                    link_type,
                    dest_url,
                    title,
                    id,
                }));
            }
            other => events.push(cells.map(other)),
        }
    }
    pulldown_cmark::html::push_html(&mut out.html, events.into_iter());
    // Tables scroll sideways on narrow screens: a keyboard must be able to reach them
    // (axe: scrollable-region-focusable). Table cells never hold a raw "<table>": text
    // is escaped, and widget HTML is written before this point only as whole tables.
    out.html = out.html.replace("<table>", "<table tabindex=\"0\">");
    Ok(out)
}

fn heading_number(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// Records internal links and returns the URL with the base path, or `None` for
/// external URLs (left as written).
fn internal(dest: &str, base: &str, line: usize, links: &mut Vec<InternalLink>) -> Option<String> {
    if let Some(anchor) = dest.strip_prefix('#') {
        links.push(InternalLink {
            path: String::new(),
            anchor: Some(anchor.to_owned()),
            line,
        });
        return None;
    }
    let rest = dest.strip_prefix('/').filter(|r| !r.starts_with('/'))?;
    let (path, anchor) = match rest.split_once('#') {
        Some((p, a)) => (p, Some(a.to_owned())),
        None => (rest, None),
    };
    links.push(InternalLink {
        path: format!("/{path}"),
        anchor,
        line,
    });
    Some(format!("{base}{rest}"))
}

/// Escapes text for an HTML attribute value.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
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
    fn each_page_gets_one_bundle() {
        let r = go("{{< pesos >}}\n\n{{< atencion-por-bloques >}}\n").unwrap();
        assert_eq!(r.bundle, Bundle::Attention);
        assert_eq!(go("{{< pesos >}}\n").unwrap().bundle, Bundle::Light);
        let (line, msg) =
            go("{{< atencion-por-bloques >}}\n\n{{< visor-snapshot >}}\n").unwrap_err();
        assert_eq!(line, 12);
        assert!(msg.contains("la demo de atención por bloques"), "{msg}");
        assert!(msg.contains("las herramientas de diagnóstico"), "{msg}");
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
