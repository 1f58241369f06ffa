//! `gpu-web` is the second, lazily loaded wasm bundle of the site. It carries wgpu and
//! the `attention` kernels, which are far too large for the hydrate bundle every text
//! page loads; islands that need the GPU import it on demand.
//!
//! Its exports take and return plain JavaScript objects, and errors are Spanish
//! strings (or, for the out-of-memory refusal, an object with the bytes), so the
//! importing island only reads fields. The device is opened once and kept.

#[cfg(target_arch = "wasm32")]
mod exports {
    use std::cell::RefCell;
    use std::rc::Rc;

    use attention::reference::{cpu_naive, cpu_tiled};
    use attention::run::{RunError, RunOptions, RunReport, Timing, run_until};
    use attention::shape::{self, Dtype, Kernel, MemoryLimits, Shape};
    use attention::{Gpu, smoke};
    use js_sys::{Float32Array, Object, Reflect};
    use wasm_bindgen::prelude::*;

    thread_local! {
        static GPU: RefCell<Option<Rc<Gpu>>> = const { RefCell::new(None) };
    }

    fn set(obj: &Object, key: &str, value: JsValue) -> Result<(), JsValue> {
        Reflect::set(obj, &key.into(), &value).map(|_| ())
    }

    fn now_ms() -> f64 {
        web_sys::window()
            .and_then(|w| w.performance())
            .map_or_else(js_sys::Date::now, |p| p.now())
    }

    /// The open device, connecting on first use. A lost device is dropped so the next
    /// call reconnects.
    async fn gpu() -> Result<Rc<Gpu>, JsValue> {
        if let Some(g) = GPU.with(|c| c.borrow().clone()) {
            if g.health().is_ok() {
                return Ok(g);
            }
            GPU.with(|c| c.borrow_mut().take());
        }
        let g = Rc::new(
            Gpu::connect()
                .await
                .map_err(|e| JsValue::from_str(&e.to_string()))?,
        );
        GPU.with(|c| *c.borrow_mut() = Some(Rc::clone(&g)));
        Ok(g)
    }

    /// Runs the smoke kernel on `len` deterministic inputs and compares it with the CPU.
    /// Resolves to `{len, gpu_sum, cpu_sum, max_abs_err, adapter, backend}`; rejects with
    /// a Spanish message.
    #[wasm_bindgen]
    pub async fn run_smoke(len: u32) -> Result<JsValue, JsValue> {
        console_error_panic_hook::set_once();
        let len = usize::try_from(len)
            .unwrap_or(usize::MAX)
            .min(smoke::MAX_LEN);
        let gpu = gpu().await?;
        let input = smoke::sample_input(len);
        let report = smoke::run(&gpu, &input)
            .await
            .map_err(|e| JsValue::from_str(&e.to_string()))?;
        let out = Object::new();
        set(&out, "len", (report.len as f64).into())?;
        set(&out, "gpu_sum", report.gpu_sum.into())?;
        set(&out, "cpu_sum", report.cpu_sum.into())?;
        set(&out, "max_abs_err", report.max_abs_err.into())?;
        set(&out, "adapter", report.adapter.to_string().into())?;
        set(&out, "backend", report.adapter.backend.clone().into())?;
        Ok(out.into())
    }

    /// The adapter a run would use: `{adapter, max_binding, max_buffer, f16, timestamps}`.
    #[wasm_bindgen]
    pub async fn attention_info() -> Result<JsValue, JsValue> {
        console_error_panic_hook::set_once();
        let gpu = gpu().await?;
        let out = Object::new();
        set(&out, "adapter", gpu.adapter.to_string().into())?;
        set(
            &out,
            "max_binding",
            (gpu.limits.max_storage_buffer_binding_size as f64).into(),
        )?;
        set(
            &out,
            "max_buffer",
            (gpu.limits.max_buffer_size as f64).into(),
        )?;
        set(&out, "f16", gpu.has_f16().into())?;
        set(&out, "timestamps", gpu.has_timestamps().into())?;
        // A software adapter (SwiftShader, llvmpipe, lavapipe): large runs take minutes.
        let label = gpu.adapter.to_string().to_ascii_lowercase();
        let cpu = gpu.adapter.device_type == "Cpu"
            || ["swiftshader", "llvmpipe", "lavapipe"]
                .iter()
                .any(|n| label.contains(n));
        set(&out, "cpu", cpu.into())?;
        Ok(out.into())
    }

