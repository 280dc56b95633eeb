//! Host side of `shaders/batchnorm.wgsl` (training-mode batch norm with an
//! optional residual add and ReLU) and `shaders/batchnorm_backward.wgsl`.

use super::elementwise::{groups, layer_pipeline};
use super::upload;
use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::Result;
use crate::pipeline::{Dispatch, KernelPipeline, Slot, submit, to_u32};
use crate::tensor::GpuTensor;

const KERNEL: &str = "batchnorm";
const BACKWARD: &str = "batchnorm_backward";

/// NCHW batch norm over `channels` channels of `n` samples of `hw` pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BatchNormShape {
    /// Samples.
    pub n: usize,
    /// Channels (statistics are per channel).
    pub channels: usize,
    /// Pixels per channel and sample (`h * w`).
    pub hw: usize,
    /// Added to the variance (PyTorch's default 1e-5).
    pub eps: f32,
    /// ReLU after the normalisation (and the residual).
    pub relu: bool,
}

impl BatchNormShape {
    /// Elements of x and y.
    pub fn len(&self) -> usize {
        self.n * self.channels * self.hw
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The shader's `BnParams` (32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    c: u32,
    hw: u32,
    eps: f32,
    relu: u32,
    residual: u32,
    _pad: [u32; 2],
}

/// The backward shader's `BnBackwardParams` (32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct BackwardParams {
    n: u32,
    c: u32,
    hw: u32,
    relu: u32,
    write_dz: u32,
    _pad: [u32; 3],
}

/// What batch norm's forward writes: the output and the `f32` statistics.
#[derive(Clone, Copy, Debug)]
pub struct BatchNormOut<'a> {
    /// The output, like x.
    pub y: &'a GpuTensor,
    /// Each channel's mean (`f32`).
    pub mean: &'a GpuTensor,
    /// Each channel's `1 / sqrt(var + eps)` (`f32`).
    pub rstd: &'a GpuTensor,
}

/// The gradients batch norm's backward writes.
#[derive(Clone, Copy, Debug)]
pub struct BatchNormGradOut<'a> {
    /// The input gradient, like x.
    pub dx: &'a GpuTensor,
    /// gamma's gradient.
    pub dgamma: &'a GpuTensor,
    /// beta's gradient.
    pub dbeta: &'a GpuTensor,
    /// If given, the gradient after the ReLU mask, i.e. the residual
    /// branch's gradient.
    pub dz: Option<&'a GpuTensor>,
}

/// Values read back by [`BatchNorm::run`] and [`BatchNorm::run_backward`].
pub type Readback = Vec<Vec<f32>>;

/// Batch norm forward and backward, built once for one element type.
#[derive(Debug)]
pub struct BatchNorm {
    forward: KernelPipeline,
    backward: KernelPipeline,
    dtype: DType,
    /// Bound where an optional output is unused.
    placeholder: GpuTensor,
}

impl BatchNorm {
    /// Builds both pipelines in `dtype`.
    ///
    /// # Errors
    ///
    /// As [`Matmul::new`](super::Matmul::new).
    pub fn new(ctx: &GpuContext, dtype: DType) -> Result<Self> {
        let (r, w, u) = (Slot::Read, Slot::ReadWrite, Slot::Uniform);
        let forward = layer_pipeline(
            ctx,
            KERNEL,
            include_str!("../../../../shaders/batchnorm.wgsl"),
            dtype,
            &[u, r, r, r, r, w, w, w],
        )?;
        let source = include_str!("../../../../shaders/batchnorm_backward.wgsl");
        let backward = layer_pipeline(
            ctx,
            BACKWARD,
            source,
            dtype,
            &[u, r, r, r, r, r, r, w, w, w, w],
        )?;
        let placeholder = GpuTensor::zeros(ctx, "batchnorm placeholder", 1, dtype)?;
        Ok(Self {
            forward,
            backward,
            dtype,
            placeholder,
        })
    }

