//! How the notes of one subject read. The machine and the model: capacity, CUDA context, the error band, what is known of the parameters and weights, the context asked against the trained one.

use super::{DeviceKind, FormatChoice, Note, TowerPlace};
use crate::units::{ByteSize, group_digits};

/// The wording of this subject's notes; the dispatcher in [`Note::text`] sends only
/// them here.
pub(super) fn text(note: &Note, cli: bool) -> String {
    match note {
        Note::Band {
            runtime,
            training,
            serving,
            band,
        } => {
            let phase = if *training {
                "entrenamiento"
            } else {
                "inferencia"
            };
            let whose = if band.pooled {
                format!(
                    "{runtime} tiene menos de {} casos publicados de {phase}, así que se usan los de todos los motores ({} casos)",
                    crate::band::MIN_CASES,
                    band.cases
                )
            } else {
                format!("{} casos publicados de {runtime} en {phase}", band.cases)
            };
            format!(
                "Margen de error: {whose}; entre el P10 y el P90, {} el cálculo se desvió de {} a {} (negativo: prometía más de lo que dio la ejecución). «Cabe con margen» exige que quepa también ese extremo.",
                if *serving { "en tokens de caché KV," } else { "en la memoria que no son pesos," },
                numfmt::signed_percent(band.p10, 1),
                numfmt::signed_percent(band.p90, 1)
            )
        }
        Note::Capacity {
            gpu,
            kind,
            usable,
            nominal,
            source,
            reserve,
        } => {
            let (nominal, usable) = (ByteSize(*nominal).binary(), ByteSize(*usable).binary());
            let held = if *reserve > 0 {
                format!(
                    " Se restan {} que ya ocupan la pantalla u otros procesos.",
                    ByteSize(*reserve).binary()
                )
            } else {
                String::new()
            };
            let share = match kind {
                DeviceKind::Nvidia => {
                    format!("de los {nominal} que nvidia-smi muestra en la {gpu}, PyTorch recibe {usable}")
                }
                DeviceKind::Amd => {
                    format!("de los {nominal} de la ficha de la {gpu}, PyTorch con ROCm recibe {usable}")
                }
                DeviceKind::Intel => {
                    format!("de los {nominal} de la ficha de la {gpu}, el controlador deja {usable}")
                }
                DeviceKind::Apple => format!(
                    "de los {nominal} de memoria unificada del {gpu}, macOS deja a la GPU {usable} (recommendedMaxWorkingSetSize de Metal; sudo sysctl iogpu.wired_limit_mb lo sube, a costa de la memoria del sistema)"
                ),
                DeviceKind::Unified => format!(
                    "de los {nominal} de memoria unificada de {gpu}, la GPU puede tomar {usable}, que comparte con el sistema"
                ),
            };
            format!("Capacidad: {share} ({source}).{held}")
        }
        Note::CudaContext { bytes, gpu, basis } => {
            let hint = if cli {
                " Mide el tuyo con nvidia-smi mientras corre tu trabajo (justo tras torch.ones(1).cuda() aún faltan los kernels que se cargan al usarse) y pásalo con --cuda-context."
            } else {
                ""
            };
            format!(
                "Contexto CUDA de {} por GPU para {gpu}: {basis}.{hint}",
                ByteSize(*bytes).binary()
            )
        }
        Note::CheckpointFormat { stored, used, why } => checkpoint_format(stored, used, *why, cli),
        Note::Approximate { family } => format!(
            "Aproximado: la arquitectura «{family}» no está entre las que vramlab cuenta capa a capa, así que se ha tomado como un transformer genérico (atención completa en todas las capas, MLP con compuerta, RMSNorm). Si el modelo tiene capas de otro tipo (Mamba, atención lineal, ventanas deslizantes, expertos con otra disposición), la memoria real puede quedar lejos de estas cifras."
        ),
        Note::RuntimeOffDevice { runtime, gpu } => format!(
            "{runtime} no corre en {gpu}: necesita CUDA o ROCm. En Apple Silicon, los modelos se sirven con llama.cpp u Ollama (Metal) y se ajustan con transformers sobre MPS; las cifras de arriba son las de {runtime} en una GPU que sí lo ejecute."
        ),
        Note::TotalParams { given, derived } => format!(
            "Se usa el total de parámetros indicado ({}) en lugar del derivado de la arquitectura ({}).",
            group_digits(*given),
            group_digits(*derived)
        ),
        Note::ParamsOnly => if cli {
            "Solo se conoce el número de parámetros: no se estiman activaciones ni caché KV (usa --model con un id del catálogo, un config.json o un .gguf)."
        } else {
            "Solo se conoce el número de parámetros: no se estiman activaciones ni caché KV (elige un modelo del catálogo o importa el tuyo)."
        }
        .to_owned(),
        Note::ExactWeights {
            bytes,
            params,
            tensors,
            source,
        } => {
            let mut detail = Vec::new();
            if let Some(t) = tensors {
                detail.push(format!("{} tensores", group_digits(*t)));
            }
            if let Some(p) = params {
                detail.push(format!("{} parámetros", group_digits(*p)));
            }
            let detail = if detail.is_empty() {
                String::new()
            } else {
                format!(" ({})", detail.join(", "))
            };
            format!(
                "Pesos: {} exactos, de {source}{detail}.",
                ByteSize(*bytes).binary()
            )
        }
        Note::ExactWeightsIgnored { source } => format!(
            "Los bytes exactos de {source} solo valen para inferencia: al entrenar, los pesos se cuentan con {}.",
            if cli { "--dtype" } else { "el formato elegido" }
        ),
        Note::BeyondTrainedContext {
            asked,
            trained,
            vllm,
        } => {
            if *vllm {
                format!(
                    "Contexto: {} tokens pasan de los {} del modelo, y vLLM no arranca con un max_model_len mayor que el suyo (salvo con VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, bajo tu responsabilidad).",
                    group_digits(*asked),
                    group_digits(*trained)
                )
            } else {
                format!(
                    "Contexto: {} tokens pasan de los {} con los que se entrenó el modelo; la memoria se cuenta igual, pero más allá de ese punto las respuestas suelen degradarse (y un modelo con posiciones aprendidas, como GPT-2, ni siquiera las acepta).",
                    group_digits(*asked),
                    group_digits(*trained)
                )
            }
        }
        Note::QloraBase { asked } => format!(
            "QLoRA carga el modelo base en NF4 con doble cuantización, no en {asked}: así se cuenta."
        ),
        Note::VisionTower {
            bytes,
            place,
            compute,
        } => {
            let bytes = ByteSize(*bytes).binary();
            let compute = ByteSize(*compute).binary();
            let (flag, mmproj) = if cli {
                ("--mmproj en llama.cpp", "--mmproj true")
            } else {
                ("mmproj en llama.cpp", "el proyector de visión marcado")
            };
            match place {
                TowerPlace::Loaded => format!(
                    "Torre de visión: el checkpoint es multimodal, y tanto transformers (AutoModelForCausalLM construye Gemma3ForConditionalGeneration) como vLLM cargan la torre SigLIP y su proyector aunque solo lleguen textos: sus {bytes} están en los pesos."
                ),
                TowerPlace::Projector => format!(
                    "Torre de visión: llama.cpp solo la carga si le das su archivo de proyector (mmproj), y Ollama cuando el modelo la trae (gemma3 la trae). Este cálculo no la incluye; con {mmproj} suma sus pesos ({bytes}) y el búfer para codificar una imagen ({compute})."
                ),
                TowerPlace::ProjectorLoaded => format!(
                    "Torre de visión: el proyector ({flag}; Ollama lo carga siempre que el modelo lo trae) va a la GPU sea cual sea el número de capas: sus pesos ({bytes}, matrices en F16 y embeddings y vectores en F32, como los escribe el conversor de llama.cpp) y un búfer de {compute} para codificar una imagen, que sin flash attention guarda la matriz de atención de cada cabeza. Ya están sumados."
                ),
                TowerPlace::Frozen => format!(
                    "Torre de visión: el checkpoint es multimodal y AutoModelForCausalLM la carga también al entrenar ({bytes} en 16 bits). Con LoRA queda congelada con el resto del modelo base (en QLoRA, sus capas lineales en 4 bits), y como PEFT elige las capas por su nombre, sus q_proj y v_proj (y las demás lineales si eliges todas) llevan adaptadores también. Ya está en los pesos; no guarda activaciones si solo le das texto."
                ),
                TowerPlace::Trained => format!(
                    "Torre de visión: el checkpoint es multimodal y AutoModelForCausalLM la carga también al entrenar ({bytes} en 16 bits). Un ajuste completo la entrena con el resto salvo que la congeles (requires_grad=False en vision_tower), así que sus pesos, gradientes y estados del optimizador ya están contados: congelarla ahorra los dos últimos."
                ),
            }
        }
        _ => String::new(),
    }
}

