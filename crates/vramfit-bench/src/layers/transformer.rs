//! A pre-LN GPT-2 block on the GPU, forward and backward:
//! `x2 = x + c_proj(attn(c_attn(ln_1(x))))`, `out = x2 + mlp(ln_2(x2))`,
//! with materialised causal attention and a `4h` GELU (tanh) MLP.
//!
//! What it leaves out, and why the saved set is unaffected: biases (an
//! `addmm` saves its input and weight, not the bias, and bias gradients are
//! column sums of the output gradient; neither is computed here), dropout
//! (none: the estimator comparison shows what PyTorch's masks add), and
//! parameter updates. Everything else of the backward runs: the twelve
//! gradient products of the four linears and the two attention matmuls,
//! softmax, GELU and both layernorms (input and parameter gradients), and
//! the residual sums.

use super::bound::{BoundLayer, LayerBuilder, ProductKind};
use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::{BenchError, Result};
use crate::kernels::{
    Add, Gelu, GeluBackward, Heads, HeadsShape, LayerNorm, LayerNormBackward, LayerNormSaved,
    LayerNormShape, Matmul, MatmulShape, MatmulVariant, Softmax, SoftmaxBackward, SoftmaxShape,
};

/// The block's sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TransformerBlockShape {
    /// Samples.
    pub batch: usize,
    /// Tokens per sample.
    pub seq: usize,
    /// Hidden size.
    pub hidden: usize,
    /// Attention heads (`hidden` must be a multiple).
    pub heads: usize,
}

impl TransformerBlockShape {
    /// Tokens, `batch * seq`.
    pub fn tokens(&self) -> usize {
        self.batch * self.seq
    }

    /// Features per head.
    pub fn head_dim(&self) -> usize {
        self.hidden / self.heads.max(1)
    }

    /// The MLP's inner size, `4 * hidden`.
    pub fn inner(&self) -> usize {
        4 * self.hidden
    }

    /// The largest tensor's elements (the attention probabilities or the
    /// MLP activation), which must fit one buffer binding.
    pub fn largest_tensor(&self) -> usize {
        (self.batch * self.heads * self.seq * self.seq).max(self.tokens() * self.inner())
    }

    /// `batch x seq, hidden h, heads a`, for reports.
    pub fn describe(&self) -> String {
        format!(
            "batch {} x seq {}, hidden {}, {} heads",
            self.batch, self.seq, self.hidden, self.heads
        )
    }

    fn check(&self) -> Result<()> {
        if self.tokens() == 0
            || self.hidden == 0
            || self.heads == 0
            || !self.hidden.is_multiple_of(self.heads)
        {
            let what = format!(
                "{} needs non-zero sizes and hidden divisible by heads",
                self.describe()
            );
            return Err(BenchError::InvalidShape {
                kernel: "transformer block",
                what,
            });
        }
        Ok(())
    }
}

/// The kernels of the block, built once for one element type.
#[derive(Debug)]
pub struct TransformerBlock {
    dtype: DType,
    matmul: Matmul,
    layernorm: LayerNorm,
    layernorm_backward: LayerNormBackward,
    softmax: Softmax,
    softmax_backward: SoftmaxBackward,
    gelu: Gelu,
    gelu_backward: GeluBackward,
    heads: Heads,
    add: Add,
}

/// PyTorch's default layernorm epsilon (GPT-2's `layer_norm_epsilon`).
const EPS: f32 = 1e-5;

