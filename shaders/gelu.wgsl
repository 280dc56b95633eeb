// gelu.wgsl: GELU with the tanh approximation, as PyTorch's
// F.gelu(x, approximate='tanh'):
//   y = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
//
// Bindings:
//   group 0, binding 0: uniform   GeluParams               read
//   group 0, binding 1: storage   array<scalar> (x, n)     read
//   group 0, binding 2: storage   array<scalar> (y, n)     read_write
//
// Workgroup size: (WORKGROUP_SIZE, 1, 1), an `override` constant set by the
// host (crates/vramfit-bench/src/kernels/gelu.rs).
//
// Dispatch: dispatch_1d(n, WORKGROUP_SIZE): element
// (wid.y * num_workgroups.x + wid.x) * WORKGROUP_SIZE + lid.x; indices past
// `n` return early.
//
// Precision: computed in f32 whatever `scalar` is. The tanh argument is
// clamped to [-10, 10], where tanh is already +-1 in f32, because some
// drivers evaluate tanh through exp and would overflow to NaN.

alias scalar = f32;

override WORKGROUP_SIZE: u32;

struct GeluParams {
    n: u32,
}

@group(0) @binding(0) var<uniform> p: GeluParams;
@group(0) @binding(1) var<storage, read> x: array<scalar>;
@group(0) @binding(2) var<storage, read_write> y: array<scalar>;

// sqrt(2 / pi).
const SQRT_2_OVER_PI: f32 = 0.7978845608028654;

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
    let inner = clamp(SQRT_2_OVER_PI * fma(0.044715 * v, v * v, v), -10.0, 10.0);
    y[i] = scalar(0.5 * v * (1.0 + tanh(inner)));
}
