//! Host side of `shaders/layernorm_backward.wgsl` (the input gradient) and
//! `shaders/layernorm_backward_params.wgsl` (gamma's and beta's).

use super::elementwise::{LAYER_WORKGROUP_SIZE, groups, layer_pipeline};
use super::{LayerNormShape, upload};
use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::Result;
use crate::pipeline::{Dispatch, KernelPipeline, Slot, submit, to_u32};
use crate::tensor::GpuTensor;

const KERNEL: &str = "layernorm_backward";
const PARAMS_KERNEL: &str = "layernorm_backward_params";

/// The shaders' `NormParams`, padded to 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    rows: u32,
    cols: u32,
    _pad: [u32; 2],
}

/// The saved tensors of a layernorm forward that its backward reads: the
/// input, gamma and the `f32` statistics.
#[derive(Clone, Copy, Debug)]
pub struct LayerNormSaved<'a> {
    /// The forward input, `rows * cols`.
    pub x: &'a GpuTensor,
    /// The scale, `cols`.
    pub gamma: &'a GpuTensor,
    /// Each row's mean (`f32`).
    pub mean: &'a GpuTensor,
    /// Each row's `1 / sqrt(var + eps)` (`f32`).
    pub rstd: &'a GpuTensor,
}

/// What [`LayerNormBackward::run`] returns.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerNormGrads {
    /// The input gradient.
    pub dx: Vec<f32>,
    /// gamma's gradient.
    pub dgamma: Vec<f32>,
    /// beta's gradient.
    pub dbeta: Vec<f32>,
}

/// Layernorm's two backward kernels, built once for one element type.
#[derive(Debug)]
pub struct LayerNormBackward {
    input: KernelPipeline,
    params: KernelPipeline,
    dtype: DType,
}

impl LayerNormBackward {
    /// Builds both pipelines in `dtype`.
    ///
    /// # Errors
    ///
    /// As [`Matmul::new`](super::Matmul::new).
    pub fn new(ctx: &GpuContext, dtype: DType) -> Result<Self> {
        let (r, w, u) = (Slot::Read, Slot::ReadWrite, Slot::Uniform);
        let input = layer_pipeline(
            ctx,
            KERNEL,
            include_str!("../../../../shaders/layernorm_backward.wgsl"),
            dtype,
            &[u, r, r, r, r, r, w],
        )?;
        let source = include_str!("../../../../shaders/layernorm_backward_params.wgsl");
        let params = layer_pipeline(ctx, PARAMS_KERNEL, source, dtype, &[u, r, r, r, r, w, w])?;
        Ok(Self {
            input,
            params,
            dtype,
        })
    }

    /// Binds the input gradient `dx` from `dy` and the saved tensors.
    ///
    /// # Errors
    ///
    /// The tensor checks and binding errors of
    /// [`Matmul::bind`](super::Matmul::bind).
    pub fn bind_input(
        &self,
        ctx: &GpuContext,
        shape: &LayerNormShape,
        dy: &GpuTensor,
        saved: LayerNormSaved<'_>,
        dx: &GpuTensor,
    ) -> Result<Dispatch> {
        let params = self.check(shape, dy, saved)?;
        dx.expect(KERNEL, "dx", shape.rows * shape.cols, self.dtype)?;
        saved
            .gamma
            .expect(KERNEL, "gamma", shape.cols, self.dtype)?;
        let buffers = [
            dy.buffer(),
            saved.x.buffer(),
            saved.gamma.buffer(),
            saved.mean.buffer(),
            saved.rstd.buffer(),
            dx.buffer(),
        ];
        self.input.bind(
            ctx,
            bytemuck::bytes_of(&params),
            &buffers,
            groups(ctx, params.rows, 1),
        )
    }

