//! The sparse feed-forward of a layer ([`Moe`]) as `transformers` 5.24
//! runs it in training: the router, the grouped expert path
//! (`grouped_mm_experts_forward`, the default `experts_implementation`)
//! and the shared experts. Every size is per sample: T = `rows` tokens,
//! S = T × top-k routed rows, whatever the routing (see
//! `tests/reference/moe/README.md`).
//!
//! Expert parallelism (`ep` > 1, Megatron-Core's `MoEAlltoAllTokenDispatcher`
//! in `megatron/core/transformer/moe/token_dispatcher.py`): a rank holds
//! `experts / ep` experts; the rows it routed, sorted by expert, go out by
//! all-to-all and as many come back on average (every rank sends its S
//! rows to the ep ranks and receives S in all), are regrouped by local
//! expert when it holds several, run through its experts, and return the
//! same way. The all-to-all's autograd saves nothing; each exchange is a
//! new S × h buffer, forward and backward.
//!
//! Expert tensor parallelism (`etp`, each expert's columns split over etp
//! ranks; Megatron-Core's default is `tp`): the dispatcher all-gathers the
//! received rows over the etp ranks and reduce-scatters the experts' output
//! back (`gather_from_sequence_parallel_region` /
//! `reduce_scatter_to_sequence_parallel_region` over the expert
//! tensor-parallel group in `token_dispatcher.py`). Megatron runs a
//! mixture of experts under tensor parallelism with sequence parallelism,
//! so a rank routes 1/tp of the tokens that the lowering's tensor-parallel
//! ranks replicate: its experts run S × etp / tp rows. With etp = tp that
//! is S, as routed; otherwise one new buffer each way (with etp < tp a copy
//! of the rank's slice where Megatron's rows are already local).
//!
//! LoRA: the expert banks are 3-D `nn.Parameter`s and the routers modules
//! holding a weight, so PEFT's `target_modules="all-linear"` adapts only the
//! `nn.Linear`s around them (attention, shared experts, Qwen2-MoE's shared
//! expert gate), and QLoRA's bitsandbytes quantizes only those; the banks
//! and routers stay frozen in the model's dtype.

use super::moe::{ExpertActivation, Moe, Router};
use crate::builder::{Builder, OpSpec};
use crate::dtype::DType;
use crate::graph::{Numel, OpKind, ParamId, TensorId};

/// The block's output for its normalized input `n` (`rows` × `h`, the hidden size).
pub fn block(b: &mut Builder, h: u64, moe: &Moe, n: TensorId) -> TensorId {
    let rows = b.numel(n).per_sample / h.max(1);
    if moe.router == Router::Llama4 && b.ep <= 1 {
        return llama4_block(b, h, moe, n, rows);
    }
    // Qwen2-MoE and ERNIE 4.5 compute their shared experts before
    // routing; DeepSeek after.
    let shared_first = match moe.shared {
        Some(s) if s.gate => Some(shared_mlp(b, h, s.intermediate, n, "mlp.shared_expert")),
        Some(s) if s.first => Some(shared_mlp(b, h, s.intermediate, n, "mlp.shared_experts")),
        _ => None,
    };
    let (weights, index) = router(b, h, moe, n, rows);
    b.routed = true;
    let routed = if moe.latent > 0 {
        // Nemotron-H: the experts between `fc1_latent_proj` and
        // `fc2_latent_proj` (`nn.Linear`s, biased with `mlp_bias`: none in
        // the released models).
        let l = moe.latent;
        let x = b.linear("mixer.fc1_latent_proj", n, h, l, false);
        let out = experts(b, l, moe, x, (weights, index), rows);
        b.linear("mixer.fc2_latent_proj", out, l, h, false)
    } else {
        experts(b, h, moe, n, (weights, index), rows)
    };
    b.routed = false;
    match (moe.shared, shared_first) {
        (Some(s), Some(shared)) if !s.gate => b.add("mlp.add_shared", routed, shared),
        (Some(_), Some(shared)) => {
            // `F.sigmoid(shared_expert_gate(x)) * shared_expert_output`.
            let g = b.linear("mlp.shared_expert_gate", n, h, 1, false);
            let g = b.tanh("mlp.shared_expert_gate.sigmoid", g);
            let scaled = b.mul("mlp.shared_expert.scale", g, shared, rows * h);
            b.add("mlp.add_shared", routed, scaled)
        }
        (Some(s), None) => {
            let shared = if moe.activation == ExpertActivation::Relu2 {
                relu2_shared_mlp(b, h, s.intermediate, n)
            } else if s.fused {
                fused_shared_mlp(b, h, s.intermediate, n)
            } else {
                shared_mlp(b, h, s.intermediate, n, "mlp.shared_experts")
            };
            b.add("mlp.add_shared", routed, shared)
        }
        (None, _) => routed,
    }
}

