//! Built-in model presets. Dimensions are the published ones (torchvision
//! definitions, Hugging Face `config.json` files); parameter counts are tested
//! against `tests/reference/param_counts.csv`, produced by instantiating the
//! real models with torch / torchvision / transformers.

use crate::error::Error;
use crate::models::{
    Arch, Head, MlpActivation, MlpLayer, MlpSpec, MobileNetV2Spec, ModelSpec, ResNetSpec,
    TransformerSpec, VggSpec, VitSpec,
};
use serde::Serialize;

/// A named model preset.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelPreset {
    /// Stable id (CLI, URLs).
    pub id: &'static str,
    /// Display name.
    pub name: &'static str,
    /// Family shown in grouped lists.
    pub family: &'static str,
    /// The architecture.
    pub spec: ModelSpec,
}

fn resnet(stages: [u64; 4], bottleneck: bool) -> ModelSpec {
    ModelSpec::ResNet(ResNetSpec {
        stages,
        bottleneck,
        classes: 1000,
    })
}

fn bert(hidden: u64, layers: u64, heads: u64, head: Head) -> ModelSpec {
    ModelSpec::Transformer(TransformerSpec {
        arch: Arch::Bert,
        vocab: 30522,
        hidden,
        layers,
        heads,
        kv_heads: heads,
        head_dim: hidden / heads,
        intermediate: 4 * hidden,
        max_positions: 512,
        type_vocab: 2,
        tie_embeddings: false,
        qkv_bias: true,
        mlp_bias: true,
        hidden_dropout: 0.1,
        attention_dropout: 0.1,
        head,
        fused_gelu: false,
    })
}

fn gpt2(hidden: u64, layers: u64, heads: u64) -> ModelSpec {
    ModelSpec::Transformer(TransformerSpec {
        arch: Arch::Gpt2,
        vocab: 50257,
        hidden,
        layers,
        heads,
        kv_heads: heads,
        head_dim: hidden / heads,
        intermediate: 4 * hidden,
        max_positions: 1024,
        type_vocab: 0,
        tie_embeddings: true,
        qkv_bias: true,
        mlp_bias: true,
        hidden_dropout: 0.1,
        attention_dropout: 0.1,
        head: Head::CausalLm,
        fused_gelu: false,
    })
}

/// A Megatron-LM GPT: GPT-2's layout with its own vocabulary and positions
/// and a fused bias-GeLU kernel.
fn megatron_gpt(vocab: u64, hidden: u64, layers: u64, heads: u64, positions: u64) -> ModelSpec {
    match gpt2(hidden, layers, heads) {
        ModelSpec::Transformer(t) => ModelSpec::Transformer(TransformerSpec {
            vocab,
            max_positions: positions,
            fused_gelu: true,
            ..t
        }),
        other => other,
    }
}

/// A Llama-style decoder (Llama, Mistral, Qwen2): RMSNorm, rotary, GQA, SwiGLU.
#[allow(clippy::too_many_arguments)]
pub fn llama(
    vocab: u64,
    hidden: u64,
    layers: u64,
    heads: u64,
    kv_heads: u64,
    intermediate: u64,
    tie: bool,
    qkv_bias: bool,
) -> ModelSpec {
    ModelSpec::Transformer(TransformerSpec {
        arch: Arch::Llama,
        vocab,
        hidden,
        layers,
        heads,
        kv_heads,
        head_dim: hidden / heads.max(1),
        intermediate,
        max_positions: 0,
        type_vocab: 0,
        tie_embeddings: tie,
        qkv_bias,
        mlp_bias: false,
        hidden_dropout: 0.0,
        attention_dropout: 0.0,
        head: Head::CausalLm,
        fused_gelu: false,
    })
}

/// The reference MLP: 4 × (Linear 1024→4096, GELU, Linear 4096→1024).
fn mlp_small_layers() -> Vec<MlpLayer> {
    let up = MlpLayer {
        out: 4096,
        activation: MlpActivation::Gelu,
    };
    let down = MlpLayer {
        out: 1024,
        activation: MlpActivation::None,
    };
    [up, down].repeat(4)
}

/// torchvision's VGG-16 configuration "D" (0 = max-pool).
const VGG16: [u64; 18] = [
    64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0,
];