    /// Binds the forward: `x`, `gamma`, `beta` (`channels` each), an
    /// optional `residual` added before the ReLU, and the outputs.
    ///
    /// # Errors
    ///
    /// The tensor checks and binding errors of
    /// [`Matmul::bind`](super::Matmul::bind).
    #[allow(clippy::too_many_arguments, reason = "one argument per binding")]
    pub fn bind(
        &self,
        ctx: &GpuContext,
        shape: &BatchNormShape,
        x: &GpuTensor,
        gamma: &GpuTensor,
        beta: &GpuTensor,
        residual: Option<&GpuTensor>,
        out: BatchNormOut<'_>,
    ) -> Result<Dispatch> {
        x.expect(KERNEL, "x", shape.len(), self.dtype)?;
        gamma.expect(KERNEL, "gamma", shape.channels, self.dtype)?;
        beta.expect(KERNEL, "beta", shape.channels, self.dtype)?;
        if let Some(residual) = residual {
            residual.expect(KERNEL, "residual", shape.len(), self.dtype)?;
        }
        out.y.expect(KERNEL, "y", shape.len(), self.dtype)?;
        out.mean
            .expect(KERNEL, "mean", shape.channels, DType::F32)?;
        out.rstd
            .expect(KERNEL, "rstd", shape.channels, DType::F32)?;
        to_u32(KERNEL, "elements", shape.len())?;
        let params = Params {
            n: to_u32(KERNEL, "n", shape.n)?,
            c: to_u32(KERNEL, "channels", shape.channels)?,
            hw: to_u32(KERNEL, "hw", shape.hw)?,
            eps: shape.eps,
            relu: u32::from(shape.relu),
            residual: u32::from(residual.is_some()),
            _pad: [0; 2],
        };
        let buffers = [
            x.buffer(),
            gamma.buffer(),
            beta.buffer(),
            residual.unwrap_or(x).buffer(),
            out.y.buffer(),
            out.mean.buffer(),
            out.rstd.buffer(),
        ];
        self.forward.bind(
            ctx,
            bytemuck::bytes_of(&params),
            &buffers,
            groups(ctx, params.c, 1),
        )
    }

    /// Binds the backward from the output gradient `dy` and the saved `x`,
    /// `y` (read for the ReLU mask only), `gamma` and statistics.
    ///
    /// # Errors
    ///
    /// As [`BatchNorm::bind`].
    #[allow(clippy::too_many_arguments, reason = "one argument per binding")]
    pub fn bind_backward(
        &self,
        ctx: &GpuContext,
        shape: &BatchNormShape,
        dy: &GpuTensor,
        x: &GpuTensor,
        gamma: &GpuTensor,
        saved: BatchNormOut<'_>,
        grads: BatchNormGradOut<'_>,
    ) -> Result<Dispatch> {
        for (name, t) in [("dy", dy), ("x", x), ("y", saved.y), ("dx", grads.dx)] {
            t.expect(BACKWARD, name, shape.len(), self.dtype)?;
        }
        for (name, t) in [
            ("gamma", gamma),
            ("dgamma", grads.dgamma),
            ("dbeta", grads.dbeta),
        ] {
            t.expect(BACKWARD, name, shape.channels, self.dtype)?;
        }
        saved
            .mean
            .expect(BACKWARD, "mean", shape.channels, DType::F32)?;
        saved
            .rstd
            .expect(BACKWARD, "rstd", shape.channels, DType::F32)?;
        if let Some(dz) = grads.dz {
            dz.expect(BACKWARD, "dz", shape.len(), self.dtype)?;
        }
        let params = BackwardParams {
            n: to_u32(BACKWARD, "n", shape.n)?,
            c: to_u32(BACKWARD, "channels", shape.channels)?,
            hw: to_u32(BACKWARD, "hw", shape.hw)?,
            relu: u32::from(shape.relu),
            write_dz: u32::from(grads.dz.is_some()),
            _pad: [0; 3],
        };
        let buffers = [
            dy.buffer(),
            x.buffer(),
            saved.y.buffer(),
            gamma.buffer(),
            saved.mean.buffer(),
            saved.rstd.buffer(),
            grads.dx.buffer(),
            grads.dgamma.buffer(),
            grads.dbeta.buffer(),
            grads.dz.unwrap_or(&self.placeholder).buffer(),
        ];
        self.backward.bind(
            ctx,
            bytemuck::bytes_of(&params),
            &buffers,
            groups(ctx, params.c, 1),
        )
    }

