//! End-to-end self-checks: run a kernel on seeded data and compare it with
//! its CPU reference. Used by the `vramfit-bench` binary and the GPU tests.

use crate::compare::Comparison;
use crate::context::GpuContext;
use crate::data::SplitMix64;
use crate::error::Result;
use crate::reference;
use crate::saxpy::Saxpy;

/// The multiplier used by [`check_saxpy`]: not a power of two, so the
/// products really are rounded.
pub const CHECK_SAXPY_A: f32 = 1.7;

/// Runs [`Saxpy`] on `len` seeded pseudo-random elements in `[-1, 1)` and
/// compares the result with [`reference::saxpy`] under
/// [`reference::saxpy_tolerance`].
///
/// # Errors
///
/// Any error of [`Saxpy::new`] or [`Saxpy::run`]. A result outside the
/// tolerance is not an error; it shows up in the returned [`Comparison`].
pub async fn check_saxpy(ctx: &GpuContext, len: usize, seed: u64) -> Result<Comparison> {
    let mut rng = SplitMix64::new(seed);
    let x: Vec<f32> = (0..len).map(|_| rng.next_f32_signed()).collect();
    let y: Vec<f32> = (0..len).map(|_| rng.next_f32_signed()).collect();
    let a = CHECK_SAXPY_A;

    let kernel = Saxpy::new(ctx)?;
    let actual = kernel.run(ctx, a, &x, &y).await?;
    let expected = reference::saxpy(a, &x, &y)?;
    Ok(Comparison::new(&actual, &expected, |i| {
        match (x.get(i), y.get(i)) {
            (Some(&xi), Some(&yi)) => reference::saxpy_tolerance(a, xi, yi),
            // Unreachable: the comparison only visits indices of both inputs.
            _ => 0.0,
        }
    }))
}
