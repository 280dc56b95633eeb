//! Gemma 4's language model as `transformers` 5.24 builds it
//! (`models/gemma4/modeling_gemma4.py`: `Gemma4TextModel`,
//! `Gemma4TextDecoderLayer`, `Gemma4TextAttention`; the config's
//! `per_layer_config` and `kv_sharing_modes` in `configuration_gemma4.py`).
//!
//! Gemma 3's sandwich-normed block with five departures, each optional in
//! the config ([`Gemma4`]):
//! - full-attention layers have heads of their own width
//!   (`global_head_dim`) and their own key–value heads
//!   (`num_global_key_value_heads`), and with `attention_k_eq_v` no value
//!   projection: the key projection's output is normalized twice, once as
//!   keys and once as values;
//! - values are RMS-normalized without a weight (`v_norm`), and no layer
//!   scales its scores (`scaling = 1.0`);
//! - the last `num_kv_shared_layers` layers project no keys or values:
//!   each attends to those of the last earlier layer of its kind (the
//!   `store` layer), whose tensors they keep alive, and keeps no cache;
//!   with `use_double_wide_mlp` their MLP is twice as wide;
//! - per-layer embeddings (PLE, `hidden_size_per_layer_input`): a second
//!   embedding table of `num_hidden_layers × width` per token plus a
//!   projection of the input embeddings, combined once into a
//!   `[tokens, layers, width]` tensor that every layer reads its slice of
//!   (`per_layer_input_gate`, GELU, the product, `per_layer_projection`,
//!   a norm, a residual);
//! - `enable_moe_block`: a mixture of experts beside the dense MLP, routed
//!   from the block's residual (its own norm and learned scale, softmax,
//!   top-k, renormalized, `per_expert_scale`), its experts fed by
//!   `pre_feedforward_layernorm_2`, the two outputs normed and added.
//!
//! Each layer's output is multiplied in place by its `layer_scalar`
//! buffer, which allocates nothing.

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::moe::{DenseLayers, ExpertActivation, Moe, Router};
use super::{BlockOptions, ModelSpec, QkNorm, SlidingWindow, TransformerSpec};
use crate::builder::Builder;
use crate::error::Error;
use crate::graph::TensorId;
use serde::{Deserialize, Serialize};

/// The Gemma 4 family (its language model: `gemma4_text`).
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "gemma4_text",
        read,
    }],
    presets,
};

/// What Gemma 4 adds to a Gemma 3 decoder (see the module's notes).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gemma4 {
    /// Head width of the full-attention layers (`global_head_dim`).
    pub full_head_dim: u64,
    /// Key–value heads of the full-attention layers
    /// (`num_global_key_value_heads` where `attention_k_eq_v` is set, else
    /// `num_key_value_heads`).
    pub full_kv_heads: u64,
    /// Full-attention layers' values are their key projection
    /// (`attention_k_eq_v`): no `v_proj`.
    pub k_eq_v: bool,
    /// The last layers that reuse an earlier layer's keys and values
    /// (`num_kv_shared_layers`).
    pub kv_shared_layers: u64,
    /// Those layers' MLP is twice `intermediate_size` (`use_double_wide_mlp`).
    pub double_wide_mlp: bool,
    /// Per-layer input width (`hidden_size_per_layer_input`); 0: none.
    pub per_layer_width: u64,
    /// Per-layer embedding vocabulary (`vocab_size_per_layer_input`).
    pub per_layer_vocab: u64,
}

/// A layer's attention shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerAttention {
    /// Key–value heads.
    pub kv_heads: u64,
    /// Head width.
    pub head_dim: u64,
    /// It projects keys (and values) of its own; false for a layer that
    /// reuses an earlier layer's.
    pub projects_kv: bool,
    /// It has a value projection (false where the keys are the values).
    pub v_proj: bool,
}

impl Gemma4 {
    /// The first layer that reuses keys and values of `layers`.
    pub fn first_shared(&self, layers: u64) -> u64 {
        layers.saturating_sub(self.kv_shared_layers)
    }

