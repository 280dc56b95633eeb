//! The lowering of a T5 encoder-decoder (`T5ForConditionalGeneration`,
//! `models/t5/modeling_t5.py`, eager code paths, training mode).
//!
//! What it adds to the decoder-only lowering: a relative position bias per
//! stack, made once in its first block (`compute_bias`: an int64 bucket per
//! query-key pair, an embedding of them into a `heads × q × k` fp32 tensor)
//! and added to every block's scores — autograd accumulates its gradient
//! over the blocks; the decoder's cross-attention over the encoder's output,
//! with a zero bias made by its first block; the decoder's causal mask, a
//! `batch × q × k` tensor in the embeddings' dtype for the whole stack;
//! `T5LayerNorm`; the feed-forward's cast to `wo`'s dtype
//! (`_keep_in_fp32_modules = ["wo"]`: an fp32 copy under autocast); and a
//! head on the shared embedding scaled by `d_model**-0.5` (original T5).

use super::t5::T5Spec;
use super::t5_ops::{activation, clamp_half, sdpa_with_bias, t5_layer_norm};
use crate::builder::{Builder, OpSpec};
use crate::config::{Attention, TrainConfig};
use crate::dtype::DType;
use crate::error::{Error, Inapplicable};
use crate::graph::{Numel, OpKind, ParamId, TensorId};

/// Lowers a T5 for `cfg` (training: encoder and decoder over `seq` tokens;
/// inference: the encoder over `seq` tokens and one decoder step).
///
/// # Errors
/// As [`T5Spec::validate`]; [`Inapplicable`] for pipeline or sequence
/// parallelism and a tensor-parallel size the heads or `d_ff` do not take.
pub fn lower(b: &mut Builder, spec: &T5Spec, cfg: &TrainConfig) -> Result<(), Error> {
    spec.validate()?;
    let par = cfg.parallel;
    if par.pp > 1 {
        return Err(Error::NotApplicable(Inapplicable::PipelineEncoderDecoder {
            pp: par.pp,
        }));
    }
    if par.sp {
        return Err(Error::NotApplicable(Inapplicable::SequenceParallel {
            tp: par.tp,
        }));
    }
    let t = spec
        .pruned(cfg.keep_attention, cfg.keep_mlp)
        .tensor_parallel_shard(par.tp)?;
    check_sizes(&t, cfg)?;
    let t = &t;
    let seq = cfg.seq;
    b.layer("embeddings");
    let ids = b.input("input_ids", seq, DType::I64);
    let labels = (!b.inference).then(|| b.input("labels", seq, DType::I64));
    let shared = b.param("shared.weight", &[t.vocab, t.d_model]);
    let ctx = Ctx { t, cfg, shared };
    let (encoder, _) = ctx.stack(b, "encoder", ids, seq, None);
    b.layer("decoder.embed_tokens");
    // Training: `_shift_right(labels)`; generation: one new token per step.
    let (dec_ids, dec_len) = match labels {
        Some(labels) => (shift_right(b, labels, seq), seq),
        None => (b.input("decoder_input_ids", 1, DType::I64), 1),
    };
    let (decoder, cache) = ctx.stack(b, "decoder", dec_ids, dec_len, Some((encoder, seq)));
    b.layer("lm_head");
    let x = if t.tie_embeddings {
        // `sequence_output * (model_dim**-0.5)`: saves only the constant.
        b.scale("scale_decoder_outputs", decoder)
    } else {
        decoder
    };
    let logits = if t.tie_embeddings {
        b.linear_with("lm_head", x, shared, None, t.d_model, t.vocab)
    } else {
        b.linear("lm_head", x, t.d_model, t.vocab, false)
    };
    match labels {
        Some(labels) => {
            // `CrossEntropyLoss` on the logits as they are (no `.float()`).
            b.cross_entropy("loss", logits, labels, dec_len, t.vocab);
            b.keep_alive(logits);
            b.returns(logits);
            b.returns(encoder);
            // The output's cache lives until the output is dropped.
            cache.into_iter().for_each(|kv| {
                b.keep_alive(kv);
                b.returns(kv);
            });
        }
        None => {
            // Generation reads the last position's logits as an fp32 copy.
            let up = b.cast(logits, DType::F32);
            b.keep_alive(up);
            let dtype = b.autocast_dtype().unwrap_or(b.param_dtype()).size();
            // Every decoder block caches its self-attention's keys and values
            // of the positions generated and its cross-attention's of the
            // encoder's `seq` outputs.
            let per_token = 2 * t.decoder_layers * t.heads * t.d_kv * dtype;
            let layout = crate::graph::KvLayout {
                per_token,
                fixed: per_token.saturating_mul(seq),
                ..crate::graph::KvLayout::default()
            };
            b.set_kv_cache(layout, cfg.cache_tokens());
        }
    }
    // `encoder_outputs` and `decoder_outputs` live until the forward returns.
    b.keep_alive(encoder);
    b.keep_alive(decoder);
    Ok(())
}

