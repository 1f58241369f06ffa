//! Fetching a model's files from the Hugging Face Hub in the browser (wasm32 only):
//! `config.json` for the architecture, then the exact weight bytes from
//! `model.safetensors.index.json` or, for a single-file model, from the header of
//! `model.safetensors` through two HTTP Range requests. Every request has a timeout
//! and a byte cap checked while the body streams in, so a slow, huge or lying server
//! costs a message, never the tab.

use js_sys::{Reflect, Uint8Array};
use vram::hub::{self, HubError, RepoId};
use vram::safetensors;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use vram::import::{self, ImportedModel, StoredWeights};

/// A response's status and (bounded) body.
struct Fetched {
    status: u16,
    bytes: Vec<u8>,
}

/// The Hub's CDN answers a Range request with 206; a 200 would be the whole file.
const PARTIAL: u16 = 206;

// Raw web_sys: the fetch below is raw (gloo-net is not a dependency), so its body is too.
fn cancel(resp: &web_sys::Response) {
    if let Some(body) = resp.body() {
        let _ = body.cancel();
    }
}

/// GETs `url` (optionally one byte range), reading at most `max` bytes of body.
async fn get(
    base: &str,
    url: &str,
    range: Option<(u64, u64)>,
    max: usize,
    file: &str,
) -> Result<Fetched, HubError> {
    let network = || HubError::Network(base.to_owned());
    // Raw web_sys: fetch with AbortController, CORS and Range; gloo-net is not a dependency.
    let window = web_sys::window().ok_or_else(network)?;
    let ctrl = web_sys::AbortController::new().map_err(|_| network())?;
    let signal = ctrl.signal();
    let init = web_sys::RequestInit::new();
    init.set_method("GET");
    init.set_mode(web_sys::RequestMode::Cors);
    init.set_signal(Some(&signal));
    if let Some((from, to)) = range {
        let headers = web_sys::Headers::new().map_err(|_| network())?;
        headers
            .set("Range", &format!("bytes={from}-{to}"))
            .map_err(|_| network())?;
        init.set_headers(&headers);
    }
    // Dropped when this function returns, which cancels it (and frees its closure).
    let _timer =
        gloo_timers::callback::Timeout::new(hub::TIMEOUT_SECONDS * 1000, move || ctrl.abort());
    let failed = |signal: &web_sys::AbortSignal| {
        if signal.aborted() {
            HubError::Timeout(hub::TIMEOUT_SECONDS)
        } else {
            network()
        }
    };
    // The tail expression: `_timer` lives until the request is done.
    async {
        // Raw web_sys: `window.fetch` itself, as gloo-net is not a dependency.
        let resp: web_sys::Response = JsFuture::from(window.fetch_with_str_and_init(url, &init))
            .await
            .map_err(|_| failed(&signal))?
            .dyn_into()
            .map_err(|_| network())?;
        let status = resp.status();
        let wanted = if range.is_some() { PARTIAL } else { 200 };
        if status != wanted {
            cancel(&resp);
            if range.is_some() && status == 200 {
                return Err(HubError::NoRange);
            }
            return Ok(Fetched {
                status,
                bytes: Vec::new(),
            });
        }
        let declared = resp
            .headers()
            .get("content-length")
            .ok()
            .flatten()
            .and_then(|v| v.trim().parse::<u64>().ok());
        if declared.is_some_and(|n| n > max as u64) {
            cancel(&resp);
            return Err(hub::too_large(file, max));
        }
        let Some(body) = resp.body() else {
            return Ok(Fetched {
                status,
                bytes: Vec::new(),
            });
        };
        // Raw web_sys: the body streams in under a byte cap, which gloo-net does not do.
        let reader: web_sys::ReadableStreamDefaultReader =
            body.get_reader().dyn_into().map_err(|_| network())?;
        let mut bytes = Vec::new();
        loop {
            let chunk = JsFuture::from(reader.read())
                .await
                .map_err(|_| failed(&signal))?;
            let done = Reflect::get(&chunk, &JsValue::from_str("done"))
                .map(|d| d.is_truthy())
                .unwrap_or(true);
            if done {
                break;
            }
            let value = Reflect::get(&chunk, &JsValue::from_str("value")).map_err(|_| network())?;
            let part = Uint8Array::new(&value);
            if bytes.len() + part.length() as usize > max {
                let _ = reader.cancel();
                return Err(hub::too_large(file, max));
            }
            bytes.extend_from_slice(&part.to_vec());
        }
        Ok(Fetched { status, bytes })
    }
    .await
}

