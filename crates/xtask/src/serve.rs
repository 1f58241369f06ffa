//! A small static file server for `dist/`, with the headers the site is meant to be
//! served with: exact MIME types (`application/wasm` for streaming compilation), the
//! Content-Security-Policy, and immutable caching for hashed assets.

use anyhow::{Context, Result};
use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::Response;
use std::path::Path;
use std::thread;
use std::time::Duration;
use tower_http::compression::CompressionLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::services::{ServeDir, ServeFile};
use tower_http::set_status::SetStatus;
use tower_http::timeout::TimeoutLayer;

/// The policy sent as a header: the pages' own (`vram::hub::page_csp`), plus what a
/// meta tag cannot express, `frame-ancestors`; the widget's iframe page (`embed/`) may be
/// framed by any site.
fn csp(embed: bool) -> String {
    format!(
        "{}; frame-ancestors {}",
        vram::hub::page_csp(),
        if embed { "*" } else { "'self'" }
    )
}

/// A request that takes longer than this (a client that stops reading) is dropped.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A static site takes no request bodies; anything larger is refused unread.
const MAX_BODY: usize = 16 << 10;

/// The longest file name a file system holds (`NAME_MAX`); a longer path segment names
/// nothing, and `ServeDir` would answer it with an empty 500.
const MAX_SEGMENT: usize = 255;
/// The longest path served (`PATH_MAX` is 4096).
const MAX_PATH: usize = 4096;
/// A path that names no file: unservable requests are sent here, to the 404 page.
const NOWHERE: &str = "/.vramlab-no-existe";

/// A server running on its own tokio runtime; dropping it shuts the server down.
pub struct Running {
    pub url: String,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Starts serving `dist` on `127.0.0.1:port` (0 picks a free port) under `base`. With
/// `compress`, text and wasm go out gzipped to clients that accept it, as from a real
/// host. axum on tokio with tower-http's `ServeDir` (ranges, conditional requests,
/// index files, directory redirects); our layer adds the headers the site is meant to
/// be served with to every response, redirects and 404s included.
pub fn start(dist: &Path, port: u16, base: Option<&str>, compress: bool) -> Result<Running> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", port))
        .with_context(|| format!("no se pudo abrir el puerto {port}"))?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let base = normalize_base(base.unwrap_or("/"));
    let url = format!("http://{addr}{base}");
    let app = router(dist, &base, compress);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("no se pudo crear el runtime de tokio")?;
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let thread = thread::spawn(move || {
        runtime.block_on(async move {
            let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                return;
            };
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = rx.await;
                })
                .await;
        });
    });
    Ok(Running {
        url,
        shutdown: Some(tx),
        thread: Some(thread),
    })
}

/// The whole site: files from `dist` under `base`, `404.html` (with status 404) for
/// anything else, the site's headers on every response.
fn router(dist: &Path, base: &str, compress: bool) -> Router {
    let files = ServeDir::new(dist)
        .append_index_html_on_directories(true)
        .not_found_service(ServeFile::new(dist.join("404.html")));
    let site = if base == "/" {
        Router::new().fallback_service(files)
    } else {
        Router::new()
            .nest_service(base.trim_end_matches('/'), files.clone())
            .fallback_service(SetStatus::new(
                ServeFile::new(dist.join("404.html")),
                StatusCode::NOT_FOUND,
            ))
    };
    let site = if compress {
        let cache = std::sync::Arc::new(crate::serve_gzip::GzipCache::default());
        site.layer(middleware::from_fn_with_state(
            cache,
            crate::serve_gzip::gzip_once,
        ))
    } else {
        site
    };
    let site = site
        .layer(middleware::from_fn(site_headers))
        .layer(middleware::from_fn(tidy_request))
        .layer(RequestBodyLimitLayer::new(MAX_BODY))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            REQUEST_TIMEOUT,
        ));
    if compress {
        site.layer(CompressionLayer::new().gzip(true))
    } else {
        site
    }
}

/// What a static host does with the requests `ServeDir` would answer badly: a path
/// with a segment no file system can hold goes to the 404 page (not an empty 500); a
/// multi-range request is answered whole, as GitHub Pages and most CDNs do; a single
/// range whose end overflows is read to the end of the file (RFC 9110 §14.1.1: a last
/// position past the end means the end), so it is a 206, not a 416.
async fn tidy_request(mut request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if path.len() > MAX_PATH || path.split('/').any(|s| decoded_len(s) > MAX_SEGMENT) {
        *request.uri_mut() = Uri::from_static(NOWHERE);
    }
    let tidied = request
        .headers()
        .get(header::RANGE)
        // A value that is not text is no range a host would honour: dropped.
        .map(|v| v.to_str().map_or(Some(String::new()), tidy_range));
    match tidied.flatten().map(|t| HeaderValue::from_str(&t)) {
        Some(Ok(v)) if !v.is_empty() => {
            request.headers_mut().insert(header::RANGE, v);
        }
        Some(_) => {
            request.headers_mut().remove(header::RANGE);
        }
        None => {}
    }
    next.run(request).await
}

