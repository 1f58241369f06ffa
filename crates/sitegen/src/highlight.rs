//! Build-time syntax highlighting of fenced code blocks. syntect's bundled grammars
//! turn each block into `<span class="hl-…">` runs named after TextMate scopes; the
//! colours live in `site/style.css` (light and dark), so no inline style reaches a
//! page the Content-Security-Policy would refuse, and no JavaScript is needed.

use std::sync::LazyLock;

use syntect::html::{ClassStyle, ClassedHTMLGenerator};
use syntect::parsing::{SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

use crate::html::escape;

static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(SyntaxSet::load_defaults_newlines);

/// The class prefix of every highlighted span.
pub const PREFIX: &str = "hl-";

/// Fence tags the guide may use, and the grammar each one means (`None`: plain text).
const LANGUAGES: &[(&str, Option<&str>)] = &[
    ("python", Some("py")),
    ("py", Some("py")),
    ("sh", Some("sh")),
    ("bash", Some("sh")),
    ("shell", Some("sh")),
    ("json", Some("json")),
    ("rust", Some("rs")),
    ("toml", None),
    ("text", None),
    ("", None),
];

fn syntax(tag: &str) -> Result<Option<&'static SyntaxReference>, String> {
    let Some((_, ext)) = LANGUAGES.iter().find(|(name, _)| *name == tag) else {
        let names: Vec<&str> = LANGUAGES
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| !n.is_empty())
            .collect();
        return Err(format!(
            "lenguaje de código desconocido «{tag}» (existen: {})",
            names.join(", ")
        ));
    };
    Ok(ext.and_then(|e| SYNTAXES.find_syntax_by_extension(e)))
}

/// The inner HTML of `<code>` for `source` in fence language `tag`: highlighted spans,
/// or the escaped text when the language is plain.
pub fn highlight(tag: &str, source: &str) -> Result<String, String> {
    let Some(syntax) = syntax(tag)? else {
        return Ok(escape(source));
    };
    let mut generator = ClassedHTMLGenerator::new_with_class_style(
        syntax,
        &SYNTAXES,
        ClassStyle::SpacedPrefixed { prefix: PREFIX },
    );
    for line in LinesWithEndings::from(source) {
        generator
            .parse_html_for_line_which_includes_newline(line)
            .map_err(|e| format!("no se pudo resaltar el bloque de código «{tag}»: {e}"))?;
    }
    Ok(generator.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (language, source, a fragment the HTML must contain)
    const CASES: &[(&str, &str, &str)] = &[
        (
            "python",
            "import torch\n",
            r#"<span class="hl-keyword hl-control hl-import hl-python">import</span>"#,
        ),
        ("python", "# nota\n", r#"hl-comment"#),
        ("python", "x = \"hola\"\n", r#"hl-string"#),
        ("python", "n = 1024\n", r#"hl-constant hl-numeric"#),
        (
            "sh",
            "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n",
            "hl-storage",
        ),
        ("json", "{\"a\": 1}\n", "hl-string"),
        ("text", "a < b\n", "a &lt; b"),
        ("", "<script>\n", "&lt;script&gt;"),
    ];

    #[test]
    fn highlights_by_scope() {
        for (lang, source, needle) in CASES {
            let html = highlight(lang, source).unwrap();
            assert!(html.contains(needle), "{lang} {source:?}: {html}");
        }
    }

    #[test]
    fn source_text_survives_escaped() {
        let html = highlight("python", "print('<b>' & 1)\n").unwrap();
        assert!(!html.contains("<b>"), "{html}");
        assert!(html.contains("&lt;b&gt;"), "{html}");
        assert!(html.contains("&amp;"), "{html}");
        // No inline styles: the CSP forbids them.
        assert!(!html.contains("style="), "{html}");
    }

    #[test]
    fn unknown_language_is_an_error() {
        let err = highlight("cobol", "x").unwrap_err();
        assert!(err.contains("«cobol»") && err.contains("python"), "{err}");
    }
}
