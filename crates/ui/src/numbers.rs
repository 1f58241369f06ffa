//! Number formatting without the standard library's float formatter.
//!
//! `format!("{:.1}", x)` pulls Rust's float-printing machinery (Grisu/Dragon) into the
//! wasm bundle, a sizeable share of every kilobyte the reader downloads. Islands only
//! need fixed decimals and a short scientific form, which integer formatting does.

/// `v` with `decimals` digits after a point (SVG coordinates) — e.g. `fixed(1.23456, 2)`
/// is "1.23". Non-finite values print as "0".
pub fn fixed(v: f64, decimals: u32) -> String {
    if !v.is_finite() {
        return "0".into();
    }
    let scale = 10i64.pow(decimals.min(9));
    let scaled = (v * scale as f64).round() as i64;
    let sign = if scaled < 0 { "-" } else { "" };
    let abs = scaled.unsigned_abs();
    let scale = scale.unsigned_abs();
    if decimals == 0 {
        return format!("{sign}{abs}");
    }
    format!(
        "{sign}{}.{:0width$}",
        abs / scale,
        abs % scale,
        width = decimals as usize
    )
}

/// Like [`fixed`] with a Spanish decimal comma, for text.
pub fn fixed_es(v: f64, decimals: u32) -> String {
    fixed(v, decimals).replace('.', ",")
}

/// "2,61e-6": two decimals of mantissa, Spanish decimal comma.
pub fn scientific_es(v: f64) -> String {
    if !v.is_finite() || v == 0.0 {
        return "0".into();
    }
    let mut exp = v.abs().log10().floor() as i32;
    let mut mantissa = v / 10f64.powi(exp);
    // Rounding can carry the mantissa to 10,00.
    if (mantissa.abs() * 100.0).round() >= 1000.0 {
        mantissa /= 10.0;
        exp += 1;
    }
    format!("{}e{exp}", fixed_es(mantissa, 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(fixed(1.23456, 2), "1.23");
        assert_eq!(fixed(-0.5, 1), "-0.5");
        assert_eq!(fixed(2.0, 3), "2.000");
        assert_eq!(fixed(99.96, 1), "100.0");
        assert_eq!(fixed(7.6, 0), "8");
        assert_eq!(fixed(f64::NAN, 2), "0");
        assert_eq!(fixed_es(33281.6374, 3), "33281,637");
        assert_eq!(scientific_es(2.61e-6), "2,61e-6");
        assert_eq!(scientific_es(9.999e-3), "1,00e-2");
        assert_eq!(scientific_es(0.0), "0");
    }
}
