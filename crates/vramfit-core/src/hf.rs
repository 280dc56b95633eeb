//! Import of Hugging Face `config.json` files for BERT, GPT-2, Llama,
//! Mistral and Qwen2, reading the same fields (and defaults) as the
//! corresponding `transformers` config classes.

use crate::error::Error;
use crate::models::{Arch, Head, ModelSpec, TransformerSpec};
use serde_json::{Map, Value};

/// The `model_type` values that can be imported.
pub const SUPPORTED: &str = "bert, gpt2, llama, mistral, qwen2";

/// A model imported from a `config.json`.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    /// A display name (`_name_or_path`, else the `model_type`).
    pub name: String,
    /// The architecture.
    pub spec: ModelSpec,
}

struct Fields<'a> {
    map: &'a Map<String, Value>,
    model_type: String,
}

impl Fields<'_> {
    fn opt_u64(&self, key: &'static str) -> Result<Option<u64>, Error> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| Error::InvalidModel(format!("config.json field '{key}' must be a non-negative whole number, got {v}"))),
        }
    }

    fn u64(&self, key: &'static str) -> Result<u64, Error> {
        self.opt_u64(key)?.ok_or_else(|| Error::MissingField { model_type: self.model_type.clone(), field: key })
    }

    fn f64_or(&self, key: &str, default: f64) -> f64 {
        self.map.get(key).and_then(Value::as_f64).unwrap_or(default)
    }

    fn bool_or(&self, key: &str, default: bool) -> bool {
        self.map.get(key).and_then(Value::as_bool).unwrap_or(default)
    }

    fn architectures(&self) -> Vec<String> {
        self.map
            .get("architectures")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    }
}

/// Parses a `config.json` text.
///
/// # Errors
/// [`Error::ConfigJson`] for malformed JSON, [`Error::UnsupportedModelType`]
/// naming the supported types, [`Error::MissingField`] naming the field, or
/// [`Error::InvalidModel`] for inconsistent dimensions.
///
/// # Example
/// ```
/// let json = r#"{"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257}"#;
/// let m = vramfit_core::hf::import(json).unwrap();
/// assert_eq!(m.spec.parameter_count().unwrap(), 124_439_808);
/// let err = vramfit_core::hf::import(r#"{"model_type": "t5"}"#).unwrap_err();
/// assert!(err.to_string().contains("llama"));
/// ```
pub fn import(text: &str) -> Result<Imported, Error> {
    let value: Value = serde_json::from_str(text).map_err(|e| Error::ConfigJson(e.to_string()))?;
    let map = value.as_object().ok_or_else(|| Error::ConfigJson("the top level must be a JSON object".into()))?;
    let model_type = match map.get("model_type") {
        Some(Value::String(s)) => s.clone(),
        _ => return Err(Error::MissingField { model_type: "unknown".into(), field: "model_type" }),
    };
    let f = Fields { map, model_type: model_type.clone() };
    if matches!(model_type.as_str(), "bert" | "gpt2") {
        heads_divide_hidden(&f)?;
    }
    let spec = match model_type.as_str() {
        "bert" => bert(&f)?,
        "gpt2" => gpt2(&f)?,
        "llama" | "mistral" | "qwen2" => llama(&f)?,
        _ => return Err(Error::UnsupportedModelType { model_type, supported: SUPPORTED }),
    };
    let spec = ModelSpec::Transformer(spec);
    spec.parameter_count()?;
    let name = map.get("_name_or_path").and_then(Value::as_str).filter(|s| !s.is_empty()).unwrap_or(&model_type).to_string();
    Ok(Imported { name, spec })
}

/// BERT's and GPT-2's attention split the hidden size evenly over the heads;
/// `transformers` raises a `ValueError` otherwise (`BertSelfAttention`,
/// `GPT2Attention`).
fn heads_divide_hidden(f: &Fields) -> Result<(), Error> {
    let (hidden_key, heads_key) = if f.model_type == "gpt2" { ("n_embd", "n_head") } else { ("hidden_size", "num_attention_heads") };
    let (hidden, heads) = (f.u64(hidden_key)?, f.u64(heads_key)?);
    if heads > 0 && !hidden.is_multiple_of(heads) {
        return Err(Error::InvalidModel(format!("{hidden_key} ({hidden}) must be a multiple of {heads_key} ({heads})")));
    }
    Ok(())
}

fn bert(f: &Fields) -> Result<TransformerSpec, Error> {
    let hidden = f.u64("hidden_size")?;
    let heads = f.u64("num_attention_heads")?;
    let classification = f.architectures().iter().any(|a| a.ends_with("ForSequenceClassification"));
    let head = if classification {
        let labels = match f.map.get("id2label").and_then(Value::as_object) {
            Some(m) if !m.is_empty() => m.len() as u64,
            _ => f.opt_u64("num_labels")?.unwrap_or(2),
        };
        Head::Classification { labels }
    } else {
        Head::Bare
    };
    Ok(TransformerSpec {
        arch: Arch::Bert,
        vocab: f.u64("vocab_size")?,
        hidden,
        layers: f.u64("num_hidden_layers")?,
        heads,
        kv_heads: heads,
        head_dim: hidden / heads.max(1),
        intermediate: f.u64("intermediate_size")?,
        max_positions: f.opt_u64("max_position_embeddings")?.unwrap_or(512),
        type_vocab: f.opt_u64("type_vocab_size")?.unwrap_or(2),
        tie_embeddings: false,
        qkv_bias: true,
        mlp_bias: true,
        hidden_dropout: f.f64_or("hidden_dropout_prob", 0.1),
        attention_dropout: f.f64_or("attention_probs_dropout_prob", 0.1),
        head,
        fused_gelu: false,
    })
}

fn gpt2(f: &Fields) -> Result<TransformerSpec, Error> {
    let hidden = f.u64("n_embd")?;
    let heads = f.u64("n_head")?;
    Ok(TransformerSpec {
        arch: Arch::Gpt2,
        vocab: f.u64("vocab_size")?,
        hidden,
        layers: f.u64("n_layer")?,
        heads,
        kv_heads: heads,
        head_dim: hidden / heads.max(1),
        intermediate: f.opt_u64("n_inner")?.unwrap_or(4 * hidden),
        max_positions: f.opt_u64("n_positions")?.unwrap_or(1024),
        type_vocab: 0,
        tie_embeddings: f.bool_or("tie_word_embeddings", true),
        qkv_bias: true,
        mlp_bias: true,
        hidden_dropout: f.f64_or("resid_pdrop", 0.1),
        attention_dropout: f.f64_or("attn_pdrop", 0.1),
        head: Head::CausalLm,
        fused_gelu: false,
    })
}

fn llama(f: &Fields) -> Result<TransformerSpec, Error> {
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
    })
}
