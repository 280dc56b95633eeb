//! NVIDIA's Nemotron-H (`model_type` `nemotron_h`: Nemotron-H, Nemotron
//! Nano 2, Nemotron 3 Nano) as `transformers` 5.24 builds it
//! (`models/nemotron_h/modeling_nemotron_h.py`). Each layer is one mixer
//! under one RMSNorm and one residual, `x + mixer(norm(x))`
//! (`NemotronHBlock`), its kind from `layers_block_type` (or the older
//! `hybrid_override_pattern`, one letter a layer):
//!
//! - `linear_attention` (`M`): Mamba-2, the PyTorch path Granite 4.0's H
//!   models take ([`super::mamba2`]), `mamba_num_heads × mamba_head_dim`
//!   wide;
//! - `full_attention` (`*`): grouped-query attention without any position
//!   embedding and without biases;
//! - `mlp` (`-`): `down_proj(relu2(up_proj(x)))`;
//! - `moe` (`E`): DeepSeek-V3's sigmoid router over `n_routed_experts`
//!   ungated ReLU² experts, optionally in a narrower latent space
//!   (`moe_latent_size`), and one ungated shared expert after them.
//!
//! The norms keep their weight product in fp32 before the cast back, the
//! model upcasts its logits itself (`lm_head(x).float()`), and the LM head
//! is never tied (`_tied_weights_keys = {}`). Lowered by the shared
//! transformer ([`super::transformer`], [`TransformerSpec::single_mixer`]).

use super::family::{Family, Import};
use super::hf_fields::Fields;
use super::moe::{DenseLayers, ExpertActivation, Moe, Router, SharedExperts};
use super::transformer::SingleMixer;
use super::{Mamba2, MlpKind, ModelSpec, Recurrent, llama};
use crate::error::Error;

/// The Nemotron-H family (no presets).
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "nemotron_h",
        read,
    }],
    presets: Vec::new,
};

/// A layer's mixer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Mamba,
    Attention,
    Mlp,
    Experts,
}

/// The layers' kinds: `layers_block_type` (or `layer_types`, its other
/// name), else `hybrid_override_pattern`, else `NemotronHConfig`'s default
/// of four layers.
fn kinds(f: &Fields<'_>) -> Result<Vec<Kind>, Error> {
    let named = |name: &str| match name {
        "linear_attention" | "mamba" => Some(Kind::Mamba),
        "full_attention" | "attention" => Some(Kind::Attention),
        "mlp" => Some(Kind::Mlp),
        "moe" => Some(Kind::Experts),
        _ => None,
    };
    if let Some(list) = f.opt_str_list("layers_block_type")? {
        return list
            .iter()
            .map(|&name| {
                named(name).ok_or_else(|| {
                    Error::InvalidModel(format!(
                        "layers_block_type has a '{name}' layer: Nemotron-H's layers are \
                         linear_attention, full_attention, mlp or moe"
                    ))
                })
            })
            .collect();
    }
    if let Some(pattern) = f
        .map
        .get("hybrid_override_pattern")
        .and_then(serde_json::Value::as_str)
    {
        return pattern
            .chars()
            .map(|c| match c {
                'M' => Ok(Kind::Mamba),
                '*' => Ok(Kind::Attention),
                '-' => Ok(Kind::Mlp),
                'E' => Ok(Kind::Experts),
                other => Err(Error::InvalidModel(format!(
                    "hybrid_override_pattern has a '{other}': its letters are M (Mamba-2), \
                     * (attention), - (MLP) and E (experts)"
                ))),
            })
            .collect();
    }
    Ok(vec![Kind::Mamba, Kind::Experts, Kind::Attention, Kind::Mlp])
}

/// The layers (from 0) of the given kinds.
fn layers_of(kinds: &[Kind], of: &[Kind]) -> Vec<u64> {
    (0u64..)
        .zip(kinds)
        .filter(|(_, k)| of.contains(k))
        .map(|(i, _)| i)
        .collect()
}

