//! Rules for the families without the caching allocator's numbers: CUDA and library
//! errors, MPS, vLLM, and text nothing recognised.

use super::{
    CauseId, GUIDE_ANATOMY, GUIDE_ESTIMATOR, GUIDE_OTHER_PROCESS, GUIDE_STRATEGIES, Ranking,
};
use crate::format::{binary as b, count};
use crate::model::{Decoded, Kind};
use crate::scan::Text;

pub(super) fn driver(d: &Decoded, r: &mut Ranking) {
    // `capture_end` failing in vLLM's graph capture is a driver-level out of memory.
    super::allocator::graph_capture(d, r);
    // The figures a front end printed beside the error are not the message's.
    let figures = if d.frontend_memory.is_some() {
        "así que el mensaje de CUDA no trae cifras (las de la tabla son del programa que lo \
         lanzó, no del error)"
    } else {
        "así que el mensaje no trae cifras"
    };
    r.add(
        80,
        CauseId::DriverContext,
        "CUDA se quedó sin memoria fuera del asignador de PyTorch",
        format!(
            "El error viene de CUDA directamente (cudaMalloc, la creación del contexto o un \
             kernel), no de la contabilidad del asignador de PyTorch, {figures}. Pasa cuando la \
             GPU ya está llena, por este u otro proceso, y el contexto CUDA o una biblioteca \
             necesita memoria. Los errores de CUDA llegan tarde: la línea del traceback puede no \
             ser la culpable."
        ),
        "Mira nvidia-smi antes de arrancar; ejecuta con CUDA_LAUNCH_BLOCKING=1 para que el error \
         salga en la línea que lo causa; deja margen a las bibliotecas reduciendo el lote o con \
         torch.cuda.set_per_process_memory_fraction(0.9)."
            .to_owned(),
        GUIDE_ANATOMY,
    );
    r.add(
        50,
        CauseId::OtherProcess,
        "Si falla al arrancar, probablemente otro proceso ocupa la GPU",
        "Si el error aparece al principio (al crear el contexto o al mover el modelo a la GPU), \
         antes de reservar casi nada, lo más probable es que otro proceso ya la ocupe."
            .to_owned(),
        "Comprueba con nvidia-smi qué procesos usan la GPU y ciérralos, o elige otra con \
         CUDA_VISIBLE_DEVICES."
            .to_owned(),
        GUIDE_OTHER_PROCESS,
    );
    if d.excerpt.to_ascii_lowercase().contains("runtime error (2)") {
        r.note(
            "«cuda runtime error (2)» es el mensaje de PyTorch 0.4 o anterior, cuyo asignador no \
             daba cifras. Una versión reciente explica el mismo fallo con números."
                .to_owned(),
        );
    }
}

/// XLA's allocator (JAX, TensorFlow with XLA). JAX preallocates 75 % of the GPU on its
/// first operation (JAX docs, "GPU memory allocation": `XLA_PYTHON_CLIENT_PREALLOCATE`,
/// `XLA_PYTHON_CLIENT_MEM_FRACTION`), so the pool is smaller than the card, and
/// smaller still beside another framework or process.
pub(super) fn xla(d: &Decoded, r: &mut Ranking) {
    let size = d
        .requested_bytes
        .map_or_else(String::new, |n| format!(" de {}", b(n)));
    r.add(
        80,
        CauseId::TooBig,
        "XLA no pudo reservar un búfer para este paso",
        format!(
            "El asignador de XLA (el de JAX, y el de TensorFlow con XLA) pidió un búfer{size} \
             y su reserva no lo tenía libre: los arrays vivos de este paso más los temporales \
             del programa compilado no caben."
        ),
        "Reduce el lote o la secuencia, recalcula activaciones con jax.checkpoint (remat), \
         usa bfloat16, o reparte el modelo entre GPUs con jax.sharding. jax.profiler \
         (device_memory_profile) muestra qué arrays ocupan la memoria."
            .to_owned(),
        GUIDE_STRATEGIES,
    );
    r.add(
        60,
        CauseId::XlaPool,
        "JAX se reserva de entrada el 75 % de la GPU",
        "Al primer cálculo, JAX reserva el 75 % de la memoria de la GPU para su propio \
         asignador. Si en el mismo proceso corre PyTorch o TensorFlow, o hay otro proceso de \
         JAX, cada uno cuenta con menos memoria de la que parece."
            .to_owned(),
        "Arranca con XLA_PYTHON_CLIENT_PREALLOCATE=false (reserva según haga falta) o sube la \
         fracción con XLA_PYTHON_CLIENT_MEM_FRACTION=.90 si la GPU es solo para JAX; con \
         XLA_PYTHON_CLIENT_ALLOCATOR=platform libera al momento (más lento, útil para \
         depurar)."
            .to_owned(),
        GUIDE_OTHER_PROCESS,
    );
}

