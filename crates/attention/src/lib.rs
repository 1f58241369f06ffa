//! `attention` holds the WGSL compute kernels of vramlab, their CPU references and one
//! async runner that drives them through wgpu, natively (Vulkan, Metal, DX12, lavapipe)
//! and in the browser (WebGPU).
//!
//! The rule that shapes this crate: one WGSL source per kernel, `include_str!`-ed, so
//! the browser demo and the native benchmark run the very same text. Host code is
//! target-agnostic `async`; the native side drives it with `pollster::block_on`, the web
//! side with `wasm_bindgen_futures`. Every GPU failure (no adapter, limits, validation,
//! a failed map) is a typed [`GpuError`] with a Spanish message, never a panic.
//!
//! Today the crate carries the smoke kernel that proves the GPU path end to end (a
//! workgroup-memory reduction); the attention kernels build on the same runner.

mod gpu;
pub mod smoke;

pub use gpu::{AdapterSummary, Gpu, GpuError};

/// Every WGSL source of the crate with its file name, so tests can validate them all
/// with naga on machines without a GPU.
pub const SHADERS: &[(&str, &str)] = &[("smoke.wgsl", smoke::SHADER)];

#[cfg(test)]
mod tests {
    /// Parses and validates every kernel with naga: shader errors fail here, on any
    /// machine, before a GPU is ever involved.
    #[test]
    fn every_shader_validates() {
        for (name, source) in super::SHADERS {
            let module = naga::front::wgsl::parse_str(source)
                .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
            naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::empty(),
            )
            .validate(&module)
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        }
    }
}
