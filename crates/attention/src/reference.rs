//! CPU implementations: an f64 reference for any row of any shape (what every GPU kernel
//! is checked against), and the two algorithms in f32 for the page's fallback when the
//! browser has no WebGPU, so the lesson still runs, just smaller.

use crate::data::{Tensor, value};
use crate::shape::Shape;

/// One output row of attention in f64: row `row` of problem `bh` (0 ≤ bh < B·H).
/// O(N·d) work, so large shapes are checked on a sample of rows.
pub fn reference_row(shape: &Shape, bh: u32, row: u32) -> Vec<f64> {
    let d = shape.head_dim as usize;
    let n = shape.seq;
    let scale = 1.0 / f64::from(shape.head_dim).sqrt();
    let base = u64::from(bh) * u64::from(n) * u64::from(shape.head_dim);
    let at = |t: Tensor, r: u32, c: usize| -> f64 {
        let idx = base + u64::from(r) * u64::from(shape.head_dim) + c as u64;
        f64::from(value(t, u32::try_from(idx).unwrap_or(u32::MAX)))
    };
    let q: Vec<f64> = (0..d).map(|c| at(Tensor::Q, row, c)).collect();
    let len = if shape.causal {
        row.saturating_add(1).min(n)
    } else {
        n
    };
    let scores: Vec<f64> = (0..len)
        .map(|j| (0..d).map(|c| q[c] * at(Tensor::K, j, c)).sum::<f64>() * scale)
        .collect();
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let weights: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
    let sum: f64 = weights.iter().sum();
    let mut out = vec![0.0; d];
    for (j, w) in (0..len).zip(&weights) {
        for (c, o) in out.iter_mut().enumerate() {
            *o += w * at(Tensor::V, j, c);
        }
    }
    out.iter_mut().for_each(|o| *o /= sum);
    out
}

/// The largest shape the CPU kernels accept (elements of S for the naive one), so a
/// page cannot ask the fallback for gigabytes.
pub const CPU_MAX_SCORES: u64 = 1 << 24;

/// What a CPU run produced.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuRun {
    pub output: Vec<f32>,
    /// Bytes the kernel allocated beyond Q, K, V and O.
    pub extra_bytes: u64,
}

fn inputs(shape: &Shape) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let len = usize::try_from(shape.tensor_elems()).unwrap_or(0);
    (
        crate::data::tensor(Tensor::Q, len),
        crate::data::tensor(Tensor::K, len),
        crate::data::tensor(Tensor::V, len),
    )
}

fn cpu_fits(shape: &Shape) -> Result<(), String> {
    shape.validate().map_err(|e| e.to_string())?;
    let scores = shape.bh() * u64::from(shape.seq) * u64::from(shape.seq);
    if scores > CPU_MAX_SCORES {
        return Err(format!(
            "la versión en CPU admite hasta {CPU_MAX_SCORES} puntuaciones (lote × cabezas × N²); se pidieron {scores}"
        ));
    }
    Ok(())
}

/// Naive attention in f32: the whole N × N score matrix per problem, row softmax, P·V.
pub fn cpu_naive(shape: &Shape) -> Result<CpuRun, String> {
    cpu_fits(shape)?;
    let (q, k, v) = inputs(shape);
    let (n, d) = (shape.seq as usize, shape.head_dim as usize);
    let scale = 1.0 / (d as f32).sqrt();
    let mut out = vec![0.0f32; q.len()];
    let mut s = vec![0.0f32; n * n];
    for bh in 0..shape.bh() as usize {
        let base = bh * n * d;
        for i in 0..n {
            let len = if shape.causal { i + 1 } else { n };
            let qi = &q[base + i * d..base + (i + 1) * d];
            let row = &mut s[i * n..i * n + len];
            for (j, sj) in row.iter_mut().enumerate() {
                let kj = &k[base + j * d..base + (j + 1) * d];
                *sj = qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f32>() * scale;
            }
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let mut sum = 0.0;
            for sj in row.iter_mut() {
                *sj = (*sj - max).exp();
                sum += *sj;
            }
            let oi = &mut out[base + i * d..base + (i + 1) * d];
            for (j, p) in row.iter().enumerate() {
                let vj = &v[base + j * d..base + (j + 1) * d];
                for (o, x) in oi.iter_mut().zip(vj) {
                    *o += p / sum * x;
                }
            }
        }
    }
    Ok(CpuRun {
        output: out,
        extra_bytes: (n * n * 4) as u64 * shape.bh(),
    })
}

