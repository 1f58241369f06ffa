//! The page's side of the diagnostics Web Worker (`worker-web`): the snapshot viewer
//! and the allocator lab hand it the reader's file and render its answer, so decoding
//! a heavy or forged file never blocks the page.
//!
//! Raw `web_sys::Worker` with gloo-events listeners, not `gloo-worker`: gloo-worker
//! 0.5 panics when the `Worker` constructor throws, exposes neither the worker's
//! `error` event (a module that traps or runs out of memory would leave the page
//! waiting forever) nor `terminate()` (a new file could not cancel a long decode),
//! and its serde-only codec cannot transfer an `ArrayBuffer` (the file would be copied
//! twice). Messages are `diag_worker::protocol`'s.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// Where the worker's scripts are: hashed URLs the site generator fills in.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerUrls {
    /// `site/worker.js`, the module-worker loader.
    pub loader: String,
    /// `worker_web.js`, the bundle's wasm-bindgen glue.
    pub js: String,
    /// `worker_web_bg.wasm`.
    pub wasm: String,
}

/// The line shown while the worker has the reader's file: its name, and a button that
/// stops the work.
pub fn busy_line(
    reading: RwSignal<Option<String>>,
    cancel: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
    move || {
        reading.get().map(|name| {
            view! {
                <p class="calc-busy" role="status">
                    {format!("Leyendo {name} en segundo plano… ")}
                    <button type="button" name="cancelar" on:click=move |_| cancel()>"Cancelar"</button>
                </p>
            }
        })
    }
}

/// An island's file work in the worker: the handlers for an `<input type=file>` and a
/// cancel button, and the name of the file being read (for [`busy_line`]). Replies go
/// to the island's handler; on the server there is no worker and nothing happens.
#[derive(Clone, Copy)]
pub struct FileJobs {
    job: diag_worker::Job,
    reading: RwSignal<Option<String>>,
    #[cfg(target_arch = "wasm32")]
    jobs: StoredValue<Background<diag_worker::Reply>, LocalStorage>,
}

impl FileJobs {
    pub fn new(
        job: diag_worker::Job,
        worker: WorkerUrls,
        reading: RwSignal<Option<String>>,
        // Called with the file's name and the worker's reply.
        on_reply: impl Fn(String, diag_worker::Reply) + 'static,
    ) -> Self {
        #[cfg(target_arch = "wasm32")]
        {
            let on_reply = move |reply| {
                let name = reading.get_untracked().unwrap_or_default();
                reading.set(None);
                on_reply(name, reply);
            };
            // Disposed with the island: dropping it terminates the worker.
            let jobs = StoredValue::new_local(Background::new(worker, on_reply));
            Self { job, reading, jobs }
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            let _ = (worker, on_reply);
            Self { job, reading }
        }
    }

    /// Reads the chosen file and hands it to the worker; read errors go to `error`.
    pub fn on_file(self, ev: leptos::ev::Event, error: RwSignal<Option<String>>) {
        #[cfg(target_arch = "wasm32")]
        super::file_text::read_first_buffer(
            ev,
            diag_worker::MAX_FILE_BYTES,
            move |name, buffer| {
                self.reading.set(Some(name.clone()));
                self.jobs.update_value(|j| {
                    j.send(self.job, name, buffer);
                });
            },
            error,
        );
        #[cfg(not(target_arch = "wasm32"))]
        let _ = (ev, error, self.job);
    }

    /// Stops the work in progress (the worker is terminated).
    pub fn cancel(self) {
        #[cfg(target_arch = "wasm32")]
        self.jobs.update_value(|j| j.cancel());
        self.reading.set(None);
    }
}

#[cfg(target_arch = "wasm32")]
pub use client::Background;

#[cfg(target_arch = "wasm32")]
mod client {
    use super::WorkerUrls;
    use diag_worker::protocol::WorkerReply;
    use diag_worker::{Job, Request};
    use gloo_events::{EventListener, EventListenerOptions};
    use js_sys::{Array, ArrayBuffer, Uint8Array};
    use std::cell::RefCell;
    use std::rc::Rc;
    use wasm_bindgen::{JsCast, JsValue};

