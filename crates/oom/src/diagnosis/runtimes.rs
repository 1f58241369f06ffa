//! Rules for llama.cpp/Ollama buffers and for host RAM: what the buffer was for decides
//! the flag to change, and the numbers the message printed are cited.

use super::{CauseId, GUIDE_ESTIMATOR, GUIDE_OTHER_PROCESS, GUIDE_STRATEGIES, Ranking};
use crate::format::{binary as b, count};
use crate::model::{Decoded, OllamaMemory, VllmMemory};

/// What to change in llama.cpp (and Ollama) for each buffer.
const FIX_WEIGHTS: &str = "Pon menos capas en la GPU (llama.cpp: -ngl / --n-gpu-layers con un número menor; \
     Ollama: el parámetro num_gpu), usa una cuantización más pequeña (Q4_K_M en lugar de Q8_0), \
     reparte entre GPUs con --tensor-split, y en modelos MoE deja los expertos en la CPU con \
     --n-cpu-moe N. El estimador (motor llama.cpp) dice cuántas capas caben en la GPU y, en \
     un MoE, con cuántas capas de expertos en la CPU cabe.";
const FIX_KV: &str = "Baja el contexto (-c / --ctx-size; Ollama: num_ctx u OLLAMA_CONTEXT_LENGTH), cuantiza \
     la caché (-fa con --cache-type-k q8_0 --cache-type-v q8_0; Ollama: OLLAMA_FLASH_ATTENTION=1 \
     y OLLAMA_KV_CACHE_TYPE=q8_0) o reduce las peticiones en paralelo (--parallel; Ollama: \
     OLLAMA_NUM_PARALLEL=1), que multiplican la caché.";
const FIX_COMPUTE: &str = "Baja el micro-lote (-ub 256 o 128) y el lote (-b), activa flash attention (-fa) o deja \
     una capa menos en la GPU para hacer sitio al búfer de cómputo.";

