//! Transformer families as Hugging Face implements them: BERT encoders,
//! GPT-2 and Llama-style decoders (Llama, Mistral, Qwen2).
//!
//! Sources: `transformers/models/{bert,gpt2,llama,qwen2}/modeling_*.py` and
//! `transformers/activations.py` (eager code paths, training mode).

use super::gemma4::{self, Gemma4};
use crate::builder::Builder;
use crate::config::{Attention, AttentionMask, Checkpointing, TrainingCache};
use crate::dtype::DType;
use crate::error::{Error, Inapplicable};
use crate::graph::TensorId;
use serde::{Deserialize, Serialize};

/// Which reference implementation the transformer follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arch {
    /// BERT encoder (post-LN, learned positions, token types, GELU).
    Bert,
    /// GPT-2 decoder (pre-LN, learned positions, fused qkv `Conv1D`, `gelu_new`).
    Gpt2,
    /// Llama-style decoder (pre-RMSNorm, rotary, GQA, SwiGLU): Llama, Mistral, Qwen2.
    Llama,
}

/// What sits on top of the transformer body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Head {
    /// Language-model head over the vocabulary with a cross-entropy loss.
    CausalLm,
    /// BERT pooler plus a classifier with `labels` outputs and a cross-entropy loss.
    Classification {
        /// Number of labels.
        labels: u64,
    },
    /// The bare encoder (BERT with its pooler); trained with a loss on the pooled output.
    Bare,
    /// BERT's masked-language-model head (`BertForMaskedLM`, no pooler): a
    /// dense layer, GELU and LayerNorm, then the decoder over the vocabulary,
    /// tied to the word embeddings with a bias of its own; a cross-entropy
    /// loss over every position (labels of the sequence's length).
    MaskedLm,
}

/// Dimensions of a transformer, named as in Hugging Face configs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransformerSpec {
    /// Reference implementation.
    pub arch: Arch,
    /// Vocabulary size.
    pub vocab: u64,
    /// Hidden size.
    pub hidden: u64,
    /// Number of layers.
    pub layers: u64,
    /// Attention heads.
    pub heads: u64,
    /// Key/value heads (GQA); equals `heads` for multi-head attention.
    pub kv_heads: u64,
    /// Per-head dimension (usually `hidden / heads`).
    pub head_dim: u64,
    /// MLP inner size.
    pub intermediate: u64,
    /// Learned position embeddings (BERT, GPT-2); 0 for rotary.
    pub max_positions: u64,
    /// Token-type vocabulary (BERT); 0 otherwise.
    pub type_vocab: u64,
    /// Whether the LM head shares the input embedding.
    pub tie_embeddings: bool,
    /// Bias on q/k/v projections (BERT, GPT-2, Qwen2).
    pub qkv_bias: bool,
    /// Bias on the output projection and MLP (BERT, GPT-2).
    pub mlp_bias: bool,
    /// Dropout probability on hidden states (0 for Llama).
    pub hidden_dropout: f64,
    /// Dropout probability on attention probabilities.
    pub attention_dropout: f64,
    /// The head.
    pub head: Head,
    /// GeLU as one fused kernel that saves only its input (Megatron-LM's
    /// `bias_gelu_fusion`) instead of GPT-2's `gelu_new` written as eager ops.
    #[serde(default)]
    pub fused_gelu: bool,
    /// What a block adds to its layout beyond the dimensions above.
    #[serde(default)]
    pub block: BlockOptions,
    /// The longest context a rotary model supports as configured (its
    /// `max_position_embeddings`, stretched by a linear, dynamic or YaRN
    /// rope scaling factor, as vLLM derives its `max_model_len`); 0 when
    /// unknown. Learned positions ([`Self::max_positions`]) limit besides.
    #[serde(default)]
    pub context_limit: u64,
    /// A mixture of experts in place of the MLP of its sparse layers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moe: Option<Box<super::moe::Moe>>,
    /// Multi-head latent attention in place of q/k/v projections (the
    /// spec's `head_dim` is then the query/key width).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mla: Option<Box<super::mla::Mla>>,
    /// Recurrent layers in place of attention: Gated DeltaNet linear
    /// attention in every layer but each [`super::GatedDeltaNet::full_every`]-th
    /// (Qwen3-Next, Qwen3.5), or Mamba-2 in every layer but the
    /// [`super::Mamba2::attention`] ones (Granite 4.0's H models).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linear: Option<Box<super::Recurrent>>,
    /// Gemma 4's per-kind attention shapes, shared keys and values and
    /// per-layer embeddings ([`Gemma4`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gemma4: Option<Box<Gemma4>>,
    /// A multimodal checkpoint's vision encoder, held as frozen weights
    /// ([`super::encoder`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoder: Option<Box<super::encoder::Encoder>>,
    /// Layers that are one mixer each under one norm and one residual
    /// (Nemotron-H's `layers_block_type`): a token mixer (attention, or the
    /// [`Self::linear`] layer) or a feed-forward (the MLP, or experts in the
    /// [`Self::moe`] sparse layers), not both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub single_mixer: Option<Box<SingleMixer>>,
}

/// Which layers of a [`TransformerSpec::single_mixer`] model are a
/// feed-forward; every other layer mixes tokens.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SingleMixer {
    /// The feed-forward layers (`mlp`, `moe`), from 0.
    pub feed_forward: Vec<u64>,
}

/// The parts of a transformer block that vary between model types of one
/// layout (the defaults are Llama's, GPT-2's and BERT's: none of them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockOptions {
    /// Normalization of the queries and keys before the rotary embedding.
    pub qk_norm: QkNorm,
    /// Where a block normalizes: before attention and MLP, or after them.
    pub norm: NormPlacement,
    /// Whether RMSNorm's weight multiplies before the cast back to the
    /// input's dtype (OLMo 2, Gemma) or after it (Llama).
    pub rms_weight_first: bool,
    /// Whether the token embeddings are multiplied by `sqrt(hidden_size)`
    /// (Gemma's scaled word embedding: one more activation-sized tensor).
    pub embed_scale: bool,
    /// Whether eager attention soft-caps its scores, `tanh(s / cap) * cap`
    /// (Gemma 2's `attn_logit_softcapping`): three more score-sized tensors,
    /// the `tanh` output saved for backward. PyTorch's SDPA cannot soft-cap,
    /// so `transformers` runs such a model's SDPA request as eager.
    #[serde(default)]
    pub attn_softcap: bool,
    /// Whether the logits are soft-capped the same way before the loss
    /// (Gemma 2's `final_logit_softcapping`): three more logit-sized tensors.
    #[serde(default)]
    pub final_softcap: bool,
    /// Sliding-window attention layers, whose key–value cache keeps at most
    /// the window (training memory is the same as full attention's: the
    /// window is a mask).
    #[serde(default)]
    pub sliding: Option<SlidingWindow>,
    /// Which norm the Llama layout's norms are: RMSNorm, or LayerNorm with a
    /// bias (GPT-NeoX).
    pub norm_kind: NormKind,
    /// How q, k and v are projected: three projections, or one whose output
    /// they are views of (Phi-3, GPT-NeoX).
    pub qkv: QkvProjection,
    /// How the rotary embedding is applied to q and k.
    pub rotary: Rotary,
    /// Every `nope_every`-th layer (the 4th, 8th, … for 4) applies no
    /// rotary embedding, q and k reaching attention as projected (SmolLM3's
    /// `no_rope_layers`); 0 when every layer rotates.
    #[serde(default)]
    pub nope_every: u64,
    /// The MLP's layout.
    pub mlp: MlpKind,
    /// Whether attention and MLP both read the block's input and add to it
    /// together, `x + attn(norm(x)) + mlp(norm(x))` (GPT-NeoX's
    /// `use_parallel_residual`), instead of one after the other.
    pub parallel_residual: bool,
    /// Attention sinks (gpt-oss): a learned logit per head concatenated to
    /// the scores before the softmax and dropped after it (a `[heads]`
    /// parameter, two more score-sized tensors in eager attention, which
    /// `transformers` runs for an SDPA request: `_supports_sdpa = False`).
    #[serde(default)]
    pub sinks: bool,
    /// The attention's output is gated per feature, `o_proj(attn ·
    /// sigmoid(gate))`, the gate projected with the queries (`q_proj` twice
    /// as wide, Qwen3-Next's and Qwen3.5's `attn_output_gate`).
    #[serde(default)]
    pub attn_gate: bool,
    /// The [`Self::sliding`] layers attend within fixed chunks of `window`
    /// positions rather than to the last `window` (Llama 4's
    /// `attention_chunk_size`): the same mask's memory in training, a
    /// cache that keeps at most a chunk, which vLLM sizes as its
    /// `ChunkedLocalAttentionSpec`.
    #[serde(default)]
    pub chunked: bool,
    /// Eager attention's softmax runs in the scores' dtype (`softmax(s,
    /// dim=-1)`, no `dtype=torch.float32`; Llama 4): fp32 only where
    /// autocast makes it so, and no cast back before the context matmul.
    #[serde(default)]
    pub softmax_in_dtype: bool,
    /// In GPT-2's layout, eager attention's softmax in fp32, cast back to
    /// the query's dtype (GPTBigCode: `softmax(s, dim=-1,
    /// dtype=torch.float32).to(query.dtype)`; GPT-2's runs in the scores'
    /// dtype).
    #[serde(default)]
    pub softmax_fp32: bool,
    /// The body registers a causal mask it never reads as a buffer
    /// (GPTBigCode's `self.bias`: `tril(ones(n_positions, n_positions),
    /// dtype=bool)`), on the device with the weights.
    #[serde(default)]
    pub tril_buffer: bool,
    /// The layers without rotary embedding ([`Self::nope_every`]) scale
    /// their queries by position (Llama 4's `attn_temperature_tuning`):
    /// `(q * attn_scales).to(q.dtype)`, an fp32 product (the scales are
    /// fp32) cast back.
    #[serde(default)]
    pub nope_temperature: bool,
    /// RoBERTa's embeddings and classification head (`bert` layout; RoBERTa,
    /// XLM-RoBERTa, CamemBERT, Data2Vec-Text): position ids counted per
    /// sample from the padding index (`create_position_ids_from_input_ids`,
    /// a chain of int32/int64 `[batch, seq]` tensors) and token-type ids
    /// gathered at them, both kept by their embeddings for backward; and
    /// `RobertaClassificationHead` (dropout, dense, tanh, dropout,
    /// `out_proj` on the first token) where BERT has its pooler and classifier.
    #[serde(default)]
    pub roberta: bool,
    /// With [`Self::parallel_residual`], attention and MLP read one norm of
    /// the block's input, `x + attn(n) + mlp(n)` with `n = norm(x)` (Phi's
    /// single `input_layernorm`), rather than a norm each (GPT-NeoX).
    #[serde(default)]
    pub shared_norm: bool,
    /// The LM head has a bias (Phi's `lm_head`).
    #[serde(default)]
    pub lm_head_bias: bool,
    /// The embeddings reach the first block without dropout, whatever the
    /// blocks' (Phi's `embd_pdrop` of 0 beside its `resid_pdrop`).
    #[serde(default)]
    pub undropped_embeddings: bool,
    /// Each branch's output is scaled before its residual add,
    /// `residual + out * residual_multiplier` (Granite): a product the size
    /// of the hidden state per branch, saving only the constant.
    #[serde(default)]
    pub scaled_residuals: bool,
    /// The logits are divided by a constant before the loss
    /// (`logits / logits_scaling`, Granite): a logits-sized product, and
    /// its gradient, beside the LM head's.
    #[serde(default)]
    pub scaled_logits: bool,
    /// Learned positions (a Llama-layout model with [`TransformerSpec::max_positions`])
    /// counted from an all-ones attention mask and shifted by this offset
    /// into a table that many rows longer (OPT's
    /// `OPTLearnedPositionalEmbedding`, offset 2): `cumsum(mask) * mask - 1`
    /// in fp32, `.long()`, `+ offset`, the last kept by the embedding for
    /// backward and the mask and the `.long()` ids by the body until it
    /// returns. 0: none, or positions without this chain.
    #[serde(default)]
    pub position_offset: u64,
    /// The queries are scaled as they are projected, `q_proj(x) * scaling`
    /// (OPT), and attention then scales by 1: a product the size of the
    /// queries, saving only the constant.
    #[serde(default)]
    pub prescaled_query: bool,
    /// DistilBERT's layout (`bert` layout, `DistilBertModel`): word and
    /// position embeddings only (no token types), no dropout after the
    /// attention's output projection (`sa_layer_norm(out_lin(ctx) + x)`),
    /// its module names; `DistilBertForSequenceClassification`'s head on the
    /// first token (`pre_classifier`, ReLU, dropout, `classifier`) where
    /// BERT has its pooler, the masked-LM head tied only under
    /// [`TransformerSpec::tie_embeddings`], and no pooler in the bare model.
    #[serde(default)]
    pub distilbert: bool,
    /// The classification head's dropout is off (DistilBERT's
    /// `seq_classif_dropout` of 0).
    #[serde(default)]
    pub undropped_head: bool,
    /// Every layer scales its rotated queries by a factor of their
    /// position, `q * get_llama_4_attn_scale(..).to(q.dtype)` (Ministral
    /// 3's `llama_4_scaling_beta`): a product the size of the queries that
    /// saves only the `[1, 1, seq, 1]` scale.
    #[serde(default)]
    pub position_scaled_query: bool,
    /// The model upcasts its logits itself, `lm_head(x).float()`
    /// (Nemotron-H): the forward keeps and returns the fp32 copy, and the
    /// half-precision logits go as soon as it is made.
    #[serde(default)]
    pub fp32_logits: bool,
}

