//! T5 (the original T5, T5 v1.1 and Flan-T5) as `transformers` builds it
//! (`T5ForConditionalGeneration`, `models/t5/modeling_t5.py`): the `t5`
//! `model_type` (`T5Config`'s defaults) and the presets. Lowered by its own
//! encoder-decoder lowering ([`super::t5_lower`]).
//!
//! The decoder reads as many tokens as the encoder (`seq` is both the
//! input's and the target's length); in inference the encoder reads `seq`
//! tokens once and the decoder generates one token per step, with a
//! self-attention cache of the context's tokens and a cross-attention
//! cache of the encoder's `seq`.

use super::ModelSpec;
use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use crate::error::{Error, Inapplicable};
use serde::{Deserialize, Serialize};

/// A T5 encoder-decoder, its dimensions named as in `T5Config`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct T5Spec {
    /// `vocab_size`: the shared embedding's rows.
    pub vocab: u64,
    /// `d_model`: the hidden size.
    pub d_model: u64,
    /// `d_kv`: each head's width (not `d_model / num_heads`).
    pub d_kv: u64,
    /// `d_ff`: the feed-forward inner size.
    pub d_ff: u64,
    /// `num_layers`: encoder blocks.
    pub encoder_layers: u64,
    /// `num_decoder_layers`: decoder blocks.
    pub decoder_layers: u64,
    /// `num_heads`.
    pub heads: u64,
    /// `relative_attention_num_buckets`: rows of each stack's relative position bias.
    pub buckets: u64,
    /// The feed-forward activation (`feed_forward_proj`'s last part).
    pub act: T5Activation,
    /// Whether the feed-forward is gated (`gated-*`: `wi_0`, `wi_1`; T5 v1.1, Flan-T5).
    pub gated: bool,
    /// `dropout_rate`, applied after the embeddings, in attention, the
    /// feed-forward, each residual branch and each stack's final norm.
    pub dropout: f64,
    /// Whether `lm_head` is the shared embedding and the decoder's output
    /// is scaled by `d_model**-0.5` before it (the original T5); T5 v1.1 and
    /// Flan-T5 (`tie_word_embeddings: false`) have their own `lm_head` and no scaling.
    pub tie_embeddings: bool,
}

/// The activation of T5's feed-forward (`ACT2FN[dense_act_fn]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum T5Activation {
    /// `nn.ReLU` (saves its output): the original T5.
    Relu,
    /// Exact GELU in one kernel (saves its input).
    Gelu,
    /// `NewGELUActivation` written as eager ops (`gated-gelu`: T5 v1.1, Flan-T5).
    GeluNew,
    /// `nn.SiLU` (saves its input).
    Silu,
}

impl T5Spec {
    /// Checks that the dimensions are consistent.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] naming the inconsistency, [`Error::TooLarge`]
    /// for more blocks than [`super::MAX_LAYERS`] in all.
    pub fn validate(&self) -> Result<(), Error> {
        use super::{MAX_LAYERS, MAX_WIDTH, check_dimension};
        for (name, v) in [
            ("vocab_size", self.vocab),
            ("d_model", self.d_model),
            ("d_kv", self.d_kv),
            ("d_ff", self.d_ff),
            ("num_heads", self.heads),
            ("relative_attention_num_buckets", self.buckets),
        ] {
            check_dimension(name, v, MAX_WIDTH)?;
        }
        check_dimension("num_layers", self.encoder_layers, MAX_LAYERS)?;
        check_dimension("num_decoder_layers", self.decoder_layers, MAX_LAYERS)?;
        // The simulation's cost grows with the blocks of both stacks.
        check_dimension(
            "num_layers + num_decoder_layers",
            self.encoder_layers + self.decoder_layers,
            MAX_LAYERS,
        )?;
        // PyTorch's `nn.Dropout` refuses probabilities outside [0, 1] (NaN included).
        if !(0.0..=1.0).contains(&self.dropout) {
            return Err(Error::InvalidModel(format!(
                "dropout_rate must be between 0 and 1, got {}",
                self.dropout
            )));
        }
        Ok(())
    }

    /// Structured pruning: keep `keep_attention` of the heads and
    /// `keep_mlp` of the feed-forward's neurons, at least one of each.
    pub fn pruned(&self, keep_attention: f64, keep_mlp: f64) -> T5Spec {
        let keep = |n: u64, f: f64| {
            if f >= 1.0 {
                n
            } else {
                ((n as f64 * f).round() as u64).clamp(1, n.max(1))
            }
        };
        T5Spec {
            heads: keep(self.heads, keep_attention),
            d_ff: keep(self.d_ff, keep_mlp),
            ..self.clone()
        }
    }

