//! The table of settings: per field its canonical id, its CLI flag, its key in links
//! and widget attributes, its Spanish label and help, and how its text is read and
//! written. Everything that names a setting reads this table.

use std::fmt;

use super::choice::{
    self, ATTENTIONS, CUDA_GRAPHS, Choice, KV_DTYPES, LORA_TARGETS, LOSSES, OPTIMIZERS, PRECISIONS,
    RUNTIMES, TASKS, ZERO_STAGES,
};
use super::count::{Bounds, CountProblem};
use super::{
    BASIS_POINTS, BATCH, BATCHED_TOKENS, BLOCK_SIZE, CPU_MOE_ALL, GPU_LAYERS, GPU_LAYERS_ALL, GPUS,
    LORA_RANK, NEW_TOKENS, RAM_GBS, SEQ, Settings, Surface, UBATCH, UTILIZATION,
};
use crate::catalog;
use crate::quant::WeightFormat;
use crate::units::{ByteSize, clip};
use crate::workload::{Linear, Linears, LoraTargets};

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
            Field::Format => "Cómo se guardan los pesos (en QLoRA, los del modelo base).",
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
                "Cómo guarda el entrenamiento completo pesos, gradientes y estados. AMP (autocast de Trainer con bf16=True): pesos, gradientes y estados en FP32 más una copia de 16 bits de cada peso. Mixta (DeepSpeed, Megatron): pesos y gradientes de 16 bits con copia maestra y estados en FP32. Pura (torchtune): todo en el formato de los pesos."
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
            Field::Format => "bf16, fp16, fp32, fp8, int8, nf4, nf4-dq, gptq-4bit-128g, awq, Q4_K_M, Q8_0, 4.65bpw…".into(),
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

/// Why a value was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// A count that is empty, not whole or out of bounds.
    Count(CountProblem),
    /// Not one of a closed list's spellings.
    Unknown,
    /// Not in the catalog.
    NotInCatalog,
    /// Another parser's Spanish message (sizes, formats).
    Invalid(String),
}

/// A setting that could not be read. `Display` is one Spanish sentence that names the
/// setting and what it accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingError {
    pub field: Field,
    /// The text refused, clipped for echoing.
    pub input: String,
    pub problem: Problem,
    pub surface: Surface,
}

/// "El lote" from "el lote". ASCII only (every subject starts with an ASCII letter):
/// Unicode case tables would cost the browser bundles kilobytes.
fn capitalised(s: &str) -> String {
    let mut out = s.to_owned();
    if let Some(first) = out.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    out
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let spec = self.field.spec();
        let accepts = self.field.accepts(self.surface);
        let subject = capitalised(spec.subject);
        match &self.problem {
            Problem::Count(CountProblem::Empty) => {
                write!(f, "Escribe {}: {accepts}.", spec.subject)
            }
            Problem::Count(_) => write!(
                f,
                "{subject} debe ser {accepts}; «{}» no lo es.",
                self.input
            ),
            Problem::Unknown => write!(f, "{subject} «{}» no existe; usa {accepts}.", self.input),
            Problem::NotInCatalog => match self.surface {
                Surface::Cli => write!(
                    f,
                    "no hay ninguna GPU «{}» en el catálogo (mira «vramlab gpus»)",
                    self.input
                ),
                Surface::Web => write!(f, "No hay ninguna GPU «{}» en el catálogo.", self.input),
            },
            Problem::Invalid(message) => write!(f, "{}: {message}", spec.label),
        }
    }
}

impl std::error::Error for SettingError {}

fn pick<T: Copy>(list: &'static [Choice<T>], input: &str) -> Result<T, Problem> {
    choice::find(list, input).ok_or(Problem::Unknown)
}

fn switch(input: &str) -> Result<bool, Problem> {
    let t = input.trim();
    let is = |words: &[&str]| words.iter().any(|w| w.eq_ignore_ascii_case(t));
    if is(&["si", "sí", "SÍ", "true", "1", "yes", "on"]) {
        Ok(true)
    } else if is(&["no", "false", "0", "off"]) {
        Ok(false)
    } else {
        Err(Problem::Unknown)
    }
}

fn count(f: Field, input: &str) -> Result<u64, Problem> {
    f.bounds()
        .ok_or(Problem::Unknown)?
        .parse(input)
        .map_err(Problem::Count)
}

fn small(f: Field, input: &str) -> Result<u32, Problem> {
    // Every u32 field's bounds are within u32.
    count(f, input).map(|v| u32::try_from(v).unwrap_or(u32::MAX))
}

