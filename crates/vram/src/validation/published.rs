//! Published measurements written as the settings that produced them: the model, the
//! `vramlab estimate` flags for the run's settings, what the source measured and the
//! figure it printed. Each is evaluated now with `vram::evaluate`.
//!
//! The sources (collected December 2026, none used to set any constant of the engine):
//! - vLLM 0.19.0 start-up logs on an H100 80GB (llm-d-planner accuracy study): "GPU KV
//!   cache size: N tokens", with `gpu_memory_utilization 0.95`, `max_model_len 8192`,
//!   chunked prefill at 8192 tokens.
//! - Hugging Face's "Efficient training on a single GPU" guide (transformers v4.21):
//!   bert-large on a V100 16 GB, whole-GPU memory as NVML reports it after training.
//! - AutoAWQ's README benchmark on an RTX 4090 (`torch.cuda.max_memory_allocated`), run
//!   by AutoAWQ's own fused modules (`fuse_layers=True`), not by transformers.
//! - optimum's GPTQ benchmark (`tests/benchmark/README.md`): transformers `generate` of
//!   Llama-2-13B in fp16 and GPTQ 4-bit on an A100 80GB; the peak of nvidia-smi's
//!   `memory.used` (MiB × 1.048576, so MB), CUDA context included.
//! - vLLM issues with start-up logs of older engines, kept under their own runtime
//!   names: the engine models today's vLLM (V1, 0.19), whose profile run is described
//!   in `serving`; V0 (0.6) profiled a forward pass of `max_model_len` tokens when
//!   chunked prefill was off (up to 32k), and the April 2025 V1 differs too.
//! - llama.cpp KV cache lines for a 2048-token context, and two whole load logs
//!   (model, KV and compute buffers): Llama 3 8B Q4_K_M on an RTX 3070 without flash
//!   attention, Qwen3-Coder-30B-A3B Q8_0 on an A100 40GB with it; and a partial
//!   offload (Mistral 7B v0.1 Q4_K_M, `-ngl 20`, `n_ubatch` 256): the GPU's model, KV
//!   and compute buffers. The compute buffer holds the CPU-resident output head,
//!   copied for the GPU to compute the logits (ggml's op offload): the mechanism was
//!   read off this log's 137.79 MiB (102.54 of q6_K head, 31.25 of f32 logits, 4 of
//!   hidden states) and then in ggml's scheduler.
//! - llama.cpp on two GPUs (Qwen2 0.5B Q4_0, two RTX 4090, `n_ctx` 32768, no flash
//!   attention): the second GPU's model, KV and compute buffers, with "pipeline
//!   parallelism enabled (n_copies=4)". The layer split and the pipeline's copies of
//!   each GPU's inputs were read in llama.cpp's and ggml's source before this log was
//!   computed.
//! - llama.cpp with MoE experts kept in CPU RAM (`-ot …ffn.*=CPU`, what `--n-cpu-moe`
//!   does for the expert tensors): Qwen3-235B-A22B in Q8_0 (with `--no-mmap`, so the
//!   CPU buffer is the resident bytes) and in Q6_K; the GPU's model, KV and compute
//!   buffers and the RAM's weights.
//! - Gemma 3's vision projector in llama.cpp (`--mmproj`, F16 file, flash attention):
//!   its "model size" and the clip context's compute buffer as llama.cpp logged them;
//!   and the projector weights Ollama's scheduler logged for gemma3 12B. The weights
//!   follow llama.cpp's converter tensor by tensor; the compute buffer's phase (a
//!   layer's MLP) was identified from that log's 121.25 MiB.
//! - Unsloth's README: the longest context that trains (Llama 3.1 8B, QLoRA, rank 32 on
//!   every linear, batch 1), for Unsloth and for Hugging Face + FlashAttention 2. The
//!   Hugging Face figures are from 2024, when transformers (before 4.45) returned the
//!   logits upcast to fp32 from the model's forward and the loss made a contiguous
//!   shifted copy: they carry the runtime "transformers 4.4x (2024)", which the engine
//!   does not model, so that today's transformers band is not made of them. Both
//!   columns are exactly linear in the nominal VRAM of each row (every extra GB adds
//!   4718.9 tokens for Unsloth and 404.75 for Hugging Face, to four digits from 8 to
//!   80 GB): the table is a line fitted to measurements and read at 8, 12, … 80 GB, not
//!   runs on those cards. The cases therefore use the nominal size as the capacity, in
//!   GiB, as Unsloth's notebooks print memory (`/ 1024 / 1024 / 1024`, labelled "GB").
//! - torchtune's README: peak memory of its recipes, one of them on eight GPUs with FSDP.
//! - Answer.AI's fsdp_qlora benchmarks (two RTX 3090 with FSDP): peak allocated memory
//!   quoted in the text for LoRA on Llama 2 7B.
//! - litgpt's config hub: peak `max_memory_allocated` of its fine-tuning configs.
//! - Runs this project measured on an H200 (December 2026) with settings it wrote
//!   itself: `Trainer` full fine-tunes and PEFT LoRA, and `generate`
//!   (`tools/device/measure_memory.py`). They were measured after the engine's terms
//!   were written; the three training mechanisms they exposed (gradients freed between
//!   steps, frozen projections that save no input, the loss's 12 bytes per logit) were
//!   read in PyTorch's, transformers' and PEFT's source, not fitted.

use std::collections::HashMap;

use crate::catalog;
use crate::estimate::ModelInput;
use crate::evaluate::{Evaluation, Model, evaluate};
use crate::settings::{Settings, Surface, Task};
use crate::units::ByteSize;

use super::{Case, Unit};

/// What a source measured.
#[derive(Clone, Copy, Debug)]
enum Measure {
    /// `torch.cuda.max_memory_allocated` (or torchtune's "active"): tensors only, no
    /// CUDA context, no allocator cache.
    Allocated,
    /// The whole GPU as nvidia-smi or NVML show it.
    Device,
    /// The same, for transformers' `generate` before 2024, which held the previous
    /// step's KV cache beside the new one (`estimate::kv::previous_step_cache`, shown to
    /// users as `Note::OldGenerateCache`).
    DeviceOldGenerate,
    /// vLLM's "GPU KV cache size" in tokens.
    KvTokens,
    /// vLLM's "Available KV cache memory": the budget left for the KV cache.
    KvBudget,
    /// vLLM's "Model loading took": the weights each GPU loaded.
    LoadedWeights,
    /// The KV cache alone.
    KvBytes,
    /// The weights on the GPU alone (llama.cpp's "CUDA0 model buffer").
    Weights,
    /// The activations alone (llama.cpp's "CUDA0 compute buffer").
    Activations,
    /// The weights llama.cpp keeps in CPU RAM (its "CPU model buffer" and the input
    /// embeddings' "CUDA_Host model buffer").
    HostWeights,
    /// The longest context that fits, in tokens.
    MaxSeq,
    /// llama.cpp's vision projector (`--mmproj`): its weights ("model size").
    ProjectorWeights,
    /// Its image compute buffer ("CUDA0 compute buffer size" of the clip context).
    ProjectorCompute,
}

struct Spec {
    id: &'static str,
    what: &'static str,
    source: &'static str,
    runtime: &'static str,
    model: &'static str,
    args: &'static str,
    measure: Measure,
    published: u64,
    unit: Unit,
}

/// Hundredths of a GiB, as logs print them ("58.11 GiB").
const fn gib(hundredths: u64) -> u64 {
    hundredths * ByteSize::GIB / 100
}

/// Hundredths of a GB (10^9 bytes).
const fn gb(hundredths: u64) -> u64 {
    hundredths * 10_000_000
}

/// Hundredths of a MiB, as llama.cpp prints buffer sizes ("4403.49 MiB").
const fn mib_h(hundredths: u64) -> u64 {
    hundredths * ByteSize::MIB / 100
}

/// Hundredths of a MB (10^6 bytes).
const fn mb(hundredths: u64) -> u64 {
    hundredths * 10_000
}

const fn mib(n: u64) -> u64 {
    n * ByteSize::MIB
}

