//! The page shell, rendered only at build time: head, header, chapter navigation,
//! table of contents, previous/next links and footer around a chapter's HTML.
//!
//! Everything here is static HTML; only the islands inside `body_html` are hydrated.

use leptos::prelude::*;

/// A link in the chapter list or the previous/next bar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NavLink {
    pub title: String,
    pub href: String,
    pub current: bool,
}

/// One heading of the page, for the table of contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TocEntry {
    /// 2 or 3 (h2, h3): the page title is the only h1.
    pub level: u8,
    pub id: String,
    pub text: String,
}

/// URLs of the shared assets, already hashed and prefixed with the base path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AssetUrls {
    pub stylesheet: String,
    pub favicon: String,
    /// The island loader script; loaded only by pages that contain islands.
    pub loader: String,
    /// The theme script (stored light/dark choice and the toggle), on every page.
    pub theme: String,
    /// The copy buttons of code blocks, on pages that have code.
    pub copy: String,
    /// The search box's script, on every page with a search index.
    pub search: String,
    pub hydrate_js: String,
    pub hydrate_wasm: String,
    /// A second bundle for islands the first one lacks, loaded by the loader only when
    /// one of them nears the screen (empty: none).
    pub later_js: String,
    pub later_wasm: String,
}

/// What the search box loads on first focus, all hashed and with the base path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchUrls {
    pub index: String,
    pub module_js: String,
    pub module_wasm: String,
}

/// Everything the shell needs to render one page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageShell {
    pub site_title: String,
    /// The page's own title (the h1); `None` for the home page, whose `<title>` is the
    /// site's.
    pub title: Option<String>,
    pub description: String,
    pub canonical: String,
    /// Base path every internal URL starts with ("/" or "/vramlab/").
    pub base: String,
    pub chapters: Vec<NavLink>,
    pub toc: Vec<TocEntry>,
    pub prev: Option<NavLink>,
    pub next: Option<NavLink>,
    pub has_islands: bool,
    /// The search index and engine; when set, the header carries the search box and
    /// the page loads `site/search.js`, which wakes it.
    pub search: Option<SearchUrls>,
    /// The page has code blocks (and loads the copy-button script).
    pub has_code: bool,
    pub assets: AssetUrls,
    /// The chapter body, already rendered from Markdown (islands included).
    pub body_html: String,
}

/// Content-Security-Policy of every page (`vram::hub::page_csp`, shared with the
/// server): the estimator may fetch a model's files from the Hugging Face Hub, its
/// CDNs, the hf-mirror.com mirror or a server on the reader's own machine, nothing else.
pub fn csp() -> String {
    vram::hub::page_csp()
}

/// Renders a whole HTML document, doctype included.
pub fn render_page(shell: PageShell) -> String {
    let og = open_graph(&shell);
    let html = Owner::new().with(|| page(shell).to_html());
    // The view macro cannot spell the `property` attribute Open Graph needs (it is a
    // method name there), so these tags are added as text before the head closes.
    let html = html.replacen("</head>", &format!("{og}</head>"), 1);
    format!("<!DOCTYPE html>\n{html}")
}

/// Open Graph and Twitter card tags, for the preview a shared link gets.
fn open_graph(shell: &PageShell) -> String {
    let kind = if shell.title.is_some() {
        "article"
    } else {
        "website"
    };
    let title = shell.title.as_deref().unwrap_or(&shell.site_title);
    let tags = [
        ("og:type", kind),
        ("og:site_name", shell.site_title.as_str()),
        ("og:locale", "es_ES"),
        ("og:title", title),
        ("og:description", shell.description.as_str()),
        ("og:url", shell.canonical.as_str()),
    ];
    let mut out: String = tags
        .iter()
        .map(|(p, c)| {
            format!(
                "<meta property=\"{p}\" content=\"{}\">",
                numfmt::escape_html(c)
            )
        })
        .collect();
    out.push_str("<meta name=\"twitter:card\" content=\"summary\">");
    out
}

