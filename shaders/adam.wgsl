// adam.wgsl: one Adam/AdamW step, as torch.optim.AdamW's single-tensor
// path (weight_decay = 0 gives Adam):
//   param *= 1 - lr * weight_decay
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g^2
//   param -= (lr / bias1) * m / (sqrt(v) / sqrt(bias2) + eps)
// where bias1 = 1 - beta1^t and bias2 = 1 - beta2^t come from the host.
//
// Bindings:
//   group 0, binding 0: uniform   AdamParams                 read
//   group 0, binding 1: storage   array<scalar> (grad, n)    read
//   group 0, binding 2: storage   array<f32> (param, n)      read_write
//   group 0, binding 3: storage   array<f32> (m, n)          read_write
//   group 0, binding 4: storage   array<f32> (v, n)          read_write
//
// Parameters and both moments are f32 in every variant (fp32 master weights
// and optimizer state, as in mixed-precision training); only the gradient
// has the kernel's `scalar` type.
//
// Workgroup size: (WORKGROUP_SIZE, 1, 1), an `override` constant set by the
// host (crates/vramfit-bench/src/kernels/adam.rs).
//
// Dispatch: dispatch_1d(n, WORKGROUP_SIZE): element
// (wid.y * num_workgroups.x + wid.x) * WORKGROUP_SIZE + lid.x; indices past
// `n` return early.

alias scalar = f32;

override WORKGROUP_SIZE: u32;

struct AdamParams {
    n: u32,
    lr: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    weight_decay: f32,
    bias1: f32,
    bias2: f32,
}

@group(0) @binding(0) var<uniform> p: AdamParams;
@group(0) @binding(1) var<storage, read> grad: array<scalar>;
@group(0) @binding(2) var<storage, read_write> param: array<f32>;
@group(0) @binding(3) var<storage, read_write> m: array<f32>;
@group(0) @binding(4) var<storage, read_write> v: array<f32>;

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
    let g = f32(grad[i]);
    let m_new = p.beta1 * m[i] + (1.0 - p.beta1) * g;
    let v_new = p.beta2 * v[i] + (1.0 - p.beta2) * g * g;
    let denom = sqrt(v_new) / sqrt(p.bias2) + p.eps;
    let decayed = param[i] * (1.0 - p.lr * p.weight_decay);
    param[i] = decayed - (p.lr / p.bias1) * m_new / denom;
    m[i] = m_new;
    v[i] = v_new;
}
