//! The widget registry: which shortcode becomes which island, and with what props.
//!
//! Shortcode attributes are Spanish (authors write Spanish), island props are English
//! (code is English); this table is the one place that maps one to the other and
//! validates values at build time, so a typo in content fails the build instead of
//! shipping a broken widget.

use leptos::prelude::*;
use ui::islands::{
    AllocatorLab, AttentionDemo, Estimator, GpuCheck, OomExplainer, QuickEstimator, SnapshotViewer,
    WeightsCalculator,
};

use crate::shortcode::Shortcode;

/// Build-time facts widgets may need (hashed bundle URLs).
#[derive(Debug, Clone, Default)]
pub struct WidgetContext {
    pub gpu_js: String,
    pub gpu_wasm: String,
    /// The estimator's importer bundle (`import-web`).
    pub import_js: String,
    pub import_wasm: String,
    /// The estimator's answers after the first (`estimate-web`).
    pub estimate_js: String,
    pub estimate_wasm: String,
    /// The diagnostics worker (loader, `worker-web` glue and wasm).
    pub worker: ui::islands::background::WorkerUrls,
    /// The site's base path ("/" or "/sub/").
    pub base: String,
    /// The public origin ("https://vramlab.dev"), for snippets other sites paste.
    pub origin: String,
    /// Whether the build wrote the embeddable widget (`embed/`).
    pub embed: bool,
    /// Paths of every page ("/", "/memoria-reservada/"), for links islands build.
    pub pages: Vec<String>,
}

/// Every shortcode name with its attributes, for error messages and documentation.
pub const KNOWN: &[(&str, &[&str])] = &[
    ("pesos", &["parametros", "formato"]),
    // Also every key of `vram::settings::FIELDS` (checked when rendering).
    (
        "estimador",
        &["modelo", "gpu", "modo", "formato", "lote", "contexto"],
    ),
    ("validacion", &[]),
    ("widget", &["parte"]),
    ("laboratorio-asignador", &["escenario"]),
    ("ahorro-expandable", &[]),
    ("explicador-oom", &["ejemplo"]),
    ("visor-snapshot", &[]),
    ("prueba-webgpu", &[]),
    ("atencion-por-bloques", &[]),
    ("inicio", &[]),
];

/// The hydrate bundle a page loads. Each carries the islands of the pages that load it
/// and no others (`Widget::carried_by`), so a page's islands must share one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Bundle {
    /// `hydrate`: the light islands only.
    #[default]
    Light,
    /// `hydrate-tools`: the estimator.
    Tools,
    /// `hydrate-diag`: OOM explainer, snapshot viewer.
    Diag,
    /// `hydrate-lab`: the caching-allocator lab, loaded when it nears the screen.
    Lab,
    /// `hydrate-attention`: the tiled-attention demo.
    Attention,
    /// `hydrate-home`: the home page's explainer and quick estimator (their work runs
    /// in the diagnostics worker and in the `estimate-web` bundle).
    Home,
}

impl Bundle {
    /// Every bundle, lightest first among those that share islands: a page loads the
    /// first that carries all its islands.
    pub const ALL: [Bundle; 6] = [
        Bundle::Light,
        Bundle::Tools,
        Bundle::Home,
        Bundle::Diag,
        Bundle::Lab,
        Bundle::Attention,
    ];

    /// Its row of the bundle table.
    pub fn spec(self) -> &'static bundles::Bundle {
        match self {
            Bundle::Light => &bundles::LIGHT,
            Bundle::Tools => &bundles::TOOLS,
            Bundle::Diag => &bundles::DIAG,
            Bundle::Lab => &bundles::LAB,
            Bundle::Attention => &bundles::ATTENTION,
            Bundle::Home => &bundles::HOME,
        }
    }

    /// The crate that builds it.
    pub fn crate_name(self) -> &'static str {
        self.spec().krate
    }

    /// wasm-bindgen's output stem (`pkg/STEM.js`, `pkg/STEM_bg.wasm`).
    pub fn stem(self) -> &'static str {
        self.spec().stem
    }

    /// What a reader of a build error calls it.
    pub fn describe(self) -> &'static str {
        match self {
            Bundle::Light => "las islas ligeras",
            Bundle::Tools => "el estimador",
            Bundle::Diag => "las herramientas de diagnóstico",
            Bundle::Lab => "el laboratorio del asignador",
            Bundle::Attention => "la demo de atención por bloques",
            Bundle::Home => "las herramientas de la portada",
        }
    }
}

