//! Host side of `shaders/softmax.wgsl`: row-wise softmax, optionally causal.

use super::matmul::check_invocations;
use super::{run_and_read, upload};
use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::Result;
use crate::pipeline::{Dispatch, KernelPipeline, PipelineSpec, Slot, dispatch_1d, to_u32};
use crate::tensor::GpuTensor;

/// Invocations per workgroup (one workgroup per row); a power of two.
pub const SOFTMAX_WORKGROUP_SIZE: u32 = 256;

const KERNEL: &str = "softmax";

/// `rows` independent rows of `cols` logits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SoftmaxShape {
    /// Rows.
    pub rows: usize,
    /// Entries per row.
    pub cols: usize,
    /// If `Some(s)`, row `r` is query `r % s` of attention scores and
    /// columns after it are masked (PyTorch's `is_causal=True`).
    pub causal_period: Option<usize>,
}

impl SoftmaxShape {
    /// Bytes that must move per call: x read and y written once.
    pub fn bytes(&self, dtype: DType) -> f64 {
        (2 * self.rows * self.cols) as f64 * dtype.size() as f64
    }
}

/// The shader's `SoftmaxParams`, padded to 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    rows: u32,
    cols: u32,
    causal_period: u32,
    _pad: u32,
}

/// The softmax kernel, built once for one element type.
#[derive(Debug)]
pub struct Softmax {
    pipeline: KernelPipeline,
    dtype: DType,
}

impl Softmax {
    /// Builds the pipeline in `dtype`.
    ///
    /// # Errors
    ///
    /// As [`Matmul::new`](super::Matmul::new).
    pub fn new(ctx: &GpuContext, dtype: DType) -> Result<Self> {
        check_invocations(ctx, KERNEL, SOFTMAX_WORKGROUP_SIZE)?;
        let pipeline = KernelPipeline::new(
            ctx,
            &PipelineSpec {
                kernel: KERNEL,
                source: include_str!("../../../../shaders/softmax.wgsl"),
                dtype,
                slots: &[Slot::Uniform, Slot::Read, Slot::ReadWrite],
                constants: &[("WORKGROUP_SIZE", f64::from(SOFTMAX_WORKGROUP_SIZE))],
            },
        )?;
        Ok(Self { pipeline, dtype })
    }

    /// Binds input `x` and output `y` (both `rows * cols`).
    ///
    /// # Errors
    ///
    /// The tensor checks and binding errors of
    /// [`Matmul::bind`](super::Matmul::bind).
    pub fn bind(
        &self,
        ctx: &GpuContext,
        shape: &SoftmaxShape,
        x: &GpuTensor,
        y: &GpuTensor,
    ) -> Result<Dispatch> {
        let elements = shape.rows * shape.cols;
        x.expect(KERNEL, "x", elements, self.dtype)?;
        y.expect(KERNEL, "y", elements, self.dtype)?;
        to_u32(KERNEL, "elements", elements)?;
        let params = Params {
            rows: to_u32(KERNEL, "rows", shape.rows)?,
            cols: to_u32(KERNEL, "cols", shape.cols)?,
            causal_period: to_u32(KERNEL, "causal period", shape.causal_period.unwrap_or(0))?,
            _pad: 0,
        };
        let groups = dispatch_1d(
            u64::from(params.rows),
            1,
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
    /// As [`Softmax::bind`], plus the device and read-back errors.
    pub async fn run(&self, ctx: &GpuContext, shape: &SoftmaxShape, x: &[f32]) -> Result<Vec<f32>> {
        let x = upload(ctx, "softmax x", x, self.dtype)?;
        let y = GpuTensor::zeros(ctx, "softmax y", shape.rows * shape.cols, self.dtype)?;
        let dispatch = self.bind(ctx, shape, &x, &y)?;
        run_and_read(ctx, KERNEL, &[dispatch], &y).await
    }
}
