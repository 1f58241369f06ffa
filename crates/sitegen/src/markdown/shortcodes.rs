//! Pass: a paragraph that is a widget shortcode becomes the widget's HTML, and the
//! page learns which hydrate bundle its islands need. A shortcode anywhere else (inside
//! a paragraph's text) is an error at its line; inside code it is just text.

use pulldown_cmark::{Event, Tag, TagEnd};

use super::{Failure, Rendered, Spanned};
use crate::error::LineIndex;
use crate::shortcode::{self, CLOSE, OPEN};
use crate::widgets::{Bundle, WidgetContext, render_widget};

pub(super) fn expand<'a>(
    events: Vec<Spanned<'a>>,
    body: &str,
    lines: &LineIndex,
    widgets: &WidgetContext,
    out: &mut Rendered,
) -> Result<Vec<Spanned<'a>>, Failure> {
    let mut result = Vec::with_capacity(events.len());
    let mut iter = events.into_iter();
    // pulldown-cmark may split one run of text into several events (at '<', say), so
    // stray shortcodes are looked for in the concatenated run.
    let mut text_run = String::new();
    let mut in_code = false;
    // The page's light islands: (line, name, heavy bundles that carry it).
    let mut light: Vec<(usize, &'static str, &'static [Bundle])> = Vec::new();
    while let Some((event, range)) = iter.next() {
        let line = lines.line(range.start);
        match &event {
            Event::Text(t) if !in_code => text_run.push_str(t),
            _ => text_run.clear(),
        }
        match event {
            Event::Start(Tag::Paragraph) => {
                let source = body.get(range.clone()).unwrap_or("").trim();
                if !source.starts_with(OPEN) {
                    result.push((Event::Start(Tag::Paragraph), range));
                    continue;
                }
                if !source.ends_with(CLOSE) {
                    return Err((
                        line,
                        format!("un shortcode debe ir solo en su párrafo y terminar con «{CLOSE}»"),
                    ));
                }
                let sc = shortcode::parse(source).map_err(|m| (line, m))?;
                let widget = render_widget(&sc, widgets).map_err(|m| (line, m))?;
                // The paragraph's own events are the shortcode's text.
                for (e, _) in iter.by_ref() {
                    if matches!(e, Event::End(TagEnd::Paragraph)) {
                        break;
                    }
                }
                out.has_islands |= widget.island;
                if widget.island && widget.bundle == Bundle::Light {
                    light.push((line, widget.name, widget.also_in));
                }
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
                result.push((Event::Html(format!("{}\n", widget.html).into()), range));
            }
            Event::Text(_) if text_run.contains(OPEN) => {
                return Err((
                    line,
                    format!("un shortcode «{OPEN} … {CLOSE}» debe ir solo en su propio párrafo"),
                ));
            }
            event => {
                match &event {
                    Event::Start(Tag::CodeBlock(_)) => in_code = true,
                    Event::End(TagEnd::CodeBlock) => in_code = false,
                    _ => {}
                }
                result.push((event, range));
            }
        }
    }
    // A heavy bundle carries only the light islands that share pages with it.
    if out.bundle != Bundle::Light
        && let Some((line, name, _)) = light
            .iter()
            .find(|(_, _, also_in)| !also_in.contains(&out.bundle))
    {
        return Err((
            *line,
            format!(
                "esta página usa {} y su paquete no lleva {name}: ponla en otra página o añádela al paquete (las features de ui en su crate y `also_in` en widgets.rs)",
                out.bundle.describe()
            ),
        ));
    }
    Ok(result)
}
