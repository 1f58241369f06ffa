//! Byte counts written for Spanish readers: "1,95 GiB", decimal comma, two decimals.
//!
//! The diagnosis cites the numbers it decoded, so it needs its own formatter: this crate
//! depends on nothing but serde and thiserror. Integer arithmetic only, rounded half up,
//! so the browser and the CLI print the same digits.

/// Binary units (B, KiB, MiB, GiB, TiB, PiB): "1,95 GiB".
pub fn binary(bytes: u64) -> String {
    scaled(
        bytes,
        1024,
        &["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"],
    )
}

/// Decimal units (B, KB, MB, GB, TB, PB): "2,09 GB".
pub fn decimal(bytes: u64) -> String {
    scaled(bytes, 1000, &["B", "KB", "MB", "GB", "TB", "PB", "EB"])
}

/// Both readings: "1,95 GiB (2,09 GB)".
pub fn both(bytes: u64) -> String {
    format!("{} ({})", binary(bytes), decimal(bytes))
}

/// A count with thin groups of three: "131 072".
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('\u{a0}');
        }
        out.push(c);
    }
    out
}

fn scaled(bytes: u64, base: u64, units: &[&str]) -> String {
    let mut divisor: u128 = 1;
    let mut unit = units.first().copied().unwrap_or("B");
    let mut d: u128 = 1;
    for u in units.iter().skip(1) {
        d *= u128::from(base);
        if u128::from(bytes) >= d {
            divisor = d;
            unit = u;
        }
    }
    if divisor == 1 {
        return format!("{bytes} {unit}");
    }
    let hundredths = (u128::from(bytes) * 100 + divisor / 2) / divisor;
    format!("{},{:02} {unit}", hundredths / 100, hundredths % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_and_decimal() {
        assert_eq!(binary(0), "0 B");
        assert_eq!(binary(512), "512 B");
        assert_eq!(binary(2_093_796_557), "1,95 GiB");
        assert_eq!(decimal(2_093_796_557), "2,09 GB");
        assert_eq!(binary(20 << 20), "20,00 MiB");
        assert_eq!(binary(u64::MAX), "16,00 EiB");
        assert_eq!(both(1 << 30), "1,00 GiB (1,07 GB)");
    }

    #[test]
    fn counts() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(131_072), "131\u{a0}072");
        assert_eq!(count(1_000_000), "1\u{a0}000\u{a0}000");
    }
}
