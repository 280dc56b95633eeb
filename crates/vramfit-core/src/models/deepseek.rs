//! DeepSeek-V2 and -V3 as `transformers` builds them
//! (`models/deepseek_v{2,3}/modeling_deepseek_v{2,3}.py`): multi-head
//! latent attention ([`super::mla`]) and, from layer
//! `first_k_dense_replace` on, routed experts of `moe_intermediate_size`
//! plus `n_shared_experts` shared ones run as one MLP; the first layers
//! keep a dense MLP of `intermediate_size`. V2 routes by softmax (greedy or
//! group-limited), V3 by sigmoid scores with a bias-corrected, group-limited
//! choice. Lowered by the shared transformer ([`super::transformer`]),
//! [`super::mla`] and [`super::moe_lower`].
//!
//! The multi-token-prediction block (`num_nextn_predict_layers`) is not
//! built by `transformers` and not counted.

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::mla::{Indexer, Mla, MlaRope};
use super::moe::{Moe, Router};
use super::{ModelSpec, TransformerSpec, llama};
use crate::error::Error;

/// The DeepSeek family.
pub const FAMILY: Family = Family {
    imports: &[
        Import {
            model_type: "deepseek_v2",
            read: read_v2,
        },
        Import {
            model_type: "deepseek_v3",
            read: read_v3,
        },
        // Moonshot AI's Kimi K2 (K2-Instruct, K2-Thinking, and K2.5's
        // `text_config`): DeepSeek-V3's architecture, named `kimi_k2` so that
        // engines can tell it apart (its model card says to rename it
        // `deepseek_v3` for a framework that does not know it).
        Import {
            model_type: "kimi_k2",
            read: read_v3,
        },
        // DeepSeek-V3.2: V3 with DeepSeek Sparse Attention's indexer.
        Import {
            model_type: "deepseek_v32",
            read: read_v32,
        },
        // GLM-5 (`GlmMoeDsaForCausalLM`): the same layout at its own shape.
        Import {
            model_type: "glm_moe_dsa",
            read: read_glm_moe_dsa,
        },
    ],
    presets,
};

/// The fields both generations read, with their config class's defaults
/// `(vocab, hidden, layers, heads, intermediate, moe intermediate,
/// routed experts, shared experts, first dense)`.
pub(super) type Defaults = (u64, u64, u64, u64, u64, u64, u64, u64, u64);

/// A DeepSeek decoder from its config, the router given; `latent` holds
/// the latent attention's defaults and its rotary kind.
pub(super) fn read(
    f: &Fields<'_>,
    d: Defaults,
    router: Router,
    latent: Mla,
) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    // `q_lora_rank: null` means one `q_proj`.
    let q_lora_rank = match f.map.get("q_lora_rank") {
        Some(serde_json::Value::Null) => 0,
        _ => or("q_lora_rank", latent.q_lora_rank)?,
    };
    let mla = Mla {
        q_lora_rank,
        kv_lora_rank: or("kv_lora_rank", latent.kv_lora_rank)?,
        qk_nope_head_dim: or("qk_nope_head_dim", latent.qk_nope_head_dim)?,
        qk_rope_head_dim: or("qk_rope_head_dim", latent.qk_rope_head_dim)?,
        v_head_dim: or("v_head_dim", latent.v_head_dim)?,
        rope: latent.rope,
        indexer: None,
    };
    let moe = Moe::deepseek_style(
        (
            or("n_routed_experts", d.6)?,
            f.u64("num_experts_per_tok")?,
            or("moe_intermediate_size", d.5)?,
        ),
        or("n_shared_experts", d.7)?,
        or("first_k_dense_replace", d.8)?,
        router,
    );
    let bias = f.bool_or("attention_bias", false);
    let mut t = decoder(
        (
            or("vocab_size", d.0)?,
            or("hidden_size", d.1)?,
            or("num_hidden_layers", d.2)?,
        ),
        or("num_attention_heads", d.3)?,
        or("intermediate_size", d.4)?,
        mla,
        moe,
    );
    t.qkv_bias = bias;
    t.mlp_bias = bias;
    t.tie_embeddings = f.bool_or("tie_word_embeddings", false);
    t.attention_dropout = f.f64_or("attention_dropout", 0.0);
    Ok(ModelSpec::Transformer(t))
}

/// Reads a `deepseek_v2` config with `DeepseekV2Config`'s defaults
/// (`models/deepseek_v2/configuration_deepseek_v2.py`;
/// `num_experts_per_tok` has none and is required).
fn read_v2(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let (groups, topk_groups) = match f.str_or("topk_method", "greedy")? {
        "group_limited_greedy" => (f.u64("n_group")?, f.u64("topk_group")?),
        _ => (1, 1),
    };
    let router = Router::SoftmaxGroups {
        groups,
        topk_groups,
    };
    let d = (102_400, 4096, 32, 32, 11_008, 1407, 64, 2, 0);
    read(f, d, router, latent(1536, MlaRope::Complex))
}

