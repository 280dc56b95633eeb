// conv2d_backward_data.wgsl: the input gradient of conv2d.wgsl (NCHW,
// dilation 1, groups 1), as PyTorch's convolution_backward for grad_input:
//   dx[n][ci][iy][ix] = sum over co, ky, kx with oy * stride + ky - pad = iy
//       and ox * stride + kx - pad = ix (inside the output) of
//       dy[n][co][oy][ox] * w[co][ci][ky][kx].
// Direct (transposed) convolution, one invocation per input element.
//
// Bindings:
//   group 0, binding 0: uniform   ConvParams                          read
//   group 0, binding 1: storage   array<scalar> (dy, n*c_out*oh*ow)    read
//   group 0, binding 2: storage   array<scalar> (w, c_out*c_in*kh*kw)  read
//   group 0, binding 3: storage   array<scalar> (dx, n*c_in*h*w)       read_write
//
// Workgroup size: (WORKGROUP_SIZE, 1, 1), an `override` constant set by the
// host (crates/vramfit-bench/src/kernels/conv2d_backward.rs).
//
// Dispatch: dispatch_1d(total, WORKGROUP_SIZE) with total = n*c_in*h*w;
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
@group(0) @binding(2) var<storage, read> w: array<scalar>;
@group(0) @binding(3) var<storage, read_write> dx: array<scalar>;

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
    let ix = index % p.w;
    let iy = (index / p.w) % p.h;
    let ci = (index / (p.w * p.h)) % p.c_in;
    let n = index / (p.w * p.h * p.c_in);

    var acc = scalar(0.0);
    for (var ky = 0u; ky < p.kh; ky++) {
        // oy * stride = iy + pad - ky must be a non-negative multiple of stride.
        let ty = i32(iy + p.pad) - i32(ky);
        if (ty < 0 || ty % i32(p.stride) != 0) {
            continue;
        }
        let oy = u32(ty) / p.stride;
        if (oy >= p.oh) {
            continue;
        }
        for (var kx = 0u; kx < p.kw; kx++) {
            let tx = i32(ix + p.pad) - i32(kx);
            if (tx < 0 || tx % i32(p.stride) != 0) {
                continue;
            }
            let ox = u32(tx) / p.stride;
            if (ox >= p.ow) {
                continue;
            }
            for (var co = 0u; co < p.c_out; co++) {
                let g = dy[((n * p.c_out + co) * p.oh + oy) * p.ow + ox];
                acc = fma(g, w[((co * p.c_in + ci) * p.kh + ky) * p.kw + kx], acc);
            }
        }
    }
    dx[index] = acc;
}
