//! A small static file server for `dist/`, with the headers the site is meant to be
//! served with: exact MIME types (`application/wasm` for streaming compilation), the
//! Content-Security-Policy, and immutable caching for hashed assets.

use anyhow::{Result, anyhow};
use std::collections::HashMap;
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use tiny_http::{Header, Request, Response, Server};

/// The policy sent as a header. The pages carry the same policy in a `<meta>` tag for
/// hosts that cannot set headers; the header adds what a meta tag cannot express.
pub const CSP: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; \
    style-src 'self'; img-src 'self' data:; connect-src 'self' https: http://127.0.0.1:* http://localhost:*; object-src 'none'; \
    base-uri 'self'; form-action 'self'; frame-ancestors 'self'";

/// The policy of the embeddable widget's iframe page: the same, framable by any site.
pub const EMBED_CSP: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; \
    style-src 'self'; img-src 'self' data:; connect-src 'self' https: http://127.0.0.1:* http://localhost:*; object-src 'none'; \
    base-uri 'self'; form-action 'self'; frame-ancestors *";

/// Requests answered at once; more get 503.
const MAX_IN_FLIGHT: usize = 256;

/// A server running on background threads.
pub struct Running {
    pub url: String,
    server: Arc<Server>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.server.unblock();
    }
}

/// Starts serving `dist` on `127.0.0.1:port` (0 picks a free port). With `compress`,
/// text and wasm go out compressed to clients that accept it, as from a real host;
/// the browser tests run without it: with it, about one page load in sixty hung on a
/// small module script in Chromium (0 in 192 without), cause not found yet.
pub fn start(dist: &Path, port: u16, base: Option<&str>, compress: bool) -> Result<Running> {
    let server = Server::http(("127.0.0.1", port))
        .map_err(|e| anyhow!("no se pudo abrir el puerto {port}: {e}"))?;
    let addr = server
        .server_addr()
        .to_ip()
        .ok_or_else(|| anyhow!("dirección de escucha inesperada"))?;
    let base = normalize_base(base.unwrap_or("/"));
    let server = Arc::new(server);
    // One thread per request: tiny_http cannot time out a write, so a client that stops
    // reading (a browser tab closed mid-download) blocks its thread forever. With a
    // fixed pool a few such clients stalled the whole server; here they only leak a
    // thread, and past MAX_IN_FLIGHT the server answers 503 instead of queueing.
    let acceptor = Arc::clone(&server);
    let dist = dist.to_path_buf();
    let url = format!("http://{addr}{base}");
    thread::spawn(move || {
        let in_flight = Arc::new(AtomicUsize::new(0));
        while let Ok(request) = acceptor.recv() {
            if in_flight.load(Ordering::Relaxed) >= MAX_IN_FLIGHT {
                let _ = request.respond(Response::empty(503));
                continue;
            }
            in_flight.fetch_add(1, Ordering::Relaxed);
            let (dist, base, in_flight) = (dist.clone(), base.clone(), Arc::clone(&in_flight));
            thread::spawn(move || {
                respond(request, &dist, &base, compress);
                in_flight.fetch_sub(1, Ordering::Relaxed);
            });
        }
    });
    Ok(Running { url, server })
}

pub fn serve_forever(dist: &Path, port: u16, base: Option<&str>, compress: bool) -> Result<()> {
    let running = start(dist, port, base, compress)?;
    println!("vramlab: sirviendo {} en {}", dist.display(), running.url);
    println!("(Ctrl+C para parar)");
    loop {
        thread::park();
    }
}

fn normalize_base(base: &str) -> String {
    let trimmed = base.trim_matches('/');
    if trimmed.is_empty() {
        "/".into()
    } else {
        format!("/{trimmed}/")
    }
}

pub fn mime(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "xml" => "application/xml; charset=utf-8",
        "txt" => "text/plain; charset=utf-8",
        "woff2" => "font/woff2",
        _ => "application/octet-stream",
    }
}

/// Maps a URL path to a file under `dist`, refusing anything that climbs out.
fn resolve(dist: &Path, base: &str, url: &str) -> Option<PathBuf> {
    let path = url.split(['?', '#']).next().unwrap_or("");
    let rel = path
        .strip_prefix(base)
        .or_else(|| (path.to_owned() + "/").eq(base).then_some(""))?;
    let mut out = dist.to_path_buf();
    for comp in Path::new(rel).components() {
        match comp {
            Component::Normal(c) => out.push(c),
            Component::CurDir => {}
            _ => return None,
        }
    }
    if out.is_dir() {
        out.push("index.html");
    }
    Some(out)
}

/// Whether a response of this type is worth compressing (images other than SVG are
/// compressed already).
fn compressible(mime: &str) -> bool {
    mime.starts_with("text/")
        || mime.starts_with("application/javascript")
        || mime.starts_with("application/json")
        || mime.starts_with("application/wasm")
        || mime.starts_with("application/xml")
        || mime.starts_with("image/svg+xml")
}

