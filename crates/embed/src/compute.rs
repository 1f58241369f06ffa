//! What a widget shows for its settings: the same `vram::evaluate` the CLI and the
//! estimator page run, on a catalog model or a custom one (a Hub import, once it has
//! arrived, or a shared architecture), and the estimator page's link for the same
//! settings. Pure.

use vram::estimate::ModelInput;
use vram::import::{Imported, StoredWeights};
use vram::settings::MODEL_KEY;
use vram::{Architecture, Evaluation, Model, Settings, Verdict, catalog};

use crate::spec::{Config, Custom};

/// The estimator page's `modelo` for a custom model (`ui`'s `CUSTOM`).
const PAGE_CUSTOM: &str = "propio";

/// Where a widget's Hub import stands.
#[derive(Clone, Debug, PartialEq)]
pub enum HubState {
    Loading,
    Ready(Box<Imported>),
    Failed(String),
}

/// What the widget shows.
#[derive(Clone, Debug, PartialEq)]
pub enum Shown {
    /// The Hub import is on its way: this sentence says what is being fetched.
    Loading(String),
    Ready(Box<Outcome>),
}

/// One evaluation, ready to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub model_name: String,
    pub gpu_name: String,
    pub eval: Evaluation,
    /// A Hub import that failed, as the sentence shown above the result (which then
    /// falls back to the catalog model).
    pub notice: Option<String>,
}

impl Outcome {
    pub fn fits(&self) -> bool {
        self.eval.verdict.is_some_and(Verdict::fits)
    }

    pub fn per_gpu(&self) -> u64 {
        self.eval.estimate.per_gpu_bytes
    }

    pub fn capacity(&self) -> u64 {
        self.eval.capacity.unwrap_or(0)
    }

    /// "Llama 3.1 8B en 2 × GeForce RTX 4090 · QLoRA".
    pub fn title(&self, s: &Settings) -> String {
        let gpus = if s.gpus > 1 {
            format!("{} × {}", s.gpus, self.gpu_name)
        } else {
            self.gpu_name.clone()
        };
        let task = vram::settings::entry(vram::settings::TASKS, s.task).label;
        format!("{} en {gpus} · {task}", self.model_name)
    }

    /// "Lote máximo: 4 (1 con margen) · contexto máximo: …", or why nothing fits.
    pub fn limits(&self) -> String {
        // Where vLLM refuses to start, the verdict says why; no limit applies.
        if self.eval.verdict.is_some_and(|v| !v.starts()) {
            return String::new();
        }
        match (self.eval.max_batch, self.eval.max_seq) {
            (Some(b), Some(s)) => format!(
                "Lote máximo: {} · contexto máximo: {}.",
                vram::with_margin(b, self.eval.margin.batch, ""),
                vram::with_margin(s, self.eval.margin.seq, " tokens")
            ),
            _ => "Ni con lote 1 cabe esta configuración.".into(),
        }
    }

    /// "Cabe con margen: sobran …", "Al límite: …", "No cabe: faltan 3,1 GiB.", or the
    /// serving verdict.
    pub fn verdict(&self) -> String {
        self.eval
            .verdict_text(None, vram::Surface::Web)
            .unwrap_or_default()
    }
}

/// The model to estimate: architecture, name, exact weights.
struct Chosen {
    arch: Architecture,
    name: String,
    weights: Option<StoredWeights>,
}

fn catalog_model(c: &Config) -> Result<Chosen, String> {
    let m = catalog::model(&c.model).ok_or("modelo desconocido")?;
    Ok(Chosen {
        arch: m.arch.clone(),
        name: m.name.clone(),
        // Exact bytes given with a custom model are that model's, not this one's.
        weights: c.weights.clone().filter(|_| c.custom.is_none()),
    })
}

