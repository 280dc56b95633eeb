//! Model families and their lowering into the graph IR. Each family is a
//! module registered in [`registry::FAMILIES`] (see there for what one holds).

pub mod bamba;
pub mod bert;
pub mod cnn;
pub mod cohere;
pub mod convnext;
pub mod deepseek;
pub mod dots1;
pub mod efficientnet;
pub mod encoder;
pub mod ernie;
pub mod exaone4;
pub mod family;
pub mod gated_deltanet;
pub mod gemma;
pub mod gemma4;
pub mod glm4;
pub mod glm4_moe;
pub mod gpt2;
pub mod gpt_bigcode;
pub mod gpt_neox;
pub mod gpt_oss;
pub mod granite;
pub mod granite_moe;
pub mod hf_fields;
pub mod hunyuan;
pub mod llama;
pub mod llama4;
pub mod mamba2;
pub mod minimax_m2;
pub mod mixtral;
pub mod mla;
pub mod mobilenet_v3;
pub mod moe;
pub mod moe_lower;
pub mod nemotron_h;
pub mod olmo2;
pub mod olmoe;
pub mod opt;
pub mod phi;
pub mod phi3;
pub mod qwen3;
pub mod qwen3_5;
pub mod qwen_moe;
pub mod recurrent;
pub mod registry;
pub mod regnet;
pub mod relu2;
pub mod seed_oss;
pub mod smollm3;
pub mod stablelm;
pub mod starcoder2;
pub mod t5;
pub mod t5_lower;
pub mod t5_ops;
pub mod transformer;
pub mod vit;
pub mod vit_hf;

use crate::builder::Builder;
use crate::config::TrainConfig;
use crate::error::{Error, Inapplicable};
use crate::graph::Graph;
use serde::{Deserialize, Serialize};

pub use cnn::{MobileNetV2Spec, ResNetSpec, VggSpec};
pub use convnext::ConvNextSpec;
pub use efficientnet::EfficientNetSpec;
pub use family::{Family, Group, Import, ModelPreset};
pub use gated_deltanet::GatedDeltaNet;
pub use mamba2::Mamba2;
pub use mla::{Mla, MlaRope};
pub use mobilenet_v3::{MobileNetV3Size, MobileNetV3Spec};
pub use moe::{DenseLayers, ExpertActivation, Moe, Router, SharedExperts};
pub use recurrent::Recurrent;
pub use registry::{FAMILIES, PRESET_LISTS};
pub use regnet::RegNetSpec;
pub use t5::{T5Activation, T5Spec};
pub use transformer::{
    Arch, BlockOptions, Head, MlpKind, NormKind, NormPlacement, QkNorm, QkvProjection, Rotary,
    SingleMixer, SlidingWindow, TransformerSpec,
};
pub use vit::{MlpActivation, MlpLayer, MlpSpec, VitImplementation, VitSpec};

/// The most elements one tensor or parameter may have per sample, and the
/// largest product of dimensions a model may imply: 2^56 (7.2·10^16, some
/// 144 PB in half precision). Beyond it, byte counts (elements × up to 8
/// bytes × small factors) could overflow `u64`; no GPU comes near it.
pub const MAX_ELEMENTS: u64 = 1 << 56;

/// The largest width (hidden size, vocabulary, channels, classes) a model may have: 2^32.
pub const MAX_WIDTH: u64 = 1 << 32;

/// The most layers (or residual blocks) a model may have, so that one
/// estimate stays under about 50 ms: the op-by-op simulation, the per-layer
/// table and the largest-batch search grow with depth (measured in release:
/// 128 Llama layers 13 ms, 45 ms with a GPU's largest batch; 1024 layers
/// 316 ms and 610 ms). The deepest model we import, Llama-3.1-405B, has 126
/// layers; torchvision's deepest ResNet has 50 residual blocks.
pub const MAX_LAYERS: u64 = 128;

/// Checks that the product of `factors` stays within [`MAX_ELEMENTS`].
///
/// # Errors
/// [`Error::TooLarge`] naming `what` (which should say what the factors are).
pub fn check_elements(what: &str, factors: &[u64]) -> Result<(), Error> {
    let product = factors.iter().try_fold(1u64, |acc, &f| acc.checked_mul(f));
    match product {
        Some(p) if p <= MAX_ELEMENTS => Ok(()),
        p => Err(Error::TooLarge {
            what: what.to_string(),
            value: p.map_or_else(|| "more than 2^64".to_string(), |p| p.to_string()),
            limit: "2^56 elements".to_string(),
        }),
    }
}

