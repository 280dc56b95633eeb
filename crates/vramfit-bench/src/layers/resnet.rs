//! A torchvision ResNet bottleneck block with an identity shortcut (stride
//! 1, `channels = 4 * width`), on the GPU, forward and backward:
//! `out = relu(bn3(conv3(relu(bn2(conv2(relu(bn1(conv1(x)))))))) + x)`,
//! conv1 and conv3 1x1, conv2 3x3 with padding 1, batch norm in training
//! mode (batch statistics).
//!
//! The backward runs every gradient: batch norm (through the ReLU masks,
//! with gamma's and beta's gradients), both gradients of each convolution
//! (direct kernels) and the shortcut's sum. Convolutions have no bias, as
//! in torchvision (the kernel's bias operand is bound to zeros); running
//! statistics are not updated (they are buffers, not saved tensors).

use super::bound::{BoundLayer, LayerBuilder, ProductKind};
use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::{BenchError, Result};
use crate::kernels::{
    Add, BatchNorm, BatchNormGradOut, BatchNormOut, BatchNormShape, Conv2d, Conv2dBackward,
    Conv2dShape,
};

/// The block's sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BottleneckShape {
    /// Samples.
    pub batch: usize,
    /// Channels in and out (`4 * width` in torchvision).
    pub channels: usize,
    /// Channels inside the block (torchvision's `planes`).
    pub width: usize,
    /// Height and width of the feature map.
    pub side: usize,
}

impl BottleneckShape {
    /// Elements of the block's input (and output).
    pub fn input_len(&self) -> usize {
        self.batch * self.channels * self.side * self.side
    }

    /// `batch x channels x side x side, width w`, for reports.
    pub fn describe(&self) -> String {
        format!(
            "batch {} x {} x {}x{}, width {}",
            self.batch, self.channels, self.side, self.side, self.width
        )
    }

    /// The three convolutions.
    pub fn convs(&self) -> [Conv2dShape; 3] {
        let conv = |c_in, c_out, k, pad| Conv2dShape {
            n: self.batch,
            c_in,
            h: self.side,
            w: self.side,
            c_out,
            kh: k,
            kw: k,
            stride: 1,
            pad,
        };
        [
            conv(self.channels, self.width, 1, 0),
            conv(self.width, self.width, 3, 1),
            conv(self.width, self.channels, 1, 0),
        ]
    }
}

/// PyTorch's default batch-norm epsilon.
const EPS: f32 = 1e-5;

/// The kernels of the block, built once for one element type.
#[derive(Debug)]
pub struct Bottleneck {
    dtype: DType,
    conv: Conv2d,
    conv_backward: Conv2dBackward,
    batchnorm: BatchNorm,
    add: Add,
}

