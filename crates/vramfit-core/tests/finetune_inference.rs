//! LoRA / QLoRA fine-tuning and inference: adapter counts as PEFT reports
//! them, quantized storage, and a KV cache that respects GQA.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::config::{LoraBase, Mode, WeightFormat};
use vramfit_core::{Attention, Overheads, Precision, TrainConfig, estimate, model_preset};

fn run(model: &str, cfg: TrainConfig) -> vramfit_core::Estimate {
    let spec = model_preset(model).unwrap().spec;
    estimate(&spec, &cfg, &Overheads::default(), None).unwrap()
}

fn base(mode: Mode) -> TrainConfig {
    TrainConfig {
        mode,
        batch: 1,
        seq: 512,
        precision: Precision::Bf16,
        attention: Attention::Flash,
        ..TrainConfig::default()
    }
}

#[test]
fn lora_on_every_linear_matches_peft_counts() {
    // PEFT, LoraConfig(r=16, target_modules="all-linear") on Llama-2-7B prints
    // "trainable params: 39,976,960 || all params: 6,778,392,576".
    let e = run(
        "llama-2-7b",
        TrainConfig {
            lora_rank: 16,
            ..base(Mode::FinetuneLora)
        },
    );
    assert_eq!(e.trainable_parameter_count, 39_976_960);
    assert_eq!(e.parameter_count, 6_778_392_576);
    // Adapters are fp32: gradients and Adam state only for them.
    assert!(e.at_peak.optimizer_states.0 <= 2 * 39_976_960 * 4 + 512 * 2 * 7 * 32 * 2);
}

#[test]
fn qlora_stores_the_base_in_nf4() {
    let lora = run("llama-2-7b", base(Mode::FinetuneLora));
    let qlora = run("llama-2-7b", base(Mode::FinetuneQlora));
    // Block linear weights go from 2 bytes to ~0.52 bytes per weight.
    let ratio = qlora.at_peak.parameters.0 as f64 / lora.at_peak.parameters.0 as f64;
    assert!((0.25..0.35).contains(&ratio), "ratio {ratio}");
    assert_eq!(
        lora.trainable_parameter_count,
        qlora.trainable_parameter_count
    );
}

#[test]
fn lora_keeps_its_frozen_base_in_the_compute_type_under_amp() {
    // Llama-2-7B LoRA under amp-bf16: the base loaded in bf16 (as
    // `from_pretrained(torch_dtype=torch.bfloat16)` does), the adapters in
    // fp32 (PEFT's `autocast_adapter_dtype=True`).
    let cfg = TrainConfig {
        precision: Precision::AmpBf16,
        seq: 1024,
        ..base(Mode::FinetuneLora)
    };
    let (frozen, adapters) = (6_738_415_616u64, 39_976_960u64);
    let compute = run("llama-2-7b", cfg);
    assert_eq!(compute.parameter_count, frozen + adapters);
    assert_eq!(compute.at_peak.parameters.0, frozen * 2 + adapters * 4);
    // AdamW's two fp32 moments for the adapters only.
    assert_eq!(compute.at_peak.optimizer_states.0, adapters * 8);
    // The older reading, an fp32 base that autocast casts to bf16 as each
    // matmul reads it, stays one setting away: twice the weights, and the
    // bf16 copies autocast caches on top.
    let fp32 = run(
        "llama-2-7b",
        TrainConfig {
            lora_base: LoraBase::Fp32,
            ..cfg
        },
    );
    assert_eq!(fp32.at_peak.parameters.0, frozen * 4 + adapters * 4);
    assert!(
        fp32.at_peak.activations.0 > compute.at_peak.activations.0 + frozen * 2 * 9 / 10,
        "{} vs {}",
        fp32.at_peak.activations,
        compute.at_peak.activations
    );
    // Under the pure precisions both settings mean the same.
    for precision in [Precision::Bf16, Precision::Fp32] {
        let pure = |lora_base| {
            run(
                "llama-2-7b",
                TrainConfig {
                    precision,
                    lora_base,
                    ..base(Mode::FinetuneLora)
                },
            )
            .peak_allocated_bytes
        };
        assert_eq!(pure(LoraBase::Compute), pure(LoraBase::Fp32), "{precision}");
    }
}

#[test]
fn qlora_keeps_the_unquantized_base_in_the_compute_type_under_amp() {
    let cfg = TrainConfig {
        precision: Precision::AmpBf16,
        ..base(Mode::FinetuneQlora)
    };
    let compute = run("llama-2-7b", cfg).at_peak.parameters.0;
    let fp32 = run(
        "llama-2-7b",
        TrainConfig {
            lora_base: LoraBase::Fp32,
            ..cfg
        },
    )
    .at_peak
    .parameters
    .0;
    // Embeddings, head and norms (262,410,240 parameters) at 2 bytes instead of 4.
    assert_eq!(fp32 - compute, 262_410_240 * 2);
}

