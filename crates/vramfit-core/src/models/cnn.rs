//! Convolutional families as torchvision implements them: ResNet (basic and
//! bottleneck blocks, v1.5 stride placement), VGG and MobileNetV2.
//!
//! Sources: `torchvision/models/{resnet,vgg,mobilenetv2}.py`.

use super::ModelSpec;
use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use crate::builder::Builder;
use crate::dtype::DType;
use crate::error::{Error, Inapplicable};
use crate::graph::TensorId;
use crate::nn::Conv;
use crate::nn_cnn::Act;
use serde::{Deserialize, Serialize};

/// A torchvision ResNet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResNetSpec {
    /// Blocks per stage (e.g. `[3, 4, 6, 3]`).
    pub stages: [u64; 4],
    /// Bottleneck (ResNet-50+) or basic (ResNet-18/34) blocks.
    pub bottleneck: bool,
    /// Output classes.
    pub classes: u64,
}

/// A torchvision VGG.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VggSpec {
    /// Conv channels, with 0 standing for a max-pool (torchvision's `"M"`).
    pub layers: Vec<u64>,
    /// Whether each conv is followed by BatchNorm.
    pub batch_norm: bool,
    /// Output classes.
    pub classes: u64,
}

/// A torchvision MobileNetV2.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MobileNetV2Spec {
    /// Output classes.
    pub classes: u64,
}

pub(super) fn image_input(b: &mut Builder, image: u64) -> (TensorId, TensorId) {
    b.layer("input");
    let x = b.input("images", 3 * image * image, b.float_input_dtype());
    let y = b.input("labels", 1, DType::I64);
    (x, y)
}

pub(super) fn classifier_loss(b: &mut Builder, x: TensorId, labels: TensorId, classes: u64) {
    b.cross_entropy("loss", x, labels, 1, classes);
    b.returns(x);
}

pub(super) fn check_side(side: u64, model: &'static str) -> Result<(), Error> {
    if side == 0 {
        return Err(Error::NotApplicable(Inapplicable::ImageTooSmall { model }));
    }
    Ok(())
}

/// Conv → BatchNorm → in-place activation, torchvision's
/// `Conv2dNormActivation` (and ResNet's and VGG's own blocks).
pub(super) fn conv_bn_act(
    b: &mut Builder,
    name: &str,
    bn: &str,
    x: TensorId,
    c: Conv,
    side: u64,
    act: Act,
) -> (TensorId, u64) {
    let (y, side) = b.conv2d(name, x, c, side);
    let y = b.batchnorm2d(bn, y, c.cout);
    let y = b.activation_inplace(&format!("{name}.act"), y, act);
    (y, side)
}

/// `channels` scaled by the kept fraction, at least one.
fn pruned(channels: u64, keep: f64) -> u64 {
    ((channels as f64 * keep).round() as u64).clamp(1, channels.max(1))
}

