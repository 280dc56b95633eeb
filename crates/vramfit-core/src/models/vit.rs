//! Vision Transformer as torchvision implements it (`vit_b_16` and friends)
//! and a plain MLP classifier. (Hugging Face's `ViTForImageClassification`,
//! the same spec with [`VitImplementation::HuggingFace`], is lowered by
//! [`super::vit_hf`].)
//!
//! Sources: `torchvision/models/vision_transformer.py`;
//! `torch/nn/functional.py::multi_head_attention_forward` (training path with
//! `need_weights=False`: packed in-projection, a contiguous copy of q/k/v,
//! `scaled_dot_product_attention`, a contiguous copy of the context).

use super::ModelSpec;
use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use crate::builder::Builder;
use crate::dtype::DType;
use crate::error::{Error, Inapplicable};
use serde::{Deserialize, Serialize};

/// A Vision Transformer (torchvision's or Hugging Face's).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VitSpec {
    /// Image side the position embedding was built for.
    pub image: u64,
    /// Patch side.
    pub patch: u64,
    /// Hidden size.
    pub hidden: u64,
    /// Encoder layers.
    pub layers: u64,
    /// Attention heads.
    pub heads: u64,
    /// MLP inner size.
    pub mlp: u64,
    /// Output classes.
    pub classes: u64,
    /// Whose code the model is.
    #[serde(default)]
    pub implementation: VitImplementation,
}

/// Whose Vision Transformer: the same parameters, different layers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VitImplementation {
    /// torchvision's `VisionTransformer`: a fused in-projection through
    /// `nn.MultiheadAttention`, always SDPA.
    #[default]
    Torchvision,
    /// `transformers`' `ViTForImageClassification`: separate q, k, v
    /// projections, eager or SDPA attention, dropout where configured.
    HuggingFace {
        /// `qkv_bias`.
        qkv_bias: bool,
        /// `hidden_dropout_prob`.
        hidden_dropout: f64,
        /// `attention_probs_dropout_prob`.
        attention_dropout: f64,
    },
}

/// An activation after an MLP layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MlpActivation {
    /// No activation.
    None,
    /// `nn.ReLU()` (not in place).
    Relu,
    /// `nn.GELU()` (exact).
    Gelu,
}

/// One `Linear` layer of an MLP and the activation after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MlpLayer {
    /// Output features.
    pub out: u64,
    /// Activation applied to the output.
    pub activation: MlpActivation,
}

/// A multi-layer perceptron classifier (`nn.Sequential` of `Linear` layers
/// with activations), then a final `Linear` to the classes and a cross-entropy loss.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MlpSpec {
    /// Input features.
    pub input: u64,
    /// Hidden layers.
    pub layers: Vec<MlpLayer>,
    /// Layers per checkpointable block.
    pub block_size: usize,
    /// Output classes.
    pub classes: u64,
}

/// Checks a ViT's layer count, widths and the sizes they imply against the
/// limits in [`super`], so that the lowering's arithmetic cannot overflow.
fn check_vit_sizes(v: &VitSpec, image: u64) -> Result<(), Error> {
    use super::{MAX_LAYERS, MAX_WIDTH, check_dimension, check_elements};
    check_dimension("ViT layers", v.layers, MAX_LAYERS)?;
    for (name, value) in [
        ("ViT hidden size", v.hidden),
        ("ViT MLP size", v.mlp),
        ("ViT classes", v.classes),
    ] {
        check_dimension(name, value, MAX_WIDTH)?;
    }
    let grid = image / v.patch.max(1);
    let tokens = grid.saturating_mul(grid).saturating_add(1);
    check_elements(
        "the ViT's patch embedding (3 × patch × patch × hidden)",
        &[3, v.patch, v.patch, v.hidden],
    )?;
    check_elements(
        "the ViT's q, k, v per sample (tokens × hidden × 3)",
        &[tokens, v.hidden, 3],
    )?;
    check_elements(
        "the ViT's MLP activations per sample (tokens × MLP size)",
        &[tokens, v.mlp],
    )?;
    check_elements("a ViT MLP layer (hidden × MLP size)", &[v.hidden, v.mlp])?;
    check_elements(
        "the ViT's attention projection (hidden × hidden × 3)",
        &[v.hidden, v.hidden, 3],
    )?;
    check_elements("the ViT's head (hidden × classes)", &[v.hidden, v.classes])
}

/// Checks a ViT's dimensions and that `image` is the side its position
/// embedding is made for.
///
/// # Errors
/// [`Inapplicable::VitImage`] for another side, [`Error::InvalidModel`]
/// for inconsistent dimensions, [`Error::TooLarge`] beyond the limits.
pub(crate) fn check_vit(v: &VitSpec, image: u64) -> Result<(), Error> {
    if image != v.image {
        return Err(Error::NotApplicable(Inapplicable::VitImage {
            fixed: v.image,
            image,
        }));
    }
    if v.patch == 0 || v.hidden == 0 || v.heads == 0 || !v.hidden.is_multiple_of(v.heads) {
        return Err(Error::InvalidModel(
            "ViT hidden size must be a positive multiple of the heads".into(),
        ));
    }
    if v.patch > image {
        return Err(Error::InvalidModel(format!(
            "the ViT's patch ({}) is larger than its image ({image})",
            v.patch
        )));
    }
    check_vit_sizes(v, image)?;
    Ok(())
}