/// What `c` shows, given how its Hub import stands (`None` before it starts).
pub fn compute(c: &Config, hub: Option<&HubState>) -> Result<Shown, String> {
    let custom = c.custom.as_ref().filter(|_| c.use_custom);
    let (chosen, notice) = match (custom, hub) {
        (None, _) => (catalog_model(c)?, None),
        (Some(Custom::Shared(a)), _) => {
            let chosen = Chosen {
                arch: (**a).clone(),
                name: c.custom_name().unwrap_or_default(),
                weights: c.weights.clone(),
            };
            (chosen, None)
        }
        (Some(Custom::Hub { repo }), None | Some(HubState::Loading)) => {
            let host = c.hub.split("://").nth(1).unwrap_or(&c.hub);
            return Ok(Shown::Loading(format!("Importando {repo} de {host}…")));
        }
        (Some(Custom::Hub { repo }), Some(HubState::Ready(i))) => match &i.arch {
            Some((arch, _)) => {
                let chosen = Chosen {
                    arch: arch.clone(),
                    name: c.custom_name().unwrap_or_default(),
                    weights: c.weights.clone().or_else(|| i.weights.clone()),
                };
                (chosen, None)
            }
            None => failed(c, repo, "el repositorio no trae config.json.")?,
        },
        (Some(Custom::Hub { repo }), Some(HubState::Failed(e))) => failed(c, repo, e)?,
    };
    let gpu = c.settings.gpu.ok_or("GPU desconocida")?;
    let model = Model {
        input: ModelInput::Arch {
            total_params: chosen.weights.as_ref().and_then(|w| w.params),
            arch: Box::new(chosen.arch),
        },
        stored: chosen.weights,
        tensors: None,
    };
    let eval = vram::evaluate(&model, &c.settings).map_err(|e| e.to_string())?;
    Ok(Shown::Ready(Box::new(Outcome {
        model_name: chosen.name,
        gpu_name: gpu.name.clone(),
        eval,
        notice,
    })))
}

/// A failed Hub import: the catalog model, with the reason above it.
fn failed(c: &Config, repo: &str, why: &str) -> Result<(Chosen, Option<String>), String> {
    let chosen = catalog_model(c)?;
    let notice = format!("hf=\"{repo}\": {why} Se usa {}.", chosen.name);
    Ok((chosen, Some(notice)))
}

