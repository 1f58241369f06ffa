//! Gzip for the dev server as a production host serves it: each file compressed once and
//! kept, as hosts keep precompressed assets, instead of compressed again for every
//! request. Compressing the site's wasm per request let a few hundred clients that
//! pipeline requests keep both worker threads busy for seconds while a normal visitor
//! waited; from the cache a response costs a copy of bytes already made.
//!
//! Only whole `200` answers to `GET` from clients that accept gzip are cached, keyed by
//! path, `Last-Modified` and length (a rebuilt file is compressed anew). The cache is
//! bounded in entries and bytes; past that, responses go on to tower-http's streaming
//! compression as before.

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use flate2::{Compression, write::GzEncoder};
use tokio::sync::OnceCell;

/// Files larger than this are left to streaming compression.
const MAX_FILE: u64 = 64 << 20;
/// Most distinct paths kept (the site has a few hundred files).
const MAX_ENTRIES: usize = 1024;
/// Most compressed bytes kept.
const MAX_BYTES: u64 = 256 << 20;

type Key = (String, String, u64);
type Slot = Arc<OnceCell<Option<Bytes>>>;

/// The compressed files, shared by every connection.
#[derive(Default)]
pub struct GzipCache {
    state: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    slots: HashMap<Key, Slot>,
    bytes: u64,
}

impl GzipCache {
    /// The slot for `key`, or `None` when the cache is full.
    fn slot(&self, key: Key, len: u64) -> Option<Slot> {
        let mut state = self.state.lock().ok()?;
        if let Some(slot) = state.slots.get(&key) {
            return Some(Arc::clone(slot));
        }
        if state.slots.len() >= MAX_ENTRIES || state.bytes.saturating_add(len) > MAX_BYTES {
            return None;
        }
        // Counted at the file's length: gzip output is never much larger.
        state.bytes += len;
        let slot = Slot::default();
        state.slots.insert(key, Arc::clone(&slot));
        Some(slot)
    }
}

/// Whether the client takes gzip (`gzip` or `*` listed without `q=0`).
fn accepts_gzip(request: &Request) -> bool {
    let Some(value) = request
        .headers()
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    value.split(',').any(|item| {
        let mut parts = item.split(';').map(str::trim);
        let coding = parts.next().unwrap_or("").to_ascii_lowercase();
        let refused = parts.any(|p| {
            p.strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        (coding == "gzip" || coding == "*") && !refused
    })
}

fn compressible(response: &Response) -> bool {
    let kind = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    kind.starts_with("text/")
        || [
            "application/wasm",
            "application/json",
            "application/xml",
            "image/svg+xml",
        ]
        .iter()
        .any(|t| kind.starts_with(t))
}

fn gzip(raw: &[u8]) -> Option<Bytes> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(raw).ok()?;
    encoder.finish().ok().map(Bytes::from)
}

/// The middleware: answers a cacheable response with its compressed bytes.
pub async fn gzip_once(
    State(cache): State<Arc<GzipCache>>,
    request: Request,
    next: Next,
) -> Response {
    let wanted = request.method() == Method::GET
        && !request.headers().contains_key(header::RANGE)
        && accepts_gzip(&request);
    let path = request.uri().path().to_owned();
    let response = next.run(request).await;
    if !wanted
        || response.status() != StatusCode::OK
        || response.headers().contains_key(header::CONTENT_ENCODING)
        || !compressible(&response)
    {
        return response;
    }
    let (len, modified) = {
        let text = |name| {
            response
                .headers()
                .get(name)
                .and_then(|v: &HeaderValue| v.to_str().ok())
                .unwrap_or("")
                .to_owned()
        };
        (
            text(header::CONTENT_LENGTH).parse::<u64>(),
            text(header::LAST_MODIFIED),
        )
    };
    let Some(len) = len.ok().filter(|&l| l <= MAX_FILE) else {
        return response;
    };
    let Some(slot) = cache.slot((path, modified, len), len) else {
        return response;
    };
    let (mut parts, body) = response.into_parts();
    let compressed = match slot.get() {
        Some(done) => done.clone(),
        None => {
            let Ok(raw) = axum::body::to_bytes(body, MAX_FILE as usize).await else {
                return StatusCode::INTERNAL_SERVER_ERROR.into_response();
            };
            let made = slot
                .get_or_init(|| {
                    let raw = raw.clone();
                    async move {
                        tokio::task::spawn_blocking(move || gzip(&raw))
                            .await
                            .ok()
                            .flatten()
                    }
                })
                .await
                .clone();
            if made.is_none() {
                return Response::from_parts(parts, Body::from(raw));
            }
            made
        }
    };
    let Some(bytes) = compressed else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let headers = &mut parts.headers;
    headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    // Ranges of the encoded bytes are not offered; a ranged request gets the file as is.
    headers.remove(header::ACCEPT_RANGES);
    Response::from_parts(parts, Body::from(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_encoding_is_read_with_its_weights() {
        let with = |value: &str| {
            let request = Request::builder()
                .header(header::ACCEPT_ENCODING, value)
                .body(Body::empty())
                .unwrap_or_default();
            accepts_gzip(&request)
        };
        assert!(with("gzip"));
        assert!(with("br, gzip;q=0.8"));
        assert!(with("*"));
        assert!(!with("gzip;q=0"));
        assert!(!with("br"));
        assert!(!with("identity"));
    }

    #[test]
    fn the_cache_is_bounded() {
        let cache = GzipCache::default();
        for i in 0..MAX_ENTRIES {
            assert!(cache.slot((format!("/{i}"), String::new(), 1), 1).is_some());
        }
        assert!(cache.slot(("/otro".into(), String::new(), 1), 1).is_none());
        // A path already kept is still found.
        assert!(cache.slot(("/0".into(), String::new(), 1), 1).is_some());
        let big = GzipCache::default();
        assert!(
            big.slot(("/a".into(), String::new(), MAX_BYTES), MAX_BYTES)
                .is_some()
        );
        assert!(big.slot(("/b".into(), String::new(), 1), 1).is_none());
    }
}
