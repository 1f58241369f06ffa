//! The context a runtime opens a model with when the user names none (`--seq auto`).
//!
//! The servers people launch without flags pick the context themselves, and that pick
//! is the commonest reason a first launch runs out of memory: `vllm serve` takes the
//! model's whole trained context as `max_model_len`, llama-server opens the trained
//! context and shrinks it with `--fit`, Ollama chooses by the VRAM. An estimate at some
//! fixed 4096 tokens says "fits" where the default launch does not, so the vocabulary's
//! `auto` (the default for these runtimes) resolves here, from the model and the GPU,
//! the way each runtime does it:
//!
//! - vLLM: `max_model_len` defaults to the length the model's config declares
//!   (`max_position_embeddings`; `_get_and_verify_max_len` in vllm/config/model.py).
//! - Ollama: `defaultNumCtx` from the total VRAM (server/routes.go, since 0.15.5), capped
//!   at the model's trained context ("requested context size too large for model",
//!   `NewLlamaServer` in llm/server.go).
//! - llama.cpp: `-c 0` is the default ("0 = loaded from model", common/common.h), and
//!   `--fit on` (the default) lowers an unset context so that 1 GiB stays free on each
//!   device, never below 4096 tokens (`fit_params_target`, `fit_params_min_ctx`), by
//!   linear interpolation between the memory at the trained context and at 4096,
//!   rounded down to 256 (`common_params_fit_impl` in common/fit.cpp); only then does
//!   it move layers to the CPU.
//!
//! Runtimes that take the context from the data or the prompt (transformers, the
//! training frameworks, AutoAWQ) have no `auto`.

use crate::runtime::Runtime;
use crate::units::ByteSize;

/// The context (prompt plus generated tokens) used when the model's trained context is
/// unknown (a model given only by its parameter count).
pub const FALLBACK: u64 = 4096;
/// llama.cpp's `fit_params_min_ctx`: `--fit` never lowers the context below this.
pub const LLAMA_FIT_MIN: u64 = 4096;
/// llama.cpp's `fit_params_target`: the memory `--fit` leaves free on each device.
pub const LLAMA_FIT_MARGIN: u64 = ByteSize::GIB;
/// llama.cpp rounds a fitted context down to a multiple of this (for the CUDA backend).
pub const LLAMA_FIT_ALIGN: u64 = 256;

/// Where an automatic context comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opened {
    /// vLLM's `max_model_len`: the model's declared context.
    Vllm { trained: u64 },
    /// Ollama's VRAM tier for `vram` bytes of total VRAM, capped at the trained context.
    Ollama {
        vram: u64,
        tier: u64,
        trained: Option<u64>,
    },
    /// llama-server's trained context, and what `--fit` lowered it to.
    LlamaCpp { trained: u64, fit: Option<Fit> },
    /// The model's trained context is unknown: [`FALLBACK`].
    Unknown,
}

impl Opened {
    /// The context it opens, in tokens (prompt plus generated).
    pub fn tokens(self) -> u64 {
        match self {
            Opened::Vllm { trained } => trained,
            Opened::Ollama { tier, trained, .. } => trained.map_or(tier, |t| tier.min(t)),
            Opened::LlamaCpp { trained, fit } => fit.map_or(trained, |f| f.tokens),
            Opened::Unknown => FALLBACK,
        }
    }
}

/// What llama.cpp's `--fit` did to an automatic context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fit {
    /// The context it settled on.
    pub tokens: u64,
    /// Even at [`LLAMA_FIT_MIN`] the model did not leave the margin free: `--fit` goes
    /// on to move layers to the CPU (`evaluate` does too, when `-ngl` is `auto`).
    pub layers_next: bool,
}

/// Whether `runtime` picks a context by itself, so that `auto` means something.
pub fn opens_context(runtime: Runtime) -> bool {
    matches!(runtime, Runtime::Vllm | Runtime::LlamaCpp | Runtime::Ollama)
}

/// The context `runtime` opens a model trained on `trained` tokens with, on GPUs with
/// `vram` bytes in all (as the driver reports them; `None` without a GPU). llama.cpp's
/// `--fit` needs the estimate, so it is applied afterwards with [`llama_fit`].
pub fn opened(runtime: Runtime, trained: Option<u64>, vram: Option<u64>) -> Opened {
    match (runtime, trained) {
        (Runtime::Ollama, _) => {
            let vram = vram.unwrap_or(0);
            Opened::Ollama {
                vram,
                tier: ollama_tier(vram),
                trained,
            }
        }
        (Runtime::Vllm, Some(trained)) => Opened::Vllm { trained },
        (Runtime::LlamaCpp, Some(trained)) => Opened::LlamaCpp { trained, fit: None },
        _ => Opened::Unknown,
    }
}

/// The context Ollama gives a model when neither the request (`num_ctx`) nor
/// `OLLAMA_CONTEXT_LENGTH` sets one, from the total VRAM of its GPUs
/// (`defaultNumCtx` in server/routes.go, since 0.15.5): 262 144 tokens from 47 GiB,
/// 32 768 from 23 GiB, 4096 below.
pub fn ollama_tier(vram: u64) -> u64 {
    match vram / ByteSize::GIB {
        47.. => 262_144,
        23.. => 32_768,
        _ => 4096,
    }
}

