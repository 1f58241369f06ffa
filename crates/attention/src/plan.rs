//! Tile sizes chosen from the adapter's limits ([`TilePlan`]); [`crate::source`] turns a
//! plan into the WGSL text each run compiles.

/// The adapter facts that size the tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// `max_compute_workgroup_storage_size`, bytes.
    pub workgroup_storage: u32,
    /// `max_compute_invocations_per_workgroup`.
    pub invocations: u32,
    /// `max_compute_workgroup_size_x`.
    pub size_x: u32,
}

impl Caps {
    /// WebGPU's guaranteed minimums: every adapter offers at least this.
    pub const WEBGPU_DEFAULT: Caps = Caps {
        workgroup_storage: 16_384,
        invocations: 256,
        size_x: 256,
    };

    pub fn from_limits(limits: &wgpu::Limits) -> Caps {
        Caps {
            workgroup_storage: limits.max_compute_workgroup_storage_size,
            invocations: limits.max_compute_invocations_per_workgroup,
            size_x: limits.max_compute_workgroup_size_x,
        }
    }
}

/// The tiled kernel's tiling: BR query rows and BC keys per tile, computed by a TR × TC
/// grid of invocations; each owns RM = BR/TR rows, CN = BC/TC score columns and
/// DW = D/(4·TC) vec4 groups of output columns (see `kernels/tiled.wgsl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TilePlan {
    pub head_dim: u32,
    pub br: u32,
    pub bc: u32,
    pub tr: u32,
    pub tc: u32,
}

/// The most f32 values one invocation may keep live (scores, output accumulator,
/// running max and sums, one step's operands); NVIDIA allows 255 32-bit registers per
/// invocation, and past that values spill to memory.
const MAX_REGISTERS: u32 = 192;

/// Plans within this many registers are preferred: they leave room for more invocations
/// per multiprocessor, which hides memory latency.
const PREFERRED_REGISTERS: u32 = 128;

impl TilePlan {
    pub fn workgroup_size(&self) -> u32 {
        self.tr * self.tc
    }

    /// "64x32" (BR × BC), as the CLI and the page print the tiles.
    pub fn label(&self) -> String {
        format!("{}x{}", self.br, self.bc)
    }

    /// The full spelling `--tiles` takes: "BRxBCxTRxTC".
    pub fn spec(&self) -> String {
        format!("{}x{}x{}x{}", self.br, self.bc, self.tr, self.tc)
    }

    /// Reads "BRxBCxTRxTC" (four positive integers up to 1024) for head dimension
    /// `head_dim`; whether the plan fits an adapter is checked when a run starts.
    pub fn parse(spec: &str, head_dim: u32) -> Result<TilePlan, String> {
        let parts: Vec<&str> = spec.trim().split(['x', 'X', '×']).collect();
        let bad = || {
            format!(
                "bloques no válidos «{}»: se esperan cuatro enteros BRxBCxTRxTC, p. ej. 64x32x16x8",
                crate::clip(spec)
            )
        };
        let [br, bc, tr, tc] = parts.as_slice() else {
            return Err(bad());
        };
        let num = |s: &str| {
            s.trim()
                .parse::<u32>()
                .ok()
                .filter(|v| (1..=1024).contains(v))
                .ok_or_else(bad)
        };
        Ok(TilePlan {
            head_dim,
            br: num(br)?,
            bc: num(bc)?,
            tr: num(tr)?,
            tc: num(tc)?,
        })
    }

    /// Query rows per invocation.
    pub fn rm(&self) -> u32 {
        self.br / self.tr
    }

    /// Score columns per invocation.
    pub fn cn(&self) -> u32 {
        self.bc / self.tc
    }

    /// vec4 groups of output columns per invocation.
    pub fn dw(&self) -> u32 {
        self.head_dim / 4 / self.tc
    }

    /// Workgroup memory, bytes, exactly as `tiled.wgsl` declares it: Q and K/V tiles
    /// and P as vec4s, the row exchange as f32s.
    pub fn workgroup_bytes(&self) -> u32 {
        let d4 = self.head_dim / 4;
        16 * (self.br * d4 + self.bc * d4 + self.br * self.bc / 4) + 4 * self.br * self.tc
    }

    fn registers(&self) -> u32 {
        let (rm, cn, dw) = (self.rm(), self.cn(), self.dw());
        rm * cn + 4 * rm * dw + 2 * rm + 4 * (rm + cn) + 4 * dw
    }

    pub fn fits(&self, caps: &Caps) -> bool {
        let wg = self.workgroup_size();
        self.head_dim.is_multiple_of(4)
            && self.br.is_multiple_of(self.tr)
            && self.bc.is_multiple_of(self.tc)
            && self.bc.is_multiple_of(4)
            && (self.head_dim / 4).is_multiple_of(self.tc)
            && (32..=caps.invocations.min(caps.size_x)).contains(&wg)
            && self.workgroup_bytes() <= caps.workgroup_storage
            && self.registers() <= MAX_REGISTERS
    }

    /// FMAs per workgroup-memory load (×100) over one key tile, both products and the
    /// row exchange counted: what keeps a GPU compute-bound.
    fn intensity(&self) -> u32 {
        let (rm, cn, dw) = (self.rm(), self.cn(), self.dw());
        let d4 = self.head_dim / 4;
        let fmas = 4 * rm * cn * d4 + 16 * rm * dw * (self.bc / 4);
        let loads = (rm + cn) * d4 + (rm + 4 * dw) * (self.bc / 4) + rm * self.tc;
        100 * fmas / loads
    }

