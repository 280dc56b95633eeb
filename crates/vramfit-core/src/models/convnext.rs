//! torchvision's ConvNeXt: a 4×4 patchify stem with `LayerNorm2d`, then
//! stages of `CNBlock`s (7×7 depthwise conv, permute, LayerNorm, Linear 4×,
//! GELU, Linear, permute back, layer scale, stochastic depth, in-place
//! residual sum) joined by `LayerNorm2d` + 2×2 stride-2 convs.
//!
//! Source: `torchvision/models/convnext.py` (`convnext_tiny`, `CNBlock`,
//! `LayerNorm2d`, `ConvNeXt`).

use super::ModelSpec;
use super::cnn::{check_side, classifier_loss, image_input};
use super::family::{Family, Group, ModelPreset};
use crate::builder::Builder;
use crate::error::Error;
use crate::graph::TensorId;
use crate::nn::Conv;
use serde::{Deserialize, Serialize};

/// A torchvision ConvNeXt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConvNextSpec {
    /// Blocks per stage (Tiny: `[3, 3, 9, 3]`).
    pub depths: [u64; 4],
    /// Channels per stage (Tiny: `[96, 192, 384, 768]`).
    pub dims: [u64; 4],
    /// The last block's stochastic depth probability (Tiny: 0.1), ramped
    /// linearly from 0 at the first block.
    pub stochastic_depth: f64,
    /// Output classes.
    pub classes: u64,
}

/// Lowers a ConvNeXt for square images of side `image`.
pub fn lower(b: &mut Builder, c: &ConvNextSpec, image: u64) -> Result<(), Error> {
    let blocks = c.depths.iter().fold(0u64, |a, &n| a.saturating_add(n));
    super::check_dimension("ConvNeXt blocks (all stages)", blocks, super::MAX_LAYERS)?;
    super::check_dimension("ConvNeXt classes", c.classes, super::MAX_WIDTH)?;
    for &d in &c.dims {
        super::check_dimension("ConvNeXt channels", d, super::MAX_WIDTH)?;
        super::check_elements("a ConvNeXt block's MLP weight (4 × channels²)", &[4, d, d])?;
        super::check_elements(
            "a ConvNeXt block's MLP activation per sample (4 × channels × side²)",
            &[4, d, image / 4, image / 4],
        )?;
    }
    // torchvision's `stochastic_depth` refuses a probability outside [0, 1].
    if !(0.0..=1.0).contains(&c.stochastic_depth) {
        return Err(Error::InvalidModel(format!(
            "ConvNeXt's stochastic depth probability must be within 0 and 1, got {}",
            c.stochastic_depth
        )));
    }
    let (x, labels) = image_input(b, image);
    b.layer("features.0");
    let mut stem = Conv::new(3, c.dims[0], 4, 4, 0);
    stem.bias = true;
    let (x, mut side) = b.conv2d("features.0.0", x, stem, image);
    let mut x = b.layernorm2d("features.0.1", x, c.dims[0]);
    check_side(side, "ConvNeXt")?;
    let mut block_id = 0u64;
    let mut idx = 1;
    for (stage, (&depth, &dim)) in c.depths.iter().zip(&c.dims).enumerate() {
        for i in 0..depth {
            b.layer(&format!("features.{idx}.{i}"));
            b.begin_block();
            // `stochastic_depth_prob * stage_block_id / (total_stage_blocks - 1.0)`.
            let p = c.stochastic_depth * block_id as f64 / (blocks.max(2) - 1) as f64;
            x = cn_block(b, x, dim, side, p);
            block_id += 1;
            b.end_block();
        }
        idx += 1;
        if let Some(&next) = c.dims.get(stage + 1) {
            b.layer(&format!("features.{idx}"));
            let y = b.layernorm2d(&format!("features.{idx}.0"), x, dim);
            let mut down = Conv::new(dim, next, 2, 2, 0);
            down.bias = true;
            (x, side) = b.conv2d(&format!("features.{idx}.1"), y, down, side);
            check_side(side, "ConvNeXt")?;
            idx += 1;
        }
    }
    let last = c.dims[3];
    b.layer("classifier");
    let pooled = b.avgpool("avgpool", x, last, 1);
    let normed = b.layernorm2d("classifier.0", pooled, last);
    let flat = b.view(normed);
    let logits = b.linear("classifier.2", flat, last, c.classes, true);
    classifier_loss(b, logits, labels, c.classes);
    Ok(())
}