    /// Layer `i`'s attention in spec `t` (sliding layers have the spec's
    /// heads, full ones this struct's).
    pub fn layer(&self, t: &TransformerSpec, i: u64) -> LayerAttention {
        let full = !slides(t, i);
        let projects_kv = i < self.first_shared(t.layers);
        LayerAttention {
            kv_heads: if full { self.full_kv_heads } else { t.kv_heads },
            head_dim: if full { self.full_head_dim } else { t.head_dim },
            projects_kv,
            v_proj: projects_kv && !(full && self.k_eq_v),
        }
    }

    /// The cache's two kinds of layer, full then sliding: how many keep
    /// keys and values of their own (or, with `all`, how many there are:
    /// SGLang allocates the shared layers' too), with their key–value heads
    /// and head width.
    pub fn cache_kinds(&self, t: &TransformerSpec, all: bool) -> [CacheKind; 2] {
        let mut kinds = [
            CacheKind {
                layers: 0,
                kv_heads: self.full_kv_heads,
                head_dim: self.full_head_dim,
            },
            CacheKind {
                layers: 0,
                kv_heads: t.kv_heads,
                head_dim: t.head_dim,
            },
        ];
        for i in 0..t.layers {
            if all || self.layer(t, i).projects_kv {
                let k = usize::from(slides(t, i));
                if let Some(kind) = kinds.get_mut(k) {
                    kind.layers += 1;
                }
            }
        }
        kinds
    }

    /// Layer `i`'s MLP width.
    pub fn mlp_width(&self, t: &TransformerSpec, i: u64) -> u64 {
        if self.double_wide_mlp && i >= self.first_shared(t.layers) {
            2 * t.intermediate
        } else {
            t.intermediate
        }
    }

    /// Checks the fields against the spec `t` it extends.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] naming the field.
    pub fn validate(&self, t: &TransformerSpec) -> Result<(), Error> {
        for (name, v) in [
            ("global_head_dim", self.full_head_dim),
            ("num_global_key_value_heads", self.full_kv_heads),
        ] {
            super::check_dimension(name, v, super::MAX_WIDTH)?;
        }
        if !t.heads.is_multiple_of(self.full_kv_heads) {
            return Err(Error::InvalidModel(format!(
                "num_attention_heads ({}) must be a multiple of num_global_key_value_heads ({})",
                t.heads, self.full_kv_heads
            )));
        }
        if self.kv_shared_layers >= t.layers {
            return Err(Error::InvalidModel(format!(
                "num_kv_shared_layers ({}) must be less than num_hidden_layers ({}): a layer must make the keys and values the others reuse",
                self.kv_shared_layers, t.layers
            )));
        }
        // `kv_sharing_modes`: each kind of layer that reuses must be made
        // by an earlier layer of that kind.
        let first = self.first_shared(t.layers);
        for kind_slides in [true, false] {
            let reused = (first..t.layers).any(|i| slides(t, i) == kind_slides);
            let made = (0..first).any(|i| slides(t, i) == kind_slides);
            if reused && !made {
                return Err(Error::InvalidModel(format!(
                    "num_kv_shared_layers ({}): no earlier {} layer makes the keys and values the shared ones reuse",
                    self.kv_shared_layers,
                    if kind_slides {
                        "sliding"
                    } else {
                        "full-attention"
                    }
                )));
            }
        }
        if self.per_layer_width > 0 {
            super::check_dimension(
                "hidden_size_per_layer_input",
                self.per_layer_width,
                super::MAX_WIDTH,
            )?;
            super::check_dimension(
                "vocab_size_per_layer_input",
                self.per_layer_vocab,
                super::MAX_WIDTH,
            )?;
        }
        Ok(())
    }
}

/// One kind of Gemma 4 layer as a cache holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheKind {
    /// Layers of this kind with a cache.
    pub layers: u64,
    /// Their key–value heads.
    pub kv_heads: u64,
    /// Their head width.
    pub head_dim: u64,
}