/// A rendered widget: its HTML, whether it is an island (needs a hydrate bundle) and
/// which bundles carry that island.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Widget {
    pub html: String,
    pub island: bool,
    /// The hydrate bundles whose `ui` features include this island (empty for static
    /// HTML). A page loads one bundle, so all its islands must share one.
    pub carried_by: &'static [Bundle],
    /// What a reader of a build error calls it.
    pub name: &'static str,
    /// A heavy island that, below an earlier island of its page, is woken only when it
    /// nears the screen, from a second bundle the page loads then: it does not weigh on
    /// the page's first load. As its page's first island it is woken at once.
    pub deferrable: bool,
}

/// An island, carried by `carried_by` (the features of `ui` in those bundles' crates).
fn island(name: &'static str, carried_by: &'static [Bundle], html: String) -> Widget {
    Widget {
        html,
        island: true,
        carried_by,
        name,
        deferrable: false,
    }
}

/// A heavy island, woken later below another one (see `Widget::deferrable`).
fn deferrable_island(name: &'static str, carried_by: &'static [Bundle], html: String) -> Widget {
    Widget {
        deferrable: true,
        ..island(name, carried_by, html)
    }
}

fn static_html(html: String) -> Widget {
    Widget {
        html,
        island: false,
        carried_by: &[],
        name: "",
        deferrable: false,
    }
}

fn check_attrs(sc: &Shortcode, allowed: &[&str]) -> Result<(), String> {
    for (key, _) in &sc.attrs {
        if !allowed.contains(&key.as_str()) {
            let list = if allowed.is_empty() {
                "ninguno".to_owned()
            } else {
                allowed.join(", ")
            };
            return Err(format!(
                "el shortcode «{}» no tiene el atributo «{key}» (admite: {list})",
                sc.name
            ));
        }
    }
    Ok(())
}

fn render(view: impl FnOnce() -> AnyView) -> String {
    Owner::new().with(|| view().to_html())
}

