//! `vramlab simulate`: a JSON-lines trace (or a built-in scenario) through the
//! simulated PyTorch caching allocator → peaks, OOMs, retries and fragmentation.

use crate::input::shown;

use allocator::scenarios::Scenario;
use allocator::{Config, Report, Trace, parse_trace, simulate};
use vram::ByteSize;

/// Traces larger than this are refused before parsing (5 million events fit in far less).
const MAX_TRACE_BYTES: u64 = 512 << 20;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Traza en JSON lines ({"op":"alloc","id":1,"bytes":1048576} / {"op":"free","id":1}); «-» lee la entrada estándar.
    #[arg(
        long,
        allow_hyphen_values = true,
        required_unless_present_any = ["scenario", "snapshot"],
        conflicts_with_all = ["scenario", "snapshot"]
    )]
    pub trace: Option<String>,
    /// Reproduce el historial grabado de un snapshot (torch.cuda.memory._dump_snapshot()).
    #[arg(long, allow_hyphen_values = true, conflicts_with = "scenario")]
    pub snapshot: Option<String>,
    /// GPU del historial del snapshot (por defecto, 0).
    #[arg(long, default_value_t = 0, requires = "snapshot", allow_hyphen_values = true, value_parser = device)]
    pub device: usize,
    /// Escenario incorporado en lugar de una traza: training, kv-cache o mixed.
    #[arg(long, value_parser = scenario)]
    pub scenario: Option<Scenario>,
    /// Memoria que puede reservar el proceso, sin el contexto CUDA: 24GiB, 80GB…
    #[arg(long, allow_hyphen_values = true, value_parser = size)]
    pub capacity: Option<u64>,
    /// expandable_segments:True.
    #[arg(long)]
    pub expandable_segments: bool,
    /// max_split_size_mb (al menos 20).
    #[arg(long, allow_hyphen_values = true, value_parser = max_split_mb)]
    pub max_split_size_mb: Option<u64>,
    /// garbage_collection_threshold, entre 0 y 1 (la capacidad hace de límite de set_per_process_memory_fraction).
    #[arg(long, allow_hyphen_values = true, value_parser = fraction)]
    pub garbage_collection_threshold: Option<f64>,
    /// roundup_power2_divisions (una potencia de dos).
    #[arg(long, allow_hyphen_values = true, value_parser = divisions)]
    pub roundup_power2_divisions: Option<u64>,
    /// Salida en JSON.
    #[arg(long)]
    pub json: bool,
}

fn scenario(s: &str) -> Result<Scenario, String> {
    Scenario::from_id(s.trim()).ok_or_else(|| {
        let ids: Vec<&str> = Scenario::ALL.iter().map(|s| s.id()).collect();
        format!("escenario desconocido; usa {}", ids.join(", "))
    })
}

fn device(s: &str) -> Result<usize, String> {
    s.trim()
        .parse::<usize>()
        .map_err(|_| "debe ser el número de una GPU: 0, 1, 2…".into())
}

fn size(s: &str) -> Result<u64, String> {
    ByteSize::parse(s).map(|b| b.0).map_err(|e| e.to_string())
}

fn max_split_mb(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if (20..=1 << 30).contains(&n) => Ok(n << 20),
        Ok(_) => Err("max_split_size_mb debe estar entre 20 y 1073741824".into()),
        Err(_) => Err("max_split_size_mb debe ser un número entero de MiB, como 128".into()),
    }
}

fn fraction(s: &str) -> Result<f64, String> {
    match s.trim().replace(',', ".").parse::<f64>() {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err("debe ser un número entre 0 y 1, sin incluirlos, como 0.6".into()),
    }
}

/// Any power of two PyTorch takes (it reads a `size_t`).
fn divisions(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if n.is_power_of_two() => Ok(n),
        Ok(_) => Err("debe ser una potencia de dos, como 4".into()),
        Err(_) => Err("debe ser un número entero: una potencia de dos, como 4".into()),
    }
}

