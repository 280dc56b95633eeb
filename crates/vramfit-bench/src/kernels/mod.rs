//! The neural-network kernels: one module per WGSL file in `shaders/`.
//!
//! Every kernel follows the same pattern, so a layer can chain them on GPU
//! buffers without reading back:
//!
//! - `new(&GpuContext, .., DType) -> Result<Self>` builds the pipeline once,
//!   specialised for `f32` or `f16` (see [`DType::specialize`]).
//! - `bind(&self, ctx, shape, tensors..) -> Result<Dispatch>` checks the
//!   [`GpuTensor`] sizes and types against the shape and returns a
//!   [`Dispatch`] to record into any compute pass (see
//!   [`encode_all`](crate::encode_all)); the same `Dispatch` can be
//!   recorded many times.
//! - `run(&self, ctx, shape, &[f32]..)` is the convenience path for tests:
//!   upload, dispatch, read back.
//!
//! [`DType::specialize`]: crate::DType::specialize
//! [`GpuTensor`]: crate::GpuTensor
//! [`Dispatch`]: crate::Dispatch

mod adam;
mod add;
mod attention;
mod batchnorm;
mod conv2d;
mod conv2d_backward;
mod elementwise;
mod gelu;
mod gelu_backward;
mod heads;
mod layernorm;
mod layernorm_backward;
mod matmul;
mod softmax;
mod softmax_backward;

pub use adam::{ADAM_WORKGROUP_SIZE, Adam, AdamConfig, AdamState};
pub use attention::{
    ATTENTION_BLOCK_Q, ATTENTION_MAX_HEAD_DIM, Attention, AttentionShape, AttentionVariant,
};
pub use conv2d::{CONV2D_WORKGROUP_SIZE, Conv2d, Conv2dShape};
pub use gelu::{GELU_WORKGROUP_SIZE, Gelu};
pub use layernorm::{LAYERNORM_WORKGROUP_SIZE, LayerNorm, LayerNormOutput, LayerNormShape};
pub use matmul::{
    MATMUL_NAIVE_WORKGROUP, MATMUL_TILED_BK, MATMUL_TILED_OUTPUTS, MATMUL_TILED_WORKGROUP, Matmul,
    MatmulShape, MatmulVariant,
};
pub use softmax::{SOFTMAX_WORKGROUP_SIZE, Softmax, SoftmaxShape};
// Added for the layers' forward and backward passes (see `crate::layers`).
pub use add::Add;
pub use batchnorm::{BatchNorm, BatchNormGradOut, BatchNormOut, BatchNormShape, Readback};
pub use conv2d_backward::{Conv2dBackward, ConvGrad};
pub use elementwise::LAYER_WORKGROUP_SIZE;
pub use gelu_backward::GeluBackward;
pub use heads::{Heads, HeadsShape};
pub use layernorm_backward::{LayerNormBackward, LayerNormGrads, LayerNormSaved};
pub use softmax_backward::SoftmaxBackward;

use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::Result;
use crate::pipeline::{Dispatch, submit};
use crate::tensor::GpuTensor;

/// Uploads `values` as a tensor of `dtype` labelled `label`.
fn upload(ctx: &GpuContext, label: &str, values: &[f32], dtype: DType) -> Result<GpuTensor> {
    GpuTensor::from_f32(ctx, label, values, dtype)
}

/// Submits `dispatches` and reads `out` back: the tail of every `run`.
async fn run_and_read(
    ctx: &GpuContext,
    kernel: &'static str,
    dispatches: &[Dispatch],
    out: &GpuTensor,
) -> Result<Vec<f32>> {
    submit(ctx, kernel, dispatches).await?;
    out.read(ctx).await
}
