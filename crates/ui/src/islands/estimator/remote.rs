//! The estimator's calls into the lazily loaded `import-web` bundle (wasm32 only): a
//! file or a Hub id goes in, the JSON of a `vram::import::ImportedModel` comes back.

use wasm_bindgen::JsValue;

use super::compute::Imported;
use crate::islands::lazy_module::{call, describe, load};

/// The bundle's glue and wasm URLs.
pub type Urls = (String, String);

async fn run(urls: &Urls, export: &str, args: &[&JsValue]) -> Result<Imported, String> {
    let module = load("de importación", &urls.0, &urls.1).await?;
    let out = call(&module, export, args)
        .await
        .map_err(|e| describe(&e))?;
    let text = out
        .as_string()
        .ok_or_else(|| "El módulo de importación no devolvió texto.".to_owned())?;
    let model = serde_json::from_str(&text)
        .map_err(|e| format!("El módulo de importación devolvió algo ilegible ({e})."))?;
    Ok(Imported::from_model(model))
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
