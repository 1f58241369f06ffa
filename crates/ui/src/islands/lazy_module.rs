//! The islands' side of lazily loaded bundles: `lazy-web` loads and calls them; this
//! adds what only the GPU islands need.

use js_sys::Reflect;
pub use lazy_web::{call, describe, load, number, text};

/// Whether the browser exposes WebGPU at all.
pub fn has_webgpu() -> bool {
    web_sys::window()
        .map(|w| Reflect::has(&w.navigator(), &"gpu".into()).unwrap_or(false))
        .unwrap_or(false)
}

/// Waits for the next turn of the event loop, so the page repaints between GPU runs.
#[cfg(feature = "attention")]
pub async fn yield_now() {
    use js_sys::Promise;
    use wasm_bindgen_futures::JsFuture;
    let promise = Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0);
        }
    });
    let _ = JsFuture::from(promise).await;
}
