//! The full estimator's answer (`/estimador/`, the VRAM anatomy chapter) as HTML text:
//! total per GPU, the bar against the capacity, verdict and limits, serving plan, speed
//! hint, the chart of memory against context, the table of catalog GPUs, the breakdown
//! and the notes.
//!
//! Why text and not Leptos views: the answer has no handlers, and as views it was the
//! largest part of the estimator island's bundle (37 KB of its gzipped wasm). Here it
//! is pure and native-testable. The site generator renders the first answer at build
//! time, and this crate's lazily loaded bundle renders every later one from the page's
//! link ([`answer`]), so the island carries neither these views nor the engine
//! (`vram::evaluate`). Everything that can come from the reader (an imported model's
//! name in a note, a message) is escaped.

use std::fmt::Write;

use embed::render::esc;
use numfmt::{fixed, fixed_es};
use vram::estimate::ModelInput;
use vram::import::{Imported, StoredWeights};
use vram::share::{ARCH_KEY, EXPERTS_KEY, PARAMS_KEY, SOURCE_KEY, WEIGHTS_KEY};
use vram::{ByteSize, Evaluation, Model, Settings, Surface, catalog, group_digits};

/// The `modelo` value that selects the reader's imported model.
pub const CUSTOM: &str = "propio";
/// Longest link [`read_link`] reads: an architecture is at most
/// `vram::share::MAX_SHARED_BYTES`, the settings a few hundred bytes.
pub const MAX_QUERY_BYTES: usize = 16 << 10;

/// What the estimator shows for one set of inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub eval: Evaluation,
    pub settings: Settings,
    /// (sequence length, bytes with eager attention, bytes with SDPA/Flash).
    pub curve: Vec<(u64, u64, u64)>,
    /// The command that runs it (vLLM, llama.cpp, Ollama), as the CLI prints it.
    pub launch: Option<vram::launch::Launch>,
    /// When it does not fit with margin: the candidates that make it fit (`vram::plan`),
    /// each with the page's link that applies it.
    pub plan: Vec<(vram::plan::Candidate, String)>,
}

impl Outcome {
    /// The capacity the figures compare with (0 without a GPU).
    pub fn capacity(&self) -> u64 {
        self.eval.capacity.unwrap_or(0)
    }
}

/// Evaluates catalog model `model` (or the imported one, for [`CUSTOM`]) with
/// `settings`: the same `vram::evaluate` as the CLI and the widget.
pub fn evaluate(model: &str, settings: &Settings, imported: &Imported) -> Result<Outcome, String> {
    let custom = imported
        .arch
        .as_ref()
        .map(|(a, _)| a)
        .filter(|_| model == CUSTOM);
    // The architecture, and how a launch command names the model: the catalog's Hub
    // repository, or the imported file's name (a placeholder otherwise).
    let (arch, hub, file) = match custom {
        Some(a) => (
            a.clone(),
            None,
            imported.weights.as_ref().map(|w| w.source.as_str()),
        ),
        None => {
            let preset = catalog::model(model)
                .ok_or("Elige un modelo del catálogo o importa un config.json.")?;
            let repo = Some(preset.hf_repo.as_str()).filter(|r| !r.is_empty());
            (preset.arch.clone(), repo, None)
        }
    };
    let stored = imported.weights.clone();
    let engine_model = Model {
        input: ModelInput::Arch {
            arch: Box::new(arch),
            total_params: stored.as_ref().and_then(|s| s.params),
        },
        stored,
        tensors: None,
    };
    let eval = vram::evaluate(&engine_model, settings).map_err(|e| e.to_string())?;
    let plan = vram::plan::plan(&engine_model, settings, &eval, hub, file)
        .into_iter()
        .map(|c| {
            let link = form_urlencoded::Serializer::new(String::new())
                .extend_pairs(link_pairs(model, &c.settings, imported))
                .finish();
            (c, link)
        })
        .collect();
    Ok(Outcome {
        plan,
        curve: vram::evaluate::context_curve(&engine_model, &eval.workload),
        launch: vram::launch::launch(
            &vram::launch::model_arg(settings.runtime, hub, file),
            settings,
            &eval,
        ),
        settings: settings.clone(),
        eval,
    })
}

