//! vLLM's and SGLang's memory budgets: what is left of a share of the GPU
//! for the KV cache, and how many requests of the full context it holds.

use crate::units::Bytes;

/// Tokens per vLLM KV-cache block: 0.34's `CacheConfig.DEFAULT_BLOCK_SIZE`
/// (`vllm/config/cache.py`), which `Platform.update_block_size_for_backend`
/// keeps for the CUDA backends (FlashAttention, FlashInfer and Triton take
/// multiples of 16, FlashMLA and DeepSeek Sparse Attention's indexer 64,
/// `get_preferred_block_size`). Releases before 0.2x used 16, as the V0
/// logs the tests check against did.
pub const VLLM_BLOCK_TOKENS: u64 = 64;

/// DeepSeek Sparse Attention's cache per token on one GPU, every layer
/// (DeepSeek-V3.2, GLM-5; `None` for other models) as vLLM and SGLang
/// store it: the latent row in every layer — 576 values in the KV dtype,
/// or with an fp8 cache the FlashMLA layout of 656 bytes (512 fp8 values,
/// 4 fp32 scales, 64 bf16 rotary values: vLLM's `fp8_ds_mla`, SGLang's
/// `calculate_mla_kv_cache_dim`) — and, in each layer that runs an
/// indexer, its key in fp8 with an fp32 scale per 128 values (132 bytes
/// for 128: vLLM's `DeepseekV32IndexerCache`, SGLang's `IndexKeyCache`).
/// vLLM keeps both in one block table, its page the sum of the layers'
/// (`UniformTypeKVCacheSpecs`); SGLang's cell is the same sum.
pub fn dsa_token_bytes(t: &crate::models::TransformerSpec, kv_size: u64) -> Option<u64> {
    let d = Dsa::of(t, kv_size)?;
    Some(t.layers * d.latent + d.indexed * d.key)
}

/// The parts of [`dsa_token_bytes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dsa {
    /// A layer's latent row, bytes.
    pub latent: u64,
    /// An indexer key with its scales, bytes.
    pub key: u64,
    /// Layers that run an indexer.
    pub indexed: u64,
    /// Keys each query attends to (`index_topk`).
    pub topk: u64,
}

impl Dsa {
    /// The sparse-attention cache of `t` with `kv_size`-byte elements
    /// (1: fp8); `None` without an indexer.
    pub fn of(t: &crate::models::TransformerSpec, kv_size: u64) -> Option<Dsa> {
        let mla = t.mla.as_deref()?;
        let ix = mla.indexer?;
        Some(Dsa {
            latent: if kv_size == 1 {
                656
            } else {
                mla.cache_width() * kv_size
            },
            key: ix.fp8_key_bytes(),
            indexed: ix.layers(t.layers),
            topk: ix.topk,
        })
    }
}

/// vLLM's cache for a DSA model: blocks of [`VLLM_BLOCK_TOKENS`] tokens
/// of [`dsa_token_bytes`] each (64, the indexer backend's only size,
/// `DeepseekV32IndexerBackend.get_supported_kernel_block_sizes`); a request
/// holds `cdiv(context, 64)`.
pub fn vllm_dsa_kv(budget: Bytes, per_token: u64, context: u64) -> VllmKv {
    let page = VLLM_BLOCK_TOKENS * per_token;
    let blocks = budget.0.checked_div(page).unwrap_or(0);
    VllmKv {
        blocks,
        tokens: blocks * VLLM_BLOCK_TOKENS,
        bytes: Bytes::of(blocks, page),
        max_concurrency: blocks as f64 / context.div_ceil(VLLM_BLOCK_TOKENS).max(1) as f64,
    }
}

/// SGLang's `DSATokenToKVPool`: the budget over a cell of
/// [`dsa_token_bytes`], in whole pages of 64 tokens (`_compute_cell_size`,
/// `index_kpool`).
pub fn sglang_dsa_kv(budget: Bytes, cell: u64) -> (u64, Bytes) {
    let tokens = budget.0.checked_div(cell).unwrap_or(0) / 64 * 64;
    (tokens, Bytes::of(tokens, cell))
}

