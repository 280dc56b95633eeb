//! Scaled dot-product attention forward, two ways: materialised (scores,
//! softmax and context as three kernels over a `seq_q x seq_kv` buffer, like
//! PyTorch's eager attention) and fused (`shaders/attention_flash.wgsl`,
//! tiles of keys and values with an online softmax, no scores buffer).

use super::matmul::check_invocations;
use super::{Matmul, MatmulShape, MatmulVariant, Softmax, SoftmaxShape, run_and_read, upload};
use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::{BenchError, Result};
use crate::pipeline::{Dispatch, KernelPipeline, PipelineSpec, Slot, to_u32};
use crate::tensor::GpuTensor;

/// Query rows per workgroup of the fused kernel (one per invocation).
pub const ATTENTION_BLOCK_Q: u32 = 64;
/// The largest head size the fused kernel accepts (its WGSL `MAX_D`; a
/// test checks they agree).
pub const ATTENTION_MAX_HEAD_DIM: usize = 128;

const KERNEL: &str = "attention_flash";

/// Which implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AttentionVariant {
    /// Scores buffer, softmax, context: tiled matmul + softmax + tiled matmul.
    Materialized,
    /// One fused kernel with an online softmax.
    Flash,
}

impl AttentionVariant {
    /// The variant's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            AttentionVariant::Materialized => "attention_materialized",
            AttentionVariant::Flash => "attention_flash",
        }
    }
}

/// `batch` independent heads (batch x heads) of `seq_q` queries attending to
/// `seq_kv` keys, with head size `head_dim`; Q is `[batch, seq_q, head_dim]`,
/// K and V are `[batch, seq_kv, head_dim]`, the output is like Q.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttentionShape {
    /// Batch times heads.
    pub batch: usize,
    /// Queries per head.
    pub seq_q: usize,
    /// Keys and values per head.
    pub seq_kv: usize,
    /// Features per head.
    pub head_dim: usize,
    /// Mask key j for query i when j > i (PyTorch's `is_causal=True`).
    pub causal: bool,
}

impl AttentionShape {
    /// Elements of Q and of the output.
    pub fn q_len(&self) -> usize {
        self.batch * self.seq_q * self.head_dim
    }

    /// Elements of K and of V.
    pub fn kv_len(&self) -> usize {
        self.batch * self.seq_kv * self.head_dim
    }

    /// Elements of the materialised scores.
    pub fn scores_len(&self) -> usize {
        self.batch * self.seq_q * self.seq_kv
    }

    /// `1 / sqrt(head_dim)`, the scale of the scores.
    pub fn scale(&self) -> f32 {
        1.0 / (self.head_dim.max(1) as f32).sqrt()
    }

    /// Floating-point operations of the two products, counting masked
    /// entries too (as FLOP counts for attention usually do).
    pub fn flops(&self) -> f64 {
        4.0 * self.batch as f64 * self.seq_q as f64 * self.seq_kv as f64 * self.head_dim as f64
    }
}

/// The fused kernel's `AttentionParams`, padded to 32 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    batch: u32,
    seq_q: u32,
    seq_kv: u32,
    d: u32,
    scale: f32,
    causal: u32,
    _pad: [u32; 2],
}

/// The kernels behind one variant.
#[derive(Debug)]
enum Kernels {
    Materialized { matmul: Matmul, softmax: Softmax },
    Flash(KernelPipeline),
}

/// Attention forward, built once for one variant and element type.
#[derive(Debug)]
pub struct Attention {
    kernels: Kernels,
    dtype: DType,
}

impl Attention {
    /// Builds the pipelines of `variant` in `dtype`.
    ///
    /// # Errors
    ///
    /// As [`Matmul::new`].
    pub fn new(ctx: &GpuContext, variant: AttentionVariant, dtype: DType) -> Result<Self> {
        let kernels = match variant {
            AttentionVariant::Materialized => Kernels::Materialized {
                matmul: Matmul::new(ctx, MatmulVariant::Tiled, dtype)?,
                softmax: Softmax::new(ctx, dtype)?,
            },
            AttentionVariant::Flash => {
                check_invocations(ctx, KERNEL, ATTENTION_BLOCK_Q)?;
                Kernels::Flash(KernelPipeline::new(
                    ctx,
                    &PipelineSpec {
                        kernel: KERNEL,
                        source: include_str!("../../../../shaders/attention_flash.wgsl"),
                        dtype,
                        slots: &[
                            Slot::Uniform,
                            Slot::Read,
                            Slot::Read,
                            Slot::Read,
                            Slot::ReadWrite,
                        ],
                        constants: &[("BLOCK_Q", f64::from(ATTENTION_BLOCK_Q))],
                    },
                )?)
            }
        };
        Ok(Self { kernels, dtype })
    }

