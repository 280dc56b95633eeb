//! Inputs the fuzz targets in `fuzz/` found (minimized, inlined as the spec
//! or text they decode to), each named after what it guards. They must stay
//! errors with a message, or estimates, and stay fast. SECURITY.md lists the
//! runs that found them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use std::time::Instant;
use vramfit_core::models::{Arch, Head, MAX_LAYERS, ResNetSpec, TransformerSpec};
use vramfit_core::{Error, ModelSpec, Overheads, TrainConfig, estimate, gpu_preset, hf};

/// `estimate_ir`, first minutes: a ResNet with 2^64 − 1 blocks per stage
/// looped (practically) forever while lowering. Blocks are now capped.
#[test]
fn resnet_with_unbounded_blocks_is_refused_at_once() {
    let spec = ModelSpec::ResNet(ResNetSpec {
        stages: [u64::MAX, 3, 1, 2],
        bottleneck: false,
        classes: 1,
    });
    let cfg = TrainConfig {
        batch: 1,
        image: 64,
        ..TrainConfig::default()
    };
    match estimate(&spec, &cfg, &Overheads::default(), None) {
        Err(Error::TooLarge { what, limit, .. }) => {
            assert!(what.contains("ResNet residual blocks"), "{what}");
            assert_eq!(limit, MAX_LAYERS.to_string());
        }
        other => panic!("{other:?}"),
    }
}

/// `estimate_ir` (slow unit, 2 s under the fuzzer's sanitizers): a 557-block
/// ResNet on 1-pixel images (every feature map stays 1×1, so it lowers) took
/// ~0.2 s when found, ~30 ms in release now (printed). Depth is capped at [`MAX_LAYERS`] blocks; the
/// deepest accepted ResNet on 1-pixel images estimates on a GPU.
#[test]
fn deep_resnet_on_one_pixel_images_is_capped_and_the_cap_estimates() {
    let deep = ModelSpec::ResNet(ResNetSpec {
        stages: [557, 1, 1, 1],
        bottleneck: false,
        classes: 1,
    });
    let cfg = TrainConfig {
        batch: 1,
        image: 1,
        optimizer: vramfit_core::Optimizer::Sgd,
        ..TrainConfig::default()
    };
    assert!(matches!(
        estimate(&deep, &cfg, &Overheads::default(), None),
        Err(Error::TooLarge { .. })
    ));
    let capped = ModelSpec::ResNet(ResNetSpec {
        stages: [MAX_LAYERS - 3, 1, 1, 1],
        bottleneck: false,
        classes: 1,
    });
    let gpu = gpu_preset("gtx-1060-6gb").unwrap();
    let start = Instant::now();
    let e = estimate(&capped, &cfg, &Overheads::for_gpu(&gpu), Some(&gpu)).unwrap();
    println!(
        "{:?} for the deepest ResNet, max batch {}",
        start.elapsed(),
        e.gpu.unwrap().max_batch
    );
}

/// `hf_import` (timeout under load; 0.3 s when run alone under the fuzzer's
/// sanitizers): a 91-layer Mistral-like config whose 65 heads do not divide
/// the hidden size. It imports (head_dim = 1192 / 65 = 18, as transformers
/// computes it) and estimates at batch 1.
#[test]
fn deep_config_with_uneven_heads_imports_and_estimates() {
    let json = r#"{"model_type":"mistral","vocab_size":37131,"hidden_size":1192,"num_hidden_layers":91,"num_attention_heads":65,"num_key_value_head\u0000s":8,"intermediate_size":14336}"#;
    let m = hf::import(json).unwrap();
    let cfg = TrainConfig {
        batch: 1,
        seq: 16,
        ..TrainConfig::default()
    };
    let start = Instant::now();
    let e = estimate(&m.spec, &cfg, &Overheads::default(), None).unwrap();
    println!(
        "{:?} for 91 layers, {} parameters",
        start.elapsed(),
        e.parameter_count
    );
}