fn page(shell: PageShell) -> impl IntoView {
    let PageShell {
        site_title,
        title,
        description,
        canonical,
        base,
        chapters,
        toc,
        prev,
        next,
        has_islands,
        search,
        has_code,
        assets,
        body_html,
    } = shell;
    // The box is static HTML, disabled until `search.js` runs; the script imports the
    // `search-web` engine on the first focus, so pages pay for it only when used.
    let search_script = search
        .is_some()
        .then(|| view! { <script type="module" src=assets.search.clone()></script> });
    let search_box = search.map(|s| {
        view! {
            <div
                class="search"
                role="search"
                id="buscador"
                data-index=s.index
                data-module-js=s.module_js
                data-module-wasm=s.module_wasm
            >
                <label class="visually-hidden" for="buscar">
                    "Buscar en la guía"
                </label>
                <input
                    id="buscar"
                    type="search"
                    placeholder="Buscar en la guía"
                    autocomplete="off"
                    spellcheck="false"
                    aria-keyshortcuts="/ Control+K"
                    aria-describedby="buscar-estado"
                    aria-controls="buscar-lista"
                    disabled=""
                />
                <kbd class="search-key" aria-hidden="true">
                    "/"
                </kbd>
                <div class="search-panel" hidden="">
                    <p id="buscar-estado" class="search-status" role="status"></p>
                    <ul id="buscar-lista" class="search-results" aria-label="Resultados de la búsqueda"></ul>
                </div>
            </div>
        }
    });
    let copy_script =
        has_code.then(|| view! { <script src=assets.copy.clone() defer=""></script> });
    let full_title = match &title {
        Some(t) => format!("{t} · {site_title}"),
        None => site_title.clone(),
    };
    let scripts = has_islands.then(|| {
        view! {
            <link rel="modulepreload" href=assets.hydrate_js.clone() id="vramlab-hydrate-js" />
            // The wasm is named, not preloaded: a preload in <head> competes with the
            // text for the first bytes, and the text is what the reader waits for
            // (Lighthouse put LCP on island pages at 2.5-3.3 s with it, 0.9 s without).
            <script
                type="module"
                src=assets.loader.clone()
                id="vramlab-islands"
                data-wasm=assets.hydrate_wasm.clone()
                data-later-js=(!assets.later_js.is_empty()).then(|| assets.later_js.clone())
                data-later-wasm=(!assets.later_wasm.is_empty()).then(|| assets.later_wasm.clone())
            ></script>
        }
    });
    let nav_items = chapters
        .into_iter()
        .map(|c| {
            let aria_current = c.current.then_some("page");
            view! {
                <li>
                    <a href=c.href aria-current=aria_current>
                        {c.title}
                    </a>
                </li>
            }
        })
        .collect_view();
    let toc_view = (!toc.is_empty()).then(|| {
        let items = toc
            .into_iter()
            .map(|t| {
                let class = format!("toc-l{}", t.level);
                view! {
                    <li class=class>
                        <a href=format!("#{}", t.id)>{t.text}</a>
                    </li>
                }
            })
            .collect_view();
        view! {
            <aside class="toc" aria-labelledby="toc-title">
                <h2 id="toc-title">"En esta página"</h2>
                <ul>{items}</ul>
            </aside>
        }
    });
    let prev_view = prev.map(|p| {
        view! {
            <a class="prev" href=p.href rel="prev">
                <span class="dir">"Anterior"</span>
                <span class="name">{p.title}</span>
            </a>
        }
    });
    let next_view = next.map(|n| {
        view! {
            <a class="next" href=n.href rel="next">
                <span class="dir">"Siguiente"</span>
                <span class="name">{n.title}</span>
            </a>
        }
    });
    let home = base.clone();

    view! {
        <html lang="es">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <meta http-equiv="Content-Security-Policy" content=csp() />
                <title>{full_title}</title>
                <meta name="description" content=description />
                <link rel="canonical" href=canonical />
                <link rel="icon" href=assets.favicon type="image/svg+xml" />
                <link rel="stylesheet" href=assets.stylesheet />
                <script src=assets.theme></script>
                {copy_script}
                {search_script}
                {scripts}
            </head>
            <body>
                <a class="skip-link" href="#contenido">
                    "Saltar al contenido"
                </a>
                <header class="site-header">
                    <a class="brand" href=home>
                        {site_title}
                    </a>
                    <span class="tagline">"Entiende y evita los errores de memoria de GPU con LLMs"</span>
                    {search_box}
                    <a class="chapters-link" href="#capitulos">
                        "Capítulos"
                    </a>
                    <button type="button" class="theme-toggle" id="theme-toggle">
                        "Tema: sistema"
                    </button>
                </header>
                <div class="layout">
                    <nav class="sidebar" id="capitulos" aria-label="Capítulos">
                        <ol>{nav_items}</ol>
                    </nav>
                    <main id="contenido" tabindex="-1">
                        <article class="content" inner_html=body_html></article>
                        <nav class="prev-next" aria-label="Capítulo anterior y siguiente">
                            {prev_view}
                            {next_view}
                        </nav>
                    </main>
                    {toc_view}
                </div>
                <footer class="site-footer">
                    <p>
                        "vramlab · guía y herramientas en español sobre la memoria de GPU. "
                        "Los cálculos se hacen en tu navegador: nada de lo que escribes sale de él."
                    </p>
                </footer>
            </body>
        </html>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell() -> PageShell {
        PageShell {
            site_title: "vramlab".into(),
            title: Some("Anatomía de la VRAM".into()),
            description: "Dónde se va la memoria".into(),
            canonical: "https://example.org/anatomia/".into(),
            base: "/".into(),
            chapters: vec![NavLink {
                title: "Anatomía".into(),
                href: "/anatomia/".into(),
                current: true,
            }],
            toc: vec![TocEntry {
                level: 2,
                id: "pesos".into(),
                text: "Pesos".into(),
            }],
            body_html: "<h1>Anatomía</h1><p>x &lt; y</p>".into(),
            assets: AssetUrls {
                theme: "/theme.js".into(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn renders_a_complete_document() {
        let html = render_page(shell());
        assert!(html.starts_with("<!DOCTYPE html>"));
        for needle in [
            r#"<html lang="es">"#,
            "<title>Anatomía de la VRAM · vramlab</title>",
            r#"<link rel="canonical" href="https://example.org/anatomia/""#,
            r#"aria-current="page""#,
            r##"<a href="#pesos">Pesos</a>"##,
            "<p>x &lt; y</p>",
            "'wasm-unsafe-eval'",
        ] {
            assert!(html.contains(needle), "missing {needle} in {html}");
        }
        // No islands: only the small theme script, no module or preload.
        assert_eq!(html.matches("<script").count(), 1, "{html}");
        assert!(
            html.contains(r#"<script src="/theme.js"></script>"#),
            "{html}"
        );
        assert!(!html.contains("modulepreload"), "{html}");
        for needle in [
            r#"<meta property="og:title" content="Anatomía de la VRAM""#,
            r#"<meta property="og:type" content="article""#,
            r#"<meta property="og:url" content="https://example.org/anatomia/""#,
            r#"<meta property="og:description" content="Dónde se va la memoria""#,
            r#"id="theme-toggle""#,
        ] {
            assert!(html.contains(needle), "missing {needle} in {html}");
        }
    }

    #[test]
    fn search_box_is_static_with_its_script() {
        let mut s = shell();
        s.search = Some(SearchUrls {
            index: "/search-index.0123.json".into(),
            module_js: "/pkg/search_web.js".into(),
            module_wasm: "/pkg/search_web_bg.wasm".into(),
        });
        s.assets.search = "/search.js".into();
        let html = render_page(s);
        assert!(html.contains(r#"role="search""#), "{html}");
        assert!(
            html.contains(r#"data-module-wasm="/pkg/search_web_bg.wasm""#),
            "{html}"
        );
        assert!(
            html.contains(r#"<script type="module" src="/search.js">"#),
            "{html}"
        );
        // The box alone brings no hydrate bundle, and is disabled until its script runs.
        assert!(!html.contains("modulepreload"), "{html}");
        assert!(html.contains("disabled"), "{html}");
    }

    #[test]
    fn escapes_titles() {
        let mut s = shell();
        s.title = Some("<script>alert(1)</script>".into());
        let html = render_page(s);
        assert!(!html.contains("<script>alert"), "{html}");
    }
}
