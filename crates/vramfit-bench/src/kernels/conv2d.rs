//! Host side of `shaders/conv2d.wgsl`: direct 2-D convolution forward.

use super::matmul::check_invocations;
use super::{run_and_read, upload};
use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::{BenchError, Result};
use crate::pipeline::{Dispatch, KernelPipeline, PipelineSpec, Slot, dispatch_1d, to_u32};
use crate::tensor::GpuTensor;

/// Invocations (outputs) per workgroup.
pub const CONV2D_WORKGROUP_SIZE: u32 = 256;

const KERNEL: &str = "conv2d";

/// An NCHW convolution with a square stride and symmetric zero padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv2dShape {
    /// Batch size.
    pub n: usize,
    /// Input channels.
    pub c_in: usize,
    /// Input height.
    pub h: usize,
    /// Input width.
    pub w: usize,
    /// Output channels.
    pub c_out: usize,
    /// Kernel height.
    pub kh: usize,
    /// Kernel width.
    pub kw: usize,
    /// Stride in both directions.
    pub stride: usize,
    /// Zero padding on every side.
    pub pad: usize,
}

impl Conv2dShape {
    /// Output height, `(h + 2 pad - kh) / stride + 1` (0 if the kernel does
    /// not fit).
    pub fn oh(&self) -> usize {
        (self.h + 2 * self.pad)
            .checked_sub(self.kh)
            .map_or(0, |span| span / self.stride.max(1) + 1)
    }

    /// Output width.
    pub fn ow(&self) -> usize {
        (self.w + 2 * self.pad)
            .checked_sub(self.kw)
            .map_or(0, |span| span / self.stride.max(1) + 1)
    }

    /// Elements of the input.
    pub fn x_len(&self) -> usize {
        self.n * self.c_in * self.h * self.w
    }

    /// Elements of the weight.
    pub fn w_len(&self) -> usize {
        self.c_out * self.c_in * self.kh * self.kw
    }

    /// Elements of the output.
    pub fn y_len(&self) -> usize {
        self.n * self.c_out * self.oh() * self.ow()
    }

    /// Floating-point operations, counting padding taps as real ones (the
    /// usual convention).
    pub fn flops(&self) -> f64 {
        2.0 * self.y_len() as f64 * (self.c_in * self.kh * self.kw) as f64
    }
}

/// The shaders' `ConvParams` (48 bytes; conv2d.wgsl and both backward
/// kernels), `total` counting the elements the kernel writes.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct Params {
    n: u32,
    c_in: u32,
    h: u32,
    w: u32,
    c_out: u32,
    kh: u32,
    kw: u32,
    stride: u32,
    pad: u32,
    oh: u32,
    ow: u32,
    pub(super) total: u32,
}

/// The conv2d kernel, built once for one element type.
#[derive(Debug)]
pub struct Conv2d {
    pipeline: KernelPipeline,
    dtype: DType,
}

impl Conv2d {
    /// Builds the pipeline in `dtype`.
    ///
    /// # Errors
    ///
    /// As [`Matmul::new`](super::Matmul::new).
    pub fn new(ctx: &GpuContext, dtype: DType) -> Result<Self> {
        check_invocations(ctx, KERNEL, CONV2D_WORKGROUP_SIZE)?;
        let pipeline = KernelPipeline::new(
            ctx,
            &PipelineSpec {
                kernel: KERNEL,
                source: include_str!("../../../../shaders/conv2d.wgsl"),
                dtype,
                slots: &[
                    Slot::Uniform,
                    Slot::Read,
                    Slot::Read,
                    Slot::Read,
                    Slot::ReadWrite,
                ],
                constants: &[("WORKGROUP_SIZE", f64::from(CONV2D_WORKGROUP_SIZE))],
            },
        )?;
        Ok(Self { pipeline, dtype })
    }

    /// Binds input `x`, weight `w`, `bias` (`c_out` elements) and output `y`.
    ///
    /// # Errors
    ///
    /// [`BenchError::InvalidShape`] for a zero stride or sizes beyond
    /// `u32`, the tensor checks and binding errors of
    /// [`Matmul::bind`](super::Matmul::bind).
    pub fn bind(
        &self,
        ctx: &GpuContext,
        shape: &Conv2dShape,
        x: &GpuTensor,
        w: &GpuTensor,
        bias: &GpuTensor,
        y: &GpuTensor,
    ) -> Result<Dispatch> {
        if shape.stride == 0 {
            return Err(BenchError::InvalidShape {
                kernel: KERNEL,
                what: "stride must be at least 1".into(),
            });
        }
        x.expect(KERNEL, "x", shape.x_len(), self.dtype)?;
        w.expect(KERNEL, "w", shape.w_len(), self.dtype)?;
        bias.expect(KERNEL, "bias", shape.c_out, self.dtype)?;
        y.expect(KERNEL, "y", shape.y_len(), self.dtype)?;
        let params = params(KERNEL, shape, shape.y_len())?;
        let max_x = ctx.device().limits().max_compute_workgroups_per_dimension;
        let groups = dispatch_1d(u64::from(params.total), CONV2D_WORKGROUP_SIZE, max_x);
        self.pipeline.bind(
            ctx,
            bytemuck::bytes_of(&params),
            &[x.buffer(), w.buffer(), bias.buffer(), y.buffer()],
            groups,
        )
    }

    /// Uploads the operands, runs the convolution and reads `y` back.
    ///
    /// # Errors
    ///
    /// As [`Conv2d::bind`], plus the device and read-back errors.
    pub async fn run(
        &self,
        ctx: &GpuContext,
        shape: &Conv2dShape,
        x: &[f32],
        w: &[f32],
        bias: &[f32],
    ) -> Result<Vec<f32>> {
        let x = upload(ctx, "conv2d x", x, self.dtype)?;
        let w = upload(ctx, "conv2d w", w, self.dtype)?;
        let bias = upload(ctx, "conv2d bias", bias, self.dtype)?;
        let y = GpuTensor::zeros(ctx, "conv2d y", shape.y_len(), self.dtype)?;
        let dispatch = self.bind(ctx, shape, &x, &w, &bias, &y)?;
        run_and_read(ctx, KERNEL, &[dispatch], &y).await
    }
}

/// The shader parameters of `shape`, writing `total` elements.
pub(super) fn params(kernel: &'static str, shape: &Conv2dShape, total: usize) -> Result<Params> {
    if shape.stride == 0 {
        return Err(BenchError::InvalidShape {
            kernel,
            what: "stride must be at least 1".into(),
        });
    }
    for (what, len) in [
        ("input elements", shape.x_len()),
        ("output elements", shape.y_len()),
    ] {
        to_u32(kernel, what, len)?;
    }
    let field = |what, value| to_u32(kernel, what, value);
    Ok(Params {
        n: field("n", shape.n)?,
        c_in: field("c_in", shape.c_in)?,
        h: field("h", shape.h)?,
        w: field("w", shape.w)?,
        c_out: field("c_out", shape.c_out)?,
        kh: field("kh", shape.kh)?,
        kw: field("kw", shape.kw)?,
        stride: field("stride", shape.stride)?,
        pad: field("pad", shape.pad)?,
        oh: field("oh", shape.oh())?,
        ow: field("ow", shape.ow())?,
        total: field("elements written", total)?,
    })
}
