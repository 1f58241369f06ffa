// Tiled attention in the style of FlashAttention-2. One workgroup owns BR query rows of
// one (batch, head); it walks the keys in tiles of BC, staging K and then V in workgroup
// memory, and keeps the running row maximum m, the running sum l and the unnormalised
// output in registers (the online softmax). The output is divided by l once at the end,
// and the log-sum-exp m + ln(l) of each row is stored, as FlashAttention-2 does for the
// backward pass. Nothing of size N × N exists: the extra memory is the BH·N log-sum-exp
// values. Causal runs stop at the diagonal tile, so fully masked tiles cost nothing.
//
// Work split: invocation (g, lane) with g < BR/RPT and lane < TPR owns rows g·RPT ..
// g·RPT+RPT-1, the score columns lane + TPR·c (c < BC/TPR) and the output columns
// lane + TPR·c (c < D/TPR). Strided columns keep workgroup-memory accesses of
// neighbouring invocations on different banks; the +1 row padding does the same for
// reads down a column.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> q: array<elem>;
@group(0) @binding(2) var<storage, read_write> k: array<elem>;
@group(0) @binding(3) var<storage, read_write> v: array<elem>;
@group(0) @binding(4) var<storage, read_write> o: array<elem>;
@group(0) @binding(5) var<storage, read_write> lse: array<f32>;

const WG: u32 = (BR / RPT) * TPR;
const CPT: u32 = BC / TPR;
const OPT: u32 = D / TPR;
const STRIDE: u32 = D + 1u;

var<workgroup> q_s: array<f32, BR * STRIDE>;
var<workgroup> kv_s: array<f32, BC * STRIDE>;
var<workgroup> p_s: array<f32, BR * BC>;
var<workgroup> red_max: array<f32, BR * TPR>;
var<workgroup> red_sum: array<f32, BR * TPR>;

@compute @workgroup_size(WG)
fn tiled(@builtin(workgroup_id) wg: vec3<u32>,
         @builtin(local_invocation_index) tid: u32) {
    let n = params.n;
    let bh = wg.y;
    let row0 = wg.x * BR;
    let base = bh * n * D;
    let g = tid / TPR;
    let lane = tid % TPR;

    // Q tile, pre-multiplied by the softmax scale.
    for (var idx = tid; idx < BR * D; idx += WG) {
        let r = idx / D;
        let c = idx % D;
        var x = 0.0;
        if (row0 + r < n) {
            x = f32(q[base + (row0 + r) * D + c]) * params.scale;
        }
        q_s[r * STRIDE + c] = x;
    }

    var m: array<f32, RPT>;
    var l: array<f32, RPT>;
    var acc: array<array<f32, OPT>, RPT>;
    for (var i = 0u; i < RPT; i++) {
        m[i] = NEG;
        l[i] = 0.0;
        for (var c = 0u; c < OPT; c++) {
            acc[i][c] = 0.0;
        }
    }

    var kv_end = n;
    if (params.causal == 1u) {
        kv_end = min(n, row0 + BR);
    }
    for (var col0 = 0u; col0 < kv_end; col0 += BC) {
        // Everyone is done with the previous V tile, P tile and reductions.
        workgroupBarrier();
        for (var idx = tid; idx < BC * D; idx += WG) {
            let r = idx / D;
            let c = idx % D;
            var x = 0.0;
            if (col0 + r < n) {
                x = f32(k[base + (col0 + r) * D + c]);
            }
            kv_s[r * STRIDE + c] = x;
        }
        workgroupBarrier();

        // Scores for this thread's RPT × CPT block, masked. Zeroed explicitly: WGSL
        // zero-initialises a `var` each time its declaration runs, but Chromium's
        // SwiftShader path keeps the previous iteration's values (seen in the browser
        // tests), so the accumulator is never left to the implicit initialiser.
        var sc: array<array<f32, CPT>, RPT>;
        for (var i = 0u; i < RPT; i++) {
            for (var j = 0u; j < CPT; j++) {
                sc[i][j] = 0.0;
            }
        }
        for (var d = 0u; d < D; d++) {
            var qa: array<f32, RPT>;
            for (var i = 0u; i < RPT; i++) {
                qa[i] = q_s[(g * RPT + i) * STRIDE + d];
            }
            for (var j = 0u; j < CPT; j++) {
                let kb = kv_s[(lane + TPR * j) * STRIDE + d];
                for (var i = 0u; i < RPT; i++) {
                    sc[i][j] = fma(qa[i], kb, sc[i][j]);
                }
            }
        }
        for (var i = 0u; i < RPT; i++) {
            let row = row0 + g * RPT + i;
            var local_max = NEG;
            for (var j = 0u; j < CPT; j++) {
                let col = col0 + lane + TPR * j;
                if (col >= n || (params.causal == 1u && col > row)) {
                    sc[i][j] = NEG;
                }
                local_max = max(local_max, sc[i][j]);
            }
            red_max[(g * RPT + i) * TPR + lane] = local_max;
        }
        workgroupBarrier();

        // New running maximum, probabilities, partial sums. K is no longer read, so V
        // can be staged into the same memory.
        var alpha: array<f32, RPT>;
        for (var i = 0u; i < RPT; i++) {
            let r = g * RPT + i;
            var tile_max = NEG;
            for (var t = 0u; t < TPR; t++) {
                tile_max = max(tile_max, red_max[r * TPR + t]);
            }
            let m_new = max(m[i], tile_max);
            alpha[i] = exp(m[i] - m_new);
            m[i] = m_new;
            var local_sum = 0.0;
            for (var j = 0u; j < CPT; j++) {
                let p = exp(sc[i][j] - m_new);
                p_s[r * BC + lane + TPR * j] = p;
                local_sum += p;
            }
            red_sum[r * TPR + lane] = local_sum;
        }
        for (var idx = tid; idx < BC * D; idx += WG) {
            let r = idx / D;
            let c = idx % D;
            var x = 0.0;
            if (col0 + r < n) {
                x = f32(v[base + (col0 + r) * D + c]);
            }
            kv_s[r * STRIDE + c] = x;
        }
        workgroupBarrier();

        for (var i = 0u; i < RPT; i++) {
            let r = g * RPT + i;
            var tile_sum = 0.0;
            for (var t = 0u; t < TPR; t++) {
                tile_sum += red_sum[r * TPR + t];
            }
            l[i] = l[i] * alpha[i] + tile_sum;
            for (var c = 0u; c < OPT; c++) {
                acc[i][c] *= alpha[i];
            }
        }
        for (var j = 0u; j < BC; j++) {
            var pa: array<f32, RPT>;
            for (var i = 0u; i < RPT; i++) {
                pa[i] = p_s[(g * RPT + i) * BC + j];
            }
            for (var c = 0u; c < OPT; c++) {
                let vb = kv_s[j * STRIDE + lane + TPR * c];
                for (var i = 0u; i < RPT; i++) {
                    acc[i][c] = fma(pa[i], vb, acc[i][c]);
                }
            }
        }
    }

    for (var i = 0u; i < RPT; i++) {
        let row = row0 + g * RPT + i;
        if (row < n) {
            let inv = 1.0 / l[i];
            for (var c = 0u; c < OPT; c++) {
                o[base + row * D + lane + TPR * c] = elem(acc[i][c] * inv);
            }
            if (lane == 0u) {
                lse[bh * n + row] = m[i] + log(l[i]);
            }
        }
    }
}
