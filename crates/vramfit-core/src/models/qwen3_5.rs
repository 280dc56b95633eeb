//! Qwen's hybrid linear-attention decoders as `transformers` 5.24 builds
//! them: Qwen3-Next (`models/qwen3_next/modeling_qwen3_next.py`) and the
//! language models of Qwen3.5 (`models/qwen3_5/modeling_qwen3_5.py`,
//! `models/qwen3_5_moe/modeling_qwen3_5_moe.py`). Three layers of four
//! mix tokens by Gated DeltaNet ([`super::gated_deltanet`]); every fourth
//! is attention with per-head q/k norms, a rotary embedding on a quarter of
//! each head and its output gated by a sigmoid projected with the queries.
//! Norms are zero-centred RMSNorms (`x · (1 + w)`, weight before the cast
//! back, as Gemma's). The MLP is Llama's (Qwen3.5) or a mixture of experts
//! with a sigmoid-gated shared expert (Qwen3-Next, Qwen3.5-MoE).
//!
//! Qwen3.5's released `config.json` files describe the vision–language
//! model: its language model is the `text_config` object
//! (`qwen3_5_text`, `qwen3_5_moe_text`), imported by itself. The
//! multi-token-prediction layer of the checkpoints is not built by
//! `transformers` and not counted.

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::moe::{DenseLayers, Moe, SharedExperts};
use super::{
    BlockOptions, GatedDeltaNet, ModelSpec, QkNorm, Rotary, SlidingWindow, TransformerSpec, llama,
};
use crate::error::Error;

/// The Qwen3-Next and Qwen3.5 family.
pub const FAMILY: Family = Family {
    imports: &[
        Import {
            model_type: "qwen3_next",
            read: read_next,
        },
        Import {
            model_type: "qwen3_5_text",
            read: read_dense,
        },
        Import {
            model_type: "qwen3_5_moe_text",
            read: read_moe,
        },
    ],
    presets,
};

/// The shape both layouts share.
struct Shape {
    vocab: u64,
    hidden: u64,
    layers: u64,
    heads: (u64, u64, u64),
    intermediate: u64,
    linear: GatedDeltaNet,
    rotary: Rotary,
}

/// Reads what every one of these configs has, with the defaults the
/// classes share (`vocab_size` and `hidden_size` differ: given), the
/// linear layers from `layer_types` or `full_attention_interval`.
fn shape(
    f: &Fields<'_>,
    (vocab, hidden, layers, kv_heads): (u64, u64, u64, u64),
    intermediate: u64,
    grouped: bool,
) -> Result<Shape, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let layers = or("num_hidden_layers", layers)?;
    let head_dim = or("head_dim", 256)?;
    let factor = f
        .rope_f64("partial_rotary_factor")
        .unwrap_or_else(|| f.f64_or("partial_rotary_factor", 0.25));
    let full_every = match f.opt_str_list("layer_types")? {
        Some(types) => full_every(&types, layers)?,
        None => or("full_attention_interval", 4)?,
    };
    if f.bool_or("attention_bias", false) {
        return Err(Error::InvalidModel(
            "attention_bias: true puts biases on the attention projections, which vramfit does not model for Qwen3-Next and Qwen3.5 (their models have false)"
                .into(),
        ));
    }
    Ok(Shape {
        vocab: or("vocab_size", vocab)?,
        hidden: or("hidden_size", hidden)?,
        layers,
        heads: (
            or("num_attention_heads", 16)?,
            or("num_key_value_heads", kv_heads)?,
            head_dim,
        ),
        intermediate: or("intermediate_size", intermediate)?,
        linear: GatedDeltaNet {
            key_heads: or("linear_num_key_heads", 16)?,
            value_heads: or("linear_num_value_heads", 32)?,
            key_head_dim: or("linear_key_head_dim", 128)?,
            value_head_dim: or("linear_value_head_dim", 128)?,
            conv_kernel: or("linear_conv_kernel_dim", 4)?,
            full_every,
            grouped,
            state_fp32: f.str_or("mamba_ssm_dtype", "")? == "float32",
        },
        rotary: Rotary::partial(head_dim, factor)?,
    })
}