/// `hf_import`: duplicate keys take the last value (serde_json), as Python's
/// `json.load` does, and out-of-range dropout is refused.
#[test]
fn duplicate_keys_take_the_last_value_and_dropout_is_checked() {
    let json =
        r#"{"model_type":"gpt2","vocab_size":100,"n_embd":64,"n_layer":1,"n_head":4,"n_embd":32}"#;
    let m = hf::import(json).unwrap();
    let ModelSpec::Transformer(t) = m.spec else {
        panic!("not a transformer")
    };
    assert_eq!(t.hidden, 32);
    let json = r#"{"model_type":"gpt2","vocab_size":100,"n_embd":64,"n_layer":1,"n_head":4,"resid_pdrop":7}"#;
    let msg = hf::import(json).unwrap_err().to_string();
    assert!(
        msg.contains("dropout") && msg.contains("between 0 and 1"),
        "{msg}"
    );
}

/// `estimate_ir`, crash (`attempt to add with overflow` in
/// `simulate/shard.rs`): a BERT 3.4·10^9 wide. Its hidden × hidden
/// projections have 1.2·10^19 elements, so their bytes saturated and the
/// per-block sum overflowed. Such projections are now refused with the limit
/// (here the first check that trips: q, k and v, 3 × hidden² elements).
#[test]
fn bert_with_overflowing_projections_is_refused_with_the_limit() {
    let spec = ModelSpec::Transformer(TransformerSpec {
        arch: Arch::Bert,
        vocab: 3,
        hidden: 3_435_973_836,
        layers: 1,
        // Split into heads as BERT requires (the fuzzer's spec had 3 heads
        // of 1, refused today before any size is computed).
        heads: 4,
        kv_heads: 4,
        head_dim: 858_993_459,
        intermediate: 1,
        max_positions: 1,
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
        hidden_dropout: 1.0,
        attention_dropout: 1.0,
        head: Head::CausalLm,
        fused_gelu: false,
        block: Default::default(),
    });
    let cfg = TrainConfig {
        batch: 1,
        seq: 1,
        image: 1,
        optimizer: vramfit_core::Optimizer::Sgd,
        lora_rank: 1,
        ..TrainConfig::default()
    };
    let gpu = gpu_preset("gtx-1060-6gb").unwrap();
    match estimate(&spec, &cfg, &Overheads::for_gpu(&gpu), Some(&gpu)) {
        Err(Error::TooLarge { what, limit, .. }) => assert!(
            what.contains("an attention projection") && limit == "2^56 elements",
            "{what}"
        ),
        other => panic!("{other:?}"),
    }
}

/// Found while reading the `hf_import` corpus: BERT and GPT-2 configs whose
/// heads do not divide the hidden size are refused, as `transformers` does.
#[test]
fn bert_and_gpt2_heads_must_divide_the_hidden_size() {
    let bert = r#"{"model_type":"bert","vocab_size":100,"hidden_size":63,"num_hidden_layers":1,"num_attention_heads":4,"intermediate_size":8}"#;
    let msg = hf::import(bert).unwrap_err().to_string();
    assert!(
        msg.contains("hidden_size (63)") && msg.contains("num_attention_heads (4)"),
        "{msg}"
    );
    let gpt2 = r#"{"model_type":"gpt2","vocab_size":100,"n_embd":10,"n_layer":1,"n_head":4}"#;
    let msg = hf::import(gpt2).unwrap_err().to_string();
    assert!(
        msg.contains("n_embd (10)") && msg.contains("n_head (4)"),
        "{msg}"
    );
}

