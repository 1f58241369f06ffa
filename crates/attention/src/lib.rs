//! `attention` holds the WGSL compute kernels of vramlab, their CPU references and one
//! async runner that drives them through wgpu, natively (Vulkan, Metal, DX12, lavapipe)
//! and in the browser (WebGPU).
//!
//! The rule that shapes this crate: one WGSL source per kernel, `include_str!`-ed, so
//! the browser demo and the native benchmark run the very same text (a generated header
//! only fixes the storage type, the head dimension and the tile sizes). Host code is
//! target-agnostic `async`; the native side drives it with `pollster::block_on`, the web
//! side with `wasm_bindgen_futures`. Every GPU failure (no adapter, limits, validation,
//! a failed map, a lost device) is a typed error with a Spanish message, never a panic.
//!
//! - [`shape`]: the problem, FLOPs, every buffer's bytes and the limit checks (pure).
//! - [`plan`]: tile sizes from the adapter's limits and the WGSL text of each kernel;
//!   `codegen` writes the tiled kernel's register block out for the chosen tiles.
//! - [`data`], [`reference`]: the deterministic inputs and the CPU versions (f64 reference,
//!   f32 naive and tiled for the page's fallback).
//! - [`run`]: one kernel on one GPU, timed and checked.
//! - [`smoke`]: the first kernel of the project, a reduction that proves the GPU path.

mod codegen;
pub mod data;
mod gpu;
pub mod plan;
pub mod reference;
pub mod run;
pub mod shape;
pub mod smoke;
pub mod source;

pub use gpu::{AdapterSummary, ConnectOptions, Gpu, GpuError};

pub(crate) use vram::units::clip;

/// "256,00 MiB": binary units with a decimal comma, as everywhere on the site.
pub fn format_bytes(bytes: u64) -> String {
    vram::units::ByteSize(bytes).binary()
}

/// Every WGSL source of the crate with its file name, so tests can validate them all
/// with naga on machines without a GPU.
pub const SHADERS: &[(&str, &str)] = &[("smoke.wgsl", smoke::SHADER)];

#[cfg(test)]
mod tests {
    use crate::plan::{Caps, TilePlan};
    use crate::shape::{Dtype, Kernel};
    use crate::source;

    fn validate(name: &str, source: &str) {
        let module = naga::front::wgsl::parse_str(source)
            .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::SHADER_FLOAT16,
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    }

    /// Parses and validates every kernel with naga: shader errors fail here, on any
    /// machine, before a GPU is ever involved. The attention kernels are checked in
    /// every storage type, for every head dimension, with the plan each kind of adapter
    /// gets and with every other plan that fits 64 KiB.
    #[test]
    fn every_shader_validates() {
        for (name, source) in super::SHADERS {
            validate(name, source);
        }
        let roomy = Caps {
            workgroup_storage: 65_536,
            invocations: 1024,
            size_x: 1024,
        };
        for dtype in [Dtype::F32, Dtype::F16] {
            for d in (16..=256).step_by(16) {
                validate("init.wgsl", &source::init_source(dtype, d));
                let chosen = TilePlan::choose(d, &Caps::WEBGPU_DEFAULT)
                    .or_else(|| TilePlan::choose(d, &roomy))
                    .unwrap();
                validate(
                    "naive.wgsl",
                    &source::kernel_source(Kernel::Naive, dtype, &chosen),
                );
                let mut plans: Vec<TilePlan> =
                    TilePlan::candidates(d).filter(|p| p.fits(&roomy)).collect();
                plans.push(chosen);
                // Every fitting plan for the common head dims, the chosen one elsewhere.
                if ![64, 128].contains(&d) {
                    plans = vec![chosen];
                }
                for p in plans {
                    let name = format!("tiled.wgsl {dtype:?} {p:?}");
                    validate(&name, &source::kernel_source(Kernel::Tiled, dtype, &p));
                }
            }
        }
    }
}
