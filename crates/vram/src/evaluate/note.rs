//! What the estimate assumed or could not do, as typed values. Each front end words
//! them for its readers with [`Note::text`]: the CLI may name its flags, the web never
//! does. Building notes costs nothing in the solvers, which never ask for them.

use crate::band::Band;
use crate::settings::Surface;
use crate::units::{ByteSize, group_digits};
use crate::workload::{LoraTargets, Loss, Precision};

/// Where a checkpoint's vision tower goes ([`Note::VisionTower`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TowerPlace {
    /// Loaded with the model by a PyTorch engine, and counted in the weights.
    Loaded,
    /// A ggml runtime without `--mmproj`: only from a separate projector file; not
    /// counted.
    Projector,
    /// A ggml runtime with `--mmproj` (Ollama's default): weights and the image
    /// compute buffer counted on the GPU.
    ProjectorLoaded,
    /// LoRA or QLoRA: loaded and frozen with the base, counted in the weights.
    Frozen,
    /// Full fine-tuning: trained with the rest unless the script freezes it; counted.
    Trained,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Note {
    /// How far published runs of this runtime and phase were from the estimate.
    Band {
        runtime: &'static str,
        training: bool,
        /// The verdict is about serving capacity (tokens), not memory.
        serving: bool,
        band: Band,
    },
    /// What the runtime keeps beyond the model, as estimated (training).
    Runtime {
        runtime: &'static str,
        precision: Option<Precision>,
        loss: Loss,
        targets: Option<LoraTargets>,
        offload: bool,
    },
    /// The capacity compared with: what the catalog GPU's driver gives PyTorch, less
    /// what the display and other processes hold.
    Capacity {
        gpu: String,
        usable: u64,
        nominal: u64,
        source: String,
        reserve: u64,
    },
    /// The context Ollama opens a model with on this much VRAM when nothing says
    /// otherwise, beside the one given (both with the generated tokens).
    OllamaContext { vram: u64, default: u64, seq: u64 },
    /// Automatic layers (`-ngl auto`): where llama.cpp's `--fit` put them because the
    /// whole model did not leave 1 GiB free. `gpu_layers` is `-ngl` (`None`: all of
    /// them), `cpu_moe` the layers whose experts went to the CPU.
    FittedLayers {
        gpu_layers: Option<u32>,
        layers: u32,
        cpu_moe: u32,
        /// llama.cpp itself, whose flags can say the same (Ollama's cannot).
        llama_cpp: bool,
        /// `-ngl` counts the output layer first (`estimate::ggml_placement`).
        output_first: bool,
    },
    /// An automatic context (`--seq auto`): the one the runtime opens, and why.
    OpenedContext {
        opened: crate::default_context::Opened,
        new_tokens: u64,
    },
    /// What vLLM's start-up profile ran and the peak it subtracts before sizing the KV
    /// cache.
    ServingProfile {
        tokens: u64,
        sequences: u64,
        bytes: u64,
        /// Whether `tokens` and `sequences` are the reader's `max_num_batched_tokens` and
        /// `max_num_seqs` (not vLLM's defaults for the GPU).
        chosen_tokens: bool,
        chosen_sequences: bool,
        /// Several GPUs: the whole estimated overhead stands in for vLLM's non-PyTorch
        /// growth (`serving::non_torch_growth`).
        several_gpus: bool,
    },
    /// vLLM's CUDA graphs: how many batch sizes it captures, their memory, and where
    /// it comes from.
    CudaGraphs {
        mode: crate::cuda_graphs::CudaGraphs,
        captures: crate::cuda_graphs::Captures,
        bytes: u64,
        /// Mixture-of-experts or MLA layers, whose graphs vLLM measured up to twice the
        /// dense estimate.
        sparse: bool,
    },
    /// A multimodal checkpoint's vision tower and projector, and whether the weights
    /// count it.
    VisionTower {
        bytes: u64,
        place: TowerPlace,
        /// A ggml runtime's image compute buffer (0 elsewhere).
        compute: u64,
    },
    /// The dummy images vLLM's start-up profile encodes for a multimodal checkpoint.
    VisionEncoder {
        images: u64,
        /// Pixels and encoder outputs alive through the rest of the profile.
        alive: u64,
    },
    /// How llama.cpp (or Ollama) lays out inference memory.
    Ggml {
        runtime: &'static str,
        /// `-ngl`: layers + 1 means all of them and the output.
        ngl: u32,
        /// Repeating layers on the GPU and whether the output layer is there
        /// (`estimate::ggml_placement`).
        placement: (u32, bool),
        layers: u32,
        /// Bytes in CPU RAM.
        host: u64,
        cells: u64,
        /// Cells of the sliding-window layers (`estimate::ggml_swa_cells`) and the
        /// slots sharing one pool (0: a stream per sequence); `None` without windows.
        swa: Option<(u64, u32)>,
        flash: bool,
        compute: u64,
        embeddings_on_cpu: u64,
        /// The micro-batch the compute buffer is sized for (`-ub`).
        ubatch: u64,
    },
    /// llama.cpp's `--n-cpu-moe`: routed experts kept in CPU RAM.
    CpuExperts {
        /// Layers whose experts stay in CPU RAM.
        layers: u32,
        /// The `--n-cpu-moe` asked for, or that `--fit` chose
        /// ([`crate::settings::CPU_MOE_ALL`]: `--cpu-moe`); `None` where no flag says it
        /// (Ollama, whose llama-server chose it).
        asked: Option<u32>,
        bytes: u64,
        /// Expert bytes the CPU reads per generated token: the routed experts a token
        /// uses in those layers.
        per_token: u64,
        /// Bytes the compute buffer holds for the expert matmuls offloaded to the GPU
        /// during prompt processing (0 when the micro-batch is too small).
        copies: u64,
        /// The RAM bandwidth the bound uses, GB/s.
        ram_gbs: u32,
    },
    /// PyTorch FSDP keeps its root unit and the layer it works on whole
    /// (`estimate::fsdp_unsharded`).
    FsdpUnsharded { root: u64, layer: u64 },
    /// The context asked for passes the model's own (`max_position_embeddings`, or the
    /// GGUF's `context_length`). vLLM refuses to start then; the others run, with
    /// positions the model never saw.
    BeyondTrainedContext {
        asked: u64,
        trained: u64,
        vllm: bool,
    },
    /// Tensor parallelism that does not divide the attention heads: vLLM refuses to
    /// start ("Total number of attention heads … must be divisible by tensor parallel
    /// size").
    TpHeads { heads: u32, tp: u32 },
    /// NCCL's buffers for the tensor- and data-parallel groups, counted in the overhead.
    Communication { bytes: u64 },
    /// PyTorch DDP's gradient buckets, a second copy of the gradients
    /// (`estimate::grad_sync`).
    DdpBuckets { bytes: u64 },
    /// DeepSpeed ZeRO's reduce bucket and, at stage 3, the largest module gathered
    /// whole (`estimate::grad_sync`).
    DeepspeedBuffers {
        /// `estimate::grad_sync`'s account.
        sync: crate::estimate::GradSync,
        /// The reduce bucket at DeepSpeed's own default size.
        default_bucket: u64,
    },
    /// Ollama keeps a model that takes at most 80 % of one GPU on that GPU alone.
    OllamaOneGpu { gpus: u32 },
    /// llama.cpp or Ollama on several GPUs: how they deal the layers, and what running
    /// them as a pipeline adds to each GPU.
    LayerSplit {
        runtime: &'static str,
        gpus: u32,
        /// Layers on the first GPU and on the last (which also holds the output layer
        /// when every layer is on the GPUs).
        first: u32,
        last: u32,
        /// Whether the output layer is on the last GPU too.
        output: bool,
        /// As a pipeline: what the extra copies of each GPU's inputs add beyond one.
        pipeline: Option<u64>,
    },
    /// The CUDA context came from the GPU family's default.
    CudaContext {
        bytes: u64,
        gpu: String,
        basis: &'static str,
    },
    /// A parameter total was given and differs from the architecture's.
    TotalParams { given: u64, derived: u64 },
    /// Paged optimizer states, counted on the GPU but evictable to CPU RAM.
    PagedOptimizer { bytes: u64 },
    /// Pipeline parallelism keeps `pp` micro-batches in flight in the first stage.
    Pipeline { pp: u32 },
    /// Parameters in RAM were asked for without ZeRO-3, which alone can do it.
    OffloadParamsNeedZero3,
    /// LLM.int8 with checkpointing: what non-reentrant checkpointing would keep
    /// (`estimate::bnb_int8_unhooked_inputs`), not counted in the total.
    Int8Checkpointing { bytes: u64 },
    /// Experts on the CPU were asked for a model without experts: llama.cpp's
    /// `--n-cpu-moe` only moves expert tensors, so it changes nothing.
    CpuMoeDense,
    /// torchtune on several GPUs shards with FSDP whatever stage was asked for.
    TorchtuneFsdp,
    /// `Trainer`'s evaluation: its default batch's loss over the logits, and what
    /// `compute_metrics` keeps per sequence; with a capacity, what fits beside the
    /// weights and optimizer states that stay through it.
    TrainerEval {
        batch: u64,
        peak: u64,
        fits: Option<u64>,
        kept: u64,
        kept_fit: Option<u64>,
    },
    /// ZeRO-Offload moved these optimizer bytes per GPU to CPU RAM.
    CpuOffload {
        bytes: u64,
        /// The gradient partitions are among those bytes (DeepSpeed, or FSDP with its
        /// parameters in RAM).
        gradients: bool,
        /// So are the parameter shards (`offload_params`).
        params: bool,
        /// ZeRO-1: the GPU still holds whole 16-bit gradients until backward ends.
        whole_on_gpu: bool,
    },
    /// Only a parameter count is known.
    ParamsOnly,
    /// Inference uses a file's exact weight bytes.
    ExactWeights {
        bytes: u64,
        params: Option<u64>,
        tensors: Option<u64>,
        source: String,
    },
    /// A file's exact bytes were given, but training counts weights by format.
    ExactWeightsIgnored { source: String },
    /// QLoRA was asked with 16/32-bit weights: the base is loaded in NF4 anyway.
    QloraBase { asked: String },
    /// transformers' `generate` before 2024 held the previous step's KV cache beside the
    /// new one (`estimate::previous_step_cache`).
    OldGenerateCache { bytes: u64 },
    /// QLoRA with transformers: PEFT's `prepare_model_for_kbit_training` cast the
    /// non-4-bit parameters (`bytes` more) and the residual stream to fp32; autocast
    /// recasts the frozen fp32 head to 16 bits on every step (`head` bytes under the
    /// loss, `estimate::head_cast`).
    KbitFp32 { bytes: u64, head: u64 },
    /// vLLM's hybrid manager pads a model's windowed and global layers into groups of one
    /// size: each token costs `padded` layers' worth instead of `layers`
    /// (`serving::hybrid_padding`).
    HybridKv { padded: u64, layers: u64 },
}

