//! Llama-style decoders (pre-RMSNorm, rotary, GQA, SwiGLU) as
//! `transformers` builds them: the `llama`, `mistral`, `ministral`,
//! `ministral3` and `qwen2` `model_type`s and the presets. Lowered by the shared transformer
//! ([`super::transformer`]).

use super::family::{Family, Group, Import, ModelPreset};
use super::hf_fields::Fields;
use super::{Arch, BlockOptions, Head, ModelSpec, SlidingWindow, TransformerSpec};
use crate::error::{Error, NotLlamaStyle};

/// The Llama-style family: Llama, Mistral, the Ministrals and Qwen2.
pub const FAMILY: Family = Family {
    imports: &[
        Import {
            model_type: "llama",
            read,
        },
        Import {
            model_type: "mistral",
            read,
        },
        // Ministral-8B (2410): Mistral with `layer_types` naming its sliding layers.
        Import {
            model_type: "ministral",
            read,
        },
        // Ministral 3 (and `mistral3` checkpoints' `text_config`): Mistral
        // with its rotated queries scaled by position in every layer.
        Import {
            model_type: "ministral3",
            read,
        },
        Import {
            model_type: "qwen2",
            read,
        },
        // Qwen2-VL's and Qwen2.5-VL's language models (`text_config`):
        // Qwen2's decoder, its multimodal rotary sections only splitting
        // `cos` and `sin`.
        Import {
            model_type: "qwen2_vl_text",
            read,
        },
        Import {
            model_type: "qwen2_5_vl_text",
            read,
        },
    ],
    presets,
};

fn read(f: &Fields<'_>) -> Result<ModelSpec, Error> {
    llama_config(f).map(ModelSpec::Transformer)
}

fn llama_config(f: &Fields<'_>) -> Result<TransformerSpec, Error> {
    let hidden = f.u64("hidden_size")?;
    let heads = f.u64("num_attention_heads")?;
    let qwen = matches!(
        f.model_type.as_str(),
        "qwen2" | "qwen2_vl_text" | "qwen2_5_vl_text"
    );
    let every = |window| SlidingWindow {
        window,
        full_every: 0,
    };
    // Mistral's `sliding_window` (4096 in Mistral-7B v0.1, null since v0.2)
    // applies to every layer, Ministral 3's too; Ministral's to the layers
    // `layer_types` names (every layer when it names none), its window
    // 4096 unless the file says otherwise; Qwen2's needs
    // `use_sliding_window`, off in every released Qwen2 and Qwen2.5, and is
    // not read.
    let sliding = match f.model_type.as_str() {
        "mistral" | "ministral3" => f.opt_u64("sliding_window")?.map(every),
        "ministral" => {
            let window = match f.map.get("sliding_window") {
                None => Some(4096),
                Some(_) => f.opt_u64("sliding_window")?,
            };
            match (window, f.opt_str_list("layer_types")?) {
                (Some(w), Some(types)) => SlidingWindow::from_layer_types(w, &types)?,
                (window, _) => window.map(every),
            }
        }
        _ => None,
    };
    // Llama's `attention_bias` puts biases on q, k, v and o (a type read
    // as Llama-style, on q, k and v); Qwen2 always biases q, k and v;
    // Mistral and the Ministrals never bias them.
    let mistral = matches!(
        f.model_type.as_str(),
        "mistral" | "ministral" | "ministral3"
    );
    let attention_bias = !mistral && f.bool_or("attention_bias", false);
    // Ministral 3's class default; the others' heads span the hidden size.
    let head_dim = f
        .opt_u64("head_dim")?
        .unwrap_or(if f.model_type == "ministral3" {
            128
        } else {
            hidden / heads.max(1)
        });
    Ok(TransformerSpec {
        block: BlockOptions {
            sliding,
            position_scaled_query: f.model_type == "ministral3",
            ..BlockOptions::default()
        },
        head_dim,
        tie_embeddings: f.bool_or("tie_word_embeddings", false),
        qkv_bias: qwen || attention_bias,
        // The Llama layout's `mlp_bias` is the output projection's.
        mlp_bias: f.model_type == "llama" && attention_bias,
        attention_dropout: f.f64_or("attention_dropout", 0.0),
        ..decoder(
            f.u64("vocab_size")?,
            hidden,
            f.u64("num_hidden_layers")?,
            heads,
            f.opt_u64("num_key_value_heads")?.unwrap_or(heads),
            f.u64("intermediate_size")?,
        )
    })
}
/// The fields a Llama-style decoder is read from.
const DECODER_FIELDS: [&str; 5] = [
    "vocab_size",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
];

