//! `gpu-web` is the second, lazily loaded wasm bundle of the site. It carries wgpu and
//! the `attention` kernels, which are far too large for the hydrate bundle every text
//! page loads; islands that need the GPU import it on demand.
//!
//! Its exports return plain JavaScript objects, and errors are Spanish strings, so the
//! importing island only reads fields.

#[cfg(target_arch = "wasm32")]
mod exports {
    use attention::{Gpu, smoke};
    use js_sys::{Object, Reflect};
    use wasm_bindgen::prelude::*;

    fn set(obj: &Object, key: &str, value: JsValue) -> Result<(), JsValue> {
        Reflect::set(obj, &key.into(), &value).map(|_| ())
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
        let gpu = Gpu::connect()
            .await
            .map_err(|e| JsValue::from_str(&e.to_string()))?;
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
}