impl Bottleneck {
    /// Builds every pipeline in `dtype`.
    ///
    /// # Errors
    ///
    /// As [`Matmul::new`](crate::kernels::Matmul::new).
    pub fn new(ctx: &GpuContext, dtype: DType) -> Result<Self> {
        Ok(Self {
            dtype,
            conv: Conv2d::new(ctx, dtype)?,
            conv_backward: Conv2dBackward::new(ctx, dtype)?,
            batchnorm: BatchNorm::new(ctx, dtype)?,
            add: Add::new(ctx, dtype)?,
        })
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Allocates seeded input `x`, weights (scaled by `1/sqrt(fan_in)`) and
    /// output gradient `d.out`, every activation and gradient, and binds
    /// forward and backward.
    ///
    /// # Errors
    ///
    /// [`BenchError::InvalidShape`] for a zero size, and the allocation and
    /// binding errors of the kernels.
    pub fn bind(&self, ctx: &GpuContext, shape: &BottleneckShape, seed: u64) -> Result<BoundLayer> {
        if shape.input_len() == 0 || shape.width == 0 {
            return Err(BenchError::InvalidShape {
                kernel: "bottleneck block",
                what: format!("{} has a zero size", shape.describe()),
            });
        }
        let mut b = LayerBuilder::new(ctx, self.dtype, seed);
        let s = *shape;
        let map = |c: usize| [s.batch, c, s.side, s.side];
        b.seeded("x", &map(s.channels), 1.0, 0.0)?;
        let convs = s.convs();
        for (i, conv) in (1..).zip(convs) {
            b.seeded(
                &format!("conv{i}.weight"),
                &[conv.c_out, conv.c_in, conv.kh, conv.kw],
                1.0 / ((conv.c_in * conv.kh * conv.kw) as f32).sqrt(),
                0.0,
            )?;
            b.zeros(&format!("conv{i}.bias"), &[conv.c_out])?;
            b.seeded(&format!("bn{i}.weight"), &[conv.c_out], 0.2, 1.0)?;
            b.seeded(&format!("bn{i}.bias"), &[conv.c_out], 0.2, 0.0)?;
        }
        // Forward: conv{i} reads `input`, bn{i} (+ relu) writes `output`.
        let stages = [("x", "relu1"), ("relu1", "relu2"), ("relu2", "out")];
        for ((i, conv), (input, output)) in (1..).zip(convs).zip(stages) {
            let conv_out = format!("conv{i}.out");
            b.zeros(&conv_out, &map(conv.c_out))?;
            let [x, w, bias, y] = [
                input,
                &format!("conv{i}.weight"),
                &format!("conv{i}.bias"),
                &conv_out,
            ]
            .map(|n| b.get(n));
            b.forward
                .push(self.conv.bind(ctx, &conv, &x?, &w?, &bias?, &y?)?);
            b.product(
                &format!("conv{i}"),
                ProductKind::Conv(conv),
                [input, &format!("conv{i}.weight"), &conv_out],
                false,
            );
            let y = b.zeros(output, &map(conv.c_out))?;
            let (mean, rstd) = (
                b.zeros_of(&format!("bn{i}.mean"), &[conv.c_out], DType::F32)?,
                b.zeros_of(&format!("bn{i}.rstd"), &[conv.c_out], DType::F32)?,
            );
            let bn = BatchNormShape {
                n: s.batch,
                channels: conv.c_out,
                hw: s.side * s.side,
                eps: EPS,
                relu: true,
            };
            let residual = if i == 3 { Some(b.get("x")?) } else { None };
            let (gamma, beta) = (
                b.get(&format!("bn{i}.weight"))?,
                b.get(&format!("bn{i}.bias"))?,
            );
            let out = BatchNormOut {
                y: &y,
                mean: &mean,
                rstd: &rstd,
            };
            b.forward.push(self.batchnorm.bind(
                ctx,
                &bn,
                &b.get(&conv_out)?,
                &gamma,
                &beta,
                residual.as_ref(),
                out,
            )?);
            b.save(&[
                input,
                &conv_out,
                &format!("bn{i}.mean"),
                &format!("bn{i}.rstd"),
            ]);
        }
        // The last ReLU's output: its backward reads the mask from it.
        b.save(&["out"]);
        self.backward(ctx, &s, &mut b, stages)?;
        b.finish()
    }

    fn backward(
        &self,
        ctx: &GpuContext,
        s: &BottleneckShape,
        b: &mut LayerBuilder<'_>,
        stages: [(&str, &str); 3],
    ) -> Result<()> {
        let map = |c: usize| [s.batch, c, s.side, s.side];
        b.seeded("d.out", &map(s.channels), 1.0, 0.0)?;
        let convs = s.convs();
        for ((i, conv), (input, output)) in (1_usize..4).zip(convs).zip(stages).rev() {
            let bn = BatchNormShape {
                n: s.batch,
                channels: conv.c_out,
                hw: s.side * s.side,
                eps: EPS,
                relu: true,
            };
            let conv_out = format!("conv{i}.out");
            let dc = b.zeros(&format!("d.{conv_out}"), &map(conv.c_out))?;
            let dgamma = b.zeros(&format!("d.bn{i}.weight"), &[conv.c_out])?;
            let dbeta = b.zeros(&format!("d.bn{i}.bias"), &[conv.c_out])?;
            let dres = if i == 3 {
                Some(b.zeros("d.shortcut", &map(s.channels))?)
            } else {
                None
            };
            let (y, mean, rstd) = (
                b.get(output)?,
                b.get(&format!("bn{i}.mean"))?,
                b.get(&format!("bn{i}.rstd"))?,
            );
            let grads = BatchNormGradOut {
                dx: &dc,
                dgamma: &dgamma,
                dbeta: &dbeta,
                dz: dres.as_ref(),
            };
            let saved = BatchNormOut {
                y: &y,
                mean: &mean,
                rstd: &rstd,
            };
            let (dy, x, gamma) = (
                b.get(&format!("d.{output}"))?,
                b.get(&conv_out)?,
                b.get(&format!("bn{i}.weight"))?,
            );
            b.backward.push(
                self.batchnorm
                    .bind_backward(ctx, &bn, &dy, &x, &gamma, saved, grads)?,
            );
            let d_input = if i == 1 {
                "d.x.conv1".to_string()
            } else {
                format!("d.{input}")
            };
            let dx = b.zeros(&d_input, &map(conv.c_in))?;
            let dw = b.zeros(
                &format!("d.conv{i}.weight"),
                &[conv.c_out, conv.c_in, conv.kh, conv.kw],
            )?;
            let (w, x_in) = (b.get(&format!("conv{i}.weight"))?, b.get(input)?);
            b.backward
                .push(self.conv_backward.bind_data(ctx, &conv, &dc, &w, &dx)?);
            b.product(
                &format!("conv{i} dx"),
                ProductKind::ConvData(conv),
                [
                    &format!("d.{conv_out}"),
                    &format!("conv{i}.weight"),
                    &d_input,
                ],
                true,
            );
            b.backward.push(
                self.conv_backward
                    .bind_filter(ctx, &conv, &dc, &x_in, &dw)?,
            );
            b.product(
                &format!("conv{i} dW"),
                ProductKind::ConvFilter(conv),
                [
                    &format!("d.{conv_out}"),
                    input,
                    &format!("d.conv{i}.weight"),
                ],
                true,
            );
        }
        let dx = b.zeros("d.x", &map(s.channels))?;
        b.backward.push(
            self.add
                .bind(ctx, &b.get("d.shortcut")?, &b.get("d.x.conv1")?, &dx)?,
        );
        Ok(())
    }
}
