//! torchvision's MobileNetV3 (small and large, width 1.0): inverted
//! residuals with depthwise convs, in-place Hardswish or ReLU, and
//! squeeze-and-excitation with a Hardsigmoid gate.
//!
//! Source: `torchvision/models/mobilenetv3.py` (`_mobilenet_v3_conf`,
//! `InvertedResidual`, `MobileNetV3`), `torchvision/ops/misc.py`.

use super::ModelSpec;
use super::cnn::{check_side, classifier_loss, conv_bn_act, image_input};
use super::family::{Family, Group, ModelPreset};
use crate::builder::Builder;
use crate::error::Error;
use crate::nn::Conv;
use crate::nn_cnn::{Act, Se};
use serde::{Deserialize, Serialize};

/// Which of the two MobileNetV3 configurations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MobileNetV3Size {
    /// `mobilenet_v3_small`.
    Small,
    /// `mobilenet_v3_large`.
    Large,
}

/// A torchvision MobileNetV3.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MobileNetV3Spec {
    /// Small or large.
    pub size: MobileNetV3Size,
    /// Output classes.
    pub classes: u64,
}

/// One inverted residual: input, kernel, expanded and output channels,
/// squeeze-excitation, Hardswish (else ReLU), stride.
type Bneck = (u64, u64, u64, u64, bool, bool, u64);

/// `_mobilenet_v3_conf("mobilenet_v3_large")` at width 1.0 (channels are
/// already multiples of 8, so `_make_divisible` leaves them).
const LARGE: [Bneck; 15] = [
    (16, 3, 16, 16, false, false, 1),
    (16, 3, 64, 24, false, false, 2),
    (24, 3, 72, 24, false, false, 1),
    (24, 5, 72, 40, true, false, 2),
    (40, 5, 120, 40, true, false, 1),
    (40, 5, 120, 40, true, false, 1),
    (40, 3, 240, 80, false, true, 2),
    (80, 3, 200, 80, false, true, 1),
    (80, 3, 184, 80, false, true, 1),
    (80, 3, 184, 80, false, true, 1),
    (80, 3, 480, 112, true, true, 1),
    (112, 3, 672, 112, true, true, 1),
    (112, 5, 672, 160, true, true, 2),
    (160, 5, 960, 160, true, true, 1),
    (160, 5, 960, 160, true, true, 1),
];

/// `_mobilenet_v3_conf("mobilenet_v3_small")` at width 1.0.
const SMALL: [Bneck; 11] = [
    (16, 3, 16, 16, true, false, 2),
    (16, 3, 72, 24, false, false, 2),
    (24, 3, 88, 24, false, false, 1),
    (24, 5, 96, 40, true, true, 2),
    (40, 5, 240, 40, true, true, 1),
    (40, 5, 240, 40, true, true, 1),
    (40, 5, 120, 48, true, true, 1),
    (48, 5, 144, 48, true, true, 1),
    (48, 5, 288, 96, true, true, 2),
    (96, 5, 576, 96, true, true, 1),
    (96, 5, 576, 96, true, true, 1),
];

/// torchvision's `_make_divisible(v, divisor)`: `v` rounded to a multiple of
/// `divisor` (at least `divisor`), raised by one step if that lost over 10 %.
pub(super) fn make_divisible(v: u64, divisor: u64) -> u64 {
    let d = divisor.max(1);
    let rounded = ((v + d / 2) / d * d).max(d);
    // `new_v < 0.9 * v`, in integers.
    if 10 * rounded < 9 * v {
        rounded + d
    } else {
        rounded
    }
}

