//! The VRAM estimator: pick a model, a GPU and a workload; see where the memory goes,
//! whether it fits, and the largest batch and context that do.
//!
//! All numbers come from `vram::estimate`, the same function the CLI calls
//! (`compute.rs` maps the inputs onto it, and is where the tests are). The state
//! mirrors the URL query (`?modelo=…&gpu=…`, plus the architecture of an imported
//! config.json) so a result can be shared: it is applied after hydration (the static
//! HTML shows the author's defaults), and written back with `history.replaceState` on
//! every change (`browser.rs`).

#[cfg(target_arch = "wasm32")]
mod browser;
mod compute;
mod embed_code;
mod figures;
mod import_panel;
#[cfg(target_arch = "wasm32")]
mod remote;
mod result;

use leptos::prelude::*;
use vram::catalog;
use vram::{ByteSize, parse_count};

use compute::{CUSTOM, Imported, Inputs, OPTIMIZERS, compute};

/// Weight formats offered in the picker: (id, label).
const FORMATS: &[(&str, &str)] = &[
    ("bf16", "BF16"),
    ("fp16", "FP16"),
    ("fp32", "FP32"),
    ("fp8", "FP8"),
    ("int8", "INT8 (bitsandbytes)"),
    ("nf4", "NF4 (bitsandbytes)"),
    ("gptq-4bit-128g", "GPTQ/AWQ 4 bits, grupo 128"),
    ("Q8_0", "GGUF Q8_0"),
    ("Q6_K", "GGUF Q6_K"),
    ("Q5_K_M", "GGUF Q5_K_M"),
    ("Q4_K_M", "GGUF Q4_K_M"),
    ("Q3_K_M", "GGUF Q3_K_M"),
];

const MODES: &[(&str, &str)] = &[
    ("inference", "Inferencia"),
    ("full", "Entrenamiento completo"),
    ("lora", "LoRA"),
    ("qlora", "QLoRA"),
];

const ZERO_STAGES: &[(&str, &str)] = &[
    ("0", "Ninguno (DDP: copia entera en cada GPU)"),
    ("1", "ZeRO-1 (optimizador)"),
    ("2", "ZeRO-2 (+ gradientes)"),
    ("3", "ZeRO-3 / FSDP (+ pesos)"),
];

/// `<option>`s for a fixed list, selected from the inputs.
fn options(
    inputs: RwSignal<Inputs>,
    list: &'static [(&'static str, &'static str)],
    pick: fn(&Inputs) -> &str,
) -> impl IntoView {
    list.iter()
        .map(|&(id, label)| {
            let selected = move || inputs.with(|i| pick(i) == id);
            view! { <option value=id selected=selected>{label}</option> }
        })
        .collect_view()
}

/// A whole-number text field with its own error message under it.
fn count_field(
    inputs: RwSignal<Inputs>,
    label: &'static str,
    name: &'static str,
    get: fn(&Inputs) -> &String,
    set: fn(&mut Inputs, String),
) -> impl IntoView {
    let initial = inputs.with_untracked(|i| get(i).clone());
    let error =
        Memo::new(move |_| inputs.with(|i| parse_count(get(i)).err().map(|e| e.to_string())));
    view! {
        <label><span>{label}</span>
            <input name=name type="text" inputmode="numeric" value=initial
                prop:value=move || inputs.with(|i| get(i).clone())
                aria-invalid=move || error.with(Option::is_some).to_string()
                on:input=move |ev| {
                    let v = event_target_value(&ev);
                    inputs.update(|i| set(i, v));
                } />
            {move || error.get().map(|e| view! { <small class="field-error">{e}</small> })}
        </label>
    }
}

/// A checkbox bound to one boolean input.
fn check_field(
    inputs: RwSignal<Inputs>,
    label: &'static str,
    name: &'static str,
    get: fn(&Inputs) -> bool,
    set: fn(&mut Inputs, bool),
    disabled: impl Fn() -> bool + Send + Sync + 'static,
) -> impl IntoView {
    view! {
        <label class="check">
            <input type="checkbox" name=name
                prop:checked=move || inputs.with(get)
                disabled=disabled
                on:change=move |ev| {
                    let on = event_target_checked(&ev);
                    inputs.update(|i| set(i, on));
                } />
            <span>{label}</span>
        </label>
    }
}

