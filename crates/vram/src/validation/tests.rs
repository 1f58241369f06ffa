use super::*;

#[test]
fn every_case_is_computed() {
    let cases = cases();
    assert!(cases.len() >= 60, "{}", cases.len());
    let mut ids: Vec<&str> = cases.iter().map(|c| c.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), cases.len(), "duplicate ids");
    for c in &cases {
        assert!(c.estimated > 0, "{}", c.id);
        eprintln!(
            "{:32} {:>12} {:>+7.1}%  {}",
            c.id,
            c.runtime,
            c.error_percent(),
            c.what
        );
    }
    for (runtime, s) in stats_by_runtime(&cases) {
        eprintln!("{runtime:12} {s:?}");
    }
}

#[test]
fn exact_cases_are_exact() {
    for c in cases() {
        if matches!(
            c.id,
            "seed-1"
                | "seed-2"
                | "zero-1"
                | "kv-1"
                | "kv-2"
                | "vllm-1"
                | "llamacpp-llama3-8b-kv"
                | "llamacpp-llama3-70b-kv"
                | "llamacpp-mixtral-kv"
        ) {
            assert_eq!(c.estimated, c.published, "{}", c.id);
        }
    }
}
