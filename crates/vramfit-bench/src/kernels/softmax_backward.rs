//! Host side of `shaders/softmax_backward.wgsl`: the gradient of a row-wise
//! softmax from its saved output.

use super::elementwise::{groups, layer_pipeline};
use super::{run_and_read, upload};
use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::Result;
use crate::pipeline::{Dispatch, KernelPipeline, Slot, to_u32};
use crate::tensor::GpuTensor;

const KERNEL: &str = "softmax_backward";

/// The shader's `SoftmaxParams`, padded to 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    rows: u32,
    cols: u32,
    _pad: [u32; 2],
}

/// Softmax's backward kernel, built once for one element type.
#[derive(Debug)]
pub struct SoftmaxBackward {
    pipeline: KernelPipeline,
    dtype: DType,
}

impl SoftmaxBackward {
    /// Builds the pipeline in `dtype`.
    ///
    /// # Errors
    ///
    /// As [`Matmul::new`](super::Matmul::new).
    pub fn new(ctx: &GpuContext, dtype: DType) -> Result<Self> {
        let source = include_str!("../../../../shaders/softmax_backward.wgsl");
        let slots = [Slot::Uniform, Slot::Read, Slot::Read, Slot::ReadWrite];
        Ok(Self {
            pipeline: layer_pipeline(ctx, KERNEL, source, dtype, &slots)?,
            dtype,
        })
    }

    /// Binds the saved output `y`, its gradient `dy` and the input gradient
    /// `dx`, each `rows * cols`.
    ///
    /// # Errors
    ///
    /// The tensor checks and binding errors of
    /// [`Matmul::bind`](super::Matmul::bind).
    pub fn bind(
        &self,
        ctx: &GpuContext,
        rows: usize,
        cols: usize,
        y: &GpuTensor,
        dy: &GpuTensor,
        dx: &GpuTensor,
    ) -> Result<Dispatch> {
        for (name, t) in [("y", y), ("dy", dy), ("dx", dx)] {
            t.expect(KERNEL, name, rows * cols, self.dtype)?;
        }
        to_u32(KERNEL, "elements", rows * cols)?;
        let params = Params {
            rows: to_u32(KERNEL, "rows", rows)?,
            cols: to_u32(KERNEL, "cols", cols)?,
            _pad: [0; 2],
        };
        self.pipeline.bind(
            ctx,
            bytemuck::bytes_of(&params),
            &[y.buffer(), dy.buffer(), dx.buffer()],
            groups(ctx, params.rows, 1),
        )
    }

    /// Uploads `y` and `dy`, runs the kernel and reads `dx` back.
    ///
    /// # Errors
    ///
    /// As [`SoftmaxBackward::bind`], plus the device and read-back errors.
    pub async fn run(
        &self,
        ctx: &GpuContext,
        rows: usize,
        cols: usize,
        y: &[f32],
        dy: &[f32],
    ) -> Result<Vec<f32>> {
        let (y, dy) = (
            upload(ctx, "softmax_backward y", y, self.dtype)?,
            upload(ctx, "softmax_backward dy", dy, self.dtype)?,
        );
        let dx = GpuTensor::zeros(ctx, "softmax_backward dx", rows * cols, self.dtype)?;
        let dispatch = self.bind(ctx, rows, cols, &y, &dy, &dx)?;
        run_and_read(ctx, KERNEL, &[dispatch], &dx).await
    }
}
