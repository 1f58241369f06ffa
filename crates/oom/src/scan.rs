//! Reading cleaned text by position: phrases, integers and sizes.
//!
//! The parsers never use regular expressions (the crate has no dependency for them, and
//! the browser bundle should not carry one). Instead they walk the text that
//! [`crate::clean`] produced, where every run of whitespace is a single `' '` or `'\n'`.
//! A `'\n'` marks the end of a pasted line, and a terminal that hard-wraps at 80 columns
//! cuts lines in the middle of words ("allocat" / "ed") and numbers ("1.9" / "5 GiB"),
//! so the readers here treat a `'\n'` as invisible inside a word or a number and as
//! whitespace between words.
//!
//! Every reader is bounded by an `end` index and advances by at least one byte per step,
//! so a search costs at most the length of its window times the length of the phrase.

/// The cleaned text, read as bytes. Matching is ASCII case-insensitive; other bytes only
/// ever match themselves, so a phrase can never end inside a multi-byte character.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Text<'a> {
    bytes: &'a [u8],
}

/// A phrase byte that matches one or more whitespace bytes.
const SPACE: u8 = b' ';
/// A phrase byte that matches zero or more whitespace bytes (after a full stop or a
/// colon, where pasted text sometimes lost its space).
const OPTIONAL_SPACE: u8 = b'~';

pub(crate) fn is_ws(b: u8) -> bool {
    b == b' ' || b == b'\n'
}

