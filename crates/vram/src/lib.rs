//! `vram` answers one question before anything is launched: how many bytes of GPU
//! memory does this workload need?
//!
//! The crate is pure logic on purpose. It never does I/O and never depends on a web or
//! GPU crate, so the very same code runs in the `vramlab` CLI, in the static site
//! generator (numbers in the guide are computed at build time) and in the browser islands
//! compiled to WebAssembly. Everything is counted in integer bytes; conversion to GiB
//! or GB happens only when a number is shown, and the unit is always written out.
//!
//! Parsing of user input never panics: functions return a value or a typed error whose
//! `Display` is a Spanish sentence ready to show next to the field.

pub mod adapter;
pub mod arch;
pub mod band;
pub mod catalog;
pub mod context;
pub mod cuda_graphs;
pub mod default_context;
pub mod dtype;
pub mod estimate;
pub mod evaluate;
pub mod gguf;
pub mod gguf_arch;
#[cfg(any(test, feature = "fixtures"))]
pub mod gguf_writer;
pub mod hf_config;
pub mod hub;
pub mod import;
pub mod launch;
pub mod mmproj;
pub mod model_search;
pub mod palette;
pub mod plan;
pub mod quant;
pub mod reader_gpu;
pub mod reconcile;
pub mod runtime;
pub mod safetensors;
pub mod serving;
pub mod settings;
pub mod share;
pub mod shortcut;
pub mod solve;
pub mod speed;
pub mod torch_alloc;
pub mod units;
pub mod validation;
pub mod workload;

pub use arch::{Architecture, ParamCount};
pub use dtype::Dtype;
pub use estimate::{Breakdown, Estimate, EstimateError, ModelInput, estimate};
pub use evaluate::{Evaluation, Margin, Model, Note, Verdict, evaluate, with_margin};
pub use quant::WeightFormat;
pub use settings::{Field, Settings, Surface, Task};
pub use units::{ByteSize, ParseError, counted, duration_text, group_digits, parse_count};
pub use workload::Workload;
