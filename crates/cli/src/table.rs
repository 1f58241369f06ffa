//! Aligned text tables for the terminal.

use vram::ByteSize;

/// Rows of (label, bytes) with GiB and GB columns and a total line.
pub fn bytes_table(rows: &[(&str, u64)], total_label: &str, total: u64) -> String {
    let width = rows
        .iter()
        .map(|(l, _)| l.chars().count())
        .chain([total_label.chars().count()])
        .max()
        .unwrap_or(0);
    let line = |label: &str, bytes: u64| {
        let pad = width - label.chars().count();
        format!(
            "{label}{}  {:>12}  {:>12}\n",
            " ".repeat(pad),
            ByteSize(bytes).binary(),
            ByteSize(bytes).decimal()
        )
    };
    let mut out = String::new();
    for (label, bytes) in rows {
        out.push_str(&line(label, *bytes));
    }
    out.push_str(&format!("{}\n", "─".repeat(width + 28)));
    out.push_str(&line(total_label, total));
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn aligned() {
        let t = super::bytes_table(&[("Pesos", 1 << 30), ("Caché KV", 0)], "Total", 1 << 30);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[0].ends_with("1,07 GB"), "{t}");
        assert_eq!(lines[0].chars().count(), lines[3].chars().count());
    }
}
