//! What the estimator remembers between visits (wasm32 only), through `gloo-storage`'s
//! `LocalStorage`: the last configuration (as the query string a link would carry) and
//! the reader's Hub address.
//!
//! Values are stored as versioned JSON (`{"v":1,"query":"…"}`), so a value written by an
//! older page (a bare string before versioning) or a newer one is ignored instead of
//! being misread. Storage can be disabled (privacy settings, some embedded browsers) or
//! full: then nothing is remembered and the page says so once, in Spanish; the
//! estimator and its links keep working.

use gloo_storage::errors::StorageError;
use gloo_storage::{LocalStorage, Storage};
use serde::{Deserialize, Serialize};

const STATE_KEY: &str = "vramlab.estimador";
/// The reader's Hub address, when it is not the default.
const HUB_KEY: &str = "vramlab.hub";
/// The format of the stored values; bump it when their meaning changes.
const VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Stored {
    v: u32,
    #[serde(default)]
    query: Option<String>,
    #[serde(default)]
    hub: Option<String>,
}

/// Whether the browser offers localStorage at all. gloo-storage throws a JavaScript
/// exception through the wasm stack when it does not (storage disabled, an opaque
/// origin), so every use asks this first; the check itself is raw web_sys.
fn available() -> bool {
    web_sys::window()
        .and_then(|w| w.local_storage().ok().flatten())
        .is_some()
}

const DISABLED: &str = "Tu navegador no deja guardar datos de este sitio: el estimador no recordará tu configuración (el enlace de la barra de direcciones sí la guarda).";

/// The Spanish note for a failed write, or `None` when the write worked.
fn note(result: Result<(), StorageError>) -> Option<String> {
    match result {
        Ok(()) => None,
        Err(StorageError::JsError(e)) if e.name == "QuotaExceededError" => Some(
            "El almacenamiento de este sitio en tu navegador está lleno: el estimador no recordará esta configuración (el enlace de la barra de direcciones sí la guarda)."
                .into(),
        ),
        Err(_) => Some(DISABLED.into()),
    }
}

/// A stored value of this version, or `None` (absent, disabled, older or damaged;
/// damaged and foreign values are removed so they are not read again).
fn read(key: &str) -> Option<Stored> {
    if !available() {
        return None;
    }
    match LocalStorage::get::<Stored>(key) {
        Ok(stored) if stored.v == VERSION => Some(stored),
        Ok(_) => None,
        Err(StorageError::KeyNotFound(_)) => None,
        Err(StorageError::SerdeError(_)) => {
            LocalStorage::delete(key);
            None
        }
        Err(_) => None,
    }
}

/// The last configuration, as a query string.
pub fn query() -> Option<String> {
    read(STATE_KEY)?.query
}

/// The reader's Hub address, at most 200 characters.
pub fn hub() -> Option<String> {
    read(HUB_KEY)?.hub.map(|h| h.chars().take(200).collect())
}

/// Remembers the configuration; a Spanish note when the browser refused.
pub fn save_query(query: &str) -> Option<String> {
    if !available() {
        return Some(DISABLED.into());
    }
    note(LocalStorage::set(
        STATE_KEY,
        Stored {
            v: VERSION,
            query: Some(query.to_owned()),
            hub: None,
        },
    ))
}

/// Forgets the remembered configuration.
pub fn forget_query() {
    if available() {
        LocalStorage::delete(STATE_KEY);
    }
}

/// Remembers the Hub address (forgets it when it is the default).
pub fn save_hub(base: &str) -> Option<String> {
    if !available() {
        return Some(DISABLED.into());
    }
    if base == vram::hub::DEFAULT_HUB {
        LocalStorage::delete(HUB_KEY);
        return None;
    }
    note(LocalStorage::set(
        HUB_KEY,
        Stored {
            v: VERSION,
            query: None,
            hub: Some(base.to_owned()),
        },
    ))
}
