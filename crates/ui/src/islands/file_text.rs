//! Reading a file the reader chose, in the browser (wasm32 only), through `gloo-file`:
//! the size is checked before anything is read, a read that fails (the file moved,
//! permissions, a read aborted halfway) is a Spanish message, and the file never
//! leaves the machine.

#[cfg(feature = "background")]
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// Why a file could not be read, in Spanish (the DOMException names are English).
#[cfg(feature = "background")]
fn read_error(e: &gloo_file::FileReadError) -> String {
    use gloo_file::FileReadError as E;
    let why = match e {
        E::AbortedEarly => "la lectura se interrumpió",
        E::NotFound(_) => "ya no está donde estaba",
        E::NotReadable(_) => "el navegador no puede leerlo (¿permisos, o cambió mientras se leía?)",
        E::Security(_) => "el navegador no permite leerlo",
    };
    format!("No se pudo leer el archivo: {why}.")
}

/// The first file of an `<input type=file>` change event.
// Raw web_sys: the File comes from the <input type=file>; gloo-file wraps one but cannot get it.
pub fn first_file(ev: &leptos::ev::Event) -> Option<web_sys::File> {
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        .and_then(|input| input.files())
        .and_then(|files| files.get(0))
}

#[cfg(feature = "background")]
fn too_big(max_bytes: usize) -> String {
    format!(
        "El archivo es demasiado grande (máximo {}).",
        vram::ByteSize(max_bytes as u64).binary()
    )
}

/// Reads the first chosen file into an `ArrayBuffer` that stays out of wasm memory
/// (it is transferred to the diagnostics worker), with its name cut to 120 characters.
#[cfg(feature = "background")]
pub fn read_first_buffer(
    ev: leptos::ev::Event,
    max_bytes: usize,
    on_buffer: impl Fn(String, js_sys::ArrayBuffer) + 'static,
    error: RwSignal<Option<String>>,
) {
    let Some(file) = first_file(&ev) else { return };
    if file.size() > max_bytes as f64 {
        error.set(Some(too_big(max_bytes)));
        return;
    }
    let name: String = file.name().chars().take(120).collect();
    let file = gloo_file::File::from(file);
    wasm_bindgen_futures::spawn_local(async move {
        match gloo_file::futures::read_as_array_buffer(&file).await {
            Ok(buffer) => {
                error.set(None);
                on_buffer(name, buffer);
            }
            Err(e) => error.set(Some(read_error(&e))),
        }
    });
}

/// Reads the first file of an `<input type=file>` change event with `File.text()`.
#[cfg(feature = "explainer")]
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
    let file = gloo_file::File::from(file);
    wasm_bindgen_futures::spawn_local(async move {
        match gloo_file::futures::read_as_text(&file).await {
            Ok(text) => {
                error.set(None);
                on_text(text);
            }
            Err(e) => error.set(Some(read_error(&e))),
        }
    });
}