/// Checks that no tensor or parameter exceeds [`super::MAX_ELEMENTS`].
fn check_sizes(t: &T5Spec, cfg: &TrainConfig) -> Result<(), Error> {
    use super::check_elements as check;
    let (seq, inner) = (cfg.seq, t.heads.saturating_mul(t.d_kv));
    check(
        "the shared embedding (vocab_size × d_model)",
        &[t.vocab, t.d_model],
    )?;
    check(
        "an attention projection (d_model × num_heads × d_kv)",
        &[t.d_model, inner],
    )?;
    check(
        "a feed-forward projection (d_model × d_ff)",
        &[t.d_model, t.d_ff],
    )?;
    check(
        "the hidden states per sample (seq × d_model)",
        &[seq, t.d_model],
    )?;
    check(
        "q, k or v per sample (seq × num_heads × d_kv)",
        &[seq, inner],
    )?;
    check(
        "the feed-forward activations per sample (seq × d_ff)",
        &[seq, t.d_ff],
    )?;
    check("the logits per sample (seq × vocab_size)", &[seq, t.vocab])?;
    check(
        "a position bias or the attention scores per sample (num_heads × seq × seq)",
        &[t.heads, seq, seq],
    )?;
    check(
        "the KV caches per sample (2 × num_decoder_layers × num_heads × d_kv × tokens)",
        &[
            2,
            t.decoder_layers,
            inner,
            cfg.cache_tokens().saturating_add(seq),
        ],
    )
}

/// `_shift_right(labels)`: a new int64 tensor (`new_zeros`, a copy of
/// `labels[..., :-1]`, `masked_fill_` of the -100s through a bool mask).
fn shift_right(b: &mut Builder, labels: TensorId, seq: u64) -> TensorId {
    let out = b.tensor(Numel::per_sample(seq), DType::I64, false);
    b.op(
        "shift_right",
        OpKind::Copy,
        OpSpec {
            inputs: vec![labels],
            outputs: vec![out],
            forward_temp: Numel::per_sample(9 * seq),
            ..OpSpec::default()
        },
    );
    out
}

/// What every stack reads.
struct Ctx<'a> {
    t: &'a T5Spec,
    cfg: &'a TrainConfig,
    shared: ParamId,
}

/// What a stack's blocks share: its lengths, the encoder's output (for the
/// decoder), its mask and biases once made, and its cache.
struct Stack {
    len: u64,
    encoder: Option<(TensorId, u64)>,
    cache: bool,
    mask: Option<TensorId>,
    bias: Option<TensorId>,
    cross_bias: Option<TensorId>,
    /// The cache's copies of every block's keys and values.
    kv: Vec<TensorId>,
}

/// The decoder's eager causal mask, `torch.where(causal, 0, min)` in the
/// embeddings' dtype, `batch × q × k` for the whole stack (the encoder has none).
fn causal_mask(b: &mut Builder, len: u64, embeds: TensorId) -> TensorId {
    let m = b.tensor(Numel::per_sample(len * len), b.dtype(embeds), false);
    b.op(
        "causal_mask",
        OpKind::Copy,
        OpSpec {
            outputs: vec![m],
            forward_temp: Numel::fixed(len * len),
            ..OpSpec::default()
        },
    );
    m
}

