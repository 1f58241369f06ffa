//! An engine's start-up log set against vramlab's estimate of the same run: the model
//! the log names (through the catalog search), its settings, and each logged term beside
//! the estimator's (`vram::reconcile`). vLLM's log gives the serving budget; llama.cpp's
//! the buffers of every device.

use oom::{Decoded, GgmlMemory, VllmMemory};
use serde::{Deserialize, Serialize};
use vram::estimate::ModelInput;
use vram::quant::WeightFormat;
use vram::reconcile::{GgmlLog, Term, Unit, VllmLog};
use vram::settings::{CudaGraphs, Runtime};
use vram::{ByteSize, Model, Settings, Task};

/// The estimator beside an engine's log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reconciliation {
    /// "Frente al estimador (vLLM, Llama 3.1 8B en bf16, 79,22 GiB, …)".
    pub title: String,
    pub rows: Vec<ReconcileRow>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReconcileRow {
    pub name: String,
    /// The log's value and vramlab's, formatted ("14,96 GiB", "447 488").
    pub logged: String,
    pub estimated: String,
    /// "+1,5 %", or empty.
    pub difference: String,
    /// Why the two are not the same quantity, when they are not.
    pub why: Option<String>,
}

/// The comparison for a decoded message that carries an engine's report, or `None`
/// when it carries none or names no catalog model.
pub fn of(d: &Decoded) -> Option<Reconciliation> {
    d.vllm_memory
        .as_ref()
        .and_then(vllm)
        .or_else(|| d.ggml_memory.as_ref().and_then(ggml))
}

/// The catalog model a log names ("Meta Llama 3.1 8B Instruct",
/// "meta-llama/Llama-3.1-8B-Instruct").
pub(crate) fn catalog_model(name: &str) -> Option<(&'static vram::catalog::ModelPreset, Model)> {
    let query = vram::model_search::ModelQuery::new(name);
    let preset = vram::catalog::models().iter().find(|p| query.matches(p))?;
    let model = Model::new(ModelInput::Arch {
        arch: Box::new(preset.arch.clone()),
        total_params: None,
    });
    Some((preset, model))
}

fn rows(terms: &[Term]) -> Vec<ReconcileRow> {
    terms
        .iter()
        .map(|t| {
            let show = |v: u64| match t.unit {
                Unit::Bytes => ByteSize(v).binary(),
                Unit::Tokens => vram::group_digits(v),
            };
            ReconcileRow {
                name: t.name.to_owned(),
                logged: show(t.logged),
                estimated: show(t.estimated),
                difference: t.error_percent().map_or_else(String::new, |p| {
                    // Rounds to one decimal without a "-0,0".
                    let p = (p * 10.0).round() / 10.0 + 0.0;
                    if p == 0.0 {
                        "0,0 %".to_owned()
                    } else {
                        // The typographic minus, as the estimator's notes write it.
                        format!(
                            "{} %",
                            format!("{p:+.1}").replace('.', ",").replace('-', "−")
                        )
                    }
                }),
                why: t.why.map(str::to_owned),
            }
        })
        .collect()
}

/// The settings of the vLLM run a report describes, on an 80 GiB card unless the
/// report measured one.
pub(crate) fn vllm_settings(m: &VllmMemory) -> Settings {
    let mut s = Settings::defaults(Task::Inference, Runtime::Vllm);
    s.gpu_memory = Some(m.total_gpu_bytes.unwrap_or(80 * ByteSize::GIB));
    if let Some(bp) = m.utilization_bp {
        let bp = bp.clamp(1, u32::from(vram::settings::BASIS_POINTS));
        s.utilization = u16::try_from(bp).unwrap_or(vram::settings::BASIS_POINTS);
    }
    // The context the log served ("Maximum concurrency for N tokens per request");
    // without it, vLLM's own default, the model's (`auto`).
    if let Some(t) = m.concurrency_tokens.filter(|&t| t > 0) {
        s.seq = Some(t.min(vram::estimate::MAX_SEQ));
    }
    // Logs older than 0.21, and newer ones with the reservation off, sized the KV cache
    // before the CUDA graphs were captured.
    s.cuda_graphs = if m.cuda_graphs_reserved == Some(true) {
        CudaGraphs::Profiled
    } else {
        CudaGraphs::AfterKv
    };
    s
}

