//! Weight memory: parameters × bytes per parameter, the first of the four categories of
//! VRAM and the only one that does not depend on the workload.

use serde::{Deserialize, Serialize};

use crate::dtype::Dtype;
use crate::units::ByteSize;

/// The weight footprint of `params` parameters stored as `dtype`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WeightFootprint {
    pub params: u64,
    pub dtype: Dtype,
    pub bytes: ByteSize,
}

/// Computes the weight footprint. Exact: see [`Dtype::bytes_for`].
pub fn weights(params: u64, dtype: Dtype) -> WeightFootprint {
    WeightFootprint {
        params,
        dtype,
        bytes: ByteSize(dtype.bytes_for(params)),
    }
}

/// The footprint in every supported format, widest first: the table the guide shows.
pub fn weights_table(params: u64) -> Vec<WeightFootprint> {
    Dtype::ALL.iter().map(|&d| weights(params, d)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The source guide's figures for a 7B model (shared/validation/public-cases.md,
    /// seed-1..3): 28 GB in fp32, 14 GB in fp16/bf16, about 3.5–4 GB at 4 bits.
    #[test]
    fn seven_billion_matches_the_guide() {
        let p = 7_000_000_000;
        assert_eq!(weights(p, Dtype::Fp32).bytes, ByteSize(28_000_000_000));
        assert_eq!(weights(p, Dtype::Fp16).bytes, ByteSize(14_000_000_000));
        assert_eq!(weights(p, Dtype::Bf16).bytes, ByteSize(14_000_000_000));
        let nf4 = weights(p, Dtype::Nf4).bytes.0;
        assert!((3_500_000_000..=4_000_000_000).contains(&nf4), "{nf4}");
    }

    #[test]
    fn table_is_ordered_and_monotonic() {
        let t = weights_table(1_000_000);
        assert_eq!(t.len(), Dtype::ALL.len());
        assert!(t.windows(2).all(|w| w[0].bytes >= w[1].bytes));
    }
}