/// Fields whose meaning a Llama-style reading would drop, so that memory
/// could differ: experts and latent attention are refused, the others named.
const EXPERT_FIELDS: [&str; 4] = [
    "num_local_experts",
    "num_experts",
    "n_routed_experts",
    "moe_intermediate_size",
];
/// Fields that size layers other than attention: linear attention (Qwen3-Next's
/// and Qwen3.5's Gated DeltaNet, MiniMax's lightning attention) and
/// state-space layers (Mamba in Jamba, Falcon-H1, Nemotron-H, Granite 4)
/// and short convolutions (LFM2).
const OTHER_LAYER_FIELDS: [&str; 10] = [
    "linear_num_value_heads",
    "linear_key_head_dim",
    "linear_conv_kernel_dim",
    "mamba_d_state",
    "mamba_n_heads",
    "ssm_state_size",
    "hybrid_override_pattern",
    "layers_block_type",
    "conv_L_cache",
    "full_attn_idxs",
];
/// Fields only encoders have: BERT's token types (its relatives' too:
/// DeBERTa, ELECTRA, ALBERT, MPNet's relative buckets aside) and
/// ModernBERT's alternation of global and local attention.
const ENCODER_FIELDS: [&str; 3] = [
    "type_vocab_size",
    "relative_attention_num_buckets",
    "global_attn_every_n_layers",
];
/// Heads only encoders have, as the end of a class name in `architectures`.
const ENCODER_HEADS: [&str; 5] = [
    "ForMaskedLM",
    "ForTokenClassification",
    "ForQuestionAnswering",
    "ForMultipleChoice",
    "ForPreTraining",
];
/// Activations that only ungated MLPs (`down(act(up(x)))`) use: xIELU
/// (Apertus) and squared ReLU (Arcee's and Nemotron's, whose model types
/// are read; another type with it is refused rather than given a gate).
const UNGATED_ACTIVATIONS: [&str; 2] = ["xielu", "relu2"];
const IGNORED_FIELDS: [&str; 13] = [
    "sliding_window",
    "layer_types",
    "partial_rotary_factor",
    "rotary_pct",
    "qk_layernorm",
    "use_qk_norm",
    "attn_logit_softcapping",
    "final_logit_softcapping",
    "use_parallel_residual",
    "parallel_attn",
    "mlp_bias",
    "alibi",
    "position_embedding_type",
];

/// What reading an unknown `model_type` as a Llama-style decoder assumed;
/// each is shown to the user with the imported model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Assumption {
    /// The blocks are Llama's: RMSNorm before attention and the MLP, rotary
    /// positions, a gated MLP (gate, up, down) with `hidden_act`, biases on
    /// q, k and v only with `attention_bias`.
    LlamaLayout {
        /// The `model_type` vramfit does not know.
        model_type: String,
    },
    /// `head_dim` is absent: `hidden_size / num_attention_heads`.
    HeadDim(u64),
    /// `num_key_value_heads` is absent: one per attention head.
    KvHeads(u64),
    /// `tie_word_embeddings` is absent: a separate LM head, as Llama has.
    UntiedHead,
    /// Fields present that the Llama-style reading does not read.
    Ignored(Vec<&'static str>),
    /// Qwen (1)'s remote code (`model_type` `qwen`, `QWenLMHeadModel`):
    /// its `intermediate_size` is the width of both MLP branches, `w1` and
    /// `w2`, each half of it (this many), and `c_attn` projects q, k and v
    /// with biases.
    QwenHalvedMlp(u64),
    /// A multimodal config (`model_type`) is read as its language model,
    /// the sub-config `part` (of `text_model_type`): its vision (and audio)
    /// encoders are not counted.
    LanguageModelOnly {
        /// The outer `model_type`.
        model_type: String,
        /// The sub-config read (`text_config`).
        part: &'static str,
        /// Its `model_type`.
        text_model_type: String,
    },
    /// A multimodal config (`model_type`) is read as its language model,
    /// the sub-config `part` (of `text_model_type`), and its encoders
    /// ([`super::encoder`]), `params` parameters of `kind`, held as frozen
    /// weights that see no images or audio.
    EncodersFrozen {
        /// The outer `model_type`.
        model_type: String,
        /// The sub-config read (`text_config`).
        part: &'static str,
        /// Its `model_type`.
        text_model_type: String,
        /// The encoders' and projectors' parameters.
        params: u64,
        /// Which encoders (their configs' `model_type`s).
        kind: String,
    },
}

