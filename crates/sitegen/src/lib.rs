//! `sitegen` turns `content/es/*.md` into the static site in `dist/`.
//!
//! It is a small pipeline in the spirit of mdBook: front matter is parsed, Markdown
//! goes through pulldown-cmark with explicit options, widget shortcodes become Leptos
//! islands rendered at build time, and each page is wrapped in the shell from
//! `ui::layout`. Assets and wasm bundles get content hashes in their names.
//!
//! Bad content never panics and never ships: every problem is a [`ContentError`]
//! naming the file and line, all of them are reported at once, and the build fails.

// The estimator island's view type is deep; rendering it needs more than 128 query levels.
#![recursion_limit = "256"]

pub mod allocator_table;
pub mod assets;
pub mod config;
pub mod embed_files;
pub mod error;
pub mod front_matter;
pub mod highlight;
pub mod html;
pub mod markdown;
pub mod math;
pub mod search_index;
pub mod shortcode;
pub mod slug;

pub mod widget_docs;
pub mod widgets;

use anyhow::{Context, Result, bail};
use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use config::{SiteConfig, normalize_base};
pub use error::ContentError;
use error::LineIndex;
use ui::layout::{AssetUrls, NavLink, PageShell, SearchUrls, render_page};
use widgets::Bundle;

/// Where to read from and write to.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// Folder with `site.toml` and `es/*.md`.
    pub content: PathBuf,
    /// Static assets (CSS, loader script, icons).
    pub site: PathBuf,
    /// wasm-bindgen output (`hydrate.js`, `gpu_web.js`, ...); `None` builds a site
    /// without islands, which fails if a page uses one.
    pub pkg: Option<PathBuf>,
    pub out: PathBuf,
    /// Overrides `base_path` from `site.toml`.
    pub base: Option<String>,
}

/// What a build produced.
#[derive(Debug, Clone, Default)]
pub struct BuildReport {
    pub pages: usize,
    pub pages_with_islands: usize,
}

/// One page after rendering, before it is wrapped in the shell.
struct Page {
    file: PathBuf,
    front: front_matter::FrontMatter,
    body: markdown::Rendered,
}

/// Builds the whole site: assets with hashed names, pages rendered from Markdown,
/// each wrapped in the shell with the one bundle it needs, the search index, the 404
/// page and the sitemap.
pub fn build(opts: &BuildOptions) -> Result<BuildReport> {
    let config_path = opts.content.join("site.toml");
    let config_text = fs::read_to_string(&config_path)
        .with_context(|| format!("no se pudo leer {}", config_path.display()))?;
    let config: SiteConfig = toml::from_str(&config_text)
        .with_context(|| format!("{} no es válido", config_path.display()))?;
    let base = normalize_base(opts.base.as_deref().unwrap_or(&config.base_path))
        .map_err(anyhow::Error::msg)?;
    let origin = config.url.trim_end_matches('/').to_owned();

    if opts.out.exists() {
        fs::remove_dir_all(&opts.out)
            .with_context(|| format!("no se pudo vaciar {}", opts.out.display()))?;
    }
    let mut manifest = assets::Manifest::default();
    assets::copy_hashed(
        &opts.site,
        &opts.out.join("assets"),
        &format!("{base}assets/"),
        "",
        // The categories' colours, from the one palette the widget uses too.
        &|name| (name == "style.css").then(vram::palette::css),
        &mut manifest,
    )?;
    if let Some(pkg) = &opts.pkg {
        assets::copy_hashed(
            pkg,
            &opts.out.join("pkg"),
            &format!("{base}pkg/"),
            "pkg/",
            &|_| None,
            &mut manifest,
        )?;
    }
    let embed_written = embed_files::write(&opts.out, &base, &manifest, &ui::layout::csp())?;
    let site = Site {
        base,
        origin,
        manifest,
    };
    let widget_ctx = widgets::WidgetContext {
        gpu_js: site.js(&bundles::GPU),
        gpu_wasm: site.wasm(&bundles::GPU),
        import_js: site.js(&bundles::IMPORT),
        import_wasm: site.wasm(&bundles::IMPORT),
        estimate_js: site.js(&bundles::ESTIMATE),
        estimate_wasm: site.wasm(&bundles::ESTIMATE),
        worker: ui::islands::background::WorkerUrls {
            loader: site.asset("worker.js"),
            js: site.js(&bundles::WORKER),
            wasm: site.wasm(&bundles::WORKER),
        },
        base: site.base.clone(),
        origin: site.origin.clone(),
        embed: embed_written,
        pages: page_paths(&opts.content.join("es")),
    };

    let pages = load_pages(&opts.content.join("es"), &site.base, &widget_ctx)?;
    check_links(&pages)?;
    let asset_urls = site.shell_assets();
    check_assets(&site, &pages, &asset_urls, &opts.site)?;
    let search = site.search(&pages, &asset_urls, &opts.out)?;
    let mut report = BuildReport::default();
    for (i, page) in pages.iter().enumerate() {
        let shell = site.shell(&config, &pages, i, search.clone());
        let dir = if page.front.slug.is_empty() {
            opts.out.clone()
        } else {
            opts.out.join(&page.front.slug)
        };
        fs::create_dir_all(&dir)?;
        fs::write(dir.join("index.html"), render_page(shell))?;
        report.pages += 1;
        report.pages_with_islands += usize::from(page.body.has_islands);
    }

    write_not_found(
        &opts.out,
        &config,
        &site.base,
        &site.origin,
        &pages,
        &asset_urls,
        search,
    )?;
    write_sitemap(
        &opts.out,
        &site.origin,
        pages.iter().map(|p| site.page_url(&p.front.slug)),
    )?;
    Ok(report)
}