/// TensorFlow's BFC allocator. By default TensorFlow maps almost all of the GPU for
/// itself when it starts (`tf.config.experimental.set_memory_growth` turns that off).
pub(super) fn tensorflow(d: &Decoded, r: &mut Ranking) {
    let device = d
        .gpu_index
        .map_or_else(String::new, |i| format!(" de la GPU {i}"));
    r.add(
        80,
        CauseId::TooBig,
        "TensorFlow no pudo reservar un tensor",
        format!(
            "El asignador BFC de TensorFlow{device} no encontró sitio para el tensor que \
             indica el mensaje (su forma y su tipo dicen cuánto ocupa): los tensores vivos de \
             este paso no caben."
        ),
        "Reduce el lote, usa precisión mixta (tf.keras.mixed_precision.set_global_policy(\
         'mixed_float16')) o recalcula activaciones; con report_tensor_allocations_upon_oom \
         en RunOptions, TensorFlow lista qué tensores ocupaban la memoria."
            .to_owned(),
        GUIDE_STRATEGIES,
    );
    r.add(
        55,
        CauseId::OtherProcess,
        "TensorFlow se queda casi toda la GPU al arrancar",
        "Por defecto TensorFlow reserva casi toda la memoria de la GPU en cuanto arranca: otro \
         proceso (o PyTorch en el mismo) se queda sin sitio, y dos procesos de TensorFlow en \
         la misma GPU se estorban."
            .to_owned(),
        "Llama a tf.config.experimental.set_memory_growth(gpu, True) para cada GPU antes de \
         usarla (o TF_FORCE_GPU_ALLOW_GROWTH=true), o fija un tope con \
         tf.config.set_logical_device_configuration."
            .to_owned(),
        GUIDE_OTHER_PROCESS,
    );
}

pub(super) fn library(d: &Decoded, r: &mut Ranking) {
    let (why, fix) = if d.kind == Kind::CublasOom {
        (
            "cuBLAS necesita memoria para su handle y su espacio de trabajo la primera vez que \
             se usa en cada stream o hilo. Esa reserva no pasa por el asignador de PyTorch: si \
             la caché de PyTorch ya llenó la GPU, falla aunque tu tensor cupiera."
                .to_owned(),
            "Reduce el lote o la secuencia para dejar margen; haz una operación pequeña en la \
             GPU (un matmul) antes de cargar todo, para que cuBLAS reserve primero; comprueba \
             con nvidia-smi que no hay otro proceso. Si falla nada más arrancar, sospecha de \
             otro proceso o de versiones de CUDA incompatibles."
                .to_owned(),
        )
    } else {
        let mut why = String::from(
            "cuDNN pide un espacio de trabajo para cada convolución (el tamaño depende del \
             algoritmo elegido) y no hubo memoria para él.",
        );
        let excerpt = d.excerpt.to_ascii_lowercase();
        if excerpt.contains("cudnn_status_not_initialized") {
            why = String::from(
                "cuDNN no pudo crear su handle: necesita memoria de la GPU para inicializarse y, \
                 cuando aparece después de un OOM o con la GPU llena, es que no la encontró. \
                 También sale con un cuDNN que no corresponde a la versión de CUDA de PyTorch.",
            );
        }
        if excerpt.contains("unable to find a valid cudnn algorithm") {
            why.push_str(
                " «Unable to find a valid cuDNN algorithm» suele deberse a eso, aunque también \
                 aparece con versiones de cuDNN incompatibles.",
            );
        }
        (
            why,
            "Reduce el lote; desactiva torch.backends.cudnn.benchmark, que prueba algoritmos con \
             espacios de trabajo grandes; comprueba con nvidia-smi que no hay otro proceso."
                .to_owned(),
        )
    };
    r.add(
        80,
        CauseId::LibraryWorkspace,
        "Una biblioteca de CUDA no pudo reservar su espacio de trabajo",
        why,
        fix,
        GUIDE_ANATOMY,
    );
}

