//! The closed lists a setting chooses from (task, optimizer, attention, KV cache
//! format, ZeRO stage, precision): each value's canonical id, the other spellings
//! people use, and its Spanish label.
//!
//! The canonical id is what the CLI prints and its JSON carries; the web spelling is
//! what links and widget attributes carry (Spanish where the site always wrote Spanish,
//! the same id otherwise). Every spelling is accepted everywhere, so old links and
//! old scripts keep working.

pub use crate::cuda_graphs::CudaGraphs;
pub use crate::runtime::{Runtime, Task};
pub use crate::workload::Precision;
use crate::workload::{Attention, KvDtype, LoraTargets, Loss, Optimizer};

/// One value of a closed list.
#[derive(Debug)]
pub struct Choice<T: 'static> {
    pub value: T,
    /// Canonical id: CLI, JSON.
    pub id: &'static str,
    /// Spelling in links and widget attributes.
    pub web: &'static str,
    /// Other accepted spellings.
    pub aliases: &'static [&'static str],
    /// Spanish label for pickers and docs.
    pub label: &'static str,
}

const fn choice<T>(value: T, id: &'static str, label: &'static str) -> Choice<T> {
    Choice {
        value,
        id,
        web: id,
        aliases: &[],
        label,
    }
}

pub const TASKS: &[Choice<Task>] = &[
    Choice {
        value: Task::Inference,
        id: "inference",
        web: "inferencia",
        aliases: &[],
        label: "Inferencia",
    },
    Choice {
        value: Task::Full,
        id: "full",
        web: "entrenamiento",
        aliases: &["train"],
        label: "Entrenamiento completo",
    },
    choice(Task::Lora, "lora", "LoRA"),
    choice(Task::Qlora, "qlora", "QLoRA"),
];

pub const OPTIMIZERS: &[Choice<Optimizer>] = &[
    choice(Optimizer::Adamw, "adamw", "AdamW"),
    choice(Optimizer::Adamw8bit, "adamw8bit", "AdamW 8 bits"),
    choice(
        Optimizer::PagedAdamw8bit,
        "paged-adamw8bit",
        "AdamW 8 bits paginado",
    ),
    choice(
        Optimizer::PagedAdamw,
        "paged-adamw",
        "AdamW paginado de 32 bits (estados en FP32)",
    ),
    choice(Optimizer::Adafactor, "adafactor", "Adafactor"),
    choice(Optimizer::SgdMomentum, "sgd-momentum", "SGD con momento"),
    choice(Optimizer::Sgd, "sgd", "SGD"),
];

pub const ATTENTIONS: &[Choice<Attention>] = &[
    choice(Attention::Sdpa, "sdpa", "SDPA / FlashAttention"),
    Choice {
        value: Attention::Eager,
        id: "eager",
        web: "eager",
        aliases: &["ingenua"],
        label: "Ingenua (eager, N×N)",
    },
    choice(Attention::Flash, "flash", "FlashAttention-2"),
];

pub const KV_DTYPES: &[Choice<KvDtype>] = &[
    choice(KvDtype::Auto, "auto", "El del modelo (auto)"),
    choice(KvDtype::Fp16, "fp16", "FP16/BF16"),
    choice(KvDtype::Fp8, "fp8", "FP8"),
    Choice {
        value: KvDtype::Int8,
        id: "int8",
        web: "int8",
        aliases: &["q8_0", "q8"],
        label: "INT8 (q8_0 en llama.cpp)",
    },
    Choice {
        value: KvDtype::Int4,
        id: "int4",
        web: "int4",
        aliases: &["q4_0", "q4"],
        label: "INT4 (q4_0 en llama.cpp)",
    },
];

pub const ZERO_STAGES: &[Choice<u8>] = &[
    choice(0, "0", "Ninguno (DDP: copia entera en cada GPU)"),
    choice(1, "1", "ZeRO-1 (optimizador)"),
    choice(2, "2", "ZeRO-2 (+ gradientes)"),
    Choice {
        value: 3,
        id: "3",
        web: "3",
        aliases: &["fsdp"],
        label: "ZeRO-3 / FSDP (+ pesos)",
    },
];

pub const PRECISIONS: &[Choice<Precision>] = &[
    Choice {
        value: Precision::Amp,
        id: "amp",
        web: "amp",
        aliases: &["autocast"],
        label: "AMP: pesos FP32 con autocast (Trainer bf16=True)",
    },
    Choice {
        value: Precision::Master,
        id: "mixed",
        web: "mixta",
        aliases: &["master"],
        label: "Pesos de 16 bits con copia maestra FP32 (DeepSpeed)",
    },
    Choice {
        value: Precision::Pure,
        id: "pure",
        web: "pura",
        aliases: &[],
        label: "Pura: todo en el formato de los pesos (torchtune)",
    },
];

