//! The benchmark suite: which kernels at which sizes, prepared on seeded
//! data, timed, and collected into a [`BenchReport`].

use std::str::FromStr;

use crate::context::GpuContext;
use crate::data::seeded_f32s;
use crate::dtype::DType;
use crate::error::{BenchError, Result};
use crate::kernels::{
    Adam, AdamConfig, Attention, AttentionShape, AttentionVariant, Conv2d, Conv2dShape, Gelu,
    LayerNorm, LayerNormShape, Matmul, MatmulShape, MatmulVariant, Softmax, SoftmaxShape,
};
use crate::layers::{LayerConfig, LayerId, measure_layer};
use crate::pipeline::Dispatch;
use crate::report::{AdapterReport, BenchReport, KernelResult, Metric};
use crate::tensor::GpuTensor;
use crate::timing::{TimingOptions, time_dispatches};

/// A kernel family of the suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelId {
    /// Naive and tiled matmul; the tiled one also for dA and dB.
    Matmul,
    /// Direct conv2d.
    Conv2d,
    /// Layernorm forward.
    Layernorm,
    /// Row-wise softmax.
    Softmax,
    /// GELU (tanh).
    Gelu,
    /// Materialised and fused attention.
    Attention,
    /// Adam step.
    Adam,
}

impl KernelId {
    /// Every family, in report order.
    pub const ALL: [KernelId; 7] = [
        KernelId::Matmul,
        KernelId::Conv2d,
        KernelId::Layernorm,
        KernelId::Softmax,
        KernelId::Gelu,
        KernelId::Attention,
        KernelId::Adam,
    ];

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            KernelId::Matmul => "matmul",
            KernelId::Conv2d => "conv2d",
            KernelId::Layernorm => "layernorm",
            KernelId::Softmax => "softmax",
            KernelId::Gelu => "gelu",
            KernelId::Attention => "attention",
            KernelId::Adam => "adam",
        }
    }
}

impl FromStr for KernelId {
    type Err = BenchError;

    fn from_str(s: &str) -> Result<Self> {
        KernelId::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| BenchError::InvalidChoice {
                what: "kernel",
                value: s.to_string(),
                accepted: "matmul|conv2d|layernorm|softmax|gelu|attention|adam",
            })
    }
}

/// How large the problems are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizePreset {
    /// Seconds on a CPU rasteriser (lavapipe); matmul 256³.
    Small,
    /// A laptop GPU; matmul 1024³.
    Default,
    /// A data-centre GPU; matmul 4096³.
    Large,
}

impl SizePreset {
    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            SizePreset::Small => "small",
            SizePreset::Default => "default",
            SizePreset::Large => "large",
        }
    }

    /// Picks the value for this preset from `[small, default, large]`.
    fn pick<T: Copy>(self, values: [T; 3]) -> T {
        match self {
            SizePreset::Small => values[0],
            SizePreset::Default => values[1],
            SizePreset::Large => values[2],
        }
    }
}

impl FromStr for SizePreset {
    type Err = BenchError;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "small" => Ok(SizePreset::Small),
            "default" => Ok(SizePreset::Default),
            "large" => Ok(SizePreset::Large),
            _ => Err(BenchError::InvalidChoice {
                what: "size",
                value: s.to_string(),
                accepted: "small|default|large",
            }),
        }
    }
}

/// What to benchmark.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchPlan {
    /// Element types, in order.
    pub dtypes: Vec<DType>,
    /// Kernel families, in order.
    pub kernels: Vec<KernelId>,
    /// Problem sizes.
    pub size: SizePreset,
    /// Overrides the preset's square matmul size.
    pub matmul_size: Option<usize>,
    /// Warm-up, runs and span.
    pub timing: TimingOptions,
    /// Layers to measure (forward + backward, saved bytes vs estimate).
    pub layers: Vec<LayerId>,
    /// Where the layers' sizes come from.
    pub layer_config: LayerConfig,
}

impl Default for BenchPlan {
    /// Everything, both types, default size.
    fn default() -> Self {
        Self {
            dtypes: DType::ALL.to_vec(),
            kernels: KernelId::ALL.to_vec(),
            size: SizePreset::Default,
            matmul_size: None,
            timing: TimingOptions::default(),
            layers: Vec::new(),
            layer_config: LayerConfig::default(),
        }
    }
}

/// One prepared measurement: the work and what it computes.
struct Case {
    variant: String,
    shape: String,
    flops: f64,
    bytes: f64,
    metric: Metric,
    work: Vec<Dispatch>,
    /// Keeps the operands alive while the work is timed.
    _tensors: Vec<GpuTensor>,
}

