//! What the estimator remembers between visits (wasm32 only), in `localStorage`: the
//! last configuration (as the query string a link would carry) and the reader's Hub
//! address.
//!
//! Values are stored as versioned text (`v2 ` and the value), so a value written by an
//! older page (JSON before this format, a bare string before that) or a newer one is
//! ignored and removed instead of being misread. Raw `web_sys::Storage`: a prefix needs
//! no JSON, and the page's bundle carries no serializer for it. Storage can be disabled
//! (privacy settings, some embedded browsers) or full: then nothing is remembered and
//! the page says so once, in Spanish; the estimator and its links keep working.

use wasm_bindgen::JsValue;

const STATE_KEY: &str = "vramlab.estimador";
/// The reader's Hub address, when it is not the default.
const HUB_KEY: &str = "vramlab.hub";
/// The format of the stored values; change it when their meaning changes.
const VERSION: &str = "v2 ";

const DISABLED: &str = "Tu navegador no deja guardar datos de este sitio: el estimador no recordará tu configuración (el enlace de la barra de direcciones sí la guarda).";

/// The browser's `localStorage`, when it offers one (a disabled one throws, or is
/// null).
fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// The Spanish note for a failed write, or `None` when the write worked.
fn note(result: Result<(), JsValue>) -> Option<String> {
    let e = result.err()?;
    let name = js_sys::Reflect::get(&e, &"name".into())
        .ok()
        .and_then(|n| n.as_string());
    Some(if name.as_deref() == Some("QuotaExceededError") {
        "El almacenamiento de este sitio en tu navegador está lleno: el estimador no recordará esta configuración (el enlace de la barra de direcciones sí la guarda)."
            .into()
    } else {
        DISABLED.into()
    })
}

/// A stored value of this version, or `None` (absent, disabled, older or foreign;
/// values of another format are removed so they are not read again).
fn read(key: &str) -> Option<String> {
    let s = storage()?;
    let value = s.get_item(key).ok().flatten()?;
    match value.strip_prefix(VERSION) {
        Some(v) => Some(v.to_owned()),
        None => {
            let _ = s.remove_item(key);
            None
        }
    }
}

fn write(key: &str, value: &str) -> Option<String> {
    let Some(s) = storage() else {
        return Some(DISABLED.into());
    };
    note(s.set_item(key, &format!("{VERSION}{value}")))
}

fn remove(key: &str) {
    if let Some(s) = storage() {
        let _ = s.remove_item(key);
    }
}

/// The last configuration, as a query string.
pub fn query() -> Option<String> {
    read(STATE_KEY)
}

/// The reader's Hub address, at most 200 characters.
pub fn hub() -> Option<String> {
    read(HUB_KEY).map(|h| h.chars().take(200).collect())
}

/// Remembers the configuration; a Spanish note when the browser refused.
pub fn save_query(query: &str) -> Option<String> {
    write(STATE_KEY, query)
}

/// Forgets the remembered configuration.
pub fn forget_query() {
    remove(STATE_KEY);
}

/// Remembers the Hub address (forgets it when it is the default).
pub fn save_hub(base: &str) -> Option<String> {
    if base == vram::hub::DEFAULT_HUB {
        remove(HUB_KEY);
        return None;
    }
    write(HUB_KEY, base)
}
