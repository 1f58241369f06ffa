//! The FlashAttention demo: the naive and the tiled attention kernels of `attention`,
//! run on the reader's GPU through the lazily loaded `gpu-web` bundle, side by side.
//! Raising N (or lowering the memory the reader allows) makes the naive kernel refuse
//! its N × N buffer while the tiled one carries on — the out-of-memory of the guide,
//! live. Without WebGPU the same lesson runs on the CPU in WebAssembly, smaller.
//!
//! Runs are awaited one by one, so the page repaints between them; a cancel button and
//! a time cap stop a sweep between runs.

mod chart;
mod model;
#[cfg(target_arch = "wasm32")]
mod web;

use leptos::either::{Either, EitherOf3};
use leptos::prelude::*;
use vram::ByteSize;

use model::{Outcome, Point};
use numfmt::{fixed_es, scientific_es};

/// Sequence lengths offered.
const LENGTHS: [u32; 9] = [128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768];
/// Memory limits offered (bytes; 0 = only the adapter's own limits).
const LIMITS: [(u64, &str); 6] = [
    (0, "solo los límites del adaptador"),
    (2 << 20, "2 MiB"),
    (16 << 20, "16 MiB"),
    (128 << 20, "128 MiB"),
    (512 << 20, "512 MiB"),
    (2 << 30, "2 GiB"),
];
/// From this N a software adapter (SwiftShader, llvmpipe) takes seconds per pass: the
/// reader is warned before running.
const SOFTWARE_WARN_N: u32 = 4096;
/// A sweep stops at the first run that starts after this many seconds.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
const TIME_CAP_S: f64 = 60.0;

/// Where runs happen, once known.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
#[derive(Clone, Debug, PartialEq)]
enum Where {
    Unknown,
    Gpu(String),
    Cpu(String),
}

fn select_u32(label: &'static str, options: &'static [u32], value: RwSignal<u32>) -> impl IntoView {
    view! {
        <label>
            {label}
            <select on:change=move |ev| {
                if let Ok(v) = event_target_value(&ev).parse::<u32>() {
                    value.set(v);
                }
            }>
                {options
                    .iter()
                    .map(|&o| view! { <option value=o.to_string() selected=move || value.get() == o>{o.to_string()}</option> })
                    .collect_view()}
            </select>
        </label>
    }
}

