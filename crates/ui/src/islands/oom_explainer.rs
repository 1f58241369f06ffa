//! The OOM explainer: paste an error message, a traceback, a log or a
//! `torch.cuda.memory_summary()` table (or open a text file) and read what each number
//! means and what to change, ranked.
//!
//! Everything is `oom::explain`, the function behind `vramlab explain`; the text never
//! leaves the browser. Links to the guide are built from the site's base path and only
//! for pages that exist (sitegen passes their list), so a diagnosis that points at a
//! chapter not written yet shows no dead link.

use leptos::prelude::*;
use oom::{Decoded, Explanation, Kind, explain};

/// Largest paste or file explained (a 10 MB log is fine; beyond this, ask for less).
pub const MAX_TEXT_BYTES: usize = 16 << 20;

/// (label, value) rows for every number the message gave.
fn rows(d: &Decoded) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let mut bytes = |label: &'static str, v: Option<u64>| {
        if let Some(b) = v {
            out.push((label, oom::format::both(b)));
        }
    };
    // Only PyTorch's caching allocator rounds requests into blocks; the host and
    // llama.cpp messages print what was asked, and free host memory is RAM.
    let outside = matches!(d.kind, Kind::GgmlOom | Kind::HostOom);
    bytes(
        if outside {
            "Se pidió"
        } else {
            "Se pidió (bloque redondeado)"
        },
        d.requested_bytes,
    );
    bytes("Capacidad total de la GPU", d.total_bytes);
    bytes(
        if d.kind == Kind::HostOom {
            "RAM disponible"
        } else {
            "Libre en la GPU"
        },
        d.free_bytes,
    );
    bytes(
        "En uso por este proceso (todo incluido)",
        d.process_in_use_bytes,
    );
    bytes("Asignada por PyTorch (tensores vivos)", d.allocated_bytes);
    bytes(
        "Reservada sin asignar (caché)",
        d.reserved_unallocated_bytes,
    );
    bytes("Reservada en total por PyTorch", d.reserved_total_bytes);
    bytes("En pools privados (CUDA Graphs)", d.private_pools_bytes);
    bytes("Límite permitido al proceso", d.allowed_bytes);
    bytes("Otras asignaciones (MPS)", d.other_allocations_bytes);
    bytes("Pico de memoria asignada", d.peak_allocated_bytes);
    bytes("Pico de memoria reservada", d.peak_reserved_bytes);
    bytes(
        "No liberable (huecos en bloques en caché)",
        d.non_releasable_bytes,
    );
    if let Some(n) = d.cuda_malloc_retries {
        out.push(("cudaMalloc retries", oom::format::count(n)));
    }
    if let Some(n) = d.cuda_ooms {
        out.push(("CUDA OOMs", oom::format::count(n)));
    }
    if let Some(i) = d.gpu_index {
        out.push(("GPU", i.to_string()));
    }
    if let Some(m) = &d.vllm_memory {
        out.extend(oom::format::vllm_rows(m));
    }
    if let Some(b) = &d.backend {
        out.push(("Dispositivo del búfer", b.clone()));
    }
    if let Some(b) = d.buffer.as_deref() {
        out.push((
            "Para qué era el búfer",
            oom::format::buffer_purpose(b).to_owned(),
        ));
    }
    for p in &d.other_processes {
        let who = if p.likely_self {
            "Proceso (probablemente este)"
        } else {
            "Otro proceso"
        };
        out.push((
            who,
            format!("PID {}: {}", p.pid, oom::format::both(p.bytes)),
        ));
    }
    out
}

/// `path` ("/memoria-reservada/#fragmentacion") under `base`, if its page exists.
pub fn guide_href(base: &str, pages: &[String], path: &str) -> Option<String> {
    let page = path.split('#').next().unwrap_or(path);
    pages
        .iter()
        .any(|p| p == page)
        .then(|| format!("{}{}", base.trim_end_matches('/'), path))
}