impl TransformerBlock {
    /// Builds every pipeline in `dtype`.
    ///
    /// # Errors
    ///
    /// As [`Matmul::new`].
    pub fn new(ctx: &GpuContext, dtype: DType) -> Result<Self> {
        Ok(Self {
            dtype,
            matmul: Matmul::new(ctx, MatmulVariant::Tiled, dtype)?,
            layernorm: LayerNorm::new(ctx, dtype)?,
            layernorm_backward: LayerNormBackward::new(ctx, dtype)?,
            softmax: Softmax::new(ctx, dtype)?,
            softmax_backward: SoftmaxBackward::new(ctx, dtype)?,
            gelu: Gelu::new(ctx, dtype)?,
            gelu_backward: GeluBackward::new(ctx, dtype)?,
            heads: Heads::new(ctx, dtype)?,
            add: Add::new(ctx, dtype)?,
        })
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Allocates seeded input `x`, weights (scaled by `1/sqrt(fan_in)`) and
    /// output gradient `d.out`, every activation and gradient, and binds
    /// forward and backward.
    ///
    /// # Errors
    ///
    /// [`BenchError::InvalidShape`] for inconsistent sizes, and the
    /// allocation and binding errors of the kernels.
    pub fn bind(
        &self,
        ctx: &GpuContext,
        shape: &TransformerBlockShape,
        seed: u64,
    ) -> Result<BoundLayer> {
        shape.check()?;
        let mut b = LayerBuilder::new(ctx, self.dtype, seed);
        self.forward(ctx, shape, &mut b)?;
        self.backward(ctx, shape, &mut b)?;
        b.finish()
    }

    fn forward(
        &self,
        ctx: &GpuContext,
        s: &TransformerBlockShape,
        b: &mut LayerBuilder<'_>,
    ) -> Result<()> {
        let (t, h, i, a, d, seq) = (
            s.tokens(),
            s.hidden,
            s.inner(),
            s.heads,
            s.head_dim(),
            s.seq,
        );
        let bh = s.batch * a;
        let fan = |n: usize| 1.0 / (n as f32).sqrt();
        let x = b.seeded("x", &[s.batch, seq, h], 1.0, 0.0)?;
        let ln = |name: &str, b: &mut LayerBuilder<'_>| -> Result<_> {
            Ok((
                b.seeded(&format!("{name}.weight"), &[h], 0.2, 1.0)?,
                b.seeded(&format!("{name}.bias"), &[h], 0.2, 0.0)?,
            ))
        };
        let (g1, be1) = ln("ln_1", b)?;
        let (g2, be2) = ln("ln_2", b)?;
        b.seeded("attn.c_attn.weight", &[h, 3 * h], fan(h), 0.0)?;
        b.seeded("attn.c_proj.weight", &[h, h], fan(h), 0.0)?;
        b.seeded("mlp.c_fc.weight", &[h, i], fan(h), 0.0)?;
        b.seeded("mlp.c_proj.weight", &[i, h], fan(i), 0.0)?;
        let ln_shape = LayerNormShape {
            rows: t,
            cols: h,
            eps: EPS,
        };
        let heads = |parts| HeadsShape {
            batch: s.batch,
            seq,
            heads: a,
            head_dim: d,
            parts,
        };

        let n1 = b.zeros("ln_1.out", &[s.batch, seq, h])?;
        let (mean1, rstd1) = (
            b.zeros_of("ln_1.mean", &[t], DType::F32)?,
            b.zeros_of("ln_1.rstd", &[t], DType::F32)?,
        );
        b.forward.push(
            self.layernorm
                .bind(ctx, &ln_shape, &x, &g1, &be1, &n1, &mean1, &rstd1)?,
        );
        let qkv = b.zeros("attn.c_attn.out", &[s.batch, seq, 3 * h])?;
        self.linear(
            ctx,
            b,
            "attn.c_attn",
            MatmulShape::forward(t, 3 * h, h),
            ["ln_1.out", "attn.c_attn.weight", "attn.c_attn.out"],
        )?;
        for (part, name) in ["attn.q", "attn.k", "attn.v"].into_iter().enumerate() {
            let split = b.zeros(name, &[bh, seq, d])?;
            b.forward
                .push(self.heads.bind_split(ctx, &heads(3), part, &qkv, &split)?);
        }
        let scores_shape = MatmulShape {
            batch: bh,
            m: seq,
            n: seq,
            k: d,
            trans_a: false,
            trans_b: true,
            alpha: 1.0 / (d as f32).sqrt(),
        };
        let scores = b.zeros("attn.scores", &[bh, seq, seq])?;
        self.linear(
            ctx,
            b,
            "attn.scores",
            scores_shape,
            ["attn.q", "attn.k", "attn.scores"],
        )?;
        let probs = b.zeros("attn.probs", &[bh, seq, seq])?;
        b.forward.push(self.softmax.bind(
            ctx,
            &SoftmaxShape {
                rows: bh * seq,
                cols: seq,
                causal_period: Some(seq),
            },
            &scores,
            &probs,
        )?);
        let context_shape = MatmulShape {
            batch: bh,
            m: seq,
            n: d,
            k: seq,
            trans_a: false,
            trans_b: false,
            alpha: 1.0,
        };
        let ctx_heads = b.zeros("attn.context_heads", &[bh, seq, d])?;
        self.linear(
            ctx,
            b,
            "attn.context",
            context_shape,
            ["attn.probs", "attn.v", "attn.context_heads"],
        )?;
        let merged = b.zeros("attn.context", &[s.batch, seq, h])?;
        b.forward.push(
            self.heads
                .bind_merge(ctx, &heads(1), 0, &ctx_heads, &merged)?,
        );
        let attn_out = b.zeros("attn.c_proj.out", &[s.batch, seq, h])?;
        self.linear(
            ctx,
            b,
            "attn.c_proj",
            MatmulShape::forward(t, h, h),
            ["attn.context", "attn.c_proj.weight", "attn.c_proj.out"],
        )?;
        let x2 = b.zeros("attn.residual", &[s.batch, seq, h])?;
        b.forward.push(self.add.bind(ctx, &x, &attn_out, &x2)?);
        let n2 = b.zeros("ln_2.out", &[s.batch, seq, h])?;
        let (mean2, rstd2) = (
            b.zeros_of("ln_2.mean", &[t], DType::F32)?,
            b.zeros_of("ln_2.rstd", &[t], DType::F32)?,
        );
        b.forward.push(
            self.layernorm
                .bind(ctx, &ln_shape, &x2, &g2, &be2, &n2, &mean2, &rstd2)?,
        );
        let f = b.zeros("mlp.c_fc.out", &[s.batch, seq, i])?;
        self.linear(
            ctx,
            b,
            "mlp.c_fc",
            MatmulShape::forward(t, i, h),
            ["ln_2.out", "mlp.c_fc.weight", "mlp.c_fc.out"],
        )?;
        let g = b.zeros("mlp.act.out", &[s.batch, seq, i])?;
        b.forward.push(self.gelu.bind(ctx, &f, &g)?);
        let m = b.zeros("mlp.c_proj.out", &[s.batch, seq, h])?;
        self.linear(
            ctx,
            b,
            "mlp.c_proj",
            MatmulShape::forward(t, h, i),
            ["mlp.act.out", "mlp.c_proj.weight", "mlp.c_proj.out"],
        )?;
        let out = b.zeros("out", &[s.batch, seq, h])?;
        b.forward.push(self.add.bind(ctx, &x2, &m, &out)?);
        b.save(&[
            "x",
            "ln_1.mean",
            "ln_1.rstd",
            "ln_1.out",
            "attn.q",
            "attn.k",
            "attn.v",
            "attn.probs",
            "attn.context",
            "attn.residual",
            "ln_2.mean",
            "ln_2.rstd",
            "ln_2.out",
            "mlp.c_fc.out",
            "mlp.act.out",
        ]);
        Ok(())
    }

