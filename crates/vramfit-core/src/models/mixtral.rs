//! Mixtral (Mistral AI's mixtures of experts) as `transformers` builds it
//! (`models/mixtral/modeling_mixtral.py`): Mistral's attention, and in
//! every layer a router over `num_local_experts` SwiGLU experts of
//! `intermediate_size`, two per token, their weights renormalized.
//! Lowered by the shared transformer ([`super::transformer`]) and
//! [`super::moe_lower`].
//!
//! `router_jitter_noise` (0 in every released Mixtral) is not modelled.

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::moe::{Moe, Router};
use super::{ModelSpec, SlidingWindow, TransformerSpec, llama};
use crate::error::Error;

/// The Mixtral family.
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "mixtral",
        read,
    }],
    presets,
};

/// Reads a `mixtral` config with `MixtralConfig`'s defaults for absent
/// fields (`models/mixtral/configuration_mixtral.py`); `sliding_window`,
/// when set, applies to every layer, as Mistral's.
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let hidden = or("hidden_size", 4096)?;
    let heads = or("num_attention_heads", 32)?;
    let intermediate = or("intermediate_size", 14_336)?;
    let sliding = f.opt_u64("sliding_window")?.map(|window| SlidingWindow {
        window,
        full_every: 0,
    });
    let mut t = decoder(
        or("vocab_size", 32_000)?,
        hidden,
        or("num_hidden_layers", 32)?,
        heads,
        or("num_key_value_heads", 8)?,
        intermediate,
        (or("num_local_experts", 8)?, or("num_experts_per_tok", 2)?),
    );
    t.head_dim = f.opt_u64("head_dim")?.unwrap_or(hidden / heads.max(1));
    t.tie_embeddings = f.bool_or("tie_word_embeddings", false);
    t.attention_dropout = f.f64_or("attention_dropout", 0.0);
    t.block.sliding = sliding;
    if let Some(m) = t.moe.as_mut() {
        m.aux_loss = f.bool_or("output_router_logits", false);
    }
    Ok(ModelSpec::Transformer(t))
}

/// A Mixtral decoder: Mistral's layout with `experts` SwiGLU experts of
/// `intermediate`, `top_k` per token.
fn decoder(
    vocab: u64,
    hidden: u64,
    layers: u64,
    heads: u64,
    kv_heads: u64,
    intermediate: u64,
    (experts, top_k): (u64, u64),
) -> TransformerSpec {
    TransformerSpec {
        moe: Some(Box::new(Moe {
            experts,
            top_k,
            expert_intermediate: intermediate,
            router: Router::Softmax {
                renormalize: true,
                cast_back: false,
            },
            shared: None,
            dense: Default::default(),
            biases: false,
            activation: Default::default(),
            aux_loss: false,
            latent: 0,
        })),
        ..llama::decoder(vocab, hidden, layers, heads, kv_heads, intermediate)
    }
}

/// Mixtral-8x7B and -8x22B, from their `config.json` files on the Hugging
/// Face Hub (`mistralai/Mixtral-8x7B-v0.1`, `Mixtral-8x22B-v0.1`): eight
/// experts, two per token, no sliding window.
fn presets() -> Vec<ModelPreset> {
    let p = |id, name, t| ModelPreset::new(id, name, Group::Mistral, ModelSpec::Transformer(t));
    vec![
        p(
            "mixtral-8x7b",
            "Mixtral-8x7B",
            decoder(32_000, 4096, 32, 32, 8, 14_336, (8, 2)),
        )
        .context(32_768),
        p(
            "mixtral-8x22b",
            "Mixtral-8x22B",
            decoder(32_768, 6144, 56, 48, 8, 16_384, (8, 2)),
        )
        .context(65_536),
    ]
}