/// A vLLM log. The GPU is the one the log measured ("total_gpu_memory"); without it
/// only the terms that do not depend on the card are compared.
pub fn vllm(m: &VllmMemory) -> Option<Reconciliation> {
    let (preset, model) = catalog_model(m.model.as_deref()?)?;
    let s = vllm_settings(m);
    let e = vram::evaluate(&model, &s).ok()?;
    let card_known = m.total_gpu_bytes.is_some();
    let log = VllmLog {
        weights: m.weights_bytes.or(m.model_loading_bytes),
        activation_peak: m.activation_peak_bytes,
        non_torch: m.non_torch_bytes,
        kv_cache: m.kv_cache_bytes.filter(|_| card_known),
        kv_tokens: m.kv_cache_tokens.filter(|_| card_known),
    };
    let mut terms = vram::reconcile::vllm(&e, &log);
    // The per-token size needs only the log's own two numbers.
    if !card_known
        && let (Some(bytes), Some(tokens)) = (m.kv_cache_bytes, m.kv_cache_tokens)
        && let Some(plan) = &e.serving
        && tokens > 0
    {
        terms.push(Term {
            name: "Bytes de caché por token",
            unit: Unit::Bytes,
            logged: bytes / tokens,
            estimated: plan.kv_bytes_per_token,
            why: None,
        });
    }
    if terms.is_empty() {
        return None;
    }
    let card = m.total_gpu_bytes.map_or_else(
        || "GPU sin tamaño en el registro".to_owned(),
        |t| ByteSize(t).binary(),
    );
    Some(Reconciliation {
        title: format!(
            "Frente al estimador (vLLM, {} en bf16, {card}, gpu_memory_utilization {} %)",
            preset.name,
            vram::settings::percent_text(s.utilization)
        ),
        rows: rows(&terms),
    })
}

/// The log's buffers summed by place, and its settings, as `vram` reads them.
pub fn ggml_log(g: &GgmlMemory) -> GgmlLog {
    let sum = |host: bool, purpose: &str| {
        let mut found = false;
        let total = g
            .buffers
            .iter()
            .filter(|b| GgmlLog::is_host_buffer(&b.device) == host && b.purpose == purpose)
            .inspect(|_| found = true)
            .fold(0u64, |acc, b| acc.saturating_add(b.bytes));
        found.then_some(total)
    };
    let mut devices: Vec<&str> = g
        .buffers
        .iter()
        .filter(|b| !GgmlLog::is_host_buffer(&b.device))
        .map(|b| b.device.as_str())
        .collect();
    devices.sort_unstable();
    devices.dedup();
    // The busiest GPU: its weights, KV cache and compute buffer add up to the most.
    let on = |device: &str, purpose: &str| {
        g.buffers
            .iter()
            .filter(|b| b.device == device && b.purpose == purpose)
            .fold(0u64, |acc, b| acc.saturating_add(b.bytes))
    };
    // Only a load that reserved every buffer on every GPU (an out-of-memory log stops
    // half-way) has a busiest GPU to compare.
    let complete = devices.iter().all(|d| {
        ["weights", "kv-cache", "compute"]
            .iter()
            .all(|p| on(d, p) > 0)
    });
    let busiest_gpu = (devices.len() > 1 && complete)
        .then(|| {
            devices
                .iter()
                .map(|d| (on(d, "weights"), on(d, "kv-cache"), on(d, "compute")))
                .max_by_key(|(w, k, c)| w.saturating_add(*k).saturating_add(*c))
        })
        .flatten();
    GgmlLog {
        busiest_gpu,
        gpu_weights: sum(false, "weights"),
        gpu_kv: sum(false, "kv-cache"),
        gpu_compute: sum(false, "compute"),
        gpu_projector_compute: sum(false, "projector-compute"),
        gpu_devices: u32::try_from(devices.len()).unwrap_or(u32::MAX),
        host_weights: sum(true, "weights"),
        n_ctx: g.n_ctx,
        n_seq_max: g.n_seq_max,
        kv_unified: g.kv_unified,
        n_ubatch: g.n_ubatch,
        flash_attn: g.flash_attn,
        kv_type: g.kv_type.as_deref().and_then(GgmlLog::kv_type_of),
        layers_on_gpu: g.layers_on_gpu,
        layers_total: g.layers_total,
        output_on_gpu: g.output_on_gpu,
        format: g
            .file_type
            .as_deref()
            .and_then(WeightFormat::from_llama_ftype),
    }
}

