//! What one token's KV cache holds in each engine: keys and values of the
//! key/value heads, or latent attention's compressed latent; and whether
//! sliding-window layers keep only their window.

use super::budget::{self, Hybrid};
use super::{Engine, ServeConfig};
use crate::models::transformer::TransformerSpec;

/// What a token's cache holds in one layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheKind {
    /// Keys and values of `heads` key/value heads (this GPU's share) of
    /// `head_dim` each.
    KeysValues {
        /// Key/value heads on one GPU.
        heads: u64,
        /// Elements per head.
        head_dim: u64,
    },
    /// Latent attention's compressed latent and shared rotary key,
    /// `kv_lora_rank + qk_rope_head_dim` elements as one head with no
    /// separate values, the same on every tensor-parallel GPU: vLLM's
    /// `MLAAttentionSpec`, SGLang's `MLATokenToKVPool`, llama.cpp's K-only
    /// cache of `deepseek2`.
    Latent {
        /// Elements per token and layer.
        width: u64,
    },
}

/// How an engine lays out this model's KV cache ([`CacheLayout::of`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheLayout {
    /// What a token holds in each layer.
    pub kind: CacheKind,
    /// Bytes one token takes over all layers on one GPU.
    pub bytes_per_token: u64,
    /// The sliding-window layers the engine bounds by their window
    /// (llama.cpp's iSWA cache, vLLM's hybrid allocator, SGLang's SWA
    /// pool); `None` when it keeps every position in every layer.
    pub sliding: Option<Hybrid>,
    /// Linear-attention layers (Qwen3-Next, Qwen3.5), which keep a fixed
    /// state per sequence instead of keys and values: how many of all the
    /// layers, and the bytes of that state per sequence over them on one
    /// GPU, as the engine stores it.
    pub linear: Option<LinearState>,
    /// Gemma 4's full-attention layers, whose heads differ from the
    /// sliding layers' ([`Self::kind`]), and the layers that reuse an
    /// earlier layer's keys and values.
    pub full_layers: Option<FullLayers>,
    /// A sparse-attention model's indexer keys (DeepSeek-V3.2, GLM-5),
    /// cached beside the latent.
    pub indexer: Option<IndexerKeys>,
    /// Layers that are a feed-forward only (Nemotron-H's MLP and experts
    /// layers) and keep nothing, out of all of them; `None` when every
    /// layer mixes tokens.
    pub feed_forward: Option<(u64, u64)>,
}

/// The indexer keys of DeepSeek Sparse Attention, as an engine caches them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexerKeys {
    /// Layers that run an indexer (and cache its key).
    pub layers: u64,
    /// Bytes of one token's key in one layer: fp8 with an fp32 scale per
    /// 128 in vLLM and SGLang, the cache type in llama.cpp, the model's
    /// dtype in `transformers`.
    pub bytes: u64,
}

/// Gemma 4's full-attention layers and shared keys and values, as an
/// engine's cache holds them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FullLayers {
    /// Key/value heads of a full-attention layer on one GPU.
    pub heads: u64,
    /// Their head width.
    pub head_dim: u64,
    /// Layers that reuse an earlier layer's keys and values.
    pub reused: u64,
    /// Whether the engine allocates those layers a cache anyway (SGLang).
    pub allocated: bool,
}

/// The per-sequence state of a model's linear-attention layers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinearState {
    /// Linear-attention layers.
    pub layers: u64,
    /// All layers.
    pub of: u64,
    /// Bytes per sequence over the linear layers on one GPU.
    pub bytes_per_sequence: u64,
    /// They are Mamba-2 state-space layers, not linear attention.
    pub mamba2: bool,
}

