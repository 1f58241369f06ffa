//! Pass (read only): the page's plain text split at its h2/h3 headings, for the search
//! index. Inline markup stays inside a run of text; anything else (a paragraph, a list
//! item, a table cell, a widget) ends one, so words on both sides never run together.

use pulldown_cmark::{Event, Tag, TagEnd};

use super::headings::number;
use super::{Rendered, SectionText, Spanned};

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

    /// Ends a run of text.
    fn break_text(&mut self) {
        if let Some(section) = self.sections.last_mut()
            && !section.text.ends_with(' ')
            && !section.text.is_empty()
        {
            section.text.push(' ');
        }
    }
}

pub(super) fn collect(events: &[Spanned<'_>], out: &mut Rendered) {
    let mut iter = events.iter();
    while let Some((event, _)) = iter.next() {
        match event {
            Event::Text(t) | Event::Code(t) => out.push_text(t),
            // Inline markup sits inside a run of text.
            Event::Start(Tag::Emphasis | Tag::Strong | Tag::Strikethrough | Tag::Link { .. })
            | Event::End(
                TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Link,
            ) => {}
            Event::Start(Tag::Heading { level, id, .. }) => {
                out.break_text();
                let mut text = String::new();
                for (e, _) in iter.by_ref() {
                    match e {
                        Event::End(TagEnd::Heading(_)) => break,
                        Event::Text(t) | Event::Code(t) => text.push_str(t),
                        _ => {}
                    }
                }
                if number(*level) <= 3 {
                    out.sections.push(SectionText {
                        id: id.as_ref().map(|i| i.to_string()),
                        heading: text,
                        text: String::new(),
                    });
                } else {
                    out.push_text(&text);
                    out.break_text();
                }
            }
            Event::Start(Tag::CodeBlock(_)) => {
                out.break_text();
                for (e, _) in iter.by_ref() {
                    match e {
                        Event::End(TagEnd::CodeBlock) => break,
                        Event::Text(t) => out.push_text(t),
                        _ => {}
                    }
                }
                out.break_text();
            }
            _ => out.break_text(),
        }
    }
}
