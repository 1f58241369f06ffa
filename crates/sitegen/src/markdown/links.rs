//! Pass: internal links (`/chapter/#anchor`, `#anchor`) get the site's base path and
//! are recorded for the link checker; external links stay as written.

use pulldown_cmark::{CowStr, Event, Tag};

use super::{InternalLink, Rendered, Spanned};
use crate::error::LineIndex;

pub(super) fn rebase<'a>(
    events: Vec<Spanned<'a>>,
    base: &str,
    lines: &LineIndex,
    out: &mut Rendered,
) -> Vec<Spanned<'a>> {
    events
        .into_iter()
        .map(|(event, range)| {
            let line = lines.line(range.start);
            let event = match event {
                Event::Start(Tag::Link {
                    link_type,
                    dest_url,
                    title,
                    id,
                }) => Event::Start(Tag::Link {
                    dest_url: internal(&dest_url, base, line, &mut out.links)
                        .map_or(dest_url, CowStr::from),
                    link_type,
                    title,
                    id,
                }),
                Event::Start(Tag::Image {
                    link_type,
                    dest_url,
                    title,
                    id,
                }) => Event::Start(Tag::Image {
                    dest_url: internal(&dest_url, base, line, &mut Vec::new())
                        .map_or(dest_url, CowStr::from),
                    link_type,
                    title,
                    id,
                }),
                other => other,
            };
            (event, range)
        })
        .collect()
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
