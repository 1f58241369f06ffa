//! Answering a query: every meaningful word must match (AND), each by its folded
//! form, its stem, or as the prefix of an indexed word (so results appear while the
//! reader is still typing). Scores add up the matched weights, scaled by how rare
//! each word is across the guide.

use std::collections::BTreeMap;

use crate::index::{Doc, Index};
use crate::text::{Analyzer, fold, is_stop_word, words};

/// Longer queries are cut here: nobody types more, and a paste cannot stall the page.
pub const MAX_QUERY_CHARS: usize = 200;
/// At most this many words of a query are searched.
pub const MAX_TERMS: usize = 8;
/// Prefix matching starts at this many characters ("me" would match half the guide).
pub const MIN_PREFIX_CHARS: usize = 3;

/// One result.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit<'a> {
    pub doc: &'a Doc,
    pub score: f64,
}

/// The best `limit` sections for `query`, best first (ties keep the guide's order).
pub fn search<'a>(index: &'a Index, query: &str, limit: usize) -> Vec<Hit<'a>> {
    let query: String = query.chars().take(MAX_QUERY_CHARS).collect();
    let all: Vec<String> = words(&query).collect();
    let meaningful: Vec<&String> = all.iter().filter(|w| !is_stop_word(&fold(w))).collect();
    let terms: Vec<&String> = if meaningful.is_empty() {
        all.iter().collect()
    } else {
        meaningful
    };
    if terms.is_empty() || limit == 0 {
        return Vec::new();
    }
    let analyzer = Analyzer::default();
    let n_docs = index.docs.len() as f64;
    let mut total: Option<BTreeMap<u32, f64>> = None;
    for word in terms.into_iter().take(MAX_TERMS) {
        let scores = term_scores(index, &analyzer, word, n_docs);
        total = Some(match total {
            None => scores,
            // AND: a section stays only if it matches this word too.
            Some(prev) => prev
                .into_iter()
                .filter_map(|(d, s)| scores.get(&d).map(|t| (d, s + t)))
                .collect(),
        });
        if total.as_ref().is_some_and(BTreeMap::is_empty) {
            return Vec::new();
        }
    }
    let mut hits: Vec<(u32, f64)> = total.unwrap_or_default().into_iter().collect();
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    hits.into_iter()
        .filter_map(|(d, score)| {
            let doc = index.docs.get(usize::try_from(d).ok()?)?;
            Some(Hit { doc, score })
        })
        .take(limit)
        .collect()
}

