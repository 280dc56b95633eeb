//! OpenAI's gpt-oss as `transformers` builds it
//! (`models/gpt_oss/modeling_gpt_oss.py`): attention with biases on q, k, v
//! and o, a learned sink logit per head, sliding windows on every other
//! layer, RMSNorms that multiply by their weight before casting back, and
//! in every layer a router (with a bias) over experts with biases and
//! gpt-oss's clamped SwiGLU. Lowered by the shared transformer
//! ([`super::transformer`]) and [`super::moe_lower`].

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::moe::{ExpertActivation, Moe, Router};
use super::{BlockOptions, ModelSpec, Rotary, SlidingWindow, TransformerSpec, llama};
use crate::error::Error;

/// The gpt-oss family.
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "gpt_oss",
        read,
    }],
    presets,
};

/// Reads a `gpt_oss` config with `GptOssConfig`'s defaults
/// (`models/gpt_oss/configuration_gpt_oss.py`: gpt-oss-120b's shape, a
/// 128-token window on even layers unless `layer_types` says otherwise).
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let layers = or("num_hidden_layers", 36)?;
    let heads = or("num_attention_heads", 64)?;
    // Absent: the class's 8; null: one per head (`__post_init__`).
    let kv_heads = match f.map.get("num_key_value_heads") {
        Some(serde_json::Value::Null) => heads,
        _ => or("num_key_value_heads", 8)?,
    };
    let mut t = decoder(
        (or("vocab_size", 201_088)?, or("hidden_size", 2880)?, layers),
        (heads, kv_heads, or("head_dim", 64)?),
        or("intermediate_size", 2880)?,
        (or("num_local_experts", 128)?, or("num_experts_per_tok", 4)?),
    );
    t.block.sliding = match f.opt_u64("sliding_window")? {
        None => None,
        Some(window) => match f.opt_str_list("layer_types")? {
            Some(types) if types.len() as u64 != layers => {
                return Err(Error::InvalidModel(format!(
                    "layer_types lists {} layers but num_hidden_layers is {layers}",
                    types.len()
                )));
            }
            Some(types) => SlidingWindow::from_layer_types(window, &types)?,
            None => Some(SlidingWindow {
                window,
                full_every: 2,
            }),
        },
    };
    let bias = f.bool_or("attention_bias", true);
    t.qkv_bias = bias;
    t.mlp_bias = bias;
    t.tie_embeddings = f.bool_or("tie_word_embeddings", false);
    t.attention_dropout = f.f64_or("attention_dropout", 0.0);
    if let Some(m) = t.moe.as_mut() {
        m.aux_loss = f.bool_or("output_router_logits", false);
    }
    Ok(ModelSpec::Transformer(t))
}

/// A gpt-oss decoder: `head_dim`-wide heads, every layer's experts of
/// `intermediate`, `top_k` per token, a 128-token window on even layers.
fn decoder(
    (vocab, hidden, layers): (u64, u64, u64),
    (heads, kv_heads, head_dim): (u64, u64, u64),
    intermediate: u64,
    (experts, top_k): (u64, u64),
) -> TransformerSpec {
    TransformerSpec {
        head_dim,
        qkv_bias: true,
        mlp_bias: true,
        block: BlockOptions {
            rms_weight_first: true,
            sinks: true,
            sliding: Some(SlidingWindow {
                window: 128,
                full_every: 2,
            }),
            // `_apply_rotary_emb` rotates the two halves with the
            // embeddings' cos and sin, then `torch.cat`.
            rotary: Rotary::Sliced { dims: head_dim },
            ..BlockOptions::default()
        },
        moe: Some(Box::new(Moe {
            experts,
            top_k,
            expert_intermediate: intermediate,
            router: Router::TopKSoftmax,
            shared: None,
            dense: Default::default(),
            biases: true,
            activation: ExpertActivation::ClampedSwiglu,
            aux_loss: false,
            latent: 0,
        })),
        ..llama::decoder(vocab, hidden, layers, heads, kv_heads, intermediate)
    }
}

/// gpt-oss-20b and -120b, from their `config.json` files on the Hugging
/// Face Hub (`openai/gpt-oss-20b`, `gpt-oss-120b`): 32 and 128 experts,
/// four per token, 24 and 36 layers.
fn presets() -> Vec<ModelPreset> {
    let p = |id, name, t| ModelPreset::new(id, name, Group::GptOss, ModelSpec::Transformer(t));
    vec![
        p(
            "gpt-oss-20b",
            "gpt-oss-20b",
            decoder((201_088, 2880, 24), (64, 8, 64), 2880, (32, 4)),
        )
        .context(131_072),
        p(
            "gpt-oss-120b",
            "gpt-oss-120b",
            decoder((201_088, 2880, 36), (64, 8, 64), 2880, (128, 4)),
        )
        .context(131_072),
    ]
}
