//! Parsing and formatting of counts and byte sizes, the two kinds of number users type.
//!
//! Users write "7B", "7e9", "7.000.000.000" or "6,74B" for a parameter count and "24GiB"
//! or "80 GB" for memory. Both are parsed with exact integer arithmetic (no floats), so
//! "1.5GiB" is exactly 1,610,612,736 bytes. Sizes follow the SI/IEC split strictly:
//! `KB`…`PB` are powers of 1000, `KiB`…`PiB` powers of 1024 (1 PiB is the largest size),
//! because mixing them is the most common mistake of existing calculators (an "80 GB"
//! H100 reports 79.6 GiB to the driver).

use serde::{Deserialize, Serialize};
use std::fmt;

/// Largest parameter count accepted: 10^15, three orders of magnitude above the
/// biggest published dense models. Anything larger is certainly a typo.
pub const MAX_PARAMS: u64 = 1_000_000_000_000_000;

/// Largest byte size accepted: 1 PiB.
pub const MAX_BYTES: u64 = 1 << 50;

/// Why a piece of user input was rejected. `Display` gives a Spanish sentence.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("Escribe un número.")]
    Empty,
    #[error("«{input}» no es un número válido. Ejemplos: 7B, 7e9, 7000000000, 6,74B.")]
    InvalidNumber { input: String },
    #[error("«{input}» no es un tamaño válido. Ejemplos: 24GiB, 80 GB, 512MiB.")]
    InvalidSize { input: String },
    #[error(
        "La unidad «{unit}» no existe. Usa B, KB, MB, GB, TB, PB (potencias de 1000) o KiB, MiB, GiB, TiB, PiB (potencias de 1024)."
    )]
    UnknownUnit { unit: String },
    #[error(
        "«{input}» sin unidad son bytes, y no hay fracciones de byte: escribe la unidad, como {input}GiB o {input}GB."
    )]
    FractionalBytes { input: String },
    #[error("«{input}» no es un número entero de parámetros.")]
    NotInteger { input: String },
    #[error("«{input}» es demasiado grande (el máximo es {max}).")]
    TooLarge { input: String, max: &'static str },
    #[error("El tipo de dato «{input}» no existe. Usa fp32, fp16, bf16, fp8, int8 o nf4.")]
    UnknownDtype { input: String },
}

pub use numfmt::clip;

/// A decimal number parsed exactly: `mantissa / 10^scale`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Decimal {
    mantissa: u128,
    scale: u32,
}

impl Decimal {
    /// Multiplies by `factor` and divides out the scale. Returns the exact integer
    /// and whether a remainder was dropped.
    pub(crate) fn times(self, factor: u128) -> Option<(u128, bool)> {
        let num = self.mantissa.checked_mul(factor)?;
        let den = 10u128.checked_pow(self.scale)?;
        Some((num / den, num % den != 0))
    }
}

/// Removes the characters people use to group digits: spaces (also no-break and thin
/// spaces) and underscores.
pub(crate) fn strip_spacing(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, ' ' | '_' | '\u{a0}' | '\u{202f}' | '\u{2009}' | '\t'))
        .collect()
}

