//! Published figures the estimator is checked against, each computed now from the same
//! engine the site and the CLI use.
//!
//! A case compares like with like: the quantity the source printed (weights alone,
//! `torch.cuda.max_memory_allocated`, the whole GPU as nvidia-smi saw it, the KV cache
//! tokens vLLM reported at start-up, the longest context a benchmark trained) against
//! the same quantity of the estimate. Nothing here is tuned: a case that disagrees stays
//! in the table with its error. `published.rs` holds the cases written as settings (the
//! CLI's flags), `hand.rs` those that need their own computation. The statistics per
//! runtime give the estimator's band.

mod hand;
mod published;

use serde::Serialize;

/// How a case's numbers are shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Unit {
    /// Bytes, shown in GiB/MiB.
    Binary,
    /// Bytes, shown in GB/MB (the source wrote powers of 1000).
    Decimal,
    /// A count of tokens.
    Tokens,
}

/// One comparison.
#[derive(Clone, Debug, Serialize)]
pub struct Case {
    pub id: &'static str,
    /// Spanish description of what is compared.
    pub what: &'static str,
    /// Where the figure was published (a URL or a paper).
    pub source: &'static str,
    pub published: u64,
    pub estimated: u64,
    pub unit: Unit,
    /// The runtime that produced the figure ("—" for pure arithmetic).
    pub runtime: &'static str,
    /// Whether the figure comes from training (else inference or serving).
    pub training: bool,
    /// The estimate's weight bytes inside `estimated`, for memory figures: weights are
    /// exact arithmetic, so the band measures the error on the rest. `None` for counts
    /// of tokens, which already measure what the weights leave.
    pub weights: Option<u64>,
    /// The figure is weights alone (a model buffer): exact arithmetic that says nothing
    /// of the memory beyond the weights, so it stays out of the error band.
    pub weights_only: bool,
}

impl Case {
    /// Relative error of the estimate, in percent (signed: negative underestimates).
    pub fn error_percent(&self) -> f64 {
        (self.estimated as f64 - self.published as f64) / self.published.max(1) as f64 * 100.0
    }

    /// The error the band is made of, in percent, signed so that negative means the
    /// estimate promised more than the run delivered: for memory, the error relative to
    /// what the run needed beyond the weights (the weights are exact, the rest is where
    /// estimates go wrong); for a capacity in tokens, minus the relative error.
    pub fn safe_error(&self) -> f64 {
        match self.unit {
            Unit::Tokens => -self.error_percent(),
            Unit::Binary | Unit::Decimal => {
                let weights = self.weights.unwrap_or(0);
                let beyond = self.published.saturating_sub(weights).max(1);
                (self.estimated as f64 - self.published as f64) / beyond as f64 * 100.0
            }
        }
    }
}

/// Every case, computed now.
pub fn cases() -> Vec<Case> {
    let mut out = hand::cases();
    out.extend(published::cases());
    out
}

/// Error statistics of a set of cases.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stats {
    pub cases: usize,
    /// The cases the band is made of: all but figures of weights alone.
    pub band_cases: usize,
    /// Median of |error|, percent.
    pub median_abs: f64,
    /// Largest |error|, percent.
    pub worst_abs: f64,
    /// 10th and 90th percentiles of the safe-side error (negative: the estimate would
    /// promise more than the run delivered).
    pub p10: f64,
    pub p90: f64,
    /// Cases that promise more than the run delivered by over 10 % of the published
    /// figure (the goal is none).
    pub unsafe_over_10: usize,
}

/// The statistics of `cases`.
pub fn stats(cases: &[&Case]) -> Stats {
    let mut abs: Vec<f64> = cases.iter().map(|c| c.error_percent().abs()).collect();
    abs.sort_by(f64::total_cmp);
    // The band is the error on the memory beyond the weights: figures of weights alone
    // do not measure it.
    let mut safe: Vec<f64> = cases
        .iter()
        .filter(|c| !c.weights_only)
        .map(|c| c.safe_error())
        .collect();
    safe.sort_by(f64::total_cmp);
    let at = |v: &[f64], q: usize| {
        v.get((v.len().saturating_sub(1)) * q / 100)
            .copied()
            .unwrap_or(0.0)
    };
    Stats {
        cases: cases.len(),
        band_cases: safe.len(),
        median_abs: at(&abs, 50),
        worst_abs: abs.last().copied().unwrap_or(0.0),
        p10: at(&safe, 10),
        p90: at(&safe, 90),
        unsafe_over_10: cases
            .iter()
            .filter(|c| match c.unit {
                Unit::Tokens => c.error_percent() > 10.0,
                Unit::Binary | Unit::Decimal => c.error_percent() < -10.0,
            })
            .count(),
    }
}

/// The statistics per runtime, in the order runtimes first appear.
pub fn stats_by_runtime(cases: &[Case]) -> Vec<(&'static str, Stats)> {
    let mut runtimes: Vec<&'static str> = Vec::new();
    for c in cases {
        if !runtimes.contains(&c.runtime) {
            runtimes.push(c.runtime);
        }
    }
    runtimes
        .into_iter()
        .map(|r| {
            let of: Vec<&Case> = cases.iter().filter(|c| c.runtime == r).collect();
            (r, stats(&of))
        })
        .collect()
}

#[cfg(test)]
mod tests;
