//! `import-web` reads a reader's own model in the browser: the header of a dropped
//! `.safetensors` or `.gguf` file (by `File.slice`, never the whole file), a JSON file,
//! or a repository on the Hugging Face Hub (`config.json`, then the exact weight bytes
//! from the checkpoint index or the safetensors header through HTTP Range).
//!
//! It is its own bundle, loaded with a dynamic `import()` the first time someone
//! imports, because fetch with timeouts and streamed caps, the GGUF and safetensors
//! readers and their glue would add about 30 KB gzipped to the estimator bundle that
//! every reader of the estimator page downloads (and later to the embeddable widget).
//!
//! Two exports, each resolving to the JSON of a `vram::import::ImportedModel` or
//! rejecting with a Spanish sentence: `read_file(file)` and `import_repo(base, id)`.
//! The parsing is `vram`'s; this crate only moves bytes.

#[cfg(target_arch = "wasm32")]
mod files;
#[cfg(target_arch = "wasm32")]
mod hub;

#[cfg(target_arch = "wasm32")]
mod exports {
    use vram::import::ImportedModel;
    use wasm_bindgen::prelude::*;

    fn done(result: Result<ImportedModel, String>) -> Result<String, JsValue> {
        let model = result.map_err(|e| JsValue::from_str(&e))?;
        serde_json::to_string(&model).map_err(|e| JsValue::from_str(&e.to_string()))
    }

    #[wasm_bindgen(start)]
    pub fn start() {
        console_error_panic_hook::set_once();
    }

    /// Reads a chosen or dropped file: JSON as text, weights files by their header.
    #[wasm_bindgen]
    pub async fn read_file(file: web_sys::File) -> Result<String, JsValue> {
        done(super::files::read(file).await)
    }

    /// Imports `id` (`org/model` or a Hub URL) from the Hub at `base`.
    #[wasm_bindgen]
    pub async fn import_repo(base: String, id: String) -> Result<String, JsValue> {
        let result = match (vram::hub::parse_base(&base), vram::hub::parse_repo(&id)) {
            (Err(e), _) | (_, Err(e)) => Err(e.to_string()),
            (Ok(base), Ok(repo)) => super::hub::import(&base, &repo).await,
        };
        done(result)
    }
}
