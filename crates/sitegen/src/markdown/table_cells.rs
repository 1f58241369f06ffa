//! Pass: table cells without inline styles. pulldown-cmark writes a column's alignment as
//! `style="text-align: …"`, which the site's Content-Security-Policy (`style-src
//! 'self'`) blocks, so numbers would lose their right alignment and every page with
//! such a table would log CSP errors. This pass writes the cells itself, with a class.

use pulldown_cmark::{Alignment, CowStr, Event, Tag, TagEnd};

/// Every table cell of `events` written with a class for its column's alignment.
pub(super) fn without_styles<'a>(
    events: impl Iterator<Item = Event<'a>>,
) -> impl Iterator<Item = Event<'a>> {
    let mut cells = TableCells::default();
    events.map(move |e| cells.map(e))
}

#[derive(Debug, Default)]
struct TableCells {
    aligns: Vec<Alignment>,
    col: usize,
    in_head: bool,
}

fn class(align: Option<&Alignment>) -> &'static str {
    match align {
        Some(Alignment::Right) => " class=\"al-r\"",
        Some(Alignment::Center) => " class=\"al-c\"",
        Some(Alignment::Left) => " class=\"al-l\"",
        Some(Alignment::None) | None => "",
    }
}

impl TableCells {
    /// The event to emit instead of `event` (the same one when it is not a table's).
    fn map<'a>(&mut self, event: Event<'a>) -> Event<'a> {
        match event {
            Event::Start(Tag::Table(aligns)) => {
                let none = vec![Alignment::None; aligns.len()];
                self.aligns = aligns;
                Event::Start(Tag::Table(none))
            }
            Event::Start(Tag::TableHead) => {
                self.in_head = true;
                self.col = 0;
                event
            }
            Event::End(TagEnd::TableHead) => {
                self.in_head = false;
                event
            }
            Event::Start(Tag::TableRow) => {
                self.col = 0;
                event
            }
            Event::Start(Tag::TableCell) => {
                let tag = if self.in_head { "th" } else { "td" };
                Event::Html(CowStr::from(format!(
                    "<{tag}{}>",
                    class(self.aligns.get(self.col))
                )))
            }
            Event::End(TagEnd::TableCell) => {
                self.col += 1;
                Event::Html(CowStr::from(if self.in_head { "</th>" } else { "</td>" }))
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::without_styles;
    use pulldown_cmark::{Options, Parser, html};

    fn render(md: &str) -> String {
        let mut out = String::new();
        html::push_html(
            &mut out,
            without_styles(Parser::new_ext(md, Options::ENABLE_TABLES)),
        );
        out
    }

    #[test]
    fn alignment_becomes_a_class_not_a_style() {
        let html = render(
            "| a | b | c | d |\n| :-- | --: | :-: | --- |\n| 1 | 2 | 3 | 4 |\n| 5 | 6 | 7 | 8 |\n",
        );
        assert!(!html.contains("style"), "{html}");
        assert!(
            html.contains(
                "<thead><tr><th class=\"al-l\">a</th><th class=\"al-r\">b</th><th class=\"al-c\">c</th><th>d</th></tr></thead>"
            ),
            "{html}"
        );
        assert!(
            html.contains("<tr><td class=\"al-l\">5</td><td class=\"al-r\">6</td><td class=\"al-c\">7</td><td>8</td></tr>"),
            "{html}"
        );
    }

    #[test]
    fn rows_longer_than_the_header_do_not_panic() {
        let html = render("| a |\n| --: |\n| 1 | 2 | 3 |\n");
        assert!(html.contains("<td class=\"al-r\">1</td>"), "{html}");
    }
}
