//! `vramlab inspect FILE`: the exact weight bytes of a `.safetensors` or `.gguf` file,
//! from its header alone. Only the header is read (a few MiB at most), never the
//! weights, so a 140 GB checkpoint answers as fast as a small one.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use vram::gguf::{self, GgufError};
use vram::safetensors::{self, TensorTotal};
use vram::{ByteSize, group_digits};

use crate::input::shown;
use crate::table::grid;

/// The most of a GGUF file read while looking for the end of its header (the
/// tokenizer's vocabulary lives there: a few MiB for 256k tokens).
const MAX_GGUF_PREFIX: u64 = 256 << 20;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Archivo .safetensors o .gguf.
    pub file: String,
}

fn read_prefix(file: &mut File, len: u64) -> Result<Vec<u8>, String> {
    let mut buf = Vec::new();
    file.seek(SeekFrom::Start(0))
        .and_then(|_| file.take(len).read_to_end(&mut buf))
        .map_err(|e| crate::input::io_why(&e))?;
    Ok(buf)
}

fn row(name: &str, t: &TensorTotal) -> Vec<String> {
    vec![
        name.to_owned(),
        group_digits(t.tensors),
        group_digits(t.params),
        ByteSize(t.bytes).binary(),
    ]
}

/// A weights file's header, read from the start of the file only.
pub enum Header {
    Gguf(gguf::GgufHeader),
    Safetensors {
        header_len: u64,
        summary: safetensors::TensorSummary,
    },
}

impl Header {
    /// Parameters and bytes of every tensor the file holds.
    pub fn total(&self) -> TensorTotal {
        match self {
            Header::Gguf(h) => h.total,
            Header::Safetensors { summary, .. } => summary.total,
        }
    }
}

/// Opens `path` and reads its header: `.gguf` files by a growing prefix, safetensors
/// by exactly 8 + N bytes. Errors are Spanish and name the file.
pub fn read_header(path: &str) -> Result<Header, String> {
    let name = shown(path);
    let mut file =
        crate::input::open(path).map_err(|why| format!("no se puede leer {name}: {why}"))?;
    let first = read_prefix(&mut file, 8).map_err(|e| format!("{name}: {e}"))?;
    if first.starts_with(b"GGUF") {
        let mut len: u64 = 1 << 20;
        loop {
            let prefix = read_prefix(&mut file, len).map_err(|e| format!("{name}: {e}"))?;
            match gguf::parse(&prefix) {
                Err(GgufError::NeedMore(_))
                    if (prefix.len() as u64) == len && len < MAX_GGUF_PREFIX =>
                {
                    len *= 4;
                }
                Err(GgufError::NeedMore(n)) => {
                    return Err(format!(
                        "{name}: la cabecera GGUF está incompleta (el archivo acaba, o pasa de {} MiB, tras {n} bytes)",
                        MAX_GGUF_PREFIX >> 20
                    ));
                }
                other => return other.map(Header::Gguf).map_err(|e| format!("{name}: {e}")),
            }
        }
    }
    if path.to_ascii_lowercase().ends_with(".gguf") {
        return Err(format!("{name}: {}", gguf::NOT_A_GGUF));
    }
    let header_len = safetensors::header_len(&first).map_err(|e| format!("{name}: {e}"))?;
    let prefix = read_prefix(&mut file, 8 + header_len).map_err(|e| format!("{name}: {e}"))?;
    let summary = safetensors::parse(&prefix).map_err(|e| format!("{name}: {e}"))?;
    Ok(Header::Safetensors {
        header_len,
        summary,
    })
}

pub fn run(args: &Args) -> Result<String, String> {
    let mut out = String::new();
    let mut rows = vec![vec![
        "tipo".to_owned(),
        "tensores".to_owned(),
        "parámetros".to_owned(),
        "memoria".to_owned(),
    ]];
    match read_header(&args.file)? {
        Header::Gguf(header) => {
            out.push_str(&format!("formato: GGUF versión {}\n", header.version));
            if let Some(arch) = header.architecture() {
                out.push_str(&format!("arquitectura: {arch}\n"));
            }
            for (field, label) in [
                ("block_count", "capas"),
                ("embedding_length", "dimensión oculta"),
                ("attention.head_count", "cabezas de atención"),
                ("attention.head_count_kv", "cabezas KV"),
                ("context_length", "contexto de entrenamiento"),
            ] {
                if let Some(v) = header.arch_int(field) {
                    out.push_str(&format!("{label}: {}\n", group_digits(v)));
                }
            }
            rows.extend(header.by_type.iter().map(|(kind, t)| row(kind, t)));
            rows.push(row("total", &header.total));
        }
        Header::Safetensors {
            header_len,
            summary,
        } => {
            out.push_str(&format!(
                "formato: safetensors (cabecera de {} bytes)\n",
                group_digits(header_len)
            ));
            rows.extend(summary.by_dtype.iter().map(|(dtype, t)| row(dtype, t)));
            rows.push(row("total", &summary.total));
        }
    }
    out.push('\n');
    out.push_str(&grid(&rows));
    Ok(out)
}
