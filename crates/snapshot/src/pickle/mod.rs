//! A small, safe unpickler for the pickles `torch.cuda.memory._dump_snapshot()` writes.
//!
//! `pickle.dump` of plain dicts, lists, strings and numbers uses a few dozen opcodes;
//! those are executed here into a [`Document`]. Every opcode that builds other objects
//! (GLOBAL, REDUCE, BUILD, NEWOBJ…) is how a pickle runs code, so it is an error that
//! names it, never an import or a call. All work is bounded by [`Limits`]: lengths are
//! checked against the bytes left before anything is allocated, and every value pushed
//! counts against a cap, so a forged file costs at most its own size plus the caps.

mod error;
mod opcode;

pub use error::PickleError;

use crate::value::{Document, Node, NodeId};
use opcode::Op;
use std::collections::HashMap;

/// Caps that keep a hostile file from exhausting memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Values pushed in total (new nodes and memo hits alike); at most `u32::MAX`.
    pub max_values: usize,
    /// Entries in the pickle's memo.
    pub max_memo: usize,
    /// Open MARKs at once.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_values: 20_000_000,
            max_memo: 20_000_000,
            max_depth: 1_000,
        }
    }
}

/// Unpickles `bytes` under the default [`Limits`].
pub fn unpickle(bytes: &[u8]) -> Result<Document, PickleError> {
    unpickle_with(bytes, Limits::default())
}

/// Unpickles `bytes` under `limits`. Bytes after STOP are ignored, as Python does.
pub fn unpickle_with(bytes: &[u8], limits: Limits) -> Result<Document, PickleError> {
    let mut machine = Machine {
        input: bytes,
        pos: 0,
        op_at: 0,
        limits: Limits {
            max_values: limits.max_values.min(u32::MAX as usize),
            ..limits
        },
        doc: Document::default(),
        stack: Vec::new(),
        marks: Vec::new(),
        memo: HashMap::new(),
        pushed: 0,
    };
    machine.run()?;
    Ok(machine.doc)
}

struct Machine<'a> {
    input: &'a [u8],
    pos: usize,
    /// Offset of the opcode being executed, for errors.
    op_at: usize,
    limits: Limits,
    doc: Document,
    stack: Vec<NodeId>,
    /// Stack lengths at each open MARK.
    marks: Vec<usize>,
    memo: HashMap<u64, NodeId>,
    pushed: usize,
}