/// [`FIX_COMPUTE`] for what the log says: without the flash attention it already has,
/// and, when several GPUs ran as a pipeline, why the micro-batch weighs on each.
fn fix_compute(g: Option<&crate::model::GgmlMemory>) -> String {
    let flash = g.and_then(|g| g.flash_attn) == Some(true);
    let mut fix = if flash {
        "Baja el micro-lote (-ub 256 o 128) y el lote (-b), o deja una capa menos en la GPU \
         para hacer sitio al búfer de cómputo."
            .to_owned()
    } else {
        FIX_COMPUTE.to_owned()
    };
    if let Some(n) = g.and_then(|g| g.n_copies).filter(|&n| n > 1) {
        fix.push_str(&format!(
            " Con varias GPU en cadena, cada una guarda {n} copias de las entradas de cada \
             micro-lote (la máscara de atención crece con el contexto por -ub): bajar -ub \
             también las reduce."
        ));
    }
    fix
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_lowercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

/// A llama.cpp load log with no error after it: where the memory went.
pub(super) fn ggml_report(d: &Decoded, r: &mut Ranking) {
    let Some(why) = d
        .ggml_memory
        .as_ref()
        .and_then(crate::format::ggml_sentence)
    else {
        return;
    };
    r.add(
        40,
        CauseId::GgmlBuffer,
        "Cómo repartió llama.cpp la memoria al cargar",
        why,
        format!(
            "Para que ocupe menos: {FIX_WEIGHTS} Para la caché: {FIX_KV} Para el cómputo: {}",
            fix_compute(d.ggml_memory.as_ref())
        ),
        GUIDE_ESTIMATOR,
    );
}

/// What Ollama fixes for a model that does not fit whole on the GPU.
const FIX_OLLAMA: &str = "Para que quepa entero: baja num_ctx (o OLLAMA_CONTEXT_LENGTH), deja \
     OLLAMA_NUM_PARALLEL=1 (cada petición en paralelo multiplica la caché), activa \
     OLLAMA_FLASH_ATTENTION=1 con OLLAMA_KV_CACHE_TYPE=q8_0, usa una etiqueta más cuantizada \
     (q4_K_M) o cierra lo que ocupe la GPU («ollama ps», nvidia-smi).";

/// Ollama's plan in one sentence: what it computed, what it saw free, what it did.
fn ollama_sentence(m: &OllamaMemory) -> Option<String> {
    let full = m.required_full_bytes?;
    let available = match m.available_bytes.as_slice() {
        [] => String::new(),
        [one] => format!(" y la GPU tenía {} libres", b(*one)),
        many => format!(
            " y las {} GPU tenían {} libres",
            many.len(),
            many.iter().map(|v| b(*v)).collect::<Vec<_>>().join(" + ")
        ),
    };
    let mut out = format!(
        "Ollama calculó {} para el modelo entero{available}",
        b(full)
    );
    match (m.layers_offload, m.layers_model) {
        (Some(on), Some(all)) if on < all => {
            let partial = m
                .required_partial_bytes
                .map_or_else(String::new, |p| format!(", {}", b(p)));
            out.push_str(&format!(
                ": puso {on} de {all} capas en la GPU{partial}; las otras {} corren en la CPU, \
                 mucho más despacio.",
                all - on
            ));
        }
        (Some(on), Some(all)) => {
            out.push_str(&format!(": puso las {on} de {all} capas en la GPU."));
        }
        _ => out.push('.'),
    }
    let mut parts = Vec::new();
    if let Some(w) = m.weights_total_bytes {
        parts.push(format!("{} de pesos", b(w)));
    }
    if let Some(k) = m.required_kv_bytes {
        parts.push(format!("{} de caché KV", b(k)));
    }
    if let Some(g) = m.graph_full_bytes {
        parts.push(format!("{} de grafo de cómputo", b(g)));
    }
    if !parts.is_empty() {
        out.push_str(&format!(" De su cálculo: {}.", parts.join(", ")));
    }
    Some(out)
}

/// Ollama's offload line: how much of the model it put on the GPU, and why.
pub(super) fn ollama_offload(d: &Decoded, r: &mut Ranking) {
    let Some(m) = d.ollama_memory.as_ref() else {
        return;
    };
    let Some(why) = ollama_sentence(m) else {
        // A line cut before its estimate still says where the layers went.
        let layers = match (m.layers_offload, m.layers_model) {
            (Some(on), Some(all)) => format!(" Puso {on} de {all} capas en la GPU."),
            _ => String::new(),
        };
        r.add(
            30,
            CauseId::OllamaOffload,
            "Ollama anotó cómo repartió el modelo",
            format!(
                "La línea de Ollama está incompleta: falta su cálculo de memoria \
                 (memory.required.full).{layers}"
            ),
            FIX_OLLAMA.to_owned(),
            GUIDE_ESTIMATOR,
        );
        return;
    };
    let partial = matches!((m.layers_offload, m.layers_model), (Some(on), Some(all)) if on < all);
    let loaded = d
        .ggml_memory
        .as_ref()
        .and_then(crate::format::ggml_sentence)
        .map_or_else(String::new, |s| format!(" Después, {}", lower_first(&s)));
    if partial {
        r.add(
            70,
            CauseId::OllamaOffload,
            "Ollama no cupo entero en la GPU: parte del modelo va a la CPU",
            format!("{why}{loaded}"),
            FIX_OLLAMA.to_owned(),
            GUIDE_ESTIMATOR,
        );
    } else {
        r.add(
            40,
            CauseId::OllamaOffload,
            "Ollama calculó que el modelo cabe entero en la GPU",
            format!("{why}{loaded}"),
            "Si aun así falla al cargar o al generar, su cálculo se quedó corto: pide menos capas \
             con el parámetro num_gpu o reserva margen con OLLAMA_GPU_OVERHEAD (en bytes)."
                .to_owned(),
            GUIDE_ESTIMATOR,
        );
    }
}

pub(super) fn ggml(d: &Decoded, r: &mut Ranking) {
    let device = d
        .gpu_index
        .map_or_else(String::new, |i| format!(" en la GPU {i}"));
    let size = d
        .requested_bytes
        .map_or_else(String::new, |n| format!(" de {}", b(n)));
    let loaded = d
        .ggml_memory
        .as_ref()
        .and_then(crate::format::ggml_sentence)
        .map_or_else(String::new, |s| {
            format!(" Antes del fallo, {}", lower_first(&s))
        });
    // Ollama sized the offload itself: its plan was too small for what ggml asked.
    let planned = d
        .ollama_memory
        .as_ref()
        .and_then(ollama_sentence)
        .map_or_else(String::new, |s| {
            format!(" {s} La reserva real superó ese cálculo.")
        });
    let loaded = format!("{loaded}{planned}");
    let (what, fix) = match d.buffer.as_deref() {
        Some("weights") => ("los pesos del modelo", FIX_WEIGHTS.to_owned()),
        Some("kv-cache") => ("la caché KV", FIX_KV.to_owned()),
        Some("compute") => ("el búfer de cómputo", fix_compute(d.ggml_memory.as_ref())),
        _ => (
            "un búfer (pesos, caché KV o cómputo)",
            format!("Según lo que estuviera cargando: {FIX_WEIGHTS} Para la caché: {FIX_KV}"),
        ),
    };
    let fix = match d.ollama_memory.as_ref().and_then(|m| m.layers_offload) {
        Some(on) if on > 0 => format!(
            "En Ollama, pide menos capas que las {on} que eligió (parámetro num_gpu, p. ej. {}) o \
             reserva margen con OLLAMA_GPU_OVERHEAD. {fix}",
            on.saturating_sub(on / 8 + 1)
        ),
        _ => fix,
    };
    if let Some(flag) = d.fit_blocked.as_deref() {
        r.add(
            92,
            CauseId::FitBlocked,
            "Fijaste las capas a mano y llama.cpp no pudo ajustarse a la memoria",
            format!(
                "Antes de cargar, llama.cpp intenta ajustar el modelo a la memoria libre (--fit, \
                 activo por defecto): baja el contexto si no lo pediste y, si no basta, deja capas \
                 en la CPU hasta que queden 1 GiB libres. Pero solo toca lo que no fijaste, y aquí \
                 {flag} venía dado: el registro dice que se rindió («already set by user… abort») \
                 y cargó con esa colocación, que no cabía. Pasa a menudo con -ngl 99 (o 999) \
                 copiado de guías anteriores al ajuste, y con los programas que lo fijan por ti."
            ),
            format!(
                "Quita {flag} para que llama.cpp decida cuántas capas caben (o pon -ngl -1, que es \
                 lo mismo); si quieres fijarlas, pon menos: el estimador, con llama.cpp y «Capas en \
                 la GPU» en auto, dice cuántas dejan 1 GiB libre. Si además fijaste -c, bájalo o \
                 quítalo para que el ajuste lo recorte."
            ),
            GUIDE_ESTIMATOR,
        );
    }
    r.add(
        85,
        CauseId::GgmlBuffer,
        "llama.cpp no pudo reservar memoria en la GPU",
        format!(
            "El motor de llama.cpp (ggml, también dentro de Ollama y LM Studio) pidió un búfer{size}{device} \
             para {what} y la GPU no lo tenía libre. Estos búferes se reservan de una vez al cargar \
             el modelo o al crear el contexto: lo que no cabe es la configuración completa, no un \
             pico pasajero.{loaded}"
        ),
        fix,
        GUIDE_ESTIMATOR,
    );
    r.add(
        40,
        CauseId::OtherProcess,
        "Otro proceso puede estar ocupando la GPU",
        "Otro programa (u otra instancia de llama.cpp u Ollama con un modelo ya cargado) reduce \
         lo que queda libre."
            .to_owned(),
        "Comprueba con nvidia-smi qué ocupa la GPU; en Ollama, «ollama ps» muestra los modelos \
         cargados y «ollama stop MODELO» los descarga."
            .to_owned(),
        GUIDE_OTHER_PROCESS,
    );
}

/// vLLM's start-up report in one Spanish sentence, with every number it gave.
pub(super) fn vllm_report_sentence(m: &VllmMemory) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(w) = m.weights_bytes {
        parts.push(format!("{} de pesos", b(w)));
    }
    if let Some(a) = m.activation_peak_bytes {
        parts.push(format!(
            "{} de activaciones (el pico de una pasada de prueba con --max-num-batched-tokens)",
            b(a)
        ));
    }
    if let Some(n) = m.non_torch_bytes {
        parts.push(format!(
            "{} fuera de PyTorch (NCCL, cuBLAS, el contexto)",
            b(n)
        ));
    }
    if let Some(k) = m.kv_cache_bytes {
        let tokens = m
            .kv_cache_tokens
            .map_or_else(String::new, |t| format!(", {} tokens", count(t)));
        parts.push(format!("{} para la caché KV{tokens}", b(k)));
    }
    if parts.is_empty() {
        return None;
    }
    let budget = match (m.budget_bytes, m.utilization_text(), m.total_gpu_bytes) {
        (Some(budget), Some(pct), Some(total)) => {
            format!(" {} (el {pct} % de {})", b(budget), b(total))
        }
        (Some(budget), _, _) => format!(" {}", b(budget)),
        _ => String::new(),
    };
    let last = parts.pop().unwrap_or_default();
    let list = if parts.is_empty() {
        last
    } else {
        format!("{} y {last}", parts.join(", "))
    };
    let mut out = format!("Al arrancar, vLLM repartió{budget}: {list}.");
    if let (Some(t), Some(x)) = (m.concurrency_tokens, m.concurrency_x100) {
        out.push_str(&format!(
            " Caben {},{:02} peticiones de {} tokens a la vez.",
            x / 100,
            x % 100,
            count(t)
        ));
    }
    Some(out)
}

