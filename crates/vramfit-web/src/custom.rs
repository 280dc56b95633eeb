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
    /// A torchvision ResNet (blocks per stage, block type, classes).
    ResNet,
    /// An MLP classifier (`Linear` layers with an activation).
    Mlp,
}

impl Family {
    /// Every family, in the order the form offers them.
    pub const ALL: [Family; 5] = [
        Family::Gpt2,
        Family::Llama,
        Family::Bert,
        Family::ResNet,
        Family::Mlp,
    ];

    /// A stable id (the select's value).
    pub fn id(self) -> &'static str {
        match self {
            Family::Gpt2 => "gpt2",
            Family::Llama => "llama",
            Family::Bert => "bert",
            Family::ResNet => "resnet",
            Family::Mlp => "mlp",
        }
    }

    /// The classes the form starts with for this family.
    pub fn default_classes(self) -> &'static str {
        if self == Family::Mlp { "10" } else { "1000" }
    }

    /// Whether the family is a transformer (layers, hidden size, heads, MLP width, vocabulary).
    pub fn is_transformer(self) -> bool {
        matches!(self, Family::Gpt2 | Family::Llama | Family::Bert)
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
    /// ResNet: blocks per stage, four numbers separated by commas.
    pub depths: String,
    /// ResNet: bottleneck blocks (ResNet-50 and deeper) rather than basic ones.
    pub bottleneck: bool,
    /// MLP: input features.
    pub input: String,
    /// MLP: hidden layer widths, separated by commas.
    pub widths: String,
    /// MLP: the activation after each hidden layer.
    pub activation: Activation,
    /// ResNet and MLP: output classes.
    pub classes: String,
}

/// The activation of a custom MLP's hidden layers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Activation {
    /// `nn.ReLU`.
    #[default]
    Relu,
    /// `nn.GELU`.
    Gelu,
    /// None (a stack of linear layers).
    None,
}

impl Activation {
    /// Every activation, in the order the form offers them.
    pub const ALL: [Activation; 3] = [Activation::Relu, Activation::Gelu, Activation::None];

    /// The `hidden_act` value (and the select's value).
    pub fn id(self) -> &'static str {
        match self {
            Activation::Relu => "relu",
            Activation::Gelu => "gelu",
            Activation::None => "none",
        }
    }

    /// The activation for an id.
    pub fn parse(id: &str) -> Option<Activation> {
        Activation::ALL.into_iter().find(|a| a.id() == id)
    }
}