/// llama.cpp's `--fit` on an automatic context of `trained` tokens, for one device with
/// `free` bytes: `used_full` is the memory the model needs at `trained` tokens,
/// `used_min` at [`LLAMA_FIT_MIN`]. `None` when it changes nothing (the margin stays
/// free, or the trained context is already that short).
pub fn llama_fit(trained: u64, used_full: u64, used_min: u64, free: u64) -> Option<Fit> {
    if trained <= LLAMA_FIT_MIN || free.saturating_sub(used_full) >= LLAMA_FIT_MARGIN {
        return None;
    }
    let target = free.saturating_sub(LLAMA_FIT_MARGIN);
    if target <= used_min || used_full <= used_min {
        return Some(Fit {
            tokens: LLAMA_FIT_MIN,
            layers_next: true,
        });
    }
    let span = u128::from(trained - LLAMA_FIT_MIN);
    let extra = span * u128::from(target - used_min) / u128::from(used_full - used_min);
    let tokens = LLAMA_FIT_MIN + u64::try_from(extra).unwrap_or(u64::MAX).min(trained);
    Some(Fit {
        tokens: (tokens - tokens % LLAMA_FIT_ALIGN).clamp(LLAMA_FIT_MIN, trained),
        layers_next: false,
    })
}

/// The share of one GPU's free memory under which Ollama's scheduler keeps a model on
/// that GPU alone (`bestSingleGPUFit` in server/sched.go).
pub const OLLAMA_ONE_GPU_PERCENT: u128 = 80;

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = ByteSize::GIB;

    #[test]
    fn each_runtime_opens_its_own_context() {
        let cases: [(Runtime, Option<u64>, Option<u64>, u64); 9] = [
            (Runtime::Vllm, Some(131_072), Some(24 * GIB), 131_072),
            (Runtime::Vllm, None, Some(24 * GIB), FALLBACK),
            (Runtime::LlamaCpp, Some(40_960), None, 40_960),
            // Ollama: the VRAM tier (4090: 24 564 MiB in all), capped at the model's.
            (Runtime::Ollama, Some(131_072), Some(24_564 << 20), 32_768),
            (Runtime::Ollama, Some(131_072), Some(12 * GIB), 4096),
            (Runtime::Ollama, Some(131_072), Some(80 * GIB), 131_072),
            (Runtime::Ollama, Some(8192), Some(80 * GIB), 8192),
            (Runtime::Ollama, None, None, 4096),
            (Runtime::Transformers, Some(131_072), None, FALLBACK),
        ];
        for (runtime, trained, vram, want) in cases {
            assert_eq!(
                opened(runtime, trained, vram).tokens(),
                want,
                "{runtime:?} {trained:?} {vram:?}"
            );
        }
    }

    #[test]
    fn ollama_tiers_have_its_thresholds() {
        for (vram, want) in [
            (12 * GIB, 4096),
            (23 * GIB - 1, 4096),
            (23 * GIB, 32_768),
            (47 * GIB - 1, 32_768),
            (47 * GIB, 262_144),
        ] {
            assert_eq!(ollama_tier(vram), want, "{vram}");
        }
    }

    /// `--fit` interpolates between the memory at 4096 tokens and at the trained
    /// context so that 1 GiB stays free, rounding down to 256; it leaves a context that
    /// already leaves the margin alone, and stops at 4096 when even that is too much.
    #[test]
    fn llama_fit_interpolates_to_leave_a_gib_free() {
        let trained = 131_072;
        // 10 GiB at 4096 tokens, 26 GiB at 131 072: 16 GiB over 126 976 tokens.
        let (min, full) = (10 * GIB, 26 * GIB);
        assert_eq!(llama_fit(trained, full, min, 28 * GIB), None);
        assert_eq!(llama_fit(4096, full, min, GIB), None);
        // 23 GiB free: the target is 22 GiB, 12/16 of the way: 4096 + 95 232.
        assert_eq!(
            llama_fit(trained, full, min, 23 * GIB),
            Some(Fit {
                tokens: 99_328,
                layers_next: false
            })
        );
        // Rounded down to 256.
        let odd = llama_fit(trained, full, min, 23 * GIB + (100 << 20)).unwrap();
        assert_eq!(odd.tokens % LLAMA_FIT_ALIGN, 0);
        assert!(odd.tokens > 99_328);
        assert_eq!(
            llama_fit(trained, full, min, 10 * GIB),
            Some(Fit {
                tokens: LLAMA_FIT_MIN,
                layers_next: true
            })
        );
    }

    /// The numbers of a published llama-server start-up (Granite-4.1-8B UD-Q8_K_XL on
    /// a 16 GB RX 9070 XT): "projected to use 30834 MiB of device memory vs. 16140 MiB
    /// of free device memory", 10782 MiB at 4096 tokens, "context size reduced from
    /// 131072 to 31488". The same interpolation gives the same context.
    #[test]
    fn llama_fit_matches_a_logged_reduction() {
        const MIB: u64 = ByteSize::MIB;
        let fit = llama_fit(131_072, 30_834 * MIB, 10_782 * MIB, 16_140 * MIB).unwrap();
        assert_eq!(fit.tokens, 31_488);
        assert!(!fit.layers_next);
    }
}