impl CacheKind {
    /// Bytes of one token's keys and values in one layer on one of `tp`
    /// GPUs (at least one head each), `size` bytes an element.
    pub fn token_layer_bytes(&self, size: u64, tp: u64) -> u64 {
        2 * (self.kv_heads / tp.max(1)).max(1) * self.head_dim * size
    }
}

/// Whether layer `i` of `t` is a sliding-window layer.
fn slides(t: &TransformerSpec, i: u64) -> bool {
    t.block.sliding.is_some_and(|w| w.slides(i))
}

/// Keys and values the `store` layers keep for the shared ones: the
/// sliding kind's and the full kind's.
#[derive(Default)]
pub struct SharedKv {
    /// The sliding kind's.
    pub sliding: Option<(TensorId, TensorId)>,
    /// The full kind's.
    pub full: Option<(TensorId, TensorId)>,
}

/// The per-layer inputs (PLE) for the token ids and the scaled input
/// embeddings `x`: `(per_layer_model_projection(x) · scale, normed, +
/// embed_tokens_per_layer(ids) · scale) · 2^-½`, `[tokens, layers, width]`,
/// which every layer's slice reads; `None` without PLE.
pub fn per_layer_inputs(
    b: &mut Builder,
    t: &TransformerSpec,
    g: &Gemma4,
    ids: TensorId,
    x: TensorId,
) -> Option<TensorId> {
    if g.per_layer_width == 0 {
        return None;
    }
    let total = t.layers * g.per_layer_width;
    let e = b.embedding("embed_tokens_per_layer", ids, g.per_layer_vocab, total);
    // `* embed_scale`, then a view as `[.., layers, width]`.
    let e = b.scale("embed_tokens_per_layer.embed_scale", e);
    let p = b.linear("per_layer_model_projection", x, t.hidden, total, false);
    let p = b.scale("per_layer_model_projection_scale", p);
    let p = b.rmsnorm_weight_first("per_layer_projection_norm", p, g.per_layer_width);
    let sum = b.add("per_layer_inputs.add", p, e);
    Some(b.scale("per_layer_input_scale", sum))
}