/// True when every group after the first separator has exactly three digits, as in
/// "7.000.000" or "7,000,000".
fn is_digit_grouping(s: &str, sep: char) -> bool {
    let mut parts = s.split(sep);
    let first_ok = parts
        .next()
        .is_some_and(|p| (1..=3).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()));
    let mut rest = parts.peekable();
    first_ok
        && rest.peek().is_some()
        && rest.all(|p| p.len() == 3 && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Why a decimal number could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DecimalError {
    /// Not a number at all.
    Syntax,
    /// A well-formed number too large for exact arithmetic.
    Overflow,
}

/// Parses digits with at most one decimal separator ('.' or ','), optional exponent.
/// `allow_grouping` accepts "7.000.000" style thousands separators when the number has
/// no unit (so "7.000" means seven thousand parameters, as a Spanish reader means it).
pub(crate) fn parse_decimal(s: &str, allow_grouping: bool) -> Result<Decimal, DecimalError> {
    use DecimalError::{Overflow, Syntax};
    let (base, exp) = match s.find(['e', 'E']) {
        Some(i) => {
            let exp_text = s.get(i + 1..).ok_or(Syntax)?;
            let exp: i32 = exp_text.parse().map_err(|_| {
                let digits = exp_text.trim_start_matches(['+', '-']);
                if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                    Overflow
                } else {
                    Syntax
                }
            })?;
            (s.get(..i).ok_or(Syntax)?, exp)
        }
        None => (s, 0),
    };
    if base.is_empty() {
        return Err(Syntax);
    }
    if exp.abs() > 30 {
        return Err(Overflow);
    }
    let ungrouped;
    let base = if allow_grouping && exp == 0 {
        if is_digit_grouping(base, '.') {
            ungrouped = base.replace('.', "");
            ungrouped.as_str()
        } else if is_digit_grouping(base, ',') {
            ungrouped = base.replace(',', "");
            ungrouped.as_str()
        } else {
            base
        }
    } else {
        base
    };
    let mut mantissa: u128 = 0;
    let mut scale: i32 = 0;
    let mut seen_sep = false;
    let mut digits = 0usize;
    for c in base.chars() {
        match c {
            '0'..='9' => {
                mantissa = mantissa
                    .checked_mul(10)
                    .and_then(|m| m.checked_add(u128::from(c as u8 - b'0')))
                    .ok_or(Overflow)?;
                digits += 1;
                if seen_sep {
                    scale += 1;
                }
            }
            '.' | ',' if !seen_sep => seen_sep = true,
            _ => return Err(Syntax),
        }
    }
    if digits == 0 {
        return Err(Syntax);
    }
    // Fold the exponent into mantissa/scale.
    let mut scale = scale - exp;
    while scale < 0 {
        mantissa = mantissa.checked_mul(10).ok_or(Overflow)?;
        scale += 1;
    }
    Ok(Decimal {
        mantissa,
        scale: u32::try_from(scale).map_err(|_| Overflow)?,
    })
}

/// Splits "7.5GiB" into ("7.5", "GiB"): the unit is the trailing run of letters.
fn split_unit(s: &str) -> (&str, &str) {
    let idx = s
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphabetic())
        .last()
        .map_or(s.len(), |(i, _)| i);
    // An exponent like "7e9" ends in a digit, so it never reaches here as a unit, but a
    // bare "7e" would: keep the 'e' with the number so it fails as a number.
    s.split_at(idx)
}

/// Parses a parameter count: "7B", "7e9", "1.5T", "6,74B", "125M", "7 000 000 000".
///
/// Suffixes: K (10^3), M (10^6), B or G (10^9), T (10^12), case-insensitive.
pub fn parse_count(input: &str) -> Result<u64, ParseError> {
    let compact = strip_spacing(input);
    if compact.is_empty() {
        return Err(ParseError::Empty);
    }
    let (number, suffix) = split_unit(&compact);
    let factor: u128 = match suffix.to_ascii_lowercase().as_str() {
        "" => 1,
        "k" => 1_000,
        "m" => 1_000_000,
        "b" | "g" => 1_000_000_000,
        "t" => 1_000_000_000_000,
        _ => {
            return Err(ParseError::InvalidNumber { input: clip(input) });
        }
    };
    let too_large = || ParseError::TooLarge {
        input: clip(input),
        max: "10^15 parámetros",
    };
    let dec = parse_decimal(number, suffix.is_empty()).map_err(|e| match e {
        DecimalError::Syntax => ParseError::InvalidNumber { input: clip(input) },
        DecimalError::Overflow => too_large(),
    })?;
    let (value, inexact) = dec.times(factor).ok_or_else(too_large)?;
    if inexact {
        return Err(ParseError::NotInteger { input: clip(input) });
    }
    match u64::try_from(value) {
        Ok(v) if v <= MAX_PARAMS => Ok(v),
        _ => Err(too_large()),
    }
}

/// A duration for people, with a decimal comma: "850 ms", "2,5 ms", "14,0 s",
/// "3,2 min", "241,9 h".
pub fn duration_text(seconds: f64) -> String {
    if !seconds.is_finite() || seconds < 0.0 {
        return "—".to_owned();
    }
    let (value, unit, decimals) = if seconds < 0.01 {
        (seconds * 1000.0, "ms", 1)
    } else if seconds < 1.0 {
        (seconds * 1000.0, "ms", 0)
    } else if seconds < 60.0 {
        (seconds, "s", 1)
    } else if seconds < 3600.0 {
        (seconds / 60.0, "min", 1)
    } else {
        (seconds / 3600.0, "h", 1)
    };
    // numfmt's fixed decimals: the standard float formatter would bring Rust's whole
    // float printing (about 13 KB) into every bundle that shows a speed.
    format!("{} {unit}", numfmt::fixed_es(value, decimals))
}

/// A count and its noun, singular for one: "1 secuencia", "4 secuencias".
pub fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", group_digits(n), if n == 1 { one } else { many })
}

pub use numfmt::group_digits;

