//! Qwen3's dense decoders as `transformers` builds them
//! (`models/qwen3/modeling_qwen3.py`): Llama's layout (pre-RMSNorm, rotary,
//! GQA, SwiGLU) with an RMSNorm over each head of the queries and keys
//! before the rotary embedding, and an explicit `head_dim` (128, more than
//! `hidden_size / num_attention_heads` in the small models). Lowered by the
//! shared transformer ([`super::transformer`]).
//!
//! Sliding-window layers (`use_sliding_window`, off in every released
//! Qwen3) do not change what training keeps and are not modelled.

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::{BlockOptions, ModelSpec, QkNorm, TransformerSpec, llama};
use crate::error::Error;
use serde_json::Value;

/// The Qwen3 family.
pub const FAMILY: Family = Family {
    imports: &[
        Import {
            model_type: "qwen3",
            read,
        },
        // Qwen3-VL's language model (`text_config`): Qwen3's decoder, its
        // interleaved multimodal rotary sections only splitting `cos` and
        // `sin` (the visual features it adds to early layers come with images).
        Import {
            model_type: "qwen3_vl_text",
            read,
        },
    ],
    presets,
};

/// Reads a `qwen3` config with `Qwen3Config`'s defaults for absent fields
/// (`models/qwen3/configuration_qwen3.py`).
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let heads = or("num_attention_heads", 32)?;
    // Absent: the dataclass default (32); null: as many as the query heads.
    let kv_heads = match f.map.get("num_key_value_heads") {
        None => 32,
        Some(Value::Null) => heads,
        Some(_) => f.u64("num_key_value_heads")?,
    };
    Ok(ModelSpec::Transformer(TransformerSpec {
        kv_heads,
        head_dim: or("head_dim", 128)?,
        tie_embeddings: f.bool_or("tie_word_embeddings", false),
        // `attention_bias` biases o too (the Llama layout's `mlp_bias`).
        qkv_bias: f.bool_or("attention_bias", false),
        mlp_bias: f.bool_or("attention_bias", false),
        attention_dropout: f.f64_or("attention_dropout", 0.0),
        ..decoder(
            or("vocab_size", 151_936)?,
            or("hidden_size", 4096)?,
            or("num_hidden_layers", 32)?,
            heads,
            or("intermediate_size", 22_016)?,
        )
    }))
}

/// A Qwen3 decoder: Llama's with 128-dimensional heads, 8 key/value heads
/// and q/k norms.
fn decoder(vocab: u64, hidden: u64, layers: u64, heads: u64, intermediate: u64) -> TransformerSpec {
    TransformerSpec {
        head_dim: 128,
        block: BlockOptions {
            qk_norm: QkNorm::PerHead,
            ..BlockOptions::default()
        },
        ..llama::decoder(vocab, hidden, layers, heads, 8, intermediate)
    }
}

/// The dense Qwen3 models, from their `config.json` files on the Hugging
/// Face Hub (`Qwen/Qwen3-0.6B` … `Qwen/Qwen3-32B`): vocabulary 151,936; the
/// three smallest tie the LM head to the embedding.
fn presets() -> Vec<ModelPreset> {
    let p = |id, name, tie, spec: TransformerSpec| {
        let spec = TransformerSpec {
            tie_embeddings: tie,
            ..spec
        };
        ModelPreset::new(id, name, Group::Qwen, ModelSpec::Transformer(spec)).context(40_960)
    };
    let v = 151_936;
    vec![
        p(
            "qwen3-0.6b",
            "Qwen3-0.6B",
            true,
            decoder(v, 1024, 28, 16, 3072),
        ),
        p(
            "qwen3-1.7b",
            "Qwen3-1.7B",
            true,
            decoder(v, 2048, 28, 16, 6144),
        ),
        p("qwen3-4b", "Qwen3-4B", true, decoder(v, 2560, 36, 32, 9728)),
        p(
            "qwen3-8b",
            "Qwen3-8B",
            false,
            decoder(v, 4096, 36, 32, 12_288),
        ),
        p(
            "qwen3-14b",
            "Qwen3-14B",
            false,
            decoder(v, 5120, 40, 40, 17_408),
        ),
        p(
            "qwen3-32b",
            "Qwen3-32B",
            false,
            decoder(v, 5120, 64, 64, 25_600),
        ),
    ]
}
