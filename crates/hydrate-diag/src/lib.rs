//! `hydrate-diag` is the wasm32 bundle for the debugging chapter's islands (the OOM
//! explainer and the snapshot viewer, whose decoding runs in the diagnostics worker).
//! It is `hydrate` with `ui`'s `diag` feature on; a page loads exactly one hydrate
//! bundle, and the caching-allocator lab is in `hydrate-lab`.
//!
//! Like `hydrate-tools`, it must be built in its own cargo invocation so cargo does
//! not unify `ui`'s features across bundles.

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    ui::hydrate();
}
