//! `vramlab bench attention`: the site's WGSL attention kernels through native wgpu
//! (Vulkan on NVIDIA/AMD, Metal, DX12, lavapipe without a GPU), swept over shapes,
//! timed, checked against the f64 reference, and compared with the card's peak.

use std::time::Instant;

use attention::plan::TilePlan;
use attention::run::{RunError, RunOptions, RunReport, Timing, run};
use attention::shape::{self, Dtype, Kernel, Shape};
use attention::{ConnectOptions, Gpu, format_bytes};
use serde::Serialize;
use vram::ByteSize;
use vram::adapter::gpu_for_adapter;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

#[derive(Debug, clap::Subcommand)]
pub enum What {
    /// Atención ingenua (matriz N×N) frente a atención por bloques (estilo FlashAttention-2).
    #[command(help_template = crate::HELP_TEMPLATE)]
    Attention(AttentionArgs),
}

#[derive(Debug, clap::Args)]
pub struct AttentionArgs {
    /// Longitudes de secuencia N, separadas por comas.
    #[arg(long, allow_hyphen_values = true, value_delimiter = ',', default_value = "256,1024,4096", value_parser = seq)]
    pub seq: Vec<u32>,
    /// Dimensiones de cabeza d (múltiplos de 16 hasta 256).
    #[arg(long, allow_hyphen_values = true, value_delimiter = ',', default_value = "64", value_parser = head_dim)]
    pub head_dim: Vec<u32>,
    /// Número de cabezas.
    #[arg(long, allow_hyphen_values = true, value_delimiter = ',', default_value = "8", value_parser = positive)]
    pub heads: Vec<u32>,
    /// Tamaño de lote.
    #[arg(long, allow_hyphen_values = true, value_delimiter = ',', default_value = "1", value_parser = positive)]
    pub batch: Vec<u32>,
    /// Máscara causal (cada consulta ve solo las claves anteriores).
    #[arg(long, conflicts_with = "both_masks")]
    pub causal: bool,
    /// Mide con y sin máscara causal.
    #[arg(long)]
    pub both_masks: bool,
    /// Kernels: naive, tiled.
    #[arg(long, allow_hyphen_values = true, value_delimiter = ',', default_value = "naive,tiled", value_parser = kernel)]
    pub kernels: Vec<Kernel>,
    /// Tipos de almacenamiento: f32, f16 (f16 acumula en f32; requiere shader-f16).
    #[arg(long, allow_hyphen_values = true, value_delimiter = ',', default_value = "f32", value_parser = dtype)]
    pub dtype: Vec<Dtype>,
    /// Repeticiones medidas (se informa la mediana).
    #[arg(long, allow_hyphen_values = true, default_value_t = 10, value_parser = repeats)]
    pub repeats: u32,
    /// Repeticiones de calentamiento, sin medir.
    #[arg(long, allow_hyphen_values = true, default_value_t = 2, value_parser = warmup)]
    pub warmup: u32,
    /// Segundos mínimos de calentamiento (se repite hasta cubrirlos; máximo 60).
    #[arg(long, allow_hyphen_values = true, default_value_t = 0.0, value_parser = warmup_seconds)]
    pub warmup_seconds: f64,
    /// Parte del nombre del adaptador que se quiere usar (también WGPU_ADAPTER_NAME).
    #[arg(long)]
    pub adapter: Option<String>,
    /// Memoria total que puede usar cada ejecución: 2GiB, 500MB…
    #[arg(long, allow_hyphen_values = true, value_parser = size)]
    pub max_memory: Option<u64>,
    /// Bloques del kernel por bloques, BRxBCxTRxTC (filas, claves, rejilla de
    /// invocaciones), p. ej. 64x32x16x8; por omisión, los mejores para el adaptador.
    #[arg(long, allow_hyphen_values = true, value_parser = tiles)]
    pub tiles: Option<String>,
    /// Diagnóstico: compila los kernels con la guarda de bucles de wgpu (mide su coste).
    #[arg(long)]
    pub loop_bounding: bool,
    /// Salida en JSON: un objeto por ejecución.
    #[arg(long)]
    pub json: bool,
    /// Deja pasar lo que el controlador gráfico escribe al abrir la GPU (en inglés).
    #[arg(long)]
    pub verbose: bool,
}

