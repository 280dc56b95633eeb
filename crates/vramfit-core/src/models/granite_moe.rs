//! IBM's Granite mixtures of experts and Granite 4.0 as `transformers`
//! 5.24 builds them: Granite 3.0/3.1 MoE (`granitemoe`,
//! `models/granitemoe/modeling_granitemoe.py`), the same with a shared MLP
//! (`granitemoeshared`) and Granite 4.0 (`granitemoehybrid`,
//! `modeling_granitemoehybrid.py`) in its attention layers. Dense Granite's
//! layout and multipliers ([`super::granite`]) with, in place of the MLP,
//! a router over `num_local_experts` SwiGLU experts of `intermediate_size`
//! (`GraniteMoeTopKRouter`: top-k of the fp32 logits, softmax over the k,
//! [`Router::TopKSoftmaxFp32`]; the experts as Mixtral's) and after them a
//! shared MLP of `shared_intermediate_size` whose gate and up are one
//! projection (`shared_mlp.input_linear` chunked in two); a Granite 4.0
//! model without experts (`num_local_experts: 0`: Granite-4.0-Micro) has
//! only that shared MLP. Granite 4.0 rotates queries and keys only with
//! `position_embedding_type: "rope"`.
//!
//! Granite 4.0's H models put Mamba-2 layers ([`super::mamba2`]) in place
//! of attention in every layer `layer_types` does not name `attention`.

use super::family::{Family, Import};
use super::hf_fields::Fields;
use super::moe::{Moe, Router, SharedExperts};
use super::{Mamba2, MlpKind, ModelSpec, Recurrent, TransformerSpec, granite};
use crate::error::Error;

/// The Granite mixture-of-experts family (no presets).
pub const FAMILY: Family = Family {
    imports: &[
        Import {
            model_type: "granitemoe",
            read: read_moe,
        },
        Import {
            model_type: "granitemoeshared",
            read: read_shared,
        },
        Import {
            model_type: "granitemoehybrid",
            read: read_hybrid,
        },
    ],
    presets: Vec::new,
};

/// What the three config classes share (`GraniteMoeConfig`'s defaults):
/// the decoder with `num_local_experts` experts of `intermediate_size`,
/// `num_experts_per_tok` per token, and a shared MLP of `shared` (none
/// for 0); `rope` whether queries and keys rotate.
fn read_granite(f: &Fields<'_>, shared: u64, rope: bool) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let hidden = or("hidden_size", 4096)?;
    let heads = f.heads_or(32)?;
    let intermediate = or("intermediate_size", 11_008)?;
    let experts = or("num_local_experts", 8)?;
    let mut t = granite::decoder(
        (or("vocab_size", 32_000)?, hidden),
        (or("num_hidden_layers", 32)?, heads),
        f.opt_u64("num_key_value_heads")?.unwrap_or(heads),
        intermediate,
    );
    t.head_dim = f.opt_u64("head_dim")?.unwrap_or(hidden / heads.max(1));
    t.qkv_bias = f.bool_or("attention_bias", false);
    t.mlp_bias = t.qkv_bias;
    t.tie_embeddings = f.bool_or("tie_word_embeddings", false);
    t.attention_dropout = f.f64_or("attention_dropout", 0.0);
    if !rope {
        // `rotary_emb` is None: no layer rotates.
        t.block.nope_every = 1;
    }
    let shared = (shared > 0).then_some(SharedExperts {
        intermediate: shared,
        gate: false,
        first: false,
        fused: true,
    });
    if experts == 0 {
        // `block_sparse_moe` is None: the shared MLP is the layer's MLP.
        let Some(s) = shared else {
            return Err(Error::InvalidModel(
                "num_local_experts and shared_intermediate_size are both 0: the layers would have no MLP"
                    .into(),
            ));
        };
        return Ok(ModelSpec::Transformer(TransformerSpec {
            intermediate: s.intermediate,
            block: super::BlockOptions {
                mlp: MlpKind::FusedGated,
                ..t.block
            },
            ..t
        }));
    }
    t.moe = Some(Box::new(Moe {
        experts,
        top_k: or("num_experts_per_tok", 2)?,
        expert_intermediate: intermediate,
        router: Router::TopKSoftmaxFp32,
        shared,
        dense: Default::default(),
        biases: false,
        activation: Default::default(),
        aux_loss: f.bool_or("output_router_logits", false),
        latent: 0,
    }));
    Ok(ModelSpec::Transformer(t))
}

/// `granitemoe`: experts only, rotary positions.
fn read_moe(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    read_granite(f, 0, true)
}

/// `granitemoeshared`: a shared MLP of `shared_intermediate_size` (default
/// 0: none) after the experts.
fn read_shared(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    read_granite(f, f.opt_u64("shared_intermediate_size")?.unwrap_or(0), true)
}

