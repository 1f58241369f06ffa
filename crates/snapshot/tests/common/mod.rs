//! A protocol-4 pickler for tests, writing the opcodes `pickle.dump` writes for plain
//! data: memoized containers and strings, batched APPENDS/SETITEMS, one FRAME.
#![allow(dead_code)]

use std::collections::HashMap;

/// A Python value.
#[derive(Debug, Clone)]
pub enum Py {
    None,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    List(Vec<Py>),
    Tuple(Vec<Py>),
    Dict(Vec<(Py, Py)>),
}

pub fn s(text: &str) -> Py {
    Py::Str(text.to_owned())
}

pub fn i(v: i128) -> Py {
    Py::Int(v)
}

pub fn dict(pairs: Vec<(&str, Py)>) -> Py {
    Py::Dict(pairs.into_iter().map(|(k, v)| (s(k), v)).collect())
}

struct Pickler {
    out: Vec<u8>,
    /// Strings are shared by value, as interned names are in CPython.
    strings: HashMap<String, u32>,
    memo: u32,
}

impl Pickler {
    fn memoize(&mut self) -> u32 {
        self.out.push(0x94);
        self.memo += 1;
        self.memo - 1
    }

    fn get(&mut self, index: u32) {
        if index < 256 {
            self.out.extend([b'h', index as u8]);
        } else {
            self.out.push(b'j');
            self.out.extend(index.to_le_bytes());
        }
    }

    fn int(&mut self, v: i128) {
        if (0..256).contains(&v) {
            self.out.extend([b'K', v as u8]);
        } else if (0..65536).contains(&v) {
            self.out.push(b'M');
            self.out.extend((v as u16).to_le_bytes());
        } else if i128::from(i32::MIN) <= v && v <= i128::from(i32::MAX) {
            self.out.push(b'J');
            self.out.extend((v as i32).to_le_bytes());
        } else {
            let mut bytes = v.to_le_bytes().to_vec();
            // Minimal two's complement: drop sign-only bytes.
            while bytes.len() > 1 {
                let last = bytes[bytes.len() - 1];
                let prev = bytes[bytes.len() - 2];
                if (last == 0 && prev & 0x80 == 0) || (last == 0xff && prev & 0x80 != 0) {
                    bytes.pop();
                } else {
                    break;
                }
            }
            self.out.extend([0x8a, bytes.len() as u8]);
            self.out.extend(bytes);
        }
    }

    fn value(&mut self, v: &Py) {
        match v {
            Py::None => self.out.push(b'N'),
            Py::Bool(true) => self.out.push(0x88),
            Py::Bool(false) => self.out.push(0x89),
            Py::Int(v) => self.int(*v),
            Py::Float(f) => {
                self.out.push(b'G');
                self.out.extend(f.to_be_bytes());
            }
            Py::Str(text) => {
                if let Some(&index) = self.strings.get(text) {
                    return self.get(index);
                }
                let bytes = text.as_bytes();
                if bytes.len() < 256 {
                    self.out.extend([0x8c, bytes.len() as u8]);
                } else {
                    self.out.push(b'X');
                    self.out.extend((bytes.len() as u32).to_le_bytes());
                }
                self.out.extend(bytes);
                let index = self.memoize();
                self.strings.insert(text.clone(), index);
            }
            Py::Bytes(bytes) => {
                self.out.extend([b'C', bytes.len() as u8]);
                self.out.extend(bytes);
                self.memoize();
            }
            Py::List(items) => {
                self.out.push(b']');
                self.memoize();
                for batch in items.chunks(1000) {
                    if batch.len() == 1 {
                        self.value(&batch[0]);
                        self.out.push(b'a');
                    } else {
                        self.out.push(b'(');
                        batch.iter().for_each(|v| self.value(v));
                        self.out.push(b'e');
                    }
                }
            }
            Py::Tuple(items) => {
                match items.len() {
                    0 => self.out.push(b')'),
                    1..=3 => {
                        items.iter().for_each(|v| self.value(v));
                        self.out.push(0x84 + items.len() as u8);
                    }
                    _ => {
                        self.out.push(b'(');
                        items.iter().for_each(|v| self.value(v));
                        self.out.push(b't');
                    }
                }
                if !items.is_empty() {
                    self.memoize();
                }
            }
            Py::Dict(pairs) => {
                self.out.push(b'}');
                self.memoize();
                for batch in pairs.chunks(1000) {
                    if batch.len() == 1 {
                        self.value(&batch[0].0);
                        self.value(&batch[0].1);
                        self.out.push(b's');
                    } else {
                        self.out.push(b'(');
                        for (k, v) in batch {
                            self.value(k);
                            self.value(v);
                        }
                        self.out.push(b'u');
                    }
                }
            }
        }
    }
}

/// `pickle.dumps(value, protocol=4)`, in one frame.
pub fn dumps(value: &Py) -> Vec<u8> {
    let mut p = Pickler {
        out: Vec::new(),
        strings: HashMap::new(),
        memo: 0,
    };
    p.value(value);
    p.out.push(b'.');
    let mut bytes = vec![0x80, 4, 0x95];
    bytes.extend((p.out.len() as u64).to_le_bytes());
    bytes.extend(p.out);
    bytes
}

