//! Host side of `shaders/conv2d_backward_data.wgsl` (the input gradient) and
//! `shaders/conv2d_backward_filter.wgsl` (the weight gradient) of a direct
//! convolution.

use super::conv2d::params;
use super::elementwise::{LAYER_WORKGROUP_SIZE, groups, layer_pipeline};
use super::{Conv2dShape, run_and_read, upload};
use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::Result;
use crate::pipeline::{Dispatch, KernelPipeline, Slot};
use crate::tensor::GpuTensor;

const DATA: &str = "conv2d_backward_data";
const FILTER: &str = "conv2d_backward_filter";

/// Which gradient.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvGrad {
    /// The input gradient, `dx = conv_transpose(dy, w)`.
    Data,
    /// The weight gradient, `dw = correlate(x, dy)`.
    Filter,
}

/// Both convolution backward kernels, built once for one element type.
#[derive(Debug)]
pub struct Conv2dBackward {
    data: KernelPipeline,
    filter: KernelPipeline,
    dtype: DType,
}

impl Conv2dBackward {
    /// Builds both pipelines in `dtype`.
    ///
    /// # Errors
    ///
    /// As [`Matmul::new`](super::Matmul::new).
    pub fn new(ctx: &GpuContext, dtype: DType) -> Result<Self> {
        let slots = [Slot::Uniform, Slot::Read, Slot::Read, Slot::ReadWrite];
        let data = layer_pipeline(
            ctx,
            DATA,
            include_str!("../../../../shaders/conv2d_backward_data.wgsl"),
            dtype,
            &slots,
        )?;
        let filter = layer_pipeline(
            ctx,
            FILTER,
            include_str!("../../../../shaders/conv2d_backward_filter.wgsl"),
            dtype,
            &slots,
        )?;
        Ok(Self {
            data,
            filter,
            dtype,
        })
    }

    /// Binds the input gradient `dx` from the output gradient `dy` and the
    /// weight `w`.
    ///
    /// # Errors
    ///
    /// [`BenchError::InvalidShape`] for a zero stride, the tensor checks and
    /// binding errors of [`Matmul::bind`](super::Matmul::bind).
    pub fn bind_data(
        &self,
        ctx: &GpuContext,
        shape: &Conv2dShape,
        dy: &GpuTensor,
        w: &GpuTensor,
        dx: &GpuTensor,
    ) -> Result<Dispatch> {
        dy.expect(DATA, "dy", shape.y_len(), self.dtype)?;
        w.expect(DATA, "w", shape.w_len(), self.dtype)?;
        dx.expect(DATA, "dx", shape.x_len(), self.dtype)?;
        let params = params(DATA, shape, shape.x_len())?;
        self.data.bind(
            ctx,
            bytemuck::bytes_of(&params),
            &[dy.buffer(), w.buffer(), dx.buffer()],
            groups(ctx, params.total, LAYER_WORKGROUP_SIZE),
        )
    }

    /// Binds the weight gradient `dw` from the output gradient `dy` and the
    /// saved input `x`.
    ///
    /// # Errors
    ///
    /// As [`Conv2dBackward::bind_data`].
    pub fn bind_filter(
        &self,
        ctx: &GpuContext,
        shape: &Conv2dShape,
        dy: &GpuTensor,
        x: &GpuTensor,
        dw: &GpuTensor,
    ) -> Result<Dispatch> {
        dy.expect(FILTER, "dy", shape.y_len(), self.dtype)?;
        x.expect(FILTER, "x", shape.x_len(), self.dtype)?;
        dw.expect(FILTER, "dw", shape.w_len(), self.dtype)?;
        let params = params(FILTER, shape, shape.w_len())?;
        self.filter.bind(
            ctx,
            bytemuck::bytes_of(&params),
            &[dy.buffer(), x.buffer(), dw.buffer()],
            groups(ctx, params.total, LAYER_WORKGROUP_SIZE),
        )
    }

    /// Uploads `dy` and the other operand (`w` for [`ConvGrad::Data`], `x`
    /// for [`ConvGrad::Filter`]), runs the kernel and reads the gradient back.
    ///
    /// # Errors
    ///
    /// As [`Conv2dBackward::bind_data`], plus the device and read-back errors.
    pub async fn run(
        &self,
        ctx: &GpuContext,
        grad: ConvGrad,
        shape: &Conv2dShape,
        dy: &[f32],
        other: &[f32],
    ) -> Result<Vec<f32>> {
        let dy = upload(ctx, "conv2d_backward dy", dy, self.dtype)?;
        let other = upload(ctx, "conv2d_backward operand", other, self.dtype)?;
        let (kernel, len) = match grad {
            ConvGrad::Data => (DATA, shape.x_len()),
            ConvGrad::Filter => (FILTER, shape.w_len()),
        };
        let out = GpuTensor::zeros(ctx, "conv2d_backward out", len, self.dtype)?;
        let dispatch = match grad {
            ConvGrad::Data => self.bind_data(ctx, shape, &dy, &other, &out)?,
            ConvGrad::Filter => self.bind_filter(ctx, shape, &dy, &other, &out)?,
        };
        run_and_read(ctx, kernel, &[dispatch], &out).await
    }
}
