//! What one attention run is: the problem shape, the storage type, the kernel, and the
//! arithmetic that follows from them (FLOPs, the bytes of every buffer, and whether they
//! fit an adapter's limits). Pure, so the out-of-memory lesson is testable without a GPU.

use std::fmt;

/// Storage type of Q, K, V, O (and of S in the naive kernel). Accumulation is always f32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    F32,
    F16,
}

impl Dtype {
    pub fn bytes(self) -> u64 {
        match self {
            Dtype::F32 => 4,
            Dtype::F16 => 2,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::F16 => "f16",
        }
    }

    /// Parses `f32`/`fp32`/`f16`/`fp16`; the error is a Spanish sentence.
    pub fn parse(s: &str) -> Result<Dtype, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "f32" | "fp32" | "float32" => Ok(Dtype::F32),
            "f16" | "fp16" | "float16" | "half" => Ok(Dtype::F16),
            other => Err(format!(
                "tipo de dato desconocido «{}»: usa f32 o f16",
                crate::clip(other)
            )),
        }
    }
}

/// The two kernels the guide compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// Materialises S = QKᵀ in global memory.
    Naive,
    /// FlashAttention-2 style: tiles and an online softmax, no N × N buffer.
    Tiled,
}

impl Kernel {
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Naive => "naive",
            Kernel::Tiled => "tiled",
        }
    }

    /// Spanish name for messages.
    pub fn label(self) -> &'static str {
        match self {
            Kernel::Naive => "ingenuo",
            Kernel::Tiled => "por bloques",
        }
    }

    pub fn parse(s: &str) -> Result<Kernel, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "naive" | "ingenuo" => Ok(Kernel::Naive),
            "tiled" | "bloques" | "flash" => Ok(Kernel::Tiled),
            other => Err(format!(
                "kernel desconocido «{}»: usa naive o tiled",
                crate::clip(other)
            )),
        }
    }
}

/// Largest sequence length accepted (the u32 index arithmetic of the kernels and the
/// 65,535-workgroup dispatch limit both hold well past it).
pub const MAX_SEQ: u32 = 1 << 20;
/// Largest batch × heads (one dispatch dimension).
pub const MAX_BH: u32 = 65_535;
/// Head dimensions must be a multiple of this (the matmul K-step), up to [`MAX_HEAD_DIM`].
pub const HEAD_DIM_STEP: u32 = 16;
pub const MAX_HEAD_DIM: u32 = 256;

/// One attention problem: `batch × heads` independent (seq × head_dim) problems.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    pub batch: u32,
    pub heads: u32,
    pub seq: u32,
    pub head_dim: u32,
    pub causal: bool,
}

/// Why a shape cannot run, before any GPU is involved.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    #[error("la longitud de secuencia debe estar entre 1 y {MAX_SEQ} (se pidió {0})")]
    Seq(u32),
    #[error(
        "la dimensión de cabeza debe ser múltiplo de {HEAD_DIM_STEP} entre {HEAD_DIM_STEP} y {MAX_HEAD_DIM} (se pidió {0})"
    )]
    HeadDim(u32),
    #[error("lote × cabezas debe estar entre 1 y {MAX_BH} (se pidió {0})")]
    BatchHeads(u64),
    #[error(
        "el problema es demasiado grande para los índices de 32 bits de los kernels ({0} elementos por tensor)"
    )]
    Elements(u64),
}

impl Shape {
    pub fn new(batch: u32, heads: u32, seq: u32, head_dim: u32, causal: bool) -> Shape {
        Shape {
            batch,
            heads,
            seq,
            head_dim,
            causal,
        }
    }

    /// Batch × heads.
    pub fn bh(&self) -> u64 {
        u64::from(self.batch) * u64::from(self.heads)
    }

    /// Elements of Q (and of K, V, O).
    pub fn tensor_elems(&self) -> u64 {
        self.bh()
            .saturating_mul(u64::from(self.seq))
            .saturating_mul(u64::from(self.head_dim))
    }

