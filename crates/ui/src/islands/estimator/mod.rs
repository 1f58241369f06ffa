//! The VRAM estimator: pick a model, a GPU and a workload; see where the memory goes,
//! whether it fits, and the largest batch and context that do.
//!
//! All numbers come from `vram::evaluate`, the same function the CLI calls, on
//! settings read and written through `vram::settings` (`compute.rs` holds the inputs
//! and the tests). The answer is HTML text from `estimate_web::view`: rendered
//! at build time for the first inputs, then by the `estimate-web` bundle, fetched on
//! the first change (`answer.rs`), so the island's bundle carries neither the engine
//! nor the answer's views. The state mirrors the URL query (`?modelo=…&gpu=…`, plus the
//! architecture of an imported config.json) so a result can be shared: it is applied
//! after hydration (the static HTML shows the author's defaults), and written back with
//! `history.replaceState` on every change (`browser.rs`).

#[cfg(target_arch = "wasm32")]
mod answer;
#[cfg(target_arch = "wasm32")]
mod browser;
mod compute;
mod embed_code;
mod import_panel;
#[cfg(target_arch = "wasm32")]
mod remembered;
#[cfg(target_arch = "wasm32")]
mod remote;

use leptos::prelude::*;
use vram::model_search::ModelQuery;
use vram::settings::{
    ATTENTIONS, CUDA_GRAPHS, Choice, LORA_TARGETS, LOSSES, OPTIMIZERS, PRECISIONS, RUNTIMES,
    Runtime, TASKS, Task, ZERO_STAGES,
};
use vram::{Field, Settings, Surface, catalog};

use compute::{CUSTOM, Imported, Inputs};

/// Weight formats offered in the picker: (id, label). A format a link brings that is
/// not here is offered too, so the picker always shows what is computed.
const FORMATS: &[(&str, &str)] = &[
    ("auto", "Auto: como lo carga el motor"),
    ("bf16", "BF16"),
    ("fp16", "FP16"),
    ("fp32", "FP32"),
    ("fp8", "FP8"),
    ("fp8-block", "FP8 por bloques (DeepSeek, Kimi)"),
    ("mxfp4", "MXFP4 (gpt-oss)"),
    ("nvfp4", "NVFP4 (Blackwell)"),
    ("int8", "INT8 (bitsandbytes)"),
    ("nf4", "NF4 (bitsandbytes)"),
    ("nf4-dq", "NF4 + doble cuantización (QLoRA)"),
    ("gptq-4bit-128g", "GPTQ/AWQ 4 bits, grupo 128"),
    ("MXFP4_MOE", "GGUF MXFP4_MOE"),
    ("Q8_0", "GGUF Q8_0"),
    ("Q6_K", "GGUF Q6_K"),
    ("Q5_K_M", "GGUF Q5_K_M"),
    ("Q4_K_M", "GGUF Q4_K_M"),
    ("Q4_0", "GGUF Q4_0"),
    ("Q3_K_M", "GGUF Q3_K_M"),
];

/// The (web spelling, label) pairs of one of `vram::settings`' closed lists.
fn options_of<T>(list: &'static [Choice<T>]) -> Vec<(&'static str, &'static str)> {
    list.iter().map(|c| (c.web, c.label)).collect()
}

/// A select over a closed list of (value, label), bound to field `f`. Not generic over
/// the list's type, so the view is compiled once.
fn choice_select(
    inputs: RwSignal<Inputs>,
    f: Field,
    list: Vec<(&'static str, &'static str)>,
    disabled: Box<dyn Fn() -> bool + Send + Sync>,
) -> impl IntoView {
    let spec = f.spec();
    let options = list
        .into_iter()
        .map(|(value, label)| {
            let selected =
                move || inputs.with(|i| i.settings.text(f, Surface::Web).as_deref() == Some(value));
            view! { <option value=value selected=selected>{label}</option> }
        })
        .collect_view();
    view! {
        <label><span>{spec.label}</span>
            <select name=spec.key disabled=disabled
                on:change=move |ev| { let v = event_target_value(&ev); inputs.update(|i| i.choose(f, &v)); }>
                {options}
            </select>
        </label>
    }
}

/// Fields shown only while `shown` holds (a setting of another task or engine is not
/// asked for). `display: contents`, so its fields flow with their neighbours.
fn when(shown: impl Fn() -> bool + Send + Sync + 'static, body: impl IntoView) -> impl IntoView {
    view! { <div class="est-when" hidden=move || !shown()>{body}</div> }
}

