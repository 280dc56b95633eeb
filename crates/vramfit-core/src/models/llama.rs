//! Llama-style decoders (pre-RMSNorm, rotary, GQA, SwiGLU) as
//! `transformers` builds them: the `llama`, `mistral` and `qwen2`
//! `model_type`s and the presets. Lowered by the shared transformer
//! ([`super::transformer`]).

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::{Arch, Head, ModelSpec, TransformerSpec};
use crate::error::Error;

/// The Llama-style family: Llama, Mistral and Qwen2.
pub const FAMILY: Family = Family {
    imports: &[
        Import {
            model_type: "llama",
            read,
        },
        Import {
            model_type: "mistral",
            read,
        },
        Import {
            model_type: "qwen2",
            read,
        },
    ],
    presets,
};

fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    llama_config(f).map(ModelSpec::Transformer)
}

fn llama_config(f: &Fields<'_>) -> Result<TransformerSpec, Error> {
    let hidden = f.u64("hidden_size")?;
    let heads = f.u64("num_attention_heads")?;
    let qwen = f.model_type == "qwen2";
    Ok(TransformerSpec {
        arch: Arch::Llama,
        vocab: f.u64("vocab_size")?,
        hidden,
        layers: f.u64("num_hidden_layers")?,
        heads,
        kv_heads: f.opt_u64("num_key_value_heads")?.unwrap_or(heads),
        head_dim: f.opt_u64("head_dim")?.unwrap_or(hidden / heads.max(1)),
        intermediate: f.u64("intermediate_size")?,
        max_positions: 0,
        type_vocab: 0,
        tie_embeddings: f.bool_or("tie_word_embeddings", false),
        // Qwen2 always has q/k/v biases; Llama and Mistral only with `attention_bias`.
        qkv_bias: qwen || f.bool_or("attention_bias", false),
        mlp_bias: false,
        hidden_dropout: 0.0,
        attention_dropout: f.f64_or("attention_dropout", 0.0),
        head: Head::CausalLm,
        fused_gelu: false,
        block: Default::default(),
    })
}
/// Llama 2 and 3, Mistral-7B and Qwen2.5-7B, and a tiny reference decoder.
fn presets() -> Vec<ModelPreset> {
    let p = |id, name, family, spec| ModelPreset {
        id,
        name,
        family,
        spec,
    };
    vec![
        p(
            "llama-tiny",
            "Llama-style tiny (reference)",
            Group::Llama,
            spec(32000, 512, 4, 8, 2, 1376, false, false),
        ),
        p(
            "llama-2-7b",
            "Llama-2-7B",
            Group::Llama,
            spec(32000, 4096, 32, 32, 32, 11008, false, false),
        ),
        p(
            "llama-2-13b",
            "Llama-2-13B",
            Group::Llama,
            spec(32000, 5120, 40, 40, 40, 13824, false, false),
        ),
        p(
            "llama-2-70b",
            "Llama-2-70B",
            Group::Llama,
            spec(32000, 8192, 80, 64, 8, 28672, false, false),
        ),
        p(
            "llama-3-8b",
            "Llama-3-8B",
            Group::Llama,
            spec(128256, 4096, 32, 32, 8, 14336, false, false),
        ),
        p(
            "llama-3-70b",
            "Llama-3-70B",
            Group::Llama,
            spec(128256, 8192, 80, 64, 8, 28672, false, false),
        ),
        p(
            "mistral-7b",
            "Mistral-7B v0.1",
            Group::Mistral,
            spec(32000, 4096, 32, 32, 8, 14336, false, false),
        ),
        p(
            "qwen2.5-7b",
            "Qwen2.5-7B",
            Group::Qwen,
            spec(152064, 3584, 28, 28, 4, 18944, false, true),
        ),
    ]
}

/// A Llama-style decoder (Llama, Mistral, Qwen2): RMSNorm, rotary, GQA, SwiGLU.
#[allow(clippy::too_many_arguments)]
pub fn spec(
    vocab: u64,
    hidden: u64,
    layers: u64,
    heads: u64,
    kv_heads: u64,
    intermediate: u64,
    tie: bool,
    qkv_bias: bool,
) -> ModelSpec {
    ModelSpec::Transformer(TransformerSpec {
        arch: Arch::Llama,
        vocab,
        hidden,
        layers,
        heads,
        kv_heads,
        head_dim: hidden / heads.max(1),
        intermediate,
        max_positions: 0,
        type_vocab: 0,
        tie_embeddings: tie,
        qkv_bias,
        mlp_bias: false,
        hidden_dropout: 0.0,
        attention_dropout: 0.0,
        head: Head::CausalLm,
        fused_gelu: false,
        block: Default::default(),
    })
}
