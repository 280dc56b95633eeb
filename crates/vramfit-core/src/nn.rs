//! PyTorch module and op semantics on top of [`Builder`]: what each op
//! allocates, what autograd saves for its backward, and how autocast casts it.
//!
//! Sources: `tools/autograd/derivatives.yaml` (saved tensors per op; the
//! generated code saves an input only when a gradient needing it is
//! required), `aten/src/ATen/autocast_mode.cpp` (CUDA lower-precision and
//! fp32 op lists), `aten/src/ATen/native/Dropout.cpp` (`native_dropout` keeps a
//! bool mask; p = 0 returns the input unchanged).

use crate::builder::{Builder, OpSpec};
use crate::dtype::DType;
use crate::graph::{Numel, OpKind, ParamId, TensorId};

/// Geometry of a 2-D convolution.
#[derive(Clone, Copy, Debug)]
pub struct Conv {
    /// Input channels.
    pub cin: u64,
    /// Output channels.
    pub cout: u64,
    /// Kernel side.
    pub kernel: u64,
    /// Stride.
    pub stride: u64,
    /// Zero padding on each side.
    pub pad: u64,
    /// Channel groups (depthwise: `groups == cin`).
    pub groups: u64,
    /// Whether the conv has a bias.
    pub bias: bool,
}

impl Conv {
    /// A square kernel without bias and one group.
    pub fn new(cin: u64, cout: u64, kernel: u64, stride: u64, pad: u64) -> Conv {
        Conv {
            cin,
            cout,
            kernel,
            stride,
            pad,
            groups: 1,
            bias: false,
        }
    }

    /// Output side for an input side (PyTorch's floor formula).
    pub fn out_side(&self, side: u64) -> u64 {
        let padded = side + 2 * self.pad;
        if padded < self.kernel || self.stride == 0 {
            return 0;
        }
        (padded - self.kernel) / self.stride + 1
    }
}

/// Bytes of `numel` elements of `dtype`, batch-affine.
pub(crate) fn bytes(numel: Numel, dtype: DType) -> Numel {
    Numel {
        fixed: numel.fixed * dtype.size(),
        per_sample: numel.per_sample * dtype.size(),
    }
}

impl Builder {
    /// Whether an op's output needs a gradient: an input does, or a parameter is trained.
    pub fn grad_flows(&self, inputs: &[TensorId], params: &[ParamId]) -> bool {
        inputs.iter().any(|&t| self.requires_grad(t))
            || params.iter().any(|&p| self.param_trainable(p))
    }

    /// A new tensor shaped like `x` (`numel` elements per sample) with `dtype`,
    /// requiring grad if any of `from` does.
    fn out_like(&mut self, per_sample: u64, dtype: DType, from: &[TensorId]) -> TensorId {
        let rg = from.iter().any(|&t| self.requires_grad(t));
        self.tensor(Numel::per_sample(per_sample), dtype, rg)
    }

    /// `nn.Linear(in_f, out_f, bias)` (or HF `Conv1D`) applied to `x` whose last
    /// dimension is `in_f`: `addmm` on the flattened input. Saves the input
    /// (if the weight is trained) and the weight (if the input needs a gradient).
    pub fn linear(
        &mut self,
        name: &str,
        x: TensorId,
        in_f: u64,
        out_f: u64,
        bias: bool,
    ) -> TensorId {
        let w = self.param(&format!("{name}.weight"), &[out_f, in_f]);
        if self.in_block() {
            self.mark_quantizable(w);
        }
        let b = if bias {
            Some(self.param(&format!("{name}.bias"), &[out_f]))
        } else {
            None
        };
        let base = self.linear_with(name, x, w, b, in_f, out_f);
        if self.lora_rank == 0 || !self.in_block() {
            return base;
        }
        self.lora_adapter(name, x, base, in_f, out_f)
    }

