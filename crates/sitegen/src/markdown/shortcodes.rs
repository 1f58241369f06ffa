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
    // The bundles that carry every island of the page so far, in `Bundle::ALL`'s order
    // (the light bundle first: the smallest that will do), and the first island.
    let mut carriers: Vec<Bundle> = Bundle::ALL.to_vec();
    let mut first_island: Option<(usize, &'static str)> = None;
    // The same for the islands woken when they near the screen, from a second bundle
    // (`Widget::deferrable`).
    let mut later_carriers: Vec<Bundle> = Bundle::ALL.to_vec();
    let mut first_later: Option<(usize, &'static str)> = None;
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
                if widget.island {
                    // A heavy island below another one is woken later, from its own bundle.
                    let deferred = widget.deferrable && first_island.is_some();
                    let (carriers, first_island) = if deferred {
                        (&mut later_carriers, &mut first_later)
                    } else {
                        (&mut carriers, &mut first_island)
                    };
                    // The bundles that carry every island so far.
                    let shared: Vec<Bundle> = carriers
                        .iter()
                        .copied()
                        .filter(|b| widget.carried_by.contains(b))
                        .collect();
                    if shared.is_empty() {
                        let before = first_island.map_or("", |(_, name)| name);
                        return Err((
                            line,
                            format!(
                                "esta página ya usa {before} y {} va en otro paquete: ponlas en páginas distintas, o añade la isla al paquete (las features de ui en su crate y `carried_by` en widgets.rs)",
                                widget.name
                            ),
                        ));
                    }
                    *carriers = shared;
                    first_island.get_or_insert((line, widget.name));
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
    if first_island.is_some() {
        out.bundle = carriers.first().copied().unwrap_or_default();
    }
    if first_later.is_some() {
        // A later bundle that is the page's own would be fetched twice for nothing.
        out.later = later_carriers.first().copied().filter(|b| *b != out.bundle);
    }
    Ok(result)
}
