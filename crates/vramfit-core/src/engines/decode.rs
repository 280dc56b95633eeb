//! A decode-speed estimate from memory bandwidth: generating one token per
//! sequence reads every weight the GPU multiplies by once and the KV cache
//! of every sequence in flight, so a memory-bound step takes those bytes
//! over the GPU's bandwidth (the roofline argument of Williams et al.,
//! "Roofline", CACM 2009, as the engines' decode kernels are memory-bound
//! at small batches). It is an estimate, not a measurement: kernel
//! efficiency, the sampler and scheduling are left out. A mixture of
//! experts reads, in each sparse layer, only the experts the step's tokens
//! are routed to: at most `top_k` per sequence and never more than all of
//! them (`experts_read`, the case where no two sequences share an expert).

use super::{Engine, ServeConfig, ServeReport, llama_cpp};
use crate::gpus::GpuPreset;
use crate::models::transformer::TransformerSpec;
use crate::units::Bytes;

/// The decode estimate for one setting.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decode {
    /// Bytes one GPU reads per decode step: its weights (the token
    /// embedding excepted, which a step reads one row of) and the KV cache
    /// of `sequences` sequences at the full context.
    pub bytes_per_step: Bytes,
    /// Sequences that each get one token per step.
    pub sequences: u64,
    /// The GPU's memory bandwidth, GB/s.
    pub bandwidth_gbs: f64,
    /// `bandwidth / bytes_per_step × sequences`: tokens per second over all
    /// sequences (tensor-parallel GPUs read their shares at once).
    pub tokens_per_s: f64,
}

/// The decode estimate ([`Decode`]) for `cfg` on `gpu`; `None` when the
/// GPU's bandwidth is unknown (a custom GPU) or, in llama.cpp, when part of
/// the model runs from host memory (its speed is the CPU's, not the GPU's).
pub fn decode(
    t: &TransformerSpec,
    gpu: &GpuPreset,
    cfg: &ServeConfig,
    report: &ServeReport,
) -> Option<Decode> {
    if gpu.bandwidth_gbs <= 0.0 {
        return None;
    }
    let (weights, kv) = match cfg.engine {
        Engine::LlamaCpp => {
            if cfg.gpu_layers.is_some_and(|n| n <= t.layers) {
                return None;
            }
            let mut tensors = llama_cpp::tensors(t, weights_mix(cfg)?);
            if let Some(moe) = t.moe.as_deref() {
                let read = experts_read(moe, cfg.concurrency);
                for x in tensors
                    .iter_mut()
                    .filter(|x| x.role.is_some_and(|r| r.is_expert_bank()))
                {
                    x.bytes = Bytes(x.bytes.0 / moe.experts.max(1) * read);
                }
            }
            // Every tensor but the embedding is on the GPU at -ngl all.
            let w = llama_cpp::weight_split(&tensors, t.layers, t.layers + 1).gpu;
            // The cache holds context × concurrency cells: all of them are read.
            (w, report.kv_cache_bytes)
        }
        Engine::Vllm | Engine::Sglang | Engine::Hf => {
            let embedding = if t.tie_embeddings {
                Bytes::ZERO
            } else {
                Bytes::of(t.vocab * t.hidden, 2)
            };
            // Gemma 4's per-layer embeddings are looked up, a row a token;
            // a vision encoder is not run on text.
            let embedding = embedding
                + t.gemma4.as_deref().map_or(Bytes::ZERO, |g| {
                    Bytes::of(g.per_layer_vocab * t.layers * g.per_layer_width, 2)
                })
                + t.encoder
                    .as_deref()
                    .map_or(Bytes::ZERO, |e| Bytes::of(e.params, 2));
            let mut weights = super::weights_per_gpu(t, cfg.weights, cfg.tp);
            if let Some(moe) = t.moe.as_deref() {
                let experts = super::routed_expert_bytes(t, cfg.weights, cfg.tp);
                let unread = moe.experts - experts_read(moe, cfg.concurrency);
                weights = weights.saturating_sub(Bytes(experts.0 / moe.experts.max(1) * unread));
            }
            let w = weights.saturating_sub(Bytes(embedding.0.div_ceil(cfg.tp)));
            let kv_size = cfg.kv.torch_size().unwrap_or(2);
            let per_token = super::budget::TwoKinds::of(t, kv_size, cfg.tp, false).map_or_else(
                || super::budget::kv_token_layer(t, kv_size, cfg.tp) * t.attention_layers(),
                |k| k.per_token(),
            );
            let mut tokens = cfg.context.saturating_mul(cfg.concurrency);
            let mut indexer_keys = Bytes::ZERO;
            if let Some(d) = super::budget::Dsa::of(t, kv_size) {
                // Sparse attention reads `index_topk` latents a layer, after
                // the indexer has scored every cached key.
                tokens = cfg.context.min(d.topk).saturating_mul(cfg.concurrency);
                indexer_keys = Bytes::of(
                    cfg.context.saturating_mul(cfg.concurrency),
                    d.indexed * d.key,
                );
            }
            // Each sequence's linear-attention states are read and written.
            let states = t.linear.as_deref().map_or(0, |g| {
                g.serving_state_bytes(cfg.tp, 2, 4)
                    .saturating_mul(g.linear_layers(t.layers))
                    .saturating_mul(cfg.concurrency)
            });
            (
                w,
                Bytes::of(tokens, per_token) + Bytes(states) + indexer_keys,
            )
        }
    };
    let bytes_per_step = weights + kv;
    if bytes_per_step.0 == 0 {
        return None;
    }
    let tokens_per_s = gpu.bandwidth_gbs * 1e9 / bytes_per_step.0 as f64 * cfg.concurrency as f64;
    Some(Decode {
        bytes_per_step,
        sequences: cfg.concurrency,
        bandwidth_gbs: gpu.bandwidth_gbs,
        tokens_per_s,
    })
}

