//! Z.ai's GLM-4.5, 4.6 and 4.7 mixtures of experts as `transformers`
//! builds them (`models/glm4_moe/modeling_glm4_moe.py`): Llama's grouped
//! query attention with q/k/v biases (`attention_bias`; none on `o_proj`),
//! per-head q/k RMSNorms where `use_qk_norm`, a rotary embedding on each
//! head's first `partial_rotary_factor` (a half) then `torch.cat` with the
//! rest, and DeepSeek-V3's sparse feed-forward from layer
//! `first_k_dense_replace` on: an fp32 router scoring by sigmoid with a
//! bias-corrected, group-limited choice, routed experts of
//! `moe_intermediate_size` and `n_shared_experts` shared ones run as one
//! MLP. The first layers keep a dense MLP of `intermediate_size`. Lowered
//! by the shared transformer ([`super::transformer`]) and
//! [`super::moe_lower`].
//!
//! GLM-4.7-Flash (`glm4_moe_lite`, `models/glm4_moe_lite/`) is the same
//! sparse block under DeepSeek-V3's latent attention
//! (`Glm4MoeLiteAttention` is `DeepseekV3Attention`), its dense layers the
//! ones `mlp_layer_types` marks (the first by default; the class reads no
//! `first_k_dense_replace`).
//!
//! The multi-token-prediction layer the checkpoints carry
//! (`num_nextn_predict_layers`) is not built by `transformers`
//! (`_keys_to_ignore_on_load_unexpected`) and not counted.

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::mla::{Mla, MlaRope};
use super::moe::{DenseLayers, Moe, Router};
use super::{BlockOptions, ModelSpec, QkNorm, Rotary, TransformerSpec, deepseek, llama};
use crate::error::Error;

/// The GLM-4 mixture-of-experts family.
pub const FAMILY: Family = Family {
    imports: &[
        Import {
            model_type: "glm4_moe",
            read,
        },
        Import {
            model_type: "glm4_moe_lite",
            read: read_lite,
        },
    ],
    presets,
};

/// Reads a `glm4_moe` config with `Glm4MoeConfig`'s defaults
/// (`models/glm4_moe/configuration_glm4_moe.py`: GLM-4.5-Air's shape;
/// `partial_rotary_factor` 0.5, at the top or in `rope_parameters`;
/// `head_dim`, which the class does not declare, as the attention reads
/// it: the field, else `hidden_size / num_attention_heads`).
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let hidden = or("hidden_size", 4096)?;
    let heads = or("num_attention_heads", 96)?;
    let head_dim = or("head_dim", hidden / heads.max(1))?;
    let factor = f
        .rope_f64("partial_rotary_factor")
        .unwrap_or_else(|| f.f64_or("partial_rotary_factor", 0.5));
    let moe = Moe::deepseek_style(
        (
            or("n_routed_experts", 128)?,
            or("num_experts_per_tok", 8)?,
            or("moe_intermediate_size", 1408)?,
        ),
        or("n_shared_experts", 1)?,
        or("first_k_dense_replace", 1)?,
        Router::SigmoidGroups {
            groups: or("n_group", 1)?,
            topk_groups: or("topk_group", 1)?,
            renormalize: f.bool_or("norm_topk_prob", true),
        },
    );
    let mut t = decoder(
        (
            or("vocab_size", 151_552)?,
            hidden,
            or("num_hidden_layers", 46)?,
        ),
        (heads, or("num_key_value_heads", 8)?, head_dim),
        or("intermediate_size", 10_944)?,
        (
            Rotary::partial(head_dim, factor)?,
            f.bool_or("use_qk_norm", false),
        ),
        moe,
    );
    t.qkv_bias = f.bool_or("attention_bias", false);
    t.tie_embeddings = f.bool_or("tie_word_embeddings", false);
    t.attention_dropout = f.f64_or("attention_dropout", 0.0);
    Ok(ModelSpec::Transformer(t))
}

/// Reads a `glm4_moe_lite` config with `Glm4MoeLiteConfig`'s defaults
/// (`models/glm4_moe_lite/configuration_glm4_moe_lite.py`: GLM-4.7-Flash's
/// shape, 4 experts per token).
fn read_lite(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let router = Router::SigmoidGroups {
        groups: or("n_group", 1)?,
        topk_groups: or("topk_group", 1)?,
        renormalize: f.bool_or("norm_topk_prob", true),
    };
    let layers = or("num_hidden_layers", 47)?;
    let dense = match f.opt_str_list("mlp_layer_types")? {
        None => DenseLayers {
            first: 1,
            ..DenseLayers::default()
        },
        Some(types) if types.len() as u64 != layers => {
            return Err(Error::InvalidModel(format!(
                "mlp_layer_types lists {} layers but num_hidden_layers is {layers}",
                types.len()
            )));
        }
        Some(types) => {
            let mut listed = Vec::new();
            for (i, kind) in (0u64..).zip(types) {
                match kind {
                    "dense" => listed.push(i),
                    "sparse" => {}
                    other => {
                        return Err(Error::InvalidModel(format!(
                            "mlp_layer_types may list \"dense\" and \"sparse\", not \"{other}\""
                        )));
                    }
                }
            }
            DenseLayers {
                listed,
                ..DenseLayers::default()
            }
        }
    };
    let mut fields = f.map.clone();
    fields
        .entry("num_experts_per_tok")
        .or_insert(serde_json::Value::from(4));
    let f = Fields {
        map: &fields,
        model_type: f.model_type.clone(),
    };
    let d = (154_880, 2048, 47, 20, 10_240, 1536, 64, 1, 1);
    let mut spec = deepseek::read(&f, d, router, flash_latent())?;
    if let ModelSpec::Transformer(t) = &mut spec
        && let Some(moe) = t.moe.as_deref_mut()
    {
        moe.dense = dense;
    }
    Ok(spec)
}