impl std::fmt::Display for Assumption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Assumption::LlamaLayout { model_type } => write!(
                f,
                "model_type '{model_type}' is read as a Llama-style decoder: RMSNorm before attention and the MLP, rotary positions, a gated MLP (gate, up, down), biases on q, k and v only with attention_bias"
            ),
            Assumption::HeadDim(d) => {
                write!(f, "head_dim = hidden_size / num_attention_heads = {d}")
            }
            Assumption::KvHeads(n) => write!(
                f,
                "num_key_value_heads = num_attention_heads = {n} (no grouped-query attention)"
            ),
            Assumption::UntiedHead => {
                write!(f, "a separate LM head (tie_word_embeddings is absent)")
            }
            Assumption::Ignored(keys) => write!(f, "not read: {}", keys.join(", ")),
            Assumption::QwenHalvedMlp(width) => write!(
                f,
                "but for Qwen-1 (model_type 'qwen', remote code): intermediate_size counts both MLP branches (w1, w2), each {width} wide, and q, k, v always have biases (c_attn)"
            ),
            Assumption::LanguageModelOnly {
                model_type,
                part,
                text_model_type,
            } => write!(
                f,
                "model_type '{model_type}' is multimodal: its language model ('{part}', model_type '{text_model_type}') is read; the vision and audio encoders are not counted"
            ),
            Assumption::EncodersFrozen {
                model_type,
                part,
                text_model_type,
                params,
                kind,
            } => write!(
                f,
                "model_type '{model_type}' is multimodal: its language model ('{part}', model_type '{text_model_type}') is read, and its encoders ({kind}: {}M parameters) are held as frozen 16-bit weights that see no images or audio; llama.cpp loads them only from a separate --mmproj file, which is not counted",
                params.div_ceil(1_000_000)
            ),
        }
    }
}

/// Reads a `config.json` of a `model_type` no family knows as a Llama-style
/// decoder, with every assumption that took.
///
/// # Errors
/// [`NotLlamaStyle`] when it cannot be read that way; [`Error`]s of the
/// fields' values otherwise (outer `Ok`).
pub fn read_as_llama(
    f: &Fields<'_>,
) -> Result<Result<(ModelSpec, Vec<Assumption>), Error>, NotLlamaStyle> {
    let present = |key: &str| f.map.get(key).is_some_and(|v| !v.is_null());
    let missing: Vec<&'static str> = DECODER_FIELDS.into_iter().filter(|k| !present(k)).collect();
    if !missing.is_empty() {
        return Err(NotLlamaStyle::Missing(missing));
    }
    if let Some(k) = ENCODER_FIELDS.into_iter().find(|k| present(k)) {
        return Err(NotLlamaStyle::Encoder(k.to_string()));
    }
    if let Some(a) = f
        .architectures()
        .into_iter()
        .find(|a| ENCODER_HEADS.iter().any(|h| a.ends_with(h)))
    {
        return Err(NotLlamaStyle::Encoder(format!("architectures: {a}")));
    }
    let experts = |k: &&'static str| {
        f.map
            .get(*k)
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0)
            > 0
    };
    if let Some(k) = EXPERT_FIELDS.into_iter().find(experts) {
        return Err(NotLlamaStyle::Experts(k));
    }
    if present("kv_lora_rank") {
        return Err(NotLlamaStyle::LatentAttention);
    }
    let attention = |t: &str| matches!(t, "full_attention" | "sliding_attention");
    if let Ok(Some(types)) = f.opt_str_list("layer_types") {
        if let Some(other) = types.into_iter().find(|t| !attention(t)) {
            return Err(NotLlamaStyle::OtherLayers(format!("layer_types: {other}")));
        }
    }
    if let Some(k) = OTHER_LAYER_FIELDS.into_iter().find(|k| present(k)) {
        return Err(NotLlamaStyle::OtherLayers(k.to_string()));
    }
    if let Some(act) = f
        .map
        .get("hidden_act")
        .and_then(serde_json::Value::as_str)
        .filter(|a| UNGATED_ACTIVATIONS.contains(a))
    {
        return Err(NotLlamaStyle::UngatedMlp(act.to_string()));
    }
    Ok(llama_config(f).and_then(|mut t| {
        let mut said = vec![Assumption::LlamaLayout {
            model_type: f.model_type.clone(),
        }];
        // Qwen-1 (`modeling_qwen.py`): `c_proj(w1(x) * silu(w2(x)))`, the
        // two branches `intermediate_size / 2` wide each, q/k/v biases on
        // `c_attn`, `kv_channels` per head (Qwen-7B's config: 7,721,324,544
        // parameters, its "7B" of 7.7 billion).
        let qwen = f.model_type == "qwen";
        if qwen {
            t.intermediate /= 2;
            t.qkv_bias = true;
            if let Some(width) = f.opt_u64("kv_channels")? {
                t.head_dim = width;
            }
            said.push(Assumption::QwenHalvedMlp(t.intermediate));
        }
        let per_head = present("head_dim") || (qwen && present("kv_channels"));
        if !per_head {
            said.push(Assumption::HeadDim(t.head_dim));
        }
        if !present("num_key_value_heads") {
            said.push(Assumption::KvHeads(t.kv_heads));
        }
        if !present("tie_word_embeddings") {
            said.push(Assumption::UntiedHead);
        }
        let ignored: Vec<&'static str> =
            IGNORED_FIELDS.into_iter().filter(|k| present(k)).collect();
        if !ignored.is_empty() {
            said.push(Assumption::Ignored(ignored));
        }
        Ok((ModelSpec::Transformer(t), said))
    }))
}