const LLMD: &str = "registro de arranque de vLLM 0.19.0 en una H100 80GB, estudio de precisión de llm-d-planner (github.com/jgchn/llm-d-planner, accuracy/results/v0.19.0/logs, commit d3121e0)";
const HF_PERF: &str = "Hugging Face Transformers, «Efficient Training on a Single GPU» (v4.21), bert-large en una V100 16 GB";
const AUTOAWQ: &str = "README de AutoAWQ (casper-hansen/AutoAWQ), banco de pruebas en una RTX 4090";
const LLAMACPP: &str = "registros de carga de llama.cpp con n_ctx 2048 (huggingface.co/dranger003/c4ai-command-r-v01-iMat.GGUF, discusión 6)";
const UNSLOTH: &str = "README de Unsloth (unslothai/unsloth): contexto máximo de Llama 3.1 8B con QLoRA, rango 32 en todas las lineales, lote 1";
const TORCHTUNE: &str = "README de torchtune (pytorch/torchtune, commit 30b8519, septiembre de 2024): pico de memoria por GPU con lote 2 empaquetado a 2048 y torch.compile";
const OPTIMUM: &str = "optimum, tests/benchmark/README.md (benchmark_gptq.py con transformers 4.35 y PyTorch 2.0.1 en una A100-SXM4-80GB; pico de lo asignado por PyTorch más lo ajeno a PyTorch según nvidia-smi, contexto CUDA incluido, en MB)";
const LLAMACPP_3070: &str = "registro de llama-cpp-python con llama-3-Korean-Bllossom-8B-Q4_K_M.gguf (arquitectura Llama 3 8B) en una RTX 3070, n_ctx 512, sin flash attention; archivo público hallado en el índice de código";
const LLAMACPP_A100: &str = "registro de llama-server b7342 con Qwen3-Coder-30B-A3B-Instruct-Q8_0.gguf (arquitectura Qwen3-30B-A3B) en una A100-PCIE-40GB, --ctx-size 65536, flash attention automática; README público de despliegue hallado en el índice de código";
const LLAMACPP_NGL: &str = "registro de llama-cpp-python con mistral-7b-instruct-v0.1.Q4_K_M.gguf, n_gpu_layers 20, n_ctx 768, flash attention, en una RTX 4060 Laptop (apéndice B de «A GPU-Accelerated RAG-Based Telegram Assistant…», G. Tel-Zur, EduHPC 2025)";
const LLAMACPP_235B_Q8: &str = "registro de llama-sweep-bench b5192 con Qwen3-235B-A22B-Q8_0.gguf en una RTX A6000: --no-mmap, -fa, -c 32768, -ngl 99 y las FFN de las capas 13 a 93 en la CPU (-ot blk\\.1[3-9]\\.ffn.*=CPU y siguientes), micro-lote 512 (ubergarm, github.com/ikawrakow/ik_llama.cpp/discussions/357)";
const LLAMACPP_235B_Q6: &str = "registro de llama-sweep-bench b5269 con Qwen3-235B-A22B-128K-Q6_K en una RTX 3090: -fa, -c 16384, caché KV q8_0, -ngl 99 y las FFN de las capas 5 a 93 en la CPU (-ot blk\\.(5|6|7|8|9)\\.ffn.*=CPU y siguientes), micro-lote 512 (AesSedai, github.com/ikawrakow/ik_llama.cpp/discussions/357)";
const LLAMACPP_2GPU: &str = "registro de carga de llama.cpp (java-llama.cpp, 2024) con qwen2-0_5b-instruct-q4_0.gguf (Qwen2 0.5B, la misma arquitectura que Qwen2.5 0.5B) en dos RTX 4090: n_ctx 32768 para 4 ranuras, n_ubatch 512, sin flash attention, «pipeline parallelism enabled (n_copies=4)»; la segunda GPU: «CUDA1 buffer size = 226.06 MiB», «CUDA1 KV buffer size = 176.00 MiB», «CUDA1 compute buffer size = 1166.02 MiB» (documentación de Nixiesearch, github.com/nixiesearch/nixiesearch, docs/docs/deployment/distributed/gpu.md)";
const LLAMACPP_MMPROJ: &str = "registro de llama.cpp con el mmproj F16 de gemma-3-4b-it (ggml-org/gemma-3-4b-it-GGUF) en CUDA y flash attention activada (comentario en ggml-org/llama.cpp#22790): «load_hparams: model size: 811.79 MiB», «alloc_compute_meta: CUDA0 compute buffer size = 121.25 MiB»";
const OLLAMA_PROJECTOR: &str = "ollama/ollama#9791: registro del planificador de Ollama con gemma3 12B (marzo de 2025), «projector.weights=\"814.6 MiB\"»: los tensores de la torre de visión del blob";
const TORCHTUNE_70B: &str = "README de torchtune (pytorch/torchtune, commit 30b8519, septiembre de 2024): pico de memoria por GPU de lora_finetune_distributed con 70B_lora.yaml (FSDP en 8 A100, LoRA de rango 16 en q, k y v, checkpointing, lote 2 empaquetado a 2048, torch.compile)";
const FSDP_QLORA: &str = "Answer.AI, fsdp_qlora, benchmarks_03_2024.md (dos RTX 3090 con FSDP, train.py --train_type lora, rango 64, checkpointing reentrante, datos sintéticos de longitud completa): «the peak allocated memory is 8.28 GiB vs 9.16 GiB»";
const LITGPT: &str = "litgpt, config_hub/finetune/README.md (1× A10G, max_memory_allocated)";

const H200: &str = "medido por vramlab en una H200 con PyTorch 2.11, CUDA 13, transformers 5.17 y PEFT 0.21 (tools/device/measure_memory.py; líneas en docs/measurements/2026-12-04-h200/memory.jsonl): pico de torch.cuda.max_memory_allocated, modelo creado desde su config.json con pesos aleatorios";

const LLMD_2026: &str = "tabla empírica de memoria de vLLM del llm-d capacity planner (llm-d/llm-d-benchmark, config_explorer/empirical-vllm-memory-results.md, commit 0282dcf, enero de 2026; hoy en llm-d-incubation/llm-d-planner): una H100 80GB («79.18 GiB»), gpu_memory_utilization 0.9 (0.95 para Mistral), max_model_len 16000; «Model loading took» y «Available KV cache memory» de cada arranque; su reproducción fija vLLM v0.11.0";
const LLAMACPP_OSS_3070: &str = "registro de llama-server b6699 (c08002a1) con gpt-oss-20b-mxfp4.gguf de ggml-org en una RTX 3070 8GB: -ngl 99 --n-cpu-moe 99 -c 131072 -fa on, micro-lote 512 (registro base de ikawrakow/ik_llama.cpp#822)";
const LLAMACPP_OSS_M5: &str = "registro de llama-cli b7217 (77334097) con ggml-org/gpt-oss-20b-GGUF en un Apple M5 (Metal): --ctx-size 0 (131 072, el de entrenamiento) -ub 2048 -b 2048, flash attention automática (activada); captura pública hallada en el índice de código";
const LLAMACPP_Q35_27B: &str = "registro de llama-server b8586 (64ac9ab66) con Qwen3.5-27B Q4_K_S de unsloth en una RTX 4070 12GB: -c 131072 -np 1 -ngl 26 -b 1024 -ub 1024, flash attention automática (activada); transcripción pública hallada en el índice de código (la asignación del búfer de cómputo falló por falta de memoria)";

// vLLM 0.19 captured its CUDA graphs after sizing the KV cache (`cuda_graphs`).
const VLLM: &str =
    "--runtime vllm --gpu h100-sxm --seq 8192 --gpu-memory-utilization 0.95 --cuda-graphs after-kv";

const VLLM_011: &str =
    "--runtime vllm --gpu h100-sxm --seq 16000 --gpu-memory-utilization 0.9 --cuda-graphs after-kv";
const LLAMACPP_OSS_ARGS: &str = "--runtime llama.cpp --dtype MXFP4_MOE --seq 131072 --attention flash --gpu-layers all --n-cpu-moe all";
const LLAMACPP_Q35_ARGS: &str = "--runtime llama.cpp --dtype Q4_K_S --seq 131072 --attention flash --gpu-layers 26 --ubatch 1024";

