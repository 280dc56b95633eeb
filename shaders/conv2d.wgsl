// conv2d.wgsl: 2-D convolution forward, NCHW, as PyTorch's
// F.conv2d(x, w, bias, stride, padding) with dilation 1 and groups 1:
//   y[n][co][oy][ox] = bias[co] + sum over ci, ky, kx of
//       x[n][ci][oy * stride + ky - pad][ox * stride + kx - pad] * w[co][ci][ky][kx]
// (out-of-image input positions count as zero). Direct convolution, one
// invocation per output element.
//
// Bindings:
//   group 0, binding 0: uniform   ConvParams                        read
//   group 0, binding 1: storage   array<scalar> (x, n*c_in*h*w)     read
//   group 0, binding 2: storage   array<scalar> (w, c_out*c_in*kh*kw) read
//   group 0, binding 3: storage   array<scalar> (bias, c_out)       read
//   group 0, binding 4: storage   array<scalar> (y, n*c_out*oh*ow)  read_write
//
// Workgroup size: (WORKGROUP_SIZE, 1, 1), an `override` constant set by the
// host (crates/vramfit-bench/src/kernels/conv2d.rs).
//
// Dispatch: dispatch_1d(total, WORKGROUP_SIZE): output index
// (wid.y * num_workgroups.x + wid.x) * WORKGROUP_SIZE + lid.x; indices past
// `total` return early.
//
// Precision: products are accumulated in `scalar`.

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
@group(0) @binding(1) var<storage, read> x: array<scalar>;
@group(0) @binding(2) var<storage, read> w: array<scalar>;
@group(0) @binding(3) var<storage, read> bias: array<scalar>;
@group(0) @binding(4) var<storage, read_write> y: array<scalar>;

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
    let ox = index % p.ow;
    let oy = (index / p.ow) % p.oh;
    let co = (index / (p.ow * p.oh)) % p.c_out;
    let n = index / (p.ow * p.oh * p.c_out);
    // Signed, because the padded window starts left of and above the image.
    let iy0 = i32(oy * p.stride) - i32(p.pad);
    let ix0 = i32(ox * p.stride) - i32(p.pad);

    var acc = bias[co];
    for (var ci = 0u; ci < p.c_in; ci++) {
        let x_plane = (n * p.c_in + ci) * p.h * p.w;
        let w_plane = (co * p.c_in + ci) * p.kh * p.kw;
        for (var ky = 0u; ky < p.kh; ky++) {
            let iy = iy0 + i32(ky);
            if (iy < 0 || iy >= i32(p.h)) {
                continue;
            }
            for (var kx = 0u; kx < p.kw; kx++) {
                let ix = ix0 + i32(kx);
                if (ix < 0 || ix >= i32(p.w)) {
                    continue;
                }
                acc = fma(x[x_plane + u32(iy) * p.w + u32(ix)], w[w_plane + ky * p.kw + kx], acc);
            }
        }
    }
    y[index] = acc;
}
