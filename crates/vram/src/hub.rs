//! The pure half of importing a model from the Hugging Face Hub: what a reader may type
//! as a repository id, the `resolve/main/` URLs the browser fetches, the Spanish
//! message for each way a fetch fails, and the exact weight bytes of a sharded
//! checkpoint from its `model.safetensors.index.json`.
//!
//! The fetching itself is the site's (`ui`), so this stays free of I/O. The base URL is
//! a parameter, as `HF_ENDPOINT` is for `huggingface_hub`: a mirror works, and the
//! tests point it at a local server.

use serde_json::Value;

use crate::units::{ByteSize, clip};

/// Where the Hub lives unless the reader says otherwise.
pub const DEFAULT_HUB: &str = "https://huggingface.co";

/// The origins the site's pages may fetch from, their CSP's `connect-src` beyond
/// `'self'`: the Hub and the CDNs it redirects file downloads to (`*.huggingface.co`,
/// `*.hf.co`, where Xet storage lives), the best-known mirror (`HF_ENDPOINT=
/// https://hf-mirror.com`), and a server on the reader's own machine. Nothing else:
/// a page that could reach any https origin could be made to send what it holds there.
pub const BROWSER_ORIGINS: &[&str] = &[
    "https://huggingface.co",
    "https://*.huggingface.co",
    "https://hf.co",
    "https://*.hf.co",
    "https://hf-mirror.com",
    "https://*.hf-mirror.com",
    "http://127.0.0.1:*",
    "http://localhost:*",
];

/// The `connect-src` directive of the site's Content-Security-Policy.
pub fn connect_src() -> String {
    format!("connect-src 'self' {}", BROWSER_ORIGINS.join(" "))
}

/// The site pages' Content-Security-Policy, as their `<meta>` tag carries it:
/// same-origin everything, no inline script or style, `'wasm-unsafe-eval'` so
/// WebAssembly can be compiled, and fetches only to [`BROWSER_ORIGINS`]. It lives here,
/// beside the origins, so the pages (`ui`) and the server (`xtask`, which adds
/// `frame-ancestors`) send one policy.
pub fn page_csp() -> String {
    format!(
        "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; \
         img-src 'self' data:; {}; object-src 'none'; base-uri 'self'; form-action 'self'",
        connect_src()
    )
}

/// Whether the site's pages may fetch from `base` under [`BROWSER_ORIGINS`] (a base
/// from [`parse_base`]). CSP matching: the scheme must be equal, `*.` matches any
/// subdomain, and `:*` any port; without it, only the scheme's default port.
pub fn browser_may_fetch(base: &str) -> bool {
    let split = |url: &str| -> Option<(String, String, Option<String>)> {
        let (scheme, rest) = url.split_once("://")?;
        let authority = rest.split(['/', '?', '#']).next()?.to_ascii_lowercase();
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_owned(), Some(p.to_owned())),
            None => (authority, None),
        };
        Some((scheme.to_ascii_lowercase(), host, port))
    };
    let Some((scheme, host, port)) = split(base) else {
        return false;
    };
    BROWSER_ORIGINS.iter().any(|origin| {
        let Some((o_scheme, o_host, o_port)) = split(origin) else {
            return false;
        };
        let host_ok = match o_host.strip_prefix("*.") {
            Some(parent) => host.ends_with(&format!(".{parent}")),
            None => host == o_host,
        };
        let port_ok = match o_port.as_deref() {
            Some("*") => true,
            Some(p) => port.as_deref() == Some(p),
            None => port.is_none(),
        };
        scheme == o_scheme && host_ok && port_ok
    })
}
/// Longest repository id part (the Hub allows 96 characters).
const MAX_PART: usize = 96;
/// The largest index accepted (DeepSeek-V3's, with 91 000 tensors, is about 9 MB).
pub const MAX_INDEX_BYTES: usize = 16 << 20;
/// How long one request may take before the site gives up.
pub const TIMEOUT_SECONDS: u32 = 10;