/// A number of bytes. Serialised as a plain integer.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct ByteSize(pub u64);

impl ByteSize {
    pub const KIB: u64 = 1 << 10;
    pub const MIB: u64 = 1 << 20;
    pub const GIB: u64 = 1 << 30;

    /// Parses "24GiB", "80 GB", "512MiB", "1.5 TiB" or a bare byte count. Fractional
    /// bytes are rounded down.
    pub fn parse(input: &str) -> Result<ByteSize, ParseError> {
        let compact = strip_spacing(input);
        if compact.is_empty() {
            return Err(ParseError::Empty);
        }
        let (number, unit) = split_unit(&compact);
        let factor: u128 = match unit.to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "kb" => 1_000,
            "mb" => 1_000_000,
            "gb" => 1_000_000_000,
            "tb" => 1_000_000_000_000,
            "pb" => 1_000_000_000_000_000,
            "kib" => 1 << 10,
            "mib" => 1 << 20,
            "gib" => 1 << 30,
            "tib" => 1 << 40,
            // The largest size accepted is 1 PiB, so it must be writable as such.
            "pib" => 1 << 50,
            _ => {
                return Err(ParseError::UnknownUnit { unit: clip(unit) });
            }
        };
        let too_large = || ParseError::TooLarge {
            input: clip(input),
            max: "1 PiB",
        };
        let dec = parse_decimal(number, false).map_err(|e| match e {
            DecimalError::Syntax => ParseError::InvalidSize { input: clip(input) },
            DecimalError::Overflow => too_large(),
        })?;
        let (value, inexact) = dec.times(factor).ok_or_else(too_large)?;
        // "1.5" is 1.5 GiB forgotten, not one byte.
        if inexact && factor == 1 {
            return Err(ParseError::FractionalBytes {
                input: clip(number),
            });
        }
        match u64::try_from(value) {
            Ok(v) if v <= MAX_BYTES => Ok(ByteSize(v)),
            _ => Err(too_large()),
        }
    }

    /// "13,04 GiB": binary units, two decimals, Spanish decimal comma.
    pub fn binary(self) -> String {
        numfmt::binary(self.0)
    }

    /// "14,00 GB": decimal units, two decimals, Spanish decimal comma.
    pub fn decimal(self) -> String {
        numfmt::decimal(self.0)
    }
}

impl fmt::Display for ByteSize {
    /// Both readings, so nobody has to guess which gigabyte is meant.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&numfmt::both(self.0))
    }
}

