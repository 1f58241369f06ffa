//! Copies static assets and wasm bundles into `dist/` with content hashes in their file
//! names, so they can be cached forever, and remembers where each one went.

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// Logical name ("style.css", "pkg/hydrate.js") → public URL with the base path.
#[derive(Debug, Clone, Default)]
pub struct Manifest {
    urls: BTreeMap<String, String>,
}

impl Manifest {
    pub fn url(&self, logical: &str) -> Option<&str> {
        self.urls.get(logical).map(String::as_str)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.urls.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

/// First 10 hex digits of the SHA-256 of `bytes`.
pub fn content_hash(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().take(5).map(|b| format!("{b:02x}")).collect()
}

/// "style.css" + "ab12" → "style.ab12.css"; "hydrate_bg.wasm" → "hydrate_bg.ab12.wasm".
pub fn hashed_name(name: &str, hash: &str) -> String {
    match name.rsplit_once('.') {
        Some((stem, ext)) => format!("{stem}.{hash}.{ext}"),
        None => format!("{name}.{hash}"),
    }
}

/// Copies every file directly inside `src` to `dst` with a hashed name, recording it
/// under `prefix + name`, with `append(name)` added at its end (generated rules for a
/// stylesheet). Subdirectories are copied as they are (wasm-bindgen's `snippets/` are
/// already content-addressed and are imported by relative path).
pub fn copy_hashed(
    src: &Path,
    dst: &Path,
    url_dir: &str,
    prefix: &str,
    append: &dyn Fn(&str) -> Option<String>,
    manifest: &mut Manifest,
) -> Result<()> {
    fs::create_dir_all(dst).with_context(|| format!("no se pudo crear {}", dst.display()))?;
    let mut entries: Vec<_> = fs::read_dir(src)
        .with_context(|| format!("no se pudo leer {}", src.display()))?
        .collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            copy_tree(&path, &dst.join(&name))?;
            continue;
        }
        let mut bytes =
            fs::read(&path).with_context(|| format!("no se pudo leer {}", path.display()))?;
        if let Some(extra) = append(&name) {
            bytes.extend_from_slice(extra.as_bytes());
        }
        let out_name = hashed_name(&name, &content_hash(&bytes));
        fs::write(dst.join(&out_name), &bytes)?;
        manifest
            .urls
            .insert(format!("{prefix}{name}"), format!("{url_dir}{out_name}"));
    }
    Ok(())
}

fn copy_tree(src: &Path, dst: &Path) -> Result<()> {
    fs::create_dir_all(dst)?;
    for entry in fs::read_dir(src)? {
        let entry = entry?;
        let to = dst.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &to)?;
        } else {
            fs::copy(entry.path(), &to)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(hashed_name("style.css", "ab"), "style.ab.css");
        assert_eq!(hashed_name("hydrate_bg.wasm", "ab"), "hydrate_bg.ab.wasm");
        assert_eq!(hashed_name("LICENSE", "ab"), "LICENSE.ab");
        assert_eq!(content_hash(b"").len(), 10);
        assert_ne!(content_hash(b"a"), content_hash(b"b"));
    }
}
