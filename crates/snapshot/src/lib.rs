//! Reads the files `torch.cuda.memory._dump_snapshot()` writes, and says where the
//! memory went.
//!
//! A memory snapshot is the most precise account of an OOM PyTorch offers: every
//! segment the caching allocator holds, every block in it with the traceback that
//! allocated it, and (with `_record_memory_history()`) the trace of actions before it.
//! But it is a Python pickle, and unpickling runs code; the usual advice is "drag it
//! into pytorch.org/memory_viz", which many people cannot do with a file from work.
//! This crate reads it without Python and without executing anything:
//!
//! - [`pickle`] is a small unpickler for the data-only opcodes `pickle.dump` writes
//!   for dicts, lists, strings and numbers. Anything else (GLOBAL, REDUCE…) is an
//!   error naming the opcode. It is bounded: lengths are checked against the input
//!   before allocating, and values, memo entries and nesting are capped.
//! - [`json`] reads the same structure written as JSON.
//! - Both produce a [`Document`] (an arena, so the pickle memo's sharing stays
//!   sharing); [`read`](read::read) turns it into a typed [`Snapshot`], tolerating
//!   keys old or new versions add or omit, with errors that name the path
//!   (`segments[3].blocks[0].size`).
//! - [`analysis`] computes totals, per-segment fragmentation, the largest live
//!   allocations with the user's frames first, and a summary of the trace.
//!
//! Pure: no I/O, no clocks; builds for wasm32. No input panics.

pub mod analysis;
pub mod history;
pub mod json;
pub mod model;
pub mod pickle;
mod read;
mod value;

pub use analysis::{Analysis, analyze};
pub use history::{TensorEvent, tensor_events};
pub use model::{
    Action, Block, BlockState, Frame, Frames, Segment, SegmentType, Snapshot, TraceEntry,
};
pub use value::{Document, Node, NodeId};

/// The most values a document may hold, and the most entries the reader visits.
pub const MAX_VALUES: usize = 20_000_000;

/// The most bytes the typed snapshot may take (records plus copied strings): about ten
/// times the largest snapshots PyTorch writes with its default 100,000 trace entries
/// per device, and small enough for a browser tab.
pub const MAX_SNAPSHOT_BYTES: usize = 256 << 20;

/// Why a snapshot could not be read. `Display` is one Spanish sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error("{0}")]
    Pickle(#[from] pickle::PickleError),
    #[error("{0}")]
    Json(#[from] json::JsonError),
    #[error("el archivo está vacío")]
    Empty,
    #[error(
        "no parece un snapshot de memoria: no es un pickle (empieza por el byte 0x80) ni JSON (empieza por «{{» o «[»)"
    )]
    UnknownFormat,
    #[error("{path}: se esperaba {expected} y hay {found}")]
    Type {
        path: String,
        expected: &'static str,
        found: &'static str,
    },
    #[error("{path}: el valor no cabe en {expected}")]
    Range {
        path: String,
        expected: &'static str,
    },
    #[error("falta la clave «{key}» en {path}")]
    Missing { path: String, key: &'static str },
    #[error(
        "el snapshot pasa de {cap} elementos al recorrerlo; vramlab no lee archivos tan grandes"
    )]
    Budget { cap: usize },
    #[error(
        "el snapshot ocuparía más de {} MiB al leerlo (llegó a {path}): repite los mismos datos demasiadas veces; vramlab no lee archivos así",
        cap >> 20
    )]
    Bytes { cap: usize, path: String },
}

/// Which form a file is in, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Pickle,
    Json,
}

/// The form of `bytes`: a pickle starts with PROTO (0x80) at protocol 2 or later,
/// JSON with `{` or `[` after optional whitespace.
pub fn detect(bytes: &[u8]) -> Result<Format, ReadError> {
    match bytes.first() {
        None => Err(ReadError::Empty),
        Some(0x80) | Some(b'}') | Some(b']') | Some(b'(') => Ok(Format::Pickle),
        _ => match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{') | Some(b'[') => Ok(Format::Json),
            None => Err(ReadError::Empty),
            _ => Err(ReadError::UnknownFormat),
        },
    }
}

/// Decodes a pickle or JSON file into its generic document.
pub fn decode(bytes: &[u8]) -> Result<Document, ReadError> {
    Ok(match detect(bytes)? {
        Format::Pickle => pickle::unpickle(bytes)?,
        Format::Json => json::parse(bytes, MAX_VALUES)?,
    })
}

/// Reads a snapshot file (pickle or JSON) into its typed form.
pub fn parse(bytes: &[u8]) -> Result<Snapshot, ReadError> {
    from_document(&decode(bytes)?)
}

/// Reads the typed snapshot out of a decoded document.
pub fn from_document(doc: &Document) -> Result<Snapshot, ReadError> {
    from_document_with(doc, MAX_VALUES)
}

/// Like [`from_document`], visiting at most `budget` entries (every dict entry and
/// list item counts, each time a shared one is reached again).
pub fn from_document_with(doc: &Document, budget: usize) -> Result<Snapshot, ReadError> {
    read::read(doc, budget, MAX_SNAPSHOT_BYTES)
}
