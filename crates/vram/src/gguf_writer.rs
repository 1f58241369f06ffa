//! A GGUF header writer for tests: little-endian fields laid out as llama.cpp's writer
//! lays them (`gguf_write_to_buf`): magic, version, tensor and metadata counts,
//! key/value pairs, tensor infos. Shared by this crate's tests and the CLI's (feature
//! `fixtures`), so a forged or real-shaped header is written one way everywhere.

/// GGUF metadata value types (`gguf_type`).
pub const UINT32: u32 = 4;
pub const STRING: u32 = 8;
pub const ARRAY: u32 = 9;

/// A GGUF byte buffer being written.
#[derive(Debug, Default)]
pub struct Writer(pub Vec<u8>);

impl Writer {
    /// A version-3 header with `tensors` tensor infos and `kvs` key/value pairs to come.
    pub fn v3(tensors: u64, kvs: u64) -> Writer {
        let mut w = Writer(b"GGUF".to_vec());
        w.u32(3).u64(tensors).u64(kvs);
        w
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// A GGUF string: its u64 length, then its bytes.
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    pub fn kv_str(&mut self, k: &str, v: &str) -> &mut Self {
        self.str(k).u32(STRING).str(v)
    }
    pub fn kv_u32(&mut self, k: &str, v: u32) -> &mut Self {
        self.str(k).u32(UINT32).u32(v)
    }
    /// An array of strings (`tokenizer.ggml.tokens`).
    pub fn kv_strs(&mut self, k: &str, items: &[&str]) -> &mut Self {
        self.str(k).u32(ARRAY).u32(STRING).u64(items.len() as u64);
        for i in items {
            self.str(i);
        }
        self
    }
    /// A tensor info: name, dimensions, GGML type, offset 0.
    pub fn tensor(&mut self, name: &str, dims: &[u64], ggml: u32) -> &mut Self {
        self.str(name).u32(dims.len() as u32);
        for &d in dims {
            self.u64(d);
        }
        self.u32(ggml).u64(0)
    }
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}