/// One block's attention and what its `forward` returns besides the output.
struct Attended {
    out: TensorId,
    /// The attention weights, returned to the block (`_` in `T5Block.forward`).
    weights: Option<TensorId>,
}

impl Ctx<'_> {
    /// A `T5Stack` over `len` tokens: the encoder, or (with the encoder's
    /// output and length) the decoder. Returns its final hidden states and
    /// what its cache keeps.
    fn stack(
        &self,
        b: &mut Builder,
        name: &str,
        ids: TensorId,
        len: u64,
        encoder: Option<(TensorId, u64)>,
    ) -> (TensorId, Vec<TensorId>) {
        let (t, d) = (self.t, self.t.d_model);
        b.layer(&format!("{name}.embed_tokens"));
        let embeds = b.embedding_with("embed_tokens", ids, self.shared, d);
        let eager = self.cfg.attention == Attention::Eager;
        let mut s = Stack {
            len,
            encoder,
            // Training keeps a decoder cache unless `transformers` checkpoints
            // (generation's cache is the KV cache the estimate adds).
            cache: encoder.is_some() && !b.inference && !hf_checkpointing(self.cfg),
            mask: (encoder.is_some() && eager && len > 1).then(|| causal_mask(b, len, embeds)),
            bias: None,
            cross_bias: None,
            kv: Vec::new(),
        };
        let mut x = b.dropout("dropout", embeds, t.dropout);
        let layers = if encoder.is_some() {
            t.decoder_layers
        } else {
            t.encoder_layers
        };
        for i in 0..layers {
            b.layer(&format!("{name}.block.{i}"));
            b.begin_block();
            x = self.block(b, &mut s, i, x);
            b.end_block();
        }
        b.layer(&format!("{name}.final_layer_norm"));
        let x = t5_layer_norm(b, "final_layer_norm", x, d);
        let x = b.dropout("dropout", x, t.dropout);
        // The stack's locals (`inputs_embeds`, position biases, mask) live until it returns.
        for held in [Some(embeds), s.bias, s.cross_bias, s.mask]
            .into_iter()
            .flatten()
        {
            b.keep_alive(held);
        }
        (x, s.kv)
    }

    /// Block `i` of a stack (`T5Block`): self-attention, the decoder's
    /// cross-attention, the feed-forward; the first block makes the biases.
    fn block(&self, b: &mut Builder, s: &mut Stack, i: u64, x: TensorId) -> TensorId {
        let (t, d, len) = (self.t, self.t.d_model, s.len);
        // `hidden_states, ... = layer_module(hidden_states, ...)` keeps the input.
        b.hold_until_block_end(x);
        let n = t5_layer_norm(b, "layer.0.layer_norm", x, d);
        if i == 0 {
            s.bias = Some(self.relative_bias(b, "layer.0.SelfAttention", len));
        }
        let a = self.attention(
            b,
            "layer.0.SelfAttention",
            [n, n],
            (len, len),
            s,
            s.bias,
            s.mask,
        );
        let o = b.dropout("layer.0.dropout", a.out, t.dropout);
        let mut x = b.add("layer.0.residual", x, o);
        // `normed_hidden_states` lives until the sublayer returns.
        b.keep_alive(n);
        x = clamp_half(b, "layer.0.clamp", x);
        let mut weights = a.weights;
        if let Some((enc, enc_len)) = s.encoder {
            let n = t5_layer_norm(b, "layer.1.layer_norm", x, d);
            if i == 0 {
                s.cross_bias = Some(self.zero_bias(b, len, enc_len));
            }
            let lens = (len, enc_len);
            let a = self.attention(
                b,
                "layer.1.EncDecAttention",
                [n, enc],
                lens,
                s,
                s.cross_bias,
                None,
            );
            let o = b.dropout("layer.1.dropout", a.out, t.dropout);
            x = b.add("layer.1.residual", x, o);
            b.keep_alive(n);
            // `_` now names the cross-attention's weights.
            if let Some(w) = weights {
                b.keep_alive(w);
            }
            weights = a.weights;
            x = clamp_half(b, "layer.1.clamp", x);
        }
        if let Some(w) = weights {
            b.hold_until_block_end(w);
        }
        let ff = if s.encoder.is_some() {
            "layer.2"
        } else {
            "layer.1"
        };
        let x = self.feed_forward(b, ff, x);
        clamp_half(b, &format!("{ff}.clamp"), x)
    }

    /// `compute_bias(q, k)` of a stack's first block: the bucket of every
    /// query-key pair (an int64 `q × k` tensor, computed through a few
    /// same-sized temporaries), embedded into a `heads × q × k` fp32 tensor
    /// that saves the buckets. Batch-independent.
    fn relative_bias(&self, b: &mut Builder, name: &str, len: u64) -> TensorId {
        let t = self.t;
        let w = b.param(
            &format!("{name}.relative_attention_bias.weight"),
            &[t.buckets, t.heads],
        );
        let pairs = len * len;
        let buckets = b.tensor(Numel::fixed(pairs), DType::I64, false);
        b.op(
            &format!("{name}.relative_position_bucket"),
            OpKind::Copy,
            OpSpec {
                outputs: vec![buckets],
                // The relative positions and one int64 temporary at a time.
                forward_temp: Numel::fixed(16 * pairs),
                ..OpSpec::default()
            },
        );
        let values = b.tensor(
            Numel::fixed(t.heads * pairs),
            b.param_dtype(),
            b.param_trainable(w),
        );
        b.op(
            &format!("{name}.relative_attention_bias"),
            OpKind::Embedding,
            OpSpec {
                inputs: vec![buckets],
                outputs: vec![values],
                saved: vec![buckets],
                params: vec![w],
                ..OpSpec::default()
            },
        );
        values
    }

    /// The cross-attention's bias: `torch.zeros((1, heads, q, k))` in the
    /// query's dtype, made by the first decoder block and passed on; it
    /// requires grad when the blocks are checkpointed (`gradient_checkpointing`).
    fn zero_bias(&self, b: &mut Builder, q_len: u64, k_len: u64) -> TensorId {
        let dtype = b.autocast_dtype().unwrap_or(b.param_dtype());
        let z = b.tensor(
            Numel::fixed(self.t.heads * q_len * k_len),
            dtype,
            hf_checkpointing(self.cfg),
        );
        b.op(
            "layer.1.EncDecAttention.zero_bias",
            OpKind::Copy,
            OpSpec {
                outputs: vec![z],
                ..OpSpec::default()
            },
        );
        z
    }

    /// `T5Attention` of `x_q` over `x_kv` (`lens`: query and key lengths):
    /// q, k, v, no scaling, the position bias (and mask) added to the
    /// scores, softmax, dropout, `o`.
    #[allow(clippy::too_many_arguments)]
    fn attention(
        &self,
        b: &mut Builder,
        name: &str,
        [x_q, x_kv]: [TensorId; 2],
        lens: (u64, u64),
        s: &mut Stack,
        bias: Option<TensorId>,
        mask: Option<TensorId>,
    ) -> Attended {
        let cache = s.cache;
        let (t, d) = (self.t, self.t.d_model);
        let (q_len, k_len) = lens;
        let inner = t.heads * t.d_kv;
        let q = b.linear(&format!("{name}.q"), x_q, d, inner, false);
        let k = b.linear(&format!("{name}.k"), x_kv, d, inner, false);
        let v = b.linear(&format!("{name}.v"), x_kv, d, inner, false);
        // The decoder's `EncoderDecoderCache` (the decoder config's
        // `use_cache`, off when checkpointing) stores contiguous copies of
        // k and v (`DynamicLayer.update`), kept until the output is dropped;
        // attention then reads them without the reshape copies.
        let cached = cache.then(|| {
            [
                b.copy(&format!("{name}.cache_k"), k),
                b.copy(&format!("{name}.cache_v"), v),
            ]
        });
        s.kv.extend(cached.into_iter().flatten());
        let (k, v) = cached.map_or((k, v), |[k, v]| (k, v));
        // `query_states`, `key_states` and `value_states` live until the attention returns.
        let states = [q, k, v];
        let s2 = t.heads * q_len * k_len;
        let flops = s2.saturating_mul(2 * t.d_kv);
        let (ctx, weights) = if self.cfg.attention == Attention::Eager {
            b.set_attention_core(self.cfg.checkpointing.selective());
            // matmul on transposed 4-D views reshapes through contiguous copies, which bmm saves.
            let qc = b.copy(&format!("{name}.q_reshape"), q);
            let kc = if cache {
                k
            } else {
                b.copy(&format!("{name}.k_reshape"), k)
            };
            let scores = b.bmm(&format!("{name}.scores"), qc, kc, s2, flops);
            // `* self.scaling` (1.0) still makes a new tensor.
            let mut scores = b.scale(&format!("{name}.scaling"), scores);
            // A batch-broadcast bias: its gradient is the sum over the batch.
            for (what, add) in [("position_bias", bias), ("mask", mask)] {
                if let Some(add) = add {
                    scores = b.add(&format!("{name}.{what}"), scores, add);
                }
            }
            let probs = b.softmax(&format!("{name}.softmax"), scores, false);
            let probs = b.dropout(&format!("{name}.dropout"), probs, t.dropout);
            let vc = if cache {
                v
            } else {
                b.copy(&format!("{name}.v_reshape"), v)
            };
            let ctx = b.bmm(&format!("{name}.context"), probs, vc, q_len * inner, flops);
            // transpose(1, 2).contiguous() before `o`.
            let ctx = b.copy(&format!("{name}.merge_heads"), ctx);
            b.set_attention_core(false);
            (ctx, Some(probs))
        } else {
            (sdpa_with_bias(b, name, [q, k, v], bias, lens, t), None)
        };
        let out = b.linear(&format!("{name}.o"), ctx, inner, d, false);
        states.into_iter().for_each(|s| b.keep_alive(s));
        Attended { out, weights }
    }

    /// `T5LayerFF`: norm, `DenseReluDense` (or the gated `DenseGatedActDense`),
    /// dropout, residual. The activation is cast to `wo`'s dtype before `wo`.
    fn feed_forward(&self, b: &mut Builder, name: &str, x: TensorId) -> TensorId {
        let (t, d) = (self.t, self.t.d_model);
        let n = t5_layer_norm(b, &format!("{name}.layer_norm"), x, d);
        let dense = format!("{name}.DenseReluDense");
        let h = if t.gated {
            let g = b.linear(&format!("{dense}.wi_0"), n, d, t.d_ff, false);
            let g = activation(b, t.act, &format!("{dense}.act"), g);
            let u = b.linear(&format!("{dense}.wi_1"), n, d, t.d_ff, false);
            b.mul(&format!("{dense}.gate_mul"), g, u, b.numel(u).per_sample)
        } else {
            let h = b.linear(&format!("{dense}.wi"), n, d, t.d_ff, false);
            activation(b, t.act, &format!("{dense}.act"), h)
        };
        let h = b.dropout(&format!("{dense}.dropout"), h, t.dropout);
        // `hidden_states.to(self.wo.weight.dtype)`: under autocast an fp32
        // copy of the half activation, which `wo` casts back (and saves).
        let h = b.cast(h, b.param_dtype());
        let o = b.linear(&format!("{dense}.wo"), h, t.d_ff, d, false);
        // `DenseReluDense(forwarded_states)` holds the norm's output until it returns.
        b.keep_alive(n);
        let o = b.dropout(&format!("{name}.dropout"), o, t.dropout);
        b.add(&format!("{name}.residual"), x, o)
    }
}

/// Whether `transformers`' own checkpointing is on (`gradient_checkpointing`
/// on the stacks, blocks and attentions; Megatron's selective recompute is not it).
pub(super) fn hf_checkpointing(cfg: &TrainConfig) -> bool {
    cfg.checkpointing != crate::config::Checkpointing::NONE && !cfg.checkpointing.selective()
}
