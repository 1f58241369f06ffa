//! The rows of a `memory_summary()` table: their names across releases and what each
//! one means, in Spanish, for the reader.

use serde::{Deserialize, Serialize};

/// Which statistic a row shows (`torch.cuda.memory_stats()` key in the comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    /// `allocated_bytes`
    Allocated,
    /// `active_bytes`
    Active,
    /// `requested_bytes` (PyTorch 2.0 and later)
    Requested,
    /// `reserved_bytes`
    Reserved,
    /// `inactive_split_bytes`
    NonReleasable,
    /// `allocation`
    Allocations,
    /// `active`
    ActiveAllocs,
    /// `segment`
    Segments,
    /// `inactive_split`
    NonReleasableAllocs,
    /// `oversize_allocations` (1.10 and later)
    OversizeAllocations,
    /// `oversize_segments` (1.10 and later)
    OversizeSegments,
}

/// What a row's cells count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RowUnit {
    Bytes,
    Count,
}

impl Metric {
    /// The metric a row label names ("GPU reserved memory" and older "Reserved memory").
    pub(crate) fn from_label(label: &str) -> Option<Metric> {
        let l = label.trim().to_ascii_lowercase();
        Some(match l.as_str() {
            "allocated memory" => Metric::Allocated,
            "active memory" => Metric::Active,
            "requested memory" => Metric::Requested,
            "gpu reserved memory" | "reserved memory" => Metric::Reserved,
            "non-releasable memory" => Metric::NonReleasable,
            "allocations" => Metric::Allocations,
            "active allocs" => Metric::ActiveAllocs,
            "gpu reserved segments" | "reserved segments" => Metric::Segments,
            "non-releasable allocs" => Metric::NonReleasableAllocs,
            "oversize allocations" => Metric::OversizeAllocations,
            "oversize gpu segments" | "oversize segments" => Metric::OversizeSegments,
            _ => return None,
        })
    }

    pub fn unit(self) -> RowUnit {
        match self {
            Metric::Allocated
            | Metric::Active
            | Metric::Requested
            | Metric::Reserved
            | Metric::NonReleasable => RowUnit::Bytes,
            _ => RowUnit::Count,
        }
    }

    /// What the row means, for someone who just hit an OOM.
    pub fn meaning(self) -> &'static str {
        match self {
            Metric::Allocated => {
                "Memoria asignada: lo que ocupan los tensores vivos, redondeado al tamaño de \
                 bloque del asignador."
            }
            Metric::Active => {
                "Memoria activa: la asignada más la que ya se liberó pero espera a que otro \
                 stream termine de usarla."
            }
            Metric::Requested => {
                "Memoria pedida: lo que pidió tu código antes del redondeo; la diferencia con \
                 la asignada es lo que cuesta redondear."
            }
            Metric::Reserved => {
                "Memoria reservada: todo lo que PyTorch tomó de CUDA, en uso o guardado en su \
                 caché. Es lo que ve nvidia-smi, más el contexto CUDA."
            }
            Metric::NonReleasable => {
                "Memoria no liberable: huecos libres dentro de bloques que también guardan \
                 tensores vivos. torch.cuda.empty_cache() no puede devolverla: es la \
                 fragmentación."
            }
            Metric::Allocations => "Reservas vivas: cuántos bloques están asignados ahora.",
            Metric::ActiveAllocs => "Bloques activos: asignados o a la espera de otro stream.",
            Metric::Segments => {
                "Segmentos: cuántos trozos pidió PyTorch a CUDA (un cudaMalloc cada uno)."
            }
            Metric::NonReleasableAllocs => "Huecos no liberables dentro de segmentos en uso.",
            Metric::OversizeAllocations => {
                "Reservas mayores que max_split_size_mb, que el asignador no trocea."
            }
            Metric::OversizeSegments => "Segmentos mayores que max_split_size_mb.",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_across_releases() {
        assert_eq!(
            Metric::from_label(" GPU reserved memory "),
            Some(Metric::Reserved)
        );
        assert_eq!(
            Metric::from_label("Reserved memory"),
            Some(Metric::Reserved)
        );
        assert_eq!(
            Metric::from_label("Oversize GPU segments"),
            Some(Metric::OversizeSegments)
        );
        assert_eq!(Metric::from_label("from large pool"), None);
        assert_eq!(Metric::Allocations.unit(), RowUnit::Count);
        assert_eq!(Metric::NonReleasable.unit(), RowUnit::Bytes);
    }
}
