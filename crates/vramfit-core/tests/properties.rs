//! Properties every estimate must have, over random small models (tiny
//! BERT/GPT-2/Llama transformers, MLPs, ResNet-18, MobileNetV2, MobileNetV3-Small,
//! EfficientNet-B0, ConvNeXt-T, RegNetY-400MF and a tiny
//! ViT at small sizes, so that thousands of cases run in seconds) and random
//! training configurations:
//! - the breakdown at the peak sums to the peak, which is the timeline's maximum;
//! - allocated memory never decreases with batch or sequence length;
//! - checkpointing never raises the peak;
//! - model states (weights, gradients, optimizer state) order fp32 ≥ AMP ≥ pure half.
//!
//! The ZeRO/DDP ordering is in `tests/parallel.rs`. Each property runs
//! [`cases()`] cases: `PROPTEST_CASES` when set (`scripts/test.sh` runs these
//! files again with 10 000 in release), else [`DEFAULT_CASES`].
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use proptest::prelude::*;
use vramfit_core::models::{
    Arch, Head, MlpActivation, MlpLayer, MlpSpec, T5Activation, T5Spec, TransformerSpec,
    VitImplementation, VitSpec,
};
use vramfit_core::parallel::{Offload, Parallel};
use vramfit_core::{
    Attention, CheckpointMode, Checkpointing, ModelSpec, Optimizer, Overheads, Precision,
    TrainConfig, estimate, model_preset,
};

/// Cases per property without `PROPTEST_CASES`: enough for a quick local
/// run in debug (the slowest property, checkpointing, takes about 25 s);
/// `scripts/test.sh` runs 10 000 in release.
const DEFAULT_CASES: u32 = 1_000;

/// Cases per property: `PROPTEST_CASES`, else [`DEFAULT_CASES`].
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CASES)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        ..ProptestConfig::default()
    }
}

/// A tiny transformer of any architecture and head.
fn transformer() -> impl Strategy<Value = ModelSpec> {
    (
        prop::sample::select(vec![Arch::Bert, Arch::Gpt2, Arch::Llama]),
        prop::sample::select(vec![(8u64, 1u64), (16, 2), (32, 4), (64, 4), (64, 8)]),
        2u64..4,
        16u64..512,
        8u64..128,
        0u8..3,
        any::<bool>(),
        prop::sample::select(vec![0.0, 0.1]),
    )
        .prop_map(
            |(arch, (hidden, heads), layers, vocab, intermediate, head, tie, dropout)| {
                let llama = arch == Arch::Llama;
                let head = match (arch, head) {
                    (Arch::Bert, 0) => Head::Classification { labels: 3 },
                    (Arch::Bert, _) => Head::Bare,
                    _ => Head::CausalLm,
                };
                ModelSpec::Transformer(TransformerSpec {
                    arch,
                    vocab,
                    hidden,
                    layers,
                    heads,
                    kv_heads: if llama && heads > 1 { heads / 2 } else { heads },
                    head_dim: hidden / heads,
                    intermediate,
                    max_positions: if llama { 0 } else { 512 },
                    context_limit: 0,
                    moe: None,
                    mla: None,
                    linear: None,
                    gemma4: None,
                    encoder: None,
                    single_mixer: None,
                    type_vocab: if arch == Arch::Bert { 2 } else { 0 },
                    tie_embeddings: tie && arch != Arch::Bert,
                    qkv_bias: !llama,
                    mlp_bias: !llama,
                    hidden_dropout: if llama { 0.0 } else { dropout },
                    attention_dropout: dropout,
                    head,
                    fused_gelu: false,
                    block: Default::default(),
                })
            },
        )
}

