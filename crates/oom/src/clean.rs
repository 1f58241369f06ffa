//! Turning a paste into text the parsers can read.
//!
//! What people paste is not what PyTorch printed: terminal colours (ANSI escapes),
//! Windows line endings, progress bars that rewrite a line with `\r`, JSON logs with
//! literal `\n`, and a prefix on every line from whatever collected the log
//! (`[rank0]:`, `2024-05-01T10:00:00.123Z`, `(VllmWorker rank=1 pid=254)`,
//! `ERROR 07-24 10:12:33 [core.py:586]`, `[1,0]<stderr>:`, `E   ` from pytest).
//!
//! [`clean`] removes all of that and collapses every run of whitespace to one space, so
//! the output holds one pasted line per `'\n'`, trimmed, without empty lines. It makes
//! one pass and one copy of the input, and the output is never longer than the input.

/// Cleans a paste (see the module documentation).
pub(crate) fn clean(input: &str) -> String {
    let mut out = String::with_capacity(input.len());
    let mut line = String::new();
    let mut push = |raw: &str| {
        let raw = raw.strip_suffix("\\r").unwrap_or(raw);
        line.clear();
        strip_controls(raw, &mut line);
        push_collapsed(strip_prefixes(&line), &mut out);
    };
    for physical in input.split(['\n', '\r']) {
        if physical.contains('\\') {
            physical.split("\\n").for_each(&mut push);
        } else {
            push(physical);
        }
    }
    out
}

/// Copies `raw` without ANSI escape sequences and control characters.
fn strip_controls(raw: &str, out: &mut String) {
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                Some('[') => skip_csi(&mut chars),
                Some(']') => {
                    // Operating-system command: ends with BEL or ESC '\'.
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            '[' if is_bare_sgr(chars.clone()) => {
                // "[31m" left behind when a paste lost the ESC byte.
                for c in chars.by_ref() {
                    if c == 'm' {
                        break;
                    }
                }
            }
            '\t' => out.push(' '),
            '\u{feff}' | '\u{200b}' => {}
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
}

/// Skips the rest of a control sequence: parameters, then one final byte.
fn skip_csi(chars: &mut impl Iterator<Item = char>) {
    for c in chars {
        if ('\u{40}'..='\u{7e}').contains(&c) {
            break;
        }
    }
}

/// Whether the text after a `[` is `31m`, `0m`, `1;31m`: digits and `;`, then `m`.
fn is_bare_sgr(mut rest: impl Iterator<Item = char>) -> bool {
    for n in 0..12 {
        match rest.next() {
            Some(c) if c.is_ascii_digit() || c == ';' => {}
            Some('m') => return n > 0,
            _ => return false,
        }
    }
    false
}

/// Pushes `content` with whitespace runs collapsed, as a new line of `out`.
fn push_collapsed(content: &str, out: &mut String) {
    let content = content.trim();
    if content.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push('\n');
    }
    let mut in_space = false;
    for c in content.chars() {
        if c.is_whitespace() {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
        } else {
            out.push(c);
            in_space = false;
        }
    }
}

const LEVELS: &[&str] = &[
    "INFO", "WARNING", "WARN", "ERROR", "DEBUG", "CRITICAL", "FATAL", "TRACE", "NOTICE",
];

/// Removes log prefixes from the start of a line.
fn strip_prefixes(line: &str) -> &str {
    let mut s = line.trim_start();
    // Every prefix starts with one of these; most lines start otherwise.
    let may_have_prefix = |s: &str| {
        s.starts_with(|c: char| c.is_ascii_digit() || c.is_ascii_uppercase() || "[<(>#".contains(c))
    };
    if !may_have_prefix(s) {
        return s;
    }
    let mut chained = false;
    for _ in 0..16 {
        let next = bracketed(s)
            .or_else(|| angled(s))
            .or_else(|| worker_tag(s))
            .or_else(|| timestamp(s))
            .or_else(|| ggml_log_prefix(s))
            .or_else(|| srun_label(s))
            .or_else(|| level(s))
            .or_else(|| glog_level(s))
            .or_else(|| pytest_marker(s))
            .or_else(|| quote_marker(s))
            .or_else(|| if chained { chained_token(s) } else { None });
        match next {
            Some(rest) => {
                s = rest.trim_start();
                chained = true;
            }
            None => break,
        }
    }
    s
}