/// Lowers a ResNet for square images of side `image`, keeping `keep` of each
/// block's inner channels (structured pruning; 1 = unpruned).
pub fn lower_resnet(b: &mut Builder, r: &ResNetSpec, image: u64, keep: f64) -> Result<(), Error> {
    let blocks = r.stages.iter().fold(0u64, |a, &n| a.saturating_add(n));
    super::check_dimension(
        "ResNet residual blocks (all stages)",
        blocks,
        super::MAX_LAYERS,
    )?;
    super::check_dimension("ResNet classes", r.classes, super::MAX_WIDTH)?;
    let (x, labels) = image_input(b, image);
    b.layer("stem");
    let (x, side) = conv_bn_act(
        b,
        "conv1",
        "bn1",
        x,
        Conv::new(3, 64, 7, 2, 3),
        image,
        Act::Relu,
    );
    let (mut x, mut side) = b.maxpool("maxpool", x, Conv::new(64, 64, 3, 2, 1), side);
    check_side(side, "ResNet")?;
    let expansion = if r.bottleneck { 4 } else { 1 };
    let mut inplanes = 64;
    for (stage, &blocks) in r.stages.iter().enumerate() {
        let planes = 64u64 << stage;
        for i in 0..blocks {
            let stride = if stage > 0 && i == 0 { 2 } else { 1 };
            b.layer(&format!("layer{}.{}", stage + 1, i));
            b.begin_block();
            let identity = x;
            let inner = pruned(planes, keep);
            let (out, out_side) = if r.bottleneck {
                let (y, s) = conv_bn_act(
                    b,
                    "conv1",
                    "bn1",
                    x,
                    Conv::new(inplanes, inner, 1, 1, 0),
                    side,
                    Act::Relu,
                );
                let (y, s) = conv_bn_act(
                    b,
                    "conv2",
                    "bn2",
                    y,
                    Conv::new(inner, inner, 3, stride, 1),
                    s,
                    Act::Relu,
                );
                conv_bn_act(
                    b,
                    "conv3",
                    "bn3",
                    y,
                    Conv::new(inner, planes * 4, 1, 1, 0),
                    s,
                    Act::None,
                )
            } else {
                let (y, s) = conv_bn_act(
                    b,
                    "conv1",
                    "bn1",
                    x,
                    Conv::new(inplanes, inner, 3, stride, 1),
                    side,
                    Act::Relu,
                );
                conv_bn_act(
                    b,
                    "conv2",
                    "bn2",
                    y,
                    Conv::new(inner, planes, 3, 1, 1),
                    s,
                    Act::None,
                )
            };
            let identity = if stride != 1 || inplanes != planes * expansion {
                conv_bn_act(
                    b,
                    "downsample.0",
                    "downsample.1",
                    identity,
                    Conv::new(inplanes, planes * expansion, 1, stride, 0),
                    side,
                    Act::None,
                )
                .0
            } else {
                identity
            };
            // `out += identity` is in place (no new storage, saves nothing), then in-place ReLU.
            let summed = b.add_inplace("add_identity", out, identity);
            x = b.relu("relu", summed, true);
            side = out_side;
            inplanes = planes * expansion;
            b.end_block();
            check_side(side, "ResNet")?;
        }
    }
    b.layer("head");
    let pooled = b.avgpool("avgpool", x, inplanes, 1);
    let flat = b.view(pooled);
    let logits = b.linear("fc", flat, inplanes, r.classes, true);
    classifier_loss(b, logits, labels, r.classes);
    Ok(())
}

/// Lowers a VGG for square images of side `image`, keeping `keep` of each conv's channels.
pub fn lower_vgg(b: &mut Builder, v: &VggSpec, image: u64, keep: f64) -> Result<(), Error> {
    super::check_dimension("VGG layers", v.layers.len() as u64 + 1, super::MAX_LAYERS)?;
    super::check_dimension("VGG classes", v.classes, super::MAX_WIDTH)?;
    let (mut x, labels) = image_input(b, image);
    let (mut side, mut cin) = (image, 3u64);
    let mut idx = 0usize;
    for &c in &v.layers {
        let c = if c == 0 { 0 } else { pruned(c, keep) };
        b.layer(&format!("features.{idx}"));
        if c == 0 {
            let (y, s) = b.maxpool(
                &format!("features.{idx}"),
                x,
                Conv::new(cin, cin, 2, 2, 0),
                side,
            );
            x = y;
            side = s;
            idx += 1;
            check_side(side, "VGG")?;
            continue;
        }
        super::check_dimension("VGG channels", c, super::MAX_WIDTH)?;
        super::check_elements(
            "a VGG convolution's output per sample (channels × side × side)",
            &[c, side, side],
        )?;
        super::check_elements(
            "a VGG convolution's weight (in × out channels × 3 × 3)",
            &[cin, c, 9],
        )?;
        let mut conv = Conv::new(cin, c, 3, 1, 1);
        conv.bias = true;
        let (y, s) = b.conv2d(&format!("features.{idx}"), x, conv, side);
        x = y;
        side = s;
        idx += 1;
        if v.batch_norm {
            x = b.batchnorm2d(&format!("features.{idx}"), x, c);
            idx += 1;
        }
        x = b.relu(&format!("features.{idx}"), x, true);
        idx += 1;
        cin = c;
    }
    super::check_elements(
        "VGG's first classifier layer (channels × 7 × 7 × 4096)",
        &[cin, 49, 4096],
    )?;
    b.layer("classifier");
    let pooled = b.avgpool("avgpool", x, cin, 7);
    let flat = b.view(pooled);
    let h = b.linear("classifier.0", flat, cin * 49, 4096, true);
    let h = b.relu("classifier.1", h, true);
    let h = b.dropout("classifier.2", h, 0.5);
    let h = b.linear("classifier.3", h, 4096, 4096, true);
    let h = b.relu("classifier.4", h, true);
    let h = b.dropout("classifier.5", h, 0.5);
    let logits = b.linear("classifier.6", h, 4096, v.classes, true);
    classifier_loss(b, logits, labels, v.classes);
    Ok(())
}

