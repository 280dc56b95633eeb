//! Tencent's Hunyuan dense models (`model_type` `hunyuan_v1_dense`:
//! Hunyuan-7B, -4B, -1.8B, -0.5B) as `transformers` 5.24 builds them
//! (`models/hunyuan_v1_dense/modeling_hunyuan_v1_dense.py`): Llama's
//! decoder with an RMSNorm over each head of q and of k *after* the rotary
//! embedding (`query_layernorm`, `key_layernorm`, built whatever
//! `use_qk_norm` says; [`QkNorm::PerHeadAfterRotary`]) and
//! `attention_bias` on q, k, v and o. Lowered by the shared transformer
//! ([`super::transformer`]).

use super::family::{Family, Import};
use super::hf_fields::Fields;
use super::{ModelSpec, QkNorm, llama};
use crate::error::Error;

/// The Hunyuan dense family (no presets).
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "hunyuan_v1_dense",
        read,
    }],
    presets: Vec::new,
};

/// Reads a `hunyuan_v1_dense` config with `HunYuanDenseV1Config`'s defaults.
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let hidden = or("hidden_size", 4096)?;
    let heads = f.heads_or(32)?;
    let mut t = llama::decoder(
        or("vocab_size", 290_943)?,
        hidden,
        or("num_hidden_layers", 32)?,
        heads,
        f.opt_u64("num_key_value_heads")?.unwrap_or(heads),
        or("intermediate_size", 11_008)?,
    );
    t.head_dim = f.opt_u64("head_dim")?.unwrap_or(hidden / heads.max(1));
    let bias = f.bool_or("attention_bias", false);
    t.qkv_bias = bias;
    // The Llama layout's `mlp_bias` is the output projection's.
    t.mlp_bias = bias;
    t.tie_embeddings = f.bool_or("tie_word_embeddings", false);
    t.attention_dropout = f.f64_or("attention_dropout", 0.0);
    t.block.qk_norm = QkNorm::PerHeadAfterRotary;
    Ok(ModelSpec::Transformer(t))
}