/// Reads a `gemma4_text` config with `Gemma4TextConfig`'s defaults
/// (`configuration_gemma4.py`: the E2B-like 2304-wide default shape, a
/// 512-token window on five layers of six, 512-wide global heads, PLE of
/// 256 over 262,144 tokens, logits soft-capped only when set).
///
/// # Errors
/// [`Error::InvalidModel`] or a field's error.
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let layers = or("num_hidden_layers", 30)?;
    let base = super::gemma::read_shape(f, (262_144, 2304, 30, 8, 4, 9216))?;
    // The kinds of layer differ in their heads whatever the window, so a
    // null window (sliding layers attending everywhere) is not read.
    if f.map
        .get("sliding_window")
        .is_some_and(serde_json::Value::is_null)
    {
        return Err(Error::InvalidModel(
            "sliding_window: null is not read for Gemma 4, whose sliding and full layers differ in their heads; give the window".into(),
        ));
    }
    let mut sliding = super::gemma::sliding(f, layers, 512, 6)?;
    // `use_bidirectional_attention: "all"` halves the window.
    if f.map
        .get("use_bidirectional_attention")
        .and_then(|v| v.as_str())
        == Some("all")
    {
        if let Some(w) = sliding.as_mut() {
            w.window = w.window / 2 + 1;
        }
    }
    // The config class forces the last layer to full attention, which
    // breaks the every-n-th pattern vramfit reads.
    if let Some(w) = sliding
        && w.slides(layers.saturating_sub(1))
    {
        return Err(Error::InvalidModel(format!(
            "layer_types: Gemma 4's last layer must be full_attention (transformers forces it), and with {layers} layers that breaks the pattern of every {}-th layer full that vramfit reads; list layer_types ending in full_attention",
            w.full_every
        )));
    }
    let k_eq_v = f.bool_or("attention_k_eq_v", false);
    let full_kv = match f.opt_u64("num_global_key_value_heads")? {
        Some(n) if k_eq_v => n,
        _ => base.kv_heads,
    };
    let (full_head_dim, full_kv) = match f.map.get("per_layer_config") {
        // A config saved by transformers 5.24 lists the overrides per layer.
        Some(v) if !v.is_null() => {
            let full: Vec<u64> = (0..layers)
                .filter(|&i| !sliding.is_some_and(|w| w.slides(i)))
                .collect();
            per_layer_override(v, &full, (base.head_dim, base.kv_heads))?
        }
        _ => (or("global_head_dim", 512)?, full_kv),
    };
    let per_layer_width = match f.map.get("hidden_size_per_layer_input") {
        Some(v) if v.is_null() => 0,
        _ => or("hidden_size_per_layer_input", 256)?,
    };
    let g = Gemma4 {
        full_head_dim,
        full_kv_heads: full_kv,
        k_eq_v,
        kv_shared_layers: or("num_kv_shared_layers", 0)?,
        double_wide_mlp: f.bool_or("use_double_wide_mlp", false),
        per_layer_width,
        per_layer_vocab: or("vocab_size_per_layer_input", 262_144)?,
    };
    let moe = if f.bool_or("enable_moe_block", false) {
        let (experts, top_k) = (f.u64("num_experts")?, f.u64("top_k_experts")?);
        if top_k > experts {
            return Err(Error::InvalidModel(format!(
                "top_k_experts ({top_k}) is more than num_experts ({experts})"
            )));
        }
        Some(Box::new(moe(
            experts,
            top_k,
            f.u64("moe_intermediate_size")?,
        )))
    } else {
        None
    };
    let spec = TransformerSpec {
        block: BlockOptions {
            final_softcap: f.number_set("final_logit_softcapping", false)?,
            sliding,
            ..block()
        },
        moe,
        gemma4: Some(Box::new(g)),
        ..base
    };
    Ok(ModelSpec::Transformer(spec))
}

/// The full-attention layers' `(head_dim, num_key_value_heads)` from a
/// `per_layer_config` object (`{"5": {"head_dim": 512, ...}, ...}`), which
/// must give every one of the `full` layers the same values and no other
/// layer any; `default` for a value not given.
fn per_layer_override(
    v: &serde_json::Value,
    full: &[u64],
    default: (u64, u64),
) -> Result<(u64, u64), Error> {
    let bad = |why: String| Err(Error::InvalidModel(format!("per_layer_config: {why}")));
    let Some(map) = v.as_object() else {
        return bad("must be an object of layer numbers".into());
    };
    let mut found = None;
    for (key, entry) in map {
        let layer: u64 = match key.parse() {
            Ok(n) => n,
            Err(_) => return bad(format!("'{key}' is not a layer number")),
        };
        if !full.contains(&layer) {
            return bad(format!(
                "layer {layer} is not a full-attention layer; vramfit reads overrides of the full-attention layers' heads only"
            ));
        }
        let field = |name: &str, default: u64| match entry.get(name) {
            None => Ok(default),
            Some(x) => x.as_u64().ok_or_else(|| {
                Error::InvalidModel(format!(
                    "per_layer_config: layer {layer}'s {name} must be a whole number"
                ))
            }),
        };
        let this = (
            field("head_dim", default.0)?,
            field("num_key_value_heads", default.1)?,
        );
        if found.is_some_and(|f| f != this) {
            return bad("the full-attention layers' overrides differ; vramfit reads one shape for all of them".into());
        }
        found = Some(this);
    }
    if !map.is_empty() && map.len() != full.len() {
        return bad(format!(
            "overrides {} of the {} full-attention layers; vramfit reads one shape for all of them",
            map.len(),
            full.len()
        ));
    }
    Ok(found.unwrap_or(default))
}