#[island]
pub fn Estimator(
    /// Preset id of the initial model.
    model: String,
    /// Catalog id of the initial GPU.
    gpu: String,
    /// "inference", "full", "lora" or "qlora".
    mode: String,
    /// Weight format id.
    format: String,
    batch: String,
    seq: String,
    /// URL of the `import-web` JavaScript glue (loaded on the first import).
    import_js: String,
    /// URL of the `import-web` wasm module.
    import_wasm: String,
    /// Absolute URL of the embeddable widget's script, for the "embed it" snippet
    /// ("" when the build has no widget).
    embed_js: String,
) -> impl IntoView {
    let inputs = RwSignal::new(Inputs::new(model, gpu, mode, format, batch, seq));
    // What the reader imported (a config, a weights file's header, a Hub repository).
    let imported: RwSignal<Imported> = RwSignal::new(Imported::default());
    let import_error: RwSignal<Option<String>> = RwSignal::new(None);
    let filter = RwSignal::new(String::new());
    let outcome = Memo::new(move |_| {
        let i = inputs.get();
        imported.with(|m| compute(&i, m))
    });
    let panel = import_panel::State::new(inputs, imported, import_error, (import_js, import_wasm));

    #[cfg(target_arch = "wasm32")]
    browser::sync(inputs, panel);

    let set = move |f: fn(&mut Inputs, String)| {
        move |ev| {
            let v = event_target_value(&ev);
            inputs.update(|i| f(i, v));
        }
    };
    let training = move || inputs.with(Inputs::is_training);
    let model_options = catalog::models()
        .iter()
        .map(|m| {
            let id = m.id.clone();
            let selected = move || inputs.with(|i| i.model == id);
            // Catalog names are ASCII: ASCII folding keeps Unicode case tables out of the bundle.
            let haystack = format!("{} {} {}", m.name, m.id, m.hf_repo).to_ascii_lowercase();
            let hidden = move || filter.with(|f| !haystack.contains(f.trim().to_ascii_lowercase().as_str()));
            view! { <option value=m.id.clone() selected=selected hidden=hidden>{m.name.clone()}</option> }
        })
        .collect_view();
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
            let selected = move || inputs.with(|i| i.gpu == id);
            let label = format!("{} ({})", g.name, ByteSize(g.memory_bytes).binary());
            view! { <option value=g.id.clone() selected=selected>{label}</option> }
        })
        .collect_view();
    let result = move || match outcome.get() {
        Err(msg) => view! { <p class="calc-error" role="alert">{msg}</p> }.into_any(),
        Ok(o) => result::result_view(o).into_any(),
    };

    view! {
        <div class="calc estimator" role="group" aria-label="Estimador de VRAM">
            <div class="calc-fields">
                <label><span>"Buscar modelo"</span>
                    <input name="buscar" type="search" autocomplete="off" placeholder="qwen, llama, 70b…"
                        on:input=move |ev| filter.set(event_target_value(&ev).chars().take(64).collect()) />
                </label>
                <label><span>"Modelo"</span>
                    <select name="modelo" on:change=set(|i, v| i.model = v)>{model_options}{custom_option}</select>
                </label>
                <label><span>"GPU"</span>
                    <select name="gpu" on:change=set(|i, v| i.gpu = v)>{gpu_options}</select>
                </label>
                <label><span>"Modo"</span>
                    <select name="modo" on:change=set(|i, v| i.mode = v)>{options(inputs, MODES, |i| &i.mode)}</select>
                </label>
                <label><span>"Formato de los pesos"</span>
                    <select name="formato" on:change=set(|i, v| i.format = v)>{options(inputs, FORMATS, |i| &i.format)}</select>
                </label>
                {count_field(inputs, "Lote", "lote", |i| &i.batch, |i, v| i.batch = v)}
                {count_field(inputs, "Tokens por secuencia", "contexto", |i| &i.seq, |i, v| i.seq = v)}
                <label><span>"Atención"</span>
                    <select name="atencion" on:change=set(|i, v| i.attention = v)>
                        <option value="sdpa" selected=move || inputs.with(|i| i.attention != "eager")>"SDPA / FlashAttention"</option>
                        <option value="eager" selected=move || inputs.with(|i| i.attention == "eager")>"Ingenua (eager, N×N)"</option>
                    </select>
                </label>
                {count_field(inputs, "Número de GPU", "gpus", |i| &i.gpus, |i, v| i.gpus = v)}
                <label><span>"Reparto entre GPU (entrenamiento)"</span>
                    <select name="zero" disabled=move || !training() on:change=set(|i, v| i.zero = v)>
                        {options(inputs, ZERO_STAGES, |i| &i.zero)}
                    </select>
                </label>
                <label><span>"Optimizador (entrenamiento)"</span>
                    <select name="optimizador" disabled=move || !training() on:change=set(|i, v| i.optimizer = v)>
                        {options(inputs, OPTIMIZERS, |i| &i.optimizer)}
                    </select>
                </label>
                {check_field(inputs, "Gradient checkpointing", "checkpointing", |i| i.checkpointing, |i, on| i.checkpointing = on, move || !training())}
                {check_field(inputs, "Servidor (caché KV estilo vLLM)", "servidor", |i| i.serve, |i, on| i.serve = on, training)}
            </div>
            <p class="calc-hint">"Con varias GPU, la inferencia reparte el modelo con paralelismo tensorial (como --tensor-parallel-size de vLLM) y el entrenamiento con ZeRO o FSDP."</p>
            {import_panel::view(panel)}
            <output aria-live="polite">{result}</output>
            {(!embed_js.is_empty()).then(|| embed_code::view(inputs, imported, embed_js))}
        </div>
    }
}
