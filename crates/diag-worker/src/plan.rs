//! The explainer's way out. An engine's log that names a catalog model and how it was
//! run (vLLM's start-up report with the card's size, a llama.cpp load log with the card
//! it names) already is the estimator's input: the same run goes through
//! `vram::evaluate`, and when it does not fit with margin `vram::plan` ranks what would
//! make it fit, each candidate with its launch command, exactly as `/estimador/` and
//! `vramlab estimate` show it. A link opens the run in the estimator.
//!
//! The plan is offered for a failure (an out-of-memory error, vLLM refusing to start);
//! a report of a start that worked gets only the link.

use oom::{Decoded, Kind};
use serde::{Deserialize, Serialize};
use vram::settings::{Field, Surface};
use vram::{ByteSize, Evaluation, Model, Settings};

/// The run a log describes, as the estimator takes it.
pub struct LoggedRun {
    pub preset: &'static vram::catalog::ModelPreset,
    pub model: Model,
    pub settings: Settings,
    pub evaluation: Evaluation,
    /// The card as the log gave it: a catalog name, or its size.
    pub card: String,
    /// The Hub repository the log served ("meta-llama/Llama-3.1-8B-Instruct"), for the
    /// launch commands; the catalog's when the log names none.
    pub hub: Option<String>,
}

/// A Hub repository as a log names it: `owner/name` of the characters the Hub allows.
fn hub_repo(name: &str) -> Option<String> {
    let (owner, repo) = name.trim().split_once('/')?;
    let ok = |part: &str| {
        !part.is_empty()
            && part.len() <= 96
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    (ok(owner) && ok(repo)).then(|| format!("{owner}/{repo}"))
}

/// What the explainer draws: the run in the estimator and, for a failure, the
/// candidates that would make it fit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanView {
    /// "Este arranque en el estimador: Llama 3.1 8B con vLLM en NVIDIA L4, …".
    pub title: String,
    /// The estimator's verdict on the run as the log describes it.
    pub verdict: String,
    /// The query string of `/estimador/` that opens this run (without the `?`).
    pub link: String,
    pub candidates: Vec<StepView>,
}

/// One candidate of the plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepView {
    pub change: String,
    /// Bytes per GPU, whether it fits, what it costs and, for inference, its speed.
    pub detail: String,
    pub fits: bool,
    /// The command or script that runs it, when it fits and the runtime has one.
    pub command: Option<String>,
    /// The query string of `/estimador/` with this candidate applied.
    pub link: String,
}

/// The same, for `vramlab explain --json`: the candidates as `vramlab estimate --json`
/// writes its `plan`.
#[derive(Clone, Debug, Serialize)]
pub struct RunPlan {
    /// The catalog model.
    pub model: String,
    /// The `vramlab estimate` flags of the run (besides `--model`).
    pub flags: Vec<String>,
    /// The query string of `/estimador/` that opens it.
    pub estimator: String,
    pub per_gpu_bytes: u64,
    pub fits: bool,
    pub verdict: Option<&'static str>,
    pub candidates: Vec<vram::plan::Candidate>,
}

/// Whether the message is a failure a plan answers (not a report of a start that
/// worked).
fn failed(d: &Decoded) -> bool {
    !matches!(
        d.kind,
        Kind::VllmProfile | Kind::GgmlReport | Kind::MemorySummary | Kind::Unknown
    )
}

/// The run of a vLLM report: the card's size from the report or from PyTorch's message
/// in the same paste; the context vLLM refused, when it refused one.
fn vllm(d: &Decoded) -> Option<LoggedRun> {
    let m = d.vllm_memory.as_ref()?;
    let (preset, model) = crate::reconcile::catalog_model(m.model.as_deref()?)?;
    let total = m.total_gpu_bytes.or(d.total_bytes)?;
    let mut settings = crate::reconcile::vllm_settings(m);
    settings.gpu_memory = Some(total);
    if let Some(seq) = d.kv_cache.as_ref().and_then(|k| k.max_seq_len) {
        settings.seq = Some(seq.clamp(1, vram::estimate::MAX_SEQ));
    }
    let evaluation = vram::evaluate(&model, &settings).ok()?;
    Some(LoggedRun {
        hub: m.model.as_deref().and_then(hub_repo),
        preset,
        model,
        settings,
        evaluation,
        card: format!("una GPU de {}", ByteSize(total).binary()),
    })
}

