//! The trace format: one JSON object per line, `{"op":"alloc","id":1,"bytes":1048576}`
//! or `{"op":"free","id":1}` (`docs/cli-json.md`, `vramlab simulate`).
//!
//! Traces come from users (pasted in the site, or written by a hook around
//! `torch.cuda.memory._record_memory_history`), so parsing validates everything and
//! reports the first problem with its line number in Spanish. A `free` of an id that is
//! not live is a warning, not an error: partial traces start in the middle of a run.
//! Other fields on a line are ignored, so richer formats can add their own.

use std::collections::HashMap;

use numfmt::clip;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use thiserror::Error;

use crate::sizes::MAX_BYTES;

/// The most events a trace may hold (the simulation of 5 million events takes seconds
/// natively, and the report stays bounded whatever the length).
pub const MAX_EVENTS: usize = 5_000_000;
/// Warnings kept in a [`Trace`]; later ones are only counted.
pub const MAX_WARNINGS: usize = 100;

/// One operation of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum TraceOp {
    Alloc { id: u64, bytes: u64 },
    Free { id: u64 },
}

/// An operation and the line it came from (1-based; its position for built traces).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceEvent {
    pub line: u64,
    pub op: TraceOp,
}

/// A parsed trace: every `free` names a live id and no live id is allocated twice.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    pub events: Vec<TraceEvent>,
    /// Spanish warnings (frees of unknown ids), at most [`MAX_WARNINGS`].
    pub warnings: Vec<String>,
    pub warnings_total: u64,
}

impl Trace {
    /// A trace built in code; lines are positions.
    pub fn from_ops(ops: impl IntoIterator<Item = TraceOp>) -> Trace {
        Trace {
            events: ops
                .into_iter()
                .zip(1..)
                .map(|(op, line)| TraceEvent { line, op })
                .collect(),
            warnings: Vec::new(),
            warnings_total: 0,
        }
    }

    /// The trace in its file format, one JSON object per line.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for e in &self.events {
            match e.op {
                TraceOp::Alloc { id, bytes } => {
                    out.push_str(&format!(
                        "{{\"op\":\"alloc\",\"id\":{id},\"bytes\":{bytes}}}\n"
                    ));
                }
                TraceOp::Free { id } => {
                    out.push_str(&format!("{{\"op\":\"free\",\"id\":{id}}}\n"));
                }
            }
        }
        out
    }

    pub(crate) fn warn(&mut self, message: String) {
        self.warnings_total += 1;
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(message);
        }
    }
}

/// The first problem of a trace.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum TraceError {
    #[error("línea {line}, columna {column}: no es JSON válido ({detail})")]
    Json {
        line: u64,
        column: usize,
        detail: &'static str,
    },
    #[error(
        "línea {line}: se esperaba un objeto JSON como {{\"op\":\"alloc\",\"id\":1,\"bytes\":1024}}"
    )]
    NotAnObject { line: u64 },
    #[error("línea {line}: falta el campo «{field}»")]
    MissingField { line: u64, field: &'static str },
    #[error("línea {line}: «op» desconocida «{op}» (usa \"alloc\" o \"free\")")]
    UnknownOp { line: u64, op: String },
    #[error("línea {line}: «{field}» debe ser un entero no negativo (es {value})")]
    NotAnInteger {
        line: u64,
        field: &'static str,
        value: String,
    },
    #[error("línea {line}: {bytes} bytes es un tamaño absurdo (más de 1 PiB)")]
    AbsurdSize { line: u64, bytes: u64 },
    #[error(
        "línea {line}: el id {id} ya está reservado desde la línea {first} y no se ha liberado"
    )]
    DuplicateId { line: u64, id: u64, first: u64 },
    #[error("la traza tiene más de {max} eventos; recórtala", max = MAX_EVENTS)]
    TooManyEvents,
    #[error("la traza no tiene ningún evento")]
    Empty,
}

/// Parses a JSON-lines trace. Blank lines are skipped; a UTF-8 BOM is ignored.
pub fn parse_trace(text: &str) -> Result<Trace, TraceError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut trace = Trace::default();
    let mut live: HashMap<u64, u64> = HashMap::new();
    let mut seen = 0usize;
    for (line, raw) in (1u64..).zip(text.lines()) {
        let raw = raw.trim();
        if raw.is_empty() {
            continue;
        }
        // Every line counts, ignored frees too: the work is bounded by what is read.
        seen += 1;
        if seen > MAX_EVENTS {
            return Err(TraceError::TooManyEvents);
        }
        let value: Value = serde_json::from_str(raw).map_err(|e| TraceError::Json {
            line,
            column: e.column(),
            detail: match e.classify() {
                serde_json::error::Category::Eof => "la línea termina antes de tiempo",
                _ => numfmt::json_fault(&e),
            },
        })?;
        let Value::Object(obj) = value else {
            return Err(TraceError::NotAnObject { line });
        };
        let op = match obj.get("op") {
            Some(Value::String(s)) => s.as_str(),
            Some(other) => {
                return Err(TraceError::UnknownOp {
                    line,
                    op: clip(&other.to_string()),
                });
            }
            None => return Err(TraceError::MissingField { line, field: "op" }),
        };
        let id = integer(&obj, "id", line)?;
        match op {
            "alloc" => {
                let bytes = integer(&obj, "bytes", line)?;
                if bytes > MAX_BYTES {
                    return Err(TraceError::AbsurdSize { line, bytes });
                }
                if let Some(&first) = live.get(&id) {
                    return Err(TraceError::DuplicateId { line, id, first });
                }
                live.insert(id, line);
                trace.events.push(TraceEvent {
                    line,
                    op: TraceOp::Alloc { id, bytes },
                });
            }
            "free" => {
                if live.remove(&id).is_some() {
                    trace.events.push(TraceEvent {
                        line,
                        op: TraceOp::Free { id },
                    });
                } else {
                    trace.warn(format!(
                        "línea {line}: free del id {id}, que no está reservado; se ignora"
                    ));
                }
            }
            other => {
                return Err(TraceError::UnknownOp {
                    line,
                    op: clip(other),
                });
            }
        }
    }
    if trace.events.is_empty() {
        return Err(TraceError::Empty);
    }
    Ok(trace)
}

