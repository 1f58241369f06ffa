//! vramlab's estimate beside what a running engine logged, term by term: the check a
//! reader can make with their own start-up log, and the way the estimator's serving
//! terms are kept honest.
//!
//! vLLM's worker logs its budget at start-up (weights, the profile run's activation
//! peak, memory outside PyTorch, and what is left for the KV cache with its size in
//! tokens). Each of those is a term of [`crate::serving::plan`]; this module pairs them
//! and says, for the terms that are defined differently, why they differ.
//!
//! llama.cpp logs every buffer it allocates (weights, KV cache, compute graph) per
//! device, and the settings that sized them (`n_ctx`, `n_ubatch`, flash attention, the
//! KV type, the offloaded layers, the file type). [`ggml_settings`] turns those settings
//! into vramlab's, so the estimate is of the same run, and [`ggml`] pairs the buffers
//! with the llama.cpp runtime's terms.

use serde::{Deserialize, Serialize};

use crate::estimate::Breakdown;
use crate::estimate::EstimateError;
use crate::evaluate::{Evaluation, Model, Note, evaluate};
use crate::quant::WeightFormat;
use crate::settings::{Runtime, Settings, Task};
use crate::workload::{Attention, KvDtype};

/// What a vLLM start-up log said (any of it may be missing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VllmLog {
    pub weights: Option<u64>,
    pub activation_peak: Option<u64>,
    pub non_torch: Option<u64>,
    pub kv_cache: Option<u64>,
    pub kv_tokens: Option<u64>,
}

/// A quantity's unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Bytes,
    Tokens,
}

/// One term: the log's value, vramlab's, and (Spanish) why they are not the same
/// quantity when they are not.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Term {
    pub name: &'static str,
    pub unit: Unit,
    pub logged: u64,
    pub estimated: u64,
    pub why: Option<&'static str>,
}

impl Term {
    /// (estimated − logged) / logged, in percent.
    pub fn error_percent(&self) -> Option<f64> {
        (self.logged > 0)
            .then(|| (self.estimated as f64 - self.logged as f64) / self.logged as f64 * 100.0)
    }
}

/// Pairs a vLLM log with a serving evaluation of the same model, GPU and
/// `gpu_memory_utilization`. Empty when the evaluation has no serving plan.
pub fn vllm(e: &Evaluation, log: &VllmLog) -> Vec<Term> {
    let Some(plan) = &e.serving else {
        return Vec::new();
    };
    let profile = e.notes.iter().find_map(|n| match n {
        Note::ServingProfile { bytes, .. } => Some(*bytes),
        _ => None,
    });
    let b = &e.estimate.breakdown;
    let mut out = Vec::new();
    let mut term = |name, unit, logged: Option<u64>, estimated: Option<u64>, why| {
        if let (Some(logged), Some(estimated)) = (logged, estimated) {
            out.push(Term {
                name,
                unit,
                logged,
                estimated,
                why,
            });
        }
    };
    term(
        "Pesos",
        Unit::Bytes,
        log.weights,
        Some(plan.weights_bytes),
        Some(
            "como los carga vLLM: con las tablas de la codificación rotatoria, la torre de \
             visión de un checkpoint multimodal y los segmentos enteros que cobra el \
             asignador de PyTorch",
        ),
    );
    term(
        "Pico de activaciones del perfilado",
        Unit::Bytes,
        log.activation_peak,
        profile,
        Some(
            "depende de --max-num-batched-tokens y --max-num-seqs: vramlab usa los valores por \
             defecto de vLLM para esa GPU",
        ),
    );
    term(
        "Fuera de PyTorch",
        Unit::Bytes,
        log.non_torch,
        Some(b.overhead),
        Some(
            "vLLM resta solo lo que creció durante el perfilado; vramlab reserva el contexto \
             CUDA entero (más prudente)",
        ),
    );
    term(
        "Caché KV",
        Unit::Bytes,
        log.kv_cache,
        Some(plan.kv_budget_bytes),
        None,
    );
    let logged_per_token = match (log.kv_cache, log.kv_tokens) {
        (Some(bytes), Some(tokens)) if tokens > 0 => Some(bytes / tokens),
        _ => None,
    };
    term(
        "Bytes de caché por token",
        Unit::Bytes,
        logged_per_token,
        Some(plan.kv_bytes_per_token),
        Some("el registro reparte la caché entre bloques enteros: su cifra incluye el resto"),
    );
    term(
        "Tokens en la caché KV",
        Unit::Tokens,
        log.kv_tokens,
        Some(plan.tokens),
        None,
    );
    out
}

