//! Reading a chosen or dropped file in the browser (wasm32 only). JSON is read as text
//! under a size cap; a weights file is read by `File.slice` prefixes until its header
//! ends, so a 40 GB `.gguf` costs a few MiB of memory and no upload.

use js_sys::Uint8Array;
use leptos::prelude::Set;
use wasm_bindgen_futures::JsFuture;

use super::import::{self, Step};
use super::import_panel::State;

/// The largest JSON file read (a sharded checkpoint's index can be several MiB).
const MAX_JSON_BYTES: f64 = vram::hub::MAX_INDEX_BYTES as f64;

pub use super::super::file_text::first_file as chosen;

pub fn dropped(ev: &leptos::ev::DragEvent) -> Option<web_sys::File> {
    ev.data_transfer()
        .and_then(|d| d.files())
        .and_then(|files| files.get(0))
}

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

async fn read_file(file: web_sys::File, name: String) -> Result<super::compute::Imported, String> {
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

/// Reads `file` and hands the outcome to the panel.
pub fn read(file: web_sys::File, state: State) {
    let name: String = file.name().chars().take(120).collect();
    state.error.set(None);
    state.busy.set(Some(format!("Leyendo {name}…")));
    wasm_bindgen_futures::spawn_local(async move {
        state.apply(read_file(file, name).await);
    });
}
