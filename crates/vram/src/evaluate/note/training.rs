//! How the notes of one subject read. Training: the runtime's defaults, data parallelism and ZeRO, offload, bitsandbytes and PEFT, evaluation.

use super::Note;
use crate::units::{ByteSize, group_digits};
use crate::workload::{LoraTargets, Loss, Precision};

/// The wording of this subject's notes; the dispatcher in [`Note::text`] sends only
/// them here.
pub(super) fn text(note: &Note, cli: bool) -> String {
    match note {
        Note::Runtime {
            runtime,
            precision,
            loss,
            targets,
            offload,
        } => {
            let mut parts = Vec::new();
            if let Some(p) = precision {
                parts.push(match p {
                    Precision::Pure if *runtime == "Transformers" => "pesos, gradientes y estados de AdamW en el tipo del checkpoint, bf16 casi siempre, porque transformers 5 lo carga así (dtype=\"auto\"); transformers 4 lo cargaba en FP32 y entrenaba con autocast y estados en FP32 (precisión AMP)",
                    Precision::Amp => "pesos en FP32 con autocast (bf16=True): gradientes y estados en FP32 y una copia de 16 bits de cada peso",
                    Precision::Master => "pesos y gradientes de 16 bits con copia maestra y estados en FP32",
                    Precision::Pure => "todo en bf16, estados del optimizador incluidos",
                });
            }
            parts.push(match loss {
                Loss::Full => "la pérdida sobre los logits de todo el vocabulario, pasados a FP32",
                Loss::ChunkedOutput { .. } => "la pérdida por trozos de la salida (solo un trozo en FP32 a la vez)",
                Loss::Fused => "la pérdida fusionada con la proyección, por trozos de tokens",
            });
            let lora = targets.map(|t| match t {
                LoraTargets::QUERY_VALUE => "LoRA en q_proj y v_proj".to_owned(),
                LoraTargets::ATTENTION => "LoRA en las cuatro proyecciones de atención".to_owned(),
                LoraTargets::AllLinear => "LoRA en todas las capas lineales".to_owned(),
                LoraTargets::Modules(set) => format!("LoRA en {}", set.names().replace(',', ", ")),
            });
            if let Some(lora) = &lora {
                parts.push(lora);
            }
            if *offload {
                parts.push("las entradas de cada capa guardadas en la RAM de la CPU");
            }
            let change = if cli {
                "--runtime, --precision, --loss y --lora-targets lo cambian"
            } else {
                "«Motor» y los ajustes avanzados lo cambian"
            };
            format!("Se cuenta como {runtime}: {}. {change}.", parts.join("; "))
        }
        Note::FsdpUnsharded { root, layer } => format!(
            "FSDP: además de su parte de los pesos (en la RAM si la descargas), cada GPU tiene entera la unidad raíz (embeddings, cabeza y norma final: {}), que FSDP no vuelve a repartir entre el paso hacia delante y el final del paso hacia atrás, y la capa que está procesando, reunida de todas las GPU ({}; si precarga la siguiente, habría otra igual, que no se suma). Con DeepSpeed (ZeRO-3) no se cuenta así: reúne los pesos por módulos, hasta stage3_max_live_parameters.",
            ByteSize(*root).binary(),
            ByteSize(*layer).binary()
        ),
        Note::DdpBuckets { bytes } => format!(
            "DDP: además de sus gradientes, cada GPU guarda una copia en los buckets del all-reduce ({}), porque accelerate (y con él Trainer) y Lightning crean DDP con gradient_as_bucket_view=False. Con DistributedDataParallelKwargs(gradient_as_bucket_view=True) en el Accelerator los gradientes pasan a ser vistas de esos buckets y la copia desaparece; ZeRO-2 o FSDP, además, los reparten entre las GPU.",
            ByteSize(*bytes).binary()
        ),
        Note::DeepspeedBuffers {
            sync,
            default_bucket,
        } => {
            let mut text = format!(
                "DeepSpeed: los gradientes pasan por un búfer de reduce_bucket_size elementos (hidden², lo que pone «auto» en Trainer y accelerate): {}, contado con los gradientes. Sin «auto», el valor por defecto de DeepSpeed (5·10⁸ elementos) ocupa {}, y en ZeRO-1 y 2 el doble con overlap_comm.",
                ByteSize(sync.bucket).binary(),
                ByteSize(*default_bucket).binary()
            );
            if sync.staging > 0 {
                text.push_str(&format!(
                    " Al descargar a la CPU, ZeRO-1 y 2 reservan además en la GPU un búfer del tamaño del mayor parámetro que se entrena (para acumular gradientes entre micropasos): {}.",
                    ByteSize(sync.staging).binary()
                ));
            }
            if sync.reused > 0 {
                text.push_str(&format!(
                    " ZeRO-3 reúne entero cada módulo mientras trabaja con él y no suelta los que volverá a usar antes de recorrer stage3_max_reuse_distance parámetros (10⁹ por defecto), contando la ida y la vuelta: al pasar del paso hacia delante al de atrás {}, {} ({} millones de parámetros).",
                    if sync.reused_beyond_head {
                        "siguen reunidas la cabeza y parte de la última capa"
                    } else {
                        "sigue reunida la cabeza"
                    },
                    ByteSize(sync.reused).binary(),
                    group_digits(sync.reused_params.div_ceil(1_000_000))
                ));
            }
            let whole = sync.head_gradient.max(sync.layer_gradient);
            if whole > 0 {
                text.push_str(&format!(
                    " Cada módulo que se entrena tiene además su gradiente entero hasta que se reduce: el mayor, {}, {}.",
                    if sync.head_gradient >= sync.layer_gradient {
                        "el de la cabeza"
                    } else {
                        "el de los expertos de una capa"
                    },
                    ByteSize(whole).binary()
                ));
            }
            text
        }
        Note::Communication { bytes } => format!(
            "Comunicación entre GPU: NCCL reserva unos {} por GPU para los búferes de sus grupos (medido en A100 con NVLink, NVIDIA/nccl#964; en H100 usa más canales y algo más). Se cuentan en la sobrecarga.",
            ByteSize(*bytes).binary()
        ),
        Note::PagedOptimizer { bytes } => format!(
            "El optimizador paginado guarda sus estados ({}) en memoria unificada: se cuentan en la GPU, pero si falta memoria el controlador los desaloja a la RAM de la CPU en vez de dar OOM (más lento por el tráfico PCIe).",
            ByteSize(*bytes)
        ),
        Note::Pipeline { pp } => format!(
            "Con paralelismo de tubería (calendario 1F1B), la primera etapa guarda {pp} microlotes en vuelo por {} de las capas: las activaciones por GPU son las de todo el modelo para un microlote.",
            if *pp == 2 {
                "la mitad".to_owned()
            } else {
                format!("1/{pp}")
            }
        ),
        Note::OffloadParamsNeedZero3 => if cli {
            "Pesos en la CPU: solo ZeRO-3 (--zero 3, o FSDP) puede dejarlos en la RAM; con esta etapa se ignora."
        } else {
            "Pesos en la CPU: solo ZeRO-3 (o FSDP) puede dejarlos en la RAM; con esta etapa se ignora."
        }
        .to_owned(),
        Note::Int8Checkpointing { bytes } => format!(
            "Con LLM.int8, el checkpointing debe ser el reentrante (el de transformers si no le pasas gradient_checkpointing_kwargs): con use_reentrant=False, bitsandbytes guarda la entrada de cada capa de 8 bits fuera de su alcance y el entrenamiento pediría {} más, no contados aquí.",
            ByteSize(*bytes).binary()
        ),
        Note::TorchtuneFsdp => if cli {
            "torchtune no tiene DDP: con varias GPU siempre reparte con FSDP, así que se calcula como ZeRO-3 (FSDP completo, su valor por defecto). Con fsdp_reshard_after_forward: False los pesos reunidos se quedan hasta el paso hacia atrás; eso es --zero 2."
        } else {
            "torchtune no tiene DDP: con varias GPU siempre reparte con FSDP, así que se calcula como ZeRO-3 (FSDP completo, su valor por defecto). Con fsdp_reshard_after_forward: False los pesos reunidos se quedan hasta el paso hacia atrás; eso es ZeRO-2."
        }
        .to_owned(),
        Note::TrainerEval {
            batch,
            peak,
            fits,
            kept,
            kept_fit,
        } => {
            let mut text = format!(
                "Al evaluar, Trainer usa per_device_eval_batch_size={batch} por defecto, no tu lote: la pérdida de ese lote sobre los logits pide {} además de pesos y optimizador.",
                ByteSize(*peak).binary()
            );
            match fits {
                Some(0) => text.push_str(
                    " No cabe ni una secuencia por lote junto a lo que queda fijo: evalúa con secuencias más cortas o desactiva la evaluación (eval_strategy=\"no\").",
                ),
                Some(n) if n < batch => text.push_str(&format!(
                    " Con esta GPU caben {n} por lote: pon per_device_eval_batch_size={n} o menos, o la evaluación dará OOM aunque el entrenamiento quepa."
                )),
                _ => {}
            }
            text.push_str(&format!(
                " Con compute_metrics, Trainer guarda además en la GPU los logits de cada secuencia evaluada ({} cada una y, al concatenar, el doble de lo acumulado) y, si no fijas eval_accumulation_steps, no los pasa a la CPU hasta el final",
                ByteSize(*kept).binary()
            ));
            match kept_fit {
                Some(0) => text.push_str(": no cabe ninguna"),
                Some(k) => text.push_str(&format!(": caben unas {}", crate::units::counted(*k, "secuencia", "secuencias"))),
                None => {}
            }
            text.push_str(". Redúcelos con preprocess_logits_for_metrics (por ejemplo, a su argmax), o pon eval_accumulation_steps=1, que los pasa a la RAM de la CPU en cada paso. Si el modelo tiene use_cache=True, la caché KV de cada lote de evaluación se suma.");
            text
        }
        Note::CpuOffload {
            bytes,
            gradients,
            params,
            whole_on_gpu,
        } => format!(
            "Con descarga a CPU, {} ocupan {} de RAM del sistema por GPU, no de VRAM.{}{}",
            match (params, gradients) {
                (true, _) => "los pesos, los estados del optimizador y los gradientes",
                (false, true) => "los estados del optimizador y las particiones de los gradientes",
                (false, false) => "los estados del optimizador",
            },
            ByteSize(*bytes),
            match (*gradients && !*params, whole_on_gpu) {
                (true, false) => {
                    " DeepSpeed acumula allí los gradientes, en FP32; en la GPU solo quedan los búferes por los que pasan."
                }
                (true, true) => {
                    " DeepSpeed acumula allí los gradientes, en FP32, pero con ZeRO-1 la GPU sigue guardando los de 16 bits enteros hasta el final del paso hacia atrás."
                }
                _ => "",
            },
            if *params {
                " La GPU solo reúne lo que está usando, y cada paso trae todos los pesos por el bus PCIe dos veces: es lento."
            } else {
                ""
            }
        ),
        Note::KbitFp32 { bytes, head } => {
            let mut text = format!(
                "QLoRA con transformers: prepare_model_for_kbit_training de PEFT (lo llama SFTTrainer de TRL) pasa a FP32 todo lo que no es de 4 bits, los embeddings, la cabeza y las normas: {} más, y con ellos el flujo residual y las entradas de capa que guarda el checkpointing. Unsloth y torchtune dejan esos parámetros en 16 bits.",
                ByteSize(*bytes).binary()
            );
            if *head > 0 {
                text.push_str(&format!(
                    " Además, autocast convierte la cabeza a 16 bits en cada paso (como no entrena, no guarda la conversión en su caché) y el producto conserva esa copia hasta su paso hacia atrás: {} más mientras se calcula la pérdida.",
                    ByteSize(*head).binary()
                ));
            }
            text
        }
        _ => String::new(),
    }
}