/// What a llama.cpp load log said: its buffers summed by place, and the settings that
/// sized them (any of it may be missing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GgmlLog {
    /// Weights, KV cache and compute buffers on the GPUs, summed over them.
    pub gpu_weights: Option<u64>,
    pub gpu_kv: Option<u64>,
    pub gpu_compute: Option<u64>,
    /// The vision projector's image buffer on the GPUs (`--mmproj`: clip's
    /// `alloc_compute_meta`), when the log loaded one.
    #[serde(default)]
    pub gpu_projector_compute: Option<u64>,
    /// How many GPU devices the buffers name ("CUDA0", "CUDA1"…).
    pub gpu_devices: u32,
    /// With several GPUs, the busiest one's weights, KV cache and compute buffer (the
    /// GPU whose three add up to the most).
    #[serde(default)]
    pub busiest_gpu: Option<(u64, u64, u64)>,
    /// The model buffers in RAM ("CPU", "CPU_Mapped").
    pub host_weights: Option<u64>,
    pub n_ctx: Option<u64>,
    pub n_seq_max: Option<u64>,
    /// The slots share one KV pool ("kv_unified = true").
    #[serde(default)]
    pub kv_unified: Option<bool>,
    pub n_ubatch: Option<u64>,
    pub flash_attn: Option<bool>,
    pub kv_type: Option<KvDtype>,
    /// "offloaded N/M layers": N (M counts the output layer).
    pub layers_on_gpu: Option<u64>,
    pub layers_total: Option<u64>,
    /// Whether the log printed "offloading output layer to GPU" (`None`: it printed
    /// neither that nor the repeating layers' line).
    #[serde(default)]
    pub output_on_gpu: Option<bool>,
    pub format: Option<WeightFormat>,
}

impl GgmlLog {
    /// The KV type as llama.cpp prints it ("f16", "q8_0", "q4_0", "bf16"); `None` for a
    /// type vramlab does not model ("q5_1", "iq4_nl").
    pub fn kv_type_of(printed: &str) -> Option<KvDtype> {
        match printed.trim().to_ascii_lowercase().as_str() {
            "f16" | "bf16" => Some(KvDtype::Fp16),
            "q8_0" => Some(KvDtype::Int8),
            "q4_0" => Some(KvDtype::Int4),
            _ => None,
        }
    }

    /// Whether a ggml buffer type lives in host RAM: "CPU", "CPU_Mapped", "CPU_REPACK",
    /// "CUDA_Host" (pinned). Everything else ("CUDA0", "ROCm1", "Vulkan0", "Metal") is a
    /// device.
    pub fn is_host_buffer(device: &str) -> bool {
        let d = device.to_ascii_lowercase();
        d.starts_with("cpu") || d.ends_with("_host")
    }
}

/// Evaluates `model` as the llama.cpp run of `log` ([`ggml_settings`]). A partial
/// offload whose log says nothing of the output layer (neither "offloading output layer
/// to GPU" nor the repeating layers' line survived the paste) may come from a build of
/// either `-ngl` ([`crate::estimate::ggml::placement`]): the one whose GPU weights match
/// the log's model buffers is kept.
pub fn ggml_evaluate(model: &Model, log: &GgmlLog) -> Result<Evaluation, EstimateError> {
    let s = ggml_settings(log);
    let e = evaluate(model, &s)?;
    let partial = matches!(
        (log.layers_on_gpu, log.layers_total),
        (Some(on), Some(total)) if on < total
    );
    let logged = log.gpu_weights.filter(|_| log.format.is_some());
    let (true, None, Some(logged)) = (partial, log.output_on_gpu, logged) else {
        return Ok(e);
    };
    let older = Settings {
        ngl_output_first: false,
        ..s
    };
    let f = evaluate(model, &older)?;
    let off = |e: &Evaluation| e.estimate.breakdown.weights.abs_diff(logged);
    Ok(if off(&f) < off(&e) { f } else { e })
}

