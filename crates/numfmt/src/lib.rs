//! How numbers and user text appear in vramlab's Spanish messages, written once.
//!
//! The estimator (`vram`), the OOM explainer (`oom`), the allocator simulator and the
//! snapshot reader all cite byte counts and echo what the user typed. They depend on no
//! common engine, so this crate, with no dependencies, is where the shared rules live:
//! "1,95 GiB" with a decimal comma and two decimals computed in integer arithmetic
//! (rounded half up, so the browser and the CLI print the same digits), counts in
//! groups of three ("35 931"), percentages ("−4,2 %"), echoes of user input cut to a
//! length a message can carry, and text escaped for HTML. One function per fact: every
//! surface (CLI, pages, widget, worker) prints these through here. Its one dependency,
//! serde_json, is for `json_problem`: every JSON reader (configs, headers, indexes,
//! snapshots, traces) reports serde_json's English errors in the same Spanish words.

/// Binary units (B, KiB, MiB, GiB, TiB, PiB, EiB): "13,04 GiB".
pub fn binary(bytes: u64) -> String {
    scaled(
        bytes,
        1024,
        &["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"],
    )
}

/// Decimal units (B, KB, MB, GB, TB, PB, EB): "14,00 GB".
pub fn decimal(bytes: u64) -> String {
    scaled(bytes, 1000, &["B", "KB", "MB", "GB", "TB", "PB", "EB"])
}

/// Both readings, so nobody has to guess which gigabyte is meant: "1,95 GiB (2,09 GB)".
pub fn both(bytes: u64) -> String {
    format!("{} ({})", binary(bytes), decimal(bytes))
}

/// The largest unit that keeps the value ≥ 1, two decimals, half up.
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

/// An integer with its digits in groups of three separated by a narrow no-break space,
/// as Spanish typography (RAE) asks for numbers of five digits or more:
/// 7000000000 → "7 000 000 000". Four-digit numbers stay together ("4096").
pub fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    if digits.len() <= 4 {
        return digits;
    }
    let mut out = String::with_capacity(digits.len() * 2);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('\u{202f}');
        }
        out.push(c);
    }
    out
}

/// `v` percent with `decimals` decimals: "9,3 %" — a decimal comma, a true minus sign
/// ("−4,2 %") and a no-break space before the sign, so it never wraps alone.
pub fn percent(v: f64, decimals: u32) -> String {
    let mut out = fixed_with(v, decimals, ',', '\u{2212}');
    out.push_str("\u{a0}%");
    out
}

/// [`percent`] with its sign always: "+7,9 %", "−42,4 %" (a deviation).
pub fn signed_percent(v: f64, decimals: u32) -> String {
    let text = percent(v, decimals);
    if text.starts_with('\u{2212}') {
        text
    } else {
        format!("+{text}")
    }
}

/// `text` with the five characters that matter in HTML text and quoted attributes
/// escaped: what every renderer (the site generator, the browser bundles, the widget)
/// writes user and catalog text with.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Most characters of user input a message echoes.
pub const CLIP_CHARS: usize = 40;

/// User input cut to [`CLIP_CHARS`] characters (with "…" when cut), so an error message
/// never echoes a 10 MB paste back.
pub fn clip(input: &str) -> String {
    let trimmed = input.trim();
    let mut out: String = trimmed.chars().take(CLIP_CHARS).collect();
    if trimmed.chars().nth(CLIP_CHARS).is_some() {
        out.push('…');
    }
    out
}

// Fixed decimals without the standard library's float formatter: `format!("{:.1}", x)`
// pulls Rust's float printing (Grisu/Dragon) into every wasm bundle that uses it, a
// sizeable share of what the reader downloads. SVG coordinates and the few decimals the
// pages print only need fixed decimals and a short scientific form.

/// `v` with `decimals` digits after a point (SVG coordinates) — e.g. `fixed(1.23456, 2)`
/// is "1.23". Non-finite values print as "0".
pub fn fixed(v: f64, decimals: u32) -> String {
    fixed_with(v, decimals, '.', '-')
}

/// Like [`fixed`] with a Spanish decimal comma, for text.
pub fn fixed_es(v: f64, decimals: u32) -> String {
    fixed_with(v, decimals, ',', '-')
}

