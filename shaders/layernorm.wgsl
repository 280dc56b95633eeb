// layernorm.wgsl: layer normalisation forward over the last dimension, as
// PyTorch's F.layer_norm(x, (cols,), gamma, beta, eps):
//   y[r][j] = (x[r][j] - mean_r) * rstd_r * gamma[j] + beta[j],
//   rstd_r = 1 / sqrt(biased variance_r + eps),
// also writing mean_r and rstd_r, which the backward pass needs.
//
// Bindings:
//   group 0, binding 0: uniform   NormParams                  read
//   group 0, binding 1: storage   array<scalar> (x, rows*cols) read
//   group 0, binding 2: storage   array<scalar> (gamma, cols)  read
//   group 0, binding 3: storage   array<scalar> (beta, cols)   read
//   group 0, binding 4: storage   array<scalar> (y, rows*cols) read_write
//   group 0, binding 5: storage   array<f32> (mean, rows)      read_write
//   group 0, binding 6: storage   array<f32> (rstd, rows)      read_write
//
// Workgroup size: (WORKGROUP_SIZE, 1, 1), an `override` constant set by the
// host (crates/vramfit-bench/src/kernels/layernorm.rs); it must be a power
// of two (tree reduction).
//
// Dispatch: one workgroup per row, dispatch_1d(rows, 1): row
// wid.y * num_workgroups.x + wid.x; workgroups past `rows` return early
// (uniformly, before any barrier).
//
// Precision: statistics and arithmetic in f32 whatever `scalar` is; two
// passes (mean, then the mean of squared deviations), so no cancellation.

alias scalar = f32;

override WORKGROUP_SIZE: u32;

struct NormParams {
    rows: u32,
    cols: u32,
    eps: f32,
}

@group(0) @binding(0) var<uniform> p: NormParams;
@group(0) @binding(1) var<storage, read> x: array<scalar>;
@group(0) @binding(2) var<storage, read> gamma: array<scalar>;
@group(0) @binding(3) var<storage, read> beta: array<scalar>;
@group(0) @binding(4) var<storage, read_write> y: array<scalar>;
@group(0) @binding(5) var<storage, read_write> mean_out: array<f32>;
@group(0) @binding(6) var<storage, read_write> rstd_out: array<f32>;

var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

// The sum of every invocation's `value`, returned to all of them.
fn workgroup_sum(lane: u32, value: f32) -> f32 {
    partial[lane] = value;
    workgroupBarrier();
    for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
        if (lane < stride) {
            partial[lane] += partial[lane + stride];
        }
        workgroupBarrier();
    }
    let total = partial[0];
    workgroupBarrier();
    return total;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let row = wid.y * groups.x + wid.x;
    if (row >= p.rows) {
        return;
    }
    let lane = lid.x;
    let base = row * p.cols;
    let cols = f32(p.cols);

    var sum = 0.0;
    for (var j = lane; j < p.cols; j += WORKGROUP_SIZE) {
        sum += f32(x[base + j]);
    }
    let mean = workgroup_sum(lane, sum) / cols;

    var squares = 0.0;
    for (var j = lane; j < p.cols; j += WORKGROUP_SIZE) {
        let d = f32(x[base + j]) - mean;
        squares = fma(d, d, squares);
    }
    let rstd = inverseSqrt(workgroup_sum(lane, squares) / cols + p.eps);

    for (var j = lane; j < p.cols; j += WORKGROUP_SIZE) {
        let normalized = (f32(x[base + j]) - mean) * rstd;
        y[base + j] = scalar(fma(normalized, f32(gamma[j]), f32(beta[j])));
    }
    if (lane == 0u) {
        mean_out[row] = mean;
        rstd_out[row] = rstd;
    }
}
