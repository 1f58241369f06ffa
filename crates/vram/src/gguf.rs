//! The header of a `.gguf` file (llama.cpp's format): the model's metadata (its
//! architecture, so the KV cache can be sized) and every tensor's GGML type and shape,
//! so the weight bytes are exact. Read from a prefix of the file; the weights that
//! follow the header are never needed.
//!
//! Layout (version 2 and 3, little-endian): magic `GGUF`, `u32` version, `u64` tensor
//! count, `u64` metadata count, the metadata key/value pairs, then per tensor: name,
//! `u32` dimension count, `u64` dimensions, `u32` GGML type, `u64` offset. Every count
//! and length is checked against the bytes actually present before anything is
//! allocated, so a forged count cannot make the reader allocate gigabytes.

use std::collections::{BTreeMap, BTreeSet};

use crate::arch::LayerExperts;
use crate::quant::GgufType;
use crate::safetensors::TensorTotal;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GgufError {
    #[error("No es un archivo GGUF (no empieza por «GGUF»).")]
    NotGguf,
    #[error("Versión de GGUF {0} no admitida (se leen la 2 y la 3).")]
    Version(u32),
    #[error("La cabecera sigue más allá de los {0} bytes leídos: lee más del archivo.")]
    NeedMore(usize),
    #[error("Cabecera GGUF no válida: {0}.")]
    Invalid(String),
    #[error(
        "Al GGUF le falta «{0}» en sus metadatos; sin ese dato no se puede calcular la caché KV."
    )]
    Missing(String),
    #[error("El tensor «{name}» usa el tipo GGML {id}, que esta calculadora no conoce.")]
    UnknownType { name: String, id: u32 },
    #[error(
        "El GGUF declara {count} {what}; vramlab lee como mucho {max} (un modelo real tiene unas decenas de metadatos y unos miles de tensores)."
    )]
    TooMany {
        what: &'static str,
        count: u64,
        max: u64,
    },
    #[error(transparent)]
    OverBudget(#[from] crate::arch::OverBudget),
    #[error(
        "El GGUF declara {0}, que vramlab aún no modela: un cálculo sin ello no sería fiable, así que no se da ninguno."
    )]
    Unmodelled(String),
}

/// A metadata value the estimator can use (arrays are skipped, only counted).
#[derive(Clone, Debug, PartialEq)]
pub enum MetaValue {
    Int(i128),
    Float(f64),
    Bool(bool),
    Text(String),
    Array { len: u64 },
}

/// What the header says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GgufHeader {
    pub version: u32,
    pub metadata: BTreeMap<String, MetaValue>,
    pub total: TensorTotal,
    /// By GGML type name ("Q4_K", "F32", …).
    pub by_type: BTreeMap<&'static str, TensorTotal>,
    /// Names of the tensors outside the repeated blocks and of block 0 (`blk.0.…`):
    /// enough to tell a tied head, biases or a gated MLP apart, bounded by one layer.
    pub names: BTreeSet<String>,
    /// The routed expert tensors of each block, by block index (below
    /// [`MAX_EXPERT_LAYER`]): what `--n-cpu-moe` keeps in CPU RAM.
    pub experts: BTreeMap<u32, LayerExperts>,
}

/// Blocks beyond this index are not tracked for experts (no model has that many; a
/// forged name cannot grow the map past it).
pub const MAX_EXPERT_LAYER: u32 = 4096;

/// The block of a routed expert tensor, as llama.cpp's `--n-cpu-moe` matches it
/// (`llm_ffn_exps_block_regex` in common/common.h: `blk\.N\.ffn_(up|down|gate|gate_up)_(ch|)exps`,
/// searched anywhere in the name, so weights and biases alike).
fn expert_block(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("blk.")?;
    let (index, rest) = rest.split_once('.')?;
    if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) || index.len() > 6 {
        return None;
    }
    let rest = rest.strip_prefix("ffn_")?;
    let kind = ["gate_up_", "up_", "down_", "gate_"]
        .iter()
        .find_map(|k| rest.strip_prefix(k))?;
    let kind = kind.strip_prefix("ch").unwrap_or(kind);
    kind.starts_with("exps").then(|| index.parse().ok())?
}