/// Experts a decode step of `sequences` sequences reads in a sparse layer:
/// `top_k` per sequence, at most every expert.
pub fn experts_read(moe: &crate::models::moe::Moe, sequences: u64) -> u64 {
    moe.top_k.saturating_mul(sequences.max(1)).min(moe.experts)
}

/// llama.cpp's mix, `None` for a format it does not run (refused before).
fn weights_mix(cfg: &ServeConfig) -> Option<super::mix::GgufMix> {
    match cfg.weights {
        super::ServeWeights::Gguf(m) => Some(m),
        super::ServeWeights::Native
        | super::ServeWeights::Fp8
        | super::ServeWeights::AwqInt4
        | super::ServeWeights::GptqInt4
        | super::ServeWeights::Nf4
        | super::ServeWeights::Mxfp4 => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use crate::config::{Mode, TrainConfig};
    use crate::engines::{Serving, estimate};
    use crate::{gpu_preset, model_preset};

    fn run(engine: &str, weights: &str, tp: u64, gpu_layers: Option<u64>) -> Option<super::Decode> {
        let model = model_preset("llama-3-8b").unwrap().spec;
        let gpu = gpu_preset("h100-sxm").unwrap();
        let mut train = TrainConfig {
            mode: Mode::Inference,
            context: 8192,
            ..TrainConfig::default()
        };
        train.parallel.tp = tp;
        let s = Serving {
            engine: engine.parse().unwrap(),
            weights: weights.parse().unwrap(),
            concurrency: 2,
            gpu_layers,
            ..Serving::default()
        };
        estimate(&model, Some(&gpu), &train, &s).unwrap().decode
    }

    #[test]
    fn a_step_reads_the_weights_and_the_cache_of_the_sequences_in_flight() {
        // llama.cpp: the f16 cache of 2 × 8192 tokens is 2 GiB, read whole.
        let d = run("llama.cpp", "q8_0", 1, None).unwrap();
        let crate::models::ModelSpec::Transformer(t) = model_preset("llama-3-8b").unwrap().spec
        else {
            unreachable!("Llama-3-8B is a transformer")
        };
        let tensors = crate::engines::llama_cpp::tensors(&t, "q8_0".parse().unwrap());
        let embd = tensors.first().unwrap().bytes;
        let all: u64 = tensors.iter().map(|t| t.bytes.0).sum();
        assert_eq!(d.bytes_per_step.0, all - embd.0 + (2 << 30));
        assert!(
            (d.tokens_per_s - d.bandwidth_gbs * 1e9 / d.bytes_per_step.0 as f64 * 2.0).abs() < 1e-6
        );
        // Layers in host memory run at the CPU's speed: no GPU estimate.
        assert_eq!(run("llama.cpp", "q8_0", 1, Some(20)), None);
    }

    #[test]
    fn tensor_parallel_gpus_read_their_shares_at_once() {
        let one = run("vllm", "native", 1, None).unwrap();
        let two = run("vllm", "native", 2, None).unwrap();
        // Each reads half of everything but the norms, which every rank
        // holds whole: Llama-3-8B's 2 × 32 + 1 of 4096 bf16 weights.
        let norms = (2 * 32 + 1) * 4096 * 2;
        assert_eq!(
            two.bytes_per_step.0,
            (one.bytes_per_step.0 - norms).div_ceil(2) + norms
        );
        assert!(two.tokens_per_s > 1.99 * one.tokens_per_s);
    }

    #[test]
    fn a_mixture_of_experts_reads_only_the_experts_its_sequences_reach() {
        let Ok(crate::ModelSpec::Transformer(t)) = model_preset("qwen3-30b-a3b").map(|p| p.spec)
        else {
            unreachable!("Qwen3-30B-A3B is a transformer")
        };
        let moe = t.moe.as_deref().unwrap();
        // 8 of 128 experts per token: one sequence reads 8, 16 read all.
        assert_eq!(super::experts_read(moe, 1), 8);
        assert_eq!(super::experts_read(moe, 16), 128);
        assert_eq!(super::experts_read(moe, 100), 128);
        let gpu = gpu_preset("h100-sxm").unwrap();
        let step = |concurrency: u64| {
            let train = TrainConfig {
                mode: Mode::Inference,
                context: 1024,
                ..TrainConfig::default()
            };
            let s = Serving {
                engine: "vllm".parse().unwrap(),
                weights: "native".parse().unwrap(),
                concurrency,
                ..Serving::default()
            };
            let spec = crate::ModelSpec::Transformer(t.clone());
            let d = estimate(&spec, Some(&gpu), &train, &s)
                .unwrap()
                .decode
                .unwrap();
            // Less the cache: 1024 tokens × 48 layers × 4 heads × 128 × K, V × 2 B each.
            d.bytes_per_step.0 - concurrency * 1024 * 48 * 4 * 128 * 2 * 2
        };
        // Sixteen sequences read the 120 experts one leaves: 48 layers of
        // gate, up (768 × 2048) and down, bf16.
        assert_eq!(step(16) - step(1), 120 * 48 * 3 * 768 * 2048 * 2);
    }
}
