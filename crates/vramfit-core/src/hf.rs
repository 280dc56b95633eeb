//! Import of Hugging Face `config.json` files: each `model_type` is read by
//! the family that registers it ([`crate::models::FAMILIES`]: BERT, GPT-2,
//! Llama, Mistral, Qwen2, Qwen3, OLMo 2, Gemma 1–3, GPT-NeoX, Phi-3, T5 and ViT today), with the same fields (and defaults) as
//! the corresponding `transformers` config classes; any other `model_type`
//! with the standard decoder fields is read as a Llama-style decoder, naming
//! every assumption ([`Assumption`]); a multimodal config (a `text_config`)
//! is read as its language model when a family reads that sub-config's
//! type, saying that the encoders are not counted, and refused otherwise. And of vramfit's own
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

use crate::error::{Error, NotLlamaStyle};
use crate::models::hf_fields::{Fields, with_attribute_aliases};
use crate::models::registry::{import_of, supported_model_types};
use crate::models::{ModelSpec, TransformerSpec};
use serde_json::Value;

/// The `model_type` values that can be imported, comma-separated (every
/// family's in [`crate::models::FAMILIES`]).
pub fn supported() -> String {
    supported_model_types()
}

pub use crate::models::llama::Assumption;

/// A model imported from a `config.json`.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    /// A display name (`_name_or_path`, else the first of `architectures`,
    /// else the `model_type`).
    pub name: String,
    /// The architecture.
    pub spec: ModelSpec,
    /// What the import assumed: empty for a `model_type` a family reads;
    /// for any other, read as a Llama-style decoder, every assumption.
    pub assumptions: Vec<Assumption>,
}

/// `text` with Python's non-standard JSON constants outside strings
/// (`Infinity`, `-Infinity`, `NaN`, which `json.dumps` writes for float
/// fields, and so `transformers`' `to_json_file`: Granite 4.0's
/// `time_step_limit` is `[0.0, Infinity]`) quoted as strings: a field
/// vramfit does not read may hold one, and one it reads as a size is
/// refused by name, as any other string; borrowed unchanged where there
/// are none.
fn without_python_constants(text: &str) -> std::borrow::Cow<'_, str> {
    const CONSTANTS: [&str; 3] = ["-Infinity", "Infinity", "NaN"];
    if !CONSTANTS.iter().any(|c| text.contains(c)) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if !in_string && let Some(k) = CONSTANTS.iter().find(|k| rest.starts_with(**k)) {
            out.push('"');
            out.push_str(k);
            out.push('"');
            rest = rest.get(k.len()..).unwrap_or_default();
            continue;
        }
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        }
        out.push(c);
        rest = rest.get(c.len_utf8()..).unwrap_or_default();
    }
    std::borrow::Cow::Owned(out)
}

/// The sub-configs that hold a multimodal model's language model.
const NESTED: [&str; 3] = ["text_config", "language_config", "llm_config"];

