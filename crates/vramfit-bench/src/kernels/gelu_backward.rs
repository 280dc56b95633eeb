//! Host side of `shaders/gelu_backward.wgsl`: the gradient of GELU (tanh).

use super::elementwise::{LAYER_WORKGROUP_SIZE, groups, layer_pipeline};
use super::{run_and_read, upload};
use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::Result;
use crate::pipeline::{Dispatch, KernelPipeline, Slot, to_u32};
use crate::tensor::GpuTensor;

const KERNEL: &str = "gelu_backward";

/// The shader's `GeluParams`, padded to 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    _pad: [u32; 3],
}

/// GELU's backward kernel, built once for one element type.
#[derive(Debug)]
pub struct GeluBackward {
    pipeline: KernelPipeline,
    dtype: DType,
}

impl GeluBackward {
    /// Builds the pipeline in `dtype`.
    ///
    /// # Errors
    ///
    /// As [`Matmul::new`](super::Matmul::new).
    pub fn new(ctx: &GpuContext, dtype: DType) -> Result<Self> {
        let source = include_str!("../../../../shaders/gelu_backward.wgsl");
        let slots = [Slot::Uniform, Slot::Read, Slot::Read, Slot::ReadWrite];
        Ok(Self {
            pipeline: layer_pipeline(ctx, KERNEL, source, dtype, &slots)?,
            dtype,
        })
    }

    /// Binds the forward input `x`, the output gradient `dy` and the input
    /// gradient `dx`, all of `x`'s length.
    ///
    /// # Errors
    ///
    /// The tensor checks and binding errors of
    /// [`Matmul::bind`](super::Matmul::bind).
    pub fn bind(
        &self,
        ctx: &GpuContext,
        x: &GpuTensor,
        dy: &GpuTensor,
        dx: &GpuTensor,
    ) -> Result<Dispatch> {
        x.expect(KERNEL, "x", x.len(), self.dtype)?;
        dy.expect(KERNEL, "dy", x.len(), self.dtype)?;
        dx.expect(KERNEL, "dx", x.len(), self.dtype)?;
        let n = to_u32(KERNEL, "n", x.len())?;
        let params = Params { n, _pad: [0; 3] };
        self.pipeline.bind(
            ctx,
            bytemuck::bytes_of(&params),
            &[x.buffer(), dy.buffer(), dx.buffer()],
            groups(ctx, n, LAYER_WORKGROUP_SIZE),
        )
    }

    /// Uploads `x` and `dy`, runs the kernel and reads `dx` back.
    ///
    /// # Errors
    ///
    /// As [`GeluBackward::bind`], plus the device and read-back errors.
    pub async fn run(&self, ctx: &GpuContext, x: &[f32], dy: &[f32]) -> Result<Vec<f32>> {
        let (x, dy) = (
            upload(ctx, "gelu_backward x", x, self.dtype)?,
            upload(ctx, "gelu_backward dy", dy, self.dtype)?,
        );
        let dx = GpuTensor::zeros(ctx, "gelu_backward dx", x.len(), self.dtype)?;
        let dispatch = self.bind(ctx, &x, &dy, &dx)?;
        run_and_read(ctx, KERNEL, &[dispatch], &dx).await
    }
}
