//! Data-parallel strategies: DeepSpeed's own model-state formula holds at the
//! optimizer step; per-GPU model states order ZeRO-3 ≤ ZeRO-2 ≤ ZeRO-1 ≤ DDP
//! (`PROPTEST_CASES` cases, 10 000 in `scripts/test.sh`); the whole per-GPU peak orders the
//! same way only when the reduce buckets are smaller than what sharding
//! saves, and never grows with more GPUs; host RAM appears exactly when
//! offloading.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use proptest::prelude::*;
use vramfit_core::parallel::{Offload, Parallel, Strategy};
use vramfit_core::simulate::{Phase, simulate};
use vramfit_core::{Overheads, Precision, TrainConfig, estimate, model_preset};

fn cfg(strategy: Strategy, gpus: u64, offload: Offload) -> TrainConfig {
    TrainConfig {
        batch: 2,
        seq: 256,
        precision: Precision::Bf16,
        // Hugging Face's DeepSpeed integration sets reduce_bucket_size to hidden² ("auto").
        parallel: Parallel {
            strategy,
            gpus_per_node: gpus,
            nodes: 1,
            offload,
            zero_bucket: 1 << 20,
            ..Parallel::default()
        },
        ..TrainConfig::default()
    }
}

fn peak(model: &str, c: &TrainConfig) -> u64 {
    let spec = model_preset(model).unwrap().spec;
    estimate(&spec, c, &Overheads::default(), None)
        .unwrap()
        .peak_allocated_bytes
        .0
}

#[test]
fn zero2_model_states_at_the_step_equal_deepspeeds_formula() {
    // DeepSpeed: 2P (half parameters) + 18P/N (half gradient, fp32 gradient,
    // fp32 master, Adam moments) per GPU, without offload.
    let spec = model_preset("gpt2-medium").unwrap().spec;
    let c = cfg(Strategy::Zero2, 8, Offload::None);
    let g = spec.lower(&c).unwrap();
    let sim = simulate(
        &g,
        &c,
        &Overheads {
            cublas_handles: 0,
            ..Overheads::default()
        },
        true,
    );
    let step = sim
        .timeline
        .iter()
        .rev()
        .find(|p| p.phase == Phase::Optimizer)
        .unwrap();
    let b = step.breakdown;
    let ours = (b.parameters + b.gradients + b.optimizer_states).0 as f64;
    let p = g.parameter_count();
    let ds = vramfit_core::deepspeed::zero2(p, 8, 1, false).gpu_bytes as f64;
    // Each tensor is rounded to 512 B per GPU; DeepSpeed counts raw bytes.
    let tolerance = 6.0 * 512.0 * g.params.len() as f64;
    assert!(
        (ours - ds).abs() <= tolerance,
        "ours {ours} vs DeepSpeed {ds}"
    );
}

#[test]
fn offloading_moves_state_to_host_ram() {
    let none = cfg(Strategy::Zero3, 4, Offload::None);
    let opt = cfg(Strategy::Zero3, 4, Offload::Optimizer);
    let both = cfg(Strategy::Zero3, 4, Offload::OptimizerParams);
    let spec = model_preset("gpt2").unwrap().spec;
    let est = |c: &TrainConfig| estimate(&spec, c, &Overheads::default(), None).unwrap();
    let (a, b, c) = (est(&none), est(&opt), est(&both));
    assert_eq!(a.host_ram_bytes.0, 0);
    assert!(b.host_ram_bytes.0 > 0 && c.host_ram_bytes > b.host_ram_bytes);
    assert!(
        b.peak_allocated_bytes < a.peak_allocated_bytes
            && c.peak_allocated_bytes < b.peak_allocated_bytes
    );
    assert_eq!(c.at_peak.optimizer_states.0, 0);
}

#[test]
fn invalid_offload_is_rejected_with_a_reason() {
    let spec = model_preset("gpt2").unwrap().spec;
    let c = cfg(Strategy::Ddp, 4, Offload::Optimizer);
    let err = estimate(&spec, &c, &Overheads::default(), None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("offload") && err.contains("ddp"), "{err}");
}