    pub fn validate(&self) -> Result<(), ShapeError> {
        if self.seq == 0 || self.seq > MAX_SEQ {
            return Err(ShapeError::Seq(self.seq));
        }
        if self.head_dim == 0
            || self.head_dim > MAX_HEAD_DIM
            || !self.head_dim.is_multiple_of(HEAD_DIM_STEP)
        {
            return Err(ShapeError::HeadDim(self.head_dim));
        }
        let bh = self.bh();
        if bh == 0 || bh > u64::from(MAX_BH) {
            return Err(ShapeError::BatchHeads(bh));
        }
        // Indices are u32 and the init kernel's grid-stride loop adds a stride to them.
        if self.tensor_elems() >= 1 << 31 {
            return Err(ShapeError::Elements(self.tensor_elems()));
        }
        Ok(())
    }

    /// Forward FLOPs with the FlashAttention convention: 4·B·H·N²·d (two matmuls of
    /// 2·N²·d each), half of it when causal.
    pub fn flops(&self) -> f64 {
        let n = f64::from(self.seq);
        let full = 4.0 * self.bh() as f64 * n * n * f64::from(self.head_dim);
        if self.causal { full / 2.0 } else { full }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "N={} d={} cabezas={} lote={}{}",
            self.seq,
            self.head_dim,
            self.heads,
            self.batch,
            if self.causal { " causal" } else { "" }
        )
    }
}

/// A buffer a kernel allocates, for the memory accounting and the limit checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferSpec {
    pub role: BufferRole,
    pub bytes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferRole {
    Q,
    K,
    V,
    Output,
    /// The naive kernel's N × N matrix per head.
    Scores,
    /// The tiled kernel's per-row log-sum-exp.
    LogSumExp,
}

impl BufferRole {
    /// Spanish label for messages and the page.
    pub fn label(self) -> &'static str {
        match self {
            BufferRole::Q => "Q",
            BufferRole::K => "K",
            BufferRole::V => "V",
            BufferRole::Output => "O (salida)",
            BufferRole::Scores => "S = QKᵀ (N × N por cabeza)",
            BufferRole::LogSumExp => "log-sum-exp por fila",
        }
    }

    /// Whether the buffer is the kernel's own (beyond the inputs and the output).
    pub fn is_extra(self) -> bool {
        matches!(self, BufferRole::Scores | BufferRole::LogSumExp)
    }
}

/// Every buffer `kernel` allocates for `shape`, in bytes (saturating: a forged shape can
/// only produce a size that fails the limit checks).
pub fn buffers(kernel: Kernel, shape: &Shape, dtype: Dtype) -> Vec<BufferSpec> {
    let tensor = shape.tensor_elems().saturating_mul(dtype.bytes());
    let mut out = vec![
        BufferSpec {
            role: BufferRole::Q,
            bytes: tensor,
        },
        BufferSpec {
            role: BufferRole::K,
            bytes: tensor,
        },
        BufferSpec {
            role: BufferRole::V,
            bytes: tensor,
        },
        BufferSpec {
            role: BufferRole::Output,
            bytes: tensor,
        },
    ];
    let n = u64::from(shape.seq);
    let extra = match kernel {
        Kernel::Naive => BufferSpec {
            role: BufferRole::Scores,
            bytes: shape
                .bh()
                .saturating_mul(n)
                .saturating_mul(n)
                .saturating_mul(dtype.bytes()),
        },
        Kernel::Tiled => BufferSpec {
            role: BufferRole::LogSumExp,
            bytes: shape.bh().saturating_mul(n).saturating_mul(4),
        },
    };
    out.push(extra);
    out
}

/// Bytes beyond Q, K, V and O.
pub fn extra_bytes(kernel: Kernel, shape: &Shape, dtype: Dtype) -> u64 {
    buffers(kernel, shape, dtype)
        .iter()
        .filter(|b| b.role.is_extra())
        .map(|b| b.bytes)
        .sum()
}

/// Bytes of every buffer together.
pub fn total_bytes(kernel: Kernel, shape: &Shape, dtype: Dtype) -> u64 {
    buffers(kernel, shape, dtype)
        .iter()
        .fold(0u64, |acc, b| acc.saturating_add(b.bytes))
}

/// The limits a run is checked against before anything is allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryLimits {
    /// `max_buffer_size`.
    pub max_buffer: u64,
    /// `max_storage_buffer_binding_size`.
    pub max_binding: u64,
    /// What the user allows in total (`--max-memory`), if anything.
    pub max_total: Option<u64>,
}

/// Which limit a run hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitKind {
    Binding,
    Buffer,
    UserTotal,
}

