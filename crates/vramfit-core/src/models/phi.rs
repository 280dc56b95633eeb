//! Microsoft's Phi-1, Phi-1.5 and Phi-2 as `transformers` builds them
//! (`models/phi/modeling_phi.py`, `model_type` `phi`): attention and MLP in
//! parallel on one LayerNorm of the block's input
//! ([`BlockOptions::shared_norm`]), biases on every projection and on the
//! LM head, part of each head rotated, an MLP `fc2(gelu_new(fc1(x)))`
//! written as eager ops, dropout on both branches' outputs (`resid_pdrop`)
//! and none on the embeddings unless `embd_pdrop` says so. Phi-3 and Phi-4
//! are [`super::phi3`]. Lowered by the shared transformer ([`super::transformer`]).

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::{BlockOptions, MlpKind, ModelSpec, NormKind, QkNorm, Rotary, TransformerSpec, llama};
use crate::error::Error;

/// The Phi-1/1.5/2 family.
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "phi",
        read,
    }],
    presets,
};

/// Reads a `phi` config with `PhiConfig`'s defaults (Phi-1.5's shape):
/// `num_key_value_heads` (else one per head), `head_dim` (else hidden /
/// heads), `partial_rotary_factor` (0.5), `qk_layernorm` (a LayerNorm per
/// head on q and k), `hidden_act` (`gelu_new`), an untied head unless
/// `tie_word_embeddings`.
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let heads = f.heads_or(32)?;
    let hidden = or("hidden_size", 2048)?;
    let head_dim = f.opt_u64("head_dim")?.unwrap_or(hidden / heads);
    let factor = f
        .rope_f64("partial_rotary_factor")
        .unwrap_or_else(|| f.f64_or("partial_rotary_factor", 0.5));
    let mut t = decoder(
        (or("vocab_size", 51_200)?, hidden),
        (or("num_hidden_layers", 24)?, heads),
        or("intermediate_size", 8192)?,
        Rotary::partial(head_dim, factor)?,
    );
    t.kv_heads = f.opt_u64("num_key_value_heads")?.unwrap_or(heads);
    t.head_dim = head_dim;
    t.tie_embeddings = f.bool_or("tie_word_embeddings", false);
    t.hidden_dropout = f.f64_or("resid_pdrop", 0.0);
    t.attention_dropout = f.f64_or("attention_dropout", 0.0);
    t.block.undropped_embeddings = f.f64_or("embd_pdrop", 0.0) <= 0.0;
    if f.bool_or("qk_layernorm", false) {
        // `q_layernorm(query_states)` on `[batch, heads, seq, head_dim]`.
        t.block.qk_norm = QkNorm::PerHead;
    }
    t.block.mlp = MlpKind::Plain {
        bias: true,
        relu_squared: false,
        gelu_new: f.str_or("hidden_act", "gelu_new")? == "gelu_new",
        relu: false,
    };
    Ok(ModelSpec::Transformer(t))
}

/// A Phi decoder with `PhiConfig`'s other defaults: multi-head attention,
/// no dropout, `rotary` on each head.
fn decoder(
    (vocab, hidden): (u64, u64),
    (layers, heads): (u64, u64),
    intermediate: u64,
    rotary: Rotary,
) -> TransformerSpec {
    TransformerSpec {
        qkv_bias: true,
        // In the Llama layout `mlp_bias` is the output projection's (`dense`).
        mlp_bias: true,
        block: BlockOptions {
            norm_kind: NormKind::LayerNorm,
            rotary,
            mlp: MlpKind::Plain {
                bias: true,
                relu_squared: false,
                gelu_new: true,
                relu: false,
            },
            parallel_residual: true,
            shared_norm: true,
            lm_head_bias: true,
            undropped_embeddings: true,
            ..BlockOptions::default()
        },
        ..llama::decoder(vocab, hidden, layers, heads, heads, intermediate)
    }
}

/// Phi-1.5 (microsoft/phi-1_5; Phi-1 has its shape) and Phi-2
/// (microsoft/phi-2: `resid_pdrop` 0.1), from their `config.json` files:
/// 32 of each head's features rotated (0.5 of 64, 0.4 of 80).
fn presets() -> Vec<ModelPreset> {
    let p = ModelPreset::new;
    let rotary = Rotary::Sliced { dims: 32 };
    let phi15 = decoder((51_200, 2048), (24, 32), 8192, rotary);
    let phi2 = TransformerSpec {
        hidden_dropout: 0.1,
        ..decoder((51_200, 2560), (32, 32), 10_240, rotary)
    };
    vec![
        p(
            "phi-1.5",
            "Phi-1.5 (1.4B)",
            Group::Phi,
            ModelSpec::Transformer(phi15),
        )
        .context(2048),
        p(
            "phi-2",
            "Phi-2 (2.7B)",
            Group::Phi,
            ModelSpec::Transformer(phi2),
        )
        .context(2048),
    ]
}
