//! `search-web` is the search box's engine, loaded only when a reader first focuses
//! the box. The Snowball stemmer and the JSON reader are about 40 KB gzipped, too
//! much to add to the hydrate bundle that every page loads for a box most visits
//! never touch; here they cost nothing until they are used.
//!
//! Two exports: `open(url)` fetches, parses and validates the index once, and
//! `find(query, limit)` answers synchronously with flat (url, place, excerpt) triples,
//! so the island reads plain strings and needs no JSON code of its own. Errors are
//! Spanish strings. A query that names a model, a card, a size, an engine or a task
//! (`vram::shortcut`) also gets a link to the estimator with those settings: first when
//! it names a model or a card, last otherwise.

#[cfg(target_arch = "wasm32")]
mod exports {
    use std::cell::RefCell;
    use std::rc::Rc;

    use search::{Index, search};
    use wasm_bindgen::prelude::*;
    use wasm_bindgen_futures::JsFuture;

    /// The index is tens of kilobytes; anything past this is not ours.
    const MAX_INDEX_BYTES: usize = 8 * 1024 * 1024;
    /// Results returned at most, whatever the caller asks.
    const MAX_LIMIT: usize = 50;

    thread_local! {
        static INDEX: RefCell<Option<Rc<Index>>> = const { RefCell::new(None) };
    }

    fn describe(e: &JsValue) -> String {
        e.as_string()
            .or_else(|| {
                js_sys::Reflect::get(e, &"message".into())
                    .ok()
                    .and_then(|m| m.as_string())
            })
            .unwrap_or_else(|| format!("{e:?}"))
    }

    async fn fetch_index(url: &str) -> Result<Index, String> {
        // Raw web_sys: one same-origin GET; gloo's fetch (gloo-net) would add a bundle.
        let window = web_sys::window().ok_or("no hay ventana")?;
        let response = JsFuture::from(window.fetch_with_str(url))
            .await
            .map_err(|e| describe(&e))?;
        let response: web_sys::Response = response
            .dyn_into()
            .map_err(|_| "respuesta inesperada del servidor".to_owned())?;
        if !response.ok() {
            return Err(format!("el servidor respondió {}", response.status()));
        }
        let text = JsFuture::from(response.text().map_err(|e| describe(&e))?)
            .await
            .map_err(|e| describe(&e))?
            .as_string()
            .ok_or("el índice no es texto")?;
        if text.len() > MAX_INDEX_BYTES {
            return Err("el índice es demasiado grande".into());
        }
        let index: Index =
            serde_json::from_str(&text).map_err(|e| format!("el índice está dañado ({e})"))?;
        index.validate()?;
        Ok(index)
    }

    /// Loads the index at `url` (once: later calls return at once).
    #[wasm_bindgen]
    pub async fn open(url: String) -> Result<(), JsValue> {
        console_error_panic_hook::set_once();
        if INDEX.with(|i| i.borrow().is_some()) {
            return Ok(());
        }
        let index = fetch_index(&url).await.map_err(|e| JsValue::from_str(&e))?;
        INDEX.with(|i| *i.borrow_mut() = Some(Rc::new(index)));
        Ok(())
    }

    /// The best sections for `query`, as [url, place, excerpt, url, place, …]; empty
    /// before `open` has finished.
    #[wasm_bindgen]
    pub fn find(query: &str, limit: usize) -> Vec<String> {
        let Some(index) = INDEX.with(|i| i.borrow().clone()) else {
            return Vec::new();
        };
        let limit = limit.min(MAX_LIMIT);
        let mut out: Vec<String> = search(&index, query, limit)
            .into_iter()
            .flat_map(|hit| {
                [
                    hit.doc.url.clone(),
                    hit.doc.place(),
                    hit.doc.excerpt.clone(),
                ]
            })
            .collect();
        if let Some((link, first)) = estimator_link(&index, query) {
            if first {
                out.splice(0..0, link);
            } else {
                out.extend(link);
            }
            out.truncate(limit * 3);
        }
        out
    }

    /// The estimator with the settings the query names, and whether it leads the list
    /// (it names a model or a card).
    fn estimator_link(index: &Index, query: &str) -> Option<([String; 3], bool)> {
        let shortcut = vram::shortcut::shortcut(query)?;
        // The estimator page's own address, base path included, from the index.
        let page = index
            .docs
            .iter()
            .map(|d| d.url.split('#').next().unwrap_or(""))
            .find(|u| u.ends_with("/estimador/"))?;
        let first = shortcut.query.contains("modelo=") || shortcut.query.contains("gpu=");
        Some((
            [
                format!("{page}?{}", shortcut.query),
                "Estimador de VRAM".to_owned(),
                format!("Abre el estimador: {}", shortcut.label),
            ],
            first,
        ))
    }
}
