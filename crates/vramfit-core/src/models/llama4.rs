//! Meta's Llama 4 language model as `transformers` 5.24 builds it
//! (`models/llama4/modeling_llama4.py`, `Llama4ForCausalLM`, the
//! `text_config` of `Llama4ForConditionalGeneration`): Llama's layout with
//! - no rotary embedding in every `no_rope_layer_interval`-th layer, whose
//!   queries are scaled by position instead (`attn_temperature_tuning`),
//!   and which attend to every position; the others attend within chunks of
//!   `attention_chunk_size` ([`super::BlockOptions::chunked`]);
//! - the rotary embedding as complex products in fp32
//!   ([`super::Rotary::ComplexFp32`]), then a weightless L2 norm of each
//!   head of q and k (`use_qk_norm`, [`super::QkNorm::L2AfterRotary`]);
//! - eager attention's softmax in the scores' dtype;
//! - a mixture of experts in the `moe_layers` (every
//!   `interleave_moe_layer_step`-th): a top-k sigmoid router, every token
//!   through every expert scaled by its score ([`Router::Llama4`]), a
//!   shared expert after them; a dense MLP of `intermediate_size_mlp` in the
//!   other layers.
//!
//! Lowered by the shared transformer ([`super::transformer`]) and
//! [`super::moe_lower`].

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::moe::{DenseLayers, ExpertActivation, Moe, Router, SharedExperts};
use super::{BlockOptions, ModelSpec, QkNorm, Rotary, SlidingWindow, TransformerSpec, llama};
use crate::error::Error;
use serde_json::Value;

/// The Llama 4 family.
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "llama4_text",
        read,
    }],
    presets,
};

/// The shape of a Llama 4 language model.
struct Shape {
    vocab: u64,
    hidden: u64,
    layers: u64,
    heads: u64,
    kv_heads: u64,
    head_dim: u64,
    /// Each expert's (and the shared expert's) `intermediate_size`.
    expert_intermediate: u64,
    /// The dense layers' `intermediate_size_mlp`.
    dense_intermediate: u64,
    experts: u64,
    top_k: u64,
    /// The layers with experts.
    moe_layers: Vec<u64>,
    /// Every `nope_every`-th layer has no rotary embedding (0: none).
    nope_every: u64,
    /// `attention_chunk_size` (0: every layer attends to every position).
    chunk: u64,
    qk_norm: bool,
    temperature: bool,
}

/// Reads a `llama4_text` config with `Llama4TextConfig`'s defaults
/// (Llama-4-Scout-17B-16E's shape). `moe_layers`, `no_rope_layers` and the
/// layer types follow from `interleave_moe_layer_step`,
/// `no_rope_layer_interval` and `attention_chunk_size` where absent.
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let layers = or("num_hidden_layers", 48)?;
    let hidden = or("hidden_size", 5120)?;
    let heads = f.heads_or(40)?;
    let moe_layers = match f.map.get("moe_layers") {
        None | Some(Value::Null) => {
            let step = or("interleave_moe_layer_step", 1)?;
            if step == 0 {
                return Err(Error::InvalidModel(
                    "interleave_moe_layer_step must be at least 1".into(),
                ));
            }
            (0..layers).filter(|i| (i + 1) % step == 0).collect()
        }
        Some(_) => f.u64_list("moe_layers")?,
    };
    // `no_rope_layers` (1: rotary, 0: none); an empty list takes the interval.
    let nope_every = match f.map.get("no_rope_layers") {
        Some(Value::Array(list)) if !list.is_empty() => {
            super::smollm3::nope_pattern(&f.u64_list("no_rope_layers")?, layers)?
        }
        _ => or("no_rope_layer_interval", 4)?,
    };
    // `attn_temperature_tuning` is a boolean, or a number in the released configs (4).
    let temperature = match f.map.get("attn_temperature_tuning") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|v| v != 0.0),
        Some(other) => {
            return Err(Error::InvalidModel(format!(
                "attn_temperature_tuning must be a boolean or a number, got {other}"
            )));
        }
    };
    let shape = Shape {
        vocab: or("vocab_size", 202_048)?,
        hidden,
        layers,
        heads,
        kv_heads: f.opt_u64("num_key_value_heads")?.unwrap_or(8),
        head_dim: f.opt_u64("head_dim")?.unwrap_or(hidden / heads),
        expert_intermediate: or("intermediate_size", 8192)?,
        dense_intermediate: or("intermediate_size_mlp", 16_384)?,
        experts: or("num_local_experts", 16)?,
        top_k: or("num_experts_per_tok", 1)?,
        moe_layers,
        nope_every,
        chunk: f.opt_u64("attention_chunk_size")?.unwrap_or(0),
        qk_norm: f.bool_or("use_qk_norm", true),
        temperature,
    };
    if let Some(&i) = shape.moe_layers.iter().find(|&&i| i >= layers) {
        return Err(Error::InvalidModel(format!(
            "moe_layers names layer {i}, but the model has {layers}"
        )));
    }
    let mut t = decoder(&shape);
    t.qkv_bias = f.bool_or("attention_bias", false);
    t.mlp_bias = t.qkv_bias;
    t.tie_embeddings = f.bool_or("tie_word_embeddings", false);
    t.attention_dropout = f.f64_or("attention_dropout", 0.0);
    Ok(ModelSpec::Transformer(t))
}