/// The estimator page's query for the same settings ("Abrir en vramlab"), written by
/// the page's own function: a custom model travels as the page's links carry it
/// (`hf`, or `arquitectura` with the exact weights); after a failed import
/// (`fell_back`), the catalog model shown.
pub fn page_query(c: &Config, fell_back: bool) -> String {
    let custom = c.custom.as_ref().filter(|_| c.use_custom && !fell_back);
    let model = if custom.is_some() {
        PAGE_CUSTOM
    } else {
        &c.model
    };
    let mut tail: Vec<(&str, String)> = Vec::new();
    match custom {
        Some(Custom::Hub { repo }) => tail.push(("hf", repo.clone())),
        Some(Custom::Shared(a)) => tail.push((vram::share::ARCH_KEY, vram::share::encode(a))),
        None => {}
    }
    if let Some(w) = c
        .weights
        .as_ref()
        .filter(|_| c.custom.is_none() || custom.is_some())
    {
        tail.push((vram::share::WEIGHTS_KEY, w.bytes.to_string()));
        if let Some(p) = w.params {
            tail.push((vram::share::PARAMS_KEY, p.to_string()));
        }
        tail.push((vram::share::SOURCE_KEY, w.source.clone()));
    }
    let tail: Vec<(&str, &str)> = tail.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let query = c
        .settings
        .to_query(&Settings::web_default(), &[(MODEL_KEY, model)], &tail);
    format!("?{query}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::spec::read;

    fn config(pairs: &[(&str, &str)]) -> Config {
        let (c, problems) = read(|k| {
            pairs
                .iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| (*v).to_owned())
        });
        assert!(problems.is_empty(), "{problems:?}");
        c
    }

    fn ready(shown: Result<Shown, String>) -> Outcome {
        match shown.unwrap() {
            Shown::Ready(o) => *o,
            Shown::Loading(s) => panic!("still loading: {s}"),
        }
    }

    fn gpt2() -> Architecture {
        catalog::model("gpt2").unwrap().arch.clone()
    }

    /// The same numbers `vramlab estimate` prints for the same flags (its tests pin
    /// those against published figures).
    #[test]
    fn matches_the_engine() {
        let o = ready(compute(&config(&[]), None));
        assert_eq!(o.eval.estimate.breakdown.weights, 16_060_522_496);
        assert!(o.fits());
        assert!(
            o.verdict().starts_with("Cabe con margen: sobran"),
            "{}",
            o.verdict()
        );
        let c = config(&[
            ("modelo", "llama-3.1-70b"),
            ("gpus", "4"),
            ("gpu", "h100-sxm"),
        ]);
        let four = ready(compute(&c, None));
        assert!(four.eval.estimate.breakdown.weights < 36 * vram::ByteSize::GIB);
        assert_eq!(
            page_query(&c, false),
            "?modelo=llama-3.1-70b&gpu=h100-sxm&modo=inferencia&formato=auto&lote=1&contexto=4k&gpus=4"
        );
    }

    #[test]
    fn a_hub_model_waits_then_uses_what_arrived() {
        let c = config(&[
            ("hf", "openai-community/gpt2"),
            ("hub", "http://127.0.0.1:9"),
        ]);
        let Shown::Loading(s) = compute(&c, None).unwrap() else {
            panic!("a Hub model starts loading");
        };
        assert_eq!(s, "Importando openai-community/gpt2 de 127.0.0.1:9…");
        let arrived = Imported {
            arch: Some((gpt2(), String::new())),
            weights: None,
        };
        let o = ready(compute(
            &c,
            Some(&HubState::Ready(Box::new(arrived.clone()))),
        ));
        assert_eq!(o.eval.estimate.breakdown.weights, 2 * 124_439_808);
        assert_eq!(o.model_name, "openai-community/gpt2");
        // The index's exact bytes replace the formula in inference...
        let exact = Imported {
            weights: Some(StoredWeights {
                bytes: 548_105_171,
                params: Some(137_022_720),
                source: "model.safetensors".into(),
                experts: Vec::new(),
                shard: None,
            }),
            ..arrived.clone()
        };
        let o = ready(compute(&c, Some(&HubState::Ready(Box::new(exact.clone())))));
        assert_eq!(o.eval.estimate.breakdown.weights, 548_105_171);
        // ...and the `pesos` attribute wins over the index.
        let c2 = config(&[("hf", "gpt2"), ("pesos", "99000000")]);
        let o = ready(compute(&c2, Some(&HubState::Ready(Box::new(exact)))));
        assert_eq!(o.eval.estimate.breakdown.weights, 99_000_000);
        // A reader who picks a catalog model leaves the import aside.
        let mut c3 = c.clone();
        c3.use_custom = false;
        assert_eq!(
            ready(compute(&c3, Some(&HubState::Ready(Box::new(arrived))))).model_name,
            "Llama 3.1 8B"
        );
    }

    #[test]
    fn a_failed_import_falls_back_with_the_reason() {
        let c = config(&[("hf", "org/gated"), ("modelo", "mistral-7b-v0.3")]);
        let why = "org/gated es privado o restringido.";
        let o = ready(compute(&c, Some(&HubState::Failed(why.into()))));
        assert_eq!(o.model_name, "Mistral 7B v0.3");
        assert_eq!(
            o.notice.as_deref(),
            Some("hf=\"org/gated\": org/gated es privado o restringido. Se usa Mistral 7B v0.3.")
        );
        let empty = HubState::Ready(Box::default());
        let o = ready(compute(&c, Some(&empty)));
        assert!(o.notice.unwrap().contains("config.json"));
    }

    #[test]
    fn a_shared_architecture_needs_no_network_and_links_back() {
        let text = vram::share::encode(&gpt2());
        let c = config(&[
            ("arquitectura", &text),
            ("pesos", "99000000"),
            ("nombre", "Mi GPT & co"),
        ]);
        let o = ready(compute(&c, None));
        assert_eq!(
            (o.model_name.as_str(), o.eval.estimate.breakdown.weights),
            ("Mi GPT & co", 99_000_000)
        );
        let query = page_query(&c, false);
        let pairs: Vec<(String, String)> = form_urlencoded::parse(&query.as_bytes()[1..])
            .into_owned()
            .collect();
        let get = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("modelo"), Some(PAGE_CUSTOM));
        assert_eq!(
            vram::share::decode(get("arquitectura").unwrap()).unwrap(),
            gpt2()
        );
        assert_eq!(
            (get("pesos"), get("origen")),
            (Some("99000000"), Some("Mi GPT & co"))
        );
        let hub = page_query(&config(&[("hf", "org/m")]), false);
        assert!(
            hub.contains("modelo=propio") && hub.contains("&hf=org%2Fm"),
            "{hub}"
        );
        // Training ignores exact weights: the format decides what training holds.
        let train = config(&[
            ("arquitectura", &text),
            ("pesos", "99000000"),
            ("modo", "lora"),
        ]);
        assert_ne!(
            ready(compute(&train, None)).eval.estimate.breakdown.weights,
            99_000_000
        );
    }

    #[test]
    fn a_custom_models_exact_bytes_stay_with_it() {
        // The bytes the estimator's embed code gives an imported model...
        let c = config(&[("hf", "org/m"), ("pesos", "99000000"), ("modelo", "gpt2")]);
        let failed = HubState::Failed("sin red".into());
        // ...are not the fallback's, nor a catalog model's the reader picks,
        let o = ready(compute(&c, Some(&failed)));
        assert_eq!(o.eval.estimate.breakdown.weights, 2 * 124_439_808);
        let mut picked = c.clone();
        picked.use_custom = false;
        assert_eq!(
            ready(compute(&picked, None))
                .eval
                .estimate
                .breakdown
                .weights,
            2 * 124_439_808
        );
        // ...nor a Hub model the reader types in.
        let mut typed = c.clone();
        typed.set_hub_repo("otra/cosa").unwrap();
        assert_eq!(typed.weights, None);
        // The link after a failure opens the model shown, without the bytes.
        let q = page_query(&c, true);
        assert!(
            q.starts_with("?modelo=gpt2&") && !q.contains("hf=") && !q.contains("pesos="),
            "{q}"
        );
        // A catalog model keeps bytes given for it.
        let own = config(&[("modelo", "gpt2"), ("pesos", "99000000")]);
        assert_eq!(
            ready(compute(&own, None)).eval.estimate.breakdown.weights,
            99_000_000
        );
        assert!(page_query(&own, false).contains("pesos=99000000"));
        // Bytes no file of this model could have are refused, with both figures.
        let empty = config(&[("modelo", "gpt2"), ("pesos", "1000000")]);
        let e = compute(&empty, None).err().unwrap_or_default();
        assert!(
            e.contains("no son los de este modelo") && e.contains("124"),
            "{e}"
        );
        // Every setting travels to the page, ZeRO included.
        let train = config(&[("modo", "lora"), ("gpus", "4"), ("zero", "3")]);
        assert!(page_query(&train, false).contains("&gpus=4&zero=3"));
    }

    /// Values a host page may write: some valid for some attribute, most not.
    fn attribute_value() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let valid = vec![
            "llama-3.1-70b",
            "rtx-3060",
            "h100-sxm",
            "lora",
            "entrenamiento",
            "Q4_K_M",
            "8",
            "8k",
            "4",
            "oscuro",
            "no",
            "org/model",
            "http://127.0.0.1:1",
            "1000000",
        ];
        let shared = vram::share::encode(&catalog::model("qwen3-30b-a3b").unwrap().arch);
        prop_oneof![
            proptest::sample::select(valid).prop_map(str::to_owned),
            Just(shared),
            ".{0,40}",
        ]
    }

    proptest::proptest! {
        /// Whatever a host page writes in the attributes, the widget reads a valid
        /// configuration, computes without panicking, and links back with a query
        /// whose settings are the configuration's.
        #[test]
        fn any_attributes_compute_or_explain(
            values in proptest::collection::vec(attribute_value(), crate::spec::docs().len()),
            failed in proptest::bool::ANY,
            fell_back in proptest::bool::ANY,
        ) {
            let (c, problems) = read(|name| {
                crate::spec::docs()
                    .iter()
                    .position(|a| a.name == name)
                    .and_then(|i| values.get(i).cloned())
            });
            for p in &problems {
                proptest::prop_assert!(p.sentence().starts_with(p.attr));
            }
            let state = if failed {
                HubState::Failed("sin red".into())
            } else {
                HubState::Ready(Box::new(Imported { arch: Some((gpt2(), String::new())), weights: None }))
            };
            let _ = compute(&c, Some(&state));
            let _ = compute(&c, None);
            let query = page_query(&c, fell_back);
            let pairs: Vec<(String, String)> =
                form_urlencoded::parse(&query.as_bytes()[1..]).into_owned().collect();
            let get = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
            // The page reads back exactly the widget's settings.
            let (page, errors, _) = Settings::from_query(&Settings::web_default(), &query);
            proptest::prop_assert!(errors.is_empty(), "{:?}", errors);
            proptest::prop_assert_eq!(&page, &c.settings);
            proptest::prop_assert_eq!(get("lote"), c.settings.text(vram::Field::Batch, vram::Surface::Web));
            if let Some(text) = get("arquitectura") {
                proptest::prop_assert!(vram::share::decode(&text).is_ok());
            }
        }
    }
}
