//! Import of Hugging Face `config.json` files for BERT, GPT-2, Llama,
//! Mistral and Qwen2, reading the same fields (and defaults) as the
//! corresponding `transformers` config classes; and of vramfit's own
//! descriptions, in the same shape, of the models a `config.json` cannot
//! name: an MLP (`nn.Sequential` of `Linear` layers, `model_type`
//! `vramfit_mlp`) and a torchvision ResNet (`vramfit_resnet`).
//!
//! ```json
//! {"model_type": "vramfit_mlp", "input_size": 784, "hidden_sizes": [512, 512], "hidden_act": "relu", "num_labels": 10}
//! {"model_type": "vramfit_resnet", "depths": [3, 4, 6, 3], "layer_type": "bottleneck", "num_labels": 1000}
//! ```
//!
//! `hidden_act` is `relu` (the default), `gelu` or `none`; `layer_type` is
//! `bottleneck` (ResNet-50 and deeper, the default) or `basic` (ResNet-18/34),
//! the names and defaults `transformers`' `ResNetConfig` uses.

use crate::error::Error;
use crate::models::{
    Arch, Head, MlpActivation, MlpLayer, MlpSpec, ModelSpec, ResNetSpec, TransformerSpec,
};
use serde_json::{Map, Value};

/// The `model_type` values that can be imported.
pub const SUPPORTED: &str = "bert, gpt2, llama, mistral, qwen2, vramfit_mlp, vramfit_resnet";

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
            Some(v) => v.as_u64().map(Some).ok_or_else(|| {
                Error::InvalidModel(format!(
                    "config.json field '{key}' must be a non-negative whole number, got {v}"
                ))
            }),
        }
    }

    fn u64(&self, key: &'static str) -> Result<u64, Error> {
        self.opt_u64(key)?.ok_or_else(|| Error::MissingField {
            model_type: self.model_type.clone(),
            field: key,
        })
    }

    fn f64_or(&self, key: &str, default: f64) -> f64 {
        self.map.get(key).and_then(Value::as_f64).unwrap_or(default)
    }

    fn str_or<'s>(&'s self, key: &'static str, default: &'s str) -> Result<&'s str, Error> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::String(s)) => Ok(s),
            Some(v) => Err(Error::InvalidModel(format!(
                "config.json field '{key}' must be a string, got {v}"
            ))),
        }
    }

    /// A list of whole numbers (at most [`crate::models::MAX_LAYERS`] of them).
    fn u64_list(&self, key: &'static str) -> Result<Vec<u64>, Error> {
        let bad = || {
            Error::InvalidModel(format!(
                "config.json field '{key}' must be a list of non-negative whole numbers"
            ))
        };
        let list = self.map.get(key).ok_or_else(|| Error::MissingField {
            model_type: self.model_type.clone(),
            field: key,
        })?;
        let items = list.as_array().ok_or_else(bad)?;
        if items.len() as u64 > crate::models::MAX_LAYERS {
            return Err(Error::InvalidModel(format!(
                "config.json field '{key}' lists {} entries, more than {}",
                items.len(),
                crate::models::MAX_LAYERS
            )));
        }
        items.iter().map(|v| v.as_u64().ok_or_else(bad)).collect()
    }

    fn bool_or(&self, key: &str, default: bool) -> bool {
        self.map
            .get(key)
            .and_then(Value::as_bool)
            .unwrap_or(default)
    }

    fn architectures(&self) -> Vec<String> {
        self.map
            .get("architectures")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
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
    let map = value
        .as_object()
        .ok_or_else(|| Error::ConfigJson("the top level must be a JSON object".into()))?;
    let model_type = match map.get("model_type") {
        Some(Value::String(s)) => s.clone(),
        _ => {
            return Err(Error::MissingField {
                model_type: "unknown".into(),
                field: "model_type",
            });
        }
    };
    let f = Fields {
        map,
        model_type: model_type.clone(),
    };
    if matches!(model_type.as_str(), "bert" | "gpt2") {
        heads_divide_hidden(&f)?;
    }
    let spec = match model_type.as_str() {
        "bert" => ModelSpec::Transformer(bert(&f)?),
        "gpt2" => ModelSpec::Transformer(gpt2(&f)?),
        "llama" | "mistral" | "qwen2" => ModelSpec::Transformer(llama(&f)?),
        "vramfit_mlp" => mlp(&f)?,
        "vramfit_resnet" => resnet(&f)?,
        _ => {
            return Err(Error::UnsupportedModelType {
                model_type,
                supported: SUPPORTED,
            });
        }
    };
    spec.parameter_count()?;
    let name = map
        .get("_name_or_path")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or(&model_type)
        .to_string();
    Ok(Imported { name, spec })
}

