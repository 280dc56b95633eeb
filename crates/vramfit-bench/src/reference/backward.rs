//! References for the kernels the layers added: `add`, the head copies,
//! the backward kernels (GELU, softmax, layernorm, convolution) and batch
//! norm forward and backward. Apart from the convolutions (which accumulate
//! in the storage type, like conv2d), these kernels compute in `f32`, so the
//! tolerances have a storage part, `2u|value|` for rounding the output to
//! `dtype`, and an `f32` part stated on each function.

use super::expected::{Expected, dot_tolerance, flush_floor, rounded};
use crate::dtype::DType;
use crate::kernels::{BatchNormShape, Conv2dShape, HeadsShape, LayerNormShape};

/// The unit roundoff of `f32`, in `f64`.
const U32: f64 = f32::EPSILON as f64 / 2.0;

/// The value of `data` at `index`, 0 when out of range.
fn at(data: &[f64], index: usize) -> f64 {
    data.get(index).copied().unwrap_or(0.0)
}

/// The tolerance of an `f32` sum of `terms` terms of Euclidean norm `l2`,
/// stored in `dtype`: the random-walk bound of
/// [`dot_tolerance`](super::dot_tolerance) with `f32`'s roundoff.
fn f32_sum_tolerance(dtype: DType, value: f64, l2: f64, terms: usize) -> f64 {
    2.0 * f64::from(dtype.unit_roundoff()) * value.abs()
        + 8.0 * U32 * (terms.max(1) as f64).sqrt() * l2
        + flush_floor(dtype)
}

/// `a + b`, inputs rounded to `dtype`; tolerance `2u|y|` plus one `f32`
/// rounding of the sum.
pub fn add(a: &[f32], b: &[f32], dtype: DType) -> Expected {
    let (a, b) = (rounded(a, dtype), rounded(b, dtype));
    let u = f64::from(dtype.unit_roundoff());
    let mut out = Expected::with_capacity(a.len());
    for (i, x) in a.iter().enumerate() {
        let (y, sum_abs) = (x + at(&b, i), x.abs() + at(&b, i).abs());
        out.push(
            y,
            2.0 * u * y.abs() + 2.0 * U32 * sum_abs + flush_floor(dtype),
        );
    }
    out
}

/// Part `part` of `fused` in the split layout of [`HeadsShape`] (the
/// `split_heads` copy); exact.
pub fn split_heads(shape: &HeadsShape, part: usize, fused: &[f32], dtype: DType) -> Expected {
    let fused = rounded(fused, dtype);
    let HeadsShape {
        batch,
        seq,
        heads,
        head_dim: d,
        parts,
    } = *shape;
    let mut out = Expected::with_capacity(shape.split_len());
    for b in 0..batch {
        for h in 0..heads {
            for s in 0..seq {
                for e in 0..d {
                    out.push(
                        at(
                            &fused,
                            ((b * seq + s) * parts + part) * heads * d + h * d + e,
                        ),
                        0.0,
                    );
                }
            }
        }
    }
    out
}

/// The inverse of [`split_heads`] for `parts` split tensors, in order
/// (`merge_heads`, or the qkv gradient from dq, dk and dv); exact.
pub fn merge_heads(shape: &HeadsShape, split: &[&[f32]], dtype: DType) -> Expected {
    let HeadsShape {
        batch,
        seq,
        heads,
        head_dim: d,
        parts,
    } = *shape;
    let split: Vec<Vec<f64>> = split.iter().map(|s| rounded(s, dtype)).collect();
    let mut out = Expected::with_capacity(shape.fused_len());
    for b in 0..batch {
        for s in 0..seq {
            for part in 0..parts {
                for h in 0..heads {
                    for e in 0..d {
                        let value = split
                            .get(part)
                            .map_or(0.0, |t| at(t, ((b * heads + h) * seq + s) * d + e));
                        out.push(value, 0.0);
                    }
                }
            }
        }
    }
    out
}