    /// What a running worker shares with its listeners.
    #[derive(Default)]
    struct Shared {
        ready: bool,
        /// Requests posted before the module said it was ready.
        queued: Vec<(Request, ArrayBuffer)>,
        /// The request being worked on.
        busy: Option<u32>,
        /// The worker failed or stopped: the next request starts a new one.
        dead: bool,
    }

    /// One started worker; dropping it terminates the worker, whatever it was doing.
    struct Running {
        worker: web_sys::Worker,
        shared: Rc<RefCell<Shared>>,
        _listeners: [EventListener; 3],
    }

    impl Drop for Running {
        fn drop(&mut self) {
            self.worker.terminate();
        }
    }

    /// A worker started on demand, with the island's reply handler. A request sent
    /// while another is in progress cancels that one (the worker is terminated and a
    /// new one started; while the module is still loading, the new request just
    /// replaces the queued one); dropping this (the island going away) terminates it
    /// too.
    /// Generic over how the page reads replies (`diag_worker::Reply`, or the lighter
    /// `LightReply` of a page that only explains and estimates).
    pub struct Background<R: WorkerReply> {
        urls: WorkerUrls,
        on_reply: Rc<dyn Fn(R)>,
        running: Option<Running>,
        next_id: u32,
    }

    impl<R: WorkerReply> Background<R> {
        pub fn new(urls: WorkerUrls, on_reply: impl Fn(R) + 'static) -> Self {
            Self {
                urls,
                on_reply: Rc::new(on_reply),
                running: None,
                next_id: 0,
            }
        }

        /// Hands `bytes` (transferred, so the page keeps no copy) to the worker. The
        /// reply comes to the handler with the returned id.
        pub fn send(&mut self, job: Job, name: String, bytes: ArrayBuffer) -> u32 {
            self.next_id = self.next_id.wrapping_add(1);
            let request = Request {
                id: self.next_id,
                job,
                name,
            };
            // A worker still loading its module has done no work yet: the new request
            // replaces the queued one instead of restarting it (which would abort the
            // module's download and start it over).
            if let Some(r) = &self.running {
                let mut s = r.shared.borrow_mut();
                if !s.dead && !s.ready {
                    s.queued.clear();
                    s.busy = Some(request.id);
                    s.queued.push((request.clone(), bytes));
                    return request.id;
                }
            }
            let reusable = self.running.as_ref().is_some_and(|r| {
                let s = r.shared.borrow();
                !s.dead && s.busy.is_none()
            });
            if !reusable {
                // Terminates a worker still decoding the previous file.
                self.running = None;
                match start(&self.urls, self.on_reply.clone()) {
                    Ok(r) => self.running = Some(r),
                    Err(why) => {
                        (self.on_reply)(R::failed(Some(request.id), why));
                        return request.id;
                    }
                }
            }
            if let Some(r) = &self.running {
                let mut s = r.shared.borrow_mut();
                s.busy = Some(request.id);
                if s.ready {
                    drop(s);
                    post(&r.worker, &request, &bytes);
                } else {
                    s.queued.push((request.clone(), bytes));
                }
            }
            request.id
        }

        /// Stops the work in progress, if any.
        pub fn cancel(&mut self) {
            if self
                .running
                .as_ref()
                .is_some_and(|r| r.shared.borrow().busy.is_some())
            {
                self.running = None;
            }
        }
    }

    fn post(worker: &web_sys::Worker, request: &Request, bytes: &ArrayBuffer) {
        let message = Array::of2(&JsValue::from_str(&request.to_json()), bytes);
        // The buffer moves to the worker: no copy stays behind on the page.
        let _ = worker.post_message_with_transfer(&message, &Array::of1(bytes));
    }

