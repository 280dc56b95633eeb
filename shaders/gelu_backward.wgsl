// gelu_backward.wgsl: the gradient of GELU's tanh approximation (what
// PyTorch's GeluBackward computes for approximate='tanh'):
//   dx = dy * (0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2)),
//   t = tanh(k (x + c x^3)), k = sqrt(2 / pi), c = 0.044715.
//
// Bindings:
//   group 0, binding 0: uniform   GeluParams               read
//   group 0, binding 1: storage   array<scalar> (x, n)     read
//   group 0, binding 2: storage   array<scalar> (dy, n)    read
//   group 0, binding 3: storage   array<scalar> (dx, n)    read_write
//
// Workgroup size: (WORKGROUP_SIZE, 1, 1), an `override` constant set by the
// host (crates/vramfit-bench/src/kernels/gelu_backward.rs).
//
// Dispatch: dispatch_1d(n, WORKGROUP_SIZE), as gelu.wgsl; indices past `n`
// return early.
//
// Precision: computed in f32 whatever `scalar` is; the tanh argument is
// clamped as in gelu.wgsl.

alias scalar = f32;

override WORKGROUP_SIZE: u32;

struct GeluParams {
    n: u32,
}

@group(0) @binding(0) var<uniform> p: GeluParams;
@group(0) @binding(1) var<storage, read> x: array<scalar>;
@group(0) @binding(2) var<storage, read> dy: array<scalar>;
@group(0) @binding(3) var<storage, read_write> dx: array<scalar>;

const SQRT_2_OVER_PI: f32 = 0.7978845608028654;
const C: f32 = 0.044715;

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
    let v = f32(x[i]);
    let t = tanh(clamp(SQRT_2_OVER_PI * fma(C * v, v * v, v), -10.0, 10.0));
    let slope = 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * SQRT_2_OVER_PI * fma(3.0 * C, v * v, 1.0);
    dx[i] = scalar(f32(dy[i]) * slope);
}
