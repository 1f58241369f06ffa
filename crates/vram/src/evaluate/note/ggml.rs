//! How the notes of one subject read. llama.cpp and Ollama: their buffers, experts in
//! RAM, several GPUs.

use super::Note;
use crate::units::{ByteSize, group_digits};

/// The wording of this subject's notes; the dispatcher in [`Note::text`] sends only
/// them here.
pub(super) fn text(note: &Note, cli: bool) -> String {
    match note {
        Note::Ggml {
            runtime,
            ngl,
            placement: (on_gpu, output),
            layers,
            host,
            cells,
            swa,
            flash,
            compute,
            embeddings_on_cpu,
            ubatch,
        } => {
            let swa_text = match swa {
                Some((swa, shared)) if *shared > 0 => format!(
                    " en las capas globales y {} en las de ventana deslizante (la ventana de cada una de las {shared} ranuras que comparten una sola caché, como las que llama-server abre por defecto con -np auto, más un micro-lote, sin pasar del contexto);",
                    group_digits(*swa)
                ),
                Some((swa, _)) => format!(
                    " en las capas globales y {} en las de ventana deslizante (la ventana más un micro-lote por secuencia, sin pasar del contexto);",
                    group_digits(*swa)
                ),
                None => String::new(),
            };
            let flash_text = if *flash {
                "con flash attention, en múltiplos de 256"
            } else {
                "sin flash attention, en múltiplos de 32"
            };
            let all = on_gpu >= layers && *output;
            let cpu = if all {
                if *embeddings_on_cpu > 0 {
                    format!(
                        " La tabla de embeddings de entrada ({}) se queda en la RAM de la CPU.",
                        ByteSize(*embeddings_on_cpu).binary()
                    )
                } else {
                    String::new()
                }
            } else {
                format!(
                    " En la GPU van {on_gpu} de {layers} capas{}{}; la RAM de la CPU guarda {} (el resto de las capas{}, su caché KV y los embeddings), y cada capa que se queda allí hace la generación más lenta, porque la CPU lee su memoria mucho más despacio que la GPU la suya.",
                    if *output { " y la de salida" } else { "" },
                    match (cli, *runtime) {
                        (false, _) => String::new(),
                        (true, "Ollama") => format!(" (num_gpu {ngl})"),
                        (true, _) => format!(" (-ngl {ngl})"),
                    },
                    ByteSize(*host).binary(),
                    if *output { "" } else { ", la de salida" },
                )
            };
            let fa = if cli { "--attention flash" } else { "la atención FlashAttention" };
            format!(
                "Se cuenta como {runtime}: caché KV de {} celdas ({flash_text}){swa_text} y un búfer de cómputo de {} para un micro-lote de {} {}.{cpu}{}",
                group_digits(*cells),
                ByteSize(*compute).binary(),
                crate::units::counted(*ubatch, "token", "tokens"),
                if *output {
                    "con sus logits en FP32"
                } else if *ubatch >= crate::estimate::ggml::OP_OFFLOAD_MIN_BATCH {
                    "(la capa de salida vive en la CPU, pero con micro-lotes de 32 tokens o más llama.cpp copia su matriz a la GPU y calcula allí los logits)"
                } else {
                    "(la capa de salida y sus logits van en la CPU)"
                },
                if *flash {
                    String::new()
                } else {
                    format!(" Sin flash attention el búfer crece con el contexto; {fa} lo evita.")
                }
            )
        }
        Note::CpuExperts {
            layers,
            asked,
            bytes,
            per_token,
            copies,
            ram_gbs,
        } => {
            let flag = match asked {
                _ if !cli => String::new(),
                None => String::new(),
                Some(crate::settings::CPU_MOE_ALL) => " (--cpu-moe)".to_owned(),
                Some(n) => format!(" (--n-cpu-moe {n})"),
            };
            let bound = crate::speed::ram_bytes_per_second(*ram_gbs) / (*per_token).max(1) as f64;
            let ram = if *ram_gbs == crate::speed::DEFAULT_RAM_GBS {
                format!("con una RAM DDR5 de doble canal (unos {ram_gbs} GB/s de pico)")
            } else {
                format!("a {ram_gbs} GB/s de RAM")
            };
            let copies = if *copies > 0 {
                format!(
                    " Al leer el prompt, llama.cpp copia a la GPU cada tensor de expertos que vive en la RAM, uno a uno, para multiplicarlo allí: su búfer de cómputo necesita sitio para el mayor ({}) junto a las activaciones de esa fase.",
                    ByteSize(*copies).binary()
                )
            } else {
                String::new()
            };
            let (layers, those) = if *layers == 1 {
                ("1 capa".to_owned(), "esa capa")
            } else {
                (format!("{layers} capas"), "esas capas")
            };
            format!(
                "Expertos en la CPU{flag}: los expertos de {layers} ({}) se quedan en la RAM; el resto de {those}, la atención y su caché KV siguen en la GPU. Cada token generado lee de la RAM los expertos que usa en {those}, {}: {ram} eso limita la generación a {} tokens/s como mucho.{copies}",
                ByteSize(*bytes).binary(),
                ByteSize(*per_token).binary(),
                group_digits(bound.floor() as u64)
            )
        }
        Note::LayerSplit {
            runtime,
            gpus,
            first,
            last,
            output,
            pipeline,
        } => {
            let flag = if cli && *runtime == "llama.cpp" {
                " (--split-mode layer)"
            } else {
                ""
            };
            let pipe = match pipeline {
                Some(extra) => format!(
                    " Con todas las capas en las GPU trabajan en cadena: cada GPU guarda por {} sus entradas (los estados ocultos que recibe y la máscara de atención), una copia por micro-lote en curso, y eso le suma {} frente a una sola GPU; crece con el contexto y con el micro-lote.",
                    match crate::estimate::ggml::SCHED_COPIES {
                        4 => "cuadruplicado".to_owned(),
                        n => format!("{n} veces"),
                    },
                    ByteSize(*extra).binary()
                ),
                None => String::new(),
            };
            format!(
                "Varias GPU: {runtime} reparte capas enteras entre las {gpus} GPU{flag}, sin paralelismo tensorial ni NCCL (la primera lleva {}; la última, {}); las cifras son las de la GPU más cargada.{pipe} Al generar, cada token atraviesa las GPU una tras otra, así que la velocidad es la de una sola GPU que leyera todo el modelo.",
                crate::units::counted(u64::from(*first), "capa", "capas"),
                match (*last, *output) {
                    (0, true) => "solo la de salida".to_owned(),
                    (l, true) => format!(
                        "{} y la de salida",
                        crate::units::counted(u64::from(l), "capa", "capas")
                    ),
                    (l, false) => crate::units::counted(u64::from(l), "capa", "capas"),
                },
            )
        }
        Note::OllamaOneGpu { gpus } => format!(
            "Una sola GPU: aunque hay {gpus}, Ollama carga el modelo en una porque su cálculo no pasa del {} % de la memoria libre de esa GPU (bestSingleGPUFit en server/sched.go); solo reparte entre varias los modelos más grandes, o todos con OLLAMA_SCHED_SPREAD=1.",
            crate::default_context::OLLAMA_ONE_GPU_PERCENT
        ),
        Note::CpuMoeDense => if cli {
            "--n-cpu-moe no cambia nada: este modelo no tiene expertos (MoE), y llama.cpp solo deja en la CPU los tensores de expertos. Para dejar capas enteras en la CPU, usa -ngl."
        } else {
            "«Capas con expertos en la CPU» no cambia nada: este modelo no tiene expertos (MoE), y llama.cpp solo deja en la CPU los tensores de expertos. Para dejar capas enteras en la CPU, baja «Capas en la GPU»."
        }
        .to_owned(),
        _ => String::new(),
    }
}