    /// Options from JS: `{kernel, seq, head_dim, heads, causal, max_total}` (max_total in
    /// bytes, 0 for none). Anything missing or out of range is a Spanish error.
    struct Request {
        kernel: Kernel,
        shape: Shape,
        max_total: Option<u64>,
    }

    fn field(opts: &JsValue, key: &str) -> Result<f64, JsValue> {
        Reflect::get(opts, &key.into())
            .ok()
            .and_then(|v| v.as_f64())
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| JsValue::from_str(&format!("falta el campo «{key}» o no es válido")))
    }

    fn small(opts: &JsValue, key: &str) -> Result<u32, JsValue> {
        let v = field(opts, key)?;
        if v.fract() != 0.0 || v > f64::from(u32::MAX) {
            return Err(JsValue::from_str(&format!("«{key}» debe ser un entero")));
        }
        Ok(v as u32)
    }

    fn request(opts: &JsValue) -> Result<Request, JsValue> {
        let kernel_name = Reflect::get(opts, &"kernel".into())
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default();
        let kernel = Kernel::parse(&kernel_name).map_err(|e| JsValue::from_str(&e))?;
        let causal = Reflect::get(opts, &"causal".into())
            .ok()
            .and_then(|v| v.as_bool())
            .unwrap_or(false);
        let shape = Shape::new(
            1,
            small(opts, "heads")?,
            small(opts, "seq")?,
            small(opts, "head_dim")?,
            causal,
        );
        shape
            .validate()
            .map_err(|e| JsValue::from_str(&e.to_string()))?;
        let max_total = field(opts, "max_total")
            .ok()
            .filter(|&v| v > 0.0)
            .map(|v| v as u64);
        Ok(Request {
            kernel,
            shape,
            max_total,
        })
    }

    /// The refusal object: `{oom: true, message, needed_bytes, limit_bytes, extra_bytes}`.
    fn too_large(e: &shape::TooLarge, req: &Request) -> JsValue {
        let out = Object::new();
        let extra = shape::extra_bytes(req.kernel, &req.shape, Dtype::F32);
        let _ = set(&out, "extra_bytes", (extra as f64).into());
        let _ = set(&out, "oom", true.into());
        // Whether one buffer (S) passed a per-buffer limit, or the run passed a total.
        let _ = set(&out, "per_buffer", e.role.is_some().into());
        let _ = set(&out, "message", e.to_string().into());
        let _ = set(&out, "needed_bytes", (e.needed as f64).into());
        let _ = set(&out, "limit_bytes", (e.limit as f64).into());
        out.into()
    }

    fn report_object(r: &RunReport, adapter: &str) -> Result<JsValue, JsValue> {
        let out = Object::new();
        set(&out, "kernel", r.kernel.name().into())?;
        set(&out, "seq", r.shape.seq.into())?;
        set(&out, "median_ms", r.median_ms.into())?;
        set(&out, "gflops", r.gflops.into())?;
        set(&out, "max_abs_err", r.max_abs_err.into())?;
        set(&out, "extra_bytes", (r.extra_bytes as f64).into())?;
        set(&out, "total_bytes", (r.total_bytes as f64).into())?;
        set(&out, "checked_rows", r.checked_rows.into())?;
        set(
            &out,
            "timing",
            match r.timing {
                Timing::Gpu => "gpu",
                Timing::Wall => "wall",
            }
            .into(),
        )?;
        let tile = r
            .plan
            .map(|p| p.label().replace('x', "×"))
            .unwrap_or_default();
        set(&out, "tile", tile.into())?;
        set(&out, "adapter", adapter.into())?;
        set(
            &out,
            "sample",
            Float32Array::from(r.sample.as_slice()).into(),
        )?;
        Ok(out.into())
    }

    /// Runs one kernel on the reader's GPU (1 warm-up, 3 timed repeats, every row
    /// checked up to a budget). Rejects with a string, or with the refusal object when
    /// the run does not fit the adapter's limits or the reader's.
    #[wasm_bindgen]
    pub async fn run_attention(opts: JsValue) -> Result<JsValue, JsValue> {
        console_error_panic_hook::set_once();
        let req = request(&opts)?;
        let gpu = gpu().await?;
        let options = RunOptions {
            warmup: 1,
            repeats: 3,
            check_budget: 20_000_000,
            max_total: req.max_total,
            ..RunOptions::default()
        };
        // `signal`: an AbortSignal the page aborts on «Cancelar»; asked before every
        // submission.
        let signal = Reflect::get(&opts, &"signal".into())
            .ok()
            .and_then(|s| s.dyn_into::<web_sys::AbortSignal>().ok());
        let stop = || signal.as_ref().is_some_and(web_sys::AbortSignal::aborted);
        match run_until(
            &gpu,
            req.kernel,
            &req.shape,
            Dtype::F32,
            &options,
            &now_ms,
            &stop,
        )
        .await
        {
            Ok(r) => report_object(&r, &gpu.adapter.to_string()),
            Err(RunError::TooLarge(e)) => Err(too_large(&e, &req)),
            Err(RunError::Cancelled) => {
                let out = Object::new();
                let _ = set(&out, "cancelled", true.into());
                Err(out.into())
            }
            Err(e) => Err(JsValue::from_str(&e.to_string())),
        }
    }

    /// The same lesson on the CPU, for browsers without WebGPU: the naive and tiled
    /// algorithms in f32 in this wasm module, checked against the f64 reference. The
    /// reader's memory limit applies as on the GPU.
    #[wasm_bindgen]
    pub fn run_attention_cpu(opts: JsValue) -> Result<JsValue, JsValue> {
        console_error_panic_hook::set_once();
        let req = request(&opts)?;
        let limits = MemoryLimits {
            max_buffer: u64::MAX,
            max_binding: u64::MAX,
            max_total: req.max_total,
        };
        shape::check_limits(req.kernel, &req.shape, Dtype::F32, &limits)
            .map_err(|e| too_large(&e, &req))?;
        let start = now_ms();
        let result = match req.kernel {
            Kernel::Naive => cpu_naive(&req.shape),
            Kernel::Tiled => cpu_tiled(&req.shape, 32, 32),
        }
        .map_err(|e| JsValue::from_str(&e))?;
        let ms = now_ms() - start;
        let rows = attention::run::sample_rows(&req.shape, 20_000_000);
        let d = req.shape.head_dim as usize;
        let mut sample = Vec::with_capacity(rows.len() * d);
        let mut max_abs_err: f64 = 0.0;
        let n = u64::from(req.shape.seq);
        for &g in &rows {
            let at = g as usize * d;
            let got = result.output.get(at..at + d).unwrap_or(&[]);
            let reference =
                attention::reference::reference_row(&req.shape, (g / n) as u32, (g % n) as u32);
            for (x, r) in got.iter().zip(reference) {
                max_abs_err = max_abs_err.max((f64::from(*x) - r).abs());
            }
            sample.extend_from_slice(got);
        }
        let out = Object::new();
        set(&out, "kernel", req.kernel.name().into())?;
        set(&out, "seq", req.shape.seq.into())?;
        set(&out, "median_ms", ms.into())?;
        set(
            &out,
            "gflops",
            (req.shape.flops() / (ms.max(1e-3) * 1e-3) / 1e9).into(),
        )?;
        set(&out, "max_abs_err", max_abs_err.into())?;
        set(&out, "extra_bytes", (result.extra_bytes as f64).into())?;
        let total = 4 * req.shape.tensor_elems() * 4 + result.extra_bytes;
        set(&out, "total_bytes", (total as f64).into())?;
        set(&out, "checked_rows", (rows.len() as u32).into())?;
        set(&out, "timing", "cpu".into())?;
        set(
            &out,
            "tile",
            if req.kernel == Kernel::Tiled {
                "32×32"
            } else {
                ""
            }
            .into(),
        )?;
        set(&out, "adapter", "CPU (WebAssembly)".into())?;
        set(&out, "sample", Float32Array::from(sample.as_slice()).into())?;
        Ok(out.into())
    }
}