/// vramfit's MLP: `input_size` features through `Linear` layers of
/// `hidden_sizes`, each followed by `hidden_act`, then a `Linear` to
/// `num_labels` classes and a cross-entropy loss.
fn mlp(f: &Fields) -> Result<ModelSpec, Error> {
    let activation = match f.str_or("hidden_act", "relu")? {
        "relu" => MlpActivation::Relu,
        "gelu" => MlpActivation::Gelu,
        "none" => MlpActivation::None,
        other => {
            return Err(Error::InvalidModel(format!(
                "hidden_act must be 'relu', 'gelu' or 'none', got '{other}'"
            )));
        }
    };
    let layers = f
        .u64_list("hidden_sizes")?
        .into_iter()
        .map(|out| MlpLayer { out, activation })
        .collect();
    Ok(ModelSpec::Mlp(MlpSpec {
        input: f.u64("input_size")?,
        layers,
        block_size: 1,
        classes: f.u64("num_labels")?,
    }))
}

/// vramfit's torchvision ResNet: blocks per stage (`depths`, four stages),
/// the block type and the classes (1000, ImageNet's, by default).
fn resnet(f: &Fields) -> Result<ModelSpec, Error> {
    let depths = f.u64_list("depths")?;
    let stages: [u64; 4] = depths.as_slice().try_into().map_err(|_| {
        Error::InvalidModel(format!(
            "depths must list the blocks of 4 stages (ResNet-50: [3, 4, 6, 3]), got {} numbers",
            depths.len()
        ))
    })?;
    // torchvision's `_make_layer` always builds a stage's first block.
    if stages.contains(&0) {
        return Err(Error::InvalidModel(
            "every ResNet stage has at least one block (depths must be 1 or more)".into(),
        ));
    }
    let bottleneck = match f.str_or("layer_type", "bottleneck")? {
        "bottleneck" => true,
        "basic" => false,
        other => {
            return Err(Error::InvalidModel(format!(
                "layer_type must be 'bottleneck' or 'basic', got '{other}'"
            )));
        }
    };
    Ok(ModelSpec::ResNet(ResNetSpec {
        stages,
        bottleneck,
        classes: f.opt_u64("num_labels")?.unwrap_or(1000),
    }))
}

/// BERT's and GPT-2's attention split the hidden size evenly over the heads;
/// `transformers` raises a `ValueError` otherwise (`BertSelfAttention`,
/// `GPT2Attention`).
fn heads_divide_hidden(f: &Fields) -> Result<(), Error> {
    let (hidden_key, heads_key) = if f.model_type == "gpt2" {
        ("n_embd", "n_head")
    } else {
        ("hidden_size", "num_attention_heads")
    };
    let (hidden, heads) = (f.u64(hidden_key)?, f.u64(heads_key)?);
    if heads > 0 && !hidden.is_multiple_of(heads) {
        return Err(Error::InvalidModel(format!(
            "{hidden_key} ({hidden}) must be a multiple of {heads_key} ({heads})"
        )));
    }
    Ok(())
}

fn bert(f: &Fields) -> Result<TransformerSpec, Error> {
    let hidden = f.u64("hidden_size")?;
    let heads = f.u64("num_attention_heads")?;
    let classification = f
        .architectures()
        .iter()
        .any(|a| a.ends_with("ForSequenceClassification"));
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
