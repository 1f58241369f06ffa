//! The messages between a page and its diagnostics worker, as JSON text.
//!
//! The page posts `[request, bytes]`: a [`Request`] as JSON and the file's contents as
//! an `ArrayBuffer`, transferred (not copied) to the worker. The worker posts [`Reply`]
//! values as JSON: [`Reply::Ready`] once its module has started, then one reply per
//! request, carrying the request's id so a page that moved on can drop stale answers.

use allocator::Trace;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::SnapshotView;
use crate::explain::ExplainView;

/// What to do with the bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Job {
    /// Explain an OOM paste (UTF-8 text).
    Explain,
    /// Decode and analyse a memory snapshot for the viewer.
    Snapshot,
    /// Read an allocator trace, or a snapshot's recorded history, for the lab.
    Trace,
}

/// One request; the file's bytes travel beside it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    pub id: u32,
    pub job: Job,
    /// The file's name, for messages (the page cuts it to a readable length).
    pub name: String,
}

/// What the worker says.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reply {
    /// The module is loaded and listening: requests may be posted.
    Ready,
    Explain {
        id: u32,
        result: Box<ExplainView>,
    },
    Snapshot {
        id: u32,
        result: Result<SnapshotView, String>,
    },
    Trace {
        id: u32,
        /// Packed as flat numbers (`packed_trace`): a 300,000-event trace read as
        /// objects kept the page's thread busy for 660 ms.
        #[serde(with = "packed_trace")]
        result: Result<Trace, String>,
    },
    /// The request could not be answered at all (a malformed message, a bundle that
    /// failed to load); Spanish.
    Failed {
        id: Option<u32>,
        why: String,
    },
}

/// What the worker says, as a page that only explains pastes reads it:
/// the same JSON as [`Reply`] without the snapshot's and the trace's types, whose
/// decoders would weigh on that page's bundle (the home page's). Replies it never
/// asks for are `Other`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LightReply {
    Ready,
    Explain {
        id: u32,
        result: Box<ExplainView>,
    },
    Failed {
        id: Option<u32>,
        why: String,
    },
    #[serde(other)]
    Other,
}

/// A reply as a page reads it ([`Reply`] or [`LightReply`]): what the page's side of
/// the worker needs to know about any of them.
pub trait WorkerReply: DeserializeOwned + 'static {
    /// The module is loaded and listening.
    fn is_ready(&self) -> bool;
    /// The request this answers, if any.
    fn request(&self) -> Option<u32>;
    /// A failure of the whole worker, not of one request.
    fn is_fatal(&self) -> bool;
    /// The Spanish failure `why`, for request `id`.
    fn failed(id: Option<u32>, why: String) -> Self;
}

/// Reads a reply the worker posted; text that is none is a failure of the worker.
pub fn decode<R: WorkerReply>(text: &str) -> R {
    serde_json::from_str(text).unwrap_or_else(|e| {
        R::failed(
            None,
            format!("El trabajador respondió algo que no se entiende: {e}."),
        )
    })
}

impl WorkerReply for Reply {
    fn is_ready(&self) -> bool {
        *self == Reply::Ready
    }
    fn request(&self) -> Option<u32> {
        self.id()
    }
    fn is_fatal(&self) -> bool {
        matches!(self, Reply::Failed { id: None, .. })
    }
    fn failed(id: Option<u32>, why: String) -> Self {
        Reply::Failed { id, why }
    }
}

impl WorkerReply for LightReply {
    fn is_ready(&self) -> bool {
        *self == LightReply::Ready
    }
    fn request(&self) -> Option<u32> {
        match self {
            LightReply::Explain { id, .. } => Some(*id),
            LightReply::Failed { id, .. } => *id,
            LightReply::Ready | LightReply::Other => None,
        }
    }
    fn is_fatal(&self) -> bool {
        matches!(self, LightReply::Failed { id: None, .. })
    }
    fn failed(id: Option<u32>, why: String) -> Self {
        LightReply::Failed { id, why }
    }
}

/// A trace as four numbers per event (`line`, 0 for alloc or 1 for free, `id`, `bytes`)
/// in one JSON array, beside its warnings: serde reads a flat array of integers in a
/// tight loop, where an array of tagged objects costs a visitor per field. What the
/// page reads is checked again: a wrong tag or a cut array is an error, not a panic.
mod packed_trace {
    use allocator::{Trace, TraceEvent, TraceOp};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Packed {
        ops: Vec<u64>,
        warnings: Vec<String>,
        warnings_total: u64,
    }

