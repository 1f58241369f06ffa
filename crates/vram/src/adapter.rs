//! Finds the catalog GPU behind a graphics adapter's name, as Vulkan, Metal, DX12 or a
//! browser reports it ("NVIDIA H100 80GB HBM3", "NVIDIA GeForce RTX 4090"), so a
//! benchmark can say what fraction of the card's peak it reached.

use crate::catalog::{Gpu, gpus};

/// Lower-case words of a name, with the vendor words dropped and the spellings that
/// mean the same board folded together (HBM3 and SXM4/5 are SXM boards).
fn tokens(name: &str) -> Vec<String> {
    name.to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|t| !t.is_empty())
        .filter(|t| !["nvidia", "geforce", "amd", "radeon", "tesla", "rtx", "gtx"].contains(t))
        .map(|t| match t {
            "hbm3" | "hbm3e" | "sxm4" | "sxm5" | "sxm2" => "sxm".to_owned(),
            other => other.to_owned(),
        })
        .collect()
}

/// The words that name the chip ("h100", "4090", "l40s"): they contain a digit and are
/// not a memory size.
fn model_tokens(tokens: &[String]) -> Vec<&String> {
    tokens
        .iter()
        .filter(|t| t.chars().any(|c| c.is_ascii_digit()) && !t.ends_with("gb"))
        .collect()
}

/// The catalog GPU whose chip words all appear in `adapter_name`, preferring the one
/// that shares the most words (so "H100 80GB HBM3" is the SXM board, not the PCIe one).
/// `None` for software adapters and cards the catalog does not list.
pub fn gpu_for_adapter(adapter_name: &str) -> Option<&'static Gpu> {
    let adapter = tokens(adapter_name);
    gpus()
        .iter()
        .filter_map(|g| {
            let words = tokens(&g.name);
            let chip = model_tokens(&words);
            if chip.is_empty() || !chip.iter().all(|t| adapter.contains(t)) {
                return None;
            }
            let shared = words.iter().filter(|w| adapter.contains(w)).count();
            let extra = words.len() - shared;
            Some((g, shared, extra))
        })
        .max_by_key(|&(_, shared, extra)| (shared, std::cmp::Reverse(extra)))
        .map(|(g, _, _)| g)
}

#[cfg(test)]
mod tests {
    use super::gpu_for_adapter;

    /// Adapter names as drivers report them, and the catalog row each one is.
    #[test]
    fn real_adapter_names() {
        let cases = [
            ("NVIDIA H100 80GB HBM3", Some("h100-sxm")),
            ("NVIDIA H100 PCIe", Some("h100-pcie")),
            ("NVIDIA H100 NVL", Some("h100-nvl")),
            ("NVIDIA H200", Some("h200")),
            ("NVIDIA A100-SXM4-80GB", Some("a100-80gb")),
            ("NVIDIA GeForce RTX 4090", Some("rtx-4090")),
            ("NVIDIA GeForce RTX 3080", Some("rtx-3080")),
            ("Tesla T4", Some("t4")),
            ("NVIDIA L4", Some("l4")),
            ("NVIDIA L40S", Some("l40s")),
            ("AMD Instinct MI300X", Some("mi300x")),
            ("llvmpipe (LLVM 15.0.6, 256 bits)", None),
            ("SwiftShader Device (Subzero)", None),
            ("Apple M2 Max", None),
            ("", None),
        ];
        for (name, id) in cases {
            assert_eq!(gpu_for_adapter(name).map(|g| g.id.as_str()), id, "{name}");
        }
    }
}
