//! Runs every neural-network kernel on the real device, in f32 and f16, and
//! compares it with its CPU reference on seeded data.
//!
//! Shapes are deliberately not multiples of any tile or workgroup size and
//! span several workgroups. Like `saxpy_gpu.rs`, these tests FAIL without an
//! adapter unless `VRAMFIT_ALLOW_NO_GPU=1`; they also fail if the adapter
//! lacks `SHADER_F16`, because CI's lavapipe has it and a silent skip would
//! hide the f16 kernels.

#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "tests fail by panicking"
)]

use pollster::block_on;
use vramfit_bench::data::seeded_f32s;
use vramfit_bench::kernels::*;
use vramfit_bench::{BenchError, Comparison, DType, GpuContext, reference, testing::gpu_or_skip};

/// A device with f16, or `None` to skip (no adapter and skipping allowed).
fn device() -> Option<GpuContext> {
    let ctx = gpu_or_skip()?;
    assert!(
        ctx.summary().shader_f16,
        "the adapter lacks SHADER_F16, so the f16 kernels cannot be tested: {}",
        ctx.summary()
    );
    Some(ctx)
}

fn assert_passed(what: &str, comparison: &Comparison) {
    eprintln!("{what}: max abs error {:e}", comparison.max_abs_error);
    assert!(
        comparison.passed(),
        "{what}: GPU differs from CPU reference: {comparison}"
    );
}

/// `len` seeded values in `[-scale, scale)`.
fn data(seed: u64, len: usize, scale: f32) -> Vec<f32> {
    seeded_f32s(seed, len)
        .into_iter()
        .map(|x| x * scale)
        .collect()
}

#[test]
fn matmul_forward_and_both_backward_products_match_reference() {
    let Some(ctx) = device() else { return };
    // 2 x 3 tiles of 128 for the tiled kernel, 10 x 17 workgroups naive.
    let (m, n, k) = (150, 260, 70);
    let cases = [
        ("forward", MatmulShape::forward(m, n, k)),
        ("dA", MatmulShape::grad_a(m, n, k)),
        ("dB", MatmulShape::grad_b(m, n, k)),
    ];
    for dtype in DType::ALL {
        for variant in [MatmulVariant::Naive, MatmulVariant::Tiled] {
            let kernel = Matmul::new(&ctx, variant, dtype).unwrap();
            for (seed, (op, shape)) in (0..).zip(cases) {
                let a = data(seed, shape.a_len(), 1.0);
                let b = data(seed + 100, shape.b_len(), 1.0);
                let actual = block_on(kernel.run(&ctx, &shape, &a, &b)).unwrap();
                let expected = reference::matmul(&shape, &a, &b, dtype);
                assert_passed(
                    &format!("{} {op} {dtype}", variant.name()),
                    &expected.compare(&actual),
                );
            }
        }
    }
}

#[test]
fn batched_scaled_matmul_matches_reference() {
    let Some(ctx) = device() else { return };
    let shape = MatmulShape {
        batch: 3,
        m: 33,
        n: 129,
        k: 17,
        trans_a: true,
        trans_b: true,
        alpha: 0.37,
    };
    for dtype in DType::ALL {
        for variant in [MatmulVariant::Naive, MatmulVariant::Tiled] {
            let (a, b) = (data(7, shape.a_len(), 1.0), data(8, shape.b_len(), 1.0));
            let actual = block_on(
                Matmul::new(&ctx, variant, dtype)
                    .unwrap()
                    .run(&ctx, &shape, &a, &b),
            )
            .unwrap();
            assert_passed(
                &format!("{} batched {dtype}", variant.name()),
                &reference::matmul(&shape, &a, &b, dtype).compare(&actual),
            );
        }
    }
}

#[test]
fn matmul_rejects_operands_of_the_wrong_size_or_type() {
    let Some(ctx) = device() else { return };
    let kernel = Matmul::new(&ctx, MatmulVariant::Tiled, DType::F32).unwrap();
    let result = block_on(kernel.run(&ctx, &MatmulShape::forward(4, 4, 4), &[0.0; 15], &[0.0; 16]));
    assert!(
        matches!(
            result,
            Err(BenchError::ShapeMismatch {
                tensor: "A",
                expected: 16,
                actual: 15,
                ..
            })
        ),
        "{result:?}"
    );
    let a16 = vramfit_bench::GpuTensor::zeros(&ctx, "a", 16, DType::F16).unwrap();
    let f32s = vramfit_bench::GpuTensor::zeros(&ctx, "b", 16, DType::F32).unwrap();
    let result = kernel.bind(&ctx, &MatmulShape::forward(4, 4, 4), &a16, &f32s, &f32s);
    assert!(
        matches!(result, Err(BenchError::DTypeMismatch { tensor: "A", .. })),
        "{result:?}"
    );
}

#[test]
fn conv2d_matches_reference_with_stride_and_padding() {
    let Some(ctx) = device() else { return };
    let shapes = [
        Conv2dShape {
            n: 2,
            c_in: 3,
            h: 17,
            w: 19,
            c_out: 5,
            kh: 3,
            kw: 3,
            stride: 2,
            pad: 1,
        },
        Conv2dShape {
            n: 1,
            c_in: 4,
            h: 23,
            w: 21,
            c_out: 3,
            kh: 5,
            kw: 3,
            stride: 1,
            pad: 0,
        },
    ];
    for dtype in DType::ALL {
        let kernel = Conv2d::new(&ctx, dtype).unwrap();
        for (seed, shape) in (0..).zip(shapes) {
            let (x, w, bias) = (
                data(seed, shape.x_len(), 1.0),
                data(seed + 1, shape.w_len(), 1.0),
                data(seed + 2, shape.c_out, 1.0),
            );
            let actual = block_on(kernel.run(&ctx, &shape, &x, &w, &bias)).unwrap();
            assert_passed(
                &format!("conv2d {shape:?} {dtype}"),
                &reference::conv2d(&shape, &x, &w, &bias, dtype).compare(&actual),
            );
        }
    }
}

