//! Hugging Face's SmolLM3 as `transformers` builds it
//! (`models/smollm3/modeling_smollm3.py`): Llama's layout with no rotary
//! embedding in every `no_rope_layer_interval`-th layer (NoPE,
//! [`super::BlockOptions::nope_every`]), `no_rope_layers` listing them.
//! Lowered by the shared transformer ([`super::transformer`]).
//!
//! Sliding-window layers (`use_sliding_window`, off in the released model)
//! do not change what training keeps; the cache of such layers is not
//! bounded here.

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::{BlockOptions, ModelSpec, TransformerSpec, llama};
use crate::error::Error;

/// The SmolLM3 family.
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "smollm3",
        read,
    }],
    presets,
};

/// Reads a `smollm3` config with `SmolLM3Config`'s defaults
/// (`models/smollm3/configuration_smollm3.py`: SmolLM3-3B's shape). The
/// layers without rotary embedding are those `no_rope_layers` marks 0, which
/// must be every n-th; without the list, every `no_rope_layer_interval`-th.
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let layers = or("num_hidden_layers", 36)?;
    let nope_every = match f.map.get("no_rope_layers") {
        None | Some(serde_json::Value::Null) => or("no_rope_layer_interval", 4)?,
        Some(_) => nope_pattern(&f.u64_list("no_rope_layers")?, layers)?,
    };
    if f.bool_or("mlp_bias", false) {
        return Err(Error::InvalidModel(
            "mlp_bias: true puts biases on SmolLM3's MLP, which vramfit does not model (the released model has false)"
                .into(),
        ));
    }
    let mut t = decoder(
        (or("vocab_size", 128_256)?, or("hidden_size", 2048)?, layers),
        (
            or("num_attention_heads", 16)?,
            or("num_key_value_heads", 4)?,
        ),
        or("intermediate_size", 11_008)?,
        nope_every,
    );
    // `attention_bias` biases o too (the Llama layout's `mlp_bias`).
    t.qkv_bias = f.bool_or("attention_bias", false);
    t.mlp_bias = t.qkv_bias;
    t.tie_embeddings = f.bool_or("tie_word_embeddings", true);
    t.attention_dropout = f.f64_or("attention_dropout", 0.0);
    Ok(ModelSpec::Transformer(t))
}

/// The interval of a `no_rope_layers` list (1: rotary, 0: none): 0 when
/// every layer rotates, else the position of the first 0, which every other
/// 0 must repeat.
///
/// # Errors
/// [`Error::InvalidModel`] for a list of the wrong length, a value other
/// than 0 or 1, or NoPE layers that are not every n-th.
pub(super) fn nope_pattern(list: &[u64], layers: u64) -> Result<u64, Error> {
    if list.len() as u64 != layers {
        return Err(Error::InvalidModel(format!(
            "no_rope_layers lists {} layers but num_hidden_layers is {layers}",
            list.len()
        )));
    }
    if list.iter().any(|&v| v > 1) {
        return Err(Error::InvalidModel(
            "no_rope_layers may hold 1 (rotary) and 0 (none) only".into(),
        ));
    }
    let every = list
        .iter()
        .position(|&v| v == 0)
        .map_or(0, |i| i as u64 + 1);
    let regular = (0..).zip(list).all(|(i, &v): (u64, &u64)| {
        let nope = every > 0 && (i + 1).is_multiple_of(every);
        nope == (v == 0)
    });
    if !regular {
        return Err(Error::InvalidModel(
            "no_rope_layers: vramfit reads the layers without rotary embedding as every n-th (as SmolLM3 has them); this list is not"
                .into(),
        ));
    }
    Ok(every)
}

/// A SmolLM3 decoder: Llama's with no rotary embedding every `nope_every`-th layer.
fn decoder(
    (vocab, hidden, layers): (u64, u64, u64),
    (heads, kv_heads): (u64, u64),
    intermediate: u64,
    nope_every: u64,
) -> TransformerSpec {
    TransformerSpec {
        block: BlockOptions {
            nope_every,
            ..BlockOptions::default()
        },
        tie_embeddings: true,
        ..llama::decoder(vocab, hidden, layers, heads, kv_heads, intermediate)
    }
}

/// SmolLM3-3B, from its `config.json` on the Hugging Face Hub
/// (`HuggingFaceTB/SmolLM3-3B`): 36 layers of 2048, 16 query heads over 4
/// key/value heads, an MLP of 11,008, a 128,256-token vocabulary tied to the
/// head, every fourth layer without rotary embedding, 65,536 tokens.
fn presets() -> Vec<ModelPreset> {
    vec![
        ModelPreset::new(
            "smollm3-3b",
            "SmolLM3-3B",
            Group::SmolLm,
            ModelSpec::Transformer(decoder((128_256, 2048, 36), (16, 4), 11_008, 4)),
        )
        .context(65_536),
    ]
}