/// The norm of a Llama-layout model (its blocks, q/k norms and final norm).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NormKind {
    /// RMSNorm written as eager ops (Llama and its relatives).
    #[default]
    Rms,
    /// `nn.LayerNorm` with weight and bias: one fp32-list kernel that saves
    /// its input and fp32 mean and rstd (GPT-NeoX).
    LayerNorm,
    /// Nemotron's `NemotronLayerNorm1P`: `F.layer_norm(x, shape, weight +
    /// 1, bias)` with its arguments cast to autocast's half type and
    /// autocast then off, so that under mixed precision it runs in half
    /// precision on a half copy of an fp32 input ([`crate::builder::Builder::layernorm_1p`]).
    LayerNorm1P,
    /// Cohere's `CohereLayerNorm`: LayerNorm without a bias written as
    /// eager ops in fp32 ([`crate::builder::Builder::cohere_layernorm`]).
    Cohere,
}

/// How a Llama-layout block projects q, k and v.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QkvProjection {
    /// `q_proj`, `k_proj` and `v_proj`: three outputs.
    #[default]
    Separate,
    /// One `qkv_proj` sliced into q, k and v (Phi-3's `qkv[..., a:b]`):
    /// views of its output; each slice's backward makes a zero-filled
    /// gradient of the whole output, summed into one.
    FusedSlices,
    /// One `query_key_value` chunked into q, k and v (GPT-NeoX's
    /// `qkv.view(..).chunk(3, dim=-1)`): views whose backward concatenates
    /// their gradients once.
    FusedChunks,
}

/// How the rotary embedding is applied to each head of q and k.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rotary {
    /// `q * cos + rotate_half(q) * sin` over the whole head (Llama).
    #[default]
    Whole,
    /// The first `dims` features of each head rotate, then
    /// `torch.cat([rotated, rest], -1)` makes a new contiguous tensor, even
    /// when `dims` is the whole head (GPT-NeoX's `rotary_pct`, Phi-3's
    /// `partial_rotary_factor`).
    Sliced {
        /// Rotated features per head (`cos.shape[-1]`), at most `head_dim`.
        dims: u64,
    },
    /// ERNIE 4.5's: the whole head in interleaved pairs, the products in
    /// fp32, cast back to q's dtype.
    InterleavedFp32,
    /// Llama 4's `apply_rotary_emb`: the whole head in interleaved pairs as
    /// complex numbers, `view_as_complex(x.float()) * freqs_cis`, cast back
    /// to x's dtype.
    ComplexFp32,
    /// Cohere's: the whole head in interleaved pairs, the copy to fp32
    /// first and the rotation in fp32, cast back ([`crate::builder::Builder::rotary_cohere`]).
    CohereFp32,
}

impl Rotary {
    /// The rotary embedding `transformers` builds for a `partial_rotary_factor`
    /// of `head_dim`: `int(head_dim * factor)` features, rounded up to even
    /// (`inv_freq` holds every second one and `cos` repeats it twice).
    ///
    /// # Errors
    /// [`Error::InvalidModel`] for a factor outside [0, 1].
    pub fn partial(head_dim: u64, factor: f64) -> Result<Rotary, Error> {
        if !(0.0..=1.0).contains(&factor) {
            return Err(Error::InvalidModel(format!(
                "partial_rotary_factor must be between 0 and 1, got {factor}"
            )));
        }
        let dims = (head_dim as f64 * factor).floor() as u64;
        Ok(Rotary::Sliced {
            dims: dims.div_ceil(2) * 2,
        })
    }
}

/// The MLP of a Llama-layout block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MlpKind {
    /// `down_proj(act(gate_proj(x)) * up_proj(x))` (SwiGLU, GeGLU).
    #[default]
    Gated,
    /// As `Gated`, with gate and up one projection chunked in two
    /// (Phi-3's `gate_up_proj`): both halves are views of its output, so
    /// the activation's saved gate keeps the whole output.
    FusedGated,
    /// `dense_4h_to_h(act(dense_h_to_4h(x)))` (GPT-NeoX, StarCoder2's
    /// `c_proj(act(c_fc(x)))`, Arcee's and Nemotron's
    /// `down_proj(act(up_proj(x)))`).
    Plain {
        /// Whether both projections have a bias (GPT-NeoX's always do,
        /// StarCoder2's with `use_bias`, Arcee's and Nemotron's with `mlp_bias`).
        bias: bool,
        /// `act` is `relu2` (`ReLUSquaredActivation`: `relu`, which saves
        /// its output, then `torch.square` of it, which saves its input:
        /// `pow(x, 2)`, on autocast's fp32 list, so that under mixed
        /// precision it squares an fp32 copy into an fp32 output) rather
        /// than one kernel that saves its input.
        #[serde(default)]
        relu_squared: bool,
        /// `act` is `gelu_new` (`NewGELUActivation`, Phi-1/1.5/2's): the
        /// tanh approximation written as eager ops, as GPT-2's
        /// ([`crate::builder::Builder::gelu_new`]), rather than one kernel.
        #[serde(default)]
        gelu_new: bool,
        /// `act` is `relu` (OPT's), which saves its output rather than its
        /// input: the projection after it saves the same tensor, so the
        /// first projection's output is freed once the ReLU has run.
        #[serde(default)]
        relu: bool,
    },
}

/// Which layers attend to a sliding window of the last `window` positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlidingWindow {
    /// The window, in tokens.
    pub window: u64,
    /// Every `full_every`-th layer (the 2nd, 4th, … for 2) attends to every
    /// position and the others slide (Gemma 2: 2, Gemma 3: 6); 0 when all
    /// layers slide (Mistral-7B v0.1).
    pub full_every: u64,
}

impl SlidingWindow {
    /// Whether layer `i` (from 0) slides, as `transformers`' default
    /// `layer_types` put it: `(i + 1) % full_every != 0`.
    pub fn slides(&self, i: u64) -> bool {
        self.full_every == 0 || !(i + 1).is_multiple_of(self.full_every)
    }

    /// Reads a `layer_types` list (`"sliding_attention"` /
    /// `"full_attention"`) as a pattern, `None` when it has no sliding layer.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] for an unknown layer type or a list that is
    /// not every `n`-th layer full.
    pub fn from_layer_types(window: u64, types: &[&str]) -> Result<Option<Self>, Error> {
        let mut slides = Vec::with_capacity(types.len());
        for t in types {
            slides.push(match *t {
                "sliding_attention" => true,
                "full_attention" => false,
                other => {
                    return Err(Error::InvalidModel(format!(
                        "layer_types: unknown layer type '{other}' (expected sliding_attention or full_attention)"
                    )));
                }
            });
        }
        if !slides.contains(&true) {
            return Ok(None);
        }
        let full_every = slides.iter().position(|s| !s).map_or(0, |i| i as u64 + 1);
        let w = SlidingWindow { window, full_every };
        if slides.iter().zip(0..).any(|(&s, i)| s != w.slides(i)) {
            return Err(Error::InvalidModel(
                "layer_types: vramfit reads sliding layers as every n-th layer full (as Gemma 2 and 3 have them); this list is not"
                    .into(),
            ));
        }
        Ok(Some(w))
    }
}

/// Where a decoder block's norms sit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NormPlacement {
    /// `x + attn(norm(x))`, then `x + mlp(norm(x))` (Llama, GPT-2).
    #[default]
    Pre,
    /// `x + norm(attn(x))`, then `x + norm(mlp(x))` (OLMo 2's
    /// `post_attention_layernorm` and `post_feedforward_layernorm`).
    Post,
    /// Both: `x + norm(attn(norm(x)))`, then `x + norm(mlp(norm(x)))`
    /// (Gemma 2 and 3: `input_layernorm`, `post_attention_layernorm`,
    /// `pre_feedforward_layernorm`, `post_feedforward_layernorm`).
    Sandwich,
}

/// Whether queries and keys are normalized before attention.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QkNorm {
    /// No normalization.
    #[default]
    None,
    /// An RMSNorm over each head's `head_dim` features of q and of k, with
    /// a `head_dim` weight each (Qwen3's `q_norm` and `k_norm`).
    PerHead,
    /// An RMSNorm over all of q's features and all of k's (`heads × head_dim`
    /// and `kv_heads × head_dim` weights), before they are split into heads (OLMo 2).
    Whole,
    /// Llama 4's `Llama4TextL2Norm` of each head of q and k, with no weight
    /// (`x.float() * rsqrt(mean(x²) + eps)`, cast back), after the rotary
    /// embedding and only in the layers that rotate.
    L2AfterRotary,
    /// An RMSNorm over each head of q and of k with a `head_dim` weight
    /// each, after the rotary embedding (Hunyuan's `query_layernorm` and
    /// `key_layernorm`).
    PerHeadAfterRotary,
}

impl TransformerSpec {
    /// The longest context the model supports: its learned positions, else
    /// its configured [`Self::context_limit`]; `None` when neither is known.
    pub fn trained_context(&self) -> Option<u64> {
        [self.max_positions, self.context_limit]
            .into_iter()
            .find(|&n| n > 0)
    }

    /// The layers that attend (and keep keys and values): all but the
    /// linear-attention ones and the feed-forward-only ones.
    pub fn attention_layers(&self) -> u64 {
        (0..self.layers).filter(|&i| self.attends(i)).count() as u64
    }

    /// Whether layer `i` attends: it mixes tokens, and not recurrently.
    pub fn attends(&self, i: u64) -> bool {
        self.mixes_tokens(i) && !self.is_linear(i)
    }

    /// Whether layer `i` mixes tokens (attention or a recurrent layer):
    /// every layer but a [`Self::single_mixer`] model's feed-forward ones.
    pub fn mixes_tokens(&self, i: u64) -> bool {
        self.single_mixer
            .as_ref()
            .is_none_or(|s| !s.feed_forward.contains(&i))
    }

    /// Whether layer `i` has a feed-forward (an MLP or experts): every
    /// layer but a [`Self::single_mixer`] model's token-mixing ones.
    pub fn has_feed_forward(&self, i: u64) -> bool {
        self.single_mixer
            .as_ref()
            .is_none_or(|s| s.feed_forward.contains(&i))
    }

    /// The norms a block holds: one for a [`Self::single_mixer`] layer or
    /// Phi's shared one, else one per half (sandwich norms aside).
    pub fn block_norms(&self) -> u64 {
        if self.single_mixer.is_some() || self.block.shared_norm {
            1
        } else {
            2
        }
    }

