//! llama.cpp's KV cache: one pool of padded cells for every slot's tokens, and the
//! sliding-window cache of `llama_kv_cache_iswa` (each stream's window plus a
//! micro-batch) for the models whose GGUF keeps their window.

use crate::arch::Architecture;
use crate::estimate::kv::kv_bytes;
use crate::workload::{Attention, Workload};

/// Whether llama.cpp applies the model's sliding window: Gemma 2 and 3, Cohere 2 and
/// gpt-oss build a sliding-window cache. Mistral 7B v0.1 is converted to GGUF as
/// architecture `llama`, which has none (its load log prints `n_swa = 0` and a
/// full-context KV cache), and llama.cpp leaves Phi-3's window off ("Phi SWA is
/// currently disabled", src/llama-model.cpp), so theirs keep the whole context.
pub fn honours_window(a: &Architecture) -> bool {
    matches!(
        a.family.as_str(),
        "gemma2" | "gemma3" | "gemma3_text" | "cohere2" | "gpt_oss" | "gpt-oss"
    )
}

/// KV cells llama.cpp allocates for every slot's tokens: the context padded to 256
/// with flash attention and to 32 without (`llama_kv_cache::get_padding` in
/// src/llama-kv-cache.cpp).
pub fn kv_cells(w: &Workload) -> u64 {
    let pad = if w.attention == Attention::Flash {
        256
    } else {
        32
    };
    w.seq
        .saturating_add(w.new_tokens)
        .saturating_mul(w.batch)
        .div_ceil(pad)
        .saturating_mul(pad)
}

/// The slots llama-server opens when `-np` is left at `auto` (its default), all
/// sharing one KV pool (`kv_unified`): tools/server/server.cpp, "n_parallel is set to
/// auto, using n_parallel = 4 and kv_unified = true".
pub const LLAMA_SERVER_AUTO_SLOTS: u32 = 4;

/// Cells of llama.cpp's sliding-window KV cache, all slots together, for `cells` cells
/// of the full-context cache (`llama_kv_cache_iswa` in src/llama-kv-cache-iswa.cpp):
/// each stream holds its window for every sequence that shares it plus one micro-batch
/// (`n_swa × (unified ? n_seq_max : 1) + n_ubatch`), never more than the full cache,
/// padded to 256. One pool shared by `w.shared_slots` slots at a batch of one
/// (llama-server's `-np auto`, or a log's `kv_unified`), else `w.batch` streams of
/// their own (`-np N`, Ollama). llama-server and
/// Ollama's llama-server leave `swa_full` off; with it, or before that cache existed
/// (May 2025, PR 13194), every layer keeps the whole context.
pub fn swa_cells(window: u64, cells: u64, w: &Workload) -> u64 {
    let ubatch = w.ubatch.max(1);
    // The pool is shared at a batch of one; asking for more sequences is `-np N`.
    if w.shared_slots > 0 && w.batch <= 1 {
        let wanted = window
            .saturating_mul(u64::from(w.shared_slots))
            .saturating_add(ubatch);
        return cells.min(wanted).div_ceil(256).saturating_mul(256);
    }
    let streams = w.batch.max(1);
    let per_stream = cells.div_ceil(streams);
    per_stream
        .min(window.saturating_add(ubatch))
        .div_ceil(256)
        .saturating_mul(256)
        .saturating_mul(streams)
}

/// llama.cpp's KV cache: one pool of [`kv_cells`] cells for every slot's tokens
/// in the global layers, and [`swa_cells`] in the sliding-window ones (Mistral 7B
/// v0.1's GGUF has none, [`honours_window`]).
pub fn kv_cache(a: &Architecture, w: &Workload) -> u64 {
    if a.encoder_only {
        return 0;
    }
    let cells = kv_cells(w);
    kv_bytes(a, w, cells, window_cells(a, w).unwrap_or(cells), 1)
}

/// llama.cpp's recurrent memory for the Gated DeltaNet layers (`llama_memory_recurrent`
/// in src/llama-memory-recurrent.cpp, inside the hybrid memory of
/// src/llama-memory-hybrid.cpp): one cell per sequence the context serves
/// (`n_seq_max`: the slots, four with llama-server's `-np auto`), each holding every
/// linear layer's convolution state `r` (`n_embd_r`: `(conv_kernel − 1) × channels`) and
/// recurrent state `s` (`n_embd_s`: value heads × key dim × value dim), always in f32.
/// A load log prints it as "llama_memory_recurrent: size = … R (f32): … S (f32): …".
pub fn recurrent_state(a: &Architecture, w: &Workload) -> u64 {
    let Some(l) = a.linear else {
        return 0;
    };
    let slots = if w.shared_slots > 0 && w.batch <= 1 {
        u64::from(w.shared_slots)
    } else {
        w.batch.max(1)
    };
    let (conv, recurrent) = l.state_elements();
    let per_layer = u128::from(conv.saturating_add(recurrent)) * 4;
    u64::try_from(per_layer * u128::from(a.linear_layers()) * u128::from(slots)).unwrap_or(u64::MAX)
}

/// The KV cache and recurrent state by layer kind, so that a range of layers (the ones
/// `-ngl` puts on a GPU) holds what its own layers keep: a hybrid's attention layers
/// hold the whole context, its linear ones a fixed state, and an iSWA model's windowed
/// layers a window's cells. Each kind's bytes are dealt evenly over its layers.
#[derive(Clone, Copy, Debug, Default)]
pub struct LayerCache {
    global: u64,
    windowed: u64,
    linear: u64,
}

