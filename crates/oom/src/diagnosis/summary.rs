//! Rules for `memory_summary()` tables: what the counters say about pressure.

use super::allocator::{fragmentation_fix, reduce_fix};
use super::{CauseId, GUIDE_FRAGMENTATION, GUIDE_RESERVED, GUIDE_STRATEGIES, Ranking};
use crate::format::binary as b;
use crate::model::{Decoded, Kind};
use crate::summary::Metric;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

pub(super) fn diagnose(d: &Decoded, r: &mut Ranking) {
    let reserved = d.reserved_total_bytes.unwrap_or(0);
    let allocated = d.allocated_bytes.unwrap_or(0);
    let fix = fragmentation_fix(Kind::PytorchOom, None);

    if let Some(nr) = d
        .non_releasable_bytes
        .filter(|&nr| nr >= (reserved / 10).max(256 * MIB))
    {
        r.add(
            75,
            CauseId::Fragmentation,
            "Fragmentación: memoria reservada que no se puede usar",
            format!(
                "{} de los {} reservados son huecos no liberables dentro de bloques con tensores \
                 vivos: ni tus tensores ni torch.cuda.empty_cache() pueden aprovecharlos.",
                b(nr),
                b(reserved)
            ),
            fix.clone(),
            GUIDE_FRAGMENTATION,
        );
    } else if let Some(peak_nr) = peak_non_releasable(d) {
        let peak_reserved = d.peak_reserved_bytes.unwrap_or(reserved);
        if peak_nr >= (peak_reserved / 10).max(512 * MIB) {
            r.add(
                60,
                CauseId::Fragmentation,
                "Fragmentación en el pico",
                format!(
                    "Ahora hay poca memoria no liberable, pero en el pico llegó a {} (con {} \
                     reservados): justo cuando más falta hace, una parte se pierde en huecos.",
                    b(peak_nr),
                    b(peak_reserved)
                ),
                fix.clone(),
                GUIDE_FRAGMENTATION,
            );
        }
    }

    if let Some(n) = d.cuda_malloc_retries.filter(|&n| n > 0) {
        r.add(
            70,
            CauseId::AllocRetries,
            "El asignador tuvo que vaciar su caché y reintentar",
            format!(
                "cudaMalloc falló {n} {}: cada vez, PyTorch devolvió su caché a CUDA y volvió a \
                 intentarlo. Es presión de memoria con fragmentación, y además ralentiza: cada \
                 reintento sincroniza la GPU.",
                if n == 1 { "vez" } else { "veces" }
            ),
            format!("{fix} {}", reduce_fix()),
            GUIDE_FRAGMENTATION,
        );
    }

    let peak = d.peak_allocated_bytes.unwrap_or(0);
    if peak >= allocated.saturating_add((allocated / 2).max(GIB)) {
        r.add(
            55,
            CauseId::PeakUsage,
            "El pico supera con mucho el uso actual",
            format!(
                "Ahora hay {} asignados, pero el pico llegó a {}: el momento crítico es un paso \
                 concreto (el backward, los logits de un vocabulario grande, una concatenación), \
                 no el estado en reposo.",
                b(allocated),
                b(peak)
            ),
            "Recorta el pico: gradient checkpointing, pérdida calculada por trozos, un lote más \
             pequeño con acumulación de gradientes. Para ver qué lo causa, graba un snapshot con \
             torch.cuda.memory._record_memory_history() y _dump_snapshot()."
                .to_owned(),
            GUIDE_STRATEGIES,
        );
    }

    let cached = reserved.saturating_sub(allocated);
    let nr = d.non_releasable_bytes.unwrap_or(0);
    if cached >= (reserved / 4).max(GIB) && nr.saturating_mul(2) < cached {
        r.add(
            45,
            CauseId::CacheHeld,
            "La caché de PyTorch guarda mucha memoria libre",
            format!(
                "PyTorch tiene {} reservados sin usar. Para este proceso están disponibles (se \
                 reutilizan sin pedir a CUDA), pero otros procesos y bibliotecas no pueden \
                 usarlos.",
                b(cached)
            ),
            "No hace falta liberarla para el propio PyTorch. Si otra cosa necesita esa memoria \
             (otro proceso, una biblioteca), torch.cuda.empty_cache() devuelve a CUDA la parte \
             liberable."
                .to_owned(),
            GUIDE_RESERVED,
        );
    }

    let pressure = [
        CauseId::Fragmentation,
        CauseId::AllocRetries,
        CauseId::PeakUsage,
        CauseId::CacheHeld,
    ];
    if !pressure.iter().any(|&id| r.has(id)) {
        r.add(
            10,
            CauseId::NoPressure,
            "La tabla no muestra presión de memoria",
            "Ni reintentos de cudaMalloc, ni fragmentación apreciable, ni un pico muy por encima \
             del uso actual. Si el error ocurre después, la tabla se tomó demasiado pronto."
                .to_owned(),
            "Imprime torch.cuda.memory_summary() dentro del except que captura el error, o graba \
             un snapshot con torch.cuda.memory._record_memory_history() y _dump_snapshot()."
                .to_owned(),
            GUIDE_STRATEGIES,
        );
    }

    notes(d, r);
}

