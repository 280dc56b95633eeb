//! Cohere's Command R, Command R+ and Aya Expanse (`model_type` `cohere`)
//! and Command R7B and Command A (`cohere2`) as `transformers` builds them
//! (`models/cohere/modeling_cohere.py`, `models/cohere2/modeling_cohere2.py`):
//! attention and a gated MLP in parallel on one `CohereLayerNorm` of the
//! block's input ([`BlockOptions::shared_norm`]; the norm has no bias and
//! runs as eager ops in fp32, [`NormKind::Cohere`]), the rotary embedding
//! in interleaved pairs in fp32 ([`Rotary::CohereFp32`]), the logits
//! multiplied by `logit_scale` ([`BlockOptions::scaled_logits`]), the head
//! tied; with `use_qk_norm` the same norm on q and k, a weight per head.
//! Cohere 2's layers slide over a window but every fourth (by default),
//! which attends to everything and rotates nothing. Import only: no
//! presets. Lowered by the shared transformer ([`super::transformer`]).

use super::family::{Family, Import, no_presets};
use super::hf_fields::Fields;
use super::{
    BlockOptions, ModelSpec, NormKind, QkNorm, Rotary, SlidingWindow, TransformerSpec, llama,
};
use crate::error::Error;

/// Cohere's Command models.
pub const FAMILY: Family = Family {
    imports: &[
        Import {
            model_type: "cohere",
            read,
        },
        Import {
            model_type: "cohere2",
            read: read2,
        },
    ],
    presets: no_presets,
};

/// Reads a `cohere` config with `CohereConfig`'s defaults (Command R+'s
/// shape).
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    decoder(f).map(ModelSpec::Transformer)
}

/// Reads a `cohere2` config with `Cohere2Config`'s defaults: as [`read`],
/// with `layer_types` (else three sliding layers, then a full one) over a
/// `sliding_window` of 4096; the full layers have no rotary embedding.
fn read2(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let mut t = decoder(f)?;
    let window = f.opt_u64("sliding_window")?.unwrap_or(4096);
    let sliding = match f.opt_str_list("layer_types")? {
        Some(types) => SlidingWindow::from_layer_types(window, &types)?,
        None => Some(SlidingWindow {
            window,
            full_every: f.opt_u64("sliding_window_pattern")?.unwrap_or(4),
        }),
    };
    t.block.nope_every = sliding.map_or(0, |w| w.full_every);
    t.block.sliding = sliding;
    Ok(ModelSpec::Transformer(t))
}

/// The decoder both read.
fn decoder(f: &Fields<'_>) -> Result<TransformerSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let heads = f.heads_or(64)?;
    let bias = f.bool_or("attention_bias", false);
    let base = llama::decoder(
        or("vocab_size", 256_000)?,
        or("hidden_size", 8192)?,
        or("num_hidden_layers", 40)?,
        heads,
        f.opt_u64("num_key_value_heads")?.unwrap_or(heads),
        or("intermediate_size", 22_528)?,
    );
    Ok(TransformerSpec {
        qkv_bias: bias,
        // In the Llama layout `mlp_bias` is the output projection's.
        mlp_bias: bias,
        tie_embeddings: f.bool_or("tie_word_embeddings", true),
        attention_dropout: f.f64_or("attention_dropout", 0.0),
        block: BlockOptions {
            norm_kind: NormKind::Cohere,
            rotary: Rotary::CohereFp32,
            // A weight of `[heads, head_dim]`, over each head's features.
            qk_norm: if f.bool_or("use_qk_norm", false) {
                QkNorm::Whole
            } else {
                QkNorm::None
            },
            parallel_residual: true,
            shared_norm: true,
            scaled_logits: true,
            ..BlockOptions::default()
        },
        ..base
    })
}