    /// Whether layer `i` is linear attention.
    pub fn is_linear(&self, i: u64) -> bool {
        self.linear.as_ref().is_some_and(|l| l.is_linear(i))
    }

    /// Checks that the dimensions are consistent.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] naming the inconsistency.
    pub fn validate(&self) -> Result<(), Error> {
        let positive = [
            ("vocab_size", self.vocab),
            ("hidden_size", self.hidden),
            ("num_hidden_layers", self.layers),
            ("num_attention_heads", self.heads),
            ("num_key_value_heads", self.kv_heads),
            ("head_dim", self.head_dim),
            ("intermediate_size", self.intermediate),
        ];
        for (name, v) in positive {
            if v == 0 || v > 1 << 32 {
                return Err(Error::InvalidModel(format!(
                    "{name} must be between 1 and 2^32, got {v}"
                )));
            }
        }
        // BERT and GPT-2 split hidden_size into the heads (`all_head_size`);
        // Hugging Face refuses a hidden size the heads do not divide.
        if self.arch != Arch::Llama && self.heads.saturating_mul(self.head_dim) != self.hidden {
            return Err(Error::InvalidModel(
                if self.hidden.is_multiple_of(self.heads) {
                    format!(
                        "head_dim ({}) must be hidden_size / num_attention_heads = {} for BERT and GPT-2",
                        self.head_dim,
                        self.hidden / self.heads
                    )
                } else {
                    format!(
                        "hidden_size ({}) is not a multiple of num_attention_heads ({})",
                        self.hidden, self.heads
                    )
                },
            ));
        }
        if self.block.sliding.is_some_and(|w| w.window == 0) {
            return Err(Error::InvalidModel(
                "sliding_window must be at least 1".into(),
            ));
        }
        if self.block.nope_every > 0
            && !matches!(
                self.block.rotary,
                Rotary::Whole | Rotary::ComplexFp32 | Rotary::CohereFp32
            )
        {
            return Err(Error::InvalidModel(
                "layers without a rotary embedding are modelled beside whole-head rotary ones only"
                    .into(),
            ));
        }
        if let Rotary::Sliced { dims } = self.block.rotary
            && dims > self.head_dim
        {
            return Err(Error::InvalidModel(format!(
                "the rotary embedding's {dims} features per head are more than head_dim ({})",
                self.head_dim
            )));
        }
        if !self.heads.is_multiple_of(self.kv_heads) {
            return Err(Error::InvalidModel(format!(
                "num_attention_heads ({}) must be a multiple of num_key_value_heads ({})",
                self.heads, self.kv_heads
            )));
        }
        if let Some(moe) = &self.moe {
            moe.validate(self.layers)?;
        }
        if let Some(mla) = &self.mla {
            mla.validate(self.head_dim, self.heads, self.kv_heads)?;
        }
        if let Some(g) = &self.gemma4 {
            g.validate(self)?;
            if self.mla.is_some() || self.linear.is_some() || self.arch != Arch::Llama {
                return Err(Error::InvalidModel(
                    "Gemma 4's layers are modelled in its own decoder only".into(),
                ));
            }
        }
        if let Some(linear) = &self.linear {
            linear.validate()?;
            if self.mla.is_some() || self.arch != Arch::Llama {
                return Err(Error::InvalidModel(
                    "linear attention is modelled in Llama-layout decoders with their own attention only"
                        .into(),
                ));
            }
        }
        if let Some(single) = &self.single_mixer {
            if self.arch != Arch::Llama
                || self.mla.is_some()
                || self.gemma4.is_some()
                || self.block.parallel_residual
            {
                return Err(Error::InvalidModel(
                    "layers of one mixer each are modelled in Llama-layout decoders with their own attention only"
                        .into(),
                ));
            }
            if let Some(&i) = single.feed_forward.iter().find(|&&i| i >= self.layers) {
                return Err(Error::InvalidModel(format!(
                    "layer {i} is named a feed-forward layer, but the model has {} layers",
                    self.layers
                )));
            }
            let contradiction = (0..self.layers).find(|&i| {
                (self.moe.as_ref().is_some_and(|m| m.is_sparse(i)) && !self.has_feed_forward(i))
                    || (self.linear.as_ref().is_some_and(|l| l.is_linear(i))
                        && !self.mixes_tokens(i))
            });
            if let Some(i) = contradiction {
                return Err(Error::InvalidModel(format!(
                    "layer {i} is named both a token mixer and a feed-forward layer"
                )));
            }
        }
        // The deepest published models have ~130 layers; beyond this the
        // op-by-op simulation would take seconds in the browser.
        if self.layers > MAX_LAYERS {
            return Err(Error::InvalidModel(format!(
                "num_hidden_layers = {} is more than {MAX_LAYERS}",
                self.layers
            )));
        }
        // PyTorch's `nn.Dropout` refuses probabilities outside [0, 1] (NaN included).
        for (name, p) in [
            ("hidden dropout", self.hidden_dropout),
            ("attention dropout", self.attention_dropout),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(Error::InvalidModel(format!(
                    "{name} probability must be between 0 and 1, got {p}"
                )));
            }
        }
        Ok(())
    }
}

/// Structured pruning: keep `keep_attention` of the attention heads (whole
/// key/value groups with GQA) and `keep_mlp` of the MLP neurons, rounded to
/// at least one.
pub fn pruned(
    t: &TransformerSpec,
    cfg: &crate::config::TrainConfig,
) -> Result<TransformerSpec, Error> {
    // Nothing to prune (a zero-sized spec is the size checks' to refuse).
    if (cfg.keep_attention >= 1.0 && cfg.keep_mlp >= 1.0) || t.kv_heads == 0 || t.intermediate == 0
    {
        return Ok(t.clone());
    }
    let group = (t.heads / t.kv_heads.max(1)).max(1);
    let kv_heads =
        ((t.kv_heads as f64 * cfg.keep_attention).round() as u64).clamp(1, t.kv_heads.max(1));
    let keep = |n: u64| ((n as f64 * cfg.keep_mlp).round() as u64).clamp(1, n.max(1));
    // Experts keep the same share of their neurons.
    let moe = t.moe.clone().map(|mut m| {
        m.expert_intermediate = keep(m.expert_intermediate);
        if let Some(s) = m.shared.as_mut() {
            s.intermediate = keep(s.intermediate);
        }
        m
    });
    Ok(TransformerSpec {
        kv_heads,
        heads: kv_heads * group,
        intermediate: keep(t.intermediate),
        moe,
        ..t.clone()
    })
}

/// One tensor-parallel rank's share (Megatron-LM): attention heads, key/value
/// heads, MLP and shared-expert columns split over `par.tp`; the vocabulary
/// padded to a multiple of 128 · tp (`make_vocab_size_divisible_by`) and
/// split; each routed expert's columns split over [`Parallel::expert_tp`]
/// (Megatron-Core's expert tensor parallelism, `tp` unless `etp` is given).
///
/// [`Parallel::expert_tp`]: crate::parallel::Parallel::expert_tp
fn tensor_parallel_shard(
    t: &TransformerSpec,
    par: &crate::parallel::Parallel,
) -> Result<TransformerSpec, Error> {
    let mut local = dense_shard(t, par.tp)?;
    let etp = par.expert_tp();
    if let Some(m) = local.moe.as_mut().filter(|_| etp > 1) {
        let size = m.expert_intermediate;
        if !size.is_multiple_of(etp) {
            // With `etp` unset the split is `tp`'s: say so in its words.
            return Err(Error::NotApplicable(if par.etp == 0 {
                Inapplicable::TensorParallel {
                    dimension: "moe_intermediate_size",
                    size,
                    tp: etp,
                }
            } else {
                Inapplicable::ExpertTensorParallel { size, etp }
            }));
        }
        m.expert_intermediate = size / etp;
    }
    Ok(local)
}

/// [`tensor_parallel_shard`] of everything but the routed experts.
fn dense_shard(t: &TransformerSpec, tp: u64) -> Result<TransformerSpec, Error> {
    if tp <= 1 {
        return Ok(t.clone());
    }
    for (name, v) in [
        ("num_attention_heads", t.heads),
        ("num_key_value_heads", t.kv_heads),
        ("intermediate_size", t.intermediate),
    ] {
        if !v.is_multiple_of(tp) {
            return Err(Error::NotApplicable(Inapplicable::TensorParallel {
                dimension: name,
                size: v,
                tp,
            }));
        }
    }
    // Shared experts are dense layers: Megatron-Core splits them over `tp`.
    let moe = match &t.moe {
        Some(m) => {
            let mut m = m.clone();
            if let Some(s) = m.shared.as_mut() {
                if !s.intermediate.is_multiple_of(tp) {
                    return Err(Error::NotApplicable(Inapplicable::TensorParallel {
                        dimension: "shared_expert_intermediate_size",
                        size: s.intermediate,
                        tp,
                    }));
                }
                s.intermediate /= tp;
            }
            Some(m)
        }
        None => None,
    };
    let padded = t.vocab.div_ceil(128 * tp) * 128 * tp;
    let linear = match &t.linear {
        Some(l) => Some(Box::new(l.shard(tp)?)),
        None => None,
    };
    let gemma4 = match &t.gemma4 {
        Some(g) if !g.full_kv_heads.is_multiple_of(tp) => {
            return Err(Error::NotApplicable(Inapplicable::TensorParallel {
                dimension: "num_global_key_value_heads",
                size: g.full_kv_heads,
                tp,
            }));
        }
        Some(g) => Some(Box::new(Gemma4 {
            full_kv_heads: g.full_kv_heads / tp,
            ..(**g).clone()
        })),
        None => None,
    };
    Ok(TransformerSpec {
        heads: t.heads / tp,
        kv_heads: t.kv_heads / tp,
        intermediate: t.intermediate / tp,
        vocab: padded / tp,
        moe,
        linear,
        gemma4,
        ..t.clone()
    })
}

pub use super::MAX_LAYERS;