/// The gradient of GELU (tanh) at `x` times `dy`, inputs rounded to
/// `dtype`. Tolerance: `2u|dx|`, plus `64 u32 (1 + x^2) |dy|` for the `f32`
/// slope, whose largest error is `tanh`'s (a few ulp of 1) amplified by
/// `x (1 + 3c x^2)` where `1 - t^2` cancels.
pub fn gelu_backward(x: &[f32], dy: &[f32], dtype: DType) -> Expected {
    let (x, dy) = (rounded(x, dtype), rounded(dy, dtype));
    let u = f64::from(dtype.unit_roundoff());
    let (k, c) = ((2.0 / std::f64::consts::PI).sqrt(), 0.044_715);
    let mut out = Expected::with_capacity(x.len());
    for (i, &v) in x.iter().enumerate() {
        let t = (k * (v + c * v.powi(3))).tanh();
        let slope = 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * k * (1.0 + 3.0 * c * v * v);
        let g = at(&dy, i);
        let value = g * slope;
        out.push(
            value,
            2.0 * u * value.abs() + 64.0 * U32 * (1.0 + v * v) * g.abs() + flush_floor(dtype),
        );
    }
    out
}

/// Softmax's input gradient `y (dy - sum(dy y))` per row of `cols`, inputs
/// rounded to `dtype`. Tolerance: `2u|dx|` plus `|y|` times the `f32`
/// error of `dy - s` (the sum `s` as in [`f32_sum_tolerance`], plus `|dy|`
/// and `|s|` rounding).
pub fn softmax_backward(rows: usize, cols: usize, y: &[f32], dy: &[f32], dtype: DType) -> Expected {
    let (y, dy) = (rounded(y, dtype), rounded(dy, dtype));
    let u = f64::from(dtype.unit_roundoff());
    let mut out = Expected::with_capacity(rows * cols);
    for r in 0..rows {
        let base = r * cols;
        let (mut s, mut squares) = (0.0, 0.0);
        for j in 0..cols {
            let term = at(&dy, base + j) * at(&y, base + j);
            s += term;
            squares += term * term;
        }
        let sum_error = 8.0 * U32 * (cols.max(1) as f64).sqrt() * squares.sqrt();
        for j in 0..cols {
            let (yv, g) = (at(&y, base + j), at(&dy, base + j));
            let value = yv * (g - s);
            let error = yv.abs() * (sum_error + 4.0 * U32 * (g.abs() + s.abs()));
            out.push(value, 2.0 * u * value.abs() + error + flush_floor(dtype));
        }
    }
    out
}

