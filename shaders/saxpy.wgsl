// saxpy.wgsl: y[i] = a * x[i] + y[i] for every i < n, in f32.
//
// Bindings:
//   group 0, binding 0: uniform           Params { a: f32, n: u32 }  read
//   group 0, binding 1: storage           array<f32> (x)             read
//   group 0, binding 2: storage           array<f32> (y)             read_write
//
// Workgroup size: (WORKGROUP_SIZE, 1, 1), where WORKGROUP_SIZE is an
// `override` constant. It has no default on purpose: the host
// (crates/vramfit-bench/src/saxpy.rs) must set it, so the value lives in
// exactly one place, the same place that computes the dispatch size.
//
// Dispatch: ceil(n / WORKGROUP_SIZE) workgroups along x. Invocations past the
// end of the arrays return early, so n need not be a multiple of the size.

override WORKGROUP_SIZE: u32;

struct Params {
    // The scalar multiplier.
    a: f32,
    // The number of elements to update; the buffers may be longer.
    n: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= params.n) {
        return;
    }
    y[i] = params.a * x[i] + y[i];
}
