// matmul_tiled.wgsl: C = alpha * op(A) * op(B) for a batch of matrices, with
// workgroup tiles in shared memory and an 8 x 8 block of C per invocation.
// Same parameters, bindings and semantics as matmul_naive.wgsl.
//
// Bindings:
//   group 0, binding 0: uniform   MatmulParams                 read
//   group 0, binding 1: storage   array<scalar> (A)            read
//   group 0, binding 2: storage   array<scalar> (B)            read
//   group 0, binding 3: storage   array<scalar> (C)            read_write
//
// Workgroup size: (WG_X, WG_Y, 1), `override` constants set by the host
// (crates/vramfit-bench/src/kernels/matmul.rs), as is BK, the depth of a
// tile along k. Each invocation computes TM x TN = 8 x 8 outputs (a `const`:
// the register block is written out as two vec4 per row), so a workgroup
// covers BM = WG_Y * TM rows and BN = WG_X * TN columns of C.
//
// Dispatch: (ceil(n / BN), ceil(m / BM), batch). Loads outside op(A) or
// op(B) read zero and stores outside C are skipped, so no dimension needs
// to be a multiple of a tile.
//
// Technique: per step of BK along k, all invocations load a BM x BK tile of
// op(A) and a BK x BN tile of op(B) into workgroup memory (k-major, packed
// as vec4 along m and n, the transpose folded into the load), then each
// invocation reads 2 + 2 vec4 per k and does 16 vec4 fused multiply-adds on
// its 8 x 8 accumulator. Global loads are scalar because shapes are
// arbitrary (no vec4 alignment); the shared-memory reads are vec4.
//
// Precision: products are accumulated in `scalar` (f16 in the f16 variant).

alias scalar = f32;

override WG_X: u32;
override WG_Y: u32;
override BK: u32;

const TM: u32 = 8u;
const TN: u32 = 8u;

struct MatmulParams {
    m: u32,
    n: u32,
    k: u32,
    trans_a: u32,
    trans_b: u32,
    batch_stride_a: u32,
    batch_stride_b: u32,
    batch_stride_c: u32,
    alpha: f32,
}

@group(0) @binding(0) var<uniform> p: MatmulParams;
@group(0) @binding(1) var<storage, read> a: array<scalar>;
@group(0) @binding(2) var<storage, read> b: array<scalar>;
@group(0) @binding(3) var<storage, read_write> c: array<scalar>;

// tile_a[kk * BM / 4 + r / 4][r % 4] = op(A)[row0 + r][k0 + kk].
var<workgroup> tile_a: array<vec4<scalar>, BK * WG_Y * TM / 4u>;
// tile_b[kk * BN / 4 + j / 4][j % 4] = op(B)[k0 + kk][col0 + j].
var<workgroup> tile_b: array<vec4<scalar>, BK * WG_X * TN / 4u>;

@compute @workgroup_size(WG_X, WG_Y, 1)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let bm = WG_Y * TM;
    let bn = WG_X * TN;
    let row0 = wid.y * bm;
    let col0 = wid.x * bn;
    let a_base = wid.z * p.batch_stride_a;
    let b_base = wid.z * p.batch_stride_b;
    let tid = lid.y * WG_X + lid.x;
    let threads = WG_X * WG_Y;
    let ta = p.trans_a != 0u;
    let tb = p.trans_b != 0u;

    // acc[2 * i + h] holds C[row i of the block][columns 4h .. 4h + 3].
    var acc: array<vec4<scalar>, 16>;
    for (var i = 0u; i < 16u; i++) {
        acc[i] = vec4<scalar>(0.0);
    }

    for (var k0 = 0u; k0 < p.k; k0 += BK) {
        // Consecutive invocations take consecutive addresses of whichever
        // layout A and B have, so the global loads coalesce.
        for (var e = tid; e < BK * bm; e += threads) {
            let r = select(e / BK, e % bm, ta);
            let kk = select(e % BK, e / bm, ta);
            let gr = row0 + r;
            let gk = k0 + kk;
            var v = scalar(0.0);
            if (gr < p.m && gk < p.k) {
                v = a[a_base + select(gr * p.k + gk, gk * p.m + gr, ta)];
            }
            tile_a[kk * (bm / 4u) + r / 4u][r % 4u] = v;
        }
        for (var e = tid; e < BK * bn; e += threads) {
            let j = select(e % bn, e / BK, tb);
            let kk = select(e / bn, e % BK, tb);
            let gc = col0 + j;
            let gk = k0 + kk;
            var v = scalar(0.0);
            if (gc < p.n && gk < p.k) {
                v = b[b_base + select(gk * p.n + gc, gc * p.k + gk, tb)];
            }
            tile_b[kk * (bn / 4u) + j / 4u][j % 4u] = v;
        }
        workgroupBarrier();

        for (var kk = 0u; kk < BK; kk++) {
            let ai = kk * (bm / 4u) + lid.y * 2u;
            let bi = kk * (bn / 4u) + lid.x * 2u;
            let a0 = tile_a[ai];
            let a1 = tile_a[ai + 1u];
            let b0 = tile_b[bi];
            let b1 = tile_b[bi + 1u];
            acc[0] = fma(vec4<scalar>(a0.x), b0, acc[0]);
            acc[1] = fma(vec4<scalar>(a0.x), b1, acc[1]);
            acc[2] = fma(vec4<scalar>(a0.y), b0, acc[2]);
            acc[3] = fma(vec4<scalar>(a0.y), b1, acc[3]);
            acc[4] = fma(vec4<scalar>(a0.z), b0, acc[4]);
            acc[5] = fma(vec4<scalar>(a0.z), b1, acc[5]);
            acc[6] = fma(vec4<scalar>(a0.w), b0, acc[6]);
            acc[7] = fma(vec4<scalar>(a0.w), b1, acc[7]);
            acc[8] = fma(vec4<scalar>(a1.x), b0, acc[8]);
            acc[9] = fma(vec4<scalar>(a1.x), b1, acc[9]);
            acc[10] = fma(vec4<scalar>(a1.y), b0, acc[10]);
            acc[11] = fma(vec4<scalar>(a1.y), b1, acc[11]);
            acc[12] = fma(vec4<scalar>(a1.z), b0, acc[12]);
            acc[13] = fma(vec4<scalar>(a1.z), b1, acc[13]);
            acc[14] = fma(vec4<scalar>(a1.w), b0, acc[14]);
            acc[15] = fma(vec4<scalar>(a1.w), b1, acc[15]);
        }
        workgroupBarrier();
    }

    let alpha = scalar(p.alpha);
    let c_base = wid.z * p.batch_stride_c;
    for (var i = 0u; i < TM; i++) {
        let row = row0 + lid.y * TM + i;
        if (row >= p.m) {
            break;
        }
        for (var j = 0u; j < TN; j++) {
            let col = col0 + lid.x * TN + j;
            if (col < p.n) {
                c[c_base + row * p.n + col] = alpha * acc[2u * i + j / 4u][j % 4u];
            }
        }
    }
}