    /// PEFT's LoRA on a linear layer (every linear inside the blocks, as QLoRA
    /// recommends): `base(x) + lora_B(lora_A(x.to(fp32))) * scaling`, then
    /// cast back to the base output's dtype. The adapters are fp32 and trained;
    /// `lora_dropout` is 0 (PEFT's default), so no mask.
    fn lora_adapter(
        &mut self,
        name: &str,
        x: TensorId,
        base: TensorId,
        in_f: u64,
        out_f: u64,
    ) -> TensorId {
        let r = self.lora_rank;
        let xa = if self.lora_fp32 {
            self.cast(x, DType::F32)
        } else {
            x
        };
        let a = self.adapter_param(&format!("{name}.lora_A.default.weight"), &[r, in_f]);
        let ha = self.linear_with(&format!("{name}.lora_A"), xa, a, None, in_f, r);
        let b = self.adapter_param(&format!("{name}.lora_B.default.weight"), &[out_f, r]);
        let hb = self.linear_with(&format!("{name}.lora_B"), ha, b, None, r, out_f);
        let scaled = self.scale(&format!("{name}.lora_scaling"), hb);
        let sum = self.add(&format!("{name}.lora_add"), base, scaled);
        self.cast(sum, self.dtype(base))
    }

    /// A linear op on existing parameters (e.g. an LM head tied to the embedding).
    pub fn linear_with(
        &mut self,
        name: &str,
        x: TensorId,
        w: ParamId,
        bias: Option<ParamId>,
        in_f: u64,
        out_f: u64,
    ) -> TensorId {
        let xc = self.autocast_lower(x);
        let rows = self.numel(xc).per_sample / in_f.max(1);
        // FLOPs are a product of three sizes; they saturate rather than overflow.
        let flops = Numel::per_sample(
            2u64.saturating_mul(rows)
                .saturating_mul(in_f)
                .saturating_mul(out_f),
        );
        self.weighted_op(name, OpKind::Linear, xc, w, bias, rows * out_f, flops)
    }

    /// `nn.Conv2d` on an input of `side`×`side` pixels; returns the output and its side.
    pub fn conv2d(&mut self, name: &str, x: TensorId, c: Conv, side: u64) -> (TensorId, u64) {
        let w = self.param(
            &format!("{name}.weight"),
            &[c.cout, c.cin / c.groups.max(1), c.kernel, c.kernel],
        );
        let bias = if c.bias {
            Some(self.param(&format!("{name}.bias"), &[c.cout]))
        } else {
            None
        };
        let xc = self.autocast_lower(x);
        let out_side = c.out_side(side);
        // 2 FLOPs per multiply-accumulate, a product of six sizes: saturating.
        let flops = [
            out_side,
            out_side,
            c.cin / c.groups.max(1),
            c.kernel,
            c.kernel,
            2,
        ]
        .iter()
        .fold(c.cout, |a, &f| a.saturating_mul(f));
        let out = self.weighted_op(
            name,
            OpKind::Conv2d,
            xc,
            w,
            bias,
            c.cout * out_side * out_side,
            Numel::per_sample(flops),
        );
        (out, out_side)
    }

