//! Reading a chosen or dropped file in the browser (wasm32 only), through `gloo-file`.
//! JSON is read as text under a size cap; a weights file is read by `Blob.slice`
//! prefixes until its header ends, so a 40 GB `.gguf` costs a few MiB of memory and no
//! upload. A read that fails halfway is a Spanish message, never a panic.

use gloo_file::{Blob, File, FileReadError};
use vram::import::{self, ImportedModel, Step};

/// The largest JSON file read (a sharded checkpoint's index can be several MiB).
const MAX_JSON_BYTES: u64 = vram::hub::MAX_INDEX_BYTES as u64;

/// Why a read failed, in Spanish (the DOMException names are English).
fn read_error(name: &str, e: &FileReadError) -> String {
    let why = match e {
        FileReadError::AbortedEarly => "la lectura se interrumpió",
        FileReadError::NotFound(_) => "ya no está donde estaba",
        FileReadError::NotReadable(_) => {
            "el navegador no puede leerlo (¿permisos, o cambió mientras se leía?)"
        }
        FileReadError::Security(_) => "el navegador no permite leerlo",
    };
    format!("No se pudo leer {name}: {why}.")
}

async fn prefix(file: &File, name: &str, n: u64) -> Result<Vec<u8>, String> {
    let end = n.min(file.size());
    let part: Blob = file.slice(0, end).into();
    gloo_file::futures::read_as_bytes(&part)
        .await
        .map_err(|e| read_error(name, &e))
}

/// Reads `file`: JSON under a cap, a weights file by growing prefixes of its header.
// Raw web_sys::File: what the input or drop gives; gloo-file wraps it on the first line.
pub async fn read(file: web_sys::File) -> Result<ImportedModel, String> {
    let file = File::from(file);
    let name: String = file.name().chars().take(120).collect();
    let size = file.size();
    if name.to_lowercase().ends_with(".json") {
        if size > MAX_JSON_BYTES {
            return Err(format!(
                "{name}: el archivo es demasiado grande (máximo {}).",
                vram::ByteSize(MAX_JSON_BYTES).binary()
            ));
        }
        let text = gloo_file::futures::read_as_text(&file)
            .await
            .map_err(|e| read_error(&name, &e))?;
        return import::json_text(&name, &text);
    }
    let mut bytes = prefix(&file, &name, 8).await?;
    // Each step at least quadruples the prefix or ends, so this loop is short.
    loop {
        match import::weights_file(&name, &bytes, size)? {
            Step::Read(n) => bytes = prefix(&file, &name, n).await?,
            Step::Done(imported) => return Ok(*imported),
        }
    }
}