    /// The variant this kernel runs.
    pub fn variant(&self) -> AttentionVariant {
        match self.kernels {
            Kernels::Materialized { .. } => AttentionVariant::Materialized,
            Kernels::Flash(_) => AttentionVariant::Flash,
        }
    }

    /// Binds `q`, `k`, `v` and the output `o`; the materialised variant
    /// also allocates its scores and probabilities here (kept alive by the
    /// returned dispatches). Record the dispatches in order.
    ///
    /// # Errors
    ///
    /// [`BenchError::InvalidShape`] for a head size of 0 or above
    /// [`ATTENTION_MAX_HEAD_DIM`] (fused variant), the tensor checks and
    /// binding errors of [`Matmul::bind`].
    pub fn bind(
        &self,
        ctx: &GpuContext,
        shape: &AttentionShape,
        q: &GpuTensor,
        k: &GpuTensor,
        v: &GpuTensor,
        o: &GpuTensor,
    ) -> Result<Vec<Dispatch>> {
        let kernel = self.variant().name();
        if shape.head_dim == 0 {
            return Err(BenchError::InvalidShape {
                kernel,
                what: "head_dim must be at least 1".into(),
            });
        }
        q.expect(kernel, "q", shape.q_len(), self.dtype)?;
        k.expect(kernel, "k", shape.kv_len(), self.dtype)?;
        v.expect(kernel, "v", shape.kv_len(), self.dtype)?;
        o.expect(kernel, "o", shape.q_len(), self.dtype)?;
        match &self.kernels {
            Kernels::Materialized { matmul, softmax } => {
                let scores =
                    GpuTensor::zeros(ctx, "attention scores", shape.scores_len(), self.dtype)?;
                let probs = GpuTensor::zeros(
                    ctx,
                    "attention probabilities",
                    shape.scores_len(),
                    self.dtype,
                )?;
                let scores_shape = MatmulShape {
                    batch: shape.batch,
                    m: shape.seq_q,
                    n: shape.seq_kv,
                    k: shape.head_dim,
                    trans_a: false,
                    trans_b: true,
                    alpha: shape.scale(),
                };
                let softmax_shape = SoftmaxShape {
                    rows: shape.batch * shape.seq_q,
                    cols: shape.seq_kv,
                    causal_period: shape.causal.then_some(shape.seq_q),
                };
                let context_shape = MatmulShape {
                    batch: shape.batch,
                    m: shape.seq_q,
                    n: shape.head_dim,
                    k: shape.seq_kv,
                    trans_a: false,
                    trans_b: false,
                    alpha: 1.0,
                };
                Ok(vec![
                    matmul.bind(ctx, &scores_shape, q, k, &scores)?,
                    softmax.bind(ctx, &softmax_shape, &scores, &probs)?,
                    matmul.bind(ctx, &context_shape, &probs, v, o)?,
                ])
            }
            Kernels::Flash(pipeline) => {
                if shape.head_dim > ATTENTION_MAX_HEAD_DIM {
                    let what = format!(
                        "head_dim {} exceeds the fused kernel's maximum {ATTENTION_MAX_HEAD_DIM}",
                        shape.head_dim
                    );
                    return Err(BenchError::InvalidShape { kernel, what });
                }
                to_u32(kernel, "q elements", shape.q_len())?;
                to_u32(kernel, "kv elements", shape.kv_len())?;
                let params = Params {
                    batch: to_u32(kernel, "batch", shape.batch)?,
                    seq_q: to_u32(kernel, "seq_q", shape.seq_q)?,
                    seq_kv: to_u32(kernel, "seq_kv", shape.seq_kv)?,
                    d: to_u32(kernel, "head_dim", shape.head_dim)?,
                    scale: shape.scale(),
                    causal: u32::from(shape.causal),
                    _pad: [0; 2],
                };
                let groups = [params.seq_q.div_ceil(ATTENTION_BLOCK_Q), params.batch, 1];
                Ok(vec![pipeline.bind(
                    ctx,
                    bytemuck::bytes_of(&params),
                    &[q.buffer(), k.buffer(), v.buffer(), o.buffer()],
                    groups,
                )?])
            }
        }
    }

    /// Uploads Q, K and V, runs attention and reads the output back.
    ///
    /// # Errors
    ///
    /// As [`Attention::bind`], plus the device and read-back errors.
    pub async fn run(
        &self,
        ctx: &GpuContext,
        shape: &AttentionShape,
        q: &[f32],
        k: &[f32],
        v: &[f32],
    ) -> Result<Vec<f32>> {
        let q = upload(ctx, "attention q", q, self.dtype)?;
        let k = upload(ctx, "attention k", k, self.dtype)?;
        let v = upload(ctx, "attention v", v, self.dtype)?;
        let o = GpuTensor::zeros(ctx, "attention o", shape.q_len(), self.dtype)?;
        let dispatches = self.bind(ctx, shape, &q, &k, &v, &o)?;
        run_and_read(ctx, self.variant().name(), &dispatches, &o).await
    }
}
