//! Reference for the Adam kernel.

use super::expected::{Expected, flush_floor};
use crate::dtype::DType;
use crate::kernels::AdamConfig;

/// `torch.optim.AdamW` steps 1, 2, ... (one per gradient, gradients rounded
/// to `dtype`) from `param` and zero moments, in `f64`; returns
/// `(param, m, v)`.
///
/// Tolerance: every quantity is `f32` on the GPU; each step rounds a few
/// times relative to the magnitudes involved, so we allow `16 u32` per step
/// times those magnitudes (the parameter, the step size times the update
/// ratio `m_hat / denom`, the moments and their inputs).
pub fn adam(
    config: &AdamConfig,
    param: &[f32],
    grads: &[Vec<f32>],
    dtype: DType,
) -> (Expected, Expected, Expected) {
    let u = f64::from(f32::EPSILON) / 2.0;
    let steps = grads.len().max(1) as f64;
    let (b1, b2) = (f64::from(config.beta1), f64::from(config.beta2));
    let (lr, eps, wd) = (
        f64::from(config.lr),
        f64::from(config.eps),
        f64::from(config.weight_decay),
    );
    let (mut out_p, mut out_m, mut out_v) = (
        Expected::with_capacity(param.len()),
        Expected::with_capacity(param.len()),
        Expected::with_capacity(param.len()),
    );
    for (i, &p0) in param.iter().enumerate() {
        let (mut p, mut m, mut v) = (f64::from(p0), 0.0, 0.0);
        let (mut p_scale, mut m_scale, mut v_scale) = (p.abs(), 0.0_f64, 0.0_f64);
        for (t, grad) in (1..).zip(grads) {
            let g = f64::from(dtype.round(grad.get(i).copied().unwrap_or(0.0)));
            let (bias1, bias2) = (1.0 - b1.powi(t), 1.0 - b2.powi(t));
            m = b1 * m + (1.0 - b1) * g;
            v = b2 * v + (1.0 - b2) * g * g;
            let ratio = m / (v.sqrt() / bias2.sqrt() + eps);
            p = p * (1.0 - lr * wd) - lr / bias1 * ratio;
            p_scale = p_scale.max(p.abs()) + lr / bias1 * ratio.abs();
            m_scale = m_scale.max(m.abs().max(g.abs()));
            v_scale = v_scale.max(v.abs().max(g * g));
        }
        let per_step = 16.0 * u * steps;
        let floor = flush_floor(DType::F32);
        out_p.push(p, per_step * p_scale + floor);
        out_m.push(m, per_step * m_scale + floor);
        out_v.push(v, per_step * v_scale + floor);
    }
    (out_p, out_m, out_v)
}