impl Note {
    /// The note in Spanish for `surface`.
    pub fn text(&self, surface: Surface) -> String {
        let cli = surface == Surface::Cli;
        match self {
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
                    signed_percent(band.p10),
                    signed_percent(band.p90)
                )
            }
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
                    (true, false) => "el max_num_batched_tokens elegido, y max_num_seqs por defecto en esta GPU",
                    (false, true) => "max_num_batched_tokens por defecto en esta GPU, y el max_num_seqs elegido",
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
            Note::VisionEncoder { images, alive } => format!(
                "Imágenes de prueba: al arrancar, vLLM codifica además {} imágenes del tamaño máximo con la torre de visión, y sus píxeles y salidas ({}) siguen en memoria durante el resto de la pasada de perfil; ya están restados de la caché KV. Si solo vas a mandar texto, limitar las imágenes a 0 por prompt (limit_mm_per_prompt de vLLM) evita perfilarlas.",
                group_digits(*images),
                ByteSize(*alive).binary()
            ),
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
                    } else if *ubatch >= crate::estimate::GGML_OP_OFFLOAD_MIN_BATCH {
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
                    format!(" ({} de prompt y {} generados)", group_digits(opened.tokens().saturating_sub(*new_tokens).max(1)), group_digits(*new_tokens))
                } else {
                    String::new()
                };
                match opened {
                    Opened::Vllm { .. } => format!(
                        "Contexto automático: si no le das max_model_len, vLLM toma el contexto que declara el modelo (max_position_embeddings de su config), {tokens} tokens{generated}, y se niega a arrancar si la caché KV no cabe para una secuencia de ese largo. Si no necesitas tanto, {given}: es lo que harías con max_model_len."
                    ),
                    Opened::Ollama { vram, tier, trained } => {
                        let cap = match trained {
                            Some(t) if t < tier => format!(", recortados al contexto de entrenamiento del modelo, {tokens}"),
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
                    Opened::LlamaCpp { trained, fit: Some(fit) } if fit.layers_next => format!(
                        "Contexto automático: si no le pides uno (-c), llama.cpp abriría los {} tokens del modelo; su ajuste a la memoria libre (fit, activo por defecto) lo baja hasta su mínimo, {} tokens{generated}, y como ni así quedaría 1 GiB libre, pasa además capas a la CPU si no le fijaste cuántas (-ngl).",
                        group_digits(*trained),
                        group_digits(LLAMA_FIT_MIN)
                    ),
                    Opened::LlamaCpp { trained, fit: Some(_) } => format!(
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
                    format!(" Este cálculo usa {}; con --seq auto ves lo que ocupa el de Ollama.", group_digits(*seq))
                } else {
                    format!(" Este cálculo usa {}; escribe «auto» en Tokens por secuencia para ver lo que ocupa el de Ollama.", group_digits(*seq))
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
            Note::FsdpUnsharded { root, layer } => format!(
                "FSDP: además de su parte de los pesos (en la RAM si la descargas), cada GPU tiene entera la unidad raíz (embeddings, cabeza y norma final: {}), que FSDP no vuelve a repartir entre el paso hacia delante y el final del paso hacia atrás, y la capa que está procesando, reunida de todas las GPU ({}; si precarga la siguiente, habría otra igual, que no se suma). Con DeepSpeed (ZeRO-3) no se cuenta así: reúne los pesos por módulos, hasta stage3_max_live_parameters.",
                ByteSize(*root).binary(),
                ByteSize(*layer).binary()
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
            Note::TpHeads { heads, tp } => format!(
                "Paralelismo tensorial: {heads} cabezas de atención no se reparten entre {tp} GPU, y vLLM se niega a arrancar si no son divisibles; usa un número de GPU que divida {heads}."
            ),
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
                        match crate::estimate::GGML_SCHED_COPIES {
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
                crate::evaluate::OLLAMA_ONE_GPU_PERCENT
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
            Note::Capacity {
                gpu,
                usable,
                nominal,
                source,
                reserve,
            } => {
                let held = if *reserve > 0 {
                    format!(
                        " Se restan {} que ya ocupan la pantalla u otros procesos.",
                        ByteSize(*reserve).binary()
                    )
                } else {
                    String::new()
                };
                format!(
                    "Capacidad: de los {} que nvidia-smi muestra en la {gpu}, PyTorch recibe {} ({source}).{held}",
                    ByteSize(*nominal).binary(),
                    ByteSize(*usable).binary()
                )
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
            Note::TotalParams { given, derived } => format!(
                "Se usa el total de parámetros indicado ({}) en lugar del derivado de la arquitectura ({}).",
                group_digits(*given),
                group_digits(*derived)
            ),
            Note::PagedOptimizer { bytes } => format!(
                "El optimizador paginado guarda sus estados ({}) en memoria unificada: se cuentan en la GPU, pero si falta memoria el controlador los desaloja a la RAM de la CPU en vez de dar OOM (más lento por el tráfico PCIe).",
                ByteSize(*bytes)
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
            Note::CpuMoeDense => if cli {
                "--n-cpu-moe no cambia nada: este modelo no tiene expertos (MoE), y llama.cpp solo deja en la CPU los tensores de expertos. Para dejar capas enteras en la CPU, usa -ngl."
            } else {
                "«Capas con expertos en la CPU» no cambia nada: este modelo no tiene expertos (MoE), y llama.cpp solo deja en la CPU los tensores de expertos. Para dejar capas enteras en la CPU, baja «Capas en la GPU»."
            }
            .to_owned(),
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
            Note::Pipeline { pp } => format!(
                "Con paralelismo de tubería (calendario 1F1B), la primera etapa guarda {pp} microlotes en vuelo por {} de las capas: las activaciones por GPU son las de todo el modelo para un microlote.",
                if *pp == 2 {
                    "la mitad".to_owned()
                } else {
                    format!("1/{pp}")
                }
            ),
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
            Note::QloraBase { asked } => format!(
                "QLoRA carga el modelo base en NF4 con doble cuantización, no en {asked}: así se cuenta."
            ),
            Note::HybridKv { padded, layers } => format!(
                "Capas de ventana deslizante y globales: vLLM las reparte en grupos del mismo tamaño y rellena el último de cada tipo, así que cada token de la caché ocupa lo de {padded} capas, no lo de {layers}; por eso anuncia menos tokens que la cuenta capa a capa."
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
            Note::OldGenerateCache { bytes } => format!(
                "Versiones antiguas: hasta 2024 (transformers 4.35 y las de su época), generate guardaba la caché KV del paso anterior junto a la nueva, dos copias enteras; con ellas súmale {}. Desde entonces la caché se actualiza en su sitio y vale el total de arriba.",
                ByteSize(*bytes).binary()
            ),
        }
    }
}

/// "−42,4 %": sign always, one decimal, decimal comma.
fn signed_percent(v: f64) -> String {
    format!("{v:+.1} %").replace('.', ",").replace('-', "−")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::default_context::{Fit, Opened};

    #[test]
    fn web_notes_never_name_flags() {
        let notes = [
            Note::Band {
                runtime: "vLLM",
                training: false,
                serving: true,
                band: Band {
                    p10: -33.4,
                    p90: -0.4,
                    cases: 20,
                    pooled: false,
                },
            },
            Note::Runtime {
                runtime: "Transformers",
                precision: Some(Precision::Amp),
                loss: Loss::Full,
                targets: Some(LoraTargets::QUERY_VALUE),
                offload: true,
            },
            Note::Capacity {
                gpu: "GeForce RTX 4090".into(),
                usable: 25_393_994_138,
                nominal: 24_564 << 20,
                source: "fuente".into(),
                reserve: 1 << 30,
            },
            Note::CudaContext {
                bytes: 500 << 20,
                gpu: "RTX 4090".into(),
                basis: "supuesto",
            },
            Note::TotalParams {
                given: 8,
                derived: 9,
            },
            Note::PagedOptimizer { bytes: 1 << 30 },
            Note::Communication { bytes: 544 << 20 },
            Note::DdpBuckets { bytes: 2 << 30 },
            Note::DeepspeedBuffers {
                sync: crate::estimate::GradSync {
                    buckets: 32 << 20,
                    bucket: 32 << 20,
                    staging: 0,
                    reused: 1 << 30,
                    reused_params: 525_336_576,
                    reused_beyond_head: false,
                    head_gradient: 1 << 30,
                    layer_gradient: 1 << 29,
                },
                default_bucket: 1_000_000_000,
            },
            Note::DeepspeedBuffers {
                sync: crate::estimate::GradSync {
                    buckets: 1 << 30,
                    bucket: 32 << 20,
                    staging: 1 << 30,
                    ..crate::estimate::GradSync::default()
                },
                default_bucket: 1_000_000_000,
            },
            Note::OllamaOneGpu { gpus: 2 },
            Note::LayerSplit {
                runtime: "llama.cpp",
                gpus: 2,
                first: 41,
                last: 39,
                output: true,
                pipeline: Some(200 << 20),
            },
            Note::BeyondTrainedContext {
                asked: 1 << 20,
                trained: 131_072,
                vllm: true,
            },
            Note::TpHeads { heads: 32, tp: 3 },
            Note::FsdpUnsharded {
                root: 1 << 30,
                layer: 1 << 29,
            },
            Note::CpuExperts {
                layers: 20,
                asked: Some(20),
                bytes: 8 << 30,
                per_token: 400 << 20,
                copies: 500 << 20,
                ram_gbs: 80,
            },
            Note::Ggml {
                runtime: "llama.cpp",
                ngl: 20,
                placement: (19, true),
                layers: 32,
                host: 2 << 30,
                cells: 4096,
                swa: Some((1536, 0)),
                flash: false,
                compute: 300 << 20,
                embeddings_on_cpu: 280 << 20,
                ubatch: 512,
            },
            Note::OllamaContext {
                vram: 24 << 30,
                default: 32_768,
                seq: 4096,
            },
            Note::OpenedContext {
                opened: Opened::Vllm { trained: 131_072 },
                new_tokens: 0,
            },
            Note::FittedLayers {
                gpu_layers: Some(35),
                layers: 64,
                cpu_moe: 0,
                llama_cpp: true,
                output_first: true,
            },
            Note::FittedLayers {
                gpu_layers: None,
                layers: 48,
                cpu_moe: 12,
                llama_cpp: false,
                output_first: true,
            },
            Note::FittedLayers {
                gpu_layers: Some(20),
                layers: 48,
                cpu_moe: u32::MAX,
                llama_cpp: true,
                output_first: true,
            },
            Note::OpenedContext {
                opened: Opened::Ollama {
                    vram: 24 << 30,
                    tier: 32_768,
                    trained: Some(8192),
                },
                new_tokens: 512,
            },
            Note::OpenedContext {
                opened: Opened::LlamaCpp {
                    trained: 131_072,
                    fit: None,
                },
                new_tokens: 0,
            },
            Note::OpenedContext {
                opened: Opened::LlamaCpp {
                    trained: 131_072,
                    fit: Some(Fit {
                        tokens: 99_328,
                        layers_next: false,
                    }),
                },
                new_tokens: 0,
            },
            Note::OpenedContext {
                opened: Opened::LlamaCpp {
                    trained: 131_072,
                    fit: Some(Fit {
                        tokens: 4096,
                        layers_next: true,
                    }),
                },
                new_tokens: 0,
            },
            Note::OpenedContext {
                opened: Opened::Unknown,
                new_tokens: 0,
            },
            Note::ServingProfile {
                tokens: 8192,
                sequences: 1024,
                bytes: 1 << 30,
                chosen_tokens: false,
                chosen_sequences: true,
                several_gpus: false,
            },
            Note::CudaGraphs {
                mode: crate::cuda_graphs::CudaGraphs::Profiled,
                captures: crate::cuda_graphs::Captures::of(256, 2048),
                bytes: 860 << 20,
                sparse: true,
            },
            Note::CudaGraphs {
                mode: crate::cuda_graphs::CudaGraphs::AfterKv,
                captures: crate::cuda_graphs::Captures::of(256, 2048),
                bytes: 860 << 20,
                sparse: true,
            },
            Note::CudaGraphs {
                mode: crate::cuda_graphs::CudaGraphs::Off,
                captures: crate::cuda_graphs::Captures::of(256, 2048),
                bytes: 0,
                sparse: false,
            },
            Note::VisionTower {
                bytes: 800 << 20,
                place: TowerPlace::Loaded,
                compute: 0,
            },
            Note::VisionTower {
                bytes: 800 << 20,
                place: TowerPlace::Projector,
                compute: 121 << 20,
            },
            Note::VisionTower {
                bytes: 800 << 20,
                place: TowerPlace::ProjectorLoaded,
                compute: 121 << 20,
            },
            Note::VisionTower {
                bytes: 800 << 20,
                place: TowerPlace::Frozen,
                compute: 0,
            },
            Note::VisionTower {
                bytes: 800 << 20,
                place: TowerPlace::Trained,
                compute: 0,
            },
            Note::VisionEncoder {
                images: 32,
                alive: 200 << 20,
            },
            Note::Pipeline { pp: 2 },
            Note::OffloadParamsNeedZero3,
            Note::CpuMoeDense,
            Note::Int8Checkpointing { bytes: 6 << 30 },
            Note::TorchtuneFsdp,
            Note::TrainerEval {
                batch: 8,
                peak: 33 << 30,
                fits: Some(3),
                kept: 1 << 30,
                kept_fit: Some(12),
            },
            Note::TrainerEval {
                batch: 8,
                peak: 1 << 30,
                fits: None,
                kept: 1 << 28,
                kept_fit: None,
            },
            Note::CpuOffload {
                bytes: 1 << 30,
                gradients: false,
                params: false,
                whole_on_gpu: true,
            },
            Note::CpuOffload {
                bytes: 1 << 30,
                gradients: true,
                params: false,
                whole_on_gpu: false,
            },
            Note::CpuOffload {
                bytes: 1 << 30,
                gradients: true,
                params: false,
                whole_on_gpu: true,
            },
            Note::CpuOffload {
                bytes: 1 << 30,
                gradients: true,
                params: true,
                whole_on_gpu: false,
            },
            Note::ParamsOnly,
            Note::ExactWeights {
                bytes: 1 << 30,
                params: Some(1),
                tensors: None,
                source: "m.gguf".into(),
            },
            Note::ExactWeightsIgnored {
                source: "m.gguf".into(),
            },
            Note::QloraBase {
                asked: "bf16".into(),
            },
            Note::OldGenerateCache { bytes: 1 << 30 },
            Note::KbitFp32 {
                bytes: 1 << 30,
                head: 1 << 29,
            },
            Note::HybridKv {
                padded: 70,
                layers: 62,
            },
        ];
        for n in &notes {
            let web = n.text(Surface::Web);
            assert!(!web.contains("--"), "{web}");
            assert!(web.ends_with('.'), "{web}");
            assert!(!n.text(Surface::Cli).is_empty());
        }
        assert!(notes[3].text(Surface::Cli).contains("--cuda-context"));
        assert_eq!(
            notes[0].text(Surface::Web),
            "Margen de error: 20 casos publicados de vLLM en inferencia; entre el P10 y el P90, en tokens de caché KV, el cálculo se desvió de −33,4 % a −0,4 % (negativo: prometía más de lo que dio la ejecución). «Cabe con margen» exige que quepa también ese extremo."
        );
        assert_eq!(
            notes[2].text(Surface::Web),
            "Capacidad: de los 23,99 GiB que nvidia-smi muestra en la GeForce RTX 4090, PyTorch recibe 23,65 GiB (fuente). Se restan 1,00 GiB que ya ocupan la pantalla u otros procesos."
        );
    }
}
