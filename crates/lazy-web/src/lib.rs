//! `lazy-web` loads a lazily fetched bundle with a dynamic `import()`, once per page and
//! bundle, and calls its exports. Two bundles need it: the site's islands (`gpu-web`
//! for the kernels, `import-web` for the estimator's importer) and the embeddable
//! widget, which imports a Hub model only when its element asks for one. Keeping it
//! here means both read `import-web`'s results the same way.
//!
//! Everything is wasm32-only; natively the crate is empty.

#[cfg(target_arch = "wasm32")]
mod module;
#[cfg(target_arch = "wasm32")]
pub use module::{call, describe, load, number, text};

#[cfg(target_arch = "wasm32")]
pub mod import;
