//! Measuring a layer: fit it to the adapter, bind it, account for what it
//! keeps, compare with the estimator, and time forward and forward +
//! backward.

use std::str::FromStr;

use super::bound::SavedTensor;
use super::estimate::{self, EstimateComparison};
use super::scaling::fit_to_device;
use super::{Bottleneck, BottleneckShape, TransformerBlock, TransformerBlockShape};
use crate::context::GpuContext;
use crate::dtype::DType;
use crate::error::{BenchError, Result};
use crate::timing::{Timer, Timing, TimingOptions, time_dispatches};

/// A layer of the suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerId {
    /// The pre-LN GPT-2 block.
    Transformer,
    /// The ResNet bottleneck block.
    Resnet,
}

impl LayerId {
    /// Both, in report order.
    pub const ALL: [LayerId; 2] = [LayerId::Transformer, LayerId::Resnet];

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            LayerId::Transformer => "transformer",
            LayerId::Resnet => "resnet",
        }
    }
}

impl FromStr for LayerId {
    type Err = BenchError;

    fn from_str(s: &str) -> Result<Self> {
        LayerId::ALL
            .into_iter()
            .find(|l| l.name() == s)
            .ok_or_else(|| BenchError::InvalidChoice {
                what: "layer",
                value: s.to_string(),
                accepted: "transformer|resnet",
            })
    }
}

/// A layer's sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase", tag = "layer")]
pub enum LayerShape {
    /// The transformer block's.
    Transformer(TransformerBlockShape),
    /// The bottleneck block's.
    Resnet(BottleneckShape),
}

impl LayerShape {
    /// Elements of the largest tensor.
    pub fn largest_tensor(&self) -> usize {
        match self {
            LayerShape::Transformer(t) => t.largest_tensor(),
            LayerShape::Resnet(r) => r.input_len().max(r.batch * r.width * r.side * r.side),
        }
    }

    /// The sizes in words.
    pub fn describe(&self) -> String {
        match self {
            LayerShape::Transformer(t) => t.describe(),
            LayerShape::Resnet(r) => r.describe(),
        }
    }

    /// The sizes scaling may change, as `(name, value)`.
    fn scalable(&self) -> Vec<(&'static str, usize)> {
        match self {
            LayerShape::Transformer(t) => vec![("batch", t.batch), ("seq", t.seq)],
            LayerShape::Resnet(r) => vec![("batch", r.batch)],
        }
    }

    /// `batch 8 -> 2, seq 1024 -> 512`: what differs from `self` in `to`.
    pub fn changes(&self, to: &LayerShape) -> String {
        let changed: Vec<String> = self
            .scalable()
            .into_iter()
            .zip(to.scalable())
            .filter(|((_, a), (_, b))| a != b)
            .map(|((name, a), (_, b))| format!("{name} {a} -> {b}"))
            .collect();
        changed.join(", ")
    }
}

/// Where layer sizes come from: a model preset and the training sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerConfig {
    /// A `vramfit-core` transformer preset for the block's hidden size and
    /// heads (`gpt2` by default; a non-transformer falls back to it).
    pub model: String,
    /// Samples.
    pub batch: usize,
    /// Tokens per sample (transformer).
    pub seq: usize,
    /// Image side (the bottleneck is ResNet-50's `layer1.1`, side / 4).
    pub image: usize,
}

impl Default for LayerConfig {
    /// GPT-2 at sequence 256, batch 2, image 224.
    fn default() -> Self {
        Self {
            model: "gpt2".into(),
            batch: 2,
            seq: 256,
            image: 224,
        }
    }
}

impl LayerConfig {
    /// The shape of layer `id` under this configuration.
    ///
    /// # Errors
    ///
    /// [`BenchError::Estimate`] for an unknown model preset.
    pub fn shape(&self, id: LayerId) -> Result<LayerShape> {
        Ok(match id {
            LayerId::Transformer => {
                let spec = vramfit_core::model_preset(&self.model)
                    .map_err(BenchError::Estimate)?
                    .spec;
                let (hidden, heads) = match spec {
                    vramfit_core::ModelSpec::Transformer(t) => {
                        (t.hidden as usize, t.heads as usize)
                    }
                    _ => (768, 12),
                };
                LayerShape::Transformer(TransformerBlockShape {
                    batch: self.batch,
                    seq: self.seq,
                    hidden,
                    heads,
                })
            }
            LayerId::Resnet => LayerShape::Resnet(BottleneckShape {
                batch: self.batch,
                channels: 256,
                width: 64,
                side: (self.image / 4).max(1),
            }),
        })
    }
}

/// Median and spread of one timed pass.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PassTiming {
    /// The clock used.
    pub timer: Timer,
    /// Median milliseconds.
    pub median_ms: f64,
    /// 10th percentile, milliseconds.
    pub p10_ms: f64,
    /// 90th percentile, milliseconds.
    pub p90_ms: f64,
    /// GFLOP/s of the matmuls and convolutions at the median time.
    pub gflops: f64,
}