/// What the reader's browser says of their GPU: the card chosen from it, or the cards
/// of its architecture to pick from.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuHint {
    /// "una GPU NVIDIA de arquitectura Ampere".
    pub said: String,
    /// The card preselected from the browser's description.
    pub chosen: Option<String>,
    /// (id, name) of the cards of that architecture, when no card was named.
    pub cards: Vec<(String, String)>,
}

/// The suggestion under the GPU picker: said, and undone or chosen with one click.
fn gpu_hint_view(
    inputs: RwSignal<Inputs>,
    hint: RwSignal<Option<GpuHint>>,
    h: GpuHint,
) -> impl IntoView {
    let pick = move |id: String| {
        hint.set(None);
        inputs.update(|i| i.choose(Field::Gpu, &id));
    };
    let buttons = h
        .cards
        .into_iter()
        .map(|(id, name)| view! { <button type="button" on:click=move |_| pick(id.clone())>{name}</button> })
        .collect_view();
    let text = vram::reader_gpu::Suggestion::sentence(&h.said, h.chosen.as_deref());
    view! {
        <p class="calc-hint est-gpu-hint" role="status">
            {text} " " {buttons}
        </p>
    }
}

/// Settings that belong together (the weights and the batch, training, the server,
/// llama.cpp), folded under the answer: shown only for the task and engine they belong
/// to, and opened by themselves once one of `fields` differs from the defaults of that
/// task and engine (a shared link or a plan's link set it). Never closed for the reader.
fn group(
    inputs: RwSignal<Inputs>,
    title: &'static str,
    fields: &'static [Field],
    shown: impl Fn() -> bool + Send + Sync + 'static,
    body: impl IntoView,
) -> impl IntoView {
    let changed = Memo::new(move |_| {
        inputs.with(|i| {
            let s = &i.settings;
            let base = Settings::defaults(s.task, s.runtime);
            fields.iter().any(|&f| {
                i.typed(f).is_some() || s.text(f, Surface::Web) != base.text(f, Surface::Web)
            })
        })
    });
    let open = RwSignal::new(false);
    Effect::new(move |_| {
        if changed.get() {
            open.set(true);
        }
    });
    view! {
        <details class="est-group" hidden=move || !shown() prop:open=move || open.get()>
            <summary>{title}</summary>
            <div class="calc-fields">{body}</div>
        </details>
    }
}

/// A text field for one of the [`compute::TEXT_FIELDS`], with its own message under it.
fn text_field(inputs: RwSignal<Inputs>, f: Field) -> impl IntoView {
    let spec = f.spec();
    let initial = inputs.with_untracked(|i| i.text(f));
    let error = Memo::new(move |_| inputs.with(|i| i.error(f).map(|e| e.to_string())));
    view! {
        <label><span>{spec.label}</span>
            <input name=spec.key type="text" inputmode="numeric" value=initial
                prop:value=move || inputs.with(|i| i.text(f))
                aria-invalid=move || error.with(Option::is_some).to_string()
                on:input=move |ev| {
                    let v = event_target_value(&ev);
                    inputs.update(|i| i.type_text(f, v));
                } />
            {move || error.get().map(|e| view! { <small class="field-error">{e}</small> })}
        </label>
    }
}

/// A checkbox bound to a yes/no setting.
fn check_field(
    inputs: RwSignal<Inputs>,
    f: Field,
    disabled: impl Fn() -> bool + Send + Sync + 'static,
) -> impl IntoView {
    let spec = f.spec();
    let checked =
        move || inputs.with(|i| i.settings.text(f, Surface::Web).as_deref() == Some("si"));
    view! {
        <label class="check">
            <input type="checkbox" name=spec.key
                prop:checked=checked
                disabled=disabled
                on:change=move |ev| {
                    let on = event_target_checked(&ev);
                    inputs.update(|i| i.choose(f, if on { "si" } else { "no" }));
                } />
            <span>{spec.label}</span>
        </label>
    }
}

/// The runtime picker: every runtime, those that do not run the chosen task disabled.
fn runtime_select(inputs: RwSignal<Inputs>) -> impl IntoView {
    let spec = Field::Runtime.spec();
    let options = RUNTIMES
        .iter()
        .map(|c| {
            let runtime = c.value;
            let selected = move || inputs.with(|i| i.settings.runtime == runtime);
            let disabled = move || inputs.with(|i| !runtime.runs(i.settings.task));
            view! { <option value=c.web selected=selected disabled=disabled>{c.label}</option> }
        })
        .collect_view();
    view! {
        <label><span>{spec.label}</span>
            <select name=spec.key
                on:change=move |ev| { let v = event_target_value(&ev); inputs.update(|i| i.choose(Field::Runtime, &v)); }>
                {options}
            </select>
        </label>
    }
}

