// conv2d_backward_filter.wgsl: the weight gradient of conv2d.wgsl (NCHW,
// dilation 1, groups 1), as PyTorch's convolution_backward for grad_weight:
//   dw[co][ci][ky][kx] = sum over n, oy, ox of dy[n][co][oy][ox] *
//       x[n][ci][oy * stride + ky - pad][ox * stride + kx - pad]
// (out-of-image positions count as zero). One invocation per weight.
//
// Bindings:
//   group 0, binding 0: uniform   ConvParams                          read
//   group 0, binding 1: storage   array<scalar> (dy, n*c_out*oh*ow)    read
//   group 0, binding 2: storage   array<scalar> (x, n*c_in*h*w)        read
//   group 0, binding 3: storage   array<scalar> (dw, c_out*c_in*kh*kw) read_write
//
// Workgroup size: (WORKGROUP_SIZE, 1, 1), an `override` constant set by the
// host (crates/vramfit-bench/src/kernels/conv2d_backward.rs).
//
// Dispatch: dispatch_1d(total, WORKGROUP_SIZE) with total = c_out*c_in*kh*kw;
// indices past `total` return early.
//
// Precision: products are accumulated in `scalar`, as in conv2d.wgsl.

alias scalar = f32;

override WORKGROUP_SIZE: u32;

struct ConvParams {
    n: u32,
    c_in: u32,
    h: u32,
    w: u32,
    c_out: u32,
    kh: u32,
    kw: u32,
    stride: u32,
    pad: u32,
    oh: u32,
    ow: u32,
    total: u32,
}

@group(0) @binding(0) var<uniform> p: ConvParams;
@group(0) @binding(1) var<storage, read> dy: array<scalar>;
@group(0) @binding(2) var<storage, read> x: array<scalar>;
@group(0) @binding(3) var<storage, read_write> dw: array<scalar>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let index = (wid.y * groups.x + wid.x) * WORKGROUP_SIZE + lid.x;
    if (index >= p.total) {
        return;
    }
    let kx = index % p.kw;
    let ky = (index / p.kw) % p.kh;
    let ci = (index / (p.kw * p.kh)) % p.c_in;
    let co = index / (p.kw * p.kh * p.c_in);

    var acc = scalar(0.0);
    for (var n = 0u; n < p.n; n++) {
        let x_plane = (n * p.c_in + ci) * p.h * p.w;
        let dy_plane = (n * p.c_out + co) * p.oh * p.ow;
        for (var oy = 0u; oy < p.oh; oy++) {
            let iy = i32(oy * p.stride + ky) - i32(p.pad);
            if (iy < 0 || iy >= i32(p.h)) {
                continue;
            }
            for (var ox = 0u; ox < p.ow; ox++) {
                let ix = i32(ox * p.stride + kx) - i32(p.pad);
                if (ix < 0 || ix >= i32(p.w)) {
                    continue;
                }
                acc = fma(dy[dy_plane + oy * p.ow + ox], x[x_plane + u32(iy) * p.w + u32(ix)], acc);
            }
        }
    }
    dw[index] = acc;
}
