//! `hydrate-diag` is the wasm32 bundle for pages with the diagnostics islands (the
//! caching-allocator lab and the OOM explainer). It is `hydrate` with `ui`'s `diag`
//! feature on; a page loads exactly one hydrate bundle.
//!
//! Like `hydrate-tools`, it must be built in its own cargo invocation so cargo does
//! not unify `ui`'s features across bundles.

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    ui::hydrate();
}
