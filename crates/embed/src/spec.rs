//! The widget's attributes. The workload's settings (`gpu`, `modo`, `formato`, `lote`,
//! `contexto`, `gpus`, `zero`, …) are `vram::settings::FIELDS`, read by the same
//! function as the estimator page's links; [`ATTRS`] adds the widget's own (the model,
//! a custom model, theme, controls). The widget reads its element through both,
//! sitegen writes the documentation page and the custom element's
//! `observedAttributes` from [`docs`], so the docs and the snippets cannot drift from
//! what the widget accepts. Pure, for native (sitegen, tests) and wasm32.

use vram::catalog;
use vram::import::StoredWeights;
use vram::settings::FIELDS;
use vram::{Architecture, Settings, Surface};

/// One attribute of `<vram-estimador>`.
#[derive(Debug)]
pub struct Attr {
    pub name: &'static str,
    /// What it accepts, in Spanish, for the docs table.
    pub accepts: &'static str,
    pub default: &'static str,
    /// What it does, in Spanish.
    pub help: &'static str,
}

/// Every attribute, in the order the docs list them.
pub const ATTRS: &[Attr] = &[
    Attr {
        name: "modelo",
        accepts: "id de un modelo del catálogo: llama-3.1-8b, qwen2.5-7b, mistral-7b-v0.3…",
        default: "llama-3.1-8b",
        help: "El modelo cuya memoria se calcula.",
    },
    Attr {
        name: "hf",
        accepts: "id de un repositorio del Hub de Hugging Face (organización/modelo) o su URL",
        default: "",
        help: "Importa el modelo del Hub al abrir la página: su config.json y el tamaño exacto de sus pesos. Sustituye a «modelo» y es lo único que hace que el widget descargue algo más.",
    },
    Attr {
        name: "hub",
        accepts: "dirección https de un Hub compatible, como HF_ENDPOINT",
        default: vram::hub::DEFAULT_HUB,
        help: "De dónde importa «hf» (un espejo, como https://hf-mirror.com, o un Hub propio). Ha de ser https y público: una dirección de la máquina o la red local de quien visita la página (127.0.0.1, localhost, 192.168.…, *.local) o una http se rechaza, para que tu página no haga que los navegadores de tus visitantes pidan nada dentro de su red; solo vale cuando la propia página se sirve desde esa red, para probar un espejo local.",
    },
    Attr {
        name: "arquitectura",
        accepts: "la arquitectura que lleva un enlace del estimador (texto a1:…)",
        default: "",
        help: "Un modelo propio sin red: copia el valor del parámetro «arquitectura» del enlace del estimador, o el código de «Insértalo en tu web». Se usa cuando no hay «hf».",
    },
    Attr {
        name: "pesos",
        accepts: "entero: bytes exactos de los pesos",
        default: "",
        help: "En inferencia sustituye al cálculo por formato, como el tamaño de un .safetensors o un .gguf.",
    },
    Attr {
        name: "parametros",
        accepts: "entero: parámetros exactos",
        default: "",
        help: "Acompaña a «pesos» cuando el archivo los cuenta.",
    },
    Attr {
        name: "nombre",
        accepts: "texto de hasta 80 caracteres",
        default: "",
        help: "Cómo se llama en el widget un modelo de «hf» o «arquitectura» (por defecto, su id o su familia).",
    },
    Attr {
        name: "tema",
        accepts: "claro, oscuro o auto",
        default: "auto",
        help: "Colores del widget; «auto» sigue la preferencia del sistema del lector.",
    },
    Attr {
        name: "controles",
        accepts: "si o no",
        default: "si",
        help: "Muestra los selectores para que el lector cambie modelo, GPU, lote y contexto.",
    },
];

/// One attribute as the docs show it.
#[derive(Debug, Clone, PartialEq)]
pub struct Doc {
    pub name: &'static str,
    pub accepts: String,
    pub default: String,
    pub help: &'static str,
}

