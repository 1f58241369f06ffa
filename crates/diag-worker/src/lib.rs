//! `diag-worker` is what the diagnostics pages run in a Web Worker: explaining an OOM
//! paste (and setting a vLLM log against the estimator), decoding a memory snapshot for
//! the viewer, or a trace (or snapshot with history) for the allocator lab. A reader's file can be hundreds of MiB, or forged to be slow or to expand;
//! done on the page's thread that froze or killed the tab. In a worker the page stays
//! responsive, a new file cancels the old work (the page terminates the worker), and
//! a worker that dies is a Spanish message, not a dead page.
//!
//! The crate is pure and native-testable: [`run`] answers one request from its bytes.
//! The browser glue lives in `worker-web` (the worker's bundle) and in `ui` (the page
//! side); both speak [`protocol`].

pub mod explain;
pub mod packed_trace;
pub mod plan;
pub mod protocol;
pub mod reconcile;
pub mod snapshot_view;
pub mod trace_file;

pub use packed_trace::PackedTrace;
pub use protocol::{Job, Reply, Request};
pub use snapshot_view::SnapshotView;

/// Largest file the worker decodes (a snapshot with a long history is tens of MiB).
pub const MAX_FILE_BYTES: usize = 256 << 20;

/// Answers `request` about `bytes` (the file's contents).
pub fn run(request: &Request, bytes: &[u8]) -> Reply {
    if bytes.len() > MAX_FILE_BYTES {
        return too_big(request);
    }
    let id = request.id;
    match request.job {
        // The page sends UTF-8; anything else is read as the CLI reads it.
        Job::Explain => Reply::Explain {
            id,
            result: Box::new(explain::explain(&String::from_utf8_lossy(bytes))),
        },
        Job::Snapshot => Reply::Snapshot {
            id,
            result: snapshot_view::open(&request.name, bytes),
        },
        Job::Trace => Reply::Trace {
            id,
            result: trace_file::load(&request.name, bytes).map(|t| PackedTrace::pack(&t)),
        },
    }
}

/// The answer to a request whose file is over [`MAX_FILE_BYTES`], given before any of
/// it is copied.
pub fn too_big(request: &Request) -> Reply {
    Reply::Failed {
        id: Some(request.id),
        why: format!(
            "{}: el archivo es demasiado grande (máximo {}).",
            request.name,
            vram::ByteSize(MAX_FILE_BYTES as u64).binary()
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn requests_are_answered_with_their_id_and_errors_name_the_file() {
        let ask = |job, name: &str| Request {
            id: 7,
            job,
            name: name.into(),
        };
        match run(&ask(Job::Snapshot, "x.bin"), b"hola") {
            Reply::Snapshot {
                id: 7,
                result: Err(e),
            } => assert!(e.starts_with("x.bin: "), "{e}"),
            other => panic!("{other:?}"),
        }
        let lines = "{\"op\":\"alloc\",\"id\":1,\"bytes\":1024}\n{\"op\":\"free\",\"id\":1}\n";
        match run(&ask(Job::Trace, "t.jsonl"), lines.as_bytes()) {
            Reply::Trace {
                id: 7,
                result: Ok(t),
            } => assert_eq!(t.events, 2),
            other => panic!("{other:?}"),
        }
        let big = vec![b' '; MAX_FILE_BYTES + 1];
        match run(&ask(Job::Trace, "grande.jsonl"), &big) {
            Reply::Failed { id: Some(7), why } => {
                assert!(
                    why.contains("grande.jsonl") && why.contains("256,00 MiB"),
                    "{why}"
                )
            }
            other => panic!("{other:?}"),
        }
    }
}
