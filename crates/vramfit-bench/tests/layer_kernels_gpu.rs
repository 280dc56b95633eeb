//! The kernels added for the layers' forward and backward passes (add,
//! head copies, GELU / softmax / layernorm backward, batch norm forward and
//! backward, convolution backward) against their CPU references, in f32 and
//! f16, on seeded data spanning several workgroups. Like `kernels_gpu.rs`,
//! these FAIL without an adapter unless `VRAMFIT_ALLOW_NO_GPU=1`.

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
use vramfit_bench::{
    Comparison, DType, GpuContext, GpuTensor, reference, submit, testing::gpu_or_skip,
};

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

fn data(seed: u64, len: usize, scale: f32) -> Vec<f32> {
    seeded_f32s(seed, len)
        .into_iter()
        .map(|x| x * scale)
        .collect()
}

#[test]
fn add_and_gelu_backward_match_reference() {
    let Some(ctx) = device() else { return };
    for dtype in DType::ALL {
        let (a, b) = (data(1, 70_001, 3.0), data(2, 70_001, 3.0));
        assert_passed(
            &format!("add {dtype}"),
            &reference::add(&a, &b, dtype)
                .compare(&block_on(Add::new(&ctx, dtype).unwrap().run(&ctx, &a, &b)).unwrap()),
        );
        let mut x = data(3, 70_001, 6.0);
        x.extend([-30.0, 30.0, 0.0]);
        let dy = data(4, x.len(), 1.0);
        let actual = block_on(GeluBackward::new(&ctx, dtype).unwrap().run(&ctx, &x, &dy)).unwrap();
        assert_passed(
            &format!("gelu_backward {dtype}"),
            &reference::gelu_backward(&x, &dy, dtype).compare(&actual),
        );
    }
}

#[test]
fn split_then_merge_heads_moves_every_element_to_its_place() {
    let Some(ctx) = device() else { return };
    let shape = HeadsShape {
        batch: 2,
        seq: 37,
        heads: 3,
        head_dim: 20,
        parts: 3,
    };
    for dtype in DType::ALL {
        let heads = Heads::new(&ctx, dtype).unwrap();
        let fused_values = data(5, shape.fused_len(), 1.0);
        let fused = GpuTensor::from_f32(&ctx, "fused", &fused_values, dtype).unwrap();
        let back = GpuTensor::zeros(&ctx, "back", shape.fused_len(), dtype).unwrap();
        let parts: Vec<GpuTensor> = (0..3)
            .map(|_| GpuTensor::zeros(&ctx, "split", shape.split_len(), dtype).unwrap())
            .collect();
        let mut work = Vec::new();
        for (part, split) in parts.iter().enumerate() {
            work.push(heads.bind_split(&ctx, &shape, part, &fused, split).unwrap());
        }
        for (part, split) in parts.iter().enumerate() {
            work.push(heads.bind_merge(&ctx, &shape, part, split, &back).unwrap());
        }
        block_on(submit(&ctx, "heads", &work)).unwrap();
        let split: Vec<Vec<f32>> = parts
            .iter()
            .map(|p| block_on(p.read(&ctx)).unwrap())
            .collect();
        for (part, values) in split.iter().enumerate() {
            assert_passed(
                &format!("split part {part} {dtype}"),
                &reference::split_heads(&shape, part, &fused_values, dtype).compare(values),
            );
        }
        let refs: Vec<&[f32]> = split.iter().map(Vec::as_slice).collect();
        let merged = block_on(back.read(&ctx)).unwrap();
        assert_passed(
            &format!("merge {dtype}"),
            &reference::merge_heads(&shape, &refs, dtype).compare(&merged),
        );
    }
}

#[test]
fn softmax_backward_matches_reference_on_causal_probabilities() {
    let Some(ctx) = device() else { return };
    let shape = SoftmaxShape {
        rows: 12,
        cols: 600,
        causal_period: Some(6),
    };
    for dtype in DType::ALL {
        let y = reference::softmax(&shape, &data(6, shape.rows * shape.cols, 4.0), dtype).values;
        let dy = data(7, y.len(), 1.0);
        let actual = block_on(
            SoftmaxBackward::new(&ctx, dtype)
                .unwrap()
                .run(&ctx, shape.rows, shape.cols, &y, &dy),
        )
        .unwrap();
        assert_passed(
            &format!("softmax_backward {dtype}"),
            &reference::softmax_backward(shape.rows, shape.cols, &y, &dy, dtype).compare(&actual),
        );
    }
}

