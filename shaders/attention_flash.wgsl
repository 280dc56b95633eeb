// attention_flash.wgsl: scaled dot-product attention forward in one pass
// with an online softmax (FlashAttention's recurrence, Dao et al. 2022),
// never materialising the seq_q x seq_kv scores:
//   o[z][i] = sum over j of softmax_j(scale * q[z][i] . k[z][j]) * v[z][j]
// for each of `batch` = batch * heads independent problems z, with
// PyTorch's is_causal=True mask (key j > query i excluded) when causal != 0.
//
// Bindings:
//   group 0, binding 0: uniform   AttentionParams                      read
//   group 0, binding 1: storage   array<scalar> (q, batch*seq_q*d)     read
//   group 0, binding 2: storage   array<scalar> (k, batch*seq_kv*d)    read
//   group 0, binding 3: storage   array<scalar> (v, batch*seq_kv*d)    read
//   group 0, binding 4: storage   array<scalar> (o, batch*seq_q*d)     read_write
//
// Workgroup size: (BLOCK_Q, 1, 1), an `override` constant set by the host
// (crates/vramfit-bench/src/kernels/attention.rs): one invocation per
// query row. Keys and values stream through workgroup memory BLOCK_KV rows
// at a time (a `const`, private to this file); the head size d is at most
// MAX_D (also a `const`, mirrored by the host as ATTENTION_MAX_HEAD_DIM).
//
// Dispatch: (ceil(seq_q / BLOCK_Q), batch, 1). Invocations past seq_q help
// load tiles (every invocation must reach every barrier) but write nothing.
//
// Precision: scores, softmax statistics and the output accumulator are f32
// whatever `scalar` is.

alias scalar = f32;

override BLOCK_Q: u32;

const BLOCK_KV: u32 = 8u;
const MAX_D: u32 = 128u;

struct AttentionParams {
    batch: u32,
    seq_q: u32,
    seq_kv: u32,
    d: u32,
    scale: f32,
    causal: u32,
}

@group(0) @binding(0) var<uniform> p: AttentionParams;
@group(0) @binding(1) var<storage, read> q: array<scalar>;
@group(0) @binding(2) var<storage, read> k: array<scalar>;
@group(0) @binding(3) var<storage, read> v: array<scalar>;
@group(0) @binding(4) var<storage, read_write> o: array<scalar>;

var<workgroup> k_tile: array<scalar, BLOCK_KV * MAX_D>;
var<workgroup> v_tile: array<scalar, BLOCK_KV * MAX_D>;

@compute @workgroup_size(BLOCK_Q)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let z = wid.y;
    let row = wid.x * BLOCK_Q + lid.x;
    let in_range = row < p.seq_q;
    let d = p.d;
    let q_base = (z * p.seq_q + row) * d;
    let kv_base = z * p.seq_kv * d;

    var q_row: array<f32, MAX_D>;
    var acc: array<f32, MAX_D>;
    for (var c = 0u; c < d; c++) {
        acc[c] = 0.0;
        if (in_range) {
            q_row[c] = f32(q[q_base + c]) * p.scale;
        }
    }
    var running_max = -3.0e38;
    var running_sum = 0.0;

    // Keys beyond the block's last query are all masked when causal; the
    // bound depends only on the workgroup, so the barriers stay uniform.
    var kv_end = p.seq_kv;
    if (p.causal != 0u) {
        kv_end = min(p.seq_kv, (wid.x + 1u) * BLOCK_Q);
    }
    for (var t0 = 0u; t0 < kv_end; t0 += BLOCK_KV) {
        for (var e = lid.x; e < BLOCK_KV * d; e += BLOCK_Q) {
            let j = t0 + e / d;
            var kv = scalar(0.0);
            var vv = scalar(0.0);
            if (j < p.seq_kv) {
                kv = k[kv_base + t0 * d + e];
                vv = v[kv_base + t0 * d + e];
            }
            k_tile[e] = kv;
            v_tile[e] = vv;
        }
        workgroupBarrier();

        if (in_range) {
            // Scores of this tile, then one rescale of the accumulator.
            var scores: array<f32, BLOCK_KV>;
            var tile_max = running_max;
            for (var jj = 0u; jj < BLOCK_KV; jj++) {
                let j = t0 + jj;
                var s = -3.0e38;
                if (j < p.seq_kv && (p.causal == 0u || j <= row)) {
                    s = 0.0;
                    for (var c = 0u; c < d; c++) {
                        s = fma(q_row[c], f32(k_tile[jj * d + c]), s);
                    }
                }
                scores[jj] = s;
                tile_max = max(tile_max, s);
            }
            let correction = exp(running_max - tile_max);
            running_sum *= correction;
            for (var c = 0u; c < d; c++) {
                acc[c] *= correction;
            }
            for (var jj = 0u; jj < BLOCK_KV; jj++) {
                // Masked scores sit at -3e38, so their weight is exactly 0.
                let weight = select(0.0, exp(scores[jj] - tile_max), scores[jj] > -1.0e38);
                running_sum += weight;
                for (var c = 0u; c < d; c++) {
                    acc[c] = fma(weight, f32(v_tile[jj * d + c]), acc[c]);
                }
            }
            running_max = tile_max;
        }
        workgroupBarrier();
    }

    if (in_range) {
        let inv_sum = 1.0 / running_sum;
        for (var c = 0u; c < d; c++) {
            o[q_base + c] = scalar(acc[c] * inv_sum);
        }
    }
}
