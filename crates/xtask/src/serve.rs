//! A small static file server for `dist/`, with the headers the site is meant to be
//! served with: exact MIME types (`application/wasm` for streaming compilation), the
//! Content-Security-Policy, and immutable caching for hashed assets.

use anyhow::{Context, Result};
use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
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
    let site = site
        .layer(middleware::from_fn(site_headers))
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

/// The headers of a production host: exact MIME types (`application/wasm` for streaming
/// compilation), the CSP (framable for `embed/`), CORS for the widget's files,
/// `nosniff`, and immutable caching for hashed files (`pkg/`, `assets/`).
async fn site_headers(request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    let mut response = next.run(request).await;
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
            ("pkg/site_bg.wasm", "\0asm".repeat(400)),
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

    #[test]
    fn mime_types() {
        assert_eq!(mime(Path::new("x.wasm")), "application/wasm");
        assert_eq!(mime(Path::new("x.js")), "text/javascript; charset=utf-8");
    }
}