/// Checks that no tensor or parameter of `t` at `cfg`'s sequence length (and,
/// in inference, KV-cache length) exceeds [`super::MAX_ELEMENTS`], so that
/// the lowering's arithmetic cannot overflow.
fn check_sizes(t: &TransformerSpec, cfg: &crate::config::TrainConfig) -> Result<(), Error> {
    use super::check_elements as check;
    let seq = cfg.seq;
    let qd = t.heads.saturating_mul(t.head_dim);
    check(
        "the query projection (num_attention_heads × head_dim × 3)",
        &[t.heads, t.head_dim, 3],
    )?;
    check(
        "the embedding (vocab_size × hidden_size)",
        &[t.vocab, t.hidden],
    )?;
    check(
        "the position embedding (max_position_embeddings × hidden_size)",
        &[t.max_positions, t.hidden],
    )?;
    check(
        "the token-type embedding (type_vocab_size × hidden_size)",
        &[t.type_vocab, t.hidden],
    )?;
    check(
        "an attention projection (hidden_size × num_attention_heads × head_dim × 3)",
        &[t.hidden, qd, 3],
    )?;
    // BERT's query, key, value, output and pooler projections are hidden × hidden.
    check(
        "a hidden × hidden projection (hidden_size²)",
        &[t.hidden, t.hidden],
    )?;
    check(
        "an MLP projection (hidden_size × intermediate_size)",
        &[t.hidden, t.intermediate],
    )?;
    check(
        "the hidden states per sample (seq × hidden_size)",
        &[seq, t.hidden],
    )?;
    check(
        "the projected q, k, v per sample (seq × num_attention_heads × head_dim × 3)",
        &[seq, qd, 3],
    )?;
    check(
        "the MLP activations per sample (seq × intermediate_size)",
        &[seq, t.intermediate],
    )?;
    check("the logits per sample (seq × vocab_size)", &[seq, t.vocab])?;
    if let Some(m) = &t.moe {
        check(
            "an expert bank (experts × 2 × expert intermediate size × hidden_size)",
            &[m.experts, 2, m.expert_intermediate, t.hidden],
        )?;
        check(
            "the routed rows per sample (seq × num_experts_per_tok × 2 × (expert intermediate size + hidden_size))",
            &[
                seq,
                m.top_k,
                2,
                m.expert_intermediate.saturating_add(t.hidden),
            ],
        )?;
        check(
            "the router's scores per sample (seq × experts)",
            &[seq, m.experts],
        )?;
    }
    if let Some(g) = &t.gemma4 {
        check(
            "a full-attention layer's query projection (num_attention_heads × global_head_dim × hidden_size)",
            &[t.heads, g.full_head_dim, t.hidden],
        )?;
        check(
            "the per-layer inputs per sample (seq × num_hidden_layers × hidden_size_per_layer_input)",
            &[seq, t.layers, g.per_layer_width],
        )?;
        check(
            "the per-layer embedding (vocab_size_per_layer_input × num_hidden_layers × hidden_size_per_layer_input)",
            &[g.per_layer_vocab, t.layers, g.per_layer_width],
        )?;
    }
    match t.linear.as_deref() {
        Some(super::Recurrent::DeltaNet(l)) => {
            // The chunked rule's widest tensors: 64 × 64 per chunk, or a head.
            let width = l
                .key_head_dim
                .max(l.value_head_dim)
                .max(super::gated_deltanet::CHUNK);
            check(
                "the linear attention's chunk tensors per sample (seq × linear_num_value_heads × head width)",
                &[
                    seq.saturating_add(super::gated_deltanet::CHUNK),
                    l.value_heads,
                    width,
                    2,
                ],
            )?;
        }
        Some(super::Recurrent::Mamba2(m)) => {
            // The chunked scan's widest tensors: a chunk's pairwise decays,
            // B and C repeated to every head, or the states.
            let width = m.chunk.max(m.state).max(m.head_dim);
            check(
                "the Mamba-2 chunk tensors per sample (seq × mamba_n_heads × chunk or state width)",
                &[seq.saturating_add(m.chunk), m.heads, width, 2],
            )?;
        }
        None => {}
    }
    if cfg.attention == Attention::Eager {
        check(
            "the attention scores per sample (num_attention_heads × seq × seq)",
            &[t.heads, seq, seq],
        )?;
    }
    if let Head::Classification { labels } = t.head {
        super::check_dimension("num_labels", labels, super::MAX_WIDTH)?;
    }
    if cfg.mode != crate::config::Mode::Inference {
        return Ok(());
    }
    let cache = cfg.cache_tokens();
    if let Some(mla) = &t.mla {
        check(
            "the latent cache per sample (layers × (kv_lora_rank + qk_rope_head_dim) × tokens)",
            &[t.layers, mla.cache_width(), cache],
        )?;
    }
    check(
        "the KV cache per sample (2 × layers × num_key_value_heads × head_dim × tokens)",
        &[2, t.layers, t.kv_heads, t.head_dim, cache],
    )
}

/// Lowers a transformer for sequence length `seq`; `t` is the validated
/// spec after pruning ([`pruned`]), which may have fewer heads than it splits
/// `hidden_size` into.
pub fn lower(
    b: &mut Builder,
    t: &TransformerSpec,
    cfg: &crate::config::TrainConfig,
) -> Result<(), Error> {
    let (seq, attention, ckpt) = (cfg.seq, cfg.attention, cfg.checkpointing);
    #[cfg(not(feature = "every-model"))]
    if t.moe.is_some() || t.mla.is_some() || t.linear.is_some() || t.gemma4.is_some() {
        return Err(super::not_in_this_build());
    }
    check_sizes(t, cfg)?;
    let par = cfg.parallel;
    let local = tensor_parallel_shard(t, &par)?;
    let t = &local;
    if par.sp {
        if t.arch == Arch::Bert || !seq.is_multiple_of(par.tp) {
            return Err(Error::NotApplicable(Inapplicable::SequenceParallel {
                tp: par.tp,
            }));
        }
        b.sp = par.tp;
    }
    // The lowering has refused an `ep` that does not divide the experts.
    b.ep = par.ep.max(1);
    b.expert_rows = (par.expert_tp(), par.tp.max(1));
    // Pipeline stage 0 holds the embeddings and the first ⌈L/pp⌉ layers.
    let stage_layers = t.layers.div_ceil(par.pp.max(1));
    if t.max_positions > 0 && seq > t.max_positions {
        return Err(Error::NotApplicable(Inapplicable::SequenceTooLong {
            seq,
            positions: t.max_positions,
        }));
    }
    let h = t.hidden;
    if let Some(e) = t.encoder.as_deref() {
        // Loaded with the language model and run only on images: frozen
        // weights that no op reads, sharded as its linear layers are.
        b.layer("vision_encoder");
        let tp = par.tp.max(1);
        let linear = b.frozen_param("linear.weight", &[e.linear.div_ceil(tp)]);
        b.mark_quantizable(linear);
        if e.params > e.linear {
            b.frozen_param("other", &[(e.params - e.linear).div_ceil(tp)]);
        }
    }
    b.layer("embeddings");
    let ids = b.input("input_ids", seq, DType::I64);
    let labels_per_sample = match t.head {
        Head::CausalLm | Head::MaskedLm => seq,
        Head::Classification { .. } | Head::Bare => 1,
    };
    let labels = if b.inference {
        ids
    } else {
        b.input("labels", labels_per_sample, DType::I64)
    };
    if t.block.tril_buffer {
        b.buffer(
            "bias",
            t.max_positions.saturating_mul(t.max_positions),
            DType::U8,
        );
    }
    let (embed_name, pos_name) = match t.arch {
        Arch::Bert => ("word_embeddings", "position_embeddings"),
        Arch::Gpt2 => ("wte", "wpe"),
        Arch::Llama => ("embed_tokens", "embed_positions"),
    };
    // BERT's position and token-type ids are slices of buffers, the same for
    // every sample; RoBERTa's are made per sample before the lookups.
    let (type_ids, position_ids) = if t.arch == Arch::Bert && t.block.roberta {
        roberta_ids(b, ids)
    } else {
        (ids, ids)
    };
    // OPT's position ids, and what its body keeps of them until it returns.
    let (position_ids, position_locals) = if t.block.position_offset > 0 {
        let (ids, locals) = offset_position_ids(b, ids);
        (ids, Some(locals))
    } else {
        (position_ids, None)
    };
    let wte = b.param(&format!("{embed_name}.weight"), &[t.vocab, h]);
    let mut x = b.embedding_with(embed_name, ids, wte, h);
    if t.block.embed_scale {
        // `embedding(ids) * embed_scale`: the product saves only the constant.
        x = b.scale("embed_scale", x);
    }
    if t.arch == Arch::Bert && !t.block.distilbert {
        // token_type_ids default to a zero buffer; embeddings = words + types, then += positions.
        let types = b.embedding("token_type_embeddings", type_ids, t.type_vocab.max(1), h);
        x = b.add("add_token_types", x, types);
    }
    if t.max_positions > 0 {
        let rows = t.max_positions + t.block.position_offset;
        let pos = b.embedding(pos_name, position_ids, rows, h);
        x = b.add("add_positions", x, pos);
    }
    if t.arch == Arch::Bert {
        x = b.layernorm("LayerNorm", x, h, true);
    }
    // Eager attention in a decoder adds a causal mask (`create_causal_mask`,
    // in the embeddings' dtype) to its scores; the model's body keeps it
    // until it returns, and each checkpointed block until its backward.
    // Under SDPA a padding mask ([`AttentionMask::Padding`]) is one boolean
    // `[batch, 1, seq, seq]` tensor (`masking_utils.sdpa_mask`) for the whole
    // forward, which each layer's attention converts. Training only; latent
    // attention, soft-capped scores and sinks (eager under SDPA) keep their own paths.
    let masking = if b.inference {
        AttentionMask::Expanded
    } else {
        cfg.attention_mask
    };
    let mask = if t.arch != Arch::Bert && attention == Attention::Eager {
        Some(b.causal_mask(seq, b.dtype(x)))
    } else if masking == AttentionMask::Padding
        && attention == Attention::Sdpa
        && t.mla.is_none()
        && !t.block.attn_softcap
        && !t.block.sinks
    {
        Some(b.padding_mask(seq))
    } else {
        None
    };
    // Sliding-window layers under SDPA: once the sequence reaches the window,
    // `masking_utils` cannot leave the mask to the kernel's causal flag
    // (`_ignore_causal_mask_sdpa`: `kv_length >= local_attention_size`), so
    // `create_sliding_window_causal_mask` builds one for those layers — a
    // `[1, 1, seq, seq]` boolean expanded to the batch (a view), or with a
    // padding mask one per sample — and each sliding layer's attention gets it.
    let sliding_mask = match t.block.sliding {
        Some(w)
            if !b.inference
                && attention == Attention::Sdpa
                && t.mla.is_none()
                && !t.block.attn_softcap
                && !t.block.sinks
                && seq >= w.window =>
        {
            Some(b.sliding_mask(seq, masking == AttentionMask::Padding))
        }
        _ => None,
    };
    // Gemma 4's per-layer inputs, from the ids and the scaled embeddings.
    #[cfg(feature = "every-model")]
    let ple = t
        .gemma4
        .as_deref()
        .and_then(|g| gemma4::per_layer_inputs(b, t, g, ids, x));
    #[cfg(not(feature = "every-model"))]
    let ple: Option<TensorId> = None;
    let mut shared_kv = gemma4::SharedKv::default();
    let x_sp = b.sp_scatter(x);
    let embed_dropout = if t.block.undropped_embeddings {
        0.0
    } else {
        t.hidden_dropout
    };
    x = b.dropout("dropout", x_sp, embed_dropout);
    // BERT's `embedding_output = self.embeddings(...)` (DistilBERT's
    // `embeddings`) is a local of the encoder model's forward until it
    // returns, through every layer: where the layers save only its
    // half-precision copy (autocast), it is still held.
    let embedding_output = x;

    // A decoder's `DynamicCache` in training ([`TrainingCache`]): off when
    // transformers checkpoints (it turns `use_cache` off itself).
    let mut cache = (t.arch != Arch::Bert
        && !b.inference
        && cfg.training_cache == TrainingCache::Copies
        && !super::t5_lower::hf_checkpointing(cfg))
    .then(Vec::new);
    for i in 0..stage_layers {
        let name = match t.arch {
            Arch::Bert if t.block.distilbert => format!("transformer.layer.{i}"),
            Arch::Bert => format!("encoder.layer.{i}"),
            Arch::Gpt2 => format!("h.{i}"),
            Arch::Llama => format!("layers.{i}"),
        };
        b.layer(&name);
        b.begin_block();
        // The caller's `hidden_states = layer(hidden_states)` keeps the layer's
        // input alive until the layer returns.
        b.hold_until_block_end(x);
        let layer_mask = match (t.block.sliding, sliding_mask) {
            (Some(w), Some(m)) if w.slides(i) => Some(m),
            _ => mask,
        };
        x = match (t.arch, t.gemma4.as_deref()) {
            #[cfg(feature = "every-model")]
            (Arch::Llama, Some(g)) => gemma4_layer(
                b,
                t,
                g,
                (i, x),
                seq,
                (attention, ckpt, masking),
                layer_mask,
                (ple, &mut shared_kv),
                cache.as_mut(),
            ),
            (Arch::Bert, _) => bert_layer(b, t, x, seq, (attention, ckpt, masking), mask),
            (Arch::Gpt2 | Arch::Llama, _) => decoder_layer(
                b,
                t,
                (i, x),
                seq,
                (attention, ckpt, masking),
                layer_mask,
                cache.as_mut(),
            ),
        };
        b.end_block();
    }
    if t.arch == Arch::Bert {
        b.keep_alive(embedding_output);
    }

    if par.pp > 1 {
        b.layer("pipeline");
        b.pipeline_send(x);
        return Ok(());
    }
    b.layer("head");
    if b.inference {
        lower_inference_head(b, t, x, wte, cfg.cache_tokens());
        return Ok(());
    }
    match t.head {
        Head::CausalLm => {
            x = match t.arch {
                Arch::Llama => rms(b, t, "norm", x, h),
                Arch::Gpt2 | Arch::Bert => b.layernorm("ln_f", x, h, true),
            };
            // The body returns: its mask goes, and OPT's position locals.
            for m in mask
                .into_iter()
                .chain(position_locals.into_iter().flatten())
            {
                b.keep_alive(m);
            }
            x = b.sp_gather(x);
            let seq = seq / b.sp;
            let logits = if t.tie_embeddings {
                lm_head_tied(b, x, wte, t)
            } else {
                b.linear("lm_head", x, h, t.vocab, t.block.lm_head_bias)
            };
            let logits = if t.block.scaled_logits {
                b.scale("logits_scaling", logits)
            } else {
                logits
            };
            let logits = final_softcap(b, t, logits);
            // transformers' ForCausalLMLoss upcasts the logits (`logits.float()`) before the loss.
            let upcast = b.cast(logits, DType::F32);
            let seq = seq * b.sp;
            b.cross_entropy("loss", upcast, labels, seq, t.vocab);
            #[cfg(feature = "every-model")]
            if let Some(moe) = t.moe.as_ref().filter(|m| m.aux_loss) {
                super::moe_lower::aux_loss(b, moe);
            }
            // The forward's `logits` local (half precision under autocast) lives
            // until it returns, and in the output object it returns; a model
            // that upcasts them itself keeps the fp32 copy instead.
            let returned = if t.block.fp32_logits { upcast } else { logits };
            if upcast != logits && !t.block.fp32_logits {
                b.keep_alive(logits);
            }
            // So does the body's output (`outputs.last_hidden_state`), which
            // under autocast the head saves only as a half-precision copy.
            b.keep_alive(x);
            b.returns(returned);
        }
        Head::Classification { labels: n } => {
            let logits = if t.block.roberta {
                roberta_classifier(b, t, x, n)
            } else if t.block.distilbert {
                distilbert_classifier(b, t, x, n)
            } else {
                let pooled = bert_pooler(b, x, h);
                let pooled = b.dropout("dropout", pooled, t.hidden_dropout);
                b.linear("classifier", pooled, h, n, true)
            };
            b.cross_entropy("loss", logits, labels, 1, n);
            // The encoder's output object holds its last hidden state.
            b.keep_alive(x);
            b.returns(logits);
        }
        Head::Bare => {
            // DistilBERT's bare model has no pooler: its first token stands in.
            let pooled = if t.block.distilbert {
                first_token(b, "select", x, h)
            } else {
                bert_pooler(b, x, h)
            };
            b.cross_entropy("loss", pooled, labels, 1, h);
            // `BaseModelOutputWithPooling`: the last hidden state and the pooled output.
            b.returns(x);
            b.returns(pooled);
        }
        Head::MaskedLm => {
            let logits = bert_mlm_head(b, t, x, wte);
            // `CrossEntropyLoss()(prediction_scores.view(-1, vocab_size), labels.view(-1))`.
            b.cross_entropy("loss", logits, labels, seq, t.vocab);
            // The scores are a local of the forward until it returns them,
            // through the loss: under autocast its fp32 copy of the log
            // probabilities is made beside them.
            b.keep_alive(logits);
            // The encoder's output object holds its last hidden state.
            b.keep_alive(x);
            b.returns(logits);
        }
    }
    // The output's `past_key_values` holds the cache until the loop drops it.
    for kv in cache.into_iter().flatten() {
        b.keep_alive(kv);
        b.returns(kv);
    }
    Ok(())
}

