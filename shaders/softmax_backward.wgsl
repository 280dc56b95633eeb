// softmax_backward.wgsl: the gradient of a row-wise softmax from its saved
// output, as PyTorch's _softmax_backward_data:
//   dx[r][j] = y[r][j] * (dy[r][j] - sum over j' of dy[r][j'] y[r][j']).
// Masked (causal) entries have y = 0, so their gradient is 0 with no mask.
//
// Bindings:
//   group 0, binding 0: uniform   SoftmaxParams                read
//   group 0, binding 1: storage   array<scalar> (y, rows*cols)  read
//   group 0, binding 2: storage   array<scalar> (dy, rows*cols) read
//   group 0, binding 3: storage   array<scalar> (dx, rows*cols) read_write
//
// Workgroup size: (WORKGROUP_SIZE, 1, 1), an `override` constant set by the
// host (crates/vramfit-bench/src/kernels/softmax_backward.rs); a power of two.
//
// Dispatch: one workgroup per row, dispatch_1d(rows, 1); workgroups past
// `rows` return early (uniformly, before any barrier).
//
// Precision: the dot product and the result in f32 whatever `scalar` is.

alias scalar = f32;

override WORKGROUP_SIZE: u32;

struct SoftmaxParams {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<uniform> p: SoftmaxParams;
@group(0) @binding(1) var<storage, read> y: array<scalar>;
@group(0) @binding(2) var<storage, read> dy: array<scalar>;
@group(0) @binding(3) var<storage, read_write> dx: array<scalar>;

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
    var dot = 0.0;
    for (var j = lane; j < p.cols; j += WORKGROUP_SIZE) {
        dot = fma(f32(dy[base + j]), f32(y[base + j]), dot);
    }
    let total = workgroup_sum(lane, dot);
    for (var j = lane; j < p.cols; j += WORKGROUP_SIZE) {
        dx[base + j] = scalar(f32(y[base + j]) * (f32(dy[base + j]) - total));
    }
}
