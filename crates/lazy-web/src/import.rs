//! Calls into the lazily loaded `import-web` bundle: a file or a Hub id goes in, a plain
//! object comes back (the architecture as `vram::share` text, checked again here as a
//! link would be, and the exact weights), read into a [`vram::import::Imported`].

use js_sys::Reflect;
use vram::import::{Imported, StoredWeights};
use wasm_bindgen::JsValue;

use crate::{call, describe, load, text};

/// The bundle's glue and wasm URLs.
pub type Urls = (String, String);

fn whole(obj: &JsValue, key: &str) -> Option<u64> {
    Reflect::get(obj, &key.into())
        .ok()
        .and_then(|v| v.as_f64())
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| v as u64)
}

async fn run(urls: &Urls, export: &str, args: &[&JsValue]) -> Result<Imported, String> {
    let module = load("de importación", &urls.0, &urls.1).await?;
    let out = call(&module, export, args)
        .await
        .map_err(|e| describe(&e))?;
    let arch = match text(&out, "arquitectura") {
        a if a.is_empty() => None,
        a => Some((
            vram::share::decode(&a).map_err(|e| e.to_string())?,
            text(&out, "resumen"),
        )),
    };
    let weights = whole(&out, "pesos").map(|bytes| StoredWeights {
        bytes,
        params: whole(&out, "parametros"),
        source: text(&out, "fuente"),
        // The bundle wrote it; read it as a link's, so a bad one is only left out.
        experts: vram::share::decode_experts(&text(&out, "expertos")).unwrap_or_default(),
        shard: None,
    });
    Ok(Imported { arch, weights })
}

/// Reads a chosen or dropped file (JSON, or a weights file's header).
pub async fn read_file(urls: &Urls, file: web_sys::File) -> Result<Imported, String> {
    run(urls, "read_file", &[&file.into()]).await
}

/// Reads a pasted `config.json` (or checkpoint index).
pub async fn read_text(urls: &Urls, text: &str) -> Result<Imported, String> {
    run(urls, "read_text", &[&text.into()]).await
}

/// Reads an architecture in the JSON that older links carried.
pub async fn shared_json(urls: &Urls, text: &str) -> Result<Imported, String> {
    run(urls, "shared_json", &[&text.into()]).await
}

/// Imports repository `id` from the Hub at `base`.
pub async fn import_repo(urls: &Urls, base: &str, id: &str) -> Result<Imported, String> {
    run(urls, "import_repo", &[&base.into(), &id.into()]).await
}