fn size(input: &str, min: u64) -> Result<u64, Problem> {
    match ByteSize::parse(input) {
        Ok(ByteSize(b)) if b >= min => Ok(b),
        Ok(_) => Err(Problem::Invalid("debe ser mayor que 0.".into())),
        Err(e) => Err(Problem::Invalid(e.to_string())),
    }
}

fn auto(input: &str) -> bool {
    input.trim().eq_ignore_ascii_case("auto")
}

/// "todas" (or "all", or -1): every layer (and, for `-ngl`, the output). For `-ngl`,
/// llama.cpp's -1 is its automatic placement and is read as `auto` first.
fn all_layers(input: &str) -> bool {
    let t = input.trim();
    ["todas", "all", "-1"]
        .iter()
        .any(|w| t.eq_ignore_ascii_case(w))
}

/// "0.9", "90%" or "90" → 9000 basis points, in exact decimal arithmetic: a fraction
/// has up to four decimals (vLLM takes any float; 0.9764 is the finest seen in logs), a
/// percentage up to two.
fn fraction(input: &str) -> Result<u16, Problem> {
    let t = input.trim();
    let (number, is_percent) = match t.strip_suffix('%') {
        Some(p) => (p.trim(), true),
        None => (t, false),
    };
    let d = crate::units::parse_decimal(number, false)
        .map_err(|_| Problem::Count(CountProblem::NotWhole))?;
    // A number above 1 is already a percentage.
    let above_one = d
        .times(1)
        .is_none_or(|(v, inexact)| v > 1 || (v == 1 && inexact));
    let factor = if is_percent || above_one {
        BASIS_POINTS / 100
    } else {
        BASIS_POINTS
    };
    let (v, inexact) = d
        .times(u128::from(factor))
        .ok_or(Problem::Count(CountProblem::OutOfRange))?;
    if inexact {
        return Err(Problem::Count(CountProblem::NotWhole));
    }
    match u16::try_from(v) {
        Ok(p) if (UTILIZATION.0..=UTILIZATION.1).contains(&p) => Ok(p),
        _ => Err(Problem::Count(CountProblem::OutOfRange)),
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

/// "24GiB" when whole GiB, "500MiB" when whole MiB, else bytes.
fn print_size(b: u64) -> String {
    if b > 0 && b.is_multiple_of(ByteSize::GIB) {
        format!("{}GiB", b / ByteSize::GIB)
    } else if b > 0 && b.is_multiple_of(ByteSize::MIB) {
        format!("{}MiB", b / ByteSize::MIB)
    } else {
        b.to_string()
    }
}

fn print_choice<T: Copy + PartialEq>(list: &'static [Choice<T>], v: T, s: Surface) -> String {
    let c = choice::entry(list, v);
    match s {
        Surface::Cli => c.id,
        Surface::Web => c.web,
    }
    .to_owned()
}

fn print_switch(on: bool, s: Surface) -> String {
    match (s, on) {
        (Surface::Cli, true) => "true",
        (Surface::Cli, false) => "false",
        (Surface::Web, true) => "si",
        (Surface::Web, false) => "no",
    }
    .to_owned()
}

pub(super) fn text(s: &Settings, f: Field, surface: Surface) -> Option<String> {
    // Links and attributes write tokens as people do ("8k"); the CLI and its JSON
    // write plain numbers.
    let bounds = f.bounds().filter(|_| surface == Surface::Web);
    let n = |v: u64| bounds.map_or_else(|| v.to_string(), |b| b.print(v));
    Some(match f {
        Field::Gpu => s.gpu?.id.clone(),
        Field::GpuMemory => print_size(s.gpu_memory?),
        Field::Reserve => print_size(s.reserve),
        Field::Task => print_choice(TASKS, s.task, surface),
        Field::Format => s.format.id(),
        Field::Batch => n(s.batch),
        Field::Seq => s.seq.map_or_else(|| "auto".to_owned(), n),
        Field::NewTokens => n(s.new_tokens),
        Field::Attention => print_choice(ATTENTIONS, s.attention, surface),
        Field::Checkpointing => print_switch(s.checkpointing, surface),
        Field::Optimizer => print_choice(OPTIMIZERS, s.optimizer, surface),
        Field::Precision => print_choice(PRECISIONS, s.precision, surface),
        Field::Runtime => print_choice(RUNTIMES, s.runtime, surface),
        Field::Loss => print_choice(LOSSES, s.loss, surface),
        Field::LoraTargets => match s.lora_targets {
            LoraTargets::Modules(set)
                if !LORA_TARGETS.iter().any(|c| c.value == s.lora_targets) =>
            {
                set.names()
            }
            targets => print_choice(LORA_TARGETS, targets, surface),
        },
        Field::LoraRank => n(u64::from(s.lora_rank)),
        Field::KvDtype => print_choice(KV_DTYPES, s.kv_dtype, surface),
        Field::Gpus => n(u64::from(s.gpus)),
        Field::Zero => print_choice(ZERO_STAGES, s.zero, surface),
        Field::Tp => n(u64::from(s.tp?)),
        Field::GpuLayers => match s.gpu_layers {
            None => "auto".to_owned(),
            Some(GPU_LAYERS_ALL) if surface == Surface::Web => "todas".to_owned(),
            Some(GPU_LAYERS_ALL) => "all".to_owned(),
            Some(l) => n(u64::from(l)),
        },
        Field::CpuMoe if s.cpu_moe == CPU_MOE_ALL => if surface == Surface::Web {
            "todas"
        } else {
            "all"
        }
        .to_owned(),
        Field::CpuMoe => n(u64::from(s.cpu_moe)),
        Field::Ubatch => n(u64::from(s.ubatch)),
        Field::RamBandwidth => n(u64::from(s.ram_gbs)),
        Field::Pp => n(u64::from(s.pp)),
        Field::CpuOffload => print_switch(s.cpu_offload, surface),
        Field::OffloadParams => print_switch(s.offload_params, surface),
        Field::Serve => print_switch(s.serve, surface),
        Field::Mmproj => print_switch(s.mmproj, surface),
        Field::Utilization => print_fraction(s.utilization),
        Field::BatchedTokens => n(s.batched_tokens?),
        Field::MaxSeqs => n(s.max_seqs?),
        Field::CudaGraphs => print_choice(CUDA_GRAPHS, s.cuda_graphs, surface),
        Field::BlockSize => n(u64::from(s.block_size)),
        Field::CudaContext => print_size(s.cuda_context?),
    })
}

pub(super) fn set(
    s: &mut Settings,
    f: Field,
    input: &str,
    surface: Surface,
) -> Result<(), SettingError> {
    let fail = |problem| SettingError {
        field: f,
        input: clip(input),
        problem,
        surface,
    };
    if input.trim().is_empty() {
        return Err(fail(Problem::Count(CountProblem::Empty)));
    }
    let result: Result<(), Problem> = (|| {
        match f {
            Field::Gpu => s.gpu = Some(catalog::gpu(input.trim()).ok_or(Problem::NotInCatalog)?),
            Field::GpuMemory => s.gpu_memory = Some(size(input, 1)?),
            Field::Reserve => s.reserve = size(input, 0)?,
            Field::Task => s.task = pick(TASKS, input)?,
            Field::Format => {
                s.format =
                    WeightFormat::parse(input).map_err(|e| Problem::Invalid(e.to_string()))?;
            }
            Field::Batch => s.batch = count(f, input)?,
            Field::Seq if auto(input) => {
                if s.task.is_training() || !crate::default_context::opens_context(s.runtime) {
                    return Err(Problem::Invalid(
                        "«auto» solo vale para inferencia con vLLM, llama.cpp u Ollama, que eligen el contexto por su cuenta."
                            .to_owned(),
                    ));
                }
                s.seq = None;
            }
            Field::Seq => s.seq = Some(count(f, input)?),
            Field::NewTokens => s.new_tokens = count(f, input)?,
            Field::Attention => s.attention = pick(ATTENTIONS, input)?,
            Field::Checkpointing => s.checkpointing = switch(input)?,
            Field::Optimizer => s.optimizer = pick(OPTIMIZERS, input)?,
            Field::Precision => s.precision = pick(PRECISIONS, input)?,
            Field::Runtime => {
                let r = pick(RUNTIMES, input)?;
                if !r.runs(s.task) {
                    return Err(Problem::Invalid(format!(
                        "{} no sirve para {}.",
                        choice::entry(RUNTIMES, r).label,
                        if s.task.is_training() {
                            "entrenar"
                        } else {
                            "inferencia"
                        }
                    )));
                }
                s.runtime = r;
            }
            Field::Loss => s.loss = pick(LOSSES, input)?,
            Field::LoraTargets => {
                s.lora_targets = pick(LORA_TARGETS, input)
                    .or_else(|e| Linears::parse(input).map(LoraTargets::Modules).ok_or(e))?
            }
            Field::LoraRank => s.lora_rank = small(f, input)?,
            Field::KvDtype => s.kv_dtype = pick(KV_DTYPES, input)?,
            Field::Gpus => s.gpus = small(f, input)?,
            Field::Zero => s.zero = pick(ZERO_STAGES, input)?,
            // llama.cpp's `-ngl -1` is its automatic placement, as `auto`.
            Field::GpuLayers if auto(input) || input.trim() == "-1" => s.gpu_layers = None,
            Field::GpuLayers if all_layers(input) => s.gpu_layers = Some(GPU_LAYERS_ALL),
            Field::GpuLayers => s.gpu_layers = Some(small(f, input)?),
            Field::CpuMoe if all_layers(input) => s.cpu_moe = CPU_MOE_ALL,
            Field::CpuMoe => s.cpu_moe = small(f, input)?,
            Field::Ubatch => s.ubatch = small(f, input)?,
            Field::RamBandwidth => s.ram_gbs = small(f, input)?,
            Field::Tp if auto(input) => s.tp = None,
            Field::Tp => s.tp = Some(small(f, input)?),
            Field::Pp => s.pp = small(f, input)?,
            Field::CpuOffload => s.cpu_offload = switch(input)?,
            Field::OffloadParams => s.offload_params = switch(input)?,
            Field::Serve => s.serve = switch(input)?,
            Field::Mmproj => s.mmproj = switch(input)?,
            Field::Utilization => s.utilization = fraction(input)?,
            Field::BatchedTokens if auto(input) => s.batched_tokens = None,
            Field::BatchedTokens => s.batched_tokens = Some(count(f, input)?),
            Field::MaxSeqs if auto(input) => s.max_seqs = None,
            Field::MaxSeqs => s.max_seqs = Some(count(f, input)?),
            Field::CudaGraphs => s.cuda_graphs = pick(CUDA_GRAPHS, input)?,
            Field::BlockSize => s.block_size = small(f, input)?,
            Field::CudaContext if auto(input) => s.cuda_context = None,
            Field::CudaContext => s.cuda_context = Some(size(input, 0)?),
        }
        Ok(())
    })();
    result.map_err(fail)
}

/// Whether `a` and `b` agree on `f`.
pub(super) fn same(a: &Settings, b: &Settings, f: Field) -> bool {
    // The canonical text is a faithful image of every typed value.
    text(a, f, Surface::Cli) == text(b, f, Surface::Cli)
}

/// Copies `f` from `from` into `to`.
pub(super) fn copy(to: &mut Settings, from: &Settings, f: Field) {
    match f {
        Field::Gpu => to.gpu = from.gpu,
        Field::GpuMemory => to.gpu_memory = from.gpu_memory,
        Field::Reserve => to.reserve = from.reserve,
        Field::Task => to.task = from.task,
        Field::Format => to.format = from.format,
        Field::Batch => to.batch = from.batch,
        Field::Seq => to.seq = from.seq,
        Field::NewTokens => to.new_tokens = from.new_tokens,
        Field::Attention => to.attention = from.attention,
        Field::Checkpointing => to.checkpointing = from.checkpointing,
        Field::Optimizer => to.optimizer = from.optimizer,
        Field::Precision => to.precision = from.precision,
        Field::Runtime => to.runtime = from.runtime,
        Field::Loss => to.loss = from.loss,
        Field::LoraTargets => to.lora_targets = from.lora_targets,
        Field::LoraRank => to.lora_rank = from.lora_rank,
        Field::KvDtype => to.kv_dtype = from.kv_dtype,
        Field::Gpus => to.gpus = from.gpus,
        Field::Zero => to.zero = from.zero,
        Field::Tp => to.tp = from.tp,
        Field::Pp => to.pp = from.pp,
        Field::CpuOffload => to.cpu_offload = from.cpu_offload,
        Field::OffloadParams => to.offload_params = from.offload_params,
        Field::Serve => to.serve = from.serve,
        Field::Mmproj => to.mmproj = from.mmproj,
        Field::Utilization => to.utilization = from.utilization,
        Field::BatchedTokens => to.batched_tokens = from.batched_tokens,
        Field::MaxSeqs => to.max_seqs = from.max_seqs,
        Field::CudaGraphs => to.cuda_graphs = from.cuda_graphs,
        Field::BlockSize => to.block_size = from.block_size,
        Field::CudaContext => to.cuda_context = from.cuda_context,
        Field::GpuLayers => to.gpu_layers = from.gpu_layers,
        Field::CpuMoe => to.cpu_moe = from.cpu_moe,
        Field::Ubatch => to.ubatch = from.ubatch,
        Field::RamBandwidth => to.ram_gbs = from.ram_gbs,
    }
}