/// Renders the widget for `sc`, or says why it cannot.
pub fn render_widget(sc: &Shortcode, ctx: &WidgetContext) -> Result<Widget, String> {
    match sc.name.as_str() {
        "estimador" => {
            let allowed: Vec<&str> = std::iter::once(vram::settings::MODEL_KEY)
                .chain(vram::settings::FIELDS.iter().map(|f| f.key))
                .collect();
            check_attrs(sc, &allowed)?;
            let model = sc
                .attr(vram::settings::MODEL_KEY)
                .unwrap_or(vram::settings::WEB_MODEL);
            let model = vram::catalog::model(model)
                .ok_or_else(|| format!("modelo=\"{model}\": no está en el catálogo"))?
                .id
                .clone();
            // The same reader as the page's links and the widget's attributes.
            let (settings, errors) = vram::Settings::read(&vram::Settings::web_default(), |k| {
                sc.attr(k).map(str::to_owned)
            });
            if let Some(e) = errors.first() {
                return Err(format!("{}=\"{}\": {e}", e.field.spec().key, e.input));
            }
            let settings: Vec<(String, String)> = settings
                .pairs(&vram::Settings::web_default())
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect();
            if ctx.import_js.is_empty() || ctx.import_wasm.is_empty() {
                return Err("falta el paquete import-web: compila con `cargo xtask build`".into());
            }
            let (import_js, import_wasm) = (ctx.import_js.clone(), ctx.import_wasm.clone());
            let (estimate_js, estimate_wasm) = estimate_urls(ctx)?;
            let embed_js = if ctx.embed {
                crate::widget_docs::script_url(&ctx.origin, &ctx.base)
            } else {
                String::new()
            };
            // Below another island (the VRAM anatomy chapter's weights calculator) it
            // comes later; on its own page it is the first island and wakes at once.
            Ok(deferrable_island(
                "el estimador",
                &[Bundle::Tools],
                render(move || {
                    view! {
                        <Estimator model=model settings=settings
                            import_js=import_js import_wasm=import_wasm embed_js=embed_js
                            estimate_js=estimate_js estimate_wasm=estimate_wasm />
                    }
                    .into_any()
                }),
            ))
        }
        "widget" => {
            check_attrs(sc, &["parte"])?;
            let html = match sc.attr("parte").unwrap_or("") {
                "atributos" => crate::widget_docs::attributes(),
                "codigo" => crate::widget_docs::snippet(&ctx.origin, &ctx.base),
                "iframe" => crate::widget_docs::iframe(&ctx.origin, &ctx.base),
                "demo" | "propio" if !ctx.embed => {
                    return Err("falta el paquete embed: compila con `cargo xtask build`".into());
                }
                "demo" => crate::widget_docs::demo(&ctx.base),
                "propio" => crate::widget_docs::custom(&ctx.base),
                other => {
                    return Err(format!(
                        "parte=\"{other}\": usa atributos, codigo, iframe, demo o propio"
                    ));
                }
            };
            Ok(static_html(html))
        }
        "validacion" => {
            check_attrs(sc, &[])?;
            Ok(static_html(validation_table()))
        }
        "pesos" => {
            check_attrs(sc, &["parametros", "formato"])?;
            let params = sc.attr("parametros").unwrap_or("7B").to_owned();
            vram::parse_count(&params).map_err(|e| format!("parametros=\"{params}\": {e}"))?;
            let dtype = sc.attr("formato").unwrap_or("bf16").to_owned();
            let parsed: vram::Dtype = dtype
                .parse()
                .map_err(|e| format!("formato=\"{dtype}\": {e}"))?;
            let dtype = parsed.id().to_owned();
            // Only the light bundle: the VRAM anatomy chapter, which shows it above the
            // estimator, loads `hydrate-tools` later, for the estimator alone.
            Ok(island(
                "la calculadora de pesos",
                &[Bundle::Light],
                render(move || {
                    view! { <WeightsCalculator params=params dtype=dtype /> }.into_any()
                }),
            ))
        }
        "laboratorio-asignador" => {
            check_attrs(sc, &["escenario"])?;
            let id = sc.attr("escenario").unwrap_or("training");
            let scenario = allocator::scenarios::Scenario::from_id(id).ok_or_else(|| {
                let ids: Vec<&str> = allocator::scenarios::Scenario::ALL
                    .iter()
                    .map(|s| s.id())
                    .collect();
                format!("escenario=\"{id}\": usa {}", ids.join(", "))
            })?;
            let scenario_id = scenario.id().to_owned();
            let worker = worker_urls(ctx)?;
            // Far down its chapter, below the explainer: its bundle loads when the
            // reader gets near it.
            Ok(deferrable_island(
                "el laboratorio del asignador",
                &[Bundle::Lab],
                render(move || {
                    view! { <AllocatorLab scenario_id=scenario_id worker=worker /> }.into_any()
                }),
            ))
        }
        "explicador-oom" => {
            check_attrs(sc, &["ejemplo"])?;
            let example = match sc.attr("ejemplo").unwrap_or("ninguno") {
                "ninguno" => String::new(),
                "fragmentacion" => EXAMPLE_FRAGMENTATION.to_owned(),
                "resumen" => EXAMPLE_SUMMARY.to_owned(),
                other => {
                    return Err(format!(
                        "ejemplo=\"{other}\": usa ninguno, fragmentacion o resumen"
                    ));
                }
            };
            let (base, pages) = (ctx.base.clone(), ctx.pages.clone());
            let worker = worker_urls(ctx)?;
            // Explained now, so the page reads without JavaScript and hydrates as is.
            let initial =
                (!example.trim().is_empty()).then(|| diag_worker::explain::explain(&example));
            // Both chapters that show it load a bundle with it: the debugging chapter's
            // (with the snapshot viewer), and the home page's, the lighter one, on the
            // reserved-memory chapter.
            Ok(island(
                "el explicador de errores",
                &[Bundle::Diag, Bundle::Home],
                render(move || {
                    view! { <OomExplainer example=example initial=initial base=base pages=pages worker=worker compact=false /> }
                    .into_any()
                }),
            ))
        }
        "inicio" => {
            check_attrs(sc, &[])?;
            Ok(island(
                "las herramientas de la portada",
                &[Bundle::Home],
                home_tools(ctx)?,
            ))
        }
        "visor-snapshot" => {
            check_attrs(sc, &[])?;
            let worker = worker_urls(ctx)?;
            Ok(island(
                "el visor de snapshots",
                &[Bundle::Diag],
                render(move || view! { <SnapshotViewer worker=worker /> }.into_any()),
            ))
        }
        "ahorro-expandable" => {
            check_attrs(sc, &[])?;
            Ok(static_html(crate::allocator_table::savings_table()?))
        }
        "prueba-webgpu" => {
            check_attrs(sc, &[])?;
            if ctx.gpu_js.is_empty() || ctx.gpu_wasm.is_empty() {
                return Err("falta el paquete gpu-web: compila con `cargo xtask build`".into());
            }
            let (js_url, wasm_url) = (ctx.gpu_js.clone(), ctx.gpu_wasm.clone());
            Ok(island(
                "la prueba de WebGPU",
                &[Bundle::Light],
                render(move || view! { <GpuCheck js_url=js_url wasm_url=wasm_url /> }.into_any()),
            ))
        }
        "atencion-por-bloques" => {
            check_attrs(sc, &[])?;
            if ctx.gpu_js.is_empty() || ctx.gpu_wasm.is_empty() {
                return Err("falta el paquete gpu-web: compila con `cargo xtask build`".into());
            }
            let (js_url, wasm_url) = (ctx.gpu_js.clone(), ctx.gpu_wasm.clone());
            Ok(island(
                "la demo de atención por bloques",
                &[Bundle::Attention],
                render(move || {
                    view! { <AttentionDemo js_url=js_url wasm_url=wasm_url /> }.into_any()
                }),
            ))
        }
        other => {
            let names: Vec<&str> = KNOWN.iter().map(|(n, _)| *n).collect();
            Err(format!(
                "shortcode desconocido «{other}» (existen: {})",
                names.join(", ")
            ))
        }
    }
}