impl Default for Dims {
    /// GPT-2 small's shape, a familiar starting point; ResNet-50's stages
    /// and an MNIST-sized MLP for the other families.
    fn default() -> Dims {
        Dims {
            family: Family::Gpt2,
            layers: "12".into(),
            hidden: "768".into(),
            heads: "12".into(),
            kv_heads: "12".into(),
            intermediate: "3072".into(),
            vocab: "50257".into(),
            depths: "3, 4, 6, 3".into(),
            bottleneck: true,
            input: "784".into(),
            widths: "512, 512".into(),
            activation: Activation::Relu,
            classes: "1000".into(),
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
    /// ResNet blocks per stage (a list).
    Depths,
    /// MLP input features.
    Input,
    /// MLP hidden widths (a list).
    Widths,
    /// Output classes.
    Classes,
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
    /// A list field has an entry that is not a usable count.
    List(DimField),
    /// The ResNet's blocks per stage are not four numbers.
    Stages,
}

impl Dims {
    /// The same dimensions for `family`; classes the user left at the old
    /// family's default take the new one's (1000 for a ResNet, as ImageNet;
    /// 10 for an MLP, as MNIST, whose 784 features are the default input).
    pub fn with_family(&self, family: Family) -> Dims {
        let classes = if self.classes == self.family.default_classes() {
            family.default_classes().to_string()
        } else {
            self.classes.clone()
        };
        Dims {
            family,
            classes,
            ..self.clone()
        }
    }

    /// The `config.json` for these dimensions (for a ResNet or an MLP,
    /// vramfit's own description in that shape; see `vramfit_core::hf`).
    ///
    /// # Errors
    /// The first field that is not a usable count or list, heads that do not
    /// divide, or a ResNet without four stages.
    pub fn config_json(&self) -> Result<String, DimError> {
        let value = match self.family {
            Family::Gpt2 | Family::Llama | Family::Bert => self.transformer()?,
            Family::ResNet => self.resnet()?,
            Family::Mlp => self.mlp()?,
        };
        Ok(serde_json::to_string_pretty(&value).unwrap_or_default())
    }

    fn transformer(&self) -> Result<Value, DimError> {
        let layers = count(DimField::Layers, &self.layers)?;
        let hidden = count(DimField::Hidden, &self.hidden)?;
        let heads = count(DimField::Heads, &self.heads)?;
        let intermediate = count(DimField::Intermediate, &self.intermediate)?;
        let vocab = count(DimField::Vocab, &self.vocab)?;
        if !hidden.is_multiple_of(heads) {
            return Err(DimError::HeadsDoNotDivide);
        }
        let name = format!("custom-{}-{layers}x{hidden}", self.family.id());
        Ok(match self.family {
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
            _ => json!({
                "_name_or_path": name, "model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
                "n_layer": layers, "n_embd": hidden, "n_head": heads, "n_inner": intermediate, "vocab_size": vocab,
            }),
        })
    }

    /// vramfit's ResNet description (see `vramfit_core::hf`).
    fn resnet(&self) -> Result<Value, DimError> {
        let depths = list(DimField::Depths, &self.depths)?;
        if depths.len() != 4 {
            return Err(DimError::Stages);
        }
        let classes = count(DimField::Classes, &self.classes)?;
        Ok(json!({
            "_name_or_path": format!("custom-resnet-{}", joined(&depths)), "model_type": "vramfit_resnet",
            "depths": depths, "layer_type": if self.bottleneck { "bottleneck" } else { "basic" }, "num_labels": classes,
        }))
    }

    /// vramfit's MLP description (see `vramfit_core::hf`).
    fn mlp(&self) -> Result<Value, DimError> {
        let input = count(DimField::Input, &self.input)?;
        let widths = list(DimField::Widths, &self.widths)?;
        let classes = count(DimField::Classes, &self.classes)?;
        let sizes: Vec<u64> = std::iter::once(input)
            .chain(widths.iter().copied())
            .chain([classes])
            .collect();
        Ok(json!({
            "_name_or_path": format!("custom-mlp-{}", joined(&sizes)), "model_type": "vramfit_mlp",
            "input_size": input, "hidden_sizes": widths, "hidden_act": self.activation.id(), "num_labels": classes,
        }))
    }
}

/// A field as a count: any the micro-batch field accepts (1 to 2^24); the
/// importer and the estimator apply the model limits on top.
fn count(f: DimField, s: &str) -> Result<u64, DimError> {
    parse_count(crate::fields::Field::Batch, s).map_err(|e| DimError::Field(f, e))
}

/// A field as counts separated by commas (empty entries skipped).
fn list(f: DimField, s: &str) -> Result<Vec<u64>, DimError> {
    s.split(',')
        .filter(|item| !item.trim().is_empty())
        .map(|item| parse_count(crate::fields::Field::Batch, item).map_err(|_| DimError::List(f)))
        .collect()
}

/// `3-4-6-3`.
fn joined(sizes: &[u64]) -> String {
    sizes
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join("-")
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
        assert_eq!(
            imported.spec.lower(&cfg).unwrap().parameter_count(),
            gpt2.lower(&cfg).unwrap().parameter_count()
        );
        assert_eq!(imported.name, "custom-gpt2-12x768");
    }

    #[test]
    fn every_family_imports_and_bad_dimensions_say_which() {
        for family in Family::ALL {
            let dims = Dims {
                family,
                kv_heads: "4".into(),
                ..Dims::default()
            };
            let json = dims.config_json().unwrap();
            assert!(
                vramfit_core::hf::import(&json).is_ok(),
                "{family:?}: {json}"
            );
        }
        let bad = Dims {
            heads: "7".into(),
            ..Dims::default()
        };
        assert_eq!(bad.config_json(), Err(DimError::HeadsDoNotDivide));
        let bad = Dims {
            family: Family::Llama,
            kv_heads: "5".into(),
            ..Dims::default()
        };
        assert_eq!(bad.config_json(), Err(DimError::KvHeadsDoNotDivide));
        let bad = Dims {
            layers: "abc".into(),
            ..Dims::default()
        };
        assert!(matches!(
            bad.config_json(),
            Err(DimError::Field(DimField::Layers, FieldError::NotWhole))
        ));
    }

    #[test]
    fn a_custom_resnet_and_mlp_import_as_the_models_they_describe() {
        let cfg = TrainConfig::default();
        let params = |json: &str| {
            vramfit_core::hf::import(json)
                .unwrap()
                .spec
                .lower(&cfg)
                .unwrap()
                .parameter_count()
        };
        let resnet = Dims {
            family: Family::ResNet,
            ..Dims::default()
        }
        .config_json()
        .unwrap();
        assert_eq!(
            params(&resnet),
            model_preset("resnet50")
                .unwrap()
                .spec
                .lower(&cfg)
                .unwrap()
                .parameter_count()
        );
        assert_eq!(
            vramfit_core::hf::import(&resnet).unwrap().name,
            "custom-resnet-3-4-6-3"
        );
        let basic = Dims {
            family: Family::ResNet,
            depths: "2,2,2,2".into(),
            bottleneck: false,
            ..Dims::default()
        };
        assert_eq!(
            params(&basic.config_json().unwrap()),
            11_689_512,
            "torchvision resnet18"
        );
        let mlp = Dims::default()
            .with_family(Family::Mlp)
            .config_json()
            .unwrap();
        assert_eq!(params(&mlp), 669_706, "784 → 512 → 512 → 10");
        assert_eq!(
            vramfit_core::hf::import(&mlp).unwrap().name,
            "custom-mlp-784-512-512-10"
        );
        let gelu = Dims {
            family: Family::Mlp,
            activation: Activation::Gelu,
            widths: " ".into(),
            ..Dims::default()
        };
        assert!(
            gelu.config_json()
                .unwrap()
                .contains("\"hidden_act\": \"gelu\""),
            "no hidden layers is a linear classifier"
        );
        // Classes the user typed stay when the family changes.
        let typed = Dims {
            classes: "37".into(),
            ..Dims::default()
        }
        .with_family(Family::Mlp);
        assert_eq!(typed.with_family(Family::ResNet).classes, "37");
        assert_eq!(
            Dims::default()
                .with_family(Family::Mlp)
                .with_family(Family::ResNet)
                .classes,
            "1000"
        );
        let bad = Dims {
            family: Family::ResNet,
            depths: "3, 4, 6".into(),
            ..Dims::default()
        };
        assert_eq!(bad.config_json(), Err(DimError::Stages));
        let bad = Dims {
            family: Family::ResNet,
            depths: "3, x, 6, 3".into(),
            ..Dims::default()
        };
        assert_eq!(bad.config_json(), Err(DimError::List(DimField::Depths)));
        let bad = Dims {
            family: Family::Mlp,
            widths: "512, 0".into(),
            ..Dims::default()
        };
        assert_eq!(bad.config_json(), Err(DimError::List(DimField::Widths)));
        let bad = Dims {
            family: Family::Mlp,
            classes: "".into(),
            ..Dims::default()
        };
        assert!(matches!(
            bad.config_json(),
            Err(DimError::Field(DimField::Classes, FieldError::Empty))
        ));
    }
}
