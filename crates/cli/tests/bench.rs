//! `vramlab bench attention` on the machine's adapter (lavapipe in CI): the JSON contract,
//! the clean failure of the naive kernel on its N × N buffer, and Spanish flag errors.
//! Without any adapter the GPU tests are skipped unless `VRAMLAB_REQUIRE_GPU=1`.
#![allow(clippy::unwrap_used)] // A panic here is a failed test.

mod common;
use common::vramlab;

/// Runs a bench and returns its JSON rows, or `None` when the machine has no adapter.
fn rows(args: &[&str]) -> Option<Vec<serde_json::Value>> {
    let out = vramlab(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        if std::env::var_os("VRAMLAB_REQUIRE_GPU").is_none() && stderr.contains("adaptador") {
            eprintln!("omitido: {stderr}");
            return None;
        }
        panic!("{stderr}");
    }
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

#[test]
fn json_rows_follow_the_contract() {
    let Some(rows) = rows(&[
        "bench",
        "attention",
        "--seq",
        "64,128",
        "--head-dim",
        "64",
        "--heads",
        "2",
        "--causal",
        "--repeats",
        "2",
        "--warmup",
        "0",
        "--json",
    ]) else {
        return;
    };
    assert_eq!(rows.len(), 4);
    let contract = [
        "kernel",
        "seq",
        "head_dim",
        "heads",
        "batch",
        "causal",
        "dtype",
        "median_ms",
        "gflops",
        "max_abs_err",
        "extra_bytes",
        "adapter",
        "backend",
    ];
    for r in &rows {
        for key in contract {
            assert!(r.get(key).is_some(), "{key} missing in {r}");
        }
        assert_eq!(r["causal"], true);
        assert!(r["max_abs_err"].as_f64().unwrap() <= 1e-4, "{r}");
        assert!(r["median_ms"].as_f64().unwrap() > 0.0);
        let n = r["seq"].as_u64().unwrap();
        let extra = r["extra_bytes"].as_u64().unwrap();
        match r["kernel"].as_str().unwrap() {
            "naive" => assert_eq!(extra, 2 * 4 * n * n),
            "tiled" => assert_eq!(extra, 2 * 4 * n),
            other => panic!("{other}"),
        }
        // FlashAttention convention: 4·B·H·N²·d, halved by the causal mask.
        let flops = 4.0 * 2.0 * (n * n) as f64 * 64.0 / 2.0;
        let gflops = flops / (r["median_ms"].as_f64().unwrap() * 1e-3) / 1e9;
        assert!((r["gflops"].as_f64().unwrap() - gflops).abs() < 1e-6 * gflops);
    }
}

#[test]
fn the_naive_kernel_fails_cleanly_on_its_score_buffer() {
    // A user limit makes the case identical on every adapter: 1 MiB of S at N = 512.
    let Some(rows) = rows(&[
        "bench",
        "attention",
        "--seq",
        "512",
        "--heads",
        "1",
        "--max-memory",
        "1MiB",
        "--repeats",
        "1",
        "--warmup",
        "0",
        "--json",
    ]) else {
        return;
    };
    let naive = rows.iter().find(|r| r["kernel"] == "naive").unwrap();
    let tiled = rows.iter().find(|r| r["kernel"] == "tiled").unwrap();
    assert!(
        naive["error"].as_str().unwrap().starts_with("sin memoria"),
        "{naive}"
    );
    assert_eq!(naive["needed_bytes"], 4 * 512 * 64 * 4 + 4 * 512 * 512);
    assert!(naive["median_ms"].is_null());
    assert!(tiled["error"].is_null(), "{tiled}");
    assert!(tiled["max_abs_err"].as_f64().unwrap() <= 1e-4);
}

#[test]
fn the_table_names_the_adapter_and_the_speedup() {
    let out = vramlab(&[
        "bench",
        "attention",
        "--seq",
        "64",
        "--heads",
        "1",
        "--repeats",
        "1",
        "--warmup",
        "0",
    ]);
    if !out.status.success() && std::env::var_os("VRAMLAB_REQUIRE_GPU").is_none() {
        return;
    }
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("Adaptador: "), "{text}");
    assert!(
        text.contains("GFLOP/s") && text.contains("memoria extra"),
        "{text}"
    );
    assert!(
        text.contains("Aceleración de tiled sobre naive: N=64 d=64: "),
        "{text}"
    );
}

#[test]
fn bad_flags_are_spanish_errors() {
    for (flag, value, words) in [
        ("--head-dim", "72", "múltiplo de 16"),
        ("--seq", "0", "entre 1"),
        ("--kernels", "cublas", "naive o tiled"),
        ("--dtype", "bf16", "f32 o f16"),
        ("--max-memory", "mucho", "unidad"),
    ] {
        let out = vramlab(&["bench", "attention", flag, value]);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(words), "{flag} {value}: {err}");
        assert!(out.stdout.is_empty());
    }
}

/// A sweep where no run gives a time still prints what each needed, then fails: exit 1
/// and a Spanish line, so a script does not take it for a measurement. The graphics
/// stack's own stderr lines stay out of the way.
#[test]
fn a_sweep_where_every_run_fails_exits_non_zero() {
    let out = vramlab(&[
        "bench",
        "attention",
        "--seq",
        "1024",
        "--kernels",
        "naive",
        "--max-memory",
        "64KiB",
        "--repeats",
        "1",
        "--warmup",
        "0",
        "--json",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("adaptador") && std::env::var_os("VRAMLAB_REQUIRE_GPU").is_none() {
        eprintln!("omitido: {stderr}");
        return;
    }
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("vramlab: error: la ejecución no dio un tiempo"),
        "{stderr}"
    );
    assert!(!stderr.contains("XDG_RUNTIME_DIR"), "{stderr}");
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(rows[0]["error"].is_string(), "{rows:?}");
}