/// What vLLM's DSA path holds besides the cache, on each GPU, and what its
/// profile run adds to the peak (`(held, transient)`), for a context of
/// `context` (`max_model_len`), `batched` tokens a step and `seqs`
/// sequences at most:
/// - the model's `topk_indices_buffer`, `batched × index_topk` int32
///   (`models/deepseek_v32/nvidia/model.py`), and per indexer layer a
///   decode `physical_topk_indices` of `(min(batched, seqs) + 1) ×
///   index_topk` int32 (`SparseMLAIndexGroupBuilder.register_layer`);
/// - the indexer's key-gather workspace, `context × 8 × (5, or 2 beyond
///   256K tokens)` rows of 132 bytes, reserved in the profile run and kept
///   (`get_max_prefill_buffer_size`);
/// - its fp32 logits, transient: `max(512 MiB, min(seqs, batched) ×
///   round_up(context, 256) × 4)` (`sparse_attn_indexer.py`'s profile branch).
pub fn vllm_dsa_buffers(
    t: &crate::models::TransformerSpec,
    context: u64,
    (batched, seqs): (u64, u64),
) -> (Bytes, Bytes) {
    let Some(ix) = t.mla.as_deref().and_then(|m| m.indexer) else {
        return (Bytes::ZERO, Bytes::ZERO);
    };
    let indexed = ix.layers(t.layers);
    let topk = Bytes::of(batched, ix.topk * 4);
    let physical = Bytes::of(indexed * (batched.min(seqs) + 1), ix.topk * 4);
    let factor = if context <= 262_144 { 5 } else { 2 };
    let key = ix.fp8_key_bytes();
    let gather = Bytes::of(context.saturating_mul(8 * factor), key);
    let logits = Bytes::of(seqs.min(batched), context.next_multiple_of(256) * 4)
        .max(Bytes(512 * crate::units::MIB));
    (topk + physical + gather, logits)
}

