//! `hydrate-home` is the wasm32 bundle of the home page: `hydrate` with `ui`'s `home`
//! feature on (the OOM explainer and the quick estimator). Both send their work to the
//! diagnostics worker, so the bundle carries views, not engines, and the first screen
//! loads about as much as a text page.
//!
//! Like the other heavy bundles, it is built in its own cargo invocation so cargo does
//! not unify `ui`'s features across bundles.

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    ui::hydrate();
}