/// What went wrong in JSON, in Spanish with its position (numfmt's one wording).
pub use numfmt::json_problem;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_in_their_own_unit() {
        for (seconds, want) in [
            (0.0025, "2,5 ms"),
            (0.85, "850 ms"),
            (14.0, "14,0 s"),
            (192.0, "3,2 min"),
            (870_874.999, "241,9 h"),
            (f64::NAN, "—"),
            (-1.0, "—"),
        ] {
            assert_eq!(duration_text(seconds), want, "{seconds}");
        }
        assert_eq!(counted(1, "secuencia", "secuencias"), "1 secuencia");
        assert_eq!(counted(0, "secuencia", "secuencias"), "0 secuencias");
    }

    #[test]
    fn counts() {
        let ok = [
            ("7B", 7_000_000_000),
            ("7b", 7_000_000_000),
            ("7e9", 7_000_000_000),
            ("7E9", 7_000_000_000),
            ("6.74B", 6_740_000_000),
            ("6,74B", 6_740_000_000),
            ("1.5T", 1_500_000_000_000),
            ("125M", 125_000_000),
            ("340k", 340_000),
            ("7 000 000 000", 7_000_000_000),
            ("7_000_000_000", 7_000_000_000),
            ("7.000.000.000", 7_000_000_000),
            ("7,000,000,000", 7_000_000_000),
            ("8030261248", 8_030_261_248),
            ("  70B ", 70_000_000_000),
            ("0", 0),
            ("1.5e3", 1_500),
        ];
        for (input, want) in ok {
            assert_eq!(parse_count(input), Ok(want), "{input}");
        }
    }

    #[test]
    fn bad_counts() {
        type Check = fn(&ParseError) -> bool;
        let cases: [(&str, Check); 9] = [
            ("", |e| matches!(e, ParseError::Empty)),
            ("   ", |e| matches!(e, ParseError::Empty)),
            ("siete", |e| matches!(e, ParseError::InvalidNumber { .. })),
            ("7X", |e| matches!(e, ParseError::InvalidNumber { .. })),
            ("-7B", |e| matches!(e, ParseError::InvalidNumber { .. })),
            ("7.5", |e| matches!(e, ParseError::NotInteger { .. })),
            ("1e16", |e| matches!(e, ParseError::TooLarge { .. })),
            ("99999999999999999999999999999999999999999", |e| {
                matches!(e, ParseError::TooLarge { .. })
            }),
            ("1.2.3B", |e| matches!(e, ParseError::InvalidNumber { .. })),
        ];
        for (input, check) in cases {
            let err = parse_count(input).unwrap_err();
            assert!(check(&err), "{input}: {err:?}");
            assert!(!err.to_string().is_empty());
        }
    }

    #[test]
    fn sizes() {
        let ok = [
            ("24GiB", 24 * ByteSize::GIB),
            ("24 gib", 24 * ByteSize::GIB),
            ("80GB", 80_000_000_000),
            ("80 GB", 80_000_000_000),
            ("1.5GiB", 1_610_612_736),
            ("1,5 GiB", 1_610_612_736),
            ("512MiB", 512 * ByteSize::MIB),
            ("4096", 4096),
            ("4096B", 4096),
            ("1TiB", 1 << 40),
        ];
        for (input, want) in ok {
            assert_eq!(ByteSize::parse(input), Ok(ByteSize(want)), "{input}");
        }
        assert!(matches!(
            ByteSize::parse("24 GiBs"),
            Err(ParseError::UnknownUnit { .. })
        ));
        // The maximum is written in a unit the parser takes.
        assert_eq!(ByteSize::parse("1PiB"), Ok(ByteSize(1 << 50)));
        assert!(matches!(
            ByteSize::parse("2 PiB"),
            Err(ParseError::TooLarge { .. })
        ));
        assert!(matches!(
            ByteSize::parse("2 EiB"),
            Err(ParseError::UnknownUnit { .. })
        ));
        assert!(matches!(
            ByteSize::parse("2000TiB"),
            Err(ParseError::TooLarge { .. })
        ));
        assert!(matches!(
            ByteSize::parse("GiB"),
            Err(ParseError::InvalidSize { .. })
        ));
        // A bare fraction is a forgotten unit, never a rounded byte count.
        for forgot in ["1.5", "1,5", "0.5B"] {
            let e = ByteSize::parse(forgot).map_err(|e| e.to_string());
            assert!(
                e.as_ref().is_err_and(|e| e.contains("escribe la unidad")),
                "{forgot}: {e:?}"
            );
        }
    }

    #[test]
    fn formatting() {
        let cases = [
            (0, "0 B", "0 B"),
            (1023, "1023 B", "1,02 KB"),
            (1024, "1,00 KiB", "1,02 KB"),
            (14_000_000_000, "13,04 GiB", "14,00 GB"),
            (28_000_000_000, "26,08 GiB", "28,00 GB"),
            (80 * ByteSize::GIB, "80,00 GiB", "85,90 GB"),
            (u64::MAX, "16,00 EiB", "18,45 EB"),
        ];
        for (bytes, bin, dec) in cases {
            assert_eq!(ByteSize(bytes).binary(), bin, "{bytes}");
            assert_eq!(ByteSize(bytes).decimal(), dec, "{bytes}");
        }
        assert_eq!(ByteSize(14_000_000_000).to_string(), "13,04 GiB (14,00 GB)");
    }

    #[test]
    fn grouping() {
        let cases = [
            (0, "0"),
            (4096, "4096"),
            (12_345, "12\u{202f}345"),
            (7_000_000_000, "7\u{202f}000\u{202f}000\u{202f}000"),
        ];
        for (n, want) in cases {
            assert_eq!(group_digits(n), want);
        }
    }

    #[test]
    fn clip_limits_echo() {
        let long = "x".repeat(10_000);
        assert!(clip(&long).chars().count() <= 41);
    }

    proptest::proptest! {
        #[test]
        fn parse_count_never_panics(s in "\\PC{0,64}") {
            let _ = parse_count(&s);
        }

        #[test]
        fn parse_size_never_panics(s in "\\PC{0,64}") {
            let _ = ByteSize::parse(&s);
        }

        #[test]
        fn count_roundtrips_plain_integers(n in 0u64..=MAX_PARAMS) {
            proptest::prop_assert_eq!(parse_count(&n.to_string()), Ok(n));
        }

        #[test]
        fn size_roundtrips_gib(n in 0u64..=1024) {
            proptest::prop_assert_eq!(ByteSize::parse(&format!("{n}GiB")), Ok(ByteSize(n << 30)));
        }
    }
}
