//! Turning what a reader brings (JSON text, the first bytes of a weights file) into an
//! [`ImportedModel`]: an architecture, exact weights, or both. Pure: the browser's
//! importer (`import-web`) only reads bytes, by `File.slice` or HTTP Range, and calls
//! these, driven by [`Step`].

use serde::{Deserialize, Serialize};

use crate::arch::Architecture;
use crate::gguf::{self, GgufError};
use crate::safetensors::{self, SafetensorsError};
use crate::{gguf_arch, hf_config, hub};

/// Exact weights read from a file's header, a checkpoint index or a shared link.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredWeights {
    pub bytes: u64,
    /// Parameters, when the source says (a header always does; an index may not).
    pub params: Option<u64>,
    /// Where they came from, as the page shows it ("model.gguf").
    pub source: String,
    /// A GGUF file's routed expert tensors per layer (what `--n-cpu-moe` moves); empty
    /// for other sources.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub experts: Vec<crate::arch::LayerExperts>,
    /// The file is part `.0` (from 1) of `.1` of a split checkpoint
    /// (`model-00001-of-00004.safetensors`, a GGUF's `split.no`/`split.count`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<(u32, u32)>,
}

/// Integer dtypes in a safetensors file are packed quantised weights (GPTQ/AWQ's I32
/// `qweight`, MXFP4 and NVFP4 blocks in U8): their element count is not the model's
/// parameter count.
const PACKED_DTYPES: &[&str] = &["I32", "U32", "I16", "U16", "I8", "U8", "I4", "U4"];

/// `(part, parts)` from a Hugging Face shard name, `…-00002-of-00004.safetensors`.
pub fn shard_of_name(name: &str) -> Option<(u32, u32)> {
    let stem = name.rsplit(['/', '\\']).next()?;
    let (before, after) = stem.rsplit_once("-of-")?;
    let part: u32 = before.rsplit('-').next()?.parse().ok()?;
    let parts: u32 = after.split('.').next()?.parse().ok()?;
    (part >= 1 && part <= parts).then_some((part, parts))
}

impl StoredWeights {
    /// A GGUF file's tensors, its per-layer experts and, for a split file, its part.
    pub fn from_gguf(h: &gguf::GgufHeader, source: String) -> StoredWeights {
        let meta = |k: &str| match h.metadata.get(k) {
            Some(gguf::MetaValue::Int(v)) => u32::try_from(*v).ok(),
            _ => None,
        };
        StoredWeights {
            bytes: h.total.bytes,
            params: Some(h.total.params),
            source,
            experts: h.experts_by_layer(),
            shard: match (meta("split.no"), meta("split.count")) {
                (Some(no), Some(count)) if count > 1 => Some((no.saturating_add(1), count)),
                _ => None,
            },
        }
    }

    /// A safetensors file's tensors; no parameter count when it holds packed
    /// quantised weights ([`PACKED_DTYPES`]).
    pub fn from_safetensors(
        s: &safetensors::TensorSummary,
        source: String,
        file_name: &str,
    ) -> StoredWeights {
        let packed = s
            .by_dtype
            .keys()
            .any(|d| PACKED_DTYPES.contains(&d.as_str()));
        StoredWeights {
            bytes: s.total.bytes,
            params: (!packed).then_some(s.total.params),
            source,
            experts: Vec::new(),
            shard: shard_of_name(file_name).filter(|&(_, parts)| parts > 1),
        }
    }

