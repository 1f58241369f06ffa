//! The OOM explainer: paste an error message, a traceback, a log or a
//! `torch.cuda.memory_summary()` table (or open a text file) and read what each number
//! means and what to change, ranked.
//!
//! Everything is `diag_worker::explain` (`oom::explain`, plus the estimator set against
//! a vLLM log), the work behind `vramlab explain`, run in the diagnostics Web Worker so
//! a 16 MiB log never blocks the page; the text never leaves the browser. The example
//! shown before the reader pastes anything is explained at build time and arrives as a
//! prop. Links to the guide are built from the site's base path and only for pages that
//! exist (sitegen passes their list), so a diagnosis that points at a chapter not
//! written yet shows no dead link.

use diag_worker::explain::{ExplainView, PlanView, Reconciliation};
use leptos::prelude::*;

use super::background::WorkerUrls;

/// Largest paste or file explained (a 10 MB log is fine; beyond this, ask for less).
pub const MAX_TEXT_BYTES: usize = 16 << 20;

/// `path` ("/memoria-reservada/#fragmentacion") under `base`, if its page exists.
pub fn guide_href(base: &str, pages: &[String], path: &str) -> Option<String> {
    let page = path.split('#').next().unwrap_or(path);
    pages
        .iter()
        .any(|p| p == page)
        .then(|| format!("{}{}", base.trim_end_matches('/'), path))
}

