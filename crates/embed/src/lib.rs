//! `embed` is the estimator that other sites embed: one script and one element,
//! `<vram-estimador modelo="llama-3.1-8b" gpu="rtx-4090">`, drawn in the element's
//! Shadow DOM so the host page's CSS cannot break it and its own cannot leak. It writes
//! plain markup (`render.rs`) instead of using Leptos like the site: a third-party page
//! loads it, and it must stay small. It is its own bundle (the site's `hydrate-tools` carries the whole estimator
//! page; a blog post needs a card), built in its own cargo invocation.
//!
//! `spec.rs` and `compute.rs` are pure and also compiled natively: the attribute table
//! that the widget reads, that sitegen turns into the documentation page and the
//! element's `observedAttributes`; and the mapping onto `vram::estimate` that matches
//! `vramlab estimate` for the same inputs, on a catalog model or a custom one (a Hub
//! import or a shared architecture). `render.rs`, pure too, writes the markup;
//! `widget.rs` (wasm32) is the `Widget` handle the custom element's script drives, which
//! keeps that markup in step with the widget's state; it loads `import-web` (through
//! `lazy-web`) only when a widget shows a Hub model.

pub mod compute;
pub mod render;
pub mod spec;
#[cfg(all(target_arch = "wasm32", feature = "widget"))]
mod widget;

/// The widget's stylesheet, adopted by each shadow root (a constructed sheet, which a
/// host page's Content-Security-Policy does not block the way it blocks `<style>`).
pub const CSS: &str = include_str!("widget.css");
