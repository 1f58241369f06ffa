//! What reaches the terminal. Everything the CLI prints passes through
//! [`terminal_safe`] on its way to stdout or stderr, because much of it came from
//! files, pastes and flags: a config's `model_type`, a GGUF's metadata, a tensor name, a
//! snapshot's frame filenames. Escape sequences in them (screen clears, OSC window
//! titles, OSC 8 links, OSC 52 clipboard writes) are shown, not executed.

use std::borrow::Cow;

/// Whether `c` can change what the terminal does rather than show a glyph: C0 controls
/// but the newline and the tab, DEL, C1 controls (8-bit CSI and OSC among them), and
/// the bidirectional overrides and isolates that reorder what is shown.
fn acts(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every character that [`acts`] on the terminal written as `\uXXXX`: the
/// same escape JSON uses, so JSON output stays valid (such characters only ever appear
/// inside its strings) and text output shows what the file held.
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if acts(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn escapes_are_shown_not_run() {
        let cases = [
            ("Llama 3.1 8B\n\tCabe", "Llama 3.1 8B\n\tCabe"),
            ("\u{1b}[2J\u{1b}[H", "\\u001b[2J\\u001b[H"),
            ("\u{1b}]52;c;ZWNobw==\u{7}", "\\u001b]52;c;ZWNobw==\\u0007"),
            ("a\u{9b}31mb", "a\\u009b31mb"),
            ("x\ry", "x\\u000dy"),
            ("abc\u{202e}gpj.exe", "abc\\u202egpj.exe"),
            ("\u{7f}", "\\u007f"),
            ("cañón «GiB» − 3 664", "cañón «GiB» − 3 664"),
        ];
        for (raw, shown) in cases {
            assert_eq!(terminal_safe(raw), shown);
        }
        // JSON keeps parsing, and keeps the character.
        let json = serde_json::to_string(&"a\u{9b}b\u{202e}").unwrap();
        let safe = terminal_safe(&json);
        assert!(!safe.contains('\u{9b}'));
        assert_eq!(
            serde_json::from_str::<String>(&safe).unwrap(),
            "a\u{9b}b\u{202e}"
        );
    }

    proptest! {
        #[test]
        fn nothing_that_acts_gets_through(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let text = String::from_utf8_lossy(&bytes);
            let safe = terminal_safe(&text);
            prop_assert!(!safe.chars().any(acts));
            prop_assert!(!safe.as_bytes().contains(&0x1b));
            if !text.chars().any(acts) {
                prop_assert_eq!(safe.as_ref(), text.as_ref());
            }
        }
    }
}