/// Where the built site lives and what its hashed assets are called.
struct Site {
    base: String,
    origin: String,
    manifest: assets::Manifest,
}

impl Site {
    /// The hashed URL of an asset, empty when it was not built.
    fn asset(&self, name: &str) -> String {
        self.manifest.url(name).unwrap_or_default().to_owned()
    }

    /// A bundle's hashed glue script.
    fn js(&self, b: &bundles::Bundle) -> String {
        self.asset(&format!("pkg/{}.js", b.stem))
    }

    /// A bundle's hashed wasm.
    fn wasm(&self, b: &bundles::Bundle) -> String {
        self.asset(&format!("pkg/{}_bg.wasm", b.stem))
    }

    fn page_url(&self, slug: &str) -> String {
        if slug.is_empty() {
            self.base.clone()
        } else {
            format!("{}{slug}/", self.base)
        }
    }

    /// What every page's shell loads, with the light hydrate bundle.
    fn shell_assets(&self) -> AssetUrls {
        AssetUrls {
            stylesheet: self.asset("style.css"),
            favicon: self.asset("favicon.svg"),
            loader: self.asset("islands.js"),
            theme: self.asset("theme.js"),
            copy: self.asset("copy.js"),
            search: self.asset("search.js"),
            hydrate_js: self.js(&bundles::LIGHT),
            hydrate_wasm: self.wasm(&bundles::LIGHT),
            later_js: String::new(),
            later_wasm: String::new(),
        }
    }

    /// The shell's assets with `bundle` as the page's hydrate bundle: each page loads
    /// exactly one, the light one or the one that adds its family of heavy islands.
    fn bundle_urls(&self, bundle: Bundle) -> AssetUrls {
        AssetUrls {
            hydrate_js: self.js(bundle.spec()),
            hydrate_wasm: self.wasm(bundle.spec()),
            ..self.shell_assets()
        }
    }

    /// The search index and its module. The search box is an island of the light
    /// bundle with its engine in the lazily loaded `search-web`: a build without
    /// bundles (`pkg: None`) ships pages without it.
    fn search(&self, pages: &[Page], shell: &AssetUrls, out: &Path) -> Result<Option<SearchUrls>> {
        let search_js = self.js(&bundles::SEARCH);
        let search_wasm = self.wasm(&bundles::SEARCH);
        if [
            &shell.hydrate_js,
            &shell.hydrate_wasm,
            &search_js,
            &search_wasm,
        ]
        .iter()
        .any(|u| u.is_empty())
        {
            return Ok(None);
        }
        let texts: Vec<search_index::PageText<'_>> = pages
            .iter()
            .map(|p| search_index::PageText {
                url: self.page_url(&p.front.slug),
                title: &p.front.title,
                sections: &p.body.sections,
            })
            .collect();
        Ok(Some(SearchUrls {
            index: search_index::write(
                &out.join("assets"),
                &format!("{}assets/", self.base),
                &texts,
            )?,
            module_js: search_js,
            module_wasm: search_wasm,
        }))
    }