/// The first space-separated token and what follows it.
fn token(s: &str) -> (&str, &str) {
    match s.find(' ') {
        Some(i) => (s.get(..i).unwrap_or(s), s.get(i..).unwrap_or("")),
        None => (s, ""),
    }
}

/// Whether a prefix ends here: end of line or a space.
fn ends_token(rest: &str) -> bool {
    rest.is_empty() || rest.starts_with(' ')
}

/// `[rank0]:`, `[2024-01-01 10:00:00,123]`, `[core.py:586]`, `[1,0]`.
fn bracketed(s: &str) -> Option<&str> {
    let inner = s.strip_prefix('[')?;
    let close = inner.get(..inner.len().min(96))?.find(']')?;
    let body = inner.get(..close)?;
    if body.contains('[') {
        return None;
    }
    let rest = inner.get(close + 1..)?;
    Some(rest.strip_prefix(':').unwrap_or(rest))
}

/// `<stderr>:` (MPI and Horovod launchers).
fn angled(s: &str) -> Option<&str> {
    let inner = s.strip_prefix('<')?;
    let close = inner.get(..inner.len().min(24))?.find('>')?;
    inner.get(close + 1..)?.strip_prefix(':')
}

/// `(VllmWorker rank=1 pid=254)`, `(EngineCore_0 pid=263)`, `(RayWorker pid=9, ip=…)`.
fn worker_tag(s: &str) -> Option<&str> {
    let inner = s.strip_prefix('(')?;
    let close = inner.get(..inner.len().min(96))?.find(')')?;
    let body = inner.get(..close)?;
    (body.contains("pid=") || body.contains("rank=")).then(|| inner.get(close + 1..))?
}

/// `2021-12-08T01:25:15.387Z`, `12:50:58,411`, `07-24`, `2024/05/01`.
fn timestamp(s: &str) -> Option<&str> {
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || "-:.,/TZ+".contains(c)))
        .unwrap_or(s.len());
    let (tok, rest) = (s.get(..end)?, s.get(end..)?);
    let digits = tok.chars().filter(char::is_ascii_digit).count();
    let separated = tok.contains(['-', ':', '/']);
    (digits >= 4 && separated && tok.starts_with(|c: char| c.is_ascii_digit()) && ends_token(rest))
        .then_some(rest)
}

/// llama.cpp's log with timestamps (common/log.cpp: minutes, seconds, milliseconds
/// and microseconds since start, then the level): `1.06.520.077 E `.
fn ggml_log_prefix(s: &str) -> Option<&str> {
    let (tok, rest) = token(s);
    let parts: Vec<&str> = tok.split('.').collect();
    let shaped = parts.len() == 4
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        && parts[1].len() == 2
        && parts[2].len() == 3
        && parts[3].len() == 3;
    if !shaped {
        return None;
    }
    let (level, rest) = token(rest.trim_start());
    matches!(level, "D" | "I" | "W" | "E" | "N").then_some(rest)
}

/// `0: ` from `srun --label`.
fn srun_label(s: &str) -> Option<&str> {
    let end = s.find(|c: char| !c.is_ascii_digit())?;
    let rest = s.get(end..)?.strip_prefix(": ")?;
    (1..=4).contains(&end).then_some(rest)
}

/// `ERROR`, `INFO:`, `WARNING `.
fn level(s: &str) -> Option<&str> {
    let (tok, rest) = token(s);
    let word = tok.strip_suffix(':').unwrap_or(tok);
    LEVELS.contains(&word).then_some(rest)
}

/// glog: `E0724`, `W0101`.
fn glog_level(s: &str) -> Option<&str> {
    let (tok, rest) = token(s);
    let mut chars = tok.chars();
    let first = chars.next()?;
    let digits = chars.as_str();
    ("IWEF".contains(first) && digits.len() == 4 && digits.chars().all(|c| c.is_ascii_digit()))
        .then_some(rest)
}

/// pytest's `E   ` before each line of an exception.
fn pytest_marker(s: &str) -> Option<&str> {
    s.strip_prefix("E   ")
}

/// Markdown quotes and shell or Python comments: `> `, `# `.
fn quote_marker(s: &str) -> Option<&str> {
    let rest = s.strip_prefix('>').or_else(|| s.strip_prefix('#'))?;
    ends_token(rest).then_some(rest)
}

