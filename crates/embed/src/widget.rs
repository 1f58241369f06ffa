//! The widget in the browser: the `Widget` handle the custom element creates. It puts
//! `render`'s markup in the shadow root and keeps it in step with the widget's state
//! (its attributes, what the reader typed, its Hub import): the controls are written
//! once and only their values change afterwards, so a reader's focus stays where it
//! is; the result and the lines around it are rewritten on each change. Several
//! widgets on a page are independent; a Hub model is fetched by `import-web`, loaded
//! the first time a widget on the page shows one, and widgets that want the same model
//! share one fetch.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use gloo_events::EventListener;
use vram::import::Imported;
use vram::{Field, Surface};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::compute::{self, HubState, Shown};
use crate::render::{self, CUSTOM_OPTION, HUB_NAME, MODEL_NAME};
use crate::spec::{self, Config, Problem};

/// (Hub base, repository): what one import fetches.
type HubKey = (String, String);
/// The widgets waiting for one import (those that left the page are gone).
type Waiting = Vec<Weak<RefCell<State>>>;

thread_local! {
    /// Imports that arrived, so a widget showing a model another one has already
    /// imported does not fetch it again.
    static ARRIVED: RefCell<Vec<(HubKey, Imported)>> = const { RefCell::new(Vec::new()) };
    /// Imports on their way, with the widgets waiting for each.
    static PENDING: RefCell<Vec<(HubKey, Waiting)>> = const { RefCell::new(Vec::new()) };
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

/// One widget's state and the elements it writes.
struct State {
    config: Config,
    problems: Vec<Problem>,
    /// Why the last value the reader typed was refused.
    typed: Option<String>,
    hub: Option<(HubKey, HubState)>,
    urls: lazy_web::import::Urls,
    site: String,
    root: web_sys::Element,
    /// The controls' markup now in place ("" when there are none).
    controls: String,
    /// Whether the shown Hub import failed (the widget fell back to the catalog).
    failed: bool,
}

/// One mounted widget. The element calls `refresh()` when an attribute changes and
/// `free()` when it leaves the page.
#[wasm_bindgen]
pub struct Widget {
    state: Rc<RefCell<State>>,
    get: js_sys::Function,
    _listener: EventListener,
}

fn read(get: &js_sys::Function) -> (Config, Vec<Problem>) {
    let (mut config, mut problems) = spec::read(|name| {
        get.call1(&JsValue::NULL, &name.into())
            .ok()
            .and_then(|v| v.as_string())
    });
    let page_host = web_sys::window()
        .and_then(|w| w.location().hostname().ok())
        .unwrap_or_default();
    spec::confine_hub(&mut config, &mut problems, &page_host);
    for p in &problems {
        // Raw web_sys: a console.warn, and gloo-console is not a dependency.
        web_sys::console::warn_1(&format!("<vram-estimador> {}", p.sentence()).into());
    }
    (config, problems)
}

fn slot(root: &web_sys::Element, name: &str) -> Option<web_sys::Element> {
    root.query_selector(&format!("[data-slot={name}]"))
        .ok()
        .flatten()
}

/// Sets the value a control shows. Raw web_sys: the property `value` of the two
/// element types, which no gloo crate wraps.
fn set_value(root: &web_sys::Element, name: &str, value: &str) {
    let Ok(Some(el)) = root.query_selector(&format!("[name=\"{name}\"]")) else {
        return;
    };
    if let Some(select) = el.dyn_ref::<web_sys::HtmlSelectElement>() {
        select.set_value(value);
    } else if let Some(input) = el.dyn_ref::<web_sys::HtmlInputElement>() {
        input.set_value(value);
    }
}

/// Brings the page in step with the state: starts the Hub import it needs, computes,
/// and writes what changed.
fn update(state: &Rc<RefCell<State>>) {
    fetch_hub(state);
    let mut s = state.borrow_mut();
    let key = s.config.hub_import();
    let hub = s
        .hub
        .as_ref()
        .filter(|(k, _)| Some(k) == key.as_ref())
        .map(|(_, h)| h);
    let shown = compute::compute(&s.config, hub);
    s.failed = matches!(&shown, Ok(Shown::Ready(o)) if o.notice.is_some());
    let root = s.root.clone();
    root.set_attribute("data-tema", s.config.theme.id()).ok();
    if let Some(el) = slot(&root, "problems") {
        el.set_inner_html(&render::problems(&s.problems));
    }
    let controls = if s.config.controls {
        render::controls(&s.config, s.failed)
    } else {
        String::new()
    };
    if controls != s.controls {
        if let Some(el) = slot(&root, "controls") {
            el.set_inner_html(&controls);
        }
        s.controls = controls;
    }
    if s.config.controls {
        for (name, value) in render::values(&s.config, s.failed) {
            set_value(&root, name, &value);
        }
    }
    if let Some(el) = slot(&root, "typed") {
        el.set_inner_html(
            &s.typed
                .as_deref()
                .map(render::problem_line)
                .unwrap_or_default(),
        );
    }
    if let Some(el) = slot(&root, "out") {
        el.set_inner_html(&render::outcome(&shown, &s.config));
    }
    if let Ok(Some(link)) = root.query_selector(".vw-link") {
        let query = compute::page_query(&s.config, s.failed);
        link.set_attribute("href", &format!("{}estimador/{query}", s.site))
            .ok();
    }
}

/// A control changed: `name` is its `name`, `value` what it holds now.
fn on_change(state: &Rc<RefCell<State>>, name: &str, value: &str) {
    {
        let mut s = state.borrow_mut();
        if name == MODEL_NAME {
            s.config.use_custom = value == CUSTOM_OPTION;
            if !s.config.use_custom {
                s.config.model = value.to_owned();
            }
        } else if name == HUB_NAME {
            // Typing a Hub id imports it (the only way a reader makes the widget fetch);
            // the same id again retries a failed import.
            let again = value.trim() == render::shown_repo(&s.config);
            if value.trim().is_empty() || (again && !s.failed) {
                return;
            }
            if s.failed {
                s.hub = None;
            }
            let mut next = s.config.clone();
            match next.set_hub_repo(value) {
                Ok(()) => {
                    s.typed = None;
                    s.config = next;
                }
                Err(e) => s.typed = Some(e),
            }
        } else if name == Field::Gpu.spec().key {
            let _ = s.config.settings.set(Field::Gpu, value, Surface::Web);
        } else if let Some(f) = [Field::Batch, Field::Seq]
            .into_iter()
            .find(|f| f.spec().key == name)
        {
            // A typo keeps the last good value and says why, as on the estimator page.
            match s.config.settings.clone().set(f, value, Surface::Web) {
                Ok(()) => {
                    let _ = s.config.settings.set(f, value, Surface::Web);
                    s.typed = None;
                }
                Err(e) => s.typed = Some(e.to_string()),
            }
        } else {
            return;
        }
    }
    update(state);
}

/// Starts the Hub import the state asks for, unless it is the one already held.
fn fetch_hub(state: &Rc<RefCell<State>>) {
    let (key, urls) = {
        let s = state.borrow();
        let Some(key) = s.config.hub_import() else {
            return;
        };
        if s.hub.as_ref().is_some_and(|(k, _)| *k == key) {
            return;
        }
        (key, s.urls.clone())
    };
    let arrived = ARRIVED.with(|a| {
        a.borrow()
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, i)| i.clone())
    });
    if let Some(i) = arrived {
        state.borrow_mut().hub = Some((key, HubState::Ready(Box::new(i))));
        return;
    }
    state.borrow_mut().hub = Some((key.clone(), HubState::Loading));
    // Another widget is already fetching this model: wait for its answer.
    let joined = PENDING.with(|p| {
        let mut p = p.borrow_mut();
        match p.iter_mut().find(|(k, _)| *k == key) {
            Some((_, waiting)) => {
                waiting.push(Rc::downgrade(state));
                true
            }
            None => {
                p.push((key.clone(), vec![Rc::downgrade(state)]));
                false
            }
        }
    });
    if joined {
        return;
    }
    wasm_bindgen_futures::spawn_local(async move {
        let answer = if urls.0.is_empty() {
            HubState::Failed("esta copia del widget no trae el importador de modelos.".into())
        } else {
            match lazy_web::import::import_repo(&urls, &key.0, &key.1).await {
                Ok(i) => {
                    if i.arch.is_some() {
                        ARRIVED.with(|a| a.borrow_mut().push((key.clone(), i.clone())));
                    }
                    HubState::Ready(Box::new(i))
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
        // A widget may have left the page, or moved on to another model.
        for state in waiting.iter().filter_map(Weak::upgrade) {
            let wanted = state.borrow().hub.as_ref().is_some_and(|(k, _)| *k == key);
            if wanted {
                state.borrow_mut().hub = Some((key.clone(), answer.clone()));
                update(&state);
            }
        }
    });
}

#[wasm_bindgen]
impl Widget {
    /// Mounts a widget in `mount` (a div inside the element's shadow root). `site` is
    /// vramlab's base URL for the "open in vramlab" link; `get` reads an attribute;
    /// `import_js` and `import_wasm` are the importer bundle's URLs ("" when this
    /// build has none).
    #[wasm_bindgen(constructor)]
    pub fn new(
        mount: web_sys::HtmlElement,
        site: String,
        get: js_sys::Function,
        import_js: String,
        import_wasm: String,
    ) -> Widget {
        let (config, problems) = read(&get);
        mount.set_inner_html(render::FRAME);
        let root = mount
            .first_element_child()
            .unwrap_or_else(|| mount.clone().into());
        let state = Rc::new(RefCell::new(State {
            config,
            problems,
            typed: None,
            hub: None,
            urls: (import_js, import_wasm),
            site,
            root: root.clone(),
            controls: String::new(),
            failed: false,
        }));
        let weak = Rc::downgrade(&state);
        // One listener for every control: `change` bubbles from selects and inputs.
        let listener = EventListener::new(&root, "change", move |ev| {
            let Some(state) = weak.upgrade() else {
                return;
            };
            let Some(target) = ev.target() else {
                return;
            };
            let (name, value) = if let Some(s) = target.dyn_ref::<web_sys::HtmlSelectElement>() {
                (s.name(), s.value())
            } else if let Some(i) = target.dyn_ref::<web_sys::HtmlInputElement>() {
                (i.name(), i.value())
            } else {
                return;
            };
            on_change(&state, &name, &value);
        });
        update(&state);
        Widget {
            state,
            get,
            _listener: listener,
        }
    }

    /// Reads the attributes again (one of them changed).
    pub fn refresh(&self) {
        let (config, problems) = read(&self.get);
        {
            let mut s = self.state.borrow_mut();
            s.config = config;
            s.problems = problems;
        }
        update(&self.state);
    }
}