/// The home page's two tools, side by side on a wide screen: the OOM explainer (empty,
/// waiting for a paste) and "¿Cabe mi modelo?" for the issue's first user, QLoRA of
/// Llama 3.1 8B on a 24 GB card.
fn home_tools(ctx: &WidgetContext) -> Result<String, String> {
    const MODEL: &str = "llama-3.1-8b";
    const GPU: &str = "rtx-4090";
    const TASK: &str = "qlora";
    let worker = worker_urls(ctx)?;
    let estimator = "/estimador/";
    if !ctx.pages.iter().any(|p| p == estimator) {
        return Err("la portada enlaza con /estimador/, que no existe".into());
    }
    let estimator = format!("{}{}", ctx.base.trim_end_matches('/'), estimator);
    let models: Vec<(String, String)> = vram::catalog::models()
        .iter()
        .map(|m| (m.id.clone(), m.name.clone()))
        .collect();
    let gpus: Vec<(String, String)> = vram::catalog::gpus()
        .iter()
        .map(|g| (g.id.clone(), g.label()))
        .collect();
    let tasks: Vec<(String, String)> = vram::settings::TASKS
        .iter()
        .map(|c| (c.web.to_owned(), c.label.to_owned()))
        .collect();
    use vram::settings::{Field, MODEL_KEY};
    let query = format!(
        "{MODEL_KEY}={MODEL}&{}={GPU}&{}={TASK}",
        Field::Gpu.spec().key,
        Field::Task.spec().key
    );
    let initial = estimate_web::quick::quick(&query);
    if initial.state.is_empty() {
        return Err(format!(
            "la estimación de la portada falla: {}",
            initial.html
        ));
    }
    let link = estimate_web::quick::link(&query);
    let (estimate_js, estimate_wasm) = estimate_urls(ctx)?;
    let (base, pages) = (ctx.base.clone(), ctx.pages.clone());
    let explainer_worker = worker.clone();
    let explainer = render(move || {
        view! { <OomExplainer example=String::new() initial=None base=base pages=pages worker=explainer_worker compact=true /> }
            .into_any()
    });
    let estimator = render(move || {
        view! {
            <QuickEstimator models=models gpus=gpus tasks=tasks model=MODEL.to_owned()
                gpu=GPU.to_owned() task=TASK.to_owned() link=link estimator=estimator
                estimate_js=estimate_js estimate_wasm=estimate_wasm />
        }
        .into_any()
    });
    Ok(format!(
        "<div class=\"home-tools\">\
         <section class=\"home-tool\" aria-labelledby=\"pega-tu-error\">\
         <h2 id=\"pega-tu-error\">Pega tu error</h2>{explainer}</section>\
         <section class=\"home-tool\" aria-labelledby=\"cabe-mi-modelo\">\
         <h2 id=\"cabe-mi-modelo\">¿Cabe mi modelo?</h2>{estimator}</section></div>"
    ))
}