/// vLLM's defaults for the OpenAI server on `gpu`, `(max_num_batched_tokens,
/// max_num_seqs)` (`EngineArgs.get_batch_defaults`, `vllm/engine/arg_utils.py`
/// in 0.34): (16384, 1024) from 160 GiB of device memory (B200, MI300X);
/// (8192, 1024) from 70 GiB but on an A100 (whose throughput larger batches
/// cost, vllm-project/vllm#17885) or a GB10; (2048, 256) below.
pub fn vllm_defaults(gpu: &crate::gpus::GpuPreset) -> (u64, u64) {
    let memory = gpu.memory_bytes.0;
    if memory >= 160 * crate::units::GIB {
        (16_384, 1024)
    } else if memory >= 70 * crate::units::GIB && !gpu.id.contains("a100") {
        (8192, 1024)
    } else {
        (2048, 256)
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
        None => 2 * super::kv_heads_per_gpu(t.kv_heads, tp) * t.head_dim * kv_size,
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
    vllm_blocks_of(budget, layers, kv_bytes_per_token_layer, VLLM_BLOCK_TOKENS)
}

/// [`vllm_blocks`] with blocks of `block` tokens (`--block-size`).
pub fn vllm_blocks_of(
    budget: Bytes,
    layers: u64,
    kv_bytes_per_token_layer: u64,
    block: u64,
) -> u64 {
    let page = block * kv_bytes_per_token_layer;
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
    vllm_max_concurrency_of(blocks, context, VLLM_BLOCK_TOKENS)
}

/// [`vllm_max_concurrency`] with blocks of `block` tokens.
pub fn vllm_max_concurrency_of(blocks: u64, context: u64, block: u64) -> f64 {
    blocks as f64 / context.div_ceil(block.max(1)).max(1) as f64
}

/// The profile run's activation peak per token, in elements, for any
/// decoder: [`activation_per_token`] for a dense layer; for a sparse one
/// the residual stream's three hidden-width tensors next to the Triton
/// fused-MoE kernel's two caches (`fused_experts_impl` in
/// `vllm/model_executor/layers/fused_moe/fused_moe.py`: `cache13` of
/// `tokens × top_k × max(N, K)` shared by `intermediate_cache1` and `3`,
/// and `intermediate_cache2` of `tokens × top_k × N / 2`, with `N` = `2 ×
/// intermediate / tp` and `K` = hidden; `tokens` is the batch, at most
/// `VLLM_FUSED_MOE_CHUNK_SIZE` = 16384, above both default batches), or
/// the shared experts' MLP where that is wider. The larger of the model's
/// layer kinds.
pub fn profile_activation_per_token(t: &crate::models::TransformerSpec, tp: u64) -> u64 {
    let tp = tp.max(1);
    let dense = activation_per_token(t.hidden, t.intermediate / tp);
    let Some(moe) = t.moe.as_deref() else {
        return dense;
    };
    let n = 2 * moe.expert_intermediate / tp;
    let fused = moe.top_k * (n.max(t.hidden) + n / 2) + 3 * t.hidden;
    let shared = moe
        .shared
        .map_or(0, |s| activation_per_token(t.hidden, s.intermediate / tp));
    let sparse = fused.max(shared);
    if moe.sparse_layers(t.layers) < t.layers {
        sparse.max(dense)
    } else {
        sparse
    }
}

/// A model's attention layers as the engines' caches group them: how many
/// keep every position and how many a sliding window of `window` tokens
/// (`None` when no layer slides or every layer does — vLLM's and SGLang's
/// caches are then uniform; a model whose every layer slides is counted
/// as full, an upper bound).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hybrid {
    /// Full-attention layers.
    pub full: u64,
    /// Sliding-window layers.
    pub sliding: u64,
    /// The window, in tokens.
    pub window: u64,
    /// The sliding layers attend within chunks of `window` (Llama 4's
    /// chunked local attention, [`crate::models::BlockOptions::chunked`]).
    pub chunked: bool,
}

impl Hybrid {
    /// The split of `t`'s layers, `None` unless it mixes both kinds.
    pub fn of(t: &crate::models::TransformerSpec) -> Option<Hybrid> {
        let w = t.block.sliding.filter(|w| w.full_every > 0)?;
        let sliding = (0..t.layers).filter(|&i| w.slides(i)).count() as u64;
        (sliding > 0 && sliding < t.layers).then_some(Hybrid {
            full: t.layers - sliding,
            sliding,
            window: w.window,
            chunked: t.block.chunked,
        })
    }
}

/// vLLM's KV cache: its blocks, the tokens it reports, its bytes and the
/// maximum concurrency.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VllmKv {
    /// `num_blocks`.
    pub blocks: u64,
    /// "GPU KV cache size: N tokens".
    pub tokens: u64,
    /// The bytes of the cache tensors.
    pub bytes: Bytes,
    /// "Maximum concurrency for N tokens per request".
    pub max_concurrency: f64,
}

/// The tokens vLLM 0.34 counts as scheduled but not yet freed
/// (`VllmConfig.max_in_flight_tokens`): `max_num_batched_tokens` for each
/// batch in flight, two with asynchronous scheduling, on by default
/// (`max_concurrent_batches`: one pipeline stage + 1). A sliding or
/// chunked layer's blocks are freed only once those are processed.
pub fn vllm_in_flight_tokens(max_batched_tokens: u64) -> u64 {
    2 * max_batched_tokens
}

