//! The browser side of the demo: the `gpu-web` exports (GPU and CPU versions) turned
//! into [`Outcome`]s.

use js_sys::{Float32Array, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};

use super::model::{Measured, Outcome};
use crate::islands::lazy_module::{call, describe, has_webgpu, load, number, text};

/// Where the runs happen.
pub enum Backend {
    /// The adapter's name, and whether it is a software one (SwiftShader, llvmpipe).
    Gpu(String, bool),
    Cpu(String),
}

/// Opens the GPU through the bundle, or says why the CPU fallback runs instead.
pub async fn connect(js_url: &str, wasm_url: &str) -> Result<Backend, String> {
    let module = load("de GPU", js_url, wasm_url).await?;
    if !has_webgpu() {
        return Ok(Backend::Cpu(
            "Este navegador no ofrece WebGPU (no existe navigator.gpu).".into(),
        ));
    }
    match call(&module, "attention_info", &[&JsValue::UNDEFINED]).await {
        Ok(info) => {
            let software = Reflect::get(&info, &"cpu".into())
                .ok()
                .and_then(|v| v.as_bool())
                .unwrap_or(false);
            Ok(Backend::Gpu(text(&info, "adapter"), software))
        }
        Err(e) => Ok(Backend::Cpu(format!(
            "El navegador tiene WebGPU pero no entregó un adaptador: {}",
            describe(&e)
        ))),
    }
}

/// A run request for the bundle.
pub struct Request {
    pub kernel: &'static str,
    pub n: u32,
    pub d: u32,
    pub heads: u32,
    pub causal: bool,
    pub max_total: u64,
    /// Aborted by «Cancelar»: the bundle stops before its next submission.
    pub signal: Option<web_sys::AbortSignal>,
}

fn options(r: &Request) -> JsValue {
    let o = Object::new();
    let set = |k: &str, v: JsValue| {
        let _ = Reflect::set(&o, &k.into(), &v);
    };
    set("kernel", r.kernel.into());
    set("seq", r.n.into());
    set("head_dim", r.d.into());
    set("heads", r.heads.into());
    set("causal", r.causal.into());
    set("max_total", (r.max_total as f64).into());
    if let Some(signal) = &r.signal {
        set("signal", signal.into());
    }
    o.into()
}

fn measured(v: &JsValue) -> Result<Measured, String> {
    let sample = Reflect::get(v, &"sample".into())
        .ok()
        .and_then(|s| s.dyn_into::<Float32Array>().ok())
        .map(|a| a.to_vec())
        .unwrap_or_default();
    Ok(Measured {
        ms: number(v, "median_ms")?,
        gflops: number(v, "gflops")?,
        max_abs_err: number(v, "max_abs_err")?,
        extra_bytes: number(v, "extra_bytes")? as u64,
        total_bytes: number(v, "total_bytes")? as u64,
        tile: text(v, "tile"),
        timing: text(v, "timing"),
        sample,
    })
}

fn refused(e: &JsValue) -> Option<Outcome> {
    let oom = Reflect::get(e, &"oom".into()).ok()?.as_bool()?;
    oom.then(|| Outcome::OutOfMemory {
        message: text(e, "message"),
        needed: number(e, "needed_bytes").unwrap_or(0.0) as u64,
        limit: number(e, "limit_bytes").unwrap_or(0.0) as u64,
        extra_bytes: number(e, "extra_bytes").unwrap_or(0.0) as u64,
        per_buffer: Reflect::get(e, &"per_buffer".into())
            .ok()
            .and_then(|v| v.as_bool())
            .unwrap_or(false),
    })
}

/// Runs one kernel; `gpu` picks the WebGPU export or the CPU one.
pub async fn run(js_url: &str, wasm_url: &str, gpu: bool, r: &Request) -> Outcome {
    let module = match load("de GPU", js_url, wasm_url).await {
        Ok(m) => m,
        Err(e) => return Outcome::Failed(e),
    };
    let name = if gpu {
        "run_attention"
    } else {
        "run_attention_cpu"
    };
    match call(&module, name, &[&options(r)]).await {
        Ok(v) => measured(&v).map_or_else(Outcome::Failed, Outcome::Done),
        Err(e) => refused(&e).unwrap_or_else(|| Outcome::Failed(describe(&e))),
    }
}

/// Milliseconds on the page's clock.
pub fn now_ms() -> f64 {
    // Raw web_sys: gloo has no `performance.now()`.
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or_else(js_sys::Date::now, |p| p.now())
}
