//! The dynamic `import()` of a bundle's glue, its initialisation, and calls into its
//! exports.

use std::cell::RefCell;

use js_sys::{Function, Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen(inline_js = "export function import_module(url) { return import(url); }")]
extern "C" {
    fn import_module(url: &str) -> Promise;
}

thread_local! {
    /// Initialised modules by glue URL (a page loads one or two).
    static MODULES: RefCell<Vec<(String, JsValue)>> = const { RefCell::new(Vec::new()) };
}

/// A JS error, string or object as one readable line.
pub fn describe(e: &JsValue) -> String {
    e.as_string()
        .or_else(|| {
            Reflect::get(e, &"message".into())
                .ok()
                .and_then(|m| m.as_string())
        })
        .unwrap_or_else(|| format!("{e:?}"))
}

/// A numeric field of a result object.
pub fn number(obj: &JsValue, key: &str) -> Result<f64, String> {
    Reflect::get(obj, &key.into())
        .ok()
        .and_then(|v| v.as_f64())
        .ok_or_else(|| format!("el resultado no trae «{key}»"))
}

/// A text field of a result object ("" when absent).
pub fn text(obj: &JsValue, key: &str) -> String {
    Reflect::get(obj, &key.into())
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_default()
}

fn function(module: &JsValue, key: &str) -> Result<Function, String> {
    Reflect::get(module, &key.into())
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
        .ok_or_else(|| format!("el módulo no exporta «{key}»"))
}

/// The initialised module, importing and instantiating it on first use. `what` names
/// it in errors ("de GPU", "de importación").
pub async fn load(what: &str, js_url: &str, wasm_url: &str) -> Result<JsValue, String> {
    let cached = MODULES.with(|m| {
        m.borrow()
            .iter()
            .find(|(url, _)| url == js_url)
            .map(|(_, module)| module.clone())
    });
    if let Some(m) = cached {
        return Ok(m);
    }
    let module = JsFuture::from(import_module(js_url))
        .await
        .map_err(|e| format!("No se pudo cargar el módulo {what}: {}", describe(&e)))?;
    let init = function(&module, "default")?;
    let options = Object::new();
    Reflect::set(&options, &"module_or_path".into(), &wasm_url.into()).map_err(|e| describe(&e))?;
    let ready = init
        .call1(&JsValue::NULL, &options)
        .map_err(|e| format!("No se pudo iniciar el módulo {what}: {}", describe(&e)))?;
    JsFuture::from(Promise::resolve(&ready))
        .await
        .map_err(|e| format!("No se pudo iniciar el módulo {what}: {}", describe(&e)))?;
    MODULES.with(|m| m.borrow_mut().push((js_url.to_owned(), module.clone())));
    Ok(module)
}

/// Calls export `name` with `args` and awaits it if it returns a promise. The error is
/// the rejected value itself, for callers that read fields from it.
pub async fn call(module: &JsValue, name: &str, args: &[&JsValue]) -> Result<JsValue, JsValue> {
    let f = function(module, name).map_err(|e| JsValue::from_str(&e))?;
    let list: js_sys::Array = args.iter().copied().collect();
    let pending = f.apply(&JsValue::NULL, &list)?;
    JsFuture::from(Promise::resolve(&pending)).await
}
