//! What a message or table says, decoded into numbers: the JSON contract of
//! `vramlab explain` (`docs/cli-json.md`).
//!
//! Every field is always serialised; what the text did not say is `null`, never a guess.
//! Byte counts are `u64` bytes. A field is only derived (never estimated) from others:
//! `reserved_total_bytes = allocated + reserved_unallocated` for PyTorch 2.1+ messages and
//! `reserved_unallocated_bytes = reserved_total − allocated` for 1.4–2.0 ones.

pub mod summary_rows;
pub mod summary_table;

use serde::{Deserialize, Serialize};

use summary_table::SummaryTable;

/// Which family a message belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// PyTorch's CUDA caching allocator ("CUDA out of memory. Tried to allocate …").
    PytorchOom,
    /// CUDA itself failed ("CUDA error: out of memory"), outside the allocator's books.
    DriverOom,
    /// A `torch.cuda.memory_summary()` table.
    MemorySummary,
    /// Apple's Metal backend ("MPS backend out of memory").
    MpsOom,
    /// ROCm builds of PyTorch ("HIP out of memory").
    HipOom,
    /// Intel GPUs ("XPU out of memory").
    XpuOom,
    /// Huawei Ascend NPUs through `torch_npu`, which keeps PyTorch's allocator and its
    /// pre-2.1 wording ("NPU out of memory. Tried to allocate … (NPU 3; …)").
    NpuOom,
    /// cuBLAS could not allocate its handle or workspace.
    CublasOom,
    /// cuDNN could not allocate a workspace.
    CudnnOom,
    /// vLLM cannot fit one request of `max_model_len` tokens in its KV cache.
    VllmKvCache,
    /// vLLM's start-up memory report ("Memory profiling takes …", "Available KV cache
    /// memory: …"): not an error, the numbers behind one.
    VllmProfile,
    /// vLLM refused to start: less memory free than `gpu_memory_utilization` asks.
    VllmStartup,
    /// llama.cpp's load log ("CUDA0 model buffer size = …", "KV buffer size", "compute
    /// buffer size"): not an error, where the memory went.
    GgmlReport,
    /// llama.cpp's ggml backends (also inside Ollama, LM Studio, llama-cpp-python) could
    /// not allocate a device buffer.
    GgmlOom,
    /// Ollama's scheduler line `msg="offload to cuda" … memory.required.full=…`: its own
    /// estimate of the model and how many layers it put on the GPU. Not an error.
    OllamaOffload,
    /// The host ran out of RAM: PyTorch's `DefaultCPUAllocator`, Ollama's system-memory
    /// check, a ggml host buffer.
    HostOom,
    /// XLA's allocator (JAX, TensorFlow with XLA): "RESOURCE_EXHAUSTED: Out of memory
    /// while trying to allocate N bytes."
    XlaOom,
    /// TensorFlow's BFC allocator: "OOM when allocating tensor with shape[…] and type
    /// float on /job:…/device:GPU:0 by allocator GPU_0_bfc".
    TfOom,
    /// Nothing recognisable.
    Unknown,
}

impl Kind {
    /// A short Spanish title for the family, as the page and the CLI head it.
    pub fn title(self) -> &'static str {
        match self {
            Kind::PytorchOom => "Error de memoria del asignador de PyTorch (CUDA)",
            Kind::DriverOom => "CUDA sin memoria (fuera del asignador de PyTorch)",
            Kind::MemorySummary => "Tabla de torch.cuda.memory_summary()",
            Kind::MpsOom => "Error de memoria de MPS (Apple)",
            Kind::HipOom => "Error de memoria de HIP (ROCm, AMD)",
            Kind::XpuOom => "Error de memoria de XPU (Intel)",
            Kind::NpuOom => "Error de memoria de NPU (Ascend, torch_npu)",
            Kind::CublasOom => "cuBLAS no pudo reservar memoria",
            Kind::CudnnOom => "cuDNN no pudo reservar su espacio de trabajo",
            Kind::VllmKvCache => "vLLM: la caché KV no alcanza para una petición",
            Kind::VllmProfile => "vLLM: reparto de la memoria al arrancar",
            Kind::VllmStartup => "vLLM: no hay libre lo que pide gpu_memory_utilization",
            Kind::GgmlReport => "llama.cpp / Ollama: reparto de la memoria al cargar",
            Kind::GgmlOom => "llama.cpp / Ollama: sin memoria en la GPU para un búfer",
            Kind::OllamaOffload => "Ollama: su cálculo de memoria y las capas que puso en la GPU",
            Kind::HostOom => "Se agotó la RAM del equipo, no la de la GPU",
            Kind::XlaOom => "JAX / XLA sin memoria en la GPU",
            Kind::TfOom => "TensorFlow sin memoria en la GPU (asignador BFC)",
            Kind::Unknown => "No reconozco este texto",
        }
    }
}