/// Runs `plan` on `ctx`, calling `progress` after each measurement (for a
/// live display), and returns the report. `f16` is skipped, with a note,
/// on devices without `SHADER_F16`.
///
/// # Errors
///
/// Any error of building, binding or timing a kernel.
pub async fn run_suite(
    ctx: &GpuContext,
    plan: &BenchPlan,
    clock: &dyn Fn() -> f64,
    progress: &mut dyn FnMut(&KernelResult),
) -> Result<BenchReport> {
    let summary = ctx.summary();
    let mut results = Vec::new();
    let mut notes = Vec::new();
    for &dtype in &plan.dtypes {
        if dtype == DType::F16 && !summary.shader_f16 {
            notes.push("f16 skipped: the adapter lacks shader-f16".to_string());
            continue;
        }
        for &kernel in &plan.kernels {
            for case in prepare(ctx, kernel, dtype, plan)? {
                let timing = time_dispatches(ctx, &case.work, &plan.timing, clock).await?;
                let result = KernelResult::new(
                    kernel.name(),
                    &case.variant,
                    dtype,
                    case.shape,
                    case.flops,
                    case.bytes,
                    case.metric,
                    &timing,
                );
                progress(&result);
                results.push(result);
            }
        }
    }
    let mut layers = Vec::new();
    for &dtype in &plan.dtypes {
        if dtype == DType::F16 && !summary.shader_f16 {
            continue;
        }
        for &layer in &plan.layers {
            layers.push(
                measure_layer(
                    ctx,
                    plan.layer_config.shape(layer)?,
                    dtype,
                    Some(&plan.timing),
                    clock,
                )
                .await?,
            );
        }
    }
    if dtype_has_f16_accumulation(plan) {
        notes.push("f16 matmul and conv2d accumulate in f16; the other f16 kernels compute in f32 and store f16; Adam keeps f32 parameters and moments (f16 gradients only)".into());
    }
    Ok(BenchReport::new(
        AdapterReport::from(&summary),
        plan.size.name(),
        results,
        notes,
    )
    .with_layers(layers))
}

/// Whether the report needs the note on f16 arithmetic.
fn dtype_has_f16_accumulation(plan: &BenchPlan) -> bool {
    plan.dtypes.contains(&DType::F16)
}

/// Seeded operands of `len` elements.
fn tensor(ctx: &GpuContext, label: &str, seed: u64, len: usize, dtype: DType) -> Result<GpuTensor> {
    GpuTensor::from_f32(ctx, label, &seeded_f32s(seed, len), dtype)
}

