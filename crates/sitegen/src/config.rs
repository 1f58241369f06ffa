//! `content/site.toml`: the settings of the whole site.

use serde::Deserialize;

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteConfig {
    /// Shown in the header and in every `<title>`.
    pub title: String,
    /// Public origin for canonical links and the sitemap, without a trailing slash.
    pub url: String,
    /// Path the site is served under: "/" at a domain's root, "/vramlab/" for a
    /// project page. Overridable with `--base`.
    #[serde(default = "default_base")]
    pub base_path: String,
}

fn default_base() -> String {
    "/".into()
}

/// Normalises a base path to start and end with exactly one '/'.
pub fn normalize_base(base: &str) -> Result<String, String> {
    let trimmed = base.trim().trim_matches('/');
    if trimmed
        .chars()
        .any(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/')))
        || trimmed.contains("//")
        || trimmed.split('/').any(|s| s == "..")
    {
        return Err(format!("ruta base no válida: «{base}»"));
    }
    Ok(if trimmed.is_empty() {
        "/".into()
    } else {
        format!("/{trimmed}/")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bases() {
        for (input, want) in [
            ("/", "/"),
            ("", "/"),
            ("vramlab", "/vramlab/"),
            ("/vramlab/", "/vramlab/"),
            ("/a/b", "/a/b/"),
        ] {
            assert_eq!(normalize_base(input).as_deref(), Ok(want), "{input}");
        }
        for bad in ["/a b/", "/../x", "/a//b", "/<x>/"] {
            assert!(normalize_base(bad).is_err(), "{bad}");
        }
    }
}
