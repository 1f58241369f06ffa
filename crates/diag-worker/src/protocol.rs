//! The messages between a page and its diagnostics worker, as JSON text.
//!
//! The page posts `[request, bytes]`: a [`Request`] as JSON and the file's contents as
//! an `ArrayBuffer`, transferred (not copied) to the worker. The worker posts [`Reply`]
//! values as JSON: [`Reply::Ready`] once its module has started, then one reply per
//! request, carrying the request's id so a page that moved on can drop stale answers.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::SnapshotView;
use crate::explain::ExplainView;
use crate::packed_trace::PackedTrace;

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
        /// The events travel as bytes beside the JSON ([`Reply::into_message`]);
        /// the page unpacks them ([`PackedTrace::unpack`]).
        result: Result<PackedTrace, String>,
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
    /// Takes the bytes posted beside the JSON; a reply that carries none drops them.
    fn attach(&mut self, _bytes: Vec<u8>) {}
}

/// Reads a reply the worker posted, with the bytes posted beside it if any; text that
/// is none is a failure of the worker.
pub fn decode<R: WorkerReply>(text: &str, bytes: Option<Vec<u8>>) -> R {
    let mut reply: R = serde_json::from_str(text).unwrap_or_else(|e| {
        R::failed(
            None,
            format!("El trabajador respondió algo que no se entiende: {e}."),
        )
    });
    if let Some(bytes) = bytes {
        reply.attach(bytes);
    }
    reply
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
    fn attach(&mut self, bytes: Vec<u8>) {
        if let Reply::Trace { result: Ok(p), .. } = self {
            p.ops = bytes;
        }
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
    /// The reply as the worker posts it: JSON, and a trace's event bytes to transfer
    /// beside it.
    pub fn into_message(mut self) -> (String, Option<Vec<u8>>) {
        let bytes = match &mut self {
            Reply::Trace { result: Ok(p), .. } => Some(std::mem::take(&mut p.ops)),
            _ => None,
        };
        (self.to_json(), bytes)
    }

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

    fn trace() -> PackedTrace {
        let lines = "{\"op\":\"alloc\",\"id\":7,\"bytes\":1024}\n{\"op\":\"free\",\"id\":7}\n";
        PackedTrace::pack(&allocator::parse_trace(lines).unwrap())
    }

    #[test]
    fn a_light_reply_reads_what_it_asked_for_and_skips_the_rest() {
        let explain = Reply::Explain {
            id: 4,
            result: Box::new(crate::explain::explain(
                "CUDA out of memory. Tried to allocate 2.00 GiB",
            )),
        };
        let (text, bytes) = explain.into_message();
        assert_eq!(bytes, None);
        match decode::<LightReply>(&text, None) {
            LightReply::Explain { id: 4, .. } => {}
            other => panic!("{other:?}"),
        }
        let (text, bytes) = Reply::Trace {
            id: 5,
            result: Ok(trace()),
        }
        .into_message();
        assert_eq!(decode::<LightReply>(&text, bytes), LightReply::Other);
        assert!(decode::<LightReply>(&Reply::Ready.to_json(), None).is_ready());
        let garbage: LightReply = decode("no es json", Some(vec![1, 2]));
        assert!(garbage.is_fatal());
    }

    #[test]
    fn a_trace_travels_as_bytes_beside_its_json() {
        let sent = trace();
        let (text, bytes) = Reply::Trace {
            id: 1,
            result: Ok(sent.clone()),
        }
        .into_message();
        assert!(!text.contains("ops"), "{text}");
        assert_eq!(bytes.as_deref(), Some(&sent.ops[..]));
        match decode::<Reply>(&text, bytes) {
            Reply::Trace { result: Ok(p), .. } => {
                assert_eq!(p.unpack().unwrap(), sent.unpack().unwrap())
            }
            other => panic!("{other:?}"),
        }
        // Without its bytes, the trace is refused when the page unpacks it.
        match decode::<Reply>(&text, None) {
            Reply::Trace { result: Ok(p), .. } => {
                assert!(p.unpack().unwrap_err().contains("incompleta"))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn messages_round_trip() {
        let r = Request {
            id: 3,
            job: Job::Trace,
            name: "traza \"rara\".jsonl".into(),
        };
        assert_eq!(Request::from_json(&r.to_json()).unwrap(), r);
        for reply in [
            Reply::Ready,
            Reply::Trace {
                id: 3,
                result: Ok(trace()),
            },
            Reply::Trace {
                id: 3,
                result: Err("t: no".into()),
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
            let (text, bytes) = reply.clone().into_message();
            assert_eq!(decode::<Reply>(&text, bytes), reply);
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
        assert!(decode::<Reply>("{\"kind\":\"otra\"}", None).is_fatal());
    }
}