/// Cases for the cheap property: `PROPTEST_CASES`, else 1 000 (about 10 s in
/// debug); `scripts/test.sh` runs 10 000 in release.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000)
}

/// Weights + gradients (DDP's buckets included) + optimizer state on one
/// GPU at the second step's optimizer step, when every strategy has
/// finished its reduction and holds exactly its steady state.
fn model_states_at_step(spec: &vramfit_core::ModelSpec, c: &TrainConfig) -> u64 {
    let g = spec.lower(c).unwrap();
    let sim = simulate(&g, c, &Overheads::default(), true);
    let step = sim
        .timeline
        .iter()
        .rev()
        .find(|p| p.phase == Phase::Optimizer)
        .unwrap();
    let b = step.breakdown;
    (b.parameters + b.gradients + b.optimizer_states).0
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// ZeRO-3 ≤ ZeRO-2 ≤ ZeRO-1 ≤ DDP per GPU, for model states at the
    /// optimizer step, with the same numerics (fp32 or AMP: with pure half
    /// parameters ZeRO adds DeepSpeed's fp32 master copy and fp32 gradient
    /// partition, which pure-half DDP has not). Not for the whole peak:
    /// ZeRO's reduce buckets (`reduce_bucket_size`, 5·10^8 elements by
    /// default, whatever the model's size) are temporaries of the backward
    /// pass, and ZeRO-3's gathered blocks are live parameters during forward
    /// and backward; see `zero_can_use_more_than_ddp_at_the_peak`.
    #[test]
    fn model_states_order_zero3_zero2_zero1_ddp(
        m in 0usize..4,
        gpus in 2u64..16,
        precision in prop::sample::select(vec![Precision::Fp32, Precision::AmpBf16, Precision::AmpFp16]),
        optimizer in prop::sample::select(vramfit_core::Optimizer::ALL.to_vec()),
        bucket in prop::sample::select(vec![1u64 << 10, 1 << 20, 500_000_000]),
    ) {
        let spec = match m {
            0 => vramfit_core::presets::llama(256, 32, 2, 4, 2, 64, false, false),
            1 => vramfit_core::presets::llama(1000, 64, 3, 4, 4, 172, true, true),
            2 => model_preset("resnet18").unwrap().spec,
            _ => model_preset("mlp-small").unwrap().spec,
        };
        let at = |strategy: Strategy| {
            let parallel = Parallel { strategy, gpus_per_node: gpus, zero_bucket: bucket, ..Parallel::default() };
            model_states_at_step(&spec, &TrainConfig { batch: 1, seq: 16, image: 32, precision, optimizer, parallel, ..TrainConfig::default() })
        };
        let (ddp, z1, z2, z3) = (at(Strategy::Ddp), at(Strategy::Zero1), at(Strategy::Zero2), at(Strategy::Zero3));
        prop_assert!(z3 <= z2 && z2 <= z1 && z1 <= ddp, "m{m} x{gpus} {precision:?} {optimizer:?}: z3 {z3} z2 {z2} z1 {z1} ddp {ddp}");
    }
}

