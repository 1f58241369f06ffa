//! What the attention demo measured, independent of how it was measured (GPU or the
//! CPU fallback), and the arithmetic the page shows from it.

// Only the browser constructs outcomes; the build-time render shows the empty state.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

/// A successful run of one kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub ms: f64,
    pub gflops: f64,
    pub max_abs_err: f64,
    pub extra_bytes: u64,
    pub total_bytes: u64,
    pub tile: String,
    /// "gpu" (timestamp queries), "wall" or "cpu".
    pub timing: String,
    /// The checked output rows, to compare the two kernels with each other.
    pub sample: Vec<f32>,
}

/// One kernel's outcome at one N.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Done(Measured),
    /// Refused before allocating: the bytes it needed and the limit it passed.
    OutOfMemory {
        message: String,
        needed: u64,
        limit: u64,
        extra_bytes: u64,
        /// The limit was one buffer's (S passed it), not the run's total.
        per_buffer: bool,
    },
    Failed(String),
}

impl Outcome {
    pub fn ms(&self) -> Option<f64> {
        match self {
            Outcome::Done(m) => Some(m.ms),
            _ => None,
        }
    }

    /// Bytes beyond Q, K, V and O, known even when the run was refused.
    pub fn extra_bytes(&self) -> Option<u64> {
        match self {
            Outcome::Done(m) => Some(m.extra_bytes),
            Outcome::OutOfMemory { extra_bytes, .. } => Some(*extra_bytes),
            Outcome::Failed(_) => None,
        }
    }
}

/// Both kernels at one sequence length.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub n: u32,
    pub naive: Option<Outcome>,
    pub tiled: Option<Outcome>,
}

impl Point {
    /// Largest absolute difference between the two kernels' checked rows.
    pub fn max_diff(&self) -> Option<f64> {
        let (Some(Outcome::Done(a)), Some(Outcome::Done(b))) = (&self.naive, &self.tiled) else {
            return None;
        };
        if a.sample.len() != b.sample.len() || a.sample.is_empty() {
            return None;
        }
        Some(
            a.sample
                .iter()
                .zip(&b.sample)
                .map(|(x, y)| f64::from((x - y).abs()))
                .fold(0.0, f64::max),
        )
    }

    /// Naive time over tiled time.
    pub fn speedup(&self) -> Option<f64> {
        let naive = self.naive.as_ref()?.ms()?;
        let tiled = self.tiled.as_ref()?.ms()?;
        (tiled > 0.0).then(|| naive / tiled)
    }
}

/// The lengths a sweep visits: powers of two from 128 up to `max` (and `max` itself).
pub fn sweep(max: u32) -> Vec<u32> {
    let mut out: Vec<u32> = std::iter::successors(Some(128u32), |n| n.checked_mul(2))
        .take_while(|&n| n < max)
        .collect();
    out.push(max.max(1));
    out
}

/// The CPU fallback's ceiling: heads × N² scores (about 0.1 s of work per kernel in
/// WebAssembly), so the page never blocks for long.
pub const CPU_MAX_SCORES: u64 = 1 << 21;

/// Whether the CPU fallback takes this size.
pub fn cpu_accepts(n: u32, heads: u32) -> bool {
    u64::from(heads) * u64::from(n) * u64::from(n) <= CPU_MAX_SCORES
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done(ms: f64, sample: Vec<f32>) -> Outcome {
        Outcome::Done(Measured {
            ms,
            gflops: 1.0,
            max_abs_err: 0.0,
            extra_bytes: 4,
            total_bytes: 8,
            tile: String::new(),
            timing: "gpu".into(),
            sample,
        })
    }

    #[test]
    fn sweeps_double_up_to_the_chosen_length() {
        assert_eq!(sweep(1024), vec![128, 256, 512, 1024]);
        assert_eq!(sweep(128), vec![128]);
        assert_eq!(sweep(64), vec![64]);
        assert_eq!(sweep(3000), vec![128, 256, 512, 1024, 2048, 3000]);
    }

    #[test]
    fn comparisons_need_both_kernels() {
        let p = Point {
            n: 256,
            naive: Some(done(4.0, vec![1.0, 2.0])),
            tiled: Some(done(1.0, vec![1.0, 2.5])),
        };
        assert_eq!(p.speedup(), Some(4.0));
        assert_eq!(p.max_diff(), Some(0.5));
        let refused = Point {
            naive: Some(Outcome::OutOfMemory {
                message: String::new(),
                needed: 10,
                limit: 5,
                extra_bytes: 9,
                per_buffer: false,
            }),
            ..p.clone()
        };
        assert_eq!(refused.speedup(), None);
        assert_eq!(refused.max_diff(), None);
        assert_eq!(
            refused.naive.as_ref().and_then(Outcome::extra_bytes),
            Some(9)
        );
    }

    #[test]
    fn the_cpu_fallback_has_a_ceiling() {
        assert!(cpu_accepts(512, 8));
        assert!(!cpu_accepts(1024, 4));
    }
}
