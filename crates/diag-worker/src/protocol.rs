//! The messages between a page and its diagnostics worker, as JSON text.
//!
//! The page posts `[request, bytes]`: a [`Request`] as JSON and the file's contents as
//! an `ArrayBuffer`, transferred (not copied) to the worker. The worker posts [`Reply`]
//! values as JSON: [`Reply::Ready`] once its module has started, then one reply per
//! request, carrying the request's id so a page that moved on can drop stale answers.

use allocator::Trace;
use serde::{Deserialize, Serialize};

use crate::SnapshotView;
use crate::explain::ExplainView;
use crate::quick::QuickView;

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
    /// The home page's quick estimate: the bytes are a query string
    /// ("modelo=…&gpu=…&modo=…").
    Quick,
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
        result: Result<Trace, String>,
    },
    Quick {
        id: u32,
        result: Box<QuickView>,
    },
    /// The request could not be answered at all (a malformed message, a bundle that
    /// failed to load); Spanish.
    Failed {
        id: Option<u32>,
        why: String,
    },
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
            Reply::Explain { id, .. }
            | Reply::Snapshot { id, .. }
            | Reply::Trace { id, .. }
            | Reply::Quick { id, .. } => Some(*id),
            Reply::Failed { id, .. } => *id,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

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