/// Every attribute the widget reads, in the order the docs list them: the model and
/// custom-model ones, the settings, then theme and controls.
pub fn docs() -> Vec<Doc> {
    let own = |a: &Attr| Doc {
        name: a.name,
        accepts: a.accepts.to_owned(),
        default: a.default.to_owned(),
        help: a.help,
    };
    let base = Settings::web_default();
    let (model, look): (Vec<&Attr>, Vec<&Attr>) = ATTRS
        .iter()
        .partition(|a| !matches!(a.name, "tema" | "controles"));
    model
        .into_iter()
        .map(own)
        .chain(FIELDS.iter().map(|f| Doc {
            name: f.key,
            accepts: f.field.accepts(Surface::Web),
            default: base.text(f.field, Surface::Web).unwrap_or_default(),
            help: f.field.help(),
        }))
        .chain(look.into_iter().map(own))
        .collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Theme {
    Light,
    Dark,
    Auto,
}

impl Theme {
    pub fn id(self) -> &'static str {
        match self {
            Theme::Light => "claro",
            Theme::Dark => "oscuro",
            Theme::Auto => "auto",
        }
    }
}

/// A model that is not in the catalog.
#[derive(Clone, Debug, PartialEq)]
pub enum Custom {
    /// A repository to import from the Hub at [`Config::hub`].
    Hub { repo: String },
    /// An architecture from a link or the `arquitectura` attribute.
    Shared(Box<Architecture>),
}

/// A widget's settings, every one valid.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The catalog model (used when there is no custom one, or it failed to import).
    pub model: String,
    pub custom: Option<Custom>,
    /// Whether the custom model is the one shown (the reader may pick a catalog one).
    pub use_custom: bool,
    /// Exact weights from the `pesos` attribute; they win over a Hub import's.
    pub weights: Option<StoredWeights>,
    /// The custom model's name, from `nombre`.
    pub name: Option<String>,
    /// The Hub this widget imports from (a checked base URL, `hub`).
    pub hub: String,
    /// GPU, task, format, batch, context… as the estimator page reads them.
    pub settings: Settings,
    pub theme: Theme,
    pub controls: bool,
}

/// An attribute the widget could not use, and why (Spanish).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub attr: &'static str,
    pub value: String,
    pub message: String,
    /// The value used instead ("" when the attribute is left out).
    pub kept: String,
}

impl Problem {
    /// The line shown in the widget and in the console.
    pub fn sentence(&self) -> String {
        let then = match self.kept.as_str() {
            "" => "Se omite.".to_owned(),
            d => format!("Se usa {d}."),
        };
        let message = self.message.trim_end_matches('.');
        format!(
            "{}=\"{}\": {message}. {then}",
            self.attr,
            vram::units::clip(&self.value),
        )
    }
}

/// Longest `nombre` kept.
const MAX_NAME: usize = 80;

impl Config {
    /// The Hub import this widget wants, if it shows one: (base, repo).
    pub fn hub_import(&self) -> Option<(String, String)> {
        match (&self.custom, self.use_custom) {
            (Some(Custom::Hub { repo }), true) => Some((self.hub.clone(), repo.clone())),
            _ => None,
        }
    }

    /// The custom model's name: `nombre`, else the Hub id or the architecture's family.
    pub fn custom_name(&self) -> Option<String> {
        let fallback = match self.custom.as_ref()? {
            Custom::Hub { repo } => repo.clone(),
            Custom::Shared(a) => format!("Modelo propio ({})", a.family),
        };
        Some(self.name.clone().unwrap_or(fallback))
    }

    /// Replaces the custom model with Hub repository `text` as a reader typed it.
    pub fn set_hub_repo(&mut self, text: &str) -> Result<(), String> {
        let repo = vram::hub::parse_repo(text).map_err(|e| e.to_string())?;
        self.custom = Some(Custom::Hub {
            repo: repo.to_string(),
        });
        self.use_custom = true;
        // The name and exact bytes were the previous model's.
        self.name = None;
        self.weights = None;
        Ok(())
    }
}

fn default_of(name: &str) -> &'static str {
    ATTRS
        .iter()
        .find(|a| a.name == name)
        .map_or("", |a| a.default)
}

