//! PyTorch's own mechanisms: what autograd saves and the loss holds
//! ([`activations`]), data parallelism, ZeRO and FSDP ([`parallel`]), bitsandbytes'
//! working copies ([`bnb`]), PEFT's k-bit preparation ([`peft`]) and `Trainer`'s
//! evaluation ([`eval`]). Every term here is memory the caching allocator hands out.

pub mod activations;
pub mod bnb;
pub mod eval;
pub mod parallel;
pub mod peft;