const SPECS: &[Spec] = &[
    // vLLM: the KV cache a server gets at start-up.
    Spec {
        id: "llmd-llama31-8b",
        what: "Llama-3.1-8B en vLLM, H100: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "llama-3.1-8b",
        args: VLLM,
        measure: Measure::KvTokens,
        published: 476_016,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-llama31-8b-tp2",
        what: "Llama-3.1-8B en vLLM, 2 H100 con TP 2: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "llama-3.1-8b",
        args: "--runtime vllm --gpu h100-sxm --seq 8192 --gpu-memory-utilization 0.95 --gpus 2 --cuda-graphs after-kv",
        measure: Measure::KvTokens,
        published: 1_044_688,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-llama31-8b-tp4",
        what: "Llama-3.1-8B en vLLM, 4 H100 con TP 4: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "llama-3.1-8b",
        args: "--runtime vllm --gpu h100-sxm --seq 8192 --gpu-memory-utilization 0.95 --gpus 4 --cuda-graphs after-kv",
        measure: Measure::KvTokens,
        published: 2_209_792,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-llama31-8b-pp2",
        what: "Llama-3.1-8B en vLLM, 2 H100 con PP 2: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "llama-3.1-8b",
        args: "--runtime vllm --gpu h100-sxm --seq 8192 --gpu-memory-utilization 0.95 --gpus 2 --tp 1 --pp 2 --cuda-graphs after-kv",
        measure: Measure::KvTokens,
        published: 1_075_312,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-llama31-8b-pp4",
        what: "Llama-3.1-8B en vLLM, 4 H100 con PP 4: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "llama-3.1-8b",
        args: "--runtime vllm --gpu h100-sxm --seq 8192 --gpu-memory-utilization 0.95 --gpus 4 --tp 1 --pp 4 --cuda-graphs after-kv",
        measure: Measure::KvTokens,
        published: 2_257_264,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-llama31-8b-fp32",
        what: "Llama-3.1-8B en FP32 en vLLM, H100: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "llama-3.1-8b",
        args: "--runtime vllm --gpu h100-sxm --seq 8192 --gpu-memory-utilization 0.95 --dtype fp32 --cuda-graphs after-kv",
        measure: Measure::KvTokens,
        published: 175_296,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-llama31-8b-kvfp8",
        what: "Llama-3.1-8B en vLLM con caché KV FP8, H100: tokens",
        source: LLMD,
        runtime: "vllm",
        model: "llama-3.1-8b",
        args: "--runtime vllm --gpu h100-sxm --seq 8192 --gpu-memory-utilization 0.95 --kv-dtype fp8 --cuda-graphs after-kv",
        measure: Measure::KvTokens,
        published: 952_032,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-llama31-8b-fp8",
        what: "Llama-3.1-8B cuantizado a FP8 en vLLM, H100: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "llama-3.1-8b",
        args: "--runtime vllm --gpu h100-sxm --seq 8192 --gpu-memory-utilization 0.95 --dtype fp8 --cuda-graphs after-kv",
        measure: Measure::KvTokens,
        published: 529_248,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-qwen25-7b",
        what: "Qwen2.5-7B en vLLM, H100: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "qwen2.5-7b",
        args: VLLM,
        measure: Measure::KvTokens,
        published: 1_096_000,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-qwen25-7b-tp4",
        what: "Qwen2.5-7B en vLLM, 4 H100 con TP 4: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "qwen2.5-7b",
        args: "--runtime vllm --gpu h100-sxm --seq 8192 --gpu-memory-utilization 0.95 --gpus 4 --cuda-graphs after-kv",
        measure: Measure::KvTokens,
        published: 5_043_280,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-qwen25-7b-tp2",
        what: "Qwen2.5-7B en vLLM, 2 H100 con TP 2: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "qwen2.5-7b",
        args: "--runtime vllm --gpu h100-sxm --seq 8192 --gpu-memory-utilization 0.95 --gpus 2 --tp 2 --cuda-graphs after-kv",
        measure: Measure::KvTokens,
        published: 2_390_592,
        unit: Unit::Tokens,
    },
    // RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic: Llama 3.1 70B's architecture, its
    // linear layers in FP8 with per-channel scales, the embedding table and the head
    // in BF16 ("Model loading took 33.88 / 16.96 GiB" per GPU).
    Spec {
        id: "llmd-llama33-70b-fp8-tp2",
        what: "Llama-3.3-70B en FP8 (fp8-dynamic) en vLLM, 2 H100 con TP 2: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "llama-3.1-70b",
        args: "--runtime vllm --gpu h100-sxm --seq 8192 --gpu-memory-utilization 0.95 --gpus 2 --tp 2 --dtype fp8 --cuda-graphs after-kv",
        measure: Measure::KvTokens,
        published: 244_304,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-llama33-70b-fp8-tp4",
        what: "Llama-3.3-70B en FP8 (fp8-dynamic) en vLLM, 4 H100 con TP 4: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "llama-3.1-70b",
        args: "--runtime vllm --gpu h100-sxm --seq 8192 --gpu-memory-utilization 0.95 --gpus 4 --tp 4 --dtype fp8 --cuda-graphs after-kv",
        measure: Measure::KvTokens,
        published: 708_992,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-qwen25-72b-tp2",
        what: "Qwen2.5-72B en vLLM, 2 H100 con TP 2: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "qwen2.5-72b",
        args: "--runtime vllm --gpu h100-sxm --seq 8192 --gpu-memory-utilization 0.95 --gpus 2 --cuda-graphs after-kv",
        measure: Measure::KvTokens,
        published: 19_920,
        unit: Unit::Tokens,
    },
    // moonshotai/Kimi-Dev-72B: Qwen2.5-72B's architecture with 131 072 positions
    // ("Model loading took 67.82 / 34.01 GiB" per GPU).
    Spec {
        id: "llmd-kimi-dev-72b-tp2",
        what: "Kimi-Dev-72B (arquitectura de Qwen2.5-72B) en vLLM, 2 H100 con TP 2: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "qwen2.5-72b",
        args: "--runtime vllm --gpu h100-sxm --seq 8192 --gpu-memory-utilization 0.95 --gpus 2 --tp 2 --cuda-graphs after-kv",
        measure: Measure::KvTokens,
        published: 19_776,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-kimi-dev-72b-tp4",
        what: "Kimi-Dev-72B (arquitectura de Qwen2.5-72B) en vLLM, 4 H100 con TP 4: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "qwen2.5-72b",
        args: "--runtime vllm --gpu h100-sxm --seq 8192 --gpu-memory-utilization 0.95 --gpus 4 --tp 4 --cuda-graphs after-kv",
        measure: Measure::KvTokens,
        published: 481_296,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-qwen25-7b-kvfp8",
        what: "Qwen2.5-7B en vLLM con caché KV FP8, H100: tokens",
        source: LLMD,
        runtime: "vllm",
        model: "qwen2.5-7b",
        args: "--runtime vllm --gpu h100-sxm --seq 8192 --gpu-memory-utilization 0.95 --kv-dtype fp8 --cuda-graphs after-kv",
        measure: Measure::KvTokens,
        published: 2_192_000,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-qwen3-8b",
        what: "Qwen3-8B en vLLM, H100: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "qwen3-8b",
        args: VLLM,
        measure: Measure::KvTokens,
        published: 418_688,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-qwen3-30b-a3b",
        what: "Qwen3-30B-A3B en vLLM, H100: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "qwen3-30b-a3b",
        args: VLLM,
        measure: Measure::KvTokens,
        published: 168_288,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-phi4",
        what: "Phi-4 en vLLM, H100: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "phi-4",
        args: VLLM,
        measure: Measure::KvTokens,
        published: 241_568,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-mixtral-tp2",
        what: "Mixtral-8x7B en vLLM, 2 H100 con TP 2: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "mixtral-8x7b",
        args: "--runtime vllm --gpu h100-sxm --seq 8192 --gpu-memory-utilization 0.95 --gpus 2 --cuda-graphs after-kv",
        measure: Measure::KvTokens,
        published: 465_936,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-deepseek-v2-lite",
        what: "DeepSeek-V2-Lite en vLLM, H100: tokens de caché KV (latente MLA)",
        source: LLMD,
        runtime: "vllm",
        model: "deepseek-v2-lite",
        args: VLLM,
        measure: Measure::KvTokens,
        published: 1_505_552,
        unit: Unit::Tokens,
    },
    // Three more architectures from the same study ("Model loading took 15.91 / 12.56 /
    // 15.25 GiB", reproduced to the hundredth).
    Spec {
        id: "llmd-gemma-7b",
        what: "Gemma-7B en vLLM, H100: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "gemma-7b",
        args: VLLM,
        measure: Measure::KvTokens,
        published: 129_760,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-codellama-7b",
        what: "CodeLlama-7B en vLLM, H100: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "codellama-7b",
        args: VLLM,
        measure: Measure::KvTokens,
        published: 126_256,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-granite31-8b",
        what: "Granite-3.1-8B en vLLM, H100: tokens de caché KV",
        source: LLMD,
        runtime: "vllm",
        model: "granite-3.1-8b",
        args: VLLM,
        measure: Measure::KvTokens,
        published: 384_432,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-gemma2-2b",
        what: "Gemma-2-2B en vLLM, H100: tokens de caché KV (capas de ventana deslizante)",
        source: LLMD,
        runtime: "vllm",
        model: "gemma-2-2b",
        args: VLLM,
        measure: Measure::KvTokens,
        published: 670_160,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-gemma2-9b",
        what: "Gemma-2-9B en vLLM, H100: tokens de caché KV (capas de ventana deslizante)",
        source: LLMD,
        runtime: "vllm",
        model: "gemma-2-9b",
        args: VLLM,
        measure: Measure::KvTokens,
        published: 168_880,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-gemma2-27b",
        what: "Gemma-2-27B en vLLM, H100: tokens de caché KV (capas de ventana deslizante)",
        source: LLMD,
        runtime: "vllm",
        model: "gemma-2-27b",
        args: VLLM,
        measure: Measure::KvTokens,
        published: 58_672,
        unit: Unit::Tokens,
    },
    // Gemma 3's -it checkpoints are multimodal: vLLM loads the SigLIP tower and encodes
    // 32 dummy images at start-up (see `serving::loaded_weights` and `EncoderProfile`).
    Spec {
        id: "llmd-gemma3-4b",
        what: "Gemma-3-4B (multimodal) en vLLM, H100: tokens de caché KV (capas de ventana deslizante, torre de visión)",
        source: LLMD,
        runtime: "vllm",
        model: "gemma-3-4b",
        args: VLLM,
        measure: Measure::KvTokens,
        published: 468_144,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-gemma3-12b",
        what: "Gemma-3-12B (multimodal) en vLLM, H100: tokens de caché KV (capas de ventana deslizante, torre de visión)",
        source: LLMD,
        runtime: "vllm",
        model: "gemma-3-12b",
        args: VLLM,
        measure: Measure::KvTokens,
        published: 130_304,
        unit: Unit::Tokens,
    },
    Spec {
        id: "llmd-gemma3-27b",
        what: "Gemma-3-27B (multimodal) en vLLM, H100: tokens de caché KV (capas de ventana deslizante, torre de visión)",
        source: LLMD,
        runtime: "vllm",
        model: "gemma-3-27b",
        args: VLLM,
        measure: Measure::KvTokens,
        published: 36_560,
        unit: Unit::Tokens,
    },
    Spec {
        id: "vllm-17122-llama31-8b-l40s",
        what: "Llama-3.1-8B en vLLM (motor v1), L40S, contexto 32 768: tokens de caché KV",
        source: "vllm-project/vllm#17122: «GPU KV cache size: 158,656 tokens»",
        runtime: "vllm 0.8 (V1)",
        model: "llama-3.1-8b",
        args: "--runtime vllm --gpu l40s --seq 32768 --gpu-memory-utilization 0.9 --cuda-graphs after-kv",
        measure: Measure::KvTokens,
        published: 158_656,
        unit: Unit::Tokens,
    },
    Spec {
        id: "vllm-10517-llama31-8b-3090",
        what: "Llama-3.1-8B en vLLM 0.6.4, RTX 3090, contexto 20 000: tokens de caché KV (1952 bloques de 16)",
        source: "vllm-project/vllm#10517: «kv_cache_size=3.81GiB … # GPU blocks: 1952»",
        runtime: "vllm 0.6 (V0)",
        model: "llama-3.1-8b",
        // The V0 engine without chunked prefill (vLLM turned it on by itself only past
        // 32k tokens, vllm/engine/arg_utils.py in 0.6.4) profiles a prefill of
        // max_num_batched_tokens = max(max_model_len, 2048) tokens (SchedulerConfig in
        // vllm/config.py): 20 000 here. The log's torch peak, 17.06 GiB over 14.99 GiB
        // of weights, is that prefill's MLP.
        args: "--runtime vllm --gpu rtx-3090 --seq 20000 --gpu-memory-utilization 0.9 --max-num-batched-tokens 20000 --cuda-graphs after-kv",
        measure: Measure::KvTokens,
        published: 31_232,
        unit: Unit::Tokens,
    },
    // vLLM 0.21 with its default CUDA-graph reservation (`profiled`): the log says
    // "CUDA graph memory profiling is enabled (default since v0.21.0)" and its capture
    // grid (PIECEWISE=51 up to 512, FULL=35 up to 256) is max_num_seqs 256's. The run
    // also loads LMCache's KV connector, whose GPU staging buffer (tens of MiB) is not
    // modelled. Its per-layer graph constant (from an H100) gives 0.81 GiB where vLLM
    // estimated 0.52 GiB on this card.
    Spec {
        id: "lmcache-3430-qwen3-8b-a5000",
        what: "Qwen3-8B en vLLM 0.21 (grafos CUDA descontados de la caché), RTX A5000, contexto 16 384, gpu_memory_utilization 0,9764: tokens de caché KV",
        source: "LMCache/LMCache#3430 (vLLM 0.21.0, RTX A5000): «GPU KV cache size: 46,368 tokens», «Estimated CUDA graph memory: 0.52 GiB total»",
        runtime: "vllm",
        model: "qwen3-8b",
        args: "--runtime vllm --gpu rtx-a5000 --seq 16384 --gpu-memory-utilization 0.9764 --cuda-graphs profiled",
        measure: Measure::KvTokens,
        published: 46_368,
        unit: Unit::Tokens,
    },
    // Current vLLM V1 on one GPU, CUDA graphs off (`enforce_eager`), with the `LLM`
    // class's 8192 batched tokens: its own budget, weights, profile peak and non-PyTorch
    // growth only (`serving::non_torch_growth`).
    Spec {
        id: "vllm-gce-llama31-8b-a100-40gb",
        what: "Llama-3.1-8B en vLLM 0.15.1 (clase LLM, enforce_eager), A100 40GB, contexto 131 072: tokens de caché KV",
        source: "ilseokoh/vllm-gce, README.md (a2-highgpu-1g de Google Cloud, una A100 40GB; LLM(enforce_eager=True, gpu_memory_utilization=0.9)): «Chunked prefill is enabled with max_num_batched_tokens=8192», «GPU KV cache size: 157,936 tokens»",
        runtime: "vllm",
        model: "llama-3.1-8b",
        args: "--runtime vllm --gpu a100-40gb --seq 131072 --gpu-memory-utilization 0.9 --cuda-graphs off --max-num-batched-tokens 8192 --max-num-seqs 256",
        measure: Measure::KvTokens,
        published: 157_936,
        unit: Unit::Tokens,
    },
    Spec {
        id: "gpu-util-qwen25-7b-v100",
        what: "Qwen2.5-7B en FP16 en vLLM 0.18 (clase LLM, enforce_eager), V100 32GB, contexto 32 768: tokens de caché KV",
        source: "wangpeiwen/gpu-util-interference, mlwd/sensitivity/data_bak.md (V100, vLLM 0.18.0, dtype float16, enforce_eager): «Model loading took 14.25 GiB», «GPU KV cache size: 245,360 tokens»",
        runtime: "vllm",
        model: "qwen2.5-7b",
        args: "--runtime vllm --gpu v100-32gb --dtype fp16 --seq 32768 --gpu-memory-utilization 0.9 --cuda-graphs off --max-num-batched-tokens 8192 --max-num-seqs 256",
        measure: Measure::KvTokens,
        published: 245_360,
        unit: Unit::Tokens,
    },
    // Hugging Face Trainer, bert-large for sequence classification on a V100 16 GB:
    // whole-GPU memory (the measured 1343 MiB CUDA context of hf-1 included).
    Spec {
        id: "hf-perf-ga4",
        what: "bert-large, FP32, AdamW, lote 1 × 512 (acumulación 4), total de la GPU",
        source: HF_PERF,
        runtime: "transformers",
        model: "bert-large-uncased",
        args: "--mode full --dtype fp32 --precision pure --batch 1 --seq 512 --attention eager --grad-checkpointing false --cuda-context 1343MiB",
        measure: Measure::Device,
        published: mib(8681),
        unit: Unit::Binary,
    },
    Spec {
        id: "hf-perf-ga4-gc",
        what: "bert-large, FP32, AdamW, lote 1 × 512 con gradient checkpointing, total de la GPU",
        source: HF_PERF,
        runtime: "transformers",
        model: "bert-large-uncased",
        args: "--mode full --dtype fp32 --precision pure --batch 1 --seq 512 --attention eager --grad-checkpointing true --cuda-context 1343MiB",
        measure: Measure::Device,
        published: mib(6775),
        unit: Unit::Binary,
    },
    Spec {
        id: "hf-perf-fp16",
        what: "bert-large, AMP FP16 (fp16=True), AdamW, lote 4 × 512, total de la GPU",
        source: HF_PERF,
        runtime: "transformers",
        model: "bert-large-uncased",
        args: "--mode full --dtype fp16 --precision amp --batch 4 --seq 512 --attention eager --grad-checkpointing false --cuda-context 1343MiB",
        measure: Measure::Device,
        published: mib(13_939),
        unit: Unit::Binary,
    },
    Spec {
        id: "hf-perf-fp16-gc",
        what: "bert-large, AMP FP16, AdamW, lote 1 × 512 con gradient checkpointing, total de la GPU",
        source: HF_PERF,
        runtime: "transformers",
        model: "bert-large-uncased",
        args: "--mode full --dtype fp16 --precision amp --batch 1 --seq 512 --attention eager --grad-checkpointing true --cuda-context 1343MiB",
        measure: Measure::Device,
        published: mib(7275),
        unit: Unit::Binary,
    },
    Spec {
        id: "hf-perf-adafactor",
        what: "bert-large, FP32, Adafactor, lote 4 × 512, total de la GPU",
        source: HF_PERF,
        runtime: "transformers",
        model: "bert-large-uncased",
        args: "--mode full --dtype fp32 --precision pure --optimizer adafactor --batch 4 --seq 512 --attention eager --grad-checkpointing false --cuda-context 1343MiB",
        measure: Measure::Device,
        published: mib(12_295),
        unit: Unit::Binary,
    },
    Spec {
        id: "hf-perf-adafactor-all",
        what: "bert-large, AMP FP16, Adafactor, lote 1 × 512 con gradient checkpointing, total de la GPU",
        source: HF_PERF,
        runtime: "transformers",
        model: "bert-large-uncased",
        args: "--mode full --dtype fp16 --precision amp --optimizer adafactor --batch 1 --seq 512 --attention eager --grad-checkpointing true --cuda-context 1343MiB",
        measure: Measure::Device,
        published: mib(4847),
        unit: Unit::Binary,
    },
    Spec {
        id: "hf-perf-adam8bit",
        what: "bert-large, FP32, Adam de 8 bits, lote 4 × 512, total de la GPU",
        source: HF_PERF,
        runtime: "transformers",
        model: "bert-large-uncased",
        args: "--mode full --dtype fp32 --precision pure --optimizer adamw8bit --batch 4 --seq 512 --attention eager --grad-checkpointing false --cuda-context 1343MiB",
        measure: Measure::Device,
        published: mib(13_085),
        unit: Unit::Binary,
    },
    Spec {
        id: "hf-perf-adam8bit-all",
        what: "bert-large, AMP FP16, Adam de 8 bits, lote 1 × 512 con gradient checkpointing, total de la GPU",
        source: HF_PERF,
        runtime: "transformers",
        model: "bert-large-uncased",
        args: "--mode full --dtype fp16 --precision amp --optimizer adamw8bit --batch 1 --seq 512 --attention eager --grad-checkpointing true --cuda-context 1343MiB",
        measure: Measure::Device,
        published: mib(5363),
        unit: Unit::Binary,
    },
    // AutoAWQ: 4-bit AWQ inference, 2048 prompt tokens then 2048 generated.
    Spec {
        id: "autoawq-mistral7b-bs1",
        what: "Mistral 7B AWQ 4 bits, lote 1, 2048 + 2048 tokens (max_memory_allocated)",
        source: AUTOAWQ,
        runtime: "autoawq",
        model: "mistral-7b-v0.3",
        args: "--runtime autoawq --dtype awq --batch 1 --seq 2048 --new-tokens 2048 --gpu rtx-4090",
        measure: Measure::Allocated,
        published: gib(555),
        unit: Unit::Binary,
    },
    Spec {
        id: "autoawq-mistral7b-bs8",
        what: "Mistral 7B AWQ 4 bits, lote 8, 2048 + 2048 tokens (max_memory_allocated)",
        source: AUTOAWQ,
        runtime: "autoawq",
        model: "mistral-7b-v0.3",
        args: "--runtime autoawq --dtype awq --batch 8 --seq 2048 --new-tokens 2048 --gpu rtx-4090",
        measure: Measure::Allocated,
        published: gib(1682),
        unit: Unit::Binary,
    },
    Spec {
        id: "autoawq-tinyllama",
        what: "TinyLlama 1B AWQ 4 bits, lote 1, 2048 + 2048 tokens (max_memory_allocated)",
        source: AUTOAWQ,
        runtime: "autoawq",
        model: "tinyllama-1.1b",
        args: "--runtime autoawq --dtype awq --batch 1 --seq 2048 --new-tokens 2048 --gpu rtx-4090",
        measure: Measure::Allocated,
        published: gib(210),
        unit: Unit::Binary,
    },
    // optimum's GPTQ benchmark: transformers generate on an A100 80GB, nvidia-smi peak.
    Spec {
        id: "optimum-llama2-13b-fp16-bs1",
        what: "Llama-2-13B en FP16 con transformers generate, lote 1, 512 + 512 tokens (pico de PyTorch más lo ajeno a PyTorch)",
        source: OPTIMUM,
        runtime: "transformers 4.35 (2023)",
        model: "llama-2-13b",
        args: "--dtype fp16 --batch 1 --seq 512 --new-tokens 512 --gpu a100-80gb",
        measure: Measure::DeviceOldGenerate,
        published: mb(2915298),
        unit: Unit::Decimal,
    },
    Spec {
        id: "optimum-llama2-13b-fp16-bs16",
        what: "Llama-2-13B en FP16 con transformers generate, lote 16, 512 + 512 tokens (pico de PyTorch más lo ajeno a PyTorch)",
        source: OPTIMUM,
        runtime: "transformers 4.35 (2023)",
        model: "llama-2-13b",
        args: "--dtype fp16 --batch 16 --seq 512 --new-tokens 512 --gpu a100-80gb",
        measure: Measure::DeviceOldGenerate,
        published: mb(5398651),
        unit: Unit::Decimal,
    },
    Spec {
        id: "optimum-llama2-13b-fp16-prefill",
        what: "Llama-2-13B en FP16 con transformers, solo prellenado de 512 tokens, lote 1 (pico de PyTorch más lo ajeno a PyTorch)",
        source: OPTIMUM,
        runtime: "transformers",
        model: "llama-2-13b",
        args: "--dtype fp16 --batch 1 --seq 512 --new-tokens 1 --gpu a100-80gb",
        measure: Measure::Device,
        published: mb(2799954),
        unit: Unit::Decimal,
    },
    Spec {
        id: "optimum-llama2-13b-gptq-bs1",
        what: "Llama-2-13B GPTQ 4 bits (g128, exllama) con transformers generate, lote 1, 512 + 512 tokens (pico de PyTorch más lo ajeno a PyTorch)",
        source: OPTIMUM,
        runtime: "transformers 4.35 (2023)",
        model: "llama-2-13b",
        args: "--dtype gptq-4bit-128g --batch 1 --seq 512 --new-tokens 512 --gpu a100-80gb",
        measure: Measure::DeviceOldGenerate,
        published: mb(1048434),
        unit: Unit::Decimal,
    },
    Spec {
        id: "optimum-llama2-13b-gptq-bs16",
        what: "Llama-2-13B GPTQ 4 bits (g128, exllama) con transformers generate, lote 16, 512 + 512 tokens (pico de PyTorch más lo ajeno a PyTorch)",
        source: OPTIMUM,
        runtime: "transformers 4.35 (2023)",
        model: "llama-2-13b",
        args: "--dtype gptq-4bit-128g --batch 16 --seq 512 --new-tokens 512 --gpu a100-80gb",
        measure: Measure::DeviceOldGenerate,
        published: mb(3477704),
        unit: Unit::Decimal,
    },
    // llama.cpp: the KV cache of a 2048-token context (f16).
    Spec {
        id: "llamacpp-llama3-8b-kv",
        what: "Llama-3-8B en llama.cpp, n_ctx 2048: caché KV",
        source: LLAMACPP,
        runtime: "llama.cpp",
        model: "llama-3.1-8b",
        args: "--seq 2048",
        measure: Measure::KvBytes,
        published: mib(256),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-llama3-70b-kv",
        what: "Llama-3-70B en llama.cpp, n_ctx 2048: caché KV",
        source: LLAMACPP,
        runtime: "llama.cpp",
        model: "llama-3.1-70b",
        args: "--seq 2048",
        measure: Measure::KvBytes,
        published: mib(640),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-mixtral-kv",
        what: "Mixtral-8x7B en llama.cpp, n_ctx 2048: caché KV",
        source: LLAMACPP,
        runtime: "llama.cpp",
        model: "mixtral-8x7b",
        args: "--seq 2048",
        measure: Measure::KvBytes,
        published: mib(256),
        unit: Unit::Binary,
    },
    // Whole llama.cpp load logs: model, KV and compute buffers.
    Spec {
        id: "llamacpp-llama3-8b-q4km-weights",
        what: "Llama 3 8B Q4_K_M en llama.cpp: pesos en la GPU (la tabla de embeddings queda en la CPU)",
        source: LLAMACPP_3070,
        runtime: "llama.cpp",
        model: "llama-3.1-8b",
        args: "--runtime llama.cpp --dtype Q4_K_M --seq 512 --attention sdpa",
        measure: Measure::Weights,
        published: mib_h(440_349),
        unit: Unit::Binary,
    },
    // Partial offload (-ngl 20 of 32 repeating layers): what goes to the GPU.
    Spec {
        id: "llamacpp-mistral7b-ngl20-weights",
        what: "Mistral 7B Q4_K_M en llama.cpp con -ngl 20: pesos en la GPU (capas 12–31; la de salida y los embeddings quedan en la CPU)",
        source: LLAMACPP_NGL,
        runtime: "llama.cpp",
        model: "mistral-7b-v0.1",
        args: "--runtime llama.cpp --dtype Q4_K_M --seq 768 --gpu-layers 20 --ubatch 256",
        measure: Measure::Weights,
        published: mib_h(249_531),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-mistral7b-ngl20-kv",
        what: "Mistral 7B en llama.cpp con -ngl 20, n_ctx 768: caché KV en la GPU (20 de 32 capas)",
        source: LLAMACPP_NGL,
        runtime: "llama.cpp",
        model: "mistral-7b-v0.1",
        args: "--runtime llama.cpp --dtype Q4_K_M --seq 768 --gpu-layers 20 --ubatch 256",
        measure: Measure::KvBytes,
        published: mib(60),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-mistral7b-ngl20-compute",
        what: "Mistral 7B en llama.cpp con -ngl 20, micro-lote de 256: búfer de cómputo de la GPU (con la matriz de salida copiada desde la CPU)",
        source: LLAMACPP_NGL,
        runtime: "llama.cpp",
        model: "mistral-7b-v0.1",
        args: "--runtime llama.cpp --dtype Q4_K_M --seq 768 --gpu-layers 20 --ubatch 256",
        measure: Measure::Activations,
        published: mib_h(13_779),
        unit: Unit::Binary,
    },
    // Two GPUs: llama.cpp deals the layers (13 and 11, the output on the second) and
    // runs them as a pipeline; the second GPU is the busier one.
    Spec {
        id: "llamacpp-qwen2-05b-2gpu-weights",
        what: "Qwen2 0.5B Q4_0 en llama.cpp con dos GPU: pesos de la segunda (11 capas y la de salida)",
        source: LLAMACPP_2GPU,
        runtime: "llama.cpp",
        model: "qwen2.5-0.5b",
        args: "--runtime llama.cpp --dtype Q4_0 --seq 32768 --attention sdpa --gpus 2",
        measure: Measure::Weights,
        published: mib_h(22_606),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-qwen2-05b-2gpu-kv",
        what: "Qwen2 0.5B en llama.cpp con dos GPU, n_ctx 32768: caché KV de la segunda (11 de 24 capas)",
        source: LLAMACPP_2GPU,
        runtime: "llama.cpp",
        model: "qwen2.5-0.5b",
        args: "--runtime llama.cpp --dtype Q4_0 --seq 32768 --attention sdpa --gpus 2",
        measure: Measure::KvBytes,
        published: mib(176),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-qwen2-05b-2gpu-compute",
        what: "Qwen2 0.5B en llama.cpp con dos GPU en cadena (4 copias de las entradas), sin flash attention: búfer de cómputo de la segunda",
        source: LLAMACPP_2GPU,
        runtime: "llama.cpp",
        model: "qwen2.5-0.5b",
        args: "--runtime llama.cpp --dtype Q4_0 --seq 32768 --attention sdpa --gpus 2",
        measure: Measure::Activations,
        published: mib_h(116_602),
        unit: Unit::Binary,
    },
    // The vision projector of Gemma 3 (`--mmproj`), which Ollama loads for gemma3.
    Spec {
        id: "llamacpp-gemma3-4b-mmproj-weights",
        what: "Gemma 3 4B en llama.cpp con --mmproj (F16): pesos del proyector de visión",
        source: LLAMACPP_MMPROJ,
        runtime: "llama.cpp",
        model: "gemma-3-4b",
        args: "--runtime llama.cpp --dtype Q4_K_M --attention flash --mmproj true",
        measure: Measure::ProjectorWeights,
        published: mib_h(81_179),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-gemma3-4b-mmproj-compute",
        what: "Gemma 3 4B en llama.cpp con --mmproj y flash attention: búfer de cómputo de la imagen",
        source: LLAMACPP_MMPROJ,
        runtime: "llama.cpp",
        model: "gemma-3-4b",
        args: "--runtime llama.cpp --dtype Q4_K_M --attention flash --mmproj true",
        measure: Measure::ProjectorCompute,
        published: mib_h(12_125),
        unit: Unit::Binary,
    },
    Spec {
        id: "ollama-gemma3-12b-projector-weights",
        what: "Gemma 3 12B en Ollama: pesos del proyector de visión que carga del propio blob",
        source: OLLAMA_PROJECTOR,
        runtime: "ollama",
        model: "gemma-3-12b",
        args: "--runtime ollama --dtype Q4_K_M",
        measure: Measure::ProjectorWeights,
        published: mib_h(81_460),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-llama3-8b-compute",
        what: "Llama 3 8B en llama.cpp, n_ctx 512 sin flash attention: búfer de cómputo",
        source: LLAMACPP_3070,
        runtime: "llama.cpp",
        model: "llama-3.1-8b",
        args: "--runtime llama.cpp --dtype Q4_K_M --seq 512 --attention sdpa",
        measure: Measure::Activations,
        published: mib_h(25_850),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-qwen3-30b-weights",
        what: "Qwen3-30B-A3B Q8_0 en llama.cpp: pesos en la GPU",
        source: LLAMACPP_A100,
        runtime: "llama.cpp",
        model: "qwen3-30b-a3b",
        args: "--runtime llama.cpp --dtype Q8_0 --seq 65536",
        measure: Measure::Weights,
        published: mib_h(3_065_812),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-qwen3-30b-kv",
        what: "Qwen3-30B-A3B en llama.cpp, 65 536 celdas: caché KV",
        source: LLAMACPP_A100,
        runtime: "llama.cpp",
        model: "qwen3-30b-a3b",
        args: "--runtime llama.cpp --dtype Q8_0 --seq 65536",
        measure: Measure::KvBytes,
        published: mib(6144),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-qwen3-30b-compute",
        what: "Qwen3-30B-A3B en llama.cpp con flash attention: búfer de cómputo",
        source: LLAMACPP_A100,
        runtime: "llama.cpp",
        model: "qwen3-30b-a3b",
        args: "--runtime llama.cpp --dtype Q8_0 --seq 65536",
        measure: Measure::Activations,
        published: mib_h(30_075),
        unit: Unit::Binary,
    },
    // Experts kept in CPU RAM, the rest of every layer on the GPU. The logs' `-ot
    // blk.N.ffn.*=CPU` moves each layer's router (`ffn_gate_inp`, 2 MiB in f32) and
    // FFN norm with its experts; `--n-cpu-moe` leaves them on the GPU, so the GPU
    // figures below count 163 MiB (Q8_0 log, 81 layers) and 179 MiB (Q6_K log, 89
    // layers) more than those runs held. Q8_0 and Q6_K store every expert tensor alike,
    // so which layers go does not change the bytes.
    Spec {
        id: "llamacpp-qwen3-235b-cpu-moe-weights",
        what: "Qwen3-235B-A22B Q8_0 en llama.cpp con los expertos de 81 de 94 capas en la CPU: pesos en la GPU",
        source: LLAMACPP_235B_Q8,
        runtime: "llama.cpp",
        model: "qwen3-235b-a22b",
        args: "--runtime llama.cpp --dtype Q8_0 --seq 32768 --attention flash --n-cpu-moe 81",
        measure: Measure::Weights,
        published: mib_h(3_927_387),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-qwen3-235b-cpu-moe-host",
        what: "Qwen3-235B-A22B Q8_0 en llama.cpp con los expertos de 81 capas en la CPU: pesos en la RAM (198 451,27 MiB de capas y 630,59 MiB de embeddings)",
        source: LLAMACPP_235B_Q8,
        runtime: "llama.cpp",
        model: "qwen3-235b-a22b",
        args: "--runtime llama.cpp --dtype Q8_0 --seq 32768 --attention flash --n-cpu-moe 81",
        measure: Measure::HostWeights,
        published: mib_h(19_845_127 + 63_059),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-qwen3-235b-cpu-moe-kv",
        what: "Qwen3-235B-A22B en llama.cpp, 32 768 celdas en F16 con los expertos en la CPU: caché KV (toda en la GPU)",
        source: LLAMACPP_235B_Q8,
        runtime: "llama.cpp",
        model: "qwen3-235b-a22b",
        args: "--runtime llama.cpp --dtype Q8_0 --seq 32768 --attention flash --n-cpu-moe 81",
        measure: Measure::KvBytes,
        published: mib(6016),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-qwen3-235b-cpu-moe-compute",
        what: "Qwen3-235B-A22B Q8_0 en llama.cpp con los expertos en la CPU, micro-lote de 512: búfer de cómputo de la GPU (con cada tensor de expertos copiado desde la CPU)",
        source: LLAMACPP_235B_Q8,
        runtime: "llama.cpp",
        model: "qwen3-235b-a22b",
        args: "--runtime llama.cpp --dtype Q8_0 --seq 32768 --attention flash --n-cpu-moe 81",
        measure: Measure::Activations,
        published: mib(1024),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-qwen3-235b-q6k-cpu-moe-weights",
        what: "Qwen3-235B-A22B Q6_K en llama.cpp con los expertos de 89 de 94 capas en la CPU: pesos en la GPU",
        source: LLAMACPP_235B_Q6,
        runtime: "llama.cpp",
        model: "qwen3-235b-a22b",
        args: "--runtime llama.cpp --dtype Q6_K --seq 16384 --attention flash --kv-dtype int8 --n-cpu-moe 89",
        measure: Measure::Weights,
        published: mib_h(1_519_195),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-qwen3-235b-q6k-cpu-moe-kv",
        what: "Qwen3-235B-A22B en llama.cpp, 16 384 celdas en q8_0 con los expertos en la CPU: caché KV",
        source: LLAMACPP_235B_Q6,
        runtime: "llama.cpp",
        model: "qwen3-235b-a22b",
        args: "--runtime llama.cpp --dtype Q6_K --seq 16384 --attention flash --kv-dtype int8 --n-cpu-moe 89",
        measure: Measure::KvBytes,
        published: mib(1598),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-qwen3-235b-q6k-cpu-moe-compute",
        what: "Qwen3-235B-A22B Q6_K en llama.cpp con los expertos en la CPU, micro-lote de 512: búfer de cómputo de la GPU",
        source: LLAMACPP_235B_Q6,
        runtime: "llama.cpp",
        model: "qwen3-235b-a22b",
        args: "--runtime llama.cpp --dtype Q6_K --seq 16384 --attention flash --kv-dtype int8 --n-cpu-moe 89",
        measure: Measure::Activations,
        published: mib(774),
        unit: Unit::Binary,
    },
    // Unsloth's README: the longest context that trains, read off a line fitted over
    // nominal VRAM sizes (see the module's doc), so the capacity is the nominal size.
    Spec {
        id: "unsloth-ctx-24gb",
        what: "Llama 3.1 8B, QLoRA con Unsloth con 24 GB de VRAM: contexto máximo",
        source: UNSLOTH,
        runtime: "unsloth",
        model: "llama-3.1-8b",
        args: "--mode qlora --runtime unsloth --lora-rank 32 --lora-targets all-linear --attention flash --gpu-memory 24GiB",
        measure: Measure::MaxSeq,
        published: 78_475,
        unit: Unit::Tokens,
    },
    Spec {
        id: "unsloth-ctx-16gb",
        what: "Llama 3.1 8B, QLoRA con Unsloth con 16 GB de VRAM: contexto máximo",
        source: UNSLOTH,
        runtime: "unsloth",
        model: "llama-3.1-8b",
        args: "--mode qlora --runtime unsloth --lora-rank 32 --lora-targets all-linear --attention flash --gpu-memory 16GiB",
        measure: Measure::MaxSeq,
        published: 40_724,
        unit: Unit::Tokens,
    },
    Spec {
        id: "hf-fa2-ctx-24gb",
        what: "Llama 3.1 8B, QLoRA con Hugging Face + FA2 con 24 GB de VRAM: contexto máximo",
        source: UNSLOTH,
        runtime: "transformers 4.4x (2024)",
        model: "llama-3.1-8b",
        args: "--mode qlora --lora-rank 32 --lora-targets all-linear --attention flash --gpu-memory 24GiB",
        measure: Measure::MaxSeq,
        published: 5789,
        unit: Unit::Tokens,
    },
    Spec {
        id: "hf-fa2-ctx-16gb",
        what: "Llama 3.1 8B, QLoRA con Hugging Face + FA2 con 16 GB de VRAM: contexto máximo",
        source: UNSLOTH,
        runtime: "transformers 4.4x (2024)",
        model: "llama-3.1-8b",
        args: "--mode qlora --lora-rank 32 --lora-targets all-linear --attention flash --gpu-memory 16GiB",
        measure: Measure::MaxSeq,
        published: 2551,
        unit: Unit::Tokens,
    },
    Spec {
        id: "hf-fa2-ctx-80gb",
        what: "Llama 3.1 8B, QLoRA con Hugging Face + FA2 con 80 GB de VRAM: contexto máximo",
        source: UNSLOTH,
        runtime: "transformers 4.4x (2024)",
        model: "llama-3.1-8b",
        args: "--mode qlora --lora-rank 32 --lora-targets all-linear --attention flash --gpu-memory 80GiB",
        measure: Measure::MaxSeq,
        published: 28_454,
        unit: Unit::Tokens,
    },
    // torchtune's README: peak memory per recipe.
    Spec {
        id: "torchtune-llama31-8b-lora-4090",
        what: "Llama 3.1 8B, LoRA con torchtune en una RTX 4090, lote 2 × 2048 empaquetado",
        source: TORCHTUNE,
        runtime: "torchtune",
        model: "llama-3.1-8b",
        // 8B_lora_single_device.yaml at that commit: lora_attn_modules ['q_proj',
        // 'v_proj'], no MLP, rank 8.
        args: "--mode lora --runtime torchtune --lora-rank 8 --lora-targets q_proj,v_proj --batch 2 --seq 2048",
        measure: Measure::Allocated,
        published: gib(1620),
        unit: Unit::Binary,
    },
    Spec {
        id: "torchtune-llama31-8b-qlora-4090",
        what: "Llama 3.1 8B, QLoRA con torchtune en una RTX 4090, lote 2 × 2048 empaquetado",
        source: TORCHTUNE,
        runtime: "torchtune",
        model: "llama-3.1-8b",
        // 8B_qlora_single_device.yaml at that commit: lora_attn_modules ['q_proj',
        // 'v_proj', 'k_proj', 'output_proj'], apply_lora_to_mlp: True, rank 8.
        args: "--mode qlora --runtime torchtune --dtype nf4 --lora-rank 8 --lora-targets q_proj,v_proj,k_proj,output_proj,mlp --batch 2 --seq 2048",
        measure: Measure::Allocated,
        published: gib(740),
        unit: Unit::Binary,
    },
    Spec {
        id: "torchtune-llama32-3b-packed",
        what: "Llama 3.2 3B, ajuste completo con torchtune (bf16, lote 2 × 4096 empaquetado, pérdida entera, sin checkpointing)",
        source: TORCHTUNE,
        runtime: "torchtune",
        model: "llama-3.2-3b",
        args: "--mode full --runtime torchtune --loss full --batch 2 --seq 4096 --grad-checkpointing false",
        measure: Measure::Allocated,
        published: gib(6000),
        unit: Unit::Binary,
    },
    Spec {
        id: "torchtune-llama32-3b-ac",
        what: "Llama 3.2 3B, ajuste completo con torchtune (bf16, 2 × 4096, pérdida troceada, checkpointing; con torch.compile)",
        source: TORCHTUNE,
        runtime: "torchtune",
        model: "llama-3.2-3b",
        args: "--mode full --runtime torchtune --batch 2 --seq 4096 --grad-checkpointing true",
        measure: Measure::Allocated,
        published: gib(2490),
        unit: Unit::Binary,
    },
    // Several GPUs with PyTorch FSDP: each holds its shard plus the root unit whole
    // (embeddings and head) and the layer it works on (`estimate::torch::parallel::fsdp_unsharded`).
    Spec {
        id: "torchtune-llama31-70b-lora-8xa100",
        what: "Llama 3.1 70B, LoRA con torchtune y FSDP en 8 A100, lote 2 × 2048 empaquetado: pico por GPU",
        source: TORCHTUNE_70B,
        runtime: "torchtune",
        model: "llama-3.1-70b",
        // 70B_lora.yaml at that commit: lora_attn_modules ['q_proj', 'k_proj',
        // 'v_proj'], no MLP, rank 16.
        args: "--mode lora --runtime torchtune --lora-rank 16 --lora-targets q_proj,k_proj,v_proj --batch 2 --seq 2048 --grad-checkpointing true --gpus 8 --zero 3",
        measure: Measure::Allocated,
        published: gib(2760),
        unit: Unit::Binary,
    },
    Spec {
        id: "fsdp-qlora-llama2-7b-lora-512",
        what: "Llama 2 7B, LoRA (rango 64) con FSDP en 2 RTX 3090, lote 1 × 512: pico asignado por GPU",
        source: FSDP_QLORA,
        runtime: "fsdp_qlora (2024)",
        model: "llama-2-7b",
        args: "--mode lora --precision pure --lora-rank 64 --lora-targets all-linear --batch 1 --seq 512 --grad-checkpointing true --gpus 2 --zero 3",
        measure: Measure::Allocated,
        published: gib(828),
        unit: Unit::Binary,
    },
    Spec {
        id: "fsdp-qlora-llama2-7b-lora-2048",
        what: "Llama 2 7B, LoRA (rango 64) con FSDP en 2 RTX 3090, lote 1 × 2048: pico asignado por GPU",
        source: FSDP_QLORA,
        runtime: "fsdp_qlora (2024)",
        model: "llama-2-7b",
        args: "--mode lora --precision pure --lora-rank 64 --lora-targets all-linear --batch 1 --seq 2048 --grad-checkpointing true --gpus 2 --zero 3",
        measure: Measure::Allocated,
        published: gib(916),
        unit: Unit::Binary,
    },
    // litgpt's fine-tuning configs on an A10G: bf16-true, LoRA on q and v, rank 32,
    // sequences up to 512 tokens, no checkpointing; litgpt's loss is computed in chunks.
    Spec {
        id: "litgpt-llama3-8b-lora",
        what: "Llama 3 8B, LoRA con litgpt (bf16, rango 32 en q y v, lote 1 × 512)",
        source: LITGPT,
        runtime: "litgpt",
        model: "llama-3.1-8b",
        args: "--mode lora --precision pure --loss fused --lora-rank 32 --lora-targets qv --batch 1 --seq 512 --grad-checkpointing false",
        measure: Measure::Allocated,
        published: gb(1973),
        unit: Unit::Decimal,
    },
    // The two QLoRA rows were measured in 2024 with bitsandbytes 0.42.0 (litgpt's
    // pyproject.toml then), whose `MatMul4Bit.forward` kept every frozen 4-bit layer's
    // input for the backward pass (`ctx.tensors = (A, B)`); since then it keeps only
    // the packed weight (`(None, B)`), which is what the estimator models. litgpt also
    // quantises the output head. Those inputs are the gap these rows show; they are
    // left visible under their own runtime instead of being modelled for an old release.
    Spec {
        id: "litgpt-llama3-8b-qlora",
        what: "Llama 3 8B, QLoRA con litgpt (NF4, bf16, rango 32 en q y v, lote 2 × 512)",
        source: LITGPT,
        runtime: "litgpt 2024 (bitsandbytes 0.42)",
        model: "llama-3.1-8b",
        args: "--mode qlora --dtype nf4 --precision pure --loss fused --lora-rank 32 --lora-targets qv --batch 2 --seq 512 --grad-checkpointing false",
        measure: Measure::Allocated,
        published: gb(1741),
        unit: Unit::Decimal,
    },
    Spec {
        id: "litgpt-gemma2-9b-qlora",
        // config_hub/finetune/gemma2-9b/qlora.yaml: rank 16 on every linear layer (and
        // the head, which `all-linear` leaves out), batch 1 × 512.
        what: "Gemma 2 9B, QLoRA con litgpt (NF4, bf16, rango 16 en todas las lineales, lote 1 × 512)",
        source: LITGPT,
        runtime: "litgpt 2024 (bitsandbytes 0.42)",
        model: "gemma-2-9b",
        args: "--mode qlora --dtype nf4 --precision pure --loss fused --lora-rank 16 --lora-targets all-linear --batch 1 --seq 512 --grad-checkpointing false",
        measure: Measure::Allocated,
        published: gb(2092),
        unit: Unit::Decimal,
    },
    // Measured by this project on an H200 with `Trainer`, PEFT and `generate`
    // (`tools/device/measure_memory.py`; raw lines in docs/measurements/2026-12-04-h200).
    Spec {
        id: "h200-full-amp-qwen1.5b",
        what: "Qwen2.5-1.5B, ajuste completo con Trainer (pesos FP32, bf16=True: autocast), lote 4 × 2048, sin checkpointing",
        source: H200,
        runtime: "transformers",
        model: "qwen2.5-1.5b",
        args: "--gpu h200 --runtime transformers --mode full --precision amp --batch 4 --seq 2048 --grad-checkpointing false",
        measure: Measure::Allocated,
        published: 64_056_340_480,
        unit: Unit::Binary,
    },
    Spec {
        id: "h200-full-amp-ckpt-qwen1.5b",
        what: "Qwen2.5-1.5B, ajuste completo con Trainer (autocast), lote 4 × 2048, con checkpointing",
        source: H200,
        runtime: "transformers",
        model: "qwen2.5-1.5b",
        args: "--gpu h200 --runtime transformers --mode full --precision amp --batch 4 --seq 2048 --grad-checkpointing true",
        measure: Measure::Allocated,
        published: 35_743_187_456,
        unit: Unit::Binary,
    },
    Spec {
        id: "h200-full-amp-ckpt-llama1b",
        what: "Llama 3.2 1B, ajuste completo con Trainer (autocast), lote 8 × 1024, con checkpointing",
        source: H200,
        runtime: "transformers",
        model: "llama-3.2-1b",
        args: "--gpu h200 --runtime transformers --mode full --precision amp --batch 8 --seq 1024 --grad-checkpointing true",
        measure: Measure::Allocated,
        published: 29_272_586_240,
        unit: Unit::Binary,
    },
    Spec {
        id: "h200-full-bf16-ckpt-qwen0.5b",
        what: "Qwen2.5-0.5B, ajuste completo con Trainer en bf16 puro, lote 8 × 2048, con checkpointing",
        source: H200,
        runtime: "transformers",
        model: "qwen2.5-0.5b",
        args: "--gpu h200 --runtime transformers --mode full --precision pure --dtype bf16 --batch 8 --seq 2048 --grad-checkpointing true",
        measure: Measure::Allocated,
        published: 33_745_080_320,
        unit: Unit::Binary,
    },
    Spec {
        id: "h200-lora-qv-ckpt-llama8b",
        what: "Llama 3.1 8B, LoRA de PEFT (rango 16, q y v) con Trainer, lote 2 × 4096, con checkpointing",
        source: H200,
        runtime: "transformers",
        model: "llama-3.1-8b",
        args: "--gpu h200 --runtime transformers --mode lora --lora-rank 16 --lora-targets qv --batch 2 --seq 4096 --grad-checkpointing true",
        measure: Measure::Allocated,
        published: 31_101_563_904,
        unit: Unit::Binary,
    },
    Spec {
        id: "h200-lora-all-ckpt-llama8b",
        what: "Llama 3.1 8B, LoRA de PEFT (rango 16, todas las lineales) con Trainer, lote 1 × 8192, con checkpointing",
        source: H200,
        runtime: "transformers",
        model: "llama-3.1-8b",
        args: "--gpu h200 --runtime transformers --mode lora --lora-rank 16 --lora-targets all-linear --batch 1 --seq 8192 --grad-checkpointing true",
        measure: Measure::Allocated,
        published: 31_525_385_216,
        unit: Unit::Binary,
    },
    Spec {
        id: "h200-lora-qv-qwen7b",
        what: "Qwen2.5-7B, LoRA de PEFT (rango 16, q y v) con Trainer, lote 1 × 2048, sin checkpointing",
        source: H200,
        runtime: "transformers",
        model: "qwen2.5-7b",
        args: "--gpu h200 --runtime transformers --mode lora --lora-rank 16 --lora-targets qv --batch 1 --seq 2048 --grad-checkpointing false",
        measure: Measure::Allocated,
        published: 29_093_761_024,
        unit: Unit::Binary,
    },
    Spec {
        id: "h200-generate-qwen7b",
        what: "Qwen2.5-7B en bf16, generate de 8192 + 128 tokens",
        source: H200,
        runtime: "transformers",
        model: "qwen2.5-7b",
        args: "--gpu h200 --runtime transformers --mode inference --dtype bf16 --batch 1 --seq 8192 --new-tokens 128",
        measure: Measure::Allocated,
        published: 16_952_735_232,
        unit: Unit::Binary,
    },
    Spec {
        id: "h200-generate-b8-llama8b",
        what: "Llama 3.1 8B en bf16, generate de 8 secuencias de 2048 + 256 tokens",
        source: H200,
        runtime: "transformers",
        model: "llama-3.1-8b",
        args: "--gpu h200 --runtime transformers --mode inference --dtype bf16 --batch 8 --seq 2048 --new-tokens 256",
        measure: Measure::Allocated,
        published: 20_196_634_112,
        unit: Unit::Binary,
    },
    // 2025–26 models. The llm-d table was run with an older vLLM (its reproduction pins
    // 0.11.0): kept under that runtime's name, outside today's vLLM band.
    Spec {
        id: "llmd26-gpt-oss-20b-weights",
        what: "gpt-oss-20b (MXFP4) en vLLM, H100: pesos cargados",
        source: LLMD_2026,
        runtime: "vLLM 0.11",
        model: "gpt-oss-20b",
        args: VLLM_011,
        measure: Measure::LoadedWeights,
        published: gib(1347),
        unit: Unit::Binary,
    },
    Spec {
        id: "llmd26-gpt-oss-20b-kv",
        what: "gpt-oss-20b (MXFP4) en vLLM, H100: memoria para la caché KV",
        source: LLMD_2026,
        runtime: "vLLM 0.11",
        model: "gpt-oss-20b",
        args: VLLM_011,
        measure: Measure::KvBudget,
        published: gib(5028),
        unit: Unit::Binary,
    },
    Spec {
        id: "llmd26-gpt-oss-120b-weights",
        what: "gpt-oss-120b (MXFP4) en vLLM, H100: pesos cargados",
        source: LLMD_2026,
        runtime: "vLLM 0.11",
        model: "gpt-oss-120b",
        args: VLLM_011,
        measure: Measure::LoadedWeights,
        published: gib(6438),
        unit: Unit::Binary,
    },
    Spec {
        id: "llmd26-gpt-oss-120b-kv",
        what: "gpt-oss-120b (MXFP4) en vLLM, H100: memoria para la caché KV",
        source: LLMD_2026,
        runtime: "vLLM 0.11",
        model: "gpt-oss-120b",
        args: VLLM_011,
        measure: Measure::KvBudget,
        published: gib(333),
        unit: Unit::Binary,
    },
    Spec {
        id: "llmd26-qwen3-0.6b-kv",
        what: "Qwen3-0.6B en vLLM, H100: memoria para la caché KV",
        source: LLMD_2026,
        runtime: "vLLM 0.11",
        model: "qwen3-0.6b",
        args: VLLM_011,
        measure: Measure::KvBudget,
        published: gib(6445),
        unit: Unit::Binary,
    },
    Spec {
        id: "llmd26-qwen3-32b-kv",
        what: "Qwen3-32B en vLLM, H100: memoria para la caché KV",
        source: LLMD_2026,
        runtime: "vLLM 0.11",
        model: "qwen3-32b",
        args: VLLM_011,
        measure: Measure::KvBudget,
        published: gib(445),
        unit: Unit::Binary,
    },
    Spec {
        id: "llmd26-qwen3-32b-tp2-kv",
        what: "Qwen3-32B en vLLM, dos H100 con TP 2: memoria para la caché KV por GPU",
        source: LLMD_2026,
        runtime: "vLLM 0.11",
        model: "qwen3-32b",
        args: "--runtime vllm --gpu h100-sxm --gpus 2 --seq 16000 --gpu-memory-utilization 0.9 --cuda-graphs after-kv",
        measure: Measure::KvBudget,
        published: gib(3449),
        unit: Unit::Binary,
    },
    Spec {
        id: "llmd26-mistral-small-kv",
        what: "Mistral Small 3.2 24B (la arquitectura de 3.1) en vLLM 0.11, H100: tokens de caché KV",
        source: LLMD_2026,
        runtime: "vLLM 0.11",
        model: "mistral-small-3.1-24b",
        args: "--runtime vllm --gpu h100-sxm --seq 16000 --gpu-memory-utilization 0.95 --cuda-graphs after-kv",
        measure: Measure::KvTokens,
        published: 184_832,
        unit: Unit::Tokens,
    },
    // gpt-oss in llama.cpp: 12 global layers of 131 072 cells and 12 windowed ones of
    // 128 + a micro-batch (rounded to 256), F16; the MXFP4_MOE file's experts on the CPU.
    Spec {
        id: "llamacpp-gpt-oss-20b-kv",
        what: "gpt-oss-20b en llama.cpp, 131 072 celdas: caché KV global y de ventana",
        source: LLAMACPP_OSS_3070,
        runtime: "llama.cpp",
        model: "gpt-oss-20b",
        args: LLAMACPP_OSS_ARGS,
        measure: Measure::KvBytes,
        published: mib(3072 + 18),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-gpt-oss-20b-weights",
        what: "gpt-oss-20b en llama.cpp con todos los expertos en la CPU: pesos en la GPU",
        source: LLAMACPP_OSS_3070,
        runtime: "llama.cpp",
        model: "gpt-oss-20b",
        args: LLAMACPP_OSS_ARGS,
        measure: Measure::Weights,
        published: mib_h(124_203),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-gpt-oss-20b-compute",
        what: "gpt-oss-20b en llama.cpp con los expertos en la CPU: búfer de cómputo de la GPU",
        source: LLAMACPP_OSS_3070,
        runtime: "llama.cpp",
        model: "gpt-oss-20b",
        args: LLAMACPP_OSS_ARGS,
        measure: Measure::Activations,
        published: mib_h(45_698),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-gpt-oss-20b-ub2048-kv",
        what: "gpt-oss-20b en llama.cpp (Metal), micro-lote 2048: caché KV global y de ventana",
        source: LLAMACPP_OSS_M5,
        runtime: "llama.cpp",
        model: "gpt-oss-20b",
        args: "--runtime llama.cpp --dtype MXFP4_MOE --seq 131072 --attention flash --ubatch 2048",
        measure: Measure::KvBytes,
        published: mib(3072 + 54),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-gpt-oss-20b-ub2048-compute",
        what: "gpt-oss-20b en llama.cpp (Metal), micro-lote 2048: búfer de cómputo",
        source: LLAMACPP_OSS_M5,
        runtime: "llama.cpp",
        model: "gpt-oss-20b",
        args: "--runtime llama.cpp --dtype MXFP4_MOE --seq 131072 --attention flash --ubatch 2048",
        measure: Measure::Activations,
        published: mib_h(167_208),
        unit: Unit::Binary,
    },
    // Qwen3.5-27B: 16 attention layers and 48 Gated DeltaNet ones; with -ngl 26 the
    // output and the last 25 layers (7 attention, 18 linear) hold their cache on the GPU.
    Spec {
        id: "llamacpp-qwen3.5-27b-ngl26-kv",
        what: "Qwen3.5-27B en llama.cpp con -ngl 26, 131 072 celdas: caché KV y estado recurrente en la GPU",
        source: LLAMACPP_Q35_27B,
        runtime: "llama.cpp",
        model: "qwen3.5-27b",
        args: LLAMACPP_Q35_ARGS,
        measure: Measure::KvBytes,
        published: mib(3584) + mib_h(5611),
        unit: Unit::Binary,
    },
    Spec {
        id: "llamacpp-qwen3.5-27b-ngl26-compute",
        what: "Qwen3.5-27B en llama.cpp con -ngl 26, micro-lote 1024: búfer de cómputo de la GPU",
        source: LLAMACPP_Q35_27B,
        runtime: "llama.cpp",
        model: "qwen3.5-27b",
        args: LLAMACPP_Q35_ARGS,
        measure: Measure::Activations,
        published: mib_h(140_175),
        unit: Unit::Binary,
    },
];

