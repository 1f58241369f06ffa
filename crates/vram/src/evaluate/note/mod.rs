//! What the estimate assumed or could not do, as typed values. Each front end words
//! them for its readers with [`Note::text`]: the CLI may name its flags, the web never
//! does. Building notes costs nothing in the solvers, which never ask for them.

mod auto;
mod ggml;
mod model;
mod serving;
mod training;

use crate::band::Band;
use crate::settings::Surface;
use crate::workload::{LoraTargets, Loss, Precision};

/// Where a checkpoint's vision tower goes ([`Note::VisionTower`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TowerPlace {
    /// Loaded with the model by a PyTorch engine, and counted in the weights.
    Loaded,
    /// A ggml runtime without `--mmproj`: only from a separate projector file; not
    /// counted.
    Projector,
    /// A ggml runtime with `--mmproj` (Ollama's default): weights and the image
    /// compute buffer counted on the GPU.
    ProjectorLoaded,
    /// LoRA or QLoRA: loaded and frozen with the base, counted in the weights.
    Frozen,
    /// Full fine-tuning: trained with the rest unless the script freezes it; counted.
    Trained,
}

/// Whose memory a catalog GPU's capacity is, for the wording of [`Note::Capacity`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    /// An NVIDIA card: nvidia-smi's total, PyTorch's (CUDA's) share.
    Nvidia,
    /// An AMD card: the spec sheet's size, what ROCm gives PyTorch.
    Amd,
    /// An Intel card: the spec sheet's size, what SYCL/Level Zero reports.
    Intel,
    /// Apple Silicon: unified memory, of which Metal lets the GPU wire
    /// `recommendedMaxWorkingSetSize`.
    Apple,
    /// Another unified-memory machine (DGX Spark, Strix Halo).
    Unified,
}

impl DeviceKind {
    pub fn of(gpu: &crate::catalog::Gpu) -> DeviceKind {
        match gpu.family.as_str() {
            "apple" => DeviceKind::Apple,
            _ if gpu.unified => DeviceKind::Unified,
            f if f.starts_with("rdna") || f.starts_with("cdna") => DeviceKind::Amd,
            f if f.starts_with("xe") => DeviceKind::Intel,
            _ => DeviceKind::Nvidia,
        }
    }
}

