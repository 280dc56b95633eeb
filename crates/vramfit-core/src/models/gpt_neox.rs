//! GPT-NeoX decoders (EleutherAI's Pythia) as `transformers` builds them
//! (`models/gpt_neox/modeling_gpt_neox.py`): LayerNorms with biases, one
//! `query_key_value` projection (with a bias) chunked per head into q, k
//! and v, a rotary embedding on the first quarter of each head
//! (`rotary_pct`), then `torch.cat` with the rest, a plain GELU MLP with
//! biases, the attention and the MLP side by side on the block's input
//! (`use_parallel_residual`), and an untied head. Lowered by the shared
//! transformer ([`super::transformer`]) in the Llama layout with those
//! block options.

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::{
    BlockOptions, MlpKind, ModelSpec, NormKind, QkvProjection, Rotary, TransformerSpec, llama,
};
use crate::error::Error;

/// The GPT-NeoX family.
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "gpt_neox",
        read,
    }],
    presets,
};

/// `GPTNeoXConfig`'s default `rotary_pct`.
const ROTARY_PCT: f64 = 0.25;

/// Reads a `gpt_neox` config with `GPTNeoXConfig`'s defaults for absent
/// fields (`models/gpt_neox/configuration_gpt_neox.py`). The rotated share
/// of each head is `rope_scaling`'s (or `rope_parameters`')
/// `partial_rotary_factor`, else `rotary_pct`. `hidden_act` is lowered as
/// one kernel that keeps its input, as `gelu` (every Pythia's) is.
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let hidden = or("hidden_size", 6144)?;
    let heads = or("num_attention_heads", 64)?;
    if heads == 0 || !hidden.is_multiple_of(heads) {
        return Err(Error::InvalidModel(format!(
            "hidden_size ({hidden}) must be a multiple of num_attention_heads ({heads})"
        )));
    }
    let factor = f
        .rope_f64("partial_rotary_factor")
        .unwrap_or_else(|| f.f64_or("rotary_pct", ROTARY_PCT));
    let attention_bias = f.bool_or("attention_bias", true);
    Ok(ModelSpec::Transformer(TransformerSpec {
        tie_embeddings: f.bool_or("tie_word_embeddings", false),
        qkv_bias: attention_bias,
        mlp_bias: attention_bias,
        hidden_dropout: f.f64_or("hidden_dropout", 0.0),
        attention_dropout: f.f64_or("attention_dropout", 0.0),
        block: BlockOptions {
            rotary: Rotary::partial(hidden / heads, factor)?,
            parallel_residual: f.bool_or("use_parallel_residual", true),
            ..block()
        },
        ..decoder(
            or("vocab_size", 50_432)?,
            hidden,
            or("num_hidden_layers", 44)?,
            heads,
            or("intermediate_size", 24_576)?,
        )
    }))
}

/// GPT-NeoX's block: LayerNorm, a fused and chunked q/k/v projection, the
/// first quarter of each head rotated, a plain MLP, a parallel residual.
fn block() -> BlockOptions {
    BlockOptions {
        norm_kind: NormKind::LayerNorm,
        qkv: QkvProjection::FusedChunks,
        mlp: MlpKind::Plain {
            bias: true,
            relu_squared: false,
            gelu_new: false,
            relu: false,
        },
        parallel_residual: true,
        ..BlockOptions::default()
    }
}

/// A GPT-NeoX decoder as Pythia has it: multi-head attention, biases on
/// every projection (`attention_bias`: the attention's; the MLP's always),
/// `rotary_pct` 0.25, an untied head.
fn decoder(vocab: u64, hidden: u64, layers: u64, heads: u64, intermediate: u64) -> TransformerSpec {
    let head_dim = hidden / heads.max(1);
    TransformerSpec {
        qkv_bias: true,
        // In the Llama layout `mlp_bias` is the output projection's (`dense`).
        mlp_bias: true,
        block: BlockOptions {
            rotary: Rotary::Sliced { dims: head_dim / 4 },
            ..block()
        },
        ..llama::decoder(vocab, hidden, layers, heads, heads, intermediate)
    }
}

/// EleutherAI's Pythia suite, from their `config.json` files on the
/// Hugging Face Hub (`EleutherAI/pythia-70m` … `pythia-12b`): vocabulary
/// 50,304 up to 2.8B, 50,432 for 6.9B and 50,688 for 12B; MLPs 4 × hidden.
fn presets() -> Vec<ModelPreset> {
    let p = |id, name, vocab, hidden, layers, heads| {
        let spec = decoder(vocab, hidden, layers, heads, 4 * hidden);
        ModelPreset::new(id, name, Group::Pythia, ModelSpec::Transformer(spec)).context(2048)
    };
    vec![
        p("pythia-70m", "Pythia-70M", 50_304, 512, 6, 8),
        p("pythia-160m", "Pythia-160M", 50_304, 768, 12, 12),
        p("pythia-410m", "Pythia-410M", 50_304, 1024, 24, 16),
        p("pythia-1b", "Pythia-1B", 50_304, 2048, 16, 8),
        p("pythia-1.4b", "Pythia-1.4B", 50_304, 2048, 24, 16),
        p("pythia-2.8b", "Pythia-2.8B", 50_304, 2560, 32, 32),
        p("pythia-6.9b", "Pythia-6.9B", 50_432, 4096, 32, 32),
        p("pythia-12b", "Pythia-12B", 50_688, 5120, 36, 40),
    ]
}
