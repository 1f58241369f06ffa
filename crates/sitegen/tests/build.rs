#![allow(clippy::unwrap_used)] // Test helpers may panic: a panic is a failed test.
//! Builds the real `content/` (and broken fixtures) end to end into temporary folders.

use std::fs;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A scratch folder under target/, emptied first.
fn scratch(name: &str) -> PathBuf {
    let dir = workspace().join("target").join("sitegen-tests").join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Stand-ins for the wasm-bindgen output: the build only copies and hashes them.
fn fake_pkg(dir: &Path) -> PathBuf {
    let pkg = dir.join("pkg");
    fs::create_dir_all(pkg.join("snippets/ui-1")).unwrap();
    for name in [
        "hydrate.js",
        "hydrate_bg.wasm",
        "hydrate_tools.js",
        "hydrate_tools_bg.wasm",
        "hydrate_diag.js",
        "hydrate_diag_bg.wasm",
        "hydrate_lab.js",
        "hydrate_lab_bg.wasm",
        "hydrate_attention.js",
        "hydrate_attention_bg.wasm",
        "hydrate_home.js",
        "hydrate_home_bg.wasm",
        "gpu_web.js",
        "gpu_web_bg.wasm",
        "search_web.js",
        "search_web_bg.wasm",
        "import_web.js",
        "import_web_bg.wasm",
        "estimate_web.js",
        "estimate_web_bg.wasm",
        "worker_web.js",
        "worker_web_bg.wasm",
        "embed.js",
        "embed_bg.wasm",
    ] {
        fs::write(pkg.join(name), name).unwrap();
    }
    fs::write(pkg.join("snippets/ui-1/inline0.js"), "export {}").unwrap();
    pkg
}

fn options(content: PathBuf, dir: &Path, base: Option<&str>) -> sitegen::BuildOptions {
    sitegen::BuildOptions {
        content,
        site: workspace().join("site"),
        pkg: Some(fake_pkg(dir)),
        out: dir.join("dist"),
        base: base.map(str::to_owned),
    }
}

#[test]
fn real_content_builds_under_a_sub_path() {
    let dir = scratch("sub-path");
    let report =
        sitegen::build(&options(workspace().join("content"), &dir, Some("vramlab"))).unwrap();
    assert!(report.pages >= 3, "{report:?}");
    assert!(report.pages_with_islands >= 1);

    let dist = dir.join("dist");
    let page = fs::read_to_string(dist.join("anatomia-vram/index.html")).unwrap();
    // Every internal URL carries the base path.
    assert!(page.contains(r#"href="/vramlab/""#), "home link");
    assert!(
        page.contains(r#"href="/vramlab/assets/style."#),
        "stylesheet"
    );
    // The chapter's first island is the weights calculator: it loads the light bundle,
    // and names the tools bundle for the estimator further down, fetched when the
    // reader nears it.
    assert!(
        page.contains(r#"href="/vramlab/pkg/hydrate."#),
        "light bundle"
    );
    assert!(
        page.contains(r#"data-later-js="/vramlab/pkg/hydrate_tools."#)
            && page.contains(r#"data-later-wasm="/vramlab/pkg/hydrate_tools_bg."#),
        "tools bundle, later"
    );
    assert!(
        !page.contains(r#"href="/vramlab/pkg/hydrate_tools."#),
        "tools bundle at load"
    );
    // The estimator's own page wakes it at once.
    let estimator = fs::read_to_string(dist.join("estimador/index.html")).unwrap();
    assert!(
        estimator.contains(r#"href="/vramlab/pkg/hydrate_tools."#)
            && !estimator.contains("data-later-js"),
        "tools bundle at load"
    );
    let gpu_page = fs::read_to_string(dist.join("comprobar-webgpu/index.html")).unwrap();
    assert!(
        gpu_page.contains(r#"href="/vramlab/pkg/hydrate."#),
        "light bundle"
    );
    // Code is highlighted at build time and gets the copy-button script.
    let strategies = fs::read_to_string(dist.join("estrategias/index.html")).unwrap();
    assert!(
        strategies.contains(r#"<code class="language-python"><span class="hl-source hl-python">"#)
            && strategies.contains("hl-keyword"),
        "highlighted python"
    );
    assert!(strategies.contains(r#"<script src="/vramlab/assets/copy."#));
    let fa_page = fs::read_to_string(dist.join("flashattention/index.html")).unwrap();
    assert!(
        fa_page.contains(r#"href="/vramlab/pkg/hydrate_attention."#)
            && !fa_page.contains(r#"href="/vramlab/pkg/hydrate."#),
        "the attention demo loads its own bundle"
    );
    assert!(!page.contains(r#"href="/assets/"#));
    assert!(
        page.contains(r#"<link rel="canonical" href="https://vramlab.dev/vramlab/anatomia-vram/""#)
    );
    // Islands are rendered with their result, so the page reads without JavaScript.
    assert!(page.contains("<leptos-island"));
    assert!(page.contains("13,04 GiB"));

    let home = fs::read_to_string(dist.join("index.html")).unwrap();
    assert!(
        home.contains(r#"href="/vramlab/anatomia-vram/""#),
        "markdown links get the base"
    );
    // The home page opens on its two tools, in their own bundle; the quick estimate
    // links to the full estimator under the base path.
    assert!(
        home.contains(r#"href="/vramlab/pkg/hydrate_home."#)
            && home.contains(r#"href="/vramlab/estimador/?modelo=llama-3.1-8b"#),
        "the home page's tools"
    );
    // A page without islands (the glossary) loads the theme script and the search
    // box's script, no hydrate bundle; the box names its lazily loaded engine and index.
    let glossary = fs::read_to_string(dist.join("glosario/index.html")).unwrap();
    assert!(
        !glossary.contains("modulepreload")
            && glossary.matches("<script").count() == 2
            && glossary.contains(r#"<script type="module" src="/vramlab/assets/search."#)
            && glossary.contains(r#"role="search""#)
            && glossary.contains("/vramlab/pkg/search_web."),
        "pages without islands load only the theme and search scripts"
    );
    let index_url = home
        .split("search-index.")
        .nth(1)
        .and_then(|rest| rest.split(".json").next())
        .map(|hash| format!("assets/search-index.{hash}.json"))
        .expect("the page names its search index");
    let index: search::Index =
        serde_json::from_str(&fs::read_to_string(dist.join(&index_url)).unwrap()).unwrap();
    assert!(index.validate().is_ok());
    let hits = search::search(&index, "fragmentacion", 3);
    assert!(
        hits.iter()
            .any(|h| h.doc.url.starts_with("/vramlab/memoria-reservada")),
        "{hits:?}"
    );
    assert!(
        home.contains(r#"<script src="/vramlab/assets/theme."#),
        "{home}"
    );

    assert!(dist.join("404.html").is_file());
    assert!(dist.join("pkg/snippets/ui-1/inline0.js").is_file());
    // Code blocks written by shortcodes (the widget's snippets) get the copy script.
    let widget_page = fs::read_to_string(dist.join("widget/index.html")).unwrap();
    assert!(widget_page.contains(r#"<script src="/vramlab/assets/copy."#));
    // The widget's loader names this build's hashed widget and importer bundles by
    // paths relative to itself, so it works from any origin and under the base path.
    let loader = fs::read_to_string(dist.join("embed/vram-estimador.js")).unwrap();
    for name in ["embed.", "embed_bg.", "import_web.", "import_web_bg."] {
        let at = format!("\"../pkg/{name}");
        let file = loader
            .split(&at)
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .map(|tail| format!("pkg/{name}{tail}"))
            .unwrap_or_else(|| panic!("the loader names {name}: {loader}"));
        assert!(dist.join(&file).is_file(), "{file}");
    }
    let sitemap = fs::read_to_string(dist.join("sitemap.xml")).unwrap();
    assert!(sitemap.contains("<loc>https://vramlab.dev/vramlab/anatomia-vram/</loc>"));
    let robots = fs::read_to_string(dist.join("robots.txt")).unwrap();
    assert!(robots.contains("Sitemap: https://vramlab.dev/sitemap.xml"));
}

/// Writes a content folder with the given pages.
fn content(dir: &Path, pages: &[(&str, &str)]) -> PathBuf {
    let content = dir.join("content");
    fs::create_dir_all(content.join("es")).unwrap();
    fs::write(
        content.join("site.toml"),
        "title = \"t\"\nurl = \"https://example.org\"\n",
    )
    .unwrap();
    for (name, text) in pages {
        fs::write(content.join("es").join(name), text).unwrap();
    }
    content
}

fn page(slug: &str, order: u32, body: &str) -> String {
    format!(
        "+++\ntitle = \"T {slug}\"\ndescription = \"d\"\norder = {order}\nslug = \"{slug}\"\n+++\n{body}"
    )
}

#[test]
fn content_errors_name_file_and_line_and_are_all_reported() {
    let dir = scratch("broken");
    let a = page("a", 1, "texto\n\n{{< nada >}}\n");
    let b = page("b", 2, "[roto](/no-existe/)\n\n[ancla](/a/#falta)\n");
    let c = "+++\ntitle = \"x\"\n+++\n".to_owned();
    let content = content(&dir, &[("a.md", &a), ("b.md", &b), ("c.md", &c)]);
    let err = sitegen::build(&options(content, &dir, None))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("a.md:9: shortcode desconocido «nada»"),
        "{err}"
    );
    assert!(
        err.contains("c.md:2: front matter: missing field `description`"),
        "{err}"
    );
    // Link errors are checked once every page parsed; a.md and c.md fail first here.
    let dir = scratch("broken-links");
    let content = self::content(&dir, &[("a.md", &page("a", 1, "## Hay\n")), ("b.md", &b)]);
    let err = sitegen::build(&options(content, &dir, None))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("b.md:7: enlace roto: no existe la página «/no-existe/»"),
        "{err}"
    );
    assert!(
        err.contains("b.md:9: enlace roto: «/a/» no tiene el ancla «#falta»"),
        "{err}"
    );
}

#[test]
fn duplicate_slugs_and_orders_fail() {
    let dir = scratch("dupes");
    let content = content(
        &dir,
        &[
            ("a.md", &page("a", 1, "x\n")),
            ("b.md", &page("a", 1, "y\n")),
        ],
    );
    let err = sitegen::build(&options(content, &dir, None))
        .unwrap_err()
        .to_string();
    assert!(err.contains("el slug «a» ya lo usa"), "{err}");
    assert!(err.contains("el orden 1 ya lo usa"), "{err}");
}

#[test]
fn the_cli_links_to_this_sites_origin() {
    // `vramlab explain` prints guide links as full URLs with oom's origin.
    let text = fs::read_to_string(workspace().join("content").join("site.toml")).unwrap();
    let config: toml::Value = toml::from_str(&text).unwrap();
    let url = config["url"].as_str().unwrap().trim_end_matches('/');
    assert_eq!(url, oom::diagnosis::SITE_ORIGIN);
}