impl<'a> Text<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Text {
            bytes: text.as_bytes(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    /// The byte at `i`, if inside the text.
    pub(crate) fn at(&self, i: usize) -> Option<u8> {
        self.bytes.get(i).copied()
    }

    /// The byte at `i` lowercased, if `i < end`.
    fn lower_at(&self, i: usize, end: usize) -> Option<u8> {
        if i < end {
            self.at(i).map(|b| b.to_ascii_lowercase())
        } else {
            None
        }
    }

    /// Steps over a line break (a hard wrap inside a word or number).
    pub(crate) fn visible(&self, i: usize) -> usize {
        if self.at(i) == Some(b'\n') { i + 1 } else { i }
    }

    pub(crate) fn skip_ws(&self, mut i: usize, end: usize) -> usize {
        while i < end && self.at(i).is_some_and(is_ws) {
            i += 1;
        }
        i
    }

    /// Matches `phrase` (lowercase ASCII; `' '` = one or more whitespace, `'~'` = zero or
    /// more) starting exactly at `i`; returns the end of the match.
    pub(crate) fn match_at(&self, i: usize, end: usize, phrase: &[u8]) -> Option<usize> {
        let mut j = i;
        for (k, &p) in phrase.iter().enumerate() {
            match p {
                SPACE => {
                    if !(j < end && self.at(j).is_some_and(is_ws)) {
                        return None;
                    }
                    j = self.skip_ws(j, end);
                }
                OPTIONAL_SPACE => j = self.skip_ws(j, end),
                _ => {
                    // A break may hide inside a word, but not before its first letter.
                    if k > 0 {
                        j = self.visible(j);
                    }
                    if self.lower_at(j, end)? != p {
                        return None;
                    }
                    j += 1;
                }
            }
        }
        Some(j)
    }

    /// First match of `phrase` in `from..end`: `(start, end)`.
    pub(crate) fn find(&self, from: usize, end: usize, phrase: &[u8]) -> Option<(usize, usize)> {
        let first = *phrase.first()?;
        let upper = first.to_ascii_uppercase();
        let end = end.min(self.len());
        let mut i = from;
        while let Some(k) = self
            .bytes
            .get(i..end)?
            .iter()
            .position(|&b| b == first || b == upper)
        {
            let at = i + k;
            if let Some(e) = self.match_at(at, end, phrase) {
                return Some((at, e));
            }
            i = at + 1;
        }
        None
    }

    /// The first byte in `from..end` for which `pred` holds.
    pub(crate) fn position(
        &self,
        from: usize,
        end: usize,
        pred: impl Fn(u8) -> bool,
    ) -> Option<usize> {
        let end = end.min(self.len());
        let k = self.bytes.get(from..end)?.iter().position(|&b| pred(b))?;
        Some(from + k)
    }

    /// A decimal integer after optional whitespace: `(value, end)`.
    pub(crate) fn int_after(&self, i: usize, end: usize) -> Option<(u64, usize)> {
        let mut j = self.skip_ws(i, end);
        let mut value: u64 = 0;
        let mut digits = 0;
        loop {
            let v = if digits > 0 { self.visible(j) } else { j };
            match self.lower_at(v, end) {
                Some(d @ b'0'..=b'9') => {
                    value = value.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
                    digits += 1;
                    j = v + 1;
                }
                _ => break,
            }
            if digits > 20 {
                return None;
            }
        }
        (digits > 0).then_some((value, j))
    }

    /// Moves back from `i` over at most `max` bytes satisfying `pred`, not before `start`.
    pub(crate) fn back_while(
        &self,
        mut i: usize,
        start: usize,
        max: usize,
        pred: impl Fn(u8) -> bool,
    ) -> usize {
        let mut n = 0;
        while i > start && n < max {
            match self.at(i - 1) {
                Some(b) if pred(b) => {
                    i -= 1;
                    n += 1;
                }
                _ => break,
            }
        }
        i
    }

    /// Up to `max` bytes before `i`, across line breaks, lowercase and without any
    /// whitespace: "CUDA er" / "ror: " reads "cudaerror:" whether the wrap cut a word or
    /// replaced a space.
    pub(crate) fn compact_before(&self, i: usize, max: usize) -> String {
        let i = i.min(self.len());
        let bytes = self.bytes.get(i.saturating_sub(max)..i).unwrap_or_default();
        let compact: Vec<u8> = bytes
            .iter()
            .filter(|&&b| !is_ws(b))
            .map(u8::to_ascii_lowercase)
            .collect();
        // A cut multi-byte character at the start becomes U+FFFD; only ASCII is compared.
        String::from_utf8_lossy(&compact).into_owned()
    }

    /// The start of the line that holds `i`, but not before `floor`.
    pub(crate) fn line_start(&self, i: usize, floor: usize) -> usize {
        let mut j = i.min(self.len());
        while j > floor && self.at(j - 1) != Some(b'\n') {
            j -= 1;
        }
        j
    }

    /// The end of the line that holds `i` (the index of its `'\n'`, or the text's end),
    /// but not after `limit`.
    pub(crate) fn line_end(&self, i: usize, limit: usize) -> usize {
        let limit = limit.min(self.len());
        let mut j = i;
        while j < limit && self.at(j) != Some(b'\n') {
            j += 1;
        }
        j.max(i.min(limit))
    }

    /// `start..end` as text, with both ends moved inwards to character boundaries.
    pub(crate) fn slice_lossy(&self, start: usize, end: usize) -> String {
        let end = end.min(self.len());
        let mut s = start.min(end);
        while s < end && self.at(s).is_some_and(|b| (b & 0xC0) == 0x80) {
            s += 1;
        }
        let mut e = end;
        while e > s && self.at(e).is_some_and(|b| (b & 0xC0) == 0x80) {
            e -= 1;
        }
        let bytes = self.bytes.get(s..e).unwrap_or_default();
        String::from_utf8_lossy(bytes).into_owned()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn phrases_tolerate_wraps_case_and_lost_spaces() {
        let t = Text::new("CUDA Out of\nmemory. Tried to allocat\ned 20 MiB");
        assert_eq!(t.find(0, t.len(), b"out of memory"), Some((5, 18)));
        assert!(t.find(0, t.len(), b"tried to allocated").is_some());
        let t = Text::new("is free.Including");
        assert!(t.find(0, t.len(), b"is free.~including").is_some());
        assert!(t.find(0, t.len(), b"is free. including").is_none());
        // A required space never matches nothing: OutOfMemory is not "out of memory".
        let t = Text::new("torch.OutOfMemoryError");
        assert!(t.find(0, t.len(), b"out of memory").is_none());
    }

    #[test]
    fn find_respects_its_window() {
        let t = Text::new("abc out of memory");
        assert!(t.find(0, 10, b"out of memory").is_none());
        assert!(t.find(0, 99, b"out of memory").is_some());
        assert!(t.find(5, 99, b"out of memory").is_none());
    }

    #[test]
    fn integers() {
        let t = Text::new("GPU 12; Process 12\n34 has");
        assert_eq!(t.int_after(3, t.len()), Some((12, 6)));
        assert_eq!(t.int_after(15, t.len()).map(|v| v.0), Some(1234));
        assert_eq!(t.int_after(0, t.len()), None);
        let t = Text::new("99999999999999999999999");
        assert_eq!(t.int_after(0, t.len()), None);
    }

    #[test]
    fn lines_and_slices() {
        let t = Text::new("uno\ndos tres\ncuatro");
        assert_eq!(t.line_start(6, 0), 4);
        assert_eq!(t.line_start(6, 5), 5);
        assert_eq!(t.line_end(6, 99), 12);
        assert_eq!(t.line_end(6, 8), 8);
        let t = Text::new("CUDA er\nror: out");
        assert_eq!(t.compact_before(13, 99), "cudaerror:");
        let t = Text::new("añb");
        assert_eq!(t.slice_lossy(2, 4), "b");
        assert_eq!(t.slice_lossy(0, 2), "a");
        assert_eq!(t.slice_lossy(9, 99), "");
    }
}
