//! transformers' key–value cache in a training forward (`--training-cache`):
//! transformers 5 builds a `DynamicCache` whenever `use_cache` is on, and its
//! `DynamicLayer.update` concatenates each layer's keys and values onto
//! empty tensors, so attention reads (and saves) copies, which the output
//! keeps. The H200 measured GPT-2's cost (memory_truth.py's `_nocache` runs):
//! 556 and 575 MiB of peak allocated at batch 16 in bf16 and batch 8 in fp32.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::config::{CheckpointMode, Mode, TrainingCache};
use vramfit_core::dtype::DType;
use vramfit_core::states::allocation;
use vramfit_core::{
    Attention, Checkpointing, Estimate, ModelSpec, Optimizer, Overheads, Precision, TrainConfig,
    estimate, model_preset,
};

fn config(training_cache: TrainingCache) -> TrainConfig {
    TrainConfig {
        batch: 8,
        seq: 512,
        precision: Precision::Fp32,
        optimizer: Optimizer::AdamW,
        attention: Attention::Sdpa,
        training_cache,
        ..TrainConfig::default()
    }
}

fn run(id: &str, cfg: &TrainConfig) -> Estimate {
    let spec = model_preset(id).unwrap().spec;
    estimate(&spec, cfg, &Overheads::default(), None).unwrap()
}

/// GPT-2's key and value are views of one fused `c_attn` output, which the
/// query (a view too, saved by attention) keeps alive: the copies come on
/// top, all of them alive when backward starts.
#[test]
fn gpt2_keeps_a_copy_of_every_layers_keys_and_values() {
    let off = run("gpt2", &config(TrainingCache::Off));
    let on = run("gpt2", &config(TrainingCache::Copies));
    let key = allocation(8 * 512 * 768, DType::F32).0;
    assert_eq!(
        on.peak_allocated_bytes.0 - off.peak_allocated_bytes.0,
        2 * 12 * key,
        "off {}, on {}",
        off.peak_allocated_bytes.0,
        on.peak_allocated_bytes.0
    );
}

/// In a Llama-layout model the key after the rotary embedding and the value
/// projection's output are tensors of their own: the copies take their
/// places, and the peak moves by at most one layer's transient pair.
#[test]
fn separate_projections_trade_their_keys_and_values_for_the_copies() {
    for id in ["llama-tiny", "qwen3-0.6b", "smollm2-135m"] {
        let ModelSpec::Transformer(t) = model_preset(id).unwrap().spec else {
            panic!("{id} is a transformer")
        };
        let off = run(id, &config(TrainingCache::Off));
        let on = run(id, &config(TrainingCache::Copies));
        let pair = 2 * allocation(8 * 512 * t.kv_heads * t.head_dim, DType::F32).0;
        let grew = on
            .peak_allocated_bytes
            .0
            .abs_diff(off.peak_allocated_bytes.0);
        assert!(
            grew <= pair,
            "{id}: off {}, on {} (one layer's keys and values: {pair})",
            off.peak_allocated_bytes.0,
            on.peak_allocated_bytes.0
        );
    }
}

/// transformers turns `use_cache` off when it checkpoints, inference has a
/// KV cache of its own, and an encoder has no cache: nothing changes.
#[test]
fn no_copies_where_transformers_makes_no_training_cache() {
    let ckpt = |c| TrainConfig {
        checkpointing: Checkpointing::Mode(CheckpointMode::Full),
        ..config(c)
    };
    let infer = |c| TrainConfig {
        mode: Mode::Inference,
        ..config(c)
    };
    for (id, cfg) in [
        ("gpt2", &ckpt as &dyn Fn(TrainingCache) -> TrainConfig),
        ("gpt2", &infer),
        ("bert-base", &config),
    ] {
        assert_eq!(
            run(id, &cfg(TrainingCache::Off)).peak_allocated_bytes,
            run(id, &cfg(TrainingCache::Copies)).peak_allocated_bytes,
            "{id}"
        );
    }
}

/// The output that holds the cache is gone by the step's end: both
/// settings end the step with the same memory.
#[test]
fn the_cache_is_gone_when_the_step_ends() {
    for id in ["gpt2", "llama-tiny"] {
        let last = |e: &Estimate| e.timeline.last().unwrap().allocated_bytes.0;
        assert_eq!(
            last(&run(id, &config(TrainingCache::Off))),
            last(&run(id, &config(TrainingCache::Copies))),
            "{id}"
        );
    }
}
