//! `ui` holds every Leptos view of the site, compiled twice: natively with `ssr` (the
//! static site generator renders pages and islands to HTML at build time) and for
//! wasm32 with `hydrate` (the browser wakes the islands up in place).
//!
//! Components only read signals and call pure functions from `vram` (and later `oom`
//! and `attention`); no formula lives here, so everything the page shows is the same
//! number the CLI prints. The page shell ([`layout`]) exists only on native: the browser
//! never re-renders it, it only hydrates the `<leptos-island>` elements inside.
//!
//! Island props arrive from build-time content (shortcodes), but every value a reader
//! types is validated by `vram` and shown as a Spanish message, never a panic.

pub mod islands;

#[cfg(not(target_arch = "wasm32"))]
pub mod layout;

/// Browser entry point: installs the panic hook (a bug shows in the console instead of
/// a silent "unreachable") and sets up the reactive root that islands hydrate under.
#[cfg(target_arch = "wasm32")]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_islands();
}