/// A Llama 4 decoder of `s`'s shape (its `moe_layers` within its layers).
fn decoder(s: &Shape) -> TransformerSpec {
    let moe = Moe {
        experts: s.experts,
        top_k: s.top_k,
        expert_intermediate: s.expert_intermediate,
        router: Router::Llama4,
        shared: Some(SharedExperts {
            intermediate: s.expert_intermediate,
            gate: false,
            first: false,
            fused: false,
        }),
        dense: DenseLayers {
            first: 0,
            sparse_step: 1,
            listed: (0..s.layers)
                .filter(|i| !s.moe_layers.contains(i))
                .collect(),
        },
        biases: false,
        activation: ExpertActivation::Gated,
        aux_loss: false,
        latent: 0,
    };
    TransformerSpec {
        head_dim: s.head_dim,
        moe: (!s.moe_layers.is_empty()).then(|| Box::new(moe)),
        block: BlockOptions {
            qk_norm: if s.qk_norm {
                QkNorm::L2AfterRotary
            } else {
                QkNorm::None
            },
            rotary: Rotary::ComplexFp32,
            nope_every: s.nope_every,
            nope_temperature: s.temperature,
            sliding: (s.chunk > 0).then_some(SlidingWindow {
                window: s.chunk,
                full_every: s.nope_every,
            }),
            chunked: s.chunk > 0,
            softmax_in_dtype: true,
            ..BlockOptions::default()
        },
        ..llama::decoder(
            s.vocab,
            s.hidden,
            s.layers,
            s.heads,
            s.kv_heads,
            s.dense_intermediate,
        )
    }
}

/// Llama-4-Scout-17B-16E-Instruct and Llama-4-Maverick-17B-128E-Instruct,
/// from the `text_config` of their `config.json` on the Hugging Face Hub
/// (`meta-llama/…`): 48 layers of 5120, 40 query heads of 128 over 8
/// key/value heads, experts of 8192 (and a shared one), dense MLPs of
/// 16,384, a 202,048-token vocabulary, every fourth layer without rotary
/// embedding, chunks of 8192. Scout: 16 experts in every layer, q/k norms,
/// 10,485,760 positions. Maverick: 128 experts in every second layer, no
/// q/k norms, 1,048,576 positions.
fn presets() -> Vec<ModelPreset> {
    let shape = |experts, step, qk_norm| Shape {
        vocab: 202_048,
        hidden: 5120,
        layers: 48,
        heads: 40,
        kv_heads: 8,
        head_dim: 128,
        expert_intermediate: 8192,
        dense_intermediate: 16_384,
        experts,
        top_k: 1,
        moe_layers: (0..48).filter(|i| (i + 1) % step == 0).collect(),
        nope_every: 4,
        chunk: 8192,
        qk_norm,
        temperature: true,
    };
    let p = |id, name, s: &Shape, context| {
        ModelPreset::new(id, name, Group::Llama, ModelSpec::Transformer(decoder(s)))
            .context(context)
    };
    vec![
        p(
            "llama-4-scout-17b-16e",
            "Llama-4-Scout-17B-16E",
            &shape(16, 1, true),
            10_485_760,
        ),
        p(
            "llama-4-maverick-17b-128e",
            "Llama-4-Maverick-17B-128E",
            &shape(128, 2, false),
            1_048_576,
        ),
    ]
}