/// The routed experts alone, their router reading `router_in` and the
/// experts `experts_in` (Gemma 4 routes from the block's residual and
/// feeds the experts its own norm of it).
pub fn routed(
    b: &mut Builder,
    h: u64,
    moe: &Moe,
    router_in: TensorId,
    experts_in: TensorId,
) -> TensorId {
    let rows = b.numel(experts_in).per_sample / h.max(1);
    let (weights, index) = router(b, h, moe, router_in, rows);
    b.routed = true;
    let out = experts(b, h, moe, experts_in, (weights, index), rows);
    b.routed = false;
    out
}

/// Llama 4's `Llama4TextMoe` on `n` (`rows` tokens): the router's scores
/// for every expert ([`llama4_scores`]); the hidden states repeated once per
/// expert and multiplied by their expert's score (`routed_in`, E × rows
/// rows: the repeat and the scores' column are saved); `bmm` with the
/// whole `gate_up_proj` bank ([experts, h, 2i]), the gated activation,
/// `bmm` with `down_proj`; the experts' outputs summed; the shared expert
/// on `n`, the sum added to its output in place. Every token through every
/// expert: E × rows rows of h, 2i and i at once, whatever top-k. Without
/// expert parallelism only (`transformers` has no expert-parallel plan for
/// it; under Megatron's, `ep` > 1, the routed rows go through
/// [`experts`] as for the other routers).
fn llama4_block(b: &mut Builder, h: u64, moe: &Moe, n: TensorId, rows: u64) -> TensorId {
    let (e, i) = (moe.experts, moe.expert_intermediate);
    let scores = llama4_scores(b, h, moe, n, rows);
    b.routed = true;
    let dtype = b.dtype(scores);
    // `router_scores.transpose(0, 1).reshape(-1, 1)`: a contiguous copy.
    let column = b.tensor_op(
        "feed_forward.router_scores_column",
        OpKind::Copy,
        &[scores],
        Numel::per_sample(rows * e),
        dtype,
        true,
        &[],
    );
    let x_dtype = b.dtype(n);
    let repeated = b.tensor_op(
        "feed_forward.repeat",
        OpKind::Copy,
        &[n],
        Numel::per_sample(e * rows * h),
        x_dtype,
        true,
        &[],
    );
    let routed_in = b.mul_column("feed_forward.routed_in", repeated, column);
    let gate_up = b.expert_param("feed_forward.experts.gate_up_proj", &[e, h, 2 * i]);
    let down = b.expert_param("feed_forward.experts.down_proj", &[e, i, h]);
    // `torch.bmm` is on autocast's lower-precision list: the banks'
    // half copies are cached and saved, as a linear's weight is.
    let up = b.linear_with(
        "feed_forward.experts.bmm_gate_up",
        routed_in,
        gate_up,
        None,
        h,
        2 * i,
    );
    let act = gate(b, moe.activation, up, e * rows * i);
    let out = b.linear_with("feed_forward.experts.bmm_down", act, down, None, i, h);
    // `routed_out.reshape(E, -1, h).sum(dim=0)`.
    let out_dtype = b.dtype(out);
    let summed = b.tensor_op(
        "feed_forward.sum_experts",
        OpKind::Add,
        &[out],
        Numel::per_sample(rows * h),
        out_dtype,
        true,
        &[],
    );
    b.routed = false;
    let shared = moe
        .shared
        .map_or(moe.expert_intermediate, |s| s.intermediate);
    let shared = shared_mlp(b, h, shared, n, "feed_forward.shared_expert");
    let out_sum = b.add_inplace("feed_forward.add_routed", shared, summed);
    // The forward's locals `routed_in` and `routed_out` live until it returns.
    b.keep_alive(routed_in);
    b.keep_alive(out);
    out_sum
}

