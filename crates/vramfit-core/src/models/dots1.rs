//! rednote's dots.llm1 (`model_type` `dots1`: dots.llm1.base and .inst) as
//! `transformers` 5.24 builds it (`models/dots1/modeling_dots1.py`):
//! Qwen3's attention (an RMSNorm over each head of the queries and keys
//! before the rotary embedding; `attention_bias` on q, k, v and o) over
//! GLM-4.5's sparse block, which is DeepSeek-V3's (`Dots1MoE` and
//! `Dots1TopkRouter` are `Glm4MoeMoE` and `Glm4MoeTopkRouter` line for
//! line): an fp32 router scoring by sigmoid with a bias-corrected,
//! group-limited choice, routed experts of `moe_intermediate_size` and
//! `n_shared_experts` shared ones run as one MLP, from layer
//! `first_k_dense_replace` on; the layers before keep a dense MLP of
//! `intermediate_size`. Lowered by the shared transformer
//! ([`super::transformer`]) and [`super::moe_lower`].

use super::family::{Family, Import};
use super::hf_fields::Fields;
use super::moe::{Moe, Router};
use super::transformer::SlidingWindow;
use super::{BlockOptions, ModelSpec, QkNorm, TransformerSpec, llama};
use crate::error::Error;
use serde_json::Value;

/// The dots.llm1 family (no presets).
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "dots1",
        read,
    }],
    presets: Vec::new,
};

/// Reads a `dots1` config with `Dots1Config`'s defaults (dots.llm1's dense
/// shape). The class has no default for the experts (`n_routed_experts`,
/// `n_shared_experts`, `num_experts_per_tok` are `None`, which the model
/// cannot be built with): they are required. Its heads are
/// `hidden_size / num_attention_heads` wide unless the file names a
/// `head_dim`, as the attention reads it.
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let hidden = or("hidden_size", 4608)?;
    let heads = f.heads_or(32)?;
    let layers = or("num_hidden_layers", 62)?;
    // Absent or null: as many as the query heads (the class's default, 32, is its head count).
    let kv_heads = match f.map.get("num_key_value_heads") {
        None | Some(Value::Null) => heads,
        Some(_) => f.u64("num_key_value_heads")?,
    };
    let moe = Moe::deepseek_style(
        (
            f.u64("n_routed_experts")?,
            f.u64("num_experts_per_tok")?,
            or("moe_intermediate_size", 1408)?,
        ),
        f.u64("n_shared_experts")?,
        or("first_k_dense_replace", 0)?,
        Router::SigmoidGroups {
            groups: or("n_group", 1)?,
            topk_groups: or("topk_group", 1)?,
            renormalize: f.bool_or("norm_topk_prob", false),
        },
    );
    let attention_bias = f.bool_or("attention_bias", false);
    let mut t = TransformerSpec {
        head_dim: or("head_dim", hidden / heads)?,
        block: BlockOptions {
            qk_norm: QkNorm::PerHead,
            sliding: sliding(f, layers)?,
            ..BlockOptions::default()
        },
        moe: Some(Box::new(moe)),
        qkv_bias: attention_bias,
        // The Llama layout's `mlp_bias` is the output projection's.
        mlp_bias: attention_bias,
        ..llama::decoder(
            or("vocab_size", 152_064)?,
            hidden,
            layers,
            heads,
            kv_heads,
            or("intermediate_size", 10_944)?,
        )
    };
    t.tie_embeddings = f.bool_or("tie_word_embeddings", false);
    t.attention_dropout = f.f64_or("attention_dropout", 0.0);
    Ok(ModelSpec::Transformer(t))
}

/// The sliding layers: those `layer_types` names, or, as `__post_init__`
/// fills the list in, every layer from `max_window_layers` (62) on when
/// `sliding_window` (4096 by default) is set — none in dots.llm1, whose 62
/// layers all attend to every position.
fn sliding(f: &Fields<'_>, layers: u64) -> Result<Option<SlidingWindow>, Error> {
    let window = match f.map.get("sliding_window") {
        None => Some(4096),
        Some(_) => f.opt_u64("sliding_window")?,
    };
    let Some(window) = window else {
        return Ok(None);
    };
    let listed = f.opt_str_list("layer_types")?;
    let types: Vec<&str> = match listed {
        Some(types) => types,
        None => {
            let from = f.opt_u64("max_window_layers")?.unwrap_or(62);
            (0..layers)
                .map(|i| {
                    if i >= from {
                        "sliding_attention"
                    } else {
                        "full_attention"
                    }
                })
                .collect()
        }
    };
    SlidingWindow::from_layer_types(window, &types)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::ModelSpec;

    fn spec(json: &str) -> Result<TransformerSpec, Error> {
        let map: serde_json::Map<String, Value> =
            serde_json::from_str(json).expect("test JSON is valid");
        let f = Fields {
            map: &map,
            model_type: "dots1".into(),
        };
        match read(&f)? {
            ModelSpec::Transformer(t) => Ok(t),
            other => panic!("not a transformer: {other:?}"),
        }
    }

    const EXPERTS: &str =
        r#""n_routed_experts": 128, "n_shared_experts": 2, "num_experts_per_tok": 6"#;

    #[test]
    fn reads_the_released_shape() {
        let t = spec(&format!(
            r#"{{"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 32,
                "num_hidden_layers": 62, "first_k_dense_replace": 1, "moe_intermediate_size": 1408,
                "sliding_window": null, {EXPERTS}}}"#
        ))
        .expect("reads");
        assert_eq!((t.heads, t.kv_heads, t.head_dim), (32, 32, 128));
        assert_eq!(t.block.qk_norm, QkNorm::PerHead);
        assert_eq!(t.block.sliding, None);
        let moe = t.moe.as_deref().expect("sparse");
        assert_eq!(
            (moe.experts, moe.top_k, moe.expert_intermediate),
            (128, 6, 1408)
        );
        assert_eq!(moe.shared.map(|s| s.intermediate), Some(2 * 1408));
        assert!(!moe.is_sparse(0) && moe.is_sparse(1));
        assert!(!t.qkv_bias && !t.mlp_bias);
    }

    #[test]
    fn attention_bias_biases_q_k_v_and_o() {
        let t = spec(&format!(r#"{{"attention_bias": true, {EXPERTS}}}"#)).expect("reads");
        assert!(t.qkv_bias && t.mlp_bias);
    }

    #[test]
    fn slides_from_max_window_layers() {
        // Every layer from the fourth on slides: not a pattern vramfit reads, refused by name.
        let err = spec(&format!(
            r#"{{"num_hidden_layers": 6, "max_window_layers": 3, {EXPERTS}}}"#
        ))
        .expect_err("not every n-th layer full");
        assert!(err.to_string().contains("layer_types"), "{err}");
        // Every layer slides.
        let t = spec(&format!(
            r#"{{"num_hidden_layers": 6, "max_window_layers": 0, "sliding_window": 1024, {EXPERTS}}}"#
        ))
        .expect("reads");
        assert_eq!(
            t.block.sliding,
            Some(SlidingWindow {
                window: 1024,
                full_every: 0
            })
        );
    }

    #[test]
    fn the_experts_are_required() {
        let err = spec(r#"{"n_routed_experts": 128, "num_experts_per_tok": 6}"#)
            .expect_err("no shared experts named");
        assert!(err.to_string().contains("n_shared_experts"), "{err}");
    }
}