/// Llama 2, 3, 3.1, 3.2 and 3.3; Mistral-7B, Nemo and Small 3; Qwen2.5;
/// SmolLM2; and a tiny reference decoder. Shapes from each model's
/// `config.json` on the Hugging Face Hub.
/// The presets, each with the context of its `config.json` on the Hugging
/// Face Hub (`max_position_embeddings`; Qwen2.5's base models say 131,072
/// from 7B up and 32,768 below).
fn presets() -> Vec<ModelPreset> {
    let p = ModelPreset::new;
    vec![
        p(
            "llama-tiny",
            "Llama-style tiny (reference)",
            Group::Llama,
            spec(32000, 512, 4, 8, 2, 1376, false, false),
        ),
        p(
            "llama-2-7b",
            "Llama-2-7B",
            Group::Llama,
            spec(32000, 4096, 32, 32, 32, 11008, false, false),
        )
        .context(4096),
        p(
            "llama-2-13b",
            "Llama-2-13B",
            Group::Llama,
            spec(32000, 5120, 40, 40, 40, 13824, false, false),
        )
        .context(4096),
        p(
            "llama-2-70b",
            "Llama-2-70B",
            Group::Llama,
            spec(32000, 8192, 80, 64, 8, 28672, false, false),
        )
        .context(4096),
        p(
            "llama-3-8b",
            "Llama-3-8B",
            Group::Llama,
            spec(128256, 4096, 32, 32, 8, 14336, false, false),
        )
        .context(8192),
        p(
            "llama-3-70b",
            "Llama-3-70B",
            Group::Llama,
            spec(128256, 8192, 80, 64, 8, 28672, false, false),
        )
        .context(8192),
        // Llama 3.1 and 3.3 keep Llama 3's shapes (rope_scaling changes no weights).
        p(
            "llama-3.1-8b",
            "Llama-3.1-8B",
            Group::Llama,
            spec(128256, 4096, 32, 32, 8, 14336, false, false),
        )
        .context(131072),
        p(
            "llama-3.1-70b",
            "Llama-3.1-70B",
            Group::Llama,
            spec(128256, 8192, 80, 64, 8, 28672, false, false),
        )
        .context(131072),
        p(
            "llama-3.1-405b",
            "Llama-3.1-405B",
            Group::Llama,
            spec(128256, 16384, 126, 128, 8, 53248, false, false),
        )
        .context(131072),
        p(
            "llama-3.2-1b",
            "Llama-3.2-1B",
            Group::Llama,
            spec(128256, 2048, 16, 32, 8, 8192, true, false),
        )
        .context(131072),
        p(
            "llama-3.2-3b",
            "Llama-3.2-3B",
            Group::Llama,
            spec(128256, 3072, 28, 24, 8, 8192, true, false),
        )
        .context(131072),
        p(
            "llama-3.3-70b",
            "Llama-3.3-70B",
            Group::Llama,
            spec(128256, 8192, 80, 64, 8, 28672, false, false),
        )
        .context(131072),
        p(
            "mistral-7b",
            "Mistral-7B v0.1",
            Group::Mistral,
            // Every layer attends to a 4096-token window (`sliding_window`).
            ModelSpec::Transformer(TransformerSpec {
                block: BlockOptions {
                    sliding: Some(SlidingWindow {
                        window: 4096,
                        full_every: 0,
                    }),
                    ..BlockOptions::default()
                },
                ..decoder(32000, 4096, 32, 32, 8, 14336)
            }),
        )
        .context(32768),
        // Nemo and Small 3 have 128-wide heads: 32 × 128 = 4096 < hidden 5120.
        p(
            "mistral-nemo-12b",
            "Mistral-Nemo-12B (2407)",
            Group::Mistral,
            head_dim(spec(131072, 5120, 40, 32, 8, 14336, false, false), 128),
        )
        .context(1024000),
        p(
            "mistral-small-24b",
            "Mistral-Small-24B (2501)",
            Group::Mistral,
            head_dim(spec(131072, 5120, 40, 32, 8, 32768, false, false), 128),
        )
        .context(32768),
        p(
            "qwen2.5-7b",
            "Qwen2.5-7B",
            Group::Qwen,
            spec(152064, 3584, 28, 28, 4, 18944, false, true),
        )
        .context(131072),
        // Qwen2.5's small models tie the head and keep the 151,936-token vocabulary.
        p(
            "qwen2.5-0.5b",
            "Qwen2.5-0.5B",
            Group::Qwen,
            spec(151936, 896, 24, 14, 2, 4864, true, true),
        )
        .context(32768),
        p(
            "qwen2.5-1.5b",
            "Qwen2.5-1.5B",
            Group::Qwen,
            spec(151936, 1536, 28, 12, 2, 8960, true, true),
        )
        .context(32768),
        p(
            "qwen2.5-3b",
            "Qwen2.5-3B",
            Group::Qwen,
            spec(151936, 2048, 36, 16, 2, 11008, true, true),
        )
        .context(32768),
        p(
            "qwen2.5-14b",
            "Qwen2.5-14B",
            Group::Qwen,
            spec(152064, 5120, 48, 40, 8, 13824, false, true),
        )
        .context(131072),
        p(
            "qwen2.5-32b",
            "Qwen2.5-32B",
            Group::Qwen,
            spec(152064, 5120, 64, 40, 8, 27648, false, true),
        )
        .context(131072),
        p(
            "qwen2.5-72b",
            "Qwen2.5-72B",
            Group::Qwen,
            spec(152064, 8192, 80, 64, 8, 29568, false, true),
        )
        .context(131072),
        // Hugging Face's SmolLM2 (model_type llama, tied head).
        p(
            "smollm2-135m",
            "SmolLM2-135M",
            Group::SmolLm,
            spec(49152, 576, 30, 9, 3, 1536, true, false),
        )
        .context(8192),
        p(
            "smollm2-360m",
            "SmolLM2-360M",
            Group::SmolLm,
            spec(49152, 960, 32, 15, 5, 2560, true, false),
        )
        .context(8192),
        p(
            "smollm2-1.7b",
            "SmolLM2-1.7B",
            Group::SmolLm,
            spec(49152, 2048, 24, 32, 32, 8192, true, false),
        )
        .context(8192),
    ]
}

