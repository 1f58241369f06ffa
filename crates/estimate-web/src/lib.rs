//! `estimate-web` is the estimator's answer. [`view`] is pure: it evaluates a link's
//! settings with `vram::evaluate` and writes the answer as escaped HTML. The site
//! generator calls it at build time for the first answer of every estimator on the
//! site; in the browser, this crate's own bundle (the `answer` export) computes every
//! later one. That bundle is fetched on the reader's first change, so the estimator's
//! page loads neither the engine nor the answer's views with its islands (its first
//! answer is already in the HTML).

pub mod view;

#[cfg(all(target_arch = "wasm32", feature = "module"))]
mod exports {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen(start)]
    pub fn start() {
        console_error_panic_hook::set_once();
    }

    /// The answer for the page's link (`view::link_pairs`, URL-encoded), as HTML.
    #[wasm_bindgen]
    pub fn answer(query: &str) -> String {
        super::view::answer(query)
    }
}