/// The run of a llama.cpp load log that names a catalog card.
fn ggml(d: &Decoded) -> Option<LoggedRun> {
    let g = d.ggml_memory.as_ref()?;
    let (preset, model) = crate::reconcile::catalog_model(g.model.as_deref()?)?;
    let gpu = vram::reader_gpu::guess("", "", g.device.as_deref()?)?.card?;
    let log = crate::reconcile::ggml_log(g);
    log.n_ctx?;
    let mut settings = vram::reconcile::ggml_settings(&log);
    settings.set(Field::Gpu, &gpu.id, Surface::Cli).ok()?;
    settings.gpus = log.gpu_devices.max(1);
    let evaluation = vram::evaluate(&model, &settings).ok()?;
    Some(LoggedRun {
        preset,
        model,
        settings,
        evaluation,
        card: gpu.name.clone(),
        hub: None,
    })
}

/// The run the paste's main message describes, when it names a catalog model and its
/// card.
pub fn run(d: &Decoded) -> Option<LoggedRun> {
    vllm(d).or_else(|| ggml(d))
}

/// `/estimador/`'s query string for `settings` on `preset`.
fn link(preset: &vram::catalog::ModelPreset, settings: &Settings) -> String {
    settings.to_query(
        &Settings::web_default(),
        &[(vram::settings::MODEL_KEY, &preset.id)],
        &[],
    )
}

/// The candidates for a failed run (none for a start that worked, or when the estimate
/// already fits with margin).
fn candidates(d: &Decoded, r: &LoggedRun) -> Vec<vram::plan::Candidate> {
    if !failed(d) {
        return Vec::new();
    }
    let hub = r
        .hub
        .as_deref()
        .or(Some(r.preset.hf_repo.as_str()))
        .filter(|h| !h.is_empty());
    vram::plan::plan(&r.model, &r.settings, &r.evaluation, hub, None)
}

/// The plan for `vramlab explain --json`.
pub fn of(d: &Decoded) -> Option<RunPlan> {
    both(d).map(|(_, json)| json)
}

/// What the explainer draws for the paste's main message.
pub fn view(d: &Decoded) -> Option<PlanView> {
    both(d).map(|(view, _)| view)
}

