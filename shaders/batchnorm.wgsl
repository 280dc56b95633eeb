// batchnorm.wgsl: 2-D batch normalisation forward in training mode (batch
// statistics, biased variance), as PyTorch's F.batch_norm(x, training=True)
// on NCHW, optionally followed by `+ residual` and/or ReLU (flags), the
// tail of a ResNet block:
//   y = relu?((x - mean_c) rstd_c gamma_c + beta_c (+ residual)),
//   rstd_c = 1 / sqrt(var_c + eps), statistics over n, h and w;
// also writing mean_c and rstd_c, which the backward pass needs (PyTorch's
// save_mean / save_invstd). Running statistics are not updated.
//
// Bindings:
//   group 0, binding 0: uniform   BnParams                        read
//   group 0, binding 1: storage   array<scalar> (x, n*c*hw)        read
//   group 0, binding 2: storage   array<scalar> (gamma, c)         read
//   group 0, binding 3: storage   array<scalar> (beta, c)          read
//   group 0, binding 4: storage   array<scalar> (residual, n*c*hw) read
//   group 0, binding 5: storage   array<scalar> (y, n*c*hw)        read_write
//   group 0, binding 6: storage   array<f32> (mean, c)             read_write
//   group 0, binding 7: storage   array<f32> (rstd, c)             read_write
// (`residual` is only read when the flag is set; the host binds x there
// otherwise.)
//
// Workgroup size: (WORKGROUP_SIZE, 1, 1), an `override` constant set by the
// host (crates/vramfit-bench/src/kernels/batchnorm.rs); a power of two.
//
// Dispatch: one workgroup per channel, dispatch_1d(c, 1); workgroups past
// `c` return early (uniformly, before any barrier).
//
// Precision: statistics and arithmetic in f32 whatever `scalar` is; two
// passes (mean, then mean of squared deviations).

alias scalar = f32;

override WORKGROUP_SIZE: u32;

struct BnParams {
    n: u32,
    c: u32,
    hw: u32,
    eps: f32,
    relu: u32,
    residual: u32,
}

@group(0) @binding(0) var<uniform> p: BnParams;
@group(0) @binding(1) var<storage, read> x: array<scalar>;
@group(0) @binding(2) var<storage, read> gamma: array<scalar>;
@group(0) @binding(3) var<storage, read> beta: array<scalar>;
@group(0) @binding(4) var<storage, read> residual: array<scalar>;
@group(0) @binding(5) var<storage, read_write> y: array<scalar>;
@group(0) @binding(6) var<storage, read_write> mean_out: array<f32>;
@group(0) @binding(7) var<storage, read_write> rstd_out: array<f32>;

var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

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

// The flat index of the k-th element (k < n*hw) of channel ch.
fn at(ch: u32, k: u32) -> u32 {
    return ((k / p.hw) * p.c + ch) * p.hw + k % p.hw;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let ch = wid.y * groups.x + wid.x;
    if (ch >= p.c) {
        return;
    }
    let lane = lid.x;
    let count = p.n * p.hw;
    var sum = 0.0;
    for (var k = lane; k < count; k += WORKGROUP_SIZE) {
        sum += f32(x[at(ch, k)]);
    }
    let mean = workgroup_sum(lane, sum) / f32(count);
    var squares = 0.0;
    for (var k = lane; k < count; k += WORKGROUP_SIZE) {
        let d = f32(x[at(ch, k)]) - mean;
        squares = fma(d, d, squares);
    }
    let rstd = inverseSqrt(workgroup_sum(lane, squares) / f32(count) + p.eps);
    let g = f32(gamma[ch]) * rstd;
    let b = f32(beta[ch]);
    for (var k = lane; k < count; k += WORKGROUP_SIZE) {
        let i = at(ch, k);
        var v = fma(f32(x[i]) - mean, g, b);
        if (p.residual != 0u) {
            v += f32(residual[i]);
        }
        if (p.relu != 0u) {
            v = max(v, 0.0);
        }
        y[i] = scalar(v);
    }
    if (lane == 0u) {
        mean_out[ch] = mean;
        rstd_out[ch] = rstd;
    }
}