/// Layer norm's gradients `(dx, dgamma, dbeta)` from `dy`, the saved `x`,
/// `gamma` and the `f32` statistics `mean` and `rstd` (taken as given),
/// inputs rounded to `dtype`.
///
/// Tolerances: `dx` is `rstd (g - mean(g) - xhat mean(g xhat))`; the `f32`
/// sums err by about `u32 sqrt(cols)` times the RMS of `g`, allowed 32
/// times, scaled by `rstd (|g| + rms(g) (1 + |xhat|))`. `dgamma` and
/// `dbeta` are `f32` column sums over the rows ([`f32_sum_tolerance`]).
pub fn layernorm_backward(
    shape: &LayerNormShape,
    dy: &[f32],
    x: &[f32],
    gamma: &[f32],
    mean: &[f32],
    rstd: &[f32],
    dtype: DType,
) -> (Expected, Expected, Expected) {
    let (dy, x, gamma) = (rounded(dy, dtype), rounded(x, dtype), rounded(gamma, dtype));
    let (rows, cols) = (shape.rows, shape.cols);
    let u = f64::from(dtype.unit_roundoff());
    let stat = |v: &[f32], r: usize| v.get(r).copied().map_or(0.0, f64::from);
    let mut dx = Expected::with_capacity(rows * cols);
    let mut column = vec![(0.0, 0.0, 0.0, 0.0); cols];
    for r in 0..rows {
        let (m, rs) = (stat(mean, r), stat(rstd, r));
        let xhat: Vec<f64> = (0..cols).map(|j| (at(&x, r * cols + j) - m) * rs).collect();
        let g: Vec<f64> = (0..cols)
            .map(|j| at(&dy, r * cols + j) * at(&gamma, j))
            .collect();
        let m1 = g.iter().sum::<f64>() / cols as f64;
        let m2 = g.iter().zip(&xhat).map(|(g, h)| g * h).sum::<f64>() / cols as f64;
        let rms = (g.iter().map(|v| v * v).sum::<f64>() / cols as f64).sqrt();
        for j in 0..cols {
            let (gj, hj) = (at(&g, j), at(&xhat, j));
            let value = rs * (gj - m1 - hj * m2);
            let scale = rs * (gj.abs() + rms * (1.0 + hj.abs()));
            dx.push(
                value,
                2.0 * u * value.abs()
                    + 32.0 * U32 * (cols as f64).sqrt() * scale
                    + flush_floor(dtype),
            );
            if let Some(c) = column.get_mut(j) {
                let d = at(&dy, r * cols + j);
                *c = (c.0 + d * hj, c.1 + (d * hj).powi(2), c.2 + d, c.3 + d * d);
            }
        }
    }
    let (mut dgamma, mut dbeta) = (Expected::with_capacity(cols), Expected::with_capacity(cols));
    for (g, g2, b, b2) in column {
        dgamma.push(g, f32_sum_tolerance(dtype, g, g2.sqrt(), rows));
        dbeta.push(b, f32_sum_tolerance(dtype, b, b2.sqrt(), rows));
    }
    (dx, dgamma, dbeta)
}

/// The flat NCHW index of element `k` (`k < n * hw`) of channel `ch`.
fn channel_index(shape: &BatchNormShape, ch: usize, k: usize) -> usize {
    ((k / shape.hw.max(1)) * shape.channels + ch) * shape.hw + k % shape.hw.max(1)
}

/// Training-mode batch norm (biased variance) with the optional residual
/// and ReLU of [`BatchNormShape`], inputs rounded to `dtype`; returns
/// `(y, mean, rstd)`. Tolerances as [`layernorm`](super::layernorm)'s, with
/// the statistics over `n * hw` values and `|residual|` added to the scale.
pub fn batchnorm(
    shape: &BatchNormShape,
    x: &[f32],
    gamma: &[f32],
    beta: &[f32],
    residual: Option<&[f32]>,
    dtype: DType,
) -> (Expected, Expected, Expected) {
    let (x, gamma, beta) = (
        rounded(x, dtype),
        rounded(gamma, dtype),
        rounded(beta, dtype),
    );
    let residual = residual.map(|r| rounded(r, dtype));
    let count = shape.n * shape.hw;
    let u = f64::from(dtype.unit_roundoff());
    let sum_error = 32.0 * U32 * (count.max(1) as f64).sqrt();
    let mut values = vec![(0.0, 0.0); shape.len()];
    let (mut means, mut rstds) = (
        Expected::with_capacity(shape.channels),
        Expected::with_capacity(shape.channels),
    );
    for ch in 0..shape.channels {
        let xs: Vec<f64> = (0..count)
            .map(|k| at(&x, channel_index(shape, ch, k)))
            .collect();
        let mean = xs.iter().sum::<f64>() / count as f64;
        let var = xs.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / count as f64;
        let rstd = 1.0 / (var + f64::from(shape.eps)).sqrt();
        let rms = (xs.iter().map(|v| v * v).sum::<f64>() / count as f64).sqrt();
        means.push(mean, sum_error * rms + flush_floor(DType::F32));
        rstds.push(rstd, rstd * (sum_error + 4.0 * U32));
        let (g, b) = (at(&gamma, ch), at(&beta, ch));
        for (k, v) in xs.iter().enumerate() {
            let i = channel_index(shape, ch, k);
            let res = residual.as_ref().map_or(0.0, |r| at(r, i));
            let normalized = (v - mean) * rstd;
            let mut value = normalized * g + b + res;
            if shape.relu {
                value = value.max(0.0);
            }
            let error = sum_error * (g.abs() * (normalized.abs() + 1.0) + b.abs() + res.abs());
            if let Some(slot) = values.get_mut(i) {
                *slot = (value, 2.0 * u * value.abs() + error + flush_floor(dtype));
            }
        }
    }
    let mut y = Expected::with_capacity(shape.len());
    for (value, tolerance) in values {
        y.push(value, tolerance);
    }
    (y, means, rstds)
}

