//! Host side of `shaders/heads.wgsl`: GPT-2's `split_heads` and
//! `merge_heads`, the copies between a linear layer's token-major output and
//! attention's head-major operands.

use super::elementwise::{LAYER_WORKGROUP_SIZE, groups, layer_pipeline};
use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::{BenchError, Result};
use crate::pipeline::{Dispatch, KernelPipeline, Slot, to_u32};
use crate::tensor::GpuTensor;

const KERNEL: &str = "heads";

/// The layouts: `fused` is `[batch, seq, parts * heads * head_dim]` (e.g.
/// the qkv projection's output, `parts = 3`), `split` is one part as
/// `[batch * heads, seq, head_dim]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeadsShape {
    /// Samples.
    pub batch: usize,
    /// Tokens per sample.
    pub seq: usize,
    /// Attention heads.
    pub heads: usize,
    /// Features per head.
    pub head_dim: usize,
    /// Blocks interleaved in the fused layout (3 for q, k, v; 1 for the context).
    pub parts: usize,
}

impl HeadsShape {
    /// Elements of one split part.
    pub fn split_len(&self) -> usize {
        self.batch * self.heads * self.seq * self.head_dim
    }

    /// Elements of the fused tensor.
    pub fn fused_len(&self) -> usize {
        self.split_len() * self.parts
    }
}

/// The shader's `HeadsParams` (32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    batch: u32,
    seq: u32,
    heads: u32,
    d: u32,
    parts: u32,
    part: u32,
    merge: u32,
    n: u32,
}

/// The split/merge-heads copy, built once for one element type.
#[derive(Debug)]
pub struct Heads {
    pipeline: KernelPipeline,
    dtype: DType,
}

impl Heads {
    /// Builds the pipeline in `dtype`.
    ///
    /// # Errors
    ///
    /// As [`Matmul::new`](super::Matmul::new).
    pub fn new(ctx: &GpuContext, dtype: DType) -> Result<Self> {
        let source = include_str!("../../../../shaders/heads.wgsl");
        Ok(Self {
            pipeline: layer_pipeline(
                ctx,
                KERNEL,
                source,
                dtype,
                &[Slot::Uniform, Slot::Read, Slot::ReadWrite],
            )?,
            dtype,
        })
    }

    /// Copies part `part` of `fused` into `split`.
    ///
    /// # Errors
    ///
    /// [`BenchError::InvalidShape`] if `part >= parts`, and the tensor checks
    /// and binding errors of [`Matmul::bind`](super::Matmul::bind).
    pub fn bind_split(
        &self,
        ctx: &GpuContext,
        shape: &HeadsShape,
        part: usize,
        fused: &GpuTensor,
        split: &GpuTensor,
    ) -> Result<Dispatch> {
        self.bind(ctx, shape, part, false, fused, split)
    }

    /// Copies `split` into part `part` of `fused` (the other parts are left
    /// as they are).
    ///
    /// # Errors
    ///
    /// As [`Heads::bind_split`].
    pub fn bind_merge(
        &self,
        ctx: &GpuContext,
        shape: &HeadsShape,
        part: usize,
        split: &GpuTensor,
        fused: &GpuTensor,
    ) -> Result<Dispatch> {
        self.bind(ctx, shape, part, true, split, fused)
    }

    fn bind(
        &self,
        ctx: &GpuContext,
        shape: &HeadsShape,
        part: usize,
        merge: bool,
        src: &GpuTensor,
        dst: &GpuTensor,
    ) -> Result<Dispatch> {
        if part >= shape.parts {
            return Err(BenchError::InvalidShape {
                kernel: KERNEL,
                what: format!("part {part} of {}", shape.parts),
            });
        }
        let (fused, split) = if merge { (dst, src) } else { (src, dst) };
        fused.expect(KERNEL, "fused", shape.fused_len(), self.dtype)?;
        split.expect(KERNEL, "split", shape.split_len(), self.dtype)?;
        to_u32(KERNEL, "fused elements", shape.fused_len())?;
        let field = |what, value| to_u32(KERNEL, what, value);
        let params = Params {
            batch: field("batch", shape.batch)?,
            seq: field("seq", shape.seq)?,
            heads: field("heads", shape.heads)?,
            d: field("head_dim", shape.head_dim)?,
            parts: field("parts", shape.parts)?,
            part: field("part", part)?,
            merge: u32::from(merge),
            n: field("split elements", shape.split_len())?,
        };
        self.pipeline.bind(
            ctx,
            bytemuck::bytes_of(&params),
            &[src.buffer(), dst.buffer()],
            groups(ctx, params.n, LAYER_WORKGROUP_SIZE),
        )
    }
}