/// Found by probing the CLI beside the `cli_args` target: `--zero-bucket
/// 18446744073709551615` overflowed `2 × bucket bytes` in the ZeRO-3
/// simulation (a panic in debug builds, a wrapped number in release). The
/// bucket size is now validated like the share link's `zb` key.
#[test]
fn zero_bucket_beyond_two_to_the_forty_elements_is_refused() {
    let spec = vramfit_core::model_preset("gpt2").unwrap().spec;
    for zero_bucket in [0, (1 << 40) + 1, u64::MAX] {
        let parallel = vramfit_core::parallel::Parallel {
            strategy: vramfit_core::parallel::Strategy::Zero3,
            gpus_per_node: 2,
            zero_bucket,
            ..Default::default()
        };
        let cfg = TrainConfig {
            batch: 1,
            seq: 64,
            parallel,
            ..TrainConfig::default()
        };
        match estimate(&spec, &cfg, &Overheads::default(), None) {
            Err(Error::OutOfRange { field, max, .. }) => {
                assert_eq!((field, max), ("zero-bucket", 1 << 40))
            }
            other => panic!("{zero_bucket}: {other:?}"),
        }
    }
}

/// `estimate_ir`, last round: pruning a transformer whose MLP width (or
/// key/value heads) is 0 panicked in `clamp(1, 0)` before the size checks
/// could refuse the spec. Now such a spec is left to the size checks.
#[test]
fn pruning_a_zero_width_transformer_is_refused_not_a_panic() {
    let Ok(ModelSpec::Transformer(t)) = vramfit_core::model_preset("llama-tiny").map(|p| p.spec)
    else {
        panic!("llama-tiny")
    };
    for spec in [
        TransformerSpec {
            intermediate: 0,
            ..t.clone()
        },
        TransformerSpec {
            kv_heads: 0,
            ..t.clone()
        },
    ] {
        let cfg = TrainConfig {
            keep_mlp: 0.5,
            keep_attention: 0.5,
            seq: 64,
            ..TrainConfig::default()
        };
        // Refused or estimated as given, but never a panic.
        let _ = estimate(
            &ModelSpec::Transformer(spec),
            &cfg,
            &Overheads::default(),
            None,
        );
    }
}

/// `estimate_ir`, this round: a BERT spec (built directly, not imported) with
/// 16 515 071 heads of 65 536 but `hidden_size` 3 lowered its q, k and v as
/// 3 × 3 projections and the attention output as 3 × 10^12 elements per
/// sample, whose MLP activation overflowed (a panic in debug builds, a wrong
/// number in release). BERT and GPT-2 specs must now split the hidden size
/// into the heads exactly, as `transformers` requires.
#[test]
fn bert_spec_whose_heads_do_not_split_the_hidden_size_is_refused() {
    let Ok(ModelSpec::Transformer(t)) = vramfit_core::model_preset("bert-base").map(|p| p.spec)
    else {
        panic!("bert-base")
    };
    let crash = TransformerSpec {
        hidden: 3,
        layers: 3,
        heads: 16_515_071,
        kv_heads: 16_515_071,
        head_dim: 65_536,
        intermediate: 8_322_942,
        ..t.clone()
    };
    let skewed = TransformerSpec {
        head_dim: 32,
        ..t.clone()
    };
    let cfg = TrainConfig {
        batch: 1,
        seq: 1,
        ..TrainConfig::default()
    };
    let msg = |spec: TransformerSpec| match estimate(
        &ModelSpec::Transformer(spec),
        &cfg,
        &Overheads::default(),
        None,
    ) {
        Err(Error::InvalidModel(m)) => m,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        msg(crash),
        "hidden_size (3) is not a multiple of num_attention_heads (16515071)"
    );
    assert_eq!(
        msg(skewed),
        "head_dim (32) must be hidden_size / num_attention_heads = 64 for BERT and GPT-2"
    );
}

