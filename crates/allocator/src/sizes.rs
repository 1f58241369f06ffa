//! The size arithmetic of the caching allocator: request rounding, pool choice, segment
//! sizes and PyTorch's `format_size`.
//!
//! These few functions decide most of what a user sees in `memory_summary()`: why a
//! 1-byte tensor costs 512 bytes, why a 3 MiB tensor reserves 20 MiB, why a 100 MiB
//! tensor reserves exactly 100 MiB. They are kept apart from the allocator so each rule
//! can be tested (and cited on the site) on its own.

/// Every request is rounded up to a multiple of this (`kMinBlockSize`).
pub const MIN_BLOCK_SIZE: u64 = 512;
/// The largest request served by the small pool (`kSmallSize`, 1 MiB).
pub const SMALL_SIZE: u64 = 1 << 20;
/// Size of a small-pool segment (`kSmallBuffer`, 2 MiB); also the small pool's page
/// size with expandable segments.
pub const SMALL_BUFFER: u64 = 2 << 20;
/// Requests below this (`kMinLargeAlloc`, 10 MiB) share 20 MiB segments.
pub const MIN_LARGE_ALLOC: u64 = 10 << 20;
/// Size of a shared large-pool segment (`kLargeBuffer`, 20 MiB); also the large pool's
/// page size with expandable segments, and the slack allowed when an oversize block
/// serves a request (`max_split_size` rule).
pub const LARGE_BUFFER: u64 = 20 << 20;
/// Larger requests get a segment of their own, rounded up to this (`kRoundLarge`).
pub const ROUND_LARGE: u64 = 2 << 20;
/// The largest request or capacity the simulator accepts (1 PiB): far beyond any GPU,
/// and small enough that no size arithmetic below can overflow a `u64`.
pub const MAX_BYTES: u64 = 1 << 50;

/// The two block pools of the allocator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pool {
    /// Rounded requests of at most 1 MiB, packed into 2 MiB segments.
    Small,
    /// Everything larger.
    Large,
}

impl Pool {
    /// The pool a rounded request belongs to (`get_pool`).
    pub fn for_size(rounded: u64) -> Pool {
        if rounded <= SMALL_SIZE {
            Pool::Small
        } else {
            Pool::Large
        }
    }

    /// Page size of an expandable segment of this pool: 2 MiB small, 20 MiB large.
    pub fn page_size(self) -> u64 {
        match self {
            Pool::Small => SMALL_BUFFER,
            Pool::Large => LARGE_BUFFER,
        }
    }
}

/// `round_size`: requests under 512 B become 512 B; with `roundup_power2_divisions`
/// set to `d > 1`, requests above `512·d` are rounded up to the next of `d` equal
/// divisions between two powers of two; everything else to a multiple of 512 B.
pub fn round_size(bytes: u64, divisions: u64) -> u64 {
    if bytes < MIN_BLOCK_SIZE {
        MIN_BLOCK_SIZE
    } else if divisions > 1 && bytes > MIN_BLOCK_SIZE.saturating_mul(divisions) {
        roundup_power2_next_division(bytes, divisions)
    } else {
        bytes.div_ceil(MIN_BLOCK_SIZE) * MIN_BLOCK_SIZE
    }
}

/// `roundup_power2_next_division`: 1200 with 4 divisions lies between 1024 and 2048,
/// whose quarters are 1024, 1280, 1536, 1792: it becomes 1280.
fn roundup_power2_next_division(size: u64, divisions: u64) -> u64 {
    if size.is_power_of_two() {
        return size;
    }
    let floor = 1u64 << (63 - size.leading_zeros());
    // `divisions` is a power of two; dividing by it is a shift by its log2.
    let step = floor >> (63 - divisions.leading_zeros());
    if step == 0 {
        return floor << 1;
    }
    let rounded_down = size & !(step - 1);
    if rounded_down == size {
        size
    } else {
        rounded_down + step
    }
}

/// `get_allocation_size`: the size of the segment `cudaMalloc`ed for a rounded request
/// no cached block could serve. Small requests get 2 MiB, requests under 10 MiB share a
/// 20 MiB segment, larger ones get their own segment rounded up to 2 MiB.
pub fn allocation_size(rounded: u64) -> u64 {
    if rounded <= SMALL_SIZE {
        SMALL_BUFFER
    } else if rounded < MIN_LARGE_ALLOC {
        LARGE_BUFFER
    } else {
        rounded.div_ceil(ROUND_LARGE) * ROUND_LARGE
    }
}