fn frame(file: &str, line: i128, name: &str) -> Py {
    dict(vec![
        ("filename", s(file)),
        ("line", i(line)),
        ("name", s(name)),
    ])
}

/// Frames as PyTorch records them: allocator C++ first, then torch, then the user.
pub fn frames(user_line: i128) -> Py {
    Py::List(vec![
        frame("??", 0, "c10::cuda::CUDACachingAllocator::malloc"),
        frame(
            "/usr/lib/python3/site-packages/torch/nn/modules/linear.py",
            125,
            "forward",
        ),
        frame("/home/ana/train.py", user_line, "main"),
    ])
}

const MIB: i128 = 1 << 20;

/// Two segments on device 0 and a short trace that ends in an OOM.
///
/// Segment A (large, 20 MiB at 0x7f0000000000): 8 MiB allocated, 2 MiB inactive,
/// 6 MiB allocated, 4 MiB inactive. Segment B (small, 2 MiB): 512 KiB allocated,
/// 512 KiB pending free, 1 MiB inactive.
pub fn sample() -> Py {
    let a = 0x7f00_0000_0000i128;
    let b = 0x7f00_0200_0000i128;
    let block = |addr: i128, size: i128, state: &str, line: i128| {
        dict(vec![
            ("address", i(addr)),
            ("size", i(size)),
            ("requested_size", i(size - 16)),
            ("state", s(state)),
            ("frames", frames(line)),
        ])
    };
    let seg_a = dict(vec![
        ("device", i(0)),
        ("address", i(a)),
        ("total_size", i(20 * MIB)),
        ("allocated_size", i(14 * MIB)),
        ("active_size", i(14 * MIB)),
        ("requested_size", i(14 * MIB - 32)),
        ("stream", i(0)),
        ("segment_type", s("large")),
        ("segment_pool_id", Py::Tuple(vec![i(0), i(0)])),
        ("is_expandable", Py::Bool(false)),
        ("frames", Py::List(vec![])),
        (
            "blocks",
            Py::List(vec![
                block(a, 8 * MIB, "active_allocated", 10),
                block(a + 8 * MIB, 2 * MIB, "inactive", 0),
                block(a + 10 * MIB, 6 * MIB, "active_allocated", 11),
                block(a + 16 * MIB, 4 * MIB, "inactive", 0),
            ]),
        ),
        ("future_key", s("ignored")),
    ]);
    let seg_b = dict(vec![
        ("device", i(0)),
        ("address", i(b)),
        ("total_size", i(2 * MIB)),
        ("stream", i(0)),
        ("segment_type", s("small")),
        (
            "blocks",
            Py::List(vec![
                block(b, MIB / 2, "active_allocated", 12),
                block(b + MIB / 2, MIB / 2, "active_pending_free", 13),
                block(b + MIB, MIB, "inactive", 0),
            ]),
        ),
    ]);
    let entry = |action: &str, addr: i128, size: i128| {
        dict(vec![
            ("action", s(action)),
            ("addr", i(addr)),
            ("size", i(size)),
            ("stream", i(0)),
            ("time_us", i(1_700_000_000_000_000)),
            ("frames", frames(20)),
        ])
    };
    let trace = Py::List(vec![
        entry("segment_alloc", a, 20 * MIB),
        entry("alloc", a, 8 * MIB),
        entry("alloc", a + 8 * MIB, 2 * MIB),
        entry("free_requested", a + 8 * MIB, 2 * MIB),
        entry("free_completed", a + 8 * MIB, 2 * MIB),
        entry("alloc", a + 10 * MIB, 6 * MIB),
        dict(vec![
            ("action", s("oom")),
            ("size", i(30 * MIB)),
            ("device_free", i(3 * MIB)),
            ("stream", i(0)),
            ("frames", frames(30)),
        ]),
        entry("snapshot", 0, 0),
    ]);
    dict(vec![
        ("segments", Py::List(vec![seg_a, seg_b])),
        ("device_traces", Py::List(vec![trace])),
        (
            "allocator_settings",
            dict(vec![("PYTORCH_CUDA_ALLOC_CONF", s(""))]),
        ),
    ])
}

/// The same value as JSON text (tuples become arrays, as `json.dump` writes them).
pub fn to_json(v: &Py) -> String {
    match v {
        Py::None => "null".into(),
        Py::Bool(b) => b.to_string(),
        Py::Int(v) => v.to_string(),
        Py::Float(f) => format!("{f:?}"),
        Py::Str(t) => format!("{t:?}"),
        Py::Bytes(_) => "null".into(),
        Py::List(items) | Py::Tuple(items) => {
            format!(
                "[{}]",
                items.iter().map(to_json).collect::<Vec<_>>().join(",")
            )
        }
        Py::Dict(pairs) => format!(
            "{{{}}}",
            pairs
                .iter()
                .map(|(k, v)| format!("{}:{}", to_json(k), to_json(v)))
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}