/// The format picker: the listed formats plus the current one when a link brought
/// another.
fn format_select(inputs: RwSignal<Inputs>) -> impl IntoView {
    let current = move || inputs.with(|i| i.settings.format.id());
    let listed = move || {
        let id = current();
        FORMATS.iter().any(|(f, _)| *f == id)
    };
    let options = FORMATS
        .iter()
        .map(|&(id, label)| view! { <option value=id selected=move || current() == id>{label}</option> })
        .collect_view();
    let spec = Field::Format.spec();
    view! {
        <label><span>{spec.label}</span>
            <select name=spec.key
                on:change=move |ev| { let v = event_target_value(&ev); inputs.update(|i| i.choose(Field::Format, &v)); }>
                {options}
                {move || (!listed()).then(|| { let id = current(); view! { <option value=id.clone() selected=true>{id.clone()}</option> } })}
            </select>
        </label>
    }
}

/// The LoRA targets: the presets, the current list when it is none of them, and a text
/// field for a list of module names (PEFT's `target_modules`).
fn lora_targets_select(
    inputs: RwSignal<Inputs>,
    disabled: impl Fn() -> bool + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let f = Field::LoraTargets;
    let current = move || inputs.with(|i| i.settings.text(f, Surface::Web).unwrap_or_default());
    let listed = move || {
        let now = current();
        LORA_TARGETS.iter().any(|c| c.web == now)
    };
    let options = options_of(LORA_TARGETS)
        .into_iter()
        .map(|(value, label)| view! { <option value=value selected=move || current() == value>{label}</option> })
        .collect_view();
    let error = Memo::new(move |_| inputs.with(|i| i.error(f).map(|e| e.to_string())));
    let spec = f.spec();
    view! {
        <label><span>{spec.label}</span>
            <select name=spec.key disabled=disabled
                on:change=move |ev| { let v = event_target_value(&ev); inputs.update(|i| i.choose(f, &v)); }>
                {options}
                {move || (!listed()).then(|| { let list = current(); view! { <option value=list.clone() selected=true>{list.clone()}</option> } })}
            </select>
        </label>
        <label><span>"Otra lista de módulos"</span>
            <input name="objetivos-lista" type="text" placeholder="q_proj,k_proj,v_proj" disabled=disabled
                prop:value=move || inputs.with(|i| i.typed(f).unwrap_or_default())
                aria-invalid=move || error.with(Option::is_some).to_string()
                on:input=move |ev| {
                    let v = event_target_value(&ev);
                    // Emptied: the settings (the select) show again.
                    inputs.update(|i| if v.trim().is_empty() { i.forget(f) } else { i.type_text(f, v) });
                } />
            {move || error.get().map(|e| view! { <small class="field-error">{e}</small> })}
        </label>
    }
}

/// The settings beyond the core fields, in their groups (see [`group`]).
fn folded(inputs: RwSignal<Inputs>) -> impl IntoView {
    let training = move || inputs.with(Inputs::is_training);
    let task = move || inputs.with(|i| i.settings.task);
    let serving_runtime = move || {
        inputs.with(|i| {
            !i.is_training()
                && !matches!(
                    i.settings.runtime,
                    Runtime::LlamaCpp | Runtime::Ollama | Runtime::AutoAwq
                )
        })
    };
    let ggml = move || {
        inputs.with(|i| {
            !i.is_training() && matches!(i.settings.runtime, Runtime::LlamaCpp | Runtime::Ollama)
        })
    };
    let model_group = view! {
        {format_select(inputs)}
        {text_field(inputs, Field::Batch)}
        {choice_select(inputs, Field::Attention, options_of(ATTENTIONS), Box::new(|| false))}
        {text_field(inputs, Field::Gpus)}
        {text_field(inputs, Field::Reserve)}
    };
    let training_group = view! {
        {choice_select(inputs, Field::Optimizer, options_of(OPTIMIZERS), Box::new(|| false))}
        {choice_select(inputs, Field::Loss, options_of(LOSSES), Box::new(|| false))}
        {when(move || task() == Task::Full, choice_select(inputs, Field::Precision, options_of(PRECISIONS), Box::new(|| false)))}
        {when(move || matches!(task(), Task::Lora | Task::Qlora), lora_targets_select(inputs, || false))}
        {choice_select(inputs, Field::Zero, options_of(ZERO_STAGES), Box::new(|| false))}
        {check_field(inputs, Field::Checkpointing, || false)}
        {check_field(inputs, Field::CpuOffload, || false)}
        {check_field(inputs, Field::OffloadParams, move || inputs.with(|i| i.settings.zero_stage() < 3))}
    };
    let server_group = view! {
        {check_field(inputs, Field::Serve, || false)}
        {text_field(inputs, Field::Utilization)}
        {choice_select(inputs, Field::CudaGraphs, options_of(CUDA_GRAPHS), Box::new(move || inputs.with(|i| !i.settings.serving())))}
    };
    let ggml_group = view! {
        {text_field(inputs, Field::GpuLayers)}
        {text_field(inputs, Field::CpuMoe)}
        {check_field(inputs, Field::Mmproj, || false)}
        {text_field(inputs, Field::Ubatch)}
        {text_field(inputs, Field::RamBandwidth)}
    };

    view! {
        {group(inputs, "Formato, lote y GPU", &[Field::Format, Field::Batch, Field::Attention, Field::Gpus, Field::Reserve], || true, model_group)}
        {group(inputs, "Entrenamiento", &[Field::Optimizer, Field::Loss, Field::Precision, Field::LoraTargets, Field::Zero, Field::Checkpointing, Field::CpuOffload, Field::OffloadParams], training, training_group)}
        {group(inputs, "Servidor", &[Field::Serve, Field::Utilization, Field::CudaGraphs], serving_runtime, server_group)}
        {group(inputs, "llama.cpp y Ollama", &[Field::GpuLayers, Field::CpuMoe, Field::Mmproj, Field::Ubatch, Field::RamBandwidth], ggml, ggml_group)}
    }
}

