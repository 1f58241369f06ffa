//! The caching-allocator lab: a teaching scenario replayed through the `allocator`
//! simulator, step by step, with the device memory drawn as segments and blocks.
//!
//! The reader scrubs or plays the trace, changes the capacity, and toggles
//! `expandable_segments:True` to watch the same trace stop failing. All the state
//! lives in signals. A trace is replayed once per capacity and allocator
//! (`replay::Prepared`), in chunks with a yield between them and a progress line, so a
//! reader's trace of millions of events never freezes the tab; every frame then
//! replays at most `replay::EVERY` events from the nearest kept state.

mod draw;
mod replay;

use allocator::scenarios::Scenario;
use leptos::either::EitherOf3;
use leptos::prelude::*;
use vram::ByteSize;

use super::background::{FileJobs, WorkerUrls};
use diag_worker::Job;
use replay::{Frame, Prepared, config, scenario};

/// Events replayed between two yields to the page while a trace is prepared (a few
/// milliseconds of work each on a laptop).
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
const CHUNK: usize = 20_000;

/// Prepares `trace` all at once (the server's first render, and short traces).
fn prepare_now(
    trace: &allocator::Trace,
    capacity: u64,
    expandable: bool,
) -> Result<Prepared, String> {
    let mut p = Prepared::start(trace, &config(capacity, expandable))?;
    while !p.advance(trace, usize::MAX) {}
    Ok(p)
}

/// The reader's trace or snapshot, decoded in the diagnostics worker: `loaded` gets
/// the trace, `load_error` why it could not be read.
fn trace_files(
    worker: WorkerUrls,
    reading: RwSignal<Option<String>>,
    loaded: impl Fn(String, allocator::Trace) + Copy + 'static,
    load_error: RwSignal<Option<String>>,
) -> FileJobs {
    use diag_worker::Reply;
    let on_reply = move |name: String, reply: Reply| match reply {
        Reply::Trace { result: Ok(p), .. } => match p.unpack() {
            Ok(t) => loaded(name, t),
            Err(e) => load_error.set(Some(e)),
        },
        Reply::Trace { result: Err(e), .. } | Reply::Failed { why: e, .. } => {
            load_error.set(Some(e))
        }
        Reply::Ready | Reply::Explain { .. } | Reply::Snapshot { .. } => {}
    };
    FileJobs::new(Job::Trace, worker, reading, on_reply)
}

