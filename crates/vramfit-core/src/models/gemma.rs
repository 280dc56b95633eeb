//! Gemma, Gemma 2 and Gemma 3 (text) as `transformers` builds them
//! (`models/gemma{,2,3}/modeling_gemma*.py`). Gemma is Llama's layout with
//! embeddings scaled by `sqrt(hidden_size)`, `GemmaRMSNorm`
//! (`(x * (1 + weight)).to(dtype)`: the weight before the cast back), a
//! GELU-gated MLP (`gelu_pytorch_tanh`, which keeps its input for backward
//! as SiLU does), 256-wide heads and a tied head. Gemma 2 adds "sandwich"
//! norms (before and after attention and MLP), soft-capped attention scores
//! and logits, and sliding-window attention on every other layer; Gemma 3
//! drops the soft-capping, adds per-head q/k norms and slides on five
//! layers of six. Lowered by the shared transformer ([`super::transformer`]).

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::{
    BlockOptions, MlpKind, ModelSpec, NormKind, NormPlacement, QkNorm, QkvProjection, Rotary,
    SlidingWindow, TransformerSpec, llama,
};
use crate::error::Error;

/// The Gemma family.
pub const FAMILY: Family = Family {
    imports: &[
        Import {
            model_type: "gemma",
            read,
        },
        Import {
            model_type: "gemma2",
            read: read_gemma2,
        },
        Import {
            model_type: "gemma3_text",
            read: read_gemma3,
        },
    ],
    presets,
};

/// Reads a `gemma` config with `GemmaConfig`'s defaults for absent fields
/// (`models/gemma/configuration_gemma.py`).
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    read_shape(f, (256_000, 3072, 28, 16, 16, 24_576)).map(ModelSpec::Transformer)
}

/// Reads a `gemma2` config with `Gemma2Config`'s defaults
/// (`models/gemma2/configuration_gemma2.py`: the 2B model's shape, scores
/// capped at 50 and logits at 30, a 4096-token window on every other layer).
fn read_gemma2(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let base = read_shape(f, (256_000, 2304, 26, 8, 4, 9216))?;
    let sliding = sliding(f, base.layers, 4096, 2)?;
    Ok(ModelSpec::Transformer(TransformerSpec {
        block: BlockOptions {
            attn_softcap: f.number_set("attn_logit_softcapping", true)?,
            final_softcap: f.number_set("final_logit_softcapping", true)?,
            sliding,
            ..gemma2_block()
        },
        ..base
    }))
}

/// Reads a `gemma3_text` config with `Gemma3TextConfig`'s defaults
/// (`models/gemma3/configuration_gemma3.py`: no soft-capping unless set,
/// a 4096-token window on five layers of six, `sliding_window_pattern`).
fn read_gemma3(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let base = read_shape(f, (262_208, 2304, 26, 8, 4, 9216))?;
    let pattern = f.opt_u64("sliding_window_pattern")?.unwrap_or(6);
    let mut sliding = sliding(f, base.layers, 4096, pattern)?;
    // `use_bidirectional_attention` halves the window (`window // 2 + 1`).
    if f.bool_or("use_bidirectional_attention", false) {
        if let Some(w) = sliding.as_mut() {
            w.window = w.window / 2 + 1;
        }
    }
    Ok(ModelSpec::Transformer(TransformerSpec {
        block: BlockOptions {
            attn_softcap: f.number_set("attn_logit_softcapping", false)?,
            final_softcap: f.number_set("final_logit_softcapping", false)?,
            sliding,
            ..gemma3_block()
        },
        ..base
    }))
}

/// The dimensions every Gemma generation reads, with its config class's
/// defaults `(vocab, hidden, layers, heads, kv_heads, intermediate)`.
pub(super) fn read_shape(
    f: &Fields<'_>,
    d: (u64, u64, u64, u64, u64, u64),
) -> Result<TransformerSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    Ok(TransformerSpec {
        head_dim: or("head_dim", 256)?,
        tie_embeddings: f.bool_or("tie_word_embeddings", true),
        qkv_bias: f.bool_or("attention_bias", false),
        attention_dropout: f.f64_or("attention_dropout", 0.0),
        ..decoder(
            or("vocab_size", d.0)?,
            or("hidden_size", d.1)?,
            or("num_hidden_layers", d.2)?,
            or("num_attention_heads", d.3)?,
            or("num_key_value_heads", d.4)?,
            or("intermediate_size", d.5)?,
        )
    })
}

/// The sliding layers: `layer_types` when the config lists them, else
/// every `full_every`-th layer full as the config class fills them in;
/// none when `sliding_window` is null.
pub(super) fn sliding(
    f: &Fields<'_>,
    layers: u64,
    default_window: u64,
    full_every: u64,
) -> Result<Option<SlidingWindow>, Error> {
    if f.map
        .get("sliding_window")
        .is_some_and(serde_json::Value::is_null)
    {
        return Ok(None);
    }
    let window = f.opt_u64("sliding_window")?.unwrap_or(default_window);
    match f.opt_str_list("layer_types")? {
        Some(types) if types.len() as u64 != layers => Err(Error::InvalidModel(format!(
            "layer_types lists {} layers but num_hidden_layers is {layers}",
            types.len()
        ))),
        Some(types) => SlidingWindow::from_layer_types(window, &types),
        None => Ok(Some(SlidingWindow { window, full_every })),
    }
}