const MPS_REDUCE: &str = "Reduce lo que ocupa el paso que falla: un lote más pequeño (con \
                          acumulación de gradientes), secuencias o imágenes más pequeñas, \
                          float16 o bfloat16, gradient checkpointing, LoRA en lugar de un \
                          ajuste completo.";

pub(super) fn mps(d: &Decoded, r: &mut Ranking) {
    let fix = "Reduce el lote o la resolución, usa float16 o bfloat16, libera con \
               torch.mps.empty_cache() entre fases y cierra otras aplicaciones: en un Mac la \
               memoria de la GPU es la del sistema. PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 quita \
               el tope, pero macOS puede volverse inestable o tirar de swap.";
    let (req, total) = (d.requested_bytes, d.total_bytes);
    if let (Some(q), Some(t)) = (req, total)
        && q > t
    {
        r.add(
            100,
            CauseId::TooBig,
            "Una sola reserva supera el tope de MPS",
            format!(
                "PyTorch intentó reservar {} de una vez y el tope de MPS es {}: ese tensor \
                     no cabe.",
                b(q),
                b(t)
            ),
            "Imprime la forma (.shape) de los tensores de la línea que falla y trocea la \
                 operación o reduce lote o resolución."
                .to_owned(),
            GUIDE_STRATEGIES,
        );
    }
    let held = d
        .allocated_bytes
        .unwrap_or(0)
        .saturating_add(d.other_allocations_bytes.unwrap_or(0));
    if let Some(t) = total {
        // MPS grows by whole heaps, so a tiny request can cross the limit from just below.
        let margin = (t / 100).max(64 << 20);
        if held.saturating_add(req.unwrap_or(0)).saturating_add(margin) > t {
            r.add(
                85,
                CauseId::MpsWatermark,
                "Se alcanzó el tope de memoria de MPS",
                format!(
                    "PyTorch en Apple limita la memoria a {} (max allowed: una fracción de la \
                     memoria unificada que macOS recomienda para la GPU). Ya hay {} en tensores \
                     y {} en otras reservas de Metal; {} más lo superan (MPS crece en bloques de \
                     varios MiB, así que una petición pequeña puede cruzar el tope).",
                    b(t),
                    d.allocated_bytes.map_or_else(|| "?".to_owned(), b),
                    d.other_allocations_bytes.map_or_else(|| "?".to_owned(), b),
                    req.map_or_else(|| "?".to_owned(), b)
                ),
                fix.to_owned(),
                GUIDE_STRATEGIES,
            );
        }
    }
    if !r.has(CauseId::TooBig) {
        r.add(
            60,
            CauseId::TooBig,
            "La carga no cabe en la memoria del Mac",
            format!(
                "Este paso necesita más memoria de la que MPS puede dar{}.",
                req.map_or(String::new(), |q| format!(": pedía {} más", b(q)))
            ),
            if r.has(CauseId::MpsWatermark) {
                MPS_REDUCE.to_owned()
            } else {
                format!("{fix} {MPS_REDUCE}")
            },
            GUIDE_STRATEGIES,
        );
    }
    if let Some(pool) = &d.pool {
        r.note(format!(
            "La reserva era para el pool {} de MPS ({}); los tamaños de MPS se escriben en KB, MB \
             y GB pero son potencias de 1024.",
            if pool == "shared" {
                "compartido"
            } else {
                "privado"
            },
            if pool == "shared" {
                "memoria visible también para la CPU"
            } else {
                "memoria solo de la GPU"
            }
        ));
    }
}