    fn backward(
        &self,
        ctx: &GpuContext,
        s: &TransformerBlockShape,
        b: &mut LayerBuilder<'_>,
    ) -> Result<()> {
        let (t, h, i, a, d, seq) = (
            s.tokens(),
            s.hidden,
            s.inner(),
            s.heads,
            s.head_dim(),
            s.seq,
        );
        let bh = s.batch * a;
        let act = |n: usize| [s.batch, seq, n];
        let ln_shape = LayerNormShape {
            rows: t,
            cols: h,
            eps: EPS,
        };
        let heads = |parts| HeadsShape {
            batch: s.batch,
            seq,
            heads: a,
            head_dim: d,
            parts,
        };
        let dout = b.seeded("d.out", &act(h), 1.0, 0.0)?;
        // MLP: out = x2 + c_proj(gelu(c_fc(ln_2(x2)))).
        self.linear_backward(
            ctx,
            b,
            "mlp.c_proj",
            (t, h, i),
            ["mlp.act.out", "mlp.c_proj.weight", "d.out"],
            ["d.mlp.act.out", "d.mlp.c_proj.weight"],
        )?;
        let df = b.zeros("d.mlp.c_fc.out", &act(i))?;
        b.backward.push(self.gelu_backward.bind(
            ctx,
            &b.get("mlp.c_fc.out")?,
            &b.get("d.mlp.act.out")?,
            &df,
        )?);
        self.linear_backward(
            ctx,
            b,
            "mlp.c_fc",
            (t, i, h),
            ["ln_2.out", "mlp.c_fc.weight", "d.mlp.c_fc.out"],
            ["d.ln_2.out", "d.mlp.c_fc.weight"],
        )?;
        let dx2_ln = self.layernorm_backward(ctx, b, "ln_2", &ln_shape, "attn.residual")?;
        let dx2 = b.zeros("d.attn.residual", &act(h))?;
        b.backward.push(self.add.bind(ctx, &dout, &dx2_ln, &dx2)?);
        // Attention: x2 = x + c_proj(merge(softmax(q k^T / sqrt(d)) v)).
        self.linear_backward(
            ctx,
            b,
            "attn.c_proj",
            (t, h, h),
            ["attn.context", "attn.c_proj.weight", "d.attn.residual"],
            ["d.attn.context", "d.attn.c_proj.weight"],
        )?;
        let dctx_heads = b.zeros("d.attn.context_heads", &[bh, seq, d])?;
        b.backward.push(self.heads.bind_split(
            ctx,
            &heads(1),
            0,
            &b.get("d.attn.context")?,
            &dctx_heads,
        )?);
        let context_shape = MatmulShape {
            batch: bh,
            m: seq,
            n: d,
            k: seq,
            trans_a: false,
            trans_b: false,
            alpha: 1.0,
        };
        b.zeros("d.attn.probs", &[bh, seq, seq])?;
        b.zeros("d.attn.v", &[bh, seq, d])?;
        self.grad_products(
            ctx,
            b,
            "attn.context",
            context_shape,
            ["attn.probs", "attn.v", "d.attn.context_heads"],
            ["d.attn.probs", "d.attn.v"],
        )?;
        let dscores = b.zeros("d.attn.scores", &[bh, seq, seq])?;
        b.backward.push(self.softmax_backward.bind(
            ctx,
            bh * seq,
            seq,
            &b.get("attn.probs")?,
            &b.get("d.attn.probs")?,
            &dscores,
        )?);
        let alpha = 1.0 / (d as f32).sqrt();
        b.zeros("d.attn.q", &[bh, seq, d])?;
        b.zeros("d.attn.k", &[bh, seq, d])?;
        // scores = alpha q k^T: dq = alpha dS k, dk = alpha dS^T q.
        let dq = MatmulShape {
            batch: bh,
            m: seq,
            n: d,
            k: seq,
            trans_a: false,
            trans_b: false,
            alpha,
        };
        self.product(
            ctx,
            b,
            "attn.scores dq",
            dq,
            ["d.attn.scores", "attn.k", "d.attn.q"],
        )?;
        let dk = MatmulShape {
            trans_a: true,
            ..dq
        };
        self.product(
            ctx,
            b,
            "attn.scores dk",
            dk,
            ["d.attn.scores", "attn.q", "d.attn.k"],
        )?;
        let dqkv = b.zeros("d.attn.c_attn.out", &act(3 * h))?;
        for (part, name) in ["d.attn.q", "d.attn.k", "d.attn.v"].into_iter().enumerate() {
            b.backward.push(
                self.heads
                    .bind_merge(ctx, &heads(3), part, &b.get(name)?, &dqkv)?,
            );
        }
        self.linear_backward(
            ctx,
            b,
            "attn.c_attn",
            (t, 3 * h, h),
            ["ln_1.out", "attn.c_attn.weight", "d.attn.c_attn.out"],
            ["d.ln_1.out", "d.attn.c_attn.weight"],
        )?;
        let dx_ln = self.layernorm_backward(ctx, b, "ln_1", &ln_shape, "x")?;
        let dx = b.zeros("d.x", &act(h))?;
        b.backward.push(self.add.bind(ctx, &dx2, &dx_ln, &dx)?);
        Ok(())
    }

