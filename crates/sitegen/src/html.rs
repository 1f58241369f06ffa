//! HTML text helpers every renderer of the site shares (the Markdown passes, the
//! highlighter, the generated tables and pages).

/// Escapes text for HTML content or a quoted attribute value: the same function the
/// embeddable widget writes its markup with.
pub use embed::render::esc as escape;

/// A page title as its `<h1>`: escaped, with a break opportunity (`<wbr>`) after each
/// dot inside a dotted name, so "torch.cuda.OutOfMemoryError" wraps at its dots on a
/// phone instead of mid-word.
pub fn heading(title: &str) -> String {
    let mut out = String::with_capacity(title.len() + 16);
    let mut chars = title.chars().peekable();
    while let Some(c) = chars.next() {
        out.push_str(&escape(c.encode_utf8(&mut [0; 4])));
        if c == '.' && chars.peek().is_some_and(char::is_ascii_alphabetic) {
            out.push_str("<wbr>");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn headings_break_at_the_dots_of_a_dotted_name() {
        assert_eq!(
            super::heading("Cómo resolver torch.cuda.OutOfMemoryError con <LLMs>"),
            "Cómo resolver torch.<wbr>cuda.<wbr>OutOfMemoryError con &lt;LLMs&gt;"
        );
        assert_eq!(super::heading("Qwen2.5 y 3.1"), "Qwen2.5 y 3.1");
    }

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            super::escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }
}
