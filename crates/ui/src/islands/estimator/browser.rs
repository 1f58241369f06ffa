//! The estimator's browser half (wasm32 only): the two-way sync between the inputs
//! (with what was imported) and the page's query string and localStorage.

use leptos::prelude::*;

use super::compute::{CUSTOM, Imported, Inputs};
use super::import_panel::State;
use vram::import::StoredWeights;

const STORAGE_KEY: &str = "vramlab.estimador";
/// The reader's Hub address, when it is not the default.
const HUB_KEY: &str = "vramlab.hub";

/// The query key that carries an imported architecture (`vram::share`).
const ARCH_KEY: &str = "arquitectura";
/// Exact weights: bytes, parameters and where they came from.
const WEIGHTS_KEY: &str = "pesos";
const PARAMS_KEY: &str = "parametros";
const SOURCE_KEY: &str = "origen";
/// A Hub id to import on arrival (what the panel's form submits without JavaScript).
const HUB_ID_KEY: &str = "hf";

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

/// Exact weights from a link, when it carries them.
fn shared_weights(params: &web_sys::UrlSearchParams) -> Option<Result<StoredWeights, String>> {
    let bytes = params.get(WEIGHTS_KEY)?;
    Some(
        vram::share::weights(
            &bytes,
            params.get(PARAMS_KEY).as_deref(),
            params.get(SOURCE_KEY).as_deref(),
        )
        .map_err(|e| format!("El enlace trae un tamaño de pesos dañado: {e}")),
    )
}

pub fn sync(inputs: RwSignal<Inputs>, state: State) {
    let Some(window) = web_sys::window() else {
        return;
    };
    // A shared link wins; otherwise the reader's last configuration, if the browser
    // lets us keep one (storage can be disabled: then nothing is remembered).
    let storage = window.local_storage().ok().flatten();
    if let Some(base) = storage
        .as_ref()
        .and_then(|s| s.get_item(HUB_KEY).ok().flatten())
    {
        state.hub_base.set(base.chars().take(200).collect());
    }
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
        // An imported model travels as its architecture and weights; an edited or
        // damaged one is a Spanish message in the import panel, never a panic.
        let shared = params.get(ARCH_KEY).map(|text| vram::share::decode(&text));
        let weights = shared_weights(&params);
        let hub_id = params.get(HUB_ID_KEY).filter(|_| shared.is_none());
        if !found.is_empty() || shared.is_some() || weights.is_some() || hub_id.is_some() {
            // After hydration, so the static HTML and the first client render agree.
            request_animation_frame(move || {
                let mut imported = Imported::default();
                let mut problems = Vec::new();
                match shared {
                    Some(Ok(arch)) => {
                        let summary = vram::import::arch_summary(&arch, None, &[]);
                        imported.arch = Some((arch, summary));
                    }
                    Some(Err(e)) => problems.push(e.to_string()),
                    None => {}
                }
                match weights {
                    Some(Ok(w)) => imported.weights = Some(w),
                    Some(Err(e)) => problems.push(e),
                    None => {}
                }
                state.imported.set(imported);
                state
                    .error
                    .set((!problems.is_empty()).then(|| problems.join(" ")));
                inputs.update(|i| found.into_iter().for_each(|(k, v)| put(i, k, v)));
                if let Some(id) = hub_id {
                    state.import_repo(id);
                }
            });
        }
    }
    Effect::new(move |first: Option<()>| {
        let base = state.hub_base.get();
        if first.is_some()
            && let Some(storage) = web_sys::window().and_then(|w| w.local_storage().ok().flatten())
        {
            let _ = if base == vram::hub::DEFAULT_HUB {
                storage.remove_item(HUB_KEY)
            } else {
                storage.set_item(HUB_KEY, &base)
            };
        }
    });
    Effect::new(move |first: Option<()>| {
        let i = inputs.get();
        let (arch, weights) = state.imported.with(|m| {
            (
                m.arch.as_ref().map(|(a, _)| vram::share::encode(a)),
                m.weights.clone(),
            )
        });
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
        if let Some(w) = weights {
            params.append(WEIGHTS_KEY, &w.bytes.to_string());
            if let Some(p) = w.params {
                params.append(PARAMS_KEY, &p.to_string());
            }
            params.append(SOURCE_KEY, &w.source);
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