/// vLLM v1's KV cache from its budget (`vllm/v1/core/kv_cache_utils.py`).
/// Every layer full: one group, `get_num_blocks` over all layers. A
/// hybrid of full and sliding-window layers (`_get_kv_cache_groups_uniform_page_size`):
/// groups of `group_size` layers — the smaller kind's count, or the
/// larger's when it is under 1.5 times the smaller — padded per kind,
/// `group_size` tensors each shared by one layer of every group, so
/// `num_blocks = available // page // group_size`; the log's tokens are
/// `num_blocks // groups × block_size`; a request needs `cdiv(context,
/// 64)` blocks in a full group and `cdiv(min(window − 1 + in flight,
/// context), 64) + 1` in a sliding one
/// (`SlidingWindowSpec.max_admission_blocks_per_request`), `cdiv(min(chunk
/// + in flight, context), 64)` in a chunked one
/// (`ChunkedLocalAttentionSpec`'s), the tokens in flight being
/// [`vllm_in_flight_tokens`]; the concurrency is `num_blocks` over their
/// sum (`get_max_concurrency_for_kv_cache_config`).
pub fn vllm_kv(
    t: &crate::models::TransformerSpec,
    budget: Bytes,
    kv_token_layer: u64,
    context: u64,
    max_batched_tokens: u64,
) -> VllmKv {
    let page = VLLM_BLOCK_TOKENS * kv_token_layer;
    let full_blocks = context.div_ceil(VLLM_BLOCK_TOKENS).max(1);
    let Some(hy) = Hybrid::of(t) else {
        let blocks = vllm_blocks(budget, t.layers, kv_token_layer);
        return VllmKv {
            blocks,
            tokens: blocks * VLLM_BLOCK_TOKENS,
            bytes: Bytes::of(blocks * t.layers, page),
            max_concurrency: vllm_max_concurrency(blocks, context),
        };
    };
    let (small, large) = (hy.full.min(hy.sliding), hy.full.max(hy.sliding));
    // `max_num_layers < min_num_layers * 1.5`, in integers.
    let group_size = if 2 * large < 3 * small { large } else { small };
    let full_groups = hy.full.div_ceil(group_size);
    let sliding_groups = hy.sliding.div_ceil(group_size);
    let blocks = budget.0.checked_div(page).unwrap_or(0) / group_size.max(1);
    let in_flight = vllm_in_flight_tokens(max_batched_tokens);
    let sliding_blocks = if hy.chunked {
        (hy.window + in_flight)
            .min(context)
            .div_ceil(VLLM_BLOCK_TOKENS)
    } else {
        (hy.window.saturating_sub(1) + in_flight)
            .min(context)
            .div_ceil(VLLM_BLOCK_TOKENS)
            + 1
    };
    let per_request = full_groups * full_blocks + sliding_groups * sliding_blocks;
    VllmKv {
        blocks,
        tokens: blocks / (full_groups + sliding_groups) * VLLM_BLOCK_TOKENS,
        bytes: Bytes::of(blocks * group_size, page),
        max_concurrency: blocks as f64 / per_request.max(1) as f64,
    }
}

/// Gemma 4's two kinds of attention layer: full ones of 512-wide heads
/// and sliding ones of 256, each with its own key–value heads, and the
/// window; the kinds' bytes per token and layer on one GPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoKinds {
    /// Full-attention layers with a cache, and their bytes per token.
    pub full: (u64, u64),
    /// Sliding layers with a cache, and their bytes per token.
    pub sliding: (u64, u64),
    /// The sliding layers' window.
    pub window: u64,
}

impl TwoKinds {
    /// `t`'s kinds at `kv_size` bytes an element on one of `tp` GPUs
    /// (`None` without Gemma 4's layers); `all` counts the layers that
    /// reuse another's keys and values too.
    pub fn of(
        t: &crate::models::TransformerSpec,
        kv_size: u64,
        tp: u64,
        all: bool,
    ) -> Option<TwoKinds> {
        let g = t.gemma4.as_deref()?;
        let [full, sliding] = g.cache_kinds(t, all);
        Some(TwoKinds {
            full: (full.layers, full.token_layer_bytes(kv_size, tp)),
            sliding: (sliding.layers, sliding.token_layer_bytes(kv_size, tp)),
            window: t.block.sliding.map_or(0, |w| w.window),
        })
    }