/// The PyTorch release line a CUDA/HIP allocator message's wording belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Era {
    /// 1.0–1.3 (2018–2019): "… free; V cached)".
    #[serde(rename = "2018")]
    V2018,
    /// 1.4–2.0: "… reserved in total by PyTorch)".
    #[serde(rename = "1.4-2.0")]
    V14To20,
    /// 2.1 and later: "GPU n has a total capacity of … of which … is free."
    #[serde(rename = "2.1+")]
    V21Plus,
}

/// Which PyTorch allocator wrote the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Allocator {
    /// The default caching allocator (`PYTORCH_CUDA_ALLOC_CONF=backend:native`).
    Native,
    /// `backend:cudaMallocAsync`: the driver's stream-ordered pool ("Allocation on device
    /// 0 would exceed allowed memory. (out of memory)").
    CudaMallocAsync,
}

/// One `Process P has M memory in use.` line of a 2.1+ message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessUse {
    pub pid: u64,
    pub bytes: u64,
    /// No "this process has" line was printed and this process holds at least what
    /// PyTorch reserved: inside a container NVML reports the host's pid, so this is
    /// most probably the process that failed, not another one.
    pub likely_self: bool,
}

/// vLLM's start-up check that one request of `max_model_len` tokens fits in the KV cache.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KvCacheShortfall {
    /// "max seq len (N)": the model's `max_model_len`.
    pub max_seq_len: Option<u64>,
    /// Older wording: tokens the KV cache can hold.
    pub max_kv_tokens: Option<u64>,
    /// Newer wording: bytes one full-length request needs.
    pub needed_bytes: Option<u64>,
    /// Newer wording: bytes left for the KV cache.
    pub available_bytes: Option<u64>,
    /// Newer wording: "the estimated maximum model length is N".
    pub estimated_max_len: Option<u64>,
}

/// vLLM's start-up memory report, as its worker logs it (`gpu_worker.py`,
/// `kv_cache_utils.py`). Sizes are vLLM's `GiB` (2^30 bytes, two decimals).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VllmMemory {
    /// "total_gpu_memory (79.11GiB)".
    pub total_gpu_bytes: Option<u64>,
    /// "gpu_memory_utilization (0.90)", in whole percent (truncated), as the JSON
    /// contract has always carried it.
    pub utilization_percent: Option<u32>,
    /// The same in basis points (9000; 0.9764 is 9764).
    pub utilization_bp: Option<u32>,
    /// "= 71.20GiB": what this instance may use.
    pub budget_bytes: Option<u64>,
    /// "model weights take" / "weights memory:".
    pub weights_bytes: Option<u64>,
    /// "non_torch_memory takes" / "non-torch forward increase memory:".
    pub non_torch_bytes: Option<u64>,
    /// "PyTorch activation peak memory takes" / "torch peak memory increase:".
    pub activation_peak_bytes: Option<u64>,
    /// "Total non KV cache memory:" (vLLM ≥ 0.9).
    pub non_kv_bytes: Option<u64>,
    /// "the rest of the memory reserved for KV Cache is" / "Available KV cache memory:".
    pub kv_cache_bytes: Option<u64>,
    /// "GPU KV cache size: N tokens".
    pub kv_cache_tokens: Option<u64>,
    /// "Maximum concurrency for T tokens per request": T.
    pub concurrency_tokens: Option<u64>,
    /// "… : 13.64x", in hundredths (1364).
    pub concurrency_x100: Option<u64>,
    /// The model the log names ("Starting to load model X", "model='X'", "vllm serve X").
    pub model: Option<String>,
    /// "Model loading took X GiB" / "Loading model weights took X GB": the weights as
    /// the loader measured them.
    pub model_loading_bytes: Option<u64>,
    /// 0.6's one-line report: "peak_torch_memory=", "initial_memory_usage=",
    /// "memory_usage_post_profile=".
    pub peak_torch_bytes: Option<u64>,
    pub initial_usage_bytes: Option<u64>,
    pub post_profile_usage_bytes: Option<u64>,
    /// Before 0.7: "# GPU blocks: 1952, # CPU blocks: 2048" (blocks of the paged cache;
    /// their size in tokens is the engine's `block_size`, not printed).
    pub gpu_blocks: Option<u64>,
    pub cpu_blocks: Option<u64>,
    /// Whether the KV cache was sized after taking the CUDA graphs' estimate out:
    /// "CUDA graph memory profiling is enabled (default since v0.21.0)" says yes, 0.19's
    /// "In v0.19, CUDA graph memory profiling will be enabled by default" says no.
    pub cuda_graphs_reserved: Option<bool>,
}