/// Lowers a torchvision ViT; the image side must match the model's position embedding.
pub fn lower_vit(
    b: &mut Builder,
    v: &VitSpec,
    image: u64,
    attention: crate::config::Attention,
) -> Result<(), Error> {
    // torchvision always calls SDPA; CUDA picks flash for half precision, the
    // memory-efficient kernel for fp32. `flash` forces the flash layout.
    let flash = attention == crate::config::Attention::Flash
        || b.autocast_dtype().is_some()
        || b.param_dtype() != DType::F32;
    check_vit(v, image)?;
    let h = v.hidden;
    let grid = image / v.patch;
    let tokens = grid * grid + 1;
    b.layer("input");
    let x = b.input("images", 3 * image * image, b.float_input_dtype());
    let labels = b.input("labels", 1, DType::I64);
    b.layer("patch_embed");
    let conv = crate::nn::Conv {
        bias: true,
        ..crate::nn::Conv::new(3, h, v.patch, v.patch, 0)
    };
    let (x, _) = b.conv2d("conv_proj", x, conv, image);
    let cls = b.param("class_token", &[1, 1, h]);
    let pos = b.param("encoder.pos_embedding", &[1, tokens, h]);
    // cat([class_token.expand(n), x]) then `+ pos_embedding`: two new tensors, nothing saved.
    let cat = b.tensor(
        crate::graph::Numel::per_sample(tokens * h),
        b.dtype(x),
        true,
    );
    b.op(
        "cat_class_token",
        crate::graph::OpKind::Copy,
        crate::builder::OpSpec {
            inputs: vec![x],
            outputs: vec![cat],
            params: vec![cls],
            ..Default::default()
        },
    );
    // Type promotion with the (fp32 under autocast) positional embedding.
    let mut x = b.tensor(
        crate::graph::Numel::per_sample(tokens * h),
        b.param_dtype().max_size(b.dtype(cat)),
        true,
    );
    b.op(
        "add_pos_embedding",
        crate::graph::OpKind::Add,
        crate::builder::OpSpec {
            inputs: vec![cat],
            outputs: vec![x],
            params: vec![pos],
            grad_passthrough: true,
            ..Default::default()
        },
    );
    let d = h / v.heads;
    for i in 0..v.layers {
        b.layer(&format!("encoder.layers.encoder_layer_{i}"));
        b.begin_block();
        let n = b.layernorm("ln_1", x, h, true);
        // Batch-first input is transposed; linear on the transposed view reshapes through a copy.
        let nt = b.copy("self_attention.transpose", n);
        let qkv = b.linear("self_attention.in_proj", nt, h, 3 * h, true);
        let qkv = b.copy("self_attention.qkv_contiguous", qkv);
        let [q, k, vv] = split3(b, "self_attention.select_qkv", qkv, true);
        let ctx = b.fused_attention("self_attention.sdpa", (q, k, vv), None, tokens, v.heads, d);
        // `permute(2, 0, 1, 3).contiguous()`: flash attention allocates its
        // output like q (here laid out [tokens, batch, heads, dim]), so this is
        // a no-op; the memory-efficient kernel (chosen for fp32 on CUDA)
        // allocates [batch, tokens, heads, dim], which must be copied.
        let ctx = if flash {
            ctx
        } else {
            b.copy("self_attention.merge_heads", ctx)
        };
        let o = b.linear("self_attention.out_proj", ctx, h, h, true);
        let r = b.add("residual_1", o, x);
        let n2 = b.layernorm("ln_2", r, h, true);
        let m = b.linear("mlp.0", n2, h, v.mlp, true);
        let m = b.activation("mlp.1", m);
        let m = b.linear("mlp.3", m, v.mlp, h, true);
        x = b.add("residual_2", r, m);
        b.end_block();
    }
    b.layer("head");
    let x = b.layernorm("encoder.ln", x, h, true);
    let first = b.tensor(crate::graph::Numel::per_sample(h), b.dtype(x), true);
    b.op(
        "select_class_token",
        crate::graph::OpKind::Copy,
        crate::builder::OpSpec {
            inputs: vec![x],
            outputs: vec![first],
            ..Default::default()
        },
    );
    let logits = b.linear("heads.head", first, h, v.classes, true);
    b.cross_entropy("loss", logits, labels, 1, v.classes);
    b.returns(logits);
    Ok(())
}

/// q, k and v of a fused projection (see [`Builder::split`]).
pub(crate) fn split3(
    b: &mut Builder,
    name: &str,
    qkv: crate::graph::TensorId,
    select: bool,
) -> [crate::graph::TensorId; 3] {
    let v = b.split(name, qkv, 3, select);
    let get = |i: usize| v.get(i).copied().unwrap_or(qkv);
    [get(0), get(1), get(2)]
}

