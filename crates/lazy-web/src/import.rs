//! Calls into the lazily loaded `import-web` bundle: a file, a Hub id or a link's
//! architecture goes in, a plain object comes back (the architecture as `vram::share`
//! text and its summary, and the exact weights), read into a [`vram::import::Imported`]
//! whose architecture is decoded (`Architecture`, the widget's, checked again as a link
//! would be) or kept as text (`ArchText`, the estimator page's).

use js_sys::Reflect;
use vram::import::{Imported, StoredWeights};
use vram::share::Shared;
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

async fn run<A: Shared>(
    urls: &Urls,
    export: &str,
    args: &[&JsValue],
) -> Result<Imported<A>, String> {
    let module = load("de importación", &urls.0, &urls.1).await?;
    let out = call(&module, export, args)
        .await
        .map_err(|e| describe(&e))?;
    let arch = match text(&out, "arquitectura") {
        a if a.is_empty() => None,
        a => Some((
            A::from_share(&a).map_err(|e| e.to_string())?,
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
pub async fn read_file<A: Shared>(urls: &Urls, file: web_sys::File) -> Result<Imported<A>, String> {
    run(urls, "read_file", &[&file.into()]).await
}

/// Reads a pasted `config.json` (or checkpoint index).
pub async fn read_text<A: Shared>(urls: &Urls, text: &str) -> Result<Imported<A>, String> {
    run(urls, "read_text", &[&text.into()]).await
}

/// Reads a link's architecture: `vram::share`'s compact text, or the JSON that older
/// links carried.
pub async fn shared<A: Shared>(urls: &Urls, text: &str) -> Result<Imported<A>, String> {
    run(urls, "shared", &[&text.into()]).await
}

/// Imports repository `id` from the Hub at `base`.
pub async fn import_repo<A: Shared>(
    urls: &Urls,
    base: &str,
    id: &str,
) -> Result<Imported<A>, String> {
    run(urls, "import_repo", &[&base.into(), &id.into()]).await
}
