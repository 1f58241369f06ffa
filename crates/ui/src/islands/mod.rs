//! The interactive islands. Each is rendered at build time with its props serialised
//! into `data-props`, and hydrated in the browser by the exported function Leptos
//! generates for it.

mod estimator;
mod gpu_check;
mod weights;

pub use estimator::Estimator;
pub use gpu_check::GpuCheck;
pub use weights::WeightsCalculator;
