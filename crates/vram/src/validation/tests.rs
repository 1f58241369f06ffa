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
    let all: Vec<&Case> = cases.iter().collect();
    eprintln!("{:12} {:?}", "all", stats(&all));
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

/// `band::TABLE` is these cases' statistics: recomputed here, printed when they differ.
#[test]
fn bands_match_the_cases() {
    use crate::band::{self, MIN_CASES};
    use crate::settings::{RUNTIMES, TASKS};
    let cases = cases();
    let of = |runtime: Option<&str>, training: bool| -> Vec<&Case> {
        cases
            .iter()
            .filter(|c| c.runtime != "—" && c.training == training && !c.weights_only)
            .filter(|c| runtime.is_none_or(|r| c.runtime == r))
            .collect()
    };
    let tenth = |v: f64| (v * 10.0).round() / 10.0;
    let mut want = Vec::new();
    for r in RUNTIMES {
        for training in [true, false] {
            if !TASKS
                .iter()
                .any(|t| t.value.is_training() == training && r.value.runs(t.value))
            {
                continue;
            }
            let id = band::runtime_id(r.value);
            let own = of(Some(id), training);
            let (set, pooled) = if own.len() >= MIN_CASES {
                (own, false)
            } else {
                (of(None, training), true)
            };
            let s = stats(&set);
            want.push((id, training, tenth(s.p10), tenth(s.p90), s.cases, pooled));
        }
    }
    let have: Vec<_> = band::TABLE
        .iter()
        .map(|(id, t, b)| (*id, *t, b.p10, b.p90, b.cases, b.pooled))
        .collect();
    let table: String = want
        .iter()
        .map(|(id, t, p10, p90, n, pooled)| {
            format!("    (\"{id}\", {t}, band({p10:.1}, {p90:.1}, {n}, {pooled})),\n")
        })
        .collect();
    assert_eq!(have, want, "band::TABLE should be:\n{table}");
}