    /// Whether these can be `arch`'s weights: not one part of a split checkpoint, a
    /// parameter count within what extra heads (MTP layers, a vision tower) add to the
    /// model's (85 % to 125 %), and, without a count, at least 1.5 bits per parameter
    /// (IQ1_S, the smallest GGUF type, takes 1.56). An empty file, a GGUF without
    /// tensors or another model's weights are refused with both counts.
    pub fn check(&self, arch: &Architecture) -> Result<(), String> {
        if let Some((part, parts)) = self.shard {
            return Err(format!(
                "{} es la parte {part} de {parts} de un checkpoint dividido: solo tiene los pesos de esa parte. Usa el índice (model.safetensors.index.json), que suma todas, o prescinde de los pesos exactos.",
                self.source
            ));
        }
        let model = u128::from(arch.param_count().total)
            + u128::from(arch.vision.map_or(0, |v| v.params(arch.hidden)));
        let fits = match self.params {
            Some(p) => u128::from(p) * 100 >= model * 85 && u128::from(p) * 100 <= model * 125,
            None => u128::from(self.bytes) * 16 >= model * 3,
        };
        if fits {
            return Ok(());
        }
        let what = match self.params {
            Some(p) => format!("{} parámetros", crate::group_digits(p)),
            None => crate::ByteSize(self.bytes).binary(),
        };
        Err(format!(
            "Los pesos de {} no son los de este modelo: el archivo tiene {what} y el modelo {} parámetros. Elige el modelo del que son, o quita los pesos exactos.",
            self.source,
            crate::group_digits(u64::try_from(model).unwrap_or(u64::MAX))
        ))
    }

    pub fn summary(&self) -> String {
        let params = self
            .params
            .map(|p| format!(" ({} parámetros)", crate::group_digits(p)))
            .unwrap_or_default();
        format!(
            "Pesos exactos de {}: {}{params}. En inferencia sustituyen al formato elegido.",
            self.source,
            crate::ByteSize(self.bytes).binary()
        )
    }
}

/// What one import produced.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ImportedModel {
    pub arch: Option<Architecture>,
    /// Where the architecture came from, when it is worth saying (a Hub id).
    pub origin: Option<String>,
    /// Spanish remarks: what the importer assumed or could not read.
    pub notes: Vec<String>,
    pub weights: Option<StoredWeights>,
}

/// What a page holds of a reader's imports: an architecture with its one-line
/// summary, exact weights, or both (a GGUF file gives both). The architecture is
/// decoded where it is evaluated (`Architecture`), or kept as `vram::share` text
/// ([`crate::share::ArchText`]) by a page that only passes it on to the engine.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported<A = Architecture> {
    pub arch: Option<(A, String)>,
    pub weights: Option<StoredWeights>,
}

impl<A> Default for Imported<A> {
    fn default() -> Self {
        Imported {
            arch: None,
            weights: None,
        }
    }
}

impl<A: Clone> Imported<A> {
    pub fn is_empty(&self) -> bool {
        self.arch.is_none() && self.weights.is_none()
    }

    /// Adds a new import to this one: a config replaces the architecture, a weights
    /// file the weights, a GGUF file both.
    pub fn merge(&self, new: Imported<A>) -> Imported<A> {
        Imported {
            arch: new.arch.or_else(|| self.arch.clone()),
            weights: new.weights.or_else(|| self.weights.clone()),
        }
    }
}

impl From<ImportedModel> for Imported {
    fn from(m: ImportedModel) -> Self {
        Imported {
            arch: m.arch.map(|a| {
                let summary = arch_summary(&a, m.origin.as_deref(), &m.notes);
                (a, summary)
            }),
            weights: m.weights,
        }
    }
}

/// Spanish one-liner for an imported architecture, with the importer's remarks.
pub fn arch_summary(arch: &Architecture, origin: Option<&str>, notes: &[String]) -> String {
    let from = origin.map(|o| format!(" de {o}")).unwrap_or_default();
    let mut s = format!(
        "Importado{from}: {} con {} capas y {} parámetros.",
        arch.family,
        arch.layers,
        crate::group_digits(arch.param_count().total)
    );
    for n in notes {
        s.push(' ');
        s.push_str(n);
    }
    s
}

