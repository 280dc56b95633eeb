//! The modules of torchvision's mobile and modern CNNs (`torchvision/ops/misc.py`,
//! `torchvision/ops/stochastic_depth.py`, `torchvision/models/convnext.py`) on
//! top of [`Builder`]: in-place activations, squeeze-and-excitation,
//! stochastic depth, in-place dropout and
//! `LayerNorm2d`.

use crate::builder::{Builder, OpSpec};
use crate::dtype::DType;
use crate::graph::{Numel, OpKind, TensorId};
use crate::nn::Conv;

/// The activation a torchvision conv block ends with (`Conv2dNormActivation`
/// builds it with `inplace=True`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Act {
    /// No activation (the projection of an inverted residual).
    None,
    /// `nn.ReLU(inplace=True)`.
    Relu,
    /// `nn.ReLU6(inplace=True)` (MobileNetV2).
    Relu6,
    /// `nn.Hardswish(inplace=True)` (MobileNetV3).
    Hardswish,
    /// `nn.SiLU(inplace=True)` (EfficientNet).
    Silu,
}

/// A `SqueezeExcitation` module's shape and activations.
#[derive(Clone, Copy, Debug)]
pub struct Se {
    /// Channels of the input (and of the scale).
    pub channels: u64,
    /// Channels between `fc1` and `fc2`.
    pub squeeze: u64,
    /// The activation after `fc1`.
    pub act: Act,
    /// `nn.Hardsigmoid` (MobileNetV3) as the scale activation, else `nn.Sigmoid`.
    pub hard_sigmoid: bool,
}

impl Builder {
    /// Applies `act` to `x` in place, as `Conv2dNormActivation` does.
    pub fn activation_inplace(&mut self, name: &str, x: TensorId, act: Act) -> TensorId {
        match act {
            Act::None => x,
            Act::Relu => self.relu(name, x, true),
            Act::Relu6 | Act::Hardswish | Act::Silu => self.inplace_saving_input(name, x),
        }
    }

    /// An in-place activation whose derivative reads its input: `hardtanh_`
    /// (ReLU6), `hardswish_`, `silu_`. `tools/autograd/derivatives.yaml`
    /// gives their in-place forms the out-of-place formula on `self`, so the
    /// generated autograd kernel first saves a copy of the input
    /// (`original_self`), then overwrites it: the output takes the input's
    /// storage and the copy lives until the op's backward. (Checked on
    /// torch 2.15 with `saved_tensors_hooks`: the saved tensor has its own
    /// storage. `relu_` differs: its formula reads the result, which it saves
    /// without a copy.)
    pub fn inplace_saving_input(&mut self, name: &str, x: TensorId) -> TensorId {
        let t = self.tensor_info(x);
        let original = self.tensor(t.numel, t.dtype, false);
        let out = self.alias(x);
        self.op(
            name,
            OpKind::Elementwise,
            OpSpec {
                inputs: vec![x],
                outputs: vec![out, original],
                saved: vec![original],
                flops: Numel::per_sample(4 * t.numel.per_sample),
                ..OpSpec::default()
            },
        );
        out
    }

    /// `torch.sigmoid`: a new output, which its backward reads (saved).
    pub fn sigmoid(&mut self, name: &str, x: TensorId) -> TensorId {
        self.relu(name, x, false)
    }

    /// `torchvision.ops.SqueezeExcitation` on `x` (`channels` × `side`²):
    /// `avgpool` (a mean over the pixels, which saves nothing), `fc1` (a 1×1
    /// conv with bias), `act` (out of place: `nn.ReLU()` saves its output,
    /// `nn.SiLU(inplace=True)` a copy of its input), `fc2`, the scale
    /// activation (`nn.Hardsigmoid()` saves its input, `nn.Sigmoid()` its
    /// output), then `scale * x`, which saves both operands: `x` at full size
    /// (often already kept by the op that made it) and the per-channel scale.
    pub fn squeeze_excitation(&mut self, name: &str, x: TensorId, se: Se, side: u64) -> TensorId {
        let Se {
            channels,
            squeeze,
            act,
            hard_sigmoid,
        } = se;
        let pooled = self.avgpool(&format!("{name}.avgpool"), x, channels, 1);
        let mut fc1 = Conv::new(channels, squeeze, 1, 1, 0);
        fc1.bias = true;
        let (s, _) = self.conv2d(&format!("{name}.fc1"), pooled, fc1, 1);
        let s = match act {
            Act::Relu => self.relu(&format!("{name}.activation"), s, false),
            other => self.activation_inplace(&format!("{name}.activation"), s, other),
        };
        let mut fc2 = Conv::new(squeeze, channels, 1, 1, 0);
        fc2.bias = true;
        let (s, _) = self.conv2d(&format!("{name}.fc2"), s, fc2, 1);
        let s = if hard_sigmoid {
            self.activation(&format!("{name}.scale_activation"), s)
        } else {
            self.sigmoid(&format!("{name}.scale_activation"), s)
        };
        self.mul(&format!("{name}.scale"), s, x, channels * side * side)
    }