/// `Llama4Router`: `rows × experts` logits (an `nn.Linear`), top-k, the
/// scores a new −inf tensor with the top values scattered in (the indices
/// saved), `sigmoid(scores.float())` (saving its fp32 output) cast back to
/// the logits' dtype. Returns the scores of every expert.
fn llama4_scores(b: &mut Builder, h: u64, moe: &Moe, n: TensorId, rows: u64) -> TensorId {
    let (e, k) = (moe.experts, moe.top_k);
    let logits = b.linear("feed_forward.router", n, h, e, false);
    keep_for_aux_loss(b, moe, logits);
    let (top, index) = b.topk("feed_forward.router.topk", logits, e, k);
    let dtype = b.dtype(logits);
    let scattered = b.tensor_op(
        "feed_forward.router.scatter",
        OpKind::Copy,
        &[top, index],
        Numel::per_sample(rows * e),
        dtype,
        true,
        &[index],
    );
    let wide = b.cast(scattered, DType::F32);
    let sig = b.tanh("feed_forward.router.sigmoid", wide);
    b.cast(sig, dtype)
}

/// Granite's shared MLP: `output_linear(act(g) * u)` where `g, u =
/// input_linear(x).chunk(2, dim=-1)`, both halves views of one output, as
/// [`super::MlpKind::FusedGated`].
fn fused_shared_mlp(b: &mut Builder, h: u64, i: u64, n: TensorId) -> TensorId {
    let gate_up = b.linear("shared_mlp.input_linear", n, h, 2 * i, false);
    let halves = b.split("shared_mlp.chunk", gate_up, 2, false);
    let half = |k: usize| halves.get(k).copied().unwrap_or(gate_up);
    let g = b.activation("shared_mlp.activation", half(0));
    let gu = b.mul("shared_mlp.mul", g, half(1), b.numel(g).per_sample);
    b.linear("shared_mlp.output_linear", gu, i, h, false)
}

/// Nemotron-H's shared expert (`NemotronHMLP`): `down(relu2(up(x)))` of
/// `nn.Linear`s, no gate.
fn relu2_shared_mlp(b: &mut Builder, h: u64, i: u64, n: TensorId) -> TensorId {
    let u = b.linear("mixer.shared_experts.up_proj", n, h, i, false);
    let a = b.relu_squared("mixer.shared_experts.act_fn", u);
    b.linear("mixer.shared_experts.down_proj", a, i, h, false)
}

/// A shared expert: `down(act(gate(x)) * up(x))` of `nn.Linear`s.
fn shared_mlp(b: &mut Builder, h: u64, i: u64, n: TensorId, name: &str) -> TensorId {
    let g = b.linear(&format!("{name}.gate_proj"), n, h, i, false);
    let g = b.activation(&format!("{name}.act_fn"), g);
    let u = b.linear(&format!("{name}.up_proj"), n, h, i, false);
    let gu = b.mul(&format!("{name}.gate_mul"), g, u, b.numel(u).per_sample);
    b.linear(&format!("{name}.down_proj"), gu, i, h, false)
}