/// Checks `1 <= value <= max` for a named dimension.
///
/// # Errors
/// [`Error::InvalidModel`] for zero, [`Error::TooLarge`] above `max`.
pub fn check_dimension(name: &str, value: u64, max: u64) -> Result<(), Error> {
    if value == 0 {
        return Err(Error::InvalidModel(format!(
            "{name} must be at least 1, got 0"
        )));
    }
    if value > max {
        return Err(Error::TooLarge {
            what: name.to_string(),
            value: value.to_string(),
            limit: max.to_string(),
        });
    }
    Ok(())
}

/// A model architecture with its dimensions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "family", rename_all = "snake_case")]
pub enum ModelSpec {
    /// BERT / GPT-2 / Llama-style transformer.
    Transformer(TransformerSpec),
    /// torchvision ResNet.
    ResNet(ResNetSpec),
    /// torchvision VGG.
    Vgg(VggSpec),
    /// torchvision MobileNetV2.
    MobileNetV2(MobileNetV2Spec),
    /// torchvision MobileNetV3 (small or large).
    MobileNetV3(MobileNetV3Spec),
    /// torchvision EfficientNet (B0).
    EfficientNet(EfficientNetSpec),
    /// torchvision ConvNeXt.
    ConvNext(ConvNextSpec),
    /// torchvision RegNet (X or Y).
    RegNet(RegNetSpec),
    /// Vision Transformer (torchvision's or Hugging Face's).
    Vit(VitSpec),
    /// T5 encoder-decoder (`T5ForConditionalGeneration`).
    T5(T5Spec),
    /// Multi-layer perceptron.
    Mlp(MlpSpec),
}

/// What a model takes as input, which decides whether `seq` or `image` applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InputKind {
    /// Token sequences.
    Tokens,
    /// Square images.
    Image,
    /// Feature vectors.
    Features,
}

impl ModelSpec {
    /// What the model consumes.
    pub fn input_kind(&self) -> InputKind {
        match self {
            ModelSpec::Transformer(_) | ModelSpec::T5(_) => InputKind::Tokens,
            ModelSpec::Mlp(_) => InputKind::Features,
            ModelSpec::ResNet(_)
            | ModelSpec::Vgg(_)
            | ModelSpec::MobileNetV2(_)
            | ModelSpec::MobileNetV3(_)
            | ModelSpec::EfficientNet(_)
            | ModelSpec::ConvNext(_)
            | ModelSpec::RegNet(_)
            | ModelSpec::Vit(_) => InputKind::Image,
        }
    }

    /// Lowers the model into a graph for the config's sequence length / image
    /// size, precision, attention kind and checkpointing.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] for inconsistent dimensions, [`Error::NotApplicable`]
    /// when the input size does not suit the model.
    pub fn lower(&self, cfg: &TrainConfig) -> Result<Graph, Error> {
        self.lower_with(cfg, true)
    }

    /// [`ModelSpec::lower`] with empty op, parameter and buffer names, for
    /// callers that never show them (the planner): the same graph otherwise.
    ///
    /// # Errors
    /// As [`ModelSpec::lower`].
    pub fn lower_unnamed(&self, cfg: &TrainConfig) -> Result<Graph, Error> {
        self.lower_with(cfg, false)
    }

