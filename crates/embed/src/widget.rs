//! The widget in the browser: the `Widget` handle the custom element creates, and the
//! view it mounts in the shadow root. Each element owns its reactive root, so several
//! widgets on a page are independent. A Hub model is fetched by `import-web`, loaded
//! the first time a widget on the page shows one.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use leptos::either::EitherOf3;
use leptos::prelude::*;
use vram::import::Imported;
use vram::{ByteSize, Field, Surface, catalog};
use wasm_bindgen::prelude::*;

use crate::compute::{self, HubState, Outcome, Shown};
use crate::spec::{self, Config, Custom, Problem};

/// The model select's value for the custom model.
const CUSTOM_OPTION: &str = "propio";

/// (Hub base, repository): what one import fetches.
type HubKey = (String, String);
/// A widget's Hub import: which one, and how it stands.
type HubSignal = RwSignal<Option<(HubKey, HubState)>>;

thread_local! {
    /// Imports that arrived, so a widget showing a model another one has already
    /// imported does not fetch it again.
    static ARRIVED: RefCell<Vec<(HubKey, Imported)>> = const { RefCell::new(Vec::new()) };
    /// Imports on their way, with the widgets waiting for each: widgets that ask for
    /// the same model at once share one fetch.
    static PENDING: RefCell<Vec<(HubKey, Vec<HubSignal>)>> = const { RefCell::new(Vec::new()) };
}

#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

/// The stylesheet each shadow root adopts.
#[wasm_bindgen]
pub fn css() -> String {
    // The categories' colours come from the palette the site uses too.
    format!("{}{}", crate::CSS, vram::palette::css())
}

type Signals = (RwSignal<Config>, RwSignal<Vec<Problem>>);

/// One mounted widget. The element calls `refresh()` when an attribute changes and
/// `free()` when it leaves the page.
#[wasm_bindgen]
pub struct Widget {
    signals: Signals,
    get: js_sys::Function,
    _mounted: Box<dyn std::any::Any>,
}

fn read(get: &js_sys::Function) -> (Config, Vec<Problem>) {
    let (config, problems) = spec::read(|name| {
        get.call1(&JsValue::NULL, &name.into())
            .ok()
            .and_then(|v| v.as_string())
    });
    for p in &problems {
        // Raw web_sys: a console.warn, and gloo-console is not a dependency.
        web_sys::console::warn_1(&format!("<vram-estimador> {}", p.sentence()).into());
    }
    (config, problems)
}

#[wasm_bindgen]
impl Widget {
    /// Mounts a widget in `mount` (a div inside the element's shadow root). `site` is
    /// vramlab's base URL for the "open in vramlab" link; `get` reads an attribute;
    /// `import_js` and `import_wasm` are the importer bundle's URLs ("" when this
    /// build has none).
    #[wasm_bindgen(constructor)]
    pub fn new(
        // Raw web_sys: Leptos's `mount_to` takes the mount point as a `HtmlElement`.
        mount: web_sys::HtmlElement,
        site: String,
        get: js_sys::Function,
        import_js: String,
        import_wasm: String,
    ) -> Widget {
        let (config, problems) = read(&get);
        let slot: Rc<Cell<Option<Signals>>> = Rc::new(Cell::new(None));
        let inner = Rc::clone(&slot);
        let mounted = leptos::mount::mount_to(mount, move || {
            let signals = (RwSignal::new(config), RwSignal::new(problems));
            inner.set(Some(signals));
            view(signals, site, (import_js, import_wasm))
        });
        let signals = slot.get().unwrap_or_else(|| {
            (
                RwSignal::new(spec::read(|_| None).0),
                RwSignal::new(Vec::new()),
            )
        });
        Widget {
            signals,
            get,
            _mounted: Box::new(mounted),
        }
    }

    /// Reads the attributes again (one of them changed).
    pub fn refresh(&self) {
        let (config, problems) = read(&self.get);
        self.signals.0.set(config);
        self.signals.1.set(problems);
    }
}

/// The Hub id the reader sees in the field: the one shown, if any.
fn shown_repo(c: &Config) -> String {
    match (&c.custom, c.use_custom) {
        (Some(Custom::Hub { repo }), true) => repo.clone(),
        _ => String::new(),
    }
}