/// The most of a `.gguf` file read while looking for the end of its header. A 256k
/// vocabulary takes a few MiB; the browser holds the prefix in memory.
pub const MAX_GGUF_PREFIX: u64 = 64 << 20;
/// The first prefix of a `.gguf` file tried; each retry reads four times more.
pub const FIRST_GGUF_PREFIX: u64 = 1 << 20;

/// What to read next from a weights file, or what it turned out to be.
#[derive(Debug, PartialEq)]
pub enum Step {
    /// Read the first `n` bytes (clamped to the file's size) and call [`weights_file`]
    /// again.
    Read(u64),
    Done(Box<ImportedModel>),
}

/// One step of reading a weights file by prefixes: `prefix` is what has been read so
/// far (its first 8 bytes at least), `size` the file's length. Safetensors needs
/// exactly 8 + N bytes; GGUF grows its prefix until the header ends.
pub fn weights_file(name: &str, prefix: &[u8], size: u64) -> Result<Step, String> {
    let named = |e: String| format!("{name}: {e}");
    if prefix.starts_with(b"GGUF") {
        let h = match gguf::parse(prefix) {
            Err(GgufError::NeedMore(n)) => {
                let read = n as u64;
                if read < size && read < MAX_GGUF_PREFIX {
                    return Ok(Step::Read(
                        (read.max(FIRST_GGUF_PREFIX / 4) * 4).min(MAX_GGUF_PREFIX),
                    ));
                }
                return Err(named(format!(
                    "la cabecera GGUF está incompleta (el archivo acaba, o pasa de {} MiB, tras {n} bytes).",
                    MAX_GGUF_PREFIX >> 20
                )));
            }
            other => other.map_err(|e| named(e.to_string()))?,
        };
        let (arch, mut notes) = gguf_arch::architecture(&h).map_err(|e| named(e.to_string()))?;
        let stored = StoredWeights::from_gguf(&h, name.to_owned());
        // A split file's header describes the whole model; its tensors are one part.
        let weights = match stored.shard {
            Some((part, parts)) => {
                notes.push(format!(
                    "Es la parte {part} de {parts} de un GGUF dividido: se lee su arquitectura, y los pesos se cuentan por el formato, no por sus bytes."
                ));
                None
            }
            None => Some(stored),
        };
        return Ok(Step::Done(Box::new(ImportedModel {
            arch: Some(arch),
            origin: None,
            notes,
            weights,
        })));
    }
    if name.to_ascii_lowercase().ends_with(".gguf") {
        return Err(named(gguf::NOT_A_GGUF.into()));
    }
    let len = safetensors::header_len(prefix).map_err(|e| {
        named(match e {
            SafetensorsError::TooShort => {
                "no es un .safetensors ni un .gguf (es demasiado corto).".into()
            }
            e => e.to_string(),
        })
    })?;
    let need = 8 + len;
    if (prefix.len() as u64) < need {
        if need > size {
            return Err(named(format!(
                "la cabecera dice ocupar {len} bytes pero el archivo solo tiene {size}: no es un .safetensors válido."
            )));
        }
        return Ok(Step::Read(need));
    }
    let summary = safetensors::parse(prefix).map_err(|e| named(e.to_string()))?;
    Ok(Step::Done(Box::new(ImportedModel {
        weights: Some(StoredWeights::from_safetensors(
            &summary,
            name.to_owned(),
            name,
        )),
        ..ImportedModel::default()
    })))
}