/// [`fixed`] with its decimal point and minus sign chosen: written digit by digit, so no
/// `str::replace` (a sizeable generic in every bundle) is needed to localise it.
fn fixed_with(v: f64, decimals: u32, point: char, minus: char) -> String {
    if !v.is_finite() {
        return "0".into();
    }
    let scale = 10i64.pow(decimals.min(9));
    let scaled = (v * scale as f64).round() as i64;
    let abs = scaled.unsigned_abs();
    let scale = scale.unsigned_abs();
    let mut out = String::new();
    if scaled < 0 {
        out.push(minus);
    }
    out.push_str(&(abs / scale).to_string());
    if decimals > 0 {
        out.push(point);
        let frac = (abs % scale).to_string();
        for _ in frac.len()..decimals.min(9) as usize {
            out.push('0');
        }
        out.push_str(&frac);
    }
    out
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

/// What went wrong in JSON, in Spanish, without the position (serde_json's messages are
/// English): the cut-off text, a document nested past serde_json's recursion limit of
/// 128 levels (which it files as a syntax error), a syntax error, a wrong type.
pub fn json_fault(e: &serde_json::Error) -> &'static str {
    use serde_json::error::Category;
    match e.classify() {
        Category::Eof => "el texto se corta antes de terminar",
        Category::Syntax if e.to_string().starts_with("recursion limit exceeded") => {
            "anida más de 128 niveles de listas u objetos (un archivo real tiene unos pocos)"
        }
        Category::Syntax => "hay un error de sintaxis",
        Category::Data => "un valor no tiene el tipo esperado",
        Category::Io => "no se pudo leer",
    }
}

/// [`json_fault`] with its line and column, when serde_json knows them.
pub fn json_problem(e: &serde_json::Error) -> String {
    let what = json_fault(e);
    if e.line() == 0 {
        what.to_owned()
    } else {
        format!("{what} (línea {}, columna {})", e.line(), e.column())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_problems_are_named_in_spanish() {
        let problem = |text: &str| match serde_json::from_str::<serde_json::Value>(text) {
            Ok(v) => panic!("{text}: {v}"),
            Err(e) => json_problem(&e),
        };
        for (text, want) in [
            (
                "{\"a\": 1",
                "el texto se corta antes de terminar (línea 1, columna 7)",
            ),
            ("{\"a\" 1}", "hay un error de sintaxis (línea 1, columna 6)"),
            (
                "\u{feff}{}",
                "hay un error de sintaxis (línea 1, columna 1)",
            ),
        ] {
            assert_eq!(problem(text), want, "{text}");
        }
        let deep = "[".repeat(100_000);
        assert!(
            problem(&deep).starts_with("anida más de 128 niveles"),
            "{}",
            problem(&deep)
        );
        let typed = serde_json::from_str::<u32>("\"x\"")
            .map(|_| ())
            .unwrap_err();
        assert!(json_problem(&typed).starts_with("un valor no tiene el tipo esperado"));
    }

    #[test]
    fn fixed_decimals() {
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

    #[test]
    fn groups_and_percentages() {
        for (n, want) in [
            (0, "0"),
            (4096, "4096"),
            (12_345, "12\u{202f}345"),
            (7_000_000_000, "7\u{202f}000\u{202f}000\u{202f}000"),
        ] {
            assert_eq!(group_digits(n), want);
        }
        assert_eq!(percent(9.34, 1), "9,3\u{a0}%");
        assert_eq!(percent(53.4, 0), "53\u{a0}%");
        assert_eq!(percent(-4.25, 1), "\u{2212}4,3\u{a0}%");
        assert_eq!(signed_percent(7.94, 1), "+7,9\u{a0}%");
        assert_eq!(signed_percent(-42.4, 1), "\u{2212}42,4\u{a0}%");
        assert_eq!(signed_percent(0.0, 1), "+0,0\u{a0}%");
        assert_eq!(
            escape_html(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn units() {
        let cases = [
            (0, "0 B", "0 B"),
            (512, "512 B", "512 B"),
            (1023, "1023 B", "1,02 KB"),
            (1024, "1,00 KiB", "1,02 KB"),
            (20 << 20, "20,00 MiB", "20,97 MB"),
            (2_093_796_557, "1,95 GiB", "2,09 GB"),
            (14_000_000_000, "13,04 GiB", "14,00 GB"),
            (u64::MAX, "16,00 EiB", "18,45 EB"),
        ];
        for (bytes, bin, dec) in cases {
            assert_eq!(
                (binary(bytes).as_str(), decimal(bytes).as_str()),
                (bin, dec)
            );
        }
        assert_eq!(both(1 << 30), "1,00 GiB (1,07 GB)");
    }

    #[test]
    fn clipping() {
        assert_eq!(clip("  7B "), "7B");
        let long = "x".repeat(10_000);
        assert_eq!(clip(&long).chars().count(), CLIP_CHARS + 1);
        assert!(clip(&long).ends_with('…'));
        assert_eq!(clip(&"ñ".repeat(CLIP_CHARS)), "ñ".repeat(CLIP_CHARS));
    }
}
