// add.wgsl: element-wise sum y[i] = a[i] + b[i] (a residual connection, or
// two gradient contributions meeting at a branch point).
//
// Bindings:
//   group 0, binding 0: uniform   AddParams                read
//   group 0, binding 1: storage   array<scalar> (a, n)     read
//   group 0, binding 2: storage   array<scalar> (b, n)     read
//   group 0, binding 3: storage   array<scalar> (y, n)     read_write
//
// Workgroup size: (WORKGROUP_SIZE, 1, 1), an `override` constant set by the
// host (crates/vramfit-bench/src/kernels/add.rs).
//
// Dispatch: dispatch_1d(n, WORKGROUP_SIZE): element
// (wid.y * num_workgroups.x + wid.x) * WORKGROUP_SIZE + lid.x; indices past
// `n` return early.
//
// Precision: the sum in f32, stored as `scalar`.

alias scalar = f32;

override WORKGROUP_SIZE: u32;

struct AddParams {
    n: u32,
}

@group(0) @binding(0) var<uniform> p: AddParams;
@group(0) @binding(1) var<storage, read> a: array<scalar>;
@group(0) @binding(2) var<storage, read> b: array<scalar>;
@group(0) @binding(3) var<storage, read_write> y: array<scalar>;

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
    y[i] = scalar(f32(a[i]) + f32(b[i]));
}