#[island]
pub fn Estimator(
    /// Catalog id of the initial model.
    model: String,
    /// The initial settings as (key, value) pairs (`vram::Settings::pairs`).
    settings: Vec<(String, String)>,
    /// URL of the `import-web` JavaScript glue (loaded on the first import).
    import_js: String,
    /// URL of the `import-web` wasm module.
    import_wasm: String,
    /// Absolute URL of the embeddable widget's script, for the "embed it" snippet
    /// ("" when the build has no widget).
    embed_js: String,
    /// URL of the `estimate-web` JavaScript glue (loaded on the first change): it
    /// computes every answer after the build-time one.
    estimate_js: String,
    /// URL of the `estimate-web` wasm module.
    estimate_wasm: String,
) -> impl IntoView {
    let (initial, _) = Settings::read(&Settings::web_default(), |k| {
        settings
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    });
    let inputs = RwSignal::new(Inputs::new(model, initial));
    // What the reader imported (a config, a weights file's header, a Hub repository).
    let imported: RwSignal<Imported> = RwSignal::new(Imported::default());
    let import_error: RwSignal<Option<String>> = RwSignal::new(None);
    // Values a shared link brought that could not be used.
    let link_problem: RwSignal<Option<String>> = RwSignal::new(None);
    // Why the browser would not keep the configuration (storage disabled or full).
    let storage_note: RwSignal<Option<String>> = RwSignal::new(None);
    let filter = RwSignal::new(String::new());
    // The answer as HTML; the build-time one stays on the page until the first change
    // (the browser starts from "": hydration keeps the element's content).
    #[cfg(not(target_arch = "wasm32"))]
    let first = inputs
        .with_untracked(|i| estimate_web::view::render(&compute::compute(i, &Imported::default())));
    #[cfg(target_arch = "wasm32")]
    let first = String::new();
    let answer = RwSignal::new(first);
    let pending = RwSignal::new(false);
    #[cfg(target_arch = "wasm32")]
    let answers = super::estimate_answers::Answers::new(estimate_js, estimate_wasm);
    #[cfg(target_arch = "wasm32")]
    answer::on_change(
        inputs,
        imported,
        answer,
        pending,
        answers,
        browser::remember(storage_note),
    );
    #[cfg(not(target_arch = "wasm32"))]
    let _ = (estimate_js, estimate_wasm);
    let panel = import_panel::State::new(inputs, imported, import_error, (import_js, import_wasm));

    // The reader's GPU as their browser names it (WebGPU), offered, never imposed.
    let gpu_hint: RwSignal<Option<GpuHint>> = RwSignal::new(None);
    #[cfg(target_arch = "wasm32")]
    browser::sync(inputs, panel, link_problem, storage_note, gpu_hint, answers);

    // Words in any order, sizes as whole words, fine-tune suffixes ignored
    // (`vram::model_search`). Catalog names are ASCII: ASCII folding keeps Unicode case
    // tables out of the bundle.
    let query = Memo::new(move |_| filter.with(|f| ModelQuery::new(f)));
    let model_options = catalog::models()
        .iter()
        .map(|m| {
            let id = m.id.clone();
            let selected = move || inputs.with(|i| i.model == id);
            let hidden = move || query.with(|q| !q.matches(m));
            view! { <option value=m.id.clone() selected=selected hidden=hidden>{m.name.clone()}</option> }
        })
        .collect_view();
    let on_search = move |text: String| {
        filter.set(text);
        // The first match becomes the model when the current one is filtered out, so
        // the picker never shows a hidden choice.
        let q = query.get_untracked();
        let current_hidden =
            inputs.with_untracked(|i| catalog::model(&i.model).is_some_and(|m| !q.matches(m)));
        if current_hidden && let Some(first) = catalog::models().iter().find(|m| q.matches(m)) {
            inputs.update(|i| i.model = first.id.clone());
        }
    };
    // Nothing in the catalog: say so, and offer the Hub when the text is an id.
    let no_match = move || {
        let q = query.get();
        if q.is_empty() || catalog::models().iter().any(|m| q.matches(m)) {
            return None;
        }
        let hub = q.hub_id().map(str::to_owned);
        // Never another model in its place: the reader's own, from the Hub or a file.
        Some(view! {
            <p class="calc-hint est-search-empty" role="status">
                "Sin resultados en el catálogo. "
                {hub.map(|id| {
                    let label = format!("Importar {id} del Hub");
                    view! { <button type="button" name="importar-busqueda" on:click=move |_| panel.import_repo(id.clone())>{label}</button> " " }
                })}
                <button type="button" name="usar-propio" on:click=move |_| panel.opened.set(true)>
                    "Usar mi propio modelo"
                </button>
            </p>
        })
    };
    let custom_option = view! {
        <option value=CUSTOM
            hidden=move || imported.with(|m| m.arch.is_none())
            selected=move || inputs.with(|i| i.model == CUSTOM)>
            "Modelo propio (importado)"
        </option>
    };
    let gpu_options = catalog::gpus()
        .iter()
        .map(|g| {
            let id = g.id.clone();
            let selected = move || inputs.with(|i| i.settings.gpu.is_some_and(|s| s.id == id));
            let label = g.label();
            view! { <option value=g.id.clone() selected=selected>{label}</option> }
        })
        .collect_view();

    view! {
        <div class="calc estimator" role="group" aria-label="Estimador de VRAM">
            {move || link_problem.get().map(|p| view! { <p class="calc-error" role="alert">{p}</p> })}
            {move || storage_note.get().map(|n| view! { <p class="calc-hint calc-storage" role="status">{n}</p> })}
            <div class="est-layout">
                // What every answer needs; the rest is folded below the answer.
                <div class="calc-fields est-core">
                    <label><span>"Buscar modelo"</span>
                        <input name="buscar" type="search" autocomplete="off" placeholder="qwen, llama, 70b…"
                            on:input=move |ev| on_search(event_target_value(&ev).chars().take(120).collect()) />
                    </label>
                    <label><span>"Modelo"</span>
                        <select name=vram::settings::MODEL_KEY on:change=move |ev| { let v = event_target_value(&ev); inputs.update(|i| i.model = v); }>{model_options}{custom_option}</select>
                    </label>
                    {no_match}
                    <label><span>{Field::Gpu.spec().label}</span>
                        <select name=Field::Gpu.spec().key on:change=move |ev| { let v = event_target_value(&ev); gpu_hint.set(None); inputs.update(|i| i.choose(Field::Gpu, &v)); }>{gpu_options}</select>
                    </label>
                    {move || gpu_hint.get().map(|h| gpu_hint_view(inputs, gpu_hint, h))}
                    {choice_select(inputs, Field::Task, options_of(TASKS), Box::new(|| false))}
                    {runtime_select(inputs)}
                    {text_field(inputs, Field::Seq)}
                </div>
                <output aria-live="polite" aria-busy=move || pending.get().to_string()
                    inner_html=move || answer.get()></output>
                <div class="est-more">
                    {folded(inputs)}
                    <p class="calc-hint">"Con varias GPU, la inferencia reparte el modelo con paralelismo tensorial (como --tensor-parallel-size de vLLM; llama.cpp y Ollama reparten capas enteras) y el entrenamiento con ZeRO o FSDP."</p>
                    {import_panel::view(panel)}
                </div>
            </div>
            {(!embed_js.is_empty()).then(|| embed_code::view(inputs, imported, embed_js))}
        </div>
    }
}
