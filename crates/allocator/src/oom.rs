//! The out-of-memory error and the message PyTorch prints for it.

use serde::Serialize;

use crate::sizes::format_size;

/// Everything `torch.cuda.OutOfMemoryError` reports, as numbers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Oom {
    /// The id whose allocation failed.
    pub id: u64,
    /// Bytes the caller asked for.
    pub requested_bytes: u64,
    /// The request after `round_size`.
    pub rounded_bytes: u64,
    /// The segment size the allocator tried to get (`get_allocation_size`): the
    /// "Tried to allocate" of the message, e.g. 20 MiB for a 2 MiB tensor.
    pub alloc_size_bytes: u64,
    /// "total capacity": the simulated capacity.
    pub capacity_bytes: u64,
    /// "of which … is free": capacity minus reserved, after the cache was emptied.
    pub free_bytes: u64,
    /// "allocated by PyTorch".
    pub allocated_bytes: u64,
    /// Reserved bytes; the message prints `reserved − allocated` as "reserved by
    /// PyTorch but unallocated".
    pub reserved_bytes: u64,
}

impl Oom {
    /// The message of current PyTorch, for GPU 0, without the per-process line that
    /// needs NVML ("Including non-PyTorch memory, this process has …") and the
    /// "allowed" part of `set_per_process_memory_fraction`. Older wordings differ: 2.1
    /// wrote "total capacty" and suggested `max_split_size_mb`; the suggestion became
    /// expandable segments with pytorch/pytorch#113481 (November 2023).
    pub fn message(&self) -> String {
        format!(
            "CUDA out of memory. Tried to allocate {}. GPU 0 has a total capacity of {} of \
             which {} is free. Of the allocated memory {} is allocated by PyTorch, and {} is \
             reserved by PyTorch but unallocated. If reserved but unallocated memory is large \
             try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid \
             fragmentation.  See documentation for Memory Management  \
             (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
            format_size(self.alloc_size_bytes),
            format_size(self.capacity_bytes),
            format_size(self.free_bytes),
            format_size(self.allocated_bytes),
            format_size(self.reserved_bytes.saturating_sub(self.allocated_bytes)),
        )
    }
}

impl std::fmt::Display for Oom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_reads_like_pytorch() {
        let oom = Oom {
            id: 7,
            requested_bytes: 3 << 20,
            rounded_bytes: 3 << 20,
            alloc_size_bytes: 20 << 20,
            capacity_bytes: 15_837_691_904,
            free_bytes: 3 << 20,
            allocated_bytes: 14 << 30,
            reserved_bytes: (14 << 30) + (700 << 20),
        };
        assert_eq!(
            oom.message(),
            "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of \
             14.75 GiB of which 3.00 MiB is free. Of the allocated memory 14.00 GiB is allocated \
             by PyTorch, and 700.00 MiB is reserved by PyTorch but unallocated. If reserved but \
             unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
             to avoid fragmentation.  See documentation for Memory Management  \
             (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
        );
    }
}
