//! `hydrate-lab` is the wasm32 bundle for the reserved-memory chapter: the OOM explainer
//! and the caching-allocator lab (with its replay engine, the `allocator` crate). It is
//! `hydrate` with `ui`'s `lab` feature on; a page loads exactly one hydrate bundle, and
//! the debugging chapter's snapshot viewer is not in this one.
//!
//! Like the other hydrate bundles, it must be built in its own cargo invocation so cargo
//! does not unify `ui`'s features across bundles.

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    ui::hydrate();
}