/// A tiny mixture of experts in the ways the imported model types build
/// one: each router, shared experts gated (Qwen2-MoE) or not (DeepSeek), a
/// dense first layer, or fused after the routed ones (Granite), gpt-oss's
/// biases, clamped SwiGLU and sinks, Nemotron-H's ungated ReLU² experts
/// (in a latent space or not), latent attention with or without a query
/// bottleneck.
fn mixture_of_experts() -> impl Strategy<Value = ModelSpec> {
    use vramfit_core::models::{
        DenseLayers, ExpertActivation, Mla, MlaRope, Moe, Router, SharedExperts,
    };
    (
        (4u64..9, 1u64..3, 8u64..64),
        0u8..8,
        0u8..6,
        any::<bool>(),
        0u8..3,
    )
        .prop_map(
            |((experts, top_k, expert_intermediate), router, shared, dense, latent)| {
                // Nemotron-H's ungated ReLU² experts and shared expert, in a
                // latent space with latent attention's draw.
                let relu2 = shared == 5;
                let router = match router {
                    0 => Router::Softmax {
                        renormalize: true,
                        cast_back: false,
                    },
                    1 => Router::SoftmaxGroups {
                        groups: 2,
                        topk_groups: 1,
                    },
                    2 => Router::SigmoidGroups {
                        groups: 2,
                        topk_groups: 1,
                        renormalize: true,
                    },
                    3 => Router::SigmoidBias,
                    4 => Router::SoftmaxCorrected,
                    5 => Router::Llama4,
                    6 => Router::TopKSoftmaxFp32,
                    _ => Router::TopKSoftmax,
                };
                let gpt_oss = router == Router::TopKSoftmax;
                let moe = Moe {
                    experts: experts * 2,
                    top_k,
                    expert_intermediate,
                    router,
                    shared: match shared {
                        0 => None,
                        s => Some(SharedExperts {
                            intermediate: 32,
                            gate: s == 1,
                            first: s == 3,
                            fused: s == 4,
                        }),
                    },
                    dense: DenseLayers {
                        first: u64::from(dense),
                        ..DenseLayers::default()
                    },
                    biases: gpt_oss,
                    activation: if gpt_oss {
                        ExpertActivation::ClampedSwiglu
                    } else if relu2 {
                        ExpertActivation::Relu2
                    } else {
                        ExpertActivation::Gated
                    },
                    // The auxiliary loss on for an even top-k: every property
                    // holds with it too, without a new draw.
                    aux_loss: top_k % 2 == 0,
                    latent: if relu2 && latent > 0 { 32 } else { 0 },
                };
                let mla = (latent > 0).then_some(Mla {
                    q_lora_rank: if latent == 1 { 0 } else { 16 },
                    kv_lora_rank: 16,
                    qk_nope_head_dim: 8,
                    qk_rope_head_dim: 8,
                    v_head_dim: 8,
                    rope: if latent == 1 {
                        MlaRope::Complex
                    } else {
                        MlaRope::Real
                    },
                    indexer: None,
                });
                let mut t = vramfit_core::models::llama::decoder(300, 64, 2, 4, 4, 96);
                if mla.is_some() {
                    t.head_dim = 16;
                } else {
                    t.block.sinks = gpt_oss;
                }
                t.moe = Some(Box::new(moe));
                t.mla = mla.map(Box::new);
                ModelSpec::Transformer(t)
            },
        )
}

/// A tiny MLP.
fn mlp() -> impl Strategy<Value = ModelSpec> {
    (
        4u64..64,
        prop::collection::vec((4u64..128, 0u8..3), 1..5),
        1usize..3,
        2u64..20,
    )
        .prop_map(|(input, layers, block_size, classes)| {
            let layers = layers
                .into_iter()
                .map(|(out, a)| MlpLayer {
                    out,
                    activation: [
                        MlpActivation::None,
                        MlpActivation::Relu,
                        MlpActivation::Gelu,
                    ][a as usize],
                })
                .collect();
            ModelSpec::Mlp(MlpSpec {
                input,
                layers,
                block_size,
                classes,
            })
        })
}