fn number(s: &str, what: &str, range: std::ops::RangeInclusive<u32>) -> Result<u32, String> {
    match s.trim().replace('_', "").parse::<u32>() {
        Ok(n) if range.contains(&n) => Ok(n),
        _ => Err(format!(
            "{what} debe ser un entero entre {} y {}",
            range.start(),
            range.end()
        )),
    }
}

fn seq(s: &str) -> Result<u32, String> {
    number(s, "la longitud de secuencia", 1..=shape::MAX_SEQ)
}

fn head_dim(s: &str) -> Result<u32, String> {
    let d = number(s, "la dimensión de cabeza", 16..=shape::MAX_HEAD_DIM)?;
    if d % shape::HEAD_DIM_STEP == 0 {
        Ok(d)
    } else {
        Err(format!(
            "la dimensión de cabeza debe ser múltiplo de {}",
            shape::HEAD_DIM_STEP
        ))
    }
}

fn positive(s: &str) -> Result<u32, String> {
    number(s, "el valor", 1..=shape::MAX_BH)
}

fn repeats(s: &str) -> Result<u32, String> {
    number(s, "las repeticiones", 1..=1000)
}

fn warmup(s: &str) -> Result<u32, String> {
    number(s, "el calentamiento", 0..=100)
}

fn warmup_seconds(s: &str) -> Result<f64, String> {
    match s.trim().replace(',', ".").parse::<f64>() {
        Ok(x) if (0.0..=60.0).contains(&x) => Ok(x),
        _ => Err("el calentamiento debe ser un número de segundos entre 0 y 60".into()),
    }
}

fn kernel(s: &str) -> Result<Kernel, String> {
    Kernel::parse(s)
}

fn dtype(s: &str) -> Result<Dtype, String> {
    Dtype::parse(s)
}

fn tiles(s: &str) -> Result<String, String> {
    // The head dimension is filled in per run; here only the spelling is checked.
    TilePlan::parse(s, 64).map(|p| p.spec())
}

fn size(s: &str) -> Result<u64, String> {
    ByteSize::parse(s).map(|b| b.0).map_err(|e| e.to_string())
}

/// One JSON row (`docs/cli-json.md`, plus the extra fields after `backend`).
#[derive(Debug, Serialize)]
struct Row {
    kernel: &'static str,
    seq: u32,
    head_dim: u32,
    heads: u32,
    batch: u32,
    causal: bool,
    dtype: &'static str,
    median_ms: Option<f64>,
    gflops: Option<f64>,
    max_abs_err: Option<f64>,
    extra_bytes: u64,
    adapter: String,
    backend: String,
    /// Fastest and 90th-percentile repetition, ms.
    min_ms: Option<f64>,
    p90_ms: Option<f64>,
    total_bytes: u64,
    timing: Option<&'static str>,
    checked_rows: Option<u32>,
    tile: Option<String>,
    /// Fraction of the card's FP32 peak (the kernels compute in f32 on SIMT cores,
    /// also with f16 storage); null when the adapter is not in the catalog.
    peak_fraction: Option<f64>,
    peak_gpu: Option<String>,
    error: Option<String>,
    needed_bytes: Option<u64>,
}

fn row(
    kernel: Kernel,
    shape: &Shape,
    dtype: Dtype,
    gpu: &Gpu,
    result: &Result<RunReport, RunError>,
) -> Row {
    let peak = gpu_for_adapter(&gpu.adapter.name);
    let ok = result.as_ref().ok();
    Row {
        kernel: kernel.name(),
        seq: shape.seq,
        head_dim: shape.head_dim,
        heads: shape.heads,
        batch: shape.batch,
        causal: shape.causal,
        dtype: dtype.name(),
        median_ms: ok.map(|r| r.median_ms),
        gflops: ok.map(|r| r.gflops),
        max_abs_err: ok.map(|r| r.max_abs_err),
        extra_bytes: shape::extra_bytes(kernel, shape, dtype),
        adapter: gpu.adapter.name.clone(),
        backend: gpu.adapter.backend.clone(),
        min_ms: ok.map(|r| r.min_ms),
        p90_ms: ok.map(|r| r.p90_ms),
        total_bytes: shape::total_bytes(kernel, shape, dtype),
        timing: ok.map(|r| match r.timing {
            Timing::Gpu => "gpu",
            Timing::Wall => "wall",
        }),
        checked_rows: ok.map(|r| r.checked_rows),
        tile: ok.and_then(|r| r.plan).map(|p| p.spec()),
        peak_fraction: ok
            .zip(peak)
            .filter(|(_, g)| g.fp32_tflops > 0.0)
            .map(|(r, g)| r.gflops / (g.fp32_tflops * 1e3)),
        peak_gpu: peak.map(|g| g.name.clone()),
        error: result.as_ref().err().map(|e| e.to_string()),
        needed_bytes: result.as_ref().err().and_then(RunError::needed_bytes),
    }
}