/// Structured pruning of an MLP: keep `keep` of each hidden layer's neurons.
pub fn pruned_mlp(m: &MlpSpec, keep: f64) -> MlpSpec {
    if keep >= 1.0 {
        return m.clone();
    }
    let layers = m
        .layers
        .iter()
        .map(|l| MlpLayer {
            out: ((l.out as f64 * keep).round() as u64).max(1),
            ..*l
        })
        .collect();
    MlpSpec {
        layers,
        ..m.clone()
    }
}

/// Checks an MLP's depth and each layer's weight against the limits in [`super`].
fn check_mlp_sizes(m: &MlpSpec) -> Result<(), Error> {
    use super::{MAX_LAYERS, MAX_WIDTH, check_dimension, check_elements};
    check_dimension("MLP layers", m.layers.len() as u64 + 1, MAX_LAYERS)?;
    let mut width = m.input;
    for out in m.layers.iter().map(|l| l.out).chain([m.classes]) {
        check_dimension("an MLP width", width.max(out), MAX_WIDTH)?;
        check_elements("an MLP layer's weight (inputs × outputs)", &[width, out])?;
        width = out;
    }
    Ok(())
}

/// Lowers an MLP classifier.
pub fn lower_mlp(b: &mut Builder, m: &MlpSpec) -> Result<(), Error> {
    if m.input == 0 || m.classes == 0 || m.layers.iter().any(|l| l.out == 0) {
        return Err(Error::InvalidModel("MLP sizes must be positive".into()));
    }
    check_mlp_sizes(m)?;
    b.layer("input");
    let mut x = b.input("features", m.input, b.float_input_dtype());
    let labels = b.input("labels", 1, DType::I64);
    let mut width = m.input;
    let block = m.block_size.max(1);
    for (i, l) in m.layers.iter().enumerate() {
        if i % block == 0 {
            b.end_block();
            b.layer(&format!("block.{}", i / block));
            b.begin_block();
        }
        x = b.linear(&format!("linear{}", i % block), x, width, l.out, true);
        x = match l.activation {
            MlpActivation::None => x,
            MlpActivation::Relu => b.relu(&format!("relu{}", i % block), x, false),
            MlpActivation::Gelu => b.activation(&format!("gelu{}", i % block), x),
        };
        width = l.out;
    }
    b.end_block();
    b.layer("head");
    let logits = b.linear("linear", x, width, m.classes, true);
    b.cross_entropy("loss", logits, labels, 1, m.classes);
    b.returns(logits);
    Ok(())
}

impl DType {
    /// The wider of two float types (mixed fp32/half arithmetic promotes to fp32).
    pub fn max_size(self, other: DType) -> DType {
        if self.size() >= other.size() {
            self
        } else {
            other
        }
    }
}
/// torchvision's Vision Transformer (presets only).
pub const VIT: Family = Family {
    imports: &[],
    presets: vit_presets,
};

/// MLP classifiers: the presets and vramfit's own `vramfit_mlp` description.
pub const MLP: Family = Family {
    imports: &[Import {
        model_type: "vramfit_mlp",
        read: read_mlp,
    }],
    presets: mlp_presets,
};

/// vramfit's MLP: `input_size` features through `Linear` layers of
/// `hidden_sizes`, each followed by `hidden_act`, then a `Linear` to
/// `num_labels` classes and a cross-entropy loss.
fn read_mlp(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let activation = match f.str_or("hidden_act", "relu")? {
        "relu" => MlpActivation::Relu,
        "gelu" => MlpActivation::Gelu,
        "none" => MlpActivation::None,
        other => {
            return Err(Error::InvalidModel(format!(
                "hidden_act must be 'relu', 'gelu' or 'none', got '{other}'"
            )));
        }
    };
    let layers = f
        .u64_list("hidden_sizes")?
        .into_iter()
        .map(|out| MlpLayer { out, activation })
        .collect();
    Ok(ModelSpec::Mlp(MlpSpec {
        input: f.u64("input_size")?,
        layers,
        block_size: 1,
        classes: f.u64("num_labels")?,
    }))
}

/// ViT-B/16.
fn vit_presets() -> Vec<ModelPreset> {
    let p = ModelPreset::new;
    vec![p(
        "vit_b_16",
        "ViT-B/16",
        Group::VisionTransformer,
        ModelSpec::Vit(VitSpec {
            image: 224,
            patch: 16,
            hidden: 768,
            layers: 12,
            heads: 12,
            mlp: 3072,
            classes: 1000,
            implementation: VitImplementation::Torchvision,
        }),
    )]
}

/// The reference MLP.
fn mlp_presets() -> Vec<ModelPreset> {
    let p = ModelPreset::new;
    vec![p(
        "mlp-small",
        "MLP 4×(1024→4096→1024), GELU",
        Group::Mlp,
        ModelSpec::Mlp(MlpSpec {
            input: 1024,
            layers: mlp_small_layers(),
            block_size: 2,
            classes: 1000,
        }),
    )]
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
