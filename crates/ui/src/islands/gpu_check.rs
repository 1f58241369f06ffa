//! WebGPU check: runs the smoke kernel of `attention` on the reader's GPU.
//!
//! wgpu is large, so it does not live in the hydrate bundle that every page loads.
//! This island stays small and, on click, imports the separate `gpu-web` bundle
//! (`js_url` + `wasm_url`, hashed at build time) and calls its `run_smoke` export.

use leptos::either::EitherOf4;
use leptos::prelude::*;

use numfmt::{fixed_es, scientific_es};

/// What a finished run shows.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
#[derive(Clone, Debug, PartialEq)]
pub struct SmokeView {
    pub len: u32,
    pub max_abs_err: f64,
    pub gpu_sum: f64,
    pub cpu_sum: f64,
    pub adapter: String,
}

// Only the browser constructs the outcomes; the build-time render is always `Idle`.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
#[derive(Clone, Debug, PartialEq)]
enum State {
    Idle,
    Running,
    Done(SmokeView),
    Failed(String),
}

/// Elements in the smoke run: small enough for a software adapter, large enough to
/// span many workgroups.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
const SMOKE_LEN: u32 = 100_003;

#[island]
pub fn GpuCheck(
    /// URL of the `gpu-web` JavaScript glue.
    js_url: String,
    /// URL of the `gpu-web` wasm module.
    wasm_url: String,
) -> impl IntoView {
    let (state, set_state) = signal(State::Idle);
    let on_click = move |_| {
        if state.get_untracked() == State::Running {
            return;
        }
        set_state.set(State::Running);
        #[cfg(target_arch = "wasm32")]
        {
            let (js_url, wasm_url) = (js_url.clone(), wasm_url.clone());
            wasm_bindgen_futures::spawn_local(async move {
                let next = match web::run_smoke(&js_url, &wasm_url, SMOKE_LEN).await {
                    Ok(v) => State::Done(v),
                    Err(msg) => State::Failed(msg),
                };
                set_state.set(next);
            });
        }
        #[cfg(not(target_arch = "wasm32"))]
        let _ = (&js_url, &wasm_url);
    };

    let status = move || match state.get() {
        State::Idle => EitherOf4::A(view! {
            <p class="gpu-status">"Pulsa el botón para ejecutar un kernel WGSL en tu GPU."</p>
        }),
        State::Running => EitherOf4::B(view! {
            <p class="gpu-status" data-state="running">"Ejecutando en la GPU…"</p>
        }),
        State::Done(v) => {
            let ok = v.max_abs_err < 1e-3;
            let verdict = if ok {
                "Correcto: la GPU y la CPU coinciden."
            } else {
                "La GPU devolvió valores distintos de la CPU."
            };
            EitherOf4::C(view! {
                <div class="gpu-status" data-state=if ok { "ok" } else { "mismatch" }>
                    <p><strong>{verdict}</strong></p>
                    <dl>
                        <dt>"Adaptador"</dt>
                        <dd class="gpu-adapter">{v.adapter}</dd>
                        <dt>"Elementos"</dt>
                        <dd>{vram::group_digits(u64::from(v.len))}</dd>
                        <dt>"Suma en GPU / CPU"</dt>
                        <dd>{format!("{} / {}", fixed_es(v.gpu_sum, 3), fixed_es(v.cpu_sum, 3))}</dd>
                        <dt>"Error absoluto máximo"</dt>
                        <dd class="gpu-err">{scientific_es(v.max_abs_err)}</dd>
                    </dl>
                </div>
            })
        }
        State::Failed(msg) => EitherOf4::D(view! {
            <p class="gpu-status calc-error" data-state="error" role="alert">{msg}</p>
        }),
    };

    view! {
        <div class="gpu-check">
            <button
                type="button"
                on:click=on_click
                disabled=move || state.get() == State::Running
            >
                "Probar WebGPU"
            </button>
            <output aria-live="polite">{status}</output>
        </div>
    }
}

#[cfg(target_arch = "wasm32")]
mod web {
    //! Calling the `gpu-web` bundle's smoke export.

    use super::SmokeView;
    use crate::islands::lazy_module::{call, describe, has_webgpu, load, number, text};

    pub async fn run_smoke(js_url: &str, wasm_url: &str, len: u32) -> Result<SmokeView, String> {
        if !has_webgpu() {
            return Err(
                "Este navegador no ofrece WebGPU (no existe navigator.gpu). \
                 Prueba con Chrome o Edge recientes, o activa WebGPU en la configuración \
                 del navegador."
                    .into(),
            );
        }
        let module = load("de GPU", js_url, wasm_url).await?;
        let report = call(&module, "run_smoke", &[&len.into()])
            .await
            .map_err(|e| describe(&e))?;
        Ok(SmokeView {
            len,
            max_abs_err: number(&report, "max_abs_err")?,
            gpu_sum: number(&report, "gpu_sum")?,
            cpu_sum: number(&report, "cpu_sum")?,
            adapter: text(&report, "adapter"),
        })
    }
}