/// The custom model, exact weights, name and Hub from `hf`, `arquitectura`, `pesos`,
/// `parametros`, `nombre` and `hub`. A bad one is reported and left out.
fn custom(
    get: &impl Fn(&str) -> Option<String>,
    problems: &mut Vec<Problem>,
) -> (
    Option<Custom>,
    Option<StoredWeights>,
    Option<String>,
    String,
) {
    let value = |name: &str| {
        get(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let mut report = |attr: &'static str, value: String, message: String| {
        problems.push(Problem {
            attr,
            value,
            message,
            kept: default_of(attr).to_owned(),
        })
    };
    let base = match value("hub").map(|b| vram::hub::parse_base(&b).map_err(|e| (b, e))) {
        Some(Ok(b)) => b,
        Some(Err((b, e))) => {
            report("hub", b, e.to_string());
            vram::hub::DEFAULT_HUB.to_owned()
        }
        None => vram::hub::DEFAULT_HUB.to_owned(),
    };
    let hub = value("hf").and_then(|id| match vram::hub::parse_repo(&id) {
        Ok(repo) => Some(Custom::Hub {
            repo: repo.to_string(),
        }),
        Err(e) => {
            report("hf", id, e.to_string());
            None
        }
    });
    let shared = || {
        value("arquitectura").and_then(|text| {
            if text.starts_with('{') {
                report(
                    "arquitectura",
                    text,
                    "está en el formato JSON de versiones anteriores; copia de nuevo el código de «Insértalo en tu web» del estimador.".into(),
                );
                return None;
            }
            match vram::share::decode(&text) {
                Ok(a) => Some(Custom::Shared(Box::new(a))),
                Err(e) => {
                    report("arquitectura", text, e.to_string());
                    None
                }
            }
        })
    };
    let custom = hub.or_else(shared);
    let name = value("nombre").map(|n| n.chars().take(MAX_NAME).collect::<String>());
    let weights = value("pesos").and_then(|bytes| {
        let params = value("parametros");
        let source = name.as_deref().or(match &custom {
            Some(Custom::Hub { repo }) => Some(repo.as_str()),
            _ => None,
        });
        match vram::share::weights(&bytes, params.as_deref(), source.or(Some("«pesos»"))) {
            Ok(w) => Some(w),
            Err(e) => {
                problems.push(Problem {
                    attr: "pesos",
                    value: bytes,
                    message: e,
                    kept: String::new(),
                });
                None
            }
        }
    });
    (custom, weights, name, base)
}

/// The attribute `name` if it passes `check`; else its default, and a problem.
fn pick(
    get: &impl Fn(&str) -> Option<String>,
    problems: &mut Vec<Problem>,
    name: &'static str,
    check: &dyn Fn(&str) -> Result<(), String>,
) -> String {
    match get(name).map(|v| v.trim().to_owned()) {
        Some(v) if !v.is_empty() => match check(&v) {
            Ok(()) => v,
            Err(message) => {
                problems.push(Problem {
                    attr: name,
                    value: v,
                    message,
                    kept: default_of(name).to_owned(),
                });
                default_of(name).to_owned()
            }
        },
        _ => default_of(name).to_owned(),
    }
}

/// Reads the settings through `get` (an element's `getAttribute`). A missing attribute
/// takes its default; a bad one takes its default too and is reported.
pub fn read(get: impl Fn(&str) -> Option<String>) -> (Config, Vec<Problem>) {
    let mut problems = Vec::new();
    let model = pick(&get, &mut problems, "modelo", &|v| {
        catalog::model(v)
            .map(|_| ())
            .ok_or_else(|| "no es un modelo del catálogo.".to_owned())
    });
    // The workload's settings, read as the estimator page reads its links.
    let (settings, errors) = Settings::read(&Settings::web_default(), &get);
    for e in errors {
        let spec = e.field.spec();
        problems.push(Problem {
            attr: spec.key,
            value: get(spec.key).unwrap_or_default(),
            message: e.to_string(),
            kept: settings.text(e.field, Surface::Web).unwrap_or_default(),
        });
    }
    let theme = pick(&get, &mut problems, "tema", &|v| match v {
        "claro" | "oscuro" | "auto" => Ok(()),
        _ => Err("usa claro, oscuro o auto.".into()),
    });
    let controls = pick(&get, &mut problems, "controles", &|v| match v {
        "si" | "sí" | "no" => Ok(()),
        _ => Err("usa si o no.".into()),
    });
    let (custom, weights, name, hub) = custom(&get, &mut problems);
    let config = Config {
        model,
        use_custom: custom.is_some(),
        custom,
        weights,
        name,
        hub,
        settings,
        theme: match theme.as_str() {
            "claro" => Theme::Light,
            "oscuro" => Theme::Dark,
            _ => Theme::Auto,
        },
        controls: controls != "no",
    };
    (config, problems)
}

/// The widget's `hub` policy. The page that embeds the widget chooses where its
/// visitors' browsers fetch from, so a Hub on the visitor's own machine or private
/// network (`http://127.0.0.1:…`, `192.168.…`, `*.local`), or any plain-http Hub,
/// would make every visitor's browser send requests there. It is refused, and the
/// public Hub used, unless the page itself is served from such an address: a developer
/// trying a mirror on their machine. (The site's own pages keep the reader's own choice:
/// there the reader types the address.)
pub fn confine_hub(config: &mut Config, problems: &mut Vec<Problem>, page_host: &str) {
    if config.hub == vram::hub::DEFAULT_HUB || is_private_host(page_host) {
        return;
    }
    let host = host_of(&config.hub);
    let why = if is_private_host(&host) {
        "es una dirección de la máquina o de la red local del visitante, y el widget no hace que los navegadores de quienes visitan una web pidan nada ahí; solo vale si la propia página se sirve desde esa red."
    } else if !config.hub.starts_with("https://") {
        "no es https: el widget solo importa de un Hub por https, como https://huggingface.co o https://hf-mirror.com."
    } else {
        return;
    };
    problems.push(Problem {
        attr: "hub",
        value: config.hub.clone(),
        message: why.into(),
        kept: vram::hub::DEFAULT_HUB.into(),
    });
    config.hub = vram::hub::DEFAULT_HUB.into();
}

/// The host of a base URL (`scheme://host[:port]/…`), lowercased, IPv6 in brackets.
fn host_of(base: &str) -> String {
    let rest = base.split_once("://").map_or(base, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if authority.starts_with('[') {
        authority.split_inclusive(']').next().unwrap_or(authority)
    } else {
        authority.split(':').next().unwrap_or(authority)
    };
    host.to_ascii_lowercase()
}

/// Whether `host` names this machine or a private network: `localhost`, `*.localhost`,
/// `*.local`, loopback, RFC 1918, link-local, unspecified, IPv6 unique-local.
fn is_private_host(host: &str) -> bool {
    use std::net::{Ipv4Addr, Ipv6Addr};
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") || host.ends_with(".local") {
        return true;
    }
    if let Ok(v4) = host.parse::<Ipv4Addr>() {
        return v4.is_loopback() || v4.is_private() || v4.is_link_local() || v4.is_unspecified();
    }
    let inner = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(v6) = inner.parse::<Ipv6Addr>() {
        let first = v6.segments()[0];
        return v6.is_loopback()
            || v6.is_unspecified()
            || (first & 0xfe00) == 0xfc00
            || (first & 0xffc0) == 0xfe80
            || v6
                .to_ipv4_mapped()
                .is_some_and(|v4| is_private_host(&v4.to_string()));
    }
    false
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::collections::HashMap;

    fn attrs(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn defaults_and_values() {
        let (c, problems) = read(attrs(&[]));
        assert!(problems.is_empty());
        assert_eq!(
            (
                c.model.as_str(),
                c.settings.gpu.map(|g| g.id.as_str()),
                c.settings.task
            ),
            ("llama-3.1-8b", Some("rtx-4090"), vram::Task::Inference)
        );
        let (c, problems) = read(attrs(&[
            ("modelo", "qwen2.5-7b"),
            ("modo", "qlora"),
            ("contexto", "8192"),
            ("gpus", "2"),
            ("tema", "oscuro"),
            ("controles", "no"),
        ]));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            (c.settings.seq, c.settings.gpus, c.theme, c.controls),
            (Some(8192), 2, Theme::Dark, false)
        );
        // QLoRA's defaults, as on the page: NF4 with double quantisation.
        assert_eq!(c.settings.format.id(), "nf4-dq");
    }

    #[test]
    fn bad_attributes_fall_back_and_say_why() {
        let (c, problems) = read(attrs(&[
            ("modelo", "gpt-7"),
            ("lote", "-3"),
            ("tema", "rosa"),
        ]));
        assert_eq!(c.model, "llama-3.1-8b");
        assert_eq!(c.settings.batch, 1);
        let lines: Vec<String> = problems.iter().map(Problem::sentence).collect();
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(
            lines[0].starts_with(
                "modelo=\"gpt-7\": no es un modelo del catálogo. Se usa llama-3.1-8b."
            ),
            "{lines:?}"
        );
        assert_eq!(
            lines[1],
            "lote=\"-3\": El lote debe ser un entero entre 1 y 1\u{202f}048\u{202f}576; «-3» no lo es. Se usa 1."
        );
    }

    #[test]
    fn custom_models_come_from_hf_or_arquitectura() {
        let (c, problems) = read(attrs(&[
            ("hf", "https://huggingface.co/Qwen/Qwen2.5-0.5B/tree/main"),
            ("hub", "http://127.0.0.1:9999/"),
            ("pesos", "988097536"),
            ("parametros", "494032768"),
        ]));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            c.hub_import(),
            Some(("http://127.0.0.1:9999".into(), "Qwen/Qwen2.5-0.5B".into()))
        );
        let w = c.weights.unwrap();
        assert_eq!((w.bytes, w.params), (988_097_536, Some(494_032_768)));
        assert_eq!(w.source, "Qwen/Qwen2.5-0.5B");

        let gpt2 = vram::share::encode(&catalog::model("gpt2").unwrap().arch);
        let (c, _) = read(attrs(&[("arquitectura", &gpt2), ("nombre", "Mi GPT")]));
        assert!(matches!(c.custom, Some(Custom::Shared(_))) && c.use_custom);
        assert_eq!(c.hub_import(), None);
        // `hf` wins over `arquitectura`.
        let (c, _) = read(attrs(&[("arquitectura", &gpt2), ("hf", "gpt2")]));
        assert!(c.hub_import().is_some());
    }

    #[test]
    fn bad_custom_attributes_are_left_out_and_said() {
        let (c, problems) = read(attrs(&[
            ("hf", "no es un id"),
            ("hub", "ftp://x"),
            ("arquitectura", "{\"layers\":0}"),
            ("pesos", "-1"),
        ]));
        assert_eq!((c.custom.as_ref(), c.weights.as_ref()), (None, None));
        let lines: Vec<String> = problems.iter().map(Problem::sentence).collect();
        assert_eq!(lines.len(), 4, "{lines:?}");
        for (line, attr) in lines.iter().zip(["hub", "hf", "arquitectura", "pesos"]) {
            assert!(line.starts_with(&format!("{attr}=")), "{line}");
        }
        assert!(
            lines[0].ends_with("Se usa https://huggingface.co."),
            "{lines:?}"
        );
        assert!(lines[1].ends_with("Se omite."), "{lines:?}");
        let mut c = c;
        assert!(c.set_hub_repo("no vale!").is_err());
        c.set_hub_repo("org/model").unwrap();
        assert_eq!(c.hub_import().unwrap().1, "org/model");
    }

    /// The ids the docs table offers as examples are real.
    #[test]
    fn documented_examples_are_catalog_ids() {
        let docs = docs();
        for (attr, known) in [
            (
                "modelo",
                (|id| catalog::model(id).is_some()) as fn(&str) -> bool,
            ),
            ("gpu", |id| catalog::gpu(id).is_some()),
        ] {
            let accepts = &docs.iter().find(|a| a.name == attr).unwrap().accepts;
            // "…: a, b, c…" or "… (a, b, c…)".
            let list = accepts
                .split_once(": ")
                .or_else(|| accepts.split_once('('))
                .unwrap()
                .1
                .trim_end_matches(')')
                .trim_end_matches('…');
            for id in list.split(", ") {
                assert!(known(id), "{attr}: {id}");
            }
        }
    }

    #[test]
    fn every_attribute_is_documented_once() {
        let docs = docs();
        let mut names: Vec<&str> = docs.iter().map(|a| a.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), docs.len());
        assert!(docs.len() > ATTRS.len() + 20, "{names:?}");
        // Every default is itself valid.
        let defaults: Vec<(&str, &str)> =
            docs.iter().map(|a| (a.name, a.default.as_str())).collect();
        let (c, problems) = read(attrs(&defaults));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(c, read(attrs(&[])).0);
    }
}
