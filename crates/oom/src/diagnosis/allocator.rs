//! Rules for PyTorch's caching-allocator messages (CUDA, HIP, XPU).
//!
//! Reading the message as the allocator wrote it: before raising, it has already
//! returned every cached block it could to CUDA, so what is still "reserved but
//! unallocated" sits inside segments that also hold live tensors (fragmentation), and
//! `free` is what CUDA reports for the whole GPU at that instant.

use super::{
    CauseId, GUIDE_ANATOMY, GUIDE_CUDA_GRAPHS, GUIDE_FRAGMENTATION, GUIDE_OTHER_PROCESS,
    GUIDE_RESERVED, GUIDE_STRATEGIES, Ranking,
};
use crate::format::binary as b;
use crate::model::{Allocator, Decoded, Era, Kind};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

pub(super) fn diagnose(d: &Decoded, r: &mut Ranking) {
    too_big_single(d, r);
    memory_fraction(d, r);
    other_process(d, r);
    fragmentation(d, r);
    private_pools(d, r);
    graph_capture(d, r);
    non_pytorch(d, r);
    free_at_report(d, r);
    too_big(d, r);
    small_request(d, r);
    notes(d, r);
}

/// The fix for fragmentation in this message's release and backend.
pub(super) fn fragmentation_fix(kind: Kind, era: Option<Era>) -> String {
    let common = " Reducir el pico (lote o secuencia) también deja menos huecos.";
    let main = match (kind, era) {
        (Kind::XpuOom, _) => {
            "El propio mensaje de XPU propone liberar la caché: llama a torch.xpu.empty_cache() \
             entre fases (por ejemplo, entre evaluación y entrenamiento)."
        }
        // torch_npu reads its own copy of the allocator's settings.
        (Kind::NpuOom, _) => {
            "Arranca el proceso con PYTORCH_NPU_ALLOC_CONF=expandable_segments:True (torch_npu \
             2.1 o posterior; antes, max_split_size_mb:128) y llama a torch.npu.empty_cache() \
             entre fases."
        }
        (Kind::HipOom, Some(Era::V14To20 | Era::V2018)) => {
            "Prueba PYTORCH_HIP_ALLOC_CONF=max_split_size_mb:128, o actualiza PyTorch (2.1 o \
             posterior) y usa expandable_segments:True."
        }
        (Kind::HipOom, _) => {
            "Arranca el proceso con PYTORCH_HIP_ALLOC_CONF=expandable_segments:True: los \
             segmentos crecen en lugar de trocearse y los huecos se reaprovechan."
        }
        (_, Some(Era::V14To20)) => {
            "Esta versión no tiene expandable_segments: prueba \
             PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 (desde PyTorch 1.10; impide trocear \
             bloques grandes), o actualiza a PyTorch 2.1 o posterior y usa \
             PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True."
        }
        (_, Some(Era::V2018)) => {
            "Actualiza PyTorch: esta versión no tiene ni max_split_size_mb ni \
             expandable_segments. Mientras tanto, llama a torch.cuda.empty_cache() entre fases \
             (por ejemplo, entre evaluación y entrenamiento)."
        }
        _ => {
            "Arranca el proceso con PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: los \
             segmentos crecen en lugar de trocearse y los huecos se reaprovechan (en PyTorch \
             anterior a 2.1, usa max_split_size_mb:128)."
        }
    };
    format!("{main}{common}")
}

pub(super) fn reduce_fix() -> String {
    "Reduce lo que ocupa el paso que falla: un lote más pequeño (con acumulación de \
     gradientes para conservar el lote efectivo), secuencias más cortas, pesos en bf16 o \
     cuantizados a 8 o 4 bits, gradient checkpointing, un optimizador de 8 bits, LoRA o QLoRA \
     en lugar de un ajuste completo, o repartir el modelo entre varias GPU (FSDP, ZeRO). El \
     estimador de VRAM de la guía calcula qué cabe antes de probar."
        .to_owned()
}