/// The link's (key, value) pairs: the model, the settings that differ from the page's
/// defaults, and an imported model's architecture and exact weights. The page writes
/// them in its address and hands them to this bundle; [`read_link`] reads them back.
pub fn link_pairs<A: vram::share::Shared>(
    model: &str,
    settings: &Settings,
    imported: &Imported<A>,
) -> Vec<(&'static str, String)> {
    let mut pairs = vec![(vram::settings::MODEL_KEY, model.to_owned())];
    pairs.extend(settings.pairs(&Settings::web_default()));
    if let (CUSTOM, Some((a, _))) = (model, &imported.arch) {
        pairs.push((ARCH_KEY, a.to_share()));
    }
    if let Some(w) = &imported.weights {
        pairs.push((WEIGHTS_KEY, w.bytes.to_string()));
        if let Some(p) = w.params {
            pairs.push((PARAMS_KEY, p.to_string()));
        }
        pairs.push((SOURCE_KEY, w.source.clone()));
        if !w.experts.is_empty() {
            pairs.push((EXPERTS_KEY, vram::share::encode_experts(&w.experts)));
        }
    }
    pairs
}

/// Exact weights from a link, when it carries them.
pub fn link_weights(
    get: &impl Fn(&str) -> Option<String>,
) -> Option<Result<StoredWeights, String>> {
    let bytes = get(WEIGHTS_KEY)?;
    Some(
        vram::share::weights(
            &bytes,
            get(PARAMS_KEY).as_deref(),
            get(SOURCE_KEY).as_deref(),
        )
        .map(|mut w| {
            // A damaged expert list is left out: the file's size still scales the
            // formula.
            w.experts = get(EXPERTS_KEY)
                .and_then(|t| vram::share::decode_experts(&t).ok())
                .unwrap_or_default();
            w
        }),
    )
}

