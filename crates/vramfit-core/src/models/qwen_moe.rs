//! Qwen's mixtures of experts as `transformers` builds them: Qwen1.5-MoE
//! (`models/qwen2_moe/modeling_qwen2_moe.py`: Qwen2's attention with q/k/v
//! biases, routed experts plus a shared expert scaled by a sigmoid gate)
//! and Qwen3-MoE (`models/qwen3_moe/modeling_qwen3_moe.py`: Qwen3's
//! attention with per-head q/k norms, routed experts only). Both keep a
//! dense MLP of `intermediate_size` in the layers `mlp_only_layers` names
//! and those that `decoder_sparse_step` skips. Lowered by the shared
//! transformer ([`super::transformer`]) and [`super::moe_lower`].
//!
//! Sliding windows (`use_sliding_window`, off in every released model) are
//! not read.

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::moe::{DenseLayers, Moe, Router, SharedExperts};
use super::{BlockOptions, ModelSpec, QkNorm, TransformerSpec, llama};
use crate::error::Error;

/// The Qwen mixture-of-experts family.
pub const FAMILY: Family = Family {
    imports: &[
        Import {
            model_type: "qwen2_moe",
            read: read_qwen2,
        },
        Import {
            model_type: "qwen3_moe",
            read: read_qwen3,
        },
        // Qwen3-VL-MoE's language model (`text_config`): Qwen3-MoE's.
        Import {
            model_type: "qwen3_vl_moe_text",
            read: read_qwen3,
        },
    ],
    presets,
};

/// The dense layers: `mlp_only_layers` and those `decoder_sparse_step` skips.
fn dense(f: &Fields<'_>) -> Result<DenseLayers, Error> {
    let listed = match f.map.get("mlp_only_layers") {
        None | Some(serde_json::Value::Null) => Vec::new(),
        Some(_) => f.u64_list("mlp_only_layers")?,
    };
    Ok(DenseLayers {
        first: 0,
        sparse_step: f.opt_u64("decoder_sparse_step")?.unwrap_or(1),
        listed,
    })
}

/// Reads a `qwen2_moe` config with `Qwen2MoeConfig`'s defaults
/// (`models/qwen2_moe/configuration_qwen2_moe.py`).
fn read_qwen2(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let hidden = or("hidden_size", 2048)?;
    let heads = or("num_attention_heads", 16)?;
    let mut t = qwen2(
        (
            or("vocab_size", 151_936)?,
            hidden,
            or("num_hidden_layers", 24)?,
        ),
        (heads, or("num_key_value_heads", 16)?),
        or("intermediate_size", 5632)?,
        Moe {
            experts: or("num_experts", 60)?,
            top_k: or("num_experts_per_tok", 4)?,
            expert_intermediate: or("moe_intermediate_size", 1408)?,
            shared: Some(SharedExperts {
                intermediate: or("shared_expert_intermediate_size", 5632)?,
                gate: true,
                first: false,
                fused: false,
            }),
            dense: dense(f)?,
            ..routed(f.bool_or("norm_topk_prob", false))
        },
    );
    t.head_dim = or("head_dim", hidden / heads.max(1))?;
    t.qkv_bias = f.bool_or("qkv_bias", true);
    t.tie_embeddings = f.bool_or("tie_word_embeddings", false);
    t.attention_dropout = f.f64_or("attention_dropout", 0.0);
    if let Some(m) = t.moe.as_mut() {
        m.aux_loss = f.bool_or("output_router_logits", false);
    }
    Ok(ModelSpec::Transformer(t))
}

