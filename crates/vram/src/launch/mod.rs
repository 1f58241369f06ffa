//! The command that runs what was estimated: the estimate's settings as the flags of
//! the runtime that runs them, each with the reason in one line, so the answer is
//! something to copy rather than numbers to translate. One wording for the CLI (text,
//! `launch` in the JSON, `--emit`) and the estimator page.
//!
//! Only what the estimate assumed is written: a flag appears when its setting differs
//! from the runtime's own default or when it is the number the answer is about (the
//! context, the share of the GPU). The flag names are those of the releases the
//! estimator models (vLLM 0.21 or later, `vllm serve --help`; llama.cpp's `llama-server
//! --help` since `--fit` became the default, late 2025; Ollama's environment variables,
//! `envconfig/config.go`). The runtimes whose launch is a script (transformers, TRL,
//! Unsloth, torchtune) get it from [`script`]; AutoAWQ, a deprecated library, gets none.

mod script;

use serde::Serialize;

use crate::cuda_graphs::CudaGraphs;
use crate::evaluate::Evaluation;
use crate::runtime::Runtime;
use crate::settings::{BASIS_POINTS, CPU_MOE_ALL, GPU_LAYERS_ALL, Settings};
use crate::units::group_digits;
use crate::workload::{Attention, KvDtype};

/// How the model is named on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelArg {
    /// A Hub repository (`Qwen/Qwen2.5-7B-Instruct`), a file, or a placeholder.
    pub text: String,
    /// Whether the reader must put their own file or tag there.
    pub placeholder: bool,
    /// What to put there, for a placeholder.
    pub hint: &'static str,
}

impl ModelArg {
    pub fn named(text: &str) -> ModelArg {
        ModelArg {
            text: text.to_owned(),
            placeholder: false,
            hint: "",
        }
    }

    pub fn placeholder(text: &str, hint: &'static str) -> ModelArg {
        ModelArg {
            text: text.to_owned(),
            placeholder: true,
            hint,
        }
    }
}

/// One flag or environment variable, its value and why it is there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Arg {
    /// `--max-model-len`, `-ngl`, `OLLAMA_CONTEXT_LENGTH`…
    pub flag: String,
    /// `None` for a switch (`--enforce-eager`).
    pub value: Option<String>,
    pub why: String,
}

impl Arg {
    /// The flag with its value as the reasons list shows it: `--flag value`,
    /// `KEY=value`, `keyword=value`; a value written over several lines (a
    /// `BitsAndBytesConfig(…)`, DeepSpeed's dict) is left to the command itself.
    pub fn shown(&self) -> String {
        match &self.value {
            Some(v) if v.contains('\n') => self.flag.clone(),
            Some(v) if self.flag.starts_with('-') => format!("{} {v}", self.flag),
            Some(v) => format!("{}={v}", self.flag),
            None => self.flag.clone(),
        }
    }
}

/// The command for one runtime.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Launch {
    /// The runtime and the release whose flags these are.
    pub runtime: &'static str,
    /// The command as it is typed, one flag per line after the first; for a script
    /// runtime, the Python file.
    pub command: String,
    /// `sh` for a command line, `python` for a script.
    pub language: &'static str,
    /// Environment variables, then flags, in the order of `command`.
    pub args: Vec<Arg>,
    /// What the reader must replace (the model file or tag), and with what.
    pub placeholder: Option<Arg>,
    /// False when the estimate does not fit: the command would run out of memory.
    pub fits: bool,
}

/// The model as `runtime` is told it: the Hub repository or the local file when one is
/// known, else a placeholder the reader replaces (llama.cpp needs a `.gguf`, Ollama a
/// tag of its library or of a `Modelfile`, vLLM a repository or a folder).
pub fn model_arg(runtime: Runtime, hub: Option<&str>, file: Option<&str>) -> ModelArg {
    match runtime {
        Runtime::LlamaCpp => match file.filter(|f| f.to_ascii_lowercase().ends_with(".gguf")) {
            Some(f) => ModelArg::named(f),
            None => ModelArg::placeholder("MODELO.gguf", "la ruta de tu archivo .gguf"),
        },
        Runtime::Ollama => ModelArg::placeholder(
            "MODELO",
            "el nombre del modelo en Ollama (el de ollama list o de la biblioteca)",
        ),
        _ => match (hub, file) {
            (Some(repo), _) => ModelArg::named(repo),
            // A config.json names the folder vLLM loads.
            (None, Some(f)) if f.ends_with("config.json") => {
                ModelArg::named(f.rsplit_once(['/', '\\']).map_or(".", |(dir, _)| dir))
            }
            (None, Some(f)) => ModelArg::named(f),
            (None, None) => ModelArg::placeholder(
                "ORGANIZACION/MODELO",
                "el repositorio del Hub o la carpeta del modelo",
            ),
        },
    }
}