/// The router's logits, `F.linear(hidden_states, self.weight)` (and the
/// bias gpt-oss has): under autocast the logits are half; DeepSeek's
/// `.type(torch.float32)` does not change that (linear is on autocast's
/// lower-precision list). The router is a module of its own holding a
/// weight, not an `nn.Linear`: PEFT's `all-linear` puts no adapter on it and
/// bitsandbytes does not quantize it.
fn router_logits(b: &mut Builder, h: u64, moe: &Moe, n: TensorId) -> TensorId {
    let e = moe.experts;
    let name = match moe.router {
        Router::TopKSoftmax => "mlp.router",
        Router::TopKSoftmaxFp32 => "block_sparse_moe.router",
        Router::HunYuan => "mlp.gate.wg",
        _ => "mlp.gate",
    };
    // Hunyuan's gate casts its input to its weight's fp32 (a no-op in fp32;
    // with 16-bit weights it casts nothing).
    let n = if moe.router == Router::HunYuan && b.param_dtype() == DType::F32 {
        b.cast(n, DType::F32)
    } else {
        n
    };
    let w = b.param(&format!("{name}.weight"), &[e, h]);
    let bias = moe.biases.then(|| b.param(&format!("{name}.bias"), &[e]));
    let logits = b.linear_with(name, n, w, bias, h, e);
    // Granite's router returns its fp32 copy (`.float()`), which the
    // auxiliary loss then keeps.
    let logits = if moe.router == Router::TopKSoftmaxFp32 {
        b.cast(logits, DType::F32)
    } else {
        logits
    };
    keep_for_aux_loss(b, moe, logits);
    logits
}

/// `OutputRecorder(…Router, index=0)` keeps the logits for the auxiliary loss.
fn keep_for_aux_loss(b: &mut Builder, moe: &Moe, logits: TensorId) {
    if moe.aux_loss && !b.inference {
        b.router_logits.push(logits);
    }
}

/// The router: the top-k weights (`rows × k`) and their int64 expert ids.
fn router(b: &mut Builder, h: u64, moe: &Moe, n: TensorId, rows: u64) -> (TensorId, TensorId) {
    let (e, k) = (moe.experts, moe.top_k);
    match moe.router {
        Router::SoftmaxCorrected => ernie_router(b, h, moe, n, rows),
        // Hunyuan's renormalizes and casts back as the Qwen MoE routers do
        // (its input's fp32 copy is `router_logits`').
        Router::Softmax { .. } | Router::HunYuan => {
            let (renormalize, cast_back) = match moe.router {
                Router::Softmax {
                    renormalize,
                    cast_back,
                } => (renormalize, cast_back),
                _ => (true, true),
            };
            let logits = router_logits(b, h, moe, n);
            let probs = b.softmax("mlp.gate.softmax", logits, true);
            let (mut w, index) = b.topk("mlp.gate.topk", probs, e, k);
            if renormalize {
                w = b.scale("mlp.gate.renormalize", w);
            }
            if cast_back {
                w = b.cast(w, b.dtype(logits));
            }
            (w, index)
        }
        Router::SoftmaxGroups { groups, .. } => {
            let logits = router_logits(b, h, moe, n);
            let probs = b.softmax("mlp.gate.softmax", logits, true);
            let chosen = if groups > 1 {
                // `scores.masked_fill(~score_mask.bool(), 0.0)` keeps its bool mask.
                let mask = b.index_tensor(
                    "mlp.gate.group_mask",
                    &[probs],
                    Numel::per_sample(rows * e),
                    DType::U8,
                );
                let dtype = b.dtype(probs);
                b.tensor_op(
                    "mlp.gate.masked_fill",
                    OpKind::Elementwise,
                    &[probs, mask],
                    Numel::per_sample(rows * e),
                    dtype,
                    true,
                    &[mask],
                )
            } else {
                probs
            };
            let (w, index) = b.topk("mlp.gate.topk", chosen, e, k);
            (b.scale("mlp.gate.routed_scaling", w), index)
        }
        Router::SigmoidGroups { renormalize, .. } => {
            let logits = router_logits(b, h, moe, n);
            // `router_logits.sigmoid()` keeps its output; the choice
            // (`scores + e_score_correction_bias`, fp32, then the group
            // mask) carries no gradient to the weights.
            b.buffer("mlp.gate.e_score_correction_bias", e, DType::F32);
            let scores = b.tanh("mlp.gate.sigmoid", logits);
            let choice = b.index_tensor(
                "mlp.gate.score_correction",
                &[scores],
                Numel::per_sample(rows * e),
                DType::F32,
            );
            let masked = b.index_tensor(
                "mlp.gate.masked_fill",
                &[choice],
                Numel::per_sample(rows * e),
                DType::F32,
            );
            let (_, index) = b.topk("mlp.gate.topk", masked, e, k);
            let dtype = b.dtype(scores);
            let mut w = b.tensor_op(
                "mlp.gate.gather",
                OpKind::Copy,
                &[scores, index],
                Numel::per_sample(rows * k),
                dtype,
                true,
                &[index],
            );
            if renormalize {
                w = b.scale("mlp.gate.renormalize", w);
            }
            (b.scale("mlp.gate.routed_scaling", w), index)
        }
        Router::SigmoidBias => {
            let logits = router_logits(b, h, moe, n);
            // `sigmoid(router_logits.float())` keeps its fp32 output (the
            // cast is a no-op on fp32 logits); `+ e_score_correction_bias`
            // makes the fp32 choice, freed once top-k has picked.
            b.buffer("mlp.e_score_correction_bias", e, DType::F32);
            let logits = b.cast(logits, DType::F32);
            let scores = b.tanh("mlp.gate.sigmoid", logits);
            // `top_k_weights /= top_k_weights.sum(-1, keepdim=True)`.
            biased_choice(b, "mlp.gate.score_correction", scores, (rows, e, k))
        }
        Router::Gemma4 => gemma4_router(b, h, moe, n, rows),
        Router::Llama4 => {
            // Under expert parallelism: the chosen experts' scores.
            let scores = llama4_scores(b, h, moe, n, rows);
            let (w, index) = b.topk("feed_forward.router.chosen", scores, e, k);
            (w, index)
        }
        Router::TopKSoftmaxFp32 => {
            // fp32 logits; `softmax(top, dim=-1)` of the fp32 top-k keeps
            // its output; `.type_as(hidden_states)` casts the weights back.
            let logits = router_logits(b, h, moe, n);
            let (top, index) = b.topk("block_sparse_moe.router.topk", logits, e, k);
            let w = b.tensor_op(
                "block_sparse_moe.router.softmax",
                OpKind::Softmax,
                &[top],
                Numel::per_sample(rows * k),
                DType::F32,
                true,
                &[],
            );
            (b.cast(w, b.dtype(n)), index)
        }
        Router::TopKSoftmax => {
            let logits = router_logits(b, h, moe, n);
            let (top, index) = b.topk("mlp.router.topk", logits, e, k);
            // `softmax(top, dtype=top.dtype)` keeps the logits' dtype.
            let dtype = b.dtype(top);
            let w = b.tensor_op(
                "mlp.router.softmax",
                OpKind::Softmax,
                &[top],
                Numel::per_sample(rows * k),
                dtype,
                true,
                &[],
            );
            (w, index)
        }
    }
}