/// The controls. `failed` says whether the Hub import failed: the picker then shows
/// the catalog model the widget fell back to, and typing the same id again retries
/// (by forgetting the failed import held in `hub`).
fn controls(config: RwSignal<Config>, failed: Memo<bool>, hub: HubSignal) -> impl IntoView {
    let typed = RwSignal::new(None::<String>);
    let custom_shown = move || config.with(|c| c.use_custom) && !failed.get();
    let models = catalog::models()
        .iter()
        .map(|m| {
            let id = m.id.clone();
            let selected = move || !custom_shown() && config.with(|c| c.model == id);
            view! { <option value=m.id.clone() selected=selected>{m.name.clone()}</option> }
        })
        .collect_view();
    let custom = move || {
        config.with(Config::custom_name).map(|name| {
            let label = if failed.get() {
                format!("{name} (no se pudo importar)")
            } else {
                name
            };
            view! { <option value=CUSTOM_OPTION selected=custom_shown>{label}</option> }
        })
    };
    let gpus = catalog::gpus()
        .iter()
        .map(|g| {
            let id = g.id.clone();
            let selected = move || config.with(|c| c.settings.gpu.is_some_and(|s| s.id == id));
            let label = g.label();
            view! { <option value=g.id.clone() selected=selected>{label}</option> }
        })
        .collect_view();
    // A typo keeps the last good value and says why, as on the estimator page.
    let number = move |f: Field| {
        let spec = f.spec();
        view! {
            <label><span>{spec.label}</span>
                <input type="text" inputmode="numeric" name=spec.key
                    prop:value=move || config.with(|c| c.settings.text(f, Surface::Web).unwrap_or_default())
                    on:change=move |ev| {
                        let v = event_target_value(&ev);
                        let mut next = config.get_untracked();
                        match next.settings.set(f, &v, Surface::Web) {
                            Ok(()) => {
                                typed.set(None);
                                config.set(next);
                            }
                            Err(e) => {
                                typed.set(Some(e.to_string()));
                                // Show the last good value again.
                                config.update(|_| {});
                            }
                        }
                    } />
            </label>
        }
    };
    let pick_model = move |ev| {
        let v = event_target_value(&ev);
        config.update(|c| {
            c.use_custom = v == CUSTOM_OPTION;
            if !c.use_custom {
                c.model = v;
            }
        })
    };
    // Typing a Hub id imports it (the only way a reader makes the widget fetch).
    let import = move |ev| {
        let v = event_target_value(&ev);
        let again = v.trim() == config.with_untracked(shown_repo);
        if v.trim().is_empty() || (again && !failed.get_untracked()) {
            return;
        }
        if failed.get_untracked() {
            hub.set(None);
        }
        let mut next = config.get_untracked();
        match next.set_hub_repo(&v) {
            Ok(()) => {
                typed.set(None);
                config.set(next);
            }
            Err(e) => typed.set(Some(e)),
        }
    };
    view! {
        <div class="vw-controls">
            <label><span>"Modelo"</span>
                <select on:change=pick_model>{custom}{models}</select>
            </label>
            <label><span>"GPU"</span>
                <select on:change=move |ev| { let v = event_target_value(&ev); config.update(|c| { let _ = c.settings.set(Field::Gpu, &v, Surface::Web); }) }>{gpus}</select>
            </label>
            {number(Field::Batch)}
            {number(Field::Seq)}
            <label class="vw-hub"><span>"O un modelo del Hub de Hugging Face"</span>
                <input type="text" placeholder="organización/modelo" spellcheck="false" autocomplete="off"
                    prop:value=move || config.with(shown_repo) on:change=import />
            </label>
        </div>
        {move || typed.get().map(|e| view! { <p class="vw-problem" role="alert">{e}</p> })}
    }
}

/// The stacked bar (per GPU) against the card's capacity, as SVG: no inline styles.
fn bar(o: &Outcome) -> impl IntoView + use<> {
    let values = o.eval.estimate.breakdown.parts();
    let top = o.per_gpu().max(o.capacity()).max(1) as f64;
    let mut x = 0.0;
    let rects = values
        .iter()
        .zip(vram::palette::CATEGORIES)
        .filter(|(v, _)| **v > 0)
        .map(|(&v, c)| {
            let w = v as f64 / top * 1000.0;
            let r = view! { <rect x=format!("{x:.1}") y="0" width=format!("{w:.1}") height="16" class=c.class /> };
            x += w;
            r
        })
        .collect_view();
    let cap = format!("{:.1}", o.capacity() as f64 / top * 1000.0);
    view! {
        <svg class="vw-bar" viewBox="0 0 1000 20" preserveAspectRatio="none" aria-hidden="true">
            {rects}
            <line class="vw-cap" x1=cap.clone() x2=cap y1="0" y2="20" />
        </svg>
    }
}

fn result(o: Outcome, c: &Config) -> impl IntoView + use<> {
    let title = o.title(&c.settings);
    let legend = o
        .eval
        .estimate
        .breakdown
        .parts()
        .into_iter()
        .zip(vram::palette::CATEGORIES)
        .filter(|(v, _)| *v > 0)
        .map(|(v, c)| {
            view! { <li><span class=format!("vw-sw {}", c.class)></span>{c.label}": "{ByteSize(v).binary()}</li> }
        })
        .collect_view();
    let limits = o.limits();
    let fits = o.fits();
    let state = o.eval.verdict.map_or("", vram::Verdict::id);
    let notice = o
        .notice
        .clone()
        .map(|n| view! { <p class="vw-problem" role="alert">{n}</p> });
    view! {
        {notice}
        <p class="vw-title">{title}</p>
        <p class="vw-total"><strong>{ByteSize(o.per_gpu()).binary()}</strong>" por GPU, de "{ByteSize(o.capacity()).binary()}</p>
        <p class="vw-verdict" data-cabe=fits.to_string() data-verdict=state>{o.verdict()}</p>
        {bar(&o)}
        <ul class="vw-legend">{legend}</ul>
        <p class="vw-limits">{limits}</p>
    }
}