    #[derive(Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Wire {
        Ok(Packed),
        Err(String),
    }

    pub fn serialize<S: Serializer>(
        result: &Result<Trace, String>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match result {
            Ok(t) => {
                let mut ops = Vec::with_capacity(t.events.len().saturating_mul(4));
                for e in &t.events {
                    let (tag, id, bytes) = match e.op {
                        TraceOp::Alloc { id, bytes } => (0, id, bytes),
                        TraceOp::Free { id } => (1, id, 0),
                    };
                    ops.extend([e.line, tag, id, bytes]);
                }
                Wire::Ok(Packed {
                    ops,
                    warnings: t.warnings.clone(),
                    warnings_total: t.warnings_total,
                })
                .serialize(s)
            }
            Err(e) => Wire::Err(e.clone()).serialize(s),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Result<Trace, String>, D::Error> {
        Ok(match Wire::deserialize(d)? {
            Wire::Err(e) => Err(e),
            Wire::Ok(p) => unpack(p),
        })
    }

    fn unpack(p: Packed) -> Result<Trace, String> {
        let bad = || "El trabajador envió una traza incompleta.".to_owned();
        if !p.ops.len().is_multiple_of(4) {
            return Err(bad());
        }
        let events = p
            .ops
            .chunks_exact(4)
            .map(|c| match c {
                [line, 0, id, bytes] => Ok(TraceEvent {
                    line: *line,
                    op: TraceOp::Alloc {
                        id: *id,
                        bytes: *bytes,
                    },
                }),
                [line, 1, id, _] => Ok(TraceEvent {
                    line: *line,
                    op: TraceOp::Free { id: *id },
                }),
                _ => Err(bad()),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Trace {
            events,
            warnings: p.warnings,
            warnings_total: p.warnings_total,
        })
    }
}

impl Request {
    pub fn to_json(&self) -> String {
        // A struct of strings and integers always serialises.
        serde_json::to_string(self).unwrap_or_default()
    }

    pub fn from_json(text: &str) -> Result<Self, String> {
        serde_json::from_str(text)
            .map_err(|e| format!("El trabajador recibió un mensaje que no entiende: {e}."))
    }
}

impl Reply {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            // Only a non-finite float could fail; say so rather than post nothing.
            let failed = Reply::Failed {
                id: None,
                why: format!("El trabajador no pudo enviar su resultado: {e}."),
            };
            serde_json::to_string(&failed).unwrap_or_default()
        })
    }

    pub fn from_json(text: &str) -> Result<Self, String> {
        serde_json::from_str(text)
            .map_err(|e| format!("El trabajador respondió algo que no se entiende: {e}."))
    }

    /// The request this answers, if any.
    pub fn id(&self) -> Option<u32> {
        match self {
            Reply::Ready => None,
            Reply::Explain { id, .. } | Reply::Snapshot { id, .. } | Reply::Trace { id, .. } => {
                Some(*id)
            }
            Reply::Failed { id, .. } => *id,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_light_reply_reads_what_it_asked_for_and_skips_the_rest() {
        let explain = Reply::Explain {
            id: 4,
            result: Box::new(crate::explain::explain(
                "CUDA out of memory. Tried to allocate 2.00 GiB",
            )),
        };
        match decode::<LightReply>(&explain.to_json()) {
            LightReply::Explain { id: 4, .. } => {}
            other => panic!("{other:?}"),
        }
        let trace = allocator::parse_trace("{\"op\":\"alloc\",\"id\":1,\"bytes\":1024}\n").unwrap();
        let r: LightReply = decode(
            &Reply::Trace {
                id: 5,
                result: Ok(trace),
            }
            .to_json(),
        );
        assert_eq!(r, LightReply::Other);
        assert!(decode::<LightReply>(&Reply::Ready.to_json()).is_ready());
        let garbage: LightReply = decode("no es json");
        assert!(garbage.is_fatal());
    }

    #[test]
    fn a_trace_travels_packed_and_a_forged_one_is_refused() {
        let lines = "{\"op\":\"alloc\",\"id\":7,\"bytes\":1024}\n{\"op\":\"free\",\"id\":7}\n";
        let trace = allocator::parse_trace(lines).unwrap();
        let json = Reply::Trace {
            id: 1,
            result: Ok(trace.clone()),
        }
        .to_json();
        assert!(json.contains("\"ops\":[1,0,7,1024,2,1,7,0]"), "{json}");
        match Reply::from_json(&json).unwrap() {
            Reply::Trace { result: Ok(t), .. } => assert_eq!(t, trace),
            other => panic!("{other:?}"),
        }
        for forged in [
            r#"{"kind":"trace","id":1,"result":{"ok":{"ops":[1,0,7],"warnings":[],"warnings_total":0}}}"#,
            r#"{"kind":"trace","id":1,"result":{"ok":{"ops":[1,9,7,0],"warnings":[],"warnings_total":0}}}"#,
        ] {
            match Reply::from_json(forged).unwrap() {
                Reply::Trace { result: Err(e), .. } => assert!(e.contains("incompleta"), "{e}"),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn messages_round_trip_as_json() {
        let r = Request {
            id: 3,
            job: Job::Trace,
            name: "traza \"rara\".jsonl".into(),
        };
        assert_eq!(Request::from_json(&r.to_json()).unwrap(), r);
        let lines = "{\"op\":\"alloc\",\"id\":1,\"bytes\":1024}\n";
        let trace = allocator::parse_trace(lines).unwrap();
        for reply in [
            Reply::Ready,
            Reply::Trace {
                id: 3,
                result: Ok(trace),
            },
            Reply::Snapshot {
                id: 4,
                result: Err("x: no".into()),
            },
            Reply::Failed {
                id: None,
                why: "no cargó".into(),
            },
        ] {
            assert_eq!(Reply::from_json(&reply.to_json()).unwrap(), reply);
        }
    }

    #[test]
    fn malformed_messages_are_spanish_errors() {
        for text in [
            "",
            "null",
            "[1,2]",
            "{\"id\":-1,\"job\":\"snapshot\",\"name\":\"a\"}",
            "{\"id\":1,\"job\":\"volar\",\"name\":\"a\"}",
        ] {
            let e = Request::from_json(text).unwrap_err();
            assert!(e.starts_with("El trabajador recibió"), "{e}");
        }
        assert!(Reply::from_json("{\"kind\":\"otra\"}").is_err());
    }
}