    /// The shell of page `i` of `pages`.
    fn shell(
        &self,
        config: &SiteConfig,
        pages: &[Page],
        i: usize,
        search: Option<SearchUrls>,
    ) -> PageShell {
        let page = &pages[i];
        let link = |p: &Page| NavLink {
            title: p
                .front
                .nav_title
                .clone()
                .unwrap_or_else(|| p.front.title.clone()),
            href: self.page_url(&p.front.slug),
            current: false,
        };
        PageShell {
            site_title: config.title.clone(),
            title: (!page.front.slug.is_empty()).then(|| page.front.title.clone()),
            description: page.front.description.clone(),
            canonical: format!("{}{}", self.origin, self.page_url(&page.front.slug)),
            base: self.base.clone(),
            chapters: pages
                .iter()
                .map(|p| NavLink {
                    current: p.front.slug == page.front.slug,
                    ..link(p)
                })
                .collect(),
            toc: page.body.toc.clone(),
            prev: i.checked_sub(1).and_then(|j| pages.get(j)).map(link),
            next: pages.get(i + 1).map(link),
            has_islands: page.body.has_islands,
            search,
            // Shortcodes and islands write code blocks too (the widget's snippets, the
            // estimator's embed code): they get the copy buttons as well.
            has_code: page.body.has_code || page.body.html.contains("<div class=\"code\">"),
            assets: match page.body.later {
                Some(later) => {
                    let l = self.bundle_urls(later);
                    AssetUrls {
                        later_js: l.hydrate_js,
                        later_wasm: l.hydrate_wasm,
                        ..self.bundle_urls(page.body.bundle)
                    }
                }
                None => self.bundle_urls(page.body.bundle),
            },
            body_html: format!(
                "<h1>{}</h1>\n{}",
                crate::html::heading(&page.front.title),
                page.body.html
            ),
        }
    }
}

/// Fails when a page needs a bundle that was not built, or the shell's own assets
/// are missing from `site_dir`.
fn check_assets(site: &Site, pages: &[Page], shell: &AssetUrls, site_dir: &Path) -> Result<()> {
    for bundle in Bundle::ALL {
        let needed = pages.iter().any(|p| {
            (p.body.has_islands && p.body.bundle == bundle) || p.body.later == Some(bundle)
        });
        let urls = site.bundle_urls(bundle);
        if needed && (urls.hydrate_js.is_empty() || urls.hydrate_wasm.is_empty()) {
            bail!(
                "hay páginas con islas pero falta el paquete {}: compila con `cargo xtask build`",
                bundle.crate_name()
            );
        }
    }
    for (name, url) in [
        ("style.css", &shell.stylesheet),
        ("favicon.svg", &shell.favicon),
        ("islands.js", &shell.loader),
        ("theme.js", &shell.theme),
        ("copy.js", &shell.copy),
        ("search.js", &shell.search),
    ] {
        if url.is_empty() {
            bail!("falta {} en {}", name, site_dir.display());
        }
    }
    Ok(())
}

/// Paths of every page ("/" for the front page), read from the front matter alone so
/// widgets can link to pages rendered after them. Unreadable files are skipped here and
/// reported by [`load_pages`].
fn page_paths(dir: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .filter_map(|p| fs::read_to_string(p).ok())
        .filter_map(|source| {
            front_matter::split(&source).ok().map(|s| {
                if s.front.slug.is_empty() {
                    "/".to_owned()
                } else {
                    format!("/{}/", s.front.slug)
                }
            })
        })
        .collect()
}

