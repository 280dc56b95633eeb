//! Stability AI's StableLM (StableLM-3B-4E1T, StableLM 2, StableCode;
//! `model_type` `stablelm`) as `transformers` builds it
//! (`models/stablelm/modeling_stablelm.py`): Llama's gated MLP under
//! LayerNorms with a bias, a quarter of each head rotated, biases on q, k
//! and v with `use_qkv_bias`, and with `use_parallel_residual` attention
//! and MLP in parallel on one norm ([`super::BlockOptions::shared_norm`]).
//! Import only: no presets. Lowered by the shared transformer ([`super::transformer`]).

use super::family::{Family, Import, no_presets};
use super::hf_fields::Fields;
use super::{BlockOptions, ModelSpec, NormKind, Rotary, llama};
use crate::error::Error;

/// The StableLM family.
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "stablelm",
        read,
    }],
    presets: no_presets,
};

/// Reads a `stablelm` config with `StableLmConfig`'s defaults
/// (StableLM-3B-4E1T's shape). Refused: `qk_layernorm` (a LayerNorm per
/// head, split and concatenated again: StableLM-2-12B) and a
/// `hidden_dropout`, which drops the MLP's output only.
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let heads = f.heads_or(32)?;
    if f.bool_or("qk_layernorm", false) {
        return Err(Error::InvalidModel(
            "qk_layernorm: true gives StableLM a LayerNorm per head on q and k, which vramfit does not model"
                .into(),
        ));
    }
    if f.f64_or("hidden_dropout", 0.0) > 0.0 {
        return Err(Error::InvalidModel(
            "hidden_dropout above 0 drops only StableLM's MLP output, which vramfit does not model (the released models have 0)"
                .into(),
        ));
    }
    let hidden = or("hidden_size", 2560)?;
    let factor = f
        .rope_f64("partial_rotary_factor")
        .unwrap_or_else(|| f.f64_or("partial_rotary_factor", 0.25));
    let parallel = f.bool_or("use_parallel_residual", false);
    let base = llama::decoder(
        or("vocab_size", 50_304)?,
        hidden,
        or("num_hidden_layers", 32)?,
        heads,
        f.opt_u64("num_key_value_heads")?.unwrap_or(heads),
        or("intermediate_size", 6912)?,
    );
    Ok(ModelSpec::Transformer(super::TransformerSpec {
        tie_embeddings: f.bool_or("tie_word_embeddings", false),
        qkv_bias: f.bool_or("use_qkv_bias", false),
        attention_dropout: f.f64_or("attention_dropout", 0.0),
        block: BlockOptions {
            norm_kind: NormKind::LayerNorm,
            rotary: Rotary::partial(base.head_dim, factor)?,
            parallel_residual: parallel,
            shared_norm: parallel,
            ..BlockOptions::default()
        },
        ..base
    }))
}