pub fn run(args: &Args) -> Result<String, String> {
    // Checked before any input is read: a missing flag must not wait for a large trace.
    let capacity = args
        .capacity
        .or(args.scenario.map(|s| s.demo_capacity()))
        .ok_or(
            "falta --capacity: la memoria que puede reservar el proceso sin el contexto CUDA, como 24GiB",
        )?;
    let mut skipped_frees = 0;
    let (trace, source) = match (&args.trace, args.scenario) {
        (_, Some(s)) => (s.trace(), Source::Scenario(s)),
        (None, None) if args.snapshot.is_some() => {
            let path = args.snapshot.clone().unwrap_or_default();
            let bytes = crate::input::read_capped(&path, 1 << 30, "el snapshot")?;
            let snap = snapshot::parse(&bytes).map_err(|e| format!("{}: {e}", shown(&path)))?;
            let (trace, skipped) = crate::snapshot_trace::from_snapshot(&snap, args.device)?;
            skipped_frees = skipped;
            (trace, Source::Trace(path))
        }
        (Some(path), None) => (
            parse_trace(&read(path)?).map_err(|e| format!("{}: {e}", shown(path)))?,
            Source::Trace(path.clone()),
        ),
        (None, None) => return Err("falta --trace FICHERO (o --scenario NOMBRE)".into()),
    };
    let config = Config {
        capacity,
        expandable_segments: args.expandable_segments,
        max_split_size: args.max_split_size_mb,
        garbage_collection_threshold: args.garbage_collection_threshold,
        roundup_power2_divisions: args.roundup_power2_divisions,
    };
    let mut report = simulate(&trace, &config).map_err(|e| e.to_string())?;
    if skipped_frees > 0 {
        report.warnings_total += 1;
        report.warnings.push(format!(
            "{skipped_frees} liberaciones del historial eran de bloques reservados antes de que empezara la grabación: esos bloques no se simulan, así que la capacidad debe dejarles sitio"
        ));
    }
    if args.json {
        let mut value = serde_json::to_value(&report).map_err(|e| e.to_string())?;
        value["source"] = match &source {
            Source::Scenario(s) => serde_json::json!({ "scenario": s.id() }),
            Source::Trace(path) => serde_json::json!({ "trace": path }),
        };
        return serde_json::to_string_pretty(&value)
            .map(|s| s + "\n")
            .map_err(|e| e.to_string());
    }
    Ok(human(&report, &trace, &source, &config))
}

enum Source {
    Scenario(Scenario),
    Trace(String),
}

/// The trace text from a file or stdin.
fn read(path: &str) -> Result<String, String> {
    let bytes = crate::input::read_capped(path, MAX_TRACE_BYTES, "la traza")?;
    String::from_utf8(bytes).map_err(|_| format!("la traza {} no es texto UTF-8", shown(path)))
}

fn human(report: &Report, trace: &Trace, source: &Source, config: &Config) -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    line("Simulación del asignador de memoria de PyTorch (CUDACachingAllocator)".into());
    match source {
        Source::Scenario(s) => {
            line(format!("Escenario «{}»: {}", s.id(), s.title()));
            line(format!("  {}", s.description()));
        }
        Source::Trace(path) => line(format!("Traza: {}", shown(path))),
    }
    line(format!(
        "Eventos: {}",
        vram::group_digits(trace.events.len() as u64)
    ));
    line(format!("Capacidad: {}", ByteSize(config.capacity)));
    line(format!("Opciones: {}", options(config)));
    line(String::new());
    line(format!(
        "Pico asignado:  {}",
        ByteSize(report.peak_allocated_bytes)
    ));
    line(format!(
        "Pico reservado: {}",
        ByteSize(report.peak_reserved_bytes)
    ));
    line(format!("OOM: {}", report.ooms));
    if let Some(first) = report.events.iter().find_map(|e| match e {
        allocator::Event::Oom { line, message, .. } => Some((line, message)),
        allocator::Event::Point { .. } => None,
    }) {
        line(format!("  Primer OOM, en la línea {}:", first.0));
        line(format!("  {}", first.1));
    }
    line(format!(
        "Reintentos de cudaMalloc tras vaciar la caché: {}",
        report.alloc_retries
    ));
    let f = &report.fragmentation;
    let when = match f.at {
        allocator::Moment::FirstOom => "al fallar la primera reserva".to_string(),
        allocator::Moment::PeakReserved => {
            format!("en el pico de memoria reservada (evento {})", f.event + 1)
        }
    };
    let frag = &f.fragmentation;
    line(format!("Fragmentación, {when}:"));
    line(format!(
        "  reservado sin asignar: {}",
        ByteSize(frag.reserved_unallocated_bytes)
    ));
    line(format!(
        "  bloque libre más grande: {}",
        ByteSize(frag.largest_free_block_bytes)
    ));
    line(format!(
        "  índice de fragmentación: {} (1 − bloque libre más grande / total libre)",
        format!("{:.2}", frag.ratio).replace('.', ",")
    ));
    if report.ooms > 0
        && !config.expandable_segments
        && frag.reserved_unallocated_bytes >= report.peak_reserved_bytes / 20
    {
        line(
            "Consejo: hay mucha memoria reservada sin asignar; prueba --expandable-segments."
                .into(),
        );
    }
    if report.warnings_total > 0 {
        line(format!("Avisos ({}):", report.warnings_total));
        for w in &report.warnings {
            line(format!("  {w}"));
        }
    }
    out
}

fn options(config: &Config) -> String {
    let mut opts = Vec::new();
    if config.expandable_segments {
        opts.push("expandable_segments:True".to_string());
    }
    if let Some(m) = config.max_split_size {
        opts.push(format!("max_split_size_mb:{}", m >> 20));
    }
    if let Some(t) = config.garbage_collection_threshold {
        opts.push(format!("garbage_collection_threshold:{t}"));
    }
    if let Some(d) = config.roundup_power2_divisions {
        opts.push(format!("roundup_power2_divisions:{d}"));
    }
    if opts.is_empty() {
        "las de PyTorch por defecto".into()
    } else {
        opts.join(",")
    }
}
