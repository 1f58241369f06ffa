//! How ggml (llama.cpp, Ollama) allocates inference memory, in the manner of
//! llama.cpp's own split: the KV cache's padded cells and the sliding-window cache
//! ([`cells`], `llama-kv-cache`), the compute buffer sized once for a micro-batch
//! ([`compute`], `llama-context`), routed experts moved to RAM by `--n-cpu-moe`
//! ([`experts`]), which layers `-ngl` and `--split-mode layer` put on which GPU
//! ([`layers`], `llama-model`), and the resulting split between GPUs and host RAM
//! ([`offload`]).

pub mod cells;
pub mod compute;
pub mod experts;
pub mod layers;
pub mod offload;

pub use cells::{
    LLAMA_SERVER_AUTO_SLOTS, honours_window, kv_cache, kv_cells, recurrent_state, swa_cells,
    window_cells,
};
pub use compute::{OP_OFFLOAD_MIN_BATCH, Phases, compute_buffer, op_offload, output_bytes, phases};
pub use experts::{CpuExperts, cpu_experts, layer_experts};
pub use layers::{GpuShare, SCHED_COPIES, device_starts, devices, gpu_shares, pipeline, placement};
pub(crate) use offload::{Host, offload};
