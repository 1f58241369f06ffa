//! The estimator's answers in the browser (wasm32 only). The first answer is the
//! build-time HTML. Each later change of the inputs hands their link to the
//! `estimate-web` bundle, fetched on the first change (through `lazy-web`), whose
//! `answer` export evaluates and renders it with the function that wrote the build-time
//! HTML (`estimate_web::view::answer`). The page shows the answer to its last change;
//! a refused text field is answered here at once, without the bundle.

use estimate_web::view;
use leptos::prelude::*;

use super::browser::query_string;
use super::compute::{Imported, Inputs};

/// Keeps `answer` (HTML) up to date with the inputs; `pending` is true while the
/// bundle is loading or computing. `urls` are the bundle's glue and wasm.
pub fn on_change(
    inputs: RwSignal<Inputs>,
    imported: RwSignal<Imported>,
    answer: RwSignal<String>,
    pending: RwSignal<bool>,
    urls: (String, String),
) {
    // Which change the shown answer belongs to: a slower, earlier one is dropped.
    let latest = StoredValue::new(0u32);
    // What the answer depends on: the link, or the message of a refused field.
    Effect::new(move |shown: Option<Result<String, String>>| {
        let wanted = match inputs.with(Inputs::first_error) {
            Some(e) => Err(e.to_string()),
            None => Ok(imported
                .with(|m| inputs.with(|i| query_string(i.link_pairs(m))))
                .unwrap_or_default()),
        };
        // The first run is what the build-time HTML shows.
        if shown.is_none() || shown.as_ref() == Some(&wanted) {
            return wanted;
        }
        let id = latest.get_value().wrapping_add(1);
        latest.set_value(id);
        match &wanted {
            Err(msg) => {
                pending.set(false);
                answer.set(view::error(msg));
            }
            Ok(query) => {
                pending.set(true);
                let (query, (js, wasm)) = (query.clone(), urls.clone());
                leptos::task::spawn_local(async move {
                    let html = match lazy_web::load("del estimador", &js, &wasm).await {
                        Ok(module) => lazy_web::call(&module, "answer", &[&query.as_str().into()])
                            .await
                            .ok()
                            .and_then(|v| v.as_string())
                            .unwrap_or_else(|| {
                                view::error("El estimador no pudo calcular esta configuración.")
                            }),
                        Err(e) => view::error(&e),
                    };
                    if latest.get_value() == id {
                        pending.set(false);
                        answer.set(html);
                    }
                });
            }
        }
        wanted
    });
}
