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

/// The block layout of a Llama-style custom decoder: which Hugging Face
/// `model_type` its `config.json` names (and so which block options the
/// importer reads: norms, q/k norms, soft-capping, sliding layers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// Llama: RMSNorm before attention and the MLP (Mistral with a window).
    #[default]
    Llama,
    /// Qwen3: q and k normalized per head.
    Qwen3,
    /// OLMo 2: norms after attention and the MLP, q and k normalized.
    Olmo2,
    /// Gemma: scaled embeddings, a GELU-gated MLP.
    Gemma,
    /// Gemma 2: norms before and after, soft-capping, every other layer sliding.
    Gemma2,
    /// Gemma 3: norms before and after, q/k norms, five layers of six sliding.
    Gemma3,
    /// Phi-3 and Phi-4: fused q/k/v and gate/up projections.
    Phi3,
    /// GPT-NeoX (Pythia): LayerNorms, fused q/k/v, a quarter of each head
    /// rotated, a plain GELU MLP beside attention (parallel residual).
    GptNeox,
}

impl Layout {
    /// Every layout, in the order the form offers them.
    pub const ALL: [Layout; 8] = [
        Layout::Llama,
        Layout::Qwen3,
        Layout::Olmo2,
        Layout::Gemma,
        Layout::Gemma2,
        Layout::Gemma3,
        Layout::Phi3,
        Layout::GptNeox,
    ];