/// The interval of full-attention layers in a `layer_types` list of
/// `linear_attention` and `full_attention`: every n-th must be full, the
/// others linear (as `full_attention_interval` makes them).
///
/// # Errors
/// [`Error::InvalidModel`] for another type, a list of the wrong length,
/// or full layers that are not every n-th.
fn full_every(types: &[&str], layers: u64) -> Result<u64, Error> {
    if let Some(other) = types
        .iter()
        .find(|t| !matches!(**t, "linear_attention" | "full_attention"))
    {
        return Err(Error::InvalidModel(format!(
            "layer_types may hold linear_attention and full_attention only, got {other}"
        )));
    }
    // The same regularity as sliding layers beside full ones.
    let as_sliding: Vec<&str> = types
        .iter()
        .map(|t| match *t {
            "linear_attention" => "sliding_attention",
            _ => "full_attention",
        })
        .collect();
    if types.len() as u64 != layers {
        return Err(Error::InvalidModel(format!(
            "layer_types lists {} layers but num_hidden_layers is {layers}",
            types.len()
        )));
    }
    let every = SlidingWindow::from_layer_types(1, &as_sliding)
        .map_err(|_| {
            Error::InvalidModel(
                "layer_types must make every n-th layer full_attention and the others linear_attention"
                    .into(),
            )
        })?
        .map_or(1, |w| w.full_every);
    Ok(every)
}

/// A decoder of `shape`: Llama's layout with zero-centred norms, gated
/// attention of per-head normalized q/k rotated on `rotary` of each head,
/// Gated DeltaNet in the linear layers.
fn decoder(s: Shape) -> TransformerSpec {
    let (heads, kv_heads, head_dim) = s.heads;
    TransformerSpec {
        head_dim,
        block: BlockOptions {
            qk_norm: QkNorm::PerHead,
            rms_weight_first: true,
            rotary: s.rotary,
            attn_gate: true,
            ..BlockOptions::default()
        },
        linear: Some(Box::new(super::Recurrent::DeltaNet(s.linear))),
        ..llama::decoder(s.vocab, s.hidden, s.layers, heads, kv_heads, s.intermediate)
    }
}

/// The experts of Qwen3-Next and Qwen3.5-MoE: softmax top-k, renormalized,
/// and one shared expert behind a sigmoid gate, in every layer but (with
/// `dense_layers`, Qwen3-Next's) those `mlp_only_layers` names and
/// `decoder_sparse_step` skips.
fn experts(
    f: &Fields<'_>,
    (experts, top_k): (u64, u64),
    renormalize: bool,
    dense_layers: bool,
) -> Result<Moe, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let listed = match f.map.get("mlp_only_layers") {
        Some(v) if dense_layers && !v.is_null() => f.u64_list("mlp_only_layers")?,
        _ => Vec::new(),
    };
    let sparse_step = if dense_layers {
        or("decoder_sparse_step", 1)?
    } else {
        1
    };
    let mut moe = Moe {
        experts: or("num_experts", experts)?,
        top_k: or("num_experts_per_tok", top_k)?,
        expert_intermediate: or("moe_intermediate_size", 512)?,
        shared: Some(SharedExperts {
            intermediate: or("shared_expert_intermediate_size", 512)?,
            gate: true,
            first: false,
            fused: false,
        }),
        dense: DenseLayers {
            first: 0,
            sparse_step,
            listed,
        },
        ..super::qwen_moe::routed(renormalize)
    };
    moe.aux_loss = f.bool_or("output_router_logits", false);
    Ok(moe)
}

/// Fills in what every reader sets the same way.
fn finish(f: &Fields<'_>, mut t: TransformerSpec) -> ModelSpec {
    t.tie_embeddings = f.bool_or("tie_word_embeddings", false);
    t.attention_dropout = f.f64_or("attention_dropout", 0.0);
    ModelSpec::Transformer(t)
}

/// Reads a `qwen3_next` config with `Qwen3NextConfig`'s defaults
/// (`models/qwen3_next/configuration_qwen3_next.py`: Qwen3-Next-80B-A3B's
/// shape, its MLP width 5632 for `mlp_only_layers`).
fn read_next(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let s = shape(f, (151_936, 2048, 48, 2), 5632, true)?;
    let moe = experts(f, (512, 10), f.bool_or("norm_topk_prob", true), true)?;
    let t = TransformerSpec {
        moe: Some(Box::new(moe)),
        ..decoder(s)
    };
    Ok(finish(f, t))
}

/// Reads a `qwen3_5_text` config (Qwen3.5's language model) with
/// `Qwen3_5TextConfig`'s defaults (`models/qwen3_5/configuration_qwen3_5.py`).
fn read_dense(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let s = shape(f, (248_320, 4096, 32, 4), 12_288, false)?;
    Ok(finish(f, decoder(s)))
}

