//! The JSON form of a snapshot (the same structure as the pickle, as JSON text).
//!
//! serde_json drives a visitor that writes straight into the [`Document`] arena, so no
//! intermediate `serde_json::Value` is built and the node cap applies while parsing.
//! serde_json's own recursion limit (128 levels) bounds nesting.
//!
//! A JSON snapshot writes every traceback out in full: the same keys, file names,
//! function names and line numbers millions of times. Equal strings and small integers
//! therefore become one node each (as a pickle's memo would have made them), and each
//! container keeps exactly its items, so the arena stays smaller than the text it
//! came from (`cargo xtask bench` measures it).

use crate::value::{Document, Node, NodeId};
use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasher, RandomState};

/// Why a JSON snapshot was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("JSON no válido: {0}")]
pub struct JsonError(String);

/// Parses JSON text into a document of at most `max_values` nodes.
pub fn parse(text: &[u8], max_values: usize) -> Result<Document, JsonError> {
    let mut doc = Document::default();
    let mut shared = Shared::default();
    let mut de = serde_json::Deserializer::from_slice(text);
    let root = Seed {
        doc: &mut doc,
        shared: &mut shared,
        cap: max_values.min(u32::MAX as usize),
    }
    .deserialize(&mut de)
    .map_err(|e| JsonError(numfmt::json_problem(&e)))?;
    de.end().map_err(|e| JsonError(numfmt::json_problem(&e)))?;
    doc.root = Some(root);
    Ok(doc)
}

/// Integers below this are shared (line numbers, streams, devices, small sizes).
const SHARED_INTS: usize = 1 << 16;
/// Strings longer than this are not looked up (they are rarely repeated).
const SHARED_STRING_BYTES: usize = 512;

/// The nodes equal values share: strings by hash (the node is compared before it is
/// reused, so a collision only costs a new node) and small integers by value.
#[derive(Default)]
struct Shared {
    hasher: RandomState,
    strings: HashMap<u64, NodeId>,
    ints: Vec<Option<NodeId>>,
}

struct Seed<'a> {
    doc: &'a mut Document,
    shared: &'a mut Shared,
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

    fn child(&mut self) -> Seed<'_> {
        Seed {
            doc: &mut *self.doc,
            shared: &mut *self.shared,
            cap: self.cap,
        }
    }

    fn int<E: serde::de::Error>(&mut self, v: i128) -> Result<NodeId, E> {
        let Some(slot) = usize::try_from(v).ok().filter(|&i| i < SHARED_INTS) else {
            return self.add(Node::Int(v));
        };
        if self.shared.ints.is_empty() {
            self.shared.ints = vec![None; SHARED_INTS];
        }
        if let Some(id) = self.shared.ints[slot] {
            return Ok(id);
        }
        let id = self.add(Node::Int(v))?;
        self.shared.ints[slot] = Some(id);
        Ok(id)
    }

    fn string<E: serde::de::Error>(&mut self, v: &str) -> Result<NodeId, E> {
        if v.len() > SHARED_STRING_BYTES {
            return self.add(Node::Str(v.to_owned()));
        }
        let hash = self.shared.hasher.hash_one(v);
        if let Some(&id) = self.shared.strings.get(&hash)
            && matches!(self.doc.get(id), Node::Str(s) if s == v)
        {
            return Ok(id);
        }
        let id = self.add(Node::Str(v.to_owned()))?;
        self.shared.strings.entry(hash).or_insert(id);
        Ok(id)
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
        self.int(v.into())
    }

    fn visit_u64<E: serde::de::Error>(mut self, v: u64) -> Result<NodeId, E> {
        self.int(v.into())
    }

    fn visit_f64<E: serde::de::Error>(mut self, v: f64) -> Result<NodeId, E> {
        self.add(Node::Float(v))
    }

    fn visit_str<E: serde::de::Error>(mut self, v: &str) -> Result<NodeId, E> {
        self.string(v)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<NodeId, A::Error> {
        let id = self.add(Node::List(Vec::new()))?;
        while let Some(item) = seq.next_element_seed(self.child())? {
            if let Some(Node::List(items)) = self.doc.get_mut(id) {
                items.push(item);
            }
        }
        if let Some(Node::List(items)) = self.doc.get_mut(id) {
            items.shrink_to_fit();
        }
        Ok(id)
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<NodeId, A::Error> {
        let id = self.add(Node::Dict(Vec::new()))?;
        loop {
            let Some(key) = map.next_key_seed(self.child())? else {
                break;
            };
            let value = map.next_value_seed(self.child())?;
            match self.doc.get_mut(id) {
                Some(Node::Dict(pairs)) => pairs.push((key, value)),
                _ => return Err(A::Error::custom("diccionario perdido")),
            }
        }
        if let Some(Node::Dict(pairs)) = self.doc.get_mut(id) {
            pairs.shrink_to_fit();
        }
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A traceback written out a thousand times costs a thousand dicts and one node per
    /// distinct key, text and small number, as a pickle's memo would have shared them;
    /// large numbers and long texts are kept apart, and equal hashes of different texts
    /// never merge them.
    #[test]
    fn equal_strings_and_small_numbers_share_one_node() {
        let frame = r#"{"filename": "train.py", "line": 42, "name": "step"}"#;
        let text = format!("[{}]", vec![frame; 1000].join(", "));
        let doc = parse(text.as_bytes(), 1 << 20).map_err(|e| e.to_string());
        // 1 list + 1000 dicts + 3 keys + 2 texts + 1 number.
        assert_eq!(doc.as_ref().map(Document::len), Ok(1007));
        let big = format!("[{}]", vec!["123456789"; 50].join(", "));
        assert_eq!(parse(big.as_bytes(), 1 << 20).map(|d| d.len()), Ok(51));
        let distinct = r#"["a", "b", "a", "c", "b"]"#;
        let doc = parse(distinct.as_bytes(), 64).map_err(|e| e.to_string());
        let texts: Vec<String> = doc.map_or_else(
            |_| Vec::new(),
            |d| match d.get(d.root()) {
                Node::List(items) => items
                    .iter()
                    .map(|&id| match d.get(id) {
                        Node::Str(s) => s.clone(),
                        other => other.kind().to_owned(),
                    })
                    .collect(),
                _ => Vec::new(),
            },
        );
        assert_eq!(texts, ["a", "b", "a", "c", "b"]);
    }
}
