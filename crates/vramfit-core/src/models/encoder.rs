//! The encoders a multimodal checkpoint loads beside its language model —
//! its vision encoder, and Gemma 4's audio encoder — counted from its
//! `config.json` (`vision_config`, `audio_config` and the projectors'
//! fields) as `transformers` 5.24 builds them: every parameter under
//! `model.visual` / `model.vision_tower` / `model.audio_tower` and the
//! projectors (`model.multi_modal_projector`, `embed_vision`, `embed_audio`).
//!
//! Their weights are held whatever the input; they run only on images and
//! audio, which vramfit does not model, so they are lowered as frozen
//! weights that take part in no op (what a text-only step, or a fine-tune
//! with the encoder frozen — LLaMA-Factory's `freeze_vision_tower`,
//! ms-swift's `freeze_vit`, both on by default — keeps of them). Counts
//! checked against `tests/reference/multimodal_counts.csv`.

use super::hf_fields::Fields;
use crate::error::Error;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A multimodal checkpoint's encoders' (and projectors') weights.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Encoder {
    /// All its parameters.
    pub params: u64,
    /// Of those, the weights of its linear layers (what bitsandbytes
    /// quantizes with the language model's: every `nn.Linear` but the head).
    pub linear: u64,
    /// Which encoders: their configs' `model_type`s (the config class's
    /// default where a config names none), comma-separated.
    pub kind: String,
}

/// A sum that stays in range: encoders of more than 10¹³ parameters are
/// refused rather than overflowed.
#[derive(Default)]
struct Count {
    params: u128,
    linear: u128,
}

impl Count {
    /// A linear layer `inp → out`, with its bias where `bias`.
    fn linear(&mut self, inp: u64, out: u64, bias: bool) {
        let w = u128::from(inp) * u128::from(out);
        self.linear += w;
        self.params += w + if bias { u128::from(out) } else { 0 };
    }

    /// Parameters outside linear layers (norms, convolutions, embeddings).
    fn other(&mut self, n: u128) {
        self.params += n;
    }

    /// `times` copies of what `each` counts.
    fn repeat(&mut self, times: u64, each: impl FnOnce(&mut Count)) {
        let mut one = Count::default();
        each(&mut one);
        self.params += one.params * u128::from(times);
        self.linear += one.linear * u128::from(times);
    }

    fn finish(self, kind: String) -> Result<Encoder, Error> {
        const LIMIT: u128 = 10_000_000_000_000;
        if self.params > LIMIT {
            return Err(Error::InvalidModel(format!(
                "the vision encoder's config.json fields give {} parameters, more than 10^13",
                self.params
            )));
        }
        // Both are at most LIMIT, so they fit in u64.
        Ok(Encoder {
            params: self.params as u64,
            linear: self.linear as u64,
            kind,
        })
    }
}