    /// Binds gamma's and beta's gradients (`cols` each) from `dy` and the
    /// saved tensors.
    ///
    /// # Errors
    ///
    /// As [`LayerNormBackward::bind_input`].
    pub fn bind_params(
        &self,
        ctx: &GpuContext,
        shape: &LayerNormShape,
        dy: &GpuTensor,
        saved: LayerNormSaved<'_>,
        dgamma: &GpuTensor,
        dbeta: &GpuTensor,
    ) -> Result<Dispatch> {
        let params = self.check(shape, dy, saved)?;
        dgamma.expect(PARAMS_KERNEL, "dgamma", shape.cols, self.dtype)?;
        dbeta.expect(PARAMS_KERNEL, "dbeta", shape.cols, self.dtype)?;
        let buffers = [
            dy.buffer(),
            saved.x.buffer(),
            saved.mean.buffer(),
            saved.rstd.buffer(),
            dgamma.buffer(),
            dbeta.buffer(),
        ];
        self.params.bind(
            ctx,
            bytemuck::bytes_of(&params),
            &buffers,
            groups(ctx, params.cols, LAYER_WORKGROUP_SIZE),
        )
    }

    fn check(
        &self,
        shape: &LayerNormShape,
        dy: &GpuTensor,
        saved: LayerNormSaved<'_>,
    ) -> Result<Params> {
        let elements = shape.rows * shape.cols;
        dy.expect(KERNEL, "dy", elements, self.dtype)?;
        saved.x.expect(KERNEL, "x", elements, self.dtype)?;
        saved.mean.expect(KERNEL, "mean", shape.rows, DType::F32)?;
        saved.rstd.expect(KERNEL, "rstd", shape.rows, DType::F32)?;
        to_u32(KERNEL, "elements", elements)?;
        Ok(Params {
            rows: to_u32(KERNEL, "rows", shape.rows)?,
            cols: to_u32(KERNEL, "cols", shape.cols)?,
            _pad: [0; 2],
        })
    }

    /// Uploads `dy`, `x`, `gamma` and the statistics, runs both kernels and
    /// reads the three gradients back.
    ///
    /// # Errors
    ///
    /// As [`LayerNormBackward::bind_input`], plus the device and read-back
    /// errors.
    #[allow(clippy::too_many_arguments, reason = "one argument per input")]
    pub async fn run(
        &self,
        ctx: &GpuContext,
        shape: &LayerNormShape,
        dy: &[f32],
        x: &[f32],
        gamma: &[f32],
        mean: &[f32],
        rstd: &[f32],
    ) -> Result<LayerNormGrads> {
        let dy = upload(ctx, "layernorm_backward dy", dy, self.dtype)?;
        let x = upload(ctx, "layernorm_backward x", x, self.dtype)?;
        let gamma = upload(ctx, "layernorm_backward gamma", gamma, self.dtype)?;
        let mean = upload(ctx, "layernorm_backward mean", mean, DType::F32)?;
        let rstd = upload(ctx, "layernorm_backward rstd", rstd, DType::F32)?;
        let dx = GpuTensor::zeros(
            ctx,
            "layernorm_backward dx",
            shape.rows * shape.cols,
            self.dtype,
        )?;
        let dgamma = GpuTensor::zeros(ctx, "layernorm_backward dgamma", shape.cols, self.dtype)?;
        let dbeta = GpuTensor::zeros(ctx, "layernorm_backward dbeta", shape.cols, self.dtype)?;
        let saved = LayerNormSaved {
            x: &x,
            gamma: &gamma,
            mean: &mean,
            rstd: &rstd,
        };
        let work = [
            self.bind_input(ctx, shape, &dy, saved, &dx)?,
            self.bind_params(ctx, shape, &dy, saved, &dgamma, &dbeta)?,
        ];
        submit(ctx, KERNEL, &work).await?;
        Ok(LayerNormGrads {
            dx: dx.read(ctx).await?,
            dgamma: dgamma.read(ctx).await?,
            dbeta: dbeta.read(ctx).await?,
        })
    }
}