/// A llama.cpp load log that names a catalog model and its context: an estimate of
/// another run would explain nothing. Without a file type vramlab knows, only the KV
/// cache and the compute buffer are compared.
pub fn ggml(g: &GgmlMemory) -> Option<Reconciliation> {
    let (preset, model) = catalog_model(g.model.as_deref()?)?;
    let log = ggml_log(g);
    log.n_ctx?;
    // A forged `n_ctx` of 10^18 is refused here, not estimated.
    let e = vram::reconcile::ggml_evaluate(&model, &log).ok()?;
    let s = vram::reconcile::ggml_settings(&log);
    let mut terms = vram::reconcile::ggml(&e, &log);
    if let Some(split) = vram::reconcile::ggml_split_evaluate(&model, &log, &e) {
        terms.extend(vram::reconcile::ggml_busiest(&split, &log));
    }
    if terms.is_empty() {
        return None;
    }
    let layers = match s.gpu_layers {
        // Builds before December 2025 left the output layer on the CPU with `-ngl`.
        Some(n) if n != vram::settings::GPU_LAYERS_ALL && !e.workload.ngl_output_first => {
            format!(
                "-ngl {n} de llama.cpp anterior a diciembre de 2025, con la capa de salida en la CPU"
            )
        }
        Some(n) if n != vram::settings::GPU_LAYERS_ALL => format!("-ngl {n}"),
        _ if log.gpu_devices > 1 => format!("todas las capas en {} GPU", log.gpu_devices),
        _ => "todas las capas en la GPU".to_owned(),
    };
    let fa = if s.attention == vram::workload::Attention::Flash {
        "con flash attention"
    } else {
        "sin flash attention"
    };
    let slots = if s.batch > 1 {
        format!(" en {} secuencias", s.batch)
    } else {
        String::new()
    };
    Some(Reconciliation {
        title: format!(
            "Frente al estimador (llama.cpp, {} en {}, contexto de {} tokens{slots}, {layers}, \
             micro-lote de {}, {fa}, caché KV {})",
            preset.name,
            log.format.map_or_else(
                || "cuantización que el registro no dice".to_owned(),
                |f| f.id()
            ),
            vram::group_digits(e.workload.seq.saturating_mul(s.batch)),
            s.ubatch,
            g.kv_type.as_deref().unwrap_or("f16"),
        ),
        rows: rows(&terms),
    })
}

#[cfg(test)]
mod tests {
    /// A llama-server log in the layout of recent builds holding the GPU buffers of the
    /// EduHPC 2025 paper's run (see `vram::reconcile`'s test of the same case); the
    /// layout is recent llama.cpp's, the paper's log is llama-cpp-python's.
    const GGML_LOG: &str = "\
llama_model_loader: - kv   2:                               general.name str              = mistralai_mistral-7b-instruct-v0.1
print_info: file type   = Q4_K - Medium
load_tensors: offloading 20 repeating layers to GPU
load_tensors: offloaded 20/33 layers to GPU
load_tensors:        CUDA0 model buffer size =  2495.31 MiB
llama_context: n_seq_max     = 1
llama_context: n_ctx         = 768
llama_context: n_batch       = 512
llama_context: n_ubatch      = 256
llama_context: flash_attn    = 1
llama_kv_cache:      CUDA0 KV buffer size =    60.00 MiB
llama_kv_cache: size =   96.00 MiB (   768 cells,  32 layers,  1/1 seqs), K (f16):   48.00 MiB, V (f16):   48.00 MiB
llama_context:      CUDA0 compute buffer size =   137.79 MiB
";

