//! The index: built once by `sitegen` from the guide's sections, shipped as JSON and
//! read back by the search island.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::text::{Analyzer, words};

/// Version of the serialised layout; the island refuses any other.
pub const FORMAT_VERSION: u32 = 1;

/// Characters of a section's text kept as its excerpt in the results list.
pub const EXCERPT_CHARS: usize = 160;

/// Weight of a word in a page title, in a section heading, and in body text.
const TITLE_WEIGHT: u32 = 8;
const HEADING_WEIGHT: u32 = 4;
const BODY_WEIGHT: u32 = 1;

/// One section of a page, as `sitegen` reads it from the Markdown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Section {
    /// Link to the section: page URL plus `#id` (no anchor for the page's opening text).
    pub url: String,
    pub page_title: String,
    /// The section's heading; empty for the text before the first heading.
    pub heading: String,
    /// Its plain text (paragraphs, lists, tables, code).
    pub text: String,
}

/// What a result shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Doc {
    #[serde(rename = "u")]
    pub url: String,
    #[serde(rename = "p")]
    pub page_title: String,
    #[serde(rename = "h")]
    pub heading: String,
    #[serde(rename = "x")]
    pub excerpt: String,
}

impl Doc {
    /// Where the result is, as the results list names it: "Página › Sección", or the
    /// page title alone for a page's opening text.
    pub fn place(&self) -> String {
        if self.heading.is_empty() {
            self.page_title.clone()
        } else {
            format!("{} › {}", self.page_title, self.heading)
        }
    }
}

/// One indexed form and the sections it occurs in, with its summed weight there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Term {
    #[serde(rename = "t")]
    pub text: String,
    /// (doc index, weight), ascending by doc.
    #[serde(rename = "d")]
    pub postings: Vec<(u32, u32)>,
}

/// The whole index. `terms` is sorted by text, so lookups and prefix ranges are
/// binary searches.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Index {
    #[serde(rename = "v")]
    pub version: u32,
    pub docs: Vec<Doc>,
    pub terms: Vec<Term>,
}

impl Index {
    /// Checks what serde cannot: the version, sorted unique terms, and postings that
    /// point at existing docs. A hand-edited or truncated file is refused, not trusted.
    pub fn validate(&self) -> Result<(), String> {
        if self.version != FORMAT_VERSION {
            return Err(format!(
                "el índice es de la versión {} y esta página espera la {FORMAT_VERSION}",
                self.version
            ));
        }
        if self.terms.windows(2).any(|w| w[0].text >= w[1].text) {
            return Err("el índice no está ordenado".into());
        }
        let docs = self.docs.len();
        if self
            .terms
            .iter()
            .flat_map(|t| &t.postings)
            .any(|&(d, _)| usize::try_from(d).map_or(true, |d| d >= docs))
        {
            return Err("el índice apunta a secciones que no existen".into());
        }
        Ok(())
    }

    /// Position of `text` in `terms`, if present.
    pub fn find(&self, text: &str) -> Option<&Term> {
        self.terms
            .binary_search_by(|t| t.text.as_str().cmp(text))
            .ok()
            .and_then(|i| self.terms.get(i))
    }

    /// Every term that starts with `prefix` (a contiguous run of the sorted list).
    pub fn with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a Term> + 'a {
        let start = self.terms.partition_point(|t| t.text.as_str() < prefix);
        self.terms
            .get(start..)
            .unwrap_or_default()
            .iter()
            .take_while(move |t| t.text.starts_with(prefix))
    }
}

/// Collects sections and produces the [`Index`].
#[derive(Debug, Default)]
pub struct IndexBuilder {
    analyzer: Analyzer,
    docs: Vec<Doc>,
    terms: BTreeMap<String, BTreeMap<u32, u32>>,
}

impl IndexBuilder {
    pub fn add(&mut self, section: &Section) {
        let Ok(doc) = u32::try_from(self.docs.len()) else {
            return;
        };
        for (field, weight) in [
            (section.page_title.as_str(), TITLE_WEIGHT),
            (section.heading.as_str(), HEADING_WEIGHT),
            (section.text.as_str(), BODY_WEIGHT),
        ] {
            for word in words(field) {
                let forms = self.analyzer.forms(&word);
                for term in forms.distinct() {
                    let entry = self.terms.entry(term.to_owned()).or_default();
                    let w = entry.entry(doc).or_insert(0);
                    *w = w.saturating_add(weight);
                }
            }
        }
        self.docs.push(Doc {
            url: section.url.clone(),
            page_title: section.page_title.clone(),
            heading: section.heading.clone(),
            excerpt: excerpt(&section.text),
        });
    }