/// The head in inference: a decoder's LM head sees only the last position
/// (generation asks for `logits_to_keep=1`) and is upcast to fp32; the KV
/// cache holds keys and values of every layer for `cache_tokens` positions.
fn lower_inference_head(
    b: &mut Builder,
    t: &TransformerSpec,
    x: TensorId,
    wte: crate::graph::ParamId,
    cache_tokens: u64,
) {
    let h = t.hidden;
    match t.head {
        Head::CausalLm => {
            let x = match t.arch {
                Arch::Llama => rms(b, t, "norm", x, h),
                Arch::Gpt2 | Arch::Bert => b.layernorm("ln_f", x, h, true),
            };
            let last = b.tensor(crate::graph::Numel::per_sample(h), b.dtype(x), false);
            b.op(
                "select_last",
                crate::graph::OpKind::Copy,
                crate::builder::OpSpec {
                    inputs: vec![x],
                    outputs: vec![last],
                    ..Default::default()
                },
            );
            let logits = if t.tie_embeddings {
                lm_head_tied(b, last, wte, t)
            } else {
                b.linear("lm_head", last, h, t.vocab, t.block.lm_head_bias)
            };
            let logits = if t.block.scaled_logits {
                b.scale("logits_scaling", logits)
            } else {
                logits
            };
            let logits = final_softcap(b, t, logits);
            let up = b.cast(logits, DType::F32);
            b.keep_alive(up);
            let kv_dtype = b.autocast_dtype().unwrap_or(b.param_dtype()).size();
            b.set_kv_cache(kv_layout(t, kv_dtype), cache_tokens);
        }
        Head::Classification { labels } => {
            let logits = if t.block.roberta {
                roberta_classifier(b, t, x, labels)
            } else if t.block.distilbert {
                distilbert_classifier(b, t, x, labels)
            } else {
                let pooled = bert_pooler(b, x, h);
                b.linear("classifier", pooled, h, labels, true)
            };
            b.keep_alive(logits);
        }
        Head::Bare if t.block.distilbert => b.keep_alive(x),
        Head::Bare => {
            let pooled = bert_pooler(b, x, h);
            b.keep_alive(pooled);
        }
        Head::MaskedLm => {
            let logits = bert_mlm_head(b, t, x, wte);
            b.keep_alive(logits);
        }
    }
}

/// How the KV cache grows: keys and values of `kv_heads × head_dim` per
/// layer and position, `dtype_size` bytes each; sliding-window layers keep
/// at most the window.
pub fn kv_layout(t: &TransformerSpec, dtype_size: u64) -> crate::graph::KvLayout {
    if let Some(g) = t.gemma4.as_deref() {
        return gemma4_kv_layout(t, g, dtype_size);
    }
    // Latent attention caches its normalized latent and rotated key.
    let per_layer = match &t.mla {
        Some(mla) => mla.cache_width() * dtype_size,
        None => 2 * t.kv_heads * t.head_dim * dtype_size,
    };
    let sliding = t
        .block
        .sliding
        .map_or(0, |w| (0..t.layers).filter(|&i| w.slides(i)).count() as u64);
    // Linear-attention layers keep a fixed state instead.
    let state = t.linear.as_ref().map_or(0, |l| {
        l.linear_layers(t.layers)
            .saturating_mul(l.state_bytes(dtype_size))
    });
    crate::graph::KvLayout {
        per_token: t.attention_layers().saturating_sub(sliding) * per_layer,
        sliding_per_token: sliding * per_layer,
        window: t.block.sliding.map_or(0, |w| w.window),
        fixed: state,
    }
}

/// One Gemma 4 decoder layer `i` on `x` ([`super::gemma4`]'s notes: the
/// kinds of attention, shared keys and values, per-layer inputs, experts
/// beside the MLP).
#[allow(clippy::too_many_arguments)]
fn gemma4_layer(
    b: &mut Builder,
    t: &TransformerSpec,
    g: &Gemma4,
    (i, x): (u64, TensorId),
    seq: u64,
    (attention, ckpt, masking): (Attention, Checkpointing, AttentionMask),
    mask: Option<TensorId>,
    (ple, shared): (Option<TensorId>, &mut gemma4::SharedKv),
    cache: Option<&mut Vec<TensorId>>,
) -> TensorId {
    let h = t.hidden;
    let la = g.layer(t, i);
    // The layer's attention as the shared code sees it.
    let lt = TransformerSpec {
        kv_heads: la.kv_heads,
        head_dim: la.head_dim,
        moe: None,
        ..t.clone()
    };
    let n_local = rms(b, t, "input_layernorm", x, h);
    let mark = b.op_count();
    let n = b.sp_gather(n_local);
    let qd = t.heads * la.head_dim;
    let kvd = la.kv_heads * la.head_dim;
    let q = b.linear("self_attn.q_proj", n, h, qd, t.qkv_bias);
    let q = b.rmsnorm_weight_first("self_attn.q_norm", q, la.head_dim);
    let q = b.rotary("self_attn.rotary_q", q);
    let kind = if t.block.sliding.is_some_and(|w| w.slides(i)) {
        &mut shared.sliding
    } else {
        &mut shared.full
    };
    let (k, v) = match *kind {
        Some(kv) if !la.projects_kv => kv,
        _ => {
            let kp = b.linear("self_attn.k_proj", n, h, kvd, t.qkv_bias);
            let vp = if la.v_proj {
                b.linear("self_attn.v_proj", n, h, kvd, t.qkv_bias)
            } else {
                kp
            };
            let k = b.rmsnorm_weight_first("self_attn.k_norm", kp, la.head_dim);
            let k = b.rotary("self_attn.rotary_k", k);
            let v = b.rmsnorm_unscaled("self_attn.v_norm", vp, la.head_dim);
            let kv = b.cache_update(cache, k, v);
            // The last maker of each kind stores its keys and values.
            *kind = Some(kv);
            kv
        }
    };
    b.resave(mark, n, n_local);
    let ctx = attention_core(
        b,
        &lt,
        (q, k, v),
        seq,
        (attention, ckpt, masking),
        (true, false),
        mask,
    );
    let o = b.linear("self_attn.o_proj", ctx, qd, h, t.qkv_bias);
    for t in [n_local, q, k, v] {
        b.keep_alive(t);
    }
    let o = b.sp_scatter(o);
    let o = rms(b, t, "post_attention_layernorm", o, h);
    let x = b.add("attn.residual", x, o);
    let n_local = rms(b, t, "pre_feedforward_layernorm", x, h);
    let mark = b.op_count();
    let n = b.sp_gather(n_local);
    let wide = TransformerSpec {
        intermediate: g.mlp_width(t, i),
        ..lt
    };
    let mut m = llama_mlp(b, &wide, n);
    b.resave(mark, n, n_local);
    b.keep_alive(n_local);
    m = b.sp_scatter(m);
    if let Some(moe) = t.moe.as_deref() {
        let m1 = rms(b, t, "post_feedforward_layernorm_1", m, h);
        let e_in = rms(b, t, "pre_feedforward_layernorm_2", x, h);
        let e = super::moe_lower::routed(b, h, moe, x, e_in);
        let m2 = rms(b, t, "post_feedforward_layernorm_2", e, h);
        m = b.add("moe.add", m1, m2);
    }
    let m = rms(b, t, "post_feedforward_layernorm", m, h);
    let mut x = b.add("mlp.residual", x, m);
    if let Some(p) = ple {
        let w = g.per_layer_width;
        // `per_layer_inputs[:, :, i, :]`: a strided view of the whole tensor.
        let slice = b
            .split_widths("per_layer_input.select", p, &[w, (t.layers - 1) * w], true)
            .first()
            .copied()
            .unwrap_or(p);
        let gate = b.linear("per_layer_input_gate", x, h, w, false);
        let gate = b.activation("act_fn", gate);
        let gated = b.mul("per_layer_input.mul", gate, slice, b.numel(gate).per_sample);
        let o = b.linear("per_layer_projection", gated, w, h, false);
        let o = rms(b, t, "post_per_layer_input_norm", o, h);
        x = b.add("per_layer_input.residual", x, o);
    }
    b.buffer("layer_scalar", 1, b.param_dtype());
    x
}

/// Gemma 4's cache: keys and values of each layer that makes its own (the
/// shared ones keep none), of its kind's heads; sliding layers keep at
/// most the window.
fn gemma4_kv_layout(t: &TransformerSpec, g: &Gemma4, dtype_size: u64) -> crate::graph::KvLayout {
    let (mut full, mut sliding) = (0, 0);
    for i in 0..t.layers {
        let a = g.layer(t, i);
        if !a.projects_kv {
            continue;
        }
        let bytes = 2 * a.kv_heads * a.head_dim * dtype_size;
        if t.block.sliding.is_some_and(|w| w.slides(i)) {
            sliding += bytes;
        } else {
            full += bytes;
        }
    }
    crate::graph::KvLayout {
        per_token: full,
        sliding_per_token: sliding,
        window: t.block.sliding.map_or(0, |w| w.window),
        fixed: 0,
    }
}