impl VllmMemory {
    /// `gpu_memory_utilization` as a Spanish percentage: "90", "97,64".
    pub fn utilization_text(&self) -> Option<String> {
        let bp = self.utilization_bp?;
        let (whole, rest) = (bp / 100, bp % 100);
        Some(match rest {
            0 => whole.to_string(),
            r if r % 10 == 0 => format!("{whole},{}", r / 10),
            r => format!("{whole},{r:02}"),
        })
    }

    /// Fills what this report lacks from `other` (the report is spread over lines).
    pub(crate) fn fill_from(&mut self, other: &VllmMemory) {
        macro_rules! fill {
            ($($f:ident),*) => { $( if self.$f.is_none() { self.$f = other.$f; } )* };
        }
        fill!(
            total_gpu_bytes,
            utilization_percent,
            utilization_bp,
            budget_bytes,
            weights_bytes,
            non_torch_bytes,
            activation_peak_bytes,
            non_kv_bytes,
            kv_cache_bytes,
            kv_cache_tokens,
            concurrency_tokens,
            concurrency_x100,
            model_loading_bytes,
            peak_torch_bytes,
            initial_usage_bytes,
            post_profile_usage_bytes,
            gpu_blocks,
            cpu_blocks,
            cuda_graphs_reserved
        );
        if self.model.is_none() {
            self.model.clone_from(&other.model);
        }
    }

    fn count(&self) -> usize {
        [
            self.total_gpu_bytes,
            self.utilization_bp.map(u64::from),
            self.budget_bytes,
            self.weights_bytes,
            self.non_torch_bytes,
            self.activation_peak_bytes,
            self.non_kv_bytes,
            self.kv_cache_bytes,
            self.kv_cache_tokens,
            self.concurrency_tokens,
            self.concurrency_x100,
            self.model_loading_bytes,
            self.peak_torch_bytes,
            self.initial_usage_bytes,
            self.post_profile_usage_bytes,
            self.gpu_blocks,
            self.cpu_blocks,
        ]
        .iter()
        .flatten()
        .count()
    }
}

/// One buffer of a llama.cpp load log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GgmlBuffer {
    /// The buffer type as printed: "CUDA0", "CPU_Mapped", "CUDA_Host".
    pub device: String,
    /// "weights", "kv-cache", "compute" or "output".
    pub purpose: String,
    pub bytes: u64,
}

