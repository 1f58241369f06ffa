// Tiled attention in the style of FlashAttention-2. One workgroup owns BR query rows of
// one (batch, head); it walks the keys in tiles of BC, staging K and then V in workgroup
// memory, and keeps the running row maximum m, the running sum l and the unnormalised
// output in registers (the online softmax). The output is divided by l once at the end,
// and the log-sum-exp of each row is stored, as FlashAttention-2 does for the backward
// pass. Nothing of size N × N exists: the extra memory is the BH·N log-sum-exp values.
// Causal runs stop at the diagonal tile, so fully masked tiles cost nothing, and their
// row blocks run longest first so the last wave of workgroups is short.
//
// Register blocking: invocation (tr, tc) of the TR × TC grid owns the RM query rows
// tr + TR·i, the CN score columns tc + TC·c and the DW output groups (four columns each,
// one vec4) tc + TC·w. Each line that is just `//` and `@name` is replaced by straight-line
// code that `codegen.rs` generates for the plan's RM, CN and DW: every register is a named variable,
// so no compiler has to unroll a loop or keep a dynamically indexed array in registers.
//
// Workgroup memory holds vec4s. Each step of Q·Kᵀ reads RM + CN vec4s for 4·RM·CN FMAs;
// each step of P·V reads RM + 4·DW vec4s for 16·RM·DW FMAs. K and V rows are stored
// rotated (`slot`): column group g of key row j sits at (g + j) mod D4, so the TC
// invocations that read one group of TC different rows, or TC groups of one row, hit
// distinct banks. Scores are pre-multiplied by log2(e), so the softmax uses exp2.
//
// Row statistics: the row maximum needs all TC invocations of a row every tile (they
// must agree on it), exchanged through `red`. The row sum does not: each invocation keeps
// the partial sum of its own columns, rescaled like the output, and the partial sums are
// added once at the end.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> q: array<vec4<elem>>;
@group(0) @binding(2) var<storage, read_write> k: array<vec4<elem>>;
@group(0) @binding(3) var<storage, read_write> v: array<vec4<elem>>;
@group(0) @binding(4) var<storage, read_write> o: array<vec4<elem>>;
@group(0) @binding(5) var<storage, read_write> lse: array<f32>;

const WG: u32 = TR * TC;
const D4: u32 = D / 4u;
const BC4: u32 = BC / 4u;
const LOG2E: f32 = 1.4426950408889634;
const LN2: f32 = 0.6931471805599453;

var<workgroup> q_s: array<vec4<f32>, BR * D4>;
var<workgroup> kv_s: array<vec4<f32>, BC * D4>;
var<workgroup> p_s: array<vec4<f32>, BR * BC4>;
var<workgroup> red: array<f32, BR * TC>;

// Where column group `g` of key row `j` lives in `kv_s`.
fn slot(j: u32, g: u32) -> u32 {
    return j * D4 + (g + j) % D4;
}

@compute @workgroup_size(WG)
fn tiled(@builtin(workgroup_id) wg: vec3<u32>,
         @builtin(num_workgroups) groups: vec3<u32>,
         @builtin(local_invocation_index) tid: u32) {
    let n = params.n;
    let causal = params.causal == 1u;
    let bh = wg.y;
    var block = wg.x;
    if (causal) {
        block = groups.x - 1u - wg.x;
    }
    let row0 = block * BR;
    let base = bh * n * D4;
    let tr = tid / TC;
    let tc = tid % TC;

    // Q tile, pre-multiplied by the softmax scale and log2(e).
    let qscale = params.scale * LOG2E;
    for (var idx = tid; idx < BR * D4; idx += WG) {
        let r = idx / D4;
        var x = vec4<f32>(0.0);
        if (row0 + r < n) {
            x = vec4<f32>(q[base + (row0 + r) * D4 + idx % D4]) * qscale;
        }
        q_s[idx] = x;
    }

    //@init

    var kv_end = n;
    if (causal) {
        kv_end = min(n, row0 + BR);
    }
    for (var col0 = 0u; col0 < kv_end; col0 += BC) {
        // Everyone is done with the previous tile's V and P.
        workgroupBarrier();
        for (var idx = tid; idx < BC * D4; idx += WG) {
            let j = idx / D4;
            let g = idx % D4;
            var x = vec4<f32>(0.0);
            if (col0 + j < n) {
                x = vec4<f32>(k[base + (col0 + j) * D4 + g]);
            }
            kv_s[slot(j, g)] = x;
        }
        workgroupBarrier();

        //@scores

        // Only the tile past the end and the diagonal tile of a causal run need a mask.
        if (col0 + BC > n || (causal && col0 + BC > row0 + 1u)) {
            //@mask
        }

        //@rowmax
        workgroupBarrier();

        // New running maximum, probabilities (written to p_s), partial sums. K is no
        // longer read, so V is staged into the same memory.
        //@softmax
        for (var idx = tid; idx < BC * D4; idx += WG) {
            let j = idx / D4;
            let g = idx % D4;
            var x = vec4<f32>(0.0);
            if (col0 + j < n) {
                x = vec4<f32>(v[base + (col0 + j) * D4 + g]);
            }
            kv_s[slot(j, g)] = x;
        }
        workgroupBarrier();

        //@pv
    }

    // Every read of `red` inside the loop happened before the loop's last barrier.
    //@sums
    workgroupBarrier();
    //@store
}