/// A log of several GPUs evaluated with its GPUs, for [`ggml_busiest`]: llama.cpp
/// deals the layers among them (`estimate::ggml::gpu_shares`) and, with every layer
/// there, pipelines them. `whole` is [`ggml_evaluate`]'s, whose reading of `-ngl` holds
/// here too. `None` for one GPU.
pub fn ggml_split_evaluate(model: &Model, log: &GgmlLog, whole: &Evaluation) -> Option<Evaluation> {
    if log.gpu_devices < 2 {
        return None;
    }
    let mut s = ggml_settings(log);
    s.gpus = log.gpu_devices;
    s.ngl_output_first = whole.workload.ngl_output_first;
    evaluate(model, &s).ok()
}

/// The busiest GPU of a several-GPU log against the busiest GPU of
/// [`ggml_split_evaluate`]'s estimate: what each GPU must hold.
pub fn ggml_busiest(split: &Evaluation, log: &GgmlLog) -> Vec<Term> {
    let Some((weights, kv, compute)) = log.busiest_gpu else {
        return Vec::new();
    };
    let partial = matches!(
        (log.layers_on_gpu, log.layers_total),
        (Some(on), Some(total)) if on < total
    );
    let projector = split.estimate.projector.unwrap_or_default();
    let b = &split.estimate.breakdown;
    let mut out = Vec::new();
    if log.format.is_some() {
        out.push(Term {
            name: "Pesos en la GPU más cargada",
            unit: Unit::Bytes,
            logged: weights,
            estimated: b.weights.saturating_sub(projector.weights),
            why: None,
        });
    }
    out.push(Term {
        name: "Caché KV en la GPU más cargada",
        unit: Unit::Bytes,
        logged: kv,
        estimated: b.kv_cache,
        why: None,
    });
    if log.format.is_some() || !partial {
        out.push(Term {
            name: "Búfer de cómputo de la GPU más cargada",
            unit: Unit::Bytes,
            logged: compute,
            estimated: b.activations.saturating_sub(projector.compute),
            why: split
                .notes
                .iter()
                .any(|n| matches!(n, Note::LayerSplit { pipeline: Some(_), .. }))
                .then_some(
                "en cadena, cada GPU guarda cuatro copias de sus entradas (estados ocultos y máscara de atención)",
            ),
        });
    }
    out
}

/// vramlab's settings for the run a llama.cpp log describes: its context split over its
/// slots, micro-batch, flash attention, KV type, offloaded layers and file type; the
/// llama.cpp runtime's defaults for what the log does not say.
pub fn ggml_settings(log: &GgmlLog) -> Settings {
    let mut s = Settings::defaults(Task::Inference, Runtime::LlamaCpp);
    let slots = log.n_seq_max.unwrap_or(1).clamp(1, 4096);
    // One pool shared by the slots (llama-server's `-np auto` prints "kv_unified =
    // true"; builds from before that option, which do not print it, always had one
    // pool): the whole context once, with a window per slot in the sliding-window
    // layers. "kv_unified = false" is a stream per slot.
    let unified = slots > 1 && log.kv_unified != Some(false);
    s.slots = Some(if unified {
        u32::try_from(slots).unwrap_or(u32::MAX)
    } else {
        0
    });
    if let Some(ctx) = log.n_ctx.filter(|&c| c > 0) {
        if unified {
            s.seq = Some(ctx);
            s.batch = 1;
        } else {
            s.seq = Some(ctx.div_ceil(slots));
            s.batch = slots;
        }
    }
    s.new_tokens = 0;
    if let Some(ub) = log.n_ubatch.and_then(|u| u32::try_from(u).ok()) {
        s.ubatch = ub.max(1);
    }
    if let Some(fa) = log.flash_attn {
        s.attention = if fa {
            Attention::Flash
        } else {
            Attention::Sdpa
        };
    }
    if let Some(kv) = log.kv_type {
        s.kv_dtype = kv;
    }
    if let Some(f) = log.format {
        s.format = f;
    }
    // "offloaded 20/33": -ngl 20; "33/33": every layer and the output. The log says
    // where they went, so nothing is left to the estimate's own fitting. A partial
    // offload that left the output on the CPU is an older build's `-ngl`.
    s.ngl_output_first = log.output_on_gpu.unwrap_or(true);
    if let (Some(on), Some(total)) = (log.layers_on_gpu, log.layers_total) {
        s.gpu_layers = Some(if on < total {
            u32::try_from(on).unwrap_or(crate::settings::GPU_LAYERS_ALL)
        } else {
            crate::settings::GPU_LAYERS_ALL
        });
    }
    s.mmproj = log.gpu_projector_compute.is_some();
    s
}

