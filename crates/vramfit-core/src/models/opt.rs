//! Meta's OPT decoders as `transformers` builds them (`OPTForCausalLM`,
//! `models/opt/modeling_opt.py`, `model_type` `opt`): learned positions
//! counted from the attention mask and shifted by 2
//! ([`super::BlockOptions::position_offset`]), LayerNorm before attention
//! and the MLP, the queries scaled as they are projected
//! ([`super::BlockOptions::prescaled_query`]), biases on every projection,
//! an MLP `fc2(relu(fc1(x)))`, dropout on both branches' outputs and none
//! on the embeddings, the LM head tied to the token embeddings. Lowered by
//! the shared transformer ([`super::transformer`]).
//!
//! OPT-350M's layout (LayerNorm after each residual add, the embeddings
//! projected from 512 features in and out) is refused by name.

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::{BlockOptions, MlpKind, ModelSpec, NormKind, TransformerSpec, llama};
use crate::error::Error;

/// The OPT family.
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "opt",
        read,
    }],
    presets,
};

/// Reads an `opt` config with `OPTConfig`'s defaults (OPT-125M's shape).
/// Refused: `do_layer_norm_before: false` and a `word_embed_proj_dim` other
/// than `hidden_size` (OPT-350M), `layer_norm_elementwise_affine: false`
/// and `_remove_final_layer_norm: true`, which change the norms.
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let hidden = or("hidden_size", 768)?;
    if !f.bool_or("do_layer_norm_before", true) {
        return Err(Error::InvalidModel(
            "do_layer_norm_before: false puts OPT's LayerNorms after each residual add (OPT-350M's layout), which vramfit does not model".into(),
        ));
    }
    if let Some(projected) = f.opt_u64("word_embed_proj_dim")?.filter(|&d| d != hidden) {
        return Err(Error::InvalidModel(format!(
            "word_embed_proj_dim {projected} projects OPT's embeddings in and out of its {hidden} features (OPT-350M's layout), which vramfit does not model"
        )));
    }
    if !f.bool_or("layer_norm_elementwise_affine", true) {
        return Err(Error::InvalidModel(
            "layer_norm_elementwise_affine: false gives OPT's LayerNorms no weight or bias, which vramfit does not model".into(),
        ));
    }
    if f.bool_or("_remove_final_layer_norm", false) {
        return Err(Error::InvalidModel(
            "_remove_final_layer_norm: true leaves OPT without its final LayerNorm, which vramfit does not model".into(),
        ));
    }
    let mut t = decoder(
        (or("vocab_size", 50_272)?, hidden),
        (or("num_hidden_layers", 12)?, f.heads_or(12)?),
        or("ffn_dim", 3072)?,
        or("max_position_embeddings", 2048)?,
    );
    let bias = f.bool_or("enable_bias", true);
    t.qkv_bias = bias;
    t.mlp_bias = bias;
    t.block.mlp = MlpKind::Plain {
        bias,
        relu_squared: false,
        gelu_new: false,
        relu: f.str_or("activation_function", "relu")? == "relu",
    };
    t.tie_embeddings = f.bool_or("tie_word_embeddings", true);
    t.hidden_dropout = f.f64_or("dropout", 0.1);
    t.attention_dropout = f.f64_or("attention_dropout", 0.0);
    Ok(ModelSpec::Transformer(t))
}

/// An OPT decoder with `OPTConfig`'s other defaults: dropout 0.1 on the
/// branches, none in attention.
fn decoder(
    (vocab, hidden): (u64, u64),
    (layers, heads): (u64, u64),
    ffn: u64,
    positions: u64,
) -> TransformerSpec {
    TransformerSpec {
        max_positions: positions,
        tie_embeddings: true,
        qkv_bias: true,
        // In the Llama layout `mlp_bias` is the attention output's (`out_proj`).
        mlp_bias: true,
        hidden_dropout: 0.1,
        block: BlockOptions {
            norm_kind: NormKind::LayerNorm,
            // No rotary embedding in any layer.
            nope_every: 1,
            mlp: MlpKind::Plain {
                bias: true,
                relu_squared: false,
                gelu_new: false,
                relu: true,
            },
            undropped_embeddings: true,
            position_offset: 2,
            prescaled_query: true,
            ..BlockOptions::default()
        },
        ..llama::decoder(vocab, hidden, layers, heads, heads, ffn)
    }
}

/// OPT-125M (the model of vLLM's quick start), OPT-1.3B and OPT-6.7B
/// (DeepSpeed-Chat's actors), from their `config.json` files.
fn presets() -> Vec<ModelPreset> {
    let p = ModelPreset::new;
    let opt = |hidden, layers, heads| {
        ModelSpec::Transformer(decoder((50_272, hidden), (layers, heads), 4 * hidden, 2048))
    };
    vec![
        p("opt-125m", "OPT-125M", Group::Opt, opt(768, 12, 12)),
        p("opt-1.3b", "OPT-1.3B", Group::Opt, opt(2048, 24, 32)),
        p("opt-6.7b", "OPT-6.7B", Group::Opt, opt(4096, 32, 32)),
    ]
}