/// llama.cpp's load log: the buffers it allocated and the settings that sized them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GgmlMemory {
    pub buffers: Vec<GgmlBuffer>,
    /// "n_ctx = 8192".
    pub n_ctx: Option<u64>,
    /// "offloaded 33/33 layers to GPU".
    pub layers_on_gpu: Option<u64>,
    pub layers_total: Option<u64>,
    /// "offloading output layer to GPU" was printed (`Some(true)`), or only
    /// "offloading N repeating layers to GPU" (`Some(false)`): where the output layer
    /// went. Builds since December 2025 offload it first and always print it.
    #[serde(default)]
    pub output_on_gpu: Option<bool>,
    /// "file type = Q4_K - Medium" / "model ftype = …".
    pub file_type: Option<String>,
    /// "general.name str = …".
    pub model: Option<String>,
    /// "n_ubatch = 512": the micro-batch the compute buffer is sized for.
    pub n_ubatch: Option<u64>,
    /// "n_seq_max = 4": the slots sharing the context (llama-server's `-np`).
    pub n_seq_max: Option<u64>,
    /// "kv_unified = true": the slots share one KV pool (llama-server's `-np auto`)
    /// instead of a stream each.
    #[serde(default)]
    pub kv_unified: Option<bool>,
    /// "flash_attn = 1" / "= enabled", or "Flash Attention was auto, set to enabled".
    pub flash_attn: Option<bool>,
    /// The KV cache's type: "K (f16)" → "f16", "K (q8_0)" → "q8_0".
    pub kv_type: Option<String>,
    /// The whole KV cache, every device: "KV self size = X" / "llama_kv_cache: size =
    /// X", with its K and V halves.
    pub kv_total_bytes: Option<u64>,
    pub kv_k_bytes: Option<u64>,
    pub kv_v_bytes: Option<u64>,
    /// ik_llama's MLA cache: "c^KV (f16): X" (the compressed latent) and "kv^T (f16):
    /// Y" (the transposed rope part).
    pub kv_ckv_bytes: Option<u64>,
    pub kv_kvt_bytes: Option<u64>,
    /// "( 65536 cells,  48 layers, …)".
    pub kv_cells: Option<u64>,
    pub kv_layers: Option<u64>,
    /// A sliding-window model's second cache (`llama_kv_cache_iswa` prints one size
    /// line per cache): its cells and layers. Its bytes are in the totals above.
    #[serde(default)]
    pub kv_swa_cells: Option<u64>,
    #[serde(default)]
    pub kv_swa_layers: Option<u64>,
    /// "n_batch = 2048", "n_ctx_per_seq = 16384", "n_ctx_train = 131072".
    pub n_batch: Option<u64>,
    pub n_ctx_per_seq: Option<u64>,
    pub n_ctx_train: Option<u64>,
    /// "pipeline parallelism enabled (n_copies=4)": the compute graph is kept this
    /// many times.
    pub n_copies: Option<u64>,
    /// llama-server: "n_slots = 1, n_ctx_slot = 50176".
    pub n_slots: Option<u64>,
    pub n_ctx_slot: Option<u64>,
    /// "model size = 1.87 GiB (5.01 BPW)": the file's weights, and bits per weight in
    /// hundredths.
    pub model_size_bytes: Option<u64>,
    pub bits_per_weight_x100: Option<u64>,
    /// "ggml ctx size = 0.68 MiB": the tensors' metadata, in RAM.
    pub ctx_size_bytes: Option<u64>,
    /// The first GPU the log names: "using device CUDA0 (NVIDIA GeForce RTX 4090)" since
    /// 2025 (`llama_model_load_from_file_impl`), or ggml-cuda's "Device 0: NVIDIA GeForce
    /// RTX 3060, compute capability 8.6" before; at most 120 characters.
    #[serde(default)]
    pub device: Option<String>,
}