/// The encoder of a multimodal config of `model_type` whose language model
/// has width `text_hidden`; `None` for a model type whose encoder vramfit
/// does not count, or a config without a `vision_config` (the import then
/// says it is left out).
///
/// # Errors
/// [`Error::InvalidModel`] for a malformed `vision_config` field.
pub fn read(
    model_type: &str,
    map: &Map<String, Value>,
    text_hidden: u64,
) -> Result<Option<Encoder>, Error> {
    if model_type == "gemma4" {
        return gemma4(map, text_hidden);
    }
    // Without a `vision_config`, `transformers` would build its class
    // defaults; no released checkpoint omits it, so it is not counted.
    let Some(vision) = map.get("vision_config").and_then(Value::as_object) else {
        return Ok(None);
    };
    let v = Fields {
        map: vision,
        model_type: format!("{model_type} vision_config"),
    };
    let outer = Fields {
        map,
        model_type: model_type.to_string(),
    };
    let or = dim;
    let mut c = Count::default();
    // The encoder's own `model_type`, else the config class's default.
    let default_kind = match model_type {
        "gemma3" => "siglip_vision_model",
        "llava" => "clip_vision_model",
        "mistral3" => "pixtral",
        "qwen2_vl" => "qwen2_vl_vision",
        "qwen2_5_vl" => "qwen2_5_vl_vision",
        "llama4" => "llama4_vision_model",
        other => other,
    };
    let kind = v.str_or("model_type", default_kind)?.to_string();
    match model_type {
        // `Qwen2VisionTransformerPretrainedModel`: LayerNorm blocks with a
        // plain MLP of `mlp_ratio × embed_dim`, merged by `PatchMerger`.
        "qwen2_vl" => {
            let e = or(&v, "embed_dim", 1280)?;
            let i = e * or(&v, "mlp_ratio", 4)?;
            let out = or(&v, "hidden_size", 3584)?;
            qwen_patches(&mut c, &v, e, false)?;
            c.repeat(or(&v, "depth", 32)?, |c| {
                c.other(4 * u128::from(e));
                c.linear(e, 3 * e, true);
                c.linear(e, e, true);
                c.linear(e, i, true);
                c.linear(i, e, true);
            });
            qwen_merger(&mut c, e * merge2(&v)?, (e, true), out);
        }
        // Qwen2.5-VL: RMSNorm blocks with a gated MLP, an RMSNorm merger.
        "qwen2_5_vl" => {
            let h = or(&v, "hidden_size", 3584)?;
            let i = or(&v, "intermediate_size", 3420)?;
            let out = or(&v, "out_hidden_size", 3584)?;
            qwen_patches(&mut c, &v, h, false)?;
            c.repeat(or(&v, "depth", 32)?, |c| {
                c.other(2 * u128::from(h));
                c.linear(h, 3 * h, true);
                c.linear(h, h, true);
                c.linear(h, i, true);
                c.linear(h, i, true);
                c.linear(i, h, true);
            });
            qwen_merger(&mut c, h * merge2(&v)?, (h, false), out);
        }
        // Qwen3-VL and Qwen3.5: learned positions, LayerNorm blocks with a
        // plain MLP, a merger normed before the shuffle; Qwen3-VL adds one
        // merger per `deepstack_visual_indexes` entry, normed after it.
        "qwen3_vl" | "qwen3_vl_moe" | "qwen3_5" | "qwen3_5_moe" => {
            let h = or(&v, "hidden_size", 1152)?;
            let i = or(&v, "intermediate_size", 4304)?;
            let out = or(&v, "out_hidden_size", 3584)?;
            qwen_patches(&mut c, &v, h, true)?;
            c.other(u128::from(or(&v, "num_position_embeddings", 2304)?) * u128::from(h));
            c.repeat(or(&v, "depth", 27)?, |c| {
                c.other(4 * u128::from(h));
                c.linear(h, 3 * h, true);
                c.linear(h, h, true);
                c.linear(h, i, true);
                c.linear(i, h, true);
            });
            let merged = h * merge2(&v)?;
            qwen_merger(&mut c, merged, (h, true), out);
            if model_type.starts_with("qwen3_vl") {
                let deepstack = match vision.get("deepstack_visual_indexes") {
                    None | Some(Value::Null) => 3,
                    Some(_) => v.u64_list("deepstack_visual_indexes")?.len() as u64,
                };
                c.repeat(deepstack, |c| qwen_merger(c, merged, (merged, true), out));
            }
        }
        // Gemma 3: SigLIP and `Gemma3MultiModalProjector` (a bare
        // `[vision, text]` matrix after an RMSNorm).
        "gemma3" => {
            let h = siglip_or_clip(&mut c, &v, &kind)?;
            // A parameter, not an `nn.Linear`: bitsandbytes leaves it.
            c.other(u128::from(h) * u128::from(text_hidden) + u128::from(h));
        }
        // LLaVA: CLIP or SigLIP, then `linear_1` (of every selected
        // layer's features), GELU and `linear_2`.
        "llava" => {
            let h = siglip_or_clip(&mut c, &v, &kind)?;
            let layers = match map.get("vision_feature_layer") {
                Some(Value::Array(a)) => a.len() as u64,
                _ => 1,
            };
            let bias = outer.bool_or("multimodal_projector_bias", true);
            c.linear(h * layers, text_hidden, bias);
            c.linear(text_hidden, text_hidden, bias);
        }
        // Mistral 3 (Pixtral): bias-free RMSNorm blocks with a gated MLP;
        // the projector norms, merges `spatial_merge_size²` patches and
        // projects twice.
        "mistral3" => {
            let h = or(&v, "hidden_size", 1024)?;
            let i = or(&v, "intermediate_size", 4096)?;
            let heads = or(&v, "num_attention_heads", 16)?;
            let head_dim = dim(&v, "head_dim", h / heads.max(1))?;
            let p = or(&v, "patch_size", 14)?;
            let channels = or(&v, "num_channels", 3)?;
            c.other(u128::from(h) * u128::from(channels) * u128::from(p * p));
            c.other(u128::from(h));
            c.repeat(or(&v, "num_hidden_layers", 24)?, |c| {
                c.other(2 * u128::from(h));
                for _ in 0..3 {
                    c.linear(h, heads * head_dim, false);
                }
                c.linear(heads * head_dim, h, false);
                c.linear(h, i, false);
                c.linear(h, i, false);
                c.linear(i, h, false);
            });
            let m = or(&outer, "spatial_merge_size", 2)?;
            let bias = outer.bool_or("multimodal_projector_bias", false);
            c.other(u128::from(h));
            c.linear(h * m * m, h, false);
            c.linear(h, text_hidden, bias);
            c.linear(text_hidden, text_hidden, bias);
        }
        // Llama 4: an `nn.Linear` over unfolded patches, a class embedding
        // and learned positions, LayerNorm blocks with a plain MLP, the
        // pixel-shuffle adapter's two bias-free layers, the projector.
        "llama4" => {
            let h = or(&v, "hidden_size", 768)?;
            let i = or(&v, "intermediate_size", 5632)?;
            let heads = or(&v, "num_attention_heads", 16)?;
            let p = or(&v, "patch_size", 14)?;
            let side = or(&v, "image_size", 448)? / p.max(1);
            let channels = or(&v, "num_channels", 3)?;
            c.linear(channels * p * p, h, false);
            c.other((u128::from(side * side) + 1 + 1 + 4) * u128::from(h));
            let attn = heads * (h / heads.max(1));
            c.repeat(or(&v, "num_hidden_layers", 34)?, |c| {
                c.other(4 * u128::from(h));
                for _ in 0..3 {
                    c.linear(h, attn, true);
                }
                c.linear(attn, h, true);
                c.linear(h, i, true);
                c.linear(i, h, true);
            });
            let out = or(&v, "projector_output_dim", 4096)?;
            c.linear(i, or(&v, "projector_input_dim", 4096)?, false);
            c.linear(out, out, false);
            c.linear(or(&v, "vision_output_dim", 7680)?, text_hidden, false);
        }
        _ => return Ok(None),
    }
    c.finish(kind).map(Some)
}