/// PyTorch's `format_size`, as printed in OOM messages: up to 1024 B as "N bytes", then
/// KiB up to 1 MiB, MiB up to 1 GiB, GiB above, always with two decimals. The decimals
/// are computed exactly and rounded half to even, as glibc's `printf("%.2f")` does with
/// the (exactly representable) quotient.
pub fn format_size(bytes: u64) -> String {
    let (unit, name) = if bytes <= 1024 {
        return format!("{bytes} bytes");
    } else if bytes <= 1 << 20 {
        (1u128 << 10, "KiB")
    } else if bytes <= 1 << 30 {
        (1u128 << 20, "MiB")
    } else {
        (1u128 << 30, "GiB")
    };
    let scaled = u128::from(bytes) * 100;
    let mut hundredths = scaled / unit;
    let rest = scaled % unit;
    if rest * 2 > unit || (rest * 2 == unit && hundredths % 2 == 1) {
        hundredths += 1;
    }
    format!("{}.{:02} {name}", hundredths / 100, hundredths % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn rounds_to_512_bytes() {
        assert_eq!(round_size(0, 0), 512);
        assert_eq!(round_size(1, 0), 512);
        assert_eq!(round_size(512, 0), 512);
        assert_eq!(round_size(513, 0), 1024);
        assert_eq!(round_size(1_000_000, 0), 1_000_448);
        // divisions = 1 is the same as no rounding option.
        assert_eq!(round_size(1_000_000, 1), 1_000_448);
    }

    #[test]
    fn power2_divisions() {
        // The example of PyTorch's comment: 1200 between 1024 and 2048, 4 divisions.
        assert_eq!(roundup_power2_next_division(1200, 4), 1280);
        // round_size only applies it above 512·divisions.
        assert_eq!(round_size(1200, 4), 1536);
        assert_eq!(round_size(1200, 2), 1536);
        // 5 MiB + 1 with 4 divisions: between 4 and 8 MiB the steps are 1 MiB.
        assert_eq!(round_size(5 * MIB + 1, 4), 6 * MIB);
        assert_eq!(round_size(5 * MIB, 4), 5 * MIB);
        // Powers of two stay as they are.
        assert_eq!(round_size(64 * MIB, 8), 64 * MIB);
        // 8 divisions between 64 and 128 MiB: 72, 80, ...
        assert_eq!(round_size(65 * MIB, 8), 72 * MIB);
    }

    #[test]
    fn pools() {
        assert_eq!(Pool::for_size(512), Pool::Small);
        assert_eq!(Pool::for_size(MIB), Pool::Small);
        assert_eq!(Pool::for_size(MIB + 512), Pool::Large);
        assert_eq!(Pool::Small.page_size(), 2 * MIB);
        assert_eq!(Pool::Large.page_size(), 20 * MIB);
    }

    #[test]
    fn segment_sizes() {
        assert_eq!(allocation_size(512), 2 * MIB);
        assert_eq!(allocation_size(MIB), 2 * MIB);
        assert_eq!(allocation_size(MIB + 512), 20 * MIB);
        assert_eq!(allocation_size(10 * MIB - 512), 20 * MIB);
        assert_eq!(allocation_size(10 * MIB), 10 * MIB);
        assert_eq!(allocation_size(10 * MIB + 512), 12 * MIB);
        assert_eq!(allocation_size(100 * MIB), 100 * MIB);
    }

    #[test]
    fn formats_like_pytorch() {
        assert_eq!(format_size(0), "0 bytes");
        assert_eq!(format_size(1024), "1024 bytes");
        assert_eq!(format_size(1025), "1.00 KiB");
        assert_eq!(format_size(1536), "1.50 KiB");
        assert_eq!(format_size(MIB), "1024.00 KiB");
        assert_eq!(format_size(20 * MIB), "20.00 MiB");
        assert_eq!(format_size(1 << 30), "1024.00 MiB");
        assert_eq!(format_size(15_837_691_904), "14.75 GiB");
        assert_eq!(format_size(3 * MIB + MIB / 16), "3.06 MiB");
        // 1.125 KiB is an exact tie: glibc rounds it to even.
        assert_eq!(format_size(1152), "1.12 KiB");
        assert_eq!(format_size(1160), "1.13 KiB");
    }
}
