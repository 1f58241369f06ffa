//! The estimator's calls into the lazily loaded `import-web` bundle (wasm32 only),
//! through `lazy-web`, and the file of a drop on the panel.

pub use lazy_web::import::{import_repo, read_file, read_text, shared};

/// The first file of a drop on the panel.
// Raw web_sys: the File comes from the drag event; gloo-file wraps one but cannot get it.
pub fn dropped(ev: &leptos::ev::DragEvent) -> Option<web_sys::File> {
    ev.data_transfer()
        .and_then(|d| d.files())
        .and_then(|files| files.get(0))
}
