//! Host side of `shaders/layernorm.wgsl`: layer normalisation forward.

use super::matmul::check_invocations;
use super::{run_and_read, upload};
use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::Result;
use crate::pipeline::{Dispatch, KernelPipeline, PipelineSpec, Slot, dispatch_1d, to_u32};
use crate::tensor::GpuTensor;

/// Invocations per workgroup (one workgroup per row); a power of two.
pub const LAYERNORM_WORKGROUP_SIZE: u32 = 256;

const KERNEL: &str = "layernorm";

/// `rows` independent rows of `cols` features.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayerNormShape {
    /// Rows (tokens, or batch x sequence).
    pub rows: usize,
    /// Features per row, the normalised dimension.
    pub cols: usize,
    /// Added to the variance, as PyTorch's `eps` (default 1e-5).
    pub eps: f32,
}

impl LayerNormShape {
    /// Bytes that must move per call in `dtype`: x and y once, gamma and
    /// beta once, and the `f32` statistics. (The kernel reads each row of x
    /// three times, but a row fits in cache, so this is the figure a GB/s
    /// rate should be based on.)
    pub fn bytes(&self, dtype: DType) -> f64 {
        let elements = (2 * self.rows * self.cols + 2 * self.cols) as f64;
        elements * dtype.size() as f64 + (2 * self.rows * 4) as f64
    }
}

/// The shader's `NormParams`, padded to 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    rows: u32,
    cols: u32,
    eps: f32,
    _pad: u32,
}

/// What [`LayerNorm::run`] returns: the output and the per-row statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerNormOutput {
    /// The normalised rows, `rows * cols`.
    pub y: Vec<f32>,
    /// Each row's mean.
    pub mean: Vec<f32>,
    /// Each row's `1 / sqrt(variance + eps)`.
    pub rstd: Vec<f32>,
}

/// The layernorm kernel, built once for one element type.
#[derive(Debug)]
pub struct LayerNorm {
    pipeline: KernelPipeline,
    dtype: DType,
}

impl LayerNorm {
    /// Builds the pipeline in `dtype`.
    ///
    /// # Errors
    ///
    /// As [`Matmul::new`](super::Matmul::new).
    pub fn new(ctx: &GpuContext, dtype: DType) -> Result<Self> {
        check_invocations(ctx, KERNEL, LAYERNORM_WORKGROUP_SIZE)?;
        let pipeline = KernelPipeline::new(
            ctx,
            &PipelineSpec {
                kernel: KERNEL,
                source: include_str!("../../../../shaders/layernorm.wgsl"),
                dtype,
                slots: &[
                    Slot::Uniform,
                    Slot::Read,
                    Slot::Read,
                    Slot::Read,
                    Slot::ReadWrite,
                    Slot::ReadWrite,
                    Slot::ReadWrite,
                ],
                constants: &[("WORKGROUP_SIZE", f64::from(LAYERNORM_WORKGROUP_SIZE))],
            },
        )?;
        Ok(Self { pipeline, dtype })
    }

    /// Binds `x`, `gamma`, `beta`, the output `y` and the `f32` statistics
    /// `mean` and `rstd` (`rows` elements each).
    ///
    /// # Errors
    ///
    /// The tensor checks and binding errors of
    /// [`Matmul::bind`](super::Matmul::bind).
    #[allow(
        clippy::too_many_arguments,
        reason = "one argument per binding, in binding order"
    )]
    pub fn bind(
        &self,
        ctx: &GpuContext,
        shape: &LayerNormShape,
        x: &GpuTensor,
        gamma: &GpuTensor,
        beta: &GpuTensor,
        y: &GpuTensor,
        mean: &GpuTensor,
        rstd: &GpuTensor,
    ) -> Result<Dispatch> {
        let elements = shape.rows * shape.cols;
        x.expect(KERNEL, "x", elements, self.dtype)?;
        gamma.expect(KERNEL, "gamma", shape.cols, self.dtype)?;
        beta.expect(KERNEL, "beta", shape.cols, self.dtype)?;
        y.expect(KERNEL, "y", elements, self.dtype)?;
        mean.expect(KERNEL, "mean", shape.rows, DType::F32)?;
        rstd.expect(KERNEL, "rstd", shape.rows, DType::F32)?;
        to_u32(KERNEL, "elements", elements)?;
        let params = Params {
            rows: to_u32(KERNEL, "rows", shape.rows)?,
            cols: to_u32(KERNEL, "cols", shape.cols)?,
            eps: shape.eps,
            _pad: 0,
        };
        let groups = dispatch_1d(
            u64::from(params.rows),
            1,
            ctx.device().limits().max_compute_workgroups_per_dimension,
        );
        let buffers = [
            x.buffer(),
            gamma.buffer(),
            beta.buffer(),
            y.buffer(),
            mean.buffer(),
            rstd.buffer(),
        ];
        self.pipeline
            .bind(ctx, bytemuck::bytes_of(&params), &buffers, groups)
    }

    /// Uploads the operands, runs the kernel and reads `y`, `mean` and
    /// `rstd` back.
    ///
    /// # Errors
    ///
    /// As [`LayerNorm::bind`], plus the device and read-back errors.
    pub async fn run(
        &self,
        ctx: &GpuContext,
        shape: &LayerNormShape,
        x: &[f32],
        gamma: &[f32],
        beta: &[f32],
    ) -> Result<LayerNormOutput> {
        let x = upload(ctx, "layernorm x", x, self.dtype)?;
        let gamma = upload(ctx, "layernorm gamma", gamma, self.dtype)?;
        let beta = upload(ctx, "layernorm beta", beta, self.dtype)?;
        let y = GpuTensor::zeros(ctx, "layernorm y", shape.rows * shape.cols, self.dtype)?;
        let mean = GpuTensor::zeros(ctx, "layernorm mean", shape.rows, DType::F32)?;
        let rstd = GpuTensor::zeros(ctx, "layernorm rstd", shape.rows, DType::F32)?;
        let dispatch = self.bind(ctx, shape, &x, &gamma, &beta, &y, &mean, &rstd)?;
        let y = run_and_read(ctx, KERNEL, &[dispatch], &y).await?;
        Ok(LayerNormOutput {
            y,
            mean: mean.read(ctx).await?,
            rstd: rstd.read(ctx).await?,
        })
    }
}