/// One `CNBlock` of `dim` channels on `side`×`side` pixels with stochastic
/// depth probability `p`.
fn cn_block(b: &mut Builder, input: TensorId, dim: u64, side: u64, p: f64) -> TensorId {
    let dw = Conv {
        groups: dim,
        bias: true,
        ..Conv::new(dim, dim, 7, 1, 3)
    };
    let (y, _) = b.conv2d("block.0", input, dw, side);
    let y = b.view(y); // Permute([0, 2, 3, 1])
    let y = b.layernorm("block.2", y, dim, true);
    let y = b.linear("block.3", y, dim, 4 * dim, true);
    let y = b.activation("block.4", y);
    let y = b.linear("block.5", y, 4 * dim, dim, true);
    let y = b.view(y); // Permute([0, 3, 1, 2])
    let y = b.mul_param("layer_scale", y, dim);
    let y = b.stochastic_depth("stochastic_depth", y, p);
    b.add_inplace("residual", y, input)
}

/// torchvision's ConvNeXt (presets only).
pub const FAMILY: Family = Family {
    imports: &[],
    presets,
};

/// ConvNeXt-T and -L (torchvision's `convnext_tiny`, `convnext_large`).
fn presets() -> Vec<ModelPreset> {
    vec![
        ModelPreset::new(
            "convnext_tiny",
            "ConvNeXt-T",
            Group::Cnn,
            ModelSpec::ConvNext(ConvNextSpec {
                depths: [3, 3, 9, 3],
                dims: [96, 192, 384, 768],
                stochastic_depth: 0.1,
                classes: 1000,
            }),
        ),
        ModelPreset::new(
            "convnext_large",
            "ConvNeXt-L",
            Group::Cnn,
            ModelSpec::ConvNext(ConvNextSpec {
                depths: [3, 3, 27, 3],
                dims: [192, 384, 768, 1536],
                stochastic_depth: 0.5,
                classes: 1000,
            }),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TrainConfig;
    use crate::error::Inapplicable;

    fn tiny() -> ConvNextSpec {
        match presets().first().map(|p| p.spec.clone()) {
            Some(ModelSpec::ConvNext(c)) => c,
            other => panic!("not a ConvNeXt: {other:?}"),
        }
    }

    fn lower_at(c: ConvNextSpec, image: u64) -> Result<crate::graph::Graph, Error> {
        ModelSpec::ConvNext(c).lower(&TrainConfig {
            image,
            ..TrainConfig::default()
        })
    }

    #[test]
    fn an_image_the_downsampling_shrinks_to_nothing_is_refused() {
        // 4× stem, then three 2× downsamplings: 32 px is the least that leaves a pixel.
        assert!(lower_at(tiny(), 32).is_ok());
        assert!(matches!(
            lower_at(tiny(), 16),
            Err(Error::NotApplicable(Inapplicable::ImageTooSmall { .. }))
        ));
    }

    #[test]
    fn channels_whose_weights_overflow_are_refused() {
        let c = ConvNextSpec {
            dims: [96, 96, 96, crate::models::MAX_WIDTH],
            ..tiny()
        };
        assert!(matches!(lower_at(c, 64), Err(Error::TooLarge { .. })));
    }

    #[test]
    fn pruning_is_refused_as_not_modelled() {
        let prune = [
            TrainConfig {
                keep_mlp: 0.5,
                ..TrainConfig::default()
            },
            TrainConfig {
                keep_conv: 0.5,
                ..TrainConfig::default()
            },
        ];
        for cfg in prune {
            assert!(matches!(
                ModelSpec::ConvNext(tiny()).lower(&cfg),
                Err(Error::NotApplicable(Inapplicable::PruneNotModelled {
                    model: "ConvNeXt"
                }))
            ));
        }
    }

    #[test]
    fn a_stochastic_depth_outside_zero_to_one_is_refused() {
        for p in [-0.1, 1.5, f64::NAN] {
            let c = ConvNextSpec {
                stochastic_depth: p,
                ..tiny()
            };
            assert!(
                matches!(lower_at(c, 64), Err(Error::InvalidModel(_))),
                "{p}"
            );
        }
    }
}