pub(super) fn vllm(d: &Decoded, r: &mut Ranking) {
    let fix_tail = "sube --gpu-memory-utilization (0.9 por defecto; hasta 0.95 si la GPU es solo \
                    para vLLM); --kv-cache-dtype fp8 reduce la caché a la mitad; reparte entre \
                    GPU con --tensor-parallel-size; pesos cuantizados dejan más sitio a la caché; \
                    --enforce-eager ahorra la memoria de los CUDA Graphs.";
    // The start-up report printed before the error, when the paste has it.
    let report = d.vllm_memory.as_ref();
    let report_why = report
        .and_then(super::runtimes::vllm_report_sentence)
        .map_or_else(String::new, |s| format!(" {s}"));
    let report_fix = if report.is_some_and(super::runtimes::activations_dominate) {
        super::runtimes::FIX_ACTIVATIONS
    } else {
        ""
    };
    let Some(kv) = &d.kv_cache else {
        r.add(
            90,
            CauseId::KvCacheBudget,
            "No queda memoria para la caché KV de vLLM",
            format!(
                "vLLM carga los pesos, mide el pico de activaciones y dedica a la caché KV lo \
                 que queda hasta gpu_memory_utilization. Aquí no quedó nada: ni un bloque de \
                 caché.{report_why}"
            ),
            format!(
                "{report_fix}Usa un modelo más pequeño o cuantizado, o más GPU; además, {fix_tail} \
                 Bajar --max-num-batched-tokens reduce el pico de activaciones medido."
            ),
            GUIDE_ESTIMATOR,
        );
        return;
    };
    let mut why = String::from(
        "vLLM carga los pesos, mide el pico de activaciones y dedica a la caché KV lo que queda \
         hasta gpu_memory_utilization; al arrancar comprueba que cabe al menos una petición de \
         longitud máxima.",
    );
    let suggested = kv.estimated_max_len.or(kv.max_kv_tokens);
    match (
        kv.max_seq_len,
        kv.max_kv_tokens,
        kv.needed_bytes,
        kv.available_bytes,
    ) {
        (n, Some(m), _, _) => why.push_str(&format!(
            " La caché admite {} tokens, pero max_model_len es {}: no cabe ni una.",
            count(m),
            n.map_or_else(|| "mayor".to_owned(), count)
        )),
        (n, None, needed, available) => {
            why.push_str(&format!(
                " Una petición de {} tokens necesita {} de caché KV y solo hay {}.",
                n.map_or_else(|| "máxima longitud".to_owned(), count),
                needed.map_or_else(|| "más".to_owned(), b),
                available.map_or_else(|| "menos".to_owned(), b)
            ));
            if let Some(e) = kv.estimated_max_len {
                why.push_str(&format!(
                    " Con esa memoria, la longitud máxima estimada es {} tokens.",
                    count(e)
                ));
            }
        }
    }
    why.push_str(&report_why);
    let first = match suggested {
        Some(m) => format!(
            "Si no necesitas todo el contexto, arranca con --max-model-len {m} (o menos); si lo \
             necesitas, "
        ),
        None => {
            "Baja --max-model-len si no necesitas todo el contexto; si lo necesitas, ".to_owned()
        }
    };
    r.add(
        90,
        CauseId::KvCacheBudget,
        "La caché KV de vLLM no admite ni una petición completa",
        why,
        format!("{report_fix}{first}{fix_tail}"),
        GUIDE_ESTIMATOR,
    );
}

