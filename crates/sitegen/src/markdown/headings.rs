//! Pass: every heading gets a unique id (its own `{#id}` or a slug of its text), an
//! anchor link, and an entry in the table of contents (h2 and h3). An h1 in the body is
//! an error: the page title comes from the front matter.

use pulldown_cmark::{Event, HeadingLevel, Tag, TagEnd};
use ui::layout::TocEntry;

use super::{Failure, Rendered, Spanned};
use crate::error::LineIndex;
use crate::html::escape;
use crate::slug::{IdAllocator, slugify};

pub(super) fn number(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

pub(super) fn anchor<'a>(
    events: Vec<Spanned<'a>>,
    lines: &LineIndex,
    out: &mut Rendered,
) -> Result<Vec<Spanned<'a>>, Failure> {
    let mut ids = IdAllocator::default();
    let mut result = Vec::with_capacity(events.len());
    let mut iter = events.into_iter();
    while let Some((event, range)) = iter.next() {
        let Event::Start(Tag::Heading {
            level, id, classes, ..
        }) = event
        else {
            result.push((event, range));
            continue;
        };
        if level == HeadingLevel::H1 {
            return Err((
                lines.line(range.start),
                "no uses «#» (h1) en el cuerpo: el título de la página viene del front matter"
                    .into(),
            ));
        }
        let mut inner = Vec::new();
        let mut text = String::new();
        let mut end = None;
        for (e, r) in iter.by_ref() {
            match &e {
                Event::End(TagEnd::Heading(_)) => {
                    end = Some((e, r));
                    break;
                }
                Event::Text(t) | Event::Code(t) => text.push_str(t),
                _ => {}
            }
            inner.push((e, r));
        }
        let wanted = id.map_or_else(|| slugify(&text), |i| i.to_string());
        let id = ids.claim(&wanted);
        let n = number(level);
        if n <= 3 {
            out.toc.push(TocEntry {
                level: n,
                id: id.clone(),
                text,
            });
        }
        let link = format!(
            "<a class=\"anchor\" href=\"#{}\" aria-label=\"Enlace a esta sección\">#</a>",
            escape(&id)
        );
        out.ids.push(id.clone());
        result.push((
            Event::Start(Tag::Heading {
                level,
                id: Some(id.into()),
                classes,
                attrs: Vec::new(),
            }),
            range.clone(),
        ));
        result.extend(inner);
        result.push((Event::InlineHtml(link.into()), range.clone()));
        result.push(end.unwrap_or((Event::End(TagEnd::Heading(level)), range)));
    }
    Ok(result)
}
