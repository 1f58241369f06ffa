//! The widget's attributes: names, allowed values and defaults in one table. The widget
//! reads its element through it, sitegen writes the documentation page and the custom
//! element's `observedAttributes` from it, so the docs and the snippets cannot drift
//! from what the widget accepts. Pure, for native (sitegen, tests) and wasm32.

use vram::catalog;
use vram::estimate::{Breakdown, ModelInput, estimate};
use vram::workload::{Finetune, Mode, Workload};
use vram::{ByteSize, WeightFormat, parse_count, solve};

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
        accepts: "id de un modelo del catálogo: llama-3.1-8b, qwen2.5-7b, mistral-7b…",
        default: "llama-3.1-8b",
        help: "El modelo cuya memoria se calcula.",
    },
    Attr {
        name: "gpu",
        accepts: "id de una GPU del catálogo: rtx-4090, rtx-3060, a100-80gb, h100-sxm…",
        default: "rtx-4090",
        help: "La tarjeta con la que se compara.",
    },
    Attr {
        name: "modo",
        accepts: "inferencia, entrenamiento, lora o qlora",
        default: "inferencia",
        help: "Qué se hace con el modelo. «entrenamiento» es el ajuste completo con precisión mixta.",
    },
    Attr {
        name: "formato",
        accepts: "bf16, fp16, fp32, fp8, int8, nf4, gptq-4bit-128g, Q4_K_M, Q8_0…",
        default: "bf16",
        help: "Cómo se guardan los pesos.",
    },
    Attr {
        name: "lote",
        accepts: "entero de 1 a 1 048 576",
        default: "1",
        help: "Secuencias procesadas a la vez.",
    },
    Attr {
        name: "contexto",
        accepts: "entero de 1 a 16 777 216 (también 8k = 8000)",
        default: "4096",
        help: "Tokens por secuencia.",
    },
    Attr {
        name: "gpus",
        accepts: "entero de 1 a 1024",
        default: "1",
        help: "Cuántas GPU iguales: la inferencia reparte con paralelismo tensorial, el entrenamiento con ZeRO-3 (FSDP).",
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

/// Most GPUs the widget accepts.
const MAX_GPUS: u64 = 1024;

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

/// A widget's settings, every one valid.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub model: String,
    pub gpu: String,
    /// "inferencia", "entrenamiento", "lora" or "qlora".
    pub mode: &'static str,
    pub format: String,
    pub batch: u64,
    pub seq: u64,
    pub gpus: u32,
    pub theme: Theme,
    pub controls: bool,
}

/// An attribute the widget could not use, and why (Spanish).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub attr: &'static str,
    pub value: String,
    pub message: String,
}

impl Problem {
    /// The line shown in the widget and in the console.
    pub fn sentence(&self) -> String {
        format!(
            "{}=\"{}\": {} Se usa {}.",
            self.attr,
            vram::units::clip(&self.value),
            self.message,
            default_of(self.attr)
        )
    }
}

fn default_of(name: &str) -> &'static str {
    ATTRS
        .iter()
        .find(|a| a.name == name)
        .map_or("", |a| a.default)
}

const MODES: [&str; 4] = ["inferencia", "entrenamiento", "lora", "qlora"];

/// Reads the settings through `get` (an element's `getAttribute`). A missing attribute
/// takes its default; a bad one takes its default too and is reported.
pub fn read(get: impl Fn(&str) -> Option<String>) -> (Config, Vec<Problem>) {
    let mut problems = Vec::new();
    let mut pick = |name: &'static str, check: &dyn Fn(&str) -> Result<(), String>| {
        let value = get(name).map(|v| v.trim().to_owned());
        match value {
            Some(v) if !v.is_empty() => match check(&v) {
                Ok(()) => v,
                Err(message) => {
                    problems.push(Problem {
                        attr: name,
                        value: v,
                        message,
                    });
                    default_of(name).to_owned()
                }
            },
            _ => default_of(name).to_owned(),
        }
    };
    let model = pick("modelo", &|v| {
        catalog::model(v)
            .map(|_| ())
            .ok_or_else(|| "no es un modelo del catálogo.".to_owned())
    });
    let gpu = pick("gpu", &|v| {
        catalog::gpu(v)
            .map(|_| ())
            .ok_or_else(|| "no es una GPU del catálogo.".to_owned())
    });
    let mode = pick("modo", &|v| {
        if MODES.contains(&v) {
            Ok(())
        } else {
            Err("usa inferencia, entrenamiento, lora o qlora.".into())
        }
    });
    let format = pick("formato", &|v| {
        WeightFormat::parse(v)
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
    let count = |max: u64| {
        move |v: &str| -> Result<(), String> {
            let n = parse_count(v).map_err(|e| e.to_string())?;
            if (1..=max).contains(&n) {
                Ok(())
            } else {
                Err(format!("debe estar entre 1 y {}.", vram::group_digits(max)))
            }
        }
    };
    let batch = pick("lote", &count(vram::estimate::MAX_BATCH));
    let seq = pick("contexto", &count(vram::estimate::MAX_SEQ));
    let gpus = pick("gpus", &count(MAX_GPUS));
    let theme = pick("tema", &|v| match v {
        "claro" | "oscuro" | "auto" => Ok(()),
        _ => Err("usa claro, oscuro o auto.".into()),
    });
    let controls = pick("controles", &|v| match v {
        "si" | "sí" | "no" => Ok(()),
        _ => Err("usa si o no.".into()),
    });
    let number = |v: &str| parse_count(v).unwrap_or(1);
    let config = Config {
        model,
        gpu,
        mode: MODES
            .iter()
            .find(|m| **m == mode)
            .copied()
            .unwrap_or("inferencia"),
        format,
        batch: number(&batch),
        seq: number(&seq),
        gpus: number(&gpus) as u32,
        theme: match theme.as_str() {
            "claro" => Theme::Light,
            "oscuro" => Theme::Dark,
            _ => Theme::Auto,
        },
        controls: controls != "no",
    };
    (config, problems)
}

/// What the widget shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub model_name: String,
    pub gpu_name: String,
    pub breakdown: Breakdown,
    pub per_gpu: u64,
    pub capacity: u64,
    pub max_batch: Option<u64>,
    pub max_seq: Option<u64>,
}

