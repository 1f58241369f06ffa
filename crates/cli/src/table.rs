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

/// A grid of cells: the first row is the header, text columns aligned left and
/// numeric ones right (a column is numeric when every body cell starts with a digit or
/// a dash), two spaces between columns.
pub fn grid(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width = |c: usize| {
        rows.iter()
            .filter_map(|r| r.get(c))
            .map(|s| s.chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..cols).map(width).collect();
    let numeric: Vec<bool> = (0..cols)
        .map(|c| {
            rows.iter().skip(1).filter_map(|r| r.get(c)).all(|s| {
                s.chars()
                    .next()
                    .is_some_and(|ch| ch.is_ascii_digit() || ch == '—' || ch == '-')
            })
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let pad = " ".repeat(widths[c].saturating_sub(cell.chars().count()));
            if c > 0 {
                line.push_str("  ");
            }
            if numeric[c] {
                line.push_str(&pad);
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&pad);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn grid_aligns_text_left_and_numbers_right() {
        let rows = vec![
            vec!["kernel".to_owned(), "ms".to_owned()],
            vec!["naive".to_owned(), "12,5".to_owned()],
            vec!["tiled".to_owned(), "3,25".to_owned()],
        ];
        let t = super::grid(&rows);
        assert_eq!(t, "kernel    ms\nnaive   12,5\ntiled   3,25\n");
    }

    #[test]
    fn aligned() {
        let t = super::bytes_table(&[("Pesos", 1 << 30), ("Caché KV", 0)], "Total", 1 << 30);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[0].ends_with("1,07 GB"), "{t}");
        assert_eq!(lines[0].chars().count(), lines[3].chars().count());
    }
}