/// `spatial_merge_size²`: the patches one merged token takes.
fn merge2(v: &Fields<'_>) -> Result<u64, Error> {
    let m = dim(v, "spatial_merge_size", 2)?;
    Ok(m * m)
}

/// A dimension of the encoder, `default` when absent (the config class's
/// default in `transformers`); at most 2²⁰, so that products of three stay
/// in range.
fn dim(f: &Fields<'_>, key: &'static str, default: u64) -> Result<u64, Error> {
    let n = f.opt_u64(key)?.unwrap_or(default);
    if n > 1 << 20 {
        return Err(Error::InvalidModel(format!(
            "{} field '{key}' is {n}, more than 2^20",
            f.model_type
        )));
    }
    Ok(n)
}

/// Qwen's 3-D patch embedding: a `Conv3d` over `temporal_patch_size` frames
/// of `patch_size²` pixels, with a bias in Qwen3-VL's.
fn qwen_patches(c: &mut Count, v: &Fields<'_>, h: u64, bias: bool) -> Result<(), Error> {
    let channels = dim(v, "in_channels", dim(v, "in_chans", 3)?)?;
    let p = dim(v, "patch_size", 14)?;
    let frames = dim(v, "temporal_patch_size", 2)?;
    c.other(u128::from(h) * u128::from(channels * frames) * u128::from(p * p));
    if bias {
        c.other(u128::from(h));
    }
    Ok(())
}

/// A Qwen patch merger: a norm of `norm.0` values (LayerNorm with a bias
/// where `norm.1`, else RMSNorm), then `merged → merged → out` with biases.
fn qwen_merger(c: &mut Count, merged: u64, norm: (u64, bool), out: u64) {
    c.other(u128::from(norm.0) * if norm.1 { 2 } else { 1 });
    c.linear(merged, merged, true);
    c.linear(merged, out, true);
}

/// CLIP's or SigLIP's vision transformer (`CLIPVisionModel`,
/// `SiglipVisionModel`), by `kind`; returns its width.
fn siglip_or_clip(c: &mut Count, v: &Fields<'_>, kind: &str) -> Result<u64, Error> {
    let clip = kind == "clip_vision_model";
    // `CLIPVisionConfig`'s and `SiglipVisionConfig`'s defaults.
    let h = dim(v, "hidden_size", 768)?;
    let i = dim(v, "intermediate_size", 3072)?;
    let layers = dim(v, "num_hidden_layers", 12)?;
    let image = dim(v, "image_size", 224)?;
    let p = dim(v, "patch_size", if clip { 32 } else { 16 })?.max(1);
    let channels = dim(v, "num_channels", 3)?;
    let patches = (image / p) * (image / p);
    let h128 = u128::from(h);
    // Patch convolution (biased in SigLIP) and positions (one more for
    // CLIP's class token, which is a parameter too).
    c.other(h128 * u128::from(channels) * u128::from(p * p));
    if clip {
        c.other(h128 + u128::from(patches + 1) * h128 + 2 * h128);
    } else {
        c.other(h128 + u128::from(patches) * h128);
    }
    c.repeat(layers, |c| {
        c.other(4 * h128);
        for _ in 0..4 {
            c.linear(h, h, true);
        }
        c.linear(h, i, true);
        c.linear(i, h, true);
    });
    // `post_layernorm`, and SigLIP's attention-pooling head where kept.
    c.other(2 * h128);
    if !clip && v.bool_or("vision_use_head", true) {
        c.other(h128 + 3 * h128 * h128 + 3 * h128 + 2 * h128);
        c.linear(h, h, true);
        c.linear(h, i, true);
        c.linear(i, h, true);
    }
    Ok(h)
}

