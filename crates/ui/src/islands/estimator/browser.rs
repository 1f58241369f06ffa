//! The estimator's browser half (wasm32 only): the two-way sync between the inputs
//! and the page's query string and localStorage.

use leptos::prelude::*;
use vram::Architecture;

use super::compute::{CUSTOM, Inputs, import_summary};

const STORAGE_KEY: &str = "vramlab.estimador";

/// The query key that carries an imported architecture (`vram::share`).
const ARCH_KEY: &str = "arquitectura";

const KEYS: [&str; 12] = [
    "modelo",
    "gpu",
    "modo",
    "formato",
    "lote",
    "contexto",
    "atencion",
    "checkpointing",
    "gpus",
    "zero",
    "optimizador",
    "servidor",
];

fn get(i: &Inputs, key: &str) -> String {
    match key {
        "modelo" => i.model.clone(),
        "gpu" => i.gpu.clone(),
        "modo" => i.mode.clone(),
        "formato" => i.format.clone(),
        "lote" => i.batch.clone(),
        "contexto" => i.seq.clone(),
        "atencion" => i.attention.clone(),
        "gpus" => i.gpus.clone(),
        "zero" => i.zero.clone(),
        "optimizador" => i.optimizer.clone(),
        "servidor" => i.serve.to_string(),
        _ => i.checkpointing.to_string(),
    }
}

fn put(i: &mut Inputs, key: &str, v: String) {
    // Only bounded text reaches the inputs; the estimator validates the rest.
    let v: String = v.chars().take(64).collect();
    match key {
        "modelo" => i.model = v,
        "gpu" => i.gpu = v,
        "modo" => i.mode = v,
        "formato" => i.format = v,
        "lote" => i.batch = v,
        "contexto" => i.seq = v,
        "atencion" => i.attention = v,
        "gpus" => i.gpus = v,
        "zero" => i.zero = v,
        "optimizador" => i.optimizer = v,
        "servidor" => i.serve = v == "true",
        _ => i.checkpointing = v == "true",
    }
}

pub fn sync(
    inputs: RwSignal<Inputs>,
    custom: RwSignal<Option<(Architecture, String)>>,
    import_error: RwSignal<Option<String>>,
) {
    let Some(window) = web_sys::window() else {
        return;
    };
    // A shared link wins; otherwise the reader's last configuration, if the browser
    // lets us keep one (storage can be disabled: then nothing is remembered).
    let storage = window.local_storage().ok().flatten();
    let search = window
        .location()
        .search()
        .ok()
        .filter(|s| s.len() > 1)
        .or_else(|| {
            storage
                .as_ref()
                .and_then(|s| s.get_item(STORAGE_KEY).ok().flatten())
        });
    if let Some(search) = search
        && let Ok(params) = web_sys::UrlSearchParams::new_with_str(&search)
    {
        let found: Vec<(&str, String)> = KEYS
            .iter()
            .filter_map(|k| params.get(k).map(|v| (*k, v)))
            .collect();
        // An imported model travels as its architecture; an edited or damaged one is a
        // Spanish message in the import panel, never a panic.
        let shared = params.get(ARCH_KEY).map(|text| vram::share::decode(&text));
        if !found.is_empty() || shared.is_some() {
            // After hydration, so the static HTML and the first client render agree.
            request_animation_frame(move || {
                match shared {
                    Some(Ok(arch)) => {
                        let summary = import_summary(&arch, &[]);
                        custom.set(Some((arch, summary)));
                    }
                    Some(Err(e)) => import_error.set(Some(e.to_string())),
                    None => {}
                }
                inputs.update(|i| found.into_iter().for_each(|(k, v)| put(i, k, v)));
            });
        }
    }
    Effect::new(move |first: Option<()>| {
        let i = inputs.get();
        let arch = custom.with(|c| c.as_ref().map(|(a, _)| vram::share::encode(a)));
        if first.is_none() {
            return;
        }
        let Ok(params) = web_sys::UrlSearchParams::new() else {
            return;
        };
        for k in KEYS {
            params.append(k, &get(&i, k));
        }
        if let (true, Some(a)) = (i.model == CUSTOM, arch) {
            params.append(ARCH_KEY, &a);
        }
        let query = String::from(params.to_string());
        if let Some(w) = web_sys::window() {
            if let Ok(Some(storage)) = w.local_storage() {
                let _ = storage.set_item(STORAGE_KEY, &query);
            }
            if let Ok(history) = w.history() {
                let _ = history.replace_state_with_url(
                    &wasm_bindgen::JsValue::NULL,
                    "",
                    Some(&format!("?{query}")),
                );
            }
        }
    });
}