#[test]
fn zero_can_use_more_than_ddp_at_the_peak() {
    // DeepSpeed allocates reduce buckets of `reduce_bucket_size` elements
    // (5·10^8 by default) whatever the model's size: for a small model on two
    // GPUs that is more than sharding saves, so ZeRO-2's peak exceeds DDP's
    // although its model states are smaller.
    let spec = model_preset("llama-tiny").unwrap().spec;
    let at = |strategy: Strategy| {
        let parallel = Parallel {
            strategy,
            gpus_per_node: 2,
            ..Parallel::default()
        };
        TrainConfig {
            batch: 1,
            seq: 64,
            precision: Precision::AmpBf16,
            parallel,
            ..TrainConfig::default()
        }
    };
    let (ddp, z2) = (at(Strategy::Ddp), at(Strategy::Zero2));
    assert!(peak("llama-tiny", &z2) > peak("llama-tiny", &ddp));
    assert!(model_states_at_step(&spec, &z2) < model_states_at_step(&spec, &ddp));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn per_gpu_memory_orders_by_stage_and_gpu_count(
        model in prop::sample::select(vec!["gpt2", "llama-tiny", "bert-base", "resnet18"]),
        gpus in 2u64..16,
        // Same numerics on both sides: with half parameters ZeRO adds DeepSpeed's
        // fp32 master copy, which pure-half DDP does not have.
        precision in prop::sample::select(vec![Precision::Fp32, Precision::AmpBf16, Precision::AmpFp16]),
    ) {
        let at = |s: Strategy, n: u64| peak(model, &TrainConfig { precision, ..cfg(s, n, Offload::None) });
        let (ddp, z1, z2, z3) = (at(Strategy::Ddp, gpus), at(Strategy::Zero1, gpus), at(Strategy::Zero2, gpus), at(Strategy::Zero3, gpus));
        prop_assert!(z2 <= z1 && z1 <= ddp, "{model} x{gpus}: z2 {z2} z1 {z1} ddp {ddp}");
        // ZeRO-3 trades the parameter shard for gathered blocks (the current one
        // and the prefetched next): it wins once the shard saving is larger.
        let g = model_preset(model).unwrap().spec.lower(&TrainConfig { precision, ..cfg(Strategy::Zero3, gpus, Offload::None) }).unwrap();
        let bytes = |id: &vramfit_core::graph::ParamId| g.params[id.0 as usize].numel() * precision.param_dtype().size();
        let mut per_block = vec![0u64; g.blocks as usize];
        let mut largest_op = 0u64;
        for op in &g.ops {
            let b: u64 = op.params.iter().map(bytes).sum();
            match op.block { Some(k) => per_block[k as usize] += b, None => largest_op = largest_op.max(b) }
        }
        let mut blocks = per_block.clone();
        blocks.sort_unstable();
        let gathered = blocks.iter().rev().take(2).sum::<u64>().max(largest_op);
        let total: u64 = g.params.iter().map(|p| p.numel() * precision.param_dtype().size()).sum();
        // ZeRO-3 also keeps a second reduce bucket (overlap_comm).
        let bucket = (1u64 << 20) * precision.param_dtype().size();
        if total - total / gpus > gathered + bucket {
            prop_assert!(z3 <= z2, "{model} x{gpus}: z3 {z3} > z2 {z2}");
        }
        for s in [Strategy::Zero1, Strategy::Zero2, Strategy::Zero3, Strategy::FsdpFull, Strategy::FsdpGradOp] {
            prop_assert!(at(s, gpus + 1) <= at(s, gpus), "{model} {s}: more GPUs must not raise per-GPU memory");
        }
    }
}

#[test]
fn megatron_distributed_optimizer_matches_its_bytes_per_parameter_table() {
    // Megatron-LM docs/user-guide/features/dist_optimizer.md: bytes per
    // parameter with the distributed optimizer over d data-parallel GPUs:
    // bf16 6 + 12/d, fp16 4 + 16/d, fp32 8 + 8/d.
    let spec = model_preset("gpt2-medium").unwrap().spec;
    for (precision, fixed, sharded) in [
        (Precision::Bf16, 6.0, 12.0),
        (Precision::Fp16, 4.0, 16.0),
        (Precision::Fp32, 8.0, 8.0),
    ] {
        let d = 8u64;
        let c = TrainConfig {
            precision,
            ..cfg(Strategy::MegatronDistOpt, d, Offload::None)
        };
        let g = spec.lower(&c).unwrap();
        let sim = simulate(
            &g,
            &c,
            &Overheads {
                cublas_handles: 0,
                ..Overheads::default()
            },
            true,
        );
        let step = sim
            .timeline
            .iter()
            .rev()
            .find(|p| p.phase == Phase::Optimizer)
            .unwrap();
        let b = step.breakdown;
        let per_param =
            (b.parameters + b.gradients + b.optimizer_states).0 as f64 / g.parameter_count() as f64;
        let expected = fixed + sharded / d as f64;
        assert!(
            (per_param - expected).abs() < 0.01,
            "{precision:?}: {per_param} vs {expected}"
        );
    }
}