/// What the same fix changed for pruning: BERT's query, key and value
/// project to `all_head_size` = heads × head_dim, which head pruning shrinks
/// (`BertAttention.prune_heads` prunes q, k, v by rows and the output dense by
/// columns). Keeping half of bert-base's 12 heads removes, per layer,
/// 3 × (768 × 384 + 384) + 768 × 384 = 1 180 800 parameters.
#[test]
fn pruned_bert_heads_shrink_query_key_value_and_output() {
    let spec = vramfit_core::model_preset("bert-base").unwrap().spec;
    let cfg = TrainConfig {
        batch: 2,
        seq: 128,
        ..TrainConfig::default()
    };
    let full = estimate(&spec, &cfg, &Overheads::default(), None).unwrap();
    let half = estimate(
        &spec,
        &TrainConfig {
            keep_attention: 0.5,
            ..cfg
        },
        &Overheads::default(),
        None,
    )
    .unwrap();
    assert_eq!(full.parameter_count - half.parameter_count, 12 * 1_180_800);
    assert!(half.peak_allocated_bytes < full.peak_allocated_bytes);
}

/// `estimate_ir`, this round (slow unit, 1.2 s under the sanitizers): a
/// 114-layer Llama, hidden 102, in inference on a 12 GB GPU. Natively it took
/// 73 ms in release, nearly all in the longest-context search, which lowered
/// and simulated the model again for each of ~40 context lengths. The tape
/// now reads the KV cache's size at replay, and the search is the
/// largest-batch search's (allocated-memory bound, then secant steps):
/// ~18 ms, printed here.
#[test]
fn deep_inference_longest_context_search_replays_one_tape() {
    let spec = ModelSpec::Transformer(TransformerSpec {
        arch: Arch::Llama,
        vocab: 772,
        hidden: 102,
        layers: 114,
        heads: 1,
        kv_heads: 1,
        head_dim: 6,
        intermediate: 370,
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
        qkv_bias: true,
        mlp_bias: true,
        hidden_dropout: 1.0,
        attention_dropout: 1.0,
        head: Head::CausalLm,
        fused_gelu: false,
        block: Default::default(),
    });
    let cfg = TrainConfig {
        batch: 1,
        seq: 20,
        precision: vramfit_core::Precision::AmpFp16,
        grad_accum: 4,
        mode: vramfit_core::config::Mode::Inference,
        ..TrainConfig::default()
    };
    let gpu = gpu_preset("rtx-3060-12gb").unwrap();
    let o = Overheads::for_gpu(&gpu);
    let start = Instant::now();
    let e = estimate(&spec, &cfg, &o, Some(&gpu)).unwrap();
    let fit = e.gpu.unwrap();
    println!(
        "{:?} for a 114-layer decoder in inference: max batch {}, longest context {:?}",
        start.elapsed(),
        fit.max_batch,
        fit.max_context
    );
    let longest = fit.max_context.unwrap();
    let used = |context: u64| {
        estimate(&spec, &TrainConfig { context, ..cfg }, &o, None)
            .unwrap()
            .device_used_bytes
    };
    assert!(
        used(longest) <= fit.usable_bytes && used(longest + 1) > fit.usable_bytes,
        "{longest}"
    );
}