    /// Preference: a modest register count, then the most FMAs per workgroup-memory
    /// load, then the largest tile (work per barrier), then the most query rows (K/V
    /// traffic from global memory is N²·d/BR), then a workgroup near 128.
    fn score(&self) -> (bool, u32, u32, u32, i64) {
        let wg = i64::from(self.workgroup_size());
        (
            self.registers() <= PREFERRED_REGISTERS,
            self.intensity(),
            self.br * self.bc,
            self.br,
            -(wg - 128).abs(),
        )
    }

    /// Every plan this crate knows for `head_dim`, fitting or not.
    pub fn candidates(head_dim: u32) -> impl Iterator<Item = TilePlan> {
        [128u32, 64, 32, 16, 8].into_iter().flat_map(move |br| {
            [64u32, 32, 16, 8].into_iter().flat_map(move |bc| {
                [4u32, 8, 16, 32].into_iter().flat_map(move |tr| {
                    [1u32, 2, 4, 8, 16].into_iter().map(move |tc| TilePlan {
                        head_dim,
                        br,
                        bc,
                        tr,
                        tc,
                    })
                })
            })
        })
    }

    /// The best plan that fits `caps`, or `None` when even the smallest does not (an
    /// adapter below WebGPU's minimums).
    pub fn choose(head_dim: u32, caps: &Caps) -> Option<TilePlan> {
        Self::candidates(head_dim)
            .filter(|p| p.fits(caps))
            .max_by_key(TilePlan::score)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAVAPIPE: Caps = Caps {
        workgroup_storage: 32_768,
        invocations: 1024,
        size_x: 1024,
    };
    /// What NVIDIA's Vulkan driver reports (48 KiB of shared memory per workgroup).
    const NVIDIA: Caps = Caps {
        workgroup_storage: 49_152,
        invocations: 1024,
        size_x: 1024,
    };

    #[test]
    fn every_head_dim_up_to_192_has_a_plan_within_webgpu_minimums() {
        for d in (16..=256).step_by(16) {
            for caps in [Caps::WEBGPU_DEFAULT, LAVAPIPE, NVIDIA] {
                // d = 256 needs 16 rows of 64 vec4s (16,384 B) plus P even at BR = BC = 8:
                // more than WebGPU's 16 KiB minimum, so such adapters get a clear refusal.
                if d == 256 && caps == Caps::WEBGPU_DEFAULT {
                    assert_eq!(TilePlan::choose(d, &caps), None);
                    continue;
                }
                let p = TilePlan::choose(d, &caps).unwrap_or_else(|| panic!("d={d} {caps:?}"));
                assert!(p.workgroup_bytes() <= caps.workgroup_storage, "{p:?}");
                assert!(p.workgroup_size() <= caps.invocations, "{p:?}");
            }
        }
    }

    #[test]
    fn more_workgroup_memory_gives_larger_tiles() {
        for d in [64, 128] {
            let small = TilePlan::choose(d, &Caps::WEBGPU_DEFAULT).unwrap();
            let large = TilePlan::choose(d, &NVIDIA).unwrap();
            assert!(
                large.br * large.bc > small.br * small.bc,
                "{small:?} {large:?}"
            );
        }
    }

    #[test]
    fn tiles_parse_from_their_spelling() {
        let p = TilePlan::parse("64x32x16x8", 64).unwrap();
        assert_eq!((p.br, p.bc, p.tr, p.tc, p.head_dim), (64, 32, 16, 8, 64));
        assert_eq!(p.spec(), "64x32x16x8");
        assert_eq!(p.label(), "64x32");
        assert_eq!(TilePlan::parse(" 16×64×4×8 ", 128).unwrap().br, 16);
        for bad in [
            "",
            "64x32",
            "64x32x16x8x1",
            "0x32x16x8",
            "64x32x16x-8",
            "axbxcxd",
            "99999x1x1x1",
        ] {
            let e = TilePlan::parse(bad, 64).unwrap_err();
            assert!(e.contains("BRxBCxTRxTC"), "{bad}: {e}");
        }
    }

    #[test]
    fn an_adapter_below_the_minimums_gets_no_plan() {
        let tiny = Caps {
            workgroup_storage: 1024,
            invocations: 64,
            size_x: 64,
        };
        assert_eq!(TilePlan::choose(128, &tiny), None);
    }

    #[test]
    fn workgroup_bytes_match_the_declarations() {
        let p = TilePlan {
            head_dim: 64,
            br: 32,
            bc: 32,
            tr: 16,
            tc: 8,
        };
        // q_s 32×16 vec4, kv_s 32×16 vec4, p_s 32×8 vec4, red 32×8 f32.
        assert_eq!(p.workgroup_bytes(), 16 * (512 + 512 + 256) + 4 * 256);
        assert_eq!(p.workgroup_size(), 128);
        assert_eq!((p.rm(), p.cn(), p.dw()), (2, 4, 2));
    }

    #[test]
    #[ignore = "prints the chosen plans; run with --ignored --nocapture"]
    fn print_chosen_plans() {
        for caps in [Caps::WEBGPU_DEFAULT, LAVAPIPE, NVIDIA] {
            for d in [64, 128] {
                let p = TilePlan::choose(d, &caps).unwrap();
                println!(
                    "{caps:?} d={d}: {p:?} rm={} cn={} dw={} bytes={} regs={} intensity={}",
                    p.rm(),
                    p.cn(),
                    p.dw(),
                    p.workgroup_bytes(),
                    p.registers(),
                    p.intensity()
                );
            }
        }
    }
}
