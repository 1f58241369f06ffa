//! Pass: `$…$` and `$$…$$` become MathML (`crate::math`); a formula that does not parse
//! is an error at its line.

use pulldown_cmark::Event;

use super::{Failure, Spanned};
use crate::error::LineIndex;

pub(super) fn render<'a>(
    events: Vec<Spanned<'a>>,
    lines: &LineIndex,
) -> Result<Vec<Spanned<'a>>, Failure> {
    events
        .into_iter()
        .map(|(event, range)| {
            let (latex, display) = match &event {
                Event::InlineMath(l) => (l, false),
                Event::DisplayMath(l) => (l, true),
                _ => return Ok((event, range)),
            };
            let html =
                crate::math::render(latex, display).map_err(|m| (lines.line(range.start), m))?;
            Ok((Event::InlineHtml(html.into()), range))
        })
        .collect()
}
