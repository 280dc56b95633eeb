//! Reference for both attention variants.

use super::expected::{Expected, flush_floor, rounded};
use crate::dtype::DType;
use crate::kernels::AttentionShape;

/// `softmax(scale * Q K^T, causal mask) V` per head, inputs rounded to
/// `dtype`, in `f64`.
///
/// Tolerance, for an output `o = sum_j p_j v_j`: the context product is a
/// dot product of `seq_kv` terms (`8u sqrt(seq_kv) |p v|_2`, as in
/// [`dot_tolerance`](super::dot_tolerance)); the scores and probabilities
/// may be stored in `dtype` (materialised variant), an error of `u(1 + |s|)`
/// relative in each `p_j`, which moves `o` by up to that times
/// `sum_j p_j |v_j|`, allowed 8 times; `2u|o|` for the output rounding; the
/// `exp` error in `f32` as in [`softmax`](super::softmax).
pub fn attention(
    shape: &AttentionShape,
    q: &[f32],
    k: &[f32],
    v: &[f32],
    dtype: DType,
) -> Expected {
    let (q, k, v) = (rounded(q, dtype), rounded(k, dtype), rounded(v, dtype));
    let AttentionShape {
        batch,
        seq_q,
        seq_kv,
        head_dim: d,
        causal,
    } = *shape;
    let u = f64::from(dtype.unit_roundoff());
    let scale = f64::from(shape.scale());
    let at = |data: &[f64], index: usize| data.get(index).copied().unwrap_or(0.0);
    let mut out = Expected::with_capacity(shape.q_len());
    for z in 0..batch {
        for i in 0..seq_q {
            let live = if causal { (i + 1).min(seq_kv) } else { seq_kv };
            let scores: Vec<f64> = (0..live)
                .map(|j| {
                    (0..d)
                        .map(|c| at(&q, (z * seq_q + i) * d + c) * at(&k, (z * seq_kv + j) * d + c))
                        .sum::<f64>()
                        * scale
                })
                .collect();
            let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let max_abs = scores.iter().fold(0.0_f64, |acc, s| acc.max(s.abs()));
            let weights: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
            let sum: f64 = weights.iter().sum();
            let exp_relative = 8.0
                * f64::from(f32::EPSILON)
                * (3.0 + 2.0 * (max_abs * 2.0) + (live as f64).sqrt());
            for c in 0..d {
                let (mut o, mut squares, mut weighted_abs) = (0.0, 0.0, 0.0);
                for (j, w) in weights.iter().enumerate() {
                    let term = w / sum * at(&v, (z * seq_kv + j) * d + c);
                    o += term;
                    squares += term * term;
                    weighted_abs += term.abs();
                }
                let tolerance = u
                    * (2.0 * o.abs()
                        + 8.0 * (live as f64).sqrt() * squares.sqrt()
                        + 8.0 * (1.0 + max_abs) * weighted_abs)
                    + exp_relative * weighted_abs
                    + flush_floor(dtype);
                out.push(o, tolerance);
            }
        }
    }
    out
}
