//! vLLM's and SGLang's memory budgets: what is left of a share of the GPU
//! for the KV cache, and how many requests of the full context it holds.

use crate::units::Bytes;

/// Tokens per vLLM KV-cache block (`--block-size`, `CacheConfig.block_size`
/// default 16 on CUDA).
pub const VLLM_BLOCK_TOKENS: u64 = 16;

/// vLLM's default `max_num_batched_tokens` for the OpenAI server on a GPU
/// (`vllm/engine/arg_utils.py`, `EngineArgs._set_default_args`: 2048 for
/// `vllm serve` below 70 GiB of GPU memory, 8192 at and above it).
pub fn vllm_default_batched_tokens(gpu_memory: Bytes) -> u64 {
    if gpu_memory.0 >= 70 * crate::units::GIB {
        8192
    } else {
        2048
    }
}

/// The profile run's activation peak per token, in elements (times the
/// model's dtype size): the MLP's fused gate-and-up output (2 ×
/// intermediate), the SiLU-and-multiply output (intermediate) and three
/// hidden-width tensors (the residual, the normed input and its copy).
/// vLLM runs a dummy forward of `max_num_batched_tokens` tokens
/// (`GPUModelRunner.profile_run`, `vllm/v1/worker/gpu_model_runner.py`) and
/// counts its torch peak; tensor parallelism splits the intermediate.
/// Against vllm-project/vllm#10517 (Llama-3.1-8B, RTX 3090, bf16): 2.060
/// GiB at 20,000 tokens where the log's `peak_torch_memory` less the weights
/// reads 2.07 GiB, and 2.987 against 2.99 at 29,000.
pub fn activation_per_token(hidden: u64, intermediate_per_gpu: u64) -> u64 {
    3 * intermediate_per_gpu + 3 * hidden
}

/// Bytes one token's cache takes in one layer on one of `tp` GPUs, each
/// element `kv_size` bytes: keys and values of the rank's key/value heads
/// (vLLM's and SGLang's paged caches); for latent attention one row of
/// `kv_lora_rank + qk_rope_head_dim` per token, the same on every rank
/// (vLLM caches MLA as a single head of that width, `ModelConfig.get_head_size`;
/// SGLang's `MLATokenToKVPool` one `[tokens, 1, kv_cache_dim]` buffer per
/// layer, `python/sglang/srt/mem_cache/memory_pool.py`).
pub fn kv_token_layer(t: &crate::models::TransformerSpec, kv_size: u64, tp: u64) -> u64 {
    match &t.mla {
        Some(mla) => mla.cache_width() * kv_size,
        None => 2 * (t.kv_heads / tp.max(1)) * t.head_dim * kv_size,
    }
}

/// The inputs of a KV budget, per GPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budget {
    /// The GPU's memory as CUDA reports it.
    pub total: Bytes,
    /// `--gpu-memory-utilization` (vLLM) or `--mem-fraction-static` (SGLang).
    pub fraction: f64,
    /// The weights on this GPU.
    pub weights: Bytes,
    /// The profile run's activation peak (vLLM; SGLang leaves it to `1 − fraction`).
    pub activations: Bytes,
    /// Memory outside PyTorch's allocator: the CUDA context, NCCL, cuBLAS.
    pub non_torch: Bytes,
}

/// vLLM: `requested_memory = ceil(total × gpu_memory_utilization)` less
/// the non-KV memory the profile run measured (weights, torch peak
/// increase, non-torch memory): `vllm/v1/worker/utils.py` (`request_memory`)
/// and `vllm/v1/worker/gpu_worker.py` (`determine_available_memory`). CUDA
/// graphs are captured after the KV cache is allocated and live in the
/// `1 − utilization` headroom (newer releases can subtract an estimate
/// first, `VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`).
pub fn vllm_kv_budget(b: &Budget) -> Bytes {
    let requested = Bytes((b.total.0 as f64 * b.fraction).ceil() as u64);
    requested.saturating_sub(b.weights + b.activations + b.non_torch)
}

/// SGLang: the free memory after loading the weights less `total × (1 −
/// mem_fraction_static)`, which stays for activations and CUDA graphs
/// (`python/sglang/srt/model_executor/model_runner.py`,
/// `profile_max_num_token`: `rest_memory = available_gpu_memory -
/// total_gpu_memory * (1 - mem_fraction_static)`).
pub fn sglang_kv_budget(b: &Budget) -> Bytes {
    let free = b.total.saturating_sub(b.weights + b.non_torch);
    let kept = Bytes((b.total.0 as f64 * (1.0 - b.fraction)).ceil() as u64);
    free.saturating_sub(kept)
}

/// vLLM's block count: `available // page_size // num_layers` with a page
/// of `block_size` tokens' keys and values of one layer
/// (`vllm/v1/core/kv_cache_utils.py`, `get_num_blocks`;
/// `FullAttentionSpec.page_size_bytes`).
pub fn vllm_blocks(budget: Bytes, layers: u64, kv_bytes_per_token_layer: u64) -> u64 {
    let page = VLLM_BLOCK_TOKENS * kv_bytes_per_token_layer;
    if page == 0 || layers == 0 {
        return 0;
    }
    budget.0 / page / layers
}

/// "Maximum concurrency for N tokens per request": the blocks over the
/// blocks one request of `context` tokens needs
/// (`get_max_concurrency_for_kv_cache_config`: `num_blocks /
/// cdiv(max_model_len, block_size)` for full attention).
pub fn vllm_max_concurrency(blocks: u64, context: u64) -> f64 {
    blocks as f64 / context.div_ceil(VLLM_BLOCK_TOKENS).max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::GIB;

    #[test]
    fn the_block_count_of_vllm_issue_10517_follows_from_its_budget() {
        // "kv_cache_size=3.81GiB ... # GPU blocks: 1952": Llama-3.1-8B's
        // page is 16 tokens × 8 heads × 128 × 2 (K, V) × 2 bytes = 64 KiB a
        // layer, 2 MiB over 32 layers.
        let budget = Bytes((3.81 * GIB as f64) as u64);
        assert_eq!(vllm_blocks(budget, 32, 8 * 128 * 2 * 2), 1950);
        assert!((vllm_max_concurrency(1952, 20_000) - 1.5616).abs() < 1e-9);
    }
}