    /// A matmul-class op (linear, conv) on an already autocast input `xc` and
    /// weight `w`: saves the input if the weight is trained and, under
    /// autocast, the cached low-precision weight copy if the input needs a
    /// gradient. The weight gradient is then first computed in the low
    /// precision type and converted to the fp32 `.grad` (ToCopyBackward).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn weighted_op(
        &mut self,
        name: &str,
        kind: OpKind,
        xc: TensorId,
        w: ParamId,
        bias: Option<ParamId>,
        out_per_sample: u64,
        flops: Numel,
    ) -> TensorId {
        let mut params = vec![w];
        params.extend(bias);
        let mut outputs = Vec::new();
        let wc = self.autocast_weight(w, &mut outputs);
        let out = self.tensor(
            Numel::per_sample(out_per_sample),
            self.dtype(xc),
            self.grad_flows(&[xc], &params),
        );
        outputs.insert(0, out);
        // The input is kept only to compute the weight's gradient.
        let mut saved = if self.param_trainable(w) {
            vec![xc]
        } else {
            Vec::new()
        };
        if let (Some(wc), true) = (wc, self.requires_grad(xc)) {
            saved.push(wc);
        }
        // A weight read through a cast copy gets its gradient in the low type
        // first; one already in the low type (a LoRA base) gets it directly.
        let param_grad_via_cast = wc.is_some();
        let backward_temp = match (self.autocast_dtype(), self.param_trainable(w)) {
            (Some(low), true) if param_grad_via_cast => {
                Numel::fixed(self.param_numel(w) * low.size())
            }
            _ => Numel::default(),
        };
        self.op(
            name,
            kind,
            OpSpec {
                inputs: vec![xc],
                outputs,
                saved,
                params,
                backward_temp,
                param_grad_via_cast,
                flops,
                ..OpSpec::default()
            },
        );
        out
    }

    /// `nn.BatchNorm2d(c)` in training mode (cuDNN): saves the input plus
    /// fp32 `save_mean` / `save_invstd` of `c` elements; running stats are buffers.
    pub fn batchnorm2d(&mut self, name: &str, x: TensorId, c: u64) -> TensorId {
        let w = self.param(&format!("{name}.weight"), &[c]);
        let b = self.param(&format!("{name}.bias"), &[c]);
        self.buffer(&format!("{name}.running_mean"), c, DType::F32);
        self.buffer(&format!("{name}.running_var"), c, DType::F32);
        self.buffer(&format!("{name}.num_batches_tracked"), 1, DType::I64);
        let t = self.tensor_info(x);
        let out = self.tensor(t.numel, t.dtype, self.grad_flows(&[x], &[w, b]));
        let mean = self.tensor(Numel::fixed(c), DType::F32, false);
        let invstd = self.tensor(Numel::fixed(c), DType::F32, false);
        self.op(
            name,
            OpKind::BatchNorm,
            OpSpec {
                inputs: vec![x],
                outputs: vec![out, mean, invstd],
                saved: vec![x, mean, invstd],
                params: vec![w, b],
                flops: Numel::per_sample(8 * t.numel.per_sample),
                ..OpSpec::default()
            },
        );
        out
    }

    /// `nn.LayerNorm(h)`: on autocast's fp32 list. Saves the input and fp32
    /// mean / rstd (one per row).
    pub fn layernorm(&mut self, name: &str, x: TensorId, h: u64, bias: bool) -> TensorId {
        let xc = self.autocast_fp32(x);
        self.layernorm_of(name, xc, h, bias)
    }

    /// Cohere's `CohereLayerNorm` (no bias) written as eager ops over `h`
    /// features: `x = x.to(f32)`; `mean`; `var = (x - mean).pow(2).mean()`;
    /// `y = (x - mean) * rsqrt(var + eps)`; `(weight.to(f32) * y).to(dtype)`.
    /// The two subtractions make two fp32 tensors, the first saved by
    /// `pow` (whose output is a transient), the second by the product with
    /// `rstd`; the weight's product saves `y`; the cast back is one more
    /// copy when the input was in half precision.
    pub fn cohere_layernorm(&mut self, name: &str, x: TensorId, h: u64) -> TensorId {
        let w = self.param(&format!("{name}.weight"), &[h]);
        let in_dtype = self.dtype(x);
        let xf = self.cast(x, DType::F32);
        let n = self.numel(xf).per_sample;
        let rows = n / h.max(1);
        let centered = |b: &mut Self, step: &str| {
            let c = b.out_like(n, DType::F32, &[xf]);
            b.op(
                &format!("{name}.{step}"),
                OpKind::Elementwise,
                OpSpec {
                    inputs: vec![xf],
                    outputs: vec![c],
                    flops: Numel::per_sample(2 * n),
                    ..OpSpec::default()
                },
            );
            c
        };
        let c1 = centered(self, "sub_mean");
        let var = self.out_like(rows, DType::F32, &[c1]);
        self.op(
            &format!("{name}.pow_mean"),
            OpKind::Elementwise,
            OpSpec {
                inputs: vec![c1],
                outputs: vec![var],
                saved: vec![c1],
                forward_temp: bytes(Numel::per_sample(n), DType::F32),
                flops: Numel::per_sample(2 * n),
                ..OpSpec::default()
            },
        );
        let c2 = centered(self, "sub_mean_again");
        let rstd = self.out_like(rows, DType::F32, &[var]);
        self.op(
            &format!("{name}.rsqrt"),
            OpKind::Elementwise,
            OpSpec {
                inputs: vec![var],
                outputs: vec![rstd],
                saved: vec![rstd],
                flops: Numel::per_sample(2 * rows),
                ..OpSpec::default()
            },
        );
        let y = self.mul(&format!("{name}.mul"), c2, rstd, n);
        let out = self.tensor(
            Numel::per_sample(n),
            DType::F32,
            self.grad_flows(&[y], &[w]),
        );
        self.op(
            &format!("{name}.weight_mul"),
            OpKind::RmsNorm,
            OpSpec {
                inputs: vec![y],
                outputs: vec![out],
                saved: vec![y],
                params: vec![w],
                flops: Numel::per_sample(n),
                ..OpSpec::default()
            },
        );
        self.cast(out, in_dtype)
    }

    /// Nemotron's `NemotronLayerNorm1P`: `F.layer_norm` of its input, `weight
    /// + 1` and its bias, all cast to autocast's half type (an fp32 input
    /// becomes a half copy) and run with autocast off: in half precision
    /// under mixed precision, saving the half input and fp32 mean / rstd.
    /// (`weight + 1` and its cast are `h`-element temporaries, not counted.)
    pub fn layernorm_1p(&mut self, name: &str, x: TensorId, h: u64) -> TensorId {
        let xc = self.autocast_lower(x);
        self.layernorm_of(name, xc, h, true)
    }

    /// The `native_layer_norm` kernel on `xc` as it is (see [`Self::layernorm`]).
    fn layernorm_of(&mut self, name: &str, xc: TensorId, h: u64, bias: bool) -> TensorId {
        let w = self.param(&format!("{name}.weight"), &[h]);
        let mut params = vec![w];
        if bias {
            params.push(self.param(&format!("{name}.bias"), &[h]));
        }
        let t = self.tensor_info(xc);
        let rows = t.numel.per_sample / h.max(1);
        let out = self.tensor(t.numel, t.dtype, self.grad_flows(&[xc], &params));
        let mean = self.tensor(Numel::per_sample(rows), DType::F32, false);
        let rstd = self.tensor(Numel::per_sample(rows), DType::F32, false);
        self.op(
            name,
            OpKind::LayerNorm,
            OpSpec {
                inputs: vec![xc],
                outputs: vec![out, mean, rstd],
                saved: vec![xc, mean, rstd],
                params,
                flops: Numel::per_sample(8 * t.numel.per_sample),
                ..OpSpec::default()
            },
        );
        out
    }

    /// Hugging Face `LlamaRMSNorm` (and Mistral/Qwen2), written as eager ops:
    /// `x.to(f32)`, `pow(2)`, `mean`, `rsqrt`, `x * rstd`, `.to(dtype)`, `weight * x`.
    pub fn rmsnorm(&mut self, name: &str, x: TensorId, h: u64) -> TensorId {
        self.rmsnorm_as(name, x, h, false)
    }

    /// `Olmo2RMSNorm`: as [`Builder::rmsnorm`] but the weight multiplies the
    /// normalized fp32 tensor before the cast back, `(weight * x).to(dtype)`:
    /// the product saves the fp32 tensor, and the cast makes one more copy
    /// when the input was in half precision.
    pub fn rmsnorm_weight_first(&mut self, name: &str, x: TensorId, h: u64) -> TensorId {
        self.rmsnorm_as(name, x, h, true)
    }

    /// Gemma 4's `v_norm` and router norm (`with_scale=False`): as
    /// [`Builder::rmsnorm`] with no weight, `(x.float() * rstd).type_as(x)`.
    pub fn rmsnorm_unscaled(&mut self, name: &str, x: TensorId, h: u64) -> TensorId {
        let in_dtype = self.dtype(x);
        let xn = self.rms_normalized(name, x, h);
        self.cast(xn, in_dtype)
    }

    fn rmsnorm_as(&mut self, name: &str, x: TensorId, h: u64, weight_first: bool) -> TensorId {
        let w = self.param(&format!("{name}.weight"), &[h]);
        let in_dtype = self.dtype(x);
        let xn = self.rms_normalized(name, x, h);
        let n = self.numel(xn).per_sample;
        // Llama casts back before the weight; OLMo 2 after it.
        let xn = if weight_first {
            xn
        } else {
            self.cast(xn, in_dtype)
        };
        let out_dtype = if self.param_dtype() == DType::F32 {
            DType::F32
        } else {
            self.dtype(xn)
        };
        let out = self.tensor(
            Numel::per_sample(n),
            out_dtype,
            self.grad_flows(&[xn], &[w]),
        );
        self.op(
            &format!("{name}.weight_mul"),
            OpKind::RmsNorm,
            OpSpec {
                inputs: vec![xn],
                outputs: vec![out],
                saved: vec![xn],
                params: vec![w],
                flops: Numel::per_sample(n),
                ..OpSpec::default()
            },
        );
        if weight_first {
            self.cast(out, in_dtype)
        } else {
            out
        }
    }

    /// `x.to(f32) * rsqrt(x.pow(2).mean(-1) + eps)` over `h` features: the
    /// fp32 normalized tensor (before any weight or cast back).
    fn rms_normalized(&mut self, name: &str, x: TensorId, h: u64) -> TensorId {
        let xf = self.cast(x, DType::F32);
        let n = self.numel(xf).per_sample;
        let rows = n / h.max(1);
        // pow(2) saves its input; mean and +eps save nothing; rsqrt saves its output.
        let sq = self.out_like(n, DType::F32, &[xf]);
        let rstd = self.out_like(rows, DType::F32, &[xf]);
        self.op(
            &format!("{name}.pow_mean_rsqrt"),
            OpKind::RmsNorm,
            OpSpec {
                inputs: vec![xf],
                outputs: vec![rstd],
                saved: vec![xf, rstd],
                forward_temp: bytes(self.numel(sq), DType::F32),
                flops: Numel::per_sample(3 * n),
                ..OpSpec::default()
            },
        );
        self.mul(&format!("{name}.mul"), xf, rstd, n)
    }

    /// Elementwise product of two activations (`n` elements per sample in the
    /// result). Saves both operands (each is needed for the other's gradient).
    pub fn mul(&mut self, name: &str, a: TensorId, b: TensorId, n: u64) -> TensorId {
        let dtype = self.promote(a, b);
        let out = self.out_like(n, dtype, &[a, b]);
        let mut saved = Vec::new();
        if self.requires_grad(b) {
            saved.push(a);
        }
        if self.requires_grad(a) {
            saved.push(b);
        }
        self.op(
            name,
            OpKind::Elementwise,
            OpSpec {
                inputs: vec![a, b],
                outputs: vec![out],
                saved,
                flops: Numel::per_sample(n),
                ..OpSpec::default()
            },
        );
        out
    }

    /// Residual `a + b`: saves nothing; gradients pass through as views.
    pub fn add(&mut self, name: &str, a: TensorId, b: TensorId) -> TensorId {
        let dtype = self.promote(a, b);
        let n = self.numel(a).per_sample.max(self.numel(b).per_sample);
        let out = self.out_like(n, dtype, &[a, b]);
        let same = self.dtype(a) == self.dtype(b);
        self.op(
            name,
            OpKind::Add,
            OpSpec {
                inputs: vec![a, b],
                outputs: vec![out],
                grad_passthrough: same,
                flops: Numel::per_sample(n),
                ..OpSpec::default()
            },
        );
        out
    }

    /// A unary op that saves nothing (multiply/divide by a constant, add a mask).
    pub fn scale(&mut self, name: &str, x: TensorId) -> TensorId {
        let t = self.tensor_info(x);
        let out = self.tensor(t.numel, t.dtype, t.requires_grad);
        self.op(
            name,
            OpKind::Elementwise,
            OpSpec {
                inputs: vec![x],
                outputs: vec![out],
                grad_passthrough: false,
                flops: Numel::per_sample(t.numel.per_sample),
                ..OpSpec::default()
            },
        );
        out
    }

    /// `ReLUSquaredActivation` (`relu2`): `relu` (which saves its output),
    /// then `torch.square` of it (`pow(x, 2)`, on autocast's fp32 list:
    /// under mixed precision an fp32 copy of a half input), which saves its
    /// input.
    pub fn relu_squared(&mut self, name: &str, x: TensorId) -> TensorId {
        let r = self.relu(&format!("{name}.relu"), x, false);
        let r = self.autocast_fp32(r);
        self.activation(&format!("{name}.square"), r)
    }

    /// `ReLU`. In place (torchvision's `ReLU(inplace=True)`): no new storage,
    /// saves its output (the modified input). Otherwise a new output, saved.
    pub fn relu(&mut self, name: &str, x: TensorId, inplace: bool) -> TensorId {
        let out = if inplace {
            self.alias(x)
        } else {
            let t = self.tensor_info(x);
            self.tensor(t.numel, t.dtype, t.requires_grad)
        };
        let n = self.numel(x).per_sample;
        self.op(
            name,
            OpKind::Elementwise,
            OpSpec {
                inputs: vec![x],
                outputs: vec![out],
                saved: vec![out],
                flops: Numel::per_sample(n),
                ..OpSpec::default()
            },
        );
        out
    }

    /// `tanh`: saves its output.
    pub fn tanh(&mut self, name: &str, x: TensorId) -> TensorId {
        self.relu(name, x, false)
    }

    /// `ReLU6(inplace=True)` (MobileNetV2): `hardtanh_`, which saves a copy
    /// of its input (see [`Builder::inplace_saving_input`]).
    pub fn relu6(&mut self, name: &str, x: TensorId) -> TensorId {
        self.inplace_saving_input(name, x)
    }

    /// An activation that saves its input (GELU, SiLU, `tanh`-approximate GELU in one kernel).
    pub fn activation(&mut self, name: &str, x: TensorId) -> TensorId {
        let t = self.tensor_info(x);
        let out = self.tensor(t.numel, t.dtype, t.requires_grad);
        self.op(
            name,
            OpKind::Elementwise,
            OpSpec {
                inputs: vec![x],
                outputs: vec![out],
                saved: vec![x],
                flops: Numel::per_sample(8 * t.numel.per_sample),
                ..OpSpec::default()
            },
        );
        out
    }

    /// Dropout with probability `p` in training mode: `native_dropout` returns the
    /// output and a 1-byte mask and saves only the mask. `p == 0` is a no-op,
    /// and so is inference (`model.eval()`: `F.dropout` returns its input).
    pub fn dropout(&mut self, name: &str, x: TensorId, p: f64) -> TensorId {
        if p <= 0.0 || self.inference {
            return x;
        }
        let t = self.tensor_info(x);
        let out = self.tensor(t.numel, t.dtype, t.requires_grad);
        let mask = self.tensor(t.numel, DType::U8, false);
        self.op(
            name,
            OpKind::Dropout,
            OpSpec {
                inputs: vec![x],
                outputs: vec![out, mask],
                saved: vec![mask],
                flops: Numel::per_sample(t.numel.per_sample),
                ..OpSpec::default()
            },
        );
        out
    }

    /// A copy into a new contiguous tensor (`.contiguous()`, `reshape` of a
    /// non-viewable layout). Saves nothing; the gradient is copied back.
    pub fn copy(&mut self, name: &str, x: TensorId) -> TensorId {
        let t = self.tensor_info(x);
        let out = self.tensor(t.numel, t.dtype, t.requires_grad);
        self.op(
            name,
            OpKind::Copy,
            OpSpec {
                inputs: vec![x],
                outputs: vec![out],
                ..OpSpec::default()
            },
        );
        out
    }

    /// `past_key_values.update(key_states, value_states, layer_idx)` in a
    /// training forward with a cache: transformers 5's `DynamicLayer` starts
    /// from empty tensors and concatenates, so the keys and values attention
    /// reads from then on are contiguous copies, which the cache keeps
    /// (pushed to `cache`). Without one, `k` and `v` as they are.
    pub fn cache_update(
        &mut self,
        cache: Option<&mut Vec<TensorId>>,
        k: TensorId,
        v: TensorId,
    ) -> (TensorId, TensorId) {
        let Some(cache) = cache else {
            return (k, v);
        };
        let k = self.copy("cache.update_k", k);
        let v = self.copy("cache.update_v", v);
        cache.extend([k, v]);
        (k, v)
    }

    /// `nn.Embedding(vocab, dim)` lookup of integer ids; saves the ids.
    pub fn embedding(&mut self, name: &str, ids: TensorId, vocab: u64, dim: u64) -> TensorId {
        let w = self.param(&format!("{name}.weight"), &[vocab, dim]);
        self.embedding_with(name, ids, w, dim)
    }

    /// An embedding lookup into an existing weight (e.g. tied embeddings).
    pub fn embedding_with(&mut self, name: &str, ids: TensorId, w: ParamId, dim: u64) -> TensorId {
        let n = self.numel(ids).per_sample * dim;
        let dtype = self.param_dtype();
        let out = self.tensor(Numel::per_sample(n), dtype, self.grad_flows(&[], &[w]));
        self.op(
            name,
            OpKind::Embedding,
            OpSpec {
                inputs: vec![ids],
                outputs: vec![out],
                saved: vec![ids],
                params: vec![w],
                ..OpSpec::default()
            },
        );
        out
    }

    /// Max pooling: saves the input and an int64 index tensor of the output's size.
    /// `geom` gives channels (`cin`), kernel, stride and padding.
    pub fn maxpool(&mut self, name: &str, x: TensorId, geom: Conv, side: u64) -> (TensorId, u64) {
        let (channels, kernel) = (geom.cin, geom.kernel);
        let out_side = geom.out_side(side);
        let dtype = self.dtype(x);
        let n = channels * out_side * out_side;
        let out = self.out_like(n, dtype, &[x]);
        let idx = self.tensor(Numel::per_sample(n), DType::I64, false);
        self.op(
            name,
            OpKind::Pool,
            OpSpec {
                inputs: vec![x],
                outputs: vec![out, idx],
                saved: vec![x, idx],
                flops: Numel::per_sample(n * kernel * kernel),
                ..OpSpec::default()
            },
        );
        (out, out_side)
    }

    /// Adaptive average pooling to `out_side`; saves nothing but the input's shape.
    pub fn avgpool(&mut self, name: &str, x: TensorId, channels: u64, out_side: u64) -> TensorId {
        let dtype = self.dtype(x);
        let n = self.numel(x).per_sample;
        let out = self.out_like(channels * out_side * out_side, dtype, &[x]);
        self.op(
            name,
            OpKind::Pool,
            OpSpec {
                inputs: vec![x],
                outputs: vec![out],
                flops: Numel::per_sample(n),
                ..OpSpec::default()
            },
        );
        out
    }

    /// `torch.flatten` / `view`: a view with no new storage.
    pub fn view(&mut self, x: TensorId) -> TensorId {
        let out = self.alias(x);
        self.op(
            "view",
            OpKind::Copy,
            OpSpec {
                inputs: vec![x],
                outputs: vec![out],
                grad_passthrough: true,
                ..OpSpec::default()
            },
        );
        out
    }

    /// What `softmax` or `log_softmax` of `x` saves for backward: its
    /// output `out`, and before PyTorch 1.11 its input too.
    fn softmax_saved(&self, x: TensorId, out: TensorId) -> Vec<TensorId> {
        if self.softmax_saves_input && self.requires_grad(x) {
            vec![out, x]
        } else {
            vec![out]
        }
    }

    /// Softmax over the last dimension; saves its output (and its input
    /// before PyTorch 1.11). On autocast's
    /// fp32 list (`fp32_set_opt_dtype`), and with `fp32_out`
    /// (`softmax(x, dtype=torch.float32)`, as Llama's eager attention calls
    /// it), the result is fp32: an fp16 input goes through CUDA's
    /// `half_to_float` kernel without a copy; a bf16 input is first copied
    /// to fp32 (`input.to(dtype)` in the composite `softmax`), a copy freed
    /// after the op whose gradient backward makes before the input's.
    pub fn softmax(&mut self, name: &str, x: TensorId, fp32_out: bool) -> TensorId {
        let fp32 = fp32_out || self.autocast_dtype().is_some();
        let x = if fp32 && self.dtype(x) == DType::Bf16 {
            self.cast(x, DType::F32)
        } else {
            x
        };
        let t = self.tensor_info(x);
        let dtype = if fp32 { DType::F32 } else { t.dtype };
        let out = self.tensor(t.numel, dtype, t.requires_grad);
        let saved = self.softmax_saved(x, out);
        self.op(
            name,
            OpKind::Softmax,
            OpSpec {
                inputs: vec![x],
                outputs: vec![out],
                saved,
                flops: Numel::per_sample(5 * t.numel.per_sample),
                ..OpSpec::default()
            },
        );
        out
    }

    /// Batched matmul between two activations (`torch.matmul` on 4-D tensors
    /// lowers to `bmm`); saves both operands. `out_numel` per sample.
    pub fn bmm(
        &mut self,
        name: &str,
        a: TensorId,
        b: TensorId,
        out_numel: u64,
        flops: u64,
    ) -> TensorId {
        let a = self.autocast_lower(a);
        let b = self.autocast_lower(b);
        let dtype = self.promote(a, b);
        let out = self.out_like(out_numel, dtype, &[a, b]);
        let mut saved = Vec::new();
        if self.requires_grad(b) {
            saved.push(a);
        }
        if self.requires_grad(a) {
            saved.push(b);
        }
        self.op(
            name,
            OpKind::Matmul,
            OpSpec {
                inputs: vec![a, b],
                outputs: vec![out],
                saved,
                flops: Numel::per_sample(flops),
                ..OpSpec::default()
            },
        );
        out
    }

    /// Cross-entropy (`F.cross_entropy`: `log_softmax` + `nll_loss`) over
    /// `rows` rows of `classes` logits per sample. `cross_entropy_loss`
    /// passes the logits' own dtype to `log_softmax` (so autocast's
    /// `fp32_set_opt_dtype` leaves it alone): half logits give half
    /// log-probabilities, which `nll_loss` (autocast's fp32 list) copies to
    /// fp32. `log_softmax` saves its output, `nll_loss` its (fp32) input;
    /// backward allocates the zero-filled gradient of that input, then the
    /// logits' gradient (through the cast's, for half logits).
    pub fn cross_entropy(
        &mut self,
        name: &str,
        logits: TensorId,
        labels: TensorId,
        rows: u64,
        classes: u64,
    ) -> TensorId {
        if self.inference {
            // No loss in inference: the logits are the result.
            self.keep_alive(logits);
            return logits;
        }
        let n = rows * classes;
        let logp = self.out_like(n, self.dtype(logits), &[logits]);
        let saved = self.softmax_saved(logits, logp);
        self.op(
            &format!("{name}.log_softmax"),
            OpKind::Softmax,
            OpSpec {
                inputs: vec![logits],
                outputs: vec![logp],
                saved,
                flops: Numel::per_sample(3 * n),
                ..OpSpec::default()
            },
        );
        let logp = self.autocast_fp32(logp);
        let loss = self.tensor(Numel::fixed(1), DType::F32, true);
        // nll_loss also returns (and saves) `total_weight`, a scalar.
        let total_weight = self.tensor(Numel::fixed(1), DType::F32, false);
        self.op(
            name,
            OpKind::Loss,
            OpSpec {
                inputs: vec![logp, labels],
                outputs: vec![loss, total_weight],
                saved: vec![logp, labels, total_weight],
                flops: Numel::per_sample(n),
                ..OpSpec::default()
            },
        );
        loss
    }
}