/// Starts the Hub import `config` asks for, unless it is the one already held.
fn fetch_hub(config: RwSignal<Config>, hub: HubSignal, urls: &lazy_web::import::Urls) {
    let Some(key) = config.with(Config::hub_import) else {
        return;
    };
    let held = |h: &Option<(HubKey, HubState)>| h.as_ref().is_some_and(|(k, _)| *k == key);
    if hub.with_untracked(held) {
        return;
    }
    let arrived = ARRIVED.with(|a| {
        a.borrow()
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, i)| i.clone())
    });
    if let Some(i) = arrived {
        hub.set(Some((key, HubState::Ready(i))));
        return;
    }
    hub.set(Some((key.clone(), HubState::Loading)));
    // Another widget is already fetching this model: wait for its answer.
    let joined = PENDING.with(|p| {
        let mut p = p.borrow_mut();
        match p.iter_mut().find(|(k, _)| *k == key) {
            Some((_, waiting)) => {
                waiting.push(hub);
                true
            }
            None => {
                p.push((key.clone(), vec![hub]));
                false
            }
        }
    });
    if joined {
        return;
    }
    let urls = urls.clone();
    leptos::task::spawn_local(async move {
        let state = if urls.0.is_empty() {
            HubState::Failed("esta copia del widget no trae el importador de modelos.".into())
        } else {
            match lazy_web::import::import_repo(&urls, &key.0, &key.1).await {
                Ok(i) => {
                    if i.arch.is_some() {
                        ARRIVED.with(|a| a.borrow_mut().push((key.clone(), i.clone())));
                    }
                    HubState::Ready(i)
                }
                Err(e) => {
                    let line = format!("<vram-estimador> hf=\"{}\": {e}", key.1);
                    // Raw web_sys: a console.warn, and gloo-console is not a dependency.
                    web_sys::console::warn_1(&line.into());
                    HubState::Failed(e)
                }
            }
        };
        let waiting = PENDING.with(|p| {
            let mut p = p.borrow_mut();
            p.iter()
                .position(|(k, _)| *k == key)
                .map(|at| p.swap_remove(at).1)
                .unwrap_or_default()
        });
        for hub in waiting {
            // A widget may have moved on to another model, or left the page.
            let wanted = hub
                .try_with_untracked(|h| h.as_ref().is_some_and(|(k, _)| *k == key))
                .unwrap_or(false);
            if wanted {
                hub.try_set(Some((key.clone(), state.clone())));
            }
        }
    });
}

fn view((config, problems): Signals, site: String, urls: lazy_web::import::Urls) -> impl IntoView {
    let hub: HubSignal = RwSignal::new(None);
    Effect::new(move |_| fetch_hub(config, hub, &urls));
    let outcome = Memo::new(move |_| {
        hub.with(|h| {
            config.with(|c| {
                let key = c.hub_import();
                let state = h
                    .as_ref()
                    .filter(|(k, _)| Some(k) == key.as_ref())
                    .map(|(_, s)| s);
                compute::compute(c, state)
            })
        })
    });
    // The custom model could not be shown: the widget fell back to the catalog one.
    let failed = Memo::new(move |_| {
        outcome.with(|o| matches!(o, Ok(Shown::Ready(o)) if o.notice.is_some()))
    });
    let link = move || {
        let query = config.with(|c| compute::page_query(c, failed.get()));
        format!("{site}estimador/{query}")
    };
    view! {
        <div class="vw" data-tema=move || config.with(|c| c.theme.id()) role="group" aria-label="Estimador de VRAM de vramlab">
            {move || problems.get().into_iter().map(|p| view! { <p class="vw-problem" role="alert">{p.sentence()}</p> }).collect_view()}
            {move || config.with(|c| c.controls).then(|| controls(config, failed, hub))}
            {move || match outcome.get() {
                Ok(Shown::Ready(o)) => EitherOf3::A(config.with(|c| result(*o, c))),
                Ok(Shown::Loading(s)) => EitherOf3::B(view! { <p class="vw-loading" role="status">{s}</p> }),
                Err(e) => EitherOf3::C(view! { <p class="vw-problem" role="alert">{e}</p> }),
            }}
            <p class="vw-foot"><a class="vw-link" href=link target="_blank" rel="noopener">"Abrir en el estimador de vramlab ↗"</a></p>
        </div>
    }
}
