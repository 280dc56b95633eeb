// layernorm_backward.wgsl: the input gradient of layer normalisation from
// the saved input and statistics, as PyTorch's native_layer_norm_backward:
//   xhat = (x - mean) rstd, g = dy * gamma,
//   dx = rstd * (g - mean_j(g) - xhat * mean_j(g * xhat)).
// The parameter gradients are layernorm_backward_params.wgsl.
//
// Bindings:
//   group 0, binding 0: uniform   NormParams                   read
//   group 0, binding 1: storage   array<scalar> (dy, rows*cols) read
//   group 0, binding 2: storage   array<scalar> (x, rows*cols)  read
//   group 0, binding 3: storage   array<scalar> (gamma, cols)   read
//   group 0, binding 4: storage   array<f32> (mean, rows)       read
//   group 0, binding 5: storage   array<f32> (rstd, rows)       read
//   group 0, binding 6: storage   array<scalar> (dx, rows*cols) read_write
//
// Workgroup size: (WORKGROUP_SIZE, 1, 1), an `override` constant set by the
// host (crates/vramfit-bench/src/kernels/layernorm_backward.rs); a power of
// two (tree reduction).
//
// Dispatch: one workgroup per row, dispatch_1d(rows, 1); workgroups past
// `rows` return early (uniformly, before any barrier).
//
// Precision: f32 whatever `scalar` is.

alias scalar = f32;

override WORKGROUP_SIZE: u32;

struct NormParams {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<uniform> p: NormParams;
@group(0) @binding(1) var<storage, read> dy: array<scalar>;
@group(0) @binding(2) var<storage, read> x: array<scalar>;
@group(0) @binding(3) var<storage, read> gamma: array<scalar>;
@group(0) @binding(4) var<storage, read> mean_in: array<f32>;
@group(0) @binding(5) var<storage, read> rstd_in: array<f32>;
@group(0) @binding(6) var<storage, read_write> dx: array<scalar>;

var<workgroup> partial: array<vec2<f32>, WORKGROUP_SIZE>;

// The sums of every invocation's two values, returned to all of them.
fn workgroup_sum2(lane: u32, value: vec2<f32>) -> vec2<f32> {
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
    let mean = mean_in[row];
    let rstd = rstd_in[row];
    var sums = vec2<f32>(0.0, 0.0);
    for (var j = lane; j < p.cols; j += WORKGROUP_SIZE) {
        let g = f32(dy[base + j]) * f32(gamma[j]);
        let xhat = (f32(x[base + j]) - mean) * rstd;
        sums += vec2<f32>(g, g * xhat);
    }
    let means = workgroup_sum2(lane, sums) / f32(p.cols);
    for (var j = lane; j < p.cols; j += WORKGROUP_SIZE) {
        let g = f32(dy[base + j]) * f32(gamma[j]);
        let xhat = (f32(x[base + j]) - mean) * rstd;
        dx[base + j] = scalar(rstd * (g - means.x - xhat * means.y));
    }
}