    /// A message from the worker: JSON text, or `[json, ArrayBuffer]` when the reply
    /// carries bytes (a trace's events). Anything else reads as a failure of the worker.
    fn read_reply<R: WorkerReply>(data: JsValue) -> R {
        if let Some(text) = data.as_string() {
            return diag_worker::protocol::decode(&text, None);
        }
        let parts = data.dyn_into::<Array>().ok();
        let text = parts.as_ref().and_then(|p| p.get(0).as_string());
        let bytes = parts.and_then(|p| p.get(1).dyn_into::<ArrayBuffer>().ok());
        match (text, bytes) {
            (Some(text), Some(bytes)) => {
                diag_worker::protocol::decode(&text, Some(Uint8Array::new(&bytes).to_vec()))
            }
            _ => R::failed(
                None,
                "El trabajador respondió algo que no se entiende.".into(),
            ),
        }
    }

    fn start<R: WorkerReply>(
        urls: &WorkerUrls,
        on_reply: Rc<dyn Fn(R)>,
    ) -> Result<Running, String> {
        if urls.loader.is_empty() || urls.js.is_empty() || urls.wasm.is_empty() {
            return Err("Falta el analizador en segundo plano de esta página (worker_web).".into());
        }
        let options = web_sys::WorkerOptions::new();
        options.set_type(web_sys::WorkerType::Module);
        let worker = web_sys::Worker::new_with_options(&urls.loader, &options).map_err(|e| {
            format!(
                "El navegador no deja iniciar el análisis en segundo plano ({}).",
                lazy_web::describe(&e)
            )
        })?;
        let shared = Rc::new(RefCell::new(Shared::default()));

        let message = {
            let (shared, worker, on_reply) = (shared.clone(), worker.clone(), on_reply.clone());
            EventListener::new(&worker.clone(), "message", move |event| {
                let data = event
                    .dyn_ref::<web_sys::MessageEvent>()
                    .map(|m| m.data())
                    .unwrap_or_default();
                let reply: R = read_reply(data);
                if reply.is_ready() {
                    let queued = {
                        let mut s = shared.borrow_mut();
                        s.ready = true;
                        std::mem::take(&mut s.queued)
                    };
                    for (request, bytes) in queued {
                        post(&worker, &request, &bytes);
                    }
                    return;
                }
                {
                    let mut s = shared.borrow_mut();
                    if reply.is_fatal() {
                        s.dead = true;
                    }
                    if reply.request().is_none() || reply.request() == s.busy {
                        s.busy = None;
                    }
                }
                on_reply(reply);
            })
        };
        // A module that traps (out of memory, a bug) or fails to load: the page says so
        // instead of waiting forever, and the console is not left an uncaught error.
        let stopped = |kind: &'static str| {
            let (shared, on_reply) = (shared.clone(), on_reply.clone());
            EventListener::new_with_options(
                &worker,
                kind,
                EventListenerOptions::enable_prevent_default(),
                move |event| {
                    event.prevent_default();
                    let detail = event
                        .dyn_ref::<web_sys::ErrorEvent>()
                        .map(|e| e.message())
                        .filter(|m| !m.is_empty());
                    let id = {
                        let mut s = shared.borrow_mut();
                        s.dead = true;
                        s.busy.take()
                    };
                    let why = match detail {
                        Some(d) => format!(
                            "El análisis en segundo plano se detuvo ({d}). Si el archivo es muy grande, puede que el navegador se haya quedado sin memoria: prueba con `vramlab snapshot`."
                        ),
                        None => {
                            "El análisis en segundo plano no pudo empezar o se detuvo.".to_owned()
                        }
                    };
                    on_reply(R::failed(id, why));
                },
            )
        };
        let error = stopped("error");
        let message_error = stopped("messageerror");

        // First message: which bundle to load (see site/worker.js).
        let init = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&init, &"js".into(), &urls.js.as_str().into());
        let _ = js_sys::Reflect::set(&init, &"wasm".into(), &urls.wasm.as_str().into());
        worker.post_message(&init).map_err(|e| {
            format!(
                "No se pudo hablar con el análisis en segundo plano ({}).",
                lazy_web::describe(&e)
            )
        })?;
        Ok(Running {
            worker,
            shared,
            _listeners: [message, error, message_error],
        })
    }
}
