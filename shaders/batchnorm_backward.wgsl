// batchnorm_backward.wgsl: the gradients of batchnorm.wgsl (training mode)
// from the saved input x, the saved output y (only for the ReLU mask) and
// the statistics, as PyTorch's ReluBackward + native_batch_norm_backward:
//   dz = relu ? dy * (y > 0) : dy,   xhat = (x - mean_c) rstd_c,
//   dgamma_c = sum dz xhat,  dbeta_c = sum dz   (over n, h, w),
//   dx = gamma_c rstd_c (dz - dbeta_c / m - xhat dgamma_c / m), m = n h w.
// With write_dz set, dz itself is stored too: it is the gradient of the
// residual branch of `relu(bn(x) + residual)`.
//
// Bindings:
//   group 0, binding 0: uniform   BnBackwardParams             read
//   group 0, binding 1: storage   array<scalar> (dy, n*c*hw)    read
//   group 0, binding 2: storage   array<scalar> (x, n*c*hw)     read
//   group 0, binding 3: storage   array<scalar> (y, n*c*hw)     read
//   group 0, binding 4: storage   array<scalar> (gamma, c)      read
//   group 0, binding 5: storage   array<f32> (mean, c)          read
//   group 0, binding 6: storage   array<f32> (rstd, c)          read
//   group 0, binding 7: storage   array<scalar> (dx, n*c*hw)    read_write
//   group 0, binding 8: storage   array<scalar> (dgamma, c)     read_write
//   group 0, binding 9: storage   array<scalar> (dbeta, c)      read_write
//   group 0, binding 10: storage  array<scalar> (dz, n*c*hw)    read_write
// (`y` is only read with the relu flag and `dz` only written with
// write_dz; the host binds placeholders otherwise.)
//
// Workgroup size: (WORKGROUP_SIZE, 1, 1), an `override` constant set by the
// host (crates/vramfit-bench/src/kernels/batchnorm.rs); a power of two.
//
// Dispatch: one workgroup per channel, dispatch_1d(c, 1); workgroups past
// `c` return early (uniformly, before any barrier).
//
// Precision: f32 whatever `scalar` is.

alias scalar = f32;

override WORKGROUP_SIZE: u32;

struct BnBackwardParams {
    n: u32,
    c: u32,
    hw: u32,
    relu: u32,
    write_dz: u32,
}

@group(0) @binding(0) var<uniform> p: BnBackwardParams;
@group(0) @binding(1) var<storage, read> dy: array<scalar>;
@group(0) @binding(2) var<storage, read> x: array<scalar>;
@group(0) @binding(3) var<storage, read> y: array<scalar>;
@group(0) @binding(4) var<storage, read> gamma: array<scalar>;
@group(0) @binding(5) var<storage, read> mean_in: array<f32>;
@group(0) @binding(6) var<storage, read> rstd_in: array<f32>;
@group(0) @binding(7) var<storage, read_write> dx: array<scalar>;
@group(0) @binding(8) var<storage, read_write> dgamma: array<scalar>;
@group(0) @binding(9) var<storage, read_write> dbeta: array<scalar>;
@group(0) @binding(10) var<storage, read_write> dz_out: array<scalar>;

var<workgroup> partial: array<vec2<f32>, WORKGROUP_SIZE>;

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

fn at(ch: u32, k: u32) -> u32 {
    return ((k / p.hw) * p.c + ch) * p.hw + k % p.hw;
}

// The upstream gradient through the optional ReLU.
fn grad_z(i: u32) -> f32 {
    let d = f32(dy[i]);
    if (p.relu != 0u && f32(y[i]) <= 0.0) {
        return 0.0;
    }
    return d;
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
    let mean = mean_in[ch];
    let rstd = rstd_in[ch];
    var sums = vec2<f32>(0.0, 0.0);
    for (var k = lane; k < count; k += WORKGROUP_SIZE) {
        let i = at(ch, k);
        let dz = grad_z(i);
        sums += vec2<f32>(dz, dz * (f32(x[i]) - mean) * rstd);
    }
    let totals = workgroup_sum2(lane, sums);
    let m = f32(count);
    let scale = f32(gamma[ch]) * rstd;
    for (var k = lane; k < count; k += WORKGROUP_SIZE) {
        let i = at(ch, k);
        let dz = grad_z(i);
        let xhat = (f32(x[i]) - mean) * rstd;
        dx[i] = scalar(scale * (dz - totals.x / m - xhat * totals.y / m));
        if (p.write_dz != 0u) {
            dz_out[i] = scalar(dz);
        }
    }
    if (lane == 0u) {
        dgamma[ch] = scalar(totals.y);
        dbeta[ch] = scalar(totals.x);
    }
}
