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

    /// The catalog's reading of the browser's `GPUAdapter.info`
    /// (`vendor=…&architecture=…&description=…`), as `vram::reader_gpu::Suggestion`'s
    /// query, or "" when it names nothing the catalog has.
    #[wasm_bindgen]
    pub fn gpu_guess(query: &str) -> String {
        super::gpu_guess(query)
    }
}

/// See the `gpu_guess` export: the matching lives here, in the bundle the estimator
/// loads on demand, not in the page's own.
pub fn gpu_guess(query: &str) -> String {
    let (mut vendor, mut architecture, mut description) =
        (String::new(), String::new(), String::new());
    for (k, v) in form_urlencoded::parse(query.as_bytes()).take(8) {
        match &*k {
            "vendor" => vendor = v.into_owned(),
            "architecture" => architecture = v.into_owned(),
            "description" => description = v.into_owned(),
            _ => {}
        }
    }
    vram::reader_gpu::guess(&vendor, &architecture, &description)
        .map_or_else(String::new, |g| g.to_query())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_gpu_guess_reads_the_adapters_words() {
        let q = super::gpu_guess(
            "vendor=nvidia&architecture=ampere&description=NVIDIA+GeForce+RTX+3060",
        );
        let s = vram::reader_gpu::Suggestion::from_query(&q).unwrap();
        assert_eq!(s.chosen.unwrap().0, "rtx-3060");
        assert_eq!(
            super::gpu_guess("vendor=google&architecture=swiftshader"),
            ""
        );
    }
}
