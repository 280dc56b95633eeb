//! What transformers' SDPA path is given besides q, k and v
//! (`--attention-mask`): with no mask on CUDA and PyTorch 2.5 or later,
//! grouped key–value heads go to the kernel as they are (`enable_gqa`), not
//! expanded by `repeat_kv`; with a padding mask they are expanded, and each
//! layer's `scaled_dot_product_attention` converts the boolean mask to the
//! query's dtype, which the memory-efficient kernel saves for backward. The
//! H200 measured both (memory_truth.py's runs with and without `_padmask`):
//! the small Llama's allocated peak reads −0.2 % in each.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::config::{AttentionMask, CheckpointMode, Mode};
use vramfit_core::dtype::DType;
use vramfit_core::states::allocation;
use vramfit_core::{
    Attention, Checkpointing, Estimate, ModelSpec, Optimizer, Overheads, Precision, TrainConfig,
    estimate, model_preset,
};

const BATCH: u64 = 4;
const SEQ: u64 = 512;

fn config(attention_mask: AttentionMask) -> TrainConfig {
    TrainConfig {
        batch: BATCH,
        seq: SEQ,
        precision: Precision::AmpBf16,
        optimizer: Optimizer::AdamW,
        attention: Attention::Sdpa,
        attention_mask,
        ..TrainConfig::default()
    }
}

fn run(id: &str, cfg: &TrainConfig) -> Estimate {
    let spec = model_preset(id).unwrap().spec;
    estimate(&spec, cfg, &Overheads::default(), None).unwrap()
}

fn layers(id: &str) -> u64 {
    let ModelSpec::Transformer(t) = model_preset(id).unwrap().spec else {
        panic!("{id} is a transformer")
    };
    t.layers
}

/// Every layer keeps its own bf16 copy of the `[batch, 1, seq, seq]` mask
/// until its backward, so when backward starts all of them are alive; the
/// boolean mask itself is gone by then (the model's body has returned).
#[test]
fn a_padding_mask_costs_one_converted_mask_per_layer() {
    let bias = allocation(BATCH * SEQ * SEQ, DType::Bf16).0;
    let bool_mask = allocation(BATCH * SEQ * SEQ, DType::U8).0;
    for id in ["gpt2", "bert-base"] {
        let none = run(id, &config(AttentionMask::Expanded));
        let padded = run(id, &config(AttentionMask::Padding));
        let grew = padded.peak_allocated_bytes.0 - none.peak_allocated_bytes.0;
        let least = layers(id) * bias;
        assert!(
            (least..=least + bool_mask).contains(&grew),
            "{id}: +{grew} bytes with the mask, {least} for the converted masks"
        );
    }
}

/// Without grouped heads (GPT-2, BERT) there is nothing to expand: no mask
/// and the CPU reference's path are the same step.
#[test]
fn enable_gqa_changes_nothing_without_grouped_heads() {
    for id in ["gpt2", "bert-base"] {
        assert_eq!(
            run(id, &config(AttentionMask::Expanded)).peak_allocated_bytes,
            run(id, &config(AttentionMask::None)).peak_allocated_bytes,
            "{id}"
        );
    }
}

/// With grouped heads, `enable_gqa` saves the grouped k and v instead of
/// the expanded copies: each layer keeps (heads − kv heads) × head_dim × 2
/// fewer elements per token, less one layer's transient pair at most (the
/// flash backward's expanded gradients).
#[test]
fn enable_gqa_saves_the_grouped_keys_and_values() {
    for id in ["llama-tiny", "qwen3-0.6b", "smollm2-135m"] {
        let ModelSpec::Transformer(t) = model_preset(id).unwrap().spec else {
            panic!("{id} is a transformer")
        };
        assert!(t.kv_heads < t.heads, "{id} groups its heads");
        let expanded = run(id, &config(AttentionMask::Expanded));
        let native = run(id, &config(AttentionMask::None));
        let per_layer = 2 * allocation(
            BATCH * SEQ * (t.heads - t.kv_heads) * t.head_dim,
            DType::Bf16,
        )
        .0;
        let saved = expanded.peak_allocated_bytes.0 - native.peak_allocated_bytes.0;
        let expanded_pair = 2 * allocation(BATCH * SEQ * t.heads * t.head_dim, DType::Bf16).0;
        assert!(
            saved + expanded_pair >= t.layers * per_layer && saved <= t.layers * per_layer,
            "{id}: {saved} bytes fewer, {} per layer over {} layers",
            per_layer,
            t.layers
        );
    }
}

