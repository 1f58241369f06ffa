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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_category_has_one_class_and_a_hex_colour() {
        let css = css();
        for c in CATEGORIES {
            assert_eq!(css.matches(&format!(".{} ", c.class)).count(), 1);
            assert!(c.color.starts_with('#') && c.color.len() == 7, "{c:?}");
        }
    }
}
