//! Tencent's Hunyuan dense models (`model_type` `hunyuan_v1_dense`:
//! Hunyuan-7B, -4B, -1.8B, -0.5B) as `transformers` 5.24 builds them
//! (`models/hunyuan_v1_dense/modeling_hunyuan_v1_dense.py`): Llama's
//! decoder with an RMSNorm over each head of q and of k *after* the rotary
//! embedding (`query_layernorm`, `key_layernorm`, built whatever
//! `use_qk_norm` says; [`QkNorm::PerHeadAfterRotary`]) and
//! `attention_bias` on q, k, v and o. Lowered by the shared transformer
//! ([`super::transformer`]).
//!
//! Hunyuan's mixtures of experts (`hunyuan_v1_moe`: Hunyuan-A13B) as
//! `transformers` 5.24 builds them (`models/hunyuan_v1_moe/`): the same
//! attention, and in every layer a shared MLP of `intermediate_size`
//! computed first, then `num_experts` experts as wide, `moe_topk` per
//! token, chosen by [`Router::HunYuan`], added to it. The checkpoints'
//! per-layer `moe_intermediate_size` and `num_shared_expert` lists are not
//! read by those classes, and not here; [`super::moe_lower`] lowers the
//! sparse block.

use super::family::{Family, Import};
use super::hf_fields::Fields;
use super::moe::{Moe, Router};
use super::{ModelSpec, QkNorm, TransformerSpec, llama};
use crate::error::Error;
use serde_json::Value;

/// The Hunyuan family (no presets).
pub const FAMILY: Family = Family {
    imports: &[
        Import {
            model_type: "hunyuan_v1_dense",
            read,
        },
        Import {
            model_type: "hunyuan_v1_moe",
            read: read_moe,
        },
    ],
    presets: Vec::new,
};

/// Reads a `hunyuan_v1_dense` config with `HunYuanDenseV1Config`'s defaults.
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    decoder(f).map(ModelSpec::Transformer)
}

/// The decoder both classes build (their defaults are the same).
fn decoder(f: &Fields<'_>) -> Result<TransformerSpec, Error> {
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
    Ok(t)
}

/// Reads a `hunyuan_v1_moe` config with `HunYuanMoEV1Config`'s defaults
/// (one expert, top-1, when the file names none).
fn read_moe(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let mut t = decoder(f)?;
    // `moe_topk` may list one k per layer (`HunYuanMoEV1Gate` reads
    // `moe_topk[layer_idx]`); `num_experts` may not (the experts' bank is
    // built from it whole).
    let top_k = match f.map.get("moe_topk") {
        Some(Value::Array(ks)) => {
            let ks: Vec<u64> = ks.iter().filter_map(Value::as_u64).collect();
            match ks.first() {
                Some(&k) if ks.len() as u64 == t.layers && ks.iter().all(|&x| x == k) => k,
                _ => {
                    return Err(Error::InvalidModel(format!(
                        "moe_topk lists {ks:?}: vramfit reads one k for every layer, as a list of {} equal numbers or one number",
                        t.layers
                    )));
                }
            }
        }
        _ => f.opt_u64("moe_topk")?.unwrap_or(1),
    };
    if matches!(f.map.get("num_experts"), Some(Value::Array(_))) {
        return Err(Error::InvalidModel(
            "num_experts lists a count per layer, which transformers' HunYuanMoEV1Experts cannot build: give one number".into(),
        ));
    }
    // `shared_mlp`, as wide as the experts, computed before them and added
    // (a top-k above the experts is refused by `Moe::validate`).
    let experts = f.opt_u64("num_experts")?.unwrap_or(1);
    let mut moe = Moe::deepseek_style((experts, top_k, t.intermediate), 1, 0, Router::HunYuan);
    if let Some(shared) = moe.shared.as_mut() {
        shared.first = true;
    }
    moe.aux_loss = f.bool_or("output_router_logits", false);
    t.moe = Some(Box::new(moe));
    Ok(ModelSpec::Transformer(t))
}
