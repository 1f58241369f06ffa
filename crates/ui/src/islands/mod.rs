//! The interactive islands. Each is rendered at build time with its props serialised
//! into `data-props`, and hydrated in the browser by the exported function Leptos
//! generates for it.
//!
//! Islands behind the `tools` feature are heavy (the estimator links the whole engine
//! and catalogs); they ship in the `hydrate-tools` bundle, which pages load only when
//! they contain one. The diagnostics islands (allocator lab, OOM explainer, snapshot viewer) are behind
//! `diag` and ship in `hydrate-diag`; the attention demo is behind `attention` and ships
//! in `hydrate-attention`. The home page's OOM explainer and quick estimator, both
//! answered by the diagnostics worker, are behind `home` and ship in `hydrate-home`.
//! The WebGPU check and the weights calculator are in the light `hydrate` bundle
//! (features `gpu-check` and `weights`); of the heavy bundles only `hydrate-tools`
//! carries one of them (the weights calculator, which shares a page with the
//! estimator), so the others do not pay for islands their pages never show.

#[cfg(feature = "diag")]
mod allocator_lab;
#[cfg(feature = "attention")]
mod attention_demo;
#[cfg(any(feature = "diag", feature = "home"))]
pub mod background;
#[cfg(feature = "tools")]
mod estimator;
#[cfg(all(
    target_arch = "wasm32",
    any(feature = "tools", feature = "diag", feature = "home")
))]
mod file_text;
#[cfg(feature = "gpu-check")]
mod gpu_check;
#[cfg(all(
    target_arch = "wasm32",
    any(feature = "gpu-check", feature = "attention")
))]
mod lazy_module;
#[cfg(any(feature = "diag", feature = "home"))]
mod oom_explainer;
#[cfg(feature = "home")]
mod quick_estimator;
#[cfg(feature = "diag")]
mod snapshot_viewer;
#[cfg(feature = "weights")]
mod weights;

#[cfg(feature = "diag")]
pub use allocator_lab::AllocatorLab;
#[cfg(feature = "attention")]
pub use attention_demo::AttentionDemo;
#[cfg(feature = "tools")]
pub use estimator::Estimator;
#[cfg(feature = "gpu-check")]
pub use gpu_check::GpuCheck;
#[cfg(any(feature = "diag", feature = "home"))]
pub use oom_explainer::OomExplainer;
#[cfg(feature = "home")]
pub use quick_estimator::QuickEstimator;
#[cfg(feature = "diag")]
pub use snapshot_viewer::SnapshotViewer;
#[cfg(feature = "weights")]
pub use weights::WeightsCalculator;
