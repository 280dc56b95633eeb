// softmax.wgsl: row-wise softmax, as PyTorch's torch.softmax(x, dim=-1):
//   y[r][j] = exp(x[r][j] - max_r) / sum over j' of exp(x[r][j'] - max_r),
// optionally with a causal mask: when causal_period > 0, row r is query
// q = r % causal_period and columns j > q are excluded (their y is 0), as
// in attention with is_causal=True over [batch, heads, q, k] scores.
//
// Bindings:
//   group 0, binding 0: uniform   SoftmaxParams               read
//   group 0, binding 1: storage   array<scalar> (x, rows*cols) read
//   group 0, binding 2: storage   array<scalar> (y, rows*cols) read_write
//
// Workgroup size: (WORKGROUP_SIZE, 1, 1), an `override` constant set by the
// host (crates/vramfit-bench/src/kernels/softmax.rs); a power of two.
//
// Dispatch: one workgroup per row, dispatch_1d(rows, 1): row
// wid.y * num_workgroups.x + wid.x; workgroups past `rows` return early.
//
// Precision: max, exponentials and sum in f32 whatever `scalar` is.

alias scalar = f32;

override WORKGROUP_SIZE: u32;

struct SoftmaxParams {
    rows: u32,
    cols: u32,
    causal_period: u32,
}

@group(0) @binding(0) var<uniform> p: SoftmaxParams;
@group(0) @binding(1) var<storage, read> x: array<scalar>;
@group(0) @binding(2) var<storage, read_write> y: array<scalar>;

var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

// The maximum (is_max) or the sum of every invocation's `value`.
fn workgroup_reduce(lane: u32, value: f32, is_max: bool) -> f32 {
    partial[lane] = value;
    workgroupBarrier();
    for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
        if (lane < stride) {
            let other = partial[lane + stride];
            partial[lane] = select(partial[lane] + other, max(partial[lane], other), is_max);
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
    // Columns [0, live) take part; the rest are masked.
    var live = p.cols;
    if (p.causal_period > 0u) {
        live = min(p.cols, row % p.causal_period + 1u);
    }

    var row_max = -3.0e38;
    for (var j = lane; j < live; j += WORKGROUP_SIZE) {
        row_max = max(row_max, f32(x[base + j]));
    }
    row_max = workgroup_reduce(lane, row_max, true);

    var sum = 0.0;
    for (var j = lane; j < live; j += WORKGROUP_SIZE) {
        sum += exp(f32(x[base + j]) - row_max);
    }
    let inv_sum = 1.0 / workgroup_reduce(lane, sum, false);

    for (var j = lane; j < p.cols; j += WORKGROUP_SIZE) {
        var value = 0.0;
        if (j < live) {
            value = exp(f32(x[base + j]) - row_max) * inv_sum;
        }
        y[base + j] = scalar(value);
    }
}