/// Pairs a llama.cpp log with an evaluation of [`ggml_settings`] for the same model.
/// Without the file type, the weights are not compared (their size is the format's),
/// nor a partially offloaded GPU's compute buffer (it holds a copy of the output
/// matrix, in the file's type).
pub fn ggml(e: &Evaluation, log: &GgmlLog) -> Vec<Term> {
    // The projector's weights and image buffer are the vision context's, logged apart
    // from the language model's buffers.
    let projector = e.estimate.projector.unwrap_or_default();
    let b = &Breakdown {
        weights: e
            .estimate
            .breakdown
            .weights
            .saturating_sub(projector.weights),
        activations: e
            .estimate
            .breakdown
            .activations
            .saturating_sub(projector.compute),
        ..e.estimate.breakdown
    };
    let several = log.gpu_devices > 1;
    let format_known = log.format.is_some();
    let partial = matches!(
        (log.layers_on_gpu, log.layers_total),
        (Some(on), Some(total)) if on < total
    );
    let log = &GgmlLog {
        gpu_weights: log.gpu_weights.filter(|_| format_known),
        host_weights: log.host_weights.filter(|_| format_known),
        gpu_compute: log.gpu_compute.filter(|_| format_known || !partial),
        ..*log
    };
    let mut out = Vec::new();
    let mut term = |name, logged: Option<u64>, estimated: u64, why| {
        if let Some(logged) = logged {
            out.push(Term {
                name,
                unit: Unit::Bytes,
                logged,
                estimated,
                why,
            });
        }
    };
    term(
        if several {
            "Pesos en las GPU (suma)"
        } else {
            "Pesos en la GPU"
        },
        log.gpu_weights,
        b.weights,
        None,
    );
    term(
        if several {
            "Caché KV en las GPU (suma)"
        } else {
            "Caché KV en la GPU"
        },
        log.gpu_kv,
        b.kv_cache,
        None,
    );
    // Every GPU reserves its own compute buffer for its part of the graph: the busiest
    // GPU's is compared apart ([`ggml_busiest`]).
    if !several {
        term(
            "Búfer de cómputo de la GPU",
            log.gpu_compute,
            b.activations,
            None,
        );
    }
    term(
        "Búfer de la imagen (proyector de visión)",
        log.gpu_projector_compute,
        projector.compute,
        None,
    );
    term(
        "Pesos en la RAM",
        log.host_weights,
        e.estimate.host_weights_bytes,
        Some(
            "con mmap (lo normal), llama.cpp mapea el archivo: esa RAM es caché de páginas \
             que el sistema puede compartir y liberar",
        ),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;
    use crate::estimate::ModelInput;
    use crate::evaluate::{Model, evaluate};
    use crate::settings::{Runtime, Settings, Task};
    use crate::units::ByteSize;

    /// Llama 3.1 8B on an 80 GB card, as the vLLM 0.7 start-up log in the oom corpus
    /// (`vllm_profile_then_max_seq_len`'s sibling cases) prints it.
    #[test]
    fn every_logged_term_is_paired_and_kv_per_token_is_exact() {
        let model = Model::new(ModelInput::Arch {
            arch: Box::new(catalog::model("llama-3.1-8b").unwrap().arch.clone()),
            total_params: None,
        });
        let mut s = Settings::defaults(Task::Inference, Runtime::Vllm);
        s.gpu_memory = Some(79 * ByteSize::GIB);
        let e = evaluate(&model, &s).unwrap();
        // Llama 3.1 8B in bf16: 32 layers × 8 KV heads × 128 × 2 (K and V) × 2 bytes.
        let per_token = 32 * 8 * 128 * 2 * 2;
        let log = VllmLog {
            weights: Some(16_094_603_837),
            activation_peak: Some(1_331_439_862),
            non_torch: Some(375_809_638),
            kv_cache: Some(58_647_000_000),
            kv_tokens: Some(58_647_000_000 / per_token),
        };
        let terms = vllm(&e, &log);
        let names: Vec<&str> = terms.iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            [
                "Pesos",
                "Pico de activaciones del perfilado",
                "Fuera de PyTorch",
                "Caché KV",
                "Bytes de caché por token",
                "Tokens en la caché KV"
            ]
        );
        let per = terms
            .iter()
            .find(|t| t.name == "Bytes de caché por token")
            .unwrap();
        assert_eq!(per.estimated, per_token);
        assert!(per.error_percent().unwrap().abs() < 0.01);
        let weights = &terms[0];
        assert!(weights.error_percent().unwrap().abs() < 1.0, "{weights:?}");
    }

    /// The EduHPC 2025 paper's llama-cpp-python log (appendix B; the validation case
    /// `llamacpp-mistral7b-ngl20-*`): Mistral 7B v0.1 Q4_K_M, `-ngl 20`, n_ctx 768,
    /// n_ubatch 256, flash attention, f16 KV, on an RTX 4060 Laptop.
    #[test]
    fn a_llama_cpp_log_is_estimated_with_its_own_settings() {
        let mib = |hundredths: u64| hundredths * 1024 * 1024 / 100;
        let log = GgmlLog {
            gpu_weights: Some(mib(249_531)),
            gpu_kv: Some(mib(6_000)),
            gpu_compute: Some(mib(13_779)),
            gpu_devices: 1,
            n_ctx: Some(768),
            n_seq_max: Some(1),
            n_ubatch: Some(256),
            flash_attn: Some(true),
            kv_type: GgmlLog::kv_type_of("f16"),
            layers_on_gpu: Some(20),
            layers_total: Some(33),
            format: WeightFormat::from_llama_ftype("Q4_K - Medium"),
            ..GgmlLog::default()
        };
        let s = ggml_settings(&log);
        assert_eq!((s.seq, s.batch, s.ubatch), (Some(768), 1, 256));
        assert_eq!(s.gpu_layers, Some(20));
        assert_eq!(s.format.id(), "Q4_K_M");
        let model = Model::new(ModelInput::Arch {
            arch: Box::new(catalog::model("mistral-7b-v0.1").unwrap().arch.clone()),
            total_params: None,
        });
        // The pasted excerpt has no "offloading … to GPU" lines: today's `-ngl 20`
        // (the output and 19 layers) and an older build's (20 layers, the output on
        // the CPU) are both tried, and the log's model buffer picks the older one.
        assert!(s.ngl_output_first);
        let e = ggml_evaluate(&model, &log).unwrap();
        assert!(!e.workload.ngl_output_first);
        let terms = ggml(&e, &log);
        let names: Vec<&str> = terms.iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            [
                "Pesos en la GPU",
                "Caché KV en la GPU",
                "Búfer de cómputo de la GPU"
            ]
        );
        for t in &terms {
            assert!(t.error_percent().unwrap().abs() < 0.1, "{t:?}");
        }
        // A log that says it ("offloading 20 repeating layers to GPU" alone) is taken
        // at its word; one that printed the output line is today's placement.
        let older = GgmlLog {
            output_on_gpu: Some(false),
            ..log
        };
        assert!(!ggml_settings(&older).ngl_output_first);
        let newer = GgmlLog {
            output_on_gpu: Some(true),
            ..log
        };
        assert!(
            ggml_evaluate(&model, &newer)
                .unwrap()
                .workload
                .ngl_output_first
        );
        assert_eq!(
            evaluate(&model, &ggml_settings(&older)).unwrap(),
            ggml_evaluate(&model, &older).unwrap()
        );
    }

    /// A llama-server log of Gemma 2 2B (build 7445, `-c 8192`, `-np` left at auto:
    /// "n_parallel = 4 and kv_unified = true") sized both caches at 8192 cells, 416.00
    /// MiB each: the four slots share one pool, with a window each in the
    /// sliding-window layers. A log of one sequence keeps a window and a micro-batch.
    #[test]
    fn a_log_pins_how_its_slots_share_the_kv_cache() {
        let gemma = Model::new(ModelInput::Arch {
            arch: Box::new(catalog::model("gemma-2-2b").unwrap().arch.clone()),
            total_params: None,
        });
        let log = GgmlLog {
            n_ctx: Some(8192),
            n_seq_max: Some(4),
            kv_unified: Some(true),
            n_ubatch: Some(512),
            kv_type: GgmlLog::kv_type_of("f16"),
            ..GgmlLog::default()
        };
        let s = ggml_settings(&log);
        assert_eq!((s.seq, s.batch, s.slots), (Some(8192), 1, Some(4)));
        let kv = |s: &Settings| evaluate(&gemma, s).unwrap().estimate.breakdown.kv_cache;
        assert_eq!(kv(&s), 2 * 416 * ByteSize::MIB);
        // Four streams of their own (`-np 4`): 2048 cells each, whole in both caches.
        let streams = ggml_settings(&GgmlLog {
            kv_unified: Some(false),
            ..log
        });
        assert_eq!(
            (streams.seq, streams.batch, streams.slots),
            (Some(2048), 4, Some(0))
        );
        assert_eq!(kv(&streams), 2 * 416 * ByteSize::MIB);
        // A build that does not print the option had one pool.
        let older = ggml_settings(&GgmlLog {
            kv_unified: None,
            ..log
        });
        assert_eq!(
            (older.seq, older.batch, older.slots),
            (Some(8192), 1, Some(4))
        );
        // One sequence (llama-cli, llama-cpp-python): 4096 + 512 cells in the windowed
        // layers, not the four windows llama-server's default would keep.
        let one = ggml_settings(&GgmlLog {
            n_seq_max: Some(1),
            kv_unified: None,
            ..log
        });
        assert_eq!(one.slots, Some(0));
        assert_eq!(
            kv(&one),
            416 * ByteSize::MIB + 416 * ByteSize::MIB / 8192 * 4608
        );
    }

    /// A llama-server log with `--mmproj`: clip's image buffer is its own term, and the
    /// language model's buffers are compared without the projector.
    #[test]
    fn a_projector_is_paired_apart_from_the_language_model() {
        let model = Model::new(ModelInput::Arch {
            arch: Box::new(catalog::model("gemma-3-4b").unwrap().arch.clone()),
            total_params: None,
        });
        let base = GgmlLog {
            n_ctx: Some(4096),
            n_ubatch: Some(512),
            flash_attn: Some(true),
            format: WeightFormat::from_llama_ftype("Q4_K - Medium"),
            gpu_devices: 1,
            ..GgmlLog::default()
        };
        let text = evaluate(&model, &ggml_settings(&base)).unwrap().estimate;
        assert_eq!(text.projector, None);
        let log = GgmlLog {
            gpu_weights: Some(text.breakdown.weights),
            gpu_compute: Some(text.breakdown.activations),
            gpu_projector_compute: Some(12_125 * ByteSize::MIB / 100),
            ..base
        };
        let s = ggml_settings(&log);
        assert!(s.mmproj);
        let e = evaluate(&model, &s).unwrap();
        assert!(e.estimate.projector.is_some());
        let terms = ggml(&e, &log);
        let names: Vec<&str> = terms.iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            [
                "Pesos en la GPU",
                "Búfer de cómputo de la GPU",
                "Búfer de la imagen (proyector de visión)"
            ]
        );
        for t in &terms {
            assert_eq!(t.error_percent(), Some(0.0), "{t:?}");
        }
    }

    #[test]
    fn several_gpus_compare_sums_and_no_single_compute_buffer() {
        let log = GgmlLog {
            gpu_weights: Some(1 << 30),
            gpu_kv: Some(1 << 28),
            gpu_compute: Some(1 << 27),
            gpu_devices: 2,
            format: WeightFormat::from_llama_ftype("Q8_0"),
            ..GgmlLog::default()
        };
        let model = Model::new(ModelInput::Params(1_000_000_000));
        let e = evaluate(&model, &ggml_settings(&log)).unwrap();
        let names: Vec<&str> = ggml(&e, &log).iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            ["Pesos en las GPU (suma)", "Caché KV en las GPU (suma)"]
        );
        assert!(GgmlLog::is_host_buffer("CUDA_Host"));
        assert!(GgmlLog::is_host_buffer("CPU_Mapped"));
        assert!(!GgmlLog::is_host_buffer("CUDA0"));
        assert!(!GgmlLog::is_host_buffer("Metal"));
    }

    #[test]
    fn nothing_to_pair_without_a_serving_plan() {
        let model = Model::new(ModelInput::Params(7_000_000_000));
        let s = Settings::defaults(Task::Inference, Runtime::Transformers);
        let e = evaluate(&model, &s).unwrap();
        assert!(vllm(&e, &VllmLog::default()).is_empty());
    }
}
