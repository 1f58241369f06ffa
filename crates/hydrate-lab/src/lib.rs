//! `hydrate-lab` is the wasm32 bundle of the caching-allocator lab (with its replay
//! engine, the `allocator` crate): `hydrate` with `ui`'s `lab` feature on. The
//! reserved-memory chapter loads it after its own bundle (the explainer's), only when
//! the lab nears the screen (`site/islands.js`), so the chapter's first load stays light.
//!
//! Like the other hydrate bundles, it must be built in its own cargo invocation so cargo
//! does not unify `ui`'s features across bundles.

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    ui::hydrate();
}