fn too_big_single(d: &Decoded, r: &mut Ranking) {
    let (Some(req), Some(total)) = (d.requested_bytes, d.total_bytes) else {
        return;
    };
    if req <= total {
        return;
    }
    let mut why = format!(
        "PyTorch intentó reservar {} de una vez y la GPU solo tiene {} en total. Ningún ajuste \
         del asignador lo arregla: ese tensor no cabe.",
        b(req),
        b(total)
    );
    if req / 4 >= total {
        why.push_str(
            " Un tamaño tan desproporcionado suele delatar un error de forma (un broadcast o un \
             reshape que multiplica dimensiones) o una secuencia mucho más larga de lo previsto.",
        );
    }
    r.add(
        100,
        CauseId::TooBig,
        "Una sola reserva es mayor que toda la GPU",
        why,
        "Imprime la forma (.shape) de los tensores de la línea que falla. Si es la esperada, \
         trocea la operación (atención por bloques con scaled_dot_product_attention o \
         FlashAttention, pérdida calculada por trozos de secuencia), reduce lote o secuencia, o \
         reparte ese tensor entre varias GPU."
            .to_owned(),
        GUIDE_STRATEGIES,
    );
}

fn memory_fraction(d: &Decoded, r: &mut Ranking) {
    let Some(allowed) = d.allowed_bytes else {
        return;
    };
    let held = d.reserved_total_bytes.or(d.allocated_bytes).unwrap_or(0);
    let req = d.requested_bytes.unwrap_or(0);
    if held.saturating_add(req) <= allowed {
        return;
    }
    let room = d.free_bytes.is_some_and(|f| f >= req);
    let total = d
        .total_bytes
        .map_or(String::new(), |t| format!(" de los {} de la GPU", b(t)));
    let free = match d.free_bytes {
        Some(f) if room => format!(", aunque la GPU aún tenía {} libres", b(f)),
        _ => String::new(),
    };
    r.add(
        if room { 95 } else { 50 },
        CauseId::MemoryFraction,
        "El proceso tiene un tope de memoria",
        format!(
            "Este proceso solo puede usar {}{} (torch.cuda.set_per_process_memory_fraction). \
             PyTorch ya tenía {} y pedir {} más lo supera{}.",
            b(allowed),
            total,
            b(held),
            b(req),
            free
        ),
        "Sube la fracción, o quita la llamada a set_per_process_memory_fraction, si la GPU es \
         solo tuya; si la compartes a propósito, reduce lo que usa este proceso."
            .to_owned(),
        GUIDE_RESERVED,
    );
}

fn other_process(d: &Decoded, r: &mut Ranking) {
    let others = d.other_processes_bytes();
    let req = d.requested_bytes.unwrap_or(0);
    let fix = "Mira quién usa la GPU con nvidia-smi (o nvidia-smi \
               --query-compute-apps=pid,used_memory --format=csv) y cierra lo que sobre: kernels \
               de Jupyter olvidados, entrenamientos anteriores, servidores de inferencia. Si la \
               GPU es compartida, elige otra con CUDA_VISIBLE_DEVICES. Dentro de un contenedor \
               nvidia-smi no muestra los procesos de otros: míralo desde el anfitrión.";
    if others >= 256 * MIB {
        let list: Vec<String> = d
            .other_processes
            .iter()
            .filter(|p| !p.likely_self)
            .take(8)
            .map(|p| format!("PID {} ({})", p.pid, b(p.bytes)))
            .collect();
        let would_fit = d
            .free_bytes
            .is_some_and(|f| req <= f.saturating_add(others));
        r.add(
            if would_fit { 85 } else { 60 },
            CauseId::OtherProcess,
            "Otros procesos ocupan la GPU",
            format!(
                "Además de este proceso, usan la GPU: {}; en total {}.{}",
                list.join(", "),
                b(others),
                if would_fit {
                    format!(" Sin ellos, la reserva de {} cabría.", b(req))
                } else {
                    String::new()
                }
            ),
            fix.to_owned(),
            GUIDE_OTHER_PROCESS,
        );
        return;
    }
    let (Some(total), Some(free)) = (d.total_bytes, d.free_bytes) else {
        return;
    };
    let listed: u64 = d
        .other_processes
        .iter()
        .fold(0, |acc, p| acc.saturating_add(p.bytes));
    let this = d
        .process_in_use_bytes
        .or_else(|| (listed > 0).then_some(listed));
    if let Some(this) = this {
        let gap = total.saturating_sub(free.saturating_add(this).saturating_add(others));
        if gap >= (total / 20).max(GIB) {
            r.add(
                if req <= free.saturating_add(gap) {
                    82
                } else {
                    55
                },
                CauseId::OtherProcess,
                "Falta memoria que no es de este proceso",
                format!(
                    "La GPU tiene {}; este proceso usa {} y quedan {} libres: faltan {} que el \
                     mensaje no atribuye a nadie. Suele ser otro proceso que NVML no ve (otro \
                     contenedor u otro usuario) o memoria retenida por el driver.",
                    b(total),
                    b(this),
                    b(free),
                    b(gap)
                ),
                fix.to_owned(),
                GUIDE_OTHER_PROCESS,
            );
        }
    } else if let Some(reserved) = d.reserved_total_bytes {
        let outside = total.saturating_sub(free.saturating_add(reserved));
        if outside >= (total / 10).max(2 * GIB) {
            // What a CUDA context and its libraries take, at most, on their own.
            let context = 3 * GIB / 2;
            let would_fit = req <= free.saturating_add(outside.saturating_sub(context));
            r.add(
                if would_fit { 82 } else { 50 },
                CauseId::OtherProcess,
                "Probablemente otro proceso ocupa la GPU",
                format!(
                    "De los {} de la GPU, PyTorch reservó {} y quedan {} libres: {} están fuera \
                     de PyTorch. El contexto CUDA y las bibliotecas suelen ocupar entre 0,3 y 1,5 \
                     GiB; el resto probablemente sea otro proceso (o una biblioteca de este mismo \
                     con su propia memoria).",
                    b(total),
                    b(reserved),
                    b(free),
                    b(outside)
                ),
                fix.to_owned(),
                GUIDE_OTHER_PROCESS,
            );
        }
    }
}