/// Lowers a MobileNetV2 (width 1.0) for square images of side `image`,
/// keeping `keep` of each block's expansion channels.
pub fn lower_mobilenet_v2(
    b: &mut Builder,
    m: &MobileNetV2Spec,
    image: u64,
    keep: f64,
) -> Result<(), Error> {
    super::check_dimension("MobileNetV2 classes", m.classes, super::MAX_WIDTH)?;
    let (x, labels) = image_input(b, image);
    b.layer("features.0");
    let (x, side) = conv_bn_act(
        b,
        "features.0.0",
        "features.0.1",
        x,
        Conv::new(3, 32, 3, 2, 1),
        image,
        Act::Relu6,
    );
    let (mut x, mut side, mut cin) = (x, side, 32u64);
    // (expansion t, channels c, repeats n, first stride s), torchvision's table.
    const SETTINGS: [(u64, u64, u64, u64); 7] = [
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    ];
    let mut idx = 1;
    for (t, c, n, s) in SETTINGS {
        for i in 0..n {
            let stride = if i == 0 { s } else { 1 };
            let name = format!("features.{idx}");
            b.layer(&name);
            b.begin_block();
            let hidden = if t == 1 { cin } else { pruned(cin * t, keep) };
            let input = x;
            let mut y = x;
            let mut y_side = side;
            let mut j = 0;
            if t != 1 {
                let (z, zs) = conv_bn_act(
                    b,
                    &format!("conv.{j}.0"),
                    &format!("conv.{j}.1"),
                    y,
                    Conv::new(cin, hidden, 1, 1, 0),
                    y_side,
                    Act::Relu6,
                );
                y = z;
                y_side = zs;
                j += 1;
            }
            let dw = Conv {
                groups: hidden,
                ..Conv::new(hidden, hidden, 3, stride, 1)
            };
            let (z, zs) = conv_bn_act(
                b,
                &format!("conv.{j}.0"),
                &format!("conv.{j}.1"),
                y,
                dw,
                y_side,
                Act::Relu6,
            );
            j += 1;
            let (z, zs) = conv_bn_act(
                b,
                &format!("conv.{j}"),
                &format!("conv.{}", j + 1),
                z,
                Conv::new(hidden, c, 1, 1, 0),
                zs,
                Act::None,
            );
            x = if stride == 1 && cin == c {
                b.add("residual", input, z)
            } else {
                z
            };
            side = zs;
            cin = c;
            idx += 1;
            b.end_block();
            check_side(side, "MobileNetV2")?;
        }
    }
    b.layer(&format!("features.{idx}"));
    let (x, _) = conv_bn_act(
        b,
        &format!("features.{idx}.0"),
        &format!("features.{idx}.1"),
        x,
        Conv::new(cin, 1280, 1, 1, 0),
        side,
        Act::Relu6,
    );
    b.layer("classifier");
    let pooled = b.avgpool("adaptive_avg_pool2d", x, 1280, 1);
    let flat = b.view(pooled);
    let flat = b.dropout("classifier.0", flat, 0.2);
    let logits = b.linear("classifier.1", flat, 1280, m.classes, true);
    classifier_loss(b, logits, labels, m.classes);
    Ok(())
}
/// torchvision's ResNets: the presets and vramfit's own `vramfit_resnet`
/// description (no Hugging Face config names a torchvision ResNet).
pub const RESNET: Family = Family {
    imports: &[Import {
        model_type: "vramfit_resnet",
        read: read_resnet,
    }],
    presets: resnet_presets,
};

