// Naive attention: S = Q·Kᵀ/√D is written to a global (N × N per head) buffer, each row
// is softmaxed in place, then O = P·V. Both products use the same register-blocked
// tiled matmul as fast as the tiled kernel's products: a 64 × 64 output tile per
// workgroup, K-steps of 16, and per invocation a 4 × 4 block of contiguous rows and
// columns held in four named vec4s, fed by two vec4 reads of workgroup memory per step
// (8 FMAs per read, like the tiled kernel). So the comparison with the tiled kernel
// isolates the cost of materialising S. Causal runs skip the output tiles that lie
// entirely above the diagonal.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> q: array<elem>;
@group(0) @binding(2) var<storage, read_write> k: array<elem>;
@group(0) @binding(3) var<storage, read_write> v: array<elem>;
@group(0) @binding(4) var<storage, read_write> o: array<elem>;
@group(0) @binding(5) var<storage, read_write> s: array<elem>;

const TILE: u32 = 64u;
const KSTEP: u32 = 16u;
const MM_WG: u32 = 256u;
const T4: u32 = TILE / 4u;

// Both operands stored k-major: step kk's 64 rows of A (or columns of B) are 16 vec4s.
var<workgroup> a_tile: array<vec4<f32>, 256>; // KSTEP × TILE
var<workgroup> b_tile: array<vec4<f32>, 256>; // KSTEP × TILE

// The inner product of one staged K-step: invocation (tr, tc) owns rows 4·tr .. 4·tr+3
// and columns 4·tc .. 4·tc+3 of the output tile.
fn mm_step(tr: u32, tc: u32, acc: ptr<function, array<vec4<f32>, 4>>) {
    var c0 = (*acc)[0];
    var c1 = (*acc)[1];
    var c2 = (*acc)[2];
    var c3 = (*acc)[3];
    for (var kk = 0u; kk < KSTEP; kk++) {
        let a = a_tile[kk * T4 + tr];
        let b = b_tile[kk * T4 + tc];
        c0 = fma(vec4<f32>(a.x), b, c0);
        c1 = fma(vec4<f32>(a.y), b, c1);
        c2 = fma(vec4<f32>(a.z), b, c2);
        c3 = fma(vec4<f32>(a.w), b, c3);
    }
    (*acc)[0] = c0;
    (*acc)[1] = c1;
    (*acc)[2] = c2;
    (*acc)[3] = c3;
}

