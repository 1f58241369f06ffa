//! A plan when it does not fit: the levers the chosen task and runtime really have,
//! each tried on its own and then stacked in the order of what they cost, every one
//! evaluated by the same engine as the answer (`crate::evaluate`), so each candidate's
//! bytes, verdict and launch command are as exact as the answer's. The cheapest that
//! fits with margin comes first; those that do not are shown after, with what they
//! saved, because knowing that a lever is not enough is also an answer.
//!
//! The levers and their order of cost (what the reader gives up):
//! - training: gradient checkpointing (about a third more compute), a fused loss
//!   (nothing but a dependency: Liger, TRL's `chunked_nll`, Unsloth), 8-bit AdamW
//!   (bitsandbytes; quality on par), a smaller batch with gradient accumulation (the
//!   same effective batch, more steps), Unsloth for LoRA/QLoRA (another library), LoRA instead of a full fine-tune and QLoRA
//!   instead of LoRA (quality), shorter sequences (data), more GPUs with ZeRO-3
//!   (hardware);
//! - vLLM: an FP8 KV cache, no CUDA graphs, a shorter `--max-model-len`, FP8 weights,
//!   tensor parallelism on more GPUs, llama.cpp with a 4-bit GGUF instead;
//! - llama.cpp and Ollama: a q8_0 KV cache, the experts of the first layers in CPU RAM
//!   (`--n-cpu-moe`), Q3_K_M instead of Q4_K_M, fewer layers on the GPU (`-ngl`), a
//!   shorter context.

use serde::Serialize;

use crate::evaluate::{Evaluation, Model};
use crate::launch::{Launch, launch, model_arg};
use crate::runtime::{Runtime, Task};
use crate::settings::{Field, Settings, Surface};
use crate::workload::{KvDtype, Loss, Optimizer};

/// Most candidates shown.
pub const MAX_CANDIDATES: usize = 8;
/// Most GPUs a candidate asks for (one node).
const MAX_GPUS: u32 = 16;

/// One way to make it fit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Candidate {
    /// What changes, in Spanish.
    pub change: String,
    /// What it costs, in one line.
    pub cost: String,
    /// The settings it changes, as `vramlab estimate` flags.
    pub flags: Vec<String>,
    pub per_gpu_bytes: u64,
    /// Bytes per GPU below the answer's (0 when it saves nothing).
    pub saved_bytes: u64,
    /// Whether it fits even at the band's high end.
    pub fits: bool,
    /// The settings with the change, for a link or a form that applies it.
    #[serde(skip)]
    pub settings: Settings,
    /// The verdict's id, as the CLI's JSON writes it.
    pub verdict: Option<&'static str>,
    /// Inference: generated tokens per second per sequence at the roofline
    /// (`speed::SpeedHint`), so a lever's cost in speed is a number beside the
    /// answer's own.
    pub decode_tokens_per_second: Option<f64>,
    /// A server (vLLM): the sequences of the request's length its KV cache holds at
    /// once. What a server candidate is measured by: vLLM takes its share of the card
    /// whatever the request, so `per_gpu_bytes` (one request's needs) is not it.
    pub sequences: Option<u64>,
    /// A server: the tokens its KV cache holds.
    pub kv_tokens: Option<u64>,
    pub launch: Option<Launch>,
}

impl Candidate {
    /// The candidate in one sentence, as every surface lists it: what it takes, whether
    /// it fits, what it costs and, for inference, its speed beside `now` ("1 secuencia de
    /// 34 635 tokens a la vez, cabe con margen. Cuesta: peticiones más cortas.").
    pub fn summary(&self, now: Option<f64>) -> String {
        let speed = self
            .speed_text(now)
            .map_or_else(String::new, |t| format!("; {t}"));
        format!(
            "{}, {}. Cuesta: {}{speed}.",
            self.size_text(),
            if self.fits {
                "cabe con margen"
            } else {
                "aún no cabe con margen"
            },
            self.cost
        )
    }