/// The `estimate-web` bundle's glue and wasm URLs, or why the build cannot place an
/// estimator.
fn estimate_urls(ctx: &WidgetContext) -> Result<(String, String), String> {
    if ctx.estimate_js.is_empty() || ctx.estimate_wasm.is_empty() {
        return Err("falta el paquete estimate-web: compila con `cargo xtask build`".into());
    }
    Ok((ctx.estimate_js.clone(), ctx.estimate_wasm.clone()))
}

/// The diagnostics worker's URLs, or why the build cannot place a widget that needs it.
fn worker_urls(ctx: &WidgetContext) -> Result<ui::islands::background::WorkerUrls, String> {
    let w = &ctx.worker;
    if w.loader.is_empty() || w.js.is_empty() || w.wasm.is_empty() {
        return Err("falta el paquete worker-web: compila con `cargo xtask build`".into());
    }
    Ok(w.clone())
}

/// The explainer's worked example: a PyTorch 2.1+ message where the cache holds more
/// than the request, so fragmentation ranks first.
const EXAMPLE_FRAGMENTATION: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.23 GiB is free. Including non-PyTorch memory, this process has 22.41 GiB memory in use. Of the allocated memory 18.02 GiB is allocated by PyTorch, and 3.87 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";

/// A `torch.cuda.memory_summary()` table (PyTorch 2.x, abbreviated): one of the `oom`
/// corpus fixtures, so the example is known to parse.
const EXAMPLE_SUMMARY: &str = include_str!("../../oom/tests/summaries/summary_v2_abbreviated.txt");

/// The estimator's published comparisons, computed at build time so the page can
/// never disagree with the engine: one row per case, then the error per runtime.
fn validation_table() -> String {
    use crate::html::escape;
    use vram::validation::{Unit, stats, stats_by_runtime};
    let cases = vram::validation::cases();
    let mut html = String::from(
        "<table tabindex=\"0\" class=\"validation\"><thead><tr><th scope=\"col\">Caso</th>\
         <th scope=\"col\">Motor</th><th scope=\"col\">Publicado</th><th scope=\"col\">vramlab</th>\
         <th scope=\"col\">Error</th><th scope=\"col\">Fuente</th></tr></thead><tbody>",
    );
    for c in &cases {
        let show = |n: u64| match c.unit {
            Unit::Binary => vram::ByteSize(n).binary(),
            Unit::Decimal => vram::ByteSize(n).decimal(),
            Unit::Tokens => format!("{} tokens", vram::group_digits(n)),
        };
        html.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td data-label=\"Publicado\">{}</td>\
             <td data-label=\"vramlab\">{}</td><td data-label=\"Error\">{}</td><td>{}</td></tr>",
            escape(c.what),
            escape(runtime_label(c.runtime)),
            show(c.published),
            show(c.estimated),
            percent(c.error_percent(), true),
            escape(c.source)
        ));
    }
    html.push_str("</tbody></table>\n");
    let all: Vec<&vram::validation::Case> = cases.iter().collect();
    let total = stats(&all);
    html.push_str(&format!(
        "<p class=\"validation-summary\">{} casos · error mediano {} · error máximo {} · \
         {} casos prometen más de lo que dio la ejecución por más de un 10 %</p>\n",
        total.cases,
        percent(total.median_abs, false),
        percent(total.worst_abs, false),
        total.unsafe_over_10
    ));
    html.push_str(
        "<table tabindex=\"0\" class=\"validation-runtimes\"><thead><tr><th scope=\"col\">Motor</th>\
         <th scope=\"col\">Casos</th><th scope=\"col\">Error mediano</th><th scope=\"col\">Peor</th>\
         <th scope=\"col\">Banda P10–P90 (lado seguro; memoria sin pesos)</th></tr></thead><tbody>",
    );
    for (runtime, s) in stats_by_runtime(&cases) {
        html.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} … {}</td></tr>",
            escape(runtime_label(runtime)),
            if s.band_cases < s.cases {
                format!("{} ({} en la banda)", s.cases, s.band_cases)
            } else {
                s.cases.to_string()
            },
            percent(s.median_abs, false),
            percent(s.worst_abs, false),
            percent(s.p10, true),
            percent(s.p90, true)
        ));
    }
    html.push_str("</tbody></table>\n");
    html.push_str(&residual_chart(&cases));
    html
}