fn integer(obj: &Map<String, Value>, field: &'static str, line: u64) -> Result<u64, TraceError> {
    match obj.get(field) {
        None => Err(TraceError::MissingField { line, field }),
        Some(v) => v.as_u64().ok_or_else(|| TraceError::NotAnInteger {
            line,
            field,
            value: clip(&v.to_string()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        match parse_trace(text) {
            Ok(t) => panic!("se esperaba un error: {t:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn parses_allocs_and_frees() {
        let t = parse_trace(
            "\u{feff}{\"op\":\"alloc\",\"id\":1,\"bytes\":1048576}\n\n  {\"op\":\"free\",\"id\":1,\"t\":3}\r\n",
        );
        let t = t.unwrap_or_default();
        assert_eq!(
            t.events,
            vec![
                TraceEvent {
                    line: 1,
                    op: TraceOp::Alloc {
                        id: 1,
                        bytes: 1 << 20
                    }
                },
                TraceEvent {
                    line: 3,
                    op: TraceOp::Free { id: 1 }
                },
            ]
        );
        assert_eq!(parse_trace(&t.to_jsonl()).map(|r| r.events.len()), Ok(2));
    }

    #[test]
    fn errors_name_the_line() {
        let alloc = "{\"op\":\"alloc\",\"id\":1,\"bytes\":512}\n";
        assert_eq!(
            err(&format!("{alloc}{{\"op\":\"alloc\",\"id\":1,")),
            "línea 2, columna 21: no es JSON válido (la línea termina antes de tiempo)"
        );
        assert!(
            err(&format!("{alloc}{{op:1}}")).starts_with("línea 2, columna 2: no es JSON válido")
        );
        assert_eq!(
            err("[1,2]"),
            TraceError::NotAnObject { line: 1 }.to_string()
        );
        assert_eq!(err("{\"id\":1}"), "línea 1: falta el campo «op»");
        assert_eq!(
            err("{\"op\":\"malloc\",\"id\":1}"),
            "línea 1: «op» desconocida «malloc» (usa \"alloc\" o \"free\")"
        );
        assert_eq!(
            err("{\"op\":\"alloc\",\"id\":1}"),
            "línea 1: falta el campo «bytes»"
        );
        assert_eq!(
            err("{\"op\":\"alloc\",\"id\":-1,\"bytes\":1}"),
            "línea 1: «id» debe ser un entero no negativo (es -1)"
        );
        assert_eq!(
            err("{\"op\":\"alloc\",\"id\":1,\"bytes\":1.5}"),
            "línea 1: «bytes» debe ser un entero no negativo (es 1.5)"
        );
        assert_eq!(
            err("{\"op\":\"alloc\",\"id\":1,\"bytes\":1e300}"),
            "línea 1: «bytes» debe ser un entero no negativo (es 1e+300)"
        );
        assert_eq!(
            err("{\"op\":\"alloc\",\"id\":1,\"bytes\":18446744073709551615}"),
            "línea 1: 18446744073709551615 bytes es un tamaño absurdo (más de 1 PiB)"
        );
        assert_eq!(
            err(&format!("{alloc}{alloc}")),
            "línea 2: el id 1 ya está reservado desde la línea 1 y no se ha liberado"
        );
        assert_eq!(err("\n \n"), "la traza no tiene ningún evento");
        let long = format!("{{\"op\":\"{}\",\"id\":1}}", "x".repeat(100));
        assert!(err(&long).contains(&format!("{}…", "x".repeat(40))));
    }

    #[test]
    fn unknown_frees_are_warnings() {
        let t = parse_trace("{\"op\":\"free\",\"id\":9}\n{\"op\":\"alloc\",\"id\":9,\"bytes\":0}")
            .unwrap_or_default();
        assert_eq!(t.events.len(), 1);
        assert_eq!(
            t.warnings,
            vec!["línea 1: free del id 9, que no está reservado; se ignora".to_string()]
        );
    }

    #[test]
    fn ids_can_be_reused_after_free() {
        let t = "{\"op\":\"alloc\",\"id\":1,\"bytes\":5}\n{\"op\":\"free\",\"id\":1}\n{\"op\":\"alloc\",\"id\":1,\"bytes\":5}";
        assert_eq!(parse_trace(t).map(|t| t.events.len()), Ok(3));
    }
}