// One 64 × 64 tile of S: rows from Q, columns from K (so B is Kᵀ).
@compute @workgroup_size(MM_WG)
fn scores(@builtin(workgroup_id) wg: vec3<u32>,
          @builtin(local_invocation_index) tid: u32) {
    let n = params.n;
    let bh = wg.z;
    let row0 = wg.y * TILE;
    let col0 = wg.x * TILE;
    // Fully masked tile: never read by the softmax, so never written.
    if (params.causal == 1u && col0 > row0 + TILE - 1u) {
        return;
    }
    let tr = tid / 16u;
    let tc = tid % 16u;
    var acc = array<vec4<f32>, 4>(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    let base = bh * n * D;
    for (var k0 = 0u; k0 < D; k0 += KSTEP) {
        for (var e = 0u; e < 4u; e++) {
            // Neighbouring invocations take neighbouring rows, so their writes to the
            // k-major tile fall on distinct banks (the global reads they make are one
            // row apart and come from cache lines the other steps share).
            let idx = tid + e * MM_WG;
            let r = idx % TILE;
            let kk = idx / TILE;
            let qi = row0 + r;
            var qa = 0.0;
            if (qi < n) {
                qa = f32(q[base + qi * D + k0 + kk]);
            }
            a_tile[kk * T4 + r / 4u][r % 4u] = qa;
            let kj = col0 + r;
            var kb = 0.0;
            if (kj < n) {
                kb = f32(k[base + kj * D + k0 + kk]);
            }
            b_tile[kk * T4 + r / 4u][r % 4u] = kb;
        }
        workgroupBarrier();
        mm_step(tr, tc, &acc);
        workgroupBarrier();
    }
    let sbase = bh * n * n;
    for (var i = 0u; i < 4u; i++) {
        let row = row0 + 4u * tr + i;
        let out = acc[i] * params.scale;
        for (var j = 0u; j < 4u; j++) {
            let col = col0 + 4u * tc + j;
            if (row < n && col < n) {
                s[sbase + row * n + col] = elem(out[j]);
            }
        }
    }
}

// Row softmax in place: 4 rows per workgroup, 64 invocations per row.
const SM_ROWS: u32 = 4u;
const SM_LANES: u32 = 64u;
var<workgroup> red: array<f32, 256>;

fn reduce_row(slot: u32, lane: u32, is_max: bool) -> f32 {
    for (var width = SM_LANES / 2u; width > 0u; width /= 2u) {
        workgroupBarrier();
        if (lane < width) {
            let a = red[slot * SM_LANES + lane];
            let b = red[slot * SM_LANES + lane + width];
            red[slot * SM_LANES + lane] = select(a + b, max(a, b), is_max);
        }
    }
    workgroupBarrier();
    let out = red[slot * SM_LANES];
    workgroupBarrier();
    return out;
}

@compute @workgroup_size(256)
fn softmax(@builtin(workgroup_id) wg: vec3<u32>,
           @builtin(local_invocation_index) tid: u32) {
    let n = params.n;
    let slot = tid / SM_LANES;
    let lane = tid % SM_LANES;
    let row = wg.x * SM_ROWS + slot;
    let valid = row < n;
    var len = n;
    if (params.causal == 1u) {
        len = min(n, row + 1u);
    }
    let base = wg.y * n * n + row * n;
    var m = NEG;
    if (valid) {
        for (var j = lane; j < len; j += SM_LANES) {
            m = max(m, f32(s[base + j]));
        }
    }
    red[tid] = m;
    m = reduce_row(slot, lane, true);
    var sum = 0.0;
    if (valid) {
        for (var j = lane; j < len; j += SM_LANES) {
            sum += exp(f32(s[base + j]) - m);
        }
    }
    red[tid] = sum;
    sum = reduce_row(slot, lane, false);
    if (valid) {
        let inv = 1.0 / sum;
        for (var j = lane; j < len; j += SM_LANES) {
            s[base + j] = elem(exp(f32(s[base + j]) - m) * inv);
        }
        // Causal: zero the masked part of the row up to the end of its 64-wide tile,
        // which is as far as the P·V product reads.
        let tile_end = min(n, (row / TILE + 1u) * TILE);
        for (var j = len + lane; j < tile_end; j += SM_LANES) {
            s[base + j] = elem(0.0);
        }
    }
}

// One 64 × 64 tile of O = P·V: rows from P, columns from V.
@compute @workgroup_size(MM_WG)
fn pv(@builtin(workgroup_id) wg: vec3<u32>,
      @builtin(local_invocation_index) tid: u32) {
    let n = params.n;
    let bh = wg.z;
    let row0 = wg.y * TILE;
    let col0 = wg.x * TILE;
    let tr = tid / 16u;
    let tc = tid % 16u;
    var acc = array<vec4<f32>, 4>(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    var kend = n;
    if (params.causal == 1u) {
        kend = min(n, row0 + TILE);
    }
    let sbase = bh * n * n;
    let vbase = bh * n * D;
    for (var k0 = 0u; k0 < kend; k0 += KSTEP) {
        for (var e = 0u; e < 4u; e++) {
            let idx = tid + e * MM_WG;
            // A: TILE rows of P × KSTEP keys, neighbouring invocations on neighbouring
            // rows as in `scores`.
            let r = idx % TILE;
            let kk = idx / TILE;
            var pa = 0.0;
            if (row0 + r < n && k0 + kk < kend) {
                pa = f32(s[sbase + (row0 + r) * n + k0 + kk]);
            }
            a_tile[kk * T4 + r / 4u][r % 4u] = pa;
            // B: KSTEP keys × TILE columns of V.
            let br = idx / TILE;
            let bc = idx % TILE;
            var vb = 0.0;
            if (k0 + br < kend && col0 + bc < D) {
                vb = f32(v[vbase + (k0 + br) * D + col0 + bc]);
            }
            b_tile[br * T4 + bc / 4u][bc % 4u] = vb;
        }
        workgroupBarrier();
        mm_step(tr, tc, &acc);
        workgroupBarrier();
    }
    for (var i = 0u; i < 4u; i++) {
        let row = row0 + 4u * tr + i;
        let out = acc[i];
        for (var j = 0u; j < 4u; j++) {
            let col = col0 + 4u * tc + j;
            if (row < n && col < D) {
                o[vbase + row * D + col] = elem(out[j]);
            }
        }
    }
}
