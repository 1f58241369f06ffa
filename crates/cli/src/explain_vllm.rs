//! `vramlab explain` on a vLLM start-up log: the estimator's serving plan beside the
//! logged budget, term by term, as the page shows it (`diag_worker::explain`).

use oom::VllmMemory;

/// The comparison as text, or `None` when the log names no catalog model.
pub fn reconciliation(m: &VllmMemory) -> Option<String> {
    let r = diag_worker::explain::reconcile(m)?;
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
