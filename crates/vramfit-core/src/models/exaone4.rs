//! LG AI Research's EXAONE 4.0 as `transformers` builds it
//! (`models/exaone4/modeling_exaone4.py`): Llama's projections with OLMo 2's
//! norms after attention and the MLP (`post_attention_layernorm`,
//! `post_feedforward_layernorm`; Llama's RMSNorm), an RMSNorm over each
//! head of q and k, and, when `sliding_window` is set, a window on the
//! layers `layer_types` marks sliding with no rotary embedding on the
//! others ("global NoPE": [`super::BlockOptions::nope_every`]). Lowered by
//! the shared transformer ([`super::transformer`]).

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::{
    BlockOptions, ModelSpec, NormPlacement, QkNorm, SlidingWindow, TransformerSpec, llama,
};
use crate::error::Error;
use serde_json::Value;

/// The EXAONE 4.0 family.
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "exaone4",
        read,
    }],
    presets,
};

/// Reads an `exaone4` config with `Exaone4Config`'s defaults
/// (`models/exaone4/configuration_exaone4.py`). The layers: `layer_types`
/// when given; else none slides with `sliding_window` null, and with a
/// window every `sliding_window_pattern`-th layer is full (4 by default;
/// a pattern written as EXAONE's letters, `"LLLG"`, repeats over the layers).
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let hidden = or("hidden_size", 4096)?;
    let heads = or("num_attention_heads", 32)?;
    let layers = or("num_hidden_layers", 32)?;
    // `gemma::sliding` reads the window (null: none slides) and `layer_types`;
    // without them every `sliding_window_pattern`-th layer is full.
    let windowed = !f.map.get("sliding_window").is_some_and(Value::is_null);
    let pattern = full_every(f, layers)?;
    let sliding = super::gemma::sliding(f, layers, 4096, pattern)?.filter(|w| w.full_every != 1);
    // With a window, every full layer goes without rotary embedding: all of
    // them when none slides.
    let nope_every = match (windowed, sliding) {
        (false, _) => 0,
        (true, None) => 1,
        (true, Some(w)) => w.full_every,
    };
    let mut t = decoder(
        (or("vocab_size", 102_400)?, hidden, layers),
        (
            heads,
            or("num_key_value_heads", 32)?,
            or("head_dim", hidden / heads.max(1))?,
        ),
        or("intermediate_size", 16_384)?,
        (sliding, nope_every),
    );
    t.tie_embeddings = f.bool_or("tie_word_embeddings", false);
    t.attention_dropout = f.f64_or("attention_dropout", 0.0);
    Ok(ModelSpec::Transformer(t))
}

/// Every how many layers `sliding_window_pattern` puts a full one: a
/// number n, or a string of `L` (local) and `G` (global) repeated over the
/// layers, which must be every n-th G (1: all full; 0: all sliding).
fn full_every(f: &Fields<'_>, layers: u64) -> Result<u64, Error> {
    let Some(Value::String(letters)) = f.map.get("sliding_window_pattern") else {
        let n = f.opt_u64("sliding_window_pattern")?.unwrap_or(4);
        if n == 0 {
            return Err(Error::InvalidModel(
                "sliding_window_pattern must be at least 1".into(),
            ));
        }
        return Ok(n);
    };
    let pattern: Vec<char> = letters.chars().collect();
    if pattern.is_empty() || pattern.iter().any(|c| !matches!(c, 'L' | 'G')) {
        return Err(Error::InvalidModel(format!(
            "sliding_window_pattern '{letters}' must be a number or letters L (sliding) and G (full)"
        )));
    }
    let types: Vec<&str> = (0..layers)
        .map(|i| match pattern.get(i as usize % pattern.len()) {
            Some('L') => "sliding_attention",
            _ => "full_attention",
        })
        .collect();
    Ok(SlidingWindow::from_layer_types(1, &types)?.map_or(1, |w| w.full_every))
}

/// An EXAONE 4.0 decoder: Llama's with norms after attention and the MLP,
/// per-head q/k norms, and `sliding` layers beside every `nope_every`-th
/// without rotary embedding.
fn decoder(
    (vocab, hidden, layers): (u64, u64, u64),
    (heads, kv_heads, head_dim): (u64, u64, u64),
    intermediate: u64,
    (sliding, nope_every): (Option<SlidingWindow>, u64),
) -> TransformerSpec {
    TransformerSpec {
        head_dim,
        block: BlockOptions {
            qk_norm: QkNorm::PerHead,
            norm: NormPlacement::Post,
            sliding,
            nope_every,
            ..BlockOptions::default()
        },
        ..llama::decoder(vocab, hidden, layers, heads, kv_heads, intermediate)
    }
}

/// EXAONE-4.0-1.2B and -32B, from their `config.json` files on the Hugging
/// Face Hub (`LGAI-EXAONE/EXAONE-4.0-1.2B`, `LGAI-EXAONE/EXAONE-4.0-32B`):
/// a 102,400-token vocabulary, 8 key/value heads. 1.2B: 30 layers of 2048,
/// 32 heads of 64, an MLP of 4096, every layer full with rotary embedding,
/// tied head, 65,536 tokens; 32B: 64 layers of 5120, 40 heads of 128, an
/// MLP of 27,392, a 4096-token window on three layers of four and no rotary
/// embedding on the fourth, untied head, 131,072 tokens.
fn presets() -> Vec<ModelPreset> {
    let p = |id, name, t| ModelPreset::new(id, name, Group::Exaone, ModelSpec::Transformer(t));
    let small = TransformerSpec {
        tie_embeddings: true,
        ..decoder((102_400, 2048, 30), (32, 8, 64), 4096, (None, 0))
    };
    let window = SlidingWindow {
        window: 4096,
        full_every: 4,
    };
    let large = decoder((102_400, 5120, 64), (40, 8, 128), 27_392, (Some(window), 4));
    vec![
        p("exaone-4.0-1.2b", "EXAONE-4.0-1.2B", small).context(65_536),
        p("exaone-4.0-32b", "EXAONE-4.0-32B", large).context(131_072),
    ]
}