    /// Bytes of one token over every layer with a cache.
    pub fn per_token(&self) -> u64 {
        self.full.0 * self.full.1 + self.sliding.0 * self.sliding.1
    }
}

/// vLLM v1's cache for Gemma 4, whose kinds of layer differ in their bytes
/// per token (`kv_cache_planning.py`): `unify_kv_cache_spec_page_size`
/// gives every layer the larger kind's page of 64 tokens, the smaller
/// kind's block holding proportionally more tokens; then groups as
/// [`vllm_kv`]'s, `num_blocks = available // (page × group_size)`. The
/// layers that reuse another's keys and values (`kv_sharing_target_layer_name`)
/// get no spec. A request needs `cdiv(context, full block)` blocks per
/// full group and `cdiv(min(window − 1 + in flight, context), sliding
/// block) + 1` per sliding one ([`vllm_in_flight_tokens`]).
pub fn vllm_two_kinds_kv(
    k: &TwoKinds,
    budget: Bytes,
    context: u64,
    max_batched_tokens: u64,
) -> VllmKv {
    let ((nf, bf), (ns, bs)) = (k.full, k.sliding);
    let page = VLLM_BLOCK_TOKENS * bf.max(bs);
    let block = |b: u64| page.checked_div(b).unwrap_or(VLLM_BLOCK_TOKENS);
    let (block_f, block_s) = (block(bf), block(bs));
    let (small, large) = (nf.min(ns), nf.max(ns));
    let group_size = if small == 0 || 2 * large < 3 * small {
        large
    } else {
        small
    }
    .max(1);
    let (full_groups, sliding_groups) = (nf.div_ceil(group_size), ns.div_ceil(group_size));
    let blocks = budget.0.checked_div(page * group_size).unwrap_or(0);
    let window_tokens =
        (k.window.saturating_sub(1) + vllm_in_flight_tokens(max_batched_tokens)).min(context);
    let sliding_blocks = if ns > 0 {
        window_tokens.div_ceil(block_s) + 1
    } else {
        0
    };
    let per_request =
        full_groups * context.div_ceil(block_f).max(1) + sliding_groups * sliding_blocks;
    VllmKv {
        blocks,
        tokens: blocks / (full_groups + sliding_groups).max(1) * block_f,
        bytes: Bytes::of(blocks * group_size, page),
        max_concurrency: blocks as f64 / per_request.max(1) as f64,
    }
}

/// SGLang's pools for Gemma 4, a hybrid sliding-window model
/// (`is_hybrid_swa_model`; `HybridSWAPoolConfigurator`): a full pool and
/// a sliding one over every layer of each kind — the ones that reuse
/// another's keys and values are allocated too — the sliding pool holding
/// `swa_full_tokens_ratio` (0.8) times the full one's tokens: `full =
/// budget // (full bytes + 0.8 × sliding bytes)`. Returns the full pool's
/// tokens and both pools' bytes.
pub fn sglang_two_kinds_kv(k: &TwoKinds, budget: Bytes) -> (u64, Bytes) {
    const SWA_FULL_TOKENS_RATIO: f64 = 0.8;
    let full_cell = (k.full.0 * k.full.1) as f64;
    let swa_cell = (k.sliding.0 * k.sliding.1) as f64;
    let cell = full_cell + SWA_FULL_TOKENS_RATIO * swa_cell;
    if cell <= 0.0 {
        return (0, Bytes::ZERO);
    }
    let full = (budget.0 as f64 / cell) as u64;
    let swa = (full as f64 * SWA_FULL_TOKENS_RATIO) as u64;
    (
        full,
        Bytes(full * k.full.0 * k.full.1 + swa * k.sliding.0 * k.sliding.1),
    )
}

