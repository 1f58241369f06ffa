//! Build errors that point at the content: `content/es/x.md:12: mensaje`.

use std::fmt;
use std::path::PathBuf;

/// A problem in a content file, with the 1-based line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentError {
    pub file: PathBuf,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ContentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
    }
}

impl std::error::Error for ContentError {}

/// Maps byte offsets of a text to 1-based line numbers.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
    /// Line number of the text's first line in its file.
    first_line: usize,
}

impl LineIndex {
    pub fn new(text: &str, first_line: usize) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { starts, first_line }
    }

    /// The 1-based file line holding byte `offset`.
    pub fn line(&self, offset: usize) -> usize {
        let idx = self.starts.partition_point(|&s| s <= offset);
        self.first_line + idx.saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        let idx = LineIndex::new("a\nbb\n\nc", 5);
        assert_eq!(idx.line(0), 5);
        assert_eq!(idx.line(1), 5);
        assert_eq!(idx.line(2), 6);
        assert_eq!(idx.line(5), 7);
        assert_eq!(idx.line(6), 8);
        assert_eq!(idx.line(1000), 8);
    }
}