/// Why an import from the Hub failed. `Display` is the Spanish sentence the page shows.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HubError {
    #[error(
        "«{0}» no es un id del Hub: escribe organización/modelo, como meta-llama/Llama-3.1-8B."
    )]
    BadId(String),
    #[error("La dirección del Hub debe empezar por http:// o https:// («{0}» no sirve).")]
    BadBase(String),
    #[error(
        "Esta página solo puede conectar con huggingface.co, hf.co, hf-mirror.com o un servidor en tu máquina (127.0.0.1 o localhost), no con «{0}»: descarga el config.json de ese espejo y elígelo como archivo."
    )]
    NotAllowedHere(String),
    #[error(
        "«{repo}» es un modelo privado o restringido (el Hub respondió {status}): acepta su licencia en la web del Hub y pega su config.json en el estimador de vramlab, o elige el archivo."
    )]
    Gated { repo: String, status: u16 },
    #[error("El Hub no tiene «{file}» en «{repo}» (404): revisa el nombre (organización/modelo).")]
    NotFound { repo: String, file: String },
    #[error("El Hub respondió {status} al pedir «{file}» de «{repo}»; inténtalo más tarde.")]
    Status {
        repo: String,
        file: String,
        status: u16,
    },
    #[error(
        "No se pudo conectar con {0}: sin conexión, bloqueado por el navegador (CORS) o el servidor no responde. Puedes pegar el config.json en el estimador de vramlab."
    )]
    Network(String),
    #[error(
        "El Hub no respondió en {0} s; inténtalo de nuevo o pega el config.json en el estimador de vramlab."
    )]
    Timeout(u32),
    #[error("«{file}» ocupa más de {max}: no parece lo que dice ser, y no se lee.")]
    TooLarge { file: String, max: String },
    #[error("model.safetensors.index.json no es válido: {0}.")]
    Index(String),
    #[error(
        "El servidor no admite lecturas parciales (Range) de model.safetensors, y el archivo entero no se descarga."
    )]
    NoRange,
}

/// `owner/name` on the Hub (or a bare legacy name such as `gpt2`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepoId(String);

impl std::fmt::Display for RepoId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn valid_part(p: &str) -> bool {
    !p.is_empty()
        && p.len() <= MAX_PART
        && !p.starts_with(['.', '-'])
        && !p.contains("..")
        && p.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// Reads what a reader types: `org/model`, or a pasted Hub URL such as
/// `https://huggingface.co/org/model/tree/main`.
pub fn parse_repo(text: &str) -> Result<RepoId, HubError> {
    let bad = || HubError::BadId(clip(text));
    let t = text.trim();
    let t = ["https://", "http://"]
        .iter()
        .find_map(|s| t.strip_prefix(s))
        .unwrap_or(t);
    let t = ["huggingface.co/", "hf.co/", "www.huggingface.co/"]
        .iter()
        .find_map(|s| t.strip_prefix(s))
        .unwrap_or(t);
    let mut parts = t.split('/').filter(|p| !p.is_empty());
    let first = parts.next().ok_or_else(bad)?;
    let id = match parts.next() {
        // Anything after the name (`tree/main`, `blob/main/config.json`) is a page of it.
        Some(name) => format!("{first}/{name}"),
        None => first.to_owned(),
    };
    if id.split('/').all(valid_part) {
        Ok(RepoId(id))
    } else {
        Err(bad())
    }
}

/// The Hub's base URL as typed, without a trailing slash.
pub fn parse_base(text: &str) -> Result<String, HubError> {
    let t = text.trim().trim_end_matches('/');
    let ok = (t.starts_with("https://") || t.starts_with("http://"))
        && t.len() > "http://".len()
        && t.len() <= 200
        && !t
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, '"' | '<' | '>' | '\\'));
    if ok {
        Ok(t.to_owned())
    } else {
        Err(HubError::BadBase(clip(text)))
    }
}

/// `base/repo/resolve/main/file`, the URL `hf_hub_download` fetches.
pub fn file_url(base: &str, repo: &RepoId, file: &str) -> String {
    format!("{base}/{repo}/resolve/main/{file}")
}

/// The error for a response that is not a success.
pub fn status_error(repo: &RepoId, file: &str, status: u16) -> HubError {
    match status {
        401 | 403 => HubError::Gated {
            repo: repo.to_string(),
            status,
        },
        404 => HubError::NotFound {
            repo: repo.to_string(),
            file: file.to_owned(),
        },
        _ => HubError::Status {
            repo: repo.to_string(),
            file: file.to_owned(),
            status,
        },
    }
}

/// The error for a body that would pass `max` bytes.
pub fn too_large(file: &str, max: usize) -> HubError {
    HubError::TooLarge {
        file: file.to_owned(),
        max: ByteSize(max as u64).binary(),
    }
}

/// What a sharded checkpoint's index says about its weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexTotals {
    /// `metadata.total_size`: bytes of every tensor in every shard.
    pub bytes: u64,
    /// `metadata.total_parameters`, which recent `transformers` versions write.
    pub params: Option<u64>,
    /// Entries of `weight_map`.
    pub tensors: u64,
}

/// Reads `model.safetensors.index.json`.
pub fn parse_index(text: &str) -> Result<IndexTotals, HubError> {
    if text.len() > MAX_INDEX_BYTES {
        return Err(too_large("model.safetensors.index.json", MAX_INDEX_BYTES));
    }
    // Windows editors save with a byte-order mark; JSON itself has none.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let v: Value = serde_json::from_str(text)
        .map_err(|e| HubError::Index(format!("JSON roto: {}", crate::units::json_problem(&e))))?;
    let meta = v.get("metadata");
    let bytes = meta
        .and_then(|m| m.get("total_size"))
        .and_then(Value::as_u64)
        .filter(|&b| b > 0)
        .ok_or_else(|| HubError::Index("falta metadata.total_size".into()))?;
    let params = meta
        .and_then(|m| m.get("total_parameters"))
        .and_then(Value::as_u64)
        .filter(|&p| p > 0);
    let tensors = v
        .get("weight_map")
        .and_then(Value::as_object)
        .map_or(0, |m| m.len() as u64);
    Ok(IndexTotals {
        bytes,
        params,
        tensors,
    })
}

