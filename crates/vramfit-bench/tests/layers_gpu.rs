//! The layers on the real device: every matmul and convolution of forward
//! and backward against the CPU reference on the layer's own buffers, the
//! forward output against the composed CPU references, the saved-tensor
//! accounting against the real buffer sizes, and the estimator comparison.
//! Small seeded sizes, f32 and f16. FAIL without an adapter unless
//! `VRAMFIT_ALLOW_NO_GPU=1`.

#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "tests fail by panicking"
)]

use pollster::block_on;
use vramfit_bench::kernels::{
    AttentionShape, BatchNormShape, HeadsShape, LayerNormShape, MatmulShape,
};
use vramfit_bench::layers::*;
use vramfit_bench::{Comparison, DType, GpuContext, reference, submit, testing::gpu_or_skip};

fn device() -> Option<GpuContext> {
    let ctx = gpu_or_skip()?;
    assert!(
        ctx.summary().shader_f16,
        "the adapter lacks SHADER_F16: {}",
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

/// Runs forward and backward once.
fn run(ctx: &GpuContext, layer: &BoundLayer) {
    let work: Vec<_> = layer
        .forward
        .iter()
        .chain(&layer.backward)
        .cloned()
        .collect();
    block_on(submit(ctx, "layer", &work)).unwrap();
}

fn read(ctx: &GpuContext, layer: &BoundLayer, name: &str) -> Vec<f32> {
    block_on(
        layer
            .tensor(name)
            .unwrap_or_else(|| panic!("no tensor {name}"))
            .read(ctx),
    )
    .unwrap()
}

/// Checks every product of `layer` on its own operands.
fn check_products(ctx: &GpuContext, layer: &BoundLayer, dtype: DType, what: &str) {
    for p in &layer.products {
        let (a, b, out) = (
            read(ctx, layer, &p.a),
            read(ctx, layer, &p.b),
            read(ctx, layer, &p.out),
        );
        let zeros = vec![0.0; out.len()];
        let expected = match p.kind {
            ProductKind::Matmul(shape) => reference::matmul(&shape, &a, &b, dtype),
            ProductKind::Conv(shape) => {
                reference::conv2d(&shape, &a, &b, &zeros[..shape.c_out], dtype)
            }
            ProductKind::ConvData(shape) => reference::conv2d_backward_data(&shape, &a, &b, dtype),
            ProductKind::ConvFilter(shape) => {
                reference::conv2d_backward_filter(&shape, &a, &b, dtype)
            }
        };
        assert_passed(
            &format!("{what} {} {dtype}", p.name),
            &expected.compare(&out),
        );
    }
}

/// The forward output may differ from the composed references by each
/// stage's error carried through the rest of the block; we allow the last
/// stage's own tolerance plus 64 u times the output's RMS, an allowance for
/// the carried error (every stage is also checked exactly on the GPU's own
/// operands, above and in layer_kernels_gpu.rs).
fn assert_forward(what: &str, expected: &reference::Expected, actual: &[f32], dtype: DType) {
    let rms = (expected
        .values
        .iter()
        .map(|v| f64::from(*v).powi(2))
        .sum::<f64>()
        / expected.values.len().max(1) as f64)
        .sqrt() as f32;
    let allowance = 64.0 * dtype.unit_roundoff() * rms;
    assert_passed(
        what,
        &Comparison::new(actual, &expected.values, |i| {
            expected.tolerance.get(i).copied().unwrap_or(0.0) + allowance
        }),
    );
}

const TRANSFORMER: TransformerBlockShape = TransformerBlockShape {
    batch: 2,
    seq: 19,
    hidden: 48,
    heads: 3,
};

#[test]
fn transformer_block_products_and_forward_match_reference() {
    let Some(ctx) = device() else { return };
    let s = TRANSFORMER;
    for dtype in DType::ALL {
        let layer = TransformerBlock::new(&ctx, dtype)
            .unwrap()
            .bind(&ctx, &s, 7)
            .unwrap();
        run(&ctx, &layer);
        assert_eq!(
            layer.products.iter().filter(|p| p.backward).count(),
            12,
            "two gradient products per matmul"
        );
        check_products(&ctx, &layer, dtype, "transformer");
        // The forward output, composed from the CPU references.
        let r = |name: &str| read(&ctx, &layer, name);
        let (t, h, i, d) = (s.tokens(), s.hidden, s.inner(), s.head_dim());
        let ln = LayerNormShape {
            rows: t,
            cols: h,
            eps: 1e-5,
        };
        let x = r("x");
        let n1 = reference::layernorm(&ln, &x, &r("ln_1.weight"), &r("ln_1.bias"), dtype)
            .0
            .values;
        let qkv = reference::matmul(
            &MatmulShape::forward(t, 3 * h, h),
            &n1,
            &r("attn.c_attn.weight"),
            dtype,
        )
        .values;
        let heads = |parts| HeadsShape {
            batch: s.batch,
            seq: s.seq,
            heads: s.heads,
            head_dim: d,
            parts,
        };
        let [q, k, v] =
            [0, 1, 2].map(|part| reference::split_heads(&heads(3), part, &qkv, dtype).values);
        let attention = AttentionShape {
            batch: s.batch * s.heads,
            seq_q: s.seq,
            seq_kv: s.seq,
            head_dim: d,
            causal: true,
        };
        let ctx_heads = reference::attention(&attention, &q, &k, &v, dtype).values;
        let merged = reference::merge_heads(&heads(1), &[&ctx_heads], dtype).values;
        let attn = reference::matmul(
            &MatmulShape::forward(t, h, h),
            &merged,
            &r("attn.c_proj.weight"),
            dtype,
        )
        .values;
        let x2 = reference::add(&x, &attn, dtype).values;
        let n2 = reference::layernorm(&ln, &x2, &r("ln_2.weight"), &r("ln_2.bias"), dtype)
            .0
            .values;
        let f = reference::matmul(
            &MatmulShape::forward(t, i, h),
            &n2,
            &r("mlp.c_fc.weight"),
            dtype,
        )
        .values;
        let g = reference::gelu(&f, dtype).values;
        let m = reference::matmul(
            &MatmulShape::forward(t, h, i),
            &g,
            &r("mlp.c_proj.weight"),
            dtype,
        )
        .values;
        assert_forward(
            &format!("transformer out {dtype}"),
            &reference::add(&x2, &m, dtype),
            &r("out"),
            dtype,
        );
    }
}

const BOTTLENECK: BottleneckShape = BottleneckShape {
    batch: 2,
    channels: 256,
    width: 8,
    side: 7,
};

#[test]
fn bottleneck_block_products_and_forward_match_reference() {
    let Some(ctx) = device() else { return };
    let s = BOTTLENECK;
    for dtype in DType::ALL {
        let layer = Bottleneck::new(&ctx, dtype)
            .unwrap()
            .bind(&ctx, &s, 11)
            .unwrap();
        run(&ctx, &layer);
        assert_eq!(
            layer.products.iter().filter(|p| p.backward).count(),
            6,
            "two gradients per convolution"
        );
        check_products(&ctx, &layer, dtype, "bottleneck");
        let r = |name: &str| read(&ctx, &layer, name);
        let x = r("x");
        let mut y = x.clone();
        let mut last = None;
        for (i, conv) in (1..).zip(s.convs()) {
            let c = reference::conv2d(
                &conv,
                &y,
                &r(&format!("conv{i}.weight")),
                &vec![0.0; conv.c_out],
                dtype,
            )
            .values;
            let bn = BatchNormShape {
                n: s.batch,
                channels: conv.c_out,
                hw: s.side * s.side,
                eps: 1e-5,
                relu: true,
            };
            let residual = (i == 3).then_some(x.as_slice());
            let out = reference::batchnorm(
                &bn,
                &c,
                &r(&format!("bn{i}.weight")),
                &r(&format!("bn{i}.bias")),
                residual,
                dtype,
            )
            .0;
            y = out.values.clone();
            last = Some(out);
        }
        assert_forward(
            &format!("bottleneck out {dtype}"),
            &last.unwrap(),
            &r("out"),
            dtype,
        );
    }
}

#[test]
fn saved_bytes_are_the_real_buffer_sizes() {
    let Some(ctx) = device() else { return };
    // An odd head size and token count, so f16 tensors need padding.
    let odd = TransformerBlockShape {
        batch: 1,
        seq: 5,
        hidden: 9,
        heads: 3,
    };
    for dtype in DType::ALL {
        for layer in [
            TransformerBlock::new(&ctx, dtype)
                .unwrap()
                .bind(&ctx, &odd, 1)
                .unwrap(),
            Bottleneck::new(&ctx, dtype)
                .unwrap()
                .bind(
                    &ctx,
                    &BottleneckShape {
                        batch: 1,
                        channels: 12,
                        width: 3,
                        side: 3,
                    },
                    1,
                )
                .unwrap(),
        ] {
            let mut sum = 0;
            for saved in &layer.saved {
                let buffer = layer.tensor(&saved.name).unwrap().buffer().size();
                assert_eq!(saved.allocated_bytes, buffer, "{}", saved.name);
                assert_eq!(
                    saved.data_bytes,
                    saved.shape.iter().product::<usize>() as u64 * saved.dtype.size(),
                    "{}",
                    saved.name
                );
                assert!(
                    saved.allocated_bytes >= saved.data_bytes && saved.allocated_bytes % 4 == 0,
                    "{saved:?}"
                );
                sum += buffer;
            }
            assert_eq!(layer.saved_bytes(), sum);
            let stats = layer
                .saved
                .iter()
                .filter(|s| s.name.ends_with(".mean") || s.name.ends_with(".rstd"));
            assert!(
                stats.clone().count() >= 4 && stats.into_iter().all(|s| s.dtype == DType::F32),
                "statistics are f32"
            );
        }
        let t = TransformerBlock::new(&ctx, dtype)
            .unwrap()
            .bind(&ctx, &odd, 1)
            .unwrap();
        let padded = t.saved.iter().any(|s| s.allocated_bytes > s.data_bytes);
        assert_eq!(
            padded,
            dtype == DType::F16,
            "f16 tensors of odd length are padded to 4 bytes"
        );
    }
}

#[test]
fn measured_layers_carry_the_estimator_comparison_and_timings() {
    let Some(ctx) = device() else { return };
    let timing = vramfit_bench::timing::TimingOptions {
        warmup: 0,
        runs: 1,
        min_span_s: 0.0,
        max_span_s: 1.0,
        max_batch: 1,
    };
    let shapes = [
        LayerShape::Transformer(TRANSFORMER),
        LayerShape::Resnet(BOTTLENECK),
    ];
    let mut results = Vec::new();
    for dtype in DType::ALL {
        for shape in shapes {
            let result = block_on(measure_layer(
                &ctx,
                shape,
                dtype,
                Some(&timing),
                &vramfit_bench::timing::native_clock,
            ))
            .unwrap();
            let estimate = result
                .estimate
                .as_ref()
                .unwrap_or_else(|| panic!("no estimate: {:?}", result.notes));
            eprintln!(
                "{} {dtype}: measured {} B, estimated {} B ({}), differences {:?}, rounding {}",
                result.layer,
                estimate.measured_bytes,
                estimate.estimated_bytes,
                estimate.layer,
                estimate.differences,
                estimate.rounding_bytes
            );
            assert_eq!(estimate.measured_bytes, result.saved_bytes);
            assert!(estimate.estimated_bytes > 0 && !estimate.differences.is_empty());
            // Every reason has a stable id for the page to translate, and the
            // notes' phrases match the notes one for one.
            assert!(
                estimate.differences.iter().all(|d| !d.phrase.id.is_empty()),
                "{:?}",
                estimate.differences
            );
            assert_eq!(
                result.phrases.len(),
                result.scaling.iter().count() + result.notes.len()
            );
            // What is left after the itemised differences is allocator rounding: under 512 B per saved tensor.
            assert!(
                estimate.rounding_bytes >= 0 && estimate.rounding_bytes < 512 * 32,
                "{estimate:?}"
            );
            assert!(result.forward_backward.as_ref().unwrap().gflops > 0.0);
            results.push(result);
        }
    }
    let throughput = MeasuredThroughput::from_results(&results).unwrap();
    assert!(throughput.fp32_flops_per_s > 0.0 && throughput.fp16_flops_per_s > 0.0);
    let report = vramfit_bench::report::layers_markdown(&results);
    for needle in [
        "transformer",
        "resnet",
        "h.1",
        "layer1.1",
        "estimated",
        "attn.probs",
    ] {
        assert!(report.contains(needle), "{needle} missing from:\n{report}");
    }
}
