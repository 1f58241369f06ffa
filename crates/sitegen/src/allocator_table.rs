//! The measured effect of `expandable_segments:True`, computed at build time.
//!
//! The source guide claimed, without a source, that expandable segments prevent "up to
//! 90%" of fragmentation failures. This table replaces the claim with what the
//! allocator simulator measures on the lab's scenarios: the smallest capacity each
//! allocator setting survives, found by bisection. Computing it here means the page can
//! never disagree with the simulator.

use allocator::scenarios::{self, Scenario};
use vram::ByteSize;

use crate::html::escape;

/// A ratio as "9,3 %" (`numfmt`).
fn percent(v: f64) -> String {
    numfmt::percent(v * 100.0, 1)
}

/// The HTML table, or why a scenario could not be measured.
pub fn savings_table() -> Result<String, String> {
    let mut html = String::from(
        "<table tabindex=\"0\" class=\"validation alloc-savings\"><thead><tr>\
         <th scope=\"col\">Escenario</th>\
         <th scope=\"col\">Pico de tensores vivos</th>\
         <th scope=\"col\">Capacidad mínima por defecto</th>\
         <th scope=\"col\">Con expandable_segments</th>\
         <th scope=\"col\">Capacidad ahorrada</th>\
         <th scope=\"col\">Sobrecoste eliminado</th>\
         </tr></thead><tbody>",
    );
    for s in Scenario::ALL {
        let c = scenarios::compare(&s.trace())
            .ok_or_else(|| format!("el escenario «{}» no cabe en ninguna capacidad", s.id()))?;
        html.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(s.title()),
            ByteSize(c.peak_live_bytes).binary(),
            ByteSize(c.default_bytes).binary(),
            ByteSize(c.expandable_bytes).binary(),
            percent(c.saving()),
            percent(c.overhead_reduction())
        ));
    }
    html.push_str("</tbody></table>\n");
    Ok(html)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_scenario_is_measured_and_expandable_needs_less() {
        let html = savings_table().unwrap();
        assert_eq!(html.matches("<tr><td>").count(), Scenario::ALL.len());
        for s in Scenario::ALL {
            let c = scenarios::compare(&s.trace()).unwrap();
            assert!(c.expandable_bytes < c.default_bytes, "{}", s.id());
            assert!(c.peak_live_bytes <= c.expandable_bytes, "{}", s.id());
        }
        assert!(html.contains("\u{a0}%"));
    }
}
