//! Reading `torch.cuda.memory_summary()` tables.
//!
//! The table (`torch/cuda/memory.py`, `memory_summary`) is 75 columns wide: a title line
//! `PyTorch CUDA memory summary, device ID n`, the counters `CUDA OOMs: n | cudaMalloc
//! retries: n`, then one row per statistic with four cells (Cur Usage, Peak Usage, Tot
//! Alloc, Tot Freed), each followed by "from large pool" / "from small pool" rows unless
//! `abbreviated=True`. Releases differ in which rows exist ("Requested memory" since 2.0,
//! "Oversize …" since 1.10) and in units: sizes are floored to an integer in the unit
//! chosen for the row's "all" value, written `B KiB MiB GiB TiB PiB` today and `B KB MB
//! GB TB PB` (still powers of 1024) in 1.x; counts are floored to thousands (`K`, `M`).
//!
//! So every value is exact to the unit it was printed in, no better.

pub use crate::model::summary_rows::{Metric, RowUnit};
pub use crate::model::summary_table::{Cells, SummaryRow, SummaryTable};

use crate::model::{Decoded, Kind};
use crate::scan::Text;
use crate::size::{self, SiPrefixes};

/// The most table lines read.
const MAX_LINES: usize = 200;

/// Parses the table whose title ("memory summary, device ID") ends at `title_end`.
pub(crate) fn parse(t: &Text, title_end: usize) -> Option<(Decoded, usize)> {
    let mut table = SummaryTable {
        device: t
            .int_after(title_end, t.line_end(title_end, t.len()))
            .and_then(|(d, _)| u32::try_from(d).ok()),
        cuda_ooms: None,
        cuda_malloc_retries: None,
        rows: Vec::new(),
        abbreviated: true,
    };
    let mut consumed = t.line_end(title_end, t.len());
    let mut closed = false;
    let mut pos = consumed;
    for _ in 0..MAX_LINES {
        if pos >= t.len() {
            break;
        }
        let start = pos + 1;
        let end = t.line_end(start, t.len());
        let line = t.slice_lossy(start, end);
        let line = line.trim();
        if !line.starts_with(['|', '=', '-'])
            || line.to_ascii_lowercase().contains("memory summary")
        {
            break;
        }
        consumed = end;
        pos = end;
        if line.trim_matches(['|', '=', '-']).is_empty() {
            // A border; the one after the rows closes the table.
            closed = !table.rows.is_empty() && line.contains('=');
            if closed {
                break;
            }
            continue;
        }
        read_line(line, &mut table);
    }
    let mut d = Decoded::new(Kind::MemorySummary);
    d.gpu_index = table.device;
    d.cuda_ooms = table.cuda_ooms;
    d.cuda_malloc_retries = table.cuda_malloc_retries;
    let allocated = table.all(Metric::Allocated);
    let reserved = table.all(Metric::Reserved);
    d.allocated_bytes = allocated.current;
    d.reserved_total_bytes = reserved.current;
    if let (Some(r), Some(a)) = (reserved.current, allocated.current) {
        d.reserved_unallocated_bytes = r.checked_sub(a);
    }
    d.peak_allocated_bytes = allocated.peak;
    d.peak_reserved_bytes = reserved.peak;
    d.non_releasable_bytes = table.all(Metric::NonReleasable).current;
    d.truncated = !closed;
    d.summary = Some(table);
    Some((d, consumed))
}

/// One `| … | … |` line: the counters, a statistic or a pool row.
fn read_line(line: &str, table: &mut SummaryTable) {
    let cells: Vec<&str> = line
        .split('|')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .take(8)
        .collect();
    for cell in &cells {
        let lower = cell.to_ascii_lowercase();
        if let Some(rest) = lower.strip_prefix("cuda ooms:") {
            table.cuda_ooms = rest.trim().parse().ok();
        } else if let Some(rest) = lower.strip_prefix("cudamalloc retries:") {
            table.cuda_malloc_retries = rest.trim().parse().ok();
        }
    }
    let Some((label, values)) = cells.split_first() else {
        return;
    };
    let pool = label.to_ascii_lowercase();
    if pool == "from large pool" || pool == "from small pool" {
        let Some(row) = table.rows.last_mut() else {
            return;
        };
        let parsed = Some(cells_of(values, row.unit));
        if pool == "from large pool" {
            row.large_pool = parsed;
            table.abbreviated = false;
        } else {
            row.small_pool = parsed;
        }
        return;
    }
    let Some(metric) = Metric::from_label(label) else {
        return;
    };
    if table.rows.len() >= 16 || table.row(metric).is_some() {
        return;
    }
    table.rows.push(SummaryRow {
        metric,
        label: (*label).to_owned(),
        meaning: metric.meaning().to_owned(),
        unit: metric.unit(),
        all: cells_of(values, metric.unit()),
        large_pool: None,
        small_pool: None,
    });
}

