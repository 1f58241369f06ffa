//! What PyTorch's CUDA caching allocator charges for one tensor, in the bytes that
//! `torch.cuda.memory_allocated()` counts (`allocated_bytes`, which grows by the size
//! of the block handed out, not by the size asked for).
//!
//! The rules, from `c10/cuda/CUDACachingAllocator.cpp` (constants `kMinBlockSize`,
//! `kSmallSize`, `kMinLargeAlloc`, `kRoundLarge`; functions `round_size`,
//! `get_allocation_size` and `should_split`): a request is rounded up to 512 bytes; a
//! new segment for a request of 10 MiB or more is rounded up to 2 MiB; the block is
//! split only when more than 1 MiB would remain, so a tensor that ends 1 MiB or less
//! below a 2 MiB boundary is charged the whole segment. Qwen2.5-72B's `down_proj` on
//! each of two GPUs is 231 MiB and is charged 232; over 80 layers, vLLM's "Model loading
//! took 67.8 GiB" is 80 MiB above the parameters' bytes. Expandable segments (off in
//! vLLM and by default) follow other rules and are not modelled.
//!
//! The constants are the allocator simulator's ([`allocator::sizes`]); a property test
//! below replays each size through that simulator and checks both say the same.

use allocator::sizes::{MIN_BLOCK_SIZE as MIN_BLOCK, MIN_LARGE_ALLOC, ROUND_LARGE, SMALL_SIZE};

/// Bytes `memory_allocated()` grows by when a tensor of `bytes` gets a segment of its
/// own (as each weight does while a model is built on an empty allocator).
pub fn charged(bytes: u64) -> u64 {
    let rounded = bytes.div_ceil(MIN_BLOCK).saturating_mul(MIN_BLOCK);
    if rounded < MIN_LARGE_ALLOC {
        // A small segment, or a 20 MiB buffer that is always split.
        return rounded;
    }
    let segment = rounded.div_ceil(ROUND_LARGE).saturating_mul(ROUND_LARGE);
    if segment - rounded > SMALL_SIZE {
        rounded
    } else {
        segment
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    proptest::proptest! {
        /// The charge of one tensor on an empty allocator is what the allocator
        /// simulator allocates for it, at any size it accepts.
        #[test]
        fn agrees_with_the_allocator_simulator(bytes in 1u64..(64u64 << 30)) {
            let mut sim = allocator::Allocator::new(allocator::Config::new(1 << 40))
                .unwrap_or_else(|e| panic!("{e}"));
            let before = sim.allocated();
            let block = sim.alloc(0, bytes).unwrap_or_else(|e| panic!("{e:?}"));
            let _ = block;
            proptest::prop_assert_eq!(sim.allocated() - before, charged(bytes));
        }
    }

    #[test]
    fn blocks_follow_the_caching_allocator() {
        for (bytes, expected) in [
            (1, 512),
            (512, 512),
            (513, 1024),
            (3 * MIB + 1, 3 * MIB + 512),
            // 231 MiB: the 1 MiB left of a 232 MiB segment is not split off.
            (231 * MIB, 232 * MIB),
            (231 * MIB + 300, 232 * MIB),
            // 129.5 MiB: half a MiB left, charged too.
            (129 * MIB + MIB / 2, 130 * MIB),
            // 1.5 MiB left: split, so only the request (in 512-byte steps) counts.
            (100 * MIB + MIB / 2, 100 * MIB + MIB / 2),
            (64 * MIB, 64 * MIB),
            (u64::MAX - 10, u64::MAX),
        ] {
            assert_eq!(charged(bytes), expected, "{bytes}");
        }
    }
}
