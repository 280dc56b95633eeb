//! torchvision's EfficientNet-B0: MBConv blocks (1×1 expansion, depthwise
//! conv, squeeze-and-excitation, 1×1 projection) with in-place SiLU and
//! stochastic depth on the residual branches.
//!
//! Source: `torchvision/models/efficientnet.py` (`_efficientnet_conf`,
//! `MBConv`, `EfficientNet`), `torchvision/ops/{misc,stochastic_depth}.py`.

use super::ModelSpec;
use super::cnn::{check_side, classifier_loss, conv_bn_act, image_input};
use super::family::{Family, Group, ModelPreset};
use super::mobilenet_v3::make_divisible;
use crate::builder::Builder;
use crate::error::Error;
use crate::nn::Conv;
use crate::nn_cnn::{Act, Se};
use serde::{Deserialize, Serialize};

/// A torchvision EfficientNet (B0's stage table, width and depth 1.0).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EfficientNetSpec {
    /// Output classes.
    pub classes: u64,
}

/// `_efficientnet_conf("efficientnet_b0")`: expansion, kernel, first stride,
/// input channels, output channels, blocks.
const B0: [(u64, u64, u64, u64, u64, u64); 7] = [
    (1, 3, 1, 32, 16, 1),
    (6, 3, 2, 16, 24, 2),
    (6, 5, 2, 24, 40, 2),
    (6, 3, 2, 40, 80, 3),
    (6, 5, 1, 80, 112, 3),
    (6, 5, 2, 112, 192, 4),
    (6, 3, 1, 192, 320, 1),
];

/// B0's stochastic depth probability (the `efficientnet_b0` default) and
/// classifier dropout.
const STOCHASTIC_DEPTH: f64 = 0.2;
const DROPOUT: f64 = 0.2;

/// Lowers an EfficientNet-B0 for square images of side `image`.
pub fn lower(b: &mut Builder, e: &EfficientNetSpec, image: u64) -> Result<(), Error> {
    super::check_dimension("EfficientNet classes", e.classes, super::MAX_WIDTH)?;
    let (x, labels) = image_input(b, image);
    b.layer("features.0");
    let stem = Conv::new(3, 32, 3, 2, 1);
    let (mut x, mut side) =
        conv_bn_act(b, "features.0.0", "features.0.1", x, stem, image, Act::Silu);
    check_side(side, "EfficientNet")?;
    let total: u64 = B0.iter().map(|s| s.5).sum();
    let mut block_id = 0u64;
    for (stage, &(expand, kernel, stride, cin, cout, n)) in B0.iter().enumerate() {
        for i in 0..n {
            let (cin, stride) = if i == 0 { (cin, stride) } else { (cout, 1) };
            b.layer(&format!("features.{}.{i}", stage + 1));
            b.begin_block();
            let p = STOCHASTIC_DEPTH * block_id as f64 / total as f64;
            (x, side) = mbconv(b, x, side, (expand, kernel, stride, cin, cout), p);
            block_id += 1;
            b.end_block();
            check_side(side, "EfficientNet")?;
        }
    }
    let last_in = B0.last().map_or(32, |s| s.4);
    let last = 4 * last_in;
    b.layer("features.8");
    let (x, _) = conv_bn_act(
        b,
        "features.8.0",
        "features.8.1",
        x,
        Conv::new(last_in, last, 1, 1, 0),
        side,
        Act::Silu,
    );
    b.layer("classifier");
    let pooled = b.avgpool("avgpool", x, last, 1);
    let flat = b.view(pooled);
    let h = b.dropout_inplace("classifier.0", flat, DROPOUT);
    let logits = b.linear("classifier.1", h, last, e.classes, true);
    classifier_loss(b, logits, labels, e.classes);
    Ok(())
}

/// One `MBConv`: returns the output and its side.
fn mbconv(
    b: &mut Builder,
    x: crate::graph::TensorId,
    side: u64,
    (expand, kernel, stride, cin, cout): (u64, u64, u64, u64, u64),
    sd_prob: f64,
) -> (crate::graph::TensorId, u64) {
    let exp = make_divisible(cin * expand, 8);
    let mut y = x;
    let mut j = 0;
    if exp != cin {
        (y, _) = conv_bn_act(
            b,
            &format!("block.{j}.0"),
            &format!("block.{j}.1"),
            y,
            Conv::new(cin, exp, 1, 1, 0),
            side,
            Act::Silu,
        );
        j += 1;
    }
    let dw = Conv {
        groups: exp,
        ..Conv::new(exp, exp, kernel, stride, (kernel - 1) / 2)
    };
    let (z, zs) = conv_bn_act(
        b,
        &format!("block.{j}.0"),
        &format!("block.{j}.1"),
        y,
        dw,
        side,
        Act::Silu,
    );
    j += 1;
    let squeeze = (cin / 4).max(1);
    let z = b.squeeze_excitation(
        &format!("block.{j}"),
        z,
        Se {
            channels: exp,
            squeeze,
            act: Act::Silu,
            hard_sigmoid: false,
        },
        zs,
    );
    j += 1;
    let (z, _) = conv_bn_act(
        b,
        &format!("block.{j}.0"),
        &format!("block.{j}.1"),
        z,
        Conv::new(exp, cout, 1, 1, 0),
        zs,
        Act::None,
    );
    if stride == 1 && cin == cout {
        let z = b.stochastic_depth("stochastic_depth", z, sd_prob);
        (b.add_inplace("residual", z, x), zs)
    } else {
        (z, zs)
    }
}

/// torchvision's EfficientNet (presets only).
pub const FAMILY: Family = Family {
    imports: &[],
    presets,
};

/// EfficientNet-B0.
fn presets() -> Vec<ModelPreset> {
    vec![ModelPreset::new(
        "efficientnet_b0",
        "EfficientNet-B0",
        Group::Cnn,
        ModelSpec::EfficientNet(EfficientNetSpec { classes: 1000 }),
    )]
}