/// Ollama's offload line (`llm/memory.go` / `server.go`, sizes from
/// `format.HumanBytes2`: binary units). Lists have one entry per GPU.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OllamaMemory {
    /// "offload to cuda" / `library=cuda`: "cuda", "rocm", "metal", "cpu".
    pub library: Option<String>,
    /// `layers.requested`: `num_gpu` as asked (-1: Ollama decides).
    pub layers_requested: Option<i64>,
    /// `layers.model`: the model's layers plus the output layer.
    pub layers_model: Option<u64>,
    /// `layers.offload`: how many Ollama put on the GPUs.
    pub layers_offload: Option<u64>,
    /// `layers.split`: per GPU, as printed ("11,11,11,11").
    pub layers_split: Option<String>,
    /// `memory.available`: free memory of each GPU as Ollama saw it.
    pub available_bytes: Vec<u64>,
    /// `memory.gpu_overhead` (`OLLAMA_GPU_OVERHEAD`).
    pub gpu_overhead_bytes: Option<u64>,
    /// `memory.required.full`: everything on the GPU.
    pub required_full_bytes: Option<u64>,
    /// `memory.required.partial`: the layers it offloaded.
    pub required_partial_bytes: Option<u64>,
    /// `memory.required.kv`: the KV cache of `num_ctx` × parallel requests.
    pub required_kv_bytes: Option<u64>,
    /// `memory.required.allocations`: per GPU.
    pub allocations_bytes: Vec<u64>,
    pub weights_total_bytes: Option<u64>,
    pub weights_repeating_bytes: Option<u64>,
    pub weights_nonrepeating_bytes: Option<u64>,
    /// `memory.graph.full` / `.partial`: the compute graph with every layer on the GPU
    /// or with part of them.
    pub graph_full_bytes: Option<u64>,
    pub graph_partial_bytes: Option<u64>,
    /// Vision models: `projector.weights`, `projector.graph`.
    pub projector_weights_bytes: Option<u64>,
    pub projector_graph_bytes: Option<u64>,
    /// The `msg="system memory"` line just before: the host's RAM and swap.
    pub system_total_bytes: Option<u64>,
    pub system_free_bytes: Option<u64>,
    pub system_free_swap_bytes: Option<u64>,
}

impl OllamaMemory {
    /// How many numbers it holds.
    pub fn count(&self) -> usize {
        [
            self.layers_requested.map(i64::unsigned_abs),
            self.layers_model,
            self.layers_offload,
            self.gpu_overhead_bytes,
            self.required_full_bytes,
            self.required_partial_bytes,
            self.required_kv_bytes,
            self.weights_total_bytes,
            self.weights_repeating_bytes,
            self.weights_nonrepeating_bytes,
            self.graph_full_bytes,
            self.graph_partial_bytes,
            self.projector_weights_bytes,
            self.projector_graph_bytes,
            self.system_total_bytes,
            self.system_free_bytes,
            self.system_free_swap_bytes,
        ]
        .iter()
        .flatten()
        .count()
            + self.available_bytes.len()
            + self.allocations_bytes.len()
    }
}

/// What an image or video front end printed about memory around the error (read from
/// the whole paste by `frontends`): ComfyUI's last model load, or AUTOMATIC1111's memory
/// footer. Both print MiB-based figures, labelled "MB" and "GB".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrontendMemory {
    /// `"comfyui"` or `"webui"` (AUTOMATIC1111 and its forks).
    pub frontend: String,
    /// ComfyUI: the model it was loading ("Requested to load WAN21").
    pub model: Option<String>,
    /// ComfyUI: the memory it let the model's weights use ("X MB usable").
    pub usable_bytes: Option<u64>,
    /// ComfyUI: weights placed on the GPU ("X MB loaded").
    pub loaded_bytes: Option<u64>,
    /// ComfyUI: weights left in RAM and streamed in per layer ("X MB offloaded").
    pub offloaded_bytes: Option<u64>,
    /// ComfyUI: the GPU buffer its offloaded layers are streamed through.
    pub buffer_reserved_bytes: Option<u64>,
    /// ComfyUI: LoRA patches applied to offloaded weights ("lowvram patches: N").
    pub lowvram_patches: Option<u64>,
    /// ComfyUI: "loaded completely; … full load: True".
    pub full_load: Option<bool>,
    /// webui "A:": peak of PyTorch's active memory during the generation.
    pub active_peak_bytes: Option<u64>,
    /// webui "R:": peak of PyTorch's reserved memory.
    pub reserved_peak_bytes: Option<u64>,
    /// webui "Sys: X/…": peak memory in use on the GPU by every program.
    pub system_peak_bytes: Option<u64>,
    /// webui "Sys: …/Y": the GPU's total memory.
    pub system_total_bytes: Option<u64>,
}

