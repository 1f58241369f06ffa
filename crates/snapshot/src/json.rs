//! The JSON form of a snapshot (the same structure as the pickle, as JSON text).
//!
//! serde_json drives a visitor that writes straight into the [`Document`] arena, so no
//! intermediate `serde_json::Value` is built and the node cap applies while parsing.
//! serde_json's own recursion limit (128 levels) bounds nesting.

use crate::value::{Document, Node, NodeId};
use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// Why a JSON snapshot was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("JSON no válido: {0}")]
pub struct JsonError(String);

/// Parses JSON text into a document of at most `max_values` nodes.
pub fn parse(text: &[u8], max_values: usize) -> Result<Document, JsonError> {
    let mut doc = Document::default();
    let mut de = serde_json::Deserializer::from_slice(text);
    let root = Seed {
        doc: &mut doc,
        cap: max_values.min(u32::MAX as usize),
    }
    .deserialize(&mut de)
    .map_err(|e| JsonError(numfmt::json_problem(&e)))?;
    de.end().map_err(|e| JsonError(numfmt::json_problem(&e)))?;
    doc.root = Some(root);
    Ok(doc)
}

struct Seed<'a> {
    doc: &'a mut Document,
    cap: usize,
}

impl Seed<'_> {
    fn add<E: serde::de::Error>(&mut self, node: Node) -> Result<NodeId, E> {
        self.doc.push(node, self.cap).map_err(|cap| {
            E::custom(format!(
                "el JSON pasa de {cap} valores; vramlab no lee archivos tan grandes"
            ))
        })
    }
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = NodeId;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<NodeId, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = NodeId;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("un valor JSON")
    }

    fn visit_unit<E: serde::de::Error>(mut self) -> Result<NodeId, E> {
        self.add(Node::None)
    }

    fn visit_bool<E: serde::de::Error>(mut self, v: bool) -> Result<NodeId, E> {
        self.add(Node::Bool(v))
    }

    fn visit_i64<E: serde::de::Error>(mut self, v: i64) -> Result<NodeId, E> {
        self.add(Node::Int(v.into()))
    }

    fn visit_u64<E: serde::de::Error>(mut self, v: u64) -> Result<NodeId, E> {
        self.add(Node::Int(v.into()))
    }

    fn visit_f64<E: serde::de::Error>(mut self, v: f64) -> Result<NodeId, E> {
        self.add(Node::Float(v))
    }

    fn visit_str<E: serde::de::Error>(mut self, v: &str) -> Result<NodeId, E> {
        self.add(Node::Str(v.to_owned()))
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<NodeId, A::Error> {
        let id = self.add(Node::List(Vec::new()))?;
        while let Some(item) = seq.next_element_seed(Seed {
            doc: &mut *self.doc,
            cap: self.cap,
        })? {
            if let Some(Node::List(items)) = self.doc.get_mut(id) {
                items.push(item);
            }
        }
        Ok(id)
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<NodeId, A::Error> {
        let id = self.add(Node::Dict(Vec::new()))?;
        loop {
            let Some(key) = map.next_key_seed(Seed {
                doc: &mut *self.doc,
                cap: self.cap,
            })?
            else {
                break;
            };
            let value = map.next_value_seed(Seed {
                doc: &mut *self.doc,
                cap: self.cap,
            })?;
            match self.doc.get_mut(id) {
                Some(Node::Dict(pairs)) => pairs.push((key, value)),
                _ => return Err(A::Error::custom("diccionario perdido")),
            }
        }
        Ok(id)
    }
}