/// torchvision's VGG (presets only).
pub const VGG: Family = Family {
    imports: &[],
    presets: vgg_presets,
};

/// torchvision's MobileNetV2 (presets only).
pub const MOBILENET_V2: Family = Family {
    imports: &[],
    presets: mobilenet_v2_presets,
};

/// vramfit's torchvision ResNet: blocks per stage (`depths`, four stages),
/// the block type and the classes (1000, ImageNet's, by default).
fn read_resnet(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let depths = f.u64_list("depths")?;
    let stages: [u64; 4] = depths.as_slice().try_into().map_err(|_| {
        Error::InvalidModel(format!(
            "depths must list the blocks of 4 stages (ResNet-50: [3, 4, 6, 3]), got {} numbers",
            depths.len()
        ))
    })?;
    // torchvision's `_make_layer` always builds a stage's first block.
    if stages.contains(&0) {
        return Err(Error::InvalidModel(
            "every ResNet stage has at least one block (depths must be 1 or more)".into(),
        ));
    }
    let bottleneck = match f.str_or("layer_type", "bottleneck")? {
        "bottleneck" => true,
        "basic" => false,
        other => {
            return Err(Error::InvalidModel(format!(
                "layer_type must be 'bottleneck' or 'basic', got '{other}'"
            )));
        }
    };
    Ok(ModelSpec::ResNet(ResNetSpec {
        stages,
        bottleneck,
        classes: f.opt_u64("num_labels")?.unwrap_or(1000),
    }))
}

/// ResNet-18 to -152.
fn resnet_presets() -> Vec<ModelPreset> {
    let p = ModelPreset::new;
    vec![
        p(
            "resnet18",
            "ResNet-18",
            Group::Cnn,
            resnet([2, 2, 2, 2], false),
        ),
        p(
            "resnet34",
            "ResNet-34",
            Group::Cnn,
            resnet([3, 4, 6, 3], false),
        ),
        p(
            "resnet50",
            "ResNet-50",
            Group::Cnn,
            resnet([3, 4, 6, 3], true),
        ),
        p(
            "resnet101",
            "ResNet-101",
            Group::Cnn,
            resnet([3, 4, 23, 3], true),
        ),
        p(
            "resnet152",
            "ResNet-152",
            Group::Cnn,
            resnet([3, 8, 36, 3], true),
        ),
    ]
}

fn resnet(stages: [u64; 4], bottleneck: bool) -> ModelSpec {
    ModelSpec::ResNet(ResNetSpec {
        stages,
        bottleneck,
        classes: 1000,
    })
}

/// VGG-16.
fn vgg_presets() -> Vec<ModelPreset> {
    let p = ModelPreset::new;
    vec![p(
        "vgg16",
        "VGG-16",
        Group::Cnn,
        ModelSpec::Vgg(VggSpec {
            layers: VGG16.to_vec(),
            batch_norm: false,
            classes: 1000,
        }),
    )]
}

/// torchvision's VGG-16 configuration "D" (0 = max-pool).
const VGG16: [u64; 18] = [
    64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0,
];

/// MobileNetV2.
fn mobilenet_v2_presets() -> Vec<ModelPreset> {
    let p = ModelPreset::new;
    vec![p(
        "mobilenet_v2",
        "MobileNetV2",
        Group::Cnn,
        ModelSpec::MobileNetV2(MobileNetV2Spec { classes: 1000 }),
    )]
}
