//! What the small kernels added for layer backward passes share: one
//! `WORKGROUP_SIZE` override, built the same way.

use super::matmul::check_invocations;
use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::Result;
use crate::pipeline::{KernelPipeline, PipelineSpec, Slot};

/// Invocations per workgroup of the element-wise, per-row and per-channel
/// kernels of the layers (`add`, `heads`, the backward kernels, batchnorm);
/// a power of two, as the tree reductions need.
pub const LAYER_WORKGROUP_SIZE: u32 = 256;

/// Builds `source` in `dtype` with `slots` and `WORKGROUP_SIZE` =
/// [`LAYER_WORKGROUP_SIZE`].
pub(crate) fn layer_pipeline(
    ctx: &GpuContext,
    kernel: &'static str,
    source: &str,
    dtype: DType,
    slots: &[Slot],
) -> Result<KernelPipeline> {
    check_invocations(ctx, kernel, LAYER_WORKGROUP_SIZE)?;
    KernelPipeline::new(
        ctx,
        &PipelineSpec {
            kernel,
            source,
            dtype,
            slots,
            constants: &[("WORKGROUP_SIZE", f64::from(LAYER_WORKGROUP_SIZE))],
        },
    )
}

/// The `dispatch_1d` of `n` items at `per_group` per workgroup on `ctx`.
pub(crate) fn groups(ctx: &GpuContext, n: u32, per_group: u32) -> [u32; 3] {
    crate::pipeline::dispatch_1d(
        u64::from(n),
        per_group,
        ctx.device().limits().max_compute_workgroups_per_dimension,
    )
}