impl Machine<'_> {
    fn run(&mut self) -> Result<(), PickleError> {
        loop {
            self.op_at = self.pos;
            let Some(&byte) = self.input.get(self.pos) else {
                return Err(PickleError::NoStop);
            };
            self.pos += 1;
            let op = opcode::decode(byte).ok_or(PickleError::UnknownOpcode {
                code: byte,
                offset: self.op_at,
            })?;
            if op == Op::Stop {
                let id = self.pop(op)?;
                if !self.stack.is_empty() || !self.marks.is_empty() {
                    return Err(PickleError::BadStop {
                        offset: self.op_at,
                        left: self.stack.len() + 1,
                    });
                }
                self.doc.root = Some(id);
                return Ok(());
            }
            self.step(op)?;
        }
    }

    fn step(&mut self, op: Op) -> Result<(), PickleError> {
        match op {
            Op::Stop => {}
            Op::Refused(name) => {
                return Err(PickleError::Refused {
                    name,
                    offset: self.op_at,
                });
            }
            Op::Proto => {
                let protocol = self.take(op, 1)?[0];
                if protocol > 5 {
                    return Err(PickleError::Protocol {
                        protocol,
                        offset: self.op_at,
                    });
                }
            }
            Op::Frame => {
                // A frame only groups the following opcodes; check it fits, then go on.
                let len = self.uint(op, 8)?;
                self.check_len(op, len)?;
            }
            Op::Mark => {
                if self.marks.len() >= self.limits.max_depth {
                    return Err(PickleError::TooDeep {
                        cap: self.limits.max_depth,
                    });
                }
                self.marks.push(self.stack.len());
            }
            Op::Pop => {
                self.pop(op)?;
            }
            Op::PopMark => {
                self.pop_mark(op)?;
            }
            Op::Dup => {
                let top = self.top(op)?;
                self.push_id(top)?;
            }
            Op::None => self.push(Node::None)?,
            Op::NewTrue => self.push(Node::Bool(true))?,
            Op::NewFalse => self.push(Node::Bool(false))?,
            Op::BinInt => {
                let b = self.take(op, 4)?;
                let v = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                self.push(Node::Int(v.into()))?;
            }
            Op::BinInt1 => {
                let v = self.uint(op, 1)?;
                self.push(Node::Int(v.into()))?;
            }
            Op::BinInt2 => {
                let v = self.uint(op, 2)?;
                self.push(Node::Int(v.into()))?;
            }
            Op::Long1 | Op::Long4 => {
                let len = self.uint(op, if op == Op::Long1 { 1 } else { 4 })?;
                let node = long(self.take_len(op, len)?);
                self.push(node)?;
            }
            Op::BinFloat => {
                let b = self.take(op, 8)?;
                let mut raw = [0u8; 8];
                raw.copy_from_slice(b);
                self.push(Node::Float(f64::from_be_bytes(raw)))?;
            }
            Op::ShortBinUnicode | Op::BinUnicode | Op::BinUnicode8 => {
                let width = match op {
                    Op::ShortBinUnicode => 1,
                    Op::BinUnicode => 4,
                    _ => 8,
                };
                let len = self.uint(op, width)?;
                // Python writes lone surrogates with "surrogatepass": keep them lossily.
                let text = String::from_utf8_lossy(self.take_len(op, len)?).into_owned();
                self.push(Node::Str(text))?;
            }
            Op::ShortBinBytes | Op::BinBytes | Op::BinBytes8 | Op::ByteArray8 => {
                let width = match op {
                    Op::ShortBinBytes => 1,
                    Op::BinBytes => 4,
                    _ => 8,
                };
                let len = self.uint(op, width)?;
                let bytes = self.take_len(op, len)?.to_vec();
                self.push(Node::Bytes(bytes))?;
            }
            Op::EmptyDict => self.push(Node::Dict(Vec::new()))?,
            Op::EmptyList => self.push(Node::List(Vec::new()))?,
            Op::EmptyTuple => self.push(Node::Tuple(Vec::new()))?,
            Op::Tuple1 | Op::Tuple2 | Op::Tuple3 => {
                let n = match op {
                    Op::Tuple1 => 1,
                    Op::Tuple2 => 2,
                    _ => 3,
                };
                if self.above_mark() < n {
                    return Err(self.underflow(op));
                }
                let items = self.stack.split_off(self.stack.len() - n);
                self.push(Node::Tuple(items))?;
            }
            Op::Tuple => {
                let items = self.pop_mark(op)?;
                self.push(Node::Tuple(items))?;
            }
            Op::List => {
                let items = self.pop_mark(op)?;
                self.push(Node::List(items))?;
            }
            Op::Dict => {
                let items = self.pop_mark(op)?;
                let pairs = self.pairs(items)?;
                self.push(Node::Dict(pairs))?;
            }
            Op::Append => {
                let value = self.pop(op)?;
                self.extend_list(op, vec![value])?;
            }
            Op::Appends => {
                let items = self.pop_mark(op)?;
                self.extend_list(op, items)?;
            }
            Op::SetItem => {
                let value = self.pop(op)?;
                let key = self.pop(op)?;
                self.extend_dict(op, vec![(key, value)])?;
            }
            Op::SetItems => {
                let items = self.pop_mark(op)?;
                let pairs = self.pairs(items)?;
                self.extend_dict(op, pairs)?;
            }
            Op::Memoize => {
                let index = self.memo.len() as u64;
                self.memo_put(op, index)?;
            }
            Op::BinPut | Op::LongBinPut => {
                let index = self.uint(op, if op == Op::BinPut { 1 } else { 4 })?;
                self.memo_put(op, index)?;
            }
            Op::BinGet | Op::LongBinGet => {
                let index = self.uint(op, if op == Op::BinGet { 1 } else { 4 })?;
                let id = *self.memo.get(&index).ok_or(PickleError::MemoMissing {
                    name: opcode::name(op),
                    offset: self.op_at,
                    index,
                })?;
                self.push_id(id)?;
            }
        }
        Ok(())
    }

    fn underflow(&self, op: Op) -> PickleError {
        PickleError::StackUnderflow {
            name: opcode::name(op),
            offset: self.op_at,
        }
    }

    /// Fails if `len` more bytes are not there; checked before any allocation.
    fn check_len(&self, op: Op, len: u64) -> Result<usize, PickleError> {
        let left = self.input.len() - self.pos;
        match usize::try_from(len) {
            Ok(n) if n <= left => Ok(n),
            _ => Err(PickleError::Truncated {
                name: opcode::name(op),
                offset: self.op_at,
                needed: len,
                left,
            }),
        }
    }

    fn take(&mut self, op: Op, n: usize) -> Result<&[u8], PickleError> {
        let n = self.check_len(op, n as u64)?;
        let start = self.pos;
        self.pos += n;
        Ok(&self.input[start..start + n])
    }

    fn take_len(&mut self, op: Op, len: u64) -> Result<&[u8], PickleError> {
        let n = self.check_len(op, len)?;
        self.take(op, n)
    }

    /// A little-endian unsigned argument of `width` bytes (at most 8).
    fn uint(&mut self, op: Op, width: usize) -> Result<u64, PickleError> {
        let bytes = self.take(op, width)?;
        Ok(bytes
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }

    fn push(&mut self, node: Node) -> Result<(), PickleError> {
        let cap = self.limits.max_values;
        if self.pushed >= cap {
            return Err(PickleError::TooManyValues { cap });
        }
        let id = self
            .doc
            .push(node, cap)
            .map_err(|cap| PickleError::TooManyValues { cap })?;
        self.pushed += 1;
        self.stack.push(id);
        Ok(())
    }

    fn push_id(&mut self, id: NodeId) -> Result<(), PickleError> {
        let cap = self.limits.max_values;
        if self.pushed >= cap {
            return Err(PickleError::TooManyValues { cap });
        }
        self.pushed += 1;
        self.stack.push(id);
        Ok(())
    }

    /// Values above the innermost MARK: as in CPython, nothing below it can be reached.
    fn above_mark(&self) -> usize {
        self.stack.len() - self.marks.last().copied().unwrap_or(0)
    }

    fn top(&self, op: Op) -> Result<NodeId, PickleError> {
        match self.stack.last() {
            Some(&id) if self.above_mark() > 0 => Ok(id),
            _ => Err(self.underflow(op)),
        }
    }

    fn pop(&mut self, op: Op) -> Result<NodeId, PickleError> {
        let id = self.top(op)?;
        self.stack.pop();
        Ok(id)
    }

    /// Everything above the innermost MARK, which is closed.
    fn pop_mark(&mut self, op: Op) -> Result<Vec<NodeId>, PickleError> {
        let mark = self.marks.pop().ok_or(PickleError::NoMark {
            name: opcode::name(op),
            offset: self.op_at,
        })?;
        if mark > self.stack.len() {
            return Err(self.underflow(op));
        }
        Ok(self.stack.split_off(mark))
    }

    fn pairs(&self, items: Vec<NodeId>) -> Result<Vec<(NodeId, NodeId)>, PickleError> {
        if !items.len().is_multiple_of(2) {
            return Err(PickleError::OddItems { offset: self.op_at });
        }
        Ok(items.chunks_exact(2).map(|p| (p[0], p[1])).collect())
    }

    fn target(&mut self, op: Op, expected: &'static str) -> Result<&mut Node, PickleError> {
        let (offset, name) = (self.op_at, opcode::name(op));
        let id = self.top(op)?;
        let node = self
            .doc
            .get_mut(id)
            .ok_or(PickleError::StackUnderflow { name, offset })?;
        let found = node.kind();
        match node {
            Node::List(_) if expected == "una lista" => Ok(node),
            Node::Dict(_) if expected == "un diccionario" => Ok(node),
            _ => Err(PickleError::WrongTarget {
                name,
                offset,
                found,
                expected,
            }),
        }
    }

    fn extend_list(&mut self, op: Op, items: Vec<NodeId>) -> Result<(), PickleError> {
        if let Node::List(list) = self.target(op, "una lista")? {
            list.extend(items);
        }
        Ok(())
    }

    fn extend_dict(&mut self, op: Op, pairs: Vec<(NodeId, NodeId)>) -> Result<(), PickleError> {
        if let Node::Dict(dict) = self.target(op, "un diccionario")? {
            dict.extend(pairs);
        }
        Ok(())
    }

    fn memo_put(&mut self, op: Op, index: u64) -> Result<(), PickleError> {
        let top = self.top(op)?;
        if !self.memo.contains_key(&index) && self.memo.len() >= self.limits.max_memo {
            return Err(PickleError::MemoFull {
                cap: self.limits.max_memo,
            });
        }
        self.memo.insert(index, top);
        Ok(())
    }
}

/// A two's-complement little-endian integer (LONG1/LONG4).
fn long(bytes: &[u8]) -> Node {
    if bytes.is_empty() {
        return Node::Int(0);
    }
    if bytes.len() > 16 {
        // Longer encodings may still be small (sign padding), but snapshots never
        // write them; anything this wide is not a size or an address.
        return Node::BigInt;
    }
    let negative = bytes[bytes.len() - 1] & 0x80 != 0;
    let mut raw = [if negative { 0xff } else { 0 }; 16];
    raw[..bytes.len()].copy_from_slice(bytes);
    Node::Int(i128::from_le_bytes(raw))
}

#[cfg(test)]
mod tests;
