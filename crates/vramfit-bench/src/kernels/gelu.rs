//! Host side of `shaders/gelu.wgsl`: GELU, tanh approximation.

use super::matmul::check_invocations;
use super::{run_and_read, upload};
use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::Result;
use crate::pipeline::{Dispatch, KernelPipeline, PipelineSpec, Slot, dispatch_1d, to_u32};
use crate::tensor::GpuTensor;

/// Invocations (elements) per workgroup.
pub const GELU_WORKGROUP_SIZE: u32 = 256;

const KERNEL: &str = "gelu";

/// The shader's `GeluParams`, padded to 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    _pad: [u32; 3],
}

/// The GELU kernel (`approximate='tanh'`), built once for one element type.
#[derive(Debug)]
pub struct Gelu {
    pipeline: KernelPipeline,
    dtype: DType,
}

impl Gelu {
    /// Builds the pipeline in `dtype`.
    ///
    /// # Errors
    ///
    /// As [`Matmul::new`](super::Matmul::new).
    pub fn new(ctx: &GpuContext, dtype: DType) -> Result<Self> {
        check_invocations(ctx, KERNEL, GELU_WORKGROUP_SIZE)?;
        let pipeline = KernelPipeline::new(
            ctx,
            &PipelineSpec {
                kernel: KERNEL,
                source: include_str!("../../../../shaders/gelu.wgsl"),
                dtype,
                slots: &[Slot::Uniform, Slot::Read, Slot::ReadWrite],
                constants: &[("WORKGROUP_SIZE", f64::from(GELU_WORKGROUP_SIZE))],
            },
        )?;
        Ok(Self { pipeline, dtype })
    }

    /// Binds input `x` and output `y` of equal length.
    ///
    /// # Errors
    ///
    /// The tensor checks and binding errors of
    /// [`Matmul::bind`](super::Matmul::bind).
    pub fn bind(&self, ctx: &GpuContext, x: &GpuTensor, y: &GpuTensor) -> Result<Dispatch> {
        x.expect(KERNEL, "x", x.len(), self.dtype)?;
        y.expect(KERNEL, "y", x.len(), self.dtype)?;
        let params = Params {
            n: to_u32(KERNEL, "n", x.len())?,
            _pad: [0; 3],
        };
        let groups = dispatch_1d(
            u64::from(params.n),
            GELU_WORKGROUP_SIZE,
            ctx.device().limits().max_compute_workgroups_per_dimension,
        );
        self.pipeline.bind(
            ctx,
            bytemuck::bytes_of(&params),
            &[x.buffer(), y.buffer()],
            groups,
        )
    }

    /// Uploads `x`, runs the kernel and reads `y` back.
    ///
    /// # Errors
    ///
    /// As [`Gelu::bind`], plus the device and read-back errors.
    pub async fn run(&self, ctx: &GpuContext, x: &[f32]) -> Result<Vec<f32>> {
        let x = upload(ctx, "gelu x", x, self.dtype)?;
        let y = GpuTensor::zeros(ctx, "gelu y", x.len(), self.dtype)?;
        let dispatch = self.bind(ctx, &x, &y)?;
        run_and_read(ctx, KERNEL, &[dispatch], &y).await
    }
}
