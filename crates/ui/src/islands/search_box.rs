//! The search box in every page's header: full-text search over the guide with the
//! index `sitegen` built. The first time the box gets focus it imports the
//! `search-web` bundle (analyzer and query engine) and has it fetch the index; the
//! hydrate bundle itself carries only this view.
//!
//! Keyboard: `/` or Ctrl+K (⌘K) focuses the box from anywhere on the page; ↓ moves
//! into the results (real links, so they open, middle-click and copy as links do),
//! ↑/↓ move between them, Esc goes back to the box and then clears it; Enter in the
//! box opens the first result. Until the island hydrates the box is disabled, so a
//! reader without JavaScript never types into something that cannot answer.

use leptos::prelude::*;

/// Results shown at most.
const LIMIT: usize = 8;

// The fetch that builds `Ready` and `Failed` runs only in the browser.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
#[derive(Clone, Debug, PartialEq)]
enum Load {
    Idle,
    Loading,
    Ready,
    Failed(String),
}

/// One row of the results list.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    url: String,
    place: String,
    excerpt: String,
}

/// Rows from `search-web`'s flat answer [url, place, excerpt, url, …]; a short tail
/// (which the module never sends) is dropped.
fn rows_from_flat(flat: &[String]) -> Vec<Row> {
    flat.chunks_exact(3)
        .map(|c| Row {
            url: c[0].clone(),
            place: c[1].clone(),
            excerpt: c[2].clone(),
        })
        .collect()
}

fn result_id(i: usize) -> String {
    format!("buscar-r{i}")
}