#[test]
fn layernorm_backward_matches_reference_for_input_and_parameters() {
    let Some(ctx) = device() else { return };
    let shape = LayerNormShape {
        rows: 300,
        cols: 520,
        eps: 1e-5,
    };
    for dtype in DType::ALL {
        let x: Vec<f32> = data(8, shape.rows * shape.cols, 2.0)
            .into_iter()
            .map(|v| v + 1.0)
            .collect();
        let (gamma, beta) = (data(9, shape.cols, 1.5), data(10, shape.cols, 0.5));
        let (_, mean, rstd) = reference::layernorm(&shape, &x, &gamma, &beta, dtype);
        let dy = data(11, x.len(), 1.0);
        let grads = block_on(LayerNormBackward::new(&ctx, dtype).unwrap().run(
            &ctx,
            &shape,
            &dy,
            &x,
            &gamma,
            &mean.values,
            &rstd.values,
        ))
        .unwrap();
        let (dx, dgamma, dbeta) = reference::layernorm_backward(
            &shape,
            &dy,
            &x,
            &gamma,
            &mean.values,
            &rstd.values,
            dtype,
        );
        assert_passed(
            &format!("layernorm_backward dx {dtype}"),
            &dx.compare(&grads.dx),
        );
        assert_passed(
            &format!("layernorm_backward dgamma {dtype}"),
            &dgamma.compare(&grads.dgamma),
        );
        assert_passed(
            &format!("layernorm_backward dbeta {dtype}"),
            &dbeta.compare(&grads.dbeta),
        );
    }
}

#[test]
fn batchnorm_forward_and_backward_match_reference_with_residual_and_relu() {
    let Some(ctx) = device() else { return };
    for (relu, residual) in [(false, false), (true, false), (true, true)] {
        let shape = BatchNormShape {
            n: 3,
            channels: 5,
            hw: 143,
            eps: 1e-5,
            relu,
        };
        for dtype in DType::ALL {
            let bn = BatchNorm::new(&ctx, dtype).unwrap();
            let x: Vec<f32> = data(12, shape.len(), 2.0)
                .into_iter()
                .map(|v| v - 0.5)
                .collect();
            let (gamma, beta) = (data(13, shape.channels, 1.5), data(14, shape.channels, 0.5));
            let res = residual.then(|| data(15, shape.len(), 1.0));
            let what = format!("batchnorm relu={relu} residual={residual} {dtype}");
            let out = block_on(bn.run(&ctx, &shape, &x, &gamma, &beta, res.as_deref())).unwrap();
            let (y, mean, rstd) =
                reference::batchnorm(&shape, &x, &gamma, &beta, res.as_deref(), dtype);
            assert_passed(&format!("{what} y"), &y.compare(&out[0]));
            assert_passed(&format!("{what} mean"), &mean.compare(&out[1]));
            assert_passed(&format!("{what} rstd"), &rstd.compare(&out[2]));
            let dy = data(16, shape.len(), 1.0);
            let grads = block_on(bn.run_backward(&ctx, &shape, &dy, &x, &gamma, &out)).unwrap();
            let expected = reference::batchnorm_backward(
                &shape, &dy, &x, &out[0], &gamma, &out[1], &out[2], dtype,
            );
            assert_passed(&format!("{what} dx"), &expected.0.compare(&grads[0]));
            assert_passed(&format!("{what} dgamma"), &expected.1.compare(&grads[1]));
            assert_passed(&format!("{what} dbeta"), &expected.2.compare(&grads[2]));
            assert_passed(&format!("{what} dz"), &expected.3.compare(&grads[3]));
        }
    }
}

#[test]
fn conv2d_backward_data_and_filter_match_reference() {
    let Some(ctx) = device() else { return };
    let shapes = [
        Conv2dShape {
            n: 2,
            c_in: 3,
            h: 13,
            w: 11,
            c_out: 5,
            kh: 3,
            kw: 3,
            stride: 2,
            pad: 1,
        },
        Conv2dShape {
            n: 2,
            c_in: 6,
            h: 9,
            w: 9,
            c_out: 4,
            kh: 1,
            kw: 1,
            stride: 1,
            pad: 0,
        },
    ];
    for dtype in DType::ALL {
        let kernel = Conv2dBackward::new(&ctx, dtype).unwrap();
        for (seed, shape) in (20..).zip(shapes) {
            let (dy, w, x) = (
                data(seed, shape.y_len(), 1.0),
                data(seed + 1, shape.w_len(), 1.0),
                data(seed + 2, shape.x_len(), 1.0),
            );
            let dx = block_on(kernel.run(&ctx, ConvGrad::Data, &shape, &dy, &w)).unwrap();
            assert_passed(
                &format!("conv dx {shape:?} {dtype}"),
                &reference::conv2d_backward_data(&shape, &dy, &w, dtype).compare(&dx),
            );
            let dw = block_on(kernel.run(&ctx, ConvGrad::Filter, &shape, &dy, &x)).unwrap();
            assert_passed(
                &format!("conv dw {shape:?} {dtype}"),
                &reference::conv2d_backward_filter(&shape, &dy, &x, dtype).compare(&dw),
            );
        }
    }
}