    /// What it takes, as the answer says it: "3 secuencias de 34 635 tokens a la vez"
    /// for a server (or how far its KV cache falls short of one request), else "9,50
    /// GiB por GPU".
    pub fn size_text(&self) -> String {
        match self.sequences {
            // Not one request: how far the cache falls short.
            Some(0) => match (self.kv_tokens, self.settings.seq) {
                (Some(kv), Some(seq)) => format!(
                    "la caché KV guarda {} tokens y una petición pide {}",
                    crate::group_digits(kv),
                    crate::group_digits(seq.saturating_add(self.settings.new_tokens))
                ),
                _ => "ni una petición a la vez".to_owned(),
            },
            Some(n) => {
                let tokens = self
                    .settings
                    .seq
                    .map(|t| t.saturating_add(self.settings.new_tokens));
                match tokens {
                    Some(t) => format!(
                        "{} {} de {} tokens a la vez",
                        crate::group_digits(n),
                        if n == 1 { "secuencia" } else { "secuencias" },
                        crate::group_digits(t)
                    ),
                    None => format!("{} secuencias a la vez", crate::group_digits(n)),
                }
            }
            None => format!("{} por GPU", crate::ByteSize(self.per_gpu_bytes).binary()),
        }
    }

    /// Its generation speed beside the answer's (`now`), when inference has one and it
    /// differs by a token per second or more: "generación ≤ 35 tokens/s por secuencia
    /// (ahora ≤ 61)".
    pub fn speed_text(&self, now: Option<f64>) -> Option<String> {
        let tps = self.decode_tokens_per_second?;
        let now = now?;
        if (tps - now).abs() < 1.0 {
            return None;
        }
        Some(format!(
            "generación ≤ {tps:.0} tokens/s por secuencia (ahora ≤ {now:.0})"
        ))
    }
}

/// One lever: the settings it changes and what it gives up.
struct Lever {
    changes: Vec<(Field, String)>,
    change: String,
    cost: &'static str,
}

fn lever(changes: &[(Field, &str)], change: impl Into<String>, cost: &'static str) -> Lever {
    Lever {
        changes: changes.iter().map(|&(f, v)| (f, v.to_owned())).collect(),
        change: change.into(),
        cost,
    }
}

/// `n` GPUs: ZeRO-3/FSDP for training, tensor parallelism for vLLM.
fn gpu_lever(s: &Settings, n: u32) -> Lever {
    if s.task.is_training() {
        lever(
            &[(Field::Gpus, &n.to_string()), (Field::Zero, "3")],
            format!("{n} GPU con ZeRO-3 / FSDP"),
            "más hardware, y comunicación entre GPU en cada paso",
        )
    } else {
        lever(
            &[(Field::Gpus, &n.to_string())],
            format!("{n} GPU con paralelismo tensorial (--tensor-parallel-size {n})"),
            "más hardware",
        )
    }
}