/// Any small model; images are `image`-sized (the ViT's own side is chosen to match).
fn model() -> impl Strategy<Value = ModelSpec> {
    prop_oneof![
        3 => transformer(),
        2 => mixture_of_experts(),
        2 => mlp(),
        1 => Just(model_preset("resnet18").unwrap().spec),
        1 => Just(model_preset("mobilenet_v2").unwrap().spec),
        // In-place activations that save a copy, squeeze-excitation, stochastic depth, LayerNorm2d.
        1 => prop::sample::select(vec!["mobilenet_v3_small", "efficientnet_b0", "convnext_tiny", "regnet_y_400mf"])
            .prop_map(|id| model_preset(id).unwrap().spec),
        1 => Just(ModelSpec::Vit(VitSpec { image: 32, patch: 8, hidden: 32, layers: 2, heads: 2, mlp: 64, classes: 10, implementation: Default::default() })),
        1 => Just(ModelSpec::Vit(VitSpec {
            image: 32, patch: 8, hidden: 32, layers: 2, heads: 2, mlp: 64, classes: 10,
            implementation: VitImplementation::HuggingFace { qkv_bias: true, hidden_dropout: 0.1, attention_dropout: 0.1 },
        })),
        1 => (any::<bool>(), 1u64..3).prop_map(|(flan, decoder_layers)| ModelSpec::T5(T5Spec {
            vocab: 100, d_model: 32, d_kv: 8, d_ff: 64, encoder_layers: 2, decoder_layers, heads: 4, buckets: 8,
            act: if flan { T5Activation::GeluNew } else { T5Activation::Relu },
            gated: flan, dropout: 0.1, tie_embeddings: !flan,
        })),
    ]
}

/// A small training configuration (single GPU, no checkpointing).
fn train_config() -> impl Strategy<Value = TrainConfig> {
    (
        1u64..16,
        prop::sample::select(vec![8u64, 16, 32, 64, 128]),
        prop::sample::select(Precision::ALL.to_vec()),
        prop::sample::select(Optimizer::ALL.to_vec()),
        prop::sample::select(Attention::ALL.to_vec()),
        1u64..3,
    )
        .prop_map(
            |(batch, seq, precision, optimizer, attention, grad_accum)| TrainConfig {
                batch,
                seq,
                image: 32,
                precision,
                optimizer,
                attention,
                grad_accum,
                ..TrainConfig::default()
            },
        )
}

/// The smaller presets, for properties that hold for real models only.
const PRESETS: [&str; 6] = [
    "resnet18",
    "mobilenet_v2",
    "mlp-small",
    "bert-base",
    "gpt2",
    "llama-tiny",
];

fn peak(spec: &ModelSpec, cfg: &TrainConfig) -> u64 {
    estimate(spec, cfg, &Overheads::default(), None)
        .unwrap()
        .peak_allocated_bytes
        .0
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn breakdown_sums_to_peak_and_orders_the_three_numbers(spec in model(), cfg in train_config()) {
        let e = estimate(&spec, &cfg, &Overheads::default(), None).unwrap();
        prop_assert_eq!(e.at_peak.total(), e.peak_allocated_bytes);
        prop_assert!(e.peak_reserved_bytes >= e.peak_allocated_bytes);
        prop_assert!(e.device_used_bytes > e.peak_reserved_bytes);
        let max_timeline = e.timeline.iter().map(|p| p.allocated_bytes).max().unwrap();
        prop_assert_eq!(max_timeline, e.peak_allocated_bytes);
    }

    #[test]
    fn memory_is_monotonic_in_batch_and_sequence(spec in model(), cfg in train_config(), more in 1u64..8) {
        let base = peak(&spec, &cfg);
        let more_batch = peak(&spec, &TrainConfig { batch: cfg.batch + more, ..cfg });
        prop_assert!(more_batch >= base, "batch {} -> {}: {} -> {}", cfg.batch, cfg.batch + more, base, more_batch);
        let more_seq = peak(&spec, &TrainConfig { seq: cfg.seq * 2, ..cfg });
        prop_assert!(more_seq >= base, "seq {} -> {}: {} -> {}", cfg.seq, cfg.seq * 2, base, more_seq);
    }

    /// Over the presets (their blocks keep more than recomputing one needs);
    /// see `checkpointing_can_raise_the_peak_of_tiny_blocks` for why not over any model.
    #[test]
    fn checkpointing_never_raises_the_peak(m in 0..PRESETS.len(), cfg in train_config(), k in 1u32..4) {
        let spec = model_preset(PRESETS[m]).unwrap().spec;
        let none = peak(&spec, &cfg);
        for mode in [Checkpointing::Mode(CheckpointMode::Full), Checkpointing::Mode(CheckpointMode::Selective), Checkpointing::Mode(CheckpointMode::SelectiveOp), Checkpointing::EveryK(k)] {
            let with = peak(&spec, &TrainConfig { checkpointing: mode, ..cfg });
            prop_assert!(with <= none, "{} {mode}: {with} > {none}", PRESETS[m]);
        }
    }

    /// Weights, gradients and optimizer state (`estimate::model_states`):
    /// AMP keeps fp32 parameters, so it equals fp32; pure half halves them.
    #[test]
    fn model_states_order_fp32_amp_half(spec in model(), cfg in train_config()) {
        let states = |precision: Precision| {
            let c = TrainConfig { precision, ..cfg };
            let (w, g, o) = vramfit_core::report::model_states(&spec.lower(&c).unwrap(), &c);
            (w + g + o).0
        };
        for (amp, half) in [(Precision::AmpBf16, Precision::Bf16), (Precision::AmpFp16, Precision::Fp16)] {
            let (fp32, amp, half) = (states(Precision::Fp32), states(amp), states(half));
            prop_assert!(fp32 >= amp && amp >= half, "{fp32} {amp} {half}");
        }
    }
}

