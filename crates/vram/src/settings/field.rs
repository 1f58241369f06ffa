//! The table of settings: per field its canonical id, its CLI flag, its key in links
//! and widget attributes, its Spanish label and help, and how its text is read and
//! written. Everything that names a setting reads this table.

use super::choice::{
    self, ATTENTIONS, CUDA_GRAPHS, KV_DTYPES, LORA_TARGETS, LOSSES, OPTIMIZERS, PRECISIONS,
    RUNTIMES, TASKS, ZERO_STAGES,
};
use super::count::Bounds;
use super::{
    BASIS_POINTS, BATCH, BATCHED_TOKENS, BLOCK_SIZE, GPU_LAYERS, GPUS, LORA_RANK, NEW_TOKENS,
    RAM_GBS, SEQ, Surface, UBATCH, UTILIZATION,
};
use crate::workload::{Linear, Linears};

/// Every setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    Gpu,
    GpuMemory,
    Reserve,
    Task,
    Runtime,
    Format,
    Batch,
    Seq,
    NewTokens,
    Attention,
    Checkpointing,
    Optimizer,
    Precision,
    Loss,
    LoraRank,
    LoraTargets,
    KvDtype,
    GpuLayers,
    CpuMoe,
    Mmproj,
    Ubatch,
    RamBandwidth,
    Gpus,
    Zero,
    Tp,
    Pp,
    CpuOffload,
    OffloadParams,
    Serve,
    Utilization,
    BatchedTokens,
    MaxSeqs,
    CudaGraphs,
    BlockSize,
    CudaContext,
}

/// How one field is named in forms, links and sentences. What only the CLI and the
/// docs need (the canonical id, the flag, the help) is in [`Field::id`], [`Field::cli`]
/// and [`Field::help`], so the browser bundles do not carry it.
#[derive(Debug)]
pub struct Spec {
    pub field: Field,
    /// Key in the estimator's links and attribute of the widget: one Spanish name, so
    /// a link's query can be pasted as attributes.
    pub key: &'static str,
    /// Short Spanish label, as a form shows it.
    pub label: &'static str,
    /// The setting as a sentence names it, with its article ("el lote").
    pub subject: &'static str,
    /// Always written in links and embed codes, so they say what they show.
    pub core: bool,
}

const fn spec(
    field: Field,
    key: &'static str,
    label: &'static str,
    subject: &'static str,
    core: bool,
) -> Spec {
    Spec {
        field,
        key,
        label,
        subject,
        core,
    }
}