/// Whether the profile's activation peak, not the weights, squeezed the KV cache: it
/// is larger than what was left for the cache.
pub(super) fn activations_dominate(m: &VllmMemory) -> bool {
    matches!((m.activation_peak_bytes, m.kv_cache_bytes), (Some(a), Some(k)) if a > k)
}

pub(super) const FIX_ACTIVATIONS: &str = "Las activaciones de la pasada de prueba ocupan más que la caché: baja \
     --max-num-batched-tokens (por ejemplo a 8192 o 4096) y --max-num-seqs, que fijan su \
     tamaño. ";

/// vLLM refused to start: `gpu_memory_utilization` of the whole card was more than was
/// free when its worker started.
pub(super) fn vllm_startup(d: &Decoded, r: &mut Ranking) {
    let m = d.vllm_memory.as_ref();
    let asked = m.and_then(|m| m.budget_bytes);
    let percent = m.and_then(VllmMemory::utilization_text);
    let numbers = match (asked, percent, d.free_bytes, d.total_bytes) {
        (Some(asked), Some(pct), Some(free), Some(total)) => format!(
            " Aquí pidió el {pct} % de {} ({}) y solo había {} libres: {} ya estaban ocupados.",
            b(total),
            b(asked),
            b(free),
            b(total.saturating_sub(free))
        ),
        _ => String::new(),
    };
    // The largest utilization that fits what was free, rounded down to hundredths.
    let most = match (d.free_bytes, d.total_bytes) {
        (Some(free), Some(total)) if total > 0 => {
            let hundredths = u128::from(free) * 100 / u128::from(total);
            format!("Baja --gpu-memory-utilization a 0,{hundredths:02} o menos, o libera la GPU: ")
        }
        _ => "Baja --gpu-memory-utilization o libera la GPU: ".to_owned(),
    };
    r.add(
        95,
        CauseId::OtherProcess,
        "vLLM no arrancó: no había libre lo que pide gpu_memory_utilization",
        format!(
            "Antes de cargar nada, vLLM exige que esté libre gpu_memory_utilization (0,9 por \
             defecto) de la memoria total de la GPU, no de la que quede libre. Lo demás lo \
             ocupaban otros procesos (otro vLLM que sigue vivo, un notebook con tensores, el \
             escritorio) y el contexto CUDA del propio vLLM, unos cientos de MiB.{numbers}"
        ),
        format!(
            "{most}nvidia-smi muestra qué procesos la ocupan; si es otro vLLM o un notebook, \
             ciérralo. Varias instancias en la misma GPU deben sumar menos de 1 entre todas. \
             El estimador, con la memoria ya ocupada, dice hasta qué porcentaje arranca."
        ),
        GUIDE_ESTIMATOR,
    );
}