    pub fn finish(self) -> Index {
        Index {
            version: FORMAT_VERSION,
            docs: self.docs,
            terms: self
                .terms
                .into_iter()
                .map(|(text, postings)| Term {
                    text,
                    postings: postings.into_iter().collect(),
                })
                .collect(),
        }
    }
}

/// The start of `text` with whitespace collapsed, cut at a word boundary near
/// [`EXCERPT_CHARS`], with an ellipsis when something was cut.
pub fn excerpt(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= EXCERPT_CHARS {
        return collapsed;
    }
    let cut: String = collapsed.chars().take(EXCERPT_CHARS).collect();
    let at_word = cut.rfind(' ').map_or(cut.as_str(), |i| &cut[..i]);
    format!("{}…", at_word.trim_end_matches([',', ';', ':', '.']))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(url: &str, page: &str, heading: &str, text: &str) -> Section {
        Section {
            url: url.into(),
            page_title: page.into(),
            heading: heading.into(),
            text: text.into(),
        }
    }

    #[test]
    fn builds_sorted_weighted_postings() {
        let mut b = IndexBuilder::default();
        b.add(&section("/a/", "Caché", "", "la caché guarda bloques"));
        b.add(&section("/a/#b", "Caché", "Bloques", "un bloque libre"));
        let index = b.finish();
        assert!(index.validate().is_ok());
        let cache = index.find("cache").map(|t| t.postings.clone());
        // Title (8) + body (1) in doc 0; title only in doc 1.
        assert_eq!(cache, Some(vec![(0, 9), (1, 8)]));
        // Stems and surfaces both present: "bloques" and its stem "bloqu".
        assert!(index.find("bloques").is_some());
        assert!(index.find("bloqu").is_some());
        let prefixed: Vec<&str> = index.with_prefix("bloq").map(|t| t.text.as_str()).collect();
        assert_eq!(prefixed, ["bloqu", "bloque", "bloques"]);
        assert_eq!(index.with_prefix("zzz").count(), 0);
    }

    #[test]
    fn validate_refuses_forged_indexes() {
        let mut b = IndexBuilder::default();
        b.add(&section("/", "T", "", "memoria"));
        let good = b.finish();
        let mut v = good.clone();
        v.version = 99;
        assert!(v.validate().is_err());
        let mut v = good.clone();
        v.terms.reverse();
        if v.terms.len() > 1 {
            assert!(v.validate().is_err());
        }
        let mut v = good.clone();
        if let Some(t) = v.terms.first_mut() {
            t.postings.push((7, 1));
        }
        assert!(v.validate().is_err());
    }

    #[test]
    fn round_trips_through_json() {
        let mut b = IndexBuilder::default();
        b.add(&section("/x/#y", "Página", "Sección", "texto de ejemplo"));
        let index = b.finish();
        let json = serde_json::to_string(&index).unwrap_or_default();
        assert!(json.contains("\"u\":\"/x/#y\""), "{json}");
        let back: Index = serde_json::from_str(&json).unwrap_or_default();
        assert_eq!(back, index);
    }

    #[test]
    fn places() {
        let mut b = IndexBuilder::default();
        b.add(&section("/a/", "Anatomía", "", "x"));
        b.add(&section("/a/#kv", "Anatomía", "La caché KV", "x"));
        let places: Vec<String> = b.finish().docs.iter().map(Doc::place).collect();
        assert_eq!(places, ["Anatomía", "Anatomía › La caché KV"]);
    }

    #[test]
    fn excerpts() {
        assert_eq!(excerpt("  corto\n texto "), "corto texto");
        let long = "palabra ".repeat(60);
        let e = excerpt(&long);
        assert!(e.ends_with("palabra…"), "{e}");
        assert!(e.chars().count() <= EXCERPT_CHARS + 1);
        let accented = "ñ".repeat(400);
        assert_eq!(excerpt(&accented).chars().count(), EXCERPT_CHARS + 1);
    }
}
