//! "¿Cabe mi modelo?" on the home page: a catalog model, a GPU and a task, and the
//! verdict with its breakdown, then a link to the full estimator with the same settings.
//!
//! The answer is `diag_worker::quick` (the embeddable widget's evaluation), computed at
//! build time for the first settings and in the diagnostics Web Worker after each
//! change, so the home page carries no estimator engine: it stays as light as a text
//! page until the reader picks something.

use diag_worker::quick::QuickView;
use leptos::either::Either;
use leptos::prelude::*;
use vram::settings::{Field, MODEL_KEY};

use super::background::WorkerUrls;

fn result_view(v: QuickView) -> impl IntoView {
    if v.state.is_empty() {
        return Either::Left(view! { <p class="calc-error" role="alert">{v.verdict}</p> });
    }
    let fits = matches!(v.state.as_str(), "fits" | "serves");
    // SVG attributes, not inline styles: the site's Content-Security-Policy blocks those.
    let mut x = 0u32;
    let parts = v
        .parts
        .iter()
        .map(|p| {
            let at = x;
            x = x.saturating_add(p.permille);
            view! {
                <rect x=at.to_string() y="0" width=p.permille.to_string() height="20"
                    class=p.class.clone()><title>{format!("{}: {}", p.label, p.value)}</title></rect>
            }
        })
        .collect_view();
    let legend = v
        .parts
        .into_iter()
        .map(|p| {
            view! { <li><span class=format!("swatch {}", p.class)></span>{p.label}": "{p.value}</li> }
        })
        .collect_view();
    let cap = v.capacity_permille.min(1000).to_string();
    Either::Right(view! {
        <p class="quick-title">{v.title}</p>
        <p class="quick-total"><strong>{v.total}</strong>" por GPU, de "{v.capacity}</p>
        <p class="quick-verdict" data-verdict=v.state data-cabe=fits.to_string()>{v.verdict}</p>
        <svg class="quick-bar" viewBox="0 0 1000 20" preserveAspectRatio="none" aria-hidden="true">
            {parts}
            <line class="cap-line" x1=cap.clone() x2=cap y1="0" y2="20" />
        </svg>
        <ul class="quick-legend">{legend}</ul>
        <p class="calc-hint">{v.limits}</p>
    })
}

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
    /// Their answer, computed at build time.
    initial: QuickView,
    /// The full estimator's path ("/estimador/"), under the site's base.
    estimator: String,
    /// The diagnostics worker's scripts.
    worker: WorkerUrls,
) -> impl IntoView {
    let model = RwSignal::new(model);
    let gpu = RwSignal::new(gpu);
    let task = RwSignal::new(task);
    let result = RwSignal::new(initial);
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let ask = ask_in_background(result, error, worker);
    let query = move || {
        form_urlencoded::Serializer::new(String::new())
            .append_pair(MODEL_KEY, &model.get_untracked())
            .append_pair(Field::Gpu.spec().key, &gpu.get_untracked())
            .append_pair(Field::Task.spec().key, &task.get_untracked())
            .finish()
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
                <select name=name on:change=move |ev| {
                    value.set(event_target_value(&ev));
                    ask(query());
                }>{options}</select>
            </label>
        }
    };
    let href = move || format!("{}{}", estimator, result.get().query);
    view! {
        <div class="calc quick-estimator" role="group" aria-label="¿Cabe mi modelo?">
            <div class="quick-inputs">
                {select(MODEL_KEY, "Modelo", model, models)}
                {select(Field::Gpu.spec().key, "GPU", gpu, gpus)}
                {select(Field::Task.spec().key, "Qué vas a hacer", task, tasks)}
            </div>
            {move || error.get().map(|e| view! { <p class="calc-error" role="alert">{e}</p> })}
            <output aria-live="polite">{move || result_view(result.get())}</output>
            <p><a class="quick-open" href=href>"Abrir en el estimador completo (lote, contexto, formato, motor…)"</a></p>
        </div>
    }
}

/// A function that has the worker evaluate a query into `result`. On the server there
/// is nothing to do: the first answer is a prop.
fn ask_in_background(
    result: RwSignal<QuickView>,
    error: RwSignal<Option<String>>,
    worker: WorkerUrls,
) -> impl Fn(String) + Copy + 'static {
    #[cfg(target_arch = "wasm32")]
    {
        use diag_worker::protocol::LightReply;
        let on_reply = move |reply: LightReply| match reply {
            LightReply::Quick { result: view, .. } => {
                error.set(None);
                result.set(*view);
            }
            LightReply::Failed { why, .. } => error.set(Some(why)),
            LightReply::Ready | LightReply::Explain { .. } | LightReply::Other => {}
        };
        // Disposed with the island: dropping it terminates the worker.
        let jobs = StoredValue::new_local(super::background::Background::new(worker, on_reply));
        move |query: String| {
            let bytes = js_sys::Uint8Array::from(query.as_bytes()).buffer();
            jobs.update_value(|j| {
                j.send(diag_worker::Job::Quick, "estimación".to_owned(), bytes);
            });
        }
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = (result, error, worker);
        |_: String| {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_answer_renders_without_a_worker() {
        let v = diag_worker::quick::quick("modelo=llama-3.1-8b&gpu=rtx-4090&modo=qlora");
        let html = result_view(v).to_html();
        assert!(html.contains("data-verdict=\"fits\""), "{html}");
        assert!(html.contains("class=\"seg-weights\""), "{html}");
        let bad = QuickView {
            title: String::new(),
            total: String::new(),
            capacity: String::new(),
            verdict: "modelo desconocido".into(),
            state: String::new(),
            parts: Vec::new(),
            capacity_permille: 0,
            limits: String::new(),
            query: String::new(),
        };
        assert!(result_view(bad).to_html().contains("role=\"alert\""));
    }
}