/// Score of every section that matches one query word.
fn term_scores(index: &Index, analyzer: &Analyzer, word: &str, n_docs: f64) -> BTreeMap<u32, f64> {
    let forms = analyzer.forms(word);
    let mut scores: BTreeMap<u32, f64> = BTreeMap::new();
    let mut credit = |postings: &[(u32, u32)], factor: f64| {
        let idf = (1.0 + n_docs / postings.len().max(1) as f64).ln();
        for &(doc, weight) in postings {
            let s = f64::from(weight) * idf * factor;
            let slot = scores.entry(doc).or_insert(0.0);
            // A section matched by several forms of the word counts its best one.
            if s > *slot {
                *slot = s;
            }
        }
    };
    let mut exact = Vec::new();
    for form in forms.distinct() {
        if let Some(term) = index.find(form) {
            credit(&term.postings, 1.0);
            exact.push(term.text.as_str());
        }
    }
    if forms.surface.chars().count() >= MIN_PREFIX_CHARS {
        for term in index.with_prefix(&forms.surface) {
            if !exact.contains(&term.text.as_str()) {
                credit(&term.postings, 0.5);
            }
        }
    }
    scores
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{IndexBuilder, Section};
    use proptest::prelude::*;

    fn guide() -> Index {
        let mut b = IndexBuilder::default();
        for (url, page, heading, text) in [
            (
                "/anatomia/",
                "Anatomía de la VRAM",
                "",
                "Pesos, gradientes y estados del optimizador.",
            ),
            (
                "/anatomia/#kv",
                "Anatomía de la VRAM",
                "La caché KV",
                "Crece con el contexto y el lote.",
            ),
            (
                "/asignada/",
                "Memoria asignada y reservada",
                "",
                "El asignador de PyTorch guarda bloques.",
            ),
            (
                "/asignada/#frag",
                "Memoria asignada y reservada",
                "Fragmentación",
                "Huecos libres que no sirven: expandable_segments ayuda.",
            ),
            (
                "/flash/",
                "FlashAttention",
                "",
                "La atención por bloques no materializa la matriz.",
            ),
        ] {
            b.add(&Section {
                url: url.into(),
                page_title: page.into(),
                heading: heading.into(),
                text: text.into(),
            });
        }
        b.finish()
    }

    fn urls(index: &Index, q: &str) -> Vec<String> {
        search(index, q, 10)
            .into_iter()
            .map(|h| h.doc.url.clone())
            .collect()
    }

    #[test]
    fn data_driven_queries() {
        let index = guide();
        // (query, the URL that must come first)
        for (q, first) in [
            ("fragmentación", "/asignada/#frag"),
            ("fragmentacion", "/asignada/#frag"),
            ("FRAGMENTACIÓN", "/asignada/#frag"),
            ("caché", "/anatomia/#kv"),
            ("cache", "/anatomia/#kv"),
            ("atencion", "/flash/"),
            ("atención por bloques", "/flash/"),
            ("expandable_segments", "/asignada/#frag"),
            ("memoria reservada", "/asignada/"),
            ("frag", "/asignada/#frag"),
            ("optimizadores", "/anatomia/"),
        ] {
            let got = urls(&index, q);
            assert_eq!(got.first().map(String::as_str), Some(first), "{q}: {got:?}");
        }
    }

    #[test]
    fn accented_and_plain_words_meet() {
        let a = Analyzer::default();
        // (word as written in the guide, word as a reader may type it).
        for (written, typed) in [
            ("asignación", "asignacion"),
            ("asignaciones", "asignacion"),
            ("asignación", "asignaciones"),
            ("fragmentación", "fragmentacion"),
            ("caché", "cache"),
            ("caché", "cachés"),
            ("caché", "caches"),
            ("cachés", "caché"),
            ("atención", "atencion"),
            ("cuantización", "cuantizacion"),
            ("memorias", "memoria"),
            ("reservada", "reservado"),
            ("gradientes", "gradiente"),
            ("ñandú", "nandu"),
        ] {
            let mut b = IndexBuilder::default();
            b.add(&Section {
                url: "/p/".into(),
                page_title: "P".into(),
                heading: String::new(),
                text: format!("texto con {written} dentro"),
            });
            let index = b.finish();
            assert_eq!(
                urls(&index, typed),
                ["/p/"],
                "{written} / {typed}: {:?}",
                a.forms(typed)
            );
        }
    }

    #[test]
    fn and_semantics_and_empty_queries() {
        let index = guide();
        assert!(urls(&index, "caché fragmentación").is_empty());
        assert!(urls(&index, "").is_empty());
        assert!(urls(&index, "   ¿? ").is_empty());
        assert!(urls(&index, "inexistente").is_empty());
        // Two letters are not a prefix search, but an exact word still matches.
        assert!(urls(&index, "kv").contains(&"/anatomia/#kv".to_owned()));
        assert!(urls(&index, "fr").is_empty());
        // Only stop words: searched anyway rather than ignored.
        assert!(!urls(&index, "la").is_empty());
        assert_eq!(search(&index, "caché", 0).len(), 0);
    }

    #[test]
    fn titles_outrank_body_text() {
        let index = guide();
        let got = urls(&index, "bloques");
        // "bloques" is in the body of /asignada/ and /flash/; neither title has it,
        // so both appear, the guide's order breaking the tie only when equal.
        assert!(
            got.contains(&"/asignada/".to_owned()) && got.contains(&"/flash/".to_owned()),
            "{got:?}"
        );
        let got = urls(&index, "memoria");
        assert_eq!(
            got.first().map(String::as_str),
            Some("/asignada/"),
            "{got:?}"
        );
    }

    proptest! {
        #[test]
        fn never_panics_and_respects_the_limit(q in ".{0,400}", limit in 0usize..20) {
            let index = guide();
            let hits = search(&index, &q, limit);
            prop_assert!(hits.len() <= limit);
            for w in hits.windows(2) {
                prop_assert!(w[0].score >= w[1].score);
            }
        }

        #[test]
        fn any_indexed_word_finds_its_section(word in "[a-zñáéíóú]{3,12}") {
            let mut b = IndexBuilder::default();
            b.add(&Section { url: "/p/".into(), page_title: "P".into(), heading: String::new(), text: format!("antes {word} después") });
            let index = b.finish();
            prop_assert!(index.validate().is_ok());
            let plain = fold(&word);
            if !is_stop_word(&plain) {
                prop_assert_eq!(urls(&index, &word), vec!["/p/".to_owned()]);
                prop_assert_eq!(urls(&index, &plain), vec!["/p/".to_owned()]);
            }
        }
    }
}
