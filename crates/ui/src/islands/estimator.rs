//! The VRAM estimator: pick a model, a GPU and a workload; see where the memory goes,
//! whether it fits, and the largest batch and context that do.
//!
//! All numbers come from `vram::estimate`, the same function the CLI calls. The state
//! mirrors the URL query (`?modelo=…&gpu=…`) so a result can be shared: it is applied
//! after hydration (the static HTML shows the author's defaults), and written back with
//! `history.replaceState` on every change.

use leptos::prelude::*;
use vram::catalog::{self, Gpu};
use vram::estimate::{Breakdown, ModelInput, estimate};
use vram::solve;
use vram::workload::{Attention, Finetune, Mode, Workload};
use vram::{Architecture, ByteSize, WeightFormat, hf_config, parse_count};

use crate::numbers::fixed;

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

/// The six categories with their Spanish names and CSS classes.
const CATEGORIES: [(&str, &str); 6] = [
    ("Pesos", "seg-weights"),
    ("Gradientes", "seg-grads"),
    ("Optimizador", "seg-optim"),
    ("Activaciones", "seg-acts"),
    ("Caché KV", "seg-kv"),
    ("Sobrecarga", "seg-overhead"),
];

fn values(b: &Breakdown) -> [u64; 6] {
    [
        b.weights,
        b.gradients,
        b.optimizer,
        b.activations,
        b.kv_cache,
        b.overhead,
    ]
}

/// Inputs as the reader typed them.
#[derive(Clone, Debug, PartialEq)]
struct Inputs {
    model: String,
    gpu: String,
    mode: String,
    format: String,
    batch: String,
    seq: String,
    checkpointing: bool,
    attention: String,
}

/// What the page shows for a set of inputs.
#[derive(Clone, Debug, PartialEq)]
struct Outcome {
    breakdown: Breakdown,
    per_gpu: u64,
    gpu: Option<&'static Gpu>,
    max_batch: Option<u64>,
    max_seq: Option<u64>,
    speed: Option<vram::speed::SpeedHint>,
    /// (sequence length, bytes with eager attention, bytes with SDPA/Flash).
    curve: Vec<(u64, u64, u64)>,
}

/// Sequence lengths of the memory-versus-context chart.
const CURVE_SEQS: [u64; 9] = [512, 1024, 2048, 4096, 8192, 16_384, 32_768, 65_536, 131_072];

/// The `modelo` value that selects the reader's imported config.json.
const CUSTOM: &str = "propio";

fn compute(i: &Inputs, custom: Option<&Architecture>) -> Result<Outcome, String> {
    let arch = match (i.model.as_str(), custom) {
        (CUSTOM, Some(a)) => a.clone(),
        _ => catalog::model(&i.model)
            .ok_or("Elige un modelo del catálogo o importa un config.json.")?
            .arch
            .clone(),
    };
    let model = ModelInput::Arch {
        arch: Box::new(arch.clone()),
        total_params: None,
    };
    let batch = parse_count(&i.batch).map_err(|e| format!("Lote: {e}"))?;
    let seq = parse_count(&i.seq).map_err(|e| format!("Secuencia: {e}"))?;
    let weights = WeightFormat::parse(&i.format).map_err(|e| e.to_string())?;
    let (mode, finetune) = match i.mode.as_str() {
        "full" => (Mode::Train, Finetune::Full),
        "lora" => (Mode::Train, Finetune::Lora),
        "qlora" => (Mode::Train, Finetune::Qlora),
        _ => (Mode::Inference, Finetune::Full),
    };
    let w = Workload {
        mode,
        finetune,
        weights,
        mixed_precision: mode == Mode::Train && finetune == Finetune::Full,
        batch,
        seq,
        grad_checkpointing: i.checkpointing,
        attention: if i.attention == "eager" {
            Attention::Eager
        } else {
            Attention::Sdpa
        },
        ..Workload::default()
    };
    let est = estimate(&model, &w).map_err(|e| e.to_string())?;
    let gpu = catalog::gpu(&i.gpu);
    let cap = gpu.map(|g| g.memory_bytes);
    let curve = CURVE_SEQS
        .iter()
        .filter(|&&s| s <= u64::from(arch.max_positions))
        .filter_map(|&s| {
            let at = |attention| {
                estimate(
                    &model,
                    &Workload {
                        seq: s,
                        attention,
                        ..w.clone()
                    },
                )
                .ok()
                .map(|e| e.per_gpu_bytes)
            };
            Some((s, at(Attention::Eager)?, at(Attention::Sdpa)?))
        })
        .collect();
    Ok(Outcome {
        breakdown: est.breakdown,
        per_gpu: est.per_gpu_bytes,
        gpu,
        max_batch: cap.and_then(|c| solve::max_batch(&model, &w, c)),
        max_seq: cap.and_then(|c| solve::max_seq(&model, &w, c)),
        speed: gpu.and_then(|g| vram::speed::speed(&arch, &w, &est, g)),
        curve,
    })
}