fn reconciliation_view(r: Reconciliation) -> impl IntoView {
    let rows = r
        .rows
        .into_iter()
        .map(|row| {
            let why = row.why.map(|w| view! { <small>{w}</small> });
            view! {
                <tr>
                    <th scope="row">{row.name}{why}</th>
                    <td data-label="Registro">{row.logged}</td>
                    <td data-label="vramlab">{row.estimated}</td>
                    <td data-label="Diferencia">{row.difference}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="calc-table oom-reconcile">
            <caption>{r.title}</caption>
            <thead><tr><th scope="col">"Término"</th><th scope="col">"Registro"</th><th scope="col">"vramlab"</th><th scope="col">"Diferencia"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

/// The run the log describes, in the estimator: its verdict, and for a failure the
/// ranked plan with each candidate's command, each a link that opens it there.
fn plan_view(p: PlanView, estimator: Option<String>) -> impl IntoView {
    let href = |query: &str| estimator.as_ref().map(|e| format!("{e}?{query}"));
    let open = href(&p.link).map(|href| {
        view! { <p><a href=href>"Abrir este arranque en el estimador"</a></p> }
    });
    let has_steps = !p.candidates.is_empty();
    let steps = p
        .candidates
        .into_iter()
        .map(|c| {
            // Without the estimator's page, a link with no address: its words stay.
            let change = view! { <a href=href(&c.link)>{c.change}</a> };
            let command = c.command.map(|cmd| {
                view! { <div class="code"><pre tabindex="0"><code class="language-sh">{cmd}</code></pre></div> }
            });
            view! { <li data-fits=c.fits.to_string()>{change}": "{c.detail}{command}</li> }
        })
        .collect_view();
    view! {
        <div class="est-plan oom-plan">
            <p class="est-plan-title">{p.title}</p>
            <p>{p.verdict}</p>
            {has_steps.then(|| view! {
                <p>"Para que quepa (primero lo que menos cuesta):"</p>
                <ol>{steps}</ol>
            })}
            {open}
        </div>
    }
}

fn explanation_view(v: ExplainView, base: String, pages: Vec<String>) -> impl IntoView {
    let reconciliation = v.reconciliation.map(reconciliation_view);
    let plan = v
        .plan
        .map(|p| plan_view(p, guide_href(&base, &pages, "/estimador/")));
    let has_numbers = !v.numbers.is_empty();
    let table = v
        .numbers
        .into_iter()
        .map(|(k, value)| view! { <tr><th scope="row">{k}</th><td>{value}</td></tr> })
        .collect_view();
    let causes = v
        .causes
        .into_iter()
        .map(|c| {
            let link = guide_href(&base, &pages, &c.guide)
                .map(|href| view! { <a href=href>"Más en la guía"</a> });
            view! {
                <li class="oom-cause">
                    <strong>{c.title}</strong>
                    <p>{c.explanation}</p>
                    <p class="oom-fix"><span>"Qué hacer: "</span>{c.fix}</p>
                    {link}
                </li>
            }
        })
        .collect_view();
    let notes = v
        .notes
        .into_iter()
        .map(|n| view! { <li>{n}</li> })
        .collect_view();
    // Every other message of the paste (each rank of a multi-GPU log), one line each.
    let count = v.others.len();
    let others = (count > 0).then(|| {
        let items = v
            .others
            .into_iter()
            .map(|line| view! { <li>{line}</li> })
            .collect_view();
        view! {
            <details class="oom-others">
                <summary>{format!("Los otros mensajes del texto ({count})")}</summary>
                <ul>{items}</ul>
            </details>
        }
    });
    let truncated = v.truncated.then(|| {
        view! { <p class="calc-hint">"El texto parece cortado: las cifras que faltan pueden estar en la parte que no se pegó."</p> }
    });
    let era = v.era.map(|text| view! { <p class="calc-hint">{text}</p> });
    view! {
        <p class="oom-kind" data-kind=v.kind><strong>{v.title}</strong></p>
        {era}
        {truncated}
        {has_numbers.then(|| view! {
            <table class="calc-table oom-numbers"><caption>"Las cifras del mensaje"</caption><tbody>{table}</tbody></table>
        })}
        {reconciliation}
        {plan}
        <ol class="oom-causes">{causes}</ol>
        <ul class="est-notes">{notes}</ul>
        {others}
    }
}

#[island]
pub fn OomExplainer(
    /// Text shown before the reader pastes anything.
    example: String,
    /// Its explanation, computed at build time (the page reads without JavaScript, and
    /// hydration needs no worker).
    initial: Option<ExplainView>,
    /// The site's base path ("/" or "/sub/").
    base: String,
    /// Paths of the site's pages ("/memoria-reservada/"), for guide links.
    pages: Vec<String>,
    /// The diagnostics worker's scripts.
    worker: WorkerUrls,
    /// The home page's version: a smaller box with a prompt inside, no file picker.
    compact: bool,
) -> impl IntoView {
    let shown = example.clone();
    let text = RwSignal::new(example);
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let result: RwSignal<Option<ExplainView>> = RwSignal::new(initial);
    // The worker explains the latest text a moment after the reader stops typing; a
    // newer text cancels an older one still being explained.
    let explain = explain_in_background(text, result, error, worker);
    let on_file = move |ev: leptos::ev::Event| {
        #[cfg(target_arch = "wasm32")]
        super::file_text::read_first(
            ev,
            MAX_TEXT_BYTES,
            move |t| {
                text.set(t);
                explain();
            },
            error,
        );
        #[cfg(not(target_arch = "wasm32"))]
        let _ = ev;
    };
    let output = move || {
        let (base, pages) = (base.clone(), pages.clone());
        result.get().map(|v| explanation_view(v, base, pages))
    };
    view! {
        <div class="calc oom-explainer" role="group" aria-label="Explicador de errores de memoria">
            {(!compact).then(|| view! {
                <p class="calc-hint">"Pega el error completo (con el traceback si quieres), un registro o la salida de torch.cuda.memory_summary(). Se analiza en tu navegador; no se envía a ningún sitio."</p>
            })}
            <label><span>"Mensaje de error o memory_summary"</span>
                <textarea name="oom" rows=if compact { "4" } else { "7" } spellcheck="false"
                    placeholder=compact.then_some("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate… (o un registro de vLLM, llama.cpp u Ollama). Se analiza en tu navegador.")
                    // An opened file replaces what the box shows, not only what is explained.
                    prop:value=move || text.get()
                    on:input=move |ev| {
                        let t = event_target_value(&ev);
                        if t.len() > MAX_TEXT_BYTES {
                            error.set(Some("El texto es demasiado largo (máximo 16 MiB): pega solo el final del registro.".into()));
                        } else {
                            error.set(None);
                            text.set(t);
                            explain();
                        }
                    }>{shown}</textarea>
            </label>
            {(!compact).then(|| view! {
                <label><span>"O abre un archivo de texto"</span>
                    <input name="oom-archivo" type="file" accept=".txt,.log,text/plain" on:change=on_file />
                </label>
            })}
            {move || error.get().map(|e| view! { <p class="calc-error" role="alert">{e}</p> })}
            <output aria-live="polite">{output}</output>
        </div>
    }
}

/// How long the reader must pause before the text is explained.
#[cfg(target_arch = "wasm32")]
const PAUSE_MS: u32 = 150;

/// A function that has the worker explain `text` (debounced) into `result`. On the
/// server there is nothing to do: the example's explanation is a prop.
fn explain_in_background(
    text: RwSignal<String>,
    result: RwSignal<Option<ExplainView>>,
    error: RwSignal<Option<String>>,
    worker: WorkerUrls,
) -> impl Fn() + Copy + 'static {
    #[cfg(target_arch = "wasm32")]
    {
        use diag_worker::protocol::LightReply;
        let on_reply = move |reply: LightReply| match reply {
            LightReply::Explain { result: view, .. } => result.set(Some(*view)),
            LightReply::Failed { why, .. } => error.set(Some(why)),
            LightReply::Ready | LightReply::Other => {}
        };
        // Disposed with the island: dropping them cancels the timer and terminates the
        // worker.
        let jobs = StoredValue::new_local(super::background::Background::new(worker, on_reply));
        let pending: StoredValue<Option<gloo_timers::callback::Timeout>, LocalStorage> =
            StoredValue::new_local(None);
        move || {
            let timer = gloo_timers::callback::Timeout::new(PAUSE_MS, move || {
                let t = text.get_untracked();
                if t.trim().is_empty() {
                    result.set(None);
                    return;
                }
                let bytes = js_sys::Uint8Array::from(t.as_bytes()).buffer();
                jobs.update_value(|j| {
                    j.send(diag_worker::Job::Explain, "texto".to_owned(), bytes);
                });
            });
            // Replacing the stored timer drops (cancels) the previous one.
            pending.set_value(Some(timer));
        }
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = (text, result, error, worker);
        || {}
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn guide_links_respect_base_and_missing_pages() {
        let pages = vec!["/memoria-reservada/".to_owned()];
        assert_eq!(
            guide_href("/sub/", &pages, "/memoria-reservada/#fragmentacion").unwrap(),
            "/sub/memoria-reservada/#fragmentacion"
        );
        assert_eq!(
            guide_href("/", &pages, "/memoria-reservada/").unwrap(),
            "/memoria-reservada/"
        );
        assert!(guide_href("/", &pages, "/estrategias/").is_none());
    }

    #[test]
    fn a_real_message_gives_numbers_and_a_ranked_diagnosis() {
        let msg = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.23 GiB is free. Including non-PyTorch memory, this process has 22.41 GiB memory in use. Of the allocated memory 18.02 GiB is allocated by PyTorch, and 3.87 GiB is reserved by PyTorch but unallocated.";
        let v = diag_worker::explain::explain(msg);
        let html = explanation_view(v, "/".into(), vec!["/memoria-reservada/".into()]).to_html();
        assert!(
            html.contains("Reservada sin asignar (caché)") && html.contains("3,87 GiB"),
            "{html}"
        );
        assert!(html.contains("/memoria-reservada/#fragmentacion"), "{html}");
        assert!(diag_worker::explain::explain("hola").title == "No reconozco este texto");
    }
}