/// `estimate_ir`, this round (slow unit, 0.9 s under the sanitizers): a
/// 109-layer Llama, hidden 2, QLoRA with full checkpointing, 3 accumulation
/// steps and 8-bit AdamW on a 192 GB GPU: 8 624 ops, 10^5 timeline moments
/// and a largest batch of 112 190, found by replaying a 260 000-event tape.
/// It took 60–75 ms natively; printed here (see SECURITY.md).
#[test]
fn deep_qlora_with_a_huge_largest_batch_estimates_exactly() {
    let spec = ModelSpec::Transformer(TransformerSpec {
        arch: Arch::Llama,
        vocab: 384,
        hidden: 2,
        layers: 109,
        heads: 5,
        kv_heads: 5,
        head_dim: 27,
        intermediate: 20_178,
        max_positions: 0,
        context_limit: 0,
        moe: None,
        mla: None,
        linear: None,
        gemma4: None,
        encoder: None,
        single_mixer: None,
        type_vocab: 0,
        tie_embeddings: true,
        qkv_bias: true,
        mlp_bias: false,
        hidden_dropout: 1.0,
        attention_dropout: 0.06,
        head: Head::CausalLm,
        fused_gelu: true,
        block: Default::default(),
    });
    let cfg = TrainConfig {
        batch: 1,
        seq: 5,
        precision: vramfit_core::Precision::Fp16,
        optimizer: vramfit_core::Optimizer::AdamW8bit,
        checkpointing: vramfit_core::Checkpointing::Mode(vramfit_core::CheckpointMode::Full),
        grad_accum: 3,
        mode: vramfit_core::config::Mode::FinetuneQlora,
        lora_rank: 11,
        frozen_blocks: 2,
        ..TrainConfig::default()
    };
    let gpu = gpu_preset("mi300x").unwrap();
    let o = Overheads::for_gpu(&gpu);
    estimate(&spec, &cfg, &o, Some(&gpu)).unwrap();
    let start = Instant::now();
    let e = estimate(&spec, &cfg, &o, Some(&gpu)).unwrap();
    let fit = e.gpu.unwrap();
    println!(
        "{:?} for a 109-layer QLoRA decoder: max batch {}, {} moments",
        start.elapsed(),
        fit.max_batch,
        e.timeline.len()
    );
    let fits = |batch: u64| {
        estimate(&spec, &TrainConfig { batch, ..cfg }, &o, Some(&gpu))
            .unwrap()
            .gpu
            .unwrap()
            .fits
    };
    assert!(
        fits(fit.max_batch) && !fits(fit.max_batch + 1),
        "{}",
        fit.max_batch
    );
}

/// `estimate_ir`, last round (slow unit, 2.9 s under the sanitizers; this is
/// its shape, rebuilt from the report): a 94-layer QLoRA Llama (hidden 94,
/// MLP width 1, heads and MLP pruned) with full checkpointing and 3
/// accumulation steps on an 11 GB GPU, whose largest batch is in the
/// hundreds of thousands. Device memory is a staircase in the batch there
/// (reserved memory grows by whole segments), which stalled the
/// largest-batch search's secant steps: ~14 full replays, 60 ms natively
/// (150–220 ms for the original input). Batches that do not fit now stop
/// at their overflow and flat stretches are split, not crept along: ~32 ms,
/// printed here.
#[test]
fn deep_qlora_whose_memory_is_a_staircase_estimates_exactly() {
    let spec = ModelSpec::Transformer(TransformerSpec {
        arch: Arch::Llama,
        vocab: 1000,
        hidden: 94,
        layers: 94,
        heads: 2,
        kv_heads: 2,
        head_dim: 47,
        intermediate: 1,
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
    });
    let cfg = TrainConfig {
        batch: 663,
        seq: 1,
        precision: vramfit_core::Precision::Fp32,
        optimizer: vramfit_core::Optimizer::Adam,
        checkpointing: vramfit_core::Checkpointing::Mode(vramfit_core::CheckpointMode::Full),
        attention: vramfit_core::config::Attention::Flash,
        grad_accum: 3,
        mode: vramfit_core::config::Mode::FinetuneQlora,
        lora_rank: 11,
        context: 7436,
        keep_attention: 0.58,
        keep_mlp: 0.01,
        ..TrainConfig::default()
    };
    let gpu = gpu_preset("gtx-1080-ti").unwrap();
    let o = Overheads::for_gpu(&gpu);
    estimate(&spec, &cfg, &o, Some(&gpu)).unwrap();
    let start = Instant::now();
    let e = estimate(&spec, &cfg, &o, Some(&gpu)).unwrap();
    let fit = e.gpu.unwrap();
    println!(
        "{:?} for a 94-layer QLoRA decoder on an 11 GB GPU: max batch {}",
        start.elapsed(),
        fit.max_batch
    );
    let fits = |batch: u64| {
        estimate(&spec, &TrainConfig { batch, ..cfg }, &o, Some(&gpu))
            .unwrap()
            .gpu
            .unwrap()
            .fits
    };
    assert!(
        fits(fit.max_batch) && !fits(fit.max_batch + 1),
        "{}",
        fit.max_batch
    );
}