/// Tiled attention in f32 with the online softmax, the algorithm of `tiled.wgsl` written
/// for one core: blocks of `br` query rows against tiles of `bc` keys, a running maximum
/// and sum per row, one normalisation at the end. Allocates one br × bc tile.
pub fn cpu_tiled(shape: &Shape, br: usize, bc: usize) -> Result<CpuRun, String> {
    cpu_fits(shape)?;
    let (br, bc) = (br.clamp(1, 256), bc.clamp(1, 256));
    let (q, k, v) = inputs(shape);
    let (n, d) = (shape.seq as usize, shape.head_dim as usize);
    let scale = 1.0 / (d as f32).sqrt();
    let mut out = vec![0.0f32; q.len()];
    let mut tile = vec![0.0f32; br * bc];
    for bh in 0..shape.bh() as usize {
        let base = bh * n * d;
        for row0 in (0..n).step_by(br) {
            let rows = br.min(n - row0);
            let mut m = vec![f32::NEG_INFINITY; rows];
            let mut l = vec![0.0f32; rows];
            let kv_end = if shape.causal { n.min(row0 + rows) } else { n };
            for col0 in (0..kv_end).step_by(bc) {
                let cols = bc.min(kv_end - col0);
                for r in 0..rows {
                    let i = row0 + r;
                    let qi = &q[base + i * d..base + (i + 1) * d];
                    let mut tile_max = f32::NEG_INFINITY;
                    for c in 0..cols {
                        let j = col0 + c;
                        let sc = if shape.causal && j > i {
                            f32::NEG_INFINITY
                        } else {
                            let kj = &k[base + j * d..base + (j + 1) * d];
                            qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f32>() * scale
                        };
                        tile[r * bc + c] = sc;
                        tile_max = tile_max.max(sc);
                    }
                    let m_new = m[r].max(tile_max);
                    let alpha = if m[r] == f32::NEG_INFINITY {
                        0.0
                    } else {
                        (m[r] - m_new).exp()
                    };
                    let oi = &mut out[base + i * d..base + (i + 1) * d];
                    oi.iter_mut().for_each(|o| *o *= alpha);
                    let mut sum = 0.0;
                    for c in 0..cols {
                        let p = (tile[r * bc + c] - m_new).exp();
                        sum += p;
                        let vj = &v[base + (col0 + c) * d..base + (col0 + c + 1) * d];
                        for (o, x) in oi.iter_mut().zip(vj) {
                            *o += p * x;
                        }
                    }
                    l[r] = l[r] * alpha + sum;
                    m[r] = m_new;
                }
            }
            for (r, lr) in l.iter().enumerate() {
                let i = row0 + r;
                out[base + i * d..base + (i + 1) * d]
                    .iter_mut()
                    .for_each(|o| *o /= lr);
            }
        }
    }
    Ok(CpuRun {
        output: out,
        extra_bytes: (br * bc * 4) as u64,
    })
}

/// Largest absolute difference between `output` (flat) and the f64 reference, over every
/// row of a small shape.
pub fn max_abs_err_all(shape: &Shape, output: &[f32]) -> f64 {
    let d = shape.head_dim as usize;
    let mut worst: f64 = 0.0;
    for bh in 0..shape.bh() as u32 {
        for row in 0..shape.seq {
            let at = (bh as usize * shape.seq as usize + row as usize) * d;
            let Some(got) = output.get(at..at + d) else {
                return f64::INFINITY;
            };
            for (g, r) in got.iter().zip(reference_row(shape, bh, row)) {
                worst = worst.max((f64::from(*g) - r).abs());
            }
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_row_is_a_convex_combination_of_v() {
        // Softmax weights sum to 1, so each output lies within V's range, and the first
        // causal row is exactly V's first row.
        let s = Shape::new(1, 1, 64, 16, true);
        let first = reference_row(&s, 0, 0);
        for (c, x) in first.iter().enumerate() {
            assert_eq!(*x, f64::from(value(Tensor::V, c as u32)));
        }
        let last = reference_row(&s, 0, 63);
        assert!(last.iter().all(|x| (-1.0..1.0).contains(x)));
    }

    #[test]
    fn cpu_kernels_match_the_reference() {
        let shapes = [
            Shape::new(1, 1, 1, 16, false),
            Shape::new(1, 2, 37, 32, false),
            Shape::new(2, 1, 100, 64, true),
            Shape::new(1, 1, 130, 128, true),
        ];
        for s in shapes {
            let naive = cpu_naive(&s).unwrap();
            assert!(max_abs_err_all(&s, &naive.output) < 1e-5, "{s}");
            for (br, bc) in [(16, 16), (7, 33), (64, 32)] {
                let tiled = cpu_tiled(&s, br, bc).unwrap();
                assert!(max_abs_err_all(&s, &tiled.output) < 1e-5, "{s} {br}×{bc}");
                assert_eq!(tiled.extra_bytes, (br * bc * 4) as u64);
            }
            let n = u64::from(s.seq);
            assert_eq!(naive.extra_bytes, 4 * n * n * s.bh());
        }
    }

    #[test]
    fn cpu_kernels_refuse_large_shapes() {
        let big = Shape::new(1, 8, 4096, 64, false);
        assert!(cpu_naive(&big).unwrap_err().contains("CPU"));
        assert!(cpu_tiled(&big, 16, 16).is_err());
        let bad = Shape::new(1, 1, 64, 10, false);
        assert!(cpu_naive(&bad).unwrap_err().contains("cabeza"));
    }
}
