//! vLLM's serving plan for an evaluation: its start-up profile and paged KV cache
//! ([`crate::serving`]) with the notes that explain them.

use super::Note;
use crate::Architecture;
use crate::estimate::Estimate;
use crate::serving::{self, ServingPlan};
use crate::settings::Settings;
use crate::workload::Workload;

/// The serving plan when `s` serves `a` on a GPU of `capacity` bytes; its notes go
/// to `notes`.
pub(super) fn plan(
    s: &Settings,
    arch: Option<&Architecture>,
    w: &Workload,
    est: &Estimate,
    capacity: Option<u64>,
    notes: &mut Vec<Note>,
) -> Option<ServingPlan> {
    let (true, Some(a), Some(c)) = (s.serving(), arch, capacity) else {
        return None;
    };
    let total = s.card_total().unwrap_or(c);
    // vLLM takes `gpu_memory_utilization` of the whole card as the driver reports it,
    // not of what other processes leave: they only decide whether it starts
    // (`verdict::start_check`).
    let usable = s.card_memory().unwrap_or(c);
    let profile = serving::Profile::vllm_default(total, s.gpu)
        .with_tokens(s.batched_tokens)
        .with_sequences(s.max_seqs)
        .with_graphs(s.cuda_graphs);
    let peak = serving::profile_peak(a, w, profile);
    notes.push(Note::ServingProfile {
        tokens: profile.batched_tokens,
        sequences: profile.sequences,
        bytes: peak,
        chosen_tokens: s.batched_tokens.is_some(),
        chosen_sequences: s.max_seqs.is_some(),
        several_gpus: serving::pays_whole_overhead(w),
    });
    if let Some(e) = serving::EncoderProfile::of(a, w, profile) {
        notes.push(Note::VisionEncoder {
            images: e.images,
            alive: e.alive,
        });
    }
    if let Some((padded, layers)) = serving::hybrid_padding(a, w.pp)
        && padded > layers
    {
        notes.push(Note::HybridKv { padded, layers });
    }
    let plan = serving::plan(
        a,
        w,
        est,
        usable,
        s.utilization,
        s.block_size,
        profile,
        peak,
    );
    notes.push(Note::CudaGraphs {
        mode: s.cuda_graphs,
        captures: profile.captures(),
        bytes: plan.cuda_graph_bytes,
        sparse: a.moe.is_some() || a.mla.is_some(),
    });
    Some(plan)
}
