//! The verdict: whether a workload fits one GPU, read against its runtime's error
//! band, and vLLM's refusals before it serves (the parallel layout, the start-up
//! memory check, CUDA graphs that do not fit); and its one Spanish sentence per
//! surface ([`Evaluation::verdict_text`]).

use super::Evaluation;
use crate::band::Band;
use crate::cuda_graphs::CudaGraphs;
use crate::estimate::Estimate;
use crate::serving::ServingPlan;
use crate::settings::{Runtime, Settings, Surface};
use crate::units::{ByteSize, group_digits};
use crate::workload::Workload;

/// Whether the workload fits one GPU, read against the error band of its runtime
/// ([`Band`]): "fits" only when the band's high end fits too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The band's high end fits: `spare` left by the estimate, `spare_high` by the
    /// high end.
    Fits {
        spare: u64,
        spare_high: u64,
    },
    /// The estimate fits with `spare` left, but the band's high end needs `short` more
    /// than the GPU has: it may run out of memory.
    Tight {
        spare: u64,
        short: u64,
    },
    DoesNotFit {
        missing: u64,
    },
    /// Serving: the KV cache left holds this many sequences of the context at once,
    /// `at_least` at the band's low end (0: the server may refuse to start).
    Serves {
        sequences: u64,
        at_least: u64,
    },
    /// Serving: not even one sequence of the context fits in the KV cache left (vLLM
    /// refuses to start).
    CannotServe {
        /// KV cache bytes left after weights, activations and overhead.
        kv_budget: u64,
        /// KV cache bytes one sequence of the context needs.
        needed: u64,
        /// The longest context (`max_model_len`) that would start: the tokens the KV
        /// cache left holds, in whole blocks, as vLLM's own estimate in its refusal.
        longest: u64,
    },
    /// Serving: vLLM refuses to start before loading anything, because the GPU's free
    /// memory is less than `gpu_memory_utilization` × its total (`init_device` in
    /// vllm/v1/worker/gpu_worker.py: "Free memory on device … on startup is less than
    /// desired GPU memory utilization").
    WontStart {
        /// Free memory at start-up: the total less what other processes hold and the
        /// process's own CUDA context.
        free: u64,
        /// `gpu_memory_utilization` × the total.
        requested: u64,
        /// The largest `gpu_memory_utilization` that starts, in percent.
        max_percent: u8,
    },
    /// vLLM refuses the tensor-parallel degree before loading anything: the model's
    /// attention heads must split evenly ("Total number of attention heads … must be
    /// divisible by tensor parallel size", `verify_with_parallel_config` in
    /// vllm/config/model.py).
    TpRefused {
        heads: u32,
        tp: u32,
    },
    /// Serving: vLLM starts and fills `gpu_memory_utilization` with the KV cache, then
    /// runs out of memory capturing its CUDA graphs, which versions up to 0.20 did not
    /// reserve room for ([`crate::cuda_graphs`]).
    GraphsDoNotFit {
        /// Free memory at start-up, as in [`Verdict::WontStart`].
        free: u64,
        /// `gpu_memory_utilization` × the total, all of it taken before the capture.
        requested: u64,
        /// What the graphs need on top.
        graphs: u64,
        /// The largest `gpu_memory_utilization` that leaves them room, in percent.
        max_percent: u8,
    },
}

impl Verdict {
    /// Whether the run fits even at the band's high end.
    pub fn fits(self) -> bool {
        match self {
            Verdict::Fits { .. } => true,
            Verdict::Serves { at_least, .. } => at_least >= 1,
            Verdict::Tight { .. }
            | Verdict::DoesNotFit { .. }
            | Verdict::CannotServe { .. }
            | Verdict::WontStart { .. }
            | Verdict::TpRefused { .. }
            | Verdict::GraphsDoNotFit { .. } => false,
        }
    }

    /// Whether a server gets as far as serving: false when vLLM refuses to start or
    /// dies capturing its CUDA graphs (its plan is then what it would have had).
    pub fn starts(self) -> bool {
        !matches!(
            self,
            Verdict::WontStart { .. } | Verdict::GraphsDoNotFit { .. } | Verdict::TpRefused { .. }
        )
    }

    /// The verdict's id in the CLI's JSON.
    pub fn id(self) -> &'static str {
        match self {
            Verdict::Fits { .. } => "fits",
            Verdict::Tight { .. } => "tight",
            Verdict::DoesNotFit { .. } => "does-not-fit",
            Verdict::Serves { at_least: 0, .. } => "tight-serve",
            Verdict::Serves { .. } => "serves",
            Verdict::CannotServe { .. } => "cannot-serve",
            Verdict::WontStart { .. } => "wont-start",
            Verdict::TpRefused { .. } => "refused",
            Verdict::GraphsDoNotFit { .. } => "graphs-do-not-fit",
        }
    }
}

/// vLLM's refusal of a tensor-parallel degree that does not divide the attention heads
/// ([`Verdict::TpRefused`]).
pub(super) fn tp_refused(model: &super::Model, s: &Settings, w: &Workload) -> Option<Verdict> {
    let heads = model.arch()?.heads;
    (s.runtime == Runtime::Vllm
        && !s.task.is_training()
        && w.tp > 1
        && heads > 0
        && !heads.is_multiple_of(w.tp))
    .then_some(Verdict::TpRefused { heads, tp: w.tp })
}