#[test]
fn quantized_weights_cannot_be_fully_trained() {
    let spec = model_preset("gpt2").unwrap().spec;
    let cfg = TrainConfig {
        weights: WeightFormat::Int4,
        ..TrainConfig::default()
    };
    let err = estimate(&spec, &cfg, &Overheads::default(), None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("finetune-qlora") || err.contains("inference"),
        "{err}"
    );
}

#[test]
fn inference_has_no_gradients_and_a_gqa_kv_cache() {
    let cfg = TrainConfig {
        context: 8192,
        ..base(Mode::Inference)
    };
    let e = run("llama-3-8b", cfg);
    // 2 (K, V) × 32 layers × 8 KV heads × 128 dims × 2 bytes = 128 KiB per token.
    assert_eq!(e.at_peak.kv_cache.0, 128 * 1024 * 8192);
    assert_eq!(e.at_peak.gradients.0 + e.at_peak.optimizer_states.0, 0);
    assert_eq!(e.peak_phase, vramfit_core::Phase::Forward);
    // Weights: 8,030,261,248 bf16 parameters.
    assert!(e.at_peak.parameters.0 >= 2 * 8_030_261_248);
    // More context, more cache.
    let longer = run(
        "llama-3-8b",
        TrainConfig {
            context: 16384,
            ..base(Mode::Inference)
        },
    );
    assert_eq!(longer.at_peak.kv_cache.0, 2 * e.at_peak.kv_cache.0);
}

/// Gemma 3's sliding-window layers keep at most the window in the cache
/// (`DynamicSlidingWindowLayer`); its full-attention layers every position.
#[test]
fn sliding_window_layers_cache_at_most_the_window() {
    let at = |context| {
        run(
            "gemma-3-1b",
            TrainConfig {
                context,
                ..base(Mode::Inference)
            },
        )
        .at_peak
        .kv_cache
        .0
    };
    // 26 layers, every 6th full (layers 6, 12, 18, 24 counting from 1), a
    // 512-token window; 2 (K, V) × 1 KV head × 256 dims × 2 bytes = 1 KiB
    // per layer and token.
    let per_layer_token = 2 * 256 * 2;
    assert_eq!(at(8192), (4 * 8192 + 22 * 512) * per_layer_token);
    // Within the window every layer holds every token.
    assert_eq!(at(512), 26 * 512 * per_layer_token);
    // Beyond it only the four full layers grow.
    assert_eq!(at(16384) - at(8192), 4 * 8192 * per_layer_token);
}

#[test]
fn inference_needs_far_less_than_training() {
    let train = run(
        "gpt2",
        TrainConfig {
            precision: Precision::Fp32,
            ..base(Mode::Train)
        },
    );
    let infer = run(
        "gpt2",
        TrainConfig {
            precision: Precision::Fp32,
            ..base(Mode::Inference)
        },
    );
    assert!(infer.peak_allocated_bytes.0 * 3 < train.peak_allocated_bytes.0);
}

/// The longest context that fits is exact: a simulation at that context
/// fits the GPU and one token more does not, for GQA and MHA decoders, at
/// batches 1 and 4, on a small and a large GPU.
#[test]
fn the_longest_context_is_exact() {
    let cases = [
        ("llama-3-8b", "a100-80gb", 1),
        ("llama-3-8b", "a100-80gb", 4),
        ("gpt2", "rtx-3060-12gb", 1),
        ("gpt2", "rtx-3060-12gb", 4),
        // Sliding-window layers: the cache grows more slowly past the window.
        ("gemma-3-1b", "rtx-3060-12gb", 1),
        ("gemma-2-2b", "rtx-3060-12gb", 2),
    ];
    for (model, gpu_id, batch) in cases {
        let spec = model_preset(model).unwrap().spec;
        let gpu = vramfit_core::gpu_preset(gpu_id).unwrap();
        let o = Overheads::for_gpu(&gpu);
        let cfg = TrainConfig {
            batch,
            ..base(Mode::Inference)
        };
        let e = estimate(&spec, &cfg, &o, Some(&gpu)).unwrap();
        let longest = e.gpu.as_ref().and_then(|g| g.max_context).unwrap();
        assert_eq!(
            longest,
            vramfit_core::max_context_for(
                &spec,
                &cfg,
                &o,
                vramfit_core::overheads::usable(&gpu, &o)
            )
            .unwrap()
        );
        // Fits: the step runs on the GPU (the allocator may return cached
        // segments to the driver on the way).
        let fits = |context: u64| {
            estimate(&spec, &TrainConfig { context, ..cfg }, &o, Some(&gpu))
                .unwrap()
                .gpu
                .unwrap()
                .fits
        };
        assert!(longest >= cfg.seq, "{model} b{batch}: {longest}");
        assert!(
            fits(longest),
            "{model} b{batch}: context {longest} does not fit"
        );
        if longest < vramfit_core::config::MAX_DIMENSION {
            assert!(
                !fits(longest + 1),
                "{model} b{batch}: context {} fits too",
                longest + 1
            );
        }
    }
}

