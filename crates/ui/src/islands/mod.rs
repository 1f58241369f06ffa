//! The interactive islands. Each is rendered at build time with its props serialised
//! into `data-props`, and hydrated in the browser by the exported function Leptos
//! generates for it.
//!
//! Each island is behind a feature, and each page bundle turns on exactly the features
//! of the islands its pages show: the estimator (`tools`, in `hydrate-tools`; its
//! answers come from the lazily loaded `estimate-web` bundle); the debugging chapter's explainer and snapshot viewer
//! (`diag`, in `hydrate-diag`); the reserved-memory chapter's allocator lab (`lab`, in
//! `hydrate-lab`, which that page loads when the lab nears the screen, after the
//! explainer's bundle); the attention demo (`attention`); the home page's explainer
//! and quick estimator (`home`), both answered by the diagnostics worker; the WebGPU
//! check (`gpu-check`) and the weights calculator (`weights`), both in `hydrate`. No
//! bundle pays for islands its pages never show.

#[cfg(feature = "lab")]
mod allocator_lab;
#[cfg(feature = "attention")]
mod attention_demo;
#[cfg(feature = "background")]
pub mod background;
#[cfg(all(target_arch = "wasm32", any(feature = "tools", feature = "home")))]
mod estimate_answers;
#[cfg(feature = "tools")]
mod estimator;
#[cfg(all(target_arch = "wasm32", any(feature = "tools", feature = "background")))]
mod file_text;
#[cfg(feature = "gpu-check")]
mod gpu_check;
#[cfg(all(
    target_arch = "wasm32",
    any(feature = "gpu-check", feature = "attention")
))]
mod lazy_module;
#[cfg(feature = "explainer")]
mod oom_explainer;
#[cfg(feature = "home")]
mod quick_estimator;
#[cfg(all(target_arch = "wasm32", any(feature = "tools", feature = "home")))]
mod reader_gpu;
#[cfg(feature = "diag")]
mod snapshot_viewer;
#[cfg(feature = "weights")]
mod weights;

#[cfg(feature = "lab")]
pub use allocator_lab::AllocatorLab;
#[cfg(feature = "attention")]
pub use attention_demo::AttentionDemo;
#[cfg(feature = "tools")]
pub use estimator::Estimator;
#[cfg(feature = "gpu-check")]
pub use gpu_check::GpuCheck;
#[cfg(feature = "explainer")]
pub use oom_explainer::OomExplainer;
#[cfg(feature = "home")]
pub use quick_estimator::QuickEstimator;
#[cfg(feature = "diag")]
pub use snapshot_viewer::SnapshotViewer;
#[cfg(feature = "weights")]
pub use weights::WeightsCalculator;