    /// Uploads the operands, runs the forward and reads back
    /// `[y, mean, rstd]`.
    ///
    /// # Errors
    ///
    /// As [`BatchNorm::bind`], plus the device and read-back errors.
    pub async fn run(
        &self,
        ctx: &GpuContext,
        shape: &BatchNormShape,
        x: &[f32],
        gamma: &[f32],
        beta: &[f32],
        residual: Option<&[f32]>,
    ) -> Result<Readback> {
        let x = upload(ctx, "batchnorm x", x, self.dtype)?;
        let gamma = upload(ctx, "batchnorm gamma", gamma, self.dtype)?;
        let beta = upload(ctx, "batchnorm beta", beta, self.dtype)?;
        let residual = residual
            .map(|r| upload(ctx, "batchnorm residual", r, self.dtype))
            .transpose()?;
        let y = GpuTensor::zeros(ctx, "batchnorm y", shape.len(), self.dtype)?;
        let mean = GpuTensor::zeros(ctx, "batchnorm mean", shape.channels, DType::F32)?;
        let rstd = GpuTensor::zeros(ctx, "batchnorm rstd", shape.channels, DType::F32)?;
        let out = BatchNormOut {
            y: &y,
            mean: &mean,
            rstd: &rstd,
        };
        let dispatch = self.bind(ctx, shape, &x, &gamma, &beta, residual.as_ref(), out)?;
        submit(ctx, KERNEL, &[dispatch]).await?;
        Ok(vec![
            y.read(ctx).await?,
            mean.read(ctx).await?,
            rstd.read(ctx).await?,
        ])
    }

    /// Uploads the operands (`stats` = `[y, mean, rstd]` as the forward
    /// returned them), runs the backward and reads back
    /// `[dx, dgamma, dbeta, dz]`.
    ///
    /// # Errors
    ///
    /// As [`BatchNorm::bind_backward`], plus the device and read-back errors.
    pub async fn run_backward(
        &self,
        ctx: &GpuContext,
        shape: &BatchNormShape,
        dy: &[f32],
        x: &[f32],
        gamma: &[f32],
        stats: &[Vec<f32>],
    ) -> Result<Readback> {
        let part = |i: usize| stats.get(i).map_or(&[][..], Vec::as_slice);
        let dy = upload(ctx, "batchnorm_backward dy", dy, self.dtype)?;
        let x = upload(ctx, "batchnorm_backward x", x, self.dtype)?;
        let gamma = upload(ctx, "batchnorm_backward gamma", gamma, self.dtype)?;
        let y = upload(ctx, "batchnorm_backward y", part(0), self.dtype)?;
        let mean = upload(ctx, "batchnorm_backward mean", part(1), DType::F32)?;
        let rstd = upload(ctx, "batchnorm_backward rstd", part(2), DType::F32)?;
        let zeros = |label, len| GpuTensor::zeros(ctx, label, len, self.dtype);
        let (dx, dz) = (
            zeros("batchnorm_backward dx", shape.len())?,
            zeros("batchnorm_backward dz", shape.len())?,
        );
        let (dgamma, dbeta) = (
            zeros("batchnorm_backward dgamma", shape.channels)?,
            zeros("batchnorm_backward dbeta", shape.channels)?,
        );
        let saved = BatchNormOut {
            y: &y,
            mean: &mean,
            rstd: &rstd,
        };
        let grads = BatchNormGradOut {
            dx: &dx,
            dgamma: &dgamma,
            dbeta: &dbeta,
            dz: Some(&dz),
        };
        let dispatch = self.bind_backward(ctx, shape, &dy, &x, &gamma, saved, grads)?;
        submit(ctx, BACKWARD, &[dispatch]).await?;
        Ok(vec![
            dx.read(ctx).await?,
            dgamma.read(ctx).await?,
            dbeta.read(ctx).await?,
            dz.read(ctx).await?,
        ])
    }
}