/// Gemma 4's router (`Gemma4TextRouter`) on the block's residual `x`
/// (`rows` tokens): an RMSNorm without weight, times the learned `scale`
/// and `hidden_size^-½`, the logits, an fp32 softmax, top-k, the k weights
/// divided by their sum and multiplied by `per_expert_scale[index]`.
/// Returns the weights and the expert ids.
fn gemma4_router(
    b: &mut Builder,
    h: u64,
    moe: &Moe,
    x: TensorId,
    rows: u64,
) -> (TensorId, TensorId) {
    let (e, k) = (moe.experts, moe.top_k);
    let n = b.rmsnorm_unscaled("router.norm", x, h);
    let scale = b.param("router.scale", &[h]);
    let n = param_mul(b, "router.scale_mul", n, scale);
    let n = b.scale("router.root_size", n);
    let logits = b.linear("router.proj", n, h, e, false);
    let probs = b.softmax("router.softmax", logits, true);
    let (w, index) = b.topk("router.topk", probs, e, k);
    let w = b.scale("router.renormalize", w);
    let per_expert = b.param("router.per_expert_scale", &[e]);
    let gathered = b.gather_param_rows(
        "router.per_expert_scale.gather",
        per_expert,
        index,
        rows * k,
        1,
    );
    let w = b.mul("router.per_expert_scale.mul", w, gathered, rows * k);
    (w, index)
}