/// Reads a `qwen3_5_moe_text` config (Qwen3.5-MoE's language model) with
/// `Qwen3_5MoeTextConfig`'s defaults
/// (`models/qwen3_5_moe/configuration_qwen3_5_moe.py`; it declares no
/// `intermediate_size`: every layer is sparse, and always renormalizes).
fn read_moe(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let s = shape(f, (248_320, 2048, 40, 2), 512, false)?;
    let moe = experts(f, (256, 8), true, false)?;
    let t = TransformerSpec {
        moe: Some(Box::new(moe)),
        ..decoder(s)
    };
    Ok(finish(f, t))
}

/// Qwen3-Next-80B-A3B and the Qwen3.5 language models, from their
/// `config.json` files on the Hugging Face Hub (`Qwen/Qwen3-Next-80B-A3B-Instruct`,
/// `Qwen/Qwen3.5-*`'s `text_config`): attention every fourth layer with
/// 256-wide heads rotated on a quarter (64 features), 16 query/key heads
/// of 128 in the linear layers, 262,144 tokens.
fn presets() -> Vec<ModelPreset> {
    let p = |id, name, t| ModelPreset::new(id, name, Group::Qwen, ModelSpec::Transformer(t));
    let linear = |value_heads, grouped| GatedDeltaNet {
        key_heads: 16,
        value_heads,
        key_head_dim: 128,
        value_head_dim: 128,
        conv_kernel: 4,
        full_every: 4,
        grouped,
        // Qwen3.5's text_config says `mamba_ssm_dtype: "float32"`.
        state_fp32: !grouped,
    };
    // Qwen3.5: a 248,320-token vocabulary, two or four key/value heads.
    let dense = |(hidden, layers, heads, kv_heads, intermediate), value_heads, tie| {
        let t = decoder(Shape {
            vocab: 248_320,
            hidden,
            layers,
            heads: (heads, kv_heads, 256),
            intermediate,
            linear: linear(value_heads, false),
            rotary: Rotary::Sliced { dims: 64 },
        });
        TransformerSpec {
            tie_embeddings: tie,
            ..t
        }
    };
    // Qwen3-Next's dense width (for `mlp_only_layers`, none in the
    // release) is 5120; Qwen3.5-MoE's layers are all sparse.
    let sparse = |(vocab, hidden, layers, heads), value_heads, (experts, top_k, width), grouped| {
        let moe = Moe {
            experts,
            top_k,
            expert_intermediate: width,
            shared: Some(SharedExperts {
                intermediate: width,
                gate: true,
                first: false,
                fused: false,
            }),
            ..super::qwen_moe::routed(true)
        };
        TransformerSpec {
            moe: Some(Box::new(moe)),
            ..decoder(Shape {
                vocab,
                hidden,
                layers,
                heads: (heads, 2, 256),
                intermediate: if grouped { 5120 } else { width },
                linear: linear(value_heads, grouped),
                rotary: Rotary::Sliced { dims: 64 },
            })
        }
    };
    let v = 248_320;
    [
        (
            "qwen3.5-0.8b",
            "Qwen3.5-0.8B",
            dense((1024, 24, 8, 2, 3584), 16, true),
        ),
        (
            "qwen3.5-2b",
            "Qwen3.5-2B",
            dense((2048, 24, 8, 2, 6144), 16, true),
        ),
        (
            "qwen3.5-4b",
            "Qwen3.5-4B",
            dense((2560, 32, 16, 4, 9216), 32, true),
        ),
        (
            "qwen3.5-9b",
            "Qwen3.5-9B",
            dense((4096, 32, 16, 4, 12_288), 32, false),
        ),
        (
            "qwen3.5-27b",
            "Qwen3.5-27B",
            dense((5120, 64, 24, 4, 17_408), 48, false),
        ),
        (
            "qwen3.5-35b-a3b",
            "Qwen3.5-35B-A3B",
            sparse((v, 2048, 40, 16), 32, (256, 8, 512), false),
        ),
        (
            "qwen3.5-122b-a10b",
            "Qwen3.5-122B-A10B",
            sparse((v, 3072, 48, 32), 64, (256, 8, 1024), false),
        ),
        (
            "qwen3.5-397b-a17b",
            "Qwen3.5-397B-A17B",
            sparse((v, 4096, 60, 32), 64, (512, 10, 1024), false),
        ),
        (
            "qwen3-next-80b-a3b",
            "Qwen3-Next-80B-A3B",
            sparse((151_936, 2048, 48, 16), 32, (512, 10, 512), true),
        ),
    ]
    .into_iter()
    .map(|(id, name, t)| p(id, name, t).context(262_144))
    .collect()
}