/// All model presets, grouped by family in display order.
pub fn model_presets() -> Vec<ModelPreset> {
    let p = |id, name, family, spec| ModelPreset {
        id,
        name,
        family,
        spec,
    };
    vec![
        p("resnet18", "ResNet-18", "CNN", resnet([2, 2, 2, 2], false)),
        p("resnet34", "ResNet-34", "CNN", resnet([3, 4, 6, 3], false)),
        p("resnet50", "ResNet-50", "CNN", resnet([3, 4, 6, 3], true)),
        p(
            "resnet101",
            "ResNet-101",
            "CNN",
            resnet([3, 4, 23, 3], true),
        ),
        p(
            "resnet152",
            "ResNet-152",
            "CNN",
            resnet([3, 8, 36, 3], true),
        ),
        p(
            "vgg16",
            "VGG-16",
            "CNN",
            ModelSpec::Vgg(VggSpec {
                layers: VGG16.to_vec(),
                batch_norm: false,
                classes: 1000,
            }),
        ),
        p(
            "mobilenet_v2",
            "MobileNetV2",
            "CNN",
            ModelSpec::MobileNetV2(MobileNetV2Spec { classes: 1000 }),
        ),
        p(
            "vit_b_16",
            "ViT-B/16",
            "Vision Transformer",
            ModelSpec::Vit(VitSpec {
                image: 224,
                patch: 16,
                hidden: 768,
                layers: 12,
                heads: 12,
                mlp: 3072,
                classes: 1000,
            }),
        ),
        p(
            "mlp-small",
            "MLP 4×(1024→4096→1024), GELU",
            "MLP",
            ModelSpec::Mlp(MlpSpec {
                input: 1024,
                layers: mlp_small_layers(),
                block_size: 2,
                classes: 1000,
            }),
        ),
        p(
            "bert-base",
            "BERT-base (classification, 2 labels)",
            "BERT",
            bert(768, 12, 12, Head::Classification { labels: 2 }),
        ),
        p(
            "bert-large",
            "BERT-large (classification, 2 labels)",
            "BERT",
            bert(1024, 24, 16, Head::Classification { labels: 2 }),
        ),
        p(
            "bert-base-encoder",
            "BERT-base (bare encoder)",
            "BERT",
            bert(768, 12, 12, Head::Bare),
        ),
        p(
            "bert-large-encoder",
            "BERT-large (bare encoder)",
            "BERT",
            bert(1024, 24, 16, Head::Bare),
        ),
        p("gpt2", "GPT-2 (124M)", "GPT-2", gpt2(768, 12, 12)),
        p(
            "gpt2-medium",
            "GPT-2 Medium (355M)",
            "GPT-2",
            gpt2(1024, 24, 16),
        ),
        p(
            "gpt2-large",
            "GPT-2 Large (774M)",
            "GPT-2",
            gpt2(1280, 36, 20),
        ),
        p("gpt2-xl", "GPT-2 XL (1.5B)", "GPT-2", gpt2(1600, 48, 25)),
        p(
            "gpt3-175b",
            "GPT-3 175B (Megatron-LM)",
            "GPT-2",
            megatron_gpt(51200, 12288, 96, 96, 2048),
        ),
        p(
            "llama-tiny",
            "Llama-style tiny (reference)",
            "Llama",
            llama(32000, 512, 4, 8, 2, 1376, false, false),
        ),
        p(
            "llama-2-7b",
            "Llama-2-7B",
            "Llama",
            llama(32000, 4096, 32, 32, 32, 11008, false, false),
        ),
        p(
            "llama-2-13b",
            "Llama-2-13B",
            "Llama",
            llama(32000, 5120, 40, 40, 40, 13824, false, false),
        ),
        p(
            "llama-2-70b",
            "Llama-2-70B",
            "Llama",
            llama(32000, 8192, 80, 64, 8, 28672, false, false),
        ),
        p(
            "llama-3-8b",
            "Llama-3-8B",
            "Llama",
            llama(128256, 4096, 32, 32, 8, 14336, false, false),
        ),
        p(
            "llama-3-70b",
            "Llama-3-70B",
            "Llama",
            llama(128256, 8192, 80, 64, 8, 28672, false, false),
        ),
        p(
            "mistral-7b",
            "Mistral-7B v0.1",
            "Mistral",
            llama(32000, 4096, 32, 32, 8, 14336, false, false),
        ),
        p(
            "qwen2.5-7b",
            "Qwen2.5-7B",
            "Qwen",
            llama(152064, 3584, 28, 28, 4, 18944, false, true),
        ),
    ]
}

/// Looks a model preset up by id.
///
/// # Errors
/// [`Error::UnknownModel`] when no preset has this id.
pub fn model_preset(id: &str) -> Result<ModelPreset, Error> {
    model_presets()
        .into_iter()
        .find(|p| p.id == id)
        .ok_or_else(|| Error::UnknownModel(id.to_string()))
}
