//! The header of a `.safetensors` file: the exact dtype, shape and byte range of every
//! tensor, read without touching the weights.
//!
//! A file starts with a little-endian `u64` N and then N bytes of JSON mapping tensor
//! names to `{"dtype", "shape", "data_offsets"}` (plus an optional `__metadata__`).
//! A browser reads the first 8 bytes, then exactly N more ([`header_len`] says how
//! many), never the multi-gigabyte rest. Everything is checked: a forged length, a
//! shape whose product overflows, offsets that disagree with the shape.

use std::collections::BTreeMap;

use serde_json::Value;

/// Largest header accepted (real ones are at most a few MiB, even with thousands of
/// tensors).
pub const MAX_HEADER_BYTES: u64 = 64 << 20;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SafetensorsError {
    #[error("El archivo es demasiado corto para ser safetensors (faltan los 8 bytes iniciales).")]
    TooShort,
    #[error(
        "La cabecera declara {0} bytes; el máximo admitido es 64 MiB: no parece un archivo safetensors."
    )]
    HeaderTooLarge(u64),
    #[error("Faltan bytes: la cabecera ocupa {needed} y solo hay {got}.")]
    Truncated { needed: u64, got: u64 },
    #[error("La cabecera no es JSON válido: {0}.")]
    Json(String),
    #[error("El tensor «{name}» no es válido: {why}.")]
    Tensor { name: String, why: String },
}

/// Tensors, parameters and bytes of one group of tensors (a dtype, a GGML type, or
/// the whole file).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TensorTotal {
    pub tensors: u64,
    pub params: u64,
    pub bytes: u64,
}

impl TensorTotal {
    /// Counts one more tensor.
    pub fn add(&mut self, params: u64, bytes: u64) {
        self.tensors += 1;
        self.params = self.params.saturating_add(params);
        self.bytes = self.bytes.saturating_add(bytes);
    }
}

/// What the header says about the weights.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TensorSummary {
    pub total: TensorTotal,
    /// By dtype name as the file spells it ("BF16", "F8_E4M3", …).
    pub by_dtype: BTreeMap<String, TensorTotal>,
}

/// Bytes per element of a safetensors dtype, in bits (F4 and friends are sub-byte).
fn dtype_bits(dtype: &str) -> Option<u64> {
    Some(match dtype {
        "F64" | "I64" | "U64" | "C64" => 64,
        "F32" | "I32" | "U32" => 32,
        "F16" | "BF16" | "I16" | "U16" => 16,
        "F8_E4M3" | "F8_E5M2" | "F8_E8M0" | "I8" | "U8" | "BOOL" => 8,
        "F6_E2M3" | "F6_E3M2" => 6,
        "F4" => 4,
        _ => return None,
    })
}

/// The header length from the file's first 8 bytes (the browser slices this many more).
pub fn header_len(first: &[u8]) -> Result<u64, SafetensorsError> {
    let bytes: [u8; 8] = first
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .ok_or(SafetensorsError::TooShort)?;
    let n = u64::from_le_bytes(bytes);
    if n > MAX_HEADER_BYTES {
        return Err(SafetensorsError::HeaderTooLarge(n));
    }
    Ok(n)
}

