//! The deterministic inputs, computed the same way on the CPU as `common.wgsl` computes
//! them on the GPU, so runs of any size need no upload and the reference needs no copy.

/// lowbias32, the integer hash in `common.wgsl`.
pub fn hash32(x: u32) -> u32 {
    let mut h = x;
    h ^= h >> 16;
    h = h.wrapping_mul(0x7feb_352d);
    h ^= h >> 15;
    h = h.wrapping_mul(0x846c_a68b);
    h ^= h >> 16;
    h
}

/// A multiple of 1/512 in [-1, 1): exact in f16, so f32 and f16 runs see the same data.
pub fn sample_value(tensor: u32, index: u32) -> f32 {
    let h = hash32(index.wrapping_mul(3).wrapping_add(tensor));
    (h >> 22) as f32 / 512.0 - 1.0
}

/// Which input tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tensor {
    Q,
    K,
    V,
}

/// Element `index` (flat, row-major over bh × seq × head_dim) of `tensor`, as the init
/// kernel writes it. Q is scaled by 4 so softmax rows are peaked.
pub fn value(tensor: Tensor, index: u32) -> f32 {
    match tensor {
        Tensor::Q => 4.0 * sample_value(0, index),
        Tensor::K => sample_value(1, index),
        Tensor::V => sample_value(2, index),
    }
}

/// A whole tensor of `len` elements (for the CPU kernels of the fallback).
pub fn tensor(tensor: Tensor, len: usize) -> Vec<f32> {
    (0..len)
        .map(|i| value(tensor, u32::try_from(i).unwrap_or(u32::MAX)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_exact_in_f16_and_in_range() {
        for i in 0..10_000u32 {
            for t in [Tensor::Q, Tensor::K, Tensor::V] {
                let x = value(t, i);
                assert!((-4.0..4.0).contains(&x));
                assert_eq!(f32::from(half::f16::from_f32(x)), x, "{t:?}[{i}]");
            }
        }
    }

    /// Known values pin the hash, so the WGSL copy and this one cannot drift apart
    /// silently (the GPU tests compare both end to end).
    #[test]
    fn hash_is_lowbias32() {
        assert_eq!(hash32(0), 0);
        assert_eq!(hash32(1), 0x6889_90c0);
        assert_ne!(value(Tensor::K, 0), value(Tensor::V, 0));
    }
}
