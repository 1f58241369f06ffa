//! The estimator's browser half (wasm32 only): the two-way sync between the inputs
//! (with what was imported) and the page's query string and what the browser keeps
//! (`remembered`, in `localStorage`). Settings are
//! read with `vram::Settings::read` and written from `Settings::pairs`, the functions
//! the widget and the CLI's round-trip test use, so a link means the same everywhere.
//! The browser's `URLSearchParams` does the URL encoding (no encoder in the bundle).

use leptos::prelude::*;

use super::compute::{CUSTOM, Imported, Inputs};
use super::import_panel::State;
use estimate_web::view::link_weights;
use vram::Settings;
use vram::share::ARCH_KEY;

use super::remembered;

/// A Hub id to import on arrival (what the panel's form submits without JavaScript).
const HUB_ID_KEY: &str = "hf";

/// The link's pairs as a query string, encoded by the browser's `URLSearchParams`.
pub fn query_string(pairs: Vec<(&'static str, String)>) -> Option<String> {
    // Raw web_sys: gloo has no API to build a URL query string.
    let params = web_sys::UrlSearchParams::new().ok()?;
    for (k, v) in pairs {
        params.append(k, &v);
    }
    Some(String::from(params.to_string()))
}

/// The model a link names: a catalog id or the imported one; anything else is a
/// problem and the page keeps its model.
fn shared_model(id: &str) -> Result<String, String> {
    if id == CUSTOM || vram::catalog::model(id).is_some() {
        Ok(id.to_owned())
    } else {
        Err(format!(
            "No hay ningún modelo «{}» en el catálogo.",
            vram::units::clip(id)
        ))
    }
}

/// One sentence for the values a link brought that could not be used.
fn link_problem(problems: &[String]) -> Option<String> {
    let (first, rest) = problems.split_first()?;
    Some(match rest.len() {
        0 => format!("El enlace trae un valor que no vale y se ignora. {first}"),
        n => format!(
            "El enlace trae {} valores que no valen y se ignoran. El primero: {first}",
            n + 1
        ),
    })
}

pub fn sync(
    inputs: RwSignal<Inputs>,
    state: State,
    link: RwSignal<Option<String>>,
    storage_note: RwSignal<Option<String>>,
    gpu_hint: RwSignal<Option<super::GpuHint>>,
    answers: crate::islands::estimate_answers::Answers,
) {
    // Raw web_sys for the URL and history: gloo has no API for them that
    // `URLSearchParams` (which does the encoding) and `replaceState` do not cover.
    let Some(window) = web_sys::window() else {
        return;
    };
    // A shared link wins; otherwise the reader's last configuration, if the browser
    // lets us keep one (storage can be disabled: then nothing is remembered).
    if let Some(base) = remembered::hub() {
        state.hub_base.set(base);
    }
    let address = window.location().search().ok().filter(|s| s.len() > 1);
    // A remembered configuration that no longer reads cleanly is forgotten, not
    // replayed on every visit.
    let from_storage = address.is_none();
    let search = address.or_else(remembered::query);
    let gpu_given = search.as_deref().is_some_and(|q| {
        web_sys::UrlSearchParams::new_with_str(q)
            .is_ok_and(|p| p.get(vram::settings::Field::Gpu.spec().key).is_some())
    });
    if let Some(search) = search
        && let Ok(params) = web_sys::UrlSearchParams::new_with_str(&search)
    {
        let get = |k: &str| params.get(k);
        let (settings, errors) = Settings::read(&Settings::web_default(), get);
        let model = get(vram::settings::MODEL_KEY).map(|m| shared_model(&m));
        // An imported model travels as its architecture and weights; an edited or
        // damaged one is a Spanish message in the import panel, never a panic. The
        // importer bundle reads the architecture (compact text, or the JSON of older
        // links) and gives its summary: this page keeps it as text.
        let arch_text = get(ARCH_KEY);
        let weights = link_weights(&get)
            .map(|w| w.map_err(|e| format!("El enlace trae un tamaño de pesos dañado: {e}")));
        let hub_id = get(HUB_ID_KEY).filter(|_| arch_text.is_none());
        let mut problems: Vec<String> = errors.iter().map(ToString::to_string).collect();
        // After hydration, so the static HTML and the first client render agree.
        request_animation_frame(move || {
            let mut imported = Imported::default();
            let mut import_problems = Vec::new();
            match weights {
                Some(Ok(w)) => imported.weights = Some(w),
                Some(Err(e)) => import_problems.push(e),
                None => {}
            }
            state.imported.set(imported);
            if from_storage && !(import_problems.is_empty() && problems.is_empty()) {
                remembered::forget_query();
            }
            state
                .error
                .set((!import_problems.is_empty()).then(|| import_problems.join(" ")));
            let model = match model {
                Some(Ok(m)) => m,
                Some(Err(e)) => {
                    problems.push(e);
                    inputs.with_untracked(|i| i.model.clone())
                }
                None => inputs.with_untracked(|i| i.model.clone()),
            };
            inputs.set(Inputs::new(model, settings));
            link.set(link_problem(&problems));
            if let Some(id) = hub_id {
                state.import_repo(id);
            }
            if let Some(text) = arch_text {
                state.import_shared(text, from_storage);
            }
        });
    }
    // Only when neither a link nor the last visit chose the card.
    if !gpu_given {
        // After the link's settings are applied (the frame callback above runs first).
        request_animation_frame(move || suggest_gpu(inputs, gpu_hint, answers));
    }
    // A refused write is said once and not retried on every change.
    let note = move |n: Option<String>| {
        if n.is_some() && storage_note.with_untracked(Option::is_none) {
            storage_note.set(n);
        }
    };
    Effect::new(move |first: Option<()>| {
        let base = state.hub_base.get();
        if first.is_some() {
            note(remembered::save_hub(&base));
        }
    });
    Effect::new(move |first: Option<()>| {
        let pairs = state.imported.with(|m| inputs.with(|i| i.link_pairs(m)));
        if first.is_none() {
            return;
        }
        let Some(query) = query_string(pairs) else {
            return;
        };
        // Remembered once answered (`remember`); the address follows every change.
        // Raw web_sys: gloo has no `history.replaceState` (gloo-history is not used).
        if let Some(w) = web_sys::window()
            && let Ok(history) = w.history()
        {
            let _ = history.replace_state_with_url(
                &wasm_bindgen::JsValue::NULL,
                "",
                Some(&format!("?{query}")),
            );
        }
    });
}

/// What the answers tell the reader's storage: a configuration that answered with an
/// estimate is remembered; one that answered with an error is forgotten if it was the
/// remembered one (a link refused since, say), so it is not replayed.
pub fn remember(storage_note: RwSignal<Option<String>>) -> impl Fn(&str, bool) + Copy + 'static {
    move |query: &str, answered: bool| {
        if answered {
            let n = remembered::save_query(query);
            if n.is_some() && storage_note.with_untracked(Option::is_none) {
                storage_note.set(n);
            }
        } else if remembered::query().as_deref() == Some(query) {
            remembered::forget_query();
        }
    }
}

/// Offers the reader's GPU as their browser names it (`islands::reader_gpu`): the card
/// its description names is chosen (if the reader has not chosen one meanwhile), said
/// so under the picker; an architecture alone lists its cards to pick from.
fn suggest_gpu(
    inputs: RwSignal<Inputs>,
    hint: RwSignal<Option<super::GpuHint>>,
    answers: crate::islands::estimate_answers::Answers,
) {
    let untouched = Settings::web_default().gpu.map(|g| g.id.clone());
    wasm_bindgen_futures::spawn_local(async move {
        let Some(guess) = crate::islands::reader_gpu::suggestion(answers).await else {
            return;
        };
        let current = inputs.with_untracked(|i| i.settings.gpu.map(|g| g.id.clone()));
        if current != untouched {
            return;
        }
        let chosen = guess.chosen.map(|(id, name)| {
            inputs.update(|i| i.choose(vram::settings::Field::Gpu, &id));
            name
        });
        hint.set(Some(super::GpuHint {
            said: guess.said,
            chosen,
            cards: guess.cards,
        }));
    });
}