/// The levers of `s`'s task and runtime that are not already pulled, cheapest first.
fn levers(model: &Model, s: &Settings, e: &Evaluation) -> Vec<Lever> {
    let mut out = Vec::new();
    let shorter = e.margin.seq.or(e.max_seq).filter(|&n| n >= 256);
    if s.task.is_training() {
        if !s.checkpointing {
            out.push(lever(
                &[(Field::Checkpointing, "true")],
                "Gradient checkpointing",
                "un tercio más de cálculo: recalcula las activaciones en el paso hacia atrás",
            ));
        }
        if s.loss != Loss::Fused && matches!(s.runtime, Runtime::Transformers) {
            out.push(lever(
                &[(Field::Loss, "fused")],
                "Pérdida fusionada por trozos (el SFTTrainer de TRL 1.16, que la usa por defecto, o Liger Kernel)",
                "nada en calidad ni en velocidad; una dependencia más",
            ));
        }
        if s.optimizer == Optimizer::Adamw {
            out.push(lever(
                &[(Field::Optimizer, "adamw8bit")],
                "AdamW de 8 bits (bitsandbytes, optim=\"adamw_8bit\")",
                "calidad a la par en la práctica; necesita bitsandbytes",
            ));
        }
        if s.batch > 1 {
            let fit = e
                .margin
                .batch
                .or(e.max_batch)
                .unwrap_or(1)
                .clamp(1, s.batch - 1);
            let steps = s.batch.div_ceil(fit);
            out.push(lever(
                &[(Field::Batch, &fit.to_string())],
                format!(
                    "Lote de {fit} con acumulación de gradientes de {steps} (gradient_accumulation_steps={steps})"
                ),
                "el mismo lote efectivo en más pasos: más lento",
            ));
        }
        if s.runtime == Runtime::Transformers && matches!(s.task, Task::Lora | Task::Qlora) {
            out.push(lever(
                &[(Field::Runtime, "unsloth")],
                "Unsloth en lugar de transformers + PEFT",
                "otra biblioteca: pérdida fusionada y activaciones de checkpointing en la RAM de la CPU",
            ));
        }
        match s.task {
            Task::Full => out.push(lever(
                &[(Field::Task, "lora")],
                "LoRA en lugar del ajuste completo",
                "entrena adaptadores, no todos los pesos: suele quedarse cerca en calidad",
            )),
            Task::Lora => out.push(lever(
                &[(Field::Task, "qlora")],
                "QLoRA: el modelo base en NF4",
                "algo más lento y una pequeña pérdida de calidad del modelo base",
            )),
            _ => {}
        }
        if let (Some(n), Some(seq)) = (shorter, s.seq)
            && n < seq
        {
            out.push(lever(
                &[(Field::Seq, &n.to_string())],
                format!("Secuencias de {} tokens", crate::units::group_digits(n)),
                "ejemplos más cortos: recórtalos o pártelos",
            ));
        }
        // ZeRO-3 shards weights, gradients and states: a full fine-tune's; an adapter's
        // are small and the activations stay whole on each GPU.
        if let Some(n) = e.min_gpus.filter(|&n| n > s.gpus && s.task == Task::Full) {
            out.push(gpu_lever(s, n));
        }
        return out;
    }
    match s.runtime {
        Runtime::Vllm => {
            if s.kv_dtype == KvDtype::Auto {
                out.push(lever(
                    &[(Field::KvDtype, "fp8")],
                    "Caché KV en FP8 (--kv-cache-dtype fp8)",
                    "la mitad de bytes por token; la calidad apenas cambia",
                ));
            }
            if s.cuda_graphs != crate::cuda_graphs::CudaGraphs::Off {
                out.push(lever(
                    &[(Field::CudaGraphs, "off")],
                    "Sin grafos CUDA (--enforce-eager)",
                    "la generación va más lenta, sobre todo con pocas secuencias",
                ));
            }
            if let Some(n) = shorter.filter(|&n| s.seq.is_none_or(|seq| n < seq)) {
                out.push(lever(
                    &[(Field::Seq, &n.to_string())],
                    format!(
                        "Contexto de {} tokens (--max-model-len)",
                        crate::units::group_digits(n)
                    ),
                    "peticiones más cortas",
                ));
            }
            let sixteen = matches!(e.workload.weights.id().as_str(), "bf16" | "fp16" | "fp32");
            if model.arch().is_some() && sixteen {
                out.push(lever(
                    &[(Field::Format, "fp8")],
                    "Pesos en FP8 (un checkpoint FP8, o --quantization fp8)",
                    "la mitad de memoria de pesos; una pequeña pérdida de calidad",
                ));
            }
            if let Some(n) = e.min_gpus.filter(|&n| n > s.gpus) {
                out.push(gpu_lever(s, n));
            }
            out.push(lever(
                &[(Field::Runtime, "llama.cpp")],
                "llama.cpp con un GGUF Q4_K_M",
                "otro motor: pesos en 4 bits y, si no caben, capas en la RAM (--fit); menos peticiones a la vez que vLLM",
            ));
        }
        Runtime::LlamaCpp | Runtime::Ollama => {
            if matches!(s.kv_dtype, KvDtype::Auto | KvDtype::Fp16) {
                out.push(lever(
                    &[(Field::KvDtype, "int8")],
                    "Caché KV en q8_0",
                    "la mitad de bytes por token; la calidad apenas cambia",
                ));
            }
            if s.runtime == Runtime::LlamaCpp
                && let Some(m) = e.min_cpu_moe.filter(|m| m.fit > s.cpu_moe.min(m.layers))
            {
                out.push(lever(
                    &[(Field::CpuMoe, &m.fit.to_string())],
                    format!(
                        "Expertos de las primeras {} capas en la RAM (--n-cpu-moe {})",
                        m.fit, m.fit
                    ),
                    "cada token lee esos expertos de la RAM: más lento",
                ));
            }
            if e.workload.weights.id() == "Q4_K_M" {
                out.push(lever(
                    &[(Field::Format, "Q3_K_M")],
                    "GGUF Q3_K_M en lugar de Q4_K_M",
                    "pesos algo menores, con una pérdida de calidad que ya se nota",
                ));
            }
            if let Some(l) = e.max_gpu_layers.filter(|l| !l.all()) {
                out.push(lever(
                    &[(Field::GpuLayers, &l.fit.to_string())],
                    format!("{} capas en la GPU (-ngl {})", l.fit, l.fit),
                    "las demás se leen de la RAM en cada token: bastante más lento",
                ));
            }
            if let Some(n) = shorter.filter(|&n| s.seq.is_none_or(|seq| n < seq)) {
                out.push(lever(
                    &[(Field::Seq, &n.to_string())],
                    format!("Contexto de {} tokens", crate::units::group_digits(n)),
                    "peticiones más cortas",
                ));
            }
        }
        _ => {}
    }
    out
}