fn plan_runs(args: &AttentionArgs) -> Vec<(Kernel, Shape, Dtype)> {
    let masks: &[bool] = if args.both_masks {
        &[false, true]
    } else if args.causal {
        &[true]
    } else {
        &[false]
    };
    let mut runs = Vec::new();
    for &dtype in &args.dtype {
        for &d in &args.head_dim {
            for &heads in &args.heads {
                for &batch in &args.batch {
                    for &causal in masks {
                        for &n in &args.seq {
                            for &kernel in &args.kernels {
                                runs.push((kernel, Shape::new(batch, heads, n, d, causal), dtype));
                            }
                        }
                    }
                }
            }
        }
    }
    runs
}

/// Largest run count accepted, so a typo in a list cannot start a day-long sweep.
const MAX_RUNS: usize = 2000;

/// The sweep's output, and why it failed when no run gave a time (the output is still
/// printed: it says what each run needed).
pub fn run_attention(args: &AttentionArgs) -> Result<(String, Option<String>), String> {
    let runs = plan_runs(args);
    if runs.len() > MAX_RUNS {
        return Err(format!(
            "el barrido tiene {} ejecuciones; el máximo es {MAX_RUNS}",
            runs.len()
        ));
    }
    let gpu = crate::quiet::without_stderr(args.verbose, || {
        pollster::block_on(Gpu::connect_with(&ConnectOptions {
            adapter_filter: args.adapter.clone(),
        }))
    })
    .map_err(|e| e.to_string())?;
    let base = RunOptions {
        warmup: args.warmup,
        warmup_ms: args.warmup_seconds * 1e3,
        repeats: args.repeats,
        max_total: args.max_memory,
        loop_bounding: args.loop_bounding,
        ..RunOptions::default()
    };
    let start = Instant::now();
    let now = move || start.elapsed().as_secs_f64() * 1e3;
    let bar = indicatif::ProgressBar::new(runs.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut rows = Vec::with_capacity(runs.len());
    for (kernel, shape, dtype) in &runs {
        bar.set_message(format!("{} {} {shape}", kernel.name(), dtype.name()));
        let options = RunOptions {
            tiles: args
                .tiles
                .as_deref()
                .and_then(|t| TilePlan::parse(t, shape.head_dim).ok()),
            ..base.clone()
        };
        let result = pollster::block_on(run(&gpu, *kernel, shape, *dtype, &options, &now));
        // A lost device ends the sweep: every later run would fail the same way.
        let lost = matches!(
            &result,
            Err(RunError::Gpu(attention::GpuError::DeviceLost(_)))
        );
        rows.push(row(*kernel, shape, *dtype, &gpu, &result));
        bar.inc(1);
        if lost {
            break;
        }
    }
    bar.finish_and_clear();
    let failed =
        (rows.iter().all(|r| r.error.is_some()) && !rows.is_empty()).then(|| match rows.len() {
            1 => "la ejecución no dio un tiempo (no cupo o falló)".to_owned(),
            n => format!("ninguna de las {n} ejecuciones dio un tiempo (no cupieron o fallaron)"),
        });
    let text = if args.json {
        serde_json::to_string_pretty(&rows)
            .map(|s| s + "\n")
            .map_err(|e| e.to_string())?
    } else {
        render(&gpu, &rows)
    };
    Ok((text, failed))
}

fn fmt_num(x: f64, decimals: usize) -> String {
    format!("{x:.decimals$}").replace('.', ",")
}

fn render(gpu: &Gpu, rows: &[Row]) -> String {
    let mut out = format!(
        "Adaptador: {} · controlador: {}\n",
        gpu.adapter,
        if gpu.adapter.driver.is_empty() {
            "desconocido"
        } else {
            &gpu.adapter.driver
        }
    );
    out.push_str(match rows.iter().find_map(|r| r.timing) {
        Some("gpu") => {
            "Tiempos: consultas de marca de tiempo de la GPU (mediana de las repeticiones)\n"
        }
        Some(_) => {
            "Tiempos: reloj del sistema de envío a fin (el adaptador no ofrece marcas de tiempo)\n"
        }
        None => "",
    });
    if let Some(name) = rows.iter().find_map(|r| r.peak_gpu.as_deref()) {
        out.push_str(&format!(
            "Pico FP32 de referencia: {name} (catálogo de vramlab)\n"
        ));
    }
    out.push('\n');
    let header = [
        "kernel",
        "tipo",
        "N",
        "d",
        "cab.",
        "lote",
        "causal",
        "ms",
        "GFLOP/s",
        "% pico",
        "error máx",
        "memoria extra",
        "bloque",
    ];
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|s| (*s).to_owned()).collect()];
    let mut errors = Vec::new();
    for r in rows {
        let dash = || "—".to_owned();
        table.push(vec![
            r.kernel.to_owned(),
            r.dtype.to_owned(),
            r.seq.to_string(),
            r.head_dim.to_string(),
            r.heads.to_string(),
            r.batch.to_string(),
            if r.causal { "sí" } else { "no" }.to_owned(),
            r.median_ms.map_or_else(dash, |x| fmt_num(x, 3)),
            r.gflops.map_or_else(dash, |x| fmt_num(x, 1)),
            r.peak_fraction.map_or_else(dash, |x| fmt_num(100.0 * x, 1)),
            r.max_abs_err
                .map_or_else(dash, |x| format!("{x:.1e}").replace('.', ",")),
            format_bytes(r.extra_bytes),
            r.tile.clone().unwrap_or_else(|| {
                if r.error.is_some() {
                    "error".into()
                } else {
                    dash()
                }
            }),
        ]);
        if let Some(e) = &r.error {
            errors.push(format!(
                "{} {} N={} d={} cabezas={}: {e}",
                r.kernel, r.dtype, r.seq, r.head_dim, r.heads
            ));
        }
    }
    out.push_str(&crate::table::grid(&table));
    // Speed-ups of tiled over naive for the same shape.
    let mut speedups = Vec::new();
    for t in rows.iter().filter(|r| r.kernel == "tiled") {
        let same = |r: &&Row| {
            r.kernel == "naive"
                && (r.seq, r.head_dim, r.heads, r.batch, r.causal, r.dtype)
                    == (t.seq, t.head_dim, t.heads, t.batch, t.causal, t.dtype)
        };
        if let (Some(n), Some(tt)) = (
            rows.iter().find(same).and_then(|r| r.median_ms),
            t.median_ms,
        ) {
            speedups.push(format!(
                "N={} d={}: {}×",
                t.seq,
                t.head_dim,
                fmt_num(n / tt, 2)
            ));
        }
    }
    if !speedups.is_empty() {
        out.push_str(&format!(
            "\nAceleración de tiled sobre naive: {}\n",
            speedups.join(" · ")
        ));
    }
    if !errors.is_empty() {
        out.push_str("\nEjecuciones que no cupieron o fallaron:\n");
        for e in errors {
            out.push_str(&format!("  {e}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_values_are_checked_in_spanish() {
        assert_eq!(seq("4096"), Ok(4096));
        assert!(seq("0").unwrap_err().contains("entre 1"));
        assert!(head_dim("72").unwrap_err().contains("múltiplo de 16"));
        assert!(head_dim("512").unwrap_err().contains("entre 16 y 256"));
        assert!(positive("-3").unwrap_err().contains("entero"));
        assert!(kernel("cudnn").unwrap_err().contains("naive o tiled"));
    }
}
