//! What a `memory_summary()` table holds, as the JSON contract carries it
//! (`Decoded::summary`). Types only: `summary/mod.rs` fills them.

use serde::{Deserialize, Serialize};

use super::summary_rows::{Metric, RowUnit};

/// One column set: the four cells of a row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cells {
    /// "Cur Usage": now.
    pub current: Option<u64>,
    /// "Peak Usage": the most since start (or `reset_peak_memory_stats()`).
    pub peak: Option<u64>,
    /// "Tot Alloc": everything ever added.
    pub allocated: Option<u64>,
    /// "Tot Freed": everything ever removed.
    pub freed: Option<u64>,
}

/// One statistic with its pool breakdown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryRow {
    pub metric: Metric,
    /// The row's name as printed.
    pub label: String,
    /// What it means, in Spanish.
    pub meaning: String,
    pub unit: RowUnit,
    pub all: Cells,
    pub large_pool: Option<Cells>,
    pub small_pool: Option<Cells>,
}

/// A whole table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryTable {
    pub device: Option<u32>,
    pub cuda_ooms: Option<u64>,
    pub cuda_malloc_retries: Option<u64>,
    pub rows: Vec<SummaryRow>,
    /// No "from large pool" rows: printed with `abbreviated=True` (or cut before them).
    pub abbreviated: bool,
}

impl SummaryTable {
    /// The row for `metric`, if the table has it.
    pub fn row(&self, metric: Metric) -> Option<&SummaryRow> {
        self.rows.iter().find(|r| r.metric == metric)
    }

    pub(crate) fn all(&self, metric: Metric) -> Cells {
        self.row(metric).map(|r| r.all).unwrap_or_default()
    }
}
