//! The limits an evaluation reports: the largest batch and context that fit (a
//! server's from its KV cache), the same at the band's unfavourable end, the layers
//! and experts llama.cpp can keep on the GPU, the smallest GPU and the fewest GPUs.

use super::{CpuMoeFit, LayerFit, Margin, Model, Verdict};
use crate::band::Band;
use crate::catalog::Gpu;
use crate::estimate::Estimate;
use crate::serving::ServingPlan;
use crate::settings::{Runtime, Settings};
use crate::solve;
use crate::workload::Workload;

/// What the runtime settled on: the placed workload, the model whole, the serving
/// plan.
pub(super) struct Placed<'a> {
    pub w: &'a Workload,
    pub whole: &'a Workload,
    pub serving: Option<&'a ServingPlan>,
}

pub(super) struct Limits {
    pub max_batch: Option<u64>,
    pub max_seq: Option<u64>,
    pub margin: Margin,
    pub max_gpu_layers: Option<LayerFit>,
    pub min_cpu_moe: Option<CpuMoeFit>,
    pub smallest_gpu: Option<&'static Gpu>,
    pub min_gpus: Option<u32>,
}

impl Limits {
    /// The limits of `model` under `s`; `refused` when vLLM refuses the parallel
    /// layout (nothing runs, so nothing is listed).
    pub(super) fn of(
        model: &Model,
        s: &Settings,
        placed: &Placed,
        band: Option<Band>,
        capacity: Option<u64>,
        refused: bool,
        verdict: Option<Verdict>,
    ) -> Limits {
        let (input, w, whole) = (&model.input, placed.w, placed.whole);
        let arch = model.arch();
        // A server's limits are its KV cache's: the sequences it holds at once, and the
        // longest context (less the generated tokens) that one sequence can have.
        let starts = verdict.is_none_or(Verdict::starts);
        // vLLM refuses a max_model_len beyond the model's own (`_get_and_verify_max_len`),
        // however much cache there is.
        let model_limit = |tokens: u64| {
            arch.map_or(tokens, |a| {
                tokens.min(u64::from(a.max_positions).saturating_sub(w.new_tokens))
            })
        };
        let (max_batch, max_seq) = match placed.serving {
            Some(p) => (
                Some(p.max_sequences).filter(|&n| n > 0 && starts),
                Some(model_limit(p.tokens.saturating_sub(w.new_tokens)))
                    .filter(|&n| n > 0 && starts),
            ),
            // Nothing runs where vLLM refuses the parallel layout.
            None if refused => (None, None),
            None => (
                capacity.and_then(|c| solve::max_batch(input, w, c)),
                capacity.and_then(|c| solve::max_seq(input, w, c)),
            ),
        };
        let margin = match (placed.serving, band, capacity) {
            (Some(_), _, _) if !starts => Margin::default(),
            (Some(p), Some(b), _) => {
                let low = b.low_count(p.tokens);
                Margin {
                    batch: Some(low / w.seq.saturating_add(w.new_tokens).max(1)).filter(|&n| n > 0),
                    seq: Some(model_limit(low.saturating_sub(w.new_tokens))).filter(|&n| n > 0),
                }
            }
            (None, Some(b), Some(c)) => {
                let ok = |e: &Estimate| b.high_bytes(e.per_gpu_bytes, e.breakdown.weights) <= c;
                Margin {
                    batch: max_batch.and_then(|_| solve::max_batch_by(input, w, ok)),
                    seq: max_seq.and_then(|_| solve::max_seq_by(input, w, ok)),
                }
            }
            _ => Margin {
                batch: max_batch,
                seq: max_seq,
            },
        };
        Limits {
            max_batch,
            max_seq,
            margin,
            max_gpu_layers: capacity.and_then(|c| {
                Some(LayerFit {
                    fit: solve::max_gpu_layers(input, whole, c)?,
                    layers: arch?.layers,
                    output_first: whole.ngl_output_first,
                })
            }),
            // Recommended where it fits even at the band's high end, as «cabe con margen».
            min_cpu_moe: capacity
                .filter(|_| s.runtime == Runtime::LlamaCpp)
                .and_then(|c| {
                    let fit = match band {
                        Some(b) => solve::min_cpu_moe_by(input, whole, |e| {
                            b.high_bytes(e.per_gpu_bytes, e.breakdown.weights) <= c
                        }),
                        None => solve::min_cpu_moe(input, whole, c),
                    };
                    Some(CpuMoeFit {
                        fit: fit?,
                        layers: arch?.layers,
                    })
                }),
            // A layout vLLM refuses runs nowhere: no GPU list, count or speed for it.
            smallest_gpu: solve::smallest_gpu(input, whole, s.reserve, |g| s.runs_on(g))
                .filter(|_| !refused),
            min_gpus: capacity
                .filter(|_| !refused)
                .and_then(|c| solve::fewest_gpus(input, whole, c)),
        }
    }
}