/// Nothing recognised: say so, and say what was seen.
pub(super) fn unrecognized(text: &str, r: &mut Ranking) {
    let t = Text::new(text);
    let has = |phrase: &[u8]| t.find(0, t.len(), phrase).is_some();
    if has(b"defaultcpuallocator") || has(b"you tried to allocate") {
        r.add(
            90,
            CauseId::CpuRam,
            "Se agotó la RAM del sistema, no la memoria de la GPU",
            "El mensaje es del asignador de CPU de PyTorch (DefaultCPUAllocator): lo que faltó es \
             memoria RAM del equipo. Suele pasar al cargar un modelo entero en la CPU antes de \
             moverlo a la GPU."
                .to_owned(),
            "Carga el modelo directamente en la GPU o por partes (en Transformers, \
             device_map=\"auto\" y low_cpu_mem_usage=True; pesos en safetensors), baja \
             num_workers del DataLoader, o añade swap o RAM."
                .to_owned(),
            GUIDE_STRATEGIES,
        );
    }
    let mut why = String::from(
        "No encontré ningún error de memoria conocido (PyTorch con CUDA, ROCm, MPS, XPU o \
         NPU; CUDA, cuBLAS, cuDNN; JAX/XLA; TensorFlow; vLLM; llama.cpp y Ollama; RAM del equipo) ni una tabla de \
         torch.cuda.memory_summary().",
    );
    if has(b"resource_exhausted") || has(b"resourceexhaustederror") {
        why.push_str(
            " Sí aparece RESOURCE_EXHAUSTED, que es como JAX y TensorFlow dicen que se quedaron \
             sin memoria; no conozco su formato y no voy a adivinar sus cifras.",
        );
    } else if has(b"out of memory") || has(b"outofmemory") {
        why.push_str(
            " Sí aparece «out of memory», pero en un formato que no conozco: no voy a adivinar \
             sus cifras.",
        );
    }
    r.add(
        if r.has(CauseId::CpuRam) { 20 } else { 50 },
        CauseId::Unrecognized,
        "Falta el mensaje de error",
        why,
        "Pega el error completo, desde la línea «Traceback» hasta el final (la última línea es \
         la que importa), o la salida de print(torch.cuda.memory_summary()) justo después del \
         error."
            .to_owned(),
        GUIDE_STRATEGIES,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnosis::diagnose;
    use crate::model::KvCacheShortfall;

    const GIB: u64 = 1 << 30;

    fn ids(d: &Decoded) -> Vec<CauseId> {
        diagnose(d).causes.iter().map(|c| c.id).collect()
    }

    #[test]
    fn driver_errors() {
        let mut d = Decoded::new(Kind::DriverOom);
        assert_eq!(ids(&d), [CauseId::DriverContext, CauseId::OtherProcess]);
        assert!(
            diagnose(&d).causes[0]
                .fix
                .contains("CUDA_LAUNCH_BLOCKING=1")
        );
        d.excerpt = "cuda runtime error (2) : out of memory".into();
        assert!(diagnose(&d).notes.iter().any(|n| n.contains("PyTorch 0.4")));
    }

    #[test]
    fn library_workspaces() {
        let d = Decoded::new(Kind::CublasOom);
        assert_eq!(ids(&d), [CauseId::LibraryWorkspace]);
        assert!(diagnose(&d).causes[0].explanation.contains("cuBLAS"));
        let mut d = Decoded::new(Kind::CudnnOom);
        d.excerpt = "Unable to find a valid cuDNN algorithm to run convolution".into();
        let text = diagnose(&d).causes[0].explanation.clone();
        assert!(text.contains("también aparece con versiones"), "{text}");
    }

    #[test]
    fn mps_limit() {
        let mut d = Decoded::new(Kind::MpsOom);
        d.total_bytes = Some(18 * GIB);
        d.allocated_bytes = Some(17 * GIB);
        d.other_allocations_bytes = Some(GIB / 2);
        d.requested_bytes = Some(GIB);
        assert_eq!(ids(&d), [CauseId::MpsWatermark, CauseId::TooBig]);
        assert!(
            diagnose(&d).causes[0]
                .fix
                .contains("PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0")
        );
        d.requested_bytes = Some(20 * GIB);
        assert_eq!(ids(&d)[0], CauseId::TooBig);
        d.allocated_bytes = Some(GIB);
        d.requested_bytes = Some(GIB);
        assert_eq!(ids(&d), [CauseId::TooBig]);
    }

    #[test]
    fn vllm_budget() {
        let mut d = Decoded::new(Kind::VllmKvCache);
        d.kv_cache = Some(KvCacheShortfall {
            max_seq_len: Some(32768),
            max_kv_tokens: Some(18224),
            ..KvCacheShortfall::default()
        });
        assert_eq!(ids(&d), [CauseId::KvCacheBudget]);
        let c = &diagnose(&d).causes[0];
        assert!(c.fix.contains("--max-model-len 18224"), "{}", c.fix);
        assert!(
            c.explanation.contains("18\u{202f}224 tokens"),
            "{}",
            c.explanation
        );
        d.kv_cache = Some(KvCacheShortfall {
            max_seq_len: Some(131072),
            needed_bytes: Some(16 * GIB),
            available_bytes: Some(8 * GIB),
            estimated_max_len: Some(68544),
            ..KvCacheShortfall::default()
        });
        let c = &diagnose(&d).causes[0];
        assert!(c.fix.contains("--max-model-len 68544"));
        assert!(c.explanation.contains("16,00 GiB") && c.explanation.contains("8,00 GiB"));
        d.kv_cache = None;
        assert!(diagnose(&d).causes[0].explanation.contains("ni un bloque"));
    }

    #[test]
    fn unrecognized_text_says_what_it_saw() {
        let mut r = Ranking::default();
        unrecognized(
            "DefaultCPUAllocator: not enough memory: you tried to allocate 1 bytes.",
            &mut r,
        );
        let d = r.finish();
        assert_eq!(d.causes[0].id, CauseId::CpuRam);
        assert_eq!(d.causes[1].id, CauseId::Unrecognized);
        let mut r = Ranking::default();
        unrecognized("XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory", &mut r);
        assert!(
            r.finish().causes[0]
                .explanation
                .contains("JAX y TensorFlow")
        );
        let mut r = Ranking::default();
        unrecognized("something out of memory", &mut r);
        assert!(
            r.finish().causes[0]
                .explanation
                .contains("no voy a adivinar")
        );
    }
}