impl GgufHeader {
    /// [`GgufHeader::experts`] as a list indexed by block (blocks without experts are
    /// zero); empty for a dense model.
    pub fn experts_by_layer(&self) -> Vec<LayerExperts> {
        let Some((&last, _)) = self.experts.last_key_value() else {
            return Vec::new();
        };
        (0..=last)
            .map(|i| self.experts.get(&i).copied().unwrap_or_default())
            .collect()
    }
}

impl GgufHeader {
    /// `general.architecture` ("llama", "qwen2", …).
    pub fn architecture(&self) -> Option<&str> {
        match self.metadata.get("general.architecture") {
            Some(MetaValue::Text(s)) => Some(s),
            _ => None,
        }
    }

    /// An integer field of the architecture, e.g. `block_count` →
    /// `llama.block_count`.
    pub fn arch_int(&self, field: &str) -> Option<u64> {
        let key = format!("{}.{field}", self.architecture()?);
        match self.metadata.get(&key) {
            Some(MetaValue::Int(v)) => u64::try_from(*v).ok(),
            _ => None,
        }
    }
}

/// The GGML type ids of ggml.h's `enum ggml_type` that map onto [`GgufType`].
fn ggml_type(id: u32) -> Option<GgufType> {
    Some(match id {
        0 => GgufType::F32,
        1 => GgufType::F16,
        2 => GgufType::Q4_0,
        3 => GgufType::Q4_1,
        6 => GgufType::Q5_0,
        7 => GgufType::Q5_1,
        8 => GgufType::Q8_0,
        10 => GgufType::Q2K,
        11 => GgufType::Q3K,
        12 => GgufType::Q4K,
        13 => GgufType::Q5K,
        14 => GgufType::Q6K,
        16 => GgufType::Iq2Xxs,
        17 => GgufType::Iq2Xs,
        18 => GgufType::Iq3Xxs,
        19 => GgufType::Iq1S,
        20 => GgufType::Iq4Nl,
        21 => GgufType::Iq3S,
        22 => GgufType::Iq2S,
        23 => GgufType::Iq4Xs,
        30 => GgufType::Bf16,
        39 => GgufType::Mxfp4,
        _ => return None,
    })
}

/// Most metadata entries a header may declare: llama.cpp's converters write a few
/// dozen (the tokenizer's arrays are one entry each), so this leaves a wide margin and
/// keeps a forged header's work to milliseconds.
pub const MAX_METADATA: u64 = 65_536;
/// What a file named `.gguf` that lacks the magic is told (CLI and browser alike),
/// instead of being read as the other format.
pub const NOT_A_GGUF: &str =
    "no es un GGUF (no empieza por la firma «GGUF»); puede estar dañado o a medio descargar.";
/// Most tensors: DeepSeek-V3 with one tensor per expert (old conversions) has 46 848.
pub const MAX_TENSORS: u64 = 262_144;

