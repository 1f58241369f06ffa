//! `worker-web` is the wasm bundle that runs inside the diagnostics pages' Web Worker.
//! The page starts the worker from `site/worker.js`, a loader that imports this
//! bundle by its hashed name; once started, the bundle listens for `[request, bytes]`
//! messages, answers each with `diag-worker`, and posts the reply as JSON, a trace's
//! events as a transferred buffer beside it (see `diag_worker::protocol`). All decoding of readers' files happens here, off the
//! page's thread.
//!
//! Everything is wasm32-only; natively the crate is empty.

#[cfg(target_arch = "wasm32")]
mod worker {
    use diag_worker::{Reply, Request};
    use js_sys::{Array, ArrayBuffer, Uint8Array};
    use wasm_bindgen::JsCast;
    use wasm_bindgen::prelude::*;
    use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

    #[wasm_bindgen(start)]
    pub fn start() {
        console_error_panic_hook::set_once();
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        let replies = scope.clone();
        let listener = gloo_events::EventListener::new(&scope, "message", move |event| {
            let Some(event) = event.dyn_ref::<MessageEvent>() else {
                return;
            };
            post(&replies, answer(event.data()));
        });
        // Documented exception to "no forget": the listener is the worker's whole life;
        // the page ends it with `Worker.terminate()`, which drops everything at once.
        listener.forget();
        post(&scope, Reply::Ready);
    }

    /// Posts `reply` as JSON, or as `[json, bytes]` with the bytes' buffer transferred
    /// (a trace's events: see `diag_worker::packed_trace`).
    fn post(scope: &DedicatedWorkerGlobalScope, reply: Reply) {
        let (text, bytes) = reply.into_message();
        let text = JsValue::from_str(&text);
        // Posting fails only once the worker is closing: nobody is left to tell.
        let _ = match bytes {
            None => scope.post_message(&text),
            Some(bytes) => {
                let buffer = Uint8Array::from(&bytes[..]).buffer();
                scope.post_message_with_transfer(&Array::of2(&text, &buffer), &Array::of1(&buffer))
            }
        };
    }

    /// The reply to one `[request, bytes]` message.
    fn answer(data: JsValue) -> Reply {
        let failed = |why: String| Reply::Failed { id: None, why };
        let Some(parts) = data.dyn_ref::<Array>() else {
            return failed("El trabajador recibió un mensaje que no entiende.".into());
        };
        let request = match parts.get(0).as_string().map(|t| Request::from_json(&t)) {
            Some(Ok(r)) => r,
            Some(Err(why)) => return failed(why),
            None => return failed("El trabajador recibió un mensaje sin petición.".into()),
        };
        let Ok(buffer) = parts.get(1).dyn_into::<ArrayBuffer>() else {
            return Reply::Failed {
                id: Some(request.id),
                why: format!(
                    "{}: el trabajador no recibió el contenido del archivo.",
                    request.name
                ),
            };
        };
        // Refuse before copying: the buffer's length is whatever the page sent.
        if buffer.byte_length() as usize > diag_worker::MAX_FILE_BYTES {
            return diag_worker::too_big(&request);
        }
        let bytes = Uint8Array::new(&buffer).to_vec();
        diag_worker::run(&request, &bytes)
    }
}
