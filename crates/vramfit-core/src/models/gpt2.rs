//! GPT-2 decoders as `transformers` builds them (`GPT2LMHeadModel`), and
//! Megatron-LM's GPT of the same layout: the `gpt2` `model_type` and the
//! presets. Lowered by the shared transformer ([`super::transformer`]).

use super::bert::heads_divide_hidden;
use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::{Arch, Head, ModelSpec, TransformerSpec};
use crate::error::Error;

/// The GPT-2 family.
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "gpt2",
        read,
    }],
    presets,
};

fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    heads_divide_hidden(f, "n_embd", "n_head")?;
    gpt2(f).map(ModelSpec::Transformer)
}

fn gpt2(f: &Fields<'_>) -> Result<TransformerSpec, Error> {
    let hidden = f.u64("n_embd")?;
    Ok(TransformerSpec {
        intermediate: f.opt_u64("n_inner")?.unwrap_or(4 * hidden),
        max_positions: f.opt_u64("n_positions")?.unwrap_or(1024),
        tie_embeddings: f.bool_or("tie_word_embeddings", true),
        hidden_dropout: f.f64_or("resid_pdrop", 0.1),
        attention_dropout: f.f64_or("attn_pdrop", 0.1),
        ..decoder(
            f.u64("vocab_size")?,
            hidden,
            f.u64("n_layer")?,
            f.u64("n_head")?,
        )
    })
}

/// GPT-2 in its four sizes and GPT-3 175B as Megatron-LM trains it.
fn presets() -> Vec<ModelPreset> {
    let p = ModelPreset::new;
    vec![
        p("gpt2", "GPT-2 (124M)", Group::Gpt2, spec(768, 12, 12)),
        p(
            "gpt2-medium",
            "GPT-2 Medium (355M)",
            Group::Gpt2,
            spec(1024, 24, 16),
        ),
        p(
            "gpt2-large",
            "GPT-2 Large (774M)",
            Group::Gpt2,
            spec(1280, 36, 20),
        ),
        p(
            "gpt2-xl",
            "GPT-2 XL (1.5B)",
            Group::Gpt2,
            spec(1600, 48, 25),
        ),
        p(
            "gpt3-175b",
            "GPT-3 175B (Megatron-LM)",
            Group::Gpt2,
            megatron_gpt(51200, 12288, 96, 96, 2048),
        ),
    ]
}

fn spec(hidden: u64, layers: u64, heads: u64) -> ModelSpec {
    ModelSpec::Transformer(decoder(50257, hidden, layers, heads))
}

/// A GPT-2 decoder as `GPT2Config`'s defaults build it but for its shape:
/// 1024 positions, an MLP of 4 × hidden, dropout 0.1, biases everywhere,
/// a tied head (GPTBigCode's starts from it, [`super::gpt_bigcode`]).
pub(super) fn decoder(vocab: u64, hidden: u64, layers: u64, heads: u64) -> TransformerSpec {
    TransformerSpec {
        arch: Arch::Gpt2,
        vocab,
        hidden,
        layers,
        heads,
        kv_heads: heads,
        head_dim: hidden / heads.max(1),
        intermediate: 4 * hidden,
        max_positions: 1024,
        context_limit: 0,
        moe: None,
        mla: None,
        linear: None,
        gemma4: None,
        encoder: None,
        single_mixer: None,
        type_vocab: 0,
        tie_embeddings: true,
        qkv_bias: true,
        mlp_bias: true,
        hidden_dropout: 0.1,
        attention_dropout: 0.1,
        head: Head::CausalLm,
        fused_gelu: false,
        block: Default::default(),
    }
}

/// A Megatron-LM GPT: GPT-2's layout with its own vocabulary and positions
/// and a fused bias-GeLU kernel.
fn megatron_gpt(vocab: u64, hidden: u64, layers: u64, heads: u64, positions: u64) -> ModelSpec {
    match spec(hidden, layers, heads) {
        ModelSpec::Transformer(t) => ModelSpec::Transformer(TransformerSpec {
            vocab,
            max_positions: positions,
            fused_gelu: true,
            block: Default::default(),
            ..t
        }),
        other => other,
    }
}
