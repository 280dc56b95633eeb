//! Host side of `shaders/matmul_naive.wgsl` and `shaders/matmul_tiled.wgsl`:
//! batched `C = alpha * op(A) * op(B)`, which covers a linear layer's
//! forward and both backward products.

use super::{run_and_read, upload};
use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::{BenchError, Result};
use crate::pipeline::{Dispatch, KernelPipeline, PipelineSpec, Slot, to_u32};
use crate::tensor::GpuTensor;

/// Workgroup size (x, y) of the naive kernel.
pub const MATMUL_NAIVE_WORKGROUP: [u32; 2] = [16, 16];
/// Workgroup size (x, y) of the tiled kernel.
pub const MATMUL_TILED_WORKGROUP: [u32; 2] = [16, 16];
/// Depth along k of one shared-memory tile in the tiled kernel.
pub const MATMUL_TILED_BK: u32 = 8;
/// Outputs per invocation along m and along n in the tiled kernel (the
/// WGSL's `TM`/`TN` constants; a test checks they agree).
pub const MATMUL_TILED_OUTPUTS: u32 = 8;

/// Which implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MatmulVariant {
    /// One invocation per output, straight from global memory.
    Naive,
    /// Shared-memory tiles and an 8 x 8 register block per invocation.
    Tiled,
}

impl MatmulVariant {
    /// The kernel's name.
    pub fn name(self) -> &'static str {
        match self {
            MatmulVariant::Naive => "matmul_naive",
            MatmulVariant::Tiled => "matmul_tiled",
        }
    }
}

/// The problem: `batch` products of an `m x k` op(A) and a `k x n` op(B).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MatmulShape {
    /// Independent products (matrices follow each other in each buffer).
    pub batch: usize,
    /// Rows of op(A) and C.
    pub m: usize,
    /// Columns of op(B) and C.
    pub n: usize,
    /// The shared dimension.
    pub k: usize,
    /// A is stored `k x m` and used transposed.
    pub trans_a: bool,
    /// B is stored `n x k` and used transposed.
    pub trans_b: bool,
    /// The factor applied to the product.
    pub alpha: f32,
}

impl MatmulShape {
    /// The forward product `C[m, n] = A[m, k] * B[k, n]`.
    pub fn forward(m: usize, n: usize, k: usize) -> Self {
        Self {
            batch: 1,
            m,
            n,
            k,
            trans_a: false,
            trans_b: false,
            alpha: 1.0,
        }
    }

    /// For the forward product of `forward(m, n, k)`, the gradient of A:
    /// `dA[m, k] = dC[m, n] * B[k, n]^T` (A = dC, B = the forward B).
    pub fn grad_a(m: usize, n: usize, k: usize) -> Self {
        Self {
            batch: 1,
            m,
            n: k,
            k: n,
            trans_a: false,
            trans_b: true,
            alpha: 1.0,
        }
    }

    /// For the forward product of `forward(m, n, k)`, the gradient of B:
    /// `dB[k, n] = A[m, k]^T * dC[m, n]` (A = the forward A, B = dC).
    pub fn grad_b(m: usize, n: usize, k: usize) -> Self {
        Self {
            batch: 1,
            m: k,
            n,
            k: m,
            trans_a: true,
            trans_b: false,
            alpha: 1.0,
        }
    }

    /// Elements of the A buffer.
    pub fn a_len(&self) -> usize {
        self.batch * self.m * self.k
    }

    /// Elements of the B buffer.
    pub fn b_len(&self) -> usize {
        self.batch * self.k * self.n
    }

    /// Elements of C.
    pub fn c_len(&self) -> usize {
        self.batch * self.m * self.n
    }

    /// Floating-point operations: one multiply and one add per term.
    pub fn flops(&self) -> f64 {
        2.0 * self.batch as f64 * self.m as f64 * self.n as f64 * self.k as f64
    }
}

/// The shader's `MatmulParams`, padded to 48 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    m: u32,
    n: u32,
    k: u32,
    trans_a: u32,
    trans_b: u32,
    batch_stride_a: u32,
    batch_stride_b: u32,
    batch_stride_c: u32,
    alpha: f32,
    _pad: [u32; 3],
}

/// A matmul kernel, built once for one variant and element type.
#[derive(Debug)]
pub struct Matmul {
    pipeline: KernelPipeline,
    variant: MatmulVariant,
    dtype: DType,
}

