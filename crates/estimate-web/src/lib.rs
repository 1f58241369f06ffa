//! `estimate-web` is the estimators' answers. [`view`] (the estimator page's) and
//! [`quick`] (the home page's "¿Cabe mi modelo?") are pure: they evaluate a link's
//! settings with `vram::evaluate` and write the answer as escaped HTML. The site
//! generator calls them at build time for the first answer of every estimator on the
//! site; in the browser, this crate's own bundle (the `answer`, `quick_html` and
//! `quick_link` exports) computes every later one. That bundle is fetched on the
//! reader's first change, so no page loads the engine or the answers' views with its
//! islands (the first answer is already in the HTML).

pub mod quick;
pub mod view;

#[cfg(all(target_arch = "wasm32", feature = "module"))]
mod exports {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen(start)]
    pub fn start() {
        console_error_panic_hook::set_once();
    }

    /// The answer for the estimator page's link (`view::link_pairs`, URL-encoded), as
    /// HTML.
    #[wasm_bindgen]
    pub fn answer(query: &str) -> String {
        super::view::answer(query)
    }

    /// The home page's quick answer for "modelo=…&gpu=…&modo=…", as HTML.
    #[wasm_bindgen]
    pub fn quick_html(query: &str) -> String {
        super::quick::quick(query).html
    }

    /// The estimator page's query for the same settings.
    #[wasm_bindgen]
    pub fn quick_link(query: &str) -> String {
        super::quick::link(query)
    }
}
