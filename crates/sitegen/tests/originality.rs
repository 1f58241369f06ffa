//! The guide is written in its own words: no run of 8 consecutive words of the source
//! article (`../shared/seed/`) may appear in `content/`. Fenced code blocks are left
//! out of the comparison: they quote PyTorch's own output and APIs, which the article
//! quotes too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::path::Path;

const RUN: usize = 8;

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The text outside ``` fences.
fn prose(markdown: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn runs(words: &[String]) -> impl Iterator<Item = &[String]> {
    words.windows(RUN)
}

#[test]
fn no_eight_word_run_of_the_source_article() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let seed = root.join("../shared/seed/guia-cuda-oom-original.es.txt");
    let source = std::fs::read_to_string(&seed)
        .unwrap_or_else(|e| panic!("falta el artículo fuente {}: {e}", seed.display()));
    let source_words = words(&source);
    let banned: HashSet<&[String]> = runs(&source_words).collect();
    assert!(banned.len() > 500, "el artículo fuente parece vacío");

    let mut found = Vec::new();
    for entry in std::fs::read_dir(root.join("content/es")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let text = prose(&std::fs::read_to_string(&path).unwrap());
        let ws = words(&text);
        for run in runs(&ws) {
            if banned.contains(run) {
                found.push(format!("{}: «{}»", path.display(), run.join(" ")));
            }
        }
    }
    assert!(
        found.is_empty(),
        "frases copiadas del artículo:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_sees_a_copied_sentence() {
    // The same machinery flags a sentence lifted from a text, outside code fences only.
    let source = words("uno dos tres cuatro cinco seis siete ocho nueve");
    let banned: HashSet<&[String]> = runs(&source).collect();
    let copied = words(&prose("Dijo: uno dos tres cuatro cinco seis siete ocho."));
    assert!(runs(&copied).any(|r| banned.contains(r)));
    let fenced = words(&prose(
        "```\nuno dos tres cuatro cinco seis siete ocho\n```\n",
    ));
    assert!(!runs(&fenced).any(|r| banned.contains(r)));
}
