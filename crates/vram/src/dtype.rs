//! Storage formats of model weights and what each costs per parameter.
//!
//! Costs are kept as an exact fraction of bits per weight (`bits_num / bits_den`)
//! because block formats carry scales: bitsandbytes NF4 stores one fp32 absmax per
//! 64 weights, so a weight costs 4 + 32/64 = 4.5 bits, and rounding that to a float
//! early would make byte counts drift for 400B-parameter models.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

use crate::units::ParseError;

/// A storage format for weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    Fp32,
    Fp16,
    Bf16,
    Fp8,
    Int8,
    /// bitsandbytes 4-bit NormalFloat, one fp32 absmax per block of 64 weights.
    Nf4,
}

impl Dtype {
    /// Every format, in the order the UI lists them (widest first).
    pub const ALL: [Dtype; 6] = [
        Dtype::Fp32,
        Dtype::Fp16,
        Dtype::Bf16,
        Dtype::Fp8,
        Dtype::Int8,
        Dtype::Nf4,
    ];

    /// Stable identifier used in URLs, shortcodes and CLI flags.
    pub fn id(self) -> &'static str {
        match self {
            Dtype::Fp32 => "fp32",
            Dtype::Fp16 => "fp16",
            Dtype::Bf16 => "bf16",
            Dtype::Fp8 => "fp8",
            Dtype::Int8 => "int8",
            Dtype::Nf4 => "nf4",
        }
    }

    /// Short Spanish description shown next to the identifier.
    pub fn label(self) -> &'static str {
        match self {
            Dtype::Fp32 => "FP32 (precisión simple, 4 bytes)",
            Dtype::Fp16 => "FP16 (media precisión, 2 bytes)",
            Dtype::Bf16 => "BF16 (bfloat16, 2 bytes)",
            Dtype::Fp8 => "FP8 (E4M3/E5M2, 1 byte)",
            Dtype::Int8 => "INT8 (LLM.int8 de bitsandbytes)",
            Dtype::Nf4 => "NF4 (4 bits de bitsandbytes, bloques de 64)",
        }
    }

    /// Bits per weight as an exact fraction `(numerator, denominator)`.
    ///
    /// INT8 counts only the int8 payload: LLM.int8 keeps its per-row scales in the
    /// outlier-free path at 4 bytes per row, which is below 0.1% of a weight matrix and
    /// is modelled per tensor by the estimator, not here.
    pub fn bits_per_weight(self) -> (u64, u64) {
        match self {
            Dtype::Fp32 => (32, 1),
            Dtype::Fp16 | Dtype::Bf16 => (16, 1),
            Dtype::Fp8 | Dtype::Int8 => (8, 1),
            // 64 weights × 4 bits + one fp32 absmax (32 bits) per block.
            Dtype::Nf4 => (64 * 4 + 32, 64),
        }
    }

    /// Bytes needed to store `params` weights in this format, rounded up to whole
    /// bytes. Saturates instead of overflowing on absurd inputs.
    pub fn bytes_for(self, params: u64) -> u64 {
        let (num, den) = self.bits_per_weight();
        let bits = u128::from(params) * u128::from(num);
        let bytes = bits.div_ceil(u128::from(den) * 8);
        u64::try_from(bytes).unwrap_or(u64::MAX)
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for Dtype {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let norm = s.trim().to_ascii_lowercase();
        let found = match norm.as_str() {
            "fp32" | "float32" | "f32" => Dtype::Fp32,
            "fp16" | "float16" | "f16" | "half" => Dtype::Fp16,
            "bf16" | "bfloat16" => Dtype::Bf16,
            "fp8" | "float8" | "f8" | "e4m3" | "e5m2" => Dtype::Fp8,
            "int8" | "i8" | "llm.int8" => Dtype::Int8,
            "nf4" | "4bit" | "4-bit" => Dtype::Nf4,
            _ => {
                return Err(ParseError::UnknownDtype {
                    input: crate::units::clip(s),
                });
            }
        };
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The source guide's figures for a 7B model (shared/validation/public-cases.md,
    /// seed-1..3): 28 GB in fp32, 14 GB in fp16/bf16, about 3.5–4 GB at 4 bits.
    #[test]
    fn seven_billion_matches_the_guide() {
        let p = 7_000_000_000;
        assert_eq!(Dtype::Fp32.bytes_for(p), 28_000_000_000);
        assert_eq!(Dtype::Fp16.bytes_for(p), 14_000_000_000);
        assert_eq!(Dtype::Bf16.bytes_for(p), 14_000_000_000);
        let nf4 = Dtype::Nf4.bytes_for(p);
        assert!((3_500_000_000..=4_000_000_000).contains(&nf4), "{nf4}");
        // Widest first, as the guide's table lists them.
        let all: Vec<u64> = Dtype::ALL.iter().map(|d| d.bytes_for(1_000_000)).collect();
        assert!(all.windows(2).all(|w| w[0] >= w[1]));
    }

    #[test]
    fn bytes_per_weight_table() {
        // (dtype, params, expected bytes)
        let cases = [
            (Dtype::Fp32, 1, 4),
            (Dtype::Fp16, 1, 2),
            (Dtype::Bf16, 7_000_000_000, 14_000_000_000),
            (Dtype::Fp8, 1_000, 1_000),
            (Dtype::Int8, 1_000, 1_000),
            // 64 weights: 32 bytes of nibbles + 4 bytes of absmax.
            (Dtype::Nf4, 64, 36),
            (Dtype::Nf4, 1, 1),
            (Dtype::Fp32, 0, 0),
        ];
        for (dtype, params, bytes) in cases {
            assert_eq!(dtype.bytes_for(params), bytes, "{dtype} × {params}");
        }
    }

    #[test]
    fn parses_ids_and_aliases() {
        for d in Dtype::ALL {
            assert_eq!(d.id().parse::<Dtype>(), Ok(d));
            assert_eq!(d.id().to_uppercase().parse::<Dtype>(), Ok(d));
        }
        assert_eq!("bfloat16".parse::<Dtype>(), Ok(Dtype::Bf16));
        let err = "fp7".parse::<Dtype>().unwrap_err().to_string();
        assert!(err.contains("fp7"), "{err}");
    }

    #[test]
    fn absurd_counts_saturate() {
        assert_eq!(Dtype::Fp32.bytes_for(u64::MAX), u64::MAX);
    }
}