/// Eager attention always expands and adds its own mask; flash-attn reads
/// grouped heads; inference and checkpointed layers follow the same kernel.
/// The setting only moves SDPA in training.
#[test]
fn only_sdpa_in_training_reads_the_setting() {
    for id in ["gpt2", "llama-tiny"] {
        for attention in [Attention::Eager, Attention::Flash] {
            let at = |m| {
                run(
                    id,
                    &TrainConfig {
                        attention,
                        ..config(m)
                    },
                )
                .peak_allocated_bytes
            };
            let base = at(AttentionMask::Expanded);
            assert_eq!(base, at(AttentionMask::None), "{id} {attention:?}");
            assert_eq!(base, at(AttentionMask::Padding), "{id} {attention:?}");
        }
        let infer = |m| {
            run(
                id,
                &TrainConfig {
                    mode: Mode::Inference,
                    ..config(m)
                },
            )
            .peak_allocated_bytes
        };
        assert_eq!(
            infer(AttentionMask::Expanded),
            infer(AttentionMask::Padding)
        );
        assert_eq!(infer(AttentionMask::Expanded), infer(AttentionMask::None));
    }
}

/// Under full checkpointing each layer converts the mask again when it is
/// recomputed, so the converted masks never pile up: the cost is about one
/// layer's, not every layer's.
#[test]
fn checkpointed_layers_hold_one_converted_mask_at_a_time() {
    let full = |m| TrainConfig {
        checkpointing: Checkpointing::Mode(CheckpointMode::Full),
        ..config(m)
    };
    let bias = allocation(BATCH * SEQ * SEQ, DType::Bf16).0;
    let none = run("gpt2", &full(AttentionMask::Expanded));
    let padded = run("gpt2", &full(AttentionMask::Padding));
    let grew = padded.peak_allocated_bytes.0 - none.peak_allocated_bytes.0;
    assert!(
        (1..=3 * bias).contains(&grew),
        "+{grew} bytes under checkpointing, one converted mask is {bias}"
    );
}

fn run_spec(spec: &ModelSpec, cfg: &TrainConfig) -> u64 {
    estimate(spec, cfg, &Overheads::default(), None)
        .unwrap()
        .peak_allocated_bytes
        .0
}

fn transformer(id: &str) -> vramfit_core::models::TransformerSpec {
    let ModelSpec::Transformer(t) = model_preset(id).unwrap().spec else {
        panic!("{id} is a transformer")
    };
    t
}

/// A query made by a sliced rotary embedding's `torch.cat` (GPT-NeoX,
/// Phi-3) is laid out `[batch, heads, seq, dim]`; on CUDA the kernel's
/// output follows it, `transpose(1, 2).contiguous()` copies it, and the
/// output projection saves the copy: one output more per layer at the peak
/// (eight 32 MiB copies in the H200's Phi-3 snapshot). The CPU reference's
/// path (`expanded`) keeps a view. A Llama query (elementwise rotary on the
/// projection's transposed view) copies nothing.
#[test]
fn a_concatenated_query_leaves_a_copied_output_per_layer_on_cuda() {
    // Phi-3 as the H200 ran it (a 3.8B model's peak is its optimizer step).
    let phi3 = include_str!("../../../tests/reference/real_gpu/measured/configs/phi3-small.json");
    let ModelSpec::Transformer(phi3) = vramfit_core::hf::import(phi3).unwrap().spec else {
        panic!("Phi-3 is a transformer")
    };
    // As many key-value heads as heads, so that `enable_gqa` moves nothing.
    let mut phi3 = phi3;
    phi3.kv_heads = phi3.heads;
    for (id, t) in [
        ("pythia-160m", transformer("pythia-160m")),
        ("phi3-small", phi3),
    ] {
        let out = allocation(BATCH * SEQ * t.heads * t.head_dim, DType::Bf16).0;
        let spec = ModelSpec::Transformer(t.clone());
        let cpu = run_spec(&spec, &config(AttentionMask::Expanded));
        let cuda = run_spec(&spec, &config(AttentionMask::None));
        let grew = cuda - cpu;
        assert!(
            (t.layers - 1) * out <= grew && grew <= (t.layers + 1) * out,
            "{id}: +{grew} bytes on CUDA, one output is {out} over {} layers",
            t.layers
        );
    }
    let llama = model_preset("llama-tiny").unwrap().spec;
    let gqa = transformer("llama-tiny");
    let cpu = run_spec(&llama, &config(AttentionMask::Expanded));
    let cuda = run_spec(&llama, &config(AttentionMask::None));
    assert!(
        cuda <= cpu,
        "llama-tiny: {cuda} on CUDA, {cpu} as the CPU reference"
    );
    assert!(gqa.kv_heads < gqa.heads);
}

