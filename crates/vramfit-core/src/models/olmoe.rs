//! OLMoE (Ai2's mixture of experts) as `transformers` builds it
//! (`models/olmoe/modeling_olmoe.py`): Llama's layout with RMSNorms over
//! the whole q and k projections (OLMo 2's, but before the norms of a
//! pre-norm block), and in every layer a router over `num_experts` SwiGLU
//! experts of `intermediate_size`. Lowered by the shared transformer
//! ([`super::transformer`]) and [`super::moe_lower`].
//!
//! `clip_qkv` (null in OLMoE-1B-7B) is not modelled.

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::moe::Moe;
use super::{BlockOptions, ModelSpec, QkNorm, TransformerSpec, llama};
use crate::error::Error;

/// The OLMoE family.
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "olmoe",
        read,
    }],
    presets,
};

/// Reads an `olmoe` config with `OlmoeConfig`'s defaults for absent fields
/// (`models/olmoe/configuration_olmoe.py`; the heads split the hidden size).
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let hidden = or("hidden_size", 2048)?;
    let heads = or("num_attention_heads", 16)?;
    let bias = f.bool_or("attention_bias", false);
    let mut t = decoder(
        (
            or("vocab_size", 50_304)?,
            hidden,
            or("num_hidden_layers", 16)?,
        ),
        (heads, f.opt_u64("num_key_value_heads")?.unwrap_or(heads)),
        or("intermediate_size", 2048)?,
        (or("num_experts", 64)?, or("num_experts_per_tok", 8)?),
        f.bool_or("norm_topk_prob", false),
    );
    t.qkv_bias = bias;
    t.mlp_bias = bias;
    t.tie_embeddings = f.bool_or("tie_word_embeddings", false);
    t.attention_dropout = f.f64_or("attention_dropout", 0.0);
    if let Some(m) = t.moe.as_mut() {
        m.aux_loss = f.bool_or("output_router_logits", false);
    }
    Ok(ModelSpec::Transformer(t))
}

/// An OLMoE decoder: whole-width q/k norms, `experts` experts of
/// `intermediate`, `top_k` per token.
fn decoder(
    (vocab, hidden, layers): (u64, u64, u64),
    (heads, kv_heads): (u64, u64),
    intermediate: u64,
    (experts, top_k): (u64, u64),
    renormalize: bool,
) -> TransformerSpec {
    TransformerSpec {
        block: BlockOptions {
            qk_norm: QkNorm::Whole,
            ..BlockOptions::default()
        },
        moe: Some(Box::new(Moe {
            experts,
            top_k,
            expert_intermediate: intermediate,
            ..super::qwen_moe::routed(renormalize)
        })),
        ..llama::decoder(vocab, hidden, layers, heads, kv_heads, intermediate)
    }
}

/// OLMoE-1B-7B, from its `config.json` on the Hugging Face Hub
/// (`allenai/OLMoE-1B-7B-0924`): 64 experts of 1024, eight per token.
fn presets() -> Vec<ModelPreset> {
    vec![
        ModelPreset::new(
            "olmoe-1b-7b",
            "OLMoE-1B-7B",
            Group::Olmo,
            ModelSpec::Transformer(decoder((50_304, 2048, 16), (16, 16), 1024, (64, 8), false)),
        )
        .context(4096),
    ]
}