/// `generate` runs the model in eval mode, where `transformers` checkpoints
/// nothing (`GradientCheckpointingLayer` only under `self.training`): a
/// checkpointing setting left from training does not change inference,
/// while it does change training.
#[test]
fn checkpointing_changes_nothing_in_inference() {
    use vramfit_core::{CheckpointMode, Checkpointing};
    let with = |mode, checkpointing| {
        let cfg = TrainConfig {
            batch: 2,
            seq: 256,
            precision: Precision::AmpBf16,
            attention: Attention::Sdpa,
            checkpointing,
            ..base(mode)
        };
        let e = run("llama-3.2-1b", cfg);
        (e.peak_allocated_bytes, e.peak_reserved_bytes)
    };
    let none = Checkpointing::Mode(CheckpointMode::None);
    for on in [
        Checkpointing::Mode(CheckpointMode::Full),
        Checkpointing::Mode(CheckpointMode::Selective),
        Checkpointing::EveryK(2),
    ] {
        assert_eq!(
            with(Mode::Inference, on),
            with(Mode::Inference, none),
            "{on:?}"
        );
    }
    assert_ne!(
        with(Mode::Train, Checkpointing::Mode(CheckpointMode::Full)),
        with(Mode::Train, none)
    );
}

/// A multimodal checkpoint's vision encoder (Qwen2.5-VL-7B's 676,550,144
/// parameters, `tests/reference/multimodal_counts.csv`) is held as frozen
/// weights in the parameters' dtype: no gradients, no optimizer state, not
/// trained; under QLoRA bitsandbytes stores its linear layers in NF4 too.
#[test]
fn a_vision_encoder_is_held_frozen_in_training_and_fine_tuning() {
    use vramfit_core::ModelSpec;
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/reference/multimodal"
    );
    let json = std::fs::read_to_string(format!("{dir}/qwen2_5_vl_7b.json")).unwrap();
    let vl = vramfit_core::hf::import(&json).unwrap().spec;
    let ModelSpec::Transformer(mut t) = vl.clone() else {
        unreachable!()
    };
    t.encoder = None;
    let text = ModelSpec::Transformer(t);
    let encoder = 676_550_144u64;
    let near = |a: u64, b: u64| a.abs_diff(b) < 4096;
    for (mode, precision, bytes) in [
        (Mode::Train, Precision::Bf16, 2),
        (Mode::Train, Precision::AmpBf16, 4),
        (Mode::FinetuneLora, Precision::Bf16, 2),
    ] {
        let cfg = TrainConfig {
            precision,
            lora_rank: 16,
            ..base(mode)
        };
        let a = estimate(&vl, &cfg, &Overheads::default(), None).unwrap();
        let b = estimate(&text, &cfg, &Overheads::default(), None).unwrap();
        assert_eq!(a.parameter_count - b.parameter_count, encoder);
        assert_eq!(a.trainable_parameter_count, b.trainable_parameter_count);
        let weights = a.at_peak.parameters.0 - b.at_peak.parameters.0;
        assert!(
            near(weights, bytes * encoder),
            "{mode:?} {precision:?}: {weights}"
        );
        assert_eq!(a.at_peak.gradients, b.at_peak.gradients, "{mode:?}");
        assert_eq!(
            a.at_peak.optimizer_states, b.at_peak.optimizer_states,
            "{mode:?}"
        );
    }
    let cfg = base(Mode::FinetuneQlora);
    let a = estimate(&vl, &cfg, &Overheads::default(), None).unwrap();
    let b = estimate(&text, &cfg, &Overheads::default(), None).unwrap();
    let weights = a.at_peak.parameters.0 - b.at_peak.parameters.0;
    // Most of it is linear weights, at about half a byte each.
    assert!(
        weights < encoder * 7 / 10 && weights > encoder / 2,
        "{weights}"
    );
}