/// Gemma 4's block: Gemma 3's sandwich norms and per-head q/k norms, its
/// RMSNorm multiplying the plain weight (`normed * weight`, not `1 + weight`:
/// the same memory).
fn block() -> BlockOptions {
    BlockOptions {
        qk_norm: QkNorm::PerHead,
        ..super::gemma::gemma3_block()
    }
}

/// The mixture of experts beside each layer's MLP (`enable_moe_block`).
fn moe(experts: u64, top_k: u64, width: u64) -> Moe {
    Moe {
        experts,
        top_k,
        expert_intermediate: width,
        router: Router::Gemma4,
        shared: None,
        dense: DenseLayers::default(),
        biases: false,
        activation: ExpertActivation::default(),
        aux_loss: false,
        latent: 0,
    }
}

/// A Gemma 4 language model: `(vocab, hidden, layers, heads, kv_heads,
/// intermediate)`, sliding over `window` positions on all but every
/// `full_every`-th layer, 256-wide sliding heads and 512-wide full ones,
/// logits soft-capped at 30 (every released config), and `g`'s options.
fn decoder(
    (vocab, hidden, layers, heads, kv_heads, intermediate): (u64, u64, u64, u64, u64, u64),
    (window, full_every): (u64, u64),
    g: Gemma4,
    moe: Option<Moe>,
) -> TransformerSpec {
    TransformerSpec {
        block: BlockOptions {
            final_softcap: true,
            sliding: Some(SlidingWindow { window, full_every }),
            ..block()
        },
        moe: moe.map(Box::new),
        gemma4: Some(Box::new(g)),
        ..super::gemma::generation_shape(vocab, hidden, layers, heads, kv_heads, 256, intermediate)
    }
}

/// Gemma 4 E2B, E4B, 26B-A4B and 31B: the `text_config` of their
/// `config.json` files (`google/gemma-4-*`), as `transformers`' converter
/// (`convert_gemma4_weights.py`) writes them and copies of the released
/// files show them; the language model alone, as `Gemma4ForCausalLM`
/// builds it (the vision and audio towers are not counted).
fn presets() -> Vec<ModelPreset> {
    let p = |id, name, spec| ModelPreset::new(id, name, Group::Gemma, ModelSpec::Transformer(spec));
    let v = 262_144;
    // The on-device models: per-layer embeddings, the last layers reusing keys and values.
    let on_device = |shared, double_wide_mlp, kv_heads| Gemma4 {
        full_head_dim: 512,
        full_kv_heads: kv_heads,
        k_eq_v: false,
        kv_shared_layers: shared,
        double_wide_mlp,
        per_layer_width: 256,
        per_layer_vocab: v,
    };
    // The larger models: full layers' keys are their values, fewer global heads.
    let large = |kv_heads| Gemma4 {
        full_head_dim: 512,
        full_kv_heads: kv_heads,
        k_eq_v: true,
        kv_shared_layers: 0,
        double_wide_mlp: false,
        per_layer_width: 0,
        per_layer_vocab: v,
    };
    vec![
        p(
            "gemma-4-e2b",
            "Gemma-4-E2B (text)",
            decoder(
                (v, 1536, 35, 8, 1, 6144),
                (512, 5),
                on_device(20, true, 1),
                None,
            ),
        )
        .context(131_072),
        p(
            "gemma-4-e4b",
            "Gemma-4-E4B (text)",
            decoder(
                (v, 2560, 42, 8, 2, 10_240),
                (512, 6),
                on_device(18, false, 2),
                None,
            ),
        )
        .context(131_072),
        p(
            "gemma-4-26b-a4b",
            "Gemma-4-26B-A4B (text)",
            decoder(
                (v, 2816, 30, 16, 8, 2112),
                (1024, 6),
                large(2),
                Some(moe(128, 8, 704)),
            ),
        )
        .context(262_144),
        p(
            "gemma-4-31b",
            "Gemma-4-31B (text)",
            decoder((v, 5376, 60, 32, 16, 21_504), (1024, 6), large(4), None),
        )
        .context(262_144),
    ]
}
