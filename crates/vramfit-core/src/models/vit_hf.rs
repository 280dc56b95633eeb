//! Vision Transformer as `transformers` builds it (`ViTForImageClassification`,
//! `models/vit/modeling_vit.py`): the `vit` `model_type` and the presets.
//! The parameters are torchvision's; the layers differ: separate q, k and
//! v projections (each input copy saved under autocast), eager attention
//! (scores and probabilities materialized, the fp32 softmax cast back to
//! the query's dtype) or SDPA, pre-LN blocks with `hidden_dropout_prob`
//! and `attention_probs_dropout_prob`, a classifier on the CLS token.

use super::ModelSpec;
use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::vit::{VitImplementation, VitSpec, check_vit};
use crate::builder::{Builder, OpSpec};
use crate::config::Attention;
use crate::dtype::DType;
use crate::error::Error;
use crate::graph::{Numel, OpKind, TensorId};
use serde_json::Value;

/// What the blocks read besides the spec.
#[derive(Clone, Copy)]
struct Layout {
    qkv_bias: bool,
    hidden_dropout: f64,
    attention_dropout: f64,
    attention: Attention,
    tokens: u64,
}

/// Lowers a Hugging Face ViT; the image side must match the model's
/// position embedding (`interpolate_pos_encoding` is not modelled).
///
/// # Errors
/// As [`check_vit`]; [`Error::InvalidModel`] for a dropout outside [0, 1].
pub fn lower(b: &mut Builder, v: &VitSpec, image: u64, attention: Attention) -> Result<(), Error> {
    check_vit(v, image)?;
    let (qkv_bias, hidden_dropout, attention_dropout) = match v.implementation {
        VitImplementation::HuggingFace {
            qkv_bias,
            hidden_dropout,
            attention_dropout,
        } => (qkv_bias, hidden_dropout, attention_dropout),
        VitImplementation::Torchvision => (true, 0.0, 0.0),
    };
    for p in [hidden_dropout, attention_dropout] {
        if !(0.0..=1.0).contains(&p) {
            return Err(Error::InvalidModel(format!(
                "ViT dropout probabilities must be between 0 and 1, got {p}"
            )));
        }
    }
    let h = v.hidden;
    let grid = image / v.patch;
    let tokens = grid * grid + 1;
    let layout = Layout {
        qkv_bias,
        hidden_dropout,
        attention_dropout,
        attention,
        tokens,
    };
    b.layer("input");
    let x = b.input("pixel_values", 3 * image * image, b.float_input_dtype());
    let labels = b.input("labels", 1, DType::I64);
    b.layer("vit.embeddings");
    let conv = crate::nn::Conv {
        bias: true,
        ..crate::nn::Conv::new(3, h, v.patch, v.patch, 0)
    };
    // `projection(x).flatten(2).transpose(1, 2)`: a view.
    let (x, _) = b.conv2d("patch_embeddings.projection", x, conv, image);
    let cls = b.param("cls_token", &[1, 1, h]);
    let pos = b.param("position_embeddings", &[1, tokens, h]);
    // `torch.cat((cls_tokens, embeddings), dim=1)` promotes to the fp32
    // token's type; `+ position_embeddings` makes another tensor. Neither saves.
    let dtype = b.param_dtype().max_size(b.dtype(x));
    let cat = b.tensor(Numel::per_sample(tokens * h), dtype, true);
    let add_pos = |b: &mut Builder, name: &str, input: TensorId, out: TensorId, p| {
        b.op(
            name,
            OpKind::Copy,
            OpSpec {
                inputs: vec![input],
                outputs: vec![out],
                params: vec![p],
                grad_passthrough: true,
                ..OpSpec::default()
            },
        );
    };
    add_pos(b, "cat_cls_token", x, cat, cls);
    let mut x = b.tensor(Numel::per_sample(tokens * h), dtype, true);
    add_pos(b, "add_position_embeddings", cat, x, pos);
    x = b.dropout("dropout", x, hidden_dropout);
    for i in 0..v.layers {
        b.layer(&format!("vit.layers.{i}"));
        b.begin_block();
        // `hidden_states = layer(hidden_states, ...)` keeps the input.
        b.hold_until_block_end(x);
        x = layer(b, v, x, layout);
        b.end_block();
    }
    b.layer("head");
    let x = b.layernorm("vit.layernorm", x, h, true);
    // `sequence_output[:, 0, :]`, read by the classifier.
    let first = b.tensor(Numel::per_sample(h), b.dtype(x), true);
    b.op(
        "select_cls_token",
        OpKind::Copy,
        OpSpec {
            inputs: vec![x],
            outputs: vec![first],
            ..OpSpec::default()
        },
    );
    let logits = b.linear("classifier", first, h, v.classes, true);
    b.cross_entropy("loss", logits, labels, 1, v.classes);
    b.returns(logits);
    Ok(())
}

