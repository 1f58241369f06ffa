//! Byte sizes as PyTorch and its neighbours print them.
//!
//! PyTorch's C++ `format_size` writes `N bytes` up to 1024 bytes, then two decimals in
//! KiB, MiB or GiB ("1.95 GiB"); other tools write powers of 1000 (`GB`). Two places
//! write the SI names but divide by 1024: the MPS allocator ("18.04 GB") and old
//! `memory_summary()` tables ("4261 MB"). [`SiPrefixes`] says which reading applies.
//!
//! The value is computed exactly in integers: "1.95 GiB" is round(1.95 · 2³⁰) bytes,
//! rounded half up, never through floating point.

use numfmt::clip;
use serde::{Deserialize, Serialize};

use crate::scan::{Text, is_ws};

/// How to read `KB`, `MB`, `GB`, `TB`, `PB`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SiPrefixes {
    /// Powers of 1000, as the SI and most tools mean them.
    Decimal,
    /// Powers of 1024: PyTorch's MPS allocator and old `memory_summary()` tables.
    Binary,
}

/// Why a text is not a size. `Display` is a Spanish sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    #[error("no hay ningún tamaño")]
    Empty,
    #[error("«{0}» no empieza por un número")]
    NoNumber(String),
    #[error("unidad desconocida «{0}»: usa bytes, KiB, MiB, GiB, TiB, KB, MB, GB o TB")]
    UnknownUnit(String),
    #[error("«{0}» no tiene unidad: escribe bytes, KiB, MiB, GiB, KB, MB o GB")]
    MissingUnit(String),
    #[error("«{0}» es demasiado grande")]
    TooLarge(String),
    #[error("sobra texto después del tamaño: «{0}»")]
    Trailing(String),
}

/// Parses "1.95 GiB", "512 bytes", "80 GB" (powers of 1000) or "20,5 MiB".
pub fn parse_size(input: &str) -> Result<u64, SizeError> {
    parse_size_as(input, SiPrefixes::Decimal)
}

/// Parses a size, reading the SI names as `si` says.
pub fn parse_size_as(input: &str, si: SiPrefixes) -> Result<u64, SizeError> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return Err(SizeError::Empty);
    }
    let text = Text::new(trimmed);
    let (value, end) = scan(&text, 0, text.len(), si)?;
    if end < text.len() {
        return Err(SizeError::Trailing(clip(
            &text.slice_lossy(end, text.len()),
        )));
    }
    u64::try_from(value).map_err(|_| SizeError::TooLarge(clip(trimmed)))
}

/// Longest digit string accepted (integer and fraction together).
const MAX_DIGITS: u32 = 30;

/// Reads a size starting exactly at `i`: `(bytes, end)`. The value may exceed `u64`.
pub(crate) fn scan(
    text: &Text,
    i: usize,
    end: usize,
    si: SiPrefixes,
) -> Result<(u128, usize), SizeError> {
    let near = |from: usize| clip(&text.slice_lossy(from, end.min(from + 24)));
    let Some((mantissa, frac_digits, after_number)) = number(text, i, end) else {
        return Err(if text.at(i).is_some_and(|b| b.is_ascii_digit()) {
            SizeError::TooLarge(near(i))
        } else {
            SizeError::NoNumber(near(i))
        });
    };
    let unit_start = text.skip_ws(after_number, end);
    let (factor, after_unit) = unit(text, unit_start, end, si).ok_or_else(|| {
        let e = text.line_end(unit_start, end.min(unit_start + 12));
        if text.at(unit_start).is_some_and(|b| b.is_ascii_alphabetic()) && unit_start < end {
            SizeError::UnknownUnit(clip(&text.slice_lossy(unit_start, e)))
        } else {
            SizeError::MissingUnit(clip(&text.slice_lossy(i, after_number)))
        }
    })?;
    let too_large = || SizeError::TooLarge(clip(&text.slice_lossy(i, after_unit)));
    let scale = 10u128.checked_pow(frac_digits).ok_or_else(too_large)?;
    // round(mantissa · factor / scale), half up.
    let twice = mantissa
        .checked_mul(factor)
        .and_then(|v| v.checked_mul(2))
        .and_then(|v| v.checked_add(scale))
        .ok_or_else(too_large)?;
    Ok((twice / (2 * scale), after_unit))
}

/// Digits with an optional `.` or `,` fraction: `(mantissa, fraction digits, end)`.
fn number(text: &Text, i: usize, end: usize) -> Option<(u128, u32, usize)> {
    let mut j = i;
    let mut mantissa: u128 = 0;
    let mut digits = 0u32;
    let mut frac: Option<u32> = None;
    loop {
        let v = if digits > 0 { text.visible(j) } else { j };
        if v >= end {
            break;
        }
        match text.at(v) {
            Some(d @ b'0'..=b'9') => {
                digits += 1;
                if digits > MAX_DIGITS {
                    return None;
                }
                mantissa = mantissa * 10 + u128::from(d - b'0');
                if let Some(f) = frac.as_mut() {
                    *f += 1;
                }
                j = v + 1;
            }
            Some(b'.' | b',') if digits > 0 && frac.is_none() => {
                let next = text.visible(v + 1);
                if next < end && text.at(next).is_some_and(|b| b.is_ascii_digit()) {
                    frac = Some(0);
                    j = v + 1;
                } else {
                    break;
                }
            }
            _ => break,
        }
    }
    (digits > 0).then_some((mantissa, frac.unwrap_or(0), j))
}