#[island]
pub fn SearchBox(
    /// URL of the hashed `search-index.*.json` written by `sitegen`.
    index_url: String,
    /// The `search-web` bundle: JavaScript glue and wasm.
    module_js: String,
    module_wasm: String,
) -> impl IntoView {
    let load = RwSignal::new(Load::Idle);
    let query = RwSignal::new(String::new());
    let open = RwSignal::new(false);
    let hydrated = RwSignal::new(false);
    let input_ref = NodeRef::<leptos::html::Input>::new();
    let wrapper_ref = NodeRef::<leptos::html::Div>::new();

    Effect::new(move |_| {
        hydrated.set(true);
        #[cfg(target_arch = "wasm32")]
        browser::install_shortcut(input_ref);
    });

    let find_js = module_js.clone();
    let results = Memo::new(move |_| match load.get() {
        Load::Ready => {
            let q = query.get();
            #[cfg(target_arch = "wasm32")]
            let flat = browser::find(&find_js, &q, LIMIT);
            #[cfg(not(target_arch = "wasm32"))]
            let flat: Vec<String> = {
                let _ = (&find_js, &q);
                Vec::new()
            };
            rows_from_flat(&flat)
        }
        _ => Vec::new(),
    });

    let start_loading = move || {
        if load.get_untracked() != Load::Idle {
            return;
        }
        load.set(Load::Loading);
        #[cfg(target_arch = "wasm32")]
        {
            let (url, js, wasm) = (index_url.clone(), module_js.clone(), module_wasm.clone());
            wasm_bindgen_futures::spawn_local(async move {
                load.set(match browser::open(&js, &wasm, &url).await {
                    Ok(()) => Load::Ready,
                    Err(e) => Load::Failed(e),
                });
            });
        }
        #[cfg(not(target_arch = "wasm32"))]
        let _ = (&index_url, &module_js, &module_wasm);
    };

    let focus_result = move |i: usize| {
        #[cfg(target_arch = "wasm32")]
        browser::focus_id(&result_id(i));
        #[cfg(not(target_arch = "wasm32"))]
        let _ = i;
    };
    let focus_input = move || {
        if let Some(input) = input_ref.get_untracked() {
            let _ = input.focus();
        }
    };

    let on_input_keydown = move |ev: leptos::ev::KeyboardEvent| match ev.key().as_str() {
        "ArrowDown" if !results.get_untracked().is_empty() => {
            ev.prevent_default();
            open.set(true);
            focus_result(0);
        }
        "Enter" => {
            if let Some(first) = results.get_untracked().first() {
                ev.prevent_default();
                #[cfg(target_arch = "wasm32")]
                browser::go_to(&first.url);
                #[cfg(not(target_arch = "wasm32"))]
                let _ = first;
            }
        }
        "Escape" => {
            if open.get_untracked() && !query.get_untracked().is_empty() {
                open.set(false);
            } else {
                query.set(String::new());
            }
        }
        _ => {}
    };

    let on_list_keydown = move |ev: leptos::ev::KeyboardEvent| {
        let n = results.get_untracked().len();
        let current = current_result(&ev);
        match (ev.key().as_str(), current) {
            ("ArrowDown", Some(i)) if i + 1 < n => {
                ev.prevent_default();
                focus_result(i + 1);
            }
            ("ArrowDown", Some(_)) => ev.prevent_default(),
            ("ArrowUp", Some(0)) => {
                ev.prevent_default();
                focus_input();
            }
            ("ArrowUp", Some(i)) => {
                ev.prevent_default();
                focus_result(i - 1);
            }
            ("Escape", _) => {
                ev.prevent_default();
                focus_input();
            }
            _ => {}
        }
    };

    // Leaving the whole widget (tab, click elsewhere) closes the panel; moving focus
    // between the box and a result keeps it.
    let on_focusout = move |ev: leptos::ev::FocusEvent| {
        #[cfg(target_arch = "wasm32")]
        if browser::focus_stays_inside(&ev, wrapper_ref) {
            return;
        }
        #[cfg(not(target_arch = "wasm32"))]
        let _ = (&ev, wrapper_ref);
        open.set(false);
    };

    let status = move || {
        let q = query.get();
        if q.trim().is_empty() {
            return String::new();
        }
        match load.get() {
            Load::Idle | Load::Loading => "Cargando el índice…".to_owned(),
            Load::Failed(e) => format!("No se pudo cargar el índice de búsqueda: {e}"),
            Load::Ready => match results.get().len() {
                0 => format!("Nada coincide con «{}».", q.trim()),
                1 => "1 resultado".to_owned(),
                n if n >= LIMIT => format!("Los {n} mejores resultados"),
                n => format!("{n} resultados"),
            },
        }
    };
    let panel_hidden = move || !open.get() || query.get().trim().is_empty();

    let list = move || {
        results
            .get()
            .into_iter()
            .enumerate()
            .map(|(i, row)| {
                view! {
                    <li>
                        <a id=result_id(i) href=row.url>
                            <span class="search-place">{row.place}</span>
                            <span class="search-excerpt">{row.excerpt}</span>
                        </a>
                    </li>
                }
            })
            .collect_view()
    };

    view! {
        <div class="search" role="search" node_ref=wrapper_ref on:focusout=on_focusout>
            <label class="visually-hidden" for="buscar">
                "Buscar en la guía"
            </label>
            <input
                id="buscar"
                type="search"
                node_ref=input_ref
                placeholder="Buscar en la guía"
                autocomplete="off"
                spellcheck="false"
                aria-keyshortcuts="/ Control+K"
                aria-describedby="buscar-estado"
                aria-controls="buscar-lista"
                disabled=move || !hydrated.get()
                prop:value=move || query.get()
                on:focus=move |_| {
                    start_loading();
                    open.set(true);
                }
                on:input=move |ev| {
                    query.set(event_target_value(&ev));
                    open.set(true);
                }
                on:keydown=on_input_keydown
            />
            <kbd class="search-key" aria-hidden="true">
                "/"
            </kbd>
            <div class="search-panel" hidden=panel_hidden>
                <p id="buscar-estado" class="search-status" role="status">
                    {status}
                </p>
                <ul id="buscar-lista" class="search-results" aria-label="Resultados de la búsqueda" on:keydown=on_list_keydown>
                    {list}
                </ul>
            </div>
        </div>
    }
}

/// Which result link an event came from, by its id.
fn current_result(ev: &leptos::ev::KeyboardEvent) -> Option<usize> {
    #[cfg(target_arch = "wasm32")]
    {
        browser::target_id(ev)?
            .strip_prefix("buscar-r")?
            .parse()
            .ok()
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = ev;
        None
    }
}

#[cfg(target_arch = "wasm32")]
mod browser {
    use leptos::prelude::*;
    use wasm_bindgen::JsCast;