/// `granitemoehybrid` (Granite 4.0): its `layer_types` (default: Mamba-2
/// in every layer) name the attention layers, the others Mamba-2
/// ([`Mamba2`], from the `mamba_*` fields with `GraniteMoeHybridConfig`'s
/// defaults); the shared MLP of `shared_intermediate_size` (default 1024)
/// always; rotary positions only with `position_embedding_type: "rope"`.
fn read_hybrid(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let layers = or("num_hidden_layers", 32)?;
    let types = f.opt_str_list("layer_types")?;
    let attention: Vec<u64> = match &types {
        None => Vec::new(),
        Some(types) => {
            if types.len() as u64 != layers {
                return Err(Error::InvalidModel(format!(
                    "layer_types names {} layers, num_hidden_layers {layers}",
                    types.len()
                )));
            }
            let mut attention = Vec::new();
            for (i, kind) in (0u64..).zip(types.iter()) {
                match *kind {
                    "attention" | "full_attention" => attention.push(i),
                    "mamba" | "linear_attention" => {}
                    other => {
                        return Err(Error::InvalidModel(format!(
                            "layer_types has a '{other}' layer: Granite 4.0's layers are attention or mamba"
                        )));
                    }
                }
            }
            attention
        }
    };
    let rope = f.str_or("position_embedding_type", "")? == "rope";
    let mut spec = read_granite(f, or("shared_intermediate_size", 1024)?, rope)?;
    if attention.len() as u64 == layers {
        return Ok(spec);
    }
    let mamba = Mamba2::read(f, or("hidden_size", 4096)?, attention)?;
    if let ModelSpec::Transformer(t) = &mut spec {
        t.linear = Some(Box::new(Recurrent::Mamba2(mamba)));
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // Tests fail loudly by design.

    use super::*;
    use crate::hf::import;

    fn spec(json: &str) -> TransformerSpec {
        match import(json).unwrap().spec {
            ModelSpec::Transformer(t) => t,
            other => panic!("not a transformer: {other:?}"),
        }
    }

    #[test]
    fn granite_4_without_experts_has_only_its_fused_shared_mlp() {
        let t = spec(
            r#"{"model_type": "granitemoehybrid", "hidden_size": 512, "num_hidden_layers": 2,
                "num_attention_heads": 8, "num_key_value_heads": 2, "num_local_experts": 0,
                "shared_intermediate_size": 1536, "layer_types": ["attention", "attention"],
                "position_embedding_type": "rope"}"#,
        );
        assert!(t.moe.is_none());
        assert_eq!(t.intermediate, 1536);
        assert_eq!(t.block.mlp, MlpKind::FusedGated);
        assert_eq!(t.block.nope_every, 0);
        assert!(t.block.scaled_residuals && t.block.embed_scale && t.block.scaled_logits);
    }

    #[test]
    fn granite_4_without_rope_rotates_no_layer() {
        let t = spec(
            r#"{"model_type": "granitemoehybrid", "num_hidden_layers": 2,
                "layers_block_type": ["attention", "attention"]}"#,
        );
        assert_eq!(t.block.nope_every, 1);
        let moe = t.moe.expect("eight experts by default");
        assert_eq!((moe.experts, moe.top_k), (8, 2));
        assert_eq!(moe.router, Router::TopKSoftmaxFp32);
        let shared = moe.shared.expect("a shared MLP");
        assert!(shared.fused && !shared.gate && !shared.first);
        assert_eq!(shared.intermediate, 1024);
    }

    #[test]
    fn mamba_layers_are_read_from_layer_types() {
        let t = spec(
            r#"{"model_type": "granitemoehybrid", "hidden_size": 512, "num_hidden_layers": 4,
                "layer_types": ["mamba", "mamba", "attention", "mamba"], "mamba_n_heads": 16}"#,
        );
        let Some(Recurrent::Mamba2(m)) = t.linear.as_deref() else {
            panic!("Mamba-2 layers: {:?}", t.linear)
        };
        assert_eq!(m.attention, vec![2]);
        assert_eq!((m.heads, m.head_dim, m.state, m.groups), (16, 64, 256, 1));
        assert_eq!(t.attention_layers(), 1);
        // Every layer Mamba-2 where `layer_types` is absent (the default).
        let t = spec(r#"{"model_type": "granitemoehybrid", "num_hidden_layers": 2}"#);
        assert_eq!(t.attention_layers(), 0);
        let e = import(
            r#"{"model_type": "granitemoehybrid", "hidden_size": 512, "mamba_n_heads": 100}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("mamba_d_head"), "{e}");
    }

    #[test]
    fn granite_moe_shares_no_mlp_unless_sized() {
        let moe = |json| spec(json).moe.expect("experts");
        assert!(moe(r#"{"model_type": "granitemoe"}"#).shared.is_none());
        assert!(
            moe(r#"{"model_type": "granitemoeshared"}"#)
                .shared
                .is_none()
        );
        let s = moe(r#"{"model_type": "granitemoeshared", "shared_intermediate_size": 1024}"#)
            .shared
            .expect("sized");
        assert_eq!(s.intermediate, 1024);
    }
}