/// Every Gemma's block: Gemma's RMSNorm, scaled embeddings.
const GEMMA_BLOCK: BlockOptions = BlockOptions {
    qk_norm: QkNorm::None,
    norm: NormPlacement::Pre,
    rms_weight_first: true,
    embed_scale: true,
    attn_softcap: false,
    final_softcap: false,
    sliding: None,
    norm_kind: NormKind::Rms,
    qkv: QkvProjection::Separate,
    rotary: Rotary::Whole,
    nope_every: 0,
    mlp: MlpKind::Gated,
    parallel_residual: false,
    sinks: false,
    attn_gate: false,
    chunked: false,
    softmax_in_dtype: false,
    softmax_fp32: false,
    tril_buffer: false,
    nope_temperature: false,
    roberta: false,
    shared_norm: false,
    lm_head_bias: false,
    undropped_embeddings: false,
    scaled_residuals: false,
    scaled_logits: false,
    position_offset: 0,
    prescaled_query: false,
    distilbert: false,
    undropped_head: false,
    position_scaled_query: false,
    fp32_logits: false,
};

/// Gemma 2's block: sandwich norms, scores and logits soft-capped.
fn gemma2_block() -> BlockOptions {
    BlockOptions {
        norm: NormPlacement::Sandwich,
        attn_softcap: true,
        final_softcap: true,
        ..GEMMA_BLOCK
    }
}

/// Gemma 3's block: sandwich norms and q/k normalized per head.
pub(super) fn gemma3_block() -> BlockOptions {
    BlockOptions {
        norm: NormPlacement::Sandwich,
        qk_norm: QkNorm::PerHead,
        ..GEMMA_BLOCK
    }
}

/// A Gemma decoder: Llama's with scaled embeddings, Gemma's RMSNorm,
/// 256-wide heads and a tied head.
fn decoder(
    vocab: u64,
    hidden: u64,
    layers: u64,
    heads: u64,
    kv_heads: u64,
    intermediate: u64,
) -> TransformerSpec {
    TransformerSpec {
        head_dim: 256,
        tie_embeddings: true,
        block: GEMMA_BLOCK,
        ..llama::decoder(vocab, hidden, layers, heads, kv_heads, intermediate)
    }
}

/// A Gemma decoder's dimensions with `head_dim`-wide heads (the block is
/// the caller's to set).
pub(super) fn generation_shape(
    vocab: u64,
    hidden: u64,
    layers: u64,
    heads: u64,
    kv_heads: u64,
    head_dim: u64,
    intermediate: u64,
) -> TransformerSpec {
    TransformerSpec {
        head_dim,
        ..decoder(vocab, hidden, layers, heads, kv_heads, intermediate)
    }
}

/// A Gemma 2 or 3 decoder with `head_dim`-wide heads and `block`'s
/// options, sliding over `window` positions on all but every `full_every`-th layer.
#[allow(clippy::too_many_arguments)]
fn generation(
    block: BlockOptions,
    (window, full_every): (u64, u64),
    vocab: u64,
    hidden: u64,
    layers: u64,
    heads: u64,
    kv_heads: u64,
    head_dim: u64,
    intermediate: u64,
) -> TransformerSpec {
    TransformerSpec {
        block: BlockOptions {
            sliding: Some(SlidingWindow { window, full_every }),
            ..block
        },
        ..generation_shape(
            vocab,
            hidden,
            layers,
            heads,
            kv_heads,
            head_dim,
            intermediate,
        )
    }
}

/// Gemma-2B and -7B, Gemma-2-2B/9B/27B and Gemma-3-1B/4B/12B/27B, from
/// their `config.json` files on the Hugging Face Hub (`google/gemma-*`;
/// Gemma 3 4B and larger from the `text_config` of their vision–language
/// configs: the language model alone, as `Gemma3ForCausalLM` builds it).
fn presets() -> Vec<ModelPreset> {
    let p = |id, name, spec| ModelPreset::new(id, name, Group::Gemma, ModelSpec::Transformer(spec));
    let v = 256_000;
    let (g2, g3) = (gemma2_block(), gemma3_block());
    let (w2, w3, w3_small) = ((4096, 2), (1024, 6), (512, 6));
    vec![
        p("gemma-2b", "Gemma-2B", decoder(v, 2048, 18, 8, 1, 16_384)).context(8192),
        p("gemma-7b", "Gemma-7B", decoder(v, 3072, 28, 16, 16, 24_576)).context(8192),
        p(
            "gemma-2-2b",
            "Gemma-2-2B",
            generation(g2, w2, v, 2304, 26, 8, 4, 256, 9216),
        )
        .context(8192),
        p(
            "gemma-2-9b",
            "Gemma-2-9B",
            generation(g2, w2, v, 3584, 42, 16, 8, 256, 14_336),
        )
        .context(8192),
        p(
            "gemma-2-27b",
            "Gemma-2-27B",
            generation(g2, w2, v, 4608, 46, 32, 16, 128, 36_864),
        )
        .context(8192),
        p(
            "gemma-3-1b",
            "Gemma-3-1B",
            generation(g3, w3_small, 262_144, 1152, 26, 4, 1, 256, 6912),
        )
        .context(32768),
        p(
            "gemma-3-4b",
            "Gemma-3-4B (text)",
            generation(g3, w3, 262_208, 2560, 34, 8, 4, 256, 10_240),
        )
        .context(131072),
        p(
            "gemma-3-12b",
            "Gemma-3-12B (text)",
            generation(g3, w3, 262_208, 3840, 48, 16, 8, 256, 15_360),
        )
        .context(131072),
        p(
            "gemma-3-27b",
            "Gemma-3-27B (text)",
            generation(g3, w3, 262_208, 5376, 62, 32, 16, 128, 21_504),
        )
        .context(131072),
    ]
}