/// The error each case leaves, one row of dots per runtime with its P10–P90 band, as
/// an SVG drawn at build time (the tables above are its text). Errors are the band's:
/// safe-side, memory measured beyond the weights; clamped to ±100 %.
fn residual_chart(cases: &[vram::validation::Case]) -> String {
    use crate::html::escape;
    use vram::validation::{Case, stats_by_runtime};
    let rows = stats_by_runtime(cases);
    let (left, width, row_h) = (120.0, 360.0, 18.0);
    let x = |e: f64| left + (e.clamp(-100.0, 100.0) + 100.0) / 200.0 * width;
    let height = row_h * rows.len() as f64 + 24.0;
    let mut svg = format!(
        "<figure class=\"validation-chart\" tabindex=\"0\"><svg viewBox=\"0 0 {w} {height}\" role=\"img\" \
         aria-label=\"Error de cada caso por motor, con la banda P10–P90\">",
        w = left + width + 10.0
    );
    for (i, (runtime, st)) in rows.iter().enumerate() {
        let y = row_h * i as f64 + row_h / 2.0;
        svg.push_str(&format!(
            "<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            left - 6.0,
            y + 3.0,
            escape(runtime_label(runtime))
        ));
        svg.push_str(&format!(
            "<rect class=\"band\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"/>",
            x(st.p10),
            y - 5.0,
            (x(st.p90) - x(st.p10)).max(1.0),
            10.0
        ));
        // Figures of weights alone are not part of the band (memory beyond the weights).
        for c in cases
            .iter()
            .filter(|c: &&Case| c.runtime == *runtime && !c.weights_only)
        {
            svg.push_str(&format!(
                "<circle cx=\"{:.1}\" cy=\"{y:.1}\" r=\"2.5\"><title>{}: {}</title></circle>",
                x(c.safe_error()),
                escape(c.id),
                percent(c.safe_error(), true)
            ));
        }
    }
    let axis_y = row_h * rows.len() as f64 + 4.0;
    svg.push_str(&format!(
        "<line class=\"axis-line\" x1=\"{0}\" x2=\"{0}\" y1=\"0\" y2=\"{axis_y}\"/>",
        x(0.0)
    ));
    for tick in [-100.0, -50.0, 0.0, 50.0, 100.0] {
        svg.push_str(&format!(
            "<text class=\"axis\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            x(tick),
            axis_y + 12.0,
            percent(tick, true)
        ));
    }
    svg.push_str(
        "</svg><figcaption>Error de cada caso por motor (puntos) y su banda P10–P90 \
         (rectángulo). A la izquierda del 0, la ejecución necesitó más memoria o tuvo menos \
         tokens de lo calculado; en memoria se mide sobre lo que no son pesos, y las cifras de \
         pesos solos no entran.</figcaption></figure>\n",
    );
    svg
}

/// How the tables name a case's runtime: arithmetic cases have none.
fn runtime_label(runtime: &str) -> &str {
    if runtime == "—" {
        "— (aritmética)"
    } else {
        runtime
    }
}