#[test]
fn zero_reduce_buckets_cost_their_configured_size_during_backward() {
    // DeepSpeed allocates `torch.empty(reduce_bucket_size)` (5e8 elements by default)
    // for contiguous gradients, whatever the model's size.
    let spec = model_preset("gpt2").unwrap().spec;
    let small = cfg(Strategy::Zero2, 4, Offload::None);
    let default = TrainConfig {
        parallel: Parallel {
            zero_bucket: 500_000_000,
            ..small.parallel
        },
        ..small
    };
    let e_small = estimate(&spec, &small, &Overheads::default(), None).unwrap();
    let e_default = estimate(&spec, &default, &Overheads::default(), None).unwrap();
    let extra = e_default.peak_allocated_bytes.0 - e_small.peak_allocated_bytes.0;
    assert_eq!(extra, 2 * (500_000_000 - (1 << 20)), "bf16 buckets");
}

proptest! {
    // About a third of the combinations are invalid (offload without ZeRO, a pipelined CNN, ...).
    #![proptest_config(ProptestConfig { cases: cases(), max_global_rejects: cases() * 4, ..ProptestConfig::default() })]

    /// The cheap peak (allocated memory only, from the last step alone) is
    /// the full simulation's peak total under every strategy, offload,
    /// tensor and pipeline parallelism, checkpointing, accumulation and
    /// (Q)LoRA fine-tuning.
    #[test]
    fn the_last_step_alone_has_the_allocated_peak_in_parallel(
        m in 0usize..3,
        strategy in prop::sample::select(Strategy::ALL.to_vec()),
        offload in prop::sample::select(vec![Offload::None, Offload::Optimizer, Offload::OptimizerParams]),
        dp in 1u64..5,
        tp in prop::sample::select(vec![1u64, 2]),
        pp in prop::sample::select(vec![1u64, 2]),
        grad_accum in 1u64..4,
        full_checkpointing in any::<bool>(),
        precision in prop::sample::select(vec![Precision::Fp32, Precision::AmpBf16, Precision::Bf16]),
        mode in prop::sample::select(vec![vramfit_core::config::Mode::Train, vramfit_core::config::Mode::FinetuneLora, vramfit_core::config::Mode::FinetuneQlora]),
    ) {
        use vramfit_core::simulate::Prepared;
        let spec = match m {
            0 => vramfit_core::presets::llama(256, 32, 4, 4, 2, 64, false, false),
            1 => model_preset("gpt2").unwrap().spec,
            _ => model_preset("resnet18").unwrap().spec,
        };
        let parallel = Parallel { strategy, gpus_per_node: dp * tp * pp, offload, tp, pp, zero_bucket: 1 << 16, ..Parallel::default() };
        let checkpointing = if full_checkpointing {
            vramfit_core::Checkpointing::Mode(vramfit_core::CheckpointMode::Full)
        } else {
            vramfit_core::Checkpointing::NONE
        };
        let c = TrainConfig { batch: 2, seq: 32, image: 32, precision, grad_accum, checkpointing, parallel, mode, lora_rank: 4, ..TrainConfig::default() };
        // Invalid combinations (offload without ZeRO, pipeline of a CNN, ...) are other tests' business.
        prop_assume!(c.validate().is_ok());
        let g = spec.lower(&c);
        prop_assume!(g.is_ok());
        let Ok(g) = g else { return Ok(()) };
        let o = Overheads::default();
        let p = Prepared::new(std::rc::Rc::new(g), &c, &o);
        prop_assert_eq!(p.peak_allocated(&c, &o), p.run(&c, &o, false).peak.breakdown.total());
    }
}
