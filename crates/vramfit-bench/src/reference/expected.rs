//! The result of a reference computation: values plus tolerances.

use crate::compare::Comparison;
use crate::dtype::DType;

/// Expected values and, for each, the largest difference the GPU result may
/// have from it.
#[derive(Clone, Debug, PartialEq)]
pub struct Expected {
    /// The reference result, rounded to `f32`.
    pub values: Vec<f32>,
    /// The tolerance of each value.
    pub tolerance: Vec<f32>,
}

impl Expected {
    /// An empty result with room for `len` values.
    pub(crate) fn with_capacity(len: usize) -> Self {
        Self {
            values: Vec::with_capacity(len),
            tolerance: Vec::with_capacity(len),
        }
    }

    /// Appends one value and its tolerance.
    pub(crate) fn push(&mut self, value: f64, tolerance: f64) {
        self.values.push(value as f32);
        self.tolerance.push(tolerance as f32);
    }

    /// Compares the GPU's `actual` with these values.
    pub fn compare(&self, actual: &[f32]) -> Comparison {
        Comparison::new(actual, &self.values, |i| {
            self.tolerance.get(i).copied().unwrap_or(0.0)
        })
    }
}

/// The smallest magnitude below which a device may flush results to zero:
/// the smallest normal number of `dtype`.
pub(crate) fn flush_floor(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => f64::from(f32::MIN_POSITIVE),
        DType::F16 => 2f64.powi(-14),
    }
}

/// The tolerance for `result`, a sum of `terms` products accumulated in
/// `dtype` (with or without fused multiply-add, in any order), whose terms
/// have Euclidean norm `terms_l2`.
///
/// Each of the `terms` roundings errs by at most `u * |partial sum|`, and
/// partial sums of terms with random signs are of the order of `terms_l2`;
/// the errors add like a random walk, about `u * sqrt(terms) * terms_l2`.
/// We allow 8 times that (so a correct kernel never fails by chance, while a
/// dropped or doubled term of typical size still does), plus `2u|result|`
/// for rounding the result to `dtype`, plus the flush-to-zero floor. This is
/// a statistical bound for the random data of the tests, not a worst case:
/// the worst case, `u * terms * sum |term|`, would hide real bugs in `f16`.
pub fn dot_tolerance(dtype: DType, result: f64, terms_l2: f64, terms: usize) -> f64 {
    let u = f64::from(dtype.unit_roundoff());
    u * (2.0 * result.abs() + 8.0 * (terms.max(1) as f64).sqrt() * terms_l2) + flush_floor(dtype)
}

/// `values` rounded to `dtype`, widened to `f64`.
pub(crate) fn rounded(values: &[f32], dtype: DType) -> Vec<f64> {
    values.iter().map(|&x| f64::from(dtype.round(x))).collect()
}