#[island]
pub fn AllocatorLab(
    /// Scenario id (`training`, `kv-cache`, `mixed`).
    scenario_id: String,
    /// The diagnostics worker's scripts (it reads the reader's own files).
    worker: WorkerUrls,
) -> impl IntoView {
    let initial = scenario(&scenario_id);
    let chosen = RwSignal::new(initial.id().to_owned());
    let expandable = RwSignal::new(false);
    // What the capacity box shows, and (a quarter second after the last keystroke or
    // slider move) what the replay uses: replaying a long trace on every keystroke
    // would block the page.
    let capacity_text = RwSignal::new(ByteSize(initial.demo_capacity()).binary());
    let applied_text = RwSignal::new(capacity_text.get_untracked());
    let apply = settle::debounced(applied_text);
    let step = RwSignal::new(0usize);
    let playing = RwSignal::new(false);

    // The reader's own trace or snapshot, when loaded, replaces the scenario.
    let custom: RwSignal<Option<(String, allocator::Trace)>> = RwSignal::new(None);
    let load_error: RwSignal<Option<String>> = RwSignal::new(None);
    let trace = Memo::new(move |_| {
        custom
            .with(|c| c.as_ref().map(|(_, t)| t.clone()))
            .unwrap_or_else(|| chosen.with(|id| scenario(id).trace()))
    });
    let capacity = Memo::new(move |_| {
        capacity_text.with(|t| ByteSize::parse(t).map(|b| b.0).map_err(|e| e.to_string()))
    });
    let applied = Memo::new(move |_| {
        applied_text.with(|t| ByteSize::parse(t).map(|b| b.0).map_err(|e| e.to_string()))
    });
    let set_capacity = move |text: String| {
        capacity_text.set(text.clone());
        apply(text);
    };
    // The trace replayed under the applied capacity and allocator: `None` while a long
    // one is being prepared (with its progress in percent).
    let prepared: RwSignal<Option<Result<Prepared, String>>> = RwSignal::new(Some(
        applied
            .get_untracked()
            .and_then(|cap| trace.with_untracked(|t| prepare_now(t, cap, false))),
    ));
    let progress = RwSignal::new(0u32);
    prepare::drive(trace, applied, expandable, prepared, progress);
    let frame: Memo<Result<Option<Frame>, String>> = Memo::new(move |_| {
        applied.get()?;
        let s = step.get();
        prepared.with(|p| match p {
            None => Ok(None),
            Some(Err(e)) => Err(e.clone()),
            Some(Ok(p)) => Ok(Some(trace.with(|t| p.frame(t, s)))),
        })
    });
    let total = move || trace.with(|t| t.events.len());
    // The whole run for the chart, from the same preparation.
    let history = move || {
        prepared.with(|p| match p {
            Some(Ok(p)) => Some(p.timeline.clone()),
            _ => None,
        })
    };
    let scenario_capacity = move || chosen.with(|id| scenario(id).demo_capacity());

    let scenario_options = Scenario::ALL
        .iter()
        .map(|s| {
            let id = s.id();
            view! { <option value=id selected=move || chosen.with(|c| c == id)>{s.title()}</option> }
        })
        .collect_view();
    let go_to_oom = move |_| {
        let from = step.get_untracked();
        let to = prepared.with_untracked(|p| match p {
            Some(Ok(p)) => p.next_oom(from),
            _ => None,
        });
        step.set(to.unwrap_or_else(total));
    };
    let stride = move || (total() / 150).max(1);

    #[cfg(target_arch = "wasm32")]
    play::drive(playing, step, frame, stride);

    let description = move || match custom
        .with(|c| c.as_ref().map(|(n, t)| (n.clone(), t.events.len())))
    {
        Some((name, n)) => format!(
            "Tu archivo {name}: {n} eventos. Ajusta la capacidad a la memoria que tenía libre tu proceso."
        ),
        None => chosen.with(|id| scenario(id).description()).to_owned(),
    };
    // The reader's file is decoded in the diagnostics worker; this is its name while
    // the worker has it.
    let reading: RwSignal<Option<String>> = RwSignal::new(None);
    let files = trace_files(
        worker,
        reading,
        move |name, t| {
            playing.set(false);
            load_error.set(None);
            custom.set(Some((name, t)));
            step.set(0);
        },
        load_error,
    );
    let on_file = move |ev: leptos::ev::Event| files.on_file(ev, load_error);
    let cancel = move || files.cancel();
    let on_scenario = move |ev| {
        let s = scenario(&event_target_value(&ev));
        // A file still being read is dropped: the reader moved on.
        cancel();
        playing.set(false);
        custom.set(None);
        chosen.set(s.id().to_owned());
        let text = ByteSize(s.demo_capacity()).binary();
        capacity_text.set(text.clone());
        applied_text.set(text);
        step.set(0);
    };
    view! {
        <div class="calc alloc-lab" role="group" aria-label="Laboratorio del asignador de memoria">
            <p class="calc-hint">{description}</p>
            <div class="calc-fields">
                <label><span>"Escenario"</span>
                    <select name="escenario" on:change=on_scenario>{scenario_options}</select>
                </label>
                <label><span>"Memoria que puede reservar el proceso"</span>
                    <input name="capacidad" type="text" value=capacity_text.get_untracked()
                        prop:value=move || capacity_text.get()
                        aria-invalid=move || capacity.with(Result::is_err).to_string()
                        on:input=move |ev| set_capacity(event_target_value(&ev).chars().take(32).collect()) />
                    {move || capacity.get().err().map(|e| view! { <small class="field-error">{e}</small> })}
                </label>
                <label><span>"Ajuste fino de la capacidad"</span>
                    <input type="range" name="capacidad-rango"
                        min=move || ((scenario_capacity() / 2) >> 20).to_string()
                        max=move || ((scenario_capacity() * 3 / 2) >> 20).to_string()
                        step="16"
                        prop:value=move || capacity.get().map(|b| (b >> 20).to_string()).unwrap_or_default()
                        on:input=move |ev| {
                            if let Ok(mib) = event_target_value(&ev).parse::<u64>() {
                                set_capacity(ByteSize(mib << 20).binary());
                            }
                        } />
                </label>
                <label><span>"O tu propia traza o snapshot"</span>
                    <input type="file" name="traza" accept=".jsonl,.json,.pickle,.pkl,application/octet-stream" on:change=on_file />
                </label>
                <label class="check">
                    <input type="checkbox" name="expandable"
                        prop:checked=move || expandable.get()
                        on:change=move |ev| expandable.set(event_target_checked(&ev)) />
                    <span><code>"expandable_segments:True"</code></span>
                </label>
            </div>
            {move || load_error.get().map(|e| view! { <p class="calc-error" role="alert">{e}</p> })}
            {super::background::busy_line(reading, cancel)}
            <div class="alloc-controls">
                <button type="button" name="reiniciar" on:click=move |_| { playing.set(false); step.set(0); }>"« Inicio"</button>
                <button type="button" name="atras" on:click=move |_| step.update(|s| *s = s.saturating_sub(stride()))>"◀ Atrás"</button>
                <button type="button" name="reproducir" aria-pressed=move || playing.get().to_string()
                    on:click=move |_| playing.update(|p| *p = !*p)>
                    {move || if playing.get() { "Pausa" } else { "▶ Reproducir" }}
                </button>
                <button type="button" name="adelante" on:click=move |_| step.update(|s| *s = (*s + stride()).min(total()))>"Adelante ▶"</button>
                <button type="button" name="siguiente-oom" on:click=go_to_oom>"Hasta el siguiente OOM »"</button>
            </div>
            <label class="alloc-scrub"><span>{move || format!("Evento {} de {}", step.get(), total())}</span>
                <input type="range" name="paso" min="0" max=move || total().to_string()
                    prop:value=move || step.get().to_string()
                    on:input=move |ev| {
                        playing.set(false);
                        step.set(event_target_value(&ev).parse().unwrap_or(0));
                    } />
            </label>
            <output aria-live="polite">
                {move || match frame.get() {
                    Err(e) => EitherOf3::A(view! { <p class="calc-error" role="alert">{e}</p> }),
                    Ok(None) => EitherOf3::B(view! {
                        <p class="calc-busy alloc-preparing" role="status">
                            {move || format!("Preparando la traza: {} %…", progress.get())}
                        </p>
                    }),
                    Ok(Some(f)) => EitherOf3::C(view! {
                        {history().map(|t| draw::chart(&t, f.capacity, f.step, f.total))}
                        {draw::frame_view(&f)}
                    }),
                }}
            </output>
        </div>
    }
}