impl Matmul {
    /// Builds the pipeline for `variant` in `dtype`.
    ///
    /// # Errors
    ///
    /// [`BenchError::MissingFeature`] for `f16` without `SHADER_F16`,
    /// [`BenchError::UnsupportedLimit`] if the workgroup is too large for
    /// the device, [`BenchError::Validation`] if the device rejects it.
    pub fn new(ctx: &GpuContext, variant: MatmulVariant, dtype: DType) -> Result<Self> {
        let kernel = variant.name();
        let (source, [x, y]) = match variant {
            MatmulVariant::Naive => (
                include_str!("../../../../shaders/matmul_naive.wgsl"),
                MATMUL_NAIVE_WORKGROUP,
            ),
            MatmulVariant::Tiled => (
                include_str!("../../../../shaders/matmul_tiled.wgsl"),
                MATMUL_TILED_WORKGROUP,
            ),
        };
        check_invocations(ctx, kernel, x * y)?;
        let constants = [
            ("WG_X", f64::from(x)),
            ("WG_Y", f64::from(y)),
            ("BK", f64::from(MATMUL_TILED_BK)),
        ];
        let constants = match variant {
            MatmulVariant::Naive => &constants[..2],
            MatmulVariant::Tiled => &constants[..],
        };
        let slots = [Slot::Uniform, Slot::Read, Slot::Read, Slot::ReadWrite];
        let pipeline = KernelPipeline::new(
            ctx,
            &PipelineSpec {
                kernel,
                source,
                dtype,
                slots: &slots,
                constants,
            },
        )?;
        Ok(Self {
            pipeline,
            variant,
            dtype,
        })
    }

    /// The variant this kernel runs.
    pub fn variant(&self) -> MatmulVariant {
        self.variant
    }

    /// Binds `a`, `b` and the output `c` for `shape`.
    ///
    /// # Errors
    ///
    /// [`BenchError::ShapeMismatch`] / [`BenchError::DTypeMismatch`] if a
    /// tensor does not fit the shape or the kernel's type,
    /// [`BenchError::InvalidShape`] for sizes beyond `u32`, and the errors
    /// of binding.
    pub fn bind(
        &self,
        ctx: &GpuContext,
        shape: &MatmulShape,
        a: &GpuTensor,
        b: &GpuTensor,
        c: &GpuTensor,
    ) -> Result<Dispatch> {
        let kernel = self.variant.name();
        a.expect(kernel, "A", shape.a_len(), self.dtype)?;
        b.expect(kernel, "B", shape.b_len(), self.dtype)?;
        c.expect(kernel, "C", shape.c_len(), self.dtype)?;
        // Every index the shader computes must fit in u32.
        for (what, len) in [
            ("A elements", shape.a_len()),
            ("B elements", shape.b_len()),
            ("C elements", shape.c_len()),
        ] {
            to_u32(kernel, what, len)?;
        }
        let params = Params {
            m: to_u32(kernel, "m", shape.m)?,
            n: to_u32(kernel, "n", shape.n)?,
            k: to_u32(kernel, "k", shape.k)?,
            trans_a: u32::from(shape.trans_a),
            trans_b: u32::from(shape.trans_b),
            batch_stride_a: to_u32(kernel, "m * k", shape.m * shape.k)?,
            batch_stride_b: to_u32(kernel, "k * n", shape.k * shape.n)?,
            batch_stride_c: to_u32(kernel, "m * n", shape.m * shape.n)?,
            alpha: shape.alpha,
            _pad: [0; 3],
        };
        let (per_x, per_y) = match self.variant {
            MatmulVariant::Naive => (MATMUL_NAIVE_WORKGROUP[0], MATMUL_NAIVE_WORKGROUP[1]),
            MatmulVariant::Tiled => (
                MATMUL_TILED_WORKGROUP[0] * MATMUL_TILED_OUTPUTS,
                MATMUL_TILED_WORKGROUP[1] * MATMUL_TILED_OUTPUTS,
            ),
        };
        let workgroups = [
            params.n.div_ceil(per_x),
            params.m.div_ceil(per_y),
            to_u32(kernel, "batch", shape.batch)?,
        ];
        self.pipeline.bind(
            ctx,
            bytemuck::bytes_of(&params),
            &[a.buffer(), b.buffer(), c.buffer()],
            workgroups,
        )
    }

    /// Uploads `a` and `b`, runs the product and reads C back.
    ///
    /// # Errors
    ///
    /// As [`Matmul::bind`], plus the device and read-back errors.
    pub async fn run(
        &self,
        ctx: &GpuContext,
        shape: &MatmulShape,
        a: &[f32],
        b: &[f32],
    ) -> Result<Vec<f32>> {
        let a = upload(ctx, "matmul A", a, self.dtype)?;
        let b = upload(ctx, "matmul B", b, self.dtype)?;
        let c = GpuTensor::zeros(ctx, "matmul C", shape.c_len(), self.dtype)?;
        let dispatch = self.bind(ctx, shape, &a, &b, &c)?;
        run_and_read(ctx, self.variant.name(), &[dispatch], &c).await
    }
}

/// Fails if the device cannot run `invocations` per workgroup.
pub(crate) fn check_invocations(
    ctx: &GpuContext,
    kernel: &'static str,
    invocations: u32,
) -> Result<()> {
    let available = ctx.device().limits().max_compute_invocations_per_workgroup;
    if available < invocations {
        return Err(BenchError::UnsupportedLimit {
            kernel,
            limit: "max_compute_invocations_per_workgroup",
            required: u64::from(invocations),
            available: u64::from(available),
        });
    }
    Ok(())
}