impl CacheLayout {
    /// The layout `cfg.engine` gives `t`'s cache.
    pub fn of(t: &TransformerSpec, cfg: &ServeConfig) -> CacheLayout {
        let kind = match t.mla.as_deref() {
            Some(mla) => CacheKind::Latent {
                width: mla.cache_width(),
            },
            None => CacheKind::KeysValues {
                heads: match cfg.engine {
                    Engine::LlamaCpp => t.kv_heads,
                    Engine::Vllm | Engine::Sglang | Engine::Hf => {
                        super::kv_heads_per_gpu(t.kv_heads, cfg.tp)
                    }
                },
                head_dim: t.head_dim,
            },
        };
        let size = cfg.kv.torch_size().unwrap_or(2);
        let attention_bytes = match (cfg.engine, budget::dsa_token_bytes(t, size)) {
            (Engine::LlamaCpp, _) => {
                let ty = cfg.kv.ggml().unwrap_or(super::gguf::GgmlType::F16);
                (0..t.layers)
                    .filter(|&i| t.attends(i))
                    .map(|i| super::llama_cpp::kv_layer_bytes_at(t, ty, 1, i).0)
                    .sum()
            }
            // Latents and indexer keys, in one block table or cell.
            (Engine::Vllm | Engine::Sglang, Some(dsa)) => dsa,
            // Gemma 4's kinds of layer; SGLang allocates the shared layers' too.
            (Engine::Vllm | Engine::Sglang | Engine::Hf, _) => {
                budget::TwoKinds::of(t, size, cfg.tp, cfg.engine == Engine::Sglang).map_or_else(
                    || budget::kv_token_layer(t, size, cfg.tp).saturating_mul(t.attention_layers()),
                    |k| k.per_token(),
                )
            }
        };
        let sliding = match cfg.engine {
            Engine::LlamaCpp | Engine::Vllm | Engine::Hf => Hybrid::of(t),
            Engine::Sglang => budget::sglang_swa(t),
        };
        // llama.cpp and SGLang keep the recurrent state in fp32, vLLM as
        // the checkpoint asks; `transformers` the whole convolution window.
        let linear = t.linear.as_deref().map(|g| {
            let layers = g.linear_layers(t.layers);
            let state = match cfg.engine {
                Engine::LlamaCpp => g.serving_state_bytes(1, 4, 4),
                Engine::Sglang => g.serving_state_bytes(cfg.tp, 2, 4),
                Engine::Vllm => {
                    g.serving_state_bytes(cfg.tp, 2, if g.state_fp32() { 4 } else { 2 })
                }
                Engine::Hf => g.state_bytes(cfg.kv.torch_size().unwrap_or(2)),
            };
            LinearState {
                layers,
                of: t.layers,
                bytes_per_sequence: state.saturating_mul(layers),
                mamba2: matches!(g, crate::models::Recurrent::Mamba2(_)),
            }
        });
        let full_layers = t.gemma4.as_deref().map(|g| FullLayers {
            heads: match cfg.engine {
                Engine::LlamaCpp => g.full_kv_heads,
                Engine::Vllm | Engine::Sglang | Engine::Hf => {
                    (g.full_kv_heads / cfg.tp.max(1)).max(1)
                }
            },
            head_dim: g.full_head_dim,
            reused: g.kv_shared_layers,
            allocated: cfg.engine == Engine::Sglang,
        });
        let indexer = t
            .mla
            .as_deref()
            .and_then(|m| m.indexer)
            .map(|ix| IndexerKeys {
                layers: ix.layers(t.layers),
                bytes: match cfg.engine {
                    Engine::Vllm | Engine::Sglang => ix.fp8_key_bytes(),
                    Engine::LlamaCpp => {
                        cfg.kv
                            .ggml()
                            .unwrap_or(super::gguf::GgmlType::F16)
                            .tensor_bytes(1, ix.head_dim)
                            .0
                    }
                    Engine::Hf => ix.head_dim * size,
                },
            });
        // `transformers` caches the indexer's keys beside the latent.
        let attention_bytes = match (cfg.engine, indexer) {
            (Engine::Hf, Some(k)) => attention_bytes + k.layers * k.bytes,
            _ => attention_bytes,
        };
        CacheLayout {
            kind,
            bytes_per_token: attention_bytes,
            sliding,
            linear,
            full_layers,
            indexer,
            feed_forward: t
                .single_mixer
                .as_deref()
                .map(|s| (s.feed_forward.len() as u64, t.layers)),
        }
    }
}