impl Outcome {
    pub fn fits(&self) -> bool {
        self.per_gpu <= self.capacity
    }

    /// "Cabe: sobran 7,6 GiB." or "No cabe: faltan 3,1 GiB."
    pub fn verdict(&self) -> String {
        if self.fits() {
            format!(
                "Cabe: sobran {}.",
                ByteSize(self.capacity - self.per_gpu).binary()
            )
        } else {
            format!(
                "No cabe: faltan {}.",
                ByteSize(self.per_gpu - self.capacity).binary()
            )
        }
    }
}

/// The engine's workload for `c`, as `vramlab estimate` builds it from the same flags
/// (`--mode train --finetune … [--mixed-precision]`, `--gpus N --tp N` or `--zero 3`).
fn workload(c: &Config) -> Result<Workload, String> {
    let weights = WeightFormat::parse(&c.format).map_err(|e| e.to_string())?;
    let (mode, finetune) = match c.mode {
        "entrenamiento" => (Mode::Train, Finetune::Full),
        "lora" => (Mode::Train, Finetune::Lora),
        "qlora" => (Mode::Train, Finetune::Qlora),
        _ => (Mode::Inference, Finetune::Full),
    };
    let train = mode == Mode::Train;
    Ok(Workload {
        mode,
        finetune,
        weights,
        mixed_precision: train && finetune == Finetune::Full,
        batch: c.batch,
        seq: c.seq,
        gpus: c.gpus,
        tp: if train { 1 } else { c.gpus },
        zero: if train && c.gpus > 1 { 3 } else { 0 },
        ..Workload::default()
    })
}

pub fn compute(c: &Config) -> Result<Outcome, String> {
    let model = catalog::model(&c.model).ok_or("modelo desconocido")?;
    let gpu = catalog::gpu(&c.gpu).ok_or("GPU desconocida")?;
    let input = ModelInput::Arch {
        arch: Box::new(model.arch.clone()),
        total_params: None,
    };
    let mut w = workload(c)?;
    w.cuda_context = Some(vram::context::for_family(&gpu.family).bytes);
    let est = estimate(&input, &w).map_err(|e| e.to_string())?;
    Ok(Outcome {
        model_name: model.name.clone(),
        gpu_name: gpu.name.clone(),
        breakdown: est.breakdown,
        per_gpu: est.per_gpu_bytes,
        capacity: gpu.memory_bytes,
        max_batch: solve::max_batch(&input, &w, gpu.memory_bytes),
        max_seq: solve::max_seq(&input, &w, gpu.memory_bytes),
    })
}

/// The estimator page's query for the same settings ("Abrir en vramlab").
pub fn page_query(c: &Config) -> String {
    let mode = match c.mode {
        "entrenamiento" => "full",
        "lora" => "lora",
        "qlora" => "qlora",
        _ => "inference",
    };
    format!(
        "?modelo={}&gpu={}&modo={mode}&formato={}&lote={}&contexto={}&gpus={}",
        c.model, c.gpu, c.format, c.batch, c.seq, c.gpus
    )
}

/// The breakdown's six categories in display order.
pub fn values(b: &Breakdown) -> [u64; 6] {
    b.parts()
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
            (c.model.as_str(), c.gpu.as_str(), c.mode),
            ("llama-3.1-8b", "rtx-4090", "inferencia")
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
            (c.seq, c.gpus, c.theme, c.controls),
            (8192, 2, Theme::Dark, false)
        );
    }

    #[test]
    fn bad_attributes_fall_back_and_say_why() {
        let (c, problems) = read(attrs(&[
            ("modelo", "gpt-7"),
            ("lote", "-3"),
            ("tema", "rosa"),
        ]));
        assert_eq!(c.model, "llama-3.1-8b");
        assert_eq!(c.batch, 1);
        let lines: Vec<String> = problems.iter().map(Problem::sentence).collect();
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(
            lines[0].starts_with(
                "modelo=\"gpt-7\": no es un modelo del catálogo. Se usa llama-3.1-8b."
            ),
            "{lines:?}"
        );
        assert!(lines[1].starts_with("lote=\"-3\""), "{lines:?}");
    }

    /// The same numbers `vramlab estimate` prints for the same flags (its tests pin
    /// those against published figures).
    #[test]
    fn matches_the_engine() {
        let (c, _) = read(attrs(&[]));
        let o = compute(&c).unwrap();
        assert_eq!(o.breakdown.weights, 16_060_522_496);
        assert!(o.fits());
        assert!(o.verdict().starts_with("Cabe: sobran"));
        let (c, _) = read(attrs(&[
            ("modelo", "llama-3.1-70b"),
            ("gpus", "4"),
            ("gpu", "h100-sxm"),
        ]));
        let four = compute(&c).unwrap();
        assert!(four.breakdown.weights < 36 * ByteSize::GIB);
        assert!(page_query(&c).contains("gpus=4"));
    }

    #[test]
    fn every_attribute_is_documented_once() {
        let mut names: Vec<&str> = ATTRS.iter().map(|a| a.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ATTRS.len());
        // Every default is itself valid.
        let defaults: Vec<(&str, &str)> = ATTRS.iter().map(|a| (a.name, a.default)).collect();
        assert!(read(attrs(&defaults)).1.is_empty());
    }
}
