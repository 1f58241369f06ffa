//! "¿Cabe mi modelo?" on the home page: a catalog model, a GPU and a task, and the
//! verdict with its breakdown, then a link to the full estimator with the same settings.
//!
//! The answer is HTML from `estimate_web::quick` (the embeddable widget's evaluation),
//! written at build time for the first settings and by the `estimate-web` bundle after
//! each change, so the home page carries neither the engine nor the answer's views
//! until the reader picks something. The reader's GPU, as their browser names it
//! (`islands::reader_gpu`), is offered under the picker, as on the estimator page.

use leptos::prelude::*;
use vram::settings::{Field, MODEL_KEY};

#[island]
pub fn QuickEstimator(
    /// (id, name) of every catalog model, in catalog order.
    models: Vec<(String, String)>,
    /// (id, label) of every catalog GPU.
    gpus: Vec<(String, String)>,
    /// (web id, label) of every task.
    tasks: Vec<(String, String)>,
    /// The settings shown first: model, GPU and task ids.
    model: String,
    gpu: String,
    task: String,
    /// The estimator page's query for them (`estimate_web::quick::link`).
    link: String,
    /// The full estimator's path ("/estimador/"), under the site's base.
    estimator: String,
    /// URL of the `estimate-web` JavaScript glue (loaded on the first change).
    estimate_js: String,
    /// URL of the `estimate-web` wasm module.
    estimate_wasm: String,
) -> impl IntoView {
    let query_of = |model: &str, gpu: &str, task: &str| {
        form_urlencoded::Serializer::new(String::new())
            .append_pair(MODEL_KEY, model)
            .append_pair(Field::Gpu.spec().key, gpu)
            .append_pair(Field::Task.spec().key, task)
            .finish()
    };
    // The answer as HTML: written here on the server; the browser starts from "" and
    // hydration keeps the element's content until the first change.
    #[cfg(not(target_arch = "wasm32"))]
    let first = estimate_web::quick::quick(&query_of(&model, &gpu, &task)).html;
    #[cfg(target_arch = "wasm32")]
    let first = String::new();
    let answer = RwSignal::new(first);
    let link = RwSignal::new(link);
    let pending = RwSignal::new(false);
    let model = RwSignal::new(model);
    let gpu = RwSignal::new(gpu);
    let task = RwSignal::new(task);
    #[cfg(target_arch = "wasm32")]
    let answers = super::estimate_answers::Answers::new(estimate_js.clone(), estimate_wasm.clone());
    let ask = ask_bundle(answer, link, pending, (estimate_js, estimate_wasm));
    // What the browser said of its GPU: the card chosen from it, or its cards to pick
    // from.
    let hint: RwSignal<Option<vram::reader_gpu::Suggestion>> = RwSignal::new(None);
    let query = move || {
        query_of(
            &model.get_untracked(),
            &gpu.get_untracked(),
            &task.get_untracked(),
        )
    };
    let select = |name: &'static str,
                  label: &'static str,
                  value: RwSignal<String>,
                  options: Vec<(String, String)>| {
        let options = options
            .into_iter()
            .map(|(id, text)| {
                let selected = value.get_untracked() == id;
                view! { <option value=id selected=selected>{text}</option> }
            })
            .collect_view();
        view! {
            <label><span>{label}</span>
                <select name=name prop:value=move || value.get() on:change=move |ev| {
                    value.set(event_target_value(&ev));
                    ask(query());
                }>{options}</select>
            </label>
        }
    };
    #[cfg(target_arch = "wasm32")]
    {
        let untouched = gpu.get_untracked();
        wasm_bindgen_futures::spawn_local(async move {
            let Some(s) = super::reader_gpu::suggestion(answers).await else {
                return;
            };
            // The reader picked one meanwhile: theirs stands.
            if gpu.get_untracked() != untouched {
                return;
            }
            if let Some((id, _)) = &s.chosen {
                gpu.set(id.clone());
                ask(query());
            }
            hint.set(Some(s));
        });
    }
    let pick = move |id: String| {
        hint.set(None);
        gpu.set(id);
        ask(query());
    };
    let hint_view = move || {
        hint.get().map(|s| {
            let text = vram::reader_gpu::Suggestion::sentence(
                &s.said,
                s.chosen.as_ref().map(|(_, name)| name.as_str()),
            );
            let buttons = s
                .cards
                .into_iter()
                .map(|(id, name)| view! { <button type="button" on:click=move |_| pick(id.clone())>{name}</button> })
                .collect_view();
            view! { <p class="calc-hint est-gpu-hint" role="status">{text} " " {buttons}</p> }
        })
    };
    let href = move || format!("{}{}", estimator, link.get());
    view! {
        <div class="calc quick-estimator" role="group" aria-label="¿Cabe mi modelo?">
            <div class="quick-inputs">
                {select(MODEL_KEY, "Modelo", model, models)}
                {select(Field::Gpu.spec().key, "GPU", gpu, gpus)}
                {select(Field::Task.spec().key, "Qué vas a hacer", task, tasks)}
            </div>
            {hint_view}
            <output aria-live="polite" aria-busy=move || pending.get().to_string()
                inner_html=move || answer.get()></output>
            <p><a class="quick-open" href=href>"Abrir en el estimador completo: la orden para lanzarlo, el lote, el contexto, el formato, el motor…"</a></p>
        </div>
    }
}

/// A function that has the `estimate-web` bundle answer a query into `answer` and
/// `link`. On the server there is nothing to do: the first answer is written there.
fn ask_bundle(
    answer: RwSignal<String>,
    link: RwSignal<String>,
    pending: RwSignal<bool>,
    urls: (String, String),
) -> impl Fn(String) + Copy + 'static {
    #[cfg(target_arch = "wasm32")]
    {
        let answers = super::estimate_answers::Answers::new(urls.0, urls.1);
        move |query: String| {
            pending.set(true);
            answers.ask(&["quick_html", "quick_link"], query, move |result| {
                pending.set(false);
                match result {
                    Ok(texts) => {
                        let mut texts = texts.into_iter();
                        answer.set(texts.next().unwrap_or_default());
                        link.set(texts.next().unwrap_or_default());
                    }
                    Err(e) => answer.set(estimate_web::view::error(&e)),
                }
            });
        }
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = (answer, link, pending, urls);
        |_: String| {}
    }
}