/// Memory against sequence length, eager attention (quadratic) versus SDPA/Flash
/// (linear), on a log₂ x axis, with the GPU's capacity as a horizontal line.
fn chart(o: &Outcome) -> impl IntoView {
    let cap = o.gpu.map_or(0, |g| g.memory_bytes);
    let top = o
        .curve
        .iter()
        .map(|&(_, e, f)| e.max(f))
        .max()
        .unwrap_or(1)
        .max(cap)
        .max(1) as f64;
    let n = o.curve.len().max(2) - 1;
    let (w, h) = (300.0, 120.0);
    let point = |i: usize, bytes: u64| {
        let x = 30.0 + i as f64 / n as f64 * (w - 40.0);
        let y = h - 15.0 - bytes as f64 / top * (h - 25.0);
        format!("{},{}", fixed(x, 1), fixed(y, 1))
    };
    let line = |pick: fn(&(u64, u64, u64)) -> u64| {
        o.curve
            .iter()
            .enumerate()
            .map(|(i, p)| point(i, pick(p)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let eager = line(|p| p.1);
    let flash = line(|p| p.2);
    let cap_y = h - 15.0 - cap as f64 / top * (h - 25.0);
    let labels = o
        .curve
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(i, &(s, _, _))| {
            let x = 30.0 + i as f64 / n as f64 * (w - 40.0);
            let text = if s >= 1024 {
                format!("{}k", s / 1024)
            } else {
                s.to_string()
            };
            view! { <text x=fixed(x, 1) y=fixed(h - 2.0, 0) class="axis">{text}</text> }
        })
        .collect_view();
    let top_label = ByteSize(top as u64).binary();
    view! {
        <figure class="est-chart">
            <svg viewBox=format!("0 0 {} {}", fixed(w, 0), fixed(h, 0)) role="img"
                aria-label="Memoria por GPU según la longitud de secuencia, con atención ingenua y con SDPA o FlashAttention">
                <line class="axis-line" x1="30" y1=fixed(h - 15.0, 0) x2=fixed(w - 10.0, 0) y2=fixed(h - 15.0, 0) />
                <text x="2" y="12" class="axis">{top_label}</text>
                {(cap > 0).then(|| view! {
                    <line class="cap-line" x1="30" x2=fixed(w - 10.0, 0) y1=fixed(cap_y, 1) y2=fixed(cap_y, 1) />
                })}
                <polyline class="curve-eager" points=eager />
                <polyline class="curve-flash" points=flash />
                {labels}
            </svg>
            <figcaption>
                <span class="key key-eager"></span>"Atención ingenua (N×N) "
                <span class="key key-flash"></span>"SDPA / FlashAttention "
                <span class="key key-cap"></span>"Capacidad de la GPU · eje x: tokens por secuencia"
            </figcaption>
        </figure>
    }
}

/// Every catalog GPU and whether the workload fits on it.
fn gpu_table(per_gpu: u64) -> impl IntoView {
    let rows = catalog::gpus()
        .iter()
        .map(|g| {
            let fits = per_gpu <= g.memory_bytes;
            view! {
                <tr data-fits=fits.to_string()>
                    <td>{g.name.clone()}</td>
                    <td>{ByteSize(g.memory_bytes).binary()}</td>
                    <td>{if fits { "Cabe" } else { "No cabe" }}</td>
                </tr>
            }
        })
        .collect_view();
    let count = catalog::gpus()
        .iter()
        .filter(|g| per_gpu <= g.memory_bytes)
        .count();
    view! {
        <details class="est-gpus">
            <summary>{format!("¿En qué GPU cabe? En {count} de {}", catalog::gpus().len())}</summary>
            <table class="calc-table">
                <thead><tr><th scope="col">"GPU"</th><th scope="col">"Memoria"</th><th scope="col">"¿Cabe?"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </details>
    }
}

/// A horizontal stacked bar: each category's share of max(total, capacity), with a
/// marker at the GPU's capacity.
fn bar(o: &Outcome) -> impl IntoView {
    let cap = o.gpu.map_or(0, |g| g.memory_bytes);
    let scale = o.per_gpu.max(cap).max(1) as f64;
    let mut x = 0.0;
    let segments = values(&o.breakdown)
        .into_iter()
        .zip(CATEGORIES)
        .filter(|(v, _)| *v > 0)
        .map(|(v, (name, class))| {
            let width = v as f64 / scale * 100.0;
            let start = x;
            x += width;
            view! {
                <rect class=class x=fixed(start, 3) y="0" width=fixed(width, 3) height="10">
                    <title>{format!("{name}: {}", ByteSize(v).binary())}</title>
                </rect>
            }
        })
        .collect_view();
    let marker = (cap > 0).then(|| {
        let at = cap as f64 / scale * 100.0;
        view! { <line class="cap-line" x1=fixed(at, 3) x2=fixed(at, 3) y1="-1" y2="11" /> }
    });
    let label = format!(
        "Memoria necesaria {} frente a {} de la GPU",
        ByteSize(o.per_gpu).binary(),
        ByteSize(cap).binary()
    );
    view! {
        <svg class="est-bar" viewBox="0 -1 100 12" preserveAspectRatio="none" role="img" aria-label=label>
            {segments}
            {marker}
        </svg>
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
) -> impl IntoView {
    let initial = Inputs {
        model,
        gpu,
        mode,
        format,
        batch: batch.clone(),
        seq: seq.clone(),
        checkpointing: false,
        attention: "sdpa".into(),
    };
    let inputs = RwSignal::new(initial.clone());
    // An imported config.json: the architecture and a one-line summary.
    let custom: RwSignal<Option<(Architecture, String)>> = RwSignal::new(None);
    let import_error: RwSignal<Option<String>> = RwSignal::new(None);
    let filter = RwSignal::new(String::new());
    // Field-level messages, shown under the field they concern.
    let field_error = |text: String| parse_count(&text).err().map(|e| e.to_string());
    let batch_error = Memo::new(move |_| inputs.with(|i| field_error(i.batch.clone())));
    let seq_error = Memo::new(move |_| inputs.with(|i| field_error(i.seq.clone())));
    let outcome = Memo::new(move |_| {
        let i = inputs.get();
        custom.with(|c| compute(&i, c.as_ref().map(|(a, _)| a)))
    });
    let import = move |text: String| match hf_config::parse(&text) {
        Ok((arch, warnings)) => {
            let total = arch.param_count().total;
            let mut summary = format!(
                "Importado: {} con {} capas y {} parámetros.",
                arch.family,
                arch.layers,
                vram::group_digits(total)
            );
            for w in warnings {
                summary.push(' ');
                summary.push_str(&w);
            }
            custom.set(Some((arch, summary)));
            import_error.set(None);
            inputs.update(|i| i.model = CUSTOM.into());
        }
        Err(e) => import_error.set(Some(e.to_string())),
    };

    #[cfg(target_arch = "wasm32")]
    url_state::sync(inputs);

    let set = move |f: fn(&mut Inputs, String)| {
        move |ev| {
            let v = event_target_value(&ev);
            inputs.update(|i| f(i, v));
        }
    };
    let model_options = catalog::models()
        .iter()
        .map(|m| {
            let id = m.id.clone();
            let selected = move || inputs.with(|i| i.model == id);
            let haystack = format!("{} {} {}", m.name, m.id, m.hf_repo).to_lowercase();
            let hidden = move || filter.with(|f| !haystack.contains(f.trim().to_lowercase().as_str()));
            view! { <option value=m.id.clone() selected=selected hidden=hidden>{m.name.clone()}</option> }
        })
        .collect_view();
    let custom_option = view! {
        <option value=CUSTOM
            hidden=move || custom.with(Option::is_none)
            selected=move || inputs.with(|i| i.model == CUSTOM)>
            "Modelo propio (config.json)"
        </option>
    };
    let on_file = move |ev: leptos::ev::Event| {
        #[cfg(target_arch = "wasm32")]
        file_import::read_first(ev, import, import_error);
        #[cfg(not(target_arch = "wasm32"))]
        let _ = ev;
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
    let format_options = FORMATS
        .iter()
        .map(|&(id, label)| {
            let selected = move || inputs.with(|i| i.format == id);
            view! { <option value=id selected=selected>{label}</option> }
        })
        .collect_view();
    let mode_options = [
        ("inference", "Inferencia"),
        ("full", "Entrenamiento completo"),
        ("lora", "LoRA"),
        ("qlora", "QLoRA"),
    ]
    .into_iter()
    .map(|(id, label)| {
        let selected = move || inputs.with(|i| i.mode == id);
        view! { <option value=id selected=selected>{label}</option> }
    })
    .collect_view();

    let result = move || match outcome.get() {
        Err(msg) => view! { <p class="calc-error" role="alert">{msg}</p> }.into_any(),
        Ok(o) => {
            let rows = values(&o.breakdown)
                .into_iter()
                .zip(CATEGORIES)
                .map(|(v, (name, class))| {
                    view! {
                        <tr>
                            <th scope="row"><span class=format!("swatch {class}")></span>{name}</th>
                            <td>{ByteSize(v).binary()}</td>
                            <td>{ByteSize(v).decimal()}</td>
                        </tr>
                    }
                })
                .collect_view();
            let verdict = o.gpu.map(|g| {
                let fits = o.per_gpu <= g.memory_bytes;
                let text = if fits {
                    format!(
                        "Cabe en {}: sobran {}.",
                        g.name,
                        ByteSize(g.memory_bytes - o.per_gpu).binary()
                    )
                } else {
                    format!(
                        "No cabe en {}: faltan {}.",
                        g.name,
                        ByteSize(o.per_gpu - g.memory_bytes).binary()
                    )
                };
                let limits = match (o.max_batch, o.max_seq) {
                    (Some(b), Some(s)) => format!(
                        "Lote máximo: {} · secuencia máxima: {} tokens.",
                        vram::group_digits(b),
                        vram::group_digits(s)
                    ),
                    _ => "Ni siquiera un lote de 1 cabe con esta configuración.".into(),
                };
                view! {
                    <p class="est-verdict" data-fits=fits.to_string()><strong>{text}</strong></p>
                    <p class="est-limits">{limits}</p>
                }
            });
            view! {
                <p class="calc-main">
                    <strong class="calc-big est-total">{ByteSize(o.per_gpu).binary()}</strong>
                    <span class="calc-alt">" = " {ByteSize(o.per_gpu).decimal()} " por GPU"</span>
                </p>
                {bar(&o)}
                {verdict}
                {o.speed.map(|h| {
                    let text = format!(
                        "Como mucho (roofline): primer token en ≥ {} ms, generación ≤ {} tokens/s por secuencia.",
                        fixed(h.ttft_seconds * 1000.0, 0),
                        fixed(h.decode_tokens_per_second, 0)
                    );
                    view! { <p class="est-speed">{text}</p> }
                })}
                {chart(&o)}
                {gpu_table(o.per_gpu)}
                <table class="calc-table est-table">
                    <caption>"Desglose"</caption>
                    <thead>
                        <tr><th scope="col">"Categoría"</th><th scope="col">"GiB"</th><th scope="col">"GB"</th></tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
            }
            .into_any()
        }
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
                    <select name="modo" on:change=set(|i, v| i.mode = v)>{mode_options}</select>
                </label>
                <label><span>"Formato de los pesos"</span>
                    <select name="formato" on:change=set(|i, v| i.format = v)>{format_options}</select>
                </label>
                <label><span>"Lote"</span>
                    <input name="lote" type="text" inputmode="numeric" value=batch
                        prop:value=move || inputs.with(|i| i.batch.clone())
                        aria-invalid=move || batch_error.with(Option::is_some).to_string()
                        on:input=set(|i, v| i.batch = v) />
                    {move || batch_error.get().map(|e| view! { <small class="field-error">{e}</small> })}
                </label>
                <label><span>"Tokens por secuencia"</span>
                    <input name="contexto" type="text" inputmode="numeric" value=seq
                        prop:value=move || inputs.with(|i| i.seq.clone())
                        aria-invalid=move || seq_error.with(Option::is_some).to_string()
                        on:input=set(|i, v| i.seq = v) />
                    {move || seq_error.get().map(|e| view! { <small class="field-error">{e}</small> })}
                </label>
                <label><span>"Atención"</span>
                    <select name="atencion" on:change=set(|i, v| i.attention = v)>
                        <option value="sdpa" selected=move || inputs.with(|i| i.attention != "eager")>"SDPA / FlashAttention"</option>
                        <option value="eager" selected=move || inputs.with(|i| i.attention == "eager")>"Ingenua (eager, N×N)"</option>
                    </select>
                </label>
                <label class="check">
                    <input type="checkbox" name="checkpointing"
                        prop:checked=move || inputs.with(|i| i.checkpointing)
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            inputs.update(|i| i.checkpointing = on);
                        } />
                    <span>"Gradient checkpointing"</span>
                </label>
            </div>
            <details class="est-import">
                <summary>"Usar mi propio config.json"</summary>
                <p class="calc-hint">
                    "Pega el config.json del modelo (el de su repositorio en Hugging Face) o elige el archivo. Se lee en tu navegador; no se envía a ningún sitio."
                </p>
                <label><span>"config.json"</span>
                    <textarea name="config" rows="5" spellcheck="false"
                        on:input=move |ev| {
                            let text = event_target_value(&ev);
                            if !text.trim().is_empty() {
                                import(text);
                            }
                        }></textarea>
                </label>
                <label><span>"Archivo"</span>
                    <input name="config-archivo" type="file" accept=".json,application/json" on:change=on_file />
                </label>
                {move || import_error.get().map(|e| view! { <p class="calc-error" role="alert">{e}</p> })}
                {move || custom.with(|c| c.as_ref().map(|(_, s)| view! { <p class="est-imported">{s.clone()}</p> }))}
            </details>
            <output aria-live="polite">{result}</output>
        </div>
    }
}

#[cfg(target_arch = "wasm32")]
mod file_import {
    //! Reading a dropped or chosen config.json with `File.text()`, size-checked first.

    use leptos::prelude::*;
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;

    pub fn read_first(
        ev: leptos::ev::Event,
        import: impl Fn(String) + 'static,
        error: RwSignal<Option<String>>,
    ) {
        let file = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
            .and_then(|input| input.files())
            .and_then(|files| files.get(0));
        let Some(file) = file else { return };
        if file.size() > vram::hf_config::MAX_CONFIG_BYTES as f64 {
            error.set(Some(
                "El archivo es demasiado grande para ser un config.json (máximo 1 MiB).".into(),
            ));
            return;
        }
        wasm_bindgen_futures::spawn_local(async move {
            match JsFuture::from(file.text())
                .await
                .ok()
                .and_then(|v| v.as_string())
            {
                Some(text) => import(text),
                None => error.set(Some("No se pudo leer el archivo.".into())),
            }
        });
    }
}

#[cfg(target_arch = "wasm32")]
mod url_state {
    //! Two-way sync between the inputs and the page's query string.

    use super::Inputs;
    use leptos::prelude::*;

    const STORAGE_KEY: &str = "vramlab.estimador";

    const KEYS: [&str; 8] = [
        "modelo",
        "gpu",
        "modo",
        "formato",
        "lote",
        "contexto",
        "atencion",
        "checkpointing",
    ];

    fn get(i: &Inputs, key: &str) -> String {
        match key {
            "modelo" => i.model.clone(),
            "gpu" => i.gpu.clone(),
            "modo" => i.mode.clone(),
            "formato" => i.format.clone(),
            "lote" => i.batch.clone(),
            "contexto" => i.seq.clone(),
            "atencion" => i.attention.clone(),
            _ => i.checkpointing.to_string(),
        }
    }

    fn put(i: &mut Inputs, key: &str, v: String) {
        // Only bounded text reaches the inputs; the estimator validates the rest.
        let v: String = v.chars().take(64).collect();
        match key {
            "modelo" => i.model = v,
            "gpu" => i.gpu = v,
            "modo" => i.mode = v,
            "formato" => i.format = v,
            "lote" => i.batch = v,
            "contexto" => i.seq = v,
            "atencion" => i.attention = v,
            _ => i.checkpointing = v == "true",
        }
    }

    pub fn sync(inputs: RwSignal<Inputs>) {
        let Some(window) = web_sys::window() else {
            return;
        };
        // A shared link wins; otherwise the reader's last configuration, if the browser
        // lets us keep one (storage can be disabled: then nothing is remembered).
        let storage = window.local_storage().ok().flatten();
        let search = window
            .location()
            .search()
            .ok()
            .filter(|s| s.len() > 1)
            .or_else(|| {
                storage
                    .as_ref()
                    .and_then(|s| s.get_item(STORAGE_KEY).ok().flatten())
            });
        if let Some(search) = search
            && let Ok(params) = web_sys::UrlSearchParams::new_with_str(&search)
        {
            let found: Vec<(&str, String)> = KEYS
                .iter()
                .filter_map(|k| params.get(k).map(|v| (*k, v)))
                .collect();
            if !found.is_empty() {
                // After hydration, so the static HTML and the first client render agree.
                request_animation_frame(move || {
                    inputs.update(|i| found.into_iter().for_each(|(k, v)| put(i, k, v)));
                });
            }
        }
        Effect::new(move |first: Option<()>| {
            let i = inputs.get();
            if first.is_none() {
                return;
            }
            let Ok(params) = web_sys::UrlSearchParams::new() else {
                return;
            };
            for k in KEYS {
                params.append(k, &get(&i, k));
            }
            let query = String::from(params.to_string());
            if let Some(w) = web_sys::window() {
                if let Ok(Some(storage)) = w.local_storage() {
                    let _ = storage.set_item(STORAGE_KEY, &query);
                }
                if let Ok(history) = w.history() {
                    let _ = history.replace_state_with_url(
                        &wasm_bindgen::JsValue::NULL,
                        "",
                        Some(&format!("?{query}")),
                    );
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> Inputs {
        Inputs {
            model: "llama-3.1-8b".into(),
            gpu: "rtx-4090".into(),
            mode: "inference".into(),
            format: "bf16".into(),
            batch: "1".into(),
            seq: "4096".into(),
            checkpointing: false,
            attention: "sdpa".into(),
        }
    }

    #[test]
    fn computes_what_the_cli_computes() {
        let o = compute(&inputs(), None).unwrap();
        assert_eq!(o.breakdown.weights, 16_060_522_496);
        assert!(o.max_batch.is_some());
    }

    #[test]
    fn imported_architecture_is_used() {
        let mut i = inputs();
        i.model = CUSTOM.into();
        let gpt2 = catalog::model("gpt2").unwrap().arch.clone();
        let custom = compute(&i, Some(&gpt2)).unwrap();
        assert_eq!(custom.breakdown.weights, 2 * 124_439_808);
        // Without an import, "propio" is a clear message, not a panic.
        assert!(compute(&i, None).unwrap_err().contains("config.json"));
    }

    #[test]
    fn bad_inputs_are_messages() {
        for (f, want) in [
            (
                Box::new(|i: &mut Inputs| i.batch = "cero".into()) as Box<dyn Fn(&mut Inputs)>,
                "Lote",
            ),
            (Box::new(|i: &mut Inputs| i.seq = "0".into()), "al menos 1"),
            (Box::new(|i: &mut Inputs| i.model = "x".into()), "modelo"),
            (
                Box::new(|i: &mut Inputs| i.format = "q9".into()),
                "no existe",
            ),
        ] {
            let mut i = inputs();
            f(&mut i);
            let e = compute(&i, None).unwrap_err();
            assert!(e.contains(want), "{e}");
        }
    }
}
