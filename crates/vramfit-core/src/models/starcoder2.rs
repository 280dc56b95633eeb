//! StarCoder2 as `transformers` builds it
//! (`models/starcoder2/modeling_starcoder2.py`): the Llama layout with
//! LayerNorms (with biases), separate q/k/v and output projections with a
//! bias each (`use_bias`), a plain MLP `c_proj(act(c_fc(x)))` with biases
//! (`gelu_pytorch_tanh`), grouped-query attention, rotary positions over
//! the whole head, dropout on the embeddings and both residual branches,
//! a sliding window on every layer and a tied head. Lowered by the shared
//! transformer ([`super::transformer`]) with those block options.

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::{BlockOptions, MlpKind, ModelSpec, NormKind, SlidingWindow, TransformerSpec, llama};
use crate::error::Error;

/// The StarCoder2 family.
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "starcoder2",
        read,
    }],
    presets,
};

/// Reads a `starcoder2` config with `Starcoder2Config`'s defaults for
/// absent fields (`models/starcoder2/configuration_starcoder2.py`: the 3B
/// model's shape, no window unless `sliding_window` is set). Dropout is
/// `residual_dropout` on the embeddings too (every released StarCoder2 sets
/// `embedding_dropout` equal to it).
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let bias = f.bool_or("use_bias", true);
    let window = f.opt_u64("sliding_window")?.filter(|&w| w > 0);
    let base = decoder(
        or("vocab_size", 49_152)?,
        or("hidden_size", 3072)?,
        or("num_hidden_layers", 30)?,
        or("num_attention_heads", 24)?,
        or("num_key_value_heads", 2)?,
        or("intermediate_size", 12_288)?,
        window,
    );
    Ok(ModelSpec::Transformer(TransformerSpec {
        tie_embeddings: f.bool_or("tie_word_embeddings", true),
        qkv_bias: bias,
        mlp_bias: bias,
        hidden_dropout: f.f64_or("residual_dropout", 0.0),
        attention_dropout: f.f64_or("attention_dropout", 0.0),
        block: BlockOptions {
            mlp: MlpKind::Plain {
                bias,
                relu_squared: false,
                gelu_new: false,
                relu: false,
            },
            ..base.block
        },
        ..base
    }))
}

/// A StarCoder2 decoder: biases everywhere, a tied head, every layer
/// sliding over `window` positions when one is given.
fn decoder(
    vocab: u64,
    hidden: u64,
    layers: u64,
    heads: u64,
    kv_heads: u64,
    intermediate: u64,
    window: Option<u64>,
) -> TransformerSpec {
    TransformerSpec {
        tie_embeddings: true,
        qkv_bias: true,
        // In the Llama layout `mlp_bias` is the output projection's (`o_proj`).
        mlp_bias: true,
        block: BlockOptions {
            norm_kind: NormKind::LayerNorm,
            mlp: MlpKind::Plain {
                bias: true,
                relu_squared: false,
                gelu_new: false,
                relu: false,
            },
            sliding: window.map(|window| SlidingWindow {
                window,
                full_every: 0,
            }),
            ..BlockOptions::default()
        },
        ..llama::decoder(vocab, hidden, layers, heads, kv_heads, intermediate)
    }
}

/// StarCoder2-3B, -7B and -15B, from their `config.json` files on the
/// Hugging Face Hub (`bigcode/starcoder2-*`): vocabulary 49,152, MLPs
/// 4 × hidden, a 4096-token window on every layer; the 15B model's head is
/// its own (`tie_word_embeddings` false: 15.96B parameters, as published).
fn presets() -> Vec<ModelPreset> {
    let p = |id, name, hidden, layers, heads, kv_heads, tied| {
        let spec = TransformerSpec {
            tie_embeddings: tied,
            ..decoder(
                49_152,
                hidden,
                layers,
                heads,
                kv_heads,
                4 * hidden,
                Some(4096),
            )
        };
        ModelPreset::new(id, name, Group::StarCoder2, ModelSpec::Transformer(spec)).context(16_384)
    };
    vec![
        p("starcoder2-3b", "StarCoder2-3B", 3072, 30, 24, 2, true),
        p("starcoder2-7b", "StarCoder2-7B", 4608, 32, 36, 4, true),
        p("starcoder2-15b", "StarCoder2-15B", 6144, 40, 48, 4, false),
    ]
}
