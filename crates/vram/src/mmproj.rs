//! llama.cpp's multimodal projector (`--mmproj`), which Ollama loads for the models
//! that carry one: the vision tower's weights as llama.cpp's converter writes them, and
//! the compute buffer it reserves to encode one image.
//!
//! llama.cpp keeps the tower in its own GGUF file (`mmproj-*.gguf`) and its own ggml
//! context (tools/mtmd/clip.cpp): the weights go to the GPU unless
//! `--no-mmproj-offload`, and `warmup` reserves a compute buffer for an image of the
//! tower's size beside the language model's. Ollama (0.30 and later) starts llama-server
//! with `--mmproj` pointing at the model's own blob for Gemma 3 (`compatClipArches` in
//! llm/llama_server.go); its earlier engine loaded the same tensors from that blob.

use serde::{Deserialize, Serialize};

use crate::arch::{Architecture, Vision};
use crate::workload::{Attention, Engine, Mode, Workload};

/// What `--mmproj` puts on the GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Projector {
    /// The tower and projector weights ("load_hparams: model size").
    pub weights: u64,
    /// The image encoder's compute buffer ("alloc_compute_meta: CUDA0 compute buffer
    /// size").
    pub compute: u64,
}

/// The projector of a ggml inference with `--mmproj`, for a model with a vision tower.
pub fn of(a: &Architecture, w: &Workload) -> Option<Projector> {
    let v = a.vision?;
    (w.mmproj && w.engine == Engine::Ggml && w.mode == Mode::Inference).then(|| Projector {
        weights: weights(&v, a.hidden),
        compute: compute(&v, w.attention == Attention::Flash),
    })
}

/// Bytes of an F16 mmproj file's tensors as llama.cpp's converter writes Gemma 3's
/// (`Gemma3VisionModel.tensor_force_quant` in convert_hf_to_gguf.py): the patch and
/// position embeddings in F32, the projection into the language model in F16, every
/// other matrix in the file's F16 and every vector (biases, norms) in F32. For
/// gemma-3-4b that is 851 226 048 bytes, the "model size: 811.79 MiB" llama.cpp logs.
pub fn weights(v: &Vision, text_hidden: u32) -> u64 {
    let h = u128::from(v.hidden);
    let i = u128::from(v.intermediate);
    let p = u128::from(v.patch);
    let embeddings = (3 * p * p * h + h).saturating_add(u128::from(v.patches()).saturating_mul(h));
    let layer_matrices = 4 * h * h + 2 * h * i;
    // q/k/v/out and fc1/fc2 biases, two LayerNorms' weights and biases.
    let layer_vectors = 4 * h + i + h + 4 * h;
    let layers = u128::from(v.layers);
    let f16 = layers * layer_matrices + h * u128::from(text_hidden);
    // The post-LayerNorm's weight and bias and the projector's RMSNorm weight.
    let f32 = embeddings.saturating_add(layers * layer_vectors + 3 * h);
    u64::try_from(f16.saturating_mul(2).saturating_add(f32.saturating_mul(4))).unwrap_or(u64::MAX)
}

/// The compute buffer ggml-alloc reserves to encode one image of the tower's size
/// (clip.cpp's `warmup`; Gemma 3 resizes every image to it, so it never grows), in
/// F32. With flash attention the widest moment is a layer's MLP: its input, the
/// normalised input, fc1's output and fc2's output: 121.25 MiB for Gemma 3's 4096
/// patches, as llama.cpp logs it (ggml-org/llama.cpp#22790). Without, the attention
/// scores of every head, patches × patches each, sit beside six tensors of the tower's
/// width: 1132 MiB, the figure llama.cpp's fit logic adds for Gemma 3's projector
/// without flash attention (gpustack/gguf-parser-go#44; the 1024 MiB of scores is the
/// mechanism, the six tensors are read off that figure).
pub fn compute(v: &Vision, flash: bool) -> u64 {
    // Saturating: a forged tower's patches squared can pass u128.
    let n = u128::from(v.patches());
    let h = u128::from(v.hidden);
    let mlp = n
        .saturating_mul(u128::from(v.intermediate) + 3 * h)
        .saturating_mul(4);
    let attention = if flash {
        0
    } else {
        n.saturating_mul(n)
            .saturating_mul(u128::from(v.heads))
            .saturating_add(n.saturating_mul(6 * h))
            .saturating_mul(4)
    };
    u64::try_from(mlp.max(attention)).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::model;
    use crate::units::ByteSize;

    fn vision(id: &str) -> (Vision, u32) {
        let a = &model(id).unwrap().arch;
        (a.vision.unwrap(), a.hidden)
    }

    /// llama.cpp's "model size" for gemma-3-4b's F16 mmproj (ggml-org/llama.cpp#22790),
    /// and Ollama's "projector.weights" for gemma3 12B (ollama/ollama#9791), to the
    /// hundredth of a MiB.
    #[test]
    fn weights_match_the_logged_mmproj_sizes() {
        let (v, h) = vision("gemma-3-4b");
        assert_eq!(weights(&v, h), 851_226_048);
        let (v, h) = vision("gemma-3-12b");
        let mib = weights(&v, h) as f64 / ByteSize::MIB as f64;
        assert!((mib - 814.6).abs() < 0.05, "{mib}");
    }

    /// "alloc_compute_meta: CUDA0 compute buffer size = 121.25 MiB" with flash
    /// attention; 1132 MiB without.
    #[test]
    fn compute_buffer_with_and_without_flash_attention() {
        let (v, _) = vision("gemma-3-27b");
        assert_eq!(compute(&v, true), 12_125 * ByteSize::MIB / 100);
        assert_eq!(compute(&v, false), 1132 * ByteSize::MIB);
    }

    #[test]
    fn only_ggml_inference_with_mmproj_loads_it() {
        let a = model("gemma-3-4b").unwrap().arch.clone();
        let ggml = Workload::default()
            .engine(Engine::Ggml)
            .mmproj(true)
            .attention(Attention::Flash);
        assert_eq!(
            of(&a, &ggml),
            Some(Projector {
                weights: 851_226_048,
                compute: 12_125 * ByteSize::MIB / 100,
            })
        );
        for w in [
            ggml.clone().mmproj(false),
            ggml.clone().engine(Engine::Torch),
            ggml.clone().mode(Mode::Train),
        ] {
            assert_eq!(of(&a, &w), None);
        }
        assert_eq!(of(&model("llama-3.1-8b").unwrap().arch, &ggml), None);
    }

    #[test]
    fn forged_towers_saturate() {
        let v = Vision {
            layers: u32::MAX,
            hidden: u32::MAX,
            heads: u32::MAX,
            intermediate: u32::MAX,
            patch: 1,
            image: u32::MAX,
            tokens_per_image: 1,
        };
        assert_eq!(weights(&v, u32::MAX), u64::MAX);
        assert_eq!(compute(&v, false), u64::MAX);
    }
}
