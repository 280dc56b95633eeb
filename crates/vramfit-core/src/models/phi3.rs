//! Phi-3 and Phi-4 decoders (Microsoft) as `transformers` builds them
//! (`models/phi3/modeling_phi3.py`): Llama's layout with one `qkv_proj`
//! sliced into q, k and v, one `gate_up_proj` chunked into the gate and up
//! halves, and a rotary embedding on each head's first
//! `partial_rotary_factor` (all of it but in Phi-4-mini), then `torch.cat`
//! with the rest. Lowered by the shared transformer
//! ([`super::transformer`]).
//!
//! `rope_scaling` (LongRoPE) changes no tensor's size, and
//! `sliding_window` only what a KV cache holds: neither is read.
//! `resid_pdrop` is the blocks' dropout; `Phi3Model` drops nothing out of
//! the embeddings, which the shared lowering does with the same probability
//! (0 in every released Phi-3 and Phi-4).

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::{BlockOptions, MlpKind, ModelSpec, QkvProjection, Rotary, TransformerSpec, llama};
use crate::error::Error;
use serde_json::Value;

/// The Phi-3 family (Phi-3, Phi-4).
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "phi3",
        read,
    }],
    presets,
};

/// Reads a `phi3` config with `Phi3Config`'s defaults for absent fields
/// (`models/phi3/configuration_phi3.py`). The rotated share of each head is
/// `rope_scaling`'s (or `rope_parameters`') `partial_rotary_factor`, else
/// the top-level one, else 1.
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let hidden = or("hidden_size", 3072)?;
    let heads = or("num_attention_heads", 32)?;
    // Absent or null: as many as the query heads (`__post_init__`).
    let kv_heads = match f.map.get("num_key_value_heads") {
        None | Some(Value::Null) => heads,
        Some(_) => f.u64("num_key_value_heads")?,
    };
    let head_dim = or("head_dim", hidden / heads.max(1))?;
    let factor = f
        .rope_f64("partial_rotary_factor")
        .unwrap_or_else(|| f.f64_or("partial_rotary_factor", 1.0));
    Ok(ModelSpec::Transformer(TransformerSpec {
        head_dim,
        tie_embeddings: f.bool_or("tie_word_embeddings", false),
        hidden_dropout: f.f64_or("resid_pdrop", 0.0),
        attention_dropout: f.f64_or("attention_dropout", 0.0),
        block: BlockOptions {
            rotary: Rotary::partial(head_dim, factor)?,
            ..block()
        },
        ..llama::decoder(
            or("vocab_size", 32_064)?,
            hidden,
            or("num_hidden_layers", 32)?,
            heads,
            kv_heads,
            or("intermediate_size", 8192)?,
        )
    }))
}

/// Phi-3's block: fused, sliced q/k/v; fused, chunked gate and up.
fn block() -> BlockOptions {
    BlockOptions {
        qkv: QkvProjection::FusedSlices,
        mlp: MlpKind::FusedGated,
        ..BlockOptions::default()
    }
}

/// A Phi-3 decoder rotating `rotated` of each head's features (the whole
/// head but in Phi-4-mini), tied or not.
#[allow(clippy::too_many_arguments)]
fn decoder(
    vocab: u64,
    hidden: u64,
    layers: u64,
    heads: u64,
    kv_heads: u64,
    intermediate: u64,
    rotated: u64,
    tie: bool,
) -> ModelSpec {
    ModelSpec::Transformer(TransformerSpec {
        tie_embeddings: tie,
        block: BlockOptions {
            rotary: Rotary::Sliced { dims: rotated },
            ..block()
        },
        ..llama::decoder(vocab, hidden, layers, heads, kv_heads, intermediate)
    })
}

/// Microsoft's Phi-3 and Phi-4 models, from their `config.json` files on
/// the Hugging Face Hub (`microsoft/Phi-3-mini-4k-instruct`,
/// `Phi-3-medium-4k-instruct`, `phi-4`, `Phi-4-mini-instruct`): 128-wide
/// heads but Phi-3-mini's 96; Phi-4-mini rotates 96 of 128 features
/// (`partial_rotary_factor` 0.75) and ties its head.
fn presets() -> Vec<ModelPreset> {
    let p = |id, name, spec| ModelPreset::new(id, name, Group::Phi, spec);
    vec![
        p(
            "phi-3-mini",
            "Phi-3-mini",
            decoder(32_064, 3072, 32, 32, 32, 8192, 96, false),
        )
        .context(4096),
        p(
            "phi-3-medium",
            "Phi-3-medium",
            decoder(32_064, 5120, 40, 40, 10, 17_920, 128, false),
        )
        .context(4096),
        p(
            "phi-4-mini",
            "Phi-4-mini",
            decoder(200_064, 3072, 32, 24, 8, 8192, 96, true),
        )
        .context(131072),
        p(
            "phi-4",
            "Phi-4",
            decoder(100_352, 5120, 40, 40, 10, 17_920, 128, false),
        )
        .context(16384),
    ]
}