#[island]
pub fn AttentionDemo(
    /// URL of the `gpu-web` JavaScript glue.
    js_url: String,
    /// URL of the `gpu-web` wasm module.
    wasm_url: String,
) -> impl IntoView {
    let n = RwSignal::new(1024u32);
    let d = RwSignal::new(64u32);
    let heads = RwSignal::new(4u32);
    let causal = RwSignal::new(false);
    let limit = RwSignal::new(0u64);
    let running = RwSignal::new(false);
    let cancel = RwSignal::new(false);
    // Whether the WebGPU adapter is a software one (SwiftShader, llvmpipe).
    let software = RwSignal::new(false);
    // «Cancelar» aborts it: the GPU bundle stops before its next submission.
    #[cfg(target_arch = "wasm32")]
    let abort: StoredValue<Option<web_sys::AbortController>, LocalStorage> =
        StoredValue::new_local(None);
    let place = RwSignal::new(Where::Unknown);
    let status = RwSignal::new(String::from(
        "Elige el tamaño y pulsa «Ejecutar»: cada kernel se ejecuta en tu GPU y se compara con una referencia en f64.",
    ));
    let points = RwSignal::new(Vec::<Point>::new());

    let start = move |sweep_mode: bool| {
        if running.get_untracked() {
            return;
        }
        running.set(true);
        cancel.set(false);
        let lengths = if sweep_mode {
            model::sweep(n.get_untracked())
        } else {
            vec![n.get_untracked()]
        };
        let (dd, hh, cc, ll) = (
            d.get_untracked(),
            heads.get_untracked(),
            causal.get_untracked(),
            limit.get_untracked(),
        );
        points.set(Vec::new());
        #[cfg(target_arch = "wasm32")]
        {
            let (js_url, wasm_url) = (js_url.clone(), wasm_url.clone());
            let controller = web_sys::AbortController::new().ok();
            let signal = controller.as_ref().map(web_sys::AbortController::signal);
            abort.set_value(controller);
            wasm_bindgen_futures::spawn_local(async move {
                sweep(
                    &js_url, &wasm_url, lengths, dd, hh, cc, ll, place, software, status, points,
                    cancel, signal,
                )
                .await;
                running.set(false);
            });
        }
        #[cfg(not(target_arch = "wasm32"))]
        let _ = (&js_url, &wasm_url, lengths, dd, hh, cc, ll);
    };
    let start_one = start.clone();

    let rows = move || {
        let pts = points.get();
        if pts.is_empty() {
            return Either::Left(view! { <tr><td colspan="7">"Aún no hay mediciones."</td></tr> });
        }
        Either::Right(
            pts.iter()
                .flat_map(|p| {
                    [("ingenuo", &p.naive), ("por bloques", &p.tiled)]
                        .into_iter()
                        .filter_map(move |(name, o)| o.as_ref().map(|o| (p.n, name, o.clone())))
                })
                .map(|(n, name, o)| result_row(n, name, &o))
                .collect_view(),
        )
    };
    let summary = move || {
        let pts = points.get();
        let last = pts
            .iter()
            .rev()
            .find(|p| p.max_diff().is_some() || p.speedup().is_some())?;
        let mut parts = Vec::new();
        if let Some(s) = last.speedup() {
            parts.push(format!(
                "Con N = {}, el kernel por bloques tarda {}× menos que el ingenuo.",
                last.n,
                fixed_es(s, 2)
            ));
        }
        if let Some(diff) = last.max_diff() {
            parts.push(format!(
                "Diferencia máxima entre las salidas de ambos: {}.",
                scientific_es(diff)
            ));
        }
        Some(view! { <p class="attn-summary">{parts.join(" ")}</p> })
    };
    let backend_note = move || match place.get() {
        Where::Unknown => None,
        Where::Gpu(adapter) => Some(Either::Left(
            view! { <p class="attn-backend">"GPU: " <strong>{adapter}</strong></p> },
        )),
        Where::Cpu(reason) => Some(Either::Right(view! {
            <div class="attn-backend attn-fallback" role="note">
                <p><strong>"Sin WebGPU: la demostración se ejecuta en la CPU, en WebAssembly, con tamaños pequeños."</strong> " " {reason}</p>
                <p>"Para activar WebGPU: en Chrome o Edge 113+ (Windows, macOS, ChromeOS) viene activado; en Linux y Android abre "
                    <code>"chrome://flags/#enable-unsafe-webgpu"</code>" y actívalo (en Linux, también "<code>"#enable-vulkan"</code>"); en Firefox 141+ está activado en Windows y en versiones anteriores se activa con "
                    <code>"dom.webgpu.enabled"</code>" en "<code>"about:config"</code>"; en Safari 26 viene activado y en versiones anteriores está en Desarrollo › Funciones experimentales › WebGPU."</p>
            </div>
        })),
    };

    view! {
        <div class="attn-demo">
            <fieldset class="attn-controls" disabled=move || running.get()>
                <legend>"Problema (lote 1, f32)"</legend>
                {select_u32("Longitud N ", &LENGTHS, n)}
                {select_u32("Dimensión de cabeza d ", &[64, 128], d)}
                {select_u32("Cabezas ", &[1, 2, 4, 8, 16], heads)}
                <label class="attn-check">
                    <input type="checkbox" prop:checked=move || causal.get() on:change=move |ev| causal.set(event_target_checked(&ev)) />
                    " Máscara causal"
                </label>
                <label>
                    "Memoria permitida "
                    <select on:change=move |ev| {
                        if let Ok(v) = event_target_value(&ev).parse::<u64>() {
                            limit.set(v);
                        }
                    }>
                        {LIMITS
                            .iter()
                            .map(|&(v, label)| view! { <option value=v.to_string() selected=move || limit.get() == v>{label}</option> })
                            .collect_view()}
                    </select>
                </label>
            </fieldset>
            <div class="attn-actions">
                <button type="button" class="attn-run" disabled=move || running.get() on:click=move |_| start_one(false)>"Ejecutar"</button>
                <button type="button" class="attn-sweep" disabled=move || running.get() on:click=move |_| start(true)>
                    {move || format!("Barrer N = 128 … {}", n.get())}
                </button>
                <button type="button" class="attn-cancel" disabled=move || !running.get() on:click=move |_| {
                    cancel.set(true);
                    status.set("Cancelando… (se detiene al acabar la pasada de GPU en curso)".into());
                    #[cfg(target_arch = "wasm32")]
                    abort.with_value(|a| {
                        if let Some(a) = a {
                            a.abort();
                        }
                    });
                }>"Cancelar"</button>
            </div>
            {backend_note}
            {move || (software.get() && n.get() >= SOFTWARE_WARN_N).then(|| view! {
                <p class="attn-warning calc-hint" role="note">{format!(
                    "Tu adaptador WebGPU es de software (se ejecuta en la CPU): con N = {} cada pasada puede tardar decenas de segundos. «Cancelar» actúa al terminar la pasada en curso.",
                    n.get()
                )}</p>
            })}
            <output class="attn-status" aria-live="polite" data-running=move || running.get().to_string()>{move || status.get()}</output>
            <div class="table-scroll">
                <table class="attn-results" tabindex="0">
                    <caption>"Mediciones (mediana de 3 repeticiones tras 1 de calentamiento)"</caption>
                    <thead>
                        <tr>
                            <th scope="col">"N"</th>
                            <th scope="col">"Kernel"</th>
                            <th scope="col">"Tiempo"</th>
                            <th scope="col">"GFLOP/s"</th>
                            <th scope="col">"Memoria extra"</th>
                            <th scope="col">"Error máx. frente a f64"</th>
                            <th scope="col">"Estado"</th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
            {summary}
            {move || chart::memory_bars(&points.get())}
            {move || chart::time_chart(&points.get())}
        </div>
    }
}