    /// The `model_type` (and the select's value).
    pub fn id(self) -> &'static str {
        match self {
            Layout::Llama => "llama",
            Layout::Qwen3 => "qwen3",
            Layout::Olmo2 => "olmo2",
            Layout::Gemma => "gemma",
            Layout::Gemma2 => "gemma2",
            Layout::Gemma3 => "gemma3_text",
            Layout::Phi3 => "phi3",
            Layout::GptNeox => "gpt_neox",
        }
    }

    /// Whether its attention can group heads over fewer key/value heads and
    /// give them their own width (GPT-NeoX splits `hidden_size` over all heads).
    pub fn has_kv_heads(self) -> bool {
        self != Layout::GptNeox
    }

    /// The layout for an id.
    pub fn parse(id: &str) -> Option<Layout> {
        Layout::ALL.into_iter().find(|l| l.id() == id)
    }

    /// Whether layers can attend to a sliding window (Mistral's on every
    /// layer for the Llama layout, the models' own patterns for Gemma 2 and 3).
    pub fn slides(self) -> bool {
        matches!(self, Layout::Llama | Layout::Gemma2 | Layout::Gemma3)
    }

    /// Whether the models of this layout tie their LM head to the embedding.
    pub fn ties(self) -> bool {
        matches!(self, Layout::Gemma | Layout::Gemma2 | Layout::Gemma3)
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
    /// Llama-style: the block layout.
    pub layout: Layout,
    /// Llama-style: the per-head width; blank for hidden size / heads.
    pub head_dim: String,
    /// Llama-style: the sliding window in tokens; blank for none.
    pub window: String,
    /// Llama-style: whether the LM head shares the embedding.
    pub tied: bool,
    /// Llama layout: routed experts per layer; blank for a dense MLP.
    pub experts: String,
    /// Llama layout, with experts: experts each token goes through.
    pub experts_per_token: String,
    /// Llama layout, with experts: each expert's width; blank for the MLP width.
    pub expert_width: String,
    /// Llama layout, with experts: shared experts every token goes through; blank for none.
    pub shared_experts: String,
    /// Llama layout, with experts: the first layers that keep a dense MLP; blank for none.
    pub dense_layers: String,
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
            layout: Layout::Llama,
            head_dim: String::new(),
            window: String::new(),
            tied: false,
            experts: String::new(),
            experts_per_token: "2".into(),
            expert_width: String::new(),
            shared_experts: String::new(),
            dense_layers: String::new(),
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
    /// Per-head width (may be blank).
    HeadDim,
    /// Sliding window (may be blank).
    Window,
    /// Routed experts (may be blank: dense).
    Experts,
    /// Experts per token.
    ExpertsPerToken,
    /// Each expert's width (may be blank: the MLP width).
    ExpertWidth,
    /// Shared experts (may be blank: none).
    SharedExperts,
    /// First dense layers (may be blank: none).
    DenseLayers,
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
    /// More experts per token than experts.
    TopKExceedsExperts,
    /// Shared experts or first dense layers (built as Qwen2-MoE) with a
    /// sliding window, or first dense layers without a shared expert:
    /// no `model_type` vramfit reads has that shape.
    MoeCombination,
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

    /// The same dimensions with `layout`, whose models' head tying it takes.
    pub fn with_layout(&self, layout: Layout) -> Dims {
        Dims {
            layout,
            tied: layout.ties(),
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
        // A Llama-style decoder may give its heads any width.
        let head_dim = match self.family {
            Family::Llama if self.layout.has_kv_heads() => {
                optional(DimField::HeadDim, &self.head_dim)?
            }
            _ => None,
        };
        if head_dim.is_none() && !hidden.is_multiple_of(heads) {
            return Err(DimError::HeadsDoNotDivide);
        }
        let name = format!("custom-{}-{layers}x{hidden}", self.family.id());
        Ok(match self.family {
            Family::Llama if !self.layout.has_kv_heads() => json!({
                "_name_or_path": name, "model_type": self.layout.id(),
                "num_hidden_layers": layers, "hidden_size": hidden, "num_attention_heads": heads,
                "intermediate_size": intermediate, "vocab_size": vocab, "tie_word_embeddings": self.tied,
            }),
            Family::Llama => {
                let kv = count(DimField::KvHeads, &self.kv_heads)?;
                if !heads.is_multiple_of(kv) {
                    return Err(DimError::KvHeadsDoNotDivide);
                }
                let window = if self.layout.slides() {
                    optional(DimField::Window, &self.window)?
                } else {
                    None
                };
                if let Some(moe) = self.experts_json(intermediate, window)? {
                    let mut config = json!({
                        "_name_or_path": name,
                        "num_hidden_layers": layers, "hidden_size": hidden, "num_attention_heads": heads,
                        "num_key_value_heads": kv, "head_dim": head_dim.unwrap_or(hidden / heads),
                        "vocab_size": vocab, "tie_word_embeddings": self.tied,
                    });
                    // `json!({..})` is always an object.
                    if let Some(map) = config.as_object_mut() {
                        map.extend(moe);
                    }
                    return Ok(config);
                }
                // A window on every layer is Mistral's `sliding_window`.
                let model_type = match (self.layout, window) {
                    (Layout::Llama, Some(_)) => "mistral",
                    (layout, _) => layout.id(),
                };
                json!({
                    "_name_or_path": name, "model_type": model_type,
                    "num_hidden_layers": layers, "hidden_size": hidden, "num_attention_heads": heads,
                    "num_key_value_heads": kv, "head_dim": head_dim.unwrap_or(hidden / heads),
                    "intermediate_size": intermediate, "vocab_size": vocab,
                    "tie_word_embeddings": self.tied, "sliding_window": window,
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

    /// The mixture-of-experts part of a Llama-layout decoder's
    /// `config.json` (`None`: dense). Routed experts alone are Mixtral
    /// (`MixtralConfig`: `intermediate_size` is the experts' width, a
    /// window on every layer); with shared experts or first dense layers,
    /// Qwen2-MoE (`Qwen2MoeConfig`: one shared expert as wide as the shared
    /// experts together, behind its sigmoid gate; `mlp_only_layers`;
    /// no q/k/v biases, as Llama).
    fn experts_json(
        &self,
        mlp: u64,
        window: Option<u64>,
    ) -> Result<Option<serde_json::Map<String, Value>>, DimError> {
        if self.layout != Layout::Llama {
            return Ok(None);
        }
        let Some(experts) = optional(DimField::Experts, &self.experts)? else {
            return Ok(None);
        };
        let top_k = count(DimField::ExpertsPerToken, &self.experts_per_token)?;
        if top_k > experts {
            return Err(DimError::TopKExceedsExperts);
        }
        let width = optional(DimField::ExpertWidth, &self.expert_width)?.unwrap_or(mlp);
        let shared = optional(DimField::SharedExperts, &self.shared_experts)?.unwrap_or(0);
        let dense = optional(DimField::DenseLayers, &self.dense_layers)?.unwrap_or(0);
        let value = match (shared, dense) {
            (0, 0) => json!({
                "model_type": "mixtral", "num_local_experts": experts, "num_experts_per_tok": top_k,
                "intermediate_size": width, "sliding_window": window,
            }),
            (0, _) => return Err(DimError::MoeCombination),
            _ if window.is_some() => return Err(DimError::MoeCombination),
            (shared, dense) => json!({
                "model_type": "qwen2_moe", "num_experts": experts, "num_experts_per_tok": top_k,
                "moe_intermediate_size": width, "intermediate_size": mlp,
                "shared_expert_intermediate_size": shared.saturating_mul(width),
                "mlp_only_layers": (0..dense).collect::<Vec<u64>>(), "decoder_sparse_step": 1,
                "qkv_bias": false,
            }),
        };
        Ok(value.as_object().cloned())
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

/// A field that may be blank (`None`), else as [`count`].
fn optional(f: DimField, s: &str) -> Result<Option<u64>, DimError> {
    if s.trim().is_empty() {
        Ok(None)
    } else {
        count(f, s).map(Some)
    }
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
    fn a_custom_mixture_of_experts_lowers_to_mixtral_or_qwen2_moe() {
        use vramfit_core::models::ModelSpec;
        let import = |dims: &Dims| vramfit_core::hf::import(&dims.config_json().unwrap()).unwrap();
        // Mixtral-8x7B's shape through the form: its preset's counts.
        let mixtral = Dims {
            layers: "32".into(),
            hidden: "4096".into(),
            heads: "32".into(),
            kv_heads: "8".into(),
            intermediate: "14336".into(),
            vocab: "32000".into(),
            experts: "8".into(),
            experts_per_token: "2".into(),
            ..Dims::default().with_family(Family::Llama)
        };
        let spec = import(&mixtral).spec;
        assert_eq!(spec.parameter_count().unwrap(), 46_702_792_704);
        assert_eq!(spec.active_parameter_count().unwrap(), 12_879_925_248);
        // Shared experts and first dense layers: Qwen2-MoE's shape.
        let shared = Dims {
            expert_width: "1792".into(),
            shared_experts: "2".into(),
            dense_layers: "1".into(),
            ..mixtral.clone()
        };
        let ModelSpec::Transformer(t) = import(&shared).spec else {
            panic!("a transformer")
        };
        let moe = t.moe.expect("experts");
        assert_eq!(
            (moe.experts, moe.top_k, moe.expert_intermediate),
            (8, 2, 1792)
        );
        assert_eq!(moe.shared.map(|s| s.intermediate), Some(2 * 1792));
        assert!(!moe.is_sparse(0) && moe.is_sparse(1));
        assert!(!t.qkv_bias);
        // Blank experts: the dense Llama it was.
        let dense = Dims {
            experts: String::new(),
            ..mixtral.clone()
        };
        assert_eq!(import(&dense).spec.routed_experts(), None);
        let bad = |d: Dims| d.config_json().unwrap_err();
        assert_eq!(
            bad(Dims {
                experts_per_token: "9".into(),
                ..mixtral.clone()
            }),
            DimError::TopKExceedsExperts
        );
        assert_eq!(
            bad(Dims {
                dense_layers: "1".into(),
                ..mixtral.clone()
            }),
            DimError::MoeCombination
        );
        assert_eq!(
            bad(Dims {
                window: "4096".into(),
                ..shared
            }),
            DimError::MoeCombination
        );
    }

    #[test]
    fn a_llama_style_custom_decoder_takes_each_layout_and_its_fields() {
        use vramfit_core::models::{ModelSpec, NormPlacement, QkNorm};
        let spec = |dims: &Dims| match vramfit_core::hf::import(&dims.config_json().unwrap())
            .unwrap()
            .spec
        {
            ModelSpec::Transformer(t) => t,
            other => panic!("{other:?}"),
        };
        let llama = Dims::default().with_family(Family::Llama);
        // Gemma-3-1B's shape through the form: its parameter count.
        let gemma3 = Dims {
            layers: "26".into(),
            hidden: "1152".into(),
            heads: "4".into(),
            kv_heads: "1".into(),
            head_dim: "256".into(),
            intermediate: "6912".into(),
            vocab: "262144".into(),
            window: "512".into(),
            ..llama.with_layout(Layout::Gemma3)
        };
        assert!(gemma3.tied, "Gemma ties its head");
        let t = spec(&gemma3);
        assert_eq!(
            (t.head_dim, t.block.norm, t.block.qk_norm),
            (256, NormPlacement::Sandwich, QkNorm::PerHead)
        );
        assert_eq!(
            t.block.sliding.map(|w| (w.window, w.full_every)),
            Some((512, 6))
        );
        assert_eq!(
            ModelSpec::Transformer(t).parameter_count().unwrap(),
            999_885_952
        );
        // Blank window: no sliding layers; blank head_dim: hidden / heads.
        let gemma2 = Dims {
            window: String::new(),
            ..llama.with_layout(Layout::Gemma2)
        };
        let t = spec(&gemma2);
        assert_eq!((t.block.sliding, t.head_dim), (None, 64));
        assert!(t.block.attn_softcap);
        // A window on a Llama layout is Mistral's, on every layer.
        let mistral = Dims {
            window: "4096".into(),
            ..llama.clone()
        };
        assert!(mistral.config_json().unwrap().contains("\"mistral\""));
        assert_eq!(spec(&mistral).block.sliding.map(|w| w.full_every), Some(0));
        // An explicit head width lifts the divisibility rule; a bad one is named.
        let wide = Dims {
            heads: "7".into(),
            kv_heads: "7".into(),
            head_dim: "128".into(),
            ..llama.clone()
        };
        assert_eq!(spec(&wide).head_dim, 128);
        let bad = Dims {
            head_dim: "x".into(),
            ..llama.clone()
        };
        assert!(matches!(
            bad.config_json(),
            Err(DimError::Field(DimField::HeadDim, FieldError::NotWhole))
        ));
        for layout in Layout::ALL {
            let dims = llama.with_layout(layout);
            assert!(
                vramfit_core::hf::import(&dims.config_json().unwrap())
                    .unwrap()
                    .assumptions
                    .is_empty(),
                "{layout:?}"
            );
        }
        assert_eq!(Layout::parse("gemma3_text"), Some(Layout::Gemma3));
        // Pythia-160M's and Phi-3-mini's shapes through the form: their counts.
        let pythia = Dims {
            intermediate: "3072".into(),
            vocab: "50304".into(),
            ..llama.with_layout(Layout::GptNeox)
        };
        let count = |d: &Dims| {
            vramfit_core::hf::import(&d.config_json().unwrap())
                .unwrap()
                .spec
                .parameter_count()
                .unwrap()
        };
        assert_eq!(count(&pythia), 162_322_944);
        let phi3 = Dims {
            layers: "32".into(),
            hidden: "3072".into(),
            heads: "32".into(),
            kv_heads: "32".into(),
            intermediate: "8192".into(),
            vocab: "32064".into(),
            ..llama.with_layout(Layout::Phi3)
        };
        assert_eq!(count(&phi3), 3_821_079_552);
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