/// One `ViTLayer`: `x + attention(layernorm_before(x))`, then
/// `x + mlp(layernorm_after(x))`, each branch through dropout.
fn layer(b: &mut Builder, v: &VitSpec, x: TensorId, l: Layout) -> TensorId {
    let h = v.hidden;
    let (heads, d) = (v.heads, v.hidden / v.heads.max(1));
    let n = b.layernorm("layernorm_before", x, h, true);
    let q = b.linear("attention.q_proj", n, h, h, l.qkv_bias);
    let k = b.linear("attention.k_proj", n, h, h, l.qkv_bias);
    let vv = b.linear("attention.v_proj", n, h, h, l.qkv_bias);
    let ctx = if l.attention == Attention::Eager {
        let (t, s2) = (l.tokens, heads * l.tokens * l.tokens);
        let flops = s2.saturating_mul(2 * d);
        // matmul on transposed 4-D views reshapes through contiguous copies, which bmm saves.
        let qc = b.copy("attention.q_reshape", q);
        let kc = b.copy("attention.k_reshape", k);
        let scores = b.bmm("attention.scores", qc, kc, s2, flops);
        let scores = b.scale("attention.scaling", scores);
        // `softmax(dtype=float32).to(query.dtype)`, then dropout.
        let probs = b.softmax("attention.softmax", scores, true);
        let probs = b.cast(probs, b.dtype(qc));
        let probs = b.dropout("attention.dropout", probs, l.attention_dropout);
        // `hidden_states, _ = self.attention(...)`: the weights live until the layer returns.
        b.hold_until_block_end(probs);
        let vc = b.copy("attention.v_reshape", vv);
        let ctx = b.bmm("attention.context", probs, vc, t * h, flops);
        // transpose(1, 2).contiguous() before `o_proj`.
        b.copy("attention.merge_heads", ctx)
    } else {
        // The kernels lay their output out as (batch, tokens, heads, dim):
        // `transpose(1, 2).contiguous()` is then a no-op.
        b.fused_attention("attention.sdpa", (q, k, vv), None, l.tokens, heads, d)
    };
    let o = b.linear("attention.o_proj", ctx, h, h, true);
    let o = b.dropout("dropout", o, l.hidden_dropout);
    let x = b.add("attention.residual", o, x);
    let n = b.layernorm("layernorm_after", x, h, true);
    let m = b.linear("mlp.fc1", n, h, v.mlp, true);
    let m = b.activation("mlp.activation_fn", m);
    let m = b.linear("mlp.fc2", m, v.mlp, h, true);
    let m = b.dropout("mlp.dropout", m, l.hidden_dropout);
    b.add("mlp.residual", m, x)
}

/// Hugging Face's Vision Transformer: the `vit` `model_type` and presets.
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "vit",
        read,
    }],
    presets,
};

/// Reads a `vit` config with `ViTConfig`'s defaults for absent fields
/// (`models/vit/configuration_vit.py`), as `ViTForImageClassification`:
/// `num_labels` from `id2label` (or `num_labels`, default 2).
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let channels = or("num_channels", 3)?;
    if channels != 3 {
        return Err(Error::InvalidModel(format!(
            "num_channels must be 3 (RGB images), got {channels}"
        )));
    }
    let act = f.str_or("hidden_act", "gelu")?;
    if act != "gelu" {
        return Err(Error::InvalidModel(format!(
            "hidden_act must be 'gelu' for a ViT, got '{act}'"
        )));
    }
    let classes = match f.map.get("id2label").and_then(Value::as_object) {
        Some(m) if !m.is_empty() => m.len() as u64,
        _ => or("num_labels", 2)?,
    };
    Ok(ModelSpec::Vit(VitSpec {
        image: or("image_size", 224)?,
        patch: or("patch_size", 16)?,
        hidden: or("hidden_size", 768)?,
        layers: or("num_hidden_layers", 12)?,
        heads: or("num_attention_heads", 12)?,
        mlp: or("intermediate_size", 3072)?,
        classes,
        implementation: VitImplementation::HuggingFace {
            qkv_bias: f.bool_or("qkv_bias", true),
            hidden_dropout: f.f64_or("hidden_dropout_prob", 0.0),
            attention_dropout: f.f64_or("attention_probs_dropout_prob", 0.0),
        },
    }))
}

/// `google/vit-base-patch16-224` and `google/vit-large-patch16-224`
/// (ImageNet-1k's 1000 labels): torchvision's ViT-B/16 and ViT-L/16 in
/// Hugging Face's code.
fn presets() -> Vec<ModelPreset> {
    let p = |id, name, hidden, layers, heads, mlp| {
        let spec = VitSpec {
            image: 224,
            patch: 16,
            hidden,
            layers,
            heads,
            mlp,
            classes: 1000,
            implementation: VitImplementation::HuggingFace {
                qkv_bias: true,
                hidden_dropout: 0.0,
                attention_dropout: 0.0,
            },
        };
        ModelPreset::new(id, name, Group::VisionTransformer, ModelSpec::Vit(spec))
    };
    vec![
        p(
            "vit-base-patch16-224",
            "ViT-B/16 (Hugging Face)",
            768,
            12,
            12,
            3072,
        ),
        p(
            "vit-large-patch16-224",
            "ViT-L/16 (Hugging Face)",
            1024,
            24,
            16,
            4096,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use crate::config::{Attention, TrainConfig};
    use crate::presets::model_preset;

    /// The same parameters as torchvision's ViT-B/16 (86,567,656), other
    /// layers: eager attention keeps `heads × tokens²` scores per sample.
    #[test]
    fn hugging_face_vit_has_torchvision_parameters_and_its_own_layers() {
        let (hf, tv) = match (
            model_preset("vit-base-patch16-224"),
            model_preset("vit_b_16"),
        ) {
            (Ok(hf), Ok(tv)) => (hf.spec, tv.spec),
            other => panic!("presets: {other:?}"),
        };
        assert_eq!(hf.parameter_count(), Ok(86_567_656));
        assert_eq!(tv.parameter_count(), Ok(86_567_656));
        let peak = |attention| {
            let cfg = TrainConfig {
                batch: 8,
                image: 224,
                attention,
                ..TrainConfig::default()
            };
            crate::estimate(&hf, &cfg, &crate::Overheads::default(), None)
                .map(|e| e.peak_allocated_bytes.0)
        };
        let (eager, sdpa) = (peak(Attention::Eager), peak(Attention::Sdpa));
        assert!(
            matches!((&eager, &sdpa), (Ok(e), Ok(s)) if s < e),
            "{eager:?} {sdpa:?}"
        );
    }
}
