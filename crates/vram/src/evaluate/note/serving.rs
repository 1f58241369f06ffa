//! How the notes of one subject read. vLLM as a server: its start-up profile, CUDA graphs, the vision encoder's dummy pass, the hybrid cache, tensor parallelism.

use super::Note;
use crate::units::{ByteSize, group_digits};

/// The wording of this subject's notes; the dispatcher in [`Note::text`] sends only
/// them here.
pub(super) fn text(note: &Note, cli: bool) -> String {
    match note {
        Note::ServingProfile {
            tokens,
            sequences,
            bytes,
            chosen_tokens,
            chosen_sequences,
            several_gpus,
        } => format!(
            "Arranque del servidor: antes de repartir la caché KV, vLLM V1 hace una pasada de perfil con {} tokens de prellenado y el muestreador sobre {} secuencias ({}), y descuenta su pico: {}. Con vocabularios grandes manda el muestreador; bajar max_num_seqs lo reduce, y con un max_num_batched_tokens grande manda el prellenado. {}",
            group_digits(*tokens),
            group_digits(*sequences),
            match (chosen_tokens, chosen_sequences) {
                (false, false) => "max_num_batched_tokens y max_num_seqs por defecto en esta GPU",
                (true, false) =>
                    "el max_num_batched_tokens elegido, y max_num_seqs por defecto en esta GPU",
                (false, true) =>
                    "max_num_batched_tokens por defecto en esta GPU, y el max_num_seqs elegido",
                (true, true) => "los max_num_batched_tokens y max_num_seqs elegidos",
            },
            ByteSize(*bytes).binary(),
            if *several_gpus {
                "Con varias GPU se descuenta además la sobrecarga entera (contexto de CUDA incluido): los búferes de NCCL y del all-reduce de vLLM crecen durante el perfil más de lo que se modela (2,07 GiB por H100 con TP 2 o 4 en los registros de vLLM 0.19)."
            } else {
                "Fuera de eso solo resta lo que creció la memoria ajena a PyTorch desde que arrancó el proceso, así que el contexto de CUDA no cuenta; versiones antiguas (V0 hasta la 0.6.4, V1 en la 0.8) sí lo restaban, y con ellas cabe algo menos de caché."
            }
        ),
        Note::CudaGraphs {
            mode,
            captures,
            bytes,
            sparse,
        } => {
            let low = if *sparse {
                " Con capas de expertos (MoE) o atención MLA cada grafo lanza más kernels: en los registros de vLLM 0.19 ocuparon entre 1,2 y 2,2 veces esta cifra."
            } else {
                ""
            };
            use crate::cuda_graphs::CudaGraphs;
            let bytes = ByteSize(*bytes).binary();
            let captured = format!(
                "vLLM captura grafos CUDA por piezas para {} tamaños de lote, hasta {} (el doble de max_num_seqs, como mucho 512), y grafos completos para los {} que no pasan de max_num_seqs",
                group_digits(captures.piecewise),
                group_digits(captures.largest),
                group_digits(captures.full)
            );
            let eager = if cli {
                "--enforce-eager (--cuda-graphs off)"
            } else {
                "enforce_eager"
            };
            match mode {
                CudaGraphs::Profiled => format!(
                    "Grafos CUDA: al arrancar, {captured}. Desde la versión 0.21 estima su memoria antes de repartir la caché KV (unos {bytes} aquí) y la descuenta de ella.{low} Con {eager} no hay grafos y esa memoria vuelve a la caché, a cambio de una generación más lenta."
                ),
                CudaGraphs::AfterKv => format!(
                    "Grafos CUDA: al arrancar, {captured}, y hasta la versión 0.20 lo hacía después de llenar la caché KV, así que sus unos {bytes} van por encima de gpu_memory_utilization y deben caber en lo que esta deja libre. Es el error de memoria típico al ver «Capturing CUDA graphs» con una fracción cercana a 1.{low}"
                ),
                CudaGraphs::Off => format!(
                    "Sin grafos CUDA ({eager}): vLLM no reserva memoria para ellos y la caché KV se queda con la que habrían ocupado, a cambio de una generación más lenta."
                ),
            }
        }
        Note::VisionEncoder { images, alive } => format!(
            "Imágenes de prueba: al arrancar, vLLM codifica además {} imágenes del tamaño máximo con la torre de visión, y sus píxeles y salidas ({}) siguen en memoria durante el resto de la pasada de perfil; ya están restados de la caché KV. Si solo vas a mandar texto, limitar las imágenes a 0 por prompt (limit_mm_per_prompt de vLLM) evita perfilarlas.",
            group_digits(*images),
            ByteSize(*alive).binary()
        ),
        Note::HybridKv { padded, layers } => format!(
            "Capas de ventana deslizante y globales: vLLM las reparte en grupos del mismo tamaño y rellena el último de cada tipo, así que cada token de la caché ocupa lo de {padded} capas, no lo de {layers}; por eso anuncia menos tokens que la cuenta capa a capa."
        ),
        Note::TpHeads { heads, tp } => format!(
            "Paralelismo tensorial: {heads} cabezas de atención no se reparten entre {tp} GPU, y vLLM se niega a arrancar si no son divisibles; usa un número de GPU que divida {heads}."
        ),
        Note::OldGenerateCache { bytes } => format!(
            "Versiones antiguas: hasta 2024 (transformers 4.35 y las de su época), generate guardaba la caché KV del paso anterior junto a la nueva, dos copias enteras; con ellas súmale {}. Desde entonces la caché se actualiza en su sitio y vale el total de arriba.",
            ByteSize(*bytes).binary()
        ),
        _ => String::new(),
    }
}
