//! Runs the saxpy kernel on the real device and compares it with the CPU
//! reference.
//!
//! These tests need a GPU; in CI that is Mesa's lavapipe (a Vulkan driver on
//! the CPU, from `mesa-vulkan-drivers`). Without an adapter they FAIL, so a
//! broken driver install cannot pass silently. Set `VRAMFIT_ALLOW_NO_GPU=1`
//! to skip them instead on a machine that has no Vulkan at all.

#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "tests fail by panicking"
)]

use vramfit_bench::{BenchError, Comparison, SAXPY_WORKGROUP_SIZE, Saxpy, check};
use vramfit_bench::{data::seeded_f32s, reference, testing::gpu_or_skip};

/// Spans 391 workgroups of 256, the last one partly filled.
const LEN: usize = 100_003;

/// Fails with every reported index/actual/expected if `comparison` failed.
fn assert_passed(what: &str, comparison: &Comparison) {
    assert!(
        comparison.passed(),
        "{what}: GPU differs from CPU reference: {comparison}"
    );
}

#[test]
fn saxpy_matches_reference_on_seeded_data_across_many_workgroups() {
    let Some(ctx) = gpu_or_skip() else { return };
    let comparison = pollster::block_on(check::check_saxpy(&ctx, LEN, 0x5EED)).unwrap();
    eprintln!(
        "max abs error over {LEN} elements: {:e}",
        comparison.max_abs_error
    );
    assert_passed("saxpy, 100_003 elements", &comparison);
}

#[test]
fn saxpy_handles_lengths_around_the_workgroup_size() {
    let Some(ctx) = gpu_or_skip() else { return };
    // One pipeline, several runs: the pipeline must be reusable.
    let kernel = Saxpy::new(&ctx).unwrap();
    let wg = SAXPY_WORKGROUP_SIZE as usize;
    for (seed, len) in [1, wg - 1, wg, wg + 1, 2 * wg + 3].into_iter().enumerate() {
        let x = seeded_f32s(seed as u64, len);
        let y = seeded_f32s(seed as u64 + 1000, len);
        let a = -3.25;
        let actual = pollster::block_on(kernel.run(&ctx, a, &x, &y)).unwrap();
        let expected = reference::saxpy(a, &x, &y).unwrap();
        let comparison = Comparison::new(&actual, &expected, |i| {
            reference::saxpy_tolerance(a, x[i], y[i])
        });
        assert_passed(&format!("saxpy, {len} elements"), &comparison);
    }
}

#[test]
fn saxpy_on_empty_input_returns_empty_output() {
    let Some(ctx) = gpu_or_skip() else { return };
    let kernel = Saxpy::new(&ctx).unwrap();
    let out = pollster::block_on(kernel.run(&ctx, 2.0, &[], &[])).unwrap();
    assert!(out.is_empty());
}

#[test]
fn saxpy_rejects_inputs_of_different_lengths() {
    let Some(ctx) = gpu_or_skip() else { return };
    let kernel = Saxpy::new(&ctx).unwrap();
    let result = pollster::block_on(kernel.run(&ctx, 2.0, &[1.0, 2.0], &[1.0]));
    assert!(
        matches!(
            result,
            Err(BenchError::LengthMismatch {
                left: 2,
                right: 1,
                ..
            })
        ),
        "{result:?}"
    );
}