fn fragmentation(d: &Decoded, r: &mut Ranking) {
    let (Some(unalloc), Some(req)) = (
        d.reserved_unallocated_bytes.filter(|&u| u > 0),
        d.requested_bytes,
    ) else {
        return;
    };
    let total = d.total_bytes;
    let free = d.free_bytes.unwrap_or(0);
    if d.free_bytes.is_some_and(|f| f >= req) {
        // CUDA had room for it: holes are not why this allocation failed.
        return;
    }
    let fix = fragmentation_fix(d.kind, d.pytorch_era);
    let title = "Fragmentación: hay memoria reservada libre, pero troceada";
    let trapped = "Antes de fallar, el asignador ya devolvió a CUDA todo lo que podía; lo que \
                   queda está en huecos dentro de bloques con tensores vivos.";
    if unalloc >= req {
        let significant = unalloc >= 512 * MIB || total.is_some_and(|t| unalloc >= t / 50);
        let mut why = format!(
            "PyTorch tiene {} reservados que ningún tensor usa, más que los {} que pidió, pero \
             ningún hueco es lo bastante grande. {trapped}",
            b(unalloc),
            b(req)
        );
        if !significant {
            why.push_str(
                " Son pocos bytes: sin fragmentación esta reserva cabría, pero la GPU seguiría \
                 casi llena.",
            );
        }
        r.add(
            if significant { 80 } else { 55 },
            CauseId::Fragmentation,
            title,
            why,
            fix,
            GUIDE_FRAGMENTATION,
        );
    } else if free.saturating_add(unalloc) >= req && unalloc >= 256 * MIB {
        r.add(
            60,
            CauseId::Fragmentation,
            title,
            format!(
                "Los {} libres no bastan para los {} pedidos, pero con los {} que PyTorch tiene \
                 reservados sin usar sí bastarían. {trapped}",
                b(free),
                b(req),
                b(unalloc)
            ),
            fix,
            GUIDE_FRAGMENTATION,
        );
    } else if unalloc >= total.map_or(GIB, |t| (t / 20).max(GIB))
        || (unalloc >= 256 * MIB && unalloc >= req / 2)
    {
        r.add(
            35,
            CauseId::Fragmentation,
            "Parte de la memoria se pierde en huecos",
            format!(
                "PyTorch tiene {} reservados sin usar: no bastan para los {} pedidos, pero es \
                 memoria perdida en huecos que se suma al problema.",
                b(unalloc),
                b(req)
            ),
            fix,
            GUIDE_FRAGMENTATION,
        );
    }
}