/// `--flag value` pairs of a spec.
fn flags(args: &str) -> HashMap<&str, &str> {
    let words: Vec<&str> = args.split_whitespace().collect();
    words
        .chunks(2)
        .filter_map(|p| Some((p.first()?.trim_start_matches('-'), *p.get(1)?)))
        .collect()
}

fn settings(spec: &Spec) -> Settings {
    let given = flags(spec.args);
    let (mut s, _) = Settings::read_with(&Settings::for_task(Task::Inference), Surface::Cli, |f| {
        given.get(f.field.cli()).map(|v| (*v).to_owned())
    });
    // The partial-offload log is a 2025 build's, whose `-ngl 20` kept the output layer
    // on the CPU (before llama.cpp PR 18148 offloaded it first).
    if spec.source == LLAMACPP_NGL {
        s.ngl_output_first = false;
    }
    // One sequence: llama-cli, `-np 1`, or a build before `-np auto` ("n_seq_max = 1").
    if [LLAMACPP_OSS_3070, LLAMACPP_OSS_M5, LLAMACPP_Q35_27B].contains(&spec.source) {
        s.slots = Some(0);
    }
    s
}

fn measured(e: &Evaluation, m: Measure) -> u64 {
    let b = &e.estimate.breakdown;
    match m {
        Measure::Allocated => b.total().saturating_sub(b.overhead),
        Measure::Device => e.estimate.per_gpu_bytes,
        Measure::DeviceOldGenerate => e.estimate.per_gpu_bytes.saturating_add(
            e.notes
                .iter()
                .find_map(|n| match n {
                    crate::evaluate::Note::OldGenerateCache { bytes } => Some(*bytes),
                    _ => None,
                })
                .unwrap_or(0),
        ),
        Measure::KvTokens => e.serving.map_or(0, |p| p.tokens),
        Measure::KvBudget => e.serving.map_or(0, |p| p.kv_budget_bytes),
        Measure::LoadedWeights => e.serving.map_or(0, |p| p.weights_bytes),
        Measure::KvBytes => b.kv_cache,
        Measure::Weights => b.weights,
        Measure::Activations => b.activations,
        Measure::HostWeights => e.estimate.host_weights_bytes,
        Measure::MaxSeq => e.max_seq.unwrap_or(0),
        Measure::ProjectorWeights => e.estimate.projector.map_or(0, |p| p.weights),
        Measure::ProjectorCompute => e.estimate.projector.map_or(0, |p| p.compute),
    }
}

