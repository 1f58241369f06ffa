//! `band`: how far the estimate has been from published runs of the same runtime, so a
//! verdict can say "fits with room", "at the limit" or "does not fit" instead of
//! trusting one number.
//!
//! A band is the 10th and 90th percentile of the safe-side error of the validation cases
//! (`crate::validation`) of one runtime and one phase (training, or inference and
//! serving). The safe-side error is signed so that negative means "the estimate
//! promised more than the run delivered": memory under-estimated, or capacity (tokens)
//! over-estimated. For memory it is relative to what the run needed beyond the weights:
//! weight bytes are exact arithmetic (the validation's weight cases are exact), so the
//! uncertainty lives in activations, caches, buffers and fragmentation, and a run
//! that is mostly weights is not penalised for a batch-16 run's KV shortfall. A runtime with fewer than
//! [`MIN_CASES`] cases of a phase borrows the band of every runtime's cases of that
//! phase, and says so.
//!
//! The table is a copy of those statistics, so the web bundles do not carry the
//! validation cases; `validation::tests` recomputes it and fails, printing the new
//! table, the moment a case changes.

use serde::Serialize;

use crate::settings::Runtime;

/// Fewest cases of a runtime and phase for a band of its own.
pub const MIN_CASES: usize = 3;

/// The error band of one runtime and phase.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Band {
    /// 10th percentile of the safe-side error, percent (negative: the estimate promised
    /// more than the run delivered).
    pub p10: f64,
    /// 90th percentile, percent.
    pub p90: f64,
    /// Cases behind the band.
    pub cases: usize,
    /// Whether the band is that of every runtime of the phase (too few cases of its own).
    pub pooled: bool,
}

impl Band {
    /// Percent by which a run has needed more than the estimate (0 when the band never
    /// went below the estimate). Capped at 90 % so the arithmetic stays finite.
    pub fn shortfall(self) -> f64 {
        (-self.p10).clamp(0.0, 90.0)
    }

    /// The high end of the memory a run may need when the estimate says `bytes`, of
    /// which `weights` are weights: the rest scaled by the band's shortfall.
    pub fn high_bytes(self, bytes: u64, weights: u64) -> u64 {
        let weights = weights.min(bytes);
        let rest = (bytes - weights) as f64 * 100.0 / (100.0 - self.shortfall());
        if rest >= (u64::MAX - weights) as f64 {
            u64::MAX
        } else {
            (weights + rest.ceil() as u64).max(bytes)
        }
    }

    /// The low end of a capacity (tokens, sequences) the estimate puts at `count`.
    pub fn low_count(self, count: u64) -> u64 {
        let scaled = count as f64 * 100.0 / (100.0 + self.shortfall());
        (scaled.floor() as u64).min(count)
    }
}

/// One row of [`TABLE`]: the validation runtime id, the phase, the band.
pub type Row = (&'static str, bool, Band);

const fn band(p10: f64, p90: f64, cases: usize, pooled: bool) -> Band {
    Band {
        p10,
        p90,
        cases,
        pooled,
    }
}

/// The band per runtime id and phase (`true` = training), one decimal, as
/// `validation::tests::bands_match_the_cases` computes them.
pub const TABLE: &[Row] = &[
    ("transformers", true, band(-9.2, 3.2, 16, false)),
    ("transformers", false, band(-47.6, -0.7, 4, false)),
    ("unsloth", true, band(-21.7, 13.3, 31, true)),
    ("torchtune", true, band(-1.7, 63.3, 5, false)),
    ("deepspeed", true, band(-21.7, 13.3, 31, true)),
    ("vllm", false, band(-2.0, -0.1, 34, false)),
    ("llama.cpp", false, band(-7.8, 0.0, 21, false)),
    ("ollama", false, band(-9.4, 1.0, 74, true)),
    ("autoawq", false, band(-4.7, -3.2, 3, false)),
];

/// The validation runtime id of a runtime setting.
pub fn runtime_id(r: Runtime) -> &'static str {
    match r {
        Runtime::Transformers => "transformers",
        Runtime::Unsloth => "unsloth",
        Runtime::Torchtune => "torchtune",
        Runtime::Deepspeed => "deepspeed",
        Runtime::Vllm => "vllm",
        Runtime::LlamaCpp => "llama.cpp",
        Runtime::Ollama => "ollama",
        Runtime::AutoAwq => "autoawq",
    }
}

/// The band of `runtime` in training (`true`) or inference.
pub fn of(runtime: Runtime, training: bool) -> Option<Band> {
    let id = runtime_id(runtime);
    TABLE
        .iter()
        .find(|(r, t, _)| *r == id && *t == training)
        .map(|(_, _, b)| *b)
}

/// The runtime whose cases measure what `s` computes: a serving plan is vLLM's paged
/// cache whatever the runtime says.
pub fn runtime_of(s: &crate::Settings) -> Runtime {
    if s.serving() {
        Runtime::Vllm
    } else {
        s.runtime
    }
}

/// The band of what `s` computes ([`runtime_of`]).
pub fn for_settings(s: &crate::Settings) -> Option<Band> {
    of(runtime_of(s), s.task.is_training())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn high_and_low_ends() {
        let b = band(-20.0, 5.0, 10, false);
        assert_eq!(b.high_bytes(80, 0), 100);
        // Only what is not weights is scaled.
        assert_eq!(b.high_bytes(180, 100), 200);
        assert_eq!(b.low_count(120), 100);
        // A band that never under-estimated leaves the estimate as the high end.
        let safe = band(5.0, 13.0, 4, false);
        assert_eq!(safe.high_bytes(1000, 500), 1000);
        assert_eq!(safe.low_count(1000), 1000);
        // Huge inputs saturate instead of overflowing.
        assert_eq!(b.high_bytes(u64::MAX, 0), u64::MAX);
        assert_eq!(b.high_bytes(u64::MAX, u64::MAX), u64::MAX);
    }

    #[test]
    fn every_runtime_has_a_band_for_what_it_runs() {
        for c in crate::settings::RUNTIMES {
            for task in crate::settings::TASKS {
                if c.value.runs(task.value) {
                    assert!(of(c.value, task.value.is_training()).is_some(), "{}", c.id);
                }
            }
        }
    }
}
