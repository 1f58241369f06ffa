//! The estimator's calls into the lazily loaded `import-web` bundle (wasm32 only): a
//! file or a Hub id goes in, a plain object comes back (the architecture as
//! `vram::share` text, checked again here as a link would be, and the exact weights).

use js_sys::Reflect;
use wasm_bindgen::JsValue;

use super::compute::{Imported, StoredWeights};
use crate::islands::lazy_module::{call, describe, load, text};

fn whole(obj: &JsValue, key: &str) -> Option<u64> {
    Reflect::get(obj, &key.into())
        .ok()
        .and_then(|v| v.as_f64())
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| v as u64)
}

/// The bundle's glue and wasm URLs.
pub type Urls = (String, String);

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
    });
    Ok(Imported { arch, weights })
}

pub async fn read_file(urls: &Urls, file: web_sys::File) -> Result<Imported, String> {
    run(urls, "read_file", &[&file.into()]).await
}

pub async fn import_repo(urls: &Urls, base: &str, id: &str) -> Result<Imported, String> {
    run(urls, "import_repo", &[&base.into(), &id.into()]).await
}

/// The first file of a drop on the panel.
pub fn dropped(ev: &leptos::ev::DragEvent) -> Option<web_sys::File> {
    ev.data_transfer()
        .and_then(|d| d.files())
        .and_then(|files| files.get(0))
}