fn arg(flag: &str, value: impl Into<Option<String>>, why: impl Into<String>) -> Arg {
    Arg {
        flag: flag.to_owned(),
        value: value.into(),
        why: why.into(),
    }
}

/// The launch command (or script) for `s` as evaluated in `e`; `None` for AutoAWQ.
pub fn launch(model: &ModelArg, s: &Settings, e: &Evaluation) -> Option<Launch> {
    let fits = e.verdict.is_none_or(|v| v.fits());
    if let Some(script) = script::script(model, s) {
        return Some(Launch {
            runtime: script.runtime,
            command: script.text,
            language: script.language,
            args: script.args,
            placeholder: script.placeholder.or_else(|| {
                model
                    .placeholder
                    .then(|| arg(&model.text, None, model.hint))
            }),
            fits,
        });
    }
    command(model, s, e)
}

/// The command line of an inference engine (vLLM, llama.cpp, Ollama) for `s` as
/// evaluated in `e`; `None` for training and the script runtimes. What [`launch`] gives
/// them, without linking the scripts: the widget shows this one.
pub fn command(model: &ModelArg, s: &Settings, e: &Evaluation) -> Option<Launch> {
    let fits = e.verdict.is_none_or(|v| v.fits());
    if s.task.is_training() {
        return None;
    }
    let (runtime, program, env, args, tail) = match s.runtime {
        Runtime::Vllm => (
            "vLLM 0.21 o posterior",
            "vllm serve",
            Vec::new(),
            vllm(s, e),
            None,
        ),
        Runtime::LlamaCpp => (
            "llama-server de llama.cpp, de finales de 2025 o posterior (con --fit)",
            "llama-server",
            Vec::new(),
            llama_cpp(model, s),
            None,
        ),
        Runtime::Ollama => (
            "Ollama 0.30 o posterior",
            "ollama serve",
            ollama(s),
            Vec::new(),
            Some(format!("ollama run {}", model.text)),
        ),
        _ => return None,
    };
    let mut command = String::new();
    for a in &env {
        command.push_str(&format!("{}={} ", a.flag, a.value.as_deref().unwrap_or("")));
    }
    command.push_str(program);
    if s.runtime == Runtime::Vllm {
        command.push(' ');
        command.push_str(&model.text);
    }
    for a in &args {
        command.push_str(" \\\n  ");
        command.push_str(&a.flag);
        if let Some(v) = &a.value {
            command.push(' ');
            command.push_str(v);
        }
    }
    if let Some(tail) = tail {
        command.push('\n');
        command.push_str(&tail);
    }
    Some(Launch {
        runtime,
        command,
        language: "sh",
        args: env.into_iter().chain(args).collect(),
        placeholder: model
            .placeholder
            .then(|| arg(&model.text, None, model.hint)),
        fits,
    })
}

/// Tokens one request holds: the prompt and what it generates.
fn request_tokens(s: &Settings) -> Option<u64> {
    s.seq.map(|seq| seq.saturating_add(s.new_tokens))
}