#[cfg(target_arch = "wasm32")]
mod play {
    //! Playback: a timer advances the step until the end of the trace or an OOM.

    use super::Frame;
    use leptos::prelude::*;

    pub fn drive(
        playing: RwSignal<bool>,
        step: RwSignal<usize>,
        frame: Memo<Result<Option<Frame>, String>>,
        stride: impl Fn() -> usize + Copy + 'static,
    ) {
        // A gloo Interval stops when dropped: when playback stops, and when the island
        // goes away (its stored value is disposed with it).
        let handle: StoredValue<Option<gloo_timers::callback::Interval>, LocalStorage> =
            StoredValue::new_local(None);
        Effect::new(move |_| {
            handle.set_value(None);
            if !playing.get() {
                return;
            }
            // Advance first, then look: playback stops at the end and on an OOM that
            // happened within the events just played (so "play" resumes past it).
            let tick = move || {
                let n = stride();
                let total = frame.with_untracked(|f| match f {
                    Ok(Some(f)) => f.total,
                    _ => 0,
                });
                step.update(|s| *s = (*s + n).min(total));
                let stop = frame.with_untracked(|f| match f {
                    Ok(Some(f)) => {
                        f.step >= f.total || f.oom.as_ref().is_some_and(|(at, _)| at + n > f.step)
                    }
                    _ => true,
                });
                if stop {
                    playing.set(false);
                }
            };
            handle.set_value(Some(gloo_timers::callback::Interval::new(80, tick)));
        });
    }
}