/// Gemma 4's encoders, each where its config is an object (26B-A4B and 31B
/// ship `audio_config: null`): the vision encoder (learned 2-D position
/// tables, bias-free attention with q/k norms, a gated MLP, four norms a
/// layer) and the audio conformer (two sub-sampling convolutions, then
/// per layer two macaron feed-forwards, attention with a relative-position
/// key projection and a per-dimension scale, a light convolution block),
/// each projected into the language model by `embed_vision` /
/// `embed_audio` (`modeling_gemma4.py`).
fn gemma4(map: &Map<String, Value>, text_hidden: u64) -> Result<Option<Encoder>, Error> {
    let part = |key: &str| map.get(key).and_then(Value::as_object);
    let (vision, audio) = (part("vision_config"), part("audio_config"));
    let mut c = Count::default();
    let mut kinds = Vec::new();
    if let Some(vision) = vision {
        let v = Fields {
            map: vision,
            model_type: "gemma4 vision_config".into(),
        };
        let h = dim(&v, "hidden_size", 768)?;
        let i = dim(&v, "intermediate_size", 3072)?;
        let heads = dim(&v, "num_attention_heads", 12)?;
        let kv = dim(&v, "num_key_value_heads", 12)?;
        let hd = dim(&v, "head_dim", 64)?;
        let p = dim(&v, "patch_size", 16)?;
        c.other(2 * u128::from(dim(&v, "position_embedding_size", 10240)?) * u128::from(h));
        c.linear(3 * p * p, h, false);
        c.repeat(dim(&v, "num_hidden_layers", 16)?, |c| {
            c.linear(h, heads * hd, false);
            c.linear(h, kv * hd, false);
            c.linear(h, kv * hd, false);
            c.linear(heads * hd, h, false);
            c.other(2 * u128::from(hd) + 4 * u128::from(h));
            c.linear(h, i, false);
            c.linear(h, i, false);
            c.linear(i, h, false);
        });
        c.linear(h, text_hidden, false);
        kinds.push("gemma4_vision");
    }
    if let Some(audio) = audio {
        let a = Fields {
            map: audio,
            model_type: "gemma4 audio_config".into(),
        };
        let h = dim(&a, "hidden_size", 1024)?;
        let heads = dim(&a, "num_attention_heads", 8)?.max(1);
        let kernel = dim(&a, "conv_kernel_size", 5)?;
        let out = dim(&a, "output_proj_dims", 1536)?;
        let channels = match audio.get("subsampling_conv_channels") {
            None | Some(Value::Null) => vec![128, 32],
            Some(_) => a.u64_list("subsampling_conv_channels")?,
        };
        let [c0, c1] = channels[..] else {
            return Err(Error::InvalidModel(format!(
                "gemma4 audio_config field 'subsampling_conv_channels' must list two channel counts, got {channels:?}"
            )));
        };
        if c0 > 1 << 20 || c1 > 1 << 20 {
            return Err(Error::InvalidModel(
                "gemma4 audio_config field 'subsampling_conv_channels' is more than 2^20".into(),
            ));
        }
        // 3×3 convolutions without biases, each with an RMSNorm.
        c.other(u128::from(c0) * 9 + u128::from(c0) + u128::from(c1 * c0) * 9 + u128::from(c1));
        c.linear(c0 / 4 * c1, h, false);
        c.repeat(dim(&a, "num_hidden_layers", 12)?, |c| {
            for _ in 0..2 {
                c.linear(h, 4 * h, false);
                c.linear(4 * h, h, false);
            }
            // q, k, v, `post`, `relative_k_proj` and the convolution
            // block's `linear_end`.
            for _ in 0..6 {
                c.linear(h, h, false);
            }
            c.linear(h, 2 * h, false);
            // Feed-forward norms (4), `per_dim_scale`, the depthwise
            // convolution, its two norms and the layer's three.
            c.other(
                4 * u128::from(h)
                    + u128::from(h / heads)
                    + u128::from(h * kernel)
                    + 5 * u128::from(h),
            );
        });
        c.linear(h, out, true);
        c.linear(out, text_hidden, false);
        kinds.push("gemma4_audio");
    }
    if kinds.is_empty() {
        return Ok(None);
    }
    c.finish(kinds.join(", ")).map(Some)
}