/// The bytes a percent-encoded path segment names once decoded.
fn decoded_len(segment: &str) -> usize {
    let b = segment.as_bytes();
    let escapes = b
        .windows(3)
        .filter(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
        .count();
    b.len() - 2 * escapes
}

/// A `Range` value as a host answers it: `None` to keep it, `Some("")` to drop it (a
/// multi-range: the whole file), `Some(v)` to ask for `v` instead (an end past u64
/// becomes an open end; a suffix past u64, the whole file).
fn tidy_range(value: &str) -> Option<String> {
    let spec = value.trim().strip_prefix("bytes=")?;
    if spec.contains(',') {
        return Some(String::new());
    }
    let (first, last) = spec.split_once('-')?;
    let (first, last) = (first.trim(), last.trim());
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let overflows = |s: &str| digits(s) && s.parse::<u64>().is_err();
    match (first.is_empty(), overflows(last)) {
        (false, true) if digits(first) => Some(format!("bytes={first}-")),
        (true, true) => Some("bytes=0-".to_owned()),
        _ => None,
    }
}

/// The headers of a production host: exact MIME types (`application/wasm` for streaming
/// compilation), the CSP (framable for `embed/`), CORS for the widget's files,
/// `nosniff`, and immutable caching for hashed files (`pkg/`, `assets/`).
async fn site_headers(request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    let mut response = next.run(request).await;
    if response.status() == StatusCode::RANGE_NOT_SATISFIABLE {
        // tower-http's body is English; the `Content-Range: bytes */N` header stays.
        let headers = response.headers_mut();
        headers.remove(header::CONTENT_LENGTH);
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        *response.body_mut() = Body::from(
            "El rango pedido no cae dentro del archivo: pide uno que empiece antes de su final.\n",
        );
    }
    let ok = response.status().is_success() || response.status() == StatusCode::NOT_MODIFIED;
    let segments: Vec<&str> = path.split('/').collect();
    let immutable = ok && segments.iter().any(|s| *s == "pkg" || *s == "assets");
    let embed = segments.contains(&"embed");
    let headers = response.headers_mut();
    if response_is_file(ok, &path) {
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(mime(Path::new(&path))),
        );
    }
    let cache = if immutable {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    if let Ok(policy) = HeaderValue::from_str(&csp(embed)) {
        headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    for (name, value) in [
        (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "strict-origin-when-cross-origin"),
        (header::CACHE_CONTROL, cache),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    headers.append(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    response
}

/// Whether the response is the file the path names, with an extension our MIME table
/// knows (directories get `index.html`'s type from ServeDir, 404s `404.html`'s).
fn response_is_file(ok: bool, path: &str) -> bool {
    ok && mime(Path::new(path)) != "application/octet-stream"
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpStream;

    /// A dist folder with a page, a hashed asset, a wasm file, the widget and a 404.
    fn site() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "vramlab-serve-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        for (path, body) in [
            ("index.html", "<h1>inicio</h1>".to_owned()),
            ("404.html", "<h1>no existe</h1>".to_owned()),
            ("guia/index.html", "<h1>guía</h1>".to_owned()),
            ("assets/islands.abc123.js", "console.log('x');".repeat(200)),
            // About 1.7 MB of text that compresses slowly, as the site's wasm does.
            (
                "pkg/site_bg.wasm",
                (0..300_000u64)
                    .map(|i| (i * 7919 % 100_003).to_string())
                    .collect::<String>(),
            ),
            ("embed/index.html", "<h1>widget</h1>".to_owned()),
        ] {
            let file = dir.join(path);
            std::fs::create_dir_all(file.parent().unwrap_or(&dir)).unwrap_or(());
            std::fs::write(&file, body).unwrap_or(());
        }
        dir
    }

    /// One raw HTTP/1.1 exchange; the response's head (lowercased) and body bytes.
    fn get(url: &str, path: &str, extra: &str) -> (String, Vec<u8>) {
        let addr = url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap_or("");
        let mut stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("{addr}: {e}"));
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap_or(());
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{extra}\r\n");
        stream.write_all(request.as_bytes()).unwrap_or(());
        let mut raw = Vec::new();
        let _ = stream.read_to_end(&mut raw);
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or(raw.len());
        let head = String::from_utf8_lossy(&raw[..split]).to_lowercase();
        let body = raw.get(split + 4..).unwrap_or_default().to_vec();
        (head, body)
    }

    #[test]
    fn serves_files_with_the_sites_headers() {
        let dist = site();
        let server = start(&dist, 0, None, false).unwrap();
        let (head, body) = get(&server.url, "/", "");
        assert!(head.starts_with("http/1.1 200"), "{head}");
        assert_eq!(body, b"<h1>inicio</h1>");
        assert!(
            head.contains("content-security-policy: default-src 'self'"),
            "{head}"
        );
        assert!(head.contains("frame-ancestors 'self'"), "{head}");
        assert!(
            head.contains("connect-src 'self' https://huggingface.co"),
            "{head}"
        );
        assert!(!head.contains(" https: "), "{head}");
        assert!(head.contains("x-content-type-options: nosniff"), "{head}");
        assert!(head.contains("cache-control: no-cache"), "{head}");

        let (head, _) = get(&server.url, "/pkg/site_bg.wasm", "");
        assert!(head.contains("content-type: application/wasm"), "{head}");
        assert!(head.contains("immutable"), "{head}");
        let (head, _) = get(&server.url, "/assets/islands.abc123.js", "");
        assert!(
            head.contains("content-type: text/javascript; charset=utf-8"),
            "{head}"
        );
        assert!(head.contains("access-control-allow-origin: *"), "{head}");

        let (head, _) = get(&server.url, "/embed/", "");
        assert!(head.contains("frame-ancestors *"), "{head}");

        // A directory without its slash is redirected, with the headers too.
        let (head, _) = get(&server.url, "/guia", "");
        assert!(head.starts_with("http/1.1 307"), "{head}");
        assert!(head.contains("location: /guia/"), "{head}");
        assert!(head.contains("x-content-type-options: nosniff"), "{head}");
        assert!(head.contains("content-security-policy"), "{head}");

        // Unknown paths and attempts to climb out get the 404 page.
        for path in [
            "/no/existe",
            "/../../etc/passwd",
            "/%2e%2e/%2e%2e/etc/passwd",
        ] {
            let (head, body) = get(&server.url, path, "");
            assert!(head.starts_with("http/1.1 404"), "{path}: {head}");
            assert_eq!(body, b"<h1>no existe</h1>", "{path}");
        }
        drop(server);
        let _ = std::fs::remove_dir_all(dist);
    }

    #[test]
    fn a_base_path_serves_under_it_only() {
        let dist = site();
        let server = start(&dist, 0, Some("vramlab"), false).unwrap();
        assert!(server.url.ends_with("/vramlab/"), "{}", server.url);
        let (head, body) = get(&server.url, "/vramlab/guia/", "");
        assert!(head.starts_with("http/1.1 200"), "{head}");
        assert_eq!(body, "<h1>guía</h1>".as_bytes());
        let (head, _) = get(&server.url, "/guia/", "");
        assert!(head.starts_with("http/1.1 404"), "{head}");
        drop(server);
        let _ = std::fs::remove_dir_all(dist);
    }

    #[test]
    fn compresses_text_and_wasm_for_clients_that_ask() {
        let dist = site();
        let server = start(&dist, 0, None, true).unwrap();
        let (head, body) = get(
            &server.url,
            "/pkg/site_bg.wasm",
            "Accept-Encoding: gzip\r\n",
        );
        assert!(head.contains("content-encoding: gzip"), "{head}");
        assert!(head.contains("content-type: application/wasm"), "{head}");
        assert!(head.contains("vary: accept-encoding"), "{head}");
        assert!(!body.is_empty());
        let (head, _) = get(&server.url, "/pkg/site_bg.wasm", "");
        assert!(!head.contains("content-encoding"), "{head}");
        drop(server);
        let _ = std::fs::remove_dir_all(dist);
    }

    /// The attacks on the old server: a forged Content-Length is refused without being
    /// read, and a client that pipelines hundreds of requests without reading does not
    /// stop another client from being served.
    #[test]
    fn hostile_clients_do_not_take_the_server_down() {
        let dist = site();
        let server = start(&dist, 0, None, false).unwrap();
        let addr = server
            .url
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_owned();

        let mut post = TcpStream::connect(&addr).unwrap_or_else(|e| panic!("{e}"));
        post.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap_or(());
        let _ = post.write_all(
            format!("POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 99999999999\r\n\r\nabc")
                .as_bytes(),
        );
        let mut answer = [0u8; 12];
        let _ = post.read(&mut answer);
        let status = String::from_utf8_lossy(&answer).to_string();
        assert!(status.starts_with("HTTP/1.1 4"), "{status}");

        let mut flood = TcpStream::connect(&addr).unwrap_or_else(|e| panic!("{e}"));
        let one = format!("GET /pkg/site_bg.wasm HTTP/1.1\r\nHost: {addr}\r\n\r\n");
        let _ = flood.write_all(one.repeat(300).as_bytes());
        // Never read from `flood`; another client is still served promptly.
        let started = std::time::Instant::now();
        let (head, _) = get(&server.url, "/", "");
        assert!(head.starts_with("http/1.1 200"), "{head}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        drop(flood);
        drop(post);
        drop(server);
        let _ = std::fs::remove_dir_all(dist);
    }

    /// What a static host answers where `ServeDir` alone would not: a path segment no
    /// file system holds is the 404 page, a multi-range request the whole file, an end
    /// past u64 the rest of the file, a range past the end a 416 in Spanish.
    #[test]
    fn unservable_paths_and_odd_ranges_are_answered_as_a_host_would() {
        let dist = site();
        let server = start(&dist, 0, None, false).unwrap();
        let long = format!("/{}", "a".repeat(300));
        let encoded = format!("/guia/{}", "%41".repeat(200));
        for path in [long.as_str(), encoded.as_str()] {
            let (head, body) = get(&server.url, path, "");
            assert!(head.starts_with("http/1.1 404"), "{head}");
            assert_eq!(body, b"<h1>no existe</h1>");
        }
        let len = std::fs::metadata(dist.join("index.html")).map_or(0, |m| m.len());
        let (head, body) = get(&server.url, "/", "Range: bytes=0-1,4-5\r\n");
        assert!(head.starts_with("http/1.1 200"), "{head}");
        assert_eq!(body.len() as u64, len);
        let (head, body) = get(&server.url, "/", "Range: bytes=4-99999999999999999999\r\n");
        assert!(head.starts_with("http/1.1 206"), "{head}");
        assert!(
            head.contains(&format!("content-range: bytes 4-{}/{len}", len - 1)),
            "{head}"
        );
        assert_eq!(body.len() as u64, len - 4);
        let (head, body) = get(&server.url, "/", "Range: bytes=-99999999999999999999\r\n");
        assert!(
            head.starts_with("http/1.1 206") || head.starts_with("http/1.1 200"),
            "{head}"
        );
        assert_eq!(body.len() as u64, len);
        let (head, body) = get(&server.url, "/", "Range: bytes=5000-6000\r\n");
        assert!(head.starts_with("http/1.1 416"), "{head}");
        assert!(
            head.contains(&format!("content-range: bytes */{len}")),
            "{head}"
        );
        assert!(
            String::from_utf8_lossy(&body).contains("El rango pedido"),
            "{body:?}"
        );
        drop(server);
        let _ = std::fs::remove_dir_all(dist);
    }

    /// Hundreds of clients pipelining gzip requests for the wasm, none reading: the file
    /// is compressed once, and a normal visitor is still served promptly, with bytes
    /// that decompress to the file.
    #[test]
    fn a_gzip_flood_does_not_starve_a_visitor() {
        use flate2::read::GzDecoder;
        let dist = site();
        let server = start(&dist, 0, None, true).unwrap();
        let addr = server
            .url
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_owned();
        let one = format!(
            "GET /pkg/site_bg.wasm HTTP/1.1\r\nHost: {addr}\r\nAccept-Encoding: gzip\r\n\r\n"
        );
        let flood: Vec<TcpStream> = (0..300)
            .filter_map(|_| {
                let mut s = TcpStream::connect(&addr).ok()?;
                let _ = s.write_all(one.repeat(10).as_bytes());
                Some(s)
            })
            .collect();
        assert!(flood.len() > 200, "{}", flood.len());
        let started = std::time::Instant::now();
        let (head, _) = get(&server.url, "/guia/", "Accept-Encoding: gzip\r\n");
        assert!(head.starts_with("http/1.1 200"), "{head}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        let (head, body) = get(
            &server.url,
            "/pkg/site_bg.wasm",
            "Accept-Encoding: gzip\r\n",
        );
        assert!(head.contains("content-encoding: gzip"), "{head}");
        let mut plain = Vec::new();
        GzDecoder::new(body.as_slice())
            .read_to_end(&mut plain)
            .unwrap_or(0);
        let want = std::fs::read(dist.join("pkg/site_bg.wasm")).unwrap_or_default();
        assert_eq!(plain.len(), want.len());
        assert!(plain == want);
        drop(flood);
        drop(server);
        let _ = std::fs::remove_dir_all(dist);
    }

    #[test]
    fn mime_types() {
        assert_eq!(mime(Path::new("x.wasm")), "application/wasm");
        assert_eq!(mime(Path::new("x.js")), "text/javascript; charset=utf-8");
    }
}
