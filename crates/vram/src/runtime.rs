//! What the user runs: the task (inference, a full fine-tune, LoRA, QLoRA) and the
//! software that runs it, which decides how memory is kept beyond the model itself.
//! A leaf of the crate: the settings, the defaults each runtime opens with and the
//! error bands all name a runtime.

use crate::workload::Finetune;

/// What the user does with the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Task {
    Inference,
    /// Full fine-tuning (every parameter trained).
    Full,
    Lora,
    Qlora,
}

impl Task {
    pub fn finetune(self) -> Option<Finetune> {
        match self {
            Task::Inference => None,
            Task::Full => Some(Finetune::Full),
            Task::Lora => Some(Finetune::Lora),
            Task::Qlora => Some(Finetune::Qlora),
        }
    }

    pub fn is_training(self) -> bool {
        self != Task::Inference
    }
}

/// The software that runs the workload: it decides how memory is kept beyond the
/// model itself (precision, the loss over the logits, LoRA targets, checkpointing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Runtime {
    /// Hugging Face transformers: `Trainer`/TRL with PEFT for training, `generate`
    /// for inference.
    Transformers,
    /// Unsloth: fused cross-entropy, adapters on every linear, checkpointed layer
    /// inputs offloaded to CPU RAM.
    Unsloth,
    /// torchtune: pure bf16, chunked output cross-entropy.
    Torchtune,
    /// DeepSpeed (through `Trainer` or its own engine): 16-bit weights with an fp32
    /// master copy.
    Deepspeed,
    /// vLLM: a server with a paged KV cache sized at start-up.
    Vllm,
    /// llama.cpp (llama-server, llama-cli): ggml's compute buffer and padded KV cells,
    /// flash attention on where supported.
    LlamaCpp,
    /// Ollama: llama.cpp's engine (llama-server since 0.30) with flash attention where
    /// the GPU supports it, the vision projector of the models that carry one, and a
    /// default context chosen from the VRAM ([`crate::default_context::ollama_tier`]).
    Ollama,
    /// AutoAWQ with its fused modules (`fuse_layers=True`): a KV cache allocated up
    /// front and attention computed eagerly.
    AutoAwq,
}

impl Runtime {
    /// The runtime a task gets when nothing says otherwise.
    pub fn default_for(task: Task) -> Runtime {
        let _ = task;
        Runtime::Transformers
    }

    /// Whether this runtime runs `task` at all.
    pub fn runs(self, task: Task) -> bool {
        match self {
            Runtime::Transformers => true,
            Runtime::Unsloth | Runtime::Torchtune | Runtime::Deepspeed => task.is_training(),
            Runtime::Vllm | Runtime::LlamaCpp | Runtime::Ollama | Runtime::AutoAwq => {
                !task.is_training()
            }
        }
    }
}