/// vLLM's start-up check for a GPU of `capacity` bytes left by other processes: the
/// free memory its worker sees first (that capacity less the CUDA context it has just
/// created, [`Settings::start_context`]) must reach what it requested, the serving
/// plan's budget (`gpu_memory_utilization` × the whole card). Where the CUDA graphs
/// are captured after the KV cache has filled that budget, the same free memory must
/// hold them too. `None` when it starts and serves.
pub(super) fn start_check(s: &Settings, capacity: u64, plan: &ServingPlan) -> Option<Verdict> {
    let usable = u128::from(s.card_memory().unwrap_or(capacity).max(1));
    let free = capacity.saturating_sub(s.start_context());
    let requested = plan.budget_bytes;
    let percent = |bytes: u64| u8::try_from(u128::from(bytes) * 100 / usable).unwrap_or(100);
    if free < requested {
        return Some(Verdict::WontStart {
            free,
            requested,
            max_percent: percent(free),
        });
    }
    let graphs = plan.cuda_graph_bytes;
    (plan.cuda_graphs == CudaGraphs::AfterKv && free - requested < graphs).then(|| {
        Verdict::GraphsDoNotFit {
            free,
            requested,
            graphs,
            max_percent: percent(free.saturating_sub(graphs)),
        }
    })
}

/// The verdict of `est` (and its serving plan) on a GPU of `capacity` bytes.
pub(super) fn judge(
    est: &Estimate,
    serving: Option<&ServingPlan>,
    band: Option<Band>,
    w: &Workload,
    capacity: u64,
) -> Verdict {
    let context = w.seq.saturating_add(w.new_tokens);
    if let Some(p) = serving {
        return if p.max_sequences >= 1 {
            Verdict::Serves {
                sequences: p.max_sequences,
                at_least: band.map_or(p.max_sequences, |b| b.low_count(p.tokens) / context.max(1)),
            }
        } else {
            Verdict::CannotServe {
                kv_budget: p.kv_budget_bytes,
                needed: p.kv_bytes_per_token.saturating_mul(context),
                longest: p.tokens,
            }
        };
    }
    let need = est.per_gpu_bytes;
    let high = band.map_or(need, |b| b.high_bytes(need, est.breakdown.weights));
    if need > capacity {
        Verdict::DoesNotFit {
            missing: need - capacity,
        }
    } else if high > capacity {
        Verdict::Tight {
            spare: capacity - need,
            short: high - capacity,
        }
    } else {
        Verdict::Fits {
            spare: capacity - need,
            spare_high: capacity - high,
        }
    }
}

impl Evaluation {
    /// The verdict as one Spanish sentence: naming `gpu` ("Cabe en GeForce RTX 4090
    /// (23,99 GiB): sobran 7,62 GiB.") or, without a name, short ("Cabe: sobran …").
    /// The CLI's words may name its flags; the web's never do. For an architecture the
    /// engine does not model it opens with «Aproximado».
    pub fn verdict_text(&self, gpu: Option<&str>, surface: Surface) -> Option<String> {
        let text = self.sentence(gpu, surface)?;
        Some(if self.approximate {
            format!("Aproximado (arquitectura no modelada): {text}")
        } else {
            text
        })
    }