/// Reads a `deepseek_v3` config with `DeepseekV3Config`'s defaults
/// (`models/deepseek_v3/configuration_deepseek_v3.py`: DeepSeek-V3's shape).
fn read_v3(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let d = (129_280, 7168, 61, 128, 18_432, 2048, 256, 1, 3);
    read_sigmoid(f, (8, 4), d, latent(1536, MlaRope::Real))
}

/// Reads a `deepseek_v32` config with `DeepseekV32Config`'s defaults
/// (DeepSeek-V3.2's shape: V3's, and an indexer of 64 heads of 128 that
/// keeps 2048 keys in every layer).
fn read_v32(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    with_indexer(read_v3(f)?, f, 64)
}

/// Reads a `glm_moe_dsa` config with `GlmMoeDsaConfig`'s defaults (GLM-5's
/// shape: 78 layers of 6144, 64 heads of 192 + 64 query/key and 256 value
/// features over a 2048 query rank, 256 experts in one group, an indexer
/// of 32 heads).
fn read_glm_moe_dsa(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let d = (154_880, 6144, 78, 64, 12_288, 2048, 256, 1, 3);
    let latent = Mla {
        qk_nope_head_dim: 192,
        v_head_dim: 256,
        ..latent(2048, MlaRope::Real)
    };
    with_indexer(read_sigmoid(f, (1, 1), d, latent)?, f, 32)
}

/// A decoder routed by V3's bias-corrected sigmoid scores over groups
/// (`n_group`, `topk_group`, defaults `groups`), 8 experts a token unless
/// the config says otherwise.
fn read_sigmoid(
    f: &Fields<'_>,
    groups: (u64, u64),
    d: Defaults,
    latent: Mla,
) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let router = Router::SigmoidGroups {
        groups: or("n_group", groups.0)?,
        topk_groups: or("topk_group", groups.1)?,
        renormalize: f.bool_or("norm_topk_prob", true),
    };
    let mut fields = f.map.clone();
    fields
        .entry("num_experts_per_tok")
        .or_insert(serde_json::Value::from(8));
    let f = Fields {
        map: &fields,
        model_type: f.model_type.clone(),
    };
    read(&f, d, router, latent)
}

/// `spec` with the indexer its config describes (`index_n_heads`, default
/// `heads`; `index_head_dim`, 128; `index_topk`, 2048; GLM's schedule of
/// layers that reuse the previous indexer's choice, checked against an
/// explicit `indexer_types`).
fn with_indexer(spec: ModelSpec, f: &Fields<'_>, heads: u64) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let ModelSpec::Transformer(mut t) = spec else {
        return Ok(spec);
    };
    let indexer = Indexer {
        heads: or("index_n_heads", heads)?,
        head_dim: or("index_head_dim", 128)?,
        topk: or("index_topk", 2048)?,
        every: or("index_topk_freq", 1)?.max(1),
        offset: or("index_skip_topk_offset", 2)?,
    };
    let bad = |why: String| Err(Error::InvalidModel(why));
    if indexer.heads == 0
        || indexer.head_dim == 0
        || indexer.heads > 1 << 16
        || indexer.head_dim > 1 << 16
    {
        return bad(format!(
            "index_n_heads and index_head_dim must be between 1 and 65536, got {} and {}",
            indexer.heads, indexer.head_dim
        ));
    }
    if let Some(types) = f.opt_str_list("indexer_types")? {
        let expected = (0..t.layers).map(|i| if indexer.runs_in(i) { "full" } else { "shared" });
        if !types.iter().copied().eq(expected) {
            return bad(
                "indexer_types must follow index_topk_freq and index_skip_topk_offset (\"full\" every freq-th layer from the offset on, \"shared\" between); another pattern is not read"
                    .into(),
            );
        }
    }
    let Some(mla) = t.mla.as_deref_mut() else {
        return Ok(ModelSpec::Transformer(t));
    };
    if mla.q_lora_rank == 0 {
        return bad(
            "the sparse-attention indexer reads the query latent: q_lora_rank must be set".into(),
        );
    }
    mla.indexer = Some(indexer);
    Ok(ModelSpec::Transformer(t))
}

/// `t` with an indexer of `heads` heads of 128 keeping 2048 keys in every
/// layer (DeepSeek-V3.2's and GLM-5's).
fn indexed(mut t: TransformerSpec, heads: u64) -> TransformerSpec {
    if let Some(m) = t.mla.as_deref_mut() {
        m.indexer = Some(Indexer {
            heads,
            head_dim: 128,
            topk: 2048,
            every: 1,
            offset: 2,
        });
    }
    t
}

