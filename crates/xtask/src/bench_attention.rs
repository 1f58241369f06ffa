//! Naive versus tiled attention on whatever adapter this machine has (lavapipe in CI),
//! through the release `vramlab bench attention`, so a kernel regression shows up as a
//! ratio measured in the same run rather than as a wall-clock threshold in a test.

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::{build, cmd, system};

/// Sequence lengths timed for both kernels: small enough for a CPU rasterizer (the
/// largest is about 1 GFLOP per run on one head), large enough for tiles to matter.
const SEQS: &str = "256,512,1024,2048";
/// The naive kernel's clean refusal, recorded with its bytes (no kernel runs).
const OOM_SEQ: &str = "8192";

/// The fields of a `vramlab bench attention --json` row this report keeps.
#[derive(Debug, Serialize, Deserialize)]
pub struct AttentionRow {
    pub kernel: String,
    pub seq: u32,
    pub head_dim: u32,
    pub heads: u32,
    pub causal: bool,
    pub median_ms: Option<f64>,
    pub gflops: Option<f64>,
    pub max_abs_err: Option<f64>,
    pub extra_bytes: u64,
    pub adapter: String,
    pub backend: String,
    pub timing: Option<String>,
    pub tile: Option<String>,
    pub error: Option<String>,
    pub needed_bytes: Option<u64>,
}

/// Tiled over naive for one shape: above 1 the tiled kernel is faster.
#[derive(Debug, Serialize)]
pub struct Speedup {
    pub seq: u32,
    pub causal: bool,
    pub tiled_speedup: f64,
}

#[derive(Debug, Serialize)]
pub struct AttentionBench {
    pub command: String,
    pub rows: Vec<AttentionRow>,
    pub speedups: Vec<Speedup>,
    /// Why nothing was measured (no adapter), instead of failing the whole bench.
    pub skipped: Option<String>,
}

fn sweep(bin: &std::path::Path, args: &[&str]) -> Result<Vec<AttentionRow>> {
    let mut command = std::process::Command::new(bin);
    command
        .args(["bench", "attention"])
        .args(args)
        .arg("--json");
    system::gpu_env(&mut command);
    eprintln!("\n==> {}", format!("{command:?}").replace('"', ""));
    let out = command.output().context("no se pudo ejecutar vramlab")?;
    // `bench attention` exits 1 when no run gave a time, with its rows (each saying
    // why) on stdout: those rows are the answer.
    match serde_json::from_slice(&out.stdout) {
        Ok(rows) => Ok(rows),
        Err(_) if !out.status.success() => {
            bail!("{}", String::from_utf8_lossy(&out.stderr).trim())
        }
        Err(e) => Err(e).context("vramlab bench attention no devolvió JSON válido"),
    }
}

fn speedups(rows: &[AttentionRow]) -> Vec<Speedup> {
    let time = |kernel: &str, seq: u32, causal: bool| {
        rows.iter()
            .find(|r| r.kernel == kernel && r.seq == seq && r.causal == causal)
            .and_then(|r| r.median_ms)
    };
    rows.iter()
        .filter(|r| r.kernel == "tiled")
        .filter_map(|r| {
            let naive = time("naive", r.seq, r.causal)?;
            let tiled = r.median_ms?;
            (tiled > 0.0).then(|| Speedup {
                seq: r.seq,
                causal: r.causal,
                tiled_speedup: naive / tiled,
            })
        })
        .collect()
}

