//! torchvision's RegNet (X and Y): a 3×3 stride-2 stem, then stages of
//! `ResBottleneckBlock`s (1×1 conv, 3×3 grouped conv, squeeze-and-excitation
//! for Y, 1×1 conv; a 1×1 projection on the shortcut where the shape
//! changes), `relu(shortcut + f(x))`.
//!
//! Source: `torchvision/models/regnet.py` (`BlockParams.from_init_params`,
//! `BottleneckTransform`, `ResBottleneckBlock`, `RegNet`).

use super::ModelSpec;
use super::cnn::{check_side, classifier_loss, conv_bn_act, image_input};
use super::family::{Family, Group, ModelPreset};
use crate::builder::Builder;
use crate::error::Error;
use crate::graph::TensorId;
use crate::nn::Conv;
use crate::nn_cnn::{Act, Se};
use serde::{Deserialize, Serialize};

/// A torchvision RegNet, by its per-stage parameters (what
/// `BlockParams.from_init_params` derives from `depth`, `w_0`, `w_a`, `w_m`
/// and `group_width`). Each stage's first block has stride 2.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RegNetSpec {
    /// Blocks per stage.
    pub depths: Vec<u64>,
    /// Output channels per stage.
    pub widths: Vec<u64>,
    /// Channels per group of each stage's 3×3 conv.
    pub group_widths: Vec<u64>,
    /// Squeeze-and-excitation width as a fraction of each block's input
    /// channels (Y models: 0.25; X models: none).
    pub se_ratio: Option<f64>,
    /// Output classes.
    pub classes: u64,
}

/// The stem's output channels (`RegNet(stem_width=32)`).
const STEM: u64 = 32;

/// Lowers a RegNet for square images of side `image`.
pub fn lower(b: &mut Builder, r: &RegNetSpec, image: u64) -> Result<(), Error> {
    let stages = r.depths.len();
    if stages == 0 || r.widths.len() != stages || r.group_widths.len() != stages {
        return Err(Error::InvalidModel(format!(
            "a RegNet lists one depth, width and group width per stage (got {}, {} and {})",
            r.depths.len(),
            r.widths.len(),
            r.group_widths.len()
        )));
    }
    let blocks = r.depths.iter().fold(0u64, |a, &n| a.saturating_add(n));
    super::check_dimension("RegNet blocks (all stages)", blocks, super::MAX_LAYERS)?;
    super::check_dimension("RegNet classes", r.classes, super::MAX_WIDTH)?;
    for (&w, &g) in r.widths.iter().zip(&r.group_widths) {
        super::check_dimension("RegNet widths", w, super::MAX_WIDTH)?;
        super::check_elements("a RegNet 1×1 conv's weight (width²)", &[w, w])?;
        super::check_elements(
            "a RegNet activation per sample (width × side²)",
            &[w, image / 2, image / 2],
        )?;
        if g == 0 || w % g != 0 {
            return Err(Error::InvalidModel(format!(
                "a RegNet stage's width ({w}) must be a multiple of its group width ({g})"
            )));
        }
    }
    if let Some(r) = r.se_ratio.filter(|r| !(r.is_finite() && *r > 0.0)) {
        return Err(Error::InvalidModel(format!(
            "a RegNet's squeeze-excitation ratio must be above 0, got {r}"
        )));
    }
    let (x, labels) = image_input(b, image);
    b.layer("stem");
    let stem = Conv::new(3, STEM, 3, 2, 1);
    let (mut x, mut side) = conv_bn_act(b, "stem.0", "stem.1", x, stem, image, Act::Relu);
    check_side(side, "RegNet")?;
    let mut width_in = STEM;
    for (s, ((&depth, &width), &group)) in r
        .depths
        .iter()
        .zip(&r.widths)
        .zip(&r.group_widths)
        .enumerate()
    {
        for i in 0..depth {
            let stride = if i == 0 { 2 } else { 1 };
            b.layer(&format!("trunk_output.block{}.block{}-{i}", s + 1, s + 1));
            b.begin_block();
            (x, side) = res_bottleneck(b, x, side, width_in, width, group, stride, r.se_ratio);
            width_in = width;
            b.end_block();
            check_side(side, "RegNet")?;
        }
    }
    b.layer("head");
    let pooled = b.avgpool("avgpool", x, width_in, 1);
    let flat = b.view(pooled);
    let logits = b.linear("fc", flat, width_in, r.classes, true);
    classifier_loss(b, logits, labels, r.classes);
    Ok(())
}

