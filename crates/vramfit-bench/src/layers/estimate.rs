//! What `vramfit-core` predicts for the same layer, and why it differs from
//! what the GPU layer keeps.
//!
//! The transformer block is compared with block `h.1` of a three-block GPT-2
//! whose hidden size, heads, sequence and batch are the measured ones (a
//! middle block, so its input and output are both another block's); the
//! bottleneck with block 1 of the torchvision ResNet-50 stage whose channels
//! match (inner width through `keep_conv`, image side through the image
//! size). Precision: `f32` is `fp32`, `f16` is pure `fp16` (statistics stay
//! `f32` in both, as on the GPU). Attention is eager (materialised), like
//! the GPU block.

use super::{BottleneckShape, TransformerBlockShape};
use crate::dtype::DType;
use crate::error::{BenchError, Result};
use vramfit_core::models::{ModelSpec, ResNetSpec, TransformerSpec};
use vramfit_core::{Attention, Overheads, Precision, TrainConfig};

/// One itemised difference: bytes the estimate has that the GPU layer does
/// not (negative: the other way round).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Difference {
    /// What differs and why (English).
    pub what: String,
    /// Estimated minus measured, for this item.
    pub bytes: i64,
    /// The same sentence as a stable id and its values, for a page to say it
    /// in the reader's language (see [`crate::layers::Phrase`]).
    #[serde(flatten)]
    pub phrase: super::Phrase,
}

/// The estimator's saved bytes for the layer, next to the measured ones.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EstimateComparison {
    /// The model the estimate was made for, in words.
    pub model: String,
    /// The estimator's layer (`LayerRow::name`), e.g. `h.1`.
    pub layer: String,
    /// The estimator's precision.
    pub precision: String,
    /// `LayerRow::saved_bytes`.
    pub estimated_bytes: u64,
    /// The GPU layer's saved bytes (real buffer sizes).
    pub measured_bytes: u64,
    /// The differences that are understood, itemised.
    pub differences: Vec<Difference>,
    /// `estimated - measured - sum(differences)`: PyTorch's caching
    /// allocator rounds every block up to 512 bytes, the GPU buffers here
    /// only to 4.
    pub rounding_bytes: i64,
}

fn precision(dtype: DType) -> Precision {
    match dtype {
        DType::F32 => Precision::Fp32,
        DType::F16 => Precision::Fp16,
    }
}

/// The `saved_bytes` of layer `name` in `spec` at `cfg`.
fn saved_bytes(spec: &ModelSpec, cfg: &TrainConfig, name: &str) -> Result<u64> {
    let estimate = vramfit_core::estimate(spec, cfg, &Overheads::default(), None)
        .map_err(BenchError::Estimate)?;
    estimate
        .layers
        .iter()
        .find(|row| row.name == name)
        .map(|row| row.saved_bytes.0)
        .ok_or_else(|| BenchError::InvalidShape {
            kernel: "estimate",
            what: format!("the estimate has no layer {name}"),
        })
}

/// Compares the transformer block's `measured` saved bytes with GPT-2's
/// block `h.1` at the same sizes.
///
/// # Errors
///
/// [`BenchError::Estimate`] if the estimator rejects the configuration.
pub fn transformer(
    shape: &TransformerBlockShape,
    dtype: DType,
    measured: u64,
) -> Result<EstimateComparison> {
    let base = vramfit_core::model_preset("gpt2")
        .map_err(BenchError::Estimate)?
        .spec;
    let ModelSpec::Transformer(gpt2) = base else {
        return Err(BenchError::InvalidShape {
            kernel: "estimate",
            what: "the gpt2 preset is not a transformer".into(),
        });
    };
    let (h, seq) = (shape.hidden as u64, shape.seq as u64);
    let spec = TransformerSpec {
        hidden: h,
        heads: shape.heads as u64,
        kv_heads: shape.heads as u64,
        head_dim: shape.head_dim() as u64,
        intermediate: 4 * h,
        layers: 3,
        max_positions: gpt2.max_positions.max(seq),
        ..gpt2
    };
    let cfg = TrainConfig {
        batch: shape.batch as u64,
        seq,
        precision: precision(dtype),
        attention: Attention::Eager,
        ..TrainConfig::default()
    };
    let estimated = saved_bytes(&ModelSpec::Transformer(spec.clone()), &cfg, "h.1")?;
    let e = dtype.size() as i64;
    let th = (shape.tokens() * shape.hidden) as i64;
    let probs = (shape.batch * shape.heads * shape.seq * shape.seq) as i64;
    let mut differences = vec![Difference {
        what: "block input vs output: the GPU block keeps its input x for ln_1; the estimator counts a tensor in the layer that made \
               it, so h.1's row holds its output (kept by h.2's ln_1) instead of its input (made by h.0): same size"
            .into(),
        bytes: 0,
        phrase: super::Phrase::new("block-input-vs-output", &[]),
    }];
    if spec.attention_dropout > 0.0 {
        differences.push(Difference {
            what: format!(
                "attention dropout (p = {}): PyTorch keeps the dropped-out probabilities for the context bmm and a 1-byte mask, besides \
                 the softmax output (B·heads·S² × ({e} + 1) bytes); the GPU block has no dropout",
                spec.attention_dropout
            ),
            bytes: probs * (e + 1),
            phrase: super::Phrase::new("attention-dropout", &[&spec.attention_dropout.to_string(), &e.to_string()]),
        });
    }
    if spec.hidden_dropout > 0.0 {
        differences.push(Difference {
            what: format!(
                "residual dropouts (p = {}): two 1-byte masks of B·S·h",
                spec.hidden_dropout
            ),
            bytes: 2 * th,
            phrase: super::Phrase::new("residual-dropout", &[&spec.hidden_dropout.to_string()]),
        });
    }
    if !spec.fused_gelu {
        differences.push(Difference {
            what:
                "gelu_new as eager ops: tanh's output and both factors of the final product (0.5·x, 1 + tanh) are saved, 3 × B·S·4h; the \
                   GPU GELU backward recomputes them from the saved input"
                    .into(),
            bytes: 3 * 4 * th * e,
            phrase: super::Phrase::new("gelu-new", &[]),
        });
    }
    Ok(comparison(
        format!(
            "GPT-2, 3 blocks, hidden {h}, {} heads, eager attention",
            shape.heads
        ),
        "h.1",
        dtype,
        estimated,
        measured,
        differences,
    ))
}