/// `x * p` for a parameter vector `p` broadcast over the rows: a new
/// tensor; saves `x` for `p`'s gradient.
fn param_mul(b: &mut Builder, name: &str, x: TensorId, p: ParamId) -> TensorId {
    let t = b.tensor_info(x);
    let out = b.tensor(t.numel, t.dtype, true);
    b.op(
        name,
        OpKind::Elementwise,
        OpSpec {
            inputs: vec![x],
            outputs: vec![out],
            saved: vec![x],
            params: vec![p],
            flops: Numel::per_sample(t.numel.per_sample),
            ..OpSpec::default()
        },
    );
    out
}

/// ERNIE 4.5's `Ernie4_5_MoeTopKRouter`: everything in fp32 with autocast
/// off ([`Router::SoftmaxCorrected`]); the softmax keeps its output, the
/// biased choice is freed once top-k has picked, and the renormalized
/// weights are cast to the block input's dtype. (A weight stored in half
/// is copied to fp32 by `self.weight.float()`: `[experts, hidden]`, not
/// modelled.)
fn ernie_router(
    b: &mut Builder,
    h: u64,
    moe: &Moe,
    n: TensorId,
    rows: u64,
) -> (TensorId, TensorId) {
    let (e, k) = (moe.experts, moe.top_k);
    let w = b.param("mlp.gate.weight", &[e, h]);
    b.frozen_param("mlp.gate.moe_statics.e_score_correction_bias", &[1, e]);
    let dtype = b.dtype(n);
    let (weights, index) = b.without_autocast(|b| {
        let x = b.cast(n, DType::F32);
        let logits = b.linear_with("mlp.gate", x, w, None, h, e);
        keep_for_aux_loss(b, moe, logits);
        let probs = b.softmax("mlp.gate.softmax", logits, true);
        biased_choice(b, "mlp.gate.moe_statics", probs, (rows, e, k))
    });
    (b.cast(weights, dtype), index)
}

/// The choice of a router with a score-correction bias (MiniMax-M2's,
/// ERNIE 4.5's): `scores + e_score_correction_bias` in fp32 (`bias`, freed
/// once top-k has picked), the chosen fp32 scores gathered (the index kept
/// for backward) and divided by their sum. Returns the weights and the index.
fn biased_choice(
    b: &mut Builder,
    bias: &str,
    scores: TensorId,
    (rows, e, k): (u64, u64, u64),
) -> (TensorId, TensorId) {
    let choice = b.index_tensor(bias, &[scores], Numel::per_sample(rows * e), DType::F32);
    let (_, index) = b.topk("mlp.gate.topk", choice, e, k);
    let chosen = b.tensor_op(
        "mlp.gate.gather",
        OpKind::Copy,
        &[scores, index],
        Numel::per_sample(rows * k),
        DType::F32,
        true,
        &[index],
    );
    (b.scale("mlp.gate.renormalize", chosen), index)
}