/// DeepSeek's latent attention with a query rank of `q_lora_rank`: a
/// latent of 512, 128 + 64 query/key and 128 value features per head.
fn latent(q_lora_rank: u64, rope: MlaRope) -> Mla {
    Mla {
        q_lora_rank,
        kv_lora_rank: 512,
        qk_nope_head_dim: 128,
        qk_rope_head_dim: 64,
        v_head_dim: 128,
        rope,
        indexer: None,
    }
}

/// A DeepSeek decoder: latent attention with one key/value head per head
/// (`head_dim` the query/key width), `moe` from its first sparse layer.
pub(super) fn decoder(
    (vocab, hidden, layers): (u64, u64, u64),
    heads: u64,
    intermediate: u64,
    mla: Mla,
    moe: Moe,
) -> TransformerSpec {
    TransformerSpec {
        head_dim: mla.qk_head_dim(),
        mla: Some(Box::new(mla)),
        moe: Some(Box::new(moe)),
        ..llama::decoder(vocab, hidden, layers, heads, heads, intermediate)
    }
}

/// DeepSeek-V2-Lite and DeepSeek-V3, from their `config.json` files on the
/// Hugging Face Hub (`deepseek-ai/DeepSeek-V2-Lite`, `DeepSeek-V3`;
/// DeepSeek-R1 has V3's shapes): V2-Lite has no query bottleneck, 64
/// experts (6 per token) and 2 shared; V3 256 experts (8 per token in 4 of
/// 8 groups), 1 shared, 3 dense layers.
fn presets() -> Vec<ModelPreset> {
    let p = |id, name, t| ModelPreset::new(id, name, Group::DeepSeek, ModelSpec::Transformer(t));
    let mla = latent;
    let moe = |(experts, top_k, i, shared, first), router| {
        Moe::deepseek_style((experts, top_k, i), shared, first, router)
    };
    let v2 = Router::SoftmaxGroups {
        groups: 1,
        topk_groups: 1,
    };
    let v3 = Router::SigmoidGroups {
        groups: 8,
        topk_groups: 4,
        renormalize: true,
    };
    // DeepSeek-V3's shape, which V3.2 keeps.
    let v3_shape = || {
        decoder(
            (129_280, 7168, 61),
            128,
            18_432,
            mla(1536, MlaRope::Real),
            moe((256, 8, 2048, 1, 3), v3),
        )
    };
    vec![
        p(
            "deepseek-v2-lite",
            "DeepSeek-V2-Lite",
            decoder(
                (102_400, 2048, 27),
                16,
                10_944,
                mla(0, MlaRope::Complex),
                moe((64, 6, 1408, 2, 1), v2),
            ),
        )
        .context(163_840),
        p("deepseek-v3", "DeepSeek-V3 / R1", v3_shape()).context(163_840),
        // DeepSeek-V3.2: V3's shape and an indexer in every layer.
        p("deepseek-v3.2", "DeepSeek-V3.2", indexed(v3_shape(), 64)).context(163_840),
        // GLM-5 (zai-org/GLM-5): 744B, latent attention over a 2048 query
        // rank, 256 experts in one group, an indexer of 32 heads.
        ModelPreset::new(
            "glm-5",
            "GLM-5",
            Group::Glm,
            ModelSpec::Transformer(indexed(
                decoder(
                    (154_880, 6144, 78),
                    64,
                    12_288,
                    Mla {
                        qk_nope_head_dim: 192,
                        v_head_dim: 256,
                        ..mla(2048, MlaRope::Real)
                    },
                    moe(
                        (256, 8, 2048, 1, 3),
                        Router::SigmoidGroups {
                            groups: 1,
                            topk_groups: 1,
                            renormalize: true,
                        },
                    ),
                ),
                32,
            )),
        )
        .context(202_752),
        // Kimi-K2-Instruct-0905, K2-Thinking and K2.5's text model: 384
        // experts in one group, 64 heads, one dense layer, 160K tokens.
        ModelPreset::new(
            "kimi-k2",
            "Kimi-K2 (K2-Thinking, K2.5 text)",
            Group::Kimi,
            ModelSpec::Transformer(decoder(
                (163_840, 7168, 61),
                64,
                18_432,
                mla(1536, MlaRope::Real),
                moe(
                    (384, 8, 2048, 1, 1),
                    Router::SigmoidGroups {
                        groups: 1,
                        topk_groups: 1,
                        renormalize: true,
                    },
                ),
            )),
        )
        .context(262_144),
    ]
}