fn vllm(s: &Settings, e: &Evaluation) -> Vec<Arg> {
    let mut out = Vec::new();
    // Without it vLLM opens the model's whole declared context, which `auto` assumed.
    if let Some(len) = request_tokens(s) {
        out.push(arg(
            "--max-model-len",
            len.to_string(),
            match s.new_tokens {
                0 => format!("el contexto de una petición: {} tokens", group_digits(len)),
                new => format!(
                    "el contexto de una petición: {} tokens de entrada y {} generados",
                    group_digits(s.seq.unwrap_or(0)),
                    group_digits(new)
                ),
            },
        ));
    }
    let share = format!(
        "{}.{:04}",
        s.utilization / BASIS_POINTS,
        s.utilization % BASIS_POINTS
    );
    let share = share.trim_end_matches('0').trim_end_matches('.').to_owned();
    out.push(arg(
        "--gpu-memory-utilization",
        share,
        match &e.serving {
            Some(p) => format!(
                "la parte de la GPU que vLLM toma: {} para pesos, activaciones y caché KV",
                crate::units::ByteSize(p.budget_bytes).binary()
            ),
            None => "la parte de la GPU que vLLM toma para pesos, activaciones y caché KV".into(),
        },
    ));
    let tp = e.workload.tp;
    if tp > 1 {
        out.push(arg(
            "--tensor-parallel-size",
            tp.to_string(),
            format!("cada capa repartida entre {tp} GPU"),
        ));
    }
    if s.pp > 1 {
        out.push(arg(
            "--pipeline-parallel-size",
            s.pp.to_string(),
            format!("las capas en {} tramos, uno por grupo de GPU", s.pp),
        ));
    }
    match s.kv_dtype {
        KvDtype::Fp8 => out.push(arg(
            "--kv-cache-dtype",
            "fp8".to_owned(),
            "la caché KV en 8 bits: la mitad de bytes por token",
        )),
        KvDtype::Auto | KvDtype::Fp16 | KvDtype::Int8 | KvDtype::Int4 => {}
    }
    if s.cuda_graphs == CudaGraphs::Off {
        out.push(arg(
            "--enforce-eager",
            None,
            "sin grafos CUDA: ni su memoria ni su velocidad",
        ));
    }
    if let Some(n) = s.max_seqs {
        out.push(arg(
            "--max-num-seqs",
            n.to_string(),
            "las secuencias de un paso, como en el cálculo",
        ));
    }
    if let Some(n) = s.batched_tokens {
        out.push(arg(
            "--max-num-batched-tokens",
            n.to_string(),
            "los tokens de un paso (y del perfil de arranque), como en el cálculo",
        ));
    }
    out
}

fn llama_cpp(model: &ModelArg, s: &Settings) -> Vec<Arg> {
    let mut out = vec![arg("-m", model.text.clone(), "el archivo .gguf del modelo")];
    if let Some(len) = request_tokens(s) {
        let slots = s.batch.max(1);
        out.push(arg(
            "-c",
            len.saturating_mul(slots).to_string(),
            if slots > 1 {
                format!(
                    "las celdas de la caché KV: {slots} peticiones de {} tokens",
                    group_digits(len)
                )
            } else {
                format!("las celdas de la caché KV: {} tokens", group_digits(len))
            },
        ));
    }
    if s.batch > 1 {
        out.push(arg(
            "-np",
            s.batch.to_string(),
            format!("{} peticiones a la vez", s.batch),
        ));
    }
    match s.gpu_layers {
        Some(GPU_LAYERS_ALL) => out.push(arg(
            "-ngl",
            "all".to_owned(),
            "todas las capas en la GPU, quepan o no (sin el ajuste automático)",
        )),
        Some(n) => out.push(arg(
            "-ngl",
            n.to_string(),
            format!("{n} capas en la GPU; el resto, en la RAM de la CPU"),
        )),
        None => {}
    }
    match s.cpu_moe {
        0 => {}
        CPU_MOE_ALL => out.push(arg(
            "--cpu-moe",
            None,
            "los expertos de todas las capas en la RAM de la CPU",
        )),
        n => out.push(arg(
            "--n-cpu-moe",
            n.to_string(),
            format!("los expertos de las primeras {n} capas en la RAM de la CPU"),
        )),
    }
    // The estimator's llama.cpp default is llama-server's own `-fa auto` (on where the
    // backend has it): only a choice that differs is written.
    let default = Settings::defaults(s.task, s.runtime);
    match s.attention {
        _ if s.attention == default.attention => {}
        Attention::Flash => out.push(arg(
            "-fa",
            "on".to_owned(),
            "FlashAttention: la atención por bloques, sin la matriz N × N",
        )),
        Attention::Eager => out.push(arg(
            "-fa",
            "off".to_owned(),
            "sin FlashAttention, como se calculó",
        )),
        Attention::Sdpa => {}
    }
    let cache = ggml_cache(s.kv_dtype);
    if let Some(t) = cache {
        out.push(arg(
            "-ctk",
            t.to_owned(),
            format!("las claves de la caché en {t}"),
        ));
        out.push(arg(
            "-ctv",
            t.to_owned(),
            format!("los valores de la caché en {t}"),
        ));
    }
    if s.ubatch != default.ubatch {
        out.push(arg(
            "-ub",
            s.ubatch.to_string(),
            format!(
                "el micro-lote: el búfer de cálculo se mide para {} tokens",
                s.ubatch
            ),
        ));
        if u64::from(s.ubatch) > LLAMA_BATCH {
            out.push(arg(
                "-b",
                s.ubatch.to_string(),
                "el lote lógico no puede ser menor que el micro-lote",
            ));
        }
    }
    if s.mmproj {
        out.push(arg(
            "--mmproj",
            "mmproj.gguf".to_owned(),
            "el proyector de visión del modelo (su archivo mmproj)",
        ));
    }
    out
}

