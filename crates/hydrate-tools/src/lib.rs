//! `hydrate-tools` is the wasm32 bundle for pages with heavy islands. It is `hydrate`
//! with `ui`'s `tools` feature on, so it carries every island; a page loads either this
//! bundle or the light one, never both.
//!
//! It must be built in its own cargo invocation: in one invocation with `hydrate`,
//! cargo would unify `ui`'s features and the light bundle would grow too.

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    ui::hydrate();
}
