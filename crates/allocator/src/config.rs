//! The simulated device and the `PYTORCH_CUDA_ALLOC_CONF` options the simulator models.
//!
//! Options are validated with PyTorch's own rules (so a value PyTorch would reject is
//! rejected here too), and the errors are Spanish sentences for the site and the CLI.

use serde::Serialize;
use thiserror::Error;

use crate::sizes::{LARGE_BUFFER, MAX_BYTES};

/// What the simulated process may use and how its allocator is configured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Config {
    /// Bytes of device memory the process may reserve (`cudaMalloc` fails beyond it).
    /// The CUDA context and other processes are not included: subtract them first.
    pub capacity: u64,
    /// `expandable_segments:True`.
    pub expandable_segments: bool,
    /// `max_split_size_mb`, in bytes (`None`: unlimited, PyTorch's default).
    pub max_split_size: Option<u64>,
    /// `garbage_collection_threshold` (a fraction of `capacity`, in (0, 1)). PyTorch only
    /// honours it after `torch.cuda.set_per_process_memory_fraction`; the simulator treats
    /// `capacity` as that allowed maximum.
    pub garbage_collection_threshold: Option<f64>,
    /// `roundup_power2_divisions` as a single value for every size (a power of two).
    pub roundup_power2_divisions: Option<u64>,
}

impl Config {
    /// PyTorch's defaults on a device of `capacity` bytes.
    pub fn new(capacity: u64) -> Config {
        Config {
            capacity,
            expandable_segments: false,
            max_split_size: None,
            garbage_collection_threshold: None,
            roundup_power2_divisions: None,
        }
    }

    /// The same configuration with `expandable_segments:True`.
    pub fn expandable(mut self) -> Config {
        self.expandable_segments = true;
        self
    }

    /// Checks every option against PyTorch's parser rules.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.capacity == 0 || self.capacity > MAX_BYTES {
            return Err(ConfigError::Capacity(self.capacity));
        }
        if let Some(m) = self.max_split_size
            && m < LARGE_BUFFER
        {
            return Err(ConfigError::MaxSplitSize(m));
        }
        if let Some(t) = self.garbage_collection_threshold
            && !(t > 0.0 && t < 1.0)
        {
            return Err(ConfigError::GcThreshold(t));
        }
        if let Some(d) = self.roundup_power2_divisions
            && !d.is_power_of_two()
        {
            return Err(ConfigError::Divisions(d));
        }
        Ok(())
    }

    /// `max_split_size` as the allocator uses it (`usize::MAX` when unset).
    pub(crate) fn max_split(&self) -> u64 {
        self.max_split_size.unwrap_or(u64::MAX)
    }

    pub(crate) fn divisions(&self) -> u64 {
        self.roundup_power2_divisions.unwrap_or(0)
    }
}

/// An option PyTorch would reject.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum ConfigError {
    #[error("la capacidad debe estar entre 1 byte y 1 PiB (es {0} bytes)")]
    Capacity(u64),
    #[error(
        "max_split_size_mb debe ser al menos 20 MiB, el tamaño de los segmentos grandes \
         (es {0} bytes; las versiones antiguas de PyTorch exigían más de 20)"
    )]
    MaxSplitSize(u64),
    #[error("garbage_collection_threshold debe estar entre 0 y 1, sin incluirlos (es {0})")]
    GcThreshold(f64),
    #[error("roundup_power2_divisions debe ser una potencia de dos (es {0})")]
    Divisions(u64),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates_like_pytorch() {
        let ok = Config::new(1 << 30);
        assert_eq!(ok.validate(), Ok(()));
        assert!(Config::new(0).validate().is_err());
        assert!(Config::new(MAX_BYTES + 1).validate().is_err());
        let mut c = ok.clone();
        c.max_split_size = Some(19 << 20);
        assert!(matches!(c.validate(), Err(ConfigError::MaxSplitSize(_))));
        c.max_split_size = Some(20 << 20);
        assert_eq!(c.validate(), Ok(()));
        let mut c = ok.clone();
        for bad in [0.0, 1.0, -0.5, f64::NAN] {
            c.garbage_collection_threshold = Some(bad);
            assert!(c.validate().is_err(), "{bad}");
        }
        c.garbage_collection_threshold = Some(0.6);
        assert_eq!(c.validate(), Ok(()));
        let mut c = ok;
        c.roundup_power2_divisions = Some(3);
        assert!(c.validate().is_err());
        c.roundup_power2_divisions = Some(4);
        assert_eq!(c.validate(), Ok(()));
        assert!(
            ConfigError::GcThreshold(2.0)
                .to_string()
                .contains("entre 0 y 1")
        );
    }
}