/// Every setting in the order forms, links and docs list them.
pub const FIELDS: &[Spec] = &[
    spec(Field::Gpu, "gpu", "GPU", "la GPU", true),
    spec(
        Field::GpuMemory,
        "memoria",
        "Memoria por GPU",
        "la memoria por GPU",
        false,
    ),
    spec(
        Field::Reserve,
        "reserva",
        "Memoria ya ocupada",
        "la memoria ya ocupada",
        false,
    ),
    spec(Field::Task, "modo", "Modo", "el modo", true),
    spec(Field::Runtime, "motor", "Motor", "el motor", false),
    spec(
        Field::Format,
        "formato",
        "Formato de los pesos",
        "el formato de los pesos",
        true,
    ),
    spec(Field::Batch, "lote", "Lote", "el lote", true),
    spec(
        Field::Seq,
        "contexto",
        "Tokens por secuencia",
        "el contexto",
        true,
    ),
    spec(
        Field::NewTokens,
        "nuevos",
        "Tokens generados",
        "el número de tokens generados",
        false,
    ),
    spec(
        Field::Attention,
        "atencion",
        "Atención",
        "la atención",
        false,
    ),
    spec(
        Field::Checkpointing,
        "checkpointing",
        "Gradient checkpointing",
        "el gradient checkpointing",
        false,
    ),
    spec(
        Field::Optimizer,
        "optimizador",
        "Optimizador (entrenamiento)",
        "el optimizador",
        false,
    ),
    spec(
        Field::Precision,
        "precision",
        "Precisión (entrenamiento completo)",
        "la precisión",
        false,
    ),
    spec(Field::Loss, "perdida", "Pérdida", "la pérdida", false),
    spec(
        Field::LoraRank,
        "rango",
        "Rango de LoRA",
        "el rango de LoRA",
        false,
    ),
    spec(
        Field::LoraTargets,
        "objetivos",
        "Capas con LoRA",
        "el conjunto de capas con LoRA",
        false,
    ),
    spec(
        Field::KvDtype,
        "kv",
        "Formato de la caché KV",
        "el formato de la caché KV",
        false,
    ),
    spec(
        Field::GpuLayers,
        "capas-gpu",
        "Capas en la GPU (llama.cpp)",
        "el número de capas en la GPU",
        false,
    ),
    spec(
        Field::CpuMoe,
        "expertos-cpu",
        "Capas con expertos en la CPU (llama.cpp)",
        "el número de capas con expertos en la CPU",
        false,
    ),
    spec(
        Field::Mmproj,
        "proyector",
        "Proyector de visión (llama.cpp, Ollama)",
        "el proyector de visión",
        false,
    ),
    spec(
        Field::Ubatch,
        "microlote",
        "Micro-lote (llama.cpp)",
        "el micro-lote",
        false,
    ),
    spec(
        Field::RamBandwidth,
        "ram-gbs",
        "Ancho de banda de la RAM, GB/s (llama.cpp)",
        "el ancho de banda de la RAM",
        false,
    ),
    spec(
        Field::Gpus,
        "gpus",
        "Número de GPU",
        "el número de GPU",
        false,
    ),
    spec(
        Field::Zero,
        "zero",
        "Reparto entre GPU (entrenamiento)",
        "la etapa de ZeRO",
        false,
    ),
    spec(
        Field::Tp,
        "tp",
        "Paralelismo tensorial",
        "el grado de paralelismo tensorial",
        false,
    ),
    spec(
        Field::Pp,
        "pp",
        "Paralelismo de tubería",
        "el grado de paralelismo de tubería",
        false,
    ),
    spec(
        Field::CpuOffload,
        "descarga",
        "Optimizador en la CPU",
        "la descarga a la CPU",
        false,
    ),
    spec(
        Field::OffloadParams,
        "pesos-cpu",
        "Pesos en la CPU (ZeRO-3)",
        "la descarga de los pesos",
        false,
    ),
    spec(
        Field::Serve,
        "servidor",
        "Servidor (caché KV estilo vLLM)",
        "el modo servidor",
        false,
    ),
    spec(
        Field::Utilization,
        "utilizacion",
        "Fracción de la GPU del servidor",
        "la fracción de la GPU",
        false,
    ),
    spec(
        Field::BatchedTokens,
        "tokens-por-paso",
        "Tokens por paso del servidor",
        "el número de tokens por paso",
        false,
    ),
    spec(
        Field::MaxSeqs,
        "secuencias-max",
        "Secuencias por paso del servidor",
        "el número de secuencias por paso",
        false,
    ),
    spec(
        Field::CudaGraphs,
        "grafos-cuda",
        "Grafos CUDA del servidor",
        "el modo de los grafos CUDA",
        false,
    ),
    spec(
        Field::BlockSize,
        "bloque",
        "Tokens por bloque",
        "el tamaño de bloque",
        false,
    ),
    spec(
        Field::CudaContext,
        "contexto-cuda",
        "Contexto CUDA",
        "el contexto CUDA",
        false,
    ),
];