mod prepare {
    //! Preparing the replay when the trace, the capacity or the allocator changes: all
    //! at once for a short trace, in chunks of [`super::CHUNK`] events with a yield
    //! between them for a long one. A newer change abandons an older preparation.

    use super::{Prepared, prepare_now};
    use leptos::prelude::*;

    pub fn drive(
        trace: Memo<allocator::Trace>,
        applied: Memo<Result<u64, String>>,
        expandable: RwSignal<bool>,
        prepared: RwSignal<Option<Result<Prepared, String>>>,
        progress: RwSignal<u32>,
    ) {
        let generation = StoredValue::new(0u64);
        Effect::new(move |first: Option<()>| {
            let cap = applied.get();
            let exp = expandable.get();
            let len = trace.with(|t| t.events.len());
            // The first run is the server's: already prepared.
            if first.is_none() && len <= super::CHUNK {
                return;
            }
            generation.update_value(|g| *g += 1);
            let cap = match cap {
                Ok(c) => c,
                // The capacity box shows its own error; nothing to replay.
                Err(_) => return,
            };
            if len <= super::CHUNK {
                prepared.set(Some(trace.with_untracked(|t| prepare_now(t, cap, exp))));
                return;
            }
            #[cfg(target_arch = "wasm32")]
            {
                let mine = generation.get_value();
                prepared.set(None);
                progress.set(0);
                wasm_bindgen_futures::spawn_local(async move {
                    let c = super::config(cap, exp);
                    let started = trace.with_untracked(|t| Prepared::start(t, &c));
                    let mut p = match started {
                        Ok(p) => p,
                        Err(e) => {
                            prepared.set(Some(Err(e)));
                            return;
                        }
                    };
                    loop {
                        let done = trace.with_untracked(|t| p.advance(t, super::CHUNK));
                        if done {
                            break;
                        }
                        progress.set(u32::try_from(p.prepared() * 100 / len.max(1)).unwrap_or(100));
                        gloo_timers::future::TimeoutFuture::new(0).await;
                        if generation.get_value() != mine {
                            return;
                        }
                    }
                    if generation.get_value() == mine {
                        prepared.set(Some(Ok(p)));
                    }
                });
            }
            #[cfg(not(target_arch = "wasm32"))]
            {
                let _ = progress;
                prepared.set(Some(trace.with_untracked(|t| prepare_now(t, cap, exp))));
            }
        });
    }
}

mod settle {
    //! Debouncing: a value is applied once the reader has paused.

    use leptos::prelude::*;

    /// How long the reader must pause before a typed value is applied.
    #[cfg(target_arch = "wasm32")]
    const PAUSE_MS: u32 = 250;

    /// A setter for `target` that applies the last value given once no other came for
    /// `PAUSE_MS`. The pending timer is a gloo `Timeout`, cancelled when replaced and
    /// when the island goes away. On the server there is nothing to wait for.
    pub fn debounced(target: RwSignal<String>) -> impl Fn(String) + Copy + 'static {
        #[cfg(target_arch = "wasm32")]
        {
            let pending: StoredValue<Option<gloo_timers::callback::Timeout>, LocalStorage> =
                StoredValue::new_local(None);
            move |text: String| {
                let timer = gloo_timers::callback::Timeout::new(PAUSE_MS, move || {
                    target.set(text);
                });
                // Replacing the stored timer drops (cancels) the previous one.
                pending.set_value(Some(timer));
            }
        }
        #[cfg(not(target_arch = "wasm32"))]
        move |text: String| target.set(text)
    }
}