/// The run's view and its JSON, from one plan.
pub fn both(d: &Decoded) -> Option<(PlanView, RunPlan)> {
    let r = run(d)?;
    let now = r.evaluation.speed.map(|h| h.decode_tokens_per_second);
    let candidates = candidates(d, &r);
    let steps = candidates
        .iter()
        .map(|c| {
            StepView {
                detail: c.summary(now),
                link: link(r.preset, &c.settings),
                // Only for what fits: a command that would run out of memory again
                // is not a way out.
                command: c
                    .launch
                    .as_ref()
                    .filter(|_| c.fits)
                    .map(|l| l.command.clone()),
                change: c.change.clone(),
                fits: c.fits,
            }
        })
        .collect();
    let verdict = r
        .evaluation
        .verdict_text(Some(&r.card), Surface::Web)
        .unwrap_or_default();
    let view = PlanView {
        title: format!(
            "Este arranque en el estimador: {} con {} en {}, contexto de {} tokens",
            r.preset.name,
            vram::settings::entry(vram::settings::RUNTIMES, r.settings.runtime).label,
            r.card,
            vram::group_digits(r.evaluation.workload.seq),
        ),
        verdict,
        link: link(r.preset, &r.settings),
        candidates: steps,
    };
    let json = RunPlan {
        model: r.preset.id.clone(),
        flags: r.settings.cli_args(),
        estimator: view.link.clone(),
        per_gpu_bytes: r.evaluation.estimate.per_gpu_bytes,
        fits: r.evaluation.verdict.is_some_and(|v| v.fits()),
        verdict: r.evaluation.verdict.map(|v| v.id()),
        candidates,
    };
    Some((view, json))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    /// vLLM refusing Llama 3.1 8B's 131 072-token window on an L4: the weights take
    /// 14.99 GiB of the 19.85 the share allows, 3.50 GiB are left for a KV cache of
    /// 128 KiB per token (32 layers × 8 KV heads × 128 × 2 bytes × K and V), 28 672
    /// tokens, and one request at full length needs 16 GiB.
    const VLLM_L4: &str = "$ vllm serve meta-llama/Llama-3.1-8B-Instruct\n\
INFO worker.py:241] the current vLLM instance can use total_gpu_memory (22.05GiB) x gpu_memory_utilization (0.90) = 19.85GiB\n\
INFO worker.py:241] model weights take 14.99GiB; non_torch_memory takes 0.12GiB; PyTorch activation peak memory takes 1.24GiB; the rest of the memory reserved for KV Cache is 3.50GiB.\n\
ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (3.50 GiB). Based on the available memory, the estimated maximum model length is 28672. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n";

    /// llama-server opening Llama 3.1 8B Q4_K_M with its whole 131 072-token window on
    /// an RTX 3060: the weights fit, the 16 GiB f16 KV cache does not.
    const LLAMA_3060: &str = "\
llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 3060) - 11247 MiB free
llama_model_loader: - kv   2:                               general.name str              = Meta Llama 3.1 8B Instruct
print_info: file type   = Q4_K - Medium
load_tensors: offloading output layer to GPU
load_tensors: offloaded 33/33 layers to GPU
load_tensors:        CUDA0 model buffer size =  4403.49 MiB
llama_context: n_seq_max     = 1
llama_context: n_ctx         = 131072
llama_context: n_ubatch      = 512
llama_context: flash_attn    = auto
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 16384.00 MiB on device 0: cudaMalloc failed: out of memory
llama_kv_cache: failed to allocate buffer for kv cache
";

    #[test]
    fn hub_repositories_are_read_strictly() {
        for (name, want) in [
            (
                "meta-llama/Llama-3.1-8B-Instruct",
                Some("meta-llama/Llama-3.1-8B-Instruct"),
            ),
            (" Qwen/Qwen3-8B ", Some("Qwen/Qwen3-8B")),
            ("Meta Llama 3.1 8B Instruct", None),
            ("/models/llama", None),
            ("a/b/c", None),
            ("owner/$(rm -rf ~)", None),
        ] {
            assert_eq!(super::hub_repo(name).as_deref(), want, "{name}");
        }
    }

    fn plan_of(text: &str) -> crate::plan::PlanView {
        crate::explain::explain(text)
            .plan
            .expect("a run in the estimator")
    }

    #[test]
    fn vllm_refusing_a_context_gets_the_estimators_plan() {
        let p = plan_of(VLLM_L4);
        assert!(
            p.title.contains("Llama 3.1 8B")
                && p.title.contains("vLLM")
                && p.title.contains("22,05 GiB")
                && p.title.contains(&vram::group_digits(131_072)),
            "{}",
            p.title
        );
        assert!(p.link.contains("modelo=llama-3.1-8b"), "{}", p.link);
        assert!(!p.verdict.is_empty());
        assert!(!p.candidates.is_empty());
        let first = &p.candidates[0];
        assert!(first.fits, "{first:?}");
        for c in &p.candidates {
            assert_eq!(c.command.is_some(), c.fits, "{c:?}");
            let command = c
                .command
                .as_deref()
                .unwrap_or("vllm serve meta-llama/Llama-3.1-8B-Instruct");
            assert!(
                command.starts_with("vllm serve meta-llama/Llama-3.1-8B-Instruct")
                    || command.contains("llama-server"),
                "{c:?}"
            );
            assert!(c.link.contains("modelo=llama-3.1-8b"), "{c:?}");
        }
        // The same candidates as `vramlab explain --json` writes them.
        let json = super::of(&oom::explain(VLLM_L4).primary).unwrap();
        assert_eq!(json.model, "llama-3.1-8b");
        assert!(!json.fits);
        let changes: Vec<&str> = json.candidates.iter().map(|c| c.change.as_str()).collect();
        let shown: Vec<&str> = p.candidates.iter().map(|c| c.change.as_str()).collect();
        assert_eq!(changes, shown);
    }

    #[test]
    fn a_start_that_worked_gets_the_link_and_no_plan() {
        let report = VLLM_L4.lines().take(3).collect::<Vec<_>>().join("\n");
        let p = plan_of(&report);
        assert!(p.candidates.is_empty(), "{p:?}");
        assert!(p.link.contains("modelo=llama-3.1-8b"));
    }

    #[test]
    fn a_llama_cpp_oom_naming_its_card_gets_a_plan() {
        let p = plan_of(LLAMA_3060);
        assert!(
            p.title.contains("llama.cpp") && p.title.contains("RTX 3060"),
            "{}",
            p.title
        );
        assert!(p.link.contains("gpu=rtx-3060"), "{}", p.link);
        assert!(p.candidates.iter().any(|c| c.fits), "{p:?}");
        for c in &p.candidates {
            assert_eq!(c.command.is_some(), c.fits, "{c:?}");
        }
    }

    #[test]
    fn no_card_or_no_model_means_no_plan() {
        let no_card = LLAMA_3060.replace(
            "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 3060) - 11247 MiB free\n",
            "",
        );
        assert!(crate::explain::explain(&no_card).plan.is_none());
        let unknown_card = LLAMA_3060.replace("GeForce RTX 3060", "Zzz 9000");
        assert!(crate::explain::explain(&unknown_card).plan.is_none());
        let no_total = VLLM_L4.replace("total_gpu_memory (22.05GiB) x ", "");
        assert!(crate::explain::explain(&no_total).plan.is_none());
        assert!(
            crate::explain::explain("CUDA out of memory. Tried to allocate 2.00 GiB")
                .plan
                .is_none()
        );
    }
}
