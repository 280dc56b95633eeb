//! Host side of `shaders/adam.wgsl`: one Adam/AdamW optimizer step.

use super::matmul::check_invocations;
use super::upload;
use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::{BenchError, Result};
use crate::pipeline::{Dispatch, KernelPipeline, PipelineSpec, Slot, dispatch_1d, submit, to_u32};
use crate::tensor::GpuTensor;

/// Invocations (parameters) per workgroup.
pub const ADAM_WORKGROUP_SIZE: u32 = 256;

const KERNEL: &str = "adam";

/// Hyper-parameters and the step number, as `torch.optim.AdamW`'s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamConfig {
    /// Learning rate.
    pub lr: f32,
    /// Decay of the first moment.
    pub beta1: f32,
    /// Decay of the second moment.
    pub beta2: f32,
    /// Added to the denominator.
    pub eps: f32,
    /// Decoupled weight decay (0 = Adam).
    pub weight_decay: f32,
    /// The step being taken, from 1.
    pub step: u32,
}

impl Default for AdamConfig {
    /// PyTorch's AdamW defaults at step 1.
    fn default() -> Self {
        Self {
            lr: 1e-3,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay: 1e-2,
            step: 1,
        }
    }
}

impl AdamConfig {
    /// `(1 - beta1^step, 1 - beta2^step)`, the bias corrections.
    pub fn bias_corrections(&self) -> (f32, f32) {
        let step = i32::try_from(self.step).unwrap_or(i32::MAX);
        (
            1.0 - f64::from(self.beta1).powi(step) as f32,
            1.0 - f64::from(self.beta2).powi(step) as f32,
        )
    }

    /// Bytes that must move per parameter: the gradient read, parameter and
    /// both moments read and written (`f32`).
    pub fn bytes_per_param(grad: DType) -> f64 {
        grad.size() as f64 + 6.0 * 4.0
    }
}

/// The shader's `AdamParams` (32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    lr: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    weight_decay: f32,
    bias1: f32,
    bias2: f32,
}

/// Parameters and moments after [`Adam::run`].
#[derive(Clone, Debug, PartialEq)]
pub struct AdamState {
    /// The updated parameters.
    pub param: Vec<f32>,
    /// The first moment.
    pub m: Vec<f32>,
    /// The second moment.
    pub v: Vec<f32>,
}

/// The Adam kernel: gradients in `dtype`, everything else `f32`.
#[derive(Debug)]
pub struct Adam {
    pipeline: KernelPipeline,
    dtype: DType,
}

impl Adam {
    /// Builds the pipeline for gradients in `dtype`.
    ///
    /// # Errors
    ///
    /// As [`Matmul::new`](super::Matmul::new).
    pub fn new(ctx: &GpuContext, dtype: DType) -> Result<Self> {
        check_invocations(ctx, KERNEL, ADAM_WORKGROUP_SIZE)?;
        let pipeline = KernelPipeline::new(
            ctx,
            &PipelineSpec {
                kernel: KERNEL,
                source: include_str!("../../../../shaders/adam.wgsl"),
                dtype,
                slots: &[
                    Slot::Uniform,
                    Slot::Read,
                    Slot::ReadWrite,
                    Slot::ReadWrite,
                    Slot::ReadWrite,
                ],
                constants: &[("WORKGROUP_SIZE", f64::from(ADAM_WORKGROUP_SIZE))],
            },
        )?;
        Ok(Self { pipeline, dtype })
    }

    /// Binds the gradient (kernel type) and the `f32` parameter and moment
    /// tensors, all of one length, for one step with `config`.
    ///
    /// # Errors
    ///
    /// [`BenchError::InvalidShape`] for step 0, the tensor checks and
    /// binding errors of [`Matmul::bind`](super::Matmul::bind).
    pub fn bind(
        &self,
        ctx: &GpuContext,
        config: &AdamConfig,
        grad: &GpuTensor,
        param: &GpuTensor,
        m: &GpuTensor,
        v: &GpuTensor,
    ) -> Result<Dispatch> {
        if config.step == 0 {
            return Err(BenchError::InvalidShape {
                kernel: KERNEL,
                what: "steps count from 1".into(),
            });
        }
        let n = grad.len();
        grad.expect(KERNEL, "grad", n, self.dtype)?;
        param.expect(KERNEL, "param", n, DType::F32)?;
        m.expect(KERNEL, "m", n, DType::F32)?;
        v.expect(KERNEL, "v", n, DType::F32)?;
        let (bias1, bias2) = config.bias_corrections();
        let params = Params {
            n: to_u32(KERNEL, "n", n)?,
            lr: config.lr,
            beta1: config.beta1,
            beta2: config.beta2,
            eps: config.eps,
            weight_decay: config.weight_decay,
            bias1,
            bias2,
        };
        let groups = dispatch_1d(
            u64::from(params.n),
            ADAM_WORKGROUP_SIZE,
            ctx.device().limits().max_compute_workgroups_per_dimension,
        );
        self.pipeline.bind(
            ctx,
            bytemuck::bytes_of(&params),
            &[grad.buffer(), param.buffer(), m.buffer(), v.buffer()],
            groups,
        )
    }

    /// Runs one step per entry of `grads` (in order, steps 1, 2, ...) from
    /// `param` and zero moments, and reads the state back.
    ///
    /// # Errors
    ///
    /// [`BenchError::LengthMismatch`] if a gradient's length differs from
    /// `param`'s, as [`Adam::bind`], plus the device and read-back errors.
    pub async fn run(
        &self,
        ctx: &GpuContext,
        config: &AdamConfig,
        param: &[f32],
        grads: &[Vec<f32>],
    ) -> Result<AdamState> {
        let n = param.len();
        let param_t = upload(ctx, "adam param", param, DType::F32)?;
        let m = GpuTensor::zeros(ctx, "adam m", n, DType::F32)?;
        let v = GpuTensor::zeros(ctx, "adam v", n, DType::F32)?;
        let mut dispatches = Vec::with_capacity(grads.len());
        // Kept alive until the submission.
        let mut grad_tensors = Vec::with_capacity(grads.len());
        for (step, grad) in (1..).zip(grads) {
            if grad.len() != n {
                return Err(BenchError::LengthMismatch {
                    kernel: KERNEL,
                    left: grad.len(),
                    right: n,
                });
            }
            let grad = upload(ctx, "adam grad", grad, self.dtype)?;
            dispatches.push(self.bind(
                ctx,
                &AdamConfig { step, ..*config },
                &grad,
                &param_t,
                &m,
                &v,
            )?);
            grad_tensors.push(grad);
        }
        submit(ctx, KERNEL, &dispatches).await?;
        Ok(AdamState {
            param: param_t.read(ctx).await?,
            m: m.read(ctx).await?,
            v: v.read(ctx).await?,
        })
    }
}
