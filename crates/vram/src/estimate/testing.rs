//! Test fixtures shared by the estimator's modules: catalog presets as model inputs
//! and workload builders, and one prelude for their test modules.

pub(crate) use crate::arch::Architecture;
pub(crate) use crate::catalog::model;
pub(crate) use crate::dtype::Dtype;
pub(crate) use crate::estimate::overhead::DEFAULT_CUDA_CONTEXT;
pub(crate) use crate::estimate::torch::activations::{
    head_cast, layer_activations, prefill_activations, training_activations,
};
pub(crate) use crate::estimate::torch::parallel::GradSync;
pub(crate) use crate::estimate::weights::embeddings_on_cpu;
pub(crate) use crate::estimate::{Estimate, ModelInput, estimate};
pub(crate) use crate::quant::WeightFormat;
pub(crate) use crate::workload::{
    Attention, Finetune, KvDtype, LoraTargets, Loss, Mode, Precision, Workload,
};
pub(crate) use proptest::prelude::*;

pub(crate) fn preset(id: &str) -> ModelInput {
    ModelInput::Arch {
        arch: Box::new(model(id).unwrap().arch.clone()),
        total_params: None,
    }
}

/// Llama 3.1 8B, its hidden size and vocabulary, and a bf16 full fine-tune with
/// an fp32 master copy on one GPU (1024 tokens, checkpointing).
pub(crate) fn llama_8b_full() -> (ModelInput, Architecture, u64, u64, Workload) {
    let a = model("llama-3.1-8b").unwrap().arch.clone();
    let (h, vocab) = (u64::from(a.hidden), u64::from(a.vocab));
    let w = Workload::default()
        .mode(Mode::Train)
        .weights(WeightFormat::Plain { dtype: Dtype::Bf16 })
        .precision(Precision::Master)
        .seq(1024)
        .grad_checkpointing(true);
    (preset("llama-3.1-8b"), a, h, vocab, w)
}