    /// Binds a forward product `names[2] = names[0] x names[1]`.
    fn linear(
        &self,
        ctx: &GpuContext,
        b: &mut LayerBuilder<'_>,
        name: &str,
        shape: MatmulShape,
        names: [&str; 3],
    ) -> Result<()> {
        let [x, w, y] = names.map(|n| b.get(n));
        b.forward
            .push(self.matmul.bind(ctx, &shape, &x?, &w?, &y?)?);
        b.product(name, ProductKind::Matmul(shape), names, false);
        Ok(())
    }

    /// Binds a backward product.
    fn product(
        &self,
        ctx: &GpuContext,
        b: &mut LayerBuilder<'_>,
        name: &str,
        shape: MatmulShape,
        names: [&str; 3],
    ) -> Result<()> {
        let [x, w, y] = names.map(|n| b.get(n));
        b.backward
            .push(self.matmul.bind(ctx, &shape, &x?, &w?, &y?)?);
        b.product(name, ProductKind::Matmul(shape), names, true);
        Ok(())
    }

    /// Both gradient products of the forward `shape` over `[a, b, dc]`:
    /// `grads[0] = dA`, `grads[1] = dB` (both allocated by the caller).
    fn grad_products(
        &self,
        ctx: &GpuContext,
        b: &mut LayerBuilder<'_>,
        name: &str,
        shape: MatmulShape,
        names: [&str; 3],
        grads: [&str; 2],
    ) -> Result<()> {
        let [a, w, dc] = names;
        let grad_a = MatmulShape {
            batch: shape.batch,
            ..MatmulShape::grad_a(shape.m, shape.n, shape.k)
        };
        let grad_b = MatmulShape {
            batch: shape.batch,
            ..MatmulShape::grad_b(shape.m, shape.n, shape.k)
        };
        self.product(ctx, b, &format!("{name} dA"), grad_a, [dc, w, grads[0]])?;
        self.product(ctx, b, &format!("{name} dB"), grad_b, [a, dc, grads[1]])
    }