/// The (key, value) pairs of a link, `?` or not: at most [`MAX_QUERY_BYTES`] of it and
/// 64 pairs, which is more than any link the pages write.
pub fn query_pairs(query: &str) -> Vec<(String, String)> {
    let bytes = query.trim_start_matches('?').as_bytes();
    form_urlencoded::parse(bytes.get(..MAX_QUERY_BYTES).unwrap_or(bytes))
        .take(64)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// Model, settings and import of a link written by [`link_pairs`]. Values that do not
/// read are left at the page's defaults: the page has already told the reader about
/// them, and nothing here fails.
pub fn read_link(query: &str) -> (String, Settings, Imported) {
    let pairs = query_pairs(query);
    let get = |key: &str| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
    let (settings, _) = Settings::read(&Settings::web_default(), get);
    let model = get(vram::settings::MODEL_KEY).unwrap_or_else(|| vram::settings::WEB_MODEL.into());
    let imported = Imported {
        arch: get(ARCH_KEY)
            .and_then(|t| vram::share::decode(&t).ok())
            .map(|a| (a, String::new())),
        weights: link_weights(&get).and_then(Result::ok),
    };
    (model, settings, imported)
}

/// The answer for the page's link, as HTML: what the bundle's `answer` export returns.
pub fn answer(query: &str) -> String {
    let (model, settings, imported) = read_link(query);
    render(&evaluate(&model, &settings, &imported))
}

/// The answer, or why there is none.
pub fn render(outcome: &Result<Outcome, String>) -> String {
    match outcome {
        Ok(o) => result(o),
        Err(msg) => error(msg),
    }
}

/// A message in place of the answer (a refused value, a missing model).
pub fn error(msg: &str) -> String {
    format!(r#"<p class="calc-error" role="alert">{}</p>"#, esc(msg))
}

/// Whether an answer is [`error`]'s message rather than an estimate.
pub fn is_error(html: &str) -> bool {
    html.starts_with(r#"<p class="calc-error""#)
}

/// The six categories with their Spanish names and CSS classes (`vram::palette`).
fn categories() -> impl Iterator<Item = (&'static str, &'static str)> {
    vram::palette::CATEGORIES.iter().map(|c| (c.label, c.class))
}

fn result(o: &Outcome) -> String {
    let est = &o.eval.estimate;
    let per_gpu = est.per_gpu_bytes;
    let mut out = format!(
        r#"<p class="calc-main"><strong class="calc-big est-total">{}</strong><span class="calc-alt"> = {} por GPU</span></p>"#,
        ByteSize(per_gpu).binary(),
        ByteSize(per_gpu).decimal()
    );
    if est.gpus > 1 {
        let _ = write!(
            out,
            r#"<p class="est-all-gpus">En total, {} GPU: {} ({}).</p>"#,
            est.gpus,
            ByteSize(est.total_bytes).binary(),
            ByteSize(est.total_bytes).decimal()
        );
    }
    // The verdict, the way out when it does not fit and what runs it come first (the
    // first screen of a phone); the limits and the server's numbers follow.
    out.push_str(&bar(o));
    out.push_str(&verdict(o));
    out.push_str(&plan(o));
    out.push_str(&launch(o));
    out.push_str(&limits(o));
    out.push_str(&serving(o));
    if let Some(h) = o.eval.speed {
        let ram = if h.host_bytes_per_step > 0.0 {
            format!(
                " (cada token lee {} de la RAM de la CPU, a {} GB/s)",
                ByteSize(h.host_bytes_per_step as u64).binary(),
                o.settings.ram_gbs
            )
        } else {
            String::new()
        };
        let _ = write!(
            out,
            r#"<p class="est-speed">Como mucho (roofline): primer token en ≥ {}, generación ≤ {} tokens/s por secuencia{}.</p>"#,
            esc(&vram::duration_text(h.ttft_seconds)),
            fixed(h.decode_tokens_per_second, 0),
            esc(&ram)
        );
    }
    out.push_str(&chart(o));
    // The list of GPUs is for the model whole, before `-ngl auto` moved layers; none
    // where vLLM refuses the layout.
    let (whole, weights) = o.eval.whole.unwrap_or((per_gpu, est.breakdown.weights));
    let high = o.eval.band.map_or(whole, |b| b.high_bytes(whole, weights));
    if !matches!(o.eval.verdict, Some(vram::Verdict::TpRefused { .. })) {
        out.push_str(&gpu_table(whole, high, o.eval.whole.is_some()));
    }
    out.push_str(r#"<table class="calc-table est-table"><caption>Desglose</caption><thead><tr><th scope="col">Categoría</th><th scope="col">GiB</th><th scope="col">GB</th></tr></thead><tbody>"#);
    for (v, (name, class)) in est.breakdown.parts().into_iter().zip(categories()) {
        let _ = write!(
            out,
            r#"<tr><th scope="row"><span class="swatch {class}"></span>{name}</th><td>{}</td><td>{}</td></tr>"#,
            ByteSize(v).binary(),
            ByteSize(v).decimal()
        );
    }
    out.push_str(r#"</tbody></table><ul class="est-notes">"#);
    for n in &o.eval.notes {
        let _ = write!(out, "<li>{}</li>", esc(&n.text(Surface::Web)));
    }
    out.push_str("</ul>");
    out
}

/// When it does not fit with margin: the candidates, each a link that applies it, with
/// its bytes, whether it fits and what it costs.
fn plan(o: &Outcome) -> String {
    if o.plan.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        r#"<div class="est-plan"><p class="est-plan-title">Para que quepa (primero lo que menos cuesta):</p><ol>"#,
    );
    let now = o.eval.speed.map(|h| h.decode_tokens_per_second);
    for (c, link) in &o.plan {
        let _ = write!(
            out,
            r#"<li data-fits="{}"><a href="?{}">{}</a>: {}</li>"#,
            c.fits,
            esc(link),
            esc(&c.change),
            esc(&c.summary(now))
        );
    }
    out.push_str("</ol></div>");
    out
}

/// The command that runs it, in a code block (the site's copy script gives it its
/// «Copiar» button), and each flag's reason.
fn launch(o: &Outcome) -> String {
    let Some(l) = &o.launch else {
        return String::new();
    };
    let mut out = format!(
        r#"<div class="est-launch"><p class="est-launch-title">Para lanzarlo ({}){}:</p><div class="code"><pre tabindex="0"><code class="language-{}">{}</code></pre></div><ul class="est-launch-why">"#,
        esc(l.runtime),
        if l.fits {
            ""
        } else {
            "; con esta estimación no cabe, y así se quedaría sin memoria"
        },
        l.language,
        esc(&l.command)
    );
    let placeholder = l
        .placeholder
        .iter()
        .map(|p| (p, format!("pon aquí {}", p.why)));
    for (a, why) in l.args.iter().map(|a| (a, a.why.clone())).chain(placeholder) {
        let _ = write!(
            out,
            "<li><code>{}</code>: {}</li>",
            esc(&a.shown()),
            esc(&why)
        );
    }
    out.push_str("</ul></div>");
    out
}

fn verdict(o: &Outcome) -> String {
    let Some(v) = o.eval.verdict else {
        return String::new();
    };
    let name = o.settings.gpu.map_or("la GPU", |g| g.name.as_str());
    let Some(text) = o.eval.verdict_text(Some(name), Surface::Web) else {
        return String::new();
    };
    format!(
        r#"<p class="est-verdict" data-fits="{}" data-verdict="{}"><strong>{}</strong></p>"#,
        v.fits(),
        v.id(),
        esc(&text)
    )
}

/// The largest batch and context, and where llama.cpp's layers and experts would go,
/// under a verdict.
fn limits(o: &Outcome) -> String {
    if o.eval.verdict.is_none() {
        return String::new();
    }
    // «auto» in the form: the number it stands for, first.
    let opened = o.eval.opened.map_or_else(String::new, |c| {
        format!(
            "Contexto automático: {} tokens, el que abre el motor por su cuenta. ",
            group_digits(c.tokens())
        )
    });
    let mut limits = match (o.eval.max_batch, o.eval.max_seq) {
        (Some(b), Some(s)) => format!(
            "Lote máximo: {} · secuencia máxima: {}.",
            vram::with_margin(b, o.eval.margin.batch, ""),
            vram::with_margin(s, o.eval.margin.seq, " tokens")
        ),
        // A server that does not start has no limits; the verdict said why.
        _ if o.eval.verdict.is_some_and(|v| !v.starts()) => String::new(),
        _ => "Ni siquiera un lote de 1 cabe con esta configuración.".into(),
    };
    if let Some(l) = o.eval.max_gpu_layers {
        limits.push_str(&if l.all() {
            format!(" Cabrían en la GPU las {} capas y la de salida.", l.layers)
        } else {
            format!(
                " Capas que caben en la GPU, sin dejar margen: {}.",
                l.placed_text()
            )
        });
    }
    if let Some(m) = o.eval.min_cpu_moe.filter(|m| m.fit > 0) {
        limits.push_str(&format!(
            " Cabe con los expertos de las primeras {} de {} capas en la RAM de la CPU.",
            m.fit, m.layers
        ));
    }
    format!(
        r#"<p class="est-limits">{}{}</p>"#,
        esc(&opened),
        esc(&limits)
    )
}

fn serving(o: &Outcome) -> String {
    let Some(p) = o.eval.serving else {
        return String::new();
    };
    let share = vram::settings::percent_text(o.settings.utilization);
    // vLLM refuses to start (the verdict says why): the plan is what it would get.
    let lead = match o.eval.verdict {
        Some(vram::Verdict::WontStart { .. } | vram::Verdict::TpRefused { .. }) => {
            "Si arrancara, como servidor"
        }
        Some(vram::Verdict::GraphsDoNotFit { .. }) => {
            "Hasta capturar los grafos CUDA, como servidor"
        }
        _ => "Como servidor",
    };
    let text = if p.kv_budget_bytes == 0 {
        format!(
            "{lead} (estilo vLLM, {share} % de la GPU): el modelo no deja sitio para la caché KV."
        )
    } else {
        format!(
            "{lead} (estilo vLLM, {share} % de la GPU, bloques de {} tokens): quedan {} para la caché KV = {} tokens ({} bytes por token), hasta {} secuencias a la vez de esta longitud.",
            o.settings.block_size,
            ByteSize(p.kv_budget_bytes).binary(),
            group_digits(p.tokens),
            group_digits(p.kv_bytes_per_token),
            group_digits(p.max_sequences)
        )
    };
    let graphs = match p.cuda_graphs {
        _ if p.cuda_graph_bytes == 0 => String::new(),
        vram::settings::CudaGraphs::Profiled => format!(
            " Los grafos CUDA ({}) ya están descontados de la caché.",
            ByteSize(p.cuda_graph_bytes).binary()
        ),
        _ => format!(
            " Los grafos CUDA ({}) van aparte, por encima de esa fracción.",
            ByteSize(p.cuda_graph_bytes).binary()
        ),
    };
    let text = text + &graphs;
    format!(r#"<p class="est-serving">{text}</p>"#)
}

/// The stacked bar of the six categories against the GPU's capacity
/// ([`vram::palette::bar_svg`], the one drawing every surface shares).
fn bar(o: &Outcome) -> String {
    let cap = o.capacity();
    let per_gpu = o.eval.estimate.per_gpu_bytes;
    vram::palette::bar_svg(
        o.eval.estimate.breakdown.parts(),
        cap,
        vram::palette::BarClasses {
            bar: "est-bar",
            cap: "cap-line",
        },
        Some(&format!(
            "Memoria necesaria {} frente a {} de la GPU",
            ByteSize(per_gpu).binary(),
            ByteSize(cap).binary()
        )),
    )
}

/// "4k", "512": a token count as the chart's axis writes it.
fn tokens_short(s: u64) -> String {
    if s >= 1024 && s.is_multiple_of(1024) {
        format!("{}k", s / 1024)
    } else {
        group_digits(s)
    }
}

/// A "nice" tick step (1, 2 or 5 × 10^k GiB) for about four ticks up to `top_gib`.
fn tick_step(top_gib: f64) -> f64 {
    let raw = (top_gib / 4.0).max(1e-3);
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|&step| step >= raw)
        .unwrap_or(10.0 * magnitude)
}

/// Which way a label next to a point reads: away from the nearer edge.
fn anchor_at(x: f64, middle: f64, gap: f64) -> (&'static str, f64) {
    if x > middle {
        ("end", -gap)
    } else {
        ("start", gap)
    }
}

/// Memory against sequence length, eager attention (quadratic) versus SDPA/Flash
/// (linear), on a log₂ x axis, with the GPU's capacity as a horizontal line.
///
/// The y axis stops a little above the capacity (or the current estimate), so the
/// reader's curve and the capacity line stay readable; the naive curve, which grows
/// with the square of the context, leaves the chart at the top. The reader's point is
/// marked, and so is where their curve crosses the capacity: the solver's maximum
/// context, labelled with its value. Every point carries its values for a pointer or
/// the keyboard, and the same values are in a table below for touch screens.
fn chart(o: &Outcome) -> String {
    let cap = o.capacity();
    let curve = &o.curve;
    if curve.len() < 2 {
        return String::new();
    }
    let last = curve.len() - 1;
    let eager_attention = o.settings.attention == vram::workload::Attention::Eager;
    let mine = |p: &(u64, u64, u64)| if eager_attention { p.1 } else { p.2 };
    let now_bytes = o.eval.estimate.per_gpu_bytes;
    let lowest = curve.iter().map(mine).min().unwrap_or(1);
    let top = if cap > 0 {
        (cap as f64 * 1.3).max(now_bytes as f64 * 1.1)
    } else {
        curve.iter().map(mine).max().unwrap_or(1) as f64 * 1.1
    }
    .max(lowest as f64 * 1.2)
    .max(1.0);
    let (w, h) = (320.0, 170.0);
    let (x0, x1, y0, y1) = (46.0, w - 14.0, h - 20.0, 10.0);
    let s0 = (curve[0].0.max(1) as f64).log2();
    let s1 = (curve[last].0.max(2) as f64).log2();
    let x_of = |seq: u64| x0 + ((seq.max(1) as f64).log2() - s0) / (s1 - s0).max(1e-9) * (x1 - x0);
    let y_of = |bytes: u64| y0 - (bytes as f64 / top).min(1.5) * (y0 - y1);
    let points = |pick: fn(&(u64, u64, u64)) -> u64| {
        curve
            .iter()
            .map(|p| format!("{},{}", fixed(x_of(p.0), 1), fixed(y_of(pick(p)), 1)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let label = match o.eval.max_seq.filter(|_| cap > 0) {
        Some(m) => format!(
            "Memoria por GPU según la longitud de secuencia; cabe hasta {} tokens",
            group_digits(m)
        ),
        None => "Memoria por GPU según la longitud de secuencia".to_owned(),
    };
    let mut out = format!(
        r#"<figure class="est-chart"><svg viewBox="0 0 {} {}" role="img" aria-label="{label}"><defs><clipPath id="est-chart-area"><rect x="{}" y="{}" width="{}" height="{}"></rect></clipPath></defs>"#,
        fixed(w, 0),
        fixed(h, 0),
        fixed(x0, 0),
        fixed(y1, 0),
        fixed(x1 - x0, 0),
        fixed(y0 - y1, 0)
    );
    let gib = ByteSize::GIB as f64;
    let step = tick_step(top / gib);
    for v in (1..)
        .map(|k| f64::from(k) * step)
        .take_while(|&v| v * gib <= top)
    {
        let y = fixed(y_of((v * gib) as u64), 1);
        let text = if step < 1.0 {
            format!("{} GiB", fixed_es(v, 1))
        } else {
            format!("{} GiB", fixed(v, 0))
        };
        let _ = write!(
            out,
            r#"<line class="grid-line" x1="{}" x2="{}" y1="{y}" y2="{y}"></line><text x="{}" y="{}" class="axis" text-anchor="end">{text}</text>"#,
            fixed(x0, 0),
            fixed(x1, 0),
            fixed(x0 - 3.0, 0),
            fixed(y_of((v * gib) as u64) + 3.0, 1)
        );
    }
    let _ = write!(
        out,
        r#"<line class="axis-line" x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}"></line><text x="{}" y="{}" class="axis" text-anchor="end">0</text>"#,
        fixed(x0 - 3.0, 0),
        fixed(y0 + 3.0, 0),
        x0 = fixed(x0, 0),
        x1 = fixed(x1, 0),
        y0 = fixed(y0, 0),
    );
    if cap > 0 {
        let y = y_of(cap);
        let _ = write!(
            out,
            r#"<line class="cap-line" x1="{}" x2="{}" y1="{yy}" y2="{yy}"></line><text class="axis" x="{}" y="{}" text-anchor="start">GPU: {}</text>"#,
            fixed(x0, 0),
            fixed(x1, 0),
            fixed(x0 + 4.0, 0),
            fixed(y + 11.0, 1),
            ByteSize(cap).binary(),
            yy = fixed(y, 1),
        );
    }
    let _ = write!(
        out,
        r#"<g clip-path="url(#est-chart-area)"><polyline class="curve-eager" points="{}"></polyline><polyline class="curve-flash" points="{}"></polyline></g>"#,
        points(|p| p.1),
        points(|p| p.2)
    );
    let in_range = |seq: u64| seq >= curve[0].0 && seq <= curve[last].0;
    // Where the reader's curve crosses the capacity: the solver's maximum context.
    if let Some(m) = o.eval.max_seq.filter(|&m| cap > 0 && in_range(m)) {
        let (x, y) = (x_of(m), y_of(cap));
        let (anchor, dx) = anchor_at(x, (x0 + x1) / 2.0, 5.0);
        let _ = write!(
            out,
            r#"<line class="est-chart-drop" x1="{xx}" x2="{xx}" y1="{}" y2="{}"></line><circle class="est-chart-cross" cx="{xx}" cy="{}" r="3.5"></circle><text class="axis est-chart-max" x="{}" y="{}" text-anchor="{anchor}" data-tokens="{m}">Máximo: {} tokens</text>"#,
            fixed(y, 1),
            fixed(y0, 1),
            fixed(y, 1),
            fixed(x + dx, 1),
            fixed(y - 5.0, 1),
            group_digits(m),
            xx = fixed(x, 1),
        );
    }
    for p in curve {
        let _ = write!(
            out,
            r#"<circle class="est-chart-pt" tabindex="0" cx="{}" cy="{}" r="3.5"><title>{} tokens: {} con SDPA/FlashAttention, {} con atención ingenua</title></circle>"#,
            fixed(x_of(p.0), 1),
            fixed(y_of(mine(p)).max(y1), 1),
            group_digits(p.0),
            ByteSize(p.2).binary(),
            ByteSize(p.1).binary()
        );
    }
    let now_seq = o
        .eval
        .workload
        .seq
        .saturating_add(o.eval.workload.new_tokens);
    if in_range(now_seq) {
        let (x, y) = (x_of(now_seq), y_of(now_bytes).max(y1));
        let (mut anchor, mut dx) = anchor_at(x, (x0 + x1) / 2.0, 6.0);
        // Below the point; where that would cover the capacity's label at the left
        // («GPU: 23,69 GiB», about 6 px a character), to the point's right instead.
        let text = format!("Ahora: {}", tokens_short(now_seq));
        let width = |t: &str| 6.0 * t.chars().count() as f64;
        let cap_label_end = x0 + 4.0 + width(&format!("GPU: {}", ByteSize(cap).binary()));
        let label_y = y + 12.0;
        let left_edge = if anchor == "end" {
            x + dx - width(&text)
        } else {
            x + dx
        };
        if cap > 0
            && (label_y - (y_of(cap) + 11.0)).abs() < 12.0
            && left_edge < cap_label_end
            && x + 6.0 + width(&text) <= x1
        {
            (anchor, dx) = ("start", 6.0);
        }
        let _ = write!(
            out,
            r#"<circle class="est-chart-now" cx="{}" cy="{}" r="4.5" data-tokens="{now_seq}"></circle><text class="axis est-chart-now-label" x="{}" y="{}" text-anchor="{anchor}">{text}</text>"#,
            fixed(x, 1),
            fixed(y, 1),
            fixed(x + dx, 1),
            fixed(label_y, 1),
        );
    }
    for (i, &(s, _, _)) in curve.iter().enumerate() {
        if i % 2 == 0 || i == last {
            let anchor = if i == last { "end" } else { "middle" };
            let _ = write!(
                out,
                r#"<text x="{}" y="{}" class="axis" text-anchor="{anchor}">{}</text>"#,
                fixed(x_of(s), 1),
                fixed(h - 6.0, 0),
                tokens_short(s)
            );
        }
    }
    out.push_str(concat!(
        r#"</svg><figcaption><span class="key key-flash"></span>SDPA / FlashAttention "#,
        r#"<span class="key key-eager"></span>Atención ingenua (N×N, crece con el cuadrado y sale por arriba) "#,
        r#"<span class="key key-cap"></span>Capacidad de la GPU · eje x: tokens por secuencia</figcaption>"#,
        r#"<details class="est-chart-values"><summary>Ver los valores</summary><table class="calc-table">"#,
        r#"<thead><tr><th scope="col">Tokens</th><th scope="col">SDPA / Flash</th><th scope="col">Ingenua</th></tr></thead><tbody>"#
    ));
    for p in curve {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            group_digits(p.0),
            ByteSize(p.2).binary(),
            ByteSize(p.1).binary()
        );
    }
    out.push_str("</tbody></table></details></figure>");
    out
}

/// Every catalog GPU and whether the workload fits on it: with room when the error
/// band's high end (`high`) fits, at the limit when only the estimate does.
fn gpu_table(per_gpu: u64, high: u64, whole_model: bool) -> String {
    let state = |usable: u64| {
        if high <= usable {
            ("fits", "Cabe con margen")
        } else if per_gpu <= usable {
            ("tight", "Al límite")
        } else {
            ("does-not-fit", "No cabe")
        }
    };
    let gpus = catalog::gpus();
    let count = |want: &str| {
        gpus.iter()
            .filter(|g| state(g.usable_bytes).0 == want)
            .count()
    };
    let mut out = format!(
        r#"<details class="est-gpus"><summary>¿En qué GPU cabe{}? Con margen en {} de {}, al límite en {}</summary><table class="calc-table"><thead><tr><th scope="col">GPU</th><th scope="col">Memoria</th><th scope="col">¿Cabe?</th></tr></thead><tbody>"#,
        // Where the fit moved layers to the CPU, the list is for the model whole.
        if whole_model {
            " con todas las capas en la GPU"
        } else {
            ""
        },
        count("fits"),
        gpus.len(),
        count("tight")
    );
    for g in gpus {
        let (id, text) = state(g.usable_bytes);
        let _ = write!(
            out,
            r#"<tr data-verdict="{id}"><td>{}</td><td>{}</td><td>{text}</td></tr>"#,
            esc(&g.name),
            ByteSize(g.usable_bytes).binary()
        );
    }
    out.push_str("</tbody></table></details>");
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn default_outcome() -> Outcome {
        evaluate(
            vram::settings::WEB_MODEL,
            &Settings::web_default(),
            &Imported::default(),
        )
        .unwrap()
    }

    /// A vLLM answer carries the command that runs it, in a code block with each flag's
    /// reason; transformers' answer, its Python script.
    #[test]
    fn a_served_answer_carries_its_command() {
        let (model, s, imported) =
            read_link("modelo=qwen2.5-7b&motor=vllm&gpu=l4&contexto=32768&nuevos=0");
        let html = render(&evaluate(&model, &s, &imported));
        assert!(
            html.contains(
                r#"<div class="code"><pre tabindex="0"><code class="language-sh">vllm serve Qwen/Qwen2.5-7B \"#
            ) && html
                .contains("<li><code>--max-model-len 32768</code>: el contexto de una petición"),
            "{html}"
        );
        // transformers' is a Python script, verdict and launch before the limits.
        let html = render(&Ok(default_outcome()));
        let at = |needle: &str| {
            html.find(needle)
                .unwrap_or_else(|| panic!("{needle}: {html}"))
        };
        assert!(at("class=\"est-verdict\"") < at("class=\"est-launch\""));
        assert!(
            at("<code class=\"language-python\"># transformers 5") < at("class=\"est-limits\"")
        );
    }

    /// QLoRA of Llama 3.1 8B on a 12 GB card does not fit: the plan's first candidate
    /// fits, and its link is the page's own link with the change.
    #[test]
    fn a_miss_shows_its_plan_as_links() {
        let (model, s, imported) = read_link("modelo=llama-3.1-8b&modo=qlora&gpu=rtx-3060");
        let html = render(&evaluate(&model, &s, &imported));
        assert!(
            html.contains(r#"<div class="est-plan">"#)
                && html.contains(r#"<li data-fits="true"><a href="?modelo=llama-3.1-8b&amp;"#)
                && html.contains("motor=unsloth"),
            "{html}"
        );
        assert!(!render(&Ok(default_outcome())).contains("est-plan"));
    }

    /// Llama 3.1 8B on a 4090 (the page's first screen): the crossing is labelled with
    /// the solver's maximum context, the reader's point is marked, every point has its
    /// values, and nothing is drawn past the plot except the naive curve, clipped.
    #[test]
    fn the_chart_marks_the_crossing_at_the_solvers_maximum_and_the_current_point() {
        let o = default_outcome();
        let max = o.eval.max_seq.unwrap();
        let html = chart(&o);
        assert!(
            html.contains(&format!("Máximo: {} tokens", group_digits(max)))
                && html.contains(&format!("data-tokens=\"{max}\"")),
            "{html}"
        );
        assert!(html.contains("class=\"est-chart-now\""), "{html}");
        assert_eq!(
            html.matches("class=\"est-chart-pt\"").count(),
            o.curve.len()
        );
        assert!(html.contains("clip-path=\"url(#est-chart-area)\""));
        assert!(html.contains("Ver los valores"));
        // The axis stops near the capacity (23,65 GiB): ticks in GiB up to 30, none in
        // TiB, although the naive curve reaches 3 TiB at 128k tokens.
        assert!(
            html.contains(">30 GiB</text>") && !html.contains("TiB</text>"),
            "{html}"
        );
    }

    #[test]
    fn ticks_are_round_numbers() {
        assert_eq!(tick_step(30.7), 10.0);
        assert_eq!(tick_step(104.0), 50.0);
        assert_eq!(tick_step(3.0), 1.0);
        assert_eq!(tick_step(0.4), 0.1);
    }

    /// The whole answer: total, bar, verdict with limits, speed, chart, the GPU table
    /// with a row per catalog card, the six categories and the notes.
    #[test]
    fn the_answer_has_every_part() {
        let o = default_outcome();
        let html = render(&Ok(o.clone()));
        let wanted = [
            format!(
                "<strong class=\"calc-big est-total\">{}</strong>",
                ByteSize(o.eval.estimate.per_gpu_bytes).binary()
            ),
            "<svg class=\"est-bar\"".into(),
            format!("data-verdict=\"{}\"", o.eval.verdict.unwrap().id()),
            "class=\"est-limits\">Lote máximo: ".into(),
            "class=\"est-speed\"".into(),
            "<figure class=\"est-chart\">".into(),
            "<caption>Desglose</caption>".into(),
        ];
        for w in &wanted {
            assert!(html.contains(w.as_str()), "{w}: {html}");
        }
        assert_eq!(
            html.matches("<tr data-verdict=").count(),
            catalog::gpus().len()
        );
        assert_eq!(html.matches("<span class=\"swatch ").count(), 6);
        let notes = &html[html.find("<ul class=\"est-notes\">").unwrap()..];
        assert_eq!(notes.matches("<li>").count(), o.eval.notes.len(), "{html}");
        assert!(html.ends_with("</ul>"));
    }

    /// A message is escaped, and so is an imported model's name wherever it shows.
    #[test]
    fn what_the_reader_brings_is_escaped() {
        assert_eq!(
            render(&Err("«<script>» & \"x\"".into())),
            "<p class=\"calc-error\" role=\"alert\">«&lt;script&gt;» &amp; &quot;x&quot;</p>"
        );
        let html = answer("modelo=%3Cimg%20src%3Dx%3E");
        assert!(html.contains("role=\"alert\""), "{html}");
        assert!(!html.contains("<img"), "{html}");
    }

    /// What the page writes is what the bundle reads: catalog model, settings, and an
    /// imported architecture with its exact weights.
    #[test]
    fn the_link_reads_back_with_an_import() {
        let mut s = Settings::web_default();
        s.set(vram::Field::Seq, "8k", Surface::Web).unwrap();
        s = s.with_task(vram::Task::Qlora);
        let query = |pairs: Vec<(&str, String)>| {
            form_urlencoded::Serializer::new(String::new())
                .extend_pairs(pairs)
                .finish()
        };
        let plain = link_pairs("qwen2.5-7b", &s, &Imported::<vram::Architecture>::default());
        assert_eq!(
            read_link(&query(plain)),
            ("qwen2.5-7b".into(), s.clone(), Imported::default())
        );
        let gpt2 = catalog::model("gpt2").unwrap().arch.clone();
        let imported = Imported {
            arch: Some((gpt2.clone(), "resumen".into())),
            weights: Some(StoredWeights {
                bytes: 99_000_000,
                params: Some(124_439_808),
                source: "gpt2.gguf".into(),
                experts: vec![vram::arch::LayerExperts::default(); 2],
                shard: None,
            }),
        };
        let (model, settings, back) = read_link(&query(link_pairs(CUSTOM, &s, &imported)));
        assert_eq!((model.as_str(), &settings), (CUSTOM, &s));
        assert_eq!(back.arch.map(|(a, _)| a), Some(gpt2));
        assert_eq!(back.weights, imported.weights);
        // The bundle's answer is the build-time answer for the same inputs.
        let first = render(&evaluate(CUSTOM, &s, &imported));
        assert_eq!(answer(&query(link_pairs(CUSTOM, &s, &imported))), first);
    }

    /// Forged links: an answer, never a panic.
    #[test]
    fn forged_links_get_an_answer() {
        for q in [
            "",
            "modelo=propio",
            "modelo=propio&arquitectura=%FF%FE",
            "pesos=99999999999999999999999&parametros=-1",
            "lote=0&contexto=1e99&gpu=%00",
        ] {
            assert!(!answer(q).is_empty(), "{q}");
        }
        assert!(!answer(&"a=b&".repeat(10_000)).is_empty());
    }
}
