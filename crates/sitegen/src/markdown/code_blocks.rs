//! Pass: fenced code blocks become highlighted HTML (`crate::highlight`), in a
//! keyboard-focusable `<pre>` (a wide block scrolls, and must be reachable to scroll).
//! An unknown fence language is an error at its line.

use pulldown_cmark::{CodeBlockKind, Event, Tag, TagEnd};

use super::{Failure, Rendered, Spanned};
use crate::error::LineIndex;
use crate::highlight;
use crate::html::escape;

pub(super) fn highlight<'a>(
    events: Vec<Spanned<'a>>,
    lines: &LineIndex,
    out: &mut Rendered,
) -> Result<Vec<Spanned<'a>>, Failure> {
    let mut result = Vec::with_capacity(events.len());
    let mut iter = events.into_iter();
    while let Some((event, range)) = iter.next() {
        let Event::Start(Tag::CodeBlock(kind)) = event else {
            result.push((event, range));
            continue;
        };
        let lang = match &kind {
            CodeBlockKind::Fenced(info) => info.split_whitespace().next().unwrap_or("").to_owned(),
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
        let inner =
            highlight::highlight(&lang, &source).map_err(|m| (lines.line(range.start), m))?;
        let class = if lang.is_empty() {
            String::new()
        } else {
            format!(" class=\"language-{}\"", escape(&lang))
        };
        result.push((
            Event::Html(
                format!("<div class=\"code\"><pre tabindex=\"0\"><code{class}>{inner}</code></pre></div>\n")
                    .into(),
            ),
            range,
        ));
        out.has_code = true;
    }
    Ok(result)
}