    fn lower_with(&self, cfg: &TrainConfig, named: bool) -> Result<Graph, Error> {
        use crate::config::{Mode, WeightFormat};
        let mut b = Builder::new(cfg.precision);
        b.set_param_dtype(cfg.param_dtype());
        b.named = named;
        b.inference = cfg.mode == Mode::Inference;
        b.softmax_saves_input = cfg.pytorch == crate::config::TorchRelease::Torch110;
        b.autocast_cache = cfg.parallel.strategy.autocast_caches_weights();
        b.freeze_all(cfg.mode != Mode::Train);
        b.frozen_blocks = cfg.frozen_blocks;
        if cfg.frozen_blocks > 0 {
            // Freezing the bottom blocks freezes the embeddings below them too.
            b.frozen = true;
        }
        if matches!(cfg.mode, Mode::FinetuneLora | Mode::FinetuneQlora) {
            b.lora_rank = cfg.lora_rank;
        }
        if cfg.mode == Mode::Train && cfg.weight_format() != WeightFormat::Native {
            return Err(Error::NotApplicable(Inapplicable::FrozenWeights {
                format: cfg.weight_format().id(),
            }));
        }
        let ep = cfg.parallel.ep;
        if ep > 1 {
            match self.routed_experts() {
                None => {
                    return Err(Error::NotApplicable(
                        Inapplicable::ExpertParallelNoExperts { ep },
                    ));
                }
                Some(experts) if !experts.is_multiple_of(ep) => {
                    return Err(Error::NotApplicable(Inapplicable::ExpertParallelExperts {
                        experts,
                        ep,
                    }));
                }
                Some(_) => {}
            }
        }
        // A dense model has no experts to split: `etp` set is a mistake, not a no-op.
        let etp = cfg.parallel.etp;
        if etp > 0 && self.routed_experts().is_none() {
            return Err(Error::NotApplicable(
                Inapplicable::ExpertTensorParallelNoExperts { etp },
            ));
        }
        let cnn = matches!(
            self,
            ModelSpec::ResNet(_) | ModelSpec::Vgg(_) | ModelSpec::MobileNetV2(_)
        );
        // The later CNNs' pruned shapes are not modelled.
        let unpruned = match self {
            ModelSpec::MobileNetV3(_) => Some("MobileNetV3"),
            ModelSpec::EfficientNet(_) => Some("EfficientNet"),
            ModelSpec::ConvNext(_) => Some("ConvNeXt"),
            ModelSpec::RegNet(_) => Some("RegNet"),
            ModelSpec::Transformer(_)
            | ModelSpec::ResNet(_)
            | ModelSpec::Vgg(_)
            | ModelSpec::MobileNetV2(_)
            | ModelSpec::Vit(_)
            | ModelSpec::T5(_)
            | ModelSpec::Mlp(_) => None,
        };
        if let Some(model) = unpruned
            && (cfg.keep_attention < 1.0 || cfg.keep_mlp < 1.0 || cfg.keep_conv < 1.0)
        {
            return Err(Error::NotApplicable(Inapplicable::PruneNotModelled {
                model,
            }));
        }
        if (cfg.keep_attention < 1.0 || cfg.keep_mlp < 1.0) && cnn {
            return Err(Error::NotApplicable(Inapplicable::PruneCnn));
        }
        if cfg.keep_conv < 1.0 && !cnn {
            return Err(Error::NotApplicable(Inapplicable::PruneConvNotCnn));
        }
        b.lora_fp32 = cfg.lora_fp32;
        match self {
            ModelSpec::Transformer(t) => {
                t.validate()?;
                transformer::lower(&mut b, &transformer::pruned(t, cfg)?, cfg)?
            }
            // A build without `every-model` lowers dense transformers only.
            #[cfg(not(feature = "every-model"))]
            _ => return Err(not_in_this_build()),
            #[cfg(feature = "every-model")]
            ModelSpec::ResNet(r) => cnn::lower_resnet(&mut b, r, cfg.image, cfg.keep_conv)?,
            #[cfg(feature = "every-model")]
            ModelSpec::Vgg(v) => cnn::lower_vgg(&mut b, v, cfg.image, cfg.keep_conv)?,
            #[cfg(feature = "every-model")]
            ModelSpec::MobileNetV2(m) => {
                cnn::lower_mobilenet_v2(&mut b, m, cfg.image, cfg.keep_conv)?
            }
            #[cfg(feature = "every-model")]
            ModelSpec::MobileNetV3(m) => mobilenet_v3::lower(&mut b, m, cfg.image)?,
            #[cfg(feature = "every-model")]
            ModelSpec::EfficientNet(e) => efficientnet::lower(&mut b, e, cfg.image)?,
            #[cfg(feature = "every-model")]
            ModelSpec::ConvNext(c) => convnext::lower(&mut b, c, cfg.image)?,
            #[cfg(feature = "every-model")]
            ModelSpec::RegNet(r) => regnet::lower(&mut b, r, cfg.image)?,
            #[cfg(feature = "every-model")]
            ModelSpec::Vit(v) => match v.implementation {
                VitImplementation::Torchvision => {
                    vit::lower_vit(&mut b, v, cfg.image, cfg.attention)?
                }
                VitImplementation::HuggingFace { .. } => {
                    vit_hf::lower(&mut b, v, cfg.image, cfg.attention)?
                }
            },
            #[cfg(feature = "every-model")]
            ModelSpec::T5(t) => t5_lower::lower(&mut b, t, cfg)?,
            #[cfg(feature = "every-model")]
            ModelSpec::Mlp(m) => vit::lower_mlp(&mut b, &vit::pruned_mlp(m, cfg.keep_mlp))?,
        }
        Ok(b.finish())
    }