/// JSON text: a `config.json`, or a sharded checkpoint's index (whose total size gives
/// the exact weight bytes of the model chosen).
pub fn json_text(name: &str, text: &str) -> Result<ImportedModel, String> {
    if hub::looks_like_index(text) {
        let t = hub::parse_index(text).map_err(|e| e.to_string())?;
        return Ok(ImportedModel {
            weights: Some(StoredWeights {
                bytes: t.bytes,
                params: t.params,
                source: name.to_owned(),
                experts: Vec::new(),
                shard: None,
            }),
            ..ImportedModel::default()
        });
    }
    let (arch, notes) = hf_config::parse(text).map_err(|e| e.to_string())?;
    Ok(ImportedModel {
        arch: Some(arch),
        notes,
        ..ImportedModel::default()
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn safetensors_bytes(header: &str) -> Vec<u8> {
        let mut b = (header.len() as u64).to_le_bytes().to_vec();
        b.extend_from_slice(header.as_bytes());
        b
    }

    #[test]
    fn safetensors_reads_exactly_its_header() {
        let file = safetensors_bytes(
            r#"{"w":{"dtype":"BF16","shape":[1024,1024],"data_offsets":[0,2097152]}}"#,
        );
        let size = file.len() as u64 + 2_097_152;
        let Step::Read(n) = weights_file("m.safetensors", &file[..8], size).unwrap() else {
            panic!("a second read is needed");
        };
        assert_eq!(n, file.len() as u64);
        let Step::Done(i) = weights_file("m.safetensors", &file, size).unwrap() else {
            panic!("done after the header");
        };
        let w = i.weights.unwrap();
        assert_eq!((w.bytes, w.params), (2_097_152, Some(1_048_576)));
        assert!(i.arch.is_none());
    }

    #[test]
    fn bad_files_are_spanish_messages() {
        let forged = u64::MAX.to_le_bytes();
        assert!(
            weights_file("x", &forged, 100)
                .unwrap_err()
                .contains("64 MiB")
        );
        let claims_more = 1000u64.to_le_bytes();
        let e = weights_file("x.safetensors", &claims_more, 50).unwrap_err();
        assert!(e.contains("solo tiene 50"), "{e}");
        assert!(
            weights_file("x", b"abc", 3)
                .unwrap_err()
                .contains("demasiado corto")
        );
        let e = weights_file("v1.gguf", b"GGUF\x01\0\0\0", 8).unwrap_err();
        assert!(e.starts_with("v1.gguf: ") && e.contains("Versión"), "{e}");
    }

    #[test]
    fn gguf_prefix_grows_until_the_file_ends() {
        // A GGUF header cut at 12 bytes of a 10 MiB file: read 1 MiB, then 4 MiB, …
        let cut = b"GGUF\x03\0\0\0\x01\0\0\0";
        assert_eq!(
            weights_file("m.gguf", cut, 10 << 20).unwrap(),
            Step::Read(1 << 20)
        );
        let mb = vec![0u8; 1 << 20];
        let mut prefix = cut.to_vec();
        prefix.extend_from_slice(&mb[..(1 << 20) - cut.len()]);
        // All-zero counts parse as an empty header with no architecture.
        let e = weights_file("m.gguf", &prefix, 10 << 20).unwrap_err();
        assert!(e.contains("general.architecture"), "{e}");
        // A file that ends inside its header says so.
        assert!(
            weights_file("m.gguf", cut, 12)
                .unwrap_err()
                .contains("incompleta")
        );
    }

    #[test]
    fn json_is_a_config_or_an_index() {
        let index = r#"{"metadata":{"total_size":140000000000},"weight_map":{"a":"x"}}"#;
        let i = json_text("model.safetensors.index.json", index).unwrap();
        assert_eq!(i.weights.as_ref().unwrap().bytes, 140_000_000_000);
        assert!(i.weights.as_ref().unwrap().summary().contains("130,39 GiB"));
        let config = r#"{"model_type":"llama","num_hidden_layers":2,"hidden_size":64,
            "num_attention_heads":4,"intermediate_size":128,"vocab_size":100}"#;
        let c = json_text("config.json", config).unwrap();
        assert!(c.weights.is_none());
        let summary = arch_summary(c.arch.as_ref().unwrap(), Some("org/m"), &c.notes);
        assert!(
            summary.starts_with("Importado de org/m: llama con 2 capas"),
            "{summary}"
        );
        assert!(json_text("c", "{").is_err());
    }
}
