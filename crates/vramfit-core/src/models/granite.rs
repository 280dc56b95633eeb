//! IBM's dense Granite models (Granite 3.x, Granite 4.1; `model_type`
//! `granite`) as `transformers` builds them (`models/granite/modeling_granite.py`):
//! Llama's layout with μP multipliers, each an elementwise product that
//! `transformers` runs whatever its value — the embeddings times
//! `embedding_multiplier` ([`BlockOptions::embed_scale`]), each branch's
//! output times `residual_multiplier` before its residual add
//! ([`BlockOptions::scaled_residuals`]), the logits divided by
//! `logits_scaling` ([`BlockOptions::scaled_logits`]); `attention_multiplier`
//! is the attention's scale, which costs nothing. Lowered by the shared
//! transformer ([`super::transformer`]).

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::{BlockOptions, ModelSpec, TransformerSpec, llama};
use crate::error::Error;

/// The Granite family.
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "granite",
        read,
    }],
    presets,
};

/// Reads a `granite` config with `GraniteConfig`'s defaults: one key/value
/// head per head unless `num_key_value_heads`, `attention_bias` on q, k, v
/// and o, an untied head unless `tie_word_embeddings`.
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let heads = f.heads_or(32)?;
    if f.bool_or("mlp_bias", false) {
        return Err(Error::InvalidModel(
            "mlp_bias: true puts biases on Granite's MLP, which vramfit does not model (the released models have false)"
                .into(),
        ));
    }
    let mut t = decoder(
        (or("vocab_size", 32_000)?, or("hidden_size", 4096)?),
        (or("num_hidden_layers", 32)?, heads),
        f.opt_u64("num_key_value_heads")?.unwrap_or(heads),
        or("intermediate_size", 11_008)?,
    );
    let bias = f.bool_or("attention_bias", false);
    t.qkv_bias = bias;
    t.mlp_bias = bias;
    t.tie_embeddings = f.bool_or("tie_word_embeddings", false);
    t.attention_dropout = f.f64_or("attention_dropout", 0.0);
    Ok(ModelSpec::Transformer(t))
}

/// A Granite decoder: Llama's with the three multipliers.
pub(super) fn decoder(
    (vocab, hidden): (u64, u64),
    (layers, heads): (u64, u64),
    kv_heads: u64,
    intermediate: u64,
) -> TransformerSpec {
    TransformerSpec {
        block: BlockOptions {
            embed_scale: true,
            scaled_residuals: true,
            scaled_logits: true,
            ..BlockOptions::default()
        },
        ..llama::decoder(vocab, hidden, layers, heads, kv_heads, intermediate)
    }
}

/// Granite 3.3 2B and 8B (ibm-granite/granite-3.3-2b-instruct and
/// -8b-instruct, their `config.json`: 40 layers, 8 key/value heads, a
/// 49,159-token vocabulary, the head tied, a context of 131,072).
fn presets() -> Vec<ModelPreset> {
    let p = ModelPreset::new;
    let tied = |t: TransformerSpec| {
        ModelSpec::Transformer(TransformerSpec {
            tie_embeddings: true,
            ..t
        })
    };
    vec![
        p(
            "granite-3.3-2b",
            "Granite-3.3-2B",
            Group::Granite,
            tied(decoder((49_159, 2048), (40, 32), 8, 8192)),
        )
        .context(131_072),
        p(
            "granite-3.3-8b",
            "Granite-3.3-8B",
            Group::Granite,
            tied(decoder((49_159, 4096), (40, 32), 8, 12_800)),
        )
        .context(131_072),
    ]
}