/// The cases of one kernel family in one type.
fn prepare(
    ctx: &GpuContext,
    kernel: KernelId,
    dtype: DType,
    plan: &BenchPlan,
) -> Result<Vec<Case>> {
    let size = plan.size;
    let e = dtype.size() as f64;
    match kernel {
        KernelId::Matmul => {
            let s = plan.matmul_size.unwrap_or(size.pick([256, 1024, 4096]));
            let a = tensor(ctx, "A", 1, s * s, dtype)?;
            let b = tensor(ctx, "B", 2, s * s, dtype)?;
            let c = GpuTensor::zeros(ctx, "C", s * s, dtype)?;
            let naive = Matmul::new(ctx, MatmulVariant::Naive, dtype)?;
            let tiled = Matmul::new(ctx, MatmulVariant::Tiled, dtype)?;
            let ops = [
                ("naive", &naive, MatmulShape::forward(s, s, s)),
                ("tiled", &tiled, MatmulShape::forward(s, s, s)),
                ("tiled dA", &tiled, MatmulShape::grad_a(s, s, s)),
                ("tiled dB", &tiled, MatmulShape::grad_b(s, s, s)),
            ];
            ops.into_iter()
                .map(|(variant, kernel, shape)| {
                    Ok(Case {
                        variant: variant.into(),
                        shape: format!("{s}x{s}x{s}"),
                        flops: shape.flops(),
                        bytes: 3.0 * (s * s) as f64 * e,
                        metric: Metric::Gflops,
                        work: vec![kernel.bind(ctx, &shape, &a, &b, &c)?],
                        _tensors: vec![a.clone(), b.clone(), c.clone()],
                    })
                })
                .collect()
        }
        KernelId::Conv2d => {
            let (n, c_in, c_out, hw) =
                size.pick([(2, 16, 32, 32), (8, 64, 64, 56), (32, 64, 128, 56)]);
            let shape = Conv2dShape {
                n,
                c_in,
                h: hw,
                w: hw,
                c_out,
                kh: 3,
                kw: 3,
                stride: 1,
                pad: 1,
            };
            let x = tensor(ctx, "x", 1, shape.x_len(), dtype)?;
            let w = tensor(ctx, "w", 2, shape.w_len(), dtype)?;
            let bias = tensor(ctx, "bias", 3, c_out, dtype)?;
            let y = GpuTensor::zeros(ctx, "y", shape.y_len(), dtype)?;
            let work = vec![Conv2d::new(ctx, dtype)?.bind(ctx, &shape, &x, &w, &bias, &y)?];
            let bytes = (shape.x_len() + shape.w_len() + shape.y_len()) as f64 * e;
            let shape_text = format!("{n}x{c_in}x{hw}x{hw} -> {c_out}, 3x3");
            Ok(vec![Case {
                variant: "direct".into(),
                shape: shape_text,
                flops: shape.flops(),
                bytes,
                metric: Metric::Gflops,
                work,
                _tensors: vec![x, w, bias, y],
            }])
        }
        KernelId::Layernorm => {
            let (rows, cols) = size.pick([(1024, 768), (8192, 1024), (32768, 4096)]);
            let shape = LayerNormShape {
                rows,
                cols,
                eps: 1e-5,
            };
            let x = tensor(ctx, "x", 1, rows * cols, dtype)?;
            let gamma = tensor(ctx, "gamma", 2, cols, dtype)?;
            let beta = tensor(ctx, "beta", 3, cols, dtype)?;
            let y = GpuTensor::zeros(ctx, "y", rows * cols, dtype)?;
            let mean = GpuTensor::zeros(ctx, "mean", rows, DType::F32)?;
            let rstd = GpuTensor::zeros(ctx, "rstd", rows, DType::F32)?;
            let work = vec![
                LayerNorm::new(ctx, dtype)?
                    .bind(ctx, &shape, &x, &gamma, &beta, &y, &mean, &rstd)?,
            ];
            let flops = 8.0 * (rows * cols) as f64;
            Ok(vec![Case {
                variant: "forward".into(),
                shape: format!("{rows}x{cols}"),
                flops,
                bytes: shape.bytes(dtype),
                metric: Metric::Gbs,
                work,
                _tensors: vec![x, gamma, beta, y, mean, rstd],
            }])
        }
        KernelId::Softmax => {
            let (rows, cols) = size.pick([(1024, 1024), (8192, 2048), (32768, 4096)]);
            let shape = SoftmaxShape {
                rows,
                cols,
                causal_period: None,
            };
            let x = tensor(ctx, "x", 1, rows * cols, dtype)?;
            let y = GpuTensor::zeros(ctx, "y", rows * cols, dtype)?;
            let work = vec![Softmax::new(ctx, dtype)?.bind(ctx, &shape, &x, &y)?];
            let flops = 5.0 * (rows * cols) as f64;
            Ok(vec![Case {
                variant: "rows".into(),
                shape: format!("{rows}x{cols}"),
                flops,
                bytes: shape.bytes(dtype),
                metric: Metric::Gbs,
                work,
                _tensors: vec![x, y],
            }])
        }
        KernelId::Gelu => {
            let n = size.pick([1 << 20, 1 << 24, 1 << 27]);
            let x = tensor(ctx, "x", 1, n, dtype)?;
            let y = GpuTensor::zeros(ctx, "y", n, dtype)?;
            let work = vec![Gelu::new(ctx, dtype)?.bind(ctx, &x, &y)?];
            Ok(vec![Case {
                variant: "tanh".into(),
                shape: format!("{n}"),
                flops: 10.0 * n as f64,
                bytes: 2.0 * n as f64 * e,
                metric: Metric::Gbs,
                work,
                _tensors: vec![x, y],
            }])
        }
        KernelId::Attention => {
            let (batch, seq, head_dim) = size.pick([(4, 256, 64), (16, 1024, 64), (32, 2048, 64)]);
            let shape = AttentionShape {
                batch,
                seq_q: seq,
                seq_kv: seq,
                head_dim,
                causal: false,
            };
            let q = tensor(ctx, "q", 1, shape.q_len(), dtype)?;
            let k = tensor(ctx, "k", 2, shape.kv_len(), dtype)?;
            let v = tensor(ctx, "v", 3, shape.kv_len(), dtype)?;
            let o = GpuTensor::zeros(ctx, "o", shape.q_len(), dtype)?;
            [AttentionVariant::Materialized, AttentionVariant::Flash]
                .into_iter()
                .map(|variant| {
                    let work =
                        Attention::new(ctx, variant, dtype)?.bind(ctx, &shape, &q, &k, &v, &o)?;
                    let variant = match variant {
                        AttentionVariant::Materialized => "materialized",
                        AttentionVariant::Flash => "flash",
                    };
                    Ok(Case {
                        variant: variant.into(),
                        shape: format!("{batch} heads x {seq} x {head_dim}"),
                        flops: shape.flops(),
                        bytes: (2 * shape.q_len() + 2 * shape.kv_len()) as f64 * e,
                        metric: Metric::Gflops,
                        work,
                        _tensors: vec![q.clone(), k.clone(), v.clone(), o.clone()],
                    })
                })
                .collect()
        }
        KernelId::Adam => {
            let n = size.pick([1 << 20, 1 << 24, 1 << 26]);
            let grad = tensor(ctx, "grad", 1, n, dtype)?;
            let param = tensor(ctx, "param", 2, n, DType::F32)?;
            let m = GpuTensor::zeros(ctx, "m", n, DType::F32)?;
            let v = GpuTensor::zeros(ctx, "v", n, DType::F32)?;
            let work = vec![Adam::new(ctx, dtype)?.bind(
                ctx,
                &AdamConfig::default(),
                &grad,
                &param,
                &m,
                &v,
            )?];
            let bytes = n as f64 * AdamConfig::bytes_per_param(dtype);
            Ok(vec![Case {
                variant: "step".into(),
                shape: format!("{n} params"),
                flops: 12.0 * n as f64,
                bytes,
                metric: Metric::Gbs,
                work,
                _tensors: vec![grad, param, m, v],
            }])
        }
    }
}
