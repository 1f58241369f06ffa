//! `hydrate` is the wasm32 entry point of the site: a cdylib whose only export of its
//! own is `hydrate()`. Linking `ui` here pulls in the per-island functions Leptos
//! generates, which the page's loader script calls for each `<leptos-island>`.
//!
//! It is a separate crate so that `ui` stays a plain rlib on native (no cdylib linked
//! for every test build).

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    ui::hydrate();
}
