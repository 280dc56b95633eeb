//! References for the row-wise and element-wise kernels: layernorm,
//! softmax and GELU. Their kernels compute in `f32` whatever the storage
//! type, so the tolerances have a storage part (`u` of the dtype, for the
//! rounding of the output) and an `f32` part for the arithmetic.

use super::expected::{Expected, flush_floor, rounded};
use crate::dtype::DType;
use crate::kernels::{LayerNormShape, SoftmaxShape};

/// The unit roundoff of `f32`, in `f64`.
const U32: f64 = f32::EPSILON as f64 / 2.0;

/// PyTorch's `F.layer_norm` over rows of `shape.cols` (biased variance),
/// with inputs rounded to `dtype`; returns `(y, mean, rstd)`.
///
/// Tolerances: the `f32` sums for the mean and variance err by about
/// `u32 * sqrt(cols)` relative (random-walk, as in
/// [`dot_tolerance`](super::dot_tolerance)), which reaches `y` through the
/// normalised value; we allow 32 times that, plus `2u|y|` for the output
/// rounding to `dtype`.
pub fn layernorm(
    shape: &LayerNormShape,
    x: &[f32],
    gamma: &[f32],
    beta: &[f32],
    dtype: DType,
) -> (Expected, Expected, Expected) {
    let (x, gamma, beta) = (
        rounded(x, dtype),
        rounded(gamma, dtype),
        rounded(beta, dtype),
    );
    let (rows, cols) = (shape.rows, shape.cols);
    let u = f64::from(dtype.unit_roundoff());
    let sum_error = 32.0 * U32 * (cols.max(1) as f64).sqrt();
    let (mut y, mut means, mut rstds) = (
        Expected::with_capacity(rows * cols),
        Expected::with_capacity(rows),
        Expected::with_capacity(rows),
    );
    for row in x.chunks(cols.max(1)).take(rows) {
        let mean = row.iter().sum::<f64>() / cols as f64;
        let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / cols as f64;
        let rstd = 1.0 / (var + f64::from(shape.eps)).sqrt();
        let rms = (row.iter().map(|v| v * v).sum::<f64>() / cols as f64).sqrt();
        means.push(mean, sum_error * rms + flush_floor(DType::F32));
        rstds.push(rstd, rstd * (sum_error + 4.0 * U32));
        for (j, v) in row.iter().enumerate() {
            let (g, b) = (
                gamma.get(j).copied().unwrap_or(0.0),
                beta.get(j).copied().unwrap_or(0.0),
            );
            let normalized = (v - mean) * rstd;
            let value = normalized * g + b;
            let arithmetic = sum_error * (g.abs() * (normalized.abs() + 1.0) + b.abs());
            y.push(
                value,
                2.0 * u * value.abs() + arithmetic + flush_floor(dtype),
            );
        }
    }
    (y, means, rstds)
}

/// `torch.softmax(x, dim=-1)` over rows of `shape.cols`, with the causal
/// mask of [`SoftmaxShape::causal_period`] (masked entries are exactly 0),
/// inputs rounded to `dtype`.
///
/// Tolerance: WGSL's `exp` may err by `3 + 2|x|` ulp for argument `x`
/// (WGSL spec, "Floating point accuracy"), and the `f32` sum by about
/// `u32 * sqrt(cols)` relative; we allow 8 times both, relative to the
/// value, plus `2u|y|` for the output rounding.
pub fn softmax(shape: &SoftmaxShape, x: &[f32], dtype: DType) -> Expected {
    let x = rounded(x, dtype);
    let (rows, cols) = (shape.rows, shape.cols);
    let u = f64::from(dtype.unit_roundoff());
    let mut out = Expected::with_capacity(rows * cols);
    for (r, row) in x.chunks(cols.max(1)).take(rows).enumerate() {
        let live = shape
            .causal_period
            .map_or(cols, |period| (r % period + 1).min(cols));
        let max = row
            .iter()
            .take(live)
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = row.iter().take(live).map(|v| (v - max).exp()).sum();
        for (j, v) in row.iter().enumerate() {
            if j >= live {
                out.push(0.0, 0.0);
                continue;
            }
            let value = (v - max).exp() / sum;
            let exp_ulps = 3.0 + 2.0 * (v - max).abs();
            let relative = 8.0 * U32 * (2.0 * exp_ulps + (cols as f64).sqrt()) + 2.0 * u;
            out.push(value, value * relative + flush_floor(dtype));
        }
    }
    out
}

/// PyTorch's `F.gelu(x, approximate='tanh')`, inputs rounded to `dtype`.
///
/// Tolerance: `2u|y|` for the output rounding, plus `16 u32 (|x| + 1)`
/// for the `f32` arithmetic, whose largest part is `tanh`'s absolute error
/// (WGSL inherits it from `sinh / cosh`, a few ulp of 1) times `x / 2`.
pub fn gelu(x: &[f32], dtype: DType) -> Expected {
    let u = f64::from(dtype.unit_roundoff());
    let sqrt_2_over_pi = (2.0 / std::f64::consts::PI).sqrt();
    let mut out = Expected::with_capacity(x.len());
    for v in rounded(x, dtype) {
        let value = 0.5 * v * (1.0 + (sqrt_2_over_pi * (v + 0.044_715 * v.powi(3))).tanh());
        out.push(
            value,
            2.0 * u * value.abs() + 16.0 * U32 * (v.abs() + 1.0) + flush_floor(dtype),
        );
    }
    out
}