/// Tokens that only count as a prefix after another prefix: a pid (`12345`), a source
/// location (`file.cc:12]`), a separator (`-`), a logger name before `- LEVEL`. Never `|`:
/// it opens the rows of a memory_summary table.
fn chained_token(s: &str) -> Option<&str> {
    let (tok, rest) = token(s);
    if !tok.is_empty() && tok.chars().all(|c| c.is_ascii_digit()) {
        return Some(rest);
    }
    if tok.ends_with(']') && tok.len() <= 64 {
        return Some(rest);
    }
    if matches!(tok, "-" | "::" | "—") {
        return Some(rest);
    }
    let (sep, after) = token(rest.trim_start());
    let (lvl, _) = token(after.trim_start());
    (sep == "-" && LEVELS.contains(&lvl)).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_and_controls() {
        let s = clean("\u{1b}[1;31mRuntimeError\u{1b}[0m: CUDA out of memory.\u{7}");
        assert_eq!(s, "RuntimeError: CUDA out of memory.");
        assert_eq!(clean("\u{1b}]0;title\u{7}texto"), "texto");
        assert_eq!(clean("[31mrojo[0m y [sin] color"), "rojo y [sin] color");
        assert_eq!(clean("a\tb\u{a0}\u{a0}c\u{feff}"), "a b c");
    }

    #[test]
    fn line_endings_and_literal_newlines() {
        assert_eq!(
            clean("uno\r\ndos\rtres\n\n\ncuatro"),
            "uno\ndos\ntres\ncuatro"
        );
        assert_eq!(
            clean(r"memory.\nCurrently allocated\r\nx"),
            "memory.\nCurrently allocated\nx"
        );
    }

    #[test]
    fn log_prefixes() {
        let cases = [
            (
                "[rank0]: torch.OutOfMemoryError: x",
                "torch.OutOfMemoryError: x",
            ),
            ("[rank12]:[W reducer.cpp:1] aviso", "aviso"),
            (
                "2021-12-08T01:25:15.38739826Z RuntimeError: x",
                "RuntimeError: x",
            ),
            (
                "[2023-07-10 12:50:58,411] [INFO] [launch.py:318:sigkill_handler] x",
                "x",
            ),
            (
                "(VllmWorker rank=1 pid=254) torch.OutOfMemoryError: x",
                "torch.OutOfMemoryError: x",
            ),
            (
                "(EngineCore_0 pid=263) ERROR 09-22 10:12:33 [core.py:586] ValueError: x",
                "ValueError: x",
            ),
            ("INFO 07-24 10:12:33 llm_engine.py:123] x", "x"),
            ("E0724 10:12:33.123456  1234 alloc.cc:12] x", "x"),
            ("[1,0]<stderr>: x", "x"),
            ("0: x", "x"),
            ("2024-01-01 12:00:00,123 - root - ERROR - x", "x"),
            (
                "E       torch.OutOfMemoryError: x",
                "torch.OutOfMemoryError: x",
            ),
            ("# RuntimeError: x", "RuntimeError: x"),
            ("> > x", "x"),
            (
                "1.06.520.084 E ggml_gallocr_reserve_n_impl: x",
                "ggml_gallocr_reserve_n_impl: x",
            ),
            ("0.00.035.060 I srv load_model: x", "srv load_model: x"),
            (
                "[rank2]: | Allocated memory | 1 MB |",
                "| Allocated memory | 1 MB |",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(clean(input), want, "{input}");
        }
    }

    #[test]
    fn message_text_is_not_mistaken_for_a_prefix() {
        for line in [
            "Tried to allocate 20.00 MiB",
            "10.38 GiB free; 12.58 GiB reserved",
            "RuntimeError: CUDA error: out of memory",
            "| Allocated memory | 512 B | 512 B |",
            "Error: algo",
            "(GPU 0; 11.17 GiB total capacity)",
            "123 has 1.00 GiB memory in use",
        ] {
            assert_eq!(clean(line), line);
        }
    }

    #[test]
    fn never_longer_than_the_input() {
        for s in [
            "  a  b  ",
            "\r\n\r\n",
            "x\\n\\n\\ny",
            "\u{1b}[",
            "[",
            "(pid=",
            "#",
            "é\u{0301}",
        ] {
            assert!(clean(s).len() <= s.len(), "{s:?}");
        }
    }
}
