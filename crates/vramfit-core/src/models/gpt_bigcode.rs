//! GPTBigCode decoders (BigCode's StarCoder and StarCoderBase, SantaCoder,
//! WizardCoder and the fine-tunes built on them) as `transformers` builds
//! them (`models/gpt_bigcode/modeling_gpt_bigcode.py`, `model_type`
//! `gpt_bigcode`): GPT-2's layout (learned positions, LayerNorms with
//! biases, biased projections, a head tied to the embeddings) with one
//! key-value head shared by every query head (`multi_query`, the default):
//! `c_attn(x).unsqueeze(1).split((hidden, head_dim, head_dim), dim=3)`,
//! views of one output; without it, `view(.., heads, 3 * head_dim)
//! .transpose(1, 2).split(head_dim, dim=3)`, views too. Attention goes
//! through transformers' shared functions (`repeat_kv` unless SDPA reads
//! the heads grouped), the eager softmax in fp32; the MLP's activation
//! (`gelu_pytorch_tanh`) is one kernel. The body keeps a boolean causal mask
//! of `n_positions`² it never reads (`self.bias`). StarCoder 2 is [`super::starcoder2`].
//! Lowered by the shared transformer ([`super::transformer`]).

use super::family::{Family, Import, ModelPreset};
use super::hf_fields::Fields;
use super::{BlockOptions, ModelSpec, TransformerSpec, gpt2};
use crate::error::Error;

/// The GPTBigCode family: read from a `config.json`; no presets.
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "gpt_bigcode",
        read,
    }],
    presets,
};

/// Reads a `gpt_bigcode` config with `GPTBigCodeConfig`'s defaults for
/// absent fields (`models/gpt_bigcode/configuration_gpt_bigcode.py`): GPT-2
/// small's shape, `multi_query` true, `n_inner` 4 × hidden, dropout 0.1
/// on the embeddings, attention and residual branches, a tied head.
/// `activation_function` other than `gelu_new` (written as eager ops) is
/// lowered as one kernel that keeps its input, as `gelu_pytorch_tanh` and
/// `gelu` are.
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let hidden = or("n_embd", 768)?;
    let heads = or("n_head", 12)?;
    if heads == 0 || !hidden.is_multiple_of(heads) {
        return Err(Error::InvalidModel(format!(
            "n_embd ({hidden}) must be a multiple of n_head ({heads})"
        )));
    }
    let kv_heads = if f.bool_or("multi_query", true) {
        1
    } else {
        heads
    };
    let layers = or("n_layer", 12)?;
    Ok(ModelSpec::Transformer(TransformerSpec {
        kv_heads,
        intermediate: or("n_inner", 4 * hidden)?,
        max_positions: or("n_positions", 1024)?,
        tie_embeddings: f.bool_or("tie_word_embeddings", true),
        hidden_dropout: f.f64_or("resid_pdrop", 0.1),
        attention_dropout: f.f64_or("attn_pdrop", 0.1),
        fused_gelu: f.str_or("activation_function", "gelu_pytorch_tanh")? != "gelu_new",
        block: BlockOptions {
            softmax_fp32: true,
            tril_buffer: true,
            undropped_embeddings: f.f64_or("embd_pdrop", 0.1) <= 0.0,
            ..BlockOptions::default()
        },
        ..gpt2::decoder(or("vocab_size", 50_257)?, hidden, layers, heads)
    }))
}

/// None: a GPTBigCode model is read from its `config.json`.
fn presets() -> Vec<ModelPreset> {
    Vec::new()
}
