//! Gemma (the first generation) as `transformers` builds it
//! (`models/gemma/modeling_gemma.py`): Llama's layout with embeddings
//! scaled by `sqrt(hidden_size)`, `GemmaRMSNorm` (`(x * (1 + weight)).to(dtype)`:
//! the weight before the cast back), a GELU-gated MLP (`gelu_pytorch_tanh`,
//! which keeps its input for backward as SiLU does), 256-wide heads and a
//! tied head. Lowered by the shared transformer ([`super::transformer`]).

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::{BlockOptions, ModelSpec, TransformerSpec, llama};
use crate::error::Error;

/// The Gemma family.
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "gemma",
        read,
    }],
    presets,
};

/// Reads a `gemma` config with `GemmaConfig`'s defaults for absent fields
/// (`models/gemma/configuration_gemma.py`).
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    Ok(ModelSpec::Transformer(TransformerSpec {
        head_dim: or("head_dim", 256)?,
        tie_embeddings: f.bool_or("tie_word_embeddings", true),
        qkv_bias: f.bool_or("attention_bias", false),
        attention_dropout: f.f64_or("attention_dropout", 0.0),
        ..decoder(
            or("vocab_size", 256_000)?,
            or("hidden_size", 3072)?,
            or("num_hidden_layers", 28)?,
            or("num_attention_heads", 16)?,
            or("num_key_value_heads", 16)?,
            or("intermediate_size", 24_576)?,
        )
    }))
}

/// A Gemma decoder: Llama's with scaled embeddings, Gemma's RMSNorm,
/// 256-wide heads and a tied head.
fn decoder(
    vocab: u64,
    hidden: u64,
    layers: u64,
    heads: u64,
    kv_heads: u64,
    intermediate: u64,
) -> TransformerSpec {
    TransformerSpec {
        head_dim: 256,
        tie_embeddings: true,
        block: BlockOptions {
            rms_weight_first: true,
            embed_scale: true,
            ..BlockOptions::default()
        },
        ..llama::decoder(vocab, hidden, layers, heads, kv_heads, intermediate)
    }
}

/// Gemma-2B and -7B, from their `config.json` files on the Hugging Face Hub
/// (`google/gemma-2b`, `google/gemma-7b`): vocabulary 256,000.
fn presets() -> Vec<ModelPreset> {
    let p = |id, name, spec| ModelPreset::new(id, name, Group::Gemma, ModelSpec::Transformer(spec));
    let v = 256_000;
    vec![
        p("gemma-2b", "Gemma-2B", decoder(v, 2048, 18, 8, 1, 16_384)),
        p("gemma-7b", "Gemma-7B", decoder(v, 3072, 28, 16, 16, 24_576)),
    ]
}
