//! Byte counts written for Spanish readers: "1,95 GiB", decimal comma, two decimals.
//!
//! The diagnosis cites the numbers it decoded; byte sizes print as everywhere in
//! vramlab (`numfmt`), counts with no-break spaces between groups of three.

pub use numfmt::{binary, both, decimal};

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

/// What a ggml buffer was for, in Spanish (`Decoded::buffer`'s values).
pub fn buffer_purpose(buffer: &str) -> &'static str {
    match buffer {
        "weights" => "los pesos del modelo",
        "kv-cache" => "la caché KV",
        "compute" => "el cómputo (grafo)",
        _ => "otro uso",
    }
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