pub fn run() -> Result<AttentionBench> {
    cmd::run(cmd::cargo().args(["build", "--release", "-p", "cli", "--bin", "vramlab"]))?;
    let bin = build::target_dir().join("release").join("vramlab");
    let timed = [
        "--seq",
        SEQS,
        "--head-dim",
        "64",
        "--heads",
        "1",
        "--both-masks",
        "--repeats",
        "5",
        "--warmup",
        "1",
    ];
    let command = format!("vramlab bench attention {} --json", timed.join(" "));
    let mut rows = match sweep(&bin, &timed) {
        Ok(rows) => rows,
        Err(e) => {
            eprintln!("xtask: aviso: banco de atención omitido: {e:#}");
            return Ok(AttentionBench {
                command,
                rows: Vec::new(),
                speedups: Vec::new(),
                skipped: Some(format!("{e:#}")),
            });
        }
    };
    // The refusal is a figure of the report, not a condition of it: an adapter that
    // runs the naive kernel at this size and fails some other way is noted, and the
    // report is still written.
    match sweep(
        &bin,
        &[
            "--seq",
            OOM_SEQ,
            "--head-dim",
            "64",
            "--heads",
            "1",
            "--kernels",
            "naive",
        ],
    ) {
        Ok(more) => rows.extend(more),
        Err(e) => {
            eprintln!("xtask: aviso: la atención ingenua con N = {OOM_SEQ} no dio fila: {e:#}")
        }
    }
    Ok(AttentionBench {
        command,
        speedups: speedups(&rows),
        rows,
        skipped: None,
    })
}

/// The report's Markdown section.
pub fn markdown(bench: &AttentionBench) -> String {
    let mut md = String::from("\n## Attention kernels (native wgpu, median of repeats)\n\n");
    if let Some(why) = &bench.skipped {
        md.push_str(&format!("Skipped: {why}\n"));
        return md;
    }
    if let Some(r) = bench.rows.first() {
        md.push_str(&format!(
            "Adapter: {} ({}). Command: `{}`\n\n",
            r.adapter, r.backend, bench.command
        ));
    }
    md.push_str("| kernel | N | causal | median ms | GFLOP/s | max abs err | extra bytes | note |\n| --- | ---: | --- | ---: | ---: | ---: | ---: | --- |\n");
    let num = |x: Option<f64>, p: usize| x.map_or("—".to_owned(), |v| format!("{v:.p$}"));
    for r in &bench.rows {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.kernel,
            r.seq,
            r.causal,
            num(r.median_ms, 2),
            num(r.gflops, 2),
            r.max_abs_err.map_or("—".to_owned(), |e| format!("{e:.1e}")),
            r.extra_bytes,
            r.error.as_deref().unwrap_or("")
        ));
    }
    md.push_str("\n| N | causal | tiled speed-up over naive |\n| ---: | --- | ---: |\n");
    for s in &bench.speedups {
        md.push_str(&format!(
            "| {} | {} | {:.2}× |\n",
            s.seq, s.causal, s.tiled_speedup
        ));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kernel: &str, seq: u32, causal: bool, ms: Option<f64>) -> AttentionRow {
        AttentionRow {
            kernel: kernel.into(),
            seq,
            head_dim: 64,
            heads: 1,
            causal,
            median_ms: ms,
            gflops: None,
            max_abs_err: None,
            extra_bytes: 0,
            adapter: "a".into(),
            backend: "vulkan".into(),
            timing: None,
            tile: None,
            error: None,
            needed_bytes: None,
        }
    }

    #[test]
    fn speedups_pair_kernels_by_shape_and_skip_failures() {
        let rows = [
            row("naive", 512, false, Some(6.0)),
            row("tiled", 512, false, Some(2.0)),
            row("naive", 512, true, Some(4.0)),
            row("tiled", 512, true, Some(1.0)),
            row("naive", 8192, false, None),
            row("tiled", 8192, false, Some(9.0)),
        ];
        let s = speedups(&rows);
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[0].seq, s[0].causal, s[0].tiled_speedup),
            (512, false, 3.0)
        );
        assert_eq!(
            (s[1].seq, s[1].causal, s[1].tiled_speedup),
            (512, true, 4.0)
        );
    }

    #[test]
    fn cli_rows_parse() {
        let json = r#"[{"kernel":"naive","seq":8192,"head_dim":64,"heads":1,"batch":1,
            "causal":false,"dtype":"f32","median_ms":null,"gflops":null,"max_abs_err":null,
            "extra_bytes":268435456,"adapter":"llvmpipe","backend":"vulkan","total_bytes":1,
            "timing":null,"checked_rows":null,"tile":null,"peak_fraction":null,
            "peak_gpu":null,"error":"sin memoria","needed_bytes":268435456}]"#;
        let rows: Vec<AttentionRow> = serde_json::from_str(json).unwrap();
        assert_eq!(rows[0].needed_bytes, Some(268_435_456));
        assert!(speedups(&rows).is_empty());
    }
}
