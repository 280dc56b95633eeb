//! The planner: every plan it returns fits, the first is the fastest by its
//! cost model, and the known trade-offs come out in the expected order.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::plan::{PlanRequest, advice, plan};
use vramfit_core::{
    Checkpointing, Overheads, Precision, TrainConfig, estimate, gpu_preset, model_preset,
};

fn request(base: TrainConfig, target: u64, gpus: u64) -> PlanRequest {
    PlanRequest {
        base,
        target_batch: target,
        gpus_per_node: gpus,
        nodes: 1,
        margin: 0.05,
        dataset_samples: 0,
        max_plans: 64,
        measured: None,
    }
}

#[test]
fn bert_large_on_12_gb_prefers_amp_with_accumulation_over_full_recompute() {
    let spec = model_preset("bert-large").unwrap().spec;
    let gpu = gpu_preset("rtx-3060-12gb").unwrap();
    let o = Overheads::for_gpu(&gpu);
    let base = TrainConfig {
        seq: 512,
        ..TrainConfig::default()
    };
    let r = plan(&spec, &gpu, &o, &request(base, 32, 1)).unwrap();
    assert!(!r.plans.is_empty());
    let position = |f: &dyn Fn(&TrainConfig) -> bool| r.plans.iter().position(|p| f(&p.config));
    let amp_accum = position(&|c| {
        c.precision == Precision::AmpBf16
            && c.grad_accum > 1
            && c.checkpointing == Checkpointing::NONE
    })
    .unwrap();
    let recompute = position(&|c| c.checkpointing != Checkpointing::NONE).unwrap();
    assert!(
        amp_accum < recompute,
        "AMP + accumulation at {amp_accum}, full recompute at {recompute}"
    );
    // Plain fp32 at micro-batch 32 does not fit: the planner had to change something.
    let fp32_32 = estimate(&spec, &TrainConfig { batch: 32, ..base }, &o, Some(&gpu)).unwrap();
    assert!(!fp32_32.gpu.unwrap().fits);
}

#[test]
fn every_plan_fits_and_the_first_is_fastest() {
    for (model, gpu_id, gpus, target) in [
        ("gpt2-medium", "rtx-4090", 1, 64),
        ("llama-tiny", "t4", 4, 32),
        ("resnet50", "rtx-3060-12gb", 1, 256),
    ] {
        let spec = model_preset(model).unwrap().spec;
        let gpu = gpu_preset(gpu_id).unwrap();
        let o = Overheads::for_gpu(&gpu);
        let base = TrainConfig {
            seq: 512,
            ..TrainConfig::default()
        };
        let r = plan(&spec, &gpu, &o, &request(base, target, gpus)).unwrap();
        assert!(!r.plans.is_empty(), "{model}");
        let limit = (gpu.memory_bytes.0 as f64 * 0.95) as u64;
        for p in &r.plans {
            assert!(
                p.device_used_bytes.0 <= limit,
                "{model}: a plan does not fit"
            );
            assert_eq!(
                p.config.batch * p.config.grad_accum,
                r.per_gpu_batch,
                "{model}: effective batch changed"
            );
            // On a GPU of the plan's capacity, the estimator's device memory
            // (below its unconstrained figure where the allocator returns
            // cached segments to stay within it).
            let capacity = vramfit_core::Bytes(
                (vramfit_core::overheads::usable(&gpu, &o).0 as f64 * 0.95) as u64,
            );
            let again = vramfit_core::Session::default()
                .device_used_within(&spec, &p.config, &o, capacity)
                .unwrap();
            assert_eq!(
                again,
                Some(p.device_used_bytes),
                "{model}: plan memory is the estimator's"
            );
            assert!(
                estimate(&spec, &p.config, &o, None)
                    .unwrap()
                    .device_used_bytes
                    >= p.device_used_bytes
            );
            assert!(p.step_seconds >= r.plans[0].step_seconds);
        }
    }
}

#[test]
fn uneven_global_batches_are_flagged() {
    let spec = model_preset("gpt2").unwrap().spec;
    let gpu = gpu_preset("a100-80gb").unwrap();
    let r = plan(
        &spec,
        &gpu,
        &Overheads::for_gpu(&gpu),
        &request(
            TrainConfig {
                seq: 256,
                ..TrainConfig::default()
            },
            30,
            8,
        ),
    )
    .unwrap();
    assert_eq!(r.per_gpu_batch, 4);
    let uneven = r.uneven.unwrap();
    assert_eq!((uneven.target, uneven.gpus), (30, 8));
    assert_eq!((uneven.per_gpu, uneven.total), (4, 32));
}

#[test]
fn advice_appears_where_it_applies() {
    let ids =
        |v: Vec<vramfit_core::plan::Advice>| v.into_iter().map(|a| a.id()).collect::<Vec<_>>();
    let small = ids(advice(16, 4, true));
    assert!(
        small.contains(&"small-batch")
            && small.contains(&"batchnorm")
            && !small.contains(&"large-batch")
    );
    let large = ids(advice(1024, 64, false));
    assert!(
        large.contains(&"large-batch")
            && !large.contains(&"batchnorm")
            && large.contains(&"lr-scaling")
    );
}

