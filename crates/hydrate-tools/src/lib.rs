//! `hydrate-tools` is the wasm32 bundle of the estimator: `hydrate` with `ui`'s `tools`
//! feature on. The estimator's page loads it at once; the VRAM anatomy chapter loads the
//! light bundle for its weights calculator, and this one only when its estimator nears
//! the screen.
//!
//! It must be built in its own cargo invocation: in one invocation with `hydrate`,
//! cargo would unify `ui`'s features and the light bundle would grow too.

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    ui::hydrate();
}
