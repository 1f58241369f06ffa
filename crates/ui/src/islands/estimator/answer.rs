//! The estimator's answers in the browser (wasm32 only). The first answer is the
//! build-time HTML. Each later change of the inputs hands their link to the
//! `estimate-web` bundle (`estimate_answers`), whose `answer` export evaluates and
//! renders it with the function that wrote the build-time HTML
//! (`estimate_web::view::answer`). A refused text field is answered here at once,
//! without the bundle.

use estimate_web::view;
use leptos::prelude::*;

use super::browser::query_string;
use super::compute::{Imported, Inputs};
use crate::islands::estimate_answers::Answers;

/// Keeps `answer` (HTML) up to date with the inputs; `pending` is true while the
/// bundle is loading or computing. `remember` hears each link once it has been
/// answered, and whether the answer was an estimate: only a configuration that
/// answered is kept for the next visit, so one that errs or never answers (a tab it
/// froze) is not replayed.
pub fn on_change(
    inputs: RwSignal<Inputs>,
    imported: RwSignal<Imported>,
    answer: RwSignal<String>,
    pending: RwSignal<bool>,
    answers: Answers,
    remember: impl Fn(&str, bool) + Copy + 'static,
) {
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
        match &wanted {
            Err(msg) => {
                answers.drop_pending();
                pending.set(false);
                answer.set(view::error(msg));
            }
            Ok(query) => {
                pending.set(true);
                let asked = query.clone();
                answers.ask(&["answer"], query.clone(), move |result| {
                    pending.set(false);
                    let html = match result {
                        Ok(mut texts) => texts.pop().unwrap_or_default(),
                        Err(e) => view::error(&e),
                    };
                    remember(&asked, !view::is_error(&html));
                    answer.set(html);
                });
            }
        }
        wanted
    });
}