/// Longest metadata string kept (tokenizer strings are skipped over, not stored).
const MAX_KEPT_TEXT: u64 = 4096;
/// Most dimensions a tensor may have (ggml's GGML_MAX_DIMS is 4).
const MAX_DIMS: u32 = 8;

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: u64) -> Result<&'a [u8], GgufError> {
        let n = usize::try_from(n).map_err(|_| GgufError::NeedMore(self.bytes.len()))?;
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or(GgufError::NeedMore(self.bytes.len()))?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], GgufError> {
        let b = self.take(N as u64)?;
        b.try_into()
            .map_err(|_| GgufError::NeedMore(self.bytes.len()))
    }

    fn u32(&mut self) -> Result<u32, GgufError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64, GgufError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// A string; its text is kept only when short.
    fn string(&mut self) -> Result<Option<String>, GgufError> {
        let len = self.u64()?;
        let raw = self.take(len)?;
        Ok((len <= MAX_KEPT_TEXT).then(|| String::from_utf8_lossy(raw).into_owned()))
    }

    fn value(&mut self, kind: u32, depth: u8) -> Result<MetaValue, GgufError> {
        Ok(match kind {
            0 => MetaValue::Int(i128::from(self.array::<1>()?[0])),
            1 => MetaValue::Int(i128::from(i8::from_le_bytes(self.array()?))),
            2 => MetaValue::Int(i128::from(u16::from_le_bytes(self.array()?))),
            3 => MetaValue::Int(i128::from(i16::from_le_bytes(self.array()?))),
            4 => MetaValue::Int(i128::from(self.u32()?)),
            5 => MetaValue::Int(i128::from(i32::from_le_bytes(self.array()?))),
            6 => MetaValue::Float(f64::from(f32::from_le_bytes(self.array()?))),
            7 => MetaValue::Bool(self.array::<1>()?[0] != 0),
            8 => MetaValue::Text(self.string()?.unwrap_or_default()),
            9 => {
                if depth > 2 {
                    return Err(GgufError::Invalid(
                        "matrices anidadas demasiado hondas".into(),
                    ));
                }
                let inner = self.u32()?;
                let len = self.u64()?;
                // Each element takes at least one byte: a count beyond what is left
                // cannot be real, and is refused before looping over it.
                let left = (self.bytes.len() - self.pos) as u64;
                if len > left {
                    return Err(GgufError::NeedMore(self.bytes.len()));
                }
                for _ in 0..len {
                    self.value(inner, depth + 1)?;
                }
                MetaValue::Array { len }
            }
            10 => MetaValue::Int(i128::from(self.u64()?)),
            11 => MetaValue::Int(i128::from(i64::from_le_bytes(self.array()?))),
            12 => MetaValue::Float(f64::from_le_bytes(self.array()?)),
            other => {
                return Err(GgufError::Invalid(format!(
                    "tipo de valor {other} desconocido"
                )));
            }
        })
    }
}