/// Batch norm's backward from `dy`, the saved `x`, `y` (for the ReLU mask),
/// `gamma` and the statistics (taken as given), inputs rounded to `dtype`;
/// returns `(dx, dgamma, dbeta, dz)`. Tolerances as
/// [`layernorm_backward`]'s, over the `n * hw` values of a channel; `dz`
/// is exact.
#[allow(clippy::too_many_arguments, reason = "one argument per saved tensor")]
pub fn batchnorm_backward(
    shape: &BatchNormShape,
    dy: &[f32],
    x: &[f32],
    y: &[f32],
    gamma: &[f32],
    mean: &[f32],
    rstd: &[f32],
    dtype: DType,
) -> (Expected, Expected, Expected, Expected) {
    let (dy, x, y, gamma) = (
        rounded(dy, dtype),
        rounded(x, dtype),
        rounded(y, dtype),
        rounded(gamma, dtype),
    );
    let count = shape.n * shape.hw;
    let u = f64::from(dtype.unit_roundoff());
    let stat = |v: &[f32], c: usize| v.get(c).copied().map_or(0.0, f64::from);
    let mut dx_values = vec![(0.0, 0.0); shape.len()];
    let mut dz_values = vec![0.0; shape.len()];
    let (mut dgamma, mut dbeta) = (
        Expected::with_capacity(shape.channels),
        Expected::with_capacity(shape.channels),
    );
    for ch in 0..shape.channels {
        let (m, rs, g) = (stat(mean, ch), stat(rstd, ch), at(&gamma, ch));
        let index: Vec<usize> = (0..count).map(|k| channel_index(shape, ch, k)).collect();
        let dz: Vec<f64> = index
            .iter()
            .map(|&i| {
                if shape.relu && at(&y, i) <= 0.0 {
                    0.0
                } else {
                    at(&dy, i)
                }
            })
            .collect();
        let xhat: Vec<f64> = index.iter().map(|&i| (at(&x, i) - m) * rs).collect();
        let s1: f64 = dz.iter().sum();
        let s2: f64 = dz.iter().zip(&xhat).map(|(d, h)| d * h).sum();
        let rms = (dz.iter().map(|d| d * d).sum::<f64>() / count.max(1) as f64).sqrt();
        let l2_terms = (dz
            .iter()
            .zip(&xhat)
            .map(|(d, h)| (d * h).powi(2))
            .sum::<f64>())
        .sqrt();
        dgamma.push(s2, f32_sum_tolerance(dtype, s2, l2_terms, count));
        dbeta.push(
            s1,
            f32_sum_tolerance(dtype, s1, rms * (count as f64).sqrt(), count),
        );
        for (k, &i) in index.iter().enumerate() {
            let (d, h) = (at(&dz, k), at(&xhat, k));
            let value = g * rs * (d - s1 / count as f64 - h * s2 / count as f64);
            let scale = g.abs() * rs * (d.abs() + rms * (1.0 + h.abs()));
            if let (Some(slot), Some(z)) = (dx_values.get_mut(i), dz_values.get_mut(i)) {
                *slot = (
                    value,
                    2.0 * u * value.abs()
                        + 32.0 * U32 * (count as f64).sqrt() * scale
                        + flush_floor(dtype),
                );
                *z = d;
            }
        }
    }
    let (mut dx, mut dz) = (
        Expected::with_capacity(shape.len()),
        Expected::with_capacity(shape.len()),
    );
    for ((value, tolerance), z) in dx_values.into_iter().zip(dz_values) {
        dx.push(value, tolerance);
        dz.push(z, 0.0);
    }
    (dx, dgamma, dbeta, dz)
}

