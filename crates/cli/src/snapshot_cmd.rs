//! `vramlab snapshot`: a `torch.cuda.memory._dump_snapshot()` file (pickle or JSON) →
//! totals, fragmentation, the largest live allocations with their frames and a summary
//! of the recorded trace (the `snapshot` crate), as Spanish text or JSON.
//!
//! The pickle is read by a data-only unpickler: nothing in the file is executed. A file
//! that is not a snapshot, or one that uses other pickle instructions, is an error
//! (exit 2), as is one over 1 GiB.

use snapshot::analysis::{Allocation, Analysis, TraceSummary};
use snapshot::{Format, Frame, SegmentType};
use vram::ByteSize;

/// The largest file read; snapshots with a long history reach hundreds of MB.
const MAX_INPUT_BYTES: u64 = 1 << 30;
/// Segments listed in the human output (the most free bytes first).
const SEGMENTS_SHOWN: usize = 5;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Archivo de torch.cuda.memory._dump_snapshot() (pickle o JSON; «-»: la entrada
    /// estándar).
    #[arg(value_name = "ARCHIVO", allow_hyphen_values = true)]
    pub file: String,
    /// Escribe el resultado en JSON.
    #[arg(long)]
    pub json: bool,
    /// Cuántas asignaciones vivas, de mayor a menor, listar.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
}

#[derive(serde::Serialize)]
struct Output<'a> {
    format: &'static str,
    #[serde(flatten)]
    analysis: &'a Analysis,
}

pub fn run(args: &Args) -> Result<String, String> {
    let bytes = crate::input::read_capped(&args.file, MAX_INPUT_BYTES, "el snapshot")?;
    let name = crate::input::shown(&args.file);
    let format = snapshot::detect(&bytes).map_err(|e| format!("{name}: {e}"))?;
    let snap = snapshot::parse(&bytes).map_err(|e| format!("{name}: {e}"))?;
    let analysis = snapshot::analyze(&snap, args.top);
    if args.json {
        let output = Output {
            format: match format {
                Format::Pickle => "pickle",
                Format::Json => "json",
            },
            analysis: &analysis,
        };
        return serde_json::to_string_pretty(&output)
            .map(|s| s + "\n")
            .map_err(|e| e.to_string());
    }
    Ok(human(&analysis))
}

fn size(bytes: u64) -> String {
    format!(
        "{} ({})",
        ByteSize(bytes).binary(),
        ByteSize(bytes).decimal()
    )
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn percent(ratio: f64) -> String {
    numfmt::percent(ratio * 100.0, 0)
}

fn human(a: &Analysis) -> String {
    let t = &a.totals;
    let mut out = format!(
        "Snapshot de memoria de PyTorch: {}, {}\n\nTotales\n",
        count(t.segments, "segmento", "segmentos"),
        count(t.blocks, "bloque", "bloques")
    );
    let rows = [
        ("Reservado por PyTorch (segmentos)", t.reserved_bytes),
        ("Asignado a tensores", t.allocated_bytes),
        ("Activo (asignado + pendiente de liberar)", t.active_bytes),
        ("Libre dentro de los segmentos (inactivo)", t.inactive_bytes),
        ("Bloque libre más grande", t.largest_inactive_block_bytes),
    ];
    let width = rows
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0);
    for (label, bytes) in rows {
        let pad = width - label.chars().count();
        out.push_str(&format!(
            "  {label}{}  {:>12}  {:>12}\n",
            " ".repeat(pad),
            ByteSize(bytes).binary(),
            ByteSize(bytes).decimal()
        ));
    }
    if t.inactive_bytes > 0 {
        out.push_str(&format!(
            "\nFragmentación: {} de la memoria libre reservada está fuera del bloque libre más grande.\nUna petición mayor que {} no cabe sin pedir otro segmento a CUDA.\n",
            percent(t.fragmentation),
            ByteSize(t.largest_inactive_block_bytes).binary()
        ));
    }
    out.push_str(&segments(a));
    out.push_str(&allocations(&a.largest_allocations));
    for trace in &a.traces {
        out.push_str(&trace_text(trace));
    }
    if a.traces.is_empty() {
        out.push_str(
            "\nSin traza: activa torch.cuda.memory._record_memory_history() antes de tomar el snapshot para ver la historia.\n",
        );
    }
    out
}

