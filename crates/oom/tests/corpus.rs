//! The acceptance corpus: realistic pastes written from PyTorch's, CUDA's and vLLM's
//! format strings, each with the fields it must decode to.
//!
//! `tests/corpus/NAME.txt` (OOM messages) and `tests/summaries/NAME.txt`
//! (`memory_summary()` tables) sit next to `NAME.expected.json`. Every key of the
//! expected object must equal the same key of `explain`'s JSON (`null` included; in a
//! nested object, the keys it names), except
//! these, which look elsewhere:
//!
//! - `diagnosis_ids`: the ids of the ranked causes, in order, exactly;
//! - `messages_count` / `messages_kinds`: the other messages found in the paste;
//! - `rows`, `abbreviated`, `row_checks`: the memory_summary table
//!   (`row_checks` = `{metric: {cell: bytes or count}}` on the "all" cells).
//!
//! The expected byte counts were computed independently of this crate (exact decimal
//! arithmetic: "1.95 GiB" = round(1.95 · 2^30)).
#![allow(clippy::unwrap_used, clippy::expect_used)] // A panic here is a failed test.

use serde_json::Value;
use std::path::{Path, PathBuf};

fn cases(dir: &str) -> Vec<(String, PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(dir);
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name()?.to_str()?.strip_suffix(".txt")?.to_owned();
            Some((name, path))
        })
        .collect();
    out.sort();
    out
}

fn check(name: &str, text_path: &Path, failures: &mut Vec<String>) {
    let bytes = std::fs::read(text_path).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let expected_path = text_path.with_file_name(format!("{name}.expected.json"));
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(&expected_path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", expected_path.display()));
    let explanation = oom::explain(&text);
    let actual = serde_json::to_value(&explanation).unwrap();
    let mut fail = |what: String| failures.push(format!("{name}: {what}"));

    for (key, want) in expected.as_object().unwrap() {
        let got = match key.as_str() {
            "diagnosis_ids" => Value::from(
                explanation
                    .diagnosis
                    .iter()
                    .map(|c| serde_json::to_value(c.id).unwrap())
                    .collect::<Vec<_>>(),
            ),
            "messages_count" => Value::from(explanation.messages.len()),
            "messages_kinds" => Value::from(
                explanation
                    .messages
                    .iter()
                    .map(|m| serde_json::to_value(m.kind).unwrap())
                    .collect::<Vec<_>>(),
            ),
            "rows" => actual["summary"]["rows"]
                .as_array()
                .map_or(Value::Null, |r| r.len().into()),
            "abbreviated" => actual["summary"]["abbreviated"].clone(),
            "row_checks" => {
                for (metric, cells) in want.as_object().unwrap() {
                    let row = actual["summary"]["rows"]
                        .as_array()
                        .and_then(|rows| rows.iter().find(|r| r["metric"] == metric.as_str()));
                    for (cell, value) in cells.as_object().unwrap() {
                        let got = row.map_or(&Value::Null, |r| &r["all"][cell]);
                        if got != value {
                            fail(format!("{metric}.{cell}: esperaba {value}, salió {got}"));
                        }
                    }
                }
                continue;
            }
            _ => actual.get(key).cloned().unwrap_or(Value::Null),
        };
        if !agrees(want, &got) {
            fail(format!("{key}: esperaba {want}, salió {got}"));
        }
    }

    // Every cause is complete, in Spanish, and links to a page of the site.
    for cause in &explanation.diagnosis {
        if cause.title.is_empty() || cause.explanation.is_empty() || cause.fix.is_empty() {
            fail(format!("causa incompleta {:?}", cause.id));
        }
        if !cause.guide.starts_with('/') {
            fail(format!("guía sin ruta: {}", cause.guide));
        }
    }
    if explanation.diagnosis.is_empty() {
        fail("sin diagnóstico".into());
    }
}

/// `got` says what `want` says: equal values, or, for objects, every key of `want`
/// agreeing (so a field added to a nested object does not rewrite every case).
fn agrees(want: &Value, got: &Value) -> bool {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => w
            .iter()
            .all(|(k, v)| agrees(v, g.get(k).unwrap_or(&Value::Null))),
        _ => want == got,
    }
}

fn run(dir: &str, at_least: usize) {
    let cases = cases(dir);
    assert!(cases.len() >= at_least, "{dir}: solo {} casos", cases.len());
    let mut failures = Vec::new();
    for (name, path) in &cases {
        check(name, path, &mut failures);
    }
    assert!(
        failures.is_empty(),
        "{} fallos:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn oom_messages() {
    run("corpus", 40);
}

#[test]
fn memory_summaries() {
    run("summaries", 4);
}

#[test]
fn explanations_cite_the_decoded_numbers() {
    let e = oom::explain(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/v21_fragmentation.txt"),
        )
        .unwrap(),
    );
    let first = &e.diagnosis[0];
    assert!(
        first.explanation.contains("3,24 GiB"),
        "{}",
        first.explanation
    );
    assert!(
        first.explanation.contains("764,00 MiB"),
        "{}",
        first.explanation
    );
    assert!(
        first
            .fix
            .contains("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")
    );
    assert_eq!(first.guide, "/memoria-reservada/#fragmentacion");
    assert!(e.notes.iter().any(|n| n.contains("redondeado")));
}

#[test]
fn old_releases_get_old_fixes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let e = oom::explain(&std::fs::read_to_string(dir.join("v14_fragmentation.txt")).unwrap());
    assert!(e.diagnosis[0].fix.contains("max_split_size_mb"));
    let e = oom::explain(&std::fs::read_to_string(dir.join("v14_hip.txt")).unwrap());
    assert!(e.diagnosis[0].fix.contains("PYTORCH_HIP_ALLOC_CONF"));
}
