//! A model described by its dimensions: the form's values turned into the
//! `config.json` a Hugging Face model of that shape would have, which the
//! import box then reads (so a custom model is validated, estimated and
//! shared exactly like a pasted one).

use crate::fields::{FieldError, parse_count};
use serde_json::{Value, json};

/// The architectures a custom model can have.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Family {
    /// A GPT-2-style decoder (learned positions, GELU MLP, tied embeddings).
    #[default]
    Gpt2,
    /// A Llama-style decoder (RMSNorm, SwiGLU MLP, grouped-query attention).
    Llama,
    /// A BERT-style encoder with a classification head.
    Bert,
}

impl Family {
    /// Every family, in the order the form offers them.
    pub const ALL: [Family; 3] = [Family::Gpt2, Family::Llama, Family::Bert];

    /// A stable id (the select's value).
    pub fn id(self) -> &'static str {
        match self {
            Family::Gpt2 => "gpt2",
            Family::Llama => "llama",
            Family::Bert => "bert",
        }
    }

    /// The family for an id.
    pub fn parse(id: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.id() == id)
    }

    /// Whether the family has separate key/value heads (grouped-query attention).
    pub fn has_kv_heads(self) -> bool {
        self == Family::Llama
    }
}

/// The custom model's fields, as typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dims {
    /// Architecture.
    pub family: Family,
    /// Transformer blocks.
    pub layers: String,
    /// Hidden size.
    pub hidden: String,
    /// Attention heads.
    pub heads: String,
    /// Key/value heads (Llama only).
    pub kv_heads: String,
    /// MLP width.
    pub intermediate: String,
    /// Vocabulary.
    pub vocab: String,
}

impl Default for Dims {
    /// GPT-2 small's shape, a familiar starting point.
    fn default() -> Dims {
        Dims {
            family: Family::Gpt2,
            layers: "12".into(),
            hidden: "768".into(),
            heads: "12".into(),
            kv_heads: "12".into(),
            intermediate: "3072".into(),
            vocab: "50257".into(),
        }
    }
}

/// Which field a problem is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DimField {
    /// Transformer blocks.
    Layers,
    /// Hidden size.
    Hidden,
    /// Attention heads.
    Heads,
    /// Key/value heads.
    KvHeads,
    /// MLP width.
    Intermediate,
    /// Vocabulary.
    Vocab,
}

/// Why the dimensions cannot make a model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DimError {
    /// A field is empty, not a whole number or out of range.
    Field(DimField, FieldError),
    /// The hidden size is not a multiple of the heads.
    HeadsDoNotDivide,
    /// The heads are not a multiple of the key/value heads.
    KvHeadsDoNotDivide,
}

impl Dims {
    /// The `config.json` for these dimensions.
    ///
    /// # Errors
    /// The first field that is not a usable count, or heads that do not divide.
    pub fn config_json(&self) -> Result<String, DimError> {
        // Any count the micro-batch field accepts (1 to 2^24); the importer
        // and the estimator apply the model limits on top.
        let count = |f: DimField, s: &str| parse_count(crate::fields::Field::Batch, s).map_err(|e| DimError::Field(f, e));
        let layers = count(DimField::Layers, &self.layers)?;
        let hidden = count(DimField::Hidden, &self.hidden)?;
        let heads = count(DimField::Heads, &self.heads)?;
        let intermediate = count(DimField::Intermediate, &self.intermediate)?;
        let vocab = count(DimField::Vocab, &self.vocab)?;
        if !hidden.is_multiple_of(heads) {
            return Err(DimError::HeadsDoNotDivide);
        }
        let name = format!("custom-{}-{layers}x{hidden}", self.family.id());
        let value: Value = match self.family {
            Family::Gpt2 => json!({
                "_name_or_path": name, "model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
                "n_layer": layers, "n_embd": hidden, "n_head": heads, "n_inner": intermediate, "vocab_size": vocab,
            }),
            Family::Llama => {
                let kv = count(DimField::KvHeads, &self.kv_heads)?;
                if !heads.is_multiple_of(kv) {
                    return Err(DimError::KvHeadsDoNotDivide);
                }
                json!({
                    "_name_or_path": name, "model_type": "llama", "architectures": ["LlamaForCausalLM"],
                    "num_hidden_layers": layers, "hidden_size": hidden, "num_attention_heads": heads,
                    "num_key_value_heads": kv, "intermediate_size": intermediate, "vocab_size": vocab,
                })
            }
            Family::Bert => json!({
                "_name_or_path": name, "model_type": "bert", "architectures": ["BertForSequenceClassification"],
                "num_hidden_layers": layers, "hidden_size": hidden, "num_attention_heads": heads,
                "intermediate_size": intermediate, "vocab_size": vocab,
            }),
        };
        Ok(serde_json::to_string_pretty(&value).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vramfit_core::{TrainConfig, model_preset};

    #[test]
    fn the_default_dimensions_import_as_gpt2_small() {
        let json = Dims::default().config_json().unwrap();
        let imported = vramfit_core::hf::import(&json).unwrap();
        let gpt2 = model_preset("gpt2").unwrap().spec;
        let cfg = TrainConfig::default();
        assert_eq!(imported.spec.lower(&cfg).unwrap().parameter_count(), gpt2.lower(&cfg).unwrap().parameter_count());
        assert_eq!(imported.name, "custom-gpt2-12x768");
    }

    #[test]
    fn every_family_imports_and_bad_dimensions_say_which() {
        for family in Family::ALL {
            let dims = Dims { family, kv_heads: "4".into(), ..Dims::default() };
            let json = dims.config_json().unwrap();
            assert!(vramfit_core::hf::import(&json).is_ok(), "{family:?}: {json}");
        }
        let bad = Dims { heads: "7".into(), ..Dims::default() };
        assert_eq!(bad.config_json(), Err(DimError::HeadsDoNotDivide));
        let bad = Dims { family: Family::Llama, kv_heads: "5".into(), ..Dims::default() };
        assert_eq!(bad.config_json(), Err(DimError::KvHeadsDoNotDivide));
        let bad = Dims { layers: "abc".into(), ..Dims::default() };
        assert!(matches!(bad.config_json(), Err(DimError::Field(DimField::Layers, FieldError::NotWhole))));
    }
}