    use crate::islands::lazy_module::{cached, describe, function, load_as};

    /// Imports `search-web` and has it load the index.
    pub async fn open(js: &str, wasm: &str, index_url: &str) -> Result<(), String> {
        let module = load_as("de búsqueda", js, wasm).await?;
        let open = function(&module, "open")?;
        let pending = open
            .call1(&wasm_bindgen::JsValue::NULL, &index_url.into())
            .map_err(|e| describe(&e))?;
        wasm_bindgen_futures::JsFuture::from(js_sys::Promise::resolve(&pending))
            .await
            .map(|_| ())
            .map_err(|e| describe(&e))
    }

    /// `search-web`'s `find`, as flat strings; empty if the module is not loaded.
    pub fn find(js: &str, query: &str, limit: usize) -> Vec<String> {
        let Some(find) = cached(js).and_then(|m| function(&m, "find").ok()) else {
            return Vec::new();
        };
        let Ok(answer) = find.call2(
            &wasm_bindgen::JsValue::NULL,
            &query.into(),
            &wasm_bindgen::JsValue::from(limit as u32),
        ) else {
            return Vec::new();
        };
        js_sys::Array::from(&answer)
            .iter()
            .filter_map(|v| v.as_string())
            .collect()
    }

    /// `/` (outside text fields) and Ctrl+K / ⌘K focus the search box.
    pub fn install_shortcut(input: NodeRef<leptos::html::Input>) {
        let handle = window_event_listener(leptos::ev::keydown, move |ev| {
            let key = ev.key();
            let chord = (ev.ctrl_key() || ev.meta_key()) && key.eq_ignore_ascii_case("k");
            let slash = key == "/" && !ev.ctrl_key() && !ev.meta_key() && !typing(&ev);
            if (chord || slash)
                && let Some(el) = input.get_untracked()
            {
                ev.prevent_default();
                let _ = el.focus();
                el.select();
            }
        });
        // The box lives as long as the page.
        std::mem::forget(handle);
    }

    fn typing(ev: &web_sys::KeyboardEvent) -> bool {
        let Some(el) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok())
        else {
            return false;
        };
        matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT")
            || el.is_content_editable()
    }

    pub fn target_id(ev: &web_sys::KeyboardEvent) -> Option<String> {
        ev.target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .map(|el| el.id())
    }

    pub fn focus_id(id: &str) {
        if let Some(el) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.get_element_by_id(id))
            .and_then(|el| el.dyn_into::<web_sys::HtmlElement>().ok())
        {
            let _ = el.focus();
        }
    }

    pub fn go_to(url: &str) {
        if let Some(w) = web_sys::window() {
            let _ = w.location().set_href(url);
        }
    }

    pub fn focus_stays_inside(
        ev: &web_sys::FocusEvent,
        wrapper: NodeRef<leptos::html::Div>,
    ) -> bool {
        let Some(next) = ev
            .related_target()
            .and_then(|t| t.dyn_into::<web_sys::Node>().ok())
        else {
            return false;
        };
        wrapper
            .get_untracked()
            .is_some_and(|w| w.contains(Some(&next)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_from_triples() {
        let flat: Vec<String> = [
            "/a/#kv",
            "Anatomía › La caché KV",
            "crece",
            "/b/",
            "B",
            "x",
            "/c/",
        ]
        .map(String::from)
        .to_vec();
        let rows = rows_from_flat(&flat);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].place, "Anatomía › La caché KV");
        assert_eq!(rows[1].url, "/b/");
        assert!(rows_from_flat(&[]).is_empty());
    }

    #[test]
    fn renders_disabled_until_hydrated() {
        let html = Owner::new().with(|| {
            view! {
                <SearchBox
                    index_url="/search-index.abc.json".to_owned()
                    module_js="/pkg/search_web.js".to_owned()
                    module_wasm="/pkg/search_web_bg.wasm".to_owned()
                />
            }
            .to_html()
        });
        assert!(html.contains("<leptos-island"), "{html}");
        assert!(html.contains("disabled"), "{html}");
        assert!(html.contains(r#"role="search""#), "{html}");
        assert!(html.contains("search-index.abc.json"), "{html}");
    }
}
