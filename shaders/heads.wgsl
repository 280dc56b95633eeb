// heads.wgsl: moves one of `parts` head-interleaved blocks between the
// token-major layout of a linear layer and the head-major layout attention
// works on, as GPT-2's `split_heads` / `merge_heads` (view + transpose +
// contiguous copy):
//   fused[b][s][part][h][e]  (shape [batch, seq, parts * heads * d])
//   split[b][h][s][e]        (shape [batch * heads, seq, d])
// merge == 0 copies fused -> split (split heads of q, k or v);
// merge == 1 copies split -> fused (merge the context, or put dq/dk/dv back
// into the fused gradient of the qkv projection).
//
// Bindings:
//   group 0, binding 0: uniform   HeadsParams                        read
//   group 0, binding 1: storage   array<scalar> (src)                read
//   group 0, binding 2: storage   array<scalar> (dst)                read_write
//
// Workgroup size: (WORKGROUP_SIZE, 1, 1), an `override` constant set by the
// host (crates/vramfit-bench/src/kernels/heads.rs).
//
// Dispatch: dispatch_1d(n, WORKGROUP_SIZE) over the n = batch*heads*seq*d
// elements of the split layout; indices past `n` return early.
//
// Precision: a copy; nothing is computed.

alias scalar = f32;

override WORKGROUP_SIZE: u32;

struct HeadsParams {
    batch: u32,
    seq: u32,
    heads: u32,
    d: u32,
    parts: u32,
    part: u32,
    merge: u32,
    n: u32,
}

@group(0) @binding(0) var<uniform> p: HeadsParams;
@group(0) @binding(1) var<storage, read> src: array<scalar>;
@group(0) @binding(2) var<storage, read_write> dst: array<scalar>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let i = (wid.y * groups.x + wid.x) * WORKGROUP_SIZE + lid.x;
    if (i >= p.n) {
        return;
    }
    // i indexes split[b][h][s][e].
    let e = i % p.d;
    let s = (i / p.d) % p.seq;
    let h = (i / (p.d * p.seq)) % p.heads;
    let b = i / (p.d * p.seq * p.heads);
    let fused = ((b * p.seq + s) * p.parts + p.part) * p.heads * p.d + h * p.d + e;
    if (p.merge == 0u) {
        dst[i] = src[fused];
    } else {
        dst[fused] = src[i];
    }
}
