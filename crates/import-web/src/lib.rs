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
//! Four exports, `read_file(file)`, `read_text(text)` (a pasted `config.json`),
//! `shared(text)` (a link's architecture: `vram::share`'s compact text, or the JSON
//! that links carried before it) and `import_repo(base, id)`, each resolving to a plain
//! object (`arquitectura`: the architecture as `vram::share` text, `resumen`, and for
//! exact weights `pesos`, `parametros`, `fuente`, and for a MoE `.gguf` its expert
//! tensors per block, `expertos`) or rejecting with a Spanish sentence.
//! Plain fields keep every JSON decoder in this bundle: the estimator and the widget
//! read only `vram::share`'s compact text. The parsing is `vram`'s; this crate only
//! moves bytes.

#[cfg(target_arch = "wasm32")]
mod files;
#[cfg(target_arch = "wasm32")]
mod hub;

#[cfg(target_arch = "wasm32")]
mod exports {
    use js_sys::{Object, Reflect};
    use vram::import::{ImportedModel, arch_summary};
    use wasm_bindgen::prelude::*;

    fn done(result: Result<ImportedModel, String>) -> Result<JsValue, JsValue> {
        let m = result.map_err(|e| JsValue::from_str(&e))?;
        let out = Object::new();
        let set = |k: &str, v: JsValue| Reflect::set(&out, &k.into(), &v).map(|_| ());
        if let Some(a) = &m.arch {
            set("arquitectura", vram::share::encode(a).into())?;
            set(
                "resumen",
                arch_summary(a, m.origin.as_deref(), &m.notes).into(),
            )?;
        }
        if let Some(w) = &m.weights {
            // f64 holds every byte count below 2^53 (8 PiB) exactly.
            set("pesos", (w.bytes as f64).into())?;
            if let Some(p) = w.params {
                set("parametros", (p as f64).into())?;
            }
            set("fuente", w.source.as_str().into())?;
            if !w.experts.is_empty() {
                set("expertos", vram::share::encode_experts(&w.experts).into())?;
            }
        }
        Ok(out.into())
    }

    #[wasm_bindgen(start)]
    pub fn start() {
        console_error_panic_hook::set_once();
    }

    /// Reads a chosen or dropped file: JSON as text, weights files by their header.
    #[wasm_bindgen]
    // Raw web_sys::File: JavaScript passes the input's or drop's File; files.rs wraps it.
    pub async fn read_file(file: web_sys::File) -> Result<JsValue, JsValue> {
        done(super::files::read(file).await)
    }

    /// Reads a pasted `config.json` (or checkpoint index).
    #[wasm_bindgen]
    pub fn read_text(text: String) -> Result<JsValue, JsValue> {
        done(vram::import::json_text("config.json", &text))
    }

    /// Reads a link's architecture: `vram::share`'s compact text (the estimator page
    /// keeps it as text and asks here for its summary and its check), or the JSON that
    /// older links and embeds carried.
    #[wasm_bindgen]
    pub fn shared(text: String) -> Result<JsValue, JsValue> {
        let arch = if text.trim_start().starts_with('{') {
            vram::share::decode_json(&text)
        } else {
            vram::share::decode(&text)
        };
        done(
            arch.map(|a| ImportedModel {
                arch: Some(a),
                ..ImportedModel::default()
            })
            .map_err(|e| e.to_string()),
        )
    }

    /// Imports `id` (`org/model` or a Hub URL) from the Hub at `base`.
    #[wasm_bindgen]
    pub async fn import_repo(base: String, id: String) -> Result<JsValue, JsValue> {
        let result = match (vram::hub::parse_base(&base), vram::hub::parse_repo(&id)) {
            (Err(e), _) | (_, Err(e)) => Err(e.to_string()),
            // Said before fetching: the page's CSP would block it with no reason given.
            (Ok(base), _) if !vram::hub::browser_may_fetch(&base) => {
                Err(vram::hub::HubError::NotAllowedHere(base).to_string())
            }
            (Ok(base), Ok(repo)) => super::hub::import(&base, &repo).await,
        };
        done(result)
    }
}
