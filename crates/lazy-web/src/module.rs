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
    /// Modules by glue URL (a page loads one or two), as the promise of their
    /// initialisation: a caller that asks while it is under way waits for the same one
    /// instead of importing and instantiating the module a second time.
    static MODULES: RefCell<Vec<(String, Promise)>> = const { RefCell::new(Vec::new()) };
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
/// it in errors ("de GPU", "de importación"). A load that failed is tried again on the
/// next call (the network may be back).
pub async fn load(what: &str, js_url: &str, wasm_url: &str) -> Result<JsValue, String> {
    let under_way = MODULES.with(|m| {
        m.borrow()
            .iter()
            .find(|(url, _)| url == js_url)
            .map(|(_, p)| p.clone())
    });
    let promise = under_way.unwrap_or_else(|| {
        let (what, js, wasm) = (what.to_owned(), js_url.to_owned(), wasm_url.to_owned());
        let p = wasm_bindgen_futures::future_to_promise(async move {
            start(&what, &js, &wasm)
                .await
                .map_err(|e| JsValue::from_str(&e))
        });
        MODULES.with(|m| m.borrow_mut().push((js_url.to_owned(), p.clone())));
        p
    });
    JsFuture::from(promise.clone()).await.map_err(|e| {
        MODULES.with(|m| m.borrow_mut().retain(|(_, p)| !Object::is(p, &promise)));
        describe(&e)
    })
}

/// Imports the glue and instantiates its wasm.
async fn start(what: &str, js_url: &str, wasm_url: &str) -> Result<JsValue, String> {
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