pub const RUNTIMES: &[Choice<Runtime>] = &[
    choice(
        Runtime::Transformers,
        "transformers",
        "Transformers (Trainer, TRL, PEFT)",
    ),
    choice(Runtime::Unsloth, "unsloth", "Unsloth"),
    choice(Runtime::Torchtune, "torchtune", "torchtune"),
    choice(Runtime::Deepspeed, "deepspeed", "DeepSpeed"),
    choice(Runtime::Vllm, "vllm", "vLLM (servidor)"),
    Choice {
        value: Runtime::LlamaCpp,
        id: "llama.cpp",
        web: "llamacpp",
        aliases: &["llama-cpp", "llamacpp", "llama-server"],
        label: "llama.cpp (GGUF)",
    },
    choice(Runtime::Ollama, "ollama", "Ollama"),
    choice(Runtime::AutoAwq, "autoawq", "AutoAWQ (módulos fusionados)"),
];

pub const LOSSES: &[Choice<Loss>] = &[
    Choice {
        value: Loss::Full,
        id: "full",
        web: "completa",
        aliases: &[],
        label: "Logits completos en FP32 (transformers)",
    },
    Choice {
        value: Loss::ChunkedOutput { chunks: 8 },
        id: "chunked",
        web: "troceada",
        aliases: &[],
        label: "Salida en 8 trozos (torchtune)",
    },
    Choice {
        value: Loss::Fused,
        id: "fused",
        web: "fusionada",
        aliases: &["liger", "chunked-nll"],
        label: "Fusionada por trozos (Unsloth, Liger, SFTTrainer de TRL)",
    },
];

pub const LORA_TARGETS: &[Choice<LoraTargets>] = &[
    Choice {
        value: LoraTargets::QUERY_VALUE,
        id: "qv",
        web: "qv",
        aliases: &["q_proj,v_proj"],
        label: "q_proj y v_proj (PEFT por defecto)",
    },
    Choice {
        value: LoraTargets::ATTENTION,
        id: "attention",
        web: "atencion",
        aliases: &["qkvo"],
        label: "Las cuatro proyecciones de atención",
    },
    Choice {
        value: LoraTargets::TORCHTUNE,
        id: "qvo-mlp",
        web: "qvo-mlp",
        aliases: &["torchtune"],
        label: "q, v, o y el MLP (torchtune)",
    },
    Choice {
        value: LoraTargets::AllLinear,
        id: "all-linear",
        web: "todas",
        aliases: &["all"],
        label: "Todas las capas lineales",
    },
];

pub const CUDA_GRAPHS: &[Choice<CudaGraphs>] = &[
    Choice {
        value: CudaGraphs::Profiled,
        id: "profiled",
        web: "reservados",
        aliases: &["auto"],
        label: "Reservados de la caché KV (vLLM 0.21 o posterior)",
    },
    Choice {
        value: CudaGraphs::AfterKv,
        id: "after-kv",
        web: "aparte",
        aliases: &["legacy"],
        label: "Aparte, tras la caché KV (vLLM 0.20 o anterior)",
    },
    Choice {
        value: CudaGraphs::Off,
        id: "off",
        web: "no",
        aliases: &["eager", "enforce-eager"],
        label: "Sin grafos (--enforce-eager)",
    },
];

/// The value `input` names in `list` (any spelling, ASCII case ignored).
pub fn find<T: Copy>(list: &'static [Choice<T>], input: &str) -> Option<T> {
    let input = input.trim();
    list.iter()
        .find(|c| {
            std::iter::once(c.id)
                .chain(std::iter::once(c.web))
                .chain(c.aliases.iter().copied())
                .any(|s| s.eq_ignore_ascii_case(input))
        })
        .map(|c| c.value)
}

/// The entry of `value` in `list`.
pub fn entry<T: Copy + PartialEq>(list: &'static [Choice<T>], value: T) -> &'static Choice<T> {
    list.iter().find(|c| c.value == value).unwrap_or(&list[0])
}

/// "inferencia, entrenamiento, lora o qlora": the web spellings, for messages.
pub fn spellings<T>(list: &'static [Choice<T>], web: bool) -> String {
    let words: Vec<&str> = list
        .iter()
        .map(|c| if web { c.web } else { c.id })
        .collect();
    crate::settings::or_list(&words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_finds_its_value() {
        fn check<T: Copy + PartialEq + std::fmt::Debug>(list: &'static [Choice<T>]) {
            for c in list {
                for s in [c.id, c.web].iter().chain(c.aliases) {
                    assert_eq!(find(list, s), Some(c.value), "{s}");
                    assert_eq!(find(list, &s.to_ascii_uppercase()), Some(c.value), "{s}");
                }
                assert_eq!(entry(list, c.value).id, c.id);
            }
        }
        check(TASKS);
        check(OPTIMIZERS);
        check(ATTENTIONS);
        check(KV_DTYPES);
        check(ZERO_STAGES);
        check(PRECISIONS);
        check(RUNTIMES);
        check(LOSSES);
        check(LORA_TARGETS);
        assert_eq!(find(TASKS, "nada"), None);
    }

    #[test]
    fn spellings_for_messages() {
        assert_eq!(
            spellings(TASKS, true),
            "inferencia, entrenamiento, lora o qlora"
        );
        assert_eq!(spellings(TASKS, false), "inference, full, lora o qlora");
    }
}
