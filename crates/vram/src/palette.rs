//! The colours of the memory categories, defined once for every surface that draws a
//! breakdown: the estimator page, the home page's quick estimate and the embeddable
//! widget (the site generator and the widget both emit [`css`] from here, so a
//! category never has two colours).

/// One category of [`crate::Breakdown::parts`]: its Spanish name, CSS class and colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Category {
    pub label: &'static str,
    pub class: &'static str,
    pub color: &'static str,
}

/// In `Breakdown::parts` order.
pub const CATEGORIES: [Category; 6] = [
    Category {
        label: "Pesos",
        class: "seg-weights",
        color: "#2f6fb0",
    },
    Category {
        label: "Gradientes",
        class: "seg-grads",
        color: "#b0632f",
    },
    Category {
        label: "Optimizador",
        class: "seg-optim",
        color: "#8a4fb3",
    },
    Category {
        label: "Activaciones",
        class: "seg-acts",
        color: "#2f9e6b",
    },
    Category {
        label: "Caché KV",
        class: "seg-kv",
        color: "#c49a1a",
    },
    Category {
        label: "Sobrecarga",
        class: "seg-overhead",
        color: "#7a7f7d",
    },
];

/// One rule per category, for SVG shapes (`fill`) and HTML swatches (`background`).
pub fn css() -> String {
    CATEGORIES
        .iter()
        .map(|c| {
            format!(
                ".{} {{ fill: {}; background: {}; }}\n",
                c.class, c.color, c.color
            )
        })
        .collect()
}

/// The class names one surface's stylesheet gives the bar and its capacity line (the
/// widget prefixes its own, to stay clear of the host page's rules).
#[derive(Clone, Copy, Debug)]
pub struct BarClasses {
    pub bar: &'static str,
    pub cap: &'static str,
}

/// The stacked bar of the categories (`parts`, in [`CATEGORIES`] order) against a GPU
/// of `capacity` bytes, drawn once for every surface: each part's share of the larger
/// of the total and the capacity in thousandths (integer arithmetic, the same digits
/// in the browser and the CLI), a line at the capacity, and each part's name and size
/// as its tooltip. SVG attributes and classes, never inline styles: the site's
/// Content-Security-Policy blocks those. With a `label` the bar is an image with that
/// accessible name; without one the text beside it says the numbers.
pub fn bar_svg(parts: [u64; 6], capacity: u64, classes: BarClasses, label: Option<&str>) -> String {
    use std::fmt::Write as _;
    let total = parts.iter().fold(0u64, |a, &b| a.saturating_add(b));
    let top = u128::from(total.max(capacity).max(1));
    let permille = |v: u64| u32::try_from(u128::from(v) * 1000 / top).unwrap_or(1000);
    let mut out = format!(
        r#"<svg class="{}" viewBox="0 -2 1000 24" preserveAspectRatio="none" "#,
        classes.bar
    );
    match label {
        Some(l) => {
            let _ = write!(
                out,
                r#"role="img" aria-label="{}">"#,
                numfmt::escape_html(l)
            );
        }
        None => out.push_str(r#"aria-hidden="true">"#),
    }
    let mut x = 0u32;
    for (v, c) in parts.into_iter().zip(CATEGORIES).filter(|(v, _)| *v > 0) {
        let width = permille(v);
        let _ = write!(
            out,
            r#"<rect class="{}" x="{x}" y="0" width="{width}" height="20"><title>{}: {}</title></rect>"#,
            c.class,
            c.label,
            numfmt::binary(v)
        );
        x = x.saturating_add(width);
    }
    if capacity > 0 {
        let at = permille(capacity).min(1000);
        let _ = write!(
            out,
            r#"<line class="{}" x1="{at}" x2="{at}" y1="-2" y2="22"></line>"#,
            classes.cap
        );
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shares of the larger of total and capacity, in order, with the capacity line;
    /// nothing drawn for empty parts.
    #[test]
    fn the_bar_draws_each_part_and_the_capacity() {
        let classes = BarClasses { bar: "b", cap: "c" };
        let svg = bar_svg([600, 0, 0, 200, 0, 200], 2000, classes, None);
        assert!(
            svg.starts_with(r#"<svg class="b" viewBox="0 -2 1000 24""#),
            "{svg}"
        );
        assert!(svg.contains(r#"aria-hidden="true""#));
        assert!(svg.contains(r#"<rect class="seg-weights" x="0" y="0" width="300""#));
        assert!(svg.contains(r#"<rect class="seg-acts" x="300" y="0" width="100""#));
        assert!(svg.contains(r#"<rect class="seg-overhead" x="400" y="0" width="100""#));
        assert!(!svg.contains("seg-grads"));
        assert!(svg.contains(r#"<line class="c" x1="1000" x2="1000""#));
        // Over capacity the total fills the bar and the line marks where it ends.
        let over = bar_svg([3000, 0, 0, 1000, 0, 0], 2000, classes, Some("4 < 2 & más"));
        assert!(over.contains(r#"x1="500" x2="500""#), "{over}");
        assert!(over.contains(r#"role="img" aria-label="4 &lt; 2 &amp; más""#));
    }

    #[test]
    fn every_category_has_one_class_and_a_hex_colour() {
        let css = css();
        for c in CATEGORIES {
            assert_eq!(css.matches(&format!(".{} ", c.class)).count(), 1);
            assert!(c.color.starts_with('#') && c.color.len() == 7, "{c:?}");
        }
    }
}
