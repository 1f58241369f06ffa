//! `oom` will hold the pure diagnostics of an out-of-memory error once it happened:
//! the OOM message and `torch.cuda.memory_summary()` parsers, the snapshot reader and
//! the caching-allocator simulator.
//!
//! It exists now so the workspace has the shape ARCHITECTURE.md describes; like `vram`
//! it must never do I/O nor depend on web or GPU crates, so it builds for native and for
//! wasm32 alike. It intentionally exports nothing yet.
