//! How the notes of one subject read. What llama.cpp and Ollama choose by themselves:
//! the context they open and the layers `--fit` places.

use super::Note;
use crate::units::{ByteSize, group_digits};

/// The wording of this subject's notes; the dispatcher in [`Note::text`] sends only
/// them here.
pub(super) fn text(note: &Note, cli: bool) -> String {
    match note {
        Note::FittedLayers {
            gpu_layers,
            layers,
            cpu_moe,
            llama_cpp,
            output_first,
        } => {
            let layers = *layers;
            let experts = match *cpu_moe {
                0 => None,
                n if n >= layers => Some("los expertos de todas las capas".to_owned()),
                1 => Some("los expertos de 1 capa".to_owned()),
                n => Some(format!("los expertos de {n} capas")),
            };
            // `-ngl g` offloads the output first and then g − 1 layers; older
            // builds offloaded g layers and the output only with every layer.
            let whole = match *gpu_layers {
                Some(0) => Some(format!("las {layers} capas y la de salida")),
                Some(g) if g <= layers && *output_first => {
                    Some(format!("{} de {layers} capas", layers - g + 1))
                }
                Some(g) if g < layers => {
                    Some(format!("{} de {layers} capas y la de salida", layers - g))
                }
                Some(g) if g == layers => Some("la capa de salida".to_owned()),
                _ => None,
            };
            let placed = match (experts, whole) {
                (Some(e), Some(w)) => format!("{e} y además {w}"),
                (Some(one), None) | (None, Some(one)) => one,
                (None, None) => "nada".to_owned(),
            };
            let all = crate::settings::CPU_MOE_ALL;
            let flags = match (*gpu_layers, *cpu_moe) {
                _ if !cli || !llama_cpp => None,
                (Some(g), 0) => Some(format!("--gpu-layers {g}")),
                (Some(g), n) if n == all => Some(format!("--gpu-layers {g} --n-cpu-moe all")),
                (Some(g), n) => Some(format!("--gpu-layers {g} --n-cpu-moe {n}")),
                (None, n) => Some(format!("--n-cpu-moe {n}")),
            }
            .map(|f| format!(" Es lo que calcula {f}; --gpu-layers all lo sube todo."))
            .unwrap_or_default();
            format!(
                "Capas automáticas: con todo en la GPU no quedaría 1 GiB libre, así que el ajuste automático de llama.cpp (fit, activo por defecto; Ollama 0.30 o posterior lo usa también) deja en la RAM de la CPU {placed}. Arranca, pero cada token lee esa parte desde la RAM y la generación va más lenta.{flags}"
            )
        }
        Note::OpenedContext { opened, new_tokens } => {
            use crate::default_context::{LLAMA_FIT_MIN, Opened};
            let tokens = group_digits(opened.tokens());
            let given = if cli {
                "pásale --seq con los tokens que vayas a usar"
            } else {
                "escribe en Tokens por secuencia los que vayas a usar"
            };
            let generated = if *new_tokens > 0 {
                format!(
                    " ({} de prompt y {} generados)",
                    group_digits(opened.tokens().saturating_sub(*new_tokens).max(1)),
                    group_digits(*new_tokens)
                )
            } else {
                String::new()
            };
            match opened {
                Opened::Vllm { .. } => format!(
                    "Contexto automático: si no le das max_model_len, vLLM toma el contexto que declara el modelo (max_position_embeddings de su config), {tokens} tokens{generated}, y se niega a arrancar si la caché KV no cabe para una secuencia de ese largo. Si no necesitas tanto, {given}: es lo que harías con max_model_len."
                ),
                Opened::Ollama {
                    vram,
                    tier,
                    trained,
                } => {
                    let cap = match trained {
                        Some(t) if t < tier => format!(
                            ", recortados al contexto de entrenamiento del modelo, {tokens}"
                        ),
                        _ => String::new(),
                    };
                    let with = if *vram == 0 {
                        "sin GPU".to_owned()
                    } else {
                        format!("con {}", ByteSize(*vram).binary())
                    };
                    format!(
                        "Contexto automático: sin num_ctx ni OLLAMA_CONTEXT_LENGTH, Ollama (desde la 0.15.5) elige el contexto por la VRAM total: {} tokens {with}{cap}{generated}. Si al cargar se queda sin memoria, lo reintenta una vez con el escalón de abajo (32 768 o 4096).",
                        group_digits(*tier),
                    )
                }
                Opened::LlamaCpp { trained, fit: None } => format!(
                    "Contexto automático: si no le pides uno (-c), llama.cpp abre el contexto de entrenamiento del modelo ({} tokens{generated}); su ajuste a la memoria libre (fit, activo por defecto) solo lo baja si no quedaría 1 GiB libre en la GPU.",
                    group_digits(*trained)
                ),
                Opened::LlamaCpp {
                    trained,
                    fit: Some(fit),
                } if fit.layers_next => format!(
                    "Contexto automático: si no le pides uno (-c), llama.cpp abriría los {} tokens del modelo; su ajuste a la memoria libre (fit, activo por defecto) lo baja hasta su mínimo, {} tokens{generated}, y como ni así quedaría 1 GiB libre, pasa además capas a la CPU si no le fijaste cuántas (-ngl).",
                    group_digits(*trained),
                    group_digits(LLAMA_FIT_MIN)
                ),
                Opened::LlamaCpp {
                    trained,
                    fit: Some(_),
                } => format!(
                    "Contexto automático: si no le pides uno (-c), llama.cpp abriría los {} tokens del modelo, pero su ajuste a la memoria libre (fit, activo por defecto) lo baja a {tokens}{generated} para dejar 1 GiB libre en la GPU (interpola entre lo que ocupa con el contexto entero y con 4096, y redondea a múltiplos de 256).",
                    group_digits(*trained)
                ),
                Opened::Unknown => format!(
                    "Contexto automático: no se conoce el contexto de entrenamiento de este modelo, así que el cálculo usa {tokens} tokens{generated}; {given}."
                ),
            }
        }
        Note::OllamaContext { vram, default, seq } => {
            let advice = if seq == default {
                String::new()
            } else if cli {
                format!(
                    " Este cálculo usa {}; con --seq auto ves lo que ocupa el de Ollama.",
                    group_digits(*seq)
                )
            } else {
                format!(
                    " Este cálculo usa {}; escribe «auto» en Tokens por secuencia para ver lo que ocupa el de Ollama.",
                    group_digits(*seq)
                )
            };
            let capped = if *default < crate::default_context::ollama_tier(*vram) {
                " (el contexto de entrenamiento del modelo, que Ollama no pasa)"
            } else {
                ""
            };
            format!(
                "Contexto de Ollama: desde la versión 0.15.5, si no le pides otro (num_ctx u OLLAMA_CONTEXT_LENGTH), Ollama abre el modelo con un contexto que depende de la VRAM: 4096 tokens por debajo de 23 GiB, 32 768 hasta 47 GiB y 262 144 a partir de ahí. Con {} serían {} tokens{capped}, y la caché KV crece con ellos.{advice}",
                ByteSize(*vram).binary(),
                group_digits(*default)
            )
        }
        _ => String::new(),
    }
}