fn load_pages(dir: &Path, base: &str, widget_ctx: &widgets::WidgetContext) -> Result<Vec<Page>> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .with_context(|| format!("no se pudo leer {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    let mut errors = Vec::new();
    let mut pages = Vec::new();
    for file in files {
        let source = fs::read_to_string(&file)
            .with_context(|| format!("no se pudo leer {}", file.display()))?;
        let err = |(line, message): (usize, String)| ContentError {
            file: file.clone(),
            line,
            message,
        };
        let split = match front_matter::split(&source) {
            Ok(s) => s,
            Err(e) => {
                errors.push(err(e));
                continue;
            }
        };
        let lines = LineIndex::new(split.body, split.body_line);
        match markdown::render(split.body, &lines, base, widget_ctx) {
            Ok(body) => pages.push(Page {
                file: file.clone(),
                front: split.front,
                body,
            }),
            Err(e) => errors.push(err(e)),
        }
    }
    let mut seen_slug: HashMap<String, PathBuf> = HashMap::new();
    let mut seen_order: HashMap<u32, PathBuf> = HashMap::new();
    for p in &pages {
        if let Some(other) = seen_slug.insert(p.front.slug.clone(), p.file.clone()) {
            errors.push(ContentError {
                file: p.file.clone(),
                line: 2,
                message: format!("el slug «{}» ya lo usa {}", p.front.slug, other.display()),
            });
        }
        if let Some(other) = seen_order.insert(p.front.order, p.file.clone()) {
            errors.push(ContentError {
                file: p.file.clone(),
                line: 2,
                message: format!("el orden {} ya lo usa {}", p.front.order, other.display()),
            });
        }
    }
    fail_on(errors)?;
    if pages.is_empty() {
        bail!("no hay páginas en {}", dir.display());
    }
    pages.sort_by_key(|p| p.front.order);
    Ok(pages)
}

/// Every internal link must reach a page, and every anchor an id on that page.
fn check_links(pages: &[Page]) -> Result<()> {
    let ids: BTreeMap<String, &Vec<String>> = pages
        .iter()
        .map(|p| {
            let path = if p.front.slug.is_empty() {
                "/".to_owned()
            } else {
                format!("/{}/", p.front.slug)
            };
            (path, &p.body.ids)
        })
        .collect();
    let mut errors = Vec::new();
    // The OOM explainer's causes link into the guide: each target must exist.
    for target in oom::diagnosis::GUIDE_PATHS {
        let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
        let problem = match ids.get(path) {
            None => Some(format!(
                "el explicador de OOM enlaza a «{target}», y esa página no existe"
            )),
            Some(page_ids) if !anchor.is_empty() && !page_ids.iter().any(|a| a == anchor) => Some(
                format!("el explicador de OOM enlaza a «{target}», y esa ancla no existe"),
            ),
            Some(_) => None,
        };
        if let Some(message) = problem {
            errors.push(ContentError {
                file: PathBuf::from("crates/oom/src/diagnosis/mod.rs"),
                line: 1,
                message,
            });
        }
    }
    for page in pages {
        let own = format!("/{}/", page.front.slug).replace("//", "/");
        for link in &page.body.links {
            let path = if link.path.is_empty() {
                own.as_str()
            } else {
                link.path.as_str()
            };
            let problem = match ids.get(path) {
                None => Some(format!("enlace roto: no existe la página «{path}»")),
                Some(page_ids) => link
                    .anchor
                    .as_ref()
                    .filter(|a| !a.is_empty() && !page_ids.contains(a))
                    .map(|a| format!("enlace roto: «{path}» no tiene el ancla «#{a}»")),
            };
            if let Some(message) = problem {
                errors.push(ContentError {
                    file: page.file.clone(),
                    line: link.line,
                    message,
                });
            }
        }
    }
    fail_on(errors)
}

fn fail_on(errors: Vec<ContentError>) -> Result<()> {
    if errors.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
    bail!(
        "{} error(es) en el contenido:\n{}",
        errors.len(),
        list.join("\n")
    )
}

fn write_not_found(
    out: &Path,
    config: &SiteConfig,
    base: &str,
    origin: &str,
    pages: &[Page],
    assets: &AssetUrls,
    search: Option<SearchUrls>,
) -> Result<()> {
    let shell = PageShell {
        site_title: config.title.clone(),
        title: Some("Página no encontrada".into()),
        description: "Esta dirección no existe en vramlab.".into(),
        canonical: format!("{origin}{base}404.html"),
        base: base.to_owned(),
        chapters: pages
            .iter()
            .map(|p| NavLink {
                title: p
                    .front
                    .nav_title
                    .clone()
                    .unwrap_or_else(|| p.front.title.clone()),
                href: if p.front.slug.is_empty() {
                    base.to_owned()
                } else {
                    format!("{base}{}/", p.front.slug)
                },
                current: false,
            })
            .collect(),
        assets: assets.clone(),
        search,
        body_html: format!(
            "<h1>Página no encontrada</h1>\n<p>Esta dirección no existe. Vuelve a la \
             <a href=\"{}\">portada</a> o elige un capítulo del índice.</p>",
            crate::html::escape(base)
        ),
        ..Default::default()
    };
    fs::write(out.join("404.html"), render_page(shell))?;
    Ok(())
}

fn write_sitemap(out: &Path, origin: &str, paths: impl Iterator<Item = String>) -> Result<()> {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for path in paths {
        xml.push_str(&format!(
            "  <url><loc>{}</loc></url>\n",
            crate::html::escape(&format!("{origin}{path}"))
        ));
    }
    xml.push_str("</urlset>\n");
    fs::write(out.join("sitemap.xml"), xml)?;
    fs::write(
        out.join("robots.txt"),
        format!("User-agent: *\nAllow: /\nSitemap: {origin}/sitemap.xml\n"),
    )?;
    Ok(())
}