impl LimitKind {
    pub fn name(self) -> &'static str {
        match self {
            LimitKind::Binding => "max_storage_buffer_binding_size",
            LimitKind::Buffer => "max_buffer_size",
            LimitKind::UserTotal => "límite de memoria indicado",
        }
    }
}

/// The clean out-of-memory of the guide: what was needed, and the limit it passed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooLarge {
    pub kernel: Kernel,
    pub role: Option<BufferRole>,
    pub needed: u64,
    pub limit: u64,
    pub kind: LimitKind,
}

impl fmt::Display for TooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (mut needed, mut limit) = (
            crate::format_bytes(self.needed),
            crate::format_bytes(self.limit),
        );
        if needed == limit {
            // 2 GiB against a limit of 2 GiB − 1 byte (NVIDIA's storage-buffer range)
            // must not read as "needs 2,00 GiB and 2,00 GiB are allowed".
            needed = format!("{} bytes", vram::group_digits(self.needed));
            limit = format!("{} bytes", vram::group_digits(self.limit));
        }
        match (self.kind, self.role) {
            (LimitKind::UserTotal, _) => write!(
                f,
                "sin memoria: el kernel {} necesita {needed} en total y el límite indicado es {limit}",
                self.kernel.label()
            ),
            (kind, Some(role)) => write!(
                f,
                "sin memoria: el búfer {} del kernel {} necesita {needed} y el adaptador admite {limit} ({})",
                role.label(),
                self.kernel.label(),
                kind.name()
            ),
            (kind, None) => write!(
                f,
                "sin memoria: el kernel {} necesita {needed} y el adaptador admite {limit} ({})",
                self.kernel.label(),
                kind.name()
            ),
        }
    }
}