impl PassTiming {
    fn new(timing: &Timing, flops: f64) -> Self {
        Self {
            timer: timing.timer,
            median_ms: timing.median() * 1e3,
            p10_ms: timing.quantile(0.1) * 1e3,
            p90_ms: timing.quantile(0.9) * 1e3,
            gflops: flops / timing.median() / 1e9,
        }
    }
}

/// One layer in one type: what it keeps, what the estimator says, how fast.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LayerResult {
    /// `transformer` or `resnet`.
    pub layer: String,
    /// The element type.
    pub dtype: DType,
    /// The sizes that ran.
    pub shape: LayerShape,
    /// How the requested sizes were scaled to fit the adapter, if they were.
    pub scaling: Option<String>,
    /// The tensors kept for backward, with their real buffer sizes.
    pub saved: Vec<SavedTensor>,
    /// The sum of `saved[].allocated_bytes`.
    pub saved_bytes: u64,
    /// Every buffer the bound layer allocated (weights, saved tensors,
    /// temporaries, gradients).
    pub allocated_bytes: u64,
    /// Forward FLOPs of the matmuls and convolutions.
    pub forward_flops: f64,
    /// Backward FLOPs of the matmuls and convolutions.
    pub backward_flops: f64,
    /// The forward pass, if timed.
    pub forward: Option<PassTiming>,
    /// Forward then backward, if timed.
    pub forward_backward: Option<PassTiming>,
    /// The estimator's number for the same layer, if it has one.
    pub estimate: Option<EstimateComparison>,
    /// Anything else worth knowing (e.g. why there is no estimate).
    pub notes: Vec<String>,
    /// `scaling` then `notes` as [`super::Phrase`]s, in that order.
    #[serde(default)]
    pub phrases: Vec<super::Phrase>,
}

/// Fits `requested` to the adapter, binds it in `dtype`, accounts for its
/// saved tensors, compares with the estimator and, with `timing`, times
/// forward and forward + backward.
///
/// # Errors
///
/// Any error of fitting, building, binding or timing the layer. An
/// estimator error becomes a note instead.
pub async fn measure_layer(
    ctx: &GpuContext,
    requested: LayerShape,
    dtype: DType,
    timing: Option<&TimingOptions>,
    clock: &dyn Fn() -> f64,
) -> Result<LayerResult> {
    let scaled = fit_to_device(ctx, requested, dtype)?;
    let (layer, bound) = match scaled.shape {
        LayerShape::Transformer(shape) => (
            "transformer",
            TransformerBlock::new(ctx, dtype)?.bind(ctx, &shape, 1)?,
        ),
        LayerShape::Resnet(shape) => ("resnet", Bottleneck::new(ctx, dtype)?.bind(ctx, &shape, 1)?),
    };
    let saved_bytes = bound.saved_bytes();
    let mut notes = Vec::new();
    let mut phrases: Vec<super::Phrase> = scaled.phrase.iter().cloned().collect();
    let estimate = match scaled.shape {
        LayerShape::Transformer(shape) => {
            estimate::transformer(&shape, dtype, saved_bytes).map(Some)
        }
        LayerShape::Resnet(shape) => estimate::bottleneck(&shape, dtype, saved_bytes),
    };
    let estimate = estimate.unwrap_or_else(|error| {
        notes.push(format!("no estimate: {error}"));
        phrases.push(super::Phrase::new("no-estimate", &[&error.to_string()]));
        None
    });
    if estimate.is_none() && notes.is_empty() {
        notes.push("no estimate: no ResNet-50 stage has these channels".into());
        phrases.push(super::Phrase::new("no-resnet-stage", &[]));
    }
    let (forward_flops, backward_flops) = (bound.flops(false), bound.flops(true));
    let (forward, forward_backward) = match timing {
        Some(options) => {
            let fwd = time_dispatches(ctx, &bound.forward, options, clock).await?;
            let both: Vec<_> = bound
                .forward
                .iter()
                .chain(&bound.backward)
                .cloned()
                .collect();
            let fwd_bwd = time_dispatches(ctx, &both, options, clock).await?;
            (
                Some(PassTiming::new(&fwd, forward_flops)),
                Some(PassTiming::new(&fwd_bwd, forward_flops + backward_flops)),
            )
        }
        None => (None, None),
    };
    Ok(LayerResult {
        layer: layer.to_string(),
        dtype,
        shape: scaled.shape,
        scaling: scaled.note,
        saved: bound.saved.clone(),
        saved_bytes,
        allocated_bytes: bound.allocated_bytes(),
        forward_flops,
        backward_flops,
        forward,
        forward_backward,
        estimate,
        notes,
        phrases,
    })
}
