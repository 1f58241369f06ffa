//! The islands' side of lazily loaded bundles: `lazy-web` loads and calls them; this
//! adds what only the GPU islands need.

use js_sys::Reflect;
pub use lazy_web::{call, describe, load, number, text};

/// Whether the browser exposes WebGPU at all.
pub fn has_webgpu() -> bool {
    // Raw web_sys: WebGPU has no gloo API.
    web_sys::window()
        .map(|w| Reflect::has(&w.navigator(), &"gpu".into()).unwrap_or(false))
        .unwrap_or(false)
}

/// Waits for the next turn of the event loop, so the page repaints between GPU runs.
#[cfg(feature = "attention")]
pub async fn yield_now() {
    gloo_timers::future::TimeoutFuture::new(0).await;
}