impl FrontendMemory {
    /// How many numbers it holds.
    pub fn count(&self) -> usize {
        [
            self.usable_bytes,
            self.loaded_bytes,
            self.offloaded_bytes,
            self.buffer_reserved_bytes,
            self.lowvram_patches,
            self.active_peak_bytes,
            self.reserved_peak_bytes,
            self.system_peak_bytes,
            self.system_total_bytes,
        ]
        .iter()
        .flatten()
        .count()
    }
}

/// One message (or table) decoded. See the module documentation for the rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decoded {
    pub kind: Kind,
    /// The exception type printed before the message ("torch.OutOfMemoryError").
    pub exception: Option<String>,
    /// Which allocator wrote it, when the wording says so.
    pub allocator: Option<Allocator>,
    /// "Tried to allocate X": already rounded to the allocator's block size.
    pub requested_bytes: Option<u64>,
    /// The GPU's total memory ("total capacity"; MPS: "max allowed").
    pub total_bytes: Option<u64>,
    /// Free memory on the GPU according to CUDA when the allocation failed.
    pub free_bytes: Option<u64>,
    /// "Including non-PyTorch memory, this process has M memory in use."
    pub process_in_use_bytes: Option<u64>,
    /// Memory in live tensors ("already allocated", "is allocated by PyTorch").
    pub allocated_bytes: Option<u64>,
    /// Memory PyTorch reserved from CUDA but no tensor uses.
    pub reserved_unallocated_bytes: Option<u64>,
    /// torch_npu: "current active" (allocated blocks still in use by a stream).
    pub active_bytes: Option<u64>,
    /// Everything PyTorch reserved from CUDA.
    pub reserved_total_bytes: Option<u64>,
    /// "with C allocated in private pools (e.g., CUDA Graphs)".
    pub private_pools_bytes: Option<u64>,
    /// "A allowed": the limit set with `set_per_process_memory_fraction`.
    pub allowed_bytes: Option<u64>,
    /// cudaMallocAsync printed its "PyTorch limit (set by user-supplied memory
    /// fraction)" as 2^64 bytes ("17179869184.00 GiB"): no fraction was set, and the
    /// only limit is the device's. (A real limit goes to `allowed_bytes`.)
    pub fraction_unset: bool,
    /// MPS: "other allocations" (Metal memory outside PyTorch's tensors).
    pub other_allocations_bytes: Option<u64>,
    /// cuDNN frontend: "no engine config fits the X workspace limit".
    pub workspace_limit_bytes: Option<u64>,
    pub gpu_index: Option<u32>,
    pub pytorch_era: Option<Era>,
    pub other_processes: Vec<ProcessUse>,
    /// MPS: which pool the allocation was for ("private" or "shared").
    pub pool: Option<String>,
    /// vLLM's KV-cache check.
    pub kv_cache: Option<KvCacheShortfall>,
    /// vLLM's start-up memory report (its own message, or merged into a vLLM error of
    /// the same paste).
    pub vllm_memory: Option<VllmMemory>,
    /// llama.cpp's load log (its own message, or merged into a ggml error of the same
    /// paste).
    pub ggml_memory: Option<GgmlMemory>,
    /// Ollama's estimate and offload decision (its own message, or attached to a ggml
    /// error or load log of the same paste).
    pub ollama_memory: Option<OllamaMemory>,
    /// ComfyUI's model load or AUTOMATIC1111's memory footer printed with the error.
    pub frontend_memory: Option<FrontendMemory>,
    /// ggml: the backend buffer type that failed, as printed ("CUDA0", "CUDA_Host",
    /// "Vulkan0", "CPU").
    pub backend: Option<String>,
    /// ggml: what the buffer was for, when the message says: "weights", "kv-cache" or
    /// "compute".
    pub buffer: Option<String>,
    /// memory_summary: "Peak Usage" of allocated memory.
    pub peak_allocated_bytes: Option<u64>,
    /// memory_summary: "Peak Usage" of reserved memory.
    pub peak_reserved_bytes: Option<u64>,
    /// memory_summary: "Non-releasable memory", current.
    pub non_releasable_bytes: Option<u64>,
    /// memory_summary: "cudaMalloc retries".
    pub cuda_malloc_retries: Option<u64>,
    /// memory_summary: "CUDA OOMs".
    pub cuda_ooms: Option<u64>,
    /// memory_summary: every row that was read.
    pub summary: Option<SummaryTable>,
    /// The text ends before the message does (a field its format always prints is
    /// missing), so absent numbers may only be cut off.
    pub truncated: bool,
    /// The paste shows vLLM capturing its CUDA graphs, not finished, when PyTorch ran
    /// out of memory.
    #[serde(default)]
    pub graph_capture: bool,
    /// llama.cpp's `--fit` gave up before the failure because a setting it would have
    /// changed was given ("failed to fit params to free device memory: n_gpu_layers
    /// already set by user to 99, abort"): the flag as a user writes it ("-ngl 99",
    /// "--tensor-split", "-ot / --n-cpu-moe").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit_blocked: Option<String>,
    /// The message as read (cleaned, at most 2000 bytes).
    pub excerpt: String,
}