#[test]
fn checkpointing_can_raise_the_peak_of_tiny_blocks() {
    // Recomputing a block in backward re-creates its tensors while gradients
    // are alive (reentrant checkpointing holds the block's recomputed output
    // for `autograd.backward`). When a block keeps less than that (one
    // 8-wide BERT layer at 8 tokens), the peak rises by a few KiB; real
    // models keep far more, hence the property over the presets only.
    let spec = ModelSpec::Transformer(TransformerSpec {
        arch: Arch::Bert,
        vocab: 16,
        hidden: 8,
        layers: 1,
        heads: 1,
        kv_heads: 1,
        head_dim: 8,
        intermediate: 8,
        max_positions: 512,
        context_limit: 0,
        moe: None,
        mla: None,
        linear: None,
        gemma4: None,
        encoder: None,
        single_mixer: None,
        type_vocab: 2,
        tie_embeddings: false,
        qkv_bias: true,
        mlp_bias: true,
        hidden_dropout: 0.0,
        attention_dropout: 0.0,
        head: Head::Classification { labels: 3 },
        fused_gelu: false,
        block: Default::default(),
    });
    let cfg = TrainConfig {
        batch: 7,
        seq: 8,
        precision: Precision::AmpFp16,
        optimizer: Optimizer::Sgd,
        ..TrainConfig::default()
    };
    let full = TrainConfig {
        checkpointing: Checkpointing::Mode(CheckpointMode::Full),
        ..cfg
    };
    let (none, with) = (peak(&spec, &cfg), peak(&spec, &full));
    assert!(with > none && with - none < 16 << 10, "{none} -> {with}");
}

#[test]
fn adam_first_step_peaks_with_one_param_sized_temporary() {
    // The MLP with a tiny batch: the peak is the optimizer step, holding
    // params + grads + 2 states + one params-sized temporary (foreach sqrt).
    let spec = model_preset("mlp-small").unwrap().spec;
    let cfg = TrainConfig {
        batch: 1,
        optimizer: Optimizer::Adam,
        ..TrainConfig::default()
    };
    let e = estimate(&spec, &cfg, &Overheads::default(), None).unwrap();
    assert_eq!(e.peak_phase, vramfit_core::Phase::Optimizer);
    let p = e.at_peak.parameters.0;
    assert_eq!(e.at_peak.gradients.0, p);
    assert_eq!(e.at_peak.optimizer_states.0, 2 * p);
    assert_eq!(e.at_peak.temporary.0, p);
}