/// vLLM up to 0.20 captured its CUDA graphs after the KV cache had filled
/// `gpu_memory_utilization`: the graphs' pool (0.5–2 GiB) had to fit in what that
/// fraction left free, and a fraction close to 1 ran out there.
pub(super) fn graph_capture(d: &Decoded, r: &mut Ranking) {
    if !d.graph_capture {
        return;
    }
    let pools = d
        .private_pools_bytes
        .filter(|&p| p > 0)
        .map_or_else(String::new, |p| {
            format!(" Los grafos ya capturados ocupaban {}.", b(p))
        });
    r.add(
        90,
        CauseId::GraphCapture,
        "vLLM se quedó sin memoria al capturar sus grafos CUDA",
        format!(
            "El error llegó mientras vLLM capturaba sus grafos CUDA («Capturing CUDA graphs»),              después de repartir la caché KV. Hasta la versión 0.20 vLLM no les reservaba              sitio: la caché KV llenaba toda la fracción de gpu_memory_utilization y los grafos              (entre 0,5 y 2 GiB según las capas del modelo) tenían que caber en lo que esa              fracción deja fuera. Desde la 0.21 descuenta de la caché una estimación, pero la \
             mide con una caché mínima y a veces se queda corta.{pools}"
        ),
        "Baja --gpu-memory-utilization (unos 0,05 suelen bastar), arranca con --enforce-eager          (sin grafos, algo más lento con lotes pequeños) o usa vLLM 0.21 o posterior, que estima          los grafos al arrancar y los descuenta de la caché KV (en la 0.19 y la 0.20, con          VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1). El estimador, con el servidor y los grafos          «aparte», dice hasta qué fracción cabe."
            .to_owned(),
        GUIDE_CUDA_GRAPHS,
    );
}

fn private_pools(d: &Decoded, r: &mut Ranking) {
    let Some(pools) = d.private_pools_bytes.filter(|&p| p >= 256 * MIB) else {
        return;
    };
    let covers = d.requested_bytes.is_some_and(|q| pools >= q);
    r.add(
        if covers { 70 } else { 30 },
        CauseId::PrivatePools,
        "CUDA Graphs retienen memoria",
        format!(
            "{} están en pools privados de CUDA Graphs: cada captura guarda su memoria mientras \
             exista y el resto del programa no puede usarla.",
            b(pools)
        ),
        "Si usas torch.compile con mode=\"reduce-overhead\" o \"max-autotune\", prueba \
         mode=\"default\"; en vLLM, --enforce-eager o menos tamaños de lote capturados. Borra los \
         grafos que ya no uses antes de llamar a torch.cuda.empty_cache()."
            .to_owned(),
        GUIDE_CUDA_GRAPHS,
    );
}

fn non_pytorch(d: &Decoded, r: &mut Ranking) {
    let (Some(in_use), Some(reserved)) = (d.process_in_use_bytes, d.reserved_total_bytes) else {
        return;
    };
    let outside = in_use.saturating_sub(reserved);
    if outside < d.total_bytes.map_or(2 * GIB, |t| (t / 10).max(2 * GIB)) {
        return;
    }
    r.add(
        50,
        CauseId::NonPytorchMemory,
        "Este proceso usa mucha memoria fuera de PyTorch",
        format!(
            "El proceso usa {} en total pero PyTorch solo reservó {}: {} son de otra cosa del \
             mismo proceso. El contexto CUDA ocupa unos cientos de MiB; el resto suele ser \
             espacio de trabajo de cuBLAS o cuDNN, búferes de NCCL o una biblioteca con su propio \
             asignador (TensorRT, CuPy, JAX, ONNX Runtime).",
            b(in_use),
            b(reserved),
            b(outside)
        ),
        "Busca qué biblioteca reserva por su cuenta y limítala: NCCL_BUFFSIZE más pequeño para \
         NCCL, XLA_PYTHON_CLIENT_MEM_FRACTION para JAX, el límite de memoria del proveedor en \
         ONNX Runtime o TensorRT."
            .to_owned(),
        GUIDE_ANATOMY,
    );
}

fn free_at_report(d: &Decoded, r: &mut Ranking) {
    let (Some(req), Some(free)) = (d.requested_bytes, d.free_bytes) else {
        return;
    };
    if free < req || r.has(CauseId::MemoryFraction) || r.has(CauseId::TooBig) {
        return;
    }
    r.add(
        60,
        CauseId::FreeAtReport,
        "El mensaje dice que había memoria libre",
        format!(
            "Cuando falló, CUDA informaba de {} libres, más que los {} pedidos. Suele pasar \
             cuando otro proceso (u otro hilo) liberó memoria justo después del fallo, o cuando \
             la memoria libre está partida a nivel del driver.",
            b(free),
            b(req)
        ),
        "Vigila la GPU mientras se ejecuta (nvidia-smi -l 1) por si otro proceso sube y baja. \
         Si estás en el límite, deja margen reduciendo el lote."
            .to_owned(),
        GUIDE_OTHER_PROCESS,
    );
}