fn explanation_view(e: Explanation, base: String, pages: Vec<String>) -> impl IntoView {
    let d = &e.primary;
    let numbers = rows(d);
    let has_numbers = !numbers.is_empty();
    let table = numbers
        .into_iter()
        .map(|(k, v)| view! { <tr><th scope="row">{k}</th><td>{v}</td></tr> })
        .collect_view();
    let causes = e
        .diagnosis
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
    let notes = e
        .notes
        .into_iter()
        .map(|n| view! { <li>{n}</li> })
        .collect_view();
    // Every other message of the paste (each rank of a multi-GPU log), one line each.
    let others = (!e.messages.is_empty()).then(|| {
        let items = e
            .messages
            .iter()
            .map(|m| {
                let numbers = oom::format::key_numbers(m);
                let line = if numbers.is_empty() {
                    m.kind.title().to_owned()
                } else {
                    format!("{}: {numbers}", m.kind.title())
                };
                view! { <li>{line}</li> }
            })
            .collect_view();
        view! {
            <details class="oom-others">
                <summary>{format!("Los otros mensajes del texto ({})", e.messages.len())}</summary>
                <ul>{items}</ul>
            </details>
        }
    });
    let truncated = d.truncated.then(|| {
        view! { <p class="calc-hint">"El texto parece cortado: las cifras que faltan pueden estar en la parte que no se pegó."</p> }
    });
    let era = d.pytorch_era.map(|era| {
        let text = match era {
            oom::Era::V2018 => "Formato de PyTorch 1.0–1.3 (2018–2019).",
            oom::Era::V14To20 => "Formato de PyTorch 1.4–2.0.",
            oom::Era::V21Plus => "Formato de PyTorch 2.1 o posterior.",
        };
        view! { <p class="calc-hint">{text}</p> }
    });
    view! {
        <p class="oom-kind" data-kind=format!("{:?}", d.kind)><strong>{Kind::title(d.kind)}</strong></p>
        {era}
        {truncated}
        {has_numbers.then(|| view! {
            <table class="calc-table oom-numbers"><caption>"Las cifras del mensaje"</caption><tbody>{table}</tbody></table>
        })}
        <ol class="oom-causes">{causes}</ol>
        <ul class="est-notes">{notes}</ul>
        {others}
    }
}

#[island]
pub fn OomExplainer(
    /// Text shown (and explained) before the reader pastes anything.
    example: String,
    /// The site's base path ("/" or "/sub/").
    base: String,
    /// Paths of the site's pages ("/memoria-reservada/"), for guide links.
    pages: Vec<String>,
) -> impl IntoView {
    let initial = example.clone();
    let text = RwSignal::new(example);
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let result = Memo::new(move |_| text.with(|t| (!t.trim().is_empty()).then(|| explain(t))));
    let on_file = move |ev: leptos::ev::Event| {
        #[cfg(target_arch = "wasm32")]
        super::file_text::read_first(ev, MAX_TEXT_BYTES, move |t| text.set(t), error);
        #[cfg(not(target_arch = "wasm32"))]
        let _ = ev;
    };
    let output = move || {
        let (base, pages) = (base.clone(), pages.clone());
        result.get().map(|e| explanation_view(e, base, pages))
    };
    view! {
        <div class="calc oom-explainer" role="group" aria-label="Explicador de errores de memoria">
            <p class="calc-hint">"Pega el error completo (con el traceback si quieres), un registro o la salida de torch.cuda.memory_summary(). Se analiza en tu navegador; no se envía a ningún sitio."</p>
            <label><span>"Mensaje de error o memory_summary"</span>
                <textarea name="oom" rows="7" spellcheck="false"
                    // An opened file replaces what the box shows, not only what is explained.
                    prop:value=move || text.get()
                    on:input=move |ev| {
                        let t = event_target_value(&ev);
                        if t.len() > MAX_TEXT_BYTES {
                            error.set(Some("El texto es demasiado largo (máximo 16 MiB): pega solo el final del registro.".into()));
                        } else {
                            error.set(None);
                            text.set(t);
                        }
                    }>{initial}</textarea>
            </label>
            <label><span>"O abre un archivo de texto"</span>
                <input name="oom-archivo" type="file" accept=".txt,.log,text/plain" on:change=on_file />
            </label>
            {move || error.get().map(|e| view! { <p class="calc-error" role="alert">{e}</p> })}
            <output aria-live="polite">{output}</output>
        </div>
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
        let e = explain(msg);
        let r = rows(&e.primary);
        assert!(
            r.iter()
                .any(|(k, v)| k.starts_with("Reservada sin asignar") && v.contains("3,87 GiB")),
            "{r:?}"
        );
        assert_eq!(e.diagnosis.first().unwrap().id, oom::CauseId::Fragmentation);
        assert_eq!(
            Kind::title(explain("hola").primary.kind),
            "No reconozco este texto"
        );
    }
}
