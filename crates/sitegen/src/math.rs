//! Math at build time: `$…$` (inline) and `$$…$$` (display) from pulldown-cmark's
//! `ENABLE_MATH`, turned into MathML Core by pulldown-latex. Browsers lay MathML out
//! natively, so the page needs no script and no web font, and the LaTeX source rides
//! along as an `<annotation>` for copy and assistive tools. A formula that does not
//! parse is a build error at its line, like every other content problem.

use pulldown_latex::config::DisplayMode;
use pulldown_latex::{Parser, RenderConfig, Storage, push_mathml};

/// The MathML of one formula.
pub fn render(latex: &str, display: bool) -> Result<String, String> {
    let storage = Storage::new();
    let events: Vec<_> = Parser::new(latex, &storage).collect();
    if let Some(err) = events.iter().find_map(|e| e.as_ref().err()) {
        return Err(format!("la fórmula «{latex}» no es LaTeX válido: {err}"));
    }
    let config = RenderConfig {
        display_mode: if display {
            DisplayMode::Block
        } else {
            DisplayMode::Inline
        },
        annotation: Some(latex),
        ..RenderConfig::default()
    };
    let mut out = String::new();
    push_mathml(&mut out, events.into_iter(), config)
        .map_err(|e| format!("la fórmula «{latex}» no se pudo convertir a MathML: {e}"))?;
    // The CSP forbids inline styles; a formula that needs one would render wrong.
    if out.contains(" style=") {
        return Err(format!(
            "la fórmula «{latex}» necesita estilos en línea, que la política de seguridad bloquea"
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_become_mathml() {
        for (latex, display, needles) in [
            (
                r"N \times N",
                false,
                &["<math", "<mi>N</mi>", "<mo>×</mo>"][..],
            ),
            (
                r"S = \frac{QK^\top}{\sqrt{d}}",
                true,
                &["display=\"block\"", "<mfrac>", "<msqrt>"][..],
            ),
            (r"\Theta(N^2 d^2 / M)", false, &["<msup>", "Θ"][..]),
        ] {
            let html = render(latex, display).unwrap_or_default();
            for n in needles {
                assert!(html.contains(n), "{latex}: missing {n} in {html}");
            }
            assert!(html.contains("<annotation"), "{html}");
        }
    }

    #[test]
    fn bad_latex_is_an_error() {
        for latex in [r"\frac{a}", r"\unknowncommand x", r"a^"] {
            let err = render(latex, false).unwrap_err();
            assert!(err.contains("no es LaTeX válido"), "{latex}: {err}");
        }
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,60}") {
            let _ = render(&s, false);
        }
    }
}