#[test]
fn measured_throughput_replaces_the_peak_in_step_times() {
    use vramfit_core::plan::{Speed, Throughput, step_seconds};
    let spec = model_preset("gpt2").unwrap().spec;
    let gpu = gpu_preset("rtx-4090").unwrap();
    let o = Overheads::for_gpu(&gpu);
    let base = TrainConfig {
        seq: 512,
        ..TrainConfig::default()
    };
    let slow = Throughput {
        fp32_flops_per_s: 1e12,
        fp16_flops_per_s: 2e12,
    };
    let r = plan(
        &spec,
        &gpu,
        &o,
        &PlanRequest {
            measured: Some(slow),
            ..request(base, 32, 1)
        },
    )
    .unwrap();
    let datasheet = plan(&spec, &gpu, &o, &request(base, 32, 1)).unwrap();
    assert!(!r.plans.is_empty());
    for p in &r.plans {
        let g = spec.lower(&p.config).unwrap();
        let expected = step_seconds(&g, &p.config, Speed::Measured(slow));
        assert!(
            (p.step_seconds - expected).abs() <= 1e-9 * expected,
            "{} vs {expected}",
            p.step_seconds
        );
    }
    // A 4090 runs far faster than 1-2 TFLOP/s: the measured plans take longer.
    assert!(r.plans[0].step_seconds > 5.0 * datasheet.plans[0].step_seconds);
}

/// On a GPU without bf16 matrix math (a T4: Turing) mixed precision is fp16
/// with a scaler and nothing in bf16 is offered; on an A100 it is bf16.
#[test]
fn mixed_precision_follows_what_the_gpu_computes_in() {
    let spec = vramfit_core::model_preset("bert-base").unwrap().spec;
    let base = TrainConfig {
        seq: 128,
        ..TrainConfig::default()
    };
    let request = PlanRequest {
        base,
        target_batch: 64,
        gpus_per_node: 1,
        nodes: 1,
        margin: 0.05,
        dataset_samples: 0,
        max_plans: 20,
        measured: None,
    };
    for (gpu, amp) in [
        ("t4", Precision::AmpFp16),
        ("v100-16gb", Precision::AmpFp16),
        ("a100-40gb", Precision::AmpBf16),
    ] {
        let gpu = vramfit_core::gpu_preset(gpu).unwrap();
        let result = plan(&spec, &gpu, &Overheads::for_gpu(&gpu), &request).unwrap();
        assert!(!result.plans.is_empty(), "{}: no plan", gpu.id);
        assert_eq!(
            result.plans[0].config.precision, amp,
            "{}: the fastest plan",
            gpu.id
        );
        let bf16 = result
            .plans
            .iter()
            .any(|p| matches!(p.config.precision, Precision::Bf16 | Precision::AmpBf16));
        assert_eq!(bf16, gpu.bf16, "{}: bf16 plans offered: {bf16}", gpu.id);
    }
    // bf16 on a T4 runs at the fp32 rate, fp16 on its tensor cores.
    let t4 = vramfit_core::gpu_preset("t4").unwrap();
    assert_eq!(
        t4.peak_flops_per_s(Precision::AmpBf16),
        t4.peak_flops_per_s(Precision::Fp32)
    );
    assert!(t4.peak_flops_per_s(Precision::AmpFp16) > 4.0 * t4.peak_flops_per_s(Precision::Fp32));
}

/// "Which GPU do I need" lists a bf16 configuration only on GPUs that compute in bf16.
#[test]
fn which_gpus_offers_bf16_only_where_the_gpu_has_it() {
    let spec = vramfit_core::model_preset("gpt2").unwrap().spec;
    let ids = |precision| {
        let cfg = TrainConfig {
            precision,
            ..TrainConfig::default()
        };
        vramfit_core::plan::which_gpus(&spec, &cfg, &Overheads::default())
            .unwrap()
            .into_iter()
            .map(|o| o.gpu.to_string())
            .collect::<Vec<_>>()
    };
    let (bf16, fp16) = (ids(Precision::AmpBf16), ids(Precision::AmpFp16));
    assert!(
        !bf16.iter().any(|g| g == "t4" || g == "v100-16gb")
            && bf16.iter().any(|g| g == "a100-40gb"),
        "{bf16:?}"
    );
    assert!(
        fp16.iter().any(|g| g == "t4") && fp16.iter().any(|g| g == "v100-16gb"),
        "{fp16:?}"
    );
}

/// "Which GPUs can run it?" offers Apple silicon and integrated graphics
/// alone, never as several in one machine; discrete cards in 1, 2, 4 or 8.
#[test]
fn macs_and_integrated_graphics_are_not_multi_gpu_machines() {
    let spec = model_preset("gpt2").unwrap().spec;
    let cfg = TrainConfig::default();
    let options = vramfit_core::plan::which_gpus(&spec, &cfg, &Overheads::default()).unwrap();
    let alone = |id: &str| {
        let counts: Vec<u64> = options
            .iter()
            .filter(|o| o.gpu == id)
            .map(|o| o.gpus)
            .collect();
        assert!(!counts.is_empty(), "{id} is not offered");
        counts
    };
    for id in ["apple-m3-max", "apple-m1", "iris-xe-96eu", "radeon-780m"] {
        assert_eq!(alone(id), [1], "{id}");
    }
    assert!(alone("rtx-4090").contains(&2));
    for gpu in vramfit_core::gpu_presets() {
        let unified = gpu.vendor() == vramfit_core::gpus::Vendor::Apple || gpu.integrated;
        assert_eq!(gpu.clusters(), !unified, "{}", gpu.id);
    }
}
