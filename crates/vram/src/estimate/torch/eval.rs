//! `Trainer`'s evaluation: the loss of one evaluation batch and what `compute_metrics`
//! keeps per evaluated sequence.

use crate::arch::Architecture;
use crate::estimate::mul;
use crate::workload::Workload;

/// `per_device_eval_batch_size` in transformers' `TrainingArguments` (and TRL's
/// `SFTConfig`, which keeps it): evaluation runs 8 sequences at a time whatever the
/// training batch.
pub const TRAINER_EVAL_BATCH: u64 = 8;

/// The loss of one evaluation batch of `batch` sequences over the logits, in bytes:
/// `Trainer.prediction_step` computes the loss under `no_grad` from the logits in the
/// compute dtype, their fp32 copy and its fp32 log-softmax (`ForCausalLMLoss`), alive
/// together (c + 8 bytes per logit). Nothing is saved for a backward.
pub fn eval_loss_bytes(a: &Architecture, w: &Workload, batch: u64) -> u64 {
    if a.encoder_only {
        return 0;
    }
    let vocab = u64::from(a.vocab) / u64::from(w.tp.max(1));
    mul(&[batch, w.seq, vocab, w.compute_dtype().bytes_for(1) + 8])
}

/// What `Trainer` keeps on the GPU per evaluated sequence when `compute_metrics` is set:
/// its logits and its int64 labels, gathered into `EvalLoopContainer`s that only go to
/// the CPU every `eval_accumulation_steps` (never, by default: `evaluation_loop` in
/// transformers/trainer.py). Each new batch is concatenated to the ones before
/// (`nested_concat`), so for a moment the old and the new tensor both exist: twice this
/// per sequence. The logits are fp32 when accelerate runs the model under autocast
/// (`Trainer(bf16=True)`: `prepare_model` wraps the forward in
/// `convert_outputs_to_fp32`), in the compute dtype otherwise (pure bf16, DeepSpeed).
pub fn eval_kept_bytes(a: &Architecture, w: &Workload, autocast_outputs: bool) -> u64 {
    if a.encoder_only {
        return 0;
    }
    let vocab = u64::from(a.vocab) / u64::from(w.tp.max(1));
    let per_logit = if autocast_outputs {
        4
    } else {
        w.compute_dtype().bytes_for(1)
    };
    mul(&[w.seq, vocab, per_logit]).saturating_add(mul(&[w.seq, 8]))
}
