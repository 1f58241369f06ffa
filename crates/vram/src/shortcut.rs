//! What the site's search box understands beyond words of the guide: a question about a
//! model, a card, a memory size, an engine or a task ("cabe en 24GB", "vllm l4",
//! "qwen 7b", "qlora llama 8b en una 3060") becomes a link to the estimator with those
//! settings. Nothing is guessed: a model is chosen only when the leftover words name one
//! (`model_search`), a card only by the words with a digit of its name ("4090", "l4",
//! "h100"), a size only as a number of GB that some catalog card has.

use crate::catalog::{self, Gpu, ModelPreset};
use crate::model_search::ModelQuery;
use crate::runtime::Task;
use crate::settings::{Field, MODEL_KEY, RUNTIMES, TASKS, entry, find};

/// The longest query read, and the most words looked at (the box's own bounds).
const MAX_CHARS: usize = 200;
const MAX_WORDS: usize = 16;

/// Words of a question that name nothing ("¿cabe llama 8b en mi gpu de 24 gb?").
const FILLER: &[&str] = &[
    "cabe", "caben", "cabria", "entra", "en", "con", "mi", "una", "un", "la", "el", "los", "las",
    "de", "del", "para", "puedo", "correr", "ejecutar", "usar", "lanzar", "que", "cuanta",
    "cuanto", "necesita", "necesito", "gpu", "vram", "memoria", "tarjeta", "modelo", "y", "a", "o",
    "si", "se", "como", "hacer",
];

/// Words of a card's name that do not tell cards apart.
const GENERIC: &[&str] = &[
    "nvidia", "geforce", "rtx", "amd", "radeon", "intel", "arc", "apple",
];

/// A link to the estimator and what it shows, in Spanish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shortcut {
    /// The estimator's query string, without `?` ("modelo=qwen2.5-7b&gpu=l4&motor=vllm").
    pub query: String,
    /// "Qwen2.5 7B en NVIDIA L4, con vLLM".
    pub label: String,
}

fn fold(c: char) -> char {
    match c {
        'á' | 'à' => 'a',
        'é' => 'e',
        'í' => 'i',
        'ó' => 'o',
        'ú' | 'ü' => 'u',
        c => c.to_ascii_lowercase(),
    }
}

/// Tokens of a card's name and id, lowercase, split at anything not a letter or digit.
fn card_tokens(g: &Gpu) -> Vec<String> {
    let mut tokens: Vec<String> = format!("{} {}", g.name, g.id)
        .to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|t| !t.is_empty() && !GENERIC.contains(t) && !t.ends_with("gb"))
        .map(str::to_owned)
        .collect();
    tokens.sort_unstable();
    tokens.dedup();
    tokens
}

/// The card the words name: at least one word with a digit must be one of its tokens;
/// the most words matched wins, then the plainest name (the base model: "3090" before
/// "3090 Ti"), then the least memory (the base configuration), then the catalog's order.
pub(crate) fn card(words: &[String]) -> Option<(&'static Gpu, Vec<usize>)> {
    let mut best: Option<(&'static Gpu, Vec<usize>, usize)> = None;
    for g in catalog::gpus() {
        let tokens = card_tokens(g);
        let used: Vec<usize> = words
            .iter()
            .enumerate()
            .filter(|(_, w)| tokens.iter().any(|t| t == *w))
            .map(|(i, _)| i)
            .collect();
        if !used
            .iter()
            .any(|&i| words[i].chars().any(|c| c.is_ascii_digit()))
        {
            continue;
        }
        let better = best.as_ref().is_none_or(|(b, u, n)| {
            (
                used.len(),
                std::cmp::Reverse(tokens.len()),
                std::cmp::Reverse(g.memory_bytes),
            ) > (
                u.len(),
                std::cmp::Reverse(*n),
                std::cmp::Reverse(b.memory_bytes),
            )
        });
        if better {
            best = Some((g, used, tokens.len()));
        }
    }
    best.map(|(g, used, _)| (g, used))
}

/// "24gb", "24 gb", "24GiB", "80g": a size in GB and the words it took.
fn size(words: &[String]) -> Option<(u64, Vec<usize>)> {
    for (i, w) in words.iter().enumerate() {
        let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let unit = &w[digits.len()..];
        let Ok(n) = digits.parse::<u64>() else {
            continue;
        };
        if matches!(unit, "gb" | "gib" | "g") {
            return Some((n, vec![i]));
        }
        if unit.is_empty() && matches!(words.get(i + 1).map(String::as_str), Some("gb" | "gib")) {
            return Some((n, vec![i, i + 1]));
        }
    }
    None
}

/// A card with `gb` of memory (rounded GiB, as cards are sold): a GeForce first, else the
/// catalog's first; never a machine whose memory is shared with the CPU.
fn card_of_size(gb: u64) -> Option<&'static Gpu> {
    let fits = |g: &&Gpu| {
        !g.unified && (g.memory_bytes as f64 / f64::from(1u32 << 30)).round() as u64 == gb
    };
    let cards: Vec<&Gpu> = catalog::gpus().iter().filter(fits).collect();
    cards
        .iter()
        .find(|g| g.name.starts_with("GeForce"))
        .or(cards.first())
        .copied()
}