proptest! {
    #![proptest_config(config())]

    /// The cheap peak (allocated memory only, the last step alone) is the
    /// full simulation's peak total.
    #[test]
    fn the_last_step_alone_has_the_allocated_peak(spec in model(), cfg in train_config()) {
        use vramfit_core::simulate::Prepared;
        let o = Overheads::default();
        let Ok(g) = spec.lower(&cfg) else { return Ok(()) };
        let p = Prepared::new(std::rc::Rc::new(g), &cfg, &o);
        prop_assert_eq!(p.peak_allocated(&cfg, &o), p.run(&cfg, &o, false).peak.breakdown.total());
    }

    /// The planner's screen reads a few moments of the last step (after
    /// each forward, at the optimizer step): never above the peak, and at
    /// least the optimizer step's moment.
    #[test]
    fn landmarks_bound_the_allocated_peak_from_below(spec in model(), cfg in train_config()) {
        use vramfit_core::simulate::{Phase, Prepared};
        let o = Overheads::default();
        let Ok(g) = spec.lower(&cfg) else { return Ok(()) };
        let p = Prepared::new(std::rc::Rc::new(g), &cfg, &o);
        let landmark = p.landmark_allocated(&cfg, &o);
        let sim = p.run(&cfg, &o, true);
        prop_assert!(landmark <= sim.peak.breakdown.total(), "{landmark:?} above the peak");
        let step = sim.timeline.iter().rev().find(|m| m.phase == Phase::Optimizer).map(|m| m.breakdown.total());
        prop_assert!(step.is_some_and(|s| landmark >= s), "{landmark:?} below the optimizer step's {step:?}");
    }

    /// The reserved-only replay (workspaces in one allocator step, no
    /// moments) has the full simulation's peak of reserved memory; under a
    /// limit below it, the allocator returns cached segments and stays
    /// within the limit (never below the allocated peak), or fails
    /// (`None`), and always fails below the allocated peak; the
    /// allocated-only replay has its peak of allocated memory.
    #[test]
    fn the_reserved_only_replay_has_the_reserved_peak(spec in model(), cfg in train_config()) {
        use vramfit_core::simulate::Prepared;
        let o = Overheads::default();
        let Ok(g) = spec.lower(&cfg) else { return Ok(()) };
        let kv = g.kv_cache;
        let p = Prepared::new(std::rc::Rc::new(g), &cfg, &o);
        let full = p.run(&cfg, &o, false);
        let reserved = full.peak_reserved;
        // The allocated-only screen (last step, totals only) has the full simulation's allocated peak.
        prop_assert_eq!(p.peak_allocated(&cfg, &o), full.peak.breakdown.total());
        prop_assert_eq!(p.peak_reserved_within(&cfg, &o, kv, vramfit_core::Bytes(u64::MAX)), Some(reserved));
        prop_assert_eq!(p.peak_reserved_within(&cfg, &o, kv, reserved), Some(reserved));
        prop_assert!(reserved.0 > 0, "nothing reserved for {:?}", spec);
        let allocated = full.peak.breakdown.total();
        let below = vramfit_core::Bytes(reserved.0 - 1);
        if let Some(within) = p.peak_reserved_within(&cfg, &o, kv, below) {
            prop_assert!(within <= below && within >= allocated, "{within:?} under {below:?}, allocated {allocated:?}");
        }
        prop_assert_eq!(p.peak_reserved_within(&cfg, &o, kv, vramfit_core::Bytes(allocated.0 - 1)), None);
    }

    /// Replays that keep and resume from their state at the optimizer's
    /// first allocation answer as replays from the start, for any order of
    /// optimizers, batches and limits (some below what is reserved by then).
    #[test]
    fn resumed_replays_answer_as_whole_ones(
        spec in model(),
        cfg in train_config(),
        asks in prop::collection::vec((prop::sample::select(Optimizer::ALL.to_vec()), 1u64..4, 0.2f64..1.2), 1..8),
    ) {
        use std::rc::Rc;
        use vramfit_core::simulate::Prepared;
        let o = Overheads::default();
        let Ok(g) = spec.lower(&cfg) else { return Ok(()) };
        let g = Rc::new(g);
        let kv = g.kv_cache;
        let whole = Prepared::new(Rc::clone(&g), &cfg, &o);
        let sharing = Prepared::new(g, &cfg, &o).keeping_snapshots();
        let top = whole.run(&cfg, &o, false).peak_reserved.0 as f64;
        for (optimizer, batch, fraction) in asks {
            let c = TrainConfig { optimizer, batch, ..cfg };
            let limit = vramfit_core::Bytes((top * fraction) as u64);
            prop_assert_eq!(sharing.peak_reserved_within(&c, &o, kv, limit), whole.peak_reserved_within(&c, &o, kv, limit), "{:?} b{} within {:?}", optimizer, batch, limit);
        }
    }

    /// The planner's lowering without names is the same graph with empty names.
    #[test]
    fn lowering_without_names_changes_only_the_names(spec in model(), cfg in train_config()) {
        let (Ok(mut named), Ok(unnamed)) = (spec.lower(&cfg), spec.lower_unnamed(&cfg)) else {
            prop_assert_eq!(spec.lower(&cfg).is_ok(), spec.lower_unnamed(&cfg).is_ok());
            return Ok(());
        };
        named.ops.iter_mut().for_each(|o| o.name.clear());
        named.params.iter_mut().for_each(|p| p.name.clear());
        named.buffers.iter_mut().for_each(|b| b.name.clear());
        prop_assert_eq!(named, unnamed);
    }

    /// A tape records the optimizer's sizes symbolically, so one prepared for
    /// any optimizer replays every other exactly as one prepared for it
    /// (the planner and the comparison strip share tapes this way).
    #[test]
    fn one_tape_serves_every_optimizer(spec in model(), cfg in train_config(), other in prop::sample::select(Optimizer::ALL.to_vec())) {
        use std::rc::Rc;
        use vramfit_core::simulate::Prepared;
        let o = Overheads::default();
        let Ok(g) = spec.lower(&cfg) else { return Ok(()) };
        let g = Rc::new(g);
        let target = TrainConfig { optimizer: other, ..cfg };
        let shared = Prepared::new(Rc::clone(&g), &cfg, &o).run(&target, &o, true);
        let own = Prepared::new(g, &target, &o).run(&target, &o, true);
        prop_assert_eq!(shared, own);
    }

    /// A tape recorded for a multi-GPU data-parallel strategy names its
    /// model-state sizes, so it replays every other strategy and offload over
    /// the same GPUs exactly as a tape recorded for it alone, with sizes as
    /// bytes (the planner records one tape per precision and checkpointing this way).
    #[test]
    fn one_tape_serves_every_strategy(
        spec in model(),
        cfg in train_config(),
        recorded in prop::sample::select(vramfit_core::parallel::Strategy::ALL[1..].to_vec()),
        replayed in prop::sample::select(vramfit_core::parallel::Strategy::ALL.to_vec()),
        offload in prop::sample::select(vec![Offload::None, Offload::Optimizer, Offload::OptimizerParams]),
        gpus in prop::sample::select(vec![2u64, 4, 8]),
    ) {
        use std::rc::Rc;
        use vramfit_core::simulate::Prepared;
        let o = Overheads::default();
        let on = |strategy, offload| Parallel { strategy, offload, gpus_per_node: gpus, ..Parallel::default() };
        let base = TrainConfig { parallel: on(recorded, Offload::None), ..cfg };
        let target = TrainConfig { parallel: on(replayed, offload), ..cfg };
        if base.validate().is_err() || target.validate().is_err() {
            return Ok(());
        }
        let Ok(g) = spec.lower(&base) else { return Ok(()) };
        let g = Rc::new(g);
        let shared = Prepared::new(Rc::clone(&g), &base, &o).run(&target, &o, true);
        let own = Prepared::for_one_strategy(g, &target, &o).run(&target, &o, true);
        prop_assert_eq!(shared, own);
    }
}

proptest! {
    // Each case runs a search of several simulations: fewer cases.
    #![proptest_config(ProptestConfig { cases: (cases() / 100).max(24), ..ProptestConfig::default() })]

    /// The guided search returns exactly the largest fitting batch: it fits and one more does not.
    #[test]
    fn max_batch_is_exact(spec in model(), cfg in train_config(), mib in 600u64..4096) {
        let o = Overheads::default();
        let cap = vramfit_core::Bytes(mib << 20);
        let best = vramfit_core::max_batch_for(&spec, &cfg, &o, cap).unwrap();
        // Fits: runs within the capacity (returning cached segments if need be).
        let fits = |b: u64| {
            vramfit_core::Session::default()
                .device_used_within(&spec, &TrainConfig { batch: b, ..cfg }, &o, cap)
                .unwrap()
                .is_some()
        };
        if best > 0 {
            prop_assert!(fits(best), "b{best} does not fit");
        }
        // The search stops at the largest accepted batch; below it, one more must not fit.
        if best < vramfit_core::config::MAX_DIMENSION {
            prop_assert!(!fits(best + 1), "b{} fits too", best + 1);
        }
    }
}