/// Gemma 2's `final_logit_softcapping`: `tanh(logits / cap) * cap`, whose
/// `tanh` saves its output.
fn final_softcap(b: &mut Builder, t: &TransformerSpec, logits: TensorId) -> TensorId {
    if !t.block.final_softcap {
        return logits;
    }
    let x = b.scale("logit_softcap_div", logits);
    let x = b.tanh("logit_softcap_tanh", x);
    b.scale("logit_softcap_mul", x)
}

/// The LM head reusing the input embedding matrix (GPT-2's tied `lm_head`).
fn lm_head_tied(
    b: &mut Builder,
    x: TensorId,
    wte: crate::graph::ParamId,
    t: &TransformerSpec,
) -> TensorId {
    // Tying shares the weight; Phi's bias stays the head's own.
    let bias = t
        .block
        .lm_head_bias
        .then(|| b.param("lm_head.bias", &[t.vocab]));
    b.linear_with("lm_head", x, wte, bias, t.hidden, t.vocab)
}

/// BERT's masked-LM head (`BertOnlyMLMHead`): `transform` (dense, GELU,
/// LayerNorm), then `decoder`, whose weight is the word embeddings' and
/// whose bias is `cls.predictions.bias`; returns the scores over the
/// vocabulary. DistilBERT's is the same chain (`vocab_transform`,
/// activation, `vocab_layer_norm`, `vocab_projector` with its bias), its
/// weight tied only under `tie_word_embeddings`.
fn bert_mlm_head(
    b: &mut Builder,
    t: &TransformerSpec,
    x: TensorId,
    wte: crate::graph::ParamId,
) -> TensorId {
    let h = t.hidden;
    let [dense, act, norm, bias, decoder] = if t.block.distilbert {
        [
            "vocab_transform",
            "activation",
            "vocab_layer_norm",
            "vocab_projector.bias",
            "vocab_projector",
        ]
    } else {
        [
            "cls.predictions.transform.dense",
            "cls.predictions.transform.transform_act_fn",
            "cls.predictions.transform.LayerNorm",
            "cls.predictions.bias",
            "cls.predictions.decoder",
        ]
    };
    let d = b.linear(dense, x, h, h, true);
    let a = b.activation(act, d);
    let n = b.layernorm(norm, a, h, true);
    let bias = b.param(bias, &[t.vocab]);
    let weight = if t.block.distilbert && !t.tie_embeddings {
        b.param("vocab_projector.weight", &[t.vocab, h])
    } else {
        wte
    };
    b.linear_with(decoder, n, weight, Some(bias), h, t.vocab)
}

/// BERT's pooler: `tanh(dense(x[:, 0]))`.
fn bert_pooler(b: &mut Builder, x: TensorId, h: u64) -> TensorId {
    let first = first_token(b, "pooler.select", x, h);
    let d = b.linear("pooler.dense", first, h, h, true);
    b.tanh("pooler.activation", d)
}

/// `x[:, 0]`, the first position of each sample's `h` features.
fn first_token(b: &mut Builder, name: &str, x: TensorId, h: u64) -> TensorId {
    // A strided view; Linear on it reads it through a copy-free addmm.
    let first = b.tensor(crate::graph::Numel::per_sample(h), b.dtype(x), true);
    b.op(
        name,
        crate::graph::OpKind::Copy,
        crate::builder::OpSpec {
            inputs: vec![x],
            outputs: vec![first],
            ..Default::default()
        },
    );
    first
}

/// RoBERTa's token-type and position ids for the token ids `ids`
/// (`RobertaEmbeddings.forward`): `create_position_ids_from_input_ids`,
/// `(cumsum(ids.ne(pad).int(), 1).type_as(mask) + 0) * mask`, then
/// `.long() + pad` (each step a new `[batch, seq]` tensor: int32, the
/// cumsum's int64, int32, the `.long()` copy), and the token types
/// gathered from the zero buffer at those positions, an int64 tensor of
/// the same shape. The two embeddings keep them for backward.
fn roberta_ids(b: &mut Builder, ids: TensorId) -> (TensorId, TensorId) {
    use crate::graph::{Numel, TempStep};
    let tokens = b.numel(ids).per_sample;
    let bytes = |size: u64| TempStep::Alloc(Numel::per_sample(tokens * size));
    let positions = b.tensor(Numel::per_sample(tokens), DType::I64, false);
    b.op(
        "embeddings.position_ids",
        crate::graph::OpKind::Elementwise,
        crate::builder::OpSpec {
            inputs: vec![ids],
            outputs: vec![positions],
            forward_steps: vec![
                bytes(1), // 0: ids.ne(pad)
                bytes(4), // 1: mask = .int()
                TempStep::Free(0),
                bytes(8), // 2: cumsum (int64)
                bytes(4), // 3: .type_as(mask)
                TempStep::Free(2),
                bytes(4), // 4: + cache_length
                TempStep::Free(3),
                bytes(4), // 5: incremental_indices = * mask
                TempStep::Free(4),
                bytes(8), // 6: .long()
                TempStep::Outputs,
                TempStep::Free(6),
                TempStep::Free(5),
                TempStep::Free(1),
            ],
            ..Default::default()
        },
    );
    let types = b.tensor(Numel::per_sample(tokens), DType::I64, false);
    b.op(
        "embeddings.token_type_ids",
        crate::graph::OpKind::Copy,
        crate::builder::OpSpec {
            inputs: vec![positions],
            outputs: vec![types],
            ..Default::default()
        },
    );
    (types, positions)
}

/// OPT's position ids for the token ids `ids` (`OPTDecoder.forward` with
/// no attention mask given): an all-ones fp32 mask, `cumsum(mask, 1) *
/// mask - 1` (fp32 temporaries), `.long()`, then `+ offset` in its
/// `OPTLearnedPositionalEmbedding`, which the embedding keeps for backward.
/// Returns those ids, and the mask and the `.long()` ids, locals of the
/// body's forward that live until it returns.
fn offset_position_ids(b: &mut Builder, ids: TensorId) -> (TensorId, [TensorId; 2]) {
    use crate::graph::{Numel, TempStep};
    let tokens = b.numel(ids).per_sample;
    let bytes = |size: u64| TempStep::Alloc(Numel::per_sample(tokens * size));
    let tensor = |b: &mut Builder, dtype| b.tensor(Numel::per_sample(tokens), dtype, false);
    let ones = tensor(b, DType::F32);
    b.op(
        "embed_positions.mask",
        crate::graph::OpKind::Elementwise,
        crate::builder::OpSpec {
            inputs: vec![ids],
            outputs: vec![ones],
            ..Default::default()
        },
    );
    let long = tensor(b, DType::I64);
    b.op(
        "embed_positions.position_ids",
        crate::graph::OpKind::Elementwise,
        crate::builder::OpSpec {
            inputs: vec![ones],
            outputs: vec![long],
            forward_steps: vec![
                bytes(4), // 0: cumsum (fp32, the mask's dtype)
                bytes(4), // 1: * mask
                TempStep::Free(0),
                bytes(4), // 2: - 1
                TempStep::Free(1),
                TempStep::Outputs, // .long()
                TempStep::Free(2),
            ],
            ..Default::default()
        },
    );
    let shifted = tensor(b, DType::I64);
    b.op(
        "embed_positions.offset",
        crate::graph::OpKind::Elementwise,
        crate::builder::OpSpec {
            inputs: vec![long],
            outputs: vec![shifted],
            ..Default::default()
        },
    );
    (shifted, [ones, long])
}

/// `RobertaClassificationHead` on the first token of `x`: dropout, dense,
/// tanh, dropout, `out_proj` to `labels` logits.
fn roberta_classifier(b: &mut Builder, t: &TransformerSpec, x: TensorId, labels: u64) -> TensorId {
    let h = t.hidden;
    let first = first_token(b, "classifier.select", x, h);
    let y = b.dropout("classifier.dropout", first, t.hidden_dropout);
    let y = b.linear("classifier.dense", y, h, h, true);
    let y = b.tanh("classifier.tanh", y);
    let y = b.dropout("classifier.dropout", y, t.hidden_dropout);
    b.linear("classifier.out_proj", y, h, labels, true)
}

/// `DistilBertForSequenceClassification`'s head on the first token of `x`:
/// `pre_classifier`, ReLU (saving its output), dropout, `classifier`.
fn distilbert_classifier(
    b: &mut Builder,
    t: &TransformerSpec,
    x: TensorId,
    labels: u64,
) -> TensorId {
    let h = t.hidden;
    let first = first_token(b, "select", x, h);
    let y = b.linear("pre_classifier", first, h, h, true);
    let y = b.relu("relu", y, false);
    // `seq_classif_dropout`: what it saves, a byte mask, is the same for
    // every positive probability, so the spec keeps only whether it is off.
    let p = if t.block.undropped_head { 0.0 } else { 0.2 };
    let y = b.dropout("dropout", y, p);
    b.linear("classifier", y, h, labels, true)
}

/// A BERT layer's module names, and DistilBERT's (`TransformerBlock`).
const BERT_NAMES: [&str; 10] = [
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "attention.output.LayerNorm",
    "intermediate.dense",
    "intermediate.gelu",
    "output.dense",
    "output.dropout",
    "output.LayerNorm",
];
const DISTILBERT_NAMES: [&str; 10] = [
    "attention.q_lin",
    "attention.k_lin",
    "attention.v_lin",
    "attention.out_lin",
    "sa_layer_norm",
    "ffn.lin1",
    "ffn.activation",
    "ffn.lin2",
    "ffn.dropout",
    "output_layer_norm",
];

/// One BERT layer (post-LN), or DistilBERT's, which has no dropout after
/// the attention's output projection.
fn bert_layer(
    b: &mut Builder,
    t: &TransformerSpec,
    x: TensorId,
    seq: u64,
    (attention, ckpt, masking): (Attention, Checkpointing, AttentionMask),
    mask: Option<TensorId>,
) -> TensorId {
    let h = t.hidden;
    let [
        q_name,
        k_name,
        v_name,
        o_name,
        ln1,
        up,
        act,
        down,
        drop,
        ln2,
    ] = if t.block.distilbert {
        DISTILBERT_NAMES
    } else {
        BERT_NAMES
    };
    // `all_head_size`: hidden_size, less after head pruning or tensor parallelism.
    let qd = t.heads * t.head_dim;
    let q = b.linear(q_name, x, h, qd, true);
    let k = b.linear(k_name, x, h, qd, true);
    let v = b.linear(v_name, x, h, qd, true);
    let ctx = attention_core(
        b,
        t,
        (q, k, v),
        seq,
        (attention, ckpt, masking),
        (false, false),
        mask,
    );
    let o = b.linear(o_name, ctx, qd, h, true);
    let o = if t.block.distilbert {
        o
    } else {
        b.dropout("attention.output.dropout", o, t.hidden_dropout)
    };
    // `hidden_states = self.LayerNorm(hidden_states + input_tensor)`
    // (DistilBERT: `attention_output = self.sa_layer_norm(attention_output
    // + x)`): the branch's output is a local until the norm returns.
    let r = b.add("attention.output.residual", o, x);
    let a = b.layernorm(ln1, r, h, true);
    b.keep_alive(o);
    let i = b.linear(up, a, h, t.intermediate, true);
    let i = b.activation(act, i);
    let o = b.linear(down, i, t.intermediate, h, true);
    let o = b.dropout(drop, o, t.hidden_dropout);
    let r = b.add("output.residual", o, a);
    let y = b.layernorm(ln2, r, h, true);
    b.keep_alive(o);
    // `attention_output` is a local of the layer's forward until it returns
    // (under autocast the MLP saves only its half-precision copy).
    b.keep_alive(a);
    y
}