    /// Allocates and binds the gradients of a linear `y[t, n] = x[t, k] w[k, n]`
    /// (`mnk = (t, n, k)`).
    fn linear_backward(
        &self,
        ctx: &GpuContext,
        b: &mut LayerBuilder<'_>,
        name: &str,
        (m, n, k): (usize, usize, usize),
        names: [&str; 3],
        grads: [&str; 2],
    ) -> Result<()> {
        b.zeros(grads[0], &[m, k])?;
        b.zeros(grads[1], &[k, n])?;
        self.grad_products(ctx, b, name, MatmulShape::forward(m, n, k), names, grads)
    }

    /// Binds layernorm `name`'s input and parameter gradients from
    /// `d.{name}.out` and the saved `input`; returns the input gradient.
    fn layernorm_backward(
        &self,
        ctx: &GpuContext,
        b: &mut LayerBuilder<'_>,
        name: &str,
        shape: &LayerNormShape,
        input: &str,
    ) -> Result<crate::GpuTensor> {
        let dy = b.get(&format!("d.{name}.out"))?;
        let (x, gamma, mean, rstd) = (
            b.get(input)?,
            b.get(&format!("{name}.weight"))?,
            b.get(&format!("{name}.mean"))?,
            b.get(&format!("{name}.rstd"))?,
        );
        let saved = LayerNormSaved {
            x: &x,
            gamma: &gamma,
            mean: &mean,
            rstd: &rstd,
        };
        let dx = b.zeros(&format!("d.{name}.in"), &[shape.rows, shape.cols])?;
        let dgamma = b.zeros(&format!("d.{name}.weight"), &[shape.cols])?;
        let dbeta = b.zeros(&format!("d.{name}.bias"), &[shape.cols])?;
        b.backward.push(
            self.layernorm_backward
                .bind_input(ctx, shape, &dy, saved, &dx)?,
        );
        b.backward.push(
            self.layernorm_backward
                .bind_params(ctx, shape, &dy, saved, &dgamma, &dbeta)?,
        );
        Ok(dx)
    }
}
