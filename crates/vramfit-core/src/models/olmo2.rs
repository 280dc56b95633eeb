//! OLMo 2 decoders as `transformers` builds them
//! (`models/olmo2/modeling_olmo2.py`): Llama's projections, rotary
//! embedding and SwiGLU, with the norms after attention and after the MLP
//! (`x + norm(attn(x))`), RMSNorms over the whole q and k projections, and
//! `Olmo2RMSNorm`, which multiplies by its weight before casting back.
//! OLMo 3 (`models/olmo3/modeling_olmo3.py`) is OLMo 2's block with a
//! sliding window on the layers `layer_types` marks (three of four by
//! default) and a rotary embedding per layer type (fp32 `cos`/`sin` a few
//! KiB wide, not counted). Lowered by the shared transformer
//! ([`super::transformer`]).

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::{
    BlockOptions, ModelSpec, NormPlacement, QkNorm, SlidingWindow, TransformerSpec, llama,
};
use crate::error::Error;

/// The OLMo 2 and OLMo 3 family.
pub const FAMILY: Family = Family {
    imports: &[
        Import {
            model_type: "olmo2",
            read,
        },
        Import {
            model_type: "olmo3",
            read: read_olmo3,
        },
    ],
    presets,
};

/// Reads an `olmo2` config with `Olmo2Config`'s defaults for absent fields
/// (`models/olmo2/configuration_olmo2.py`; no `head_dim` field: the heads
/// split the hidden size).
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let hidden = or("hidden_size", 4096)?;
    let heads = or("num_attention_heads", 32)?;
    if heads == 0 || !hidden.is_multiple_of(heads) {
        return Err(Error::InvalidModel(format!(
            "hidden_size ({hidden}) must be a multiple of num_attention_heads ({heads})"
        )));
    }
    Ok(ModelSpec::Transformer(TransformerSpec {
        kv_heads: f.opt_u64("num_key_value_heads")?.unwrap_or(heads),
        tie_embeddings: f.bool_or("tie_word_embeddings", false),
        // `attention_bias` biases o too (the Llama layout's `mlp_bias`).
        qkv_bias: f.bool_or("attention_bias", false),
        mlp_bias: f.bool_or("attention_bias", false),
        attention_dropout: f.f64_or("attention_dropout", 0.0),
        ..decoder(
            or("vocab_size", 50_304)?,
            hidden,
            or("num_hidden_layers", 32)?,
            heads,
            heads,
            or("intermediate_size", 11_008)?,
        )
    }))
}

/// Reads an `olmo3` config with `Olmo3Config`'s defaults (`Olmo2Config`'s
/// shape, a 4096-token `sliding_window` on every layer but each fourth
/// unless `layer_types` says otherwise; `sliding_window: null` slides none).
fn read_olmo3(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let ModelSpec::Transformer(mut t) = read(f)? else {
        return Err(Error::InvalidModel("olmo3 reads as a transformer".into()));
    };
    t.block.sliding = super::gemma::sliding(f, t.layers, 4096, 4)?;
    Ok(ModelSpec::Transformer(t))
}

/// An OLMo 2 decoder: Llama's with its norms after attention and the MLP,
/// whole-width q/k norms and `Olmo2RMSNorm`.
fn decoder(
    vocab: u64,
    hidden: u64,
    layers: u64,
    heads: u64,
    kv_heads: u64,
    intermediate: u64,
) -> TransformerSpec {
    TransformerSpec {
        block: BlockOptions {
            qk_norm: QkNorm::Whole,
            norm: NormPlacement::Post,
            rms_weight_first: true,
            ..BlockOptions::default()
        },
        ..llama::decoder(vocab, hidden, layers, heads, kv_heads, intermediate)
    }
}

/// Ai2's OLMo 2 models, from their `config.json` files on the Hugging Face
/// Hub (`allenai/OLMo-2-0425-1B`, `-1124-7B`, `-1124-13B`, `-0325-32B`):
/// vocabulary 100,352, untied head.
fn presets() -> Vec<ModelPreset> {
    let p = |id, name, spec| {
        ModelPreset::new(id, name, Group::Olmo, ModelSpec::Transformer(spec)).context(4096)
    };
    let v = 100_352;
    vec![
        p(
            "olmo-2-1b",
            "OLMo-2-1B (0425)",
            decoder(v, 2048, 16, 16, 16, 8192),
        ),
        p(
            "olmo-2-7b",
            "OLMo-2-7B (1124)",
            decoder(v, 4096, 32, 32, 32, 11_008),
        ),
        p(
            "olmo-2-13b",
            "OLMo-2-13B (1124)",
            decoder(v, 5120, 40, 40, 40, 13_824),
        ),
        p(
            "olmo-2-32b",
            "OLMo-2-32B (0325)",
            decoder(v, 5120, 64, 40, 8, 27_648),
        ),
        olmo3("olmo-3-7b", "OLMo-3-7B (1025)", (4096, 32, 32, 32, 11_008)),
        olmo3("olmo-3-32b", "OLMo-3-32B (1125)", (5120, 64, 40, 8, 27_648)),
    ]
}

/// An OLMo 3 preset, from its `config.json` on the Hugging Face Hub
/// (`allenai/Olmo-3-1025-7B`, `allenai/Olmo-3-1125-32B`): `(hidden, layers,
/// heads, kv_heads, intermediate)`, vocabulary 100,278, untied head, a
/// 4096-token window on three layers of four, 65,536 positions.
fn olmo3(
    id: &'static str,
    name: &'static str,
    (hidden, layers, heads, kv_heads, intermediate): (u64, u64, u64, u64, u64),
) -> ModelPreset {
    let mut t = decoder(100_278, hidden, layers, heads, kv_heads, intermediate);
    t.block.sliding = Some(SlidingWindow {
        window: 4096,
        full_every: 4,
    });
    ModelPreset::new(id, name, Group::Olmo, ModelSpec::Transformer(t)).context(65_536)
}
