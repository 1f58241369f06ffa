//! `vramlab explain` on a vLLM or llama.cpp start-up log: the estimate of the same run
//! beside the logged terms, as the page shows it (`diag_worker::reconcile`).

use oom::Decoded;

/// The comparison as text, or `None` when the log names no catalog model.
pub fn reconciliation(d: &Decoded) -> Option<String> {
    let r = diag_worker::reconcile::of(d)?;
    let mut out = format!("{}\n", r.title);
    for row in &r.rows {
        let diff = if row.difference.is_empty() {
            String::new()
        } else {
            format!(" ({})", row.difference)
        };
        out.push_str(&format!(
            "  {}: registro {}, vramlab {}{diff}\n",
            row.name, row.logged, row.estimated
        ));
        if let Some(why) = &row.why {
            out.push_str(&format!("    {why}\n"));
        }
    }
    Some(out)
}
