//! Reference for the matmul kernels.

use super::expected::{Expected, dot_tolerance, rounded};
use crate::dtype::DType;
use crate::kernels::MatmulShape;

/// `C = alpha * op(A) * op(B)` for every matrix of the batch, with the
/// inputs rounded to `dtype`, in `f64`; tolerance [`dot_tolerance`] over the
/// `k` products (the GPU accumulates in `dtype`). `a` and `b` must hold
/// `shape.a_len()` and `shape.b_len()` elements; missing ones count as 0.
pub fn matmul(shape: &MatmulShape, a: &[f32], b: &[f32], dtype: DType) -> Expected {
    let (a, b) = (rounded(a, dtype), rounded(b, dtype));
    let MatmulShape {
        batch,
        m,
        n,
        k,
        trans_a,
        trans_b,
        alpha,
    } = *shape;
    let mut out = Expected::with_capacity(shape.c_len());
    for z in 0..batch {
        let a_at = |i: usize, p: usize| {
            let index = z * m * k + if trans_a { p * m + i } else { i * k + p };
            a.get(index).copied().unwrap_or(0.0)
        };
        let b_at = |p: usize, j: usize| {
            let index = z * k * n + if trans_b { j * k + p } else { p * n + j };
            b.get(index).copied().unwrap_or(0.0)
        };
        for i in 0..m {
            for j in 0..n {
                let (mut sum, mut squares) = (0.0, 0.0);
                for p in 0..k {
                    let term = a_at(i, p) * b_at(p, j);
                    sum += term;
                    squares += term * term;
                }
                let alpha = f64::from(alpha);
                out.push(
                    alpha * sum,
                    alpha.abs() * dot_tolerance(dtype, sum, squares.sqrt(), k),
                );
            }
        }
    }
    out
}
