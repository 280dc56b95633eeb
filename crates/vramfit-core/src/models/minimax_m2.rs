//! MiniMax's M2 mixtures of experts (M2 and M2.7 have one shape) as
//! `transformers` builds them (`models/minimax_m2/modeling_minimax_m2.py`):
//! Llama's grouped-query attention with no biases, an RMSNorm over all of
//! q's features and all of k's before they are split into heads
//! (`q_norm` of `heads × head_dim`, `k_norm` of `kv_heads × head_dim`), a
//! rotary embedding on each head's first `rotary_dim` features then
//! `torch.cat` with the rest, and every layer's MLP a sparse block:
//! `num_local_experts` experts of `intermediate_size`, `num_experts_per_tok`
//! per token, no shared expert, chosen by sigmoid scores biased by
//! `e_score_correction_bias` ([`Router::SigmoidBias`]). Lowered by the
//! shared transformer ([`super::transformer`]) and [`super::moe_lower`].
//!
//! The multi-token-prediction modules the checkpoints describe (`use_mtp`,
//! `num_mtp_modules`) are not built by `transformers` and not counted.

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::moe::{DenseLayers, ExpertActivation, Moe, Router};
use super::{BlockOptions, ModelSpec, QkNorm, Rotary, TransformerSpec, llama};
use crate::error::Error;

/// The MiniMax-M2 family.
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "minimax_m2",
        read,
    }],
    presets,
};

/// Reads a `minimax_m2` config with `MiniMaxM2Config`'s defaults
/// (`models/minimax_m2/configuration_minimax_m2.py`: MiniMax-M2's shape).
/// The rotated share is `partial_rotary_factor` (in `rope_parameters` or at
/// the top), else `rotary_dim / head_dim` (what the released `config.json`
/// files give), else the whole head, as `convert_rope_params_to_dict` sets it.
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let hidden = or("hidden_size", 3072)?;
    let heads = or("num_attention_heads", 48)?;
    let head_dim = or("head_dim", 128)?;
    let factor = match (
        f.rope_f64("partial_rotary_factor")
            .or_else(|| f.map.get("partial_rotary_factor").and_then(|v| v.as_f64())),
        f.opt_u64("rotary_dim")?,
    ) {
        (Some(factor), _) => factor,
        (None, Some(dims)) if head_dim > 0 => dims as f64 / head_dim as f64,
        (None, _) => 1.0,
    };
    let mut moe = sparse(
        or("num_local_experts", 256)?,
        or("num_experts_per_tok", 8)?,
        or("intermediate_size", 1536)?,
    );
    moe.aux_loss = f.bool_or("output_router_logits", false);
    let mut t = decoder(
        (
            or("vocab_size", 200_064)?,
            hidden,
            or("num_hidden_layers", 62)?,
        ),
        (heads, or("num_key_value_heads", 8)?, head_dim),
        Rotary::partial(head_dim, factor)?,
        moe,
    );
    t.tie_embeddings = f.bool_or("tie_word_embeddings", false);
    t.attention_dropout = f.f64_or("attention_dropout", 0.0);
    Ok(ModelSpec::Transformer(t))
}

/// MiniMax-M2's sparse block: `experts` of `intermediate`, `top_k` per
/// token, in every layer.
fn sparse(experts: u64, top_k: u64, intermediate: u64) -> Moe {
    Moe {
        experts,
        top_k,
        expert_intermediate: intermediate,
        router: Router::SigmoidBias,
        shared: None,
        dense: DenseLayers::default(),
        biases: false,
        activation: ExpertActivation::default(),
        aux_loss: false,
        latent: 0,
    }
}

/// A MiniMax-M2 decoder: `heads` query heads of `head_dim` over `kv_heads`
/// key/value heads, q and k normalized whole, rotated as `rotary`, and
/// `moe` in every layer.
fn decoder(
    (vocab, hidden, layers): (u64, u64, u64),
    (heads, kv_heads, head_dim): (u64, u64, u64),
    rotary: Rotary,
    moe: Moe,
) -> TransformerSpec {
    // No layer keeps a dense MLP: its size is the experts' (what
    // `intermediate_size` means here), which no lowering reads.
    let intermediate = moe.expert_intermediate;
    TransformerSpec {
        head_dim,
        block: BlockOptions {
            rotary,
            qk_norm: QkNorm::Whole,
            ..BlockOptions::default()
        },
        moe: Some(Box::new(moe)),
        ..llama::decoder(vocab, hidden, layers, heads, kv_heads, intermediate)
    }
}

/// MiniMax-M2 and M2.7, from their `config.json` files on the Hugging Face
/// Hub (`MiniMaxAI/MiniMax-M2`, `MiniMaxAI/MiniMax-M2.7`): 200,064-token
/// vocabulary, untied head,
/// 62 layers of 3072, 48 query heads of 128 over 8 key/value heads, 64 of
/// each head's features rotated, 256 experts of 1536 with 8 per token. M2
/// reads 196,608 tokens, M2.7 204,800.
fn presets() -> Vec<ModelPreset> {
    let m2 = || {
        ModelSpec::Transformer(decoder(
            (200_064, 3072, 62),
            (48, 8, 128),
            Rotary::Sliced { dims: 64 },
            sparse(256, 8, 1536),
        ))
    };
    vec![
        ModelPreset::new("minimax-m2", "MiniMax-M2", Group::MiniMax, m2()).context(196_608),
        ModelPreset::new("minimax-m2.7", "MiniMax-M2.7", Group::MiniMax, m2()).context(204_800),
    ]
}