impl Decoded {
    pub(crate) fn new(kind: Kind) -> Self {
        Decoded {
            kind,
            exception: None,
            allocator: None,
            requested_bytes: None,
            total_bytes: None,
            free_bytes: None,
            process_in_use_bytes: None,
            allocated_bytes: None,
            reserved_unallocated_bytes: None,
            active_bytes: None,
            reserved_total_bytes: None,
            private_pools_bytes: None,
            allowed_bytes: None,
            fraction_unset: false,
            other_allocations_bytes: None,
            workspace_limit_bytes: None,
            gpu_index: None,
            pytorch_era: None,
            other_processes: Vec::new(),
            pool: None,
            kv_cache: None,
            vllm_memory: None,
            ggml_memory: None,
            ollama_memory: None,
            frontend_memory: None,
            backend: None,
            buffer: None,
            peak_allocated_bytes: None,
            peak_reserved_bytes: None,
            non_releasable_bytes: None,
            cuda_malloc_retries: None,
            cuda_ooms: None,
            summary: None,
            truncated: false,
            graph_capture: false,
            fit_blocked: None,
            excerpt: String::new(),
        }
    }

    /// How many numbers were decoded: the richer of two messages explains more.
    pub fn number_count(&self) -> usize {
        let kv = self.kv_cache.as_ref().map_or(0, |k| {
            [
                k.max_seq_len,
                k.max_kv_tokens,
                k.needed_bytes,
                k.available_bytes,
                k.estimated_max_len,
            ]
            .iter()
            .flatten()
            .count()
        });
        [
            self.requested_bytes,
            self.total_bytes,
            self.free_bytes,
            self.process_in_use_bytes,
            self.allocated_bytes,
            self.reserved_unallocated_bytes,
            self.active_bytes,
            self.reserved_total_bytes,
            self.private_pools_bytes,
            self.allowed_bytes,
            self.other_allocations_bytes,
            self.workspace_limit_bytes,
            self.peak_allocated_bytes,
            self.peak_reserved_bytes,
            self.non_releasable_bytes,
            self.cuda_malloc_retries,
            self.cuda_ooms,
        ]
        .iter()
        .flatten()
        .count()
            + kv
            + self.vllm_memory.as_ref().map_or(0, VllmMemory::count)
            + self.ggml_memory.as_ref().map_or(0, |g| g.buffers.len())
            + self.ollama_memory.as_ref().map_or(0, OllamaMemory::count)
            + self
                .frontend_memory
                .as_ref()
                .map_or(0, FrontendMemory::count)
            + self.other_processes.len()
    }

    /// Bytes of processes other than (probably) this one.
    pub fn other_processes_bytes(&self) -> u64 {
        self.other_processes
            .iter()
            .filter(|p| !p.likely_self)
            .fold(0u64, |acc, p| acc.saturating_add(p.bytes))
    }
}
