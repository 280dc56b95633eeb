//! T5's own ops (`models/t5/modeling_t5.py`) on top of the builder: its
//! layer norm, the feed-forward's activation, the fp16 clamp and SDPA with
//! the position bias as its mask.

use super::t5::{T5Activation, T5Spec};
use crate::builder::{Builder, OpSpec};
use crate::dtype::DType;
use crate::graph::{Numel, OpKind, TensorId};
use crate::nn::bytes;

/// The feed-forward's activation as `ACT2FN` builds it.
pub(crate) fn activation(b: &mut Builder, act: T5Activation, name: &str, x: TensorId) -> TensorId {
    match act {
        T5Activation::Relu => b.relu(name, x, false),
        T5Activation::GeluNew => b.gelu_new(name, x),
        T5Activation::Gelu | T5Activation::Silu => b.activation(name, x),
    }
}

/// `T5LayerNorm`: `variance = x.to(f32).pow(2).mean(-1)`, then
/// `x * rsqrt(variance + eps)` on the input itself (not its fp32 copy; the
/// product is fp32), cast to the weight's dtype when that is half, then
/// `weight * x`. In fp32 and under autocast (an fp32 residual stream) this
/// saves what Llama's RMSNorm does; in pure half precision the fp32 copy
/// (saved by `pow`) and the half input (saved by the product) both stay.
pub(crate) fn t5_layer_norm(b: &mut Builder, name: &str, x: TensorId, d: u64) -> TensorId {
    let w = b.param(&format!("{name}.weight"), &[d]);
    let xf = b.cast(x, DType::F32);
    let n = b.numel(x).per_sample;
    let rows = n / d.max(1);
    let rstd = b.tensor(Numel::per_sample(rows), DType::F32, b.requires_grad(xf));
    b.op(
        &format!("{name}.pow_mean_rsqrt"),
        OpKind::RmsNorm,
        OpSpec {
            inputs: vec![xf],
            outputs: vec![rstd],
            saved: vec![xf, rstd],
            forward_temp: bytes(Numel::per_sample(n), DType::F32),
            flops: Numel::per_sample(3 * n),
            ..OpSpec::default()
        },
    );
    let xn = b.mul(&format!("{name}.mul"), x, rstd, n);
    let xn = if b.param_dtype() == DType::F32 {
        xn
    } else {
        b.cast(xn, b.param_dtype())
    };
    let out = b.tensor(Numel::per_sample(n), b.dtype(xn), b.grad_flows(&[xn], &[w]));
    b.op(
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
    out
}

/// `T5Block`'s clamp of fp16 hidden states (`torch.clamp` with tensor
/// bounds, which saves its input; pure fp16 only: under autocast the
/// residual stream is fp32).
pub(crate) fn clamp_half(b: &mut Builder, name: &str, x: TensorId) -> TensorId {
    if b.dtype(x) == DType::F16 {
        b.activation(name, x)
    } else {
        x
    }
}

/// SDPA with the position bias as its float mask (`sdpa_attention_forward`,
/// `create_position_bias_mask`): the memory-efficient kernel (the flash
/// kernel takes no bias; `transformers` refuses flash-attention for T5)
/// saves q, k, v, the bias, the output and the log-sum-exp; its backward
/// writes the bias's gradient at the scores' shape before reducing it.
/// Not checked against a reference run.
pub(crate) fn sdpa_with_bias(
    b: &mut Builder,
    name: &str,
    qkv: [TensorId; 3],
    bias: Option<TensorId>,
    lens: (u64, u64),
    t: &T5Spec,
) -> TensorId {
    let [q, k, v] = qkv.map(|x| b.autocast_lower(x));
    let (q_len, k_len) = lens;
    let inner = t.heads * t.d_kv;
    let dtype = b.dtype(q);
    let out = b.tensor(Numel::per_sample(q_len * inner), dtype, true);
    let lse = b.tensor(Numel::per_sample(t.heads * q_len), DType::F32, false);
    let s2 = t.heads * q_len * k_len;
    let mut inputs = vec![q, k, v];
    inputs.extend(bias);
    let mut saved = inputs.clone();
    saved.extend([out, lse]);
    let bias_grad = if bias.is_some() { s2 * dtype.size() } else { 0 };
    b.op(
        &format!("{name}.sdpa"),
        OpKind::FusedAttention,
        OpSpec {
            inputs,
            outputs: vec![out, lse],
            saved,
            backward_temp: Numel::per_sample(4 * q_len * inner + 4 * t.heads * q_len + bias_grad),
            flops: Numel::per_sample(s2.saturating_mul(4 * t.d_kv)),
            ..OpSpec::default()
        },
    );
    out
}