/// GETs one of the repository's files; anything but 200 is its Spanish error.
async fn file(base: &str, repo: &RepoId, name: &str, max: usize) -> Result<String, HubError> {
    let f = get(base, &hub::file_url(base, repo, name), None, max, name).await?;
    if f.status != 200 {
        return Err(hub::status_error(repo, name, f.status));
    }
    Ok(String::from_utf8_lossy(&f.bytes).into_owned())
}

/// The header of `model.safetensors`: its 8-byte length, then exactly that many bytes.
async fn single_file_header(base: &str, repo: &RepoId) -> Result<StoredWeights, String> {
    const NAME: &str = "model.safetensors";
    let url = hub::file_url(base, repo, NAME);
    let range = |from, to| get(base, &url, Some((from, to)), 8 << 20, NAME);
    let first = range(0, 7).await.map_err(|e| e.to_string())?;
    if first.status != PARTIAL {
        return Err(hub::status_error(repo, NAME, first.status).to_string());
    }
    let len = safetensors::header_len(&first.bytes).map_err(|e| e.to_string())?;
    let mut prefix = first.bytes;
    let cap = usize::try_from(len).unwrap_or(usize::MAX);
    let rest = get(base, &url, Some((8, 7 + len)), cap, NAME)
        .await
        .map_err(|e| e.to_string())?;
    if rest.status != PARTIAL {
        return Err(hub::status_error(repo, NAME, rest.status).to_string());
    }
    prefix.extend_from_slice(&rest.bytes);
    let s = safetensors::parse(&prefix).map_err(|e| e.to_string())?;
    Ok(StoredWeights::from_safetensors(
        &s,
        format!("{repo} (cabecera de {NAME})"),
        NAME,
    ))
}

/// The exact weights: the index of a sharded checkpoint, else the single file's header.
async fn weights(base: &str, repo: &RepoId) -> Result<StoredWeights, String> {
    const INDEX: &str = "model.safetensors.index.json";
    match file(base, repo, INDEX, hub::MAX_INDEX_BYTES).await {
        Ok(text) => {
            let t = hub::parse_index(&text).map_err(|e| e.to_string())?;
            Ok(StoredWeights {
                bytes: t.bytes,
                params: t.params,
                source: format!("{repo} ({INDEX})"),
                experts: Vec::new(),
                shard: None,
            })
        }
        Err(HubError::NotFound { .. }) => single_file_header(base, repo).await,
        Err(e) => Err(e.to_string()),
    }
}

/// Imports `repo`: the architecture must come; the exact weights are a bonus, and
/// when they cannot be read the summary says why and the chosen format is used.
pub async fn import(base: &str, repo: &RepoId) -> Result<ImportedModel, String> {
    let config = file(base, repo, "config.json", vram::hf_config::MAX_CONFIG_BYTES)
        .await
        .map_err(|e| e.to_string())?;
    let mut imported = import::json_text("config.json", &config)
        .map_err(|e| format!("config.json de {repo}: {e}"))?;
    imported.origin = Some(repo.to_string());
    match weights(base, repo).await {
        Ok(w) => imported.weights = Some(w),
        Err(e) => imported.notes.push(format!(
            "No se leyeron los bytes exactos de los pesos ({e}); se usa el formato elegido."
        )),
    }
    Ok(imported)
}