impl Field {
    /// Every field, in table order.
    pub const ALL: &'static [Field] = &[
        Field::Gpu,
        Field::GpuMemory,
        Field::Reserve,
        Field::Task,
        Field::Runtime,
        Field::Format,
        Field::Batch,
        Field::Seq,
        Field::NewTokens,
        Field::Attention,
        Field::Checkpointing,
        Field::Optimizer,
        Field::Precision,
        Field::Loss,
        Field::LoraRank,
        Field::LoraTargets,
        Field::KvDtype,
        Field::GpuLayers,
        Field::CpuMoe,
        Field::Mmproj,
        Field::Ubatch,
        Field::RamBandwidth,
        Field::Gpus,
        Field::Zero,
        Field::Tp,
        Field::Pp,
        Field::CpuOffload,
        Field::OffloadParams,
        Field::Serve,
        Field::Utilization,
        Field::BatchedTokens,
        Field::MaxSeqs,
        Field::CudaGraphs,
        Field::BlockSize,
        Field::CudaContext,
    ];

    /// Canonical id: the CLI's JSON, the docs.
    pub fn id(self) -> &'static str {
        match self {
            Field::Gpu => "gpu",
            Field::GpuMemory => "gpu_memory",
            Field::Reserve => "reserve",
            Field::Task => "task",
            Field::Runtime => "runtime",
            Field::Format => "format",
            Field::Batch => "batch",
            Field::Seq => "seq",
            Field::NewTokens => "new_tokens",
            Field::Attention => "attention",
            Field::Checkpointing => "checkpointing",
            Field::Optimizer => "optimizer",
            Field::Precision => "precision",
            Field::Loss => "loss",
            Field::LoraRank => "lora_rank",
            Field::LoraTargets => "lora_targets",
            Field::KvDtype => "kv_dtype",
            Field::Gpus => "gpus",
            Field::Zero => "zero",
            Field::GpuLayers => "gpu_layers",
            Field::CpuMoe => "n_cpu_moe",
            Field::Mmproj => "mmproj",
            Field::Ubatch => "ubatch",
            Field::RamBandwidth => "ram_gbs",
            Field::Tp => "tp",
            Field::Pp => "pp",
            Field::CpuOffload => "cpu_offload",
            Field::OffloadParams => "offload_params",
            Field::Serve => "serve",
            Field::Utilization => "utilization",
            Field::BatchedTokens => "max_num_batched_tokens",
            Field::MaxSeqs => "max_num_seqs",
            Field::CudaGraphs => "cuda_graphs",
            Field::BlockSize => "block_size",
            Field::CudaContext => "cuda_context",
        }
    }

    /// `vramlab estimate --<cli>`.
    pub fn cli(self) -> &'static str {
        match self {
            Field::Gpu => "gpu",
            Field::GpuMemory => "gpu-memory",
            Field::Reserve => "reserve",
            Field::Task => "mode",
            Field::Runtime => "runtime",
            Field::Format => "dtype",
            Field::Batch => "batch",
            Field::Seq => "seq",
            Field::NewTokens => "new-tokens",
            Field::Attention => "attention",
            Field::Checkpointing => "grad-checkpointing",
            Field::Optimizer => "optimizer",
            Field::Precision => "precision",
            Field::Loss => "loss",
            Field::LoraRank => "lora-rank",
            Field::LoraTargets => "lora-targets",
            Field::KvDtype => "kv-dtype",
            Field::GpuLayers => "gpu-layers",
            Field::CpuMoe => "n-cpu-moe",
            Field::Mmproj => "mmproj",
            Field::Ubatch => "ubatch",
            Field::RamBandwidth => "ram-bandwidth",
            Field::Gpus => "gpus",
            Field::Zero => "zero",
            Field::Tp => "tp",
            Field::Pp => "pp",
            Field::CpuOffload => "cpu-offload",
            Field::OffloadParams => "offload-params",
            Field::Serve => "serve",
            Field::Utilization => "gpu-memory-utilization",
            Field::BatchedTokens => "max-num-batched-tokens",
            Field::MaxSeqs => "max-num-seqs",
            Field::CudaGraphs => "cuda-graphs",
            Field::BlockSize => "block-size",
            Field::CudaContext => "cuda-context",
        }
    }

    /// What it does, in Spanish (the CLI's help, the widget's docs).
    pub fn help(self) -> &'static str {
        match self {
            Field::Gpu => {
                "La tarjeta con la que se compara: da la memoria, el contexto CUDA y la velocidad."
            }
            Field::GpuMemory => {
                "Memoria de cada GPU (24GiB, 80GB…); manda sobre la de la GPU del catálogo."
            }
            Field::Reserve => {
                "Lo que ya ocupan en cada GPU la pantalla u otros procesos (nvidia-smi lo muestra antes de lanzar): se resta de la capacidad."
            }
            Field::Task => {
                "Qué se hace con el modelo: inferencia, entrenamiento completo, LoRA o QLoRA."
            }
            Field::Runtime => {
                "El software que ejecuta el trabajo: decide la precisión, cómo se calcula la pérdida, dónde van los adaptadores LoRA y si hay servidor."
            }
            Field::Loss => {
                "Cómo se calcula la pérdida sobre los logits: entera en FP32, por trozos de la salida o fusionada con la proyección."
            }
            Field::LoraTargets => {
                "Qué capas lineales llevan adaptadores LoRA: un conjunto habitual o tu lista de target_modules (q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj; también los nombres de torchtune: output_proj, w1, w2, w3, mlp; sin espacios, o entre comillas en la terminal)."
            }
            Field::Format => {
                "Cómo se guardan los pesos (en QLoRA, los del modelo base). «auto»: como el motor carga el checkpoint (bf16, o MXFP4/FP8/NVFP4 si así viene; para entrenar, bf16; en llama.cpp y Ollama, Q4_K_M o el MXFP4_MOE de gpt-oss)."
            }
            Field::Batch => "Secuencias procesadas a la vez.",
            Field::Seq => {
                "Tokens por secuencia (el prompt, o la secuencia de entrenamiento). «auto», lo que vLLM, llama.cpp y Ollama toman por defecto, es el contexto que abre el propio motor: vLLM, el del modelo (max_model_len); llama.cpp, el del modelo, que su ajuste automático (fit) baja hasta dejar 1 GiB libre (nunca por debajo de 4096); Ollama, 4096, 32 768 o 262 144 según la VRAM, sin pasar del del modelo."
            }
            Field::NewTokens => "Tokens que se generan tras el prompt (ocupan caché KV).",
            Field::Attention => {
                "Cómo se calcula la atención: SDPA/FlashAttention (memoria lineal) o ingenua (matriz N×N)."
            }
            Field::Checkpointing => {
                "Al entrenar, guarda solo la entrada de cada capa y recalcula el resto en el paso hacia atrás."
            }
            Field::Optimizer => "El optimizador y sus estados por parámetro entrenable.",
            Field::Precision => {
                "Cómo guarda el entrenamiento completo pesos, gradientes y estados. AMP (transformers 4: Trainer con bf16=True sobre pesos cargados en FP32): pesos, gradientes y estados en FP32 más una copia de 16 bits de cada peso. Mixta (DeepSpeed, Megatron): pesos y gradientes de 16 bits con copia maestra y estados en FP32. Pura (transformers 5 sobre un checkpoint bf16, torchtune): todo en el formato de los pesos."
            }
            Field::LoraRank => "El rango r de los adaptadores LoRA.",
            Field::KvDtype => "Cómo se guarda la caché KV en inferencia.",
            Field::Gpus => {
                "Cuántas GPU iguales: la inferencia reparte con paralelismo tensorial (llama.cpp y Ollama, capas enteras) y el entrenamiento con ZeRO o FSDP."
            }
            Field::Zero => {
                "Etapa de ZeRO al entrenar en varias GPU: 0 (copia entera en cada una), 1, 2 o 3 (FSDP)."
            }
            Field::GpuLayers => {
                "Cuántas capas sube llama.cpp a la GPU (-ngl, --n-gpu-layers): desde diciembre de 2025 la primera es la de salida y después las últimas del modelo (-ngl 20 son la de salida y 19 más); las demás y su caché KV se quedan en la RAM de la CPU, y la generación va más lenta. «todas» las sube todas. «auto», lo que llama.cpp y Ollama hacen si no se lo pides (-ngl -1), es su ajuste automático (fit): todas si dejan 1 GiB libre; si no, las que quepan dejando ese margen (en un MoE, primero los expertos a la CPU)."
            }
            Field::CpuMoe => {
                "Modelos MoE en llama.cpp (--n-cpu-moe N): los expertos de las primeras N capas se quedan en la RAM de la CPU y el resto de cada capa (atención, caché KV, expertos compartidos) en la GPU; «todas» es --cpu-moe. Libera mucha memoria de la GPU a cambio de leer esos expertos desde la RAM en cada token."
            }
            Field::Mmproj => {
                "Modelos multimodales en llama.cpp (--mmproj) y Ollama: carga el proyector de visión, cuyos pesos y el búfer para codificar una imagen van a la GPU sea cual sea -ngl. Ollama lo carga siempre que el modelo lo trae (gemma3 lo trae); llama.cpp solo si le das el archivo. Sin efecto en modelos sin torre de visión."
            }
            Field::RamBandwidth => {
                "Ancho de banda de pico de la RAM de la CPU, en GB/s (80 por defecto: DDR5 de doble canal; DDR4-3200 de doble canal, 51; un servidor con 8 canales de DDR5-4800, 307). Con capas o expertos en la RAM, cada token generado los lee a esa velocidad: solo cambia la velocidad estimada, no la memoria."
            }
            Field::Ubatch => {
                "Tokens que llama.cpp procesa de una vez al leer el prompt (-ub, --ubatch-size; 512 por defecto): su búfer de cómputo crece con él. llama.cpp no lo deja pasar de -b (--batch-size, 2048 por defecto) ni del contexto: para un -ub mayor que 2048, sube también -b."
            }
            Field::Tp => {
                "En cuántas GPU se parte cada capa; «auto» usa todas en inferencia y ninguna al entrenar. llama.cpp y Ollama no parten capas: reparten capas enteras entre las GPU."
            }
            Field::Pp => "En cuántas etapas se reparten las capas.",
            Field::CpuOffload => {
                "ZeRO-Offload: los estados del optimizador y la copia maestra viven en la RAM de la CPU; con DeepSpeed (ZeRO-2 y 3), también las particiones de los gradientes."
            }
            Field::OffloadParams => {
                "Con ZeRO-3, también los pesos viven en la RAM (offload_param de DeepSpeed, CPUOffload(offload_params=True) de FSDP): la GPU solo reúne lo que está usando. Implica la descarga del optimizador y de los gradientes."
            }
            Field::Serve => {
                "Planifica un servidor como vLLM: cuántos tokens de caché KV y cuántas secuencias a la vez caben."
            }
            Field::Utilization => {
                "La fracción de la memoria que toma el servidor (gpu_memory_utilization de vLLM): 0.9 o 90%."
            }
            Field::BatchedTokens => {
                "Tokens que el servidor procesa en un paso (max_num_batched_tokens de vLLM): su pasada de perfil al arrancar los usa todos, y su pico se resta de la caché KV. «auto» toma el valor por defecto de vLLM V1 en esa GPU (8192 en las de 70 GiB o más que no son A100; 2048 en las demás); el motor V0 sin prellenado por trozos usaba max(max_model_len, 2048)."
            }
            Field::MaxSeqs => {
                "Secuencias que el servidor atiende en un paso (max_num_seqs de vLLM): al arrancar, su muestreador de prueba saca logits de todo el vocabulario para cada una, y con vocabularios grandes ese es el pico que se resta de la caché KV. «auto» toma el de vLLM V1 en esa GPU (1024 en las de 70 GiB o más que no son A100; 256 en las demás)."
            }
            Field::CudaGraphs => {
                "De dónde sacan su memoria los grafos CUDA que vLLM captura al arrancar (unos 0,5-2 GiB según las capas). Desde la 0.21, vLLM los estima y los descuenta de la caché KV; hasta la 0.20 (o con VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0) los capturaba después, por encima de gpu_memory_utilization, y con una fracción cercana a 1 se quedaba sin memoria al capturarlos; --enforce-eager no captura ninguno."
            }
            Field::BlockSize => "Tokens por bloque de la caché KV paginada.",
            Field::CudaContext => {
                "Memoria del contexto CUDA por GPU; por defecto, la de la familia de la GPU. Mídela con nvidia-smi mientras corre el trabajo."
            }
        }
    }

    pub fn spec(self) -> &'static Spec {
        FIELDS
            .iter()
            .find(|s| s.field == self)
            .unwrap_or(&FIELDS[0])
    }

    /// The field whose web key is `key`.
    pub fn by_key(key: &str) -> Option<Field> {
        FIELDS.iter().find(|s| s.key == key).map(|s| s.field)
    }

    /// What the field accepts, in Spanish, for docs and help ("un entero entre 1 y …").
    pub fn accepts(self, surface: Surface) -> String {
        let web = surface == Surface::Web;
        match self {
            Field::Gpu => "el id de una GPU del catálogo (rtx-4090, a100-80gb, h100-sxm…)".into(),
            Field::GpuMemory | Field::CudaContext | Field::Reserve => {
                "un tamaño: 24GiB, 80GB, 512MiB (KB, MB y GB son potencias de 1000)".into()
            }
            Field::Task => choice::spellings(TASKS, web),
            Field::Format => "auto, bf16, fp16, fp32, fp8, fp8-block, mxfp4, nvfp4, int8, nf4, nf4-dq, gptq-4bit-128g, awq, Q4_K_M, MXFP4_MOE, Q8_0, 4.65bpw…".into(),
            Field::Attention => choice::spellings(ATTENTIONS, web),
            Field::Optimizer => choice::spellings(OPTIMIZERS, web),
            Field::Precision => choice::spellings(PRECISIONS, web),
            Field::Runtime => choice::spellings(RUNTIMES, web),
            Field::Loss => choice::spellings(LOSSES, web),
            Field::LoraTargets => format!(
                "{}, o módulos separados por comas ({})",
                choice::spellings(LORA_TARGETS, web),
                Linears::of(&Linear::ALL).names()
            ),
            Field::CudaGraphs => choice::spellings(CUDA_GRAPHS, web),
            Field::KvDtype => choice::spellings(KV_DTYPES, web),
            Field::Zero => choice::spellings(ZERO_STAGES, web),
            Field::Checkpointing
            | Field::CpuOffload
            | Field::OffloadParams
            | Field::Serve
            | Field::Mmproj => {
                if web { "si o no" } else { "true o false" }.into()
            }
            Field::Utilization => format!(
                "una fracción entre {} y 1, con hasta cuatro decimales (o un porcentaje: 90%)",
                print_fraction(UTILIZATION.0)
            ),
            Field::Tp => format!("auto o {}", GPUS.describe()),
            Field::GpuLayers => format!("auto, todas o {}", GPU_LAYERS.describe()),
            Field::CpuMoe => format!("todas o {}", GPU_LAYERS.describe()),
            Field::Seq => format!("auto (vLLM, llama.cpp, Ollama) o {}", SEQ.describe()),
            Field::BatchedTokens => format!("auto o {}", BATCHED_TOKENS.describe()),
            Field::MaxSeqs => format!("auto o {}", BATCH.describe()),
            _ => self.bounds().map(Bounds::describe).unwrap_or_default(),
        }
    }

    /// Bounds of a counted field.
    pub fn bounds(self) -> Option<Bounds> {
        match self {
            Field::Batch => Some(BATCH),
            Field::Seq => Some(SEQ),
            Field::NewTokens => Some(NEW_TOKENS),
            Field::LoraRank => Some(LORA_RANK),
            Field::Gpus | Field::Tp | Field::Pp => Some(GPUS),
            Field::BlockSize => Some(BLOCK_SIZE),
            Field::GpuLayers | Field::CpuMoe => Some(GPU_LAYERS),
            Field::Ubatch => Some(UBATCH),
            Field::RamBandwidth => Some(RAM_GBS),
            Field::BatchedTokens => Some(BATCHED_TOKENS),
            Field::MaxSeqs => Some(BATCH),
            _ => None,
        }
    }
}

/// 9000 → "0.9", 9764 → "0.9764", 10 000 → "1": the fraction vLLM's flag takes.
pub(super) fn print_fraction(bp: u16) -> String {
    if bp >= BASIS_POINTS {
        return "1".into();
    }
    let digits = format!("{bp:04}");
    format!("0.{}", digits.trim_end_matches('0'))
}