/// The estimator link for `query`, when it names anything the estimator takes.
pub fn shortcut(query: &str) -> Option<Shortcut> {
    let text: String = query.chars().take(MAX_CHARS).map(fold).collect();
    let mut words: Vec<String> = text
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '¿' | '?' | '¡' | '!' | ';'))
        .filter(|w| !w.is_empty())
        .take(MAX_WORDS)
        .map(str::to_owned)
        .collect();
    let mut taken = vec![false; words.len()];
    // Engine and task, by the settings' own spellings.
    let mut runtime = None;
    let mut task = None;
    for (i, w) in words.iter().enumerate() {
        if let Some(r) = find(RUNTIMES, w) {
            runtime = Some(r);
            taken[i] = true;
        } else if let Some(t) = find(TASKS, w) {
            task = Some(t);
            taken[i] = true;
        }
    }
    // The card: by name, else by size.
    let mut gpu = None;
    let mut by_size = None;
    if let Some((g, used)) = card(&words) {
        gpu = Some(g);
        used.into_iter().for_each(|i| taken[i] = true);
    } else if let Some((gb, used)) = size(&words)
        && let Some(g) = card_of_size(gb)
    {
        gpu = Some(g);
        by_size = Some(gb);
        used.into_iter().for_each(|i| taken[i] = true);
    }
    // The model: what is left, without the filler of a question.
    for (w, t) in words.iter_mut().zip(&taken) {
        if *t || FILLER.contains(&w.as_str()) {
            w.clear();
        }
    }
    let rest = words.join(" ");
    let q = ModelQuery::new(&rest);
    let model: Option<&ModelPreset> = if q.is_empty() {
        None
    } else {
        catalog::models().iter().find(|m| q.matches(m))
    };
    if model.is_none() && gpu.is_none() && runtime.is_none() && task.is_none() {
        return None;
    }
    // An engine that does not run the task is left out (the task wins).
    let runtime = runtime.filter(|r| task.is_none_or(|t| r.runs(t)));
    let mut pairs: Vec<(&str, String)> = Vec::new();
    let mut label = Vec::new();
    if let Some(m) = model {
        pairs.push((MODEL_KEY, m.id.clone()));
        label.push(m.name.clone());
    }
    if let Some(g) = gpu {
        pairs.push((Field::Gpu.spec().key, g.id.clone()));
        label.push(match by_size {
            Some(gb) => format!("en una GPU de {gb} GB ({})", g.name),
            None => format!("en {}", g.name),
        });
    }
    if let Some(t) = task {
        pairs.push((Field::Task.spec().key, entry(TASKS, t).web.to_owned()));
        label.push(match t {
            Task::Inference => "en inferencia".to_owned(),
            t => format!("para {}", entry(TASKS, t).label),
        });
    }
    if let Some(r) = runtime {
        pairs.push((Field::Runtime.spec().key, entry(RUNTIMES, r).web.to_owned()));
        label.push(format!("con {}", entry(RUNTIMES, r).label));
    }
    let query = pairs
        .iter()
        .map(|(k, v)| {
            form_urlencoded::Serializer::new(String::new())
                .append_pair(k, v)
                .finish()
        })
        .collect::<Vec<_>>()
        .join("&");
    Some(Shortcut {
        query,
        label: label.join(" "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What readers type, and the link each gets (or none).
    #[test]
    fn questions_become_estimator_links() {
        let cases: &[(&str, Option<&str>)] = &[
            ("cabe en 24GB", Some("gpu=rtx-4090")),
            ("¿cabe en 24 gb?", Some("gpu=rtx-4090")),
            ("vllm l4", Some("gpu=l4&motor=vllm")),
            ("qwen 7b", Some("modelo=qwen2.5-7b")),
            ("gpt-oss", Some("modelo=gpt-oss-20b")),
            (
                "qlora llama 8b en una 3060",
                Some("modelo=llama-3.1-8b&gpu=rtx-3060&modo=qlora"),
            ),
            ("4070 ti", Some("gpu=rtx-4070-ti")),
            ("h100", Some("gpu=h100-sxm")),
            // A training task drops an engine that only serves.
            ("qlora vllm", Some("modo=qlora")),
            // Words of the guide, not of the estimator.
            ("fragmentación del asignador", None),
            ("expandable_segments", None),
            ("", None),
            // A size no card has.
            ("cabe en 7gb", None),
        ];
        for (q, want) in cases {
            let got = shortcut(q).map(|s| s.query);
            assert_eq!(got.as_deref(), *want, "{q}");
        }
        let s = shortcut("vllm l4 qwen 7b").unwrap();
        assert_eq!(s.label, "Qwen2.5 7B en NVIDIA L4 con vLLM (servidor)");
        let s = shortcut("cabe en 24GB").unwrap();
        assert_eq!(s.label, "en una GPU de 24 GB (GeForce RTX 4090)");
    }

    /// Any text ends quickly with an answer or none.
    #[test]
    fn hostile_queries_are_bounded() {
        let long = "4090 ".repeat(100_000);
        assert!(shortcut(&long).is_some());
        assert_eq!(shortcut(&"\u{0}¿?".repeat(10_000)), None);
        assert_eq!(shortcut("99999999999999999999999gb"), None);
    }
}