    /// A config whose sizes every model accepts, for parameter counting.
    pub fn nominal_config(&self) -> TrainConfig {
        let image = match self {
            ModelSpec::Vit(v) => v.image,
            // The others take any image size (or none); 224 is ImageNet's.
            ModelSpec::Transformer(_)
            | ModelSpec::T5(_)
            | ModelSpec::ResNet(_)
            | ModelSpec::Vgg(_)
            | ModelSpec::MobileNetV2(_)
            | ModelSpec::MobileNetV3(_)
            | ModelSpec::EfficientNet(_)
            | ModelSpec::ConvNext(_)
            | ModelSpec::RegNet(_)
            | ModelSpec::Mlp(_) => 224,
        };
        TrainConfig {
            batch: 1,
            seq: 8,
            image,
            ..TrainConfig::default()
        }
    }

    /// Exact parameter count (tied parameters once), as PyTorch reports it.
    ///
    /// # Errors
    /// As [`ModelSpec::lower`].
    pub fn parameter_count(&self) -> Result<u64, Error> {
        Ok(self.lower(&self.nominal_config())?.parameter_count())
    }

    /// Parameters one token reads: [`ModelSpec::parameter_count`] less the
    /// routed experts it is not sent to, `experts − top_k` of them (weights
    /// and biases) in every sparse layer, and less a vision encoder (run on
    /// images only). Every parameter for a text model without experts.
    /// Memory holds them all; this sets the compute.
    ///
    /// # Errors
    /// As [`ModelSpec::lower`].
    pub fn active_parameter_count(&self) -> Result<u64, Error> {
        let encoder = match self {
            ModelSpec::Transformer(TransformerSpec {
                encoder: Some(e), ..
            }) => e.params,
            _ => 0,
        };
        Ok(self
            .parameter_count()?
            .saturating_sub(self.idle_expert_parameters())
            .saturating_sub(encoder))
    }

    /// Routed experts per sparse layer; `None` for a model without experts.
    pub fn routed_experts(&self) -> Option<u64> {
        match self {
            ModelSpec::Transformer(TransformerSpec { moe: Some(m), .. }) => Some(m.experts),
            _ => None,
        }
    }

    /// Whether the model's routers feed the auxiliary load-balancing loss
    /// (`output_router_logits`, [`moe::Moe::aux_loss`]).
    pub fn aux_loss(&self) -> bool {
        matches!(self, ModelSpec::Transformer(TransformerSpec { moe: Some(m), .. }) if m.aux_loss)
    }

    /// The experts every token goes through when the router sends each
    /// token through all of them ([`moe::Router::Llama4`]); `None` for
    /// any other model.
    pub fn every_expert(&self) -> Option<u64> {
        match self {
            ModelSpec::Transformer(TransformerSpec { moe: Some(m), .. })
                if m.router == moe::Router::Llama4 =>
            {
                Some(m.experts)
            }
            _ => None,
        }
    }

    /// Each routed expert's feed-forward width (the columns expert tensor
    /// parallelism splits); `None` for a model without experts.
    pub fn routed_expert_width(&self) -> Option<u64> {
        match self {
            ModelSpec::Transformer(TransformerSpec { moe: Some(m), .. }) => {
                Some(m.expert_intermediate)
            }
            _ => None,
        }
    }

    /// The routed experts' parameters one token does not read: `experts −
    /// top_k` experts (weights and biases) in every sparse layer; 0 without
    /// experts. Arithmetic on the spec, nothing lowered.
    pub fn idle_expert_parameters(&self) -> u64 {
        match self {
            ModelSpec::Transformer(TransformerSpec {
                moe: Some(m),
                hidden,
                layers,
                ..
            }) => m
                .sparse_layers(*layers)
                .saturating_mul(m.experts.saturating_sub(m.top_k))
                .saturating_mul(m.expert_parameters(*hidden)),
            _ => 0,
        }
    }
}

/// What a build without the `every-model` feature says of a model it does
/// not lower (the page's first-edit module answers the default GPT-2 page
/// only; the app that follows lowers every model).
#[cfg(not(feature = "every-model"))]
pub(crate) fn not_in_this_build() -> Error {
    Error::InvalidModel("this build lowers dense transformers only".into())
}