/// Checks every buffer against the adapter's limits and the total against the user's.
pub fn check_limits(
    kernel: Kernel,
    shape: &Shape,
    dtype: Dtype,
    limits: &MemoryLimits,
) -> Result<(), TooLarge> {
    for b in buffers(kernel, shape, dtype) {
        for (limit, kind) in [
            (limits.max_binding, LimitKind::Binding),
            (limits.max_buffer, LimitKind::Buffer),
        ] {
            if b.bytes > limit {
                return Err(TooLarge {
                    kernel,
                    role: Some(b.role),
                    needed: b.bytes,
                    limit,
                    kind,
                });
            }
        }
    }
    if let Some(max) = limits.max_total {
        let total = total_bytes(kernel, shape, dtype);
        if total > max {
            return Err(TooLarge {
                kernel,
                role: None,
                needed: total,
                limit: max,
                kind: LimitKind::UserTotal,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAVAPIPE: MemoryLimits = MemoryLimits {
        max_buffer: 1 << 31,
        max_binding: 128 << 20,
        max_total: None,
    };

    #[test]
    fn flops_follow_the_flashattention_convention() {
        let s = Shape::new(2, 8, 1024, 64, false);
        assert_eq!(s.flops(), 4.0 * 16.0 * 1024.0 * 1024.0 * 64.0);
        let c = Shape { causal: true, ..s };
        assert_eq!(c.flops(), s.flops() / 2.0);
    }

    #[test]
    fn naive_needs_n_squared_and_tiled_needs_n() {
        for (n, heads) in [(256u32, 1u32), (4096, 8), (8192, 1)] {
            let s = Shape::new(1, heads, n, 64, false);
            let n64 = u64::from(n);
            assert_eq!(
                extra_bytes(Kernel::Naive, &s, Dtype::F32),
                4 * n64 * n64 * u64::from(heads)
            );
            assert_eq!(
                extra_bytes(Kernel::Naive, &s, Dtype::F16),
                2 * n64 * n64 * u64::from(heads)
            );
            assert_eq!(
                extra_bytes(Kernel::Tiled, &s, Dtype::F32),
                4 * n64 * u64::from(heads)
            );
            assert_eq!(
                total_bytes(Kernel::Tiled, &s, Dtype::F32),
                4 * 4 * n64 * 64 * u64::from(heads) + 4 * n64 * u64::from(heads)
            );
        }
    }

    /// The acceptance case: on lavapipe's 128 MiB binding limit, N = 8192,
    /// d = 64, one head fails for the naive kernel (256 MiB of S) and fits for the tiled.
    #[test]
    fn lavapipe_case_fails_cleanly_for_naive_only() {
        let s = Shape::new(1, 1, 8192, 64, false);
        let err = check_limits(Kernel::Naive, &s, Dtype::F32, &LAVAPIPE).unwrap_err();
        assert_eq!(err.needed, 256 << 20);
        assert_eq!(err.limit, 128 << 20);
        assert_eq!(err.role, Some(BufferRole::Scores));
        let text = err.to_string();
        assert!(
            text.contains("256,00 MiB") && text.contains("128,00 MiB"),
            "{text}"
        );
        assert!(text.contains("max_storage_buffer_binding_size"), "{text}");
        assert_eq!(
            check_limits(Kernel::Tiled, &s, Dtype::F32, &LAVAPIPE),
            Ok(())
        );
    }

    #[test]
    fn a_limit_one_byte_short_reads_in_bytes() {
        // NVIDIA's Vulkan driver allows storage-buffer bindings of 2 GiB − 1 byte; S for
        // N = 4096 and 32 heads in f32 is exactly 2 GiB (seen on an H200).
        let nvidia = MemoryLimits {
            max_buffer: 1 << 40,
            max_binding: (1 << 31) - 1,
            max_total: None,
        };
        let shape = Shape::new(1, 32, 4096, 64, false);
        let e = check_limits(Kernel::Naive, &shape, Dtype::F32, &nvidia).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("necesita 2\u{202f}147\u{202f}483\u{202f}648 bytes")
                && text.contains("admite 2\u{202f}147\u{202f}483\u{202f}647 bytes"),
            "{text}"
        );
    }

    #[test]
    fn the_user_limit_counts_every_buffer() {
        let s = Shape::new(1, 1, 1024, 64, false);
        let limits = MemoryLimits {
            max_total: Some(4 << 20),
            ..LAVAPIPE
        };
        // 4 tensors of 256 KiB + 4 MiB of S > 4 MiB; the tiled run is ~1 MiB.
        let err = check_limits(Kernel::Naive, &s, Dtype::F32, &limits).unwrap_err();
        assert_eq!(err.kind, LimitKind::UserTotal);
        assert_eq!(err.needed, 4 * (256 << 10) + (4 << 20));
        assert!(check_limits(Kernel::Tiled, &s, Dtype::F32, &limits).is_ok());
    }

    #[test]
    fn shapes_are_validated() {
        let ok = Shape::new(1, 8, 1024, 64, true);
        assert_eq!(ok.validate(), Ok(()));
        let cases = [
            (Shape { seq: 0, ..ok }, "secuencia"),
            (
                Shape {
                    seq: MAX_SEQ + 1,
                    ..ok
                },
                "secuencia",
            ),
            (Shape { head_dim: 72, ..ok }, "cabeza"),
            (
                Shape {
                    head_dim: 512,
                    ..ok
                },
                "cabeza",
            ),
            (Shape { heads: 0, ..ok }, "lote"),
            (
                Shape {
                    batch: 70_000,
                    ..ok
                },
                "lote",
            ),
            (Shape::new(64, 64, 1 << 20, 256, false), "32 bits"),
        ];
        for (shape, word) in cases {
            let err = shape.validate().unwrap_err().to_string();
            assert!(err.contains(word), "{shape:?}: {err}");
        }
    }

    #[test]
    fn sizes_saturate_instead_of_overflowing() {
        let huge = Shape::new(u32::MAX, u32::MAX, u32::MAX, u32::MAX, false);
        assert_eq!(total_bytes(Kernel::Naive, &huge, Dtype::F32), u64::MAX);
        assert!(check_limits(Kernel::Naive, &huge, Dtype::F32, &LAVAPIPE).is_err());
    }

    #[test]
    fn names_parse_back() {
        for k in [Kernel::Naive, Kernel::Tiled] {
            assert_eq!(Kernel::parse(k.name()), Ok(k));
        }
        for d in [Dtype::F32, Dtype::F16] {
            assert_eq!(Dtype::parse(d.name()), Ok(d));
        }
        assert!(
            Kernel::parse("cublas")
                .unwrap_err()
                .contains("naive o tiled")
        );
        assert!(Dtype::parse("bf16").unwrap_err().contains("f32 o f16"));
    }
}