/// vLLM v1's cache for a model with linear-attention layers (Qwen3-Next,
/// Qwen3.5): each layer's per-sequence state is a block of the same pool
/// as the attention layers' keys and values. The attention block grows
/// until one block of one layer holds a layer's state
/// (`Platform._align_hybrid_block_size`: `64 × cdiv(state, 64 × kv bytes
/// per token)`, 64 being the larger of the block size and the kernel's
/// smallest, the state page padded to it); the layers form groups of
/// `group_size` as for sliding windows (`_get_kv_cache_groups_uniform_page_size`),
/// `num_blocks = available // page // group_size`. A request holds
/// `cdiv(context, block)` blocks in each attention group and, prefix
/// caching being on by default (`mamba_cache_mode` "align"), two in each
/// linear group (`MambaSpec.max_memory_usage_bytes`). The state: the
/// convolution's last `conv_kernel − 1` inputs in the model's dtype and
/// the recurrent state in it too, or in fp32 where the checkpoint asks
/// (`mamba_ssm_dtype`, Qwen3.5's `verify_and_update_config`).
pub fn vllm_linear_kv(
    t: &crate::models::TransformerSpec,
    g: &crate::models::Recurrent,
    budget: Bytes,
    (kv_token_layer, tp): (u64, u64),
    context: u64,
) -> VllmKv {
    let state = g.serving_state_bytes(tp, 2, if g.state_fp32() { 4 } else { 2 });
    let align = VLLM_BLOCK_TOKENS;
    let block = align * state.div_ceil(align * kv_token_layer.max(1)).max(1);
    let page = block * kv_token_layer;
    let linear = g.linear_layers(t.layers);
    let attention = t.layers - linear;
    let (small, large) = (attention.min(linear).max(1), attention.max(linear));
    let group_size = if 2 * large < 3 * small { large } else { small };
    let attention_groups = attention.div_ceil(group_size);
    let linear_groups = linear.div_ceil(group_size);
    let blocks = budget.0.checked_div(page).unwrap_or(0) / group_size.max(1);
    let per_request = attention_groups * context.div_ceil(block).max(1) + linear_groups * 2;
    VllmKv {
        blocks,
        tokens: blocks / (attention_groups + linear_groups).max(1) * block,
        bytes: Bytes::of(blocks * group_size, page),
        max_concurrency: blocks as f64 / per_request.max(1) as f64,
    }
}

/// SGLang's pools for a model with linear-attention layers
/// (`HybridReqToTokenPool`'s `MambaPool` beside `HybridLinearKVPool`):
/// `mamba_full_memory_ratio` (0.9) of the budget's 1.9 parts go to the
/// per-request states (bf16 convolution, fp32 recurrent state), `slots =
/// (share − state) // state` of them (`_handle_max_mamba_cache`), the
/// rest to the attention layers' tokens; with the radix cache and overlap
/// scheduling (the defaults) at most `slots / 5` requests run
/// (`_calculate_mamba_ratio`). Returns the tokens, the pools' bytes and
/// that most of requests.
pub fn sglang_linear_kv(
    t: &crate::models::TransformerSpec,
    g: &crate::models::Recurrent,
    budget: Bytes,
    (kv_token_layer, tp): (u64, u64),
) -> (u64, Bytes, f64) {
    const MAMBA_FULL_MEMORY_RATIO: f64 = 0.9;
    const RUNNING_PER_SLOT: u64 = 5;
    let linear = g.linear_layers(t.layers);
    let per_request = g
        .serving_state_bytes(tp, 2, 4)
        .saturating_mul(linear)
        .max(1);
    let share =
        (budget.0 as f64 * MAMBA_FULL_MEMORY_RATIO / (1.0 + MAMBA_FULL_MEMORY_RATIO)) as u64;
    let slots = share.saturating_sub(per_request) / per_request;
    let states = (slots + 1).saturating_mul(per_request);
    let cell = kv_token_layer.saturating_mul(t.layers - linear);
    let tokens = budget
        .0
        .saturating_sub(states)
        .checked_div(cell)
        .unwrap_or(0);
    let bytes = Bytes(states) + Bytes::of(tokens, cell);
    (tokens, bytes, (slots / RUNNING_PER_SLOT) as f64)
}

