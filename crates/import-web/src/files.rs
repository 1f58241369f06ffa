//! Reading a chosen or dropped file in the browser (wasm32 only). JSON is read as text
//! under a size cap; a weights file is read by `File.slice` prefixes until its header
//! ends, so a 40 GB `.gguf` costs a few MiB of memory and no upload.

use js_sys::Uint8Array;
use vram::import::{self, ImportedModel, Step};
use wasm_bindgen_futures::JsFuture;

/// The largest JSON file read (a sharded checkpoint's index can be several MiB).
const MAX_JSON_BYTES: f64 = vram::hub::MAX_INDEX_BYTES as f64;

async fn prefix(file: &web_sys::File, n: u64) -> Result<Vec<u8>, String> {
    let end = (n as f64).min(file.size());
    let blob = file
        .slice_with_f64_and_f64(0.0, end)
        .map_err(|_| "No se pudo leer el archivo.".to_owned())?;
    let buf = JsFuture::from(blob.array_buffer())
        .await
        .map_err(|_| "No se pudo leer el archivo.".to_owned())?;
    Ok(Uint8Array::new(&buf).to_vec())
}

/// Reads `file`: JSON under a cap, a weights file by growing prefixes of its header.
pub async fn read(file: web_sys::File) -> Result<ImportedModel, String> {
    let name: String = file.name().chars().take(120).collect();
    let size = file.size();
    if name.to_lowercase().ends_with(".json") {
        if size > MAX_JSON_BYTES {
            return Err(format!(
                "{name}: el archivo es demasiado grande (máximo {}).",
                vram::ByteSize(MAX_JSON_BYTES as u64).binary()
            ));
        }
        let text = JsFuture::from(file.text())
            .await
            .ok()
            .and_then(|v| v.as_string())
            .ok_or_else(|| "No se pudo leer el archivo.".to_owned())?;
        return import::json_text(&name, &text);
    }
    let size = size as u64;
    let mut bytes = prefix(&file, 8).await?;
    // Each step at least quadruples the prefix or ends, so this loop is short.
    loop {
        match import::weights_file(&name, &bytes, size)? {
            Step::Read(n) => bytes = prefix(&file, n).await?,
            Step::Done(imported) => return Ok(*imported),
        }
    }
}
