//! `vramlab explain` on a vLLM or llama.cpp start-up log: the estimate of the same run
//! beside the logged terms (`diag_worker::reconcile`), and the estimator's plan for it
//! when it failed (`diag_worker::plan`), as the page shows them.

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

/// The run in the estimator as text: its verdict, the ranked plan with each
/// candidate's command, and `vramlab estimate`'s line for it.
pub fn plan(d: &Decoded) -> Option<String> {
    let (p, flags) = diag_worker::plan::both(d)?;
    let mut out = format!("{}\n  {}\n", p.title, p.verdict);
    if !p.candidates.is_empty() {
        out.push_str("  Para que quepa (primero lo que menos cuesta):\n");
        for (i, c) in p.candidates.iter().enumerate() {
            out.push_str(&format!("  {}. {}: {}\n", i + 1, c.change, c.detail));
            if let Some(command) = &c.command {
                for line in command.lines() {
                    out.push_str(&format!("       {line}\n"));
                }
            }
        }
    }
    out.push_str(&format!(
        "  En el estimador: vramlab estimate --model {} {}\n",
        flags.model,
        flags.flags.join(" ")
    ));
    Some(out)
}
