//! Reference for the conv2d kernel.

use super::expected::{Expected, dot_tolerance, rounded};
use crate::dtype::DType;
use crate::kernels::Conv2dShape;

/// PyTorch's `F.conv2d(x, w, bias, stride, padding)` (NCHW, dilation 1,
/// groups 1) with the inputs rounded to `dtype`, in `f64`; tolerance
/// [`dot_tolerance`] over the `c_in * kh * kw` products plus the bias.
pub fn conv2d(shape: &Conv2dShape, x: &[f32], w: &[f32], bias: &[f32], dtype: DType) -> Expected {
    let (x, w, bias) = (rounded(x, dtype), rounded(w, dtype), rounded(bias, dtype));
    let s = *shape;
    let (oh, ow) = (s.oh(), s.ow());
    let mut out = Expected::with_capacity(s.y_len());
    for n in 0..s.n {
        for co in 0..s.c_out {
            for oy in 0..oh {
                for ox in 0..ow {
                    let b = bias.get(co).copied().unwrap_or(0.0);
                    let (mut sum, mut squares) = (b, b * b);
                    for ci in 0..s.c_in {
                        for ky in 0..s.kh {
                            for kx in 0..s.kw {
                                let (iy, ix) = (
                                    (oy * s.stride + ky).checked_sub(s.pad),
                                    (ox * s.stride + kx).checked_sub(s.pad),
                                );
                                let (Some(iy), Some(ix)) = (iy, ix) else {
                                    continue;
                                };
                                if iy >= s.h || ix >= s.w {
                                    continue;
                                }
                                let xv = x
                                    .get(((n * s.c_in + ci) * s.h + iy) * s.w + ix)
                                    .copied()
                                    .unwrap_or(0.0);
                                let wv = w
                                    .get(((co * s.c_in + ci) * s.kh + ky) * s.kw + kx)
                                    .copied()
                                    .unwrap_or(0.0);
                                sum += xv * wv;
                                squares += (xv * wv).powi(2);
                            }
                        }
                    }
                    out.push(
                        sum,
                        dot_tolerance(dtype, sum, squares.sqrt(), s.c_in * s.kh * s.kw + 1),
                    );
                }
            }
        }
    }
    out
}
