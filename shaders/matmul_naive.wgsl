// matmul_naive.wgsl: C = alpha * op(A) * op(B) for a batch of matrices, one
// invocation per element of C; op(X) is X or its transpose (row-major data).
// The baseline the tiled kernel is measured against.
//
// Bindings:
//   group 0, binding 0: uniform   MatmulParams                 read
//   group 0, binding 1: storage   array<scalar> (A)            read
//   group 0, binding 2: storage   array<scalar> (B)            read
//   group 0, binding 3: storage   array<scalar> (C)            read_write
//
// Shapes: op(A) is m x k, op(B) is k x n, C is m x n. A is stored m x k, or
// k x m when trans_a != 0; B is stored k x n, or n x k when trans_b != 0.
// Matrix z of the batch starts at z * batch_stride_{a,b,c}.
//
// Workgroup size: (WG_X, WG_Y, 1), `override` constants set by the host
// (crates/vramfit-bench/src/kernels/matmul.rs).
//
// Dispatch: (ceil(n / WG_X), ceil(m / WG_Y), batch). x runs along the
// columns of C so that neighbouring invocations read neighbouring B and
// write neighbouring C. Invocations outside C return early.
//
// Precision: products are accumulated in `scalar` (f16 in the f16 variant).

alias scalar = f32;

override WG_X: u32;
override WG_Y: u32;

struct MatmulParams {
    m: u32,
    n: u32,
    k: u32,
    trans_a: u32,
    trans_b: u32,
    batch_stride_a: u32,
    batch_stride_b: u32,
    batch_stride_c: u32,
    alpha: f32,
}

@group(0) @binding(0) var<uniform> p: MatmulParams;
@group(0) @binding(1) var<storage, read> a: array<scalar>;
@group(0) @binding(2) var<storage, read> b: array<scalar>;
@group(0) @binding(3) var<storage, read_write> c: array<scalar>;

@compute @workgroup_size(WG_X, WG_Y, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let col = gid.x;
    let row = gid.y;
    let batch = gid.z;
    if (row >= p.m || col >= p.n) {
        return;
    }
    // Walk row `row` of op(A) and column `col` of op(B) with fixed strides.
    var ai = batch * p.batch_stride_a + row * p.k;
    var a_step = 1u;
    if (p.trans_a != 0u) {
        ai = batch * p.batch_stride_a + row;
        a_step = p.m;
    }
    var bi = batch * p.batch_stride_b + col;
    var b_step = p.n;
    if (p.trans_b != 0u) {
        bi = batch * p.batch_stride_b + col * p.k;
        b_step = 1u;
    }
    var acc = scalar(0.0);
    for (var kk = 0u; kk < p.k; kk++) {
        acc = fma(a[ai], b[bi], acc);
        ai += a_step;
        bi += b_step;
    }
    c[batch * p.batch_stride_c + row * p.n + col] = scalar(p.alpha) * acc;
}