    /// `torchvision.ops.stochastic_depth(x, p, "row")` in training: a
    /// per-sample noise tensor (`empty([N, 1, 1, 1]).bernoulli_()`, then
    /// `div_`), and `x * noise`, a new tensor that saves the noise (`x` itself
    /// is not needed: the noise takes no gradient). `p == 0` (each network's
    /// first block) and inference return `x`.
    pub fn stochastic_depth(&mut self, name: &str, x: TensorId, p: f64) -> TensorId {
        if p <= 0.0 || self.inference {
            return x;
        }
        let t = self.tensor_info(x);
        let noise = self.tensor(Numel::per_sample(1), t.dtype, false);
        self.op(
            &format!("{name}.bernoulli_"),
            OpKind::Dropout,
            OpSpec {
                outputs: vec![noise],
                ..OpSpec::default()
            },
        );
        let out = self.tensor(t.numel, t.dtype, t.requires_grad);
        self.op(
            name,
            OpKind::Elementwise,
            OpSpec {
                inputs: vec![x, noise],
                outputs: vec![out],
                saved: vec![noise],
                flops: Numel::per_sample(t.numel.per_sample),
                ..OpSpec::default()
            },
        );
        out
    }

    /// `nn.Dropout(p, inplace=True)` in training: `at::dropout_` has no
    /// fused kernel (`aten/src/ATen/native/Dropout.cpp`, `_dropout<true>`),
    /// so it builds a noise tensor of the input's size and type
    /// (`empty_like(x).bernoulli_(1 - p).div_(1 - p)`) and multiplies in
    /// place; the product saves the noise. `p == 0` and inference are no-ops.
    pub fn dropout_inplace(&mut self, name: &str, x: TensorId, p: f64) -> TensorId {
        if p <= 0.0 || self.inference {
            return x;
        }
        let t = self.tensor_info(x);
        let noise = self.tensor(t.numel, t.dtype, false);
        let out = self.alias(x);
        self.op(
            name,
            OpKind::Dropout,
            OpSpec {
                inputs: vec![x],
                outputs: vec![out, noise],
                saved: vec![noise],
                flops: Numel::per_sample(t.numel.per_sample),
                ..OpSpec::default()
            },
        );
        out
    }

    /// A learned per-channel scale times an activation (ConvNeXt's
    /// `layer_scale * block(x)`): the product takes the promoted type (an
    /// fp32 parameter and a half activation give fp32, autocast leaving
    /// `mul` alone) and saves the activation for the scale's gradient.
    pub fn mul_param(&mut self, name: &str, x: TensorId, channels: u64) -> TensorId {
        let p = self.param(name, &[channels, 1, 1]);
        let t = self.tensor_info(x);
        let dtype = if t.dtype == self.param_storage_dtype(p) {
            t.dtype
        } else {
            DType::F32
        };
        let out = self.tensor(t.numel, dtype, self.grad_flows(&[x], &[p]));
        let saved = if self.param_trainable(p) {
            vec![x]
        } else {
            Vec::new()
        };
        self.op(
            name,
            OpKind::Elementwise,
            OpSpec {
                inputs: vec![x],
                outputs: vec![out],
                saved,
                params: vec![p],
                flops: Numel::per_sample(t.numel.per_sample),
                ..OpSpec::default()
            },
        );
        out
    }

    /// torchvision's `LayerNorm2d` over `channels`: `x.permute(0, 2, 3, 1)`
    /// (a view), `F.layer_norm`, and the permute back (a view).
    pub fn layernorm2d(&mut self, name: &str, x: TensorId, channels: u64) -> TensorId {
        let v = self.view(x);
        let y = self.layernorm(name, v, channels, true);
        self.view(y)
    }
}