fn result_row(n: u32, name: &'static str, o: &Outcome) -> impl IntoView + use<> {
    match o {
        Outcome::Done(m) => EitherOf3::A(view! {
            <tr data-kernel=name data-state="ok">
                <td>{n.to_string()}</td>
                <td>{name}{(!m.tile.is_empty()).then(|| format!(" ({})", m.tile))}</td>
                <td data-label="Tiempo">{format!("{} ms", fixed_es(m.ms, 2))}</td>
                <td data-label="GFLOP/s">{fixed_es(m.gflops, 1)}</td>
                <td data-label="Memoria extra">{ByteSize(m.extra_bytes).binary()}</td>
                <td class="attn-err" data-label="Error máx. frente a f64">{scientific_es(m.max_abs_err)}</td>
                <td data-label="Estado">{if m.max_abs_err <= 1e-4 { "correcto" } else { "difiere" }}</td>
            </tr>
        }),
        Outcome::OutOfMemory { message, .. } => EitherOf3::B(view! {
            <tr data-kernel=name data-state="oom">
                <td>{n.to_string()}</td>
                <td>{name}</td>
                <td colspan="5" class="calc-error">{message.clone()}</td>
            </tr>
        }),
        Outcome::Failed(msg) => EitherOf3::C(view! {
            <tr data-kernel=name data-state="error">
                <td>{n.to_string()}</td>
                <td>{name}</td>
                <td colspan="5" class="calc-error">{msg.clone()}</td>
            </tr>
        }),
    }
}

#[cfg(target_arch = "wasm32")]
#[allow(clippy::too_many_arguments)]
async fn sweep(
    js_url: &str,
    wasm_url: &str,
    lengths: Vec<u32>,
    d: u32,
    heads: u32,
    causal: bool,
    limit: u64,
    place: RwSignal<Where>,
    software: RwSignal<bool>,
    status: RwSignal<String>,
    points: RwSignal<Vec<Point>>,
    cancel: RwSignal<bool>,
    signal: Option<web_sys::AbortSignal>,
) {
    use crate::islands::lazy_module::yield_now;

    if place.get_untracked() == Where::Unknown {
        status.set("Cargando el módulo de GPU…".into());
        match web::connect(js_url, wasm_url).await {
            Ok(web::Backend::Gpu(a, cpu)) => {
                software.set(cpu);
                place.set(Where::Gpu(a));
            }
            Ok(web::Backend::Cpu(reason)) => place.set(Where::Cpu(reason)),
            Err(e) => {
                status.set(e);
                return;
            }
        }
    }
    let started = web::now_ms();
    for n in lengths {
        let on_gpu = matches!(place.get_untracked(), Where::Gpu(_));
        if !on_gpu && !model::cpu_accepts(n, heads) {
            status.set(format!(
                "La versión en CPU se detiene antes de N = {n} con {heads} cabezas para no bloquear la página."
            ));
            return;
        }
        points.update(|p| {
            p.push(Point {
                n,
                naive: None,
                tiled: None,
            })
        });
        for kernel in ["naive", "tiled"] {
            if cancel.get_untracked() {
                status.set("Cancelado.".into());
                return;
            }
            if (web::now_ms() - started) / 1e3 > TIME_CAP_S {
                status.set(format!("Detenido: el barrido superó {TIME_CAP_S} s. Prueba con menos cabezas o una N menor."));
                return;
            }
            let label = if kernel == "naive" {
                "ingenuo"
            } else {
                "por bloques"
            };
            status.set(format!("Ejecutando el kernel {label} con N = {n}…"));
            yield_now().await;
            let request = web::Request {
                kernel,
                n,
                d,
                heads,
                causal,
                max_total: limit,
                signal: signal.clone(),
            };
            let mut outcome = web::run(js_url, wasm_url, on_gpu, &request).await;
            // Cancelled during the run: nothing measured to show.
            if cancel.get_untracked() {
                status.set("Cancelado.".into());
                return;
            }
            // A lost device ends the GPU path: explain and carry on on the CPU.
            if let Outcome::Failed(msg) = &outcome
                && msg.starts_with("Se perdió el dispositivo")
            {
                place.set(Where::Cpu(msg.clone()));
                if model::cpu_accepts(n, heads) {
                    outcome = web::run(js_url, wasm_url, false, &request).await;
                }
            }
            points.update(|p| {
                if let Some(last) = p.last_mut() {
                    if kernel == "naive" {
                        last.naive = Some(outcome)
                    } else {
                        last.tiled = Some(outcome)
                    }
                }
            });
        }
    }
    status.set("Listo.".into());
}