fn factor_of(unit: &[u8], si: SiPrefixes) -> Option<u128> {
    let si_base: u128 = match si {
        SiPrefixes::Decimal => 1000,
        SiPrefixes::Binary => 1024,
    };
    Some(match unit {
        b"b" | b"byte" | b"bytes" => 1,
        b"kib" => 1 << 10,
        b"mib" => 1 << 20,
        b"gib" => 1 << 30,
        b"tib" => 1 << 40,
        b"pib" => 1 << 50,
        b"kb" => si_base,
        b"mb" => si_base.pow(2),
        b"gb" => si_base.pow(3),
        b"tb" => si_base.pow(4),
        b"pb" => si_base.pow(5),
        _ => return None,
    })
}

/// The unit at `i`: `(factor, end)`. A line break may fall inside the unit ("Gi" / "B"),
/// but a unit never runs into a letter on its own line ("MiBs" is not a unit).
fn unit(text: &Text, i: usize, end: usize, si: SiPrefixes) -> Option<(u128, usize)> {
    const MAX: usize = 8;
    let mut letters = [0u8; MAX];
    let mut ends = [0usize; MAX];
    let mut crossed = [false; MAX];
    let mut n = 0;
    let mut j = i;
    while n < MAX {
        let v = if n > 0 { text.visible(j) } else { j };
        if v >= end {
            break;
        }
        match text.at(v) {
            Some(b) if b.is_ascii_alphabetic() => {
                letters[n] = b.to_ascii_lowercase();
                crossed[n] = v != j;
                ends[n] = v + 1;
                n += 1;
                j = v + 1;
            }
            _ => break,
        }
    }
    let letter_follows_on_same_line = |len: usize| {
        (len < n && !crossed.get(len).copied().unwrap_or(true))
            || (len == n && n == MAX)
            || (len == n
                && text
                    .at(j)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_'))
    };
    (1..=n).rev().find_map(|len| {
        let unit = letters.get(..len)?;
        let factor = factor_of(unit, si)?;
        if letter_follows_on_same_line(len) {
            return None;
        }
        Some((factor, *ends.get(len - 1)?))
    })
}

/// Sizes read in place from a cleaned paste.
impl Text<'_> {
    /// A size ("1.95 GiB", "0 bytes") after optional whitespace: `(bytes, end)`. Sizes
    /// beyond `u64` saturate (PyTorch prints 2^64 bytes as "no limit").
    pub(crate) fn size_after(&self, i: usize, end: usize, si: SiPrefixes) -> Option<(u64, usize)> {
        let start = self.skip_ws(i, end);
        let (value, e) = scan(self, start, end, si).ok()?;
        Some((u64::try_from(value).unwrap_or(u64::MAX), e))
    }

    /// The size that ends right before `i` (whitespace allowed in between), reading no
    /// further back than `start`. Used for "3.24 GiB is reserved by PyTorch…", where
    /// the number precedes its label.
    pub(crate) fn size_before(&self, i: usize, start: usize, si: SiPrefixes) -> Option<u64> {
        let mut j = i.min(self.len());
        // Whitespace, then the unit's letters, then whitespace, then the number.
        j = self.back_while(j, start, 4, |b| is_ws(b) || b == b'(');
        let unit_end = j;
        j = self.back_while(j, start, 8, |b| b.is_ascii_alphabetic() || b == b'\n');
        if j == unit_end {
            return None;
        }
        j = self.back_while(j, start, 4, is_ws);
        let number_end = j;
        j = self.back_while(j, start, 40, |b| {
            b.is_ascii_digit() || b == b'.' || b == b',' || b == b'\n'
        });
        if j == number_end {
            return None;
        }
        // Re-read forwards, from the first digit, so that one parser decides what a size is.
        while j < number_end && !self.at(j).is_some_and(|b| b.is_ascii_digit()) {
            j += 1;
        }
        let (value, e) = scan(self, j, unit_end, si).ok()?;
        (e == unit_end).then(|| u64::try_from(value).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn sizes_before_and_after() {
        let t = Text::new("and 3.24 GiB is reserved by PyTorch but unallocated.");
        let (s, _) = t.find(0, t.len(), b"is reserved by pytorch").unwrap();
        assert_eq!(
            t.size_before(s, 0, SiPrefixes::Decimal),
            Some(3_478_923_510)
        );
        assert_eq!(
            t.size_after(3, t.len(), SiPrefixes::Decimal),
            Some((3_478_923_510, 12))
        );
        let t = Text::new("(16.00 GiB KV cache is needed");
        let (s, _) = t.find(0, t.len(), b"kv cache").unwrap();
        assert_eq!(t.size_before(s, 0, SiPrefixes::Decimal), Some(16 << 30));
        let t = Text::new("len (300000),\n13.53 GiB KV cache");
        let (s, _) = t.find(0, t.len(), b"kv cache").unwrap();
        assert_eq!(
            t.size_before(s, 0, SiPrefixes::Decimal),
            Some(14_527_726_879)
        );
        let t = Text::new("and is reserved");
        assert_eq!(t.size_before(4, 0, SiPrefixes::Decimal), None);
    }

    const GIB: u64 = 1 << 30;
    const MIB: u64 = 1 << 20;

    #[test]
    fn pytorch_format_size_outputs() {
        assert_eq!(parse_size("0 bytes"), Ok(0));
        assert_eq!(parse_size("512 bytes"), Ok(512));
        assert_eq!(parse_size("1024 bytes"), Ok(1024));
        assert_eq!(parse_size("1.00 KiB"), Ok(1024));
        assert_eq!(parse_size("20.00 MiB"), Ok(20 * MIB));
        assert_eq!(parse_size("2.00 MiB"), Ok(2 * MIB));
        assert_eq!(parse_size("14.56 GiB"), Ok(15_633_680_957));
        assert_eq!(parse_size("130206.04 GiB"), Ok(139_807_670_885_417));
        assert_eq!(parse_size("2.25 TiB"), Ok(2_473_901_162_496));
    }

    #[test]
    fn rounding_is_exact_and_half_up() {
        // 1.95 · 2^30 = 2093796556.8 → 2093796557.
        assert_eq!(parse_size("1.95 GiB"), Ok(2_093_796_557));
        // 0.5 byte rounds up; 0.4 rounds down.
        assert_eq!(parse_size("0.5 B"), Ok(1));
        assert_eq!(parse_size("0.4 B"), Ok(0));
        assert_eq!(parse_size("1.5 KiB"), Ok(1536));
    }

    #[test]
    fn decimal_and_binary_si_names() {
        assert_eq!(parse_size("80 GB"), Ok(80_000_000_000));
        assert_eq!(parse_size("1.5 MB"), Ok(1_500_000));
        assert_eq!(parse_size("2 KB"), Ok(2000));
        assert_eq!(parse_size("1 TB"), Ok(1_000_000_000_000));
        assert_eq!(
            parse_size_as("18.04 GB", SiPrefixes::Binary),
            Ok(19_370_302_505)
        );
        assert_eq!(parse_size_as("4261 MB", SiPrefixes::Binary), Ok(4261 * MIB));
        assert_eq!(parse_size_as("1 GiB", SiPrefixes::Binary), Ok(GIB));
    }

    #[test]
    fn spelling_variants() {
        assert_eq!(parse_size("1.95GiB"), Ok(2_093_796_557));
        assert_eq!(parse_size("  1.95   gib "), Ok(2_093_796_557));
        assert_eq!(parse_size("1,5 GiB"), Ok(GIB + GIB / 2));
        assert_eq!(parse_size("1 byte"), Ok(1));
        assert_eq!(parse_size("7 b"), Ok(7));
    }

    #[test]
    fn hard_wraps_inside_numbers_and_units() {
        let t = Text::new("1.9\n5 Gi\nB is free");
        assert_eq!(
            scan(&t, 0, t.len(), SiPrefixes::Decimal).map(|v| v.0),
            Ok(2_093_796_557)
        );
        // A unit ends at a line break when the next line starts with another word.
        let t = Text::new("0 bytes\nis free");
        assert_eq!(scan(&t, 0, t.len(), SiPrefixes::Decimal), Ok((0, 7)));
        let t = Text::new("3 B\nytes");
        assert_eq!(scan(&t, 0, t.len(), SiPrefixes::Decimal), Ok((3, 8)));
    }

    #[test]
    fn errors_are_spanish_sentences() {
        assert_eq!(parse_size(""), Err(SizeError::Empty));
        assert!(matches!(parse_size("GiB"), Err(SizeError::NoNumber(_))));
        assert!(matches!(
            parse_size("12 parsecs"),
            Err(SizeError::UnknownUnit(_))
        ));
        assert_eq!(parse_size("12"), Err(SizeError::MissingUnit("12".into())));
        assert!(matches!(
            parse_size("12 MiBs"),
            Err(SizeError::UnknownUnit(_))
        ));
        assert!(matches!(
            parse_size("12 MiB free"),
            Err(SizeError::Trailing(_))
        ));
        assert!(matches!(
            parse_size("99999999999 PiB"),
            Err(SizeError::TooLarge(_))
        ));
        assert!(matches!(
            parse_size("1234567890123456789012345678901 B"),
            Err(SizeError::TooLarge(_))
        ));
        let msg = parse_size("12 parsecs").unwrap_err().to_string();
        assert!(msg.starts_with("unidad desconocida «parsecs»"), "{msg}");
    }

    #[test]
    fn saturation_is_visible_to_scanners() {
        // PyTorch's "no limit" sentinel: 2^64 bytes printed in GiB.
        let t = Text::new("17179869184.00 GiB");
        assert_eq!(
            t.size_after(0, t.len(), SiPrefixes::Decimal).map(|v| v.0),
            Some(u64::MAX)
        );
    }
}