/// `spec` with an explicit `head_dim` (a config's `head_dim` field).
fn head_dim(spec: ModelSpec, head_dim: u64) -> ModelSpec {
    match spec {
        ModelSpec::Transformer(t) => ModelSpec::Transformer(TransformerSpec { head_dim, ..t }),
        other => other,
    }
}

/// A Llama-style decoder preset (Llama, Mistral, Qwen2): [`decoder`] with
/// a tied head or not, and q/k/v biases or not.
#[allow(clippy::too_many_arguments)]
pub fn spec(
    vocab: u64,
    hidden: u64,
    layers: u64,
    heads: u64,
    kv_heads: u64,
    intermediate: u64,
    tie: bool,
    qkv_bias: bool,
) -> ModelSpec {
    ModelSpec::Transformer(TransformerSpec {
        tie_embeddings: tie,
        qkv_bias,
        ..decoder(vocab, hidden, layers, heads, kv_heads, intermediate)
    })
}

/// A Llama-style decoder: pre-RMSNorm, rotary, GQA, SwiGLU, no biases, no
/// dropout, an untied LM head, heads that split the hidden size. The other
/// families of this layout (Qwen3, OLMo 2) start from it.
pub fn decoder(
    vocab: u64,
    hidden: u64,
    layers: u64,
    heads: u64,
    kv_heads: u64,
    intermediate: u64,
) -> TransformerSpec {
    TransformerSpec {
        arch: Arch::Llama,
        vocab,
        hidden,
        layers,
        heads,
        kv_heads,
        head_dim: hidden / heads.max(1),
        intermediate,
        max_positions: 0,
        context_limit: 0,
        moe: None,
        mla: None,
        linear: None,
        gemma4: None,
        encoder: None,
        single_mixer: None,
        type_vocab: 0,
        tie_embeddings: false,
        qkv_bias: false,
        mlp_bias: false,
        hidden_dropout: 0.0,
        attention_dropout: 0.0,
        head: Head::CausalLm,
        fused_gelu: false,
        block: Default::default(),
    }
}