fn too_big(d: &Decoded, r: &mut Ranking) {
    let limit_with_room = r.score(CauseId::MemoryFraction).is_some_and(|s| s >= 90);
    if r.has(CauseId::TooBig) || r.has(CauseId::FreeAtReport) || limit_with_room {
        return;
    }
    let strong_other = [
        CauseId::Fragmentation,
        CauseId::OtherProcess,
        CauseId::MemoryFraction,
    ]
    .iter()
    .any(|&id| r.score(id).is_some_and(|s| s >= 80));
    // The holes PyTorch holds plus what CUDA has free would hold the request: the live
    // tensors and the request fit in what the card gives, so the shortfall is
    // fragmentation's (its card says so), not a load too big.
    if let (Some(req), Some(unalloc)) = (d.requested_bytes, d.reserved_unallocated_bytes)
        && req <= unalloc.saturating_add(d.free_bytes.unwrap_or(0))
        && r.has(CauseId::Fragmentation)
    {
        return;
    }
    let Some(req) = d.requested_bytes else {
        r.add(
            40,
            CauseId::TooBig,
            "La carga probablemente no cabe",
            "El mensaje está cortado antes de decir cuánto se pidió, así que no puedo medir \
             cuánto falta; sin otras pistas, lo habitual es que el modelo y las activaciones del \
             paso que falla no quepan."
                .to_owned(),
            reduce_fix(),
            GUIDE_STRATEGIES,
        );
        return;
    };
    let mut why = String::from("Este paso necesita más memoria de la que hay");
    match (d.allocated_bytes, d.total_bytes) {
        (Some(a), Some(t)) => why.push_str(&format!(
            ": PyTorch ya tenía {} asignados de los {} de la GPU",
            b(a),
            b(t)
        )),
        (Some(a), None) => why.push_str(&format!(": PyTorch ya tenía {} asignados", b(a))),
        (None, Some(t)) => why.push_str(&format!(" en una GPU de {}", b(t))),
        (None, None) => {}
    }
    match d.free_bytes {
        Some(f) => {
            why.push_str(&format!(
                " y pedía {} más con solo {} libres. ",
                b(req),
                b(f)
            ));
            why.push_str(&format!(
                "Faltan al menos {} para esta reserva, y las siguientes suelen pedir más: \
                 recorta con margen.",
                b(req.saturating_sub(f))
            ));
        }
        None => why.push_str(&format!(" y pedía {} más.", b(req))),
    }
    r.add(
        if strong_other { 45 } else { 75 },
        CauseId::TooBig,
        "La carga no cabe en la GPU",
        why,
        reduce_fix(),
        GUIDE_STRATEGIES,
    );
}

fn small_request(d: &Decoded, r: &mut Ranking) {
    let Some(req) = d.requested_bytes.filter(|&q| q > 0 && q <= 20 * MIB) else {
        return;
    };
    let mut why = format!(
        "Pedir {} es poco, y es un tamaño ya redondeado: la petición real fue igual o menor. \
         El problema no es esta reserva sino todo lo anterior",
        b(req)
    );
    match (d.allocated_bytes, d.free_bytes) {
        (Some(a), Some(f)) => why.push_str(&format!(
            ": PyTorch ya tenía {} asignados y solo quedaban {} libres.",
            b(a),
            b(f)
        )),
        (Some(a), None) => why.push_str(&format!(": PyTorch ya tenía {} asignados.", b(a))),
        (None, Some(f)) => why.push_str(&format!(": solo quedaban {} libres.", b(f))),
        (None, None) => why.push('.'),
    }
    r.add(
        40,
        CauseId::SmallRequest,
        "La petición es pequeña: la GPU ya estaba llena",
        why,
        "Busca qué ocupa la memoria, no qué la pidió al final: el tamaño de lote, la longitud \
         de secuencia, o tensores que guardas sin querer (acumular la pérdida sin .item(), \
         evaluar sin torch.no_grad(), listas de salidas que crecen en cada paso)."
            .to_owned(),
        GUIDE_STRATEGIES,
    );
}

