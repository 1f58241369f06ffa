//! Whole numbers a user types into a setting: a batch, a context length, a number of
//! GPUs, a LoRA rank.
//!
//! They are not parameter counts, so they have their own parser: no "B"/"T" suffixes,
//! no decimals, bounds checked here and named in the message. Token counts accept the
//! suffixes every LLM user writes for contexts, `k` and `M`, as powers of two (4k =
//! 4096, 128k = 131 072, 1M = 1 048 576): model cards call a 4096-token context "4k".

use crate::units::{DecimalError, parse_decimal, strip_spacing};

/// How a count is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Digits only (grouping with spaces, `_`, or `.`/`,` in groups of three is fine).
    Plain,
    /// Tokens: digits, or a number followed by `k` (×1024) or `M` (×1024²).
    Tokens,
}

/// Inclusive bounds of a count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    pub min: u64,
    pub max: u64,
    pub unit: Unit,
}

/// Why a count was refused; the setting's table entry turns it into a sentence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CountProblem {
    Empty,
    /// Not a whole number (a sign, a decimal, letters).
    NotWhole,
    /// A whole number outside the bounds.
    OutOfRange,
}

impl Bounds {
    pub const fn plain(min: u64, max: u64) -> Bounds {
        Bounds {
            min,
            max,
            unit: Unit::Plain,
        }
    }

    pub const fn tokens(min: u64, max: u64) -> Bounds {
        Bounds {
            min,
            max,
            unit: Unit::Tokens,
        }
    }

    /// "un entero entre 1 y 16 777 216 (4k = 4096)".
    pub fn describe(self) -> String {
        let hint = match self.unit {
            Unit::Plain => "",
            Unit::Tokens => " (también 4k = 4096, 128k = 131 072)",
        };
        format!(
            "un entero entre {} y {}{hint}",
            crate::group_digits(self.min),
            crate::group_digits(self.max)
        )
    }

    /// Reads `input` as a count within these bounds.
    pub fn parse(self, input: &str) -> Result<u64, CountProblem> {
        let compact = strip_spacing(input);
        if compact.is_empty() {
            return Err(CountProblem::Empty);
        }
        let (number, factor) = match (self.unit, compact.chars().last()) {
            (Unit::Tokens, Some('k' | 'K')) => (&compact[..compact.len() - 1], 1u128 << 10),
            (Unit::Tokens, Some('M' | 'm')) => (&compact[..compact.len() - 1], 1u128 << 20),
            _ => (compact.as_str(), 1),
        };
        // Decimals only make sense before a suffix ("1.5k"); a plain "2.5" is refused,
        // while "32.768" reads as the grouped integer a Spanish reader means.
        let decimal = parse_decimal(number, factor == 1).map_err(|e| match e {
            DecimalError::Syntax => CountProblem::NotWhole,
            DecimalError::Overflow => CountProblem::OutOfRange,
        })?;
        let (value, inexact) = decimal.times(factor).ok_or(CountProblem::OutOfRange)?;
        if inexact {
            return Err(CountProblem::NotWhole);
        }
        match u64::try_from(value) {
            Ok(v) if (self.min..=self.max).contains(&v) => Ok(v),
            _ => Err(CountProblem::OutOfRange),
        }
    }

    /// How a value is written back: tokens that are whole multiples of 1024 from 1k
    /// up print with `k` when that is what a user would type.
    pub fn print(self, value: u64) -> String {
        match self.unit {
            Unit::Tokens if value >= 1024 && value.is_multiple_of(1024) => {
                format!("{}k", value / 1024)
            }
            _ => value.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BATCH: Bounds = Bounds::plain(1, 1 << 20);
    const SEQ: Bounds = Bounds::tokens(1, 1 << 24);

    #[test]
    fn accepted() {
        let cases: [(Bounds, &str, u64); 14] = [
            (BATCH, "4", 4),
            (BATCH, " 16 ", 16),
            (BATCH, "1 024", 1024),
            (BATCH, "1048576", 1 << 20),
            (SEQ, "4096", 4096),
            (SEQ, "2k", 2048),
            (SEQ, "4K", 4096),
            (SEQ, "32k", 32_768),
            (SEQ, "128k", 131_072),
            (SEQ, "1M", 1_048_576),
            (SEQ, "1.5k", 1536),
            (SEQ, "1,5k", 1536),
            (SEQ, "32.768", 32_768),
            (SEQ, "16M", 1 << 24),
        ];
        for (bounds, input, want) in cases {
            assert_eq!(bounds.parse(input), Ok(want), "{input}");
        }
    }

    #[test]
    fn refused() {
        use CountProblem::*;
        let cases: [(Bounds, &str, CountProblem); 13] = [
            (BATCH, "", Empty),
            (BATCH, "  ", Empty),
            (BATCH, "-4", NotWhole),
            (BATCH, "2.5", NotWhole),
            (BATCH, "4k", NotWhole),
            (BATCH, "siete", NotWhole),
            (BATCH, "0", OutOfRange),
            (BATCH, "1048577", OutOfRange),
            (
                BATCH,
                "99999999999999999999999999999999999999999",
                OutOfRange,
            ),
            (SEQ, "1.0001k", NotWhole),
            (SEQ, "17M", OutOfRange),
            (SEQ, "7B", NotWhole),
            (SEQ, "1e99", OutOfRange),
        ];
        for (bounds, input, want) in cases {
            assert_eq!(bounds.parse(input), Err(want), "{input}");
        }
    }

    #[test]
    fn descriptions_name_the_bounds() {
        assert_eq!(
            BATCH.describe(),
            "un entero entre 1 y 1\u{202f}048\u{202f}576"
        );
        assert!(SEQ.describe().contains("4k = 4096"));
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,40}") {
            let _ = SEQ.parse(&s);
            let _ = BATCH.parse(&s);
        }

        #[test]
        fn printed_values_read_back(v in 1u64..=(1 << 24)) {
            proptest::prop_assert_eq!(SEQ.parse(&SEQ.print(v)), Ok(v));
            if v <= 1 << 20 {
                proptest::prop_assert_eq!(BATCH.parse(&BATCH.print(v)), Ok(v));
            }
        }
    }
}
