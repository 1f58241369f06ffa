//! The search index: every page's sections (split at h2/h3 by [`crate::markdown`])
//! run through the `search` crate's analyzer, written as one JSON file whose name
//! carries its content hash, like every other asset.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};
use search::{IndexBuilder, Section};

use crate::assets::{content_hash, hashed_name};
use crate::markdown::SectionText;

/// One page's contribution: its URL (base included), title and sections.
#[derive(Debug)]
pub struct PageText<'a> {
    pub url: String,
    pub title: &'a str,
    pub sections: &'a [SectionText],
}

/// Builds the index of `pages`, writes it to `out`, and returns its URL under `base`.
pub fn write(out: &Path, base: &str, pages: &[PageText<'_>]) -> Result<String> {
    let mut builder = IndexBuilder::default();
    for page in pages {
        for section in page.sections {
            // A page that opens straight with a heading has an empty first section.
            if section.id.is_none() && section.text.trim().is_empty() {
                continue;
            }
            builder.add(&Section {
                url: match &section.id {
                    Some(id) => format!("{}#{id}", page.url),
                    None => page.url.clone(),
                },
                page_title: page.title.to_owned(),
                heading: section.heading.clone(),
                text: section.text.clone(),
            });
        }
    }
    let json =
        serde_json::to_string(&builder.finish()).context("no se pudo serializar el índice")?;
    let name = hashed_name("search-index.json", &content_hash(json.as_bytes()));
    fs::write(out.join(&name), &json)
        .with_context(|| format!("no se pudo escribir {}", out.join(&name).display()))?;
    Ok(format!("{base}{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_hashed_index_that_answers() {
        let dir = std::env::temp_dir().join(format!("sitegen-search-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap_or_default();
        let sections = vec![
            SectionText {
                id: None,
                heading: String::new(),
                text: "Introducción a la fragmentación.".into(),
            },
            SectionText {
                id: Some("kv".into()),
                heading: "Caché KV".into(),
                text: "Crece con el contexto.".into(),
            },
        ];
        let pages = [PageText {
            url: "/base/anatomia/".into(),
            title: "Anatomía",
            sections: &sections,
        }];
        let url = write(&dir, "/base/", &pages).unwrap_or_default();
        assert!(
            url.starts_with("/base/search-index.") && url.ends_with(".json"),
            "{url}"
        );
        let file = dir.join(url.trim_start_matches("/base/"));
        let json = fs::read_to_string(&file).unwrap_or_default();
        let index: search::Index = serde_json::from_str(&json).unwrap_or_default();
        assert!(index.validate().is_ok());
        let hits = search::search(&index, "cache", 5);
        assert_eq!(
            hits.first().map(|h| h.doc.url.as_str()),
            Some("/base/anatomia/#kv")
        );
        let hits = search::search(&index, "fragmentacion", 5);
        assert_eq!(
            hits.first().map(|h| h.doc.url.as_str()),
            Some("/base/anatomia/")
        );
        let _ = fs::remove_dir_all(&dir);
    }
}
