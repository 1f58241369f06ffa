//! `embed` is the estimator that other sites embed: one script and one element,
//! `<vram-estimador modelo="llama-3.1-8b" gpu="rtx-4090">`, rendered by Leptos (csr) in
//! the element's Shadow DOM so the host page's CSS cannot break it and its own cannot
//! leak. It is its own bundle (the site's `hydrate-tools` carries the whole estimator
//! page; a blog post needs a card), built in its own cargo invocation.
//!
//! `spec.rs` and `compute.rs` are pure and also compiled natively: the attribute table
//! that the widget reads, that sitegen turns into the documentation page and the
//! element's `observedAttributes`; and the mapping onto `vram::estimate` that matches
//! `vramlab estimate` for the same inputs, on a catalog model or a custom one (a Hub
//! import or a shared architecture). `widget.rs` (wasm32) is the view and the `Widget`
//! handle the custom element's script drives; it loads `import-web` (through
//! `lazy-web`) only when a widget shows a Hub model.

pub mod compute;
pub mod spec;
#[cfg(all(target_arch = "wasm32", feature = "widget"))]
mod widget;

/// The widget's stylesheet, adopted by each shadow root (a constructed sheet, which a
/// host page's Content-Security-Policy does not block the way it blocks `<style>`).
pub const CSS: &str = include_str!("widget.css");