fn segments(a: &Analysis) -> String {
    let mut list: Vec<_> = a.segments.iter().filter(|s| s.inactive_bytes > 0).collect();
    if list.is_empty() {
        return String::new();
    }
    list.sort_by(|x, y| {
        y.inactive_bytes
            .cmp(&x.inactive_bytes)
            .then(x.address.cmp(&y.address))
    });
    let mut out = format!(
        "\nSegmentos con más memoria libre ({} de {})\n",
        list.len().min(SEGMENTS_SHOWN),
        list.len()
    );
    for s in list.iter().take(SEGMENTS_SHOWN) {
        let kind = match s.segment_type {
            Some(SegmentType::Small) => "pool pequeño",
            Some(SegmentType::Large) => "pool grande",
            None => "pool desconocido",
        };
        let expandable = if s.is_expandable == Some(true) {
            ", expandible"
        } else {
            ""
        };
        out.push_str(&format!(
            "  0x{:x} ({kind}{expandable}, {}): {} libres en {}, el mayor de {}; fragmentación {}\n",
            s.address,
            ByteSize(s.total_size).binary(),
            ByteSize(s.inactive_bytes).binary(),
            count(s.inactive_blocks, "bloque", "bloques"),
            ByteSize(s.largest_inactive_block_bytes).binary(),
            percent(s.fragmentation)
        ));
    }
    out
}

fn frame_lines(frames: &[Frame], total: usize) -> String {
    if frames.is_empty() {
        return "     (sin traceback: graba con _record_memory_history())\n".into();
    }
    let mut out = String::new();
    for f in frames {
        let line = f.line.map(|l| format!(":{l}")).unwrap_or_default();
        out.push_str(&format!("     {}{line} en {}\n", f.filename, f.name));
    }
    if total > frames.len() {
        out.push_str(&format!(
            "     (+{} marcos más: de PyTorch, de C++ o más externos)\n",
            total - frames.len()
        ));
    }
    out
}

fn allocations(list: &[Allocation]) -> String {
    if list.is_empty() {
        return "\nNo hay asignaciones vivas en el snapshot.\n".into();
    }
    let mut out = if list.len() == 1 {
        "\nLa asignación viva más grande\n".to_owned()
    } else {
        format!("\nLas {} asignaciones vivas más grandes\n", list.len())
    };
    for (n, a) in list.iter().enumerate() {
        let requested = match a.requested_size {
            Some(r) if ByteSize(r).binary() != ByteSize(a.size).binary() => {
                format!(", pedido {}", ByteSize(r).binary())
            }
            _ => String::new(),
        };
        out.push_str(&format!(
            "  {}. {}{requested} en 0x{:x}\n",
            n + 1,
            size(a.size),
            a.address
        ));
        out.push_str(&frame_lines(&a.frames, a.frames_total));
    }
    out
}

fn trace_text(t: &TraceSummary) -> String {
    let mut out = format!(
        "\nTraza del dispositivo {}: {}\n",
        t.device,
        count(t.entries, "entrada", "entradas")
    );
    let counts: Vec<String> = t.actions.iter().map(|(k, v)| format!("{k} {v}")).collect();
    if !counts.is_empty() {
        out.push_str(&format!("  {}\n", counts.join(" · ")));
    }
    let at = t
        .peak_entry
        .map(|i| format!(" (entrada {i})"))
        .unwrap_or_default();
    match t.peak_allocated_bytes {
        Some(peak) => out.push_str(&format!(
            "  Pico de memoria asignada: {}{at}; al empezar la traza había {}\n",
            size(peak),
            ByteSize(t.allocated_at_start_bytes.unwrap_or(0)).binary()
        )),
        None => out.push_str(&format!(
            "  Pico de memoria asignada: {} más que al empezar la traza{at}\n",
            size(t.peak_rise_bytes)
        )),
    }
    for oom in &t.ooms {
        let asked = oom
            .size
            .map(|s| format!("se pidieron {}", size(s)))
            .unwrap_or_else(|| "petición de tamaño desconocido".into());
        let free = oom
            .device_free
            .map(|f| format!("; CUDA tenía libres {}", size(f)))
            .unwrap_or_default();
        out.push_str(&format!("  OOM (entrada {}): {asked}{free}\n", oom.index));
        out.push_str(&frame_lines(&oom.frames, oom.frames.len()));
    }
    out
}
