//! IBM's Bamba (`model_type` `bamba`) as `transformers` 5.24 builds it
//! (`models/bamba/modeling_bamba.py`): Llama's decoder with Mamba-2 in
//! place of attention in every layer `attn_layer_indices` does not name
//! (`BambaMixer`, the same PyTorch path as Granite 4.0's,
//! [`super::mamba2`]), the first half of each attention head rotated
//! (`partial_rotary_factor` 0.5, which the config class sets whatever the
//! file says) and concatenated with the rest, and a SwiGLU MLP in every
//! layer. Lowered by the shared transformer ([`super::transformer`]).

use super::family::{Family, Import};
use super::hf_fields::Fields;
use super::{Mamba2, ModelSpec, Recurrent, Rotary, llama};
use crate::error::Error;

/// The Bamba family (no presets).
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "bamba",
        read,
    }],
    presets: Vec::new,
};

/// Reads a `bamba` config with `BambaConfig`'s defaults.
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    for (field, what) in [
        ("mlp_bias", "biases on the MLP"),
        ("z_loss_coefficient", "the z-loss on the logits"),
    ] {
        let on = match f.map.get(field) {
            Some(serde_json::Value::Bool(b)) => *b,
            Some(serde_json::Value::Number(n)) => n.as_f64().is_some_and(|v| v != 0.0),
            _ => false,
        };
        if on {
            return Err(Error::InvalidModel(format!(
                "{field} puts {what} in Bamba, which vramfit does not model (the released models have none)"
            )));
        }
    }
    let hidden = or("hidden_size", 4096)?;
    let heads = f.heads_or(32)?;
    let layers = or("num_hidden_layers", 32)?;
    let mut t = llama::decoder(
        or("vocab_size", 128_000)?,
        hidden,
        layers,
        heads,
        f.opt_u64("num_key_value_heads")?.unwrap_or(8),
        or("intermediate_size", 14_336)?,
    );
    let bias = f.bool_or("attention_bias", false);
    t.qkv_bias = bias;
    t.mlp_bias = bias;
    t.tie_embeddings = f.bool_or("tie_word_embeddings", false);
    t.attention_dropout = f.f64_or("attention_dropout", 0.0);
    t.block.rotary = Rotary::Sliced {
        dims: t.head_dim / 2,
    };
    let attention = match f.map.get("attn_layer_indices") {
        None | Some(serde_json::Value::Null) => Vec::new(),
        Some(_) => f.u64_list("attn_layer_indices")?,
    };
    if let Some(&i) = attention.iter().find(|&&i| i >= layers) {
        return Err(Error::InvalidModel(format!(
            "attn_layer_indices names layer {i} of {layers} (num_hidden_layers)"
        )));
    }
    if (attention.len() as u64) < layers {
        t.linear = Some(Box::new(Recurrent::Mamba2(Mamba2::read(
            f, hidden, attention,
        )?)));
    }
    Ok(ModelSpec::Transformer(t))
}
