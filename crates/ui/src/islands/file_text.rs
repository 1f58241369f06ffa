//! Reading a file the reader chose, as text, in the browser (wasm32 only): the size is
//! checked before anything is read, and the file never leaves the machine.

#[cfg(feature = "diag")]
use leptos::prelude::*;
use wasm_bindgen::JsCast;
#[cfg(feature = "diag")]
use wasm_bindgen_futures::JsFuture;

/// The first file of an `<input type=file>` change event.
pub fn first_file(ev: &leptos::ev::Event) -> Option<web_sys::File> {
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        .and_then(|input| input.files())
        .and_then(|files| files.get(0))
}

#[cfg(feature = "diag")]
fn too_big(max_bytes: usize) -> String {
    format!(
        "El archivo es demasiado grande (máximo {}).",
        vram::ByteSize(max_bytes as u64).binary()
    )
}

/// Reads the first chosen file as bytes (`Blob.arrayBuffer()`), with its name.
#[cfg(feature = "diag")]
pub fn read_first_bytes(
    ev: leptos::ev::Event,
    max_bytes: usize,
    on_bytes: impl Fn(String, Vec<u8>) + 'static,
    error: RwSignal<Option<String>>,
) {
    let Some(file) = first_file(&ev) else { return };
    if file.size() > max_bytes as f64 {
        error.set(Some(too_big(max_bytes)));
        return;
    }
    let name: String = file.name().chars().take(120).collect();
    wasm_bindgen_futures::spawn_local(async move {
        match JsFuture::from(file.array_buffer()).await {
            Ok(buf) => {
                error.set(None);
                on_bytes(name, js_sys::Uint8Array::new(&buf).to_vec());
            }
            Err(_) => error.set(Some("No se pudo leer el archivo.".into())),
        }
    });
}

/// Reads the first file of an `<input type=file>` change event with `File.text()`.
#[cfg(feature = "diag")]
pub fn read_first(
    ev: leptos::ev::Event,
    max_bytes: usize,
    on_text: impl Fn(String) + 'static,
    error: RwSignal<Option<String>>,
) {
    let Some(file) = first_file(&ev) else { return };
    if file.size() > max_bytes as f64 {
        error.set(Some(too_big(max_bytes)));
        return;
    }
    wasm_bindgen_futures::spawn_local(async move {
        match JsFuture::from(file.text())
            .await
            .ok()
            .and_then(|v| v.as_string())
        {
            Some(text) => {
                error.set(None);
                on_text(text);
            }
            None => error.set(Some("No se pudo leer el archivo.".into())),
        }
    });
}