/// Compares the bottleneck's `measured` saved bytes with block 1 of the
/// ResNet-50 stage with the same channels, or `None` when no stage has
/// `shape.channels` (256, 512, 1024, 2048) or the width exceeds the stage's.
///
/// # Errors
///
/// [`BenchError::Estimate`] if the estimator rejects the configuration.
pub fn bottleneck(
    shape: &BottleneckShape,
    dtype: DType,
    measured: u64,
) -> Result<Option<EstimateComparison>> {
    let Some(stage) = (0..4).find(|s| shape.channels == 256 << s) else {
        return Ok(None);
    };
    let planes = 64 << stage;
    if shape.width == 0 || shape.width > planes {
        return Ok(None);
    }
    let spec = ModelSpec::ResNet(ResNetSpec {
        stages: [3, 4, 6, 3],
        bottleneck: true,
        classes: 1000,
    });
    let keep = shape.width as f64 / planes as f64;
    let image = (shape.side << stage) as u64 * 4;
    let cfg = TrainConfig {
        batch: shape.batch as u64,
        image,
        precision: precision(dtype),
        keep_conv: keep,
        ..TrainConfig::default()
    };
    let layer = format!("layer{}.1", stage + 1);
    let estimated = saved_bytes(&spec, &cfg, &layer)?;
    let input = (shape.input_len() as u64 * dtype.size()).next_multiple_of(4) as i64;
    let differences = vec![Difference {
        what: "block input: the GPU block lists x, which conv1 keeps; the estimator counts a tensor in the layer that made it, so x is \
               in the previous block's row (its output), while this block's output (kept by the last ReLU and the next conv1, one \
               storage) is counted here as it is in the GPU list"
            .into(),
        bytes: -input,
        phrase: super::Phrase::new("resnet-block-input", &[]),
    }];
    let mut differences = differences;
    if dtype == DType::F16
        && saved_bytes(
            &spec,
            &TrainConfig {
                precision: Precision::Fp32,
                ..cfg
            },
            &layer,
        )? == estimated
    {
        // Six activations besides x: conv1..2 and their ReLUs at `width`
        // channels, conv3 and the output at `channels`.
        let (b, hw) = (shape.batch, shape.side * shape.side);
        let elements = (4 * b * shape.width * hw + 2 * b * shape.channels * hw) as i64;
        differences.push(Difference {
            what: "the estimator keeps a pure-fp16 ResNet's activations in fp32 (its image input is fp32 and no cast to half is \
                   lowered, so every conv runs in fp32): 2 extra bytes per element of the six activations besides x"
                .into(),
            bytes: 2 * elements,
            phrase: super::Phrase::new("fp16-resnet-in-fp32", &[]),
        });
    }
    let model = format!("ResNet-50 image {image}, keep_conv {keep}");
    Ok(Some(comparison(
        model,
        &layer,
        dtype,
        estimated,
        measured,
        differences,
    )))
}

fn comparison(
    model: String,
    layer: &str,
    dtype: DType,
    estimated: u64,
    measured: u64,
    differences: Vec<Difference>,
) -> EstimateComparison {
    let explained: i64 = differences.iter().map(|d| d.bytes).sum();
    let rounding_bytes = estimated as i64 - measured as i64 - explained;
    EstimateComparison {
        model,
        layer: layer.to_string(),
        precision: precision(dtype).to_string(),
        estimated_bytes: estimated,
        measured_bytes: measured,
        differences,
        rounding_bytes,
    }
}