fn cells_of(values: &[&str], unit: RowUnit) -> Cells {
    let value = |i: usize| {
        let cell = values.get(i)?;
        match unit {
            RowUnit::Bytes => size::parse_size_as(cell, SiPrefixes::Binary).ok(),
            RowUnit::Count => count(cell),
        }
    };
    Cells {
        current: value(0),
        peak: value(1),
        allocated: value(2),
        freed: value(3),
    }
}

/// "4102", "9200 K", "9 M" (thousands, as `_format_count` floors them), "9.2 M".
fn count(cell: &str) -> Option<u64> {
    let cell = cell.trim();
    let (number, factor) = match cell.char_indices().last() {
        Some((i, 'K' | 'k')) => (cell.get(..i)?, 1_000u64),
        Some((i, 'M')) => (cell.get(..i)?, 1_000_000),
        Some((i, 'G')) => (cell.get(..i)?, 1_000_000_000),
        _ => (cell, 1),
    };
    let number = number.trim();
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    if int.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
        || frac.len() > 6
    {
        return None;
    }
    let int: u64 = int.parse().ok()?;
    let scale = 10u64.pow(u32::try_from(frac.len()).ok()?);
    let frac: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    int.checked_mul(factor)?
        .checked_add(frac.checked_mul(factor)? / scale)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(count("4102"), Some(4102));
        assert_eq!(count("9200 K"), Some(9_200_000));
        assert_eq!(count("9 M"), Some(9_000_000));
        assert_eq!(count("9.2 M"), Some(9_200_000));
        assert_eq!(count(""), None);
        assert_eq!(count("x"), None);
        assert_eq!(count("99999999999999999999 M"), None);
    }

    #[test]
    fn a_minimal_table() {
        let text = crate::clean::clean(
            "|===|\n| PyTorch CUDA memory summary, device ID 3 |\n|---|\n\
             | CUDA OOMs: 2 | cudaMalloc retries: 5 |\n|===|\n\
             | Metric | Cur Usage | Peak Usage | Tot Alloc | Tot Freed |\n|---|\n\
             | Allocated memory | 1024 MiB | 2048 MiB | 10 GiB | 9 GiB |\n\
             | from large pool | 1000 MiB | 2000 MiB | 9 GiB | 8 GiB |\n\
             | from small pool | 24 MiB | 48 MiB | 1 GiB | 1 GiB |\n|---|\n\
             | GPU reserved memory | 3072 MiB | 3072 MiB | 3072 MiB | 0 B |\n|===|\nafter",
        );
        let found = crate::message::find_all(&text);
        let d = &found.messages[0];
        assert_eq!(d.kind, Kind::MemorySummary);
        assert_eq!(d.gpu_index, Some(3));
        assert_eq!((d.cuda_ooms, d.cuda_malloc_retries), (Some(2), Some(5)));
        assert_eq!(d.allocated_bytes, Some(1 << 30));
        assert_eq!(d.peak_allocated_bytes, Some(2 << 30));
        assert_eq!(d.reserved_total_bytes, Some(3 << 30));
        assert_eq!(d.reserved_unallocated_bytes, Some(2 << 30));
        assert!(!d.truncated);
        let table = d.summary.as_ref().unwrap();
        assert!(!table.abbreviated);
        assert_eq!(table.rows[0].small_pool.unwrap().current, Some(24 << 20));
        assert!(!d.excerpt.contains("after"));
    }
}
