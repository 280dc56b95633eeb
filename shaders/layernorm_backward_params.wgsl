// layernorm_backward_params.wgsl: the parameter gradients of layer
// normalisation, column sums over the rows:
//   dgamma[j] = sum over r of dy[r][j] * (x[r][j] - mean_r) * rstd_r,
//   dbeta[j]  = sum over r of dy[r][j].
//
// Bindings:
//   group 0, binding 0: uniform   NormParams                    read
//   group 0, binding 1: storage   array<scalar> (dy, rows*cols)  read
//   group 0, binding 2: storage   array<scalar> (x, rows*cols)   read
//   group 0, binding 3: storage   array<f32> (mean, rows)        read
//   group 0, binding 4: storage   array<f32> (rstd, rows)        read
//   group 0, binding 5: storage   array<scalar> (dgamma, cols)   read_write
//   group 0, binding 6: storage   array<scalar> (dbeta, cols)    read_write
//
// Workgroup size: (WORKGROUP_SIZE, 1, 1), an `override` constant set by the
// host (crates/vramfit-bench/src/kernels/layernorm_backward.rs).
//
// Dispatch: one invocation per column, dispatch_1d(cols, WORKGROUP_SIZE);
// neighbouring invocations read neighbouring columns, so each row's loads
// coalesce. Indices past `cols` return early.
//
// Precision: f32 sums whatever `scalar` is.

alias scalar = f32;

override WORKGROUP_SIZE: u32;

struct NormParams {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<uniform> p: NormParams;
@group(0) @binding(1) var<storage, read> dy: array<scalar>;
@group(0) @binding(2) var<storage, read> x: array<scalar>;
@group(0) @binding(3) var<storage, read> mean_in: array<f32>;
@group(0) @binding(4) var<storage, read> rstd_in: array<f32>;
@group(0) @binding(5) var<storage, read_write> dgamma: array<scalar>;
@group(0) @binding(6) var<storage, read_write> dbeta: array<scalar>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let j = (wid.y * groups.x + wid.x) * WORKGROUP_SIZE + lid.x;
    if (j >= p.cols) {
        return;
    }
    var g = 0.0;
    var b = 0.0;
    for (var r = 0u; r < p.rows; r++) {
        let d = f32(dy[r * p.cols + j]);
        g = fma(d, (f32(x[r * p.cols + j]) - mean_in[r]) * rstd_in[r], g);
        b += d;
    }
    dgamma[j] = scalar(g);
    dbeta[j] = scalar(b);
}
