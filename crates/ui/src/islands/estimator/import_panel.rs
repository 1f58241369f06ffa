//! The estimator's "use my own model" panel: a Hugging Face id, a pasted config.json,
//! a chosen or dropped file (.json, .safetensors, .gguf: only a weights file's header is
//! read), the Hub's address for mirrors, and a way to forget what was imported.

use leptos::prelude::*;
use vram::hub;

use super::compute::{CUSTOM, Imported, Inputs};

/// The panel's signals. `Copy`, so every handler can hold one.
#[derive(Clone, Copy)]
pub struct State {
    pub inputs: RwSignal<Inputs>,
    pub imported: RwSignal<Imported>,
    pub error: RwSignal<Option<String>>,
    /// What is being read or fetched right now.
    pub busy: RwSignal<Option<String>>,
    /// The Hub's base URL (a mirror, or a test server), like `HF_ENDPOINT`.
    pub hub_base: RwSignal<String>,
    /// Asked open from outside (the model search's «Usar mi propio modelo»).
    pub opened: RwSignal<bool>,
    /// The `import-web` bundle's glue and wasm URLs (only the browser loads it).
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub module: StoredValue<(String, String)>,
    /// Pastes so far: an answer is shown only if no newer paste was made.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pastes: StoredValue<u32>,
}

impl State {
    pub fn new(
        inputs: RwSignal<Inputs>,
        imported: RwSignal<Imported>,
        error: RwSignal<Option<String>>,
        module: (String, String),
    ) -> Self {
        State {
            inputs,
            imported,
            error,
            busy: RwSignal::new(None),
            hub_base: RwSignal::new(hub::DEFAULT_HUB.to_owned()),
            opened: RwSignal::new(false),
            module: StoredValue::new(module),
            pastes: StoredValue::new(0),
        }
    }

    /// Shows the outcome of an import: a new architecture selects the custom model, a
    /// file adds to what was imported before (a config, then its weights).
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub fn apply(self, result: Result<Imported, String>) {
        self.show(result, false, false);
    }

    /// Shows the outcome of an import that replaces everything (a Hub repository).
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub fn replace(self, result: Result<Imported, String>) {
        self.show(result, true, false);
    }

    /// `keep_error`: a link's architecture arriving does not clear what the link's
    /// other values were refused for.
    fn show(self, result: Result<Imported, String>, replace: bool, keep_error: bool) {
        self.busy.set(None);
        match result {
            Ok(new) => {
                let has_arch = new.arch.is_some();
                self.imported
                    .update(|cur| *cur = if replace { new } else { cur.merge(new) });
                if !keep_error {
                    self.error.set(None);
                }
                if has_arch {
                    self.inputs.update(|i| i.model = CUSTOM.into());
                }
            }
            Err(e) => self.error.set(Some(e)),
        }
    }

    /// Drops what was imported; the page (and its remembered state) go back to a preset.
    pub fn forget(self) {
        self.imported.set(Imported::default());
        self.error.set(None);
        self.inputs.update(|i| {
            if i.model == CUSTOM {
                i.model = vram::catalog::models()
                    .first()
                    .map(|m| m.id.clone())
                    .unwrap_or_default();
            }
        });
    }

    /// Imports `org/model` from the Hub (wasm32 only; the static page has no fetch).
    /// The importer bundle checks the id and the address, so their messages cost this
    /// bundle nothing.
    pub fn import_repo(self, text: String) {
        let id = text.trim().to_owned();
        if id.is_empty() {
            return;
        }
        self.error.set(None);
        self.busy.set(Some(format!("Pidiendo {id} al Hub…")));
        #[cfg(target_arch = "wasm32")]
        wasm_bindgen_futures::spawn_local(async move {
            let urls = self.module.get_value();
            let base = self.hub_base.get_untracked();
            self.replace(super::remote::import_repo(&urls, &base, &id).await);
        });
    }

    /// Reads a pasted config.json through the importer bundle (which holds every JSON
    /// decoder). Only the latest paste's answer is shown.
    fn paste(self, text: String) {
        #[cfg(target_arch = "wasm32")]
        {
            let ticket = self.pastes.get_value().wrapping_add(1);
            self.pastes.set_value(ticket);
            wasm_bindgen_futures::spawn_local(async move {
                let urls = self.module.get_value();
                let result = super::remote::read_text(&urls, &text).await;
                if self.pastes.get_value() == ticket {
                    self.apply(result);
                }
            });
        }
        #[cfg(not(target_arch = "wasm32"))]
        let _ = (self, text);
    }

