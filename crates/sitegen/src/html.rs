//! HTML text helpers every renderer of the site shares (the Markdown passes, the
//! highlighter, the generated tables and pages).

/// Escapes text for HTML content or a quoted attribute value: the same function the
/// embeddable widget writes its markup with.
pub use embed::render::esc as escape;

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            super::escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }
}