/// Summarises the header in `prefix` (the file's first `8 + header_len` bytes or more).
pub fn parse(prefix: &[u8]) -> Result<TensorSummary, SafetensorsError> {
    let n = header_len(prefix)?;
    let got = prefix.len() as u64 - 8;
    let json = usize::try_from(n)
        .ok()
        .and_then(|n| prefix.get(8..8 + n))
        .ok_or(SafetensorsError::Truncated { needed: n, got })?;
    let value: Value = serde_json::from_slice(json)
        .map_err(|e| SafetensorsError::Json(crate::units::json_problem(&e)))?;
    let map = value
        .as_object()
        .ok_or_else(|| SafetensorsError::Json("la cabecera no es un objeto".into()))?;
    let mut summary = TensorSummary::default();
    for (name, info) in map {
        if name == "__metadata__" {
            continue;
        }
        let bad = |why: &str| SafetensorsError::Tensor {
            name: name.chars().take(80).collect(),
            why: why.to_owned(),
        };
        let dtype = info["dtype"]
            .as_str()
            .ok_or_else(|| bad("no tiene «dtype»"))?;
        let bits = dtype_bits(dtype).ok_or_else(|| bad(&format!("dtype «{dtype}» desconocido")))?;
        let shape = info["shape"]
            .as_array()
            .ok_or_else(|| bad("no tiene «shape»"))?;
        let mut params: u64 = 1;
        for d in shape {
            let d = d
                .as_u64()
                .ok_or_else(|| bad("una dimensión no es un entero positivo"))?;
            params = params
                .checked_mul(d)
                .ok_or_else(|| bad("la forma desborda 64 bits"))?;
        }
        let offsets = info["data_offsets"]
            .as_array()
            .filter(|o| o.len() == 2)
            .ok_or_else(|| bad("«data_offsets» debe tener dos números"))?;
        let (start, end) = match (offsets[0].as_u64(), offsets[1].as_u64()) {
            (Some(s), Some(e)) if s <= e => (s, e),
            _ => return Err(bad("«data_offsets» no es un rango válido")),
        };
        let bytes = params
            .checked_mul(bits)
            .map(|b| b.div_ceil(8))
            .ok_or_else(|| bad("la forma desborda 64 bits"))?;
        if end - start != bytes {
            return Err(bad(&format!(
                "ocupa {} bytes según «data_offsets» y {bytes} según su forma",
                end - start
            )));
        }
        summary.total.add(params, bytes);
        summary
            .by_dtype
            .entry(dtype.to_owned())
            .or_default()
            .add(params, bytes);
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A real-shaped file prefix: length, JSON header (and no weights: not needed).
    fn file(header: &str) -> Vec<u8> {
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header.as_bytes());
        out
    }

    #[test]
    fn sums_exact_bytes_by_dtype() {
        let header = r#"{"__metadata__":{"format":"pt"},
            "model.embed_tokens.weight":{"dtype":"BF16","shape":[128256,4096],"data_offsets":[0,1050673152]},
            "model.norm.weight":{"dtype":"F32","shape":[4096],"data_offsets":[1050673152,1050689536]},
            "lm_head.scale":{"dtype":"F8_E4M3","shape":[3,5],"data_offsets":[1050689536,1050689551]}}"#;
        let s = parse(&file(header)).unwrap_or_default();
        assert_eq!(s.total.tensors, 3);
        assert_eq!(s.total.params, 128_256 * 4096 + 4096 + 15);
        assert_eq!(s.total.bytes, 1_050_689_551);
        assert_eq!(s.by_dtype["BF16"].bytes, 1_050_673_152);
        assert_eq!(s.by_dtype["F32"].params, 4096);
    }

    #[test]
    fn errors_are_spanish_and_specific() {
        let cases: &[(Vec<u8>, &str)] = &[
            (vec![1, 2, 3], "demasiado corto"),
            (u64::MAX.to_le_bytes().to_vec(), "64 MiB"),
            (file("{}").into_iter().take(9).collect(), "Faltan bytes"),
            (file("no json"), "JSON"),
            (file("[1]"), "objeto"),
            (
                file(r#"{"w":{"dtype":"Q9","shape":[1],"data_offsets":[0,1]}}"#),
                "desconocido",
            ),
            (
                file(r#"{"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}"#),
                "entero",
            ),
            (
                file(
                    r#"{"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}}"#,
                ),
                "desborda",
            ),
            (
                file(r#"{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}"#),
                "según su forma",
            ),
            (
                file(r#"{"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}}"#),
                "rango",
            ),
        ];
        for (bytes, want) in cases {
            let err = parse(bytes).map(|_| ()).unwrap_err().to_string();
            assert!(err.contains(want), "{want}: {err}");
        }
    }

    proptest! {
        #[test]
        fn never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = parse(&bytes);
        }

        #[test]
        fn never_panics_on_forged_json(n in any::<u64>(), body in "\\PC{0,200}") {
            let mut bytes = n.to_le_bytes().to_vec();
            bytes.extend_from_slice(body.as_bytes());
            let _ = parse(&bytes);
            let _ = parse(&file(&body));
        }
    }
}