/// Reads a `nemotron_h` config with `NemotronHConfig`'s defaults, the
/// older `mamba_*` names (`mamba_n_groups`, `mamba_d_conv`,
/// `mamba_chunk_size`, `mamba_conv_bias`) first, as its `__post_init__`
/// reads them.
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let legacy = |old, new, default| -> Result<u64, Error> {
        Ok(match f.opt_u64(old)? {
            Some(v) => v,
            None => or(new, default)?,
        })
    };
    let kinds = kinds(f)?;
    if kinds.is_empty() {
        return Err(Error::InvalidModel(
            "layers_block_type names no layers".into(),
        ));
    }
    let activation = f.str_or("mlp_hidden_act", "relu2")?;
    if activation != "relu2" {
        return Err(Error::InvalidModel(format!(
            "mlp_hidden_act '{activation}': vramfit models Nemotron-H's MLPs and experts with relu2, \
             as every released model has them"
        )));
    }
    let hidden = or("hidden_size", 4096)?;
    let heads = f.heads_or(32)?;
    let mut t = llama::decoder(
        or("vocab_size", 131_072)?,
        hidden,
        kinds.len() as u64,
        heads,
        f.opt_u64("num_key_value_heads")?.unwrap_or(heads),
        or("intermediate_size", 21_504)?,
    );
    t.head_dim = f.opt_u64("head_dim")?.unwrap_or(hidden / heads.max(1));
    // `_tied_weights_keys = {}`: the head is its own whatever
    // `tie_word_embeddings` says; q, k, v and o are built unbiased.
    t.tie_embeddings = false;
    t.attention_dropout = f.f64_or("attention_dropout", 0.0);
    t.block.nope_every = 1;
    t.block.rms_weight_first = true;
    t.block.fp32_logits = true;
    let mlp_bias = f.bool_or("mlp_bias", false);
    t.block.mlp = MlpKind::Plain {
        bias: mlp_bias,
        relu_squared: true,
        gelu_new: false,
        relu: false,
    };
    let feed_forward = layers_of(&kinds, &[Kind::Mlp, Kind::Experts]);
    let sparse = layers_of(&kinds, &[Kind::Experts]);
    if !sparse.is_empty() {
        if mlp_bias {
            return Err(Error::InvalidModel(
                "mlp_bias with experts: vramfit does not model biases on Nemotron-H's shared \
                 expert and latent projections (the released models have none)"
                    .into(),
            ));
        }
        let experts = or("n_routed_experts", 8)?;
        t.moe = Some(Box::new(Moe {
            experts,
            top_k: or("num_experts_per_tok", 2)?,
            expert_intermediate: or("moe_intermediate_size", 7688)?,
            router: Router::SigmoidGroups {
                groups: or("n_group", 1)?,
                topk_groups: or("topk_group", 1)?,
                renormalize: f.bool_or("norm_topk_prob", true),
            },
            shared: Some(SharedExperts {
                intermediate: or("moe_shared_expert_intermediate_size", 7688)?,
                gate: false,
                first: false,
                fused: false,
            }),
            dense: DenseLayers {
                listed: (0..kinds.len() as u64)
                    .filter(|i| !sparse.contains(i))
                    .collect(),
                ..DenseLayers::default()
            },
            biases: false,
            activation: ExpertActivation::Relu2,
            aux_loss: false,
            latent: f.opt_u64("moe_latent_size")?.unwrap_or(0),
        }));
    }
    let mamba = layers_of(&kinds, &[Kind::Mamba]);
    if !mamba.is_empty() {
        let m = Mamba2 {
            heads: or("mamba_num_heads", 128)?,
            head_dim: or("mamba_head_dim", 64)?,
            state: or("ssm_state_size", 128)?,
            groups: legacy("mamba_n_groups", "n_groups", 8)?,
            conv_kernel: legacy("mamba_d_conv", "conv_kernel", 4)?,
            chunk: legacy("mamba_chunk_size", "chunk_size", 128)?,
            conv_bias: match f.map.get("mamba_conv_bias") {
                Some(serde_json::Value::Bool(b)) => *b,
                _ => f.bool_or("use_conv_bias", true),
            },
            proj_bias: f.bool_or("use_bias", false),
            // Every layer that is not Mamba-2 is, to the Mamba-2 spec, "attention".
            attention: (0..kinds.len() as u64)
                .filter(|i| !mamba.contains(i))
                .collect(),
        };
        t.linear = Some(Box::new(Recurrent::Mamba2(m)));
    }
    t.single_mixer = Some(Box::new(SingleMixer { feed_forward }));
    Ok(ModelSpec::Transformer(t))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

    use super::*;
    use crate::hf::import;
    use crate::models::TransformerSpec;

    fn spec(json: &str) -> TransformerSpec {
        match import(json).unwrap().spec {
            ModelSpec::Transformer(t) => t,
            other => panic!("not a transformer: {other:?}"),
        }
    }

    /// A Nemotron-Nano-2-shaped file: the older names (`hybrid_override_pattern`,
    /// `mamba_n_groups`, `mamba_d_conv`), no experts.
    const NANO: &str = r#"{"model_type":"nemotron_h","vocab_size":131072,"hidden_size":4480,
        "num_attention_heads":40,"num_key_value_heads":8,"head_dim":128,"intermediate_size":15680,
        "hybrid_override_pattern":"M-M*-M-","mamba_num_heads":128,"mamba_head_dim":80,
        "ssm_state_size":128,"mamba_n_groups":8,"mamba_d_conv":4,"chunk_size":128,
        "tie_word_embeddings":true}"#;

    #[test]
    fn reads_each_layers_one_mixer_from_the_pattern() {
        let t = spec(NANO);
        assert_eq!(t.layers, 7);
        let single = t.single_mixer.as_deref().unwrap();
        assert_eq!(single.feed_forward, vec![1, 4, 6]);
        let Some(Recurrent::Mamba2(m)) = t.linear.as_deref() else {
            panic!("Mamba-2 layers: {:?}", t.linear)
        };
        assert_eq!(
            (m.heads, m.head_dim, m.groups, m.conv_kernel),
            (128, 80, 8, 4)
        );
        assert_eq!(t.linear.as_deref().unwrap().linear_layers(t.layers), 3);
        assert_eq!(t.attention_layers(), 1);
        assert!(t.attends(3) && !t.attends(0) && !t.attends(1));
        assert!(t.mixes_tokens(2) && !t.has_feed_forward(2));
        assert!(t.has_feed_forward(4) && !t.mixes_tokens(4));
        // No position embedding, no biases, an untied head whatever the file says.
        assert_eq!(t.block.nope_every, 1);
        assert!(!t.tie_embeddings && !t.qkv_bias && t.moe.is_none());
        assert!(t.block.fp32_logits && t.block.rms_weight_first);
    }

    #[test]
    fn the_layer_list_wins_over_the_pattern_and_names_the_experts() {
        let t = spec(
            r#"{"model_type":"nemotron_h","hidden_size":512,"num_attention_heads":8,
            "layers_block_type":["linear_attention","moe","full_attention","moe"],
            "hybrid_override_pattern":"M-M-","mamba_num_heads":16,"mamba_head_dim":64,
            "n_groups":2,"num_local_experts":16,"num_experts_per_tok":4,
            "moe_intermediate_size":256,"moe_shared_expert_intermediate_size":512,
            "moe_latent_size":128,"n_group":4,"topk_group":2}"#,
        );
        let moe = t.moe.as_deref().unwrap();
        assert_eq!((moe.experts, moe.top_k, moe.latent), (16, 4, 128));
        assert_eq!(moe.activation, ExpertActivation::Relu2);
        assert_eq!(moe.sparse_layers(t.layers), 2);
        assert!(moe.is_sparse(1) && moe.is_sparse(3) && !moe.is_sparse(0));
        // Up and down, 128 wide: the expert's parameters.
        assert_eq!(moe.expert_parameters(512), 2 * 128 * 256);
        assert_eq!(
            moe.router,
            Router::SigmoidGroups {
                groups: 4,
                topk_groups: 2,
                renormalize: true
            }
        );
        assert_eq!(t.attention_layers(), 1);
    }

    #[test]
    fn refuses_what_it_does_not_model_by_name() {
        let err = |json: &str| import(json).unwrap_err().to_string();
        let base = r#""model_type":"nemotron_h","hidden_size":512,"num_attention_heads":8"#;
        assert!(
            err(&format!(r#"{{{base},"hybrid_override_pattern":"M-X"}}"#))
                .contains("hybrid_override_pattern has a 'X'")
        );
        assert!(
            err(&format!(r#"{{{base},"layers_block_type":["mamba2"]}}"#))
                .contains("layers_block_type has a 'mamba2' layer")
        );
        assert!(
            err(&format!(
                r#"{{{base},"hybrid_override_pattern":"M-","mlp_hidden_act":"silu"}}"#
            ))
            .contains("mlp_hidden_act 'silu'")
        );
        assert!(
            err(&format!(
                r#"{{{base},"hybrid_override_pattern":"ME","mlp_bias":true}}"#
            ))
            .contains("mlp_bias with experts")
        );
    }
}