/// One decoder layer (GPT-2 or Llama layout). With a training cache
/// (`cache`), the layer's keys and values are copied into it
/// ([`Builder::cache_update`]), and it keeps them.
fn decoder_layer(
    b: &mut Builder,
    t: &TransformerSpec,
    (layer, x): (u64, TensorId),
    seq: u64,
    (attention, ckpt, masking): (Attention, Checkpointing, AttentionMask),
    mask: Option<TensorId>,
    cache: Option<&mut Vec<TensorId>>,
) -> TensorId {
    if t.single_mixer.is_some() {
        return single_mixer_layer(
            b,
            t,
            (layer, x),
            seq,
            (attention, ckpt, masking),
            mask,
            cache,
        );
    }
    let h = t.hidden;
    let llama = t.arch == Arch::Llama;
    // Norms after attention and MLP (post-norm, sandwich), before them
    // (pre-norm, sandwich).
    let post = llama && t.block.norm != NormPlacement::Pre;
    let pre = !llama || t.block.norm != NormPlacement::Post;
    // The attention's input: the block's input under post-norm, else its norm.
    let n_local = if !pre {
        x
    } else if llama {
        rms(b, t, "input_layernorm", x, h)
    } else {
        b.layernorm("ln_1", x, h, true)
    };
    let attn_in = n_local;
    let o = token_mixer(
        b,
        t,
        (layer, n_local),
        seq,
        (attention, ckpt, masking),
        mask,
        cache,
    );
    let o = b.sp_scatter(o);
    let o = if post {
        rms(b, t, "post_attention_layernorm", o, h)
    } else {
        o
    };
    let o = b.dropout("attn.resid_dropout", o, t.hidden_dropout);
    let o = if t.block.scaled_residuals {
        b.scale("attn.residual_multiplier", o)
    } else {
        o
    };
    // A parallel residual keeps the attention's output aside and feeds the
    // MLP the block's input.
    let (x, parallel) = if llama && t.block.parallel_residual {
        (x, Some(o))
    } else {
        (b.add("attn.residual", x, o), None)
    };
    // Phi: the MLP reads the attention's norm.
    let shared = (parallel.is_some() && t.block.shared_norm).then_some(attn_in);
    let n_local = if let Some(n) = shared {
        n
    } else if !pre {
        x
    } else if t.block.norm == NormPlacement::Sandwich {
        rms(b, t, "pre_feedforward_layernorm", x, h)
    } else if llama {
        rms(b, t, "post_attention_layernorm", x, h)
    } else {
        b.layernorm("ln_2", x, h, true)
    };
    let m = feed_forward(b, t, layer, n_local);
    let m = b.sp_scatter(m);
    let m = if post {
        rms(b, t, "post_feedforward_layernorm", m, h)
    } else {
        m
    };
    let m = b.dropout("mlp.dropout", m, t.hidden_dropout);
    let m = if t.block.scaled_residuals {
        b.scale("mlp.residual_multiplier", m)
    } else {
        m
    };
    // GPT-NeoX: `mlp_output + attn_output + hidden_states`, left to right.
    let m = match parallel {
        Some(o) => b.add("parallel.sum", m, o),
        None => m,
    };
    b.add("mlp.residual", x, m)
}

/// A block's token mixer on its normalized input `n_local` (gathered for
/// sequence parallelism inside): attention (Llama's, GPT-2's, latent) or
/// the layer's recurrent mixer. Returns its output before the residual.
fn token_mixer(
    b: &mut Builder,
    t: &TransformerSpec,
    (layer, n_local): (u64, TensorId),
    seq: u64,
    (attention, ckpt, masking): (Attention, Checkpointing, AttentionMask),
    mask: Option<TensorId>,
    cache: Option<&mut Vec<TensorId>>,
) -> TensorId {
    let h = t.hidden;
    let llama = t.arch == Arch::Llama;
    let mark = b.op_count();
    let n = b.sp_gather(n_local);
    match (&t.mla, &t.linear) {
        #[cfg(feature = "every-model")]
        (_, Some(linear)) if llama && linear.is_linear(layer) => {
            let o = match &**linear {
                super::Recurrent::DeltaNet(g) => super::gated_deltanet::lower(b, g, h, n, seq),
                super::Recurrent::Mamba2(m) => super::mamba2::lower(b, m, h, n, seq),
            };
            b.resave(mark, n, n_local);
            o
        }
        #[cfg(feature = "every-model")]
        (Some(mla), _) if llama => {
            let layer = super::mla::Layer {
                hidden: h,
                heads: t.heads,
                bias: t.qkv_bias,
                dropout: t.attention_dropout,
                attention,
                ckpt,
                cuda_sdpa: attention == Attention::Sdpa && masking != AttentionMask::Expanded,
                indexed: mla.indexer.is_some_and(|ix| ix.runs_in(layer)),
            };
            let o = super::mla::attention(b, &layer, mla, n, seq, mask, cache);
            b.resave(mark, n, n_local);
            o
        }
        _ => {
            let (q, k, v, gate) = if llama {
                llama_qkv(b, t, n, layer)
            } else {
                let (qd, kvd) = (t.heads * t.head_dim, t.kv_heads * t.head_dim);
                let qkv = b.linear("attn.c_attn", n, h, qd + 2 * kvd, true);
                // split(dim=2) + view + transpose: q, k and v are views of the
                // fused output; GPTBigCode's one key-value head
                // (`multi_query`) splits off the same way, narrower.
                if kvd == qd {
                    let [q, k, v] = crate::models::vit::split3(b, "attn.split_qkv", qkv, false);
                    (q, k, v, None)
                } else {
                    let parts = b.split_widths("attn.split_qkv", qkv, &[qd, kvd, kvd], false);
                    let part = |i: usize| parts.get(i).copied().unwrap_or(qkv);
                    (part(0), part(1), part(2), None)
                }
            };
            b.resave(mark, n, n_local);
            let cached = cache.is_some();
            let (k, v) = b.cache_update(cache, k, v);
            let ctx = attention_core(
                b,
                t,
                (q, k, v),
                seq,
                (attention, ckpt, masking),
                // transformers' shared attention functions repeat fewer
                // key-value heads (GPTBigCode's one) as they do Llama's.
                (llama || t.kv_heads != t.heads, cached),
                mask,
            );
            let o_name = if llama {
                "self_attn.o_proj"
            } else {
                "attn.c_proj"
            };
            // `attn_output * torch.sigmoid(gate)`: the sigmoid saves its output.
            let ctx = match gate {
                Some(gate) => {
                    let s = b.sigmoid("self_attn.gate_sigmoid", gate);
                    b.mul("self_attn.gate_mul", ctx, s, b.numel(ctx).per_sample)
                }
                None => ctx,
            };
            let o = b.linear(o_name, ctx, t.heads * t.head_dim, h, t.mlp_bias);
            if llama {
                // The attention's input (the layer's `hidden_states`) and its locals
                // (q and k after the rotary embedding, v and the fused projection it
                // views) live until it returns.
                for t in [n_local, q, k, v].into_iter().chain(gate) {
                    b.keep_alive(t);
                }
            }
            o
        }
    }
}

/// A block's feed-forward on its normalized input `n_local`: experts in a
/// sparse layer, else the layout's MLP. Returns its output before the
/// residual.
fn feed_forward(b: &mut Builder, t: &TransformerSpec, layer: u64, n_local: TensorId) -> TensorId {
    let h = t.hidden;
    let llama = t.arch == Arch::Llama;
    let mark = b.op_count();
    let n = b.sp_gather(n_local);
    let sparse = t.moe.as_ref().filter(|m| llama && m.is_sparse(layer));
    let m = match sparse {
        // (A build without `every-model` has refused a mixture of experts.)
        #[cfg(feature = "every-model")]
        Some(moe) => super::moe_lower::block(b, h, moe, n),
        _ if llama => llama_mlp(b, t, n),
        _ => {
            let f = b.linear("mlp.c_fc", n, h, t.intermediate, true);
            let f = if t.fused_gelu {
                b.activation("mlp.act", f)
            } else {
                b.gelu_new("mlp.act", f)
            };
            b.linear("mlp.c_proj", f, t.intermediate, h, true)
        }
    };
    b.resave(mark, n, n_local);
    if llama {
        // The MLP's input lives until it returns.
        b.keep_alive(n_local);
    }
    m
}

/// A [`TransformerSpec::single_mixer`] layer (`NemotronHBlock`):
/// `x + mixer(norm(x))`, the mixer a token mixer or a feed-forward as the
/// layer's kind says. The normalized input lives until the mixer returns.
fn single_mixer_layer(
    b: &mut Builder,
    t: &TransformerSpec,
    (layer, x): (u64, TensorId),
    seq: u64,
    modes: (Attention, Checkpointing, AttentionMask),
    mask: Option<TensorId>,
    cache: Option<&mut Vec<TensorId>>,
) -> TensorId {
    let n_local = rms(b, t, "norm", x, t.hidden);
    let o = if t.mixes_tokens(layer) {
        token_mixer(b, t, (layer, n_local), seq, modes, mask, cache)
    } else {
        feed_forward(b, t, layer, n_local)
    };
    b.keep_alive(n_local);
    let o = b.sp_scatter(o);
    b.add("residual", x, o)
}