/// Reads the header from `prefix`, the first bytes of the file. If the header goes on
/// past them the error is [`GgufError::NeedMore`]: read a longer prefix and retry.
pub fn parse(prefix: &[u8]) -> Result<GgufHeader, GgufError> {
    let mut r = Reader {
        bytes: prefix,
        pos: 0,
    };
    if r.take(4).map_err(|_| GgufError::NotGguf)? != b"GGUF" {
        return Err(GgufError::NotGguf);
    }
    let version = r.u32()?;
    if !(2..=3).contains(&version) {
        return Err(GgufError::Version(version));
    }
    let tensor_count = r.u64()?;
    let kv_count = r.u64()?;
    for (what, count, max) in [
        ("entradas de metadatos", kv_count, MAX_METADATA),
        ("tensores", tensor_count, MAX_TENSORS),
    ] {
        if count > max {
            return Err(GgufError::TooMany { what, count, max });
        }
    }
    let left = (prefix.len() - r.pos) as u64;
    // A key/value pair takes at least 13 bytes and a tensor entry at least 24.
    if kv_count > left / 13 + 1 || tensor_count > left / 24 + 1 {
        return Err(GgufError::NeedMore(prefix.len()));
    }
    let mut header = GgufHeader {
        version,
        ..GgufHeader::default()
    };
    for _ in 0..kv_count {
        let key = r.string()?.unwrap_or_default();
        let kind = r.u32()?;
        let value = r.value(kind, 0)?;
        header.metadata.insert(key, value);
    }
    for _ in 0..tensor_count {
        let name = r.string()?.unwrap_or_default();
        let dims = r.u32()?;
        if dims > MAX_DIMS {
            return Err(GgufError::Invalid(format!(
                "el tensor «{name}» tiene {dims} dimensiones"
            )));
        }
        let mut params: u64 = 1;
        for _ in 0..dims {
            params = params.checked_mul(r.u64()?).ok_or_else(|| {
                GgufError::Invalid(format!("la forma de «{name}» desborda 64 bits"))
            })?;
        }
        let id = r.u32()?;
        let _offset = r.u64()?;
        let kind = ggml_type(id).ok_or_else(|| GgufError::UnknownType {
            name: name.clone(),
            id,
        })?;
        let bytes = kind.bytes_for(params);
        if let Some(block) = expert_block(&name).filter(|&b| b < MAX_EXPERT_LAYER) {
            let e = header.experts.entry(block).or_default();
            e.bytes = e.bytes.saturating_add(bytes);
            e.largest = e.largest.max(bytes);
        }
        if !name.starts_with("blk.") || name.starts_with("blk.0.") {
            header.names.insert(name);
        }
        header.total.add(params, bytes);
        header
            .by_type
            .entry(kind.id())
            .or_default()
            .add(params, bytes);
    }
    Ok(header)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    use crate::gguf_writer::Writer;

    fn llama_like() -> Vec<u8> {
        let mut w = Writer::v3(3, 5);
        w.kv_str("general.architecture", "llama")
            .kv_u32("llama.block_count", 32)
            .kv_u32("llama.attention.head_count_kv", 8)
            .kv_u32("llama.embedding_length", 4096);
        w.kv_strs("tokenizer.ggml.tokens", &["a", "b", "c"]);
        w.tensor("token_embd.weight", &[4096, 128256], 12)
            .tensor("output_norm.weight", &[4096], 0)
            .tensor("blk.0.ffn_down.weight", &[14336, 4096], 14);
        w.0
    }

    #[test]
    fn reads_metadata_and_exact_bytes() {
        let h = parse(&llama_like()).unwrap_or_default();
        assert_eq!(h.version, 3);
        assert_eq!(h.architecture(), Some("llama"));
        assert_eq!(h.arch_int("block_count"), Some(32));
        assert_eq!(h.arch_int("attention.head_count_kv"), Some(8));
        assert_eq!(
            h.metadata.get("tokenizer.ggml.tokens"),
            Some(&MetaValue::Array { len: 3 })
        );
        assert_eq!(h.total.tensors, 3);
        // Q4_K: 144 bytes per 256 weights; Q6_K: 210 per 256; F32: 4 each.
        let q4 = 4096 * 128_256 / 256 * 144;
        let q6 = 14_336 * 4096 / 256 * 210;
        assert_eq!(h.by_type["Q4_K"].bytes, q4);
        assert_eq!(h.by_type["Q6_K"].bytes, q6);
        assert_eq!(h.total.bytes, q4 + q6 + 4096 * 4);
    }

    #[test]
    fn expert_tensors_are_counted_per_block_as_n_cpu_moe_matches_them() {
        let names = [
            ("blk.0.ffn_gate_exps.weight", Some(0)),
            ("blk.12.ffn_down_exps.weight", Some(12)),
            ("blk.3.ffn_gate_up_exps.weight", Some(3)),
            ("blk.3.ffn_up_exps.bias", Some(3)),
            ("blk.7.ffn_down_chexps.weight", Some(7)),
            ("blk.1.ffn_gate_inp.weight", None),
            ("blk.1.ffn_down_shexp.weight", None),
            ("blk.1.ffn_down.weight", None),
            ("blk.x.ffn_up_exps.weight", None),
            ("blk..ffn_up_exps.weight", None),
            ("token_embd.weight", None),
        ];
        for (name, want) in names {
            assert_eq!(expert_block(name), want, "{name}");
        }
        let mut w = Writer::v3(4, 1);
        w.kv_str("general.architecture", "qwen3moe");
        // Q4_K gate and up, Q6_K down in block 1; nothing in block 0.
        w.tensor("blk.1.ffn_gate_exps.weight", &[2048, 768, 128], 12)
            .tensor("blk.1.ffn_up_exps.weight", &[2048, 768, 128], 12)
            .tensor("blk.1.ffn_down_exps.weight", &[768, 2048, 128], 14)
            .tensor("blk.0.attn_q.weight", &[2048, 4096], 12);
        let h = parse(&w.0).unwrap();
        let n = 2048 * 768 * 128 / 256;
        let layers = h.experts_by_layer();
        assert_eq!(layers.len(), 2);
        assert_eq!(layers[0], LayerExperts::default());
        assert_eq!(layers[1].bytes, n * (144 + 144 + 210));
        assert_eq!(layers[1].largest, n * 210);
    }

    #[test]
    fn every_prefix_is_need_more_or_ok() {
        let full = llama_like();
        for cut in 0..full.len() {
            match parse(&full[..cut]) {
                Err(GgufError::NeedMore(_)) | Err(GgufError::NotGguf) => {}
                other => panic!("cut {cut}: {other:?}"),
            }
        }
        assert!(parse(&full).is_ok());
    }

    #[test]
    fn refuses_what_is_not_gguf() {
        assert_eq!(parse(b"GGML\x03\0\0\0"), Err(GgufError::NotGguf));
        let mut v1 = b"GGUF".to_vec();
        v1.extend_from_slice(&1u32.to_le_bytes());
        assert_eq!(parse(&v1), Err(GgufError::Version(1)));
        let mut w = Writer::v3(1, 0);
        w.tensor("x", &[32], 99);
        let err = parse(&w.0).unwrap_err().to_string();
        assert!(err.contains("tipo GGML 99"), "{err}");
    }

    #[test]
    fn forged_counts_do_not_allocate() {
        let w = Writer::v3(u64::MAX, u64::MAX);
        assert!(matches!(parse(&w.0), Err(GgufError::TooMany { .. })));
        let w = Writer::v3(100_000, 3);
        assert!(matches!(parse(&w.0), Err(GgufError::NeedMore(_))));
        // The hardening pass's 15.7 M short keys: refused before the first is read.
        let mut w = Writer::v3(0, 15_700_000);
        for i in 0..1000 {
            w.kv_u32(&format!("k{i}"), 1);
        }
        let err = parse(&w.0).unwrap_err().to_string();
        assert!(
            err.contains("15700000 entradas de metadatos") && err.contains("65536"),
            "{err}"
        );
        // An array claiming 2^60 elements in a tiny file.
        let mut w = Writer::v3(0, 1);
        w.str("k").u32(9).u32(0).u64(1 << 60);
        assert!(matches!(parse(&w.0), Err(GgufError::NeedMore(_))));
    }

    proptest! {
        #[test]
        fn never_panics(tail in proptest::collection::vec(any::<u8>(), 0..512)) {
            let mut bytes = b"GGUF\x03\0\0\0".to_vec();
            bytes.extend_from_slice(&tail);
            let _ = parse(&bytes);
            let _ = parse(&tail);
        }

        /// Any tensor name: an expert block only for `blk.N.ffn_…exps` names, N as
        /// written.
        #[test]
        fn expert_block_reads_only_its_pattern(
            name in "(blk\\.[0-9x]{0,8}\\.)?(ffn_)?(gate_up_|up_|down_|gate_|inp)?(ch)?(exps|shexp)?\\PC{0,12}"
        ) {
            if let Some(n) = expert_block(&name) {
                let prefix = format!("blk.{n}.ffn_");
                prop_assert!(name.starts_with(&prefix) || name.starts_with("blk.0"), "{}", name);
                prop_assert!(name.contains("exps"), "{}", name);
            }
        }
    }
}
