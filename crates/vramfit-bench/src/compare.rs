//! Element-wise comparison of a GPU result with its CPU reference.

use std::fmt;

/// How many mismatches a [`Comparison`] keeps for printing; the rest are
/// only counted.
pub const MAX_REPORTED_MISMATCHES: usize = 10;

/// One element where the GPU result is outside the tolerance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mismatch {
    /// Position in the output.
    pub index: usize,
    /// What the GPU produced.
    pub actual: f32,
    /// What the CPU reference produced.
    pub expected: f32,
    /// The largest difference that would have been accepted.
    pub tolerance: f32,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "index {}: actual {:e}, expected {:e} (|diff| {:e} > tolerance {:e})",
            self.index,
            self.actual,
            self.expected,
            (self.actual - self.expected).abs(),
            self.tolerance,
        )
    }
}

/// The outcome of comparing a GPU result with its reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Length of the GPU result.
    pub actual_len: usize,
    /// Length of the reference result.
    pub expected_len: usize,
    /// The largest `|actual - expected|` over the compared elements
    /// (`NaN` if any difference is `NaN`).
    pub max_abs_error: f32,
    /// How many elements are outside their tolerance.
    pub mismatch_count: usize,
    /// The first [`MAX_REPORTED_MISMATCHES`] mismatches, in index order.
    pub mismatches: Vec<Mismatch>,
}

impl Comparison {
    /// Compares `actual` with `expected` element by element; element `i`
    /// passes when `|actual[i] - expected[i]| <= tolerance(i)`, or when both
    /// are `NaN`.
    ///
    /// # Example
    ///
    /// ```
    /// use vramfit_bench::Comparison;
    ///
    /// let ok = Comparison::new(&[1.0, 2.0], &[1.0, 2.000_001], |_| 1e-5);
    /// assert!(ok.passed());
    /// let bad = Comparison::new(&[1.0, 2.5], &[1.0, 2.0], |_| 1e-5);
    /// assert_eq!(bad.mismatches[0].index, 1);
    /// ```
    pub fn new(actual: &[f32], expected: &[f32], tolerance: impl Fn(usize) -> f32) -> Self {
        let mut max_abs_error = 0.0_f32;
        let mut mismatch_count = 0;
        let mut mismatches = Vec::new();
        for (index, (&actual, &expected)) in actual.iter().zip(expected).enumerate() {
            if actual.is_nan() && expected.is_nan() {
                continue;
            }
            let diff = (actual - expected).abs();
            // `f32::max` ignores NaN, so propagate it by hand.
            max_abs_error = if diff.is_nan() {
                diff
            } else {
                max_abs_error.max(diff)
            };
            let tolerance = tolerance(index);
            if diff.is_nan() || diff > tolerance {
                mismatch_count += 1;
                if mismatches.len() < MAX_REPORTED_MISMATCHES {
                    mismatches.push(Mismatch {
                        index,
                        actual,
                        expected,
                        tolerance,
                    });
                }
            }
        }
        Self {
            actual_len: actual.len(),
            expected_len: expected.len(),
            max_abs_error,
            mismatch_count,
            mismatches,
        }
    }

    /// Whether the lengths agree and every element is within tolerance.
    pub fn passed(&self) -> bool {
        self.actual_len == self.expected_len && self.mismatch_count == 0
    }
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.actual_len != self.expected_len {
            writeln!(
                f,
                "length mismatch: actual {}, expected {}",
                self.actual_len, self.expected_len
            )?;
        }
        write!(
            f,
            "{} of {} elements outside tolerance, max abs error {:e}",
            self.mismatch_count,
            self.actual_len.min(self.expected_len),
            self.max_abs_error,
        )?;
        for mismatch in &self.mismatches {
            write!(f, "\n  {mismatch}")?;
        }
        if self.mismatch_count > self.mismatches.len() {
            write!(
                f,
                "\n  ... and {} more",
                self.mismatch_count - self.mismatches.len()
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{Comparison, MAX_REPORTED_MISMATCHES};

    #[test]
    fn comparison_fails_on_nan_result() {
        let c = Comparison::new(&[f32::NAN], &[1.0], |_| 1.0);
        assert!(!c.passed());
        assert!(c.max_abs_error.is_nan());
    }

    #[test]
    fn comparison_fails_on_length_mismatch() {
        assert!(!Comparison::new(&[1.0], &[1.0, 2.0], |_| 1.0).passed());
    }

    #[test]
    fn comparison_keeps_only_the_first_mismatches_but_counts_all() {
        let actual = vec![1.0; 50];
        let expected = vec![0.0; 50];
        let c = Comparison::new(&actual, &expected, |_| 0.5);
        assert_eq!(c.mismatch_count, 50);
        assert_eq!(c.mismatches.len(), MAX_REPORTED_MISMATCHES);
        assert!(c.to_string().contains("and 40 more"));
    }
}