    /// Reads the architecture a link carried (compact text, or the JSON of links
    /// written before it), through the importer bundle, which checks it and sums it up.
    /// A refused one that came from the remembered configuration is forgotten, so it is
    /// not replayed.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub fn import_shared(self, text: String, remembered: bool) {
        #[cfg(target_arch = "wasm32")]
        wasm_bindgen_futures::spawn_local(async move {
            let urls = self.module.get_value();
            let result = super::remote::shared(&urls, &text).await;
            if remembered && result.is_err() {
                super::remembered::forget_query();
            }
            // A refusal joins the link's other problems.
            let result = result.map_err(|e| match self.error.get_untracked() {
                Some(before) => format!("{before} {e}"),
                None => e,
            });
            self.show(result, false, true);
        });
        #[cfg(not(target_arch = "wasm32"))]
        let _ = (self, text, remembered);
    }

    /// Reads a chosen or dropped file through the importer bundle.
    #[cfg(target_arch = "wasm32")]
    // Raw web_sys::File: it comes from the input or a drop and goes as is to the importer bundle.
    fn read(self, file: web_sys::File) {
        let name: String = file.name().chars().take(120).collect();
        self.error.set(None);
        self.busy.set(Some(format!("Leyendo {name}…")));
        wasm_bindgen_futures::spawn_local(async move {
            let urls = self.module.get_value();
            self.apply(super::remote::read_file(&urls, file).await);
        });
    }
}

fn on_file(state: State, ev: leptos::ev::Event) {
    #[cfg(target_arch = "wasm32")]
    if let Some(file) = crate::islands::file_text::first_file(&ev) {
        state.read(file);
    }
    #[cfg(not(target_arch = "wasm32"))]
    let _ = (state, ev);
}

fn on_drop(state: State, ev: leptos::ev::DragEvent) {
    ev.prevent_default();
    #[cfg(target_arch = "wasm32")]
    if let Some(file) = super::remote::dropped(&ev) {
        state.read(file);
    }
    #[cfg(not(target_arch = "wasm32"))]
    let _ = state;
}

pub fn view(state: State) -> impl IntoView {
    let State {
        imported,
        error,
        busy,
        hub_base,
        opened,
        ..
    } = state;
    let hub_id = RwSignal::new(String::new());
    let summaries = move || {
        imported.with(|m| {
            let arch = m.arch.as_ref().map(|(_, s)| s.clone());
            let weights = m.weights.as_ref().map(|w| w.summary());
            arch.into_iter()
                .chain(weights)
                .map(|s| view! { <p class="est-imported">{s}</p> })
                .collect_view()
        })
    };
    view! {
        // Opens by itself when a shared link brings a model or a problem with one, or
        // when the model search offers it.
        <details class="est-import"
            prop:open=move || opened.get() || error.with(Option::is_some) || imported.with(|m| !m.is_empty())
            on:dragover=|ev: leptos::ev::DragEvent| ev.prevent_default()
            on:drop=move |ev| on_drop(state, ev)>
            <summary>"Usar mi propio modelo (Hub, config.json, .safetensors, .gguf)"</summary>
            <p class="calc-hint">
                "Escribe el id de un modelo de Hugging Face, pega su config.json o suelta aquí un archivo. De un .safetensors o un .gguf solo se lee la cabecera (unos KiB o MiB, nunca los pesos), en tu navegador: el archivo no se envía a ningún sitio."
            </p>
            // Without JavaScript the form reloads the page with ?hf=…, which imports
            // once the island wakes.
            <form class="est-hub" method="get"
                on:submit=move |ev| {
                    ev.prevent_default();
                    state.import_repo(hub_id.get_untracked());
                }>
                <label><span>"Modelo del Hub (organización/modelo)"</span>
                    <input name="hf" type="text" autocomplete="off" spellcheck="false"
                        placeholder="Qwen/Qwen2.5-7B-Instruct"
                        on:input=move |ev| hub_id.set(event_target_value(&ev).chars().take(300).collect()) />
                </label>
                <button type="submit" disabled=move || busy.with(Option::is_some)>"Importar del Hub"</button>
            </form>
            <label><span>"config.json"</span>
                <textarea name="config" rows="5" spellcheck="false"
                    on:input=move |ev| {
                        let text = event_target_value(&ev);
                        if !text.trim().is_empty() {
                            state.paste(text);
                        }
                    }></textarea>
            </label>
            <label class="est-drop"><span>"Archivo (.json, .safetensors, .gguf): elígelo o suéltalo aquí"</span>
                <input name="config-archivo" type="file"
                    accept=".json,.safetensors,.gguf,application/json"
                    on:change=move |ev| on_file(state, ev) />
            </label>
            <details class="est-hub-server">
                <summary>"Servidor del Hub"</summary>
                <label><span>"Dirección (como HF_ENDPOINT; sirve un espejo)"</span>
                    <input name="hub" type="url" spellcheck="false"
                        prop:value=move || hub_base.get()
                        on:input=move |ev| hub_base.set(event_target_value(&ev).chars().take(200).collect()) />
                </label>
            </details>
            {move || busy.get().map(|b| view! { <p class="est-busy" role="status">{b}</p> })}
            {move || error.get().map(|e| view! { <p class="calc-error" role="alert">{e}</p> })}
            {summaries}
            <button type="button" class="est-forget"
                hidden=move || imported.with(Imported::is_empty)
                on:click=move |_| state.forget()>
                "Olvidar el modelo importado"
            </button>
        </details>
    }
}
