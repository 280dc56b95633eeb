//! Host side of `shaders/add.wgsl`: element-wise `y = a + b`.

use super::elementwise::{LAYER_WORKGROUP_SIZE, groups, layer_pipeline};
use super::{run_and_read, upload};
use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::Result;
use crate::pipeline::{Dispatch, KernelPipeline, Slot, to_u32};
use crate::tensor::GpuTensor;

const KERNEL: &str = "add";

/// The shader's `AddParams`, padded to 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    _pad: [u32; 3],
}

/// The add kernel, built once for one element type.
#[derive(Debug)]
pub struct Add {
    pipeline: KernelPipeline,
    dtype: DType,
}

impl Add {
    /// Builds the pipeline in `dtype`.
    ///
    /// # Errors
    ///
    /// As [`Matmul::new`](super::Matmul::new).
    pub fn new(ctx: &GpuContext, dtype: DType) -> Result<Self> {
        let source = include_str!("../../../../shaders/add.wgsl");
        Ok(Self {
            pipeline: layer_pipeline(
                ctx,
                KERNEL,
                source,
                dtype,
                &[Slot::Uniform, Slot::Read, Slot::Read, Slot::ReadWrite],
            )?,
            dtype,
        })
    }

    /// Binds `a`, `b` and the output `y`, all of `a`'s length.
    ///
    /// # Errors
    ///
    /// The tensor checks and binding errors of
    /// [`Matmul::bind`](super::Matmul::bind).
    pub fn bind(
        &self,
        ctx: &GpuContext,
        a: &GpuTensor,
        b: &GpuTensor,
        y: &GpuTensor,
    ) -> Result<Dispatch> {
        a.expect(KERNEL, "a", a.len(), self.dtype)?;
        b.expect(KERNEL, "b", a.len(), self.dtype)?;
        y.expect(KERNEL, "y", a.len(), self.dtype)?;
        let n = to_u32(KERNEL, "n", a.len())?;
        let params = Params { n, _pad: [0; 3] };
        self.pipeline.bind(
            ctx,
            bytemuck::bytes_of(&params),
            &[a.buffer(), b.buffer(), y.buffer()],
            groups(ctx, n, LAYER_WORKGROUP_SIZE),
        )
    }

    /// Uploads `a` and `b`, adds them and reads the sum back.
    ///
    /// # Errors
    ///
    /// As [`Add::bind`], plus the device and read-back errors.
    pub async fn run(&self, ctx: &GpuContext, a: &[f32], b: &[f32]) -> Result<Vec<f32>> {
        let (a, b) = (
            upload(ctx, "add a", a, self.dtype)?,
            upload(ctx, "add b", b, self.dtype)?,
        );
        let y = GpuTensor::zeros(ctx, "add y", a.len(), self.dtype)?;
        let dispatch = self.bind(ctx, &a, &b, &y)?;
        run_and_read(ctx, KERNEL, &[dispatch], &y).await
    }
}