/// A report with no error after it: how the memory was shared.
pub(super) fn vllm_report(d: &Decoded, r: &mut Ranking) {
    let Some(m) = &d.vllm_memory else { return };
    let why = vllm_report_sentence(m).unwrap_or_else(|| {
        "El registro de arranque de vLLM no trae cifras que pueda leer.".to_owned()
    });
    let first = if activations_dominate(m) {
        FIX_ACTIVATIONS
    } else {
        ""
    };
    r.add(
        40,
        CauseId::KvCacheBudget,
        "Cómo repartió vLLM la memoria al arrancar",
        why,
        format!(
            "{first}Para más caché (más peticiones a la vez o contextos más largos): sube \
             --gpu-memory-utilization si la GPU es solo para vLLM, usa --kv-cache-dtype fp8, \
             pesos cuantizados o --tensor-parallel-size; para menos, baja --max-model-len."
        ),
        GUIDE_ESTIMATOR,
    );
}

pub(super) fn host(d: &Decoded, r: &mut Ranking) {
    let asked = d
        .requested_bytes
        .map_or_else(String::new, |n| format!(" Se pidieron {}", b(n)));
    let free = match (d.requested_bytes, d.free_bytes) {
        (Some(_), Some(f)) => format!(" y había {} disponibles.", b(f)),
        (Some(_), None) => ".".to_owned(),
        _ => String::new(),
    };
    let backend = d.backend.as_deref().unwrap_or("CPU");
    let (why, fix) = if backend.to_ascii_lowercase().ends_with("_host") {
        (
            "llama.cpp no pudo reservar memoria fijada (pinned) en la RAM del equipo para copiar \
             datos a la GPU.",
            "Libera RAM (cierra otros programas), añade swap, o desactiva la memoria fijada con \
             GGML_CUDA_NO_PINNED=1; con mmap (el valor por defecto, sin --no-mmap) los pesos no \
             ocupan RAM propia.",
        )
    } else if d.excerpt.to_ascii_lowercase().contains("system memory")
        || d.excerpt
            .to_ascii_lowercase()
            .contains("too large for this system")
    {
        (
            "Ollama comprobó antes de cargar el modelo que la RAM libre del equipo no alcanza \
             para la parte del modelo que no va a la GPU (o para todo, si no hay GPU).",
            "Usa una cuantización o un modelo más pequeño (ollama pull con la etiqueta q4_K_M), \
             cierra otros programas, baja num_ctx y OLLAMA_NUM_PARALLEL; si tienes GPU, comprueba \
             con «ollama ps» que el modelo se está cargando en ella.",
        )
    } else {
        (
            "El mensaje es del asignador de CPU de PyTorch (DefaultCPUAllocator): lo que faltó \
             es RAM del equipo. Suele pasar al cargar un modelo entero en la CPU antes de moverlo \
             a la GPU, o con muchos procesos del DataLoader.",
            "Carga el modelo directamente en la GPU o por partes (en Transformers, \
             device_map=\"auto\" y low_cpu_mem_usage=True; pesos en safetensors, que se leen con \
             mmap), baja num_workers del DataLoader, o añade swap o RAM.",
        )
    };
    r.add(
        90,
        CauseId::CpuRam,
        "Se agotó la RAM del sistema, no la memoria de la GPU",
        format!("{why}{asked}{free}"),
        fix.to_owned(),
        GUIDE_STRATEGIES,
    );
}

