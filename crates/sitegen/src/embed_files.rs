//! The embeddable widget's public files under `embed/`: `vram-estimador.js` (the one
//! script a host page loads; unhashed, so the snippet stays valid across builds, and
//! importing this build's hashed bundle), and the iframe form `embed/index.html` with
//! its script and stylesheet. The observed attributes are written from
//! `embed::spec::docs()`, the list the widget itself reads; the loader also names the
//! `import-web` bundle, which the widget loads only to import a Hub model.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};

use crate::assets::Manifest;

const LOADER: &str = include_str!("embed/vram-estimador.js");
const FRAME_JS: &str = include_str!("embed/marco.js");
const FRAME_CSS: &str = include_str!("embed/marco.css");

/// The attribute names as a JS array literal.
fn attrs_js() -> String {
    let names: Vec<String> = embed::spec::docs()
        .iter()
        .map(|a| format!("\"{}\"", a.name))
        .collect();
    format!("[{}]", names.join(", "))
}

/// Writes `out/embed/` when the build has the `embed` bundle; returns whether it did.
pub fn write(out: &Path, base: &str, manifest: &Manifest, csp: &str) -> Result<bool> {
    let (Some(glue), Some(wasm)) = (
        manifest.url("pkg/embed.js"),
        manifest.url("pkg/embed_bg.wasm"),
    ) else {
        return Ok(false);
    };
    // Relative to embed/, so the script works from any origin and under any base path.
    let relative = |url: &str| format!("../{}", url.strip_prefix(base).unwrap_or(url));
    let dir = out.join("embed");
    fs::create_dir_all(&dir).with_context(|| format!("no se pudo crear {}", dir.display()))?;
    // The importer's glue and wasm, or none (the widget then says it cannot import).
    let importer = match (
        manifest.url("pkg/import_web.js"),
        manifest.url("pkg/import_web_bg.wasm"),
    ) {
        (Some(js), Some(wasm)) => format!("[\"{}\", \"{}\"]", relative(js), relative(wasm)),
        _ => "[\"\", \"\"]".to_owned(),
    };
    let loader = LOADER
        .replace("__IMPORTER__", &importer)
        .replace("__GLUE__", &relative(glue))
        .replace("__WASM__", &relative(wasm))
        .replace("__ATTRS__", &attrs_js());
    fs::write(dir.join("vram-estimador.js"), loader)?;
    fs::write(
        dir.join("marco.js"),
        FRAME_JS.replace("__ATTRS__", &attrs_js()),
    )?;
    fs::write(dir.join("marco.css"), FRAME_CSS)?;
    // Without an icon link the browser asks for /favicon.ico, which the site has not.
    let icon = manifest
        .url("favicon.svg")
        .map(|u| {
            format!(
                "<link rel=\"icon\" href=\"{}\" type=\"image/svg+xml\">\n",
                relative(u)
            )
        })
        .unwrap_or_default();
    let page = format!(
        "<!DOCTYPE html>\n<html lang=\"es\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n\
         <meta name=\"robots\" content=\"noindex\">\n\
         <title>Estimador de VRAM · vramlab</title>\n\
         {icon}<link rel=\"stylesheet\" href=\"marco.css\">\n\
         <script type=\"module\" src=\"vram-estimador.js\"></script>\n\
         <script type=\"module\" src=\"marco.js\"></script>\n\
         </head>\n<body>\n<vram-estimador></vram-estimador>\n</body>\n</html>\n"
    );
    fs::write(dir.join("index.html"), page)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_attribute_is_observed() {
        let list = super::attrs_js();
        for a in embed::spec::docs() {
            assert!(list.contains(&format!("\"{}\"", a.name)), "{list}");
        }
        assert!(list.contains("\"optimizador\""), "{list}");
        for hole in ["__ATTRS__;", "__GLUE__", "__WASM__", "__IMPORTER__."] {
            assert!(super::LOADER.contains(hole), "{hole}");
        }
    }
}