/// `grouped_mm_experts_forward`: sort the S = rows × k (token, expert)
/// pairs by expert, gather their hidden states, two grouped matmuls around
/// the gated activation, weight, restore the order, sum the k rows of each token.
fn experts(
    b: &mut Builder,
    h: u64,
    moe: &Moe,
    n: TensorId,
    (weights, index): (TensorId, TensorId),
    rows: u64,
) -> TensorId {
    let (k, i) = (moe.top_k, moe.expert_intermediate);
    // This rank's experts: the lowering has refused an `ep` that does not divide them.
    let ep = b.ep.max(1);
    let e = moe.experts / ep;
    let s = rows * k;
    let per = Numel::per_sample;
    // The up projection's width: gate and up, or up alone (ungated experts).
    let (up_name, up_width) = match moe.activation {
        ExpertActivation::Relu2 => ("mlp.experts.up_proj", i),
        ExpertActivation::Gated | ExpertActivation::ClampedSwiglu => {
            ("mlp.experts.gate_up_proj", 2 * i)
        }
    };
    let gate_up = b.expert_param(up_name, &[e, up_width, h]);
    let gate_up_bias = moe
        .biases
        .then(|| b.expert_param("mlp.experts.gate_up_proj_bias", &[e, up_width]));
    let down = b.expert_param("mlp.experts.down_proj", &[e, h, i]);
    let down_bias = moe
        .biases
        .then(|| b.expert_param("mlp.experts.down_proj_bias", &[e, h]));
    // `expert_ids_g, perm = torch.sort(expert_ids)`.
    let ids = b.index_tensor("mlp.experts.sort", &[index], per(s), DType::I64);
    let perm = b.index_tensor("mlp.experts.sort_perm", &[index], per(s), DType::I64);
    let token = b.index_tensor("mlp.experts.token_of_row", &[perm], per(s), DType::I64);
    let x = b.gather_rows("mlp.experts.gather", n, token, s, h);
    let x = exchange(b, "mlp.experts.dispatch", x, (ep, e), s * h);
    // The rows this rank's expert shards run (see the module's note).
    let (etp, tp) = b.expert_rows;
    let se = (s * etp).div_ceil(tp.max(1));
    let x = regroup(b, "mlp.experts.etp_gather", x, (s, se), h);
    let w = b.gather_rows("mlp.experts.gather_weights", weights, perm, s, 1);
    // `histc` of the ids as 4-byte values (float on the CPU, int on CUDA),
    // the per-expert counts and their int32 cumulative offsets.
    let histc_in = b.index_tensor("mlp.experts.histc_input", &[ids], per(s), DType::F32);
    let counts = b.index_tensor(
        "mlp.experts.histc",
        &[histc_in],
        Numel::fixed(e),
        DType::F32,
    );
    let offsets = b.index_tensor(
        "mlp.experts.offsets",
        &[counts],
        Numel::fixed(e),
        DType::F32,
    );
    let up = b.grouped_linear("mlp.experts.up", x, gate_up, offsets, (h, up_width));
    // `out.add_(gate_up_proj_bias[expert_ids_g])`: the gathered bias lives
    // until the down projection's replaces it.
    let (up, up_bias) = match gate_up_bias {
        Some(p) => {
            let bias = b.gather_param_rows("mlp.experts.gate_up_bias", p, ids, se, up_width);
            (
                b.add_inplace("mlp.experts.up_add_bias", up, bias),
                Some(bias),
            )
        }
        None => (up, None),
    };
    let act = gate(b, moe.activation, up, se * i);
    if let Some(bias) = up_bias {
        b.keep_alive(bias);
    }
    let out = b.grouped_linear("mlp.experts.down", act, down, offsets, (i, h));
    let out = match down_bias {
        Some(p) => {
            let bias = b.gather_param_rows("mlp.experts.down_bias", p, ids, se, h);
            b.add_inplace("mlp.experts.down_add_bias", out, bias)
        }
        None => out,
    };
    let out = regroup(b, "mlp.experts.etp_scatter", out, (se, s), h);
    let out = exchange(b, "mlp.experts.combine", out, (ep, e), s * h);
    let weighted = b.mul("mlp.experts.routing_weights", out, w, s * h);
    // `inv_perm = empty_like(perm); inv_perm[perm] = arange(S)`.
    let inv = b.index_tensor("mlp.experts.inv_perm", &[perm], per(s), DType::I64);
    let ordered = b.gather_rows("mlp.experts.unsort", weighted, inv, s, h);
    // `.view(T, k, h).sum(dim=1)`.
    let dtype = b.dtype(ordered);
    let summed = b.tensor_op(
        "mlp.experts.sum_topk",
        OpKind::Add,
        &[ordered],
        per(rows * h),
        dtype,
        true,
        &[],
    );
    let result = b.cast(summed, b.dtype(n));
    // The function's locals (`expert_ids_g`, `histc_input`) live until it returns.
    for local in [ids, histc_in] {
        b.keep_alive(local);
    }
    result
}

