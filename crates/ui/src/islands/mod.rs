//! The interactive islands. Each is rendered at build time with its props serialised
//! into `data-props`, and hydrated in the browser by the exported function Leptos
//! generates for it.
//!
//! Islands behind the `tools` feature are heavy (the estimator links the whole engine
//! and catalogs); they ship in the `hydrate-tools` bundle, which pages load only when
//! they contain one. Everything else is in the light `hydrate` bundle.

mod allocator_lab;
#[cfg(feature = "tools")]
mod estimator;
mod gpu_check;
mod weights;

pub use allocator_lab::AllocatorLab;
#[cfg(feature = "tools")]
pub use estimator::Estimator;
pub use gpu_check::GpuCheck;
pub use weights::WeightsCalculator;
