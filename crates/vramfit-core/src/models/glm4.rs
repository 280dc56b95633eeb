//! Zhipu's dense GLM-4 (GLM-4-9B-0414, GLM-4-32B-0414, GLM-Z1) as
//! `transformers` 5.24 builds it (`models/glm4/modeling_glm4.py`):
//! Llama's block with four norms each (`input_layernorm`,
//! `post_self_attn_layernorm`, `post_attention_layernorm`,
//! `post_mlp_layernorm`: [`NormPlacement::Sandwich`]), q/k/v biases, one
//! `gate_up_proj` chunked in two ([`MlpKind::FusedGated`]) and half of each
//! head rotated in interleaved pairs, then `torch.cat` with the rest
//! ([`Rotary::Sliced`]). Lowered by the shared transformer
//! ([`super::transformer`]). GLM-4-9B and its chat model as `transformers`
//! converts them (`model_type` `glm`, `models/glm/modeling_glm.py`) are the
//! same block with two norms, before attention and MLP. Import only: no presets.

use super::family::{Family, Import, no_presets};
use super::hf_fields::Fields;
use super::{BlockOptions, MlpKind, ModelSpec, NormPlacement, Rotary, llama};
use crate::error::Error;

/// The dense GLM-4 family.
pub const FAMILY: Family = Family {
    imports: &[
        Import {
            model_type: "glm4",
            read,
        },
        Import {
            model_type: "glm",
            read: read_glm,
        },
    ],
    presets: no_presets,
};

/// Reads a `glm` config (GLM-4-9B, `GlmConfig`'s defaults the same as
/// `Glm4Config`'s): as [`read`], the norms before attention and MLP only.
fn read_glm(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    read_with(f, NormPlacement::Pre)
}

/// Reads a `glm4` config with `Glm4Config`'s defaults (GLM-4-9B's shape):
/// q/k/v biases with `attention_bias` (on by default), an output projection
/// without, `partial_rotary_factor` (0.5 unless the rope parameters say
/// otherwise) of each `head_dim`-wide head rotated.
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    read_with(f, NormPlacement::Sandwich)
}

/// A GLM-4 decoder with its norms at `norm`.
fn read_with(f: &Fields<'_>, norm: NormPlacement) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let head_dim = or("head_dim", 128)?;
    let factor = f
        .rope_f64("partial_rotary_factor")
        .unwrap_or_else(|| f.f64_or("partial_rotary_factor", 0.5));
    let t = super::TransformerSpec {
        head_dim,
        qkv_bias: f.bool_or("attention_bias", true),
        tie_embeddings: f.bool_or("tie_word_embeddings", false),
        attention_dropout: f.f64_or("attention_dropout", 0.0),
        block: BlockOptions {
            norm,
            mlp: MlpKind::FusedGated,
            rotary: Rotary::partial(head_dim, factor)?,
            ..BlockOptions::default()
        },
        ..llama::decoder(
            or("vocab_size", 151_552)?,
            or("hidden_size", 4096)?,
            or("num_hidden_layers", 40)?,
            or("num_attention_heads", 32)?,
            or("num_key_value_heads", 2)?,
            or("intermediate_size", 13_696)?,
        )
    };
    Ok(ModelSpec::Transformer(t))
}