impl LayerCache {
    pub fn of(a: &Architecture, w: &Workload) -> LayerCache {
        if a.encoder_only {
            return LayerCache::default();
        }
        let cells = kv_cells(w);
        let window = window_cells(a, w).unwrap_or(cells);
        LayerCache {
            global: kv_bytes(a, w, cells, 0, 1),
            windowed: kv_bytes(a, w, 0, window, 1),
            linear: recurrent_state(a, w),
        }
    }

    /// What layers `0..to` hold.
    pub fn before(&self, a: &Architecture, to: u32) -> u64 {
        let (all, some) = (a.kinds_before(a.layers), a.kinds_before(to));
        let share = |bytes: u64, num: u32, den: u32| {
            u64::try_from(u128::from(bytes) * u128::from(num) / u128::from(den.max(1)))
                .unwrap_or(bytes)
        };
        share(self.global, some.global, all.global)
            .saturating_add(share(self.windowed, some.windowed, all.windowed))
            .saturating_add(share(self.linear, some.linear, all.linear))
    }
}

/// Cells of llama.cpp's sliding-window cache ([`swa_cells`]), when it builds one
/// for this model ([`honours_window`]).
pub fn window_cells(a: &Architecture, w: &Workload) -> Option<u64> {
    let sw = a.sliding_window.filter(|_| honours_window(a))?;
    Some(swa_cells(u64::from(sw.window), kv_cells(w), w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::testing::*;

    #[test]
    fn ggml_quantised_kv_cache_pays_one_scale_per_32_elements() {
        // Llama 3.1 8B, 8192 cells: 32 layers × 8 KV heads × 128 × 2 (K and V) per cell.
        let elements = 8192 * 32 * 8 * 128 * 2;
        let m = preset("llama-3.1-8b");
        let kv = |engine, kv_dtype| {
            let w = Workload::default()
                .seq(8192)
                .new_tokens(0)
                .engine(engine)
                .kv_dtype(kv_dtype)
                .attention(Attention::Flash);
            estimate(&m, &w).unwrap().breakdown.kv_cache
        };
        use crate::workload::{Engine, KvDtype};
        assert_eq!(kv(Engine::Ggml, KvDtype::Fp16), elements * 2);
        // block_q8_0: 32 int8 values and an fp16 scale = 34 bytes.
        assert_eq!(kv(Engine::Ggml, KvDtype::Int8), elements / 32 * 34);
        // block_q4_0: 16 bytes of nibbles and an fp16 scale = 18 bytes.
        assert_eq!(kv(Engine::Ggml, KvDtype::Int4), elements / 32 * 18);
        assert_eq!(kv(Engine::Torch, KvDtype::Int8), elements);
    }

    /// llama.cpp's sliding-window cache holds the window of every sequence that shares
    /// it plus one micro-batch, padded to 256 (`llama_kv_cache_iswa`). A llama-server
    /// log (build 7445, Gemma 2 2B, `-c 8192`, `-np` left at auto: "n_parallel = 4 and
    /// kv_unified = true") printed 8192 cells and 416.00 MiB for both caches.
    #[test]
    fn ggml_window_cache_holds_each_shared_window_and_a_micro_batch() {
        let gemma2 = model("gemma-2-2b").unwrap().arch.clone();
        let w = |seq, batch, shared_slots| {
            Workload::default()
                .seq(seq)
                .batch(batch)
                .shared_slots(shared_slots)
                .engine(crate::workload::Engine::Ggml)
                .weights(WeightFormat::parse("Q4_K_M").unwrap())
                .kv_dtype(crate::workload::KvDtype::Fp16)
        };
        // -np auto: min(8192, 4 × 4096 + 512) = the whole context on every layer.
        assert_eq!(swa_cells(4096, 8192, &w(8192, 1, 4)), 8192);
        assert_eq!(kv_cache(&gemma2, &w(8192, 1, 4)), (2 * 416) << 20);
        // One sequence (-np 1, Ollama): its window and a micro-batch, 4608 cells.
        assert_eq!(swa_cells(4096, 8192, &w(8192, 1, 0)), 4608);
        assert_eq!(
            kv_cache(&gemma2, &w(8192, 1, 0)),
            (416 << 20) + (416 << 20) / 8192 * 4608
        );
        // Separate streams (-np 4) each keep their own: 4 × 4608 of 4 × 8192 cells, also
        // when the settings' -np auto is asked for a batch (the solver's larger batches).
        assert_eq!(swa_cells(4096, 4 * 8192, &w(8192, 4, 0)), 4 * 4608);
        assert_eq!(swa_cells(4096, 4 * 8192, &w(8192, 4, 4)), 4 * 4608);
        // Gemma 3's 1024-token window: 1024 + 512 = 1536 cells per sequence; with a
        // 100-token micro-batch, 1124 padded to 1280.
        assert_eq!(swa_cells(1024, 32_768, &w(32_768, 1, 0)), 1536);
        let small_ubatch = w(32_768, 1, 0).ubatch(100);
        assert_eq!(swa_cells(1024, 32_768, &small_ubatch), 1280);
        // Never more than the full cache.
        assert_eq!(swa_cells(1024, 512, &w(512, 1, 4)), 512);
        // The settings: llama.cpp leaves -np at auto, Ollama passes -np.
        let mut s = crate::Settings::defaults(
            crate::settings::Task::Inference,
            crate::settings::Runtime::LlamaCpp,
        );
        assert_eq!(s.workload().shared_slots, LLAMA_SERVER_AUTO_SLOTS);
        s.batch = 2;
        assert_eq!(s.workload().shared_slots, 0);
        let ollama = crate::Settings::defaults(
            crate::settings::Task::Inference,
            crate::settings::Runtime::Ollama,
        );
        assert_eq!(ollama.workload().shared_slots, 0);
    }
}