/// q, k and v of a Llama-layout block from its normalized input `n`:
/// three projections or views of one ([`QkvProjection`]), the q/k norms,
/// the rotary embedding ([`Rotary`]); and the output gate
/// ([`BlockOptions::attn_gate`]) projected with the queries.
fn llama_qkv(
    b: &mut Builder,
    t: &TransformerSpec,
    n: TensorId,
    layer: u64,
) -> (TensorId, TensorId, TensorId, Option<TensorId>) {
    let h = t.hidden;
    let qd = t.heads * t.head_dim;
    let kvd = t.kv_heads * t.head_dim;
    // Qwen3 normalizes q and k per head as it projects them
    // (`q_norm(q_proj(x).view(..))`, then k, then v); OLMo 2 the whole
    // projections the same way, before the view.
    let qk_norm = |b: &mut Builder, name: &str, x: TensorId, width: u64| match t.block.qk_norm {
        QkNorm::None | QkNorm::L2AfterRotary | QkNorm::PerHeadAfterRotary => x,
        QkNorm::PerHead => rms(b, t, name, x, t.head_dim),
        QkNorm::Whole => rms(b, t, name, x, width),
    };
    let mut gate = None;
    let (q, k, v) = match t.block.qkv {
        QkvProjection::Separate if t.block.attn_gate => {
            // `q_proj(x).view(.., heads, 2 * head_dim).chunk(2, -1)`: the
            // query half a view, the gate half reshaped by a copy.
            let qg = b.linear("self_attn.q_proj", n, h, 2 * qd, t.qkv_bias);
            let halves = b.split("self_attn.chunk_gate", qg, 2, false);
            let half = |i: usize| halves.get(i).copied().unwrap_or(qg);
            gate = Some(b.copy("self_attn.gate_reshape", half(1)));
            let q = qk_norm(b, "self_attn.q_norm", half(0), qd);
            let k = b.linear("self_attn.k_proj", n, h, kvd, t.qkv_bias);
            let k = qk_norm(b, "self_attn.k_norm", k, kvd);
            let v = b.linear("self_attn.v_proj", n, h, kvd, t.qkv_bias);
            (q, k, v)
        }
        QkvProjection::Separate => {
            let q = b.linear("self_attn.q_proj", n, h, qd, t.qkv_bias);
            let q = if t.block.prescaled_query {
                b.scale("self_attn.q_scaling", q)
            } else {
                q
            };
            let q = qk_norm(b, "self_attn.q_norm", q, qd);
            let k = b.linear("self_attn.k_proj", n, h, kvd, t.qkv_bias);
            let k = qk_norm(b, "self_attn.k_norm", k, kvd);
            let v = b.linear("self_attn.v_proj", n, h, kvd, t.qkv_bias);
            (q, k, v)
        }
        QkvProjection::FusedSlices | QkvProjection::FusedChunks => {
            let qkv = b.linear("self_attn.qkv_proj", n, h, qd + 2 * kvd, t.qkv_bias);
            let select = t.block.qkv == QkvProjection::FusedSlices;
            let parts = b.split_widths("self_attn.split_qkv", qkv, &[qd, kvd, kvd], select);
            let part = |i: usize| parts.get(i).copied().unwrap_or(qkv);
            let q = qk_norm(b, "self_attn.q_norm", part(0), qd);
            let k = qk_norm(b, "self_attn.k_norm", part(1), kvd);
            (q, k, part(2))
        }
    };
    if t.block.nope_every > 0 && (layer + 1).is_multiple_of(t.block.nope_every) {
        // `(query_states * attn_scales).to(query_states.dtype)`: the
        // scales are fp32, so the product is, whatever q's dtype; it saves
        // only the scales.
        let q = if t.block.nope_temperature {
            let n = b.numel(q);
            let dtype = b.dtype(q);
            let scaled = b.tensor_op(
                "self_attn.attn_temperature",
                crate::graph::OpKind::Elementwise,
                &[q],
                n,
                DType::F32,
                true,
                &[],
            );
            b.cast(scaled, dtype)
        } else {
            q
        };
        return (q, k, v, gate);
    }
    let (q, k, v) = match t.block.rotary {
        // q*cos + rotate_half(q)*sin makes new q and k tensors.
        Rotary::Whole => (
            b.rotary("self_attn.rotary_q", q),
            b.rotary("self_attn.rotary_k", k),
            v,
        ),
        Rotary::Sliced { dims } => (
            b.rotary_sliced("self_attn.rotary_q", q, dims, t.head_dim),
            b.rotary_sliced("self_attn.rotary_k", k, dims, t.head_dim),
            v,
        ),
        Rotary::InterleavedFp32 => (
            b.rotary_interleaved_fp32("self_attn.rotary_q", q),
            b.rotary_interleaved_fp32("self_attn.rotary_k", k),
            v,
        ),
        Rotary::ComplexFp32 => (
            b.rotary_complex_fp32("self_attn.rotary_q", q),
            b.rotary_complex_fp32("self_attn.rotary_k", k),
            v,
        ),
        Rotary::CohereFp32 => (
            b.rotary_cohere("self_attn.rotary_q", q),
            b.rotary_cohere("self_attn.rotary_k", k),
            v,
        ),
    };
    let q = if t.block.position_scaled_query {
        b.scale("self_attn.llama_4_attn_scale", q)
    } else {
        q
    };
    if t.block.qk_norm == QkNorm::PerHeadAfterRotary {
        let q = rms(b, t, "self_attn.query_layernorm", q, t.head_dim);
        let k = rms(b, t, "self_attn.key_layernorm", k, t.head_dim);
        return (q, k, v, gate);
    }
    if t.block.qk_norm == QkNorm::L2AfterRotary {
        let q = b.rmsnorm_unscaled("self_attn.qk_norm_q", q, t.head_dim);
        let k = b.rmsnorm_unscaled("self_attn.qk_norm_k", k, t.head_dim);
        return (q, k, v, gate);
    }
    (q, k, v, gate)
}

/// The MLP of a Llama-layout block ([`MlpKind`]) on its normalized input `n`.
fn llama_mlp(b: &mut Builder, t: &TransformerSpec, n: TensorId) -> TensorId {
    let (h, i) = (t.hidden, t.intermediate);
    let gu = match t.block.mlp {
        MlpKind::Gated => {
            let g = b.linear("mlp.gate_proj", n, h, i, false);
            let g = b.activation("mlp.act_fn", g);
            let u = b.linear("mlp.up_proj", n, h, i, false);
            b.mul("mlp.gate_mul", g, u, b.numel(u).per_sample)
        }
        MlpKind::FusedGated => {
            // `gate, up = gate_up_proj(x).chunk(2, dim=-1)`; `up * act(gate)`.
            let gate_up = b.linear("mlp.gate_up_proj", n, h, 2 * i, false);
            let halves = b.split("mlp.chunk", gate_up, 2, false);
            let half = |k: usize| halves.get(k).copied().unwrap_or(gate_up);
            let g = b.activation("mlp.activation_fn", half(0));
            b.mul("mlp.up_mul", half(1), g, b.numel(g).per_sample)
        }
        MlpKind::Plain {
            bias,
            relu_squared,
            gelu_new,
            relu,
        } => {
            let f = b.linear("mlp.dense_h_to_4h", n, h, i, bias);
            let f = if relu {
                b.relu("mlp.act", f, false)
            } else if relu_squared {
                b.relu_squared("mlp.act", f)
            } else if gelu_new {
                b.gelu_new("mlp.act", f)
            } else {
                b.activation("mlp.act", f)
            };
            return b.linear("mlp.dense_4h_to_h", f, i, h, bias);
        }
    };
    b.linear("mlp.down_proj", gu, i, h, false)
}

/// The family's norm over `width` features: its RMSNorm, or LayerNorm
/// with a bias ([`NormKind`]).
pub(super) fn rms(
    b: &mut Builder,
    t: &TransformerSpec,
    name: &str,
    x: TensorId,
    width: u64,
) -> TensorId {
    match t.block.norm_kind {
        NormKind::LayerNorm => b.layernorm(name, x, width, true),
        NormKind::LayerNorm1P => b.layernorm_1p(name, x, width),
        NormKind::Cohere => b.cohere_layernorm(name, x, width),
        NormKind::Rms if t.block.rms_weight_first => b.rmsnorm_weight_first(name, x, width),
        NormKind::Rms => b.rmsnorm(name, x, width),
    }
}

/// Whether the query reaches attention from a sliced rotary embedding's
/// `torch.cat`, laid out `[batch, heads, seq, head_dim]` rather than the
/// projection's `[batch, seq, heads, head_dim]` under a transposed view.
/// (ERNIE 4.5's sum keeps its first operand's transposed layout.)
fn sliced_query(t: &TransformerSpec) -> bool {
    matches!(t.block.rotary, Rotary::Sliced { .. }) && t.arch == Arch::Llama
}

/// Scores, softmax, dropout and context for eager attention, or one fused
/// kernel for SDPA / flash. Returns the context as `[batch, seq, heads·head_dim]`.
/// `cached`: k and v are the training cache's contiguous copies, which the
/// eager matmuls read without reshaping them. `mask`: eager attention's
/// additive mask, or under SDPA a boolean padding or sliding-window mask
/// ([`AttentionMask::Padding`]), which the kernel converts and saves.
fn attention_core(
    b: &mut Builder,
    t: &TransformerSpec,
    (q, k, v): (TensorId, TensorId, TensorId),
    seq: u64,
    (attention, ckpt, masking): (Attention, Checkpointing, AttentionMask),
    (repeat_kv, cached): (bool, bool),
    mask: Option<TensorId>,
) -> TensorId {
    let (a, d) = (t.heads, t.head_dim);
    let qd = a * d;
    let ctx_numel = seq * qd;
    // Grouped-query attention: `repeat_kv` expands k and v to all heads with
    // a copy, except where SDPA reads them grouped (`enable_gqa`).
    let expand = |b: &mut Builder, x: TensorId, name: &str, native: bool| -> TensorId {
        if repeat_kv && t.kv_heads != t.heads && !native {
            b.expand_copy(name, x, ctx_numel)
        } else {
            x
        }
    };
    // Soft-capped scores need the eager path under an SDPA request
    // (Gemma 2's `_supports_sdpa = False`); flash-attn caps in its kernel.
    let attention = if (t.block.attn_softcap || t.block.sinks) && attention == Attention::Sdpa {
        Attention::Eager
    } else {
        attention
    };
    if attention != Attention::Eager {
        let sdpa = attention == Attention::Sdpa;
        let (k, v) = if sdpa {
            // `use_gqa_in_sdpa`: only without any mask (a sliding layer's
            // too) and for heads of at most 256 (Gemma 4's full layers' 512
            // are repeated). With one key-value head `repeat_kv`'s reshape
            // of the expanded tensor is a view: SDPA reads (and saves) the
            // one head, as it does grouped.
            let gqa = masking == AttentionMask::None && mask.is_none() && d <= 256;
            let native = gqa || t.kv_heads == 1;
            // Under autocast the rotated key is fp32 (the rotary embedding's
            // `cos` and `sin` take the fp32 embeddings' dtype), and
            // autocast's cast of its expanded view cannot keep the stride-0
            // layout: a copy of every head in the low dtype. (The builder
            // keeps rotated q and k in the projection's dtype, which holds
            // the same memory once SDPA's cast has replaced them.)
            let rotated_fp32 = b.param_dtype() == DType::F32;
            let k = match b.autocast_dtype() {
                Some(low) if !gqa && repeat_kv && t.kv_heads != t.heads && rotated_fp32 => b
                    .tensor_op(
                        "attn.repeat_k",
                        crate::graph::OpKind::Copy,
                        &[k],
                        crate::graph::Numel::per_sample(ctx_numel),
                        low,
                        true,
                        &[],
                    ),
                _ => expand(b, k, "attn.repeat_k", native),
            };
            (k, expand(b, v, "attn.repeat_v", native))
        } else {
            (k, v)
        };
        let mask = mask.filter(|_| sdpa);
        let out = b.fused_attention("attn.sdpa", (q, k, v), mask, seq, a, d);
        return b.sdpa_output(
            out,
            sliced_query(t) && sdpa && masking != AttentionMask::Expanded,
        );
    }
    b.set_attention_core(ckpt.selective());
    let k = expand(b, k, "attn.repeat_k", false);
    let v = expand(b, v, "attn.repeat_v", false);
    // matmul on transposed 4-D views reshapes through a contiguous copy,
    // which bmm saves; a sliced rotary embedding's `torch.cat` already made
    // q and k contiguous.
    let sliced = sliced_query(t);
    let qc = if sliced {
        q
    } else {
        b.copy("attn.q_reshape", q)
    };
    let kc = if (repeat_kv && t.kv_heads != t.heads) || sliced || cached {
        k
    } else {
        b.copy("attn.k_reshape", k)
    };
    let s2 = a * seq * seq;
    let scores = b.bmm("attn.scores", qc, kc, s2, s2.saturating_mul(2 * d));
    let mut scores = b.scale("attn.scale", scores);
    if t.block.attn_softcap {
        // `tanh(scores / cap) * cap`: tanh saves its output.
        scores = b.scale("attn.softcap_div", scores);
        scores = b.tanh("attn.softcap_tanh", scores);
        scores = b.scale("attn.softcap_mul", scores);
    }
    // `+ attention_mask`: an fp32 mask promotes half-precision scores to fp32.
    let scores = match mask {
        Some(m) => b.add("attn.mask", scores, m),
        None => b.scale("attn.mask", scores),
    };
    let probs = if t.block.sinks {
        b.sink_softmax(scores, t.heads, seq)
    } else {
        b.softmax(
            "attn.softmax",
            scores,
            (t.arch == Arch::Llama && !t.block.softmax_in_dtype) || t.block.softmax_fp32,
        )
    };
    // Llama casts the fp32 softmax back to the query dtype and GPT-2 to the
    // value dtype before dropout; BERT applies dropout to the fp32 softmax and
    // lets autocast cast it for the context matmul.
    let probs = if t.arch == Arch::Bert {
        probs
    } else {
        b.cast(probs, b.dtype(qc))
    };
    let probs = b.dropout("attn.dropout", probs, t.attention_dropout);
    // The attention weights are returned to the layer (`attention_output, _ =
    // self.attention(...)`), which keeps them until it returns.
    b.hold_until_block_end(probs);
    let vc = if (repeat_kv && t.kv_heads != t.heads) || cached {
        v
    } else {
        b.copy("attn.v_reshape", v)
    };
    let ctx = b.bmm(
        "attn.context",
        probs,
        vc,
        ctx_numel,
        s2.saturating_mul(2 * d),
    );
    // transpose(1, 2).contiguous() before the output projection.
    let ctx = b.copy("attn.merge_heads", ctx);
    b.set_attention_core(false);
    ctx
}