/// Sliding-window layers get a mask from `masking_utils` once the sequence
/// reaches the window, and SDPA converts and saves it in each of them; below
/// the window the kernel's causal flag stands in for it. Gemma 3 1B slides
/// in five of every six layers over 512 tokens.
#[test]
fn sliding_layers_convert_their_mask_once_the_sequence_reaches_the_window() {
    let t = transformer("gemma-3-1b");
    let w = t.block.sliding.unwrap();
    assert_eq!(w.window, SEQ, "the test's sequence is the window");
    let sliding = (0..t.layers).filter(|&i| w.slides(i)).count() as u64;
    let bias = allocation(BATCH * SEQ * SEQ, DType::Bf16).0;
    let mut wider = t.clone();
    wider.block.sliding.as_mut().unwrap().window = SEQ + 1;
    let (at, below) = (
        ModelSpec::Transformer(t.clone()),
        ModelSpec::Transformer(wider),
    );
    for mask in [AttentionMask::Expanded, AttentionMask::None] {
        let grew = run_spec(&at, &config(mask)) - run_spec(&below, &config(mask));
        // Without a mask (`none`) the grouped heads went to the kernel as
        // they are; with one, `repeat_kv` expands them again — with Gemma 3
        // 1B's one key-value head a view, but autocast's cast of the rotated
        // fp32 key copies every head in place of the one (the values stay a view).
        assert_eq!(t.kv_heads, 1);
        let expanded = if mask == AttentionMask::None {
            allocation(
                BATCH * SEQ * (t.heads - t.kv_heads) * t.head_dim,
                DType::Bf16,
            )
            .0
        } else {
            0
        };
        let least = sliding * (bias + expanded);
        assert!(
            least <= grew && grew <= least + 2 * bias,
            "{mask:?}: +{grew} bytes, {sliding} sliding layers at {bias} + {expanded} each"
        );
    }
}

/// transformers 5's latent attention updates the training cache with the
/// compressed latents before `expand_kv`, so the cache's copies are the
/// latent and the shared rotary key, not every head's key and value.
#[test]
fn latent_attention_caches_the_compressed_latents_in_training() {
    use vramfit_core::config::TrainingCache;
    let t = transformer("deepseek-v2-lite");
    let mla = t.mla.clone().unwrap();
    let spec = ModelSpec::Transformer(t.clone());
    let at = |training_cache| {
        run_spec(
            &spec,
            &TrainConfig {
                training_cache,
                ..config(AttentionMask::None)
            },
        )
    };
    let (off, copies) = (at(TrainingCache::Off), at(TrainingCache::Copies));
    let latents = t.layers
        * allocation(
            BATCH * SEQ * (mla.kv_lora_rank + mla.qk_rope_head_dim),
            DType::Bf16,
        )
        .0;
    assert!(
        copies.abs_diff(off) <= latents,
        "{copies} with the cache, {off} without: more apart than the latents' {latents}"
    );
}