/// Lowers a MobileNetV3 for square images of side `image`.
pub fn lower(b: &mut Builder, m: &MobileNetV3Spec, image: u64) -> Result<(), Error> {
    super::check_dimension("MobileNetV3 classes", m.classes, super::MAX_WIDTH)?;
    let (setting, last_channel): (&[Bneck], u64) = match m.size {
        MobileNetV3Size::Small => (&SMALL, 1024),
        MobileNetV3Size::Large => (&LARGE, 1280),
    };
    let (x, labels) = image_input(b, image);
    b.layer("features.0");
    let stem = Conv::new(3, 16, 3, 2, 1);
    let (mut x, mut side) = conv_bn_act(
        b,
        "features.0.0",
        "features.0.1",
        x,
        stem,
        image,
        Act::Hardswish,
    );
    check_side(side, "MobileNetV3")?;
    let mut idx = 1;
    for &(cin, kernel, exp, cout, se, hs, stride) in setting {
        let name = format!("features.{idx}");
        b.layer(&name);
        b.begin_block();
        let act = if hs { Act::Hardswish } else { Act::Relu };
        let input = x;
        let mut y = x;
        let mut j = 0;
        if exp != cin {
            let c = Conv::new(cin, exp, 1, 1, 0);
            (y, _) = conv_bn_act(
                b,
                &format!("block.{j}.0"),
                &format!("block.{j}.1"),
                y,
                c,
                side,
                act,
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
            act,
        );
        y = z;
        j += 1;
        if se {
            let squeeze = make_divisible(exp / 4, 8);
            y = b.squeeze_excitation(
                &format!("block.{j}"),
                y,
                Se {
                    channels: exp,
                    squeeze,
                    act: Act::Relu,
                    hard_sigmoid: true,
                },
                zs,
            );
            j += 1;
        }
        let (z, _) = conv_bn_act(
            b,
            &format!("block.{j}.0"),
            &format!("block.{j}.1"),
            y,
            Conv::new(exp, cout, 1, 1, 0),
            zs,
            Act::None,
        );
        // `result += input` when the shape is kept.
        x = if stride == 1 && cin == cout {
            b.add_inplace("residual", z, input)
        } else {
            z
        };
        side = zs;
        idx += 1;
        b.end_block();
        check_side(side, "MobileNetV3")?;
    }
    let cin = setting.last().map_or(16, |s| s.3);
    let last_conv = 6 * cin;
    b.layer(&format!("features.{idx}"));
    let (x, _) = conv_bn_act(
        b,
        &format!("features.{idx}.0"),
        &format!("features.{idx}.1"),
        x,
        Conv::new(cin, last_conv, 1, 1, 0),
        side,
        Act::Hardswish,
    );
    b.layer("classifier");
    let pooled = b.avgpool("avgpool", x, last_conv, 1);
    let flat = b.view(pooled);
    let h = b.linear("classifier.0", flat, last_conv, last_channel, true);
    let h = b.activation_inplace("classifier.1", h, Act::Hardswish);
    let h = b.dropout_inplace("classifier.2", h, 0.2);
    let logits = b.linear("classifier.3", h, last_channel, m.classes, true);
    classifier_loss(b, logits, labels, m.classes);
    Ok(())
}

/// torchvision's MobileNetV3 (presets only).
pub const FAMILY: Family = Family {
    imports: &[],
    presets,
};

/// MobileNetV3 small and large.
fn presets() -> Vec<ModelPreset> {
    let p = |id, name, size| {
        ModelPreset::new(
            id,
            name,
            Group::Cnn,
            ModelSpec::MobileNetV3(MobileNetV3Spec {
                size,
                classes: 1000,
            }),
        )
    };
    vec![
        p(
            "mobilenet_v3_small",
            "MobileNetV3-Small",
            MobileNetV3Size::Small,
        ),
        p(
            "mobilenet_v3_large",
            "MobileNetV3-Large",
            MobileNetV3Size::Large,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::make_divisible;

    #[test]
    fn make_divisible_rounds_as_torchvision() {
        // Values torchvision computes for MobileNetV3's squeeze widths.
        assert_eq!(make_divisible(72 / 4, 8), 24);
        assert_eq!(make_divisible(96 / 4, 8), 24);
        assert_eq!(make_divisible(16 / 4, 8), 8);
        assert_eq!(make_divisible(120 / 4, 8), 32);
        assert_eq!(make_divisible(960 / 4, 8), 240);
        // Rounding down by more than 10 % goes one step up.
        assert_eq!(make_divisible(11, 8), 16);
    }
}