/// The candidates for `s` when its answer does not fit with margin (empty when it does,
/// or when there is no GPU to fit): each lever alone, and the levers that help but do
/// not suffice stacked in order of cost until the stack fits, when that is cheaper than
/// every lever that fits alone; those that fit first, cheapest first, then the ones
/// that save at least 1 % (64 MiB) by bytes.
///
/// `hub` and `file` name the model for each candidate's launch command, as
/// [`crate::launch::model_arg`] takes them (a candidate may change the runtime).
pub fn plan(
    model: &Model,
    s: &Settings,
    e: &Evaluation,
    hub: Option<&str>,
    file: Option<&str>,
) -> Vec<Candidate> {
    if e.verdict.is_none_or(|v| v.fits()) {
        return Vec::new();
    }
    let levers = levers(model, s, e);
    let base = e.estimate.per_gpu_bytes;
    let try_with = |changes: &[&(Field, String)], change: String, cost: String| {
        let mut t = s.clone();
        for (f, v) in changes {
            if matches!(f, Field::Task | Field::Runtime) {
                // A new task or runtime brings its own defaults (QLoRA's NF4 base,
                // Unsloth's fused loss), as the page does.
                let mut asked = t.clone();
                asked.set(*f, v, Surface::Cli).ok()?;
                t = if *f == Field::Task {
                    t.with_task(asked.task)
                } else {
                    t.with_runtime(asked.runtime)
                };
            } else {
                t.set(*f, v, Surface::Cli).ok()?;
            }
        }
        let te = crate::evaluate(model, &t).ok()?;
        let mut flags = Vec::new();
        for (f, v) in changes {
            flags.push(format!("--{}", f.cli()));
            flags.push(v.clone());
        }
        Some(Candidate {
            settings: t.clone(),
            change,
            cost,
            flags,
            per_gpu_bytes: te.estimate.per_gpu_bytes,
            saved_bytes: base.saturating_sub(te.estimate.per_gpu_bytes),
            fits: te.verdict.is_some_and(|v| v.fits()),
            verdict: te.verdict.map(|v| v.id()),
            decode_tokens_per_second: te.speed.map(|h| h.decode_tokens_per_second),
            sequences: te
                .serving
                .as_ref()
                .filter(|_| t.serving())
                .map(|p| p.max_sequences),
            kv_tokens: te
                .serving
                .as_ref()
                .filter(|_| t.serving())
                .map(|p| p.tokens),
            launch: launch(&model_arg(t.runtime, hub, file), &t, &te),
        })
    };
    // A lever that saves less than this on its own is not worth its cost.
    let worth = (base / 100).max(64 << 20);
    // (rank: the position of the dearest lever used, candidate)
    let mut fitting: Vec<(usize, Candidate)> = Vec::new();
    let mut short = Vec::new();
    let mut useful = Vec::new();
    for (rank, l) in levers.iter().enumerate() {
        let changes: Vec<&(Field, String)> = l.changes.iter().collect();
        let Some(mut c) = try_with(&changes, l.change.clone(), l.cost.to_owned()) else {
            continue;
        };
        // The fewest GPUs that hold the estimate may not hold the band's high end: the
        // next counts are tried, those vLLM's tensor parallelism takes (dividing the
        // attention heads), a bounded number of evaluations.
        if let (false, Some((Field::Gpus, first))) = (c.fits, l.changes.first()) {
            let heads = model.arch().map_or(1, |a| a.heads.max(1));
            let splits = |n: u32| s.task.is_training() || heads.is_multiple_of(n);
            let start: u32 = first.parse().unwrap_or(MAX_GPUS);
            for n in (start + 1..=MAX_GPUS).filter(|&n| splits(n)) {
                if c.fits {
                    break;
                }
                let more = gpu_lever(s, n);
                let refs: Vec<&(Field, String)> = more.changes.iter().collect();
                if let Some(next) = try_with(&refs, more.change, more.cost.to_owned()) {
                    c = next;
                }
            }
        }
        if c.fits {
            fitting.push((rank, c));
        } else if c.saved_bytes >= worth {
            useful.push(rank);
            short.push(c);
        }
    }
    // Levers that help but do not suffice, stacked in order of cost: the first stack
    // that fits, when it is cheaper than any lever that fits alone.
    let cheapest = fitting.iter().map(|(r, _)| *r).min().unwrap_or(usize::MAX);
    for upto in 2..=useful.len() {
        let used: Vec<&Lever> = useful[..upto].iter().map(|&r| &levers[r]).collect();
        let rank = useful[upto - 1];
        if rank >= cheapest {
            break;
        }
        let changes: Vec<&(Field, String)> = used.iter().flat_map(|l| &l.changes).collect();
        let change = used
            .iter()
            .map(|l| l.change.as_str())
            .collect::<Vec<_>>()
            .join(" + ");
        let cost = used.iter().map(|l| l.cost).collect::<Vec<_>>().join("; ");
        if let Some(c) = try_with(&changes, change, cost)
            && c.fits
        {
            fitting.push((rank, c));
            break;
        }
    }
    fitting.sort_by_key(|(rank, c)| (*rank, c.per_gpu_bytes));
    short.sort_by_key(|c| c.per_gpu_bytes);
    fitting
        .into_iter()
        .map(|(_, c)| c)
        .chain(short)
        .take(MAX_CANDIDATES)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::model;
    use crate::estimate::ModelInput;

    fn planned(id: &str, flags: &[(&str, &str)]) -> (Evaluation, Vec<Candidate>) {
        let m = Model::new(ModelInput::Arch {
            arch: Box::new(
                model(id)
                    .map(|p| p.arch.clone())
                    .unwrap_or_else(|| panic!("{id}")),
            ),
            total_params: None,
        });
        let s = crate::settings::from_cli_flags(flags).unwrap_or_else(|e| panic!("{e:?}"));
        let e = crate::evaluate(&m, &s).unwrap_or_else(|e| panic!("{e}"));
        let p = plan(&m, &s, &e, Some("org/m"), None);
        (e, p)
    }

    /// The case: QLoRA of Llama 3.1 8B at 4096 tokens on an RTX 3060 does not
    /// fit; the plan's first candidate does, each candidate is a real evaluation with
    /// the flags it names, and the ones that fit come first.
    #[test]
    fn a_miss_gets_ranked_candidates_that_are_real_evaluations() {
        let flags = [
            ("mode", "qlora"),
            ("gpu", "rtx-3060"),
            ("seq", "4096"),
            ("batch", "4"),
        ];
        let (e, p) = planned("llama-3.1-8b", &flags);
        assert!(e.verdict.is_some_and(|v| !v.fits()));
        assert!(!p.is_empty() && p.len() <= MAX_CANDIDATES);
        assert!(p[0].fits, "{p:#?}");
        let first_short = p.iter().position(|c| !c.fits).unwrap_or(p.len());
        assert!(p[first_short..].iter().all(|c| !c.fits));
        for c in &p {
            let mut all: Vec<(&str, &str)> = flags.to_vec();
            for pair in c.flags.chunks(2) {
                let key = pair[0].trim_start_matches("--");
                all.retain(|(k, _)| *k != key);
                all.push((key, &pair[1]));
            }
            let (again, _) = planned("llama-3.1-8b", &all);
            assert_eq!(
                again.estimate.per_gpu_bytes, c.per_gpu_bytes,
                "{}",
                c.change
            );
            assert!(!c.cost.is_empty());
        }
    }

    /// vLLM on a card too small for the 16-bit weights is offered llama.cpp's 4-bit GGUF,
    /// which fits, with its own command.
    #[test]
    fn a_server_that_does_not_fit_is_offered_another_runtime() {
        let (_, p) = planned(
            "llama-3.1-8b",
            &[("runtime", "vllm"), ("gpu", "rtx-3060"), ("seq", "8192")],
        );
        let other = p
            .iter()
            .find(|c| c.flags == ["--runtime", "llama.cpp"])
            .unwrap_or_else(|| panic!("{p:#?}"));
        assert!(other.fits);
        let command = other.launch.as_ref().map_or("", |l| l.command.as_str());
        assert!(
            command.starts_with("llama-server \\\n  -m MODELO.gguf"),
            "{command}"
        );
        // Its speed beside the answer's: 4-bit weights read faster than 16-bit ones.
        let (e, _) = planned(
            "llama-3.1-8b",
            &[("runtime", "vllm"), ("gpu", "rtx-3060"), ("seq", "8192")],
        );
        let now = e.speed.map(|h| h.decode_tokens_per_second);
        let faster = other
            .decode_tokens_per_second
            .zip(now)
            .is_some_and(|(a, b)| a > b);
        assert!(faster, "{:?} {now:?}", other.decode_tokens_per_second);
        let text = other.speed_text(now).unwrap_or_default();
        assert!(
            text.starts_with("generación ≤ ") && text.contains("(ahora ≤ "),
            "{text}"
        );
        // A server's candidates are measured by the requests their cache holds; the
        // other engine by its bytes.
        assert!(
            other.size_text().ends_with(" por GPU"),
            "{}",
            other.size_text()
        );
        for c in p.iter().filter(|c| c.settings.serving()) {
            let n = c.sequences.unwrap_or_else(|| panic!("{c:#?}"));
            let text = c.size_text();
            if n == 0 {
                assert!(!c.fits);
                assert!(text.starts_with("la caché KV guarda "), "{text}");
                assert!(
                    text.ends_with(&format!("una petición pide {}", crate::group_digits(8192))),
                    "{text}"
                );
            } else {
                assert!(
                    text.ends_with(&format!("de {} tokens a la vez", crate::group_digits(8192))),
                    "{text}"
                );
            }
        }
    }

    /// What fits needs no plan; a server too big for one card is offered, among
    /// others, the cards that hold it, with their launch command.
    #[test]
    fn a_fit_has_no_plan_and_a_server_gets_more_gpus() {
        let (_, p) = planned("llama-3.1-8b", &[("gpu", "rtx-4090"), ("seq", "4096")]);
        assert!(p.is_empty());
        let (_, p) = planned(
            "llama-3.1-70b",
            &[("runtime", "vllm"), ("gpu", "h100-sxm"), ("seq", "8192")],
        );
        let gpus = p
            .iter()
            .find(|c| c.flags.first().is_some_and(|f| f == "--gpus"));
        let gpus = gpus.unwrap_or_else(|| panic!("{p:#?}"));
        assert!(gpus.fits);
        assert!(
            gpus.launch
                .as_ref()
                .is_some_and(|l| l.command.contains("--tensor-parallel-size"))
        );
    }
}