/// One `ResBottleneckBlock` (bottleneck multiplier 1, as in every torchvision
/// RegNet): returns the output and its side.
#[allow(clippy::too_many_arguments)]
fn res_bottleneck(
    b: &mut Builder,
    x: TensorId,
    side: u64,
    width_in: u64,
    width: u64,
    group_width: u64,
    stride: u64,
    se_ratio: Option<f64>,
) -> (TensorId, u64) {
    let shortcut = if width_in != width || stride != 1 {
        let proj = Conv::new(width_in, width, 1, stride, 0);
        conv_bn_act(b, "proj.0", "proj.1", x, proj, side, Act::None).0
    } else {
        x
    };
    let a = Conv::new(width_in, width, 1, 1, 0);
    let (y, _) = conv_bn_act(b, "f.a.0", "f.a.1", x, a, side, Act::Relu);
    let grouped = Conv {
        groups: width / group_width.min(width).max(1),
        ..Conv::new(width, width, 3, stride, 1)
    };
    let (mut y, out_side) = conv_bn_act(b, "f.b.0", "f.b.1", y, grouped, side, Act::Relu);
    if let Some(ratio) = se_ratio {
        // `int(round(se_ratio * width_in))`: the block's input width.
        let squeeze = (ratio * width_in as f64).round() as u64;
        y = b.squeeze_excitation(
            "f.se",
            y,
            Se {
                channels: width,
                squeeze: squeeze.max(1),
                act: Act::Relu,
                hard_sigmoid: false,
            },
            out_side,
        );
    }
    let c = Conv::new(width, width, 1, 1, 0);
    let (y, _) = conv_bn_act(b, "f.c.0", "f.c.1", y, c, out_side, Act::None);
    let sum = b.add("add", shortcut, y);
    (b.relu("activation", sum, true), out_side)
}

/// torchvision's RegNet (presets only).
pub const FAMILY: Family = Family {
    imports: &[],
    presets,
};

/// RegNetX-400MF, RegNetY-400MF and RegNetY-128GF: torchvision's `BlockParams.from_init_params`
/// (X: depth 22, w_0 24, w_a 24.48, w_m 2.54, group width 16; Y: depth 16,
/// w_0 48, w_a 27.89, w_m 2.09, group width 8, SE 0.25), as it computes them.
fn presets() -> Vec<ModelPreset> {
    let p = |id, name, depths: [u64; 4], widths: [u64; 4], group: u64, se_ratio| {
        ModelPreset::new(
            id,
            name,
            Group::Cnn,
            ModelSpec::RegNet(RegNetSpec {
                depths: depths.to_vec(),
                widths: widths.to_vec(),
                group_widths: vec![group; 4],
                se_ratio,
                classes: 1000,
            }),
        )
    };
    vec![
        p(
            "regnet_x_400mf",
            "RegNetX-400MF",
            [1, 2, 7, 12],
            [32, 64, 160, 400],
            16,
            None,
        ),
        p(
            "regnet_y_400mf",
            "RegNetY-400MF",
            [1, 3, 6, 6],
            [48, 104, 208, 440],
            8,
            Some(0.25),
        ),
        // `regnet_y_128gf`: depth 27, w_0 456, w_a 160.83, w_m 2.52, group
        // width 264 through `BlockParams.from_init_params`.
        p(
            "regnet_y_128gf",
            "RegNetY-128GF",
            [2, 7, 17, 1],
            [528, 1056, 2904, 7392],
            264,
            Some(0.25),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TrainConfig;

    fn y400() -> RegNetSpec {
        match presets().get(1).map(|p| p.spec.clone()) {
            Some(ModelSpec::RegNet(r)) => r,
            other => panic!("not a RegNet: {other:?}"),
        }
    }

    fn lower_spec(r: RegNetSpec) -> Result<crate::graph::Graph, Error> {
        ModelSpec::RegNet(r).lower(&TrainConfig {
            image: 64,
            ..TrainConfig::default()
        })
    }

    #[test]
    fn widths_whose_weights_overflow_are_refused() {
        let r = RegNetSpec {
            widths: vec![48, 104, 208, crate::models::MAX_WIDTH],
            ..y400()
        };
        assert!(matches!(lower_spec(r), Err(Error::TooLarge { .. })));
    }

    #[test]
    fn stage_lists_of_different_lengths_are_refused() {
        assert!(lower_spec(y400()).is_ok());
        let r = RegNetSpec {
            widths: vec![48, 104, 208],
            ..y400()
        };
        assert!(matches!(lower_spec(r), Err(Error::InvalidModel(_))));
    }

    #[test]
    fn a_width_not_split_into_whole_groups_is_refused() {
        for group_widths in [vec![8, 8, 8, 0], vec![8, 8, 8, 48]] {
            let r = RegNetSpec {
                group_widths,
                ..y400()
            };
            assert!(matches!(lower_spec(r), Err(Error::InvalidModel(_))));
        }
    }

    #[test]
    fn a_squeeze_ratio_that_is_not_positive_is_refused() {
        for ratio in [0.0, -0.25, f64::NAN] {
            let r = RegNetSpec {
                se_ratio: Some(ratio),
                ..y400()
            };
            assert!(
                matches!(lower_spec(r), Err(Error::InvalidModel(_))),
                "{ratio}"
            );
        }
    }
}
