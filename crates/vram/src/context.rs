//! The CUDA context: memory a process holds on the GPU before its first tensor.
//!
//! It is the driver's per-process state, the kernel images of PyTorch and its libraries
//! (cuBLAS, cuDNN) and a local-memory reservation that grows with the number of SMs.
//! It shows in `nvidia-smi` but never in `torch.cuda.memory_allocated()`, which is why
//! calculators that ignore it promise a fit that then fails by a few hundred MiB.
//!
//! The size depends more on the software stack than on the chip: since CUDA 11.7
//! (default with PyTorch 2.x on CUDA 12) modules load lazily and the context is a few
//! hundred MiB; stacks that load every kernel eagerly reach well over 1 GiB. The
//! defaults below are per GPU family, and every one says where it comes from. Users
//! measure their own with `nvidia-smi` while their job runs (right after
//! `torch.ones(1).cuda()` lazy loading has not loaded the kernels yet) and pass it with
//! `--cuda-context`.

use crate::units::ByteSize;

/// A family's default and the reason for it (Spanish, shown to users).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContextDefault {
    /// What a working process holds.
    pub bytes: u64,
    /// What it holds when it starts, before lazily loaded kernels: what a server's
    /// start-up check sees (vLLM's first `mem_get_info` snapshot).
    pub initial: u64,
    pub basis: &'static str,
}

/// Used when the GPU is unknown: a current stack (PyTorch 2.x, CUDA 12, lazy loading).
pub const GENERIC: ContextDefault = ContextDefault {
    bytes: 500 * ByteSize::MIB,
    initial: 500 * ByteSize::MIB,
    basis: "supuesto para PyTorch 2.x con CUDA 12 y carga perezosa de módulos",
};

/// The default CUDA context for a catalog GPU family ("volta", "hopper", ...).
pub fn for_family(family: &str) -> ContextDefault {
    match family {
        // Measured: `torch.ones((1,1)).cuda()` on a V100 16 GB took 1,343 MiB in
        // nvidia-smi (Hugging Face, "model memory anatomy"; validation case hf-1). Pre-
        // Ampere cards mostly run the older stacks that load kernels eagerly.
        "pascal" | "volta" | "turing" => ContextDefault {
            bytes: 1343 * ByteSize::MIB,
            initial: 1343 * ByteSize::MIB,
            basis: "medido en una V100 (1343 MiB en nvidia-smi, documentación de Hugging Face)",
        },
        // Measured on an H200 with PyTorch 2.11 and CUDA 13 (`tools/device/
        // measure_memory.py`, 2026-12-04; `total - free - reserved` from
        // `torch.cuda.mem_get_info`): 621 MiB after `torch.zeros(1)`, 1,327–1,336 MiB
        // after `generate` and 1,384 MiB after two `Trainer` steps. Lazy loading only
        // defers the kernel images: a working process holds the larger figure. At
        // start-up vLLM 0.19 on an H100 80GB logs `cuda_memory=0.51GiB` in its worker's
        // first snapshot (llm-d-planner's logs, see `validation`).
        "hopper" => ContextDefault {
            bytes: 1384 * ByteSize::MIB,
            initial: 522 * ByteSize::MIB,
            basis: "medido en una H200 con PyTorch 2.11 y CUDA 13 tras dos pasos de entrenamiento (tras torch.zeros(1) eran 621 MiB; los módulos se cargan al usarse)",
        },
        // Blackwell has 148 SMs and the per-SM local-memory reservation grows with
        // them: 100 MiB more than the generic figure, until someone measures one.
        "blackwell" => ContextDefault {
            bytes: 600 * ByteSize::MIB,
            initial: 600 * ByteSize::MIB,
            basis: "supuesto: PyTorch 2.x con CUDA 12 y carga perezosa, más reserva por SM (148 SM)",
        },
        "ampere" | "ada" => GENERIC,
        // Metal has no CUDA context: ggml's Metal backend and PyTorch's MPS allocate
        // their buffers within `recommendedMaxWorkingSetSize`, which is the capacity
        // the catalog gives for Apple Silicon, and the process's own code lives in
        // the system's share of the unified memory.
        "apple" => ContextDefault {
            bytes: 0,
            initial: 0,
            basis: "Metal no reserva un contexto como CUDA",
        },
        // ROCm's HIP runtime: no published figure we trust; the generic one.
        _ => GENERIC,
    }
}

/// The cuBLAS workspace PyTorch allocates through its caching allocator on a thread's
/// first matmul on a stream, and keeps (one per handle and stream, and handles are per
/// thread: training holds two, its backward running on the autograd engine's thread,
/// `Workload::blas_workspace`): 32 MiB on compute capability 9.0 (Hopper),
/// else 4096 KiB × 2 + 16 KiB × 8 (`parseChosenWorkspaceSize` in
/// aten/src/ATen/cuda/CublasHandlePool.cpp, PyTorch 2.10, the version vLLM 0.19
/// requires). An unknown GPU (`None`) gets the larger.
pub fn cublas_workspace(family: Option<&str>) -> u64 {
    match family {
        Some("hopper") | None => 32 * ByteSize::MIB,
        Some(_) => 4096 * 1024 * 2 + 16 * 1024 * 8,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::catalog;

    #[test]
    fn every_catalog_gpu_has_a_documented_default() {
        for g in catalog::gpus() {
            let d = for_family(&g.family);
            // Metal has no CUDA context; every CUDA and ROCm device has one.
            let least = if g.family == "apple" {
                0
            } else {
                256 * ByteSize::MIB
            };
            assert!(d.bytes >= least, "{}", g.id);
            assert!(d.initial <= d.bytes, "{}", g.id);
            assert!(!d.basis.is_empty());
        }
        assert_eq!(for_family("volta").bytes, 1343 * ByteSize::MIB);
        assert_eq!(for_family("unknown"), GENERIC);
        assert!(for_family("hopper").bytes > for_family("ampere").bytes);
    }
}