/// `load_balancing_loss_func` (`modeling_mixtral.py`, and the same in
/// Qwen2-/Qwen3-MoE, OLMoE and gpt-oss), after the language-model loss,
/// over every sparse layer's recorded router logits, layer by layer:
/// `softmax` (fp32 under autocast; it saves its T × experts output for
/// backward), `topk`, a `histc` of the choices and the probabilities'
/// sum per expert. Its backward hands each layer's logits a gradient at
/// once, which waits until that layer's router runs backward.
pub fn aux_loss(b: &mut Builder, moe: &Moe) {
    let (e, k) = (moe.experts, moe.top_k);
    for logits in std::mem::take(&mut b.router_logits) {
        let probs = b.softmax("aux_loss.softmax", logits, false);
        let (_, chosen) = b.topk("aux_loss.topk", probs, e, k);
        let rows = b.numel(chosen).per_sample;
        // `selected_experts.reshape(-1).to(histc_dtype)`: 4-byte values.
        let ids = b.index_tensor(
            "aux_loss.histc_input",
            &[chosen],
            Numel::per_sample(rows),
            DType::F32,
        );
        b.index_tensor("aux_loss.histc", &[ids], Numel::fixed(e), DType::F32);
        // `routing_weights.float().sum(dim=0)`: a copy only from half.
        let p = if b.dtype(probs) == DType::F32 {
            probs
        } else {
            b.cast(probs, DType::F32)
        };
        b.tensor_op(
            "aux_loss.prob_sum",
            OpKind::Add,
            &[p],
            Numel::fixed(e),
            DType::F32,
            true,
            &[],
        );
    }
}

/// Expert parallelism's exchange of `x` (`n` elements per sample) between
/// the `ep` ranks, each holding `local` experts: the all-to-all, and the
/// regrouping of the received rows by local expert
/// (`sort_chunks_by_idxs`) when a rank holds several. Nothing without
/// expert parallelism.
fn exchange(b: &mut Builder, name: &str, x: TensorId, (ep, local): (u64, u64), n: u64) -> TensorId {
    if ep <= 1 {
        return x;
    }
    let dtype = b.dtype(x);
    let per = Numel::per_sample(n);
    let moved = b.tensor_op(
        &format!("{name}.all_to_all"),
        OpKind::Copy,
        &[x],
        per,
        dtype,
        true,
        &[],
    );
    if local <= 1 {
        return moved;
    }
    b.tensor_op(
        &format!("{name}.sort_chunks"),
        OpKind::Copy,
        &[moved],
        per,
        dtype,
        true,
        &[],
    )
}

/// Expert tensor parallelism's regrouping of `x`, `from` rows `h` wide per
/// sample, into `to` rows: a new buffer (the collective's autograd saves
/// nothing); nothing when the counts agree.
fn regroup(b: &mut Builder, name: &str, x: TensorId, (from, to): (u64, u64), h: u64) -> TensorId {
    if from == to {
        return x;
    }
    let dtype = b.dtype(x);
    b.tensor_op(
        name,
        OpKind::Copy,
        &[x],
        Numel::per_sample(to * h),
        dtype,
        true,
        &[],
    )
}

/// The experts' activation on the up projection `up` (2 × `n` elements
/// per sample, `n` for ungated experts): `n` elements out.
fn gate(b: &mut Builder, kind: ExpertActivation, up: TensorId, n: u64) -> TensorId {
    match kind {
        ExpertActivation::Relu2 => b.relu_squared("mlp.experts.act_fn", up),
        ExpertActivation::Gated => {
            // `gate, up = out.chunk(2, dim=-1)`; `act(gate) * up`: the
            // activation saves its input, a view of the whole output.
            let halves = b.split("mlp.experts.chunk", up, 2, false);
            let half = |j: usize| halves.get(j).copied().unwrap_or(up);
            let g = b.activation("mlp.experts.act_fn", half(0));
            b.mul("mlp.experts.gate_mul", g, half(1), n)
        }
        ExpertActivation::ClampedSwiglu => {
            // `gate_up[..., ::2]` and `[..., 1::2]` are strided views; each
            // `clamp` saves its input (the whole output) to mask its gradient.
            let halves = b.split("mlp.experts.interleave", up, 2, false);
            let half = |j: usize| halves.get(j).copied().unwrap_or(up);
            let g = b.activation("mlp.experts.clamp_gate", half(0));
            let u = b.activation("mlp.experts.clamp_up", half(1));
            let ga = b.scale("mlp.experts.gate_alpha", g);
            let sig = b.tanh("mlp.experts.sigmoid", ga);
            let glu = b.mul("mlp.experts.glu", g, sig, n);
            let u1 = b.scale("mlp.experts.up_plus_one", u);
            b.mul("mlp.experts.gated", u1, glu, n)
        }
    }
}