/// The input gradient of a convolution, `dx`, from `dy` and `w`, inputs
/// rounded to `dtype`; tolerance [`dot_tolerance`] over the contributing
/// products (the kernel accumulates in `dtype`).
pub fn conv2d_backward_data(shape: &Conv2dShape, dy: &[f32], w: &[f32], dtype: DType) -> Expected {
    let (dy, w) = (rounded(dy, dtype), rounded(w, dtype));
    let s = *shape;
    let mut sums = vec![(0.0, 0.0, 0_usize); s.x_len()];
    for_each_tap(&s, |n, co, ci, oy, ox, ky, kx, iy, ix| {
        let term = at(&dy, ((n * s.c_out + co) * s.oh() + oy) * s.ow() + ox)
            * at(&w, ((co * s.c_in + ci) * s.kh + ky) * s.kw + kx);
        if let Some(slot) = sums.get_mut(((n * s.c_in + ci) * s.h + iy) * s.w + ix) {
            *slot = (slot.0 + term, slot.1 + term * term, slot.2 + 1);
        }
    });
    collect(sums, dtype)
}

/// The weight gradient of a convolution, `dw`, from `dy` and the saved
/// input `x`, inputs rounded to `dtype`; tolerance as
/// [`conv2d_backward_data`].
pub fn conv2d_backward_filter(
    shape: &Conv2dShape,
    dy: &[f32],
    x: &[f32],
    dtype: DType,
) -> Expected {
    let (dy, x) = (rounded(dy, dtype), rounded(x, dtype));
    let s = *shape;
    let mut sums = vec![(0.0, 0.0, 0_usize); s.w_len()];
    for_each_tap(&s, |n, co, ci, oy, ox, ky, kx, iy, ix| {
        let term = at(&dy, ((n * s.c_out + co) * s.oh() + oy) * s.ow() + ox)
            * at(&x, ((n * s.c_in + ci) * s.h + iy) * s.w + ix);
        if let Some(slot) = sums.get_mut(((co * s.c_in + ci) * s.kh + ky) * s.kw + kx) {
            *slot = (slot.0 + term, slot.1 + term * term, slot.2 + 1);
        }
    });
    collect(sums, dtype)
}

/// Calls `f(n, co, ci, oy, ox, ky, kx, iy, ix)` for every product of the
/// convolution whose input position lies inside the image.
fn for_each_tap(
    s: &Conv2dShape,
    mut f: impl FnMut(usize, usize, usize, usize, usize, usize, usize, usize, usize),
) {
    for n in 0..s.n {
        for co in 0..s.c_out {
            for oy in 0..s.oh() {
                for ox in 0..s.ow() {
                    for ci in 0..s.c_in {
                        for ky in 0..s.kh {
                            for kx in 0..s.kw {
                                let (Some(iy), Some(ix)) = (
                                    (oy * s.stride + ky).checked_sub(s.pad),
                                    (ox * s.stride + kx).checked_sub(s.pad),
                                ) else {
                                    continue;
                                };
                                if iy < s.h && ix < s.w {
                                    f(n, co, ci, oy, ox, ky, kx, iy, ix);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Sums `(value, sum of squared terms, terms)` into an [`Expected`].
fn collect(sums: Vec<(f64, f64, usize)>, dtype: DType) -> Expected {
    let mut out = Expected::with_capacity(sums.len());
    for (sum, squares, terms) in sums {
        out.push(sum, dot_tolerance(dtype, sum, squares.sqrt(), terms));
    }
    out
}