    #[test]
    fn a_llama_cpp_log_is_reconciled_with_its_settings() {
        let v = crate::explain::explain(GGML_LOG);
        let r = v.reconciliation.expect("reconciled");
        assert!(
            r.title.contains("Mistral 7B")
                && r.title.contains("Q4_K_M")
                && r.title.contains("-ngl 20")
                && r.title.contains("micro-lote de 256"),
            "{}",
            r.title
        );
        let names: Vec<&str> = r.rows.iter().map(|row| row.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "Pesos en la GPU",
                "Caché KV en la GPU",
                "Búfer de cómputo de la GPU",
            ]
        );
        assert_eq!(r.rows[1].logged, r.rows[1].estimated, "{:?}", r.rows[1]);
        assert_eq!(r.rows[2].difference, "0,0 %", "{:?}", r.rows[2]);
    }

    /// The buffers of a published two-GPU load log (Qwen2 0.5B Q4_0 on two RTX 4090,
    /// Nixiesearch's GPU docs, the validation case `llamacpp-qwen2-05b-2gpu-*`) under a
    /// Qwen2.5 0.5B name, the same architecture the catalog holds.
    const TWO_GPU_LOG: &str = "\
llama_model_loader: - kv   2:                               general.name str              = Qwen2.5 0.5B Instruct
llm_load_print_meta: model ftype      = Q4_0
llm_load_tensors: offloading 24 repeating layers to GPU
llm_load_tensors: offloading non-repeating layers to GPU
llm_load_tensors: offloaded 25/25 layers to GPU
llm_load_tensors:        CPU buffer size =   137.94 MiB
llm_load_tensors:      CUDA0 buffer size =   104.91 MiB
llm_load_tensors:      CUDA1 buffer size =   226.06 MiB
llama_new_context_with_model: n_ctx      = 32768
llama_new_context_with_model: n_batch    = 2048
llama_new_context_with_model: n_ubatch   = 512
llama_new_context_with_model: flash_attn = 0
llama_kv_cache_init:      CUDA0 KV buffer size =   208.00 MiB
llama_kv_cache_init:      CUDA1 KV buffer size =   176.00 MiB
llama_new_context_with_model: KV self size  =  384.00 MiB, K (f16):  192.00 MiB, V (f16):  192.00 MiB
llama_new_context_with_model: pipeline parallelism enabled (n_copies=4)
llama_new_context_with_model:      CUDA0 compute buffer size =  1166.01 MiB
llama_new_context_with_model:      CUDA1 compute buffer size =  1166.02 MiB
llama_new_context_with_model:  CUDA_Host compute buffer size =   257.77 MiB
";

    #[test]
    fn a_two_gpu_log_compares_the_busiest_gpu() {
        let v = crate::explain::explain(TWO_GPU_LOG);
        let r = v.reconciliation.expect("reconciled");
        assert!(r.title.contains("todas las capas en 2 GPU"), "{}", r.title);
        let names: Vec<&str> = r.rows.iter().map(|row| row.name.as_str()).collect();
        assert!(
            names.ends_with(&[
                "Pesos en la GPU más cargada",
                "Caché KV en la GPU más cargada",
                "Búfer de cómputo de la GPU más cargada",
            ]),
            "{names:?}"
        );
        let row = |name: &str| r.rows.iter().find(|row| row.name == name).unwrap();
        let kv = row("Caché KV en la GPU más cargada");
        assert_eq!(kv.logged, kv.estimated, "{kv:?}");
        let compute = row("Búfer de cómputo de la GPU más cargada");
        assert_eq!(compute.difference, "−0,3 %", "{compute:?}");
        assert!(
            compute
                .why
                .as_deref()
                .is_some_and(|w| w.contains("cuatro copias"))
        );
    }

    #[test]
    fn a_llama_cpp_log_without_a_known_model_is_not_reconciled() {
        let unknown_model = GGML_LOG.replace("mistralai_mistral-7b", "zzz-unknown-9000b");
        assert!(
            crate::explain::explain(&unknown_model)
                .reconciliation
                .is_none()
        );
        // An unknown file type leaves the KV cache to compare; with -ngl 20 the compute
        // buffer holds the output matrix in the file's type, so it is left out too.
        let unknown_type = GGML_LOG.replace("Q4_K - Medium", "IQ4_XS - 4.25 bpw");
        let r = crate::explain::explain(&unknown_type)
            .reconciliation
            .expect("KV compared");
        let names: Vec<&str> = r.rows.iter().map(|row| row.name.as_str()).collect();
        assert_eq!(names, ["Caché KV en la GPU"]);
        assert!(
            r.title.contains("cuantización que el registro no dice"),
            "{}",
            r.title
        );
        let forged = GGML_LOG.replace("n_ctx         = 768", "n_ctx         = 99999999999999");
        assert!(crate::explain::explain(&forged).reconciliation.is_none());
    }
}
