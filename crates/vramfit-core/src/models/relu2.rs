//! Llama-layout decoders whose MLP is not gated, `down_proj(relu2(up_proj(x)))`,
//! as `transformers` builds them: Arcee's AFM (`models/arcee/modeling_arcee.py`,
//! Llama's block otherwise) and NVIDIA's Nemotron and Minitron
//! (`models/nemotron/modeling_nemotron.py`: LayerNorm with a bias and a
//! `weight + 1` scale, [`NormKind::LayerNorm1P`], and half of each head
//! rotated). Lowered by the shared transformer ([`super::transformer`]).
//! Import only: no presets.

use super::family::{Family, Import, no_presets};
use super::hf_fields::Fields;
use super::{BlockOptions, MlpKind, ModelSpec, NormKind, Rotary, TransformerSpec, llama};
use crate::error::Error;

/// Arcee's AFM.
pub const ARCEE: Family = Family {
    imports: &[Import {
        model_type: "arcee",
        read: read_arcee,
    }],
    presets: no_presets,
};

/// NVIDIA's Nemotron (Nemotron-4, Minitron).
pub const NEMOTRON: Family = Family {
    imports: &[Import {
        model_type: "nemotron",
        read: read_nemotron,
    }],
    presets: no_presets,
};

/// Reads an `arcee` config with `ArceeConfig`'s defaults (AFM-4.5B's
/// shape): biases on q, k, v and o with `attention_bias`, on the MLP with
/// `mlp_bias`.
fn read_arcee(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let t = decoder(
        f,
        (or("vocab_size", 32_000)?, or("hidden_size", 2560)?),
        (or("num_hidden_layers", 32)?, f.heads_or(32)?),
        or("intermediate_size", 18_432)?,
    )?;
    Ok(ModelSpec::Transformer(t))
}

/// Reads a `nemotron` config with `NemotronConfig`'s defaults
/// (Nemotron-15B's shape): LayerNorm1P, half of each head rotated
/// (`partial_rotary_factor`, 0.5 unless the rope parameters say otherwise).
fn read_nemotron(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let mut t = decoder(
        f,
        (or("vocab_size", 256_000)?, or("hidden_size", 6144)?),
        (or("num_hidden_layers", 32)?, f.heads_or(48)?),
        or("intermediate_size", 24_576)?,
    )?;
    let factor = f
        .rope_f64("partial_rotary_factor")
        .unwrap_or_else(|| f.f64_or("partial_rotary_factor", 0.5));
    t.block.norm_kind = NormKind::LayerNorm1P;
    t.block.rotary = Rotary::partial(t.head_dim, factor)?;
    Ok(ModelSpec::Transformer(t))
}

/// The Llama-layout decoder both read: `head_dim` (else hidden / heads),
/// `num_key_value_heads` (else one per head), `attention_bias` on q, k, v
/// and o, `mlp_bias` on both MLP projections, `hidden_act` (`relu2` unless
/// it says otherwise), an untied head unless `tie_word_embeddings`.
fn decoder(
    f: &Fields<'_>,
    (vocab, hidden): (u64, u64),
    (layers, heads): (u64, u64),
    intermediate: u64,
) -> Result<TransformerSpec, Error> {
    let kv_heads = f.opt_u64("num_key_value_heads")?.unwrap_or(heads);
    let head_dim = f.opt_u64("head_dim")?.unwrap_or(hidden / heads);
    let attention_bias = f.bool_or("attention_bias", false);
    let relu_squared = f.str_or("hidden_act", "relu2")? == "relu2";
    Ok(TransformerSpec {
        head_dim,
        tie_embeddings: f.bool_or("tie_word_embeddings", false),
        qkv_bias: attention_bias,
        // In the Llama layout `mlp_bias` is the output projection's.
        mlp_bias: attention_bias,
        attention_dropout: f.f64_or("attention_dropout", 0.0),
        block: BlockOptions {
            mlp: MlpKind::Plain {
                bias: f.bool_or("mlp_bias", false),
                relu_squared,
                gelu_new: false,
                relu: false,
            },
            ..BlockOptions::default()
        },
        ..llama::decoder(vocab, hidden, layers, heads, kv_heads, intermediate)
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)] // Tests fail loudly by design.
    use super::*;

    fn spec(json: &str) -> TransformerSpec {
        match crate::hf::import(json).unwrap().spec {
            ModelSpec::Transformer(t) => t,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn arcee_and_nemotron_read_an_ungated_relu2_mlp() {
        let dims = r#""vocab_size":1000,"hidden_size":256,"intermediate_size":1024,"num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":2"#;
        let arcee = spec(&format!(r#"{{"model_type":"arcee",{dims}}}"#));
        assert_eq!(
            arcee.block.mlp,
            MlpKind::Plain {
                bias: false,
                relu_squared: true,
                gelu_new: false,
                relu: false
            }
        );
        assert_eq!(
            (arcee.block.norm_kind, arcee.block.rotary),
            (NormKind::Rms, Rotary::Whole)
        );
        let nemotron = spec(&format!(
            r#"{{"model_type":"nemotron",{dims},"mlp_bias":true,"hidden_act":"gelu"}}"#
        ));
        assert_eq!(
            nemotron.block.mlp,
            MlpKind::Plain {
                bias: true,
                relu_squared: false,
                gelu_new: false,
                relu: false
            }
        );
        // Half of each 32-wide head rotates; LayerNorm1P with its bias.
        assert_eq!(
            (nemotron.block.norm_kind, nemotron.block.rotary),
            (NormKind::LayerNorm1P, Rotary::Sliced { dims: 16 })
        );
        // q, k, v, o; up and down with their biases; two norms of weight
        // and bias; no gate.
        let per_layer = 256 * 256 * 2 + 2 * 256 * 64 + 2 * 256 * 1024 + (1024 + 256) + 2 * 2 * 256;
        assert_eq!(
            ModelSpec::Transformer(nemotron).parameter_count().unwrap(),
            2 * 1000 * 256 + 2 * per_layer + 2 * 256
        );
    }
}