/// "−7,9 %": one decimal, signed for deviations (`numfmt`).
fn percent(v: f64, signed: bool) -> String {
    if signed {
        numfmt::signed_percent(v, 1)
    } else {
        numfmt::percent(v, 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shortcode::parse;

    fn ctx() -> WidgetContext {
        WidgetContext {
            gpu_js: "/pkg/gpu_web.1.js".into(),
            gpu_wasm: "/pkg/gpu_web_bg.1.wasm".into(),
            import_js: "/pkg/import_web.1.js".into(),
            import_wasm: "/pkg/import_web_bg.1.wasm".into(),
            estimate_js: "/pkg/estimate_web.1.js".into(),
            estimate_wasm: "/pkg/estimate_web_bg.1.wasm".into(),
            worker: ui::islands::background::WorkerUrls {
                loader: "/assets/worker.1.js".into(),
                js: "/pkg/worker_web.1.js".into(),
                wasm: "/pkg/worker_web_bg.1.wasm".into(),
            },
            ..WidgetContext::default()
        }
    }

    #[test]
    fn weights_island_renders_with_props_and_ssr_result() {
        let sc = parse(r#"{{< pesos parametros="7B" formato="fp32" >}}"#).unwrap();
        let html = render_widget(&sc, &ctx()).unwrap().html;
        assert!(html.contains("<leptos-island"), "{html}");
        assert!(
            html.contains("data-component=\"WeightsCalculator"),
            "{html}"
        );
        // The result is computed at build time, so it reads without JavaScript.
        assert!(html.contains("26,08 GiB"), "{html}");
        assert!(html.contains("28,00 GB"), "{html}");
    }

    #[test]
    fn gpu_island_gets_bundle_urls() {
        let sc = parse("{{< prueba-webgpu >}}").unwrap();
        let html = render_widget(&sc, &ctx()).unwrap().html;
        assert!(html.contains("gpu_web_bg.1.wasm"), "{html}");
        assert!(render_widget(&sc, &WidgetContext::default()).is_err());
        let sc = parse("{{< atencion-por-bloques >}}").unwrap();
        let w = render_widget(&sc, &ctx()).unwrap();
        assert!(w.island && w.carried_by == [Bundle::Attention], "{w:?}");
        assert!(
            w.html.contains("data-component=\"AttentionDemo"),
            "{}",
            w.html
        );
        assert!(w.html.contains("Aún no hay mediciones"), "{}", w.html);
    }

    #[test]
    fn estimator_and_validation() {
        let sc = parse(r#"{{< estimador modelo="llama-3.1-8b" gpu="rtx-4090" >}}"#).unwrap();
        let w = render_widget(&sc, &ctx()).unwrap();
        assert!(w.island && w.carried_by == [Bundle::Tools], "{w:?}");
        assert!(w.html.contains("data-component=\"Estimator"), "{}", w.html);
        assert!(
            w.html.contains("Cabe con margen en GeForce RTX 4090"),
            "{}",
            w.html
        );
        let v = render_widget(&parse("{{< validacion >}}").unwrap(), &ctx()).unwrap();
        assert!(!v.island);
        assert!(v.html.contains("error mediano"), "{}", v.html);
        assert!(
            v.html.contains("validation-runtimes") && v.html.contains("<td>vllm</td>"),
            "{}",
            v.html
        );
        // The residual chart: a dot per case of a band (figures of weights alone are
        // in the table, not in the bands).
        let cases = vram::validation::cases();
        let banded = cases.iter().filter(|c| !c.weights_only).count();
        assert!(v.html.contains("<svg"), "{}", v.html);
        assert_eq!(v.html.matches("<circle").count(), banded);
        assert!(v.html.contains(" en la banda)"), "{}", v.html);
    }

    #[test]
    fn bad_shortcodes_are_errors() {
        let cases = [
            (r#"{{< pesos parametros="siete" >}}"#, "parametros"),
            (r#"{{< pesos formato="fp7" >}}"#, "formato"),
            (r#"{{< pesos modelo="x" >}}"#, "no tiene el atributo"),
            (r#"{{< prueba-webgpu n="1" >}}"#, "ninguno"),
            (r#"{{< inexistente >}}"#, "desconocido"),
            (r#"{{< estimador modelo="gpt-7" >}}"#, "catálogo"),
            (r#"{{< estimador gpu="rtx-9999" >}}"#, "catálogo"),
            (r#"{{< estimador modo="volar" >}}"#, "modo"),
            (r#"{{< estimador lote="-1" >}}"#, "lote"),
        ];
        for (src, want) in cases {
            let err = render_widget(&parse(src).unwrap(), &ctx()).unwrap_err();
            assert!(err.contains(want), "{src}: {err}");
        }
    }
}