/// Reads a `qwen3_moe` config with `Qwen3MoeConfig`'s defaults
/// (`models/qwen3_moe/configuration_qwen3_moe.py`; `head_dim`, which the
/// class does not declare, as the attention reads it: the field, else
/// `hidden_size / num_attention_heads`).
fn read_qwen3(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let hidden = or("hidden_size", 2048)?;
    let heads = or("num_attention_heads", 32)?;
    let mut t = qwen3(
        (
            or("vocab_size", 151_936)?,
            hidden,
            or("num_hidden_layers", 24)?,
        ),
        (
            heads,
            or("num_key_value_heads", 4)?,
            or("head_dim", hidden / heads.max(1))?,
        ),
        or("intermediate_size", 6144)?,
        Moe {
            experts: or("num_experts", 128)?,
            top_k: or("num_experts_per_tok", 8)?,
            expert_intermediate: or("moe_intermediate_size", 768)?,
            dense: dense(f)?,
            ..routed(f.bool_or("norm_topk_prob", false))
        },
    );
    // `attention_bias` biases o too (the Llama layout's `mlp_bias`).
    t.qkv_bias = f.bool_or("attention_bias", false);
    t.mlp_bias = t.qkv_bias;
    t.tie_embeddings = f.bool_or("tie_word_embeddings", false);
    t.attention_dropout = f.f64_or("attention_dropout", 0.0);
    if let Some(m) = t.moe.as_mut() {
        m.aux_loss = f.bool_or("output_router_logits", false);
    }
    Ok(ModelSpec::Transformer(t))
}

/// The routed experts of a Qwen MoE layer (sizes filled by the caller):
/// softmax, top-k, renormalized with `norm_topk_prob`, cast back.
pub(super) fn routed(renormalize: bool) -> Moe {
    Moe {
        experts: 0,
        top_k: 0,
        expert_intermediate: 0,
        router: Router::Softmax {
            renormalize,
            cast_back: true,
        },
        shared: None,
        dense: DenseLayers::default(),
        biases: false,
        activation: Default::default(),
        aux_loss: false,
        latent: 0,
    }
}

/// A Qwen1.5-MoE decoder: Qwen2's attention (q/k/v biases), `moe` in
/// its sparse layers.
fn qwen2(
    (vocab, hidden, layers): (u64, u64, u64),
    (heads, kv_heads): (u64, u64),
    intermediate: u64,
    moe: Moe,
) -> TransformerSpec {
    TransformerSpec {
        qkv_bias: true,
        moe: Some(Box::new(moe)),
        ..llama::decoder(vocab, hidden, layers, heads, kv_heads, intermediate)
    }
}

/// A Qwen3-MoE decoder: Qwen3's attention (per-head q/k norms,
/// `head_dim`-wide heads), `moe` in its sparse layers.
fn qwen3(
    (vocab, hidden, layers): (u64, u64, u64),
    (heads, kv_heads, head_dim): (u64, u64, u64),
    intermediate: u64,
    moe: Moe,
) -> TransformerSpec {
    TransformerSpec {
        head_dim,
        block: BlockOptions {
            qk_norm: QkNorm::PerHead,
            ..BlockOptions::default()
        },
        moe: Some(Box::new(moe)),
        ..llama::decoder(vocab, hidden, layers, heads, kv_heads, intermediate)
    }
}

/// Qwen1.5-MoE-A2.7B, Qwen3-30B-A3B and Qwen3-235B-A22B, from their
/// `config.json` files on the Hugging Face Hub (`Qwen/Qwen1.5-MoE-A2.7B`,
/// `Qwen/Qwen3-30B-A3B`, `Qwen/Qwen3-235B-A22B`): 151,936-token
/// vocabulary, untied head, every layer sparse.
fn presets() -> Vec<ModelPreset> {
    let p = |id, name, t| ModelPreset::new(id, name, Group::Qwen, ModelSpec::Transformer(t));
    let v = 151_936;
    let experts = |experts, top_k, expert_intermediate, renormalize| Moe {
        experts,
        top_k,
        expert_intermediate,
        ..routed(renormalize)
    };
    vec![
        p(
            "qwen1.5-moe-a2.7b",
            "Qwen1.5-MoE-A2.7B",
            qwen2(
                (v, 2048, 24),
                (16, 16),
                5632,
                Moe {
                    shared: Some(SharedExperts {
                        intermediate: 5632,
                        gate: true,
                        first: false,
                        fused: false,
                    }),
                    ..experts(60, 4, 1408, false)
                },
            ),
        )
        .context(8192),
        p(
            "qwen3-30b-a3b",
            "Qwen3-30B-A3B",
            qwen3(
                (v, 2048, 48),
                (32, 4, 128),
                6144,
                experts(128, 8, 768, true),
            ),
        )
        .context(40_960),
        p(
            "qwen3-235b-a22b",
            "Qwen3-235B-A22B",
            qwen3(
                (v, 4096, 94),
                (64, 4, 128),
                12_288,
                experts(128, 8, 1536, true),
            ),
        )
        .context(40_960),
    ]
}
