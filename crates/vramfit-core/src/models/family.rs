//! What a model family is: the Hugging Face `model_type`s it reads and how
//! it reads their `config.json` fields (with `transformers`' defaults), and
//! its presets; the model it lowers is a [`ModelSpec`]. Each family is one
//! module under `models/` holding a [`Family`]; the registry
//! ([`super::registry::FAMILIES`]) lists them.

use super::ModelSpec;
use super::hf_fields::Fields;
use crate::error::Error;
use serde::Serialize;

/// A model family: what it imports and which presets it brings.
#[derive(Clone, Copy, Debug)]
pub struct Family {
    /// The `config.json` `model_type`s it reads (vramfit's own `vramfit_*`
    /// names for models no Hugging Face config describes); empty for a
    /// family that only presets give.
    pub imports: &'static [Import],
    /// Its presets, in display order.
    pub presets: fn() -> Vec<ModelPreset>,
}

/// The preset list of a family that only imports (`Family::presets`).
pub fn no_presets() -> Vec<ModelPreset> {
    Vec::new()
}

/// One `model_type` a family reads.
#[derive(Clone, Copy, Debug)]
pub struct Import {
    /// The `model_type` value.
    pub model_type: &'static str,
    /// Reads a `config.json` of this type into a model.
    pub read: fn(&Fields<'_>) -> Result<ModelSpec, Error>,
}

/// A named model preset.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelPreset {
    /// Stable id (CLI, URLs).
    pub id: &'static str,
    /// Display name.
    pub name: &'static str,
    /// The heading it is listed under.
    pub family: Group,
    /// The architecture.
    pub spec: ModelSpec,
}

impl ModelPreset {
    /// A preset listed under `family`.
    pub fn new(id: &'static str, name: &'static str, family: Group, spec: ModelSpec) -> Self {
        ModelPreset {
            id,
            name,
            family,
            spec,
        }
    }

    /// The preset with the context its `config.json` supports (see
    /// [`TransformerSpec::context_limit`]); other specs are unchanged.
    pub fn context(mut self, tokens: u64) -> Self {
        if let ModelSpec::Transformer(t) = &mut self.spec {
            t.context_limit = tokens;
        }
        self
    }
}

/// The headings presets are listed under: a kind of model, or a model
/// series by its maker's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Group {
    /// Convolutional networks (torchvision).
    #[serde(rename = "CNN")]
    Cnn,
    /// Vision Transformers (torchvision's and Hugging Face's).
    #[serde(rename = "Vision Transformer")]
    VisionTransformer,
    /// Multi-layer perceptrons.
    #[serde(rename = "MLP")]
    Mlp,
    /// BERT encoders.
    #[serde(rename = "BERT")]
    Bert,
    /// GPT-2 and Megatron-LM GPT decoders.
    #[serde(rename = "GPT-2")]
    Gpt2,
    /// Meta's OPT decoders.
    #[serde(rename = "OPT")]
    Opt,
    /// Meta's Llama series.
    #[serde(rename = "Llama")]
    Llama,
    /// Mistral AI's models.
    #[serde(rename = "Mistral")]
    Mistral,
    /// Alibaba's Qwen series.
    #[serde(rename = "Qwen")]
    Qwen,
    /// Hugging Face's SmolLM series.
    #[serde(rename = "SmolLM")]
    SmolLm,
    /// Ai2's OLMo series.
    #[serde(rename = "OLMo")]
    Olmo,
    /// Google's Gemma series.
    #[serde(rename = "Gemma")]
    Gemma,
    /// EleutherAI's Pythia suite (GPT-NeoX).
    #[serde(rename = "Pythia")]
    Pythia,
    /// Microsoft's Phi series.
    #[serde(rename = "Phi")]
    Phi,
    /// IBM's Granite.
    #[serde(rename = "Granite")]
    Granite,
    /// BigCode's StarCoder2 code models.
    #[serde(rename = "StarCoder2")]
    StarCoder2,
    /// DeepSeek's mixtures of experts with latent attention.
    #[serde(rename = "DeepSeek")]
    DeepSeek,
    /// Moonshot AI's Kimi K2 (DeepSeek-V3's architecture).
    #[serde(rename = "Kimi")]
    Kimi,
    /// Baidu's ERNIE 4.5.
    #[serde(rename = "ERNIE")]
    Ernie,
    /// LG AI Research's EXAONE.
    #[serde(rename = "EXAONE")]
    Exaone,
    /// Z.ai's GLM mixtures of experts.
    #[serde(rename = "GLM")]
    Glm,
    /// MiniMax's mixtures of experts.
    #[serde(rename = "MiniMax")]
    MiniMax,
    /// OpenAI's open-weight mixtures of experts.
    #[serde(rename = "gpt-oss")]
    GptOss,
    /// Google's T5 encoder-decoders (T5, Flan-T5).
    #[serde(rename = "T5")]
    T5,
}

impl Group {
    /// The heading as a name: a series' name is the same in every language;
    /// a kind of model (CNN, Vision Transformer, MLP) is translated by the page.
    pub fn name(self) -> &'static str {
        match self {
            Group::Cnn => "CNN",
            Group::VisionTransformer => "Vision Transformer",
            Group::Mlp => "MLP",
            Group::Bert => "BERT",
            Group::Gpt2 => "GPT-2",
            Group::Opt => "OPT",
            Group::Llama => "Llama",
            Group::Mistral => "Mistral",
            Group::Qwen => "Qwen",
            Group::SmolLm => "SmolLM",
            Group::Olmo => "OLMo",
            Group::Gemma => "Gemma",
            Group::Pythia => "Pythia",
            Group::Phi => "Phi",
            Group::Granite => "Granite",
            Group::StarCoder2 => "StarCoder2",
            Group::DeepSeek => "DeepSeek",
            Group::Kimi => "Kimi",
            Group::Ernie => "ERNIE",
            Group::Exaone => "EXAONE",
            Group::Glm => "GLM",
            Group::MiniMax => "MiniMax",
            Group::GptOss => "gpt-oss",
            Group::T5 => "T5",
        }
    }
}

impl std::fmt::Display for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
