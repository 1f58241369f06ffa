//! A simulator of PyTorch's CUDA caching allocator (`c10/cuda/CUDACachingAllocator.cpp`),
//! faithful enough to reproduce its out-of-memory errors.
//!
//! Most `torch.cuda.OutOfMemoryError`s that puzzle people are not "the model does not
//! fit" but "the memory is there, in the wrong shape": reserved but unallocated bytes
//! in cached segments that cannot be merged or returned. Explaining that needs the
//! allocator's actual rules — 512-byte rounding, the 1 MiB small/large pool boundary,
//! 2 MiB and 20 MiB segments, best fit with splitting thresholds, `max_split_size_mb`,
//! the retry path that empties the cache before giving up, and expandable segments —
//! so this crate re-implements them from the C++ source, rule by rule, each with its
//! own test. Nothing is copied: the names of PyTorch's functions appear in the docs so
//! the two can be read side by side. The rules have been stable since expandable
//! segments arrived (2.1); newer releases add `max_non_split_rounding_mb`, which
//! replaces the fixed 20 MiB slack of oversize blocks (and defaults to it).
//!
//! A check against reality: the test for pytorch/pytorch#123548 replays the issue's
//! reproducer and gets the reserved-memory growth its author measured on a GPU, to the
//! MiB.
//!
//! Layout:
//! - [`sizes`]: rounding, pools, segment sizes, `format_size`.
//! - [`config`]: the device capacity and `PYTORCH_CUDA_ALLOC_CONF` options.
//! - `allocator`, `expandable`, `release`: the [`Allocator`] and its paths.
//! - `snapshot`: [`Stats`], [`SegmentInfo`] (for drawing) and [`Fragmentation`].
//! - [`trace`]: the JSON-lines trace format, parsed without ever panicking.
//! - [`simulate()`]: a whole trace to a [`Report`] with a bounded timeline.
//! - [`scenarios`]: teaching traces and the capacity bisection that measures what
//!   expandable segments save.
//!
//! Scope: one device, one stream (PyTorch never reuses a block across streams, so a
//! single-stream trace loses nothing but cross-stream waste), no CUDA graphs, no
//! `record_stream`. The capacity is the memory the process may reserve: subtract the
//! CUDA context and other processes from the card's memory before passing it.
//!
//! Pure: no I/O, no clocks, no randomness; builds for native and wasm32.

mod allocator;
mod blocks;
pub mod config;
mod expandable;
mod oom;
mod release;
pub mod scenarios;
mod simulate;
pub mod sizes;
mod snapshot;
pub mod trace;

pub use allocator::{AllocError, Allocator, BlockRef, UnknownId};
pub use config::{Config, ConfigError};
pub use oom::Oom;
pub use simulate::{
    Event, FragmentationReport, MAX_OOM_EVENTS, MAX_REPORT_SEGMENTS, MAX_TIMELINE_POINTS, Moment,
    Replay, Report, simulate,
};
pub use sizes::{Pool, format_size};
pub use snapshot::{
    BlockInfo, BlockState, Fragmentation, SegmentFragmentation, SegmentInfo, Stats,
};
pub use trace::{Trace, TraceError, TraceEvent, TraceOp, parse_trace};

#[cfg(test)]
mod tests;
