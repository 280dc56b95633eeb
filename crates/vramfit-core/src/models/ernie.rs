//! Baidu's ERNIE 4.5 as `transformers` builds it
//! (`models/ernie4_5/modeling_ernie4_5.py`, `models/ernie4_5_moe/`): Llama's
//! layout (pre-RMSNorm, grouped-query attention, SwiGLU) with the rotary
//! embedding in interleaved pairs, its products taken in fp32
//! ([`Rotary::InterleavedFp32`]), and in the mixtures of experts a sparse
//! block on the layers from `moe_layer_start_index` to `moe_layer_end_index`
//! every `moe_layer_interval`: `moe_num_shared_experts` shared experts run
//! first as one MLP, then `moe_k` of `moe_num_experts` routed experts of
//! `moe_intermediate_size`, chosen by an fp32 router with a frozen
//! score-correction bias ([`Router::SoftmaxCorrected`]). Lowered by the
//! shared transformer ([`super::transformer`]) and [`super::moe_lower`].
//!
//! `use_bias` (biases on every projection but the head; false in every
//! released checkpoint) is refused rather than read as Llama's: the shared
//! lowering puts no bias on the output projection or the MLP.

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::moe::{DenseLayers, ExpertActivation, Moe, Router, SharedExperts};
use super::{BlockOptions, ModelSpec, Rotary, TransformerSpec, llama};
use crate::error::Error;

/// The ERNIE 4.5 family.
pub const FAMILY: Family = Family {
    imports: &[
        Import {
            model_type: "ernie4_5",
            read: read_dense,
        },
        Import {
            model_type: "ernie4_5_moe",
            read: read_moe,
        },
    ],
    presets,
};

/// The fields both model types read, with their config class's defaults.
struct Dense {
    vocab: u64,
    hidden: u64,
    layers: u64,
    heads: u64,
    kv_heads: u64,
    intermediate: u64,
}

/// A decoder from the fields both model types share; `head_dim` absent or
/// null is `hidden_size / num_attention_heads` (`Ernie4_5Config` defaults
/// it to 128 instead, given as `head_dim`).
fn decoder_of(f: &Fields<'_>, d: Dense, head_dim: Option<u64>) -> Result<TransformerSpec, Error> {
    if f.bool_or("use_bias", false) {
        return Err(Error::InvalidModel(
            "use_bias: true puts biases on every ERNIE 4.5 projection, which vramfit does not \
             model (every released checkpoint has false)"
                .into(),
        ));
    }
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let hidden = or("hidden_size", d.hidden)?;
    let heads = or("num_attention_heads", d.heads)?;
    let head_dim = match f.opt_u64("head_dim")? {
        Some(v) => v,
        None => head_dim.unwrap_or(hidden / heads.max(1)),
    };
    let mut t = decoder(
        (
            or("vocab_size", d.vocab)?,
            hidden,
            or("num_hidden_layers", d.layers)?,
        ),
        (heads, or("num_key_value_heads", d.kv_heads)?, head_dim),
        or("intermediate_size", d.intermediate)?,
    );
    t.tie_embeddings = f.bool_or("tie_word_embeddings", true);
    Ok(t)
}

/// Reads an `ernie4_5` config with `Ernie4_5Config`'s defaults
/// (`models/ernie4_5/configuration_ernie4_5.py`: ERNIE-4.5-0.3B's shape).
fn read_dense(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let d = Dense {
        vocab: 103_424,
        hidden: 1024,
        layers: 18,
        heads: 16,
        kv_heads: 2,
        intermediate: 3072,
    };
    Ok(ModelSpec::Transformer(decoder_of(f, d, Some(128))?))
}

