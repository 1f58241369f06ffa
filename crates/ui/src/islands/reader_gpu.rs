//! The reader's GPU as their browser names it (wasm32 only): WebGPU's adapter info
//! (`GPUAdapter.info`: vendor, architecture, description), matched to the catalog by
//! the engine's bundle (`estimate-web`'s `gpu_guess`, `vram::reader_gpu`), which is
//! fetched for it only when the adapter may name a catalog card. The estimator page and
//! the home page's quick estimator offer what comes back; neither decides for the
//! reader.

use super::estimate_answers::Answers;

/// `GPUAdapter.info` of the browser's high-performance adapter: (vendor, architecture,
/// description); `None` without WebGPU or an adapter.
async fn adapter_info() -> Option<(String, String, String)> {
    use js_sys::{Function, Object, Promise, Reflect};
    use wasm_bindgen::{JsCast, JsValue};
    // Raw js_sys: web_sys's WebGPU bindings are unstable-gated, and three strings do not
    // need them.
    let navigator = web_sys::window()?.navigator();
    let gpu = Reflect::get(&navigator, &"gpu".into())
        .ok()
        .filter(|g| g.is_object())?;
    let request: Function = Reflect::get(&gpu, &"requestAdapter".into())
        .ok()?
        .dyn_into()
        .ok()?;
    let options = Object::new();
    Reflect::set(
        &options,
        &"powerPreference".into(),
        &"high-performance".into(),
    )
    .ok()?;
    let promise: Promise = request.call1(&gpu, &options).ok()?.dyn_into().ok()?;
    let adapter = wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .ok()
        .filter(JsValue::is_object)?;
    let info = Reflect::get(&adapter, &"info".into())
        .ok()
        .filter(JsValue::is_object)?;
    let field = |k: &str| {
        Reflect::get(&info, &k.into())
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default()
    };
    Some((field("vendor"), field("architecture"), field("description")))
}

/// What the catalog makes of the browser's adapter, or `None` (no WebGPU, a software
/// renderer, a card the catalog lacks, the bundle unavailable).
pub async fn suggestion(answers: Answers) -> Option<vram::reader_gpu::Suggestion> {
    let (vendor, architecture, description) = adapter_info().await?;
    if !vram::reader_gpu::worth_asking(&vendor, &architecture, &description) {
        return None;
    }
    let query = form_urlencoded::Serializer::new(String::new())
        .append_pair("vendor", &vendor)
        .append_pair("architecture", &architecture)
        .append_pair("description", &description)
        .finish();
    let text = answers.call("gpu_guess", &query).await.ok()?;
    vram::reader_gpu::Suggestion::from_query(&text)
}