/// Whether JSON text is a sharded checkpoint's index rather than a `config.json`.
pub fn looks_like_index(text: &str) -> bool {
    text.contains("\"weight_map\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_browser_policy_admits_the_hub_its_cdns_the_mirror_and_loopback_only() {
        for ok in [
            "https://huggingface.co",
            "https://cdn-lfs.huggingface.co",
            "https://cas-bridge.xethub.hf.co",
            "https://hf-mirror.com",
            "http://127.0.0.1:41234",
            "http://localhost:8080",
            "HTTPS://HuggingFace.co",
        ] {
            assert!(browser_may_fetch(ok), "{ok}");
        }
        for no in [
            "http://huggingface.co",
            "https://huggingface.co.evil.example",
            "https://evilhuggingface.co",
            "https://huggingface.co:8443",
            "https://example.com",
            "http://127.0.0.2:80",
            "ftp://huggingface.co",
            "nada",
        ] {
            assert!(!browser_may_fetch(no), "{no}");
        }
        let csp = connect_src();
        assert!(
            csp.starts_with("connect-src 'self' https://huggingface.co "),
            "{csp}"
        );
        assert!(!csp.contains(" https: "), "{csp}");
    }
    use proptest::prelude::*;

    #[test]
    fn repo_ids_as_readers_type_them() {
        for (text, want) in [
            ("meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B"),
            (
                "  Qwen/Qwen2.5-0.5B-Instruct ",
                "Qwen/Qwen2.5-0.5B-Instruct",
            ),
            (
                "https://huggingface.co/google/gemma-3-1b-it",
                "google/gemma-3-1b-it",
            ),
            ("huggingface.co/org/m/tree/main", "org/m"),
            ("https://hf.co/org/m/blob/main/config.json", "org/m"),
            ("gpt2", "gpt2"),
        ] {
            assert_eq!(
                parse_repo(text).map(|r| r.to_string()),
                Ok(want.into()),
                "{text}"
            );
        }
        for bad in [
            "",
            "/",
            "org/../x",
            "org/mo del",
            "-org/x",
            "org/x?y",
            "ó/x",
            &"a".repeat(97),
        ] {
            let e = parse_repo(bad).unwrap_err().to_string();
            assert!(e.contains("no es un id del Hub"), "{bad}: {e}");
        }
    }

    #[test]
    fn bases_and_urls() {
        assert_eq!(
            parse_base(" https://hf-mirror.com/ "),
            Ok("https://hf-mirror.com".into())
        );
        assert_eq!(
            parse_base("http://127.0.0.1:9000"),
            Ok("http://127.0.0.1:9000".into())
        );
        for bad in [
            "ftp://x",
            "huggingface.co",
            "https://",
            "https://a b",
            "javascript:alert(1)",
        ] {
            assert!(parse_base(bad).is_err(), "{bad}");
        }
        let repo = parse_repo("org/m").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            file_url(DEFAULT_HUB, &repo, "config.json"),
            "https://huggingface.co/org/m/resolve/main/config.json"
        );
    }

    #[test]
    fn each_status_has_its_message() {
        let repo = parse_repo("meta-llama/Llama-3.1-8B").unwrap_or_else(|e| panic!("{e}"));
        for (status, needle) in [
            (401, "privado o restringido"),
            (403, "acepta su licencia"),
            (404, "(404)"),
            (500, "respondió 500"),
        ] {
            let e = status_error(&repo, "config.json", status).to_string();
            assert!(e.contains(needle), "{status}: {e}");
        }
    }

    #[test]
    fn index_totals() {
        let text = r#"{"metadata":{"total_size":16060522496,"total_parameters":8030261248},
            "weight_map":{"a":"model-00001-of-00004.safetensors","b":"model-00002-of-00004.safetensors"}}"#;
        assert!(looks_like_index(text));
        assert_eq!(
            parse_index(text),
            Ok(IndexTotals {
                bytes: 16_060_522_496,
                params: Some(8_030_261_248),
                tensors: 2
            })
        );
        assert!(parse_index(r#"{"weight_map":{}}"#).is_err());
        assert!(
            parse_index("{")
                .unwrap_err()
                .to_string()
                .contains("línea 1")
        );
        assert!(!looks_like_index(r#"{"model_type":"llama"}"#));
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,200}") {
            let _ = parse_repo(&s);
            let _ = parse_base(&s);
            let _ = parse_index(&s);
        }
    }
}