/// Why `auto` holds a quantised checkpoint's weights as it does ([`Note::CheckpointFormat`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatChoice {
    /// Loaded as stored (vLLM, transformers 5 with its kernels).
    Kept { transformers: bool },
    /// Training dequantises to bf16.
    Training,
    /// transformers on a GPU below compute capability 7.5 dequantises MXFP4 to bf16.
    OldGpu,
    /// llama.cpp and Ollama run the GGUF published for it.
    Gguf,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Note {
    /// How far published runs of this runtime and phase were from the estimate.
    Band {
        runtime: &'static str,
        training: bool,
        /// The verdict is about serving capacity (tokens), not memory.
        serving: bool,
        band: Band,
    },
    /// What the runtime keeps beyond the model, as estimated (training).
    Runtime {
        runtime: &'static str,
        precision: Option<Precision>,
        loss: Loss,
        targets: Option<LoraTargets>,
        offload: bool,
    },
    /// The capacity compared with: what the catalog GPU's driver gives PyTorch, less
    /// what the display and other processes hold.
    Capacity {
        gpu: String,
        /// How the GPU's memory is shown and shared ([`DeviceKind::of`]).
        kind: DeviceKind,
        usable: u64,
        nominal: u64,
        source: String,
        reserve: u64,
    },
    /// The context Ollama opens a model with on this much VRAM when nothing says
    /// otherwise, beside the one given (both with the generated tokens).
    OllamaContext { vram: u64, default: u64, seq: u64 },
    /// Automatic layers (`-ngl auto`): where llama.cpp's `--fit` put them because the
    /// whole model did not leave 1 GiB free. `gpu_layers` is `-ngl` (`None`: all of
    /// them), `cpu_moe` the layers whose experts went to the CPU.
    FittedLayers {
        gpu_layers: Option<u32>,
        layers: u32,
        cpu_moe: u32,
        /// llama.cpp itself, whose flags can say the same (Ollama's cannot).
        llama_cpp: bool,
        /// `-ngl` counts the output layer first (`estimate::ggml::placement`).
        output_first: bool,
    },
    /// An automatic context (`--seq auto`): the one the runtime opens, and why.
    OpenedContext {
        opened: crate::default_context::Opened,
        new_tokens: u64,
    },
    /// What vLLM's start-up profile ran and the peak it subtracts before sizing the KV
    /// cache.
    ServingProfile {
        tokens: u64,
        sequences: u64,
        bytes: u64,
        /// Whether `tokens` and `sequences` are the reader's `max_num_batched_tokens` and
        /// `max_num_seqs` (not vLLM's defaults for the GPU).
        chosen_tokens: bool,
        chosen_sequences: bool,
        /// Several GPUs: the whole estimated overhead stands in for vLLM's non-PyTorch
        /// growth (`serving::non_torch_growth`).
        several_gpus: bool,
    },
    /// vLLM's CUDA graphs: how many batch sizes it captures, their memory, and where
    /// it comes from.
    CudaGraphs {
        mode: crate::cuda_graphs::CudaGraphs,
        captures: crate::cuda_graphs::Captures,
        bytes: u64,
        /// Mixture-of-experts or MLA layers, whose graphs vLLM measured up to twice the
        /// dense estimate.
        sparse: bool,
    },
    /// A multimodal checkpoint's vision tower and projector, and whether the weights
    /// count it.
    VisionTower {
        bytes: u64,
        place: TowerPlace,
        /// A ggml runtime's image compute buffer (0 elsewhere).
        compute: u64,
    },
    /// The dummy images vLLM's start-up profile encodes for a multimodal checkpoint.
    VisionEncoder {
        images: u64,
        /// Pixels and encoder outputs alive through the rest of the profile.
        alive: u64,
    },
    /// How llama.cpp (or Ollama) lays out inference memory.
    Ggml {
        runtime: &'static str,
        /// `-ngl`: layers + 1 means all of them and the output.
        ngl: u32,
        /// Repeating layers on the GPU and whether the output layer is there
        /// (`estimate::ggml::placement`).
        placement: (u32, bool),
        layers: u32,
        /// Bytes in CPU RAM.
        host: u64,
        cells: u64,
        /// Cells of the sliding-window layers (`estimate::ggml::swa_cells`) and the
        /// slots sharing one pool (0: a stream per sequence); `None` without windows.
        swa: Option<(u64, u32)>,
        flash: bool,
        compute: u64,
        embeddings_on_cpu: u64,
        /// The micro-batch the compute buffer is sized for (`-ub`).
        ubatch: u64,
    },
    /// llama.cpp's `--n-cpu-moe`: routed experts kept in CPU RAM.
    CpuExperts {
        /// Layers whose experts stay in CPU RAM.
        layers: u32,
        /// The `--n-cpu-moe` asked for, or that `--fit` chose
        /// ([`crate::settings::CPU_MOE_ALL`]: `--cpu-moe`); `None` where no flag says it
        /// (Ollama, whose llama-server chose it).
        asked: Option<u32>,
        bytes: u64,
        /// Expert bytes the CPU reads per generated token: the routed experts a token
        /// uses in those layers.
        per_token: u64,
        /// Bytes the compute buffer holds for the expert matmuls offloaded to the GPU
        /// during prompt processing (0 when the micro-batch is too small).
        copies: u64,
        /// The RAM bandwidth the bound uses, GB/s.
        ram_gbs: u32,
    },
    /// PyTorch FSDP keeps its root unit and the layer it works on whole
    /// (`estimate::torch::parallel::fsdp_unsharded`).
    FsdpUnsharded { root: u64, layer: u64 },
    /// The context asked for passes the model's own (`max_position_embeddings`, or the
    /// GGUF's `context_length`). vLLM refuses to start then; the others run, with
    /// positions the model never saw.
    BeyondTrainedContext {
        asked: u64,
        trained: u64,
        vllm: bool,
    },
    /// Tensor parallelism that does not divide the attention heads: vLLM refuses to
    /// start ("Total number of attention heads … must be divisible by tensor parallel
    /// size").
    TpHeads { heads: u32, tp: u32 },
    /// NCCL's buffers for the tensor- and data-parallel groups, counted in the overhead.
    Communication { bytes: u64 },
    /// PyTorch DDP's gradient buckets, a second copy of the gradients
    /// (`estimate::torch::parallel::grad_sync`).
    DdpBuckets { bytes: u64 },
    /// DeepSpeed ZeRO's reduce bucket and, at stage 3, the largest module gathered
    /// whole (`estimate::torch::parallel::grad_sync`).
    DeepspeedBuffers {
        /// `estimate::torch::parallel::grad_sync`'s account.
        sync: crate::estimate::torch::parallel::GradSync,
        /// The reduce bucket at DeepSpeed's own default size.
        default_bucket: u64,
    },
    /// Ollama keeps a model that takes at most 80 % of one GPU on that GPU alone.
    OllamaOneGpu { gpus: u32 },
    /// llama.cpp or Ollama on several GPUs: how they deal the layers, and what running
    /// them as a pipeline adds to each GPU.
    LayerSplit {
        runtime: &'static str,
        gpus: u32,
        /// Layers on the first GPU and on the last (which also holds the output layer
        /// when every layer is on the GPUs).
        first: u32,
        last: u32,
        /// Whether the output layer is on the last GPU too.
        output: bool,
        /// As a pipeline: what the extra copies of each GPU's inputs add beyond one.
        pipeline: Option<u64>,
    },
    /// The CUDA context came from the GPU family's default.
    CudaContext {
        bytes: u64,
        gpu: String,
        basis: &'static str,
    },
    /// A parameter total was given and differs from the architecture's.
    TotalParams { given: u64, derived: u64 },
    /// Paged optimizer states, counted on the GPU but evictable to CPU RAM.
    PagedOptimizer { bytes: u64 },
    /// Pipeline parallelism keeps `pp` micro-batches in flight in the first stage.
    Pipeline { pp: u32 },
    /// Parameters in RAM were asked for without ZeRO-3, which alone can do it.
    OffloadParamsNeedZero3,
    /// LLM.int8 with checkpointing: what non-reentrant checkpointing would keep
    /// (`estimate::torch::bnb::bnb_int8_unhooked_inputs`), not counted in the total.
    Int8Checkpointing { bytes: u64 },
    /// Experts on the CPU were asked for a model without experts: llama.cpp's
    /// `--n-cpu-moe` only moves expert tensors, so it changes nothing.
    CpuMoeDense,
    /// torchtune on several GPUs shards with FSDP whatever stage was asked for.
    TorchtuneFsdp,
    /// `Trainer`'s evaluation: its default batch's loss over the logits, and what
    /// `compute_metrics` keeps per sequence; with a capacity, what fits beside the
    /// weights and optimizer states that stay through it.
    TrainerEval {
        batch: u64,
        peak: u64,
        fits: Option<u64>,
        kept: u64,
        kept_fit: Option<u64>,
    },
    /// ZeRO-Offload moved these optimizer bytes per GPU to CPU RAM.
    CpuOffload {
        bytes: u64,
        /// The gradient partitions are among those bytes (DeepSpeed, or FSDP with its
        /// parameters in RAM).
        gradients: bool,
        /// So are the parameter shards (`offload_params`).
        params: bool,
        /// ZeRO-1: the GPU still holds whole 16-bit gradients until backward ends.
        whole_on_gpu: bool,
    },
    /// Only a parameter count is known.
    ParamsOnly,
    /// Inference uses a file's exact weight bytes.
    ExactWeights {
        bytes: u64,
        params: Option<u64>,
        tensors: Option<u64>,
        source: String,
    },
    /// A file's exact bytes were given, but training counts weights by format.
    ExactWeightsIgnored { source: String },
    /// `auto` met a checkpoint stored in `stored` (MXFP4, FP8, NVFP4…): the weights
    /// were counted in `used`, the format the runtime holds them in, for `why`.
    CheckpointFormat {
        stored: String,
        used: String,
        why: FormatChoice,
    },
    /// The family is not one the importer models ([`super::Evaluation::approximate`]).
    Approximate { family: String },
    /// The chosen GPU does not run the runtime ([`Settings::runs_on`]).
    RuntimeOffDevice { runtime: &'static str, gpu: String },
    /// QLoRA was asked with 16/32-bit weights: the base is loaded in NF4 anyway.
    QloraBase { asked: String },
    /// transformers' `generate` before 2024 held the previous step's KV cache beside the
    /// new one (`estimate::kv::previous_step_cache`).
    OldGenerateCache { bytes: u64 },
    /// QLoRA with transformers: PEFT's `prepare_model_for_kbit_training` cast the
    /// non-4-bit parameters (`bytes` more) and the residual stream to fp32; autocast
    /// recasts the frozen fp32 head to 16 bits on every step (`head` bytes under the
    /// loss, `estimate::torch::activations::head_cast`).
    KbitFp32 { bytes: u64, head: u64 },
    /// vLLM's hybrid manager pads a model's windowed and global layers into groups of one
    /// size: each token costs `padded` layers' worth instead of `layers`
    /// (`serving::hybrid_padding`).
    HybridKv { padded: u64, layers: u64 },
}
impl Note {
    /// The note in Spanish for `surface`, worded by the module of its subject.
    pub fn text(&self, surface: Surface) -> String {
        let cli = surface == Surface::Cli;
        match self {
            Note::Band { .. }
            | Note::Capacity { .. }
            | Note::CudaContext { .. }
            | Note::TotalParams { .. }
            | Note::ParamsOnly
            | Note::ExactWeights { .. }
            | Note::ExactWeightsIgnored { .. }
            | Note::BeyondTrainedContext { .. }
            | Note::QloraBase { .. }
            | Note::CheckpointFormat { .. }
            | Note::RuntimeOffDevice { .. }
            | Note::Approximate { .. }
            | Note::VisionTower { .. } => model::text(self, cli),
            Note::FittedLayers { .. } | Note::OpenedContext { .. } | Note::OllamaContext { .. } => {
                auto::text(self, cli)
            }
            Note::Ggml { .. }
            | Note::CpuExperts { .. }
            | Note::LayerSplit { .. }
            | Note::OllamaOneGpu { .. }
            | Note::CpuMoeDense => ggml::text(self, cli),
            Note::ServingProfile { .. }
            | Note::CudaGraphs { .. }
            | Note::VisionEncoder { .. }
            | Note::HybridKv { .. }
            | Note::TpHeads { .. }
            | Note::OldGenerateCache { .. } => serving::text(self, cli),
            Note::Runtime { .. }
            | Note::FsdpUnsharded { .. }
            | Note::DdpBuckets { .. }
            | Note::DeepspeedBuffers { .. }
            | Note::Communication { .. }
            | Note::PagedOptimizer { .. }
            | Note::Pipeline { .. }
            | Note::OffloadParamsNeedZero3
            | Note::Int8Checkpointing { .. }
            | Note::TorchtuneFsdp
            | Note::TrainerEval { .. }
            | Note::CpuOffload { .. }
            | Note::KbitFp32 { .. } => training::text(self, cli),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::default_context::{Fit, Opened};

    #[test]
    fn web_notes_never_name_flags() {
        let notes = [
            Note::Band {
                runtime: "vLLM",
                training: false,
                serving: true,
                band: Band {
                    p10: -33.4,
                    p90: -0.4,
                    cases: 20,
                    pooled: false,
                },
            },
            Note::Runtime {
                runtime: "Transformers",
                precision: Some(Precision::Amp),
                loss: Loss::Full,
                targets: Some(LoraTargets::QUERY_VALUE),
                offload: true,
            },
            Note::Capacity {
                gpu: "GeForce RTX 4090".into(),
                kind: DeviceKind::Nvidia,
                usable: 25_393_994_138,
                nominal: 24_564 << 20,
                source: "fuente".into(),
                reserve: 1 << 30,
            },
            Note::CudaContext {
                bytes: 500 << 20,
                gpu: "RTX 4090".into(),
                basis: "supuesto",
            },
            Note::TotalParams {
                given: 8,
                derived: 9,
            },
            Note::PagedOptimizer { bytes: 1 << 30 },
            Note::Communication { bytes: 544 << 20 },
            Note::DdpBuckets { bytes: 2 << 30 },
            Note::DeepspeedBuffers {
                sync: crate::estimate::torch::parallel::GradSync {
                    buckets: 32 << 20,
                    bucket: 32 << 20,
                    staging: 0,
                    reused: 1 << 30,
                    reused_params: 525_336_576,
                    reused_beyond_head: false,
                    head_gradient: 1 << 30,
                    layer_gradient: 1 << 29,
                },
                default_bucket: 1_000_000_000,
            },
            Note::DeepspeedBuffers {
                sync: crate::estimate::torch::parallel::GradSync {
                    buckets: 1 << 30,
                    bucket: 32 << 20,
                    staging: 1 << 30,
                    ..crate::estimate::torch::parallel::GradSync::default()
                },
                default_bucket: 1_000_000_000,
            },
            Note::OllamaOneGpu { gpus: 2 },
            Note::Approximate {
                family: "mamba2".into(),
            },
            Note::RuntimeOffDevice {
                runtime: "vLLM",
                gpu: "Apple M4 Max 128GB".into(),
            },
            Note::CheckpointFormat {
                stored: "mxfp4".into(),
                used: "mxfp4".into(),
                why: FormatChoice::Kept { transformers: true },
            },
            Note::LayerSplit {
                runtime: "llama.cpp",
                gpus: 2,
                first: 41,
                last: 39,
                output: true,
                pipeline: Some(200 << 20),
            },
            Note::BeyondTrainedContext {
                asked: 1 << 20,
                trained: 131_072,
                vllm: true,
            },
            Note::TpHeads { heads: 32, tp: 3 },
            Note::FsdpUnsharded {
                root: 1 << 30,
                layer: 1 << 29,
            },
            Note::CpuExperts {
                layers: 20,
                asked: Some(20),
                bytes: 8 << 30,
                per_token: 400 << 20,
                copies: 500 << 20,
                ram_gbs: 80,
            },
            Note::Ggml {
                runtime: "llama.cpp",
                ngl: 20,
                placement: (19, true),
                layers: 32,
                host: 2 << 30,
                cells: 4096,
                swa: Some((1536, 0)),
                flash: false,
                compute: 300 << 20,
                embeddings_on_cpu: 280 << 20,
                ubatch: 512,
            },
            Note::OllamaContext {
                vram: 24 << 30,
                default: 32_768,
                seq: 4096,
            },
            Note::OpenedContext {
                opened: Opened::Vllm { trained: 131_072 },
                new_tokens: 0,
            },
            Note::FittedLayers {
                gpu_layers: Some(35),
                layers: 64,
                cpu_moe: 0,
                llama_cpp: true,
                output_first: true,
            },
            Note::FittedLayers {
                gpu_layers: None,
                layers: 48,
                cpu_moe: 12,
                llama_cpp: false,
                output_first: true,
            },
            Note::FittedLayers {
                gpu_layers: Some(20),
                layers: 48,
                cpu_moe: u32::MAX,
                llama_cpp: true,
                output_first: true,
            },
            Note::OpenedContext {
                opened: Opened::Ollama {
                    vram: 24 << 30,
                    tier: 32_768,
                    trained: Some(8192),
                },
                new_tokens: 512,
            },
            Note::OpenedContext {
                opened: Opened::LlamaCpp {
                    trained: 131_072,
                    fit: None,
                },
                new_tokens: 0,
            },
            Note::OpenedContext {
                opened: Opened::LlamaCpp {
                    trained: 131_072,
                    fit: Some(Fit {
                        tokens: 99_328,
                        layers_next: false,
                    }),
                },
                new_tokens: 0,
            },
            Note::OpenedContext {
                opened: Opened::LlamaCpp {
                    trained: 131_072,
                    fit: Some(Fit {
                        tokens: 4096,
                        layers_next: true,
                    }),
                },
                new_tokens: 0,
            },
            Note::OpenedContext {
                opened: Opened::Unknown,
                new_tokens: 0,
            },
            Note::ServingProfile {
                tokens: 8192,
                sequences: 1024,
                bytes: 1 << 30,
                chosen_tokens: false,
                chosen_sequences: true,
                several_gpus: false,
            },
            Note::CudaGraphs {
                mode: crate::cuda_graphs::CudaGraphs::Profiled,
                captures: crate::cuda_graphs::Captures::of(256, 2048),
                bytes: 860 << 20,
                sparse: true,
            },
            Note::CudaGraphs {
                mode: crate::cuda_graphs::CudaGraphs::AfterKv,
                captures: crate::cuda_graphs::Captures::of(256, 2048),
                bytes: 860 << 20,
                sparse: true,
            },
            Note::CudaGraphs {
                mode: crate::cuda_graphs::CudaGraphs::Off,
                captures: crate::cuda_graphs::Captures::of(256, 2048),
                bytes: 0,
                sparse: false,
            },
            Note::VisionTower {
                bytes: 800 << 20,
                place: TowerPlace::Loaded,
                compute: 0,
            },
            Note::VisionTower {
                bytes: 800 << 20,
                place: TowerPlace::Projector,
                compute: 121 << 20,
            },
            Note::VisionTower {
                bytes: 800 << 20,
                place: TowerPlace::ProjectorLoaded,
                compute: 121 << 20,
            },
            Note::VisionTower {
                bytes: 800 << 20,
                place: TowerPlace::Frozen,
                compute: 0,
            },
            Note::VisionTower {
                bytes: 800 << 20,
                place: TowerPlace::Trained,
                compute: 0,
            },
            Note::VisionEncoder {
                images: 32,
                alive: 200 << 20,
            },
            Note::Pipeline { pp: 2 },
            Note::OffloadParamsNeedZero3,
            Note::CpuMoeDense,
            Note::Int8Checkpointing { bytes: 6 << 30 },
            Note::TorchtuneFsdp,
            Note::TrainerEval {
                batch: 8,
                peak: 33 << 30,
                fits: Some(3),
                kept: 1 << 30,
                kept_fit: Some(12),
            },
            Note::TrainerEval {
                batch: 8,
                peak: 1 << 30,
                fits: None,
                kept: 1 << 28,
                kept_fit: None,
            },
            Note::CpuOffload {
                bytes: 1 << 30,
                gradients: false,
                params: false,
                whole_on_gpu: true,
            },
            Note::CpuOffload {
                bytes: 1 << 30,
                gradients: true,
                params: false,
                whole_on_gpu: false,
            },
            Note::CpuOffload {
                bytes: 1 << 30,
                gradients: true,
                params: false,
                whole_on_gpu: true,
            },
            Note::CpuOffload {
                bytes: 1 << 30,
                gradients: true,
                params: true,
                whole_on_gpu: false,
            },
            Note::ParamsOnly,
            Note::ExactWeights {
                bytes: 1 << 30,
                params: Some(1),
                tensors: None,
                source: "m.gguf".into(),
            },
            Note::ExactWeightsIgnored {
                source: "m.gguf".into(),
            },
            Note::QloraBase {
                asked: "bf16".into(),
            },
            Note::OldGenerateCache { bytes: 1 << 30 },
            Note::KbitFp32 {
                bytes: 1 << 30,
                head: 1 << 29,
            },
            Note::HybridKv {
                padded: 70,
                layers: 62,
            },
        ];
        for n in &notes {
            let web = n.text(Surface::Web);
            assert!(!web.contains("--"), "{web}");
            assert!(web.ends_with('.'), "{web}");
            assert!(!n.text(Surface::Cli).is_empty());
        }
        assert!(notes[3].text(Surface::Cli).contains("--cuda-context"));
        assert_eq!(
            notes[0].text(Surface::Web),
            "Margen de error: 20 casos publicados de vLLM en inferencia; entre el P10 y el P90, en tokens de caché KV, el cálculo se desvió de −33,4\u{a0}% a −0,4\u{a0}% (negativo: prometía más de lo que dio la ejecución). «Cabe con margen» exige que quepa también ese extremo."
        );
        assert_eq!(
            notes[2].text(Surface::Web),
            "Capacidad: de los 23,99 GiB que nvidia-smi muestra en la GeForce RTX 4090, PyTorch recibe 23,65 GiB (fuente). Se restan 1,00 GiB que ya ocupan la pantalla u otros procesos."
        );
    }
}
