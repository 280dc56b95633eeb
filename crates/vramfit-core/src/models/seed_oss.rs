//! ByteDance's Seed-OSS (`model_type` `seed_oss`: Seed-OSS-36B) as
//! `transformers` 5.24 builds it (`models/seed_oss/modeling_seed_oss.py`):
//! Llama's decoder with biases on q, k and v (`attention_bias`, on by
//! default), on o only with `attention_out_bias`, attention dropout (0.1
//! by default) and `residual_dropout` (0.1 by default) on the attention's
//! and the MLP's outputs, none on the embeddings. Lowered by the shared
//! transformer ([`super::transformer`]).

use super::family::{Family, Import};
use super::hf_fields::Fields;
use super::{ModelSpec, llama};
use crate::error::Error;

/// The Seed-OSS family (no presets).
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "seed_oss",
        read,
    }],
    presets: Vec::new,
};

/// Reads a `seed_oss` config with `SeedOssConfig`'s defaults (Seed-OSS-36B's shape).
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    if f.bool_or("mlp_bias", false) {
        return Err(Error::InvalidModel(
            "mlp_bias puts biases on Seed-OSS's gated MLP, which vramfit does not model (the released model has none)"
                .into(),
        ));
    }
    let heads = f.heads_or(80)?;
    let mut t = llama::decoder(
        or("vocab_size", 155_136)?,
        or("hidden_size", 4096)?,
        or("num_hidden_layers", 64)?,
        heads,
        f.opt_u64("num_key_value_heads")?.unwrap_or(8),
        or("intermediate_size", 27_648)?,
    );
    t.head_dim = or("head_dim", 128)?;
    t.qkv_bias = f.bool_or("attention_bias", true);
    // The Llama layout's `mlp_bias` is the output projection's.
    t.mlp_bias = f.bool_or("attention_out_bias", false);
    t.tie_embeddings = f.bool_or("tie_word_embeddings", false);
    t.attention_dropout = f.f64_or("attention_dropout", 0.1);
    t.hidden_dropout = f.f64_or("residual_dropout", 0.1);
    t.block.undropped_embeddings = true;
    Ok(ModelSpec::Transformer(t))
}