fn peak_non_releasable(d: &Decoded) -> Option<u64> {
    d.summary.as_ref()?.row(Metric::NonReleasable)?.all.peak
}

fn notes(d: &Decoded, r: &mut Ranking) {
    if let Some(n) = d.cuda_ooms.filter(|&n| n > 0) {
        r.note(format!(
            "Este proceso ya sufrió {n} {} de memoria (CUDA OOMs) antes de imprimir la tabla.",
            if n == 1 { "error" } else { "errores" }
        ));
    }
    let requested = d
        .summary
        .as_ref()
        .and_then(|s| s.row(Metric::Requested))
        .and_then(|row| row.all.current);
    if let (Some(req), Some(a)) = (requested, d.allocated_bytes) {
        let waste = a.saturating_sub(req);
        if waste >= (a / 10).max(256 * MIB) {
            r.note(format!(
                "El redondeo a bloques cuesta {}: tu código pidió {} y el asignador reservó {} \
                 para ello.",
                b(waste),
                b(req),
                b(a)
            ));
        }
    }
    r.note(
        "Las cifras de memory_summary() vienen truncadas a la unidad impresa (un «4261 MiB» \
         puede ser hasta 1 MiB más), y en PyTorch 1.x KB, MB y GB son potencias de 1024."
            .to_owned(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnosis::diagnose;

    fn table(allocated: u64, peak: u64, reserved: u64, non_releasable: u64) -> Decoded {
        let mut d = Decoded::new(Kind::MemorySummary);
        d.allocated_bytes = Some(allocated);
        d.peak_allocated_bytes = Some(peak);
        d.reserved_total_bytes = Some(reserved);
        d.peak_reserved_bytes = Some(reserved);
        d.non_releasable_bytes = Some(non_releasable);
        d.cuda_malloc_retries = Some(0);
        d.cuda_ooms = Some(0);
        d
    }

    fn ids(d: &Decoded) -> Vec<CauseId> {
        diagnose(d).causes.iter().map(|c| c.id).collect()
    }

    #[test]
    fn quiet_table() {
        assert_eq!(
            ids(&table(10 * GIB, 10 * GIB, 10 * GIB + 200 * MIB, 50 * MIB)),
            [CauseId::NoPressure]
        );
    }

    #[test]
    fn non_releasable_memory_is_fragmentation() {
        let d = table(7 * GIB, 7 * GIB, 10 * GIB, 3 * GIB);
        assert_eq!(ids(&d), [CauseId::Fragmentation]);
        assert!(
            diagnose(&d).causes[0]
                .fix
                .contains("expandable_segments:True")
        );
    }

    #[test]
    fn retries_peaks_and_cache() {
        let mut d = table(7 * GIB, 7 * GIB, 8 * GIB, 10 * MIB);
        d.cuda_malloc_retries = Some(4);
        assert_eq!(ids(&d), [CauseId::AllocRetries]);
        assert!(diagnose(&d).causes[0].explanation.contains("4 veces"));
        let d = table(10 * GIB, 30 * GIB, 32 * GIB, 100 * MIB);
        assert_eq!(ids(&d), [CauseId::PeakUsage, CauseId::CacheHeld]);
    }

    #[test]
    fn ooms_are_noted() {
        let mut d = table(GIB, GIB, GIB, 0);
        d.cuda_ooms = Some(1);
        assert!(
            diagnose(&d)
                .notes
                .iter()
                .any(|n| n.contains("1 error de memoria"))
        );
    }
}