#[cfg(test)]
mod tests {
    use crate::diagnosis::CauseId;
    use crate::explain;

    #[test]
    fn ggml_fix_follows_the_buffer() {
        let e = explain(
            "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache",
        );
        assert_eq!(e.diagnosis[0].id, CauseId::GgmlBuffer);
        assert!(
            e.diagnosis[0].fix.contains("--cache-type-k q8_0"),
            "{}",
            e.diagnosis[0].fix
        );
        let e = explain("alloc_tensor_range: failed to allocate CUDA0 buffer of size 10345254912");
        assert!(
            e.diagnosis[0]
                .explanation
                .contains("9,63 GiB en la GPU 0 para los pesos"),
            "{}",
            e.diagnosis[0].explanation
        );
        assert!(e.diagnosis[0].fix.contains("-ngl"));
    }

    /// A load report's advice for the compute buffer leaves out the flash attention the
    /// log already has, and names the pipeline's copies when several GPUs ran one.
    #[test]
    fn compute_advice_follows_the_log() {
        let log = |flash: u8| {
            format!(
                "llama_new_context_with_model: n_ctx      = 32768\n\
                 llama_new_context_with_model: n_ubatch   = 512\n\
                 llama_new_context_with_model: flash_attn = {flash}\n\
                 llama_new_context_with_model: pipeline parallelism enabled (n_copies=4)\n\
                 llama_new_context_with_model:      CUDA0 compute buffer size =  1166.01 MiB\n\
                 llama_new_context_with_model:      CUDA1 compute buffer size =  1166.02 MiB\n"
            )
        };
        let fix = |flash| {
            let e = explain(&log(flash));
            let d = e
                .diagnosis
                .iter()
                .find(|d| d.id == CauseId::GgmlBuffer)
                .expect("report")
                .clone();
            d.fix
        };
        let (off, on) = (fix(0), fix(1));
        // A 2026 build names the copies only at the end of its reserve.
        let quiet = log(1).replace(
            "llama_new_context_with_model: pipeline parallelism enabled (n_copies=4)\n",
            "",
        ) + "sched_reserve: reserve took 12.34 ms, sched copies = 4\n";
        let e = explain(&quiet);
        let d = e
            .diagnosis
            .iter()
            .find(|d| d.id == CauseId::GgmlBuffer)
            .expect("report");
        assert!(d.fix.contains("4 copias de las entradas"), "{}", d.fix);
        assert!(off.contains("activa flash attention (-fa)"), "{off}");
        assert!(!on.contains("activa flash attention"), "{on}");
        for f in [&off, &on] {
            assert!(f.contains("4 copias de las entradas"), "{f}");
        }
    }

    #[test]
    fn host_ram_cites_what_was_asked_and_available() {
        let e = explain(
            "Error: model requires more system memory (44.0 GiB) than is available (7.6 GiB)",
        );
        let c = &e.diagnosis[0];
        assert_eq!(c.id, CauseId::CpuRam);
        assert!(
            c.explanation
                .contains("Se pidieron 44,00 GiB y había 7,60 GiB disponibles."),
            "{}",
            c.explanation
        );
        assert!(c.fix.contains("OLLAMA_NUM_PARALLEL"));
        let e = explain(
            "DefaultCPUAllocator: not enough memory: you tried to allocate 34359738368 bytes.",
        );
        assert!(e.diagnosis[0].fix.contains("low_cpu_mem_usage=True"));
        assert_eq!(e.diagnosis.len(), 1);
    }
}