/// The gzipped body of `file`; hashed (immutable) files are compressed once and kept.
fn compressed(file: &Path, body: &[u8], immutable: bool) -> Option<Vec<u8>> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Vec<u8>>>> = OnceLock::new();
    if !immutable {
        return gzip(body);
    }
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(hit) = cache.lock().ok()?.get(file) {
        return Some(hit.clone());
    }
    let z = gzip(body)?;
    cache.lock().ok()?.insert(file.to_path_buf(), z.clone());
    Some(z)
}

fn gzip(bytes: &[u8]) -> Option<Vec<u8>> {
    use flate2::{Compression, write::GzEncoder};
    use std::io::Write;
    // Level 1: most of the saving at a fraction of the time; hosts precompress harder.
    let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
    encoder.write_all(bytes).ok()?;
    encoder.finish().ok()
}

fn header(name: &str, value: &str) -> Option<Header> {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
}

fn respond(request: Request, dist: &Path, base: &str, compress: bool) {
    let url = request.url().to_owned();
    // A directory asked for without its trailing slash: redirect so relative URLs work.
    let path_only = url.split(['?', '#']).next().unwrap_or("");
    if !path_only.ends_with('/')
        && let Some(file) = resolve(dist, base, path_only)
        && file.ends_with("index.html")
        && file.is_file()
        && !path_only.ends_with("index.html")
    {
        let mut response = Response::empty(301);
        if let Some(h) = header("Location", &format!("{path_only}/")) {
            response.add_header(h);
        }
        let _ = request.respond(response);
        return;
    }
    let (status, file) = match resolve(dist, base, &url).filter(|f| f.is_file()) {
        Some(f) => (200, f),
        None => (404, dist.join("404.html")),
    };
    let body = fs::read(&file).unwrap_or_default();
    let mime = mime(&file);
    // Compress text and wasm for clients that ask, as a static host (or its CDN) does;
    // Lighthouse and the size budgets then see the bytes a reader would download.
    let accepts_gzip = compress
        && request.headers().iter().any(|h| {
            h.field.equiv("Accept-Encoding")
                && h.value.as_str().split(',').any(|e| e.trim() == "gzip")
        });
    let immutable = file
        .components()
        .any(|c| c.as_os_str() == "pkg" || c.as_os_str() == "assets");
    let (body, gzipped) = if accepts_gzip && compressible(mime) {
        match compressed(&file, &body, immutable && status == 200) {
            Some(z) => (z, true),
            None => (body, false),
        }
    } else {
        (body, false)
    };
    let mut response = Response::from_data(body).with_status_code(status);
    if gzipped && let Some(h) = header("Content-Encoding", "gzip") {
        response.add_header(h);
    }
    let cache = if immutable && status == 200 {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    // Other sites load the widget's script, glue and wasm (module scripts are CORS
    // requests) and frame its iframe page, as they may from any static host.
    let embed = file.components().any(|c| c.as_os_str() == "embed");
    for (name, value) in [
        ("Content-Type", mime),
        ("Vary", "Accept-Encoding"),
        (
            "Content-Security-Policy",
            if embed { EMBED_CSP } else { CSP },
        ),
        ("Access-Control-Allow-Origin", "*"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "strict-origin-when-cross-origin"),
        ("Cache-Control", cache),
    ] {
        if let Some(h) = header(name, value) {
            response.add_header(h);
        }
    }
    let _ = request.respond(response);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_inside_dist_only() {
        let dist = Path::new("/srv/dist");
        assert_eq!(
            resolve(dist, "/", "/a.css?x=1"),
            Some(PathBuf::from("/srv/dist/a.css"))
        );
        assert_eq!(resolve(dist, "/", "/../etc/passwd"), None);
        assert_eq!(resolve(dist, "/vramlab/", "/otra/a.css"), None);
        assert_eq!(
            resolve(dist, "/vramlab/", "/vramlab/a.css"),
            Some(PathBuf::from("/srv/dist/a.css"))
        );
    }

    #[test]
    fn compresses_text_and_wasm_only() {
        assert!(compressible(mime(Path::new("x.wasm"))));
        assert!(compressible(mime(Path::new("x.json"))));
        assert!(compressible(mime(Path::new("x.html"))));
        assert!(!compressible(mime(Path::new("x.png"))));
        assert!(!compressible(mime(Path::new("x.woff2"))));
        let text = "memoria ".repeat(1000);
        let z = gzip(text.as_bytes()).unwrap_or_default();
        assert!(!z.is_empty() && z.len() < text.len() / 10, "{}", z.len());
        let mut back = String::new();
        use std::io::Read;
        let read = flate2::read::GzDecoder::new(z.as_slice()).read_to_string(&mut back);
        assert!(read.is_ok());
        assert_eq!(back, text);
    }

    #[test]
    fn mime_types() {
        assert_eq!(mime(Path::new("x.wasm")), "application/wasm");
        assert_eq!(mime(Path::new("x.js")), "text/javascript; charset=utf-8");
    }
}