/// Parses a `config.json` text.
///
/// # Errors
/// [`Error::ConfigJson`] for malformed JSON, [`Error::NestedConfig`] for a
/// multimodal config whose language model no family reads, [`Error::UnsupportedModelType`] naming why an unknown
/// type is not read as a Llama-style decoder and the supported types,
/// [`Error::MissingField`] naming the field, or [`Error::InvalidModel`] for
/// inconsistent dimensions.
///
/// # Example
/// ```
/// let json = r#"{"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257}"#;
/// let m = vramfit_core::hf::import(json).unwrap();
/// assert_eq!(m.spec.parameter_count().unwrap(), 124_439_808);
/// let err = vramfit_core::hf::import(r#"{"model_type": "rwkv"}"#).unwrap_err();
/// assert!(err.to_string().contains("hidden_size") && err.to_string().contains("llama"));
/// ```
pub fn import(text: &str) -> Result<Imported, Error> {
    let text = without_python_constants(text);
    let value: Value = serde_json::from_str(&text).map_err(|e| Error::ConfigJson(e.to_string()))?;
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
    let map = &with_attribute_aliases(&model_type, map);
    let f = Fields {
        map,
        model_type: model_type.clone(),
    };
    if let Some(part) = NESTED
        .into_iter()
        .find(|k| map.get(*k).is_some_and(Value::is_object))
    {
        return language_model(map, &f, model_type, part);
    }
    let (spec, assumptions) = match import_of(&model_type) {
        Some(reader) => ((reader.read)(&f)?, Vec::new()),
        None => {
            // Dimensions that contradict each other under the Llama-style
            // reading are named with the supported types: the type may
            // simply not be a Llama-style decoder.
            let read = crate::models::llama::read_as_llama(&f).and_then(|read| {
                let checked =
                    read.and_then(|(spec, said)| spec.parameter_count().map(|_| (spec, said)));
                match checked {
                    Err(Error::InvalidModel(why)) => Err(NotLlamaStyle::Contradictory(why)),
                    other => Ok(other),
                }
            });
            match read {
                Ok(read) => read?,
                Err(why) => {
                    return Err(Error::UnsupportedModelType {
                        model_type,
                        why,
                        supported: supported(),
                    });
                }
            }
        }
    };
    let spec = match spec {
        ModelSpec::Transformer(t) if t.context_limit == 0 => {
            ModelSpec::Transformer(TransformerSpec {
                context_limit: f.context_limit(),
                ..t
            })
        }
        other => other,
    };
    spec.parameter_count()?;
    // A name the user knows: the checkpoint's path, else its class
    // (`LlamaForCausalLM`), else the model type.
    let name = map
        .get("_name_or_path")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .or_else(|| f.architectures().into_iter().find(|a| !a.is_empty()))
        .unwrap_or(model_type);
    Ok(Imported {
        name,
        spec,
        assumptions,
    })
}

/// A multimodal config's language model: its sub-config `part` when a
/// family reads that sub-config's `model_type` (Gemma 3 and 4, Qwen3.5,
/// Kimi K2.5, LLaVA over Llama...), named as the outer config names the
/// model, with the assumption that says the encoders are not counted;
/// otherwise [`Error::NestedConfig`].
fn language_model(
    map: &serde_json::Map<String, Value>,
    f: &Fields<'_>,
    model_type: String,
    part: &'static str,
) -> Result<Imported, Error> {
    let inner = map.get(part).and_then(Value::as_object);
    let inner_type = inner
        .and_then(|m| m.get("model_type"))
        .and_then(Value::as_str)
        .filter(|t| import_of(t).is_some());
    let (Some(inner), Some(inner_type)) = (inner, inner_type) else {
        return Err(Error::NestedConfig { model_type, part });
    };
    // The wrapper ties (or unties) the language model's head by its own
    // `tie_word_embeddings` (`Qwen3VLForConditionalGeneration` with a
    // top-level `true` and a text config without it: tied).
    let mut inner = inner.clone();
    if let Some(tie) = map.get("tie_word_embeddings").filter(|v| v.is_boolean()) {
        inner.insert("tie_word_embeddings".into(), tie.clone());
    }
    let text = Value::Object(inner).to_string();
    let mut imported = import(&text)?;
    let encoder = match &mut imported.spec {
        ModelSpec::Transformer(t) => {
            let e = crate::models::encoder::read(&model_type, map, t.hidden)?;
            t.encoder = e.clone().map(Box::new);
            e
        }
        _ => None,
    };
    let text_model_type = inner_type.to_string();
    imported.assumptions.insert(
        0,
        match encoder {
            Some(e) => Assumption::EncodersFrozen {
                model_type,
                part,
                text_model_type,
                params: e.params,
                kind: e.kind,
            },
            None => Assumption::LanguageModelOnly {
                model_type,
                part,
                text_model_type,
            },
        },
    );
    if let Some(name) = map
        .get("_name_or_path")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .or_else(|| f.architectures().into_iter().find(|a| !a.is_empty()))
    {
        imported.name = name;
    }
    Ok(imported)
}
