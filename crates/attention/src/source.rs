//! The WGSL text each run compiles: a small generated header (storage type, head
//! dimension, tile constants) followed by the kernel files, which are the same text on
//! native and on the web (one source per kernel, `include_str!`-ed here and nowhere
//! else).

use crate::codegen;
use crate::plan::TilePlan;
use crate::shape::{Dtype, Kernel};

pub const COMMON: &str = include_str!("kernels/common.wgsl");
pub const INIT: &str = include_str!("kernels/init.wgsl");
pub const NAIVE: &str = include_str!("kernels/naive.wgsl");
pub const TILED: &str = include_str!("kernels/tiled.wgsl");

fn header(dtype: Dtype, head_dim: u32) -> String {
    let (enable, elem) = match dtype {
        Dtype::F32 => ("", "f32"),
        Dtype::F16 => ("enable f16;\n", "f16"),
    };
    format!("{enable}alias elem = {elem};\nconst D: u32 = {head_dim}u;\n")
}

/// The init kernel (fills Q, K, V) for a storage type and head dimension.
pub fn init_source(dtype: Dtype, head_dim: u32) -> String {
    format!("{}{COMMON}{INIT}", header(dtype, head_dim))
}

/// The WGSL of `kernel`. `plan` sizes the tiled kernel and is ignored by the naive one.
pub fn kernel_source(kernel: Kernel, dtype: Dtype, plan: &TilePlan) -> String {
    let head = header(dtype, plan.head_dim);
    match kernel {
        Kernel::Naive => format!("{head}{COMMON}{NAIVE}"),
        Kernel::Tiled => format!(
            "{head}const BR: u32 = {}u;\nconst BC: u32 = {}u;\nconst TR: u32 = {}u;\nconst TC: u32 = {}u;\n{COMMON}{}",
            plan.br,
            plan.bc,
            plan.tr,
            plan.tc,
            codegen::expand(TILED, plan)
        ),
    }
}
