//! CPU reference implementations of the GPU kernels, and the tolerance each
//! GPU result is held to.
//!
//! These are deliberately the most obvious code possible: they define what
//! the kernels must compute. The neural-network references round their
//! inputs to the kernel's [`DType`](crate::DType) first (the GPU sees those
//! values), compute in `f64`, and return an [`Expected`]: the values and a
//! per-element tolerance whose derivation is documented on each function.

use crate::error::{BenchError, Result};

mod adam;
mod attention;
mod backward;
mod conv2d;
mod expected;
mod matmul;
mod rows;

pub use adam::adam;
pub use attention::attention;
pub use backward::{
    add, batchnorm, batchnorm_backward, conv2d_backward_data, conv2d_backward_filter,
    gelu_backward, layernorm_backward, merge_heads, softmax_backward, split_heads,
};
pub use conv2d::conv2d;
pub use expected::{Expected, dot_tolerance};
pub use matmul::matmul;
pub use rows::{gelu, layernorm, softmax};

/// `y[i] = a * x[i] + y[i]`, computed on the CPU in `f32` (multiply, round,
/// add, round: no fused multiply-add).
///
/// # Errors
///
/// [`BenchError::LengthMismatch`] if `x` and `y` differ in length.
///
/// # Example
///
/// ```
/// use vramfit_bench::reference::saxpy;
///
/// assert_eq!(saxpy(2.0, &[1.0, -1.0], &[0.5, 0.5]).unwrap(), vec![2.5, -1.5]);
/// assert!(saxpy(2.0, &[1.0], &[]).is_err());
/// ```
pub fn saxpy(a: f32, x: &[f32], y: &[f32]) -> Result<Vec<f32>> {
    if x.len() != y.len() {
        return Err(BenchError::LengthMismatch {
            kernel: "saxpy reference",
            left: x.len(),
            right: y.len(),
        });
    }
    Ok(x.iter().zip(y).map(|(&xi, &yi)| a * xi + yi).collect())
}

/// The largest difference allowed between the GPU's and the CPU's
/// `a * x + y` for one element.
///
/// The GPU may evaluate `a * x + y` with one rounding (fused multiply-add) or
/// two, the CPU reference rounds twice. Each rounding is off by at most half
/// an ulp of a value no larger than `|a * x| + |y|`, so the two results differ
/// by at most about `1.5 * f32::EPSILON * (|a * x| + |y|)`; we allow `2 *`
/// that, plus `f32::MIN_POSITIVE` in case the device flushes subnormals to
/// zero.
///
/// # Example
///
/// ```
/// use vramfit_bench::reference::saxpy_tolerance;
///
/// let tol = saxpy_tolerance(2.0, 1.0, 1.0);
/// assert!(tol > 0.0 && tol < 1e-5);
/// ```
pub fn saxpy_tolerance(a: f32, x: f32, y: f32) -> f32 {
    2.0 * f32::EPSILON * ((a * x).abs() + y.abs()) + f32::MIN_POSITIVE
}

#[cfg(test)]
mod tests {
    use super::{saxpy, saxpy_tolerance};

    #[test]
    fn saxpy_matches_hand_computed_values() {
        let out = saxpy(-0.5, &[2.0, 0.0, 4.0], &[1.0, 3.0, -1.0]).unwrap();
        assert_eq!(out, vec![0.0, 3.0, -3.0]);
    }

    #[test]
    fn saxpy_rejects_mismatched_lengths() {
        assert!(saxpy(1.0, &[1.0, 2.0], &[1.0]).is_err());
    }

    #[test]
    fn saxpy_tolerance_covers_a_fused_multiply_add() {
        // The worst case for single vs double rounding: pick values whose
        // product is not representable, then compare fma against mul+add.
        let (a, x, y) = (1.000_000_1_f32, 1.000_000_1_f32, -1.0_f32);
        let fused = a.mul_add(x, y);
        let unfused = a * x + y;
        assert!((fused - unfused).abs() <= saxpy_tolerance(a, x, y));
    }
}