/// ggml's name for a quantised KV cache (`-ctk`/`-ctv`, `OLLAMA_KV_CACHE_TYPE`); none for
/// the 16-bit default, and ggml has no FP8 cache.
fn ggml_cache(kv: KvDtype) -> Option<&'static str> {
    match kv {
        KvDtype::Int8 => Some("q8_0"),
        KvDtype::Int4 => Some("q4_0"),
        KvDtype::Auto | KvDtype::Fp16 | KvDtype::Fp8 => None,
    }
}

/// llama.cpp's default logical batch (`-b`, `n_batch`).
const LLAMA_BATCH: u64 = 2048;

fn ollama(s: &Settings) -> Vec<Arg> {
    let mut out = Vec::new();
    if let Some(len) = request_tokens(s) {
        out.push(arg(
            "OLLAMA_CONTEXT_LENGTH",
            len.to_string(),
            format!("el contexto de cada petición: {} tokens", group_digits(len)),
        ));
    }
    if s.batch > 1 {
        out.push(arg(
            "OLLAMA_NUM_PARALLEL",
            s.batch.to_string(),
            format!("{} peticiones a la vez, cada una con su contexto", s.batch),
        ));
    }
    let cache = ggml_cache(s.kv_dtype);
    // Ollama asks llama-server for `--flash-attn auto` since 0.30, the estimator's
    // default; a quantised cache needs it on for certain.
    let default = Settings::defaults(s.task, s.runtime);
    if cache.is_some() {
        out.push(arg(
            "OLLAMA_FLASH_ATTENTION",
            "1".to_owned(),
            "FlashAttention, que Ollama exige para cuantizar la caché",
        ));
    } else if s.attention == Attention::Eager && default.attention != Attention::Eager {
        out.push(arg(
            "OLLAMA_FLASH_ATTENTION",
            "0".to_owned(),
            "sin FlashAttention, como se calculó",
        ));
    }
    if let Some(t) = cache {
        out.push(arg(
            "OLLAMA_KV_CACHE_TYPE",
            t.to_owned(),
            format!("la caché KV en {t}"),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::model;
    use crate::estimate::ModelInput;
    use crate::evaluate::Model;

    fn try_evaluated(id: &str, flags: &[(&str, &str)]) -> Option<(Settings, Evaluation)> {
        let m = Model::new(ModelInput::Arch {
            arch: Box::new(model(id)?.arch.clone()),
            total_params: None,
        });
        let s = crate::settings::from_cli_flags(flags).ok()?;
        let e = crate::evaluate(&m, &s).ok()?;
        Some((s, e))
    }

    fn evaluated(id: &str, flags: &[(&str, &str)]) -> (Settings, Evaluation) {
        try_evaluated(id, flags).unwrap_or_else(|| panic!("{id} {flags:?}"))
    }

    /// Each runtime's command carries exactly the settings that differ from its
    /// defaults, and the context and share the answer is about.
    #[test]
    fn each_runtime_gets_its_own_flags() {
        type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);
        let cases: &[Case] = &[
            (
                "qwen2.5-7b",
                &[
                    ("runtime", "vllm"),
                    ("gpu", "l4"),
                    ("seq", "32768"),
                    ("new-tokens", "0"),
                ],
                "vllm serve Qwen/Qwen2.5-7B \\\n  --max-model-len 32768 \\\n  --gpu-memory-utilization 0.9",
            ),
            (
                "llama-3.1-70b",
                &[
                    ("runtime", "vllm"),
                    ("gpu", "h100-sxm"),
                    ("gpus", "4"),
                    ("seq", "8192"),
                    ("new-tokens", "0"),
                    ("kv-dtype", "fp8"),
                    ("gpu-memory-utilization", "0.85"),
                    ("cuda-graphs", "off"),
                ],
                "vllm serve meta-llama/Llama-3.1-70B \\\n  --max-model-len 8192 \\\n  --gpu-memory-utilization 0.85 \\\n  --tensor-parallel-size 4 \\\n  --kv-cache-dtype fp8 \\\n  --enforce-eager",
            ),
            (
                "qwen3-30b-a3b",
                &[
                    ("runtime", "llama.cpp"),
                    ("gpu", "rtx-3060"),
                    ("seq", "16384"),
                    ("new-tokens", "0"),
                    ("batch", "2"),
                    ("n-cpu-moe", "20"),
                    ("kv-dtype", "int8"),
                    ("attention", "eager"),
                ],
                "llama-server \\\n  -m MODELO.gguf \\\n  -c 32768 \\\n  -np 2 \\\n  --n-cpu-moe 20 \\\n  -fa off \\\n  -ctk q8_0 \\\n  -ctv q8_0",
            ),
            (
                "llama-3.1-8b",
                &[
                    ("runtime", "ollama"),
                    ("gpu", "rtx-4090"),
                    ("seq", "32768"),
                    ("new-tokens", "0"),
                    ("kv-dtype", "int8"),
                ],
                "OLLAMA_CONTEXT_LENGTH=32768 OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE=q8_0 ollama serve\nollama run MODELO",
            ),
        ];
        for (id, flags, want) in cases {
            let (s, e) = evaluated(id, flags);
            let name = match s.runtime {
                Runtime::Vllm => ModelArg::named(model(id).map_or("", |m| m.hf_repo.as_str())),
                Runtime::LlamaCpp => ModelArg::placeholder("MODELO.gguf", "x"),
                _ => ModelArg::placeholder("MODELO", "x"),
            };
            let l = launch(&name, &s, &e).unwrap_or_else(|| panic!("{id}: sin orden"));
            assert_eq!(l.command, *want, "{id}");
            assert!(l.args.iter().all(|a| !a.why.is_empty()), "{id}");
        }
    }

    /// Every flag the module may write, as each runtime's own help lists it: vLLM 0.21's
    /// `vllm serve --help`, llama-server's `--help` (late 2025: `-ngl` takes a number,
    /// `auto` or `all`; `-fa` takes `on`, `off` or `auto`; `-ctk`/`-ctv` f32, f16, bf16,
    /// q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1), Ollama's environment (`envconfig`). An
    /// empty list of values takes a number (or, for files, any text).
    const KNOWN: Table = &[
        (Runtime::Vllm, "--max-model-len", &[]),
        (Runtime::Vllm, "--gpu-memory-utilization", &[]),
        (Runtime::Vllm, "--tensor-parallel-size", &[]),
        (Runtime::Vllm, "--pipeline-parallel-size", &[]),
        (
            Runtime::Vllm,
            "--kv-cache-dtype",
            &["auto", "fp8", "fp8_e4m3", "fp8_e5m2"],
        ),
        (Runtime::Vllm, "--enforce-eager", &[]),
        (Runtime::Vllm, "--max-num-seqs", &[]),
        (Runtime::Vllm, "--max-num-batched-tokens", &[]),
        (Runtime::LlamaCpp, "-m", &[]),
        (Runtime::LlamaCpp, "-c", &[]),
        (Runtime::LlamaCpp, "-np", &[]),
        (Runtime::LlamaCpp, "-ngl", &[]),
        (Runtime::LlamaCpp, "--cpu-moe", &[]),
        (Runtime::LlamaCpp, "--n-cpu-moe", &[]),
        (Runtime::LlamaCpp, "-fa", &["on", "off", "auto"]),
        (
            Runtime::LlamaCpp,
            "-ctk",
            &[
                "f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1",
            ],
        ),
        (
            Runtime::LlamaCpp,
            "-ctv",
            &[
                "f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1",
            ],
        ),
        (Runtime::LlamaCpp, "-ub", &[]),
        (Runtime::LlamaCpp, "-b", &[]),
        (Runtime::LlamaCpp, "--mmproj", &[]),
        (Runtime::Ollama, "OLLAMA_CONTEXT_LENGTH", &[]),
        (Runtime::Ollama, "OLLAMA_NUM_PARALLEL", &[]),
        (Runtime::Ollama, "OLLAMA_FLASH_ATTENTION", &["0", "1"]),
        (
            Runtime::Ollama,
            "OLLAMA_KV_CACHE_TYPE",
            &["f16", "q8_0", "q4_0"],
        ),
    ];

    /// A table of the flags or keywords a runtime takes, each with the values it takes
    /// (an empty list: any).
    pub(super) type Table = &'static [(Runtime, &'static str, &'static [&'static str])];

    /// `a` is in `table` for `rt`, with a value the runtime takes.
    pub(super) fn assert_known(table: Table, rt: Runtime, a: &Arg, case: &str) {
        let known = table
            .iter()
            .find(|(r, f, _)| *r == rt && *f == a.flag)
            .unwrap_or_else(|| panic!("{case}: {} no está en la tabla", a.flag));
        if let (Some(v), false) = (&a.value, known.2.is_empty()) {
            assert!(known.2.contains(&v.as_str()), "{case}: {} {v}", a.flag);
        }
    }

    /// Across runtimes, cache types, attention, slots, offload and graphs, every
    /// emitted flag is one its runtime takes, with a value it takes.
    #[test]
    fn every_emitted_flag_is_in_the_runtimes_table() {
        let mut seen = 0;
        for runtime in ["vllm", "llama.cpp", "ollama"] {
            for kv in ["auto", "fp8", "int8", "int4"] {
                for attention in ["sdpa", "flash", "eager"] {
                    for (batch, extra) in [
                        ("1", ("gpu-layers", "auto")),
                        ("4", ("gpus", "2")),
                        ("2", ("ubatch", "4096")),
                        ("1", ("cuda-graphs", "off")),
                        ("1", ("gpu-layers", "20")),
                    ] {
                        let mut flags = vec![
                            ("runtime", runtime),
                            ("gpu", "rtx-4090"),
                            ("seq", "8192"),
                            ("kv-dtype", kv),
                            ("attention", attention),
                            ("batch", batch),
                        ];
                        let llama = runtime != "vllm";
                        if (extra.0 != "cuda-graphs" || !llama)
                            && (extra.0 != "gpu-layers" || llama)
                            && (extra.0 != "ubatch" || runtime == "llama.cpp")
                        {
                            flags.push(extra);
                        }
                        if runtime == "llama.cpp" {
                            flags.push(("n-cpu-moe", "4"));
                        }
                        let id = if runtime == "llama.cpp" {
                            "qwen3-30b-a3b"
                        } else {
                            "llama-3.1-8b"
                        };
                        let Some((s, e)) = try_evaluated(id, &flags) else {
                            continue;
                        };
                        let rt = s.runtime;
                        let Some(l) = launch(&model_arg(rt, Some("org/m"), None), &s, &e) else {
                            panic!("{flags:?}: sin orden");
                        };
                        for a in &l.args {
                            assert_known(KNOWN, rt, a, &format!("{flags:?}"));
                            assert!(l.command.contains(&a.flag), "{}", l.command);
                            seen += 1;
                        }
                    }
                }
            }
        }
        assert!(seen > 200, "{seen}");
    }

    /// Training gets a Python script, and a run that does not fit says so.
    #[test]
    fn training_gets_a_script_and_a_miss_is_marked() {
        let (s, e) = evaluated("llama-3.1-8b", &[("mode", "qlora"), ("gpu", "rtx-3060")]);
        let l = launch(&ModelArg::placeholder("ORG/M", "el repositorio"), &s, &e).unwrap();
        assert_eq!((l.language, l.fits), ("python", false));
        assert!(l.command.contains("MODELO = \"ORG/M\""), "{}", l.command);
        assert_eq!(l.placeholder.map(|p| p.flag), Some("ORG/M".to_owned()));
        let (s, e) = evaluated(
            "llama-3.1-70b",
            &[("runtime", "vllm"), ("gpu", "rtx-4090"), ("seq", "8192")],
        );
        let l = launch(
            &ModelArg::named("meta-llama/Llama-3.1-70B-Instruct"),
            &s,
            &e,
        );
        assert_eq!(l.map(|l| l.fits), Some(false));
    }
}