/// GLM-4.7-Flash's latent attention: query rank 768, latent 512, 192 + 64
/// query/key and 256 value features per head.
fn flash_latent() -> Mla {
    Mla {
        q_lora_rank: 768,
        kv_lora_rank: 512,
        qk_nope_head_dim: 192,
        qk_rope_head_dim: 64,
        v_head_dim: 256,
        rope: MlaRope::Real,
        indexer: None,
    }
}

/// A GLM-4 MoE decoder: `heads` query heads of `head_dim` over `kv_heads`
/// key/value heads, rotated as `rotary`, with per-head q/k norms if
/// `qk_norm`, and `moe` from its first sparse layer.
fn decoder(
    (vocab, hidden, layers): (u64, u64, u64),
    (heads, kv_heads, head_dim): (u64, u64, u64),
    intermediate: u64,
    (rotary, qk_norm): (Rotary, bool),
    moe: Moe,
) -> TransformerSpec {
    TransformerSpec {
        head_dim,
        block: BlockOptions {
            rotary,
            qk_norm: if qk_norm {
                QkNorm::PerHead
            } else {
                QkNorm::None
            },
            ..BlockOptions::default()
        },
        moe: Some(Box::new(moe)),
        ..llama::decoder(vocab, hidden, layers, heads, kv_heads, intermediate)
    }
}

/// GLM-4.5-Air, GLM-4.5, GLM-4.6 and GLM-4.7-Flash, from their
/// `config.json` files on the Hugging Face Hub (`zai-org/GLM-4.5-Air`,
/// `zai-org/GLM-4.5`, `zai-org/GLM-4.6`, `zai-org/GLM-4.7-Flash`; GLM-4.7
/// has 4.6's). The first three: 151,552-token vocabulary, untied
/// head, 96 query heads of 128 over 8 key/value heads with biases, half of
/// each head rotated, one shared expert and 8 routed ones per token. Air:
/// 46 layers of 4096, 128 experts of 1408, the first layer dense, no q/k
/// norms; 4.5 and 4.6: 92 layers of 5120, 160 experts of 1536, the first
/// three dense, q/k norms; 4.6 reads 202,752 tokens, 4.5 131,072.
fn presets() -> Vec<ModelPreset> {
    let p = |id, name, t| ModelPreset::new(id, name, Group::Glm, ModelSpec::Transformer(t));
    let half = Rotary::Sliced { dims: 64 };
    let glm = |(hidden, layers, intermediate), (experts, expert_intermediate, first), qk_norm| {
        let router = Router::SigmoidGroups {
            groups: 1,
            topk_groups: 1,
            renormalize: true,
        };
        let moe = Moe::deepseek_style((experts, 8, expert_intermediate), 1, first, router);
        TransformerSpec {
            qkv_bias: true,
            ..decoder(
                (151_552, hidden, layers),
                (96, 8, 128),
                intermediate,
                (half, qk_norm),
                moe,
            )
        }
    };
    let big = || glm((5120, 92, 12_288), (160, 1536, 3), true);
    // GLM-4.7-Flash: DeepSeek-V3's latent attention (20 heads) over 64
    // experts of 1536, 4 per token, 1 shared, the first layer dense.
    let flash = deepseek::decoder(
        (154_880, 2048, 47),
        20,
        10_240,
        flash_latent(),
        Moe::deepseek_style(
            (64, 4, 1536),
            1,
            1,
            Router::SigmoidGroups {
                groups: 1,
                topk_groups: 1,
                renormalize: true,
            },
        ),
    );
    vec![
        p(
            "glm-4.5-air",
            "GLM-4.5-Air",
            glm((4096, 46, 10_944), (128, 1408, 1), false),
        )
        .context(131_072),
        p("glm-4.5", "GLM-4.5", big()).context(131_072),
        p("glm-4.6", "GLM-4.6 / 4.7", big()).context(202_752),
        p("glm-4.7-flash", "GLM-4.7-Flash", flash).context(202_752),
    ]
}