pub(super) fn cases() -> Vec<Case> {
    SPECS
        .iter()
        .map(|spec| {
            let settings = settings(spec);
            let evaluation = catalog::model(spec.model)
                .map(|m| {
                    Model::new(ModelInput::Arch {
                        arch: Box::new(m.arch.clone()),
                        total_params: None,
                    })
                })
                .and_then(|model| evaluate(&model, &settings).ok());
            let estimated = evaluation.as_ref().map_or(0, |e| measured(e, spec.measure));
            let weights = match spec.measure {
                Measure::Allocated | Measure::Device | Measure::DeviceOldGenerate => Some(
                    evaluation
                        .as_ref()
                        .map_or(0, |e| e.estimate.breakdown.weights),
                ),
                Measure::KvBytes
                | Measure::KvBudget
                | Measure::Activations
                | Measure::ProjectorCompute => Some(0),
                Measure::Weights
                | Measure::LoadedWeights
                | Measure::HostWeights
                | Measure::KvTokens
                | Measure::MaxSeq
                | Measure::ProjectorWeights => None,
            };
            Case {
                id: spec.id,
                what: spec.what,
                source: spec.source,
                published: spec.published,
                estimated,
                unit: spec.unit,
                runtime: spec.runtime,
                training: settings.task.is_training(),
                weights,
                weights_only: matches!(
                    spec.measure,
                    Measure::Weights
                        | Measure::LoadedWeights
                        | Measure::HostWeights
                        | Measure::ProjectorWeights
                ),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every spec names a catalog model and reads as settings without a problem.
    #[test]
    fn specs_are_valid_settings() {
        for spec in SPECS {
            assert!(catalog::model(spec.model).is_some(), "{}", spec.id);
            let given = flags(spec.args);
            let (_, errors) =
                Settings::read_with(&Settings::for_task(Task::Inference), Surface::Cli, |f| {
                    given.get(f.field.cli()).map(|v| (*v).to_owned())
                });
            assert!(errors.is_empty(), "{}: {errors:?}", spec.id);
            // Every flag is a setting (no typo silently ignored).
            for flag in given.keys() {
                assert!(
                    crate::settings::FIELDS
                        .iter()
                        .any(|f| f.field.cli() == *flag),
                    "{}: --{flag}",
                    spec.id
                );
            }
        }
    }
}
