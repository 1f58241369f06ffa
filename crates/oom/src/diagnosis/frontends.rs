//! What ComfyUI's load line and AUTOMATIC1111's memory footer add to a diagnosis: how
//! much of the model was already streamed from RAM, and how much of the card PyTorch
//! never held. Both front ends are described in `crate::frontends`.

use super::{CauseId, GUIDE_OTHER_PROCESS, GUIDE_STRATEGIES, Ranking};
use crate::format::binary as b;
use crate::model::{Decoded, FrontendMemory};

/// ComfyUI's own switches for a card that is too small for the workflow.
const FIX_COMFY: &str = "Arranca ComfyUI con --reserve-vram 1 (GB que deja libres para el cálculo; \
     sube a 2 si vuelve a fallar) o con --lowvram (o --novram en tarjetas muy pequeñas); baja la \
     resolución, los fotogramas o el lote; usa pesos más pequeños (fp8 o GGUF) y decodifica con \
     «VAE Decode (Tiled)».";

/// AUTOMATIC1111's switches, and what else holds the card.
const FIX_WEBUI: &str = "Arranca la webui con --medvram (o --lowvram si no basta; en SDXL, \
     --medvram-sdxl), activa una atención eficiente (--xformers o --opt-sdp-attention), baja la \
     resolución o el lote, y cierra lo que use la GPU (navegador con aceleración, otra \
     instancia): nvidia-smi lo lista.";

pub(super) fn diagnose(d: &Decoded, r: &mut Ranking) {
    let Some(m) = d.frontend_memory.as_ref() else {
        return;
    };
    match m.frontend.as_str() {
        "comfyui" => comfy(m, r),
        "webui" => webui(m, r),
        _ => {}
    }
}

fn comfy(m: &FrontendMemory, r: &mut Ranking) {
    let model = m
        .model
        .as_deref()
        .map_or_else(String::new, |name| format!(" {name}"));
    match (m.loaded_bytes, m.offloaded_bytes) {
        (Some(loaded), Some(offloaded)) if offloaded > 0 => {
            let usable = m.usable_bytes.map_or_else(String::new, |u| {
                format!(" (le dejó {} para los pesos)", b(u))
            });
            r.add(
                60,
                CauseId::FrontendMemory,
                "ComfyUI ya cargaba el modelo a medias",
                format!(
                    "ComfyUI cargó el modelo{model} en modo de poca VRAM: {} en la GPU y {} en \
                     la RAM, que copia capa a capa cuando las usa{usable}. Aun así se acabó la \
                     memoria: lo que no cupo fue el cálculo (las activaciones del muestreo o del \
                     VAE, que crecen con la resolución y los fotogramas), no los pesos.",
                    b(loaded),
                    b(offloaded)
                ),
                FIX_COMFY.to_owned(),
                GUIDE_STRATEGIES,
            );
        }
        (Some(loaded), _) => {
            let usable = m.usable_bytes.map_or_else(String::new, |u| {
                format!(" de los {} que calculó libres", b(u))
            });
            r.add(
                40,
                CauseId::FrontendMemory,
                "ComfyUI cargó el modelo entero en la GPU",
                format!(
                    "ComfyUI puso el modelo{model} entero en la GPU: {}{usable}. Lo que quedó \
                     no bastó para el cálculo que vino después.",
                    b(loaded)
                ),
                FIX_COMFY.to_owned(),
                GUIDE_STRATEGIES,
            );
        }
        _ => {}
    }
}

fn webui(m: &FrontendMemory, r: &mut Ranking) {
    let (Some(reserved), Some(peak), Some(total)) = (
        m.reserved_peak_bytes,
        m.system_peak_bytes,
        m.system_total_bytes,
    ) else {
        return;
    };
    let active = m.active_peak_bytes.map_or_else(String::new, |a| {
        format!(" (de ellos, {} en tensores vivos)", b(a))
    });
    let outside = peak.saturating_sub(reserved);
    let percent = if total > 0 {
        u128::from(peak) * 100 / u128::from(total)
    } else {
        0
    };
    r.add(
        45,
        CauseId::FrontendMemory,
        "El pie de la webui: cuánto usó PyTorch y cuánto el resto",
        format!(
            "Durante la generación PyTorch llegó a reservar {}{active}, y la GPU entera llegó \
             a {} de {} ({percent} %). La diferencia, {}, no es de la caché de PyTorch: es el \
             contexto CUDA del proceso (unos cientos de MiB), las bibliotecas y los demás \
             programas que usan la tarjeta.",
            b(reserved),
            b(peak),
            b(total),
            b(outside)
        ),
        FIX_WEBUI.to_owned(),
        if outside > total / 4 {
            GUIDE_OTHER_PROCESS
        } else {
            GUIDE_STRATEGIES
        },
    );
}

#[cfg(test)]
mod tests {
    use crate::explain;

    #[test]
    fn comfyui_partial_load_is_cited() {
        let e = explain(
            "Requested to load WAN21\nloaded partially; 5167.08 MB usable, 5167.08 MB loaded, \
             4633.39 MB offloaded, lowvram patches: 0\n!!! Exception during processing !!! \
             CUDA error: out of memory\n",
        );
        let c = e
            .diagnosis
            .iter()
            .find(|c| c.id == super::CauseId::FrontendMemory)
            .expect("a ComfyUI cause");
        assert!(c.explanation.contains("WAN21"), "{}", c.explanation);
        assert!(c.explanation.contains("4,52 GiB"), "{}", c.explanation);
        assert!(c.fix.contains("--reserve-vram"));
    }

    #[test]
    fn webui_footer_splits_pytorch_from_the_rest() {
        let e = explain(
            "OutOfMemoryError: CUDA out of memory. Tried to allocate 58.00 MiB (GPU 0; 3.81 GiB \
             total capacity; 2.82 GiB already allocated; 13.44 MiB free; 2.90 GiB reserved in \
             total by PyTorch)\n\nTime taken: 9.1 sec.\nA: 2.82 GB, R: 2.90 GB, Sys: 3.8/3.8125 \
             GB (99.7%)\n",
        );
        let m = e.primary.frontend_memory.as_ref().expect("the footer");
        assert_eq!(m.frontend, "webui");
        let c = e
            .diagnosis
            .iter()
            .find(|c| c.id == super::CauseId::FrontendMemory)
            .expect("a webui cause");
        // 3.8 GiB − 2.90 GiB = 0.90 GiB outside PyTorch's cache.
        assert!(c.explanation.contains("921,60 MiB"), "{}", c.explanation);
        assert!(c.fix.contains("--medvram"));
    }
}
