// Smoke kernel: each workgroup of 64 invocations squares its 64 inputs and sums them
// in workgroup memory with a tree reduction. Small, but it exercises what the attention
// kernels rely on: storage buffers, workgroup memory, barriers and arrayLength.

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> partial_sums: array<f32>;

const WORKGROUP: u32 = 64u;
var<workgroup> scratch: array<f32, WORKGROUP>;

@compute @workgroup_size(WORKGROUP)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    var v = 0.0;
    if (gid.x < arrayLength(&input)) {
        let x = input[gid.x];
        v = x * x;
    }
    scratch[lid] = v;
    workgroupBarrier();

    // Halve the active range each step; the loop bound is uniform, so every
    // invocation reaches every barrier.
    for (var stride = WORKGROUP / 2u; stride > 0u; stride = stride / 2u) {
        if (lid < stride) {
            scratch[lid] = scratch[lid] + scratch[lid + stride];
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        partial_sums[wid.x] = scratch[0];
    }
}