    fn sentence(&self, gpu: Option<&str>, surface: Surface) -> Option<String> {
        let v = self.verdict?;
        let bytes = |b: u64| ByteSize(b).binary();
        let target = match gpu {
            Some(name) => {
                let each = if self.estimate.gpus > 1 {
                    ", por GPU"
                } else {
                    ""
                };
                let cap = self.capacity.map(bytes).unwrap_or_default();
                format!(" en {name} ({cap}{each})")
            }
            None => String::new(),
        };
        // «Cabe» with layers in RAM is the GPU's part: say so where the verdict is read.
        let target = match self.cpu_split {
            Some(split) => format!("{target}{}", split.text()),
            None => target,
        };
        let context = group_digits(self.workload.seq.saturating_add(self.workload.new_tokens));
        Some(match v {
            Verdict::Fits { spare, spare_high } => format!(
                "Cabe con margen{target}: sobran {}, y {} aun en el extremo alto de la banda de error.",
                bytes(spare),
                bytes(spare_high)
            ),
            Verdict::Tight { spare, short } => format!(
                "Al límite{target}: el cálculo deja {} libres, pero en el extremo alto de la banda de error faltarían {}; puede quedarse sin memoria.",
                bytes(spare),
                bytes(short)
            ),
            Verdict::DoesNotFit { missing } => {
                format!("No cabe{target}: faltan {}.", bytes(missing))
            }
            Verdict::Serves {
                sequences,
                at_least: 0,
            } => format!(
                "Al límite como servidor{target}: el cálculo da {} de {context} tokens a la vez, pero en el extremo bajo de la banda de error no cabría ninguna y el servidor no arrancaría. {}",
                crate::units::counted(sequences, "secuencia", "secuencias"),
                match surface {
                    Surface::Cli => "Baja --seq (max_model_len) o sube --gpu-memory-utilization.",
                    Surface::Web => "Reduce el contexto (max_model_len de vLLM).",
                }
            ),
            Verdict::Serves {
                sequences,
                at_least,
            } if at_least < sequences => format!(
                "Cabe como servidor{target}: {} de {context} tokens a la vez ({} en el extremo bajo de la banda de error).",
                crate::units::counted(sequences, "secuencia", "secuencias"),
                group_digits(at_least)
            ),
            Verdict::Serves { sequences, .. } => format!(
                "Cabe como servidor{target}: {} de {context} tokens a la vez.",
                crate::units::counted(sequences, "secuencia", "secuencias")
            ),
            Verdict::CannotServe {
                kv_budget,
                needed,
                longest,
            } => {
                let prompt = longest.saturating_sub(self.workload.new_tokens);
                // The longest prompt that also starts at the band's unfavourable end.
                let margin = self
                    .margin
                    .seq
                    .filter(|&m| m > 0 && m < prompt)
                    .map(|m| {
                        let longest = m.saturating_add(self.workload.new_tokens);
                        match surface {
                            // A value to pass as a flag, written as the flag takes it.
                            Surface::Cli => format!("; {longest} con margen"),
                            Surface::Web => format!("; {} con margen", group_digits(longest)),
                        }
                    })
                    .unwrap_or_default();
                let advice = match surface {
                    _ if prompt == 0 => {
                        "No queda sitio ni para un contexto corto: hace falta más memoria por GPU o más GPU.".to_owned()
                    }
                    Surface::Cli => format!(
                        "Arrancaría con --seq {prompt} o menos (max_model_len {longest}{margin}), o subiendo --gpu-memory-utilization.",
                    ),
                    Surface::Web => format!(
                        "Arrancaría con un contexto de hasta {} tokens (max_model_len de vLLM{margin}).",
                        group_digits(longest)
                    ),
                };
                format!(
                    "No arranca como servidor{target}: quedan {} para la caché KV y una secuencia de {context} tokens necesita {}. {advice}",
                    bytes(kv_budget),
                    bytes(needed),
                )
            }
            Verdict::WontStart {
                free,
                requested,
                max_percent,
            } => {
                let advice = match surface {
                    _ if max_percent == 0 => {
                        "Libera la GPU: otros procesos ocupan casi toda su memoria.".to_owned()
                    }
                    Surface::Cli => format!(
                        "Baja --gpu-memory-utilization a {}% o menos, o libera memoria de la GPU (--reserve dice cuánto ocupa ya).",
                        max_percent
                    ),
                    Surface::Web => format!(
                        "Baja gpu_memory_utilization al {} % o menos, o libera memoria de la GPU.",
                        max_percent
                    ),
                };
                format!(
                    "No arranca como servidor{target}: vLLM pide al arrancar {} (gpu_memory_utilization por la memoria total) y solo hay {} libres, descontados su contexto CUDA y lo que ya ocupan otros procesos. {advice}",
                    bytes(requested),
                    bytes(free),
                )
            }
            Verdict::TpRefused { heads, tp } => {
                // The nearest degrees that split the heads, below and above.
                let divides = |d: &u32| heads.is_multiple_of(*d);
                let below = (1..tp).rev().find(divides).unwrap_or(1);
                let above = (tp + 1..=heads).find(divides);
                let choices = match above {
                    Some(a) => format!("{below} o {a}"),
                    None => below.to_string(),
                };
                let how = match surface {
                    Surface::Cli => format!(
                        "Usa --tp {choices} (con --gpus múltiplo de ese número), o reparte por capas con --tp 1 --pp {tp}."
                    ),
                    Surface::Web => format!("Usa un número de GPU que divida {heads}: {choices}."),
                };
                format!(
                    "vLLM no arrancaría{target}: sus {heads} cabezas de atención no se reparten por igual entre {tp} GPU, y vLLM lo comprueba antes de cargar nada. {how}"
                )
            }
            Verdict::GraphsDoNotFit {
                free,
                requested,
                graphs,
                max_percent,
            } => {
                let advice = match surface {
                    Surface::Cli => format!(
                        "Baja --gpu-memory-utilization a {max_percent}% o menos, arranca vLLM con --enforce-eager (--cuda-graphs off) o usa vLLM 0.21 o posterior, que los descuenta de la caché KV (--cuda-graphs profiled)."
                    ),
                    Surface::Web => format!(
                        "Baja gpu_memory_utilization al {max_percent} % o menos, arranca vLLM sin grafos (enforce_eager) o usa vLLM 0.21 o posterior, que los descuenta de la caché KV."
                    ),
                };
                format!(
                    "Se quedaría sin memoria al arrancar como servidor{target}: la caché KV llena los {} de gpu_memory_utilization y después vLLM captura sus grafos CUDA, que piden unos {} más, pero solo quedan {} libres. {advice}",
                    bytes(requested),
                    bytes(graphs),
                    bytes(free.saturating_sub(requested)),
                )
            }
        })
    }
}