    /// One tensor-parallel rank's share (Megatron-LM's T5): heads (with
    /// their relative-bias columns) and feed-forward columns split over
    /// `tp`; the vocabulary padded to a multiple of 128 · tp and split.
    ///
    /// # Errors
    /// [`Inapplicable::TensorParallel`] for a dimension `tp` does not divide.
    pub fn tensor_parallel_shard(&self, tp: u64) -> Result<T5Spec, Error> {
        if tp <= 1 {
            return Ok(self.clone());
        }
        for (dimension, size) in [("num_heads", self.heads), ("d_ff", self.d_ff)] {
            if !size.is_multiple_of(tp) {
                return Err(Error::NotApplicable(Inapplicable::TensorParallel {
                    dimension,
                    size,
                    tp,
                }));
            }
        }
        Ok(T5Spec {
            heads: self.heads / tp,
            d_ff: self.d_ff / tp,
            vocab: self.vocab.div_ceil(128 * tp) * 128,
            ..self.clone()
        })
    }
}

/// The T5 family.
pub const FAMILY: Family = Family {
    imports: &[Import {
        model_type: "t5",
        read,
    }],
    presets,
};

/// Reads a `t5` config with `T5Config`'s defaults for absent fields
/// (`models/t5/configuration_t5.py`). Lowered as `T5ForConditionalGeneration`.
fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
    let layers = or("num_layers", 6)?;
    let (act, gated) = feed_forward(f.str_or("feed_forward_proj", "relu")?)?;
    Ok(ModelSpec::T5(T5Spec {
        vocab: or("vocab_size", 32_128)?,
        d_model: or("d_model", 512)?,
        d_kv: or("d_kv", 64)?,
        d_ff: or("d_ff", 2048)?,
        encoder_layers: layers,
        decoder_layers: or("num_decoder_layers", layers)?,
        heads: or("num_heads", 8)?,
        buckets: or("relative_attention_num_buckets", 32)?,
        act,
        gated,
        dropout: f.f64_or("dropout_rate", 0.1),
        // `scale_decoder_outputs = tie_word_embeddings is not False`;
        // `from_pretrained` keeps a checkpoint's own `lm_head` untied.
        tie_embeddings: f.bool_or("tie_word_embeddings", true),
    }))
}

/// `feed_forward_proj`: `{act}` or `gated-{act}`, where `gated-gelu` means
/// `gelu_new` (`T5Config.__post_init__`).
fn feed_forward(proj: &str) -> Result<(T5Activation, bool), Error> {
    let (gated, act) = match proj.split_once('-') {
        None => (false, proj),
        Some(("gated", act)) if !act.contains('-') => (true, act),
        Some(_) => {
            return Err(Error::InvalidModel(format!(
                "feed_forward_proj must be '{{act}}' or 'gated-{{act}}' (e.g. 'relu', 'gated-gelu'), got '{proj}'"
            )));
        }
    };
    let act = match act {
        "relu" => T5Activation::Relu,
        "gelu" if gated => T5Activation::GeluNew,
        "gelu" => T5Activation::Gelu,
        "gelu_new" => T5Activation::GeluNew,
        "silu" | "swish" => T5Activation::Silu,
        other => {
            return Err(Error::InvalidModel(format!(
                "feed_forward_proj's activation must be relu, gelu, gelu_new or silu, got '{other}'"
            )));
        }
    };
    Ok((act, gated))
}

/// A T5 with `layers` blocks in each stack and vocabulary 32,128.
fn t5(d_model: u64, d_ff: u64, layers: u64, heads: u64, flan: bool) -> ModelSpec {
    ModelSpec::T5(T5Spec {
        vocab: 32_128,
        d_model,
        d_kv: 64,
        d_ff,
        encoder_layers: layers,
        decoder_layers: layers,
        heads,
        buckets: 32,
        act: if flan {
            T5Activation::GeluNew
        } else {
            T5Activation::Relu
        },
        gated: flan,
        dropout: 0.1,
        tie_embeddings: !flan,
    })
}

/// T5-small, -base and -large (`google-t5/t5-*`) and Flan-T5-XL
/// (`google/flan-t5-xl`), from their `config.json` files on the Hugging Face Hub.
fn presets() -> Vec<ModelPreset> {
    let p = |id, name, spec| ModelPreset::new(id, name, Group::T5, spec);
    vec![
        p("t5-small", "T5-small", t5(512, 2048, 6, 8, false)),
        p("t5-base", "T5-base", t5(768, 3072, 12, 12, false)),
        p("t5-large", "T5-large", t5(1024, 4096, 24, 16, false)),
        p("flan-t5-xl", "Flan-T5-XL", t5(2048, 5120, 24, 32, true)),
    ]
}