/// The wording of [`Note::CheckpointFormat`].
fn checkpoint_format(stored: &str, used: &str, why: FormatChoice, cli: bool) -> String {
    let name = |id: &str| match id {
        "fp8-block" => "FP8 por bloques".to_owned(),
        id => id.to_uppercase(),
    };
    let (stored, used) = (name(stored), name(used));
    match why {
        FormatChoice::Kept { transformers } => {
            let caveat = match (transformers, cli) {
                (true, true) => {
                    " transformers 5 solo los conserva así con triton ≥ 3.4 y el paquete kernels instalados (si no, los pasa a bf16: --dtype bf16 cuenta ese caso)."
                }
                (true, false) => {
                    " transformers 5 solo los conserva así con triton ≥ 3.4 y el paquete kernels instalados; si no, los pasa a bf16 (elige bf16 en «formato» para ver ese caso)."
                }
                (false, _) => "",
            };
            format!("Pesos en {used}, como los guarda el checkpoint.{caveat}")
        }
        FormatChoice::Training => format!(
            "El checkpoint guarda los pesos en {stored}, pero para entrenar se cargan descuantizados a BF16 (transformers no entrena sobre {stored}): se cuentan así."
        ),
        FormatChoice::OldGpu => format!(
            "El checkpoint guarda los pesos en {stored}, pero transformers los descuantiza a BF16 en GPU de capacidad de cómputo menor que 7.5 (Pascal, Volta): se cuentan así."
        ),
        FormatChoice::Gguf => format!(
            "El checkpoint guarda los pesos en {stored}; se cuenta el GGUF que se publica para él ({used}: los expertos en MXFP4, el resto de matrices en Q8_0)."
        ),
    }
}