fn notes(d: &Decoded, r: &mut Ranking) {
    if d.pytorch_era == Some(Era::V2018) {
        r.note(
            "En los mensajes de 2018–2019, «cached» es la memoria reservada que ningún tensor usa \
             (reservada menos asignada), no el total reservado."
                .to_owned(),
        );
    }
    if let Some(p) = d.other_processes.iter().find(|p| p.likely_self) {
        r.note(format!(
            "El proceso {} ({}) probablemente es este mismo: el mensaje no trae la línea «this \
             process has» y ese proceso ocupa lo que PyTorch reservó y algo más. Dentro de un \
             contenedor, NVML informa del PID del anfitrión.",
            p.pid,
            b(p.bytes)
        ));
    }
    if let (Some(a), Some(t)) = (d.allocated_bytes, d.total_bytes)
        && a > t
    {
        r.note(format!(
            "PyTorch dice tener asignados {} con una capacidad de {}: en Windows el driver \
                 puede desbordar a la memoria compartida del sistema (mucho más lenta) antes de \
                 fallar. Desactivar «CUDA Sysmem Fallback Policy» en el panel de NVIDIA hace que \
                 falle antes, en lugar de ir lento.",
            b(a),
            b(t)
        ));
    }
    if d.process_in_use_bytes.is_none()
        && d.other_processes.is_empty()
        && let (Some(t), Some(f), Some(res)) = (d.total_bytes, d.free_bytes, d.reserved_total_bytes)
    {
        let outside = t.saturating_sub(f.saturating_add(res));
        if outside >= 256 * MIB && !r.has(CauseId::OtherProcess) {
            r.note(format!(
                "Unos {} de la GPU no son de PyTorch: el contexto CUDA y las bibliotecas \
                     (cuBLAS, cuDNN), lo normal.",
                b(outside)
            ));
        }
    }
    if d.allocator == Some(Allocator::CudaMallocAsync) {
        r.note(
            "Este mensaje es del asignador cudaMallocAsync \
             (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync): no separa memoria reservada de \
             asignada, así que la fragmentación no se puede medir desde él. Con el asignador \
             nativo y expandable_segments:True el mensaje dice más."
                .to_owned(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnosis::{Diagnosis, diagnose};
    use crate::model::ProcessUse;

    /// A 2.1+ CUDA message on a 24 GiB GPU with nothing else said.
    fn msg() -> Decoded {
        let mut d = Decoded::new(Kind::PytorchOom);
        d.pytorch_era = Some(Era::V21Plus);
        d.total_bytes = Some(24 * GIB);
        d
    }

    fn ids(d: &Decoded) -> Vec<CauseId> {
        let Diagnosis { causes, .. } = diagnose(d);
        causes.iter().map(|c| c.id).collect()
    }

    fn first(d: &Decoded) -> CauseId {
        ids(d).first().copied().unwrap_or(CauseId::Unrecognized)
    }

    #[test]
    fn a_request_larger_than_the_gpu() {
        let mut d = msg();
        d.requested_bytes = Some(130 * GIB);
        d.free_bytes = Some(20 * GIB);
        assert_eq!(ids(&d), [CauseId::TooBig]);
        let text = &diagnose(&d).causes[0].explanation;
        assert!(
            text.contains("130,00 GiB") && text.contains("error de forma"),
            "{text}"
        );
    }

    #[test]
    fn memory_fraction_with_room_is_the_only_cause() {
        let mut d = msg();
        d.requested_bytes = Some(2 * GIB);
        d.free_bytes = Some(12 * GIB);
        d.allowed_bytes = Some(12 * GIB);
        d.reserved_total_bytes = Some(11 * GIB);
        assert_eq!(ids(&d), [CauseId::MemoryFraction]);
        // Under the limit: not the cause.
        d.allowed_bytes = Some(20 * GIB);
        assert!(!ids(&d).contains(&CauseId::MemoryFraction));
    }

    #[test]
    fn named_other_processes() {
        let mut d = msg();
        d.requested_bytes = Some(GIB);
        d.free_bytes = Some(100 * MIB);
        d.process_in_use_bytes = Some(12 * GIB);
        d.other_processes = vec![ProcessUse {
            pid: 7,
            bytes: 10 * GIB,
            likely_self: false,
        }];
        assert_eq!(first(&d), CauseId::OtherProcess);
        assert!(
            diagnose(&d).causes[0]
                .explanation
                .contains("PID 7 (10,00 GiB)")
        );
        // The same process marked as this one is not "another process".
        d.other_processes[0].likely_self = true;
        d.other_processes[0].bytes = 23 * GIB;
        d.process_in_use_bytes = None;
        assert!(!ids(&d).contains(&CauseId::OtherProcess));
    }

    #[test]
    fn unexplained_gap_in_a_21_message() {
        let mut d = msg();
        d.requested_bytes = Some(GIB);
        d.free_bytes = Some(100 * MIB);
        d.process_in_use_bytes = Some(8 * GIB);
        assert_eq!(first(&d), CauseId::OtherProcess);
        d.process_in_use_bytes = Some(23 * GIB);
        assert!(!ids(&d).contains(&CauseId::OtherProcess));
    }

    #[test]
    fn memory_outside_pytorch_in_an_old_message() {
        let mut d = msg();
        d.pytorch_era = Some(Era::V14To20);
        d.requested_bytes = Some(GIB);
        d.free_bytes = Some(400 * MIB);
        d.reserved_total_bytes = Some(6 * GIB);
        assert_eq!(first(&d), CauseId::OtherProcess);
        // A normal CUDA context is a note, not a cause.
        d.reserved_total_bytes = Some(23 * GIB);
        assert!(!ids(&d).contains(&CauseId::OtherProcess));
        assert!(
            diagnose(&d)
                .notes
                .iter()
                .any(|n| n.contains("contexto CUDA"))
        );
    }

    #[test]
    fn fragmentation_when_holes_cover_the_request() {
        let mut d = msg();
        d.requested_bytes = Some(764 * MIB);
        d.free_bytes = Some(400 * MIB);
        d.reserved_unallocated_bytes = Some(3 * GIB);
        assert_eq!(first(&d), CauseId::Fragmentation);
        let fix = &diagnose(&d).causes[0].fix;
        assert!(fix.contains("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"));
        // A few holes on a big GPU: they would hold the request, so the load is not
        // "too big"; the card says the GPU stays nearly full.
        d.reserved_unallocated_bytes = Some(300 * MIB);
        d.requested_bytes = Some(100 * MIB);
        d.free_bytes = Some(50 * MIB);
        d.total_bytes = Some(80 * GIB);
        assert!(!ids(&d).contains(&CauseId::TooBig), "{:?}", ids(&d));
        assert!(ids(&d).contains(&CauseId::Fragmentation));
    }

    #[test]
    fn fragmentation_when_free_plus_holes_would_do() {
        let mut d = msg();
        d.requested_bytes = Some(1536 * MIB);
        d.free_bytes = Some(1044 * MIB);
        d.reserved_unallocated_bytes = Some(635 * MIB);
        assert_eq!(ids(&d)[0], CauseId::Fragmentation);
        assert!(!ids(&d).contains(&CauseId::TooBig));
        assert!(diagnose(&d).causes[0].explanation.contains("sí bastarían"));
    }

    #[test]
    fn no_fragmentation_when_cuda_had_room_or_holes_are_tiny() {
        let mut d = msg();
        d.requested_bytes = Some(GIB);
        d.free_bytes = Some(2 * GIB);
        d.reserved_unallocated_bytes = Some(4 * GIB);
        assert!(!ids(&d).contains(&CauseId::Fragmentation));
        d.free_bytes = Some(0);
        d.reserved_unallocated_bytes = Some(10 * MIB);
        assert!(!ids(&d).contains(&CauseId::Fragmentation));
    }

    /// Issue 42's case: 17,02 GiB allocated, 4,86 GiB reserved but unallocated, 3,91
    /// GiB requested, 1,23 GiB free on a 23,55 GiB card. Live memory plus the request
    /// (≈ 20,9 GiB) is below the capacity: fragmentation, and no "does not fit" card
    /// beside it.
    #[test]
    fn fragmentation_that_explains_the_shortfall_has_no_too_big_beside_it() {
        let mut d = msg();
        d.total_bytes = Some(23_550 * MIB);
        d.allocated_bytes = Some(17_020 * MIB);
        d.reserved_unallocated_bytes = Some(4_860 * MIB);
        d.requested_bytes = Some(3_910 * MIB);
        d.free_bytes = Some(1_230 * MIB);
        assert_eq!(first(&d), CauseId::Fragmentation);
        assert!(!ids(&d).contains(&CauseId::TooBig), "{:?}", ids(&d));
    }

    proptest::proptest! {
        /// No two cards contradict each other: "does not fit" is never beside a
        /// fragmentation card whose holes and free memory would hold the request.
        #[test]
        fn no_too_big_beside_a_sufficient_fragmentation(
            total in 1u64..200_000,
            alloc in 0u64..200_000,
            unalloc in 0u64..50_000,
            req in 1u64..50_000,
            free in 0u64..50_000,
        ) {
            // What a GPU reports: PyTorch's reservation and CUDA's free fit in the card.
            proptest::prop_assume!(alloc + unalloc + free <= total);
            let mut d = msg();
            d.total_bytes = Some(total * MIB);
            d.allocated_bytes = Some(alloc * MIB);
            d.reserved_unallocated_bytes = Some(unalloc * MIB);
            d.requested_bytes = Some(req * MIB);
            d.free_bytes = Some(free * MIB);
            let found = ids(&d);
            if found.contains(&CauseId::TooBig) && found.contains(&CauseId::Fragmentation) {
                proptest::prop_assert!(req > unalloc + free, "{found:?}");
            }
        }
    }

    #[test]
    fn fragmentation_fix_follows_the_release() {
        assert!(
            fragmentation_fix(Kind::PytorchOom, Some(Era::V14To20))
                .contains("max_split_size_mb:128")
        );
        assert!(
            fragmentation_fix(Kind::PytorchOom, Some(Era::V2018)).contains("Actualiza PyTorch")
        );
        assert!(
            fragmentation_fix(Kind::HipOom, Some(Era::V21Plus)).contains("PYTORCH_HIP_ALLOC_CONF")
        );
        assert!(fragmentation_fix(Kind::XpuOom, None).contains("torch.xpu.empty_cache()"));
        assert!(fragmentation_fix(Kind::NpuOom, None).contains("PYTORCH_NPU_ALLOC_CONF"));
    }

    #[test]
    fn private_pools() {
        let mut d = msg();
        d.requested_bytes = Some(2 * GIB);
        d.free_bytes = Some(GIB);
        d.private_pools_bytes = Some(5 * GIB);
        assert!(ids(&d).contains(&CauseId::PrivatePools));
        d.private_pools_bytes = Some(100 * MIB);
        assert!(!ids(&d).contains(&CauseId::PrivatePools));
    }

    #[test]
    fn memory_outside_pytorch_in_this_process() {
        let mut d = msg();
        d.requested_bytes = Some(GIB);
        d.free_bytes = Some(0);
        d.process_in_use_bytes = Some(20 * GIB);
        d.reserved_total_bytes = Some(14 * GIB);
        assert!(ids(&d).contains(&CauseId::NonPytorchMemory));
        d.reserved_total_bytes = Some(19 * GIB);
        assert!(!ids(&d).contains(&CauseId::NonPytorchMemory));
    }

    #[test]
    fn free_memory_at_report_time() {
        let mut d = msg();
        d.requested_bytes = Some(GIB);
        d.free_bytes = Some(5 * GIB);
        assert_eq!(ids(&d), [CauseId::FreeAtReport]);
    }

    #[test]
    fn too_big_says_how_much_to_cut() {
        let mut d = msg();
        d.requested_bytes = Some(3 * GIB);
        d.free_bytes = Some(GIB);
        d.allocated_bytes = Some(20 * GIB);
        assert_eq!(ids(&d), [CauseId::TooBig]);
        let text = &diagnose(&d).causes[0].explanation;
        assert!(text.contains("Faltan al menos 2,00 GiB"), "{text}");
        // Without the request (truncated), a hedged "probably".
        d.requested_bytes = None;
        assert_eq!(
            diagnose(&d).causes[0].title,
            "La carga probablemente no cabe"
        );
    }

    #[test]
    fn small_requests() {
        let mut d = msg();
        d.requested_bytes = Some(2 * MIB);
        d.free_bytes = Some(MIB);
        d.allocated_bytes = Some(23 * GIB);
        assert_eq!(ids(&d), [CauseId::TooBig, CauseId::SmallRequest]);
        d.requested_bytes = Some(21 * MIB);
        assert!(!ids(&d).contains(&CauseId::SmallRequest));
    }

    #[test]
    fn notes_for_old_wording_containers_windows_and_async() {
        let mut d = msg();
        d.pytorch_era = Some(Era::V2018);
        d.requested_bytes = Some(2 * MIB);
        assert!(diagnose(&d).notes.iter().any(|n| n.contains("«cached»")));
        let mut d = msg();
        d.allocated_bytes = Some(30 * GIB);
        assert!(diagnose(&d).notes.iter().any(|n| n.contains("Windows")));
        let mut d = msg();
        d.other_processes = vec![ProcessUse {
            pid: 9,
            bytes: 20 * GIB,
            likely_self: true,
        }];
        assert!(diagnose(&d).notes.iter().any(|n| n.contains("contenedor")));
        let mut d = msg();
        d.allocator = Some(Allocator::CudaMallocAsync);
        assert!(
            diagnose(&d)
                .notes
                .iter()
                .any(|n| n.contains("cudaMallocAsync"))
        );
    }
}
