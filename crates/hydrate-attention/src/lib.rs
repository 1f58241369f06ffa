//! `hydrate-attention` is the wasm32 bundle of the FlashAttention chapter: the light
//! islands plus the naive-vs-tiled attention demo (`ui`'s `attention` feature). The
//! demo's own code is about a third of the light bundle, so text pages do not carry it.
//!
//! Like the other heavy bundles it is built in its own cargo invocation, so `ui`'s
//! features do not unify with the light bundle's.

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    ui::hydrate();
}