/// Reads an `ernie4_5_moe` config with `Ernie4_5_MoeConfig`'s defaults
/// (`models/ernie4_5_moe/configuration_ernie4_5_moe.py`:
/// ERNIE-4.5-21B-A3B's shape). `moe_layer_end_index` -1 (the default) or
/// null is the last layer.
fn read_moe(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let d = Dense {
        vocab: 103_424,
        hidden: 2560,
        layers: 28,
        heads: 20,
        kv_heads: 4,
        intermediate: 12_288,
    };
    let mut t = decoder_of(f, d, None)?;
    let end = match f.map.get("moe_layer_end_index").and_then(|v| v.as_i64()) {
        Some(-1) | None => t.layers.saturating_sub(1),
        Some(_) => f.u64("moe_layer_end_index")?,
    };
    let mut moe = sparse(
        (or("moe_num_experts", 64)?, or("moe_k", 6)?),
        or("moe_intermediate_size", 1536)?,
        or("moe_num_shared_experts", 2)?,
        (
            or("moe_layer_start_index", 1)?,
            end,
            or("moe_layer_interval", 1)?,
        ),
        t.layers,
    );
    moe.aux_loss = f.bool_or("output_router_logits", false);
    t.moe = Some(Box::new(moe));
    Ok(ModelSpec::Transformer(t))
}

/// ERNIE 4.5's sparse block: `top_k` of `experts` routed experts of
/// `intermediate` and `shared` shared ones, on the layers `i` with `start
/// <= i <= end` and `(i + 1) % interval == 0`.
fn sparse(
    (experts, top_k): (u64, u64),
    intermediate: u64,
    shared: u64,
    (start, end, interval): (u64, u64, u64),
    layers: u64,
) -> Moe {
    Moe {
        experts,
        top_k,
        expert_intermediate: intermediate,
        router: Router::SoftmaxCorrected,
        shared: (shared > 0).then(|| SharedExperts {
            intermediate: intermediate.saturating_mul(shared),
            gate: false,
            first: true,
            fused: false,
        }),
        dense: DenseLayers {
            first: start,
            sparse_step: interval,
            listed: (end.saturating_add(1)..layers).collect(),
        },
        biases: false,
        activation: ExpertActivation::default(),
        aux_loss: false,
        latent: 0,
    }
}

/// An ERNIE 4.5 decoder: Llama's with the interleaved fp32 rotary embedding.
fn decoder(
    (vocab, hidden, layers): (u64, u64, u64),
    (heads, kv_heads, head_dim): (u64, u64, u64),
    intermediate: u64,
) -> TransformerSpec {
    TransformerSpec {
        head_dim,
        block: BlockOptions {
            rotary: Rotary::InterleavedFp32,
            ..BlockOptions::default()
        },
        tie_embeddings: true,
        ..llama::decoder(vocab, hidden, layers, heads, kv_heads, intermediate)
    }
}

/// ERNIE-4.5-0.3B, -21B-A3B and -300B-A47B, from their `config.json` files
/// on the Hugging Face Hub (`baidu/ERNIE-4.5-0.3B-PT`,
/// `baidu/ERNIE-4.5-21B-A3B-PT`, `baidu/ERNIE-4.5-300B-A47B-PT`): a
/// 103,424-token vocabulary tied to the head, 131,072 tokens. 0.3B: 18
/// layers of 1024, 16 query heads of 128 over 2; 21B-A3B: 28 layers of
/// 2560, 20 heads over 4, 64 experts of 1536 (6 per token) and 2 shared
/// from layer 1; 300B-A47B: 54 layers of 8192, 64 heads over 8, 64 experts
/// of 3584 (8 per token), none shared, from layer 3.
fn presets() -> Vec<ModelPreset> {
    let p = |id, name, t| {
        ModelPreset::new(id, name, Group::Ernie, ModelSpec::Transformer(t)).context(131_072)
    };
    let v = 103_424;
    let moe = |t: TransformerSpec, experts, intermediate, shared, start| {
        let layers = t.layers;
        TransformerSpec {
            moe: Some(Box::new(sparse(
                experts,
                intermediate,
                shared,
                (start, layers.saturating_sub(1), 1),
                layers,
            ))),
            ..t
        }
    };
    vec![
        p(
            "ernie-4.5-0.3b",
            "ERNIE-4.5-0.3B",
            decoder((v, 1024, 18), (16, 2, 128), 3072),
        ),
        p(
            "ernie-4.5-21b-a3b",
            "ERNIE-4.5-21B-A3B",
            moe(
                decoder((v, 2560, 28), (20, 4, 128), 12_288),
                (64, 6),
                1536,
                2,
                1,
            ),
        ),
        p(
            "ernie-4.5-300b-a47b",
            "ERNIE-4.5-300B-A47B",
            moe(
                decoder((v, 8192, 54), (64, 8, 128), 28_672),
                (64, 8),
                3584,
                0,
                3,
            ),
        ),
    ]
}