#[test]
fn layernorm_matches_reference_including_statistics() {
    let Some(ctx) = device() else { return };
    // Rows longer than the 256-invocation workgroup, several rows.
    let shape = LayerNormShape {
        rows: 7,
        cols: 1000,
        eps: 1e-5,
    };
    for dtype in DType::ALL {
        // An offset mean checks the two-pass variance.
        let x: Vec<f32> = data(1, shape.rows * shape.cols, 2.0)
            .into_iter()
            .map(|v| v + 3.0)
            .collect();
        let (gamma, beta) = (data(2, shape.cols, 1.5), data(3, shape.cols, 0.5));
        let out = block_on(
            LayerNorm::new(&ctx, dtype)
                .unwrap()
                .run(&ctx, &shape, &x, &gamma, &beta),
        )
        .unwrap();
        let (y, mean, rstd) = reference::layernorm(&shape, &x, &gamma, &beta, dtype);
        assert_passed(&format!("layernorm y {dtype}"), &y.compare(&out.y));
        assert_passed(&format!("layernorm mean {dtype}"), &mean.compare(&out.mean));
        assert_passed(&format!("layernorm rstd {dtype}"), &rstd.compare(&out.rstd));
    }
}

#[test]
fn softmax_matches_reference_with_and_without_causal_mask() {
    let Some(ctx) = device() else { return };
    for dtype in DType::ALL {
        let kernel = Softmax::new(&ctx, dtype).unwrap();
        for causal_period in [None, Some(5)] {
            let shape = SoftmaxShape {
                rows: 9,
                cols: 777,
                causal_period,
            };
            let x = data(4, shape.rows * shape.cols, 6.0);
            let actual = block_on(kernel.run(&ctx, &shape, &x)).unwrap();
            assert_passed(
                &format!("softmax causal {causal_period:?} {dtype}"),
                &reference::softmax(&shape, &x, dtype).compare(&actual),
            );
        }
    }
}

#[test]
fn gelu_matches_reference_across_many_workgroups() {
    let Some(ctx) = device() else { return };
    for dtype in DType::ALL {
        // Into the saturated tails, where tanh must not overflow.
        let mut x = data(5, 100_003, 6.0);
        x.extend([-30.0, 30.0, 0.0]);
        let actual = block_on(Gelu::new(&ctx, dtype).unwrap().run(&ctx, &x)).unwrap();
        assert_passed(
            &format!("gelu {dtype}"),
            &reference::gelu(&x, dtype).compare(&actual),
        );
    }
}

#[test]
fn attention_variants_match_reference_causal_and_not() {
    let Some(ctx) = device() else { return };
    let shapes = [
        // Two query blocks of 64, key tiles with a partial last one.
        AttentionShape {
            batch: 3,
            seq_q: 70,
            seq_kv: 70,
            head_dim: 24,
            causal: true,
        },
        AttentionShape {
            batch: 2,
            seq_q: 19,
            seq_kv: 45,
            head_dim: 40,
            causal: false,
        },
    ];
    for dtype in DType::ALL {
        for variant in [AttentionVariant::Materialized, AttentionVariant::Flash] {
            let kernel = Attention::new(&ctx, variant, dtype).unwrap();
            for (seed, shape) in (0..).zip(shapes) {
                let (q, k, v) = (
                    data(seed, shape.q_len(), 2.0),
                    data(seed + 1, shape.kv_len(), 2.0),
                    data(seed + 2, shape.kv_len(), 1.0),
                );
                let actual = block_on(kernel.run(&ctx, &shape, &q, &k, &v)).unwrap();
                let what = format!("{} causal={} {dtype}", variant.name(), shape.causal);
                assert_passed(
                    &what,
                    &reference::attention(&shape, &q, &k, &v, dtype).compare(&actual),
                );
            }
        }
    }
}

#[test]
fn flash_attention_rejects_head_dims_above_its_maximum() {
    let Some(ctx) = device() else { return };
    let shape = AttentionShape {
        batch: 1,
        seq_q: 2,
        seq_kv: 2,
        head_dim: ATTENTION_MAX_HEAD_DIM + 1,
        causal: false,
    };
    let zeros = vec![0.0; shape.q_len()];
    let result = block_on(
        Attention::new(&ctx, AttentionVariant::Flash, DType::F32)
            .unwrap()
            .run(&ctx, &shape, &zeros, &zeros, &zeros),
    );
    assert!(
        matches!(result, Err(BenchError::InvalidShape { .. })),
        "{result:?}"
    );
}

#[test]
fn adam_matches_torch_adamw_over_three_steps() {
    let Some(ctx) = device() else { return };
    let n = 10_007;
    let config = AdamConfig {
        lr: 1e-2,
        ..AdamConfig::default()
    };
    for dtype in DType::ALL {
        let param = data(6, n, 1.0);
        let grads: Vec<Vec<f32>> = (0..3).map(|step| data(10 + step, n, 0.5)).collect();
        let state = block_on(
            Adam::new(&ctx, dtype)
                .unwrap()
                .run(&ctx, &config, &param, &grads),
        )
        .unwrap();
        let (p, m, v) = reference::adam(&config, &param, &grads, dtype);
        assert_passed(&format!("adam param {dtype}"), &p.compare(&state.param));
        assert_passed(&format!("adam m {dtype}"), &m.compare(&state.m));
        assert_passed(&format!("adam v {dtype}"), &v.compare(&state.v));
    }
}