/// The sliding-window split SGLang pools separately: a hybrid model that
/// `is_hybrid_swa_model` lists (`python/sglang/srt/configs/model_config.py`;
/// of the families vramfit reads `GptOssForCausalLM`, told here as a
/// sliding-window mixture of experts, Gemma 4, and Llama 4 as released,
/// `Llama4ForConditionalGeneration`, its chunked layers pooled as sliding
/// ones of the chunk; a text-only `Llama4ForCausalLM` checkpoint would get
/// a full cache, not told apart here). Gemma 2 and 3 keep a full cache.
pub fn sglang_swa(t: &crate::models::TransformerSpec) -> Option<Hybrid> {
    Hybrid::of(t).filter(|h| t.moe.is_some() || t.gemma4.is_some() || h.chunked)
}

/// SGLang's token pools from its budget: `max_total_num_tokens = rest //
/// cell_size` over every layer; a hybrid sliding-window model that SGLang
/// runs with its SWA pool ([`sglang_swa`]) splits those tokens × layers so that the sliding layers hold
/// `swa_full_tokens_ratio` (default 0.8) times the full layers' tokens
/// (`ModelRunner.set_num_token_hybrid`:
/// `full = int(total / (ratio × swa_layers + full_layers))`). Returns the
/// full layers' tokens (what bounds a request) and the pools' bytes.
pub fn sglang_kv(
    t: &crate::models::TransformerSpec,
    budget: Bytes,
    kv_token_layer: u64,
) -> (u64, Bytes) {
    let cell = kv_token_layer * t.layers;
    let tokens = budget.0.checked_div(cell).unwrap_or(0);
    let Some(hy) = sglang_swa(t) else {
        return (tokens, Bytes::of(tokens, cell));
    };
    const SWA_FULL_TOKENS_RATIO: f64 = 0.8;
    let total = (tokens * t.layers) as f64;
    let full = (total / (SWA_FULL_TOKENS_RATIO * hy.sliding as f64 + hy.full as f64)) as u64;
    let swa = (full as f64 * SWA_FULL_TOKENS_RATIO) as u64;
    let bytes = Bytes::of(full * hy.full + swa * hy.sliding, kv_token_layer);
    (full, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::GIB;

    #[test]
    fn vllm_batches_by_the_gpu_as_its_engine_arguments_do() {
        let of = |id: &str| crate::gpus::gpu_preset(id).ok().map(|g| vllm_defaults(&g));
        assert_eq!(of("rtx-4090"), Some((2048, 256)));
        // An 80 GB A100 keeps the small defaults (vllm-project/vllm#17885).
        assert_eq!(of("a100-80gb"), Some((2048, 256)));
        assert_eq!(of("h100-sxm"), Some((8192, 1024)));
        assert_eq!(of("h200"), Some((8192, 1024)));
        assert_eq!(of("b200"), Some((16_384, 1024)));
        assert_eq!(of("mi300x"), Some((16_384, 1024)));
    }

    #[test]
    fn the_block_count_of_vllm_issue_10517_follows_from_its_budget() {
        // "kv_cache_size=3.81GiB ... # GPU blocks: 1952" (V0, blocks of 16):
        // Llama-3.1-8B's page is 16 tokens × 8 heads × 128 × 2 (K, V) × 2
        // bytes = 64 KiB a layer, 2 MiB over 32 layers.
        let budget = Bytes((3.81 * GIB as f64) as u64);
        assert_eq!(vllm_blocks_of(budget, 32, 8 * 128 * 2 * 2, 16), 1950);
        assert!((vllm_max_concurrency_of(1952, 20_000, 16) - 1.5616).abs() < 1e-9);
        // 0.34's blocks of 64 hold the same tokens, a quarter as many blocks.
        assert_eq!(vllm_blocks(budget, 32, 8 * 128 * 2 * 2), 487);
    }
}
