//! Finding a catalog model from what a reader types: "qwen 7b", "llama 8b",
//! "Qwen2.5-7B-Instruct", "meta-llama/Llama-3.1-8B". Words may come in any order; each
//! must begin a word of the model's name, id or Hub repository (so "7b" is not "72b"),
//! or, from four letters on, appear anywhere once separators are ignored ("llama3" in
//! "Llama-3.1"). Fine-tune suffixes ("Instruct", "chat", "it") are ignored: a
//! fine-tune has its base model's architecture and memory.

use crate::catalog::ModelPreset;

/// Words that name a fine-tune of a catalog model, not another model.
const VARIANT_WORDS: &[&str] = &["instruct", "chat", "it", "base", "hf"];

/// A parsed search. Case and separators (space, `-`, `_`, `/`, `:`) do not matter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelQuery {
    words: Vec<String>,
    hub_id: Option<String>,
}

fn is_separator(c: char) -> bool {
    c.is_whitespace() || matches!(c, '-' | '_' | '/' | ':' | ',')
}

impl ModelQuery {
    pub fn new(text: &str) -> Self {
        let text = text.trim();
        let words = text
            .split(is_separator)
            .map(str::to_ascii_lowercase)
            .filter(|w| !w.is_empty() && !VARIANT_WORDS.contains(&w.as_str()))
            .collect();
        // "org/name" with no spaces: a Hub id the importer can fetch.
        let hub_id = text
            .split_once('/')
            .filter(|(org, name)| {
                !org.is_empty()
                    && !name.is_empty()
                    && !name.contains('/')
                    && text
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
            })
            .map(|_| text.to_owned());
        Self { words, hub_id }
    }

    /// Whether the search says nothing (every model matches).
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The text as a Hub repository id ("Qwen/Qwen2.5-7B-Instruct"), when it is shaped
    /// like one.
    pub fn hub_id(&self) -> Option<&str> {
        self.hub_id.as_deref()
    }

    pub fn matches(&self, m: &ModelPreset) -> bool {
        let haystack = format!("{} {} {}", m.name, m.id, m.hf_repo).to_ascii_lowercase();
        let tokens: Vec<&str> = haystack
            .split(is_separator)
            .filter(|t| !t.is_empty())
            .collect();
        let compact: String = haystack.chars().filter(|c| !is_separator(*c)).collect();
        self.words.iter().all(|w| {
            tokens.iter().any(|t| t.starts_with(w.as_str()))
                || (w.len() >= 4 && compact.contains(w.as_str()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::models;

    fn found(query: &str) -> Vec<&'static str> {
        let q = ModelQuery::new(query);
        models()
            .iter()
            .filter(|m| q.matches(m))
            .map(|m| m.id.as_str())
            .collect()
    }

    #[test]
    fn what_readers_type_finds_the_model() {
        for (query, expected) in [
            ("qwen 7b", "qwen2.5-7b"),
            ("7b qwen", "qwen2.5-7b"),
            ("llama 8b", "llama-3.1-8b"),
            ("Qwen2.5-7B-Instruct", "qwen2.5-7b"),
            ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"),
            ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
            ("llama3.1 8b", "llama-3.1-8b"),
        ] {
            let hits = found(query);
            assert!(hits.contains(&expected), "{query}: {hits:?}");
        }
    }

    #[test]
    fn sizes_are_whole_words() {
        assert!(
            !found("qwen 7b").iter().any(|id| id.contains("72b")),
            "{:?}",
            found("qwen 7b")
        );
        assert!(
            found("llama 8b").iter().all(|id| id.contains("8b")),
            "{:?}",
            found("llama 8b")
        );
    }

    #[test]
    fn nothing_found_and_hub_ids() {
        assert!(found("zzz 9000b").is_empty());
        assert!(ModelQuery::new("  ").is_empty());
        assert_eq!(
            ModelQuery::new("mistralai/Mixtral-8x22B-v0.1").hub_id(),
            Some("mistralai/Mixtral-8x22B-v0.1")
        );
        assert_eq!(ModelQuery::new("qwen 7b").hub_id(), None);
        assert_eq!(ModelQuery::new("a/b/c").hub_id(), None);
    }
}
