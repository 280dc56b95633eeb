//! What the hardware allows: bf16 only where the architecture has it,
//! Apple's unified memory capped at Metal's default working set, and a
//! batch to use that keeps the safety margin free.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::gpus::{MemoryLimit, Vendor};
use vramfit_core::overheads::{SAFETY_MARGIN, usable};
use vramfit_core::units::GIB;
use vramfit_core::{
    Bytes, Overheads, Precision, TrainConfig, estimate, gpu_preset, gpu_presets, model_preset,
};

#[test]
fn gpus_without_bf16_are_the_pre_ampere_nvidia_ones_and_the_apple_m1() {
    for id in [
        "t4",
        "v100-16gb",
        "v100-32gb",
        "rtx-2080-ti",
        "gtx-1080-ti",
        "gtx-1060-6gb",
        "apple-m1",
        "apple-m1-max",
    ] {
        let gpu = gpu_preset(id).unwrap();
        assert!(!gpu.bf16 && !gpu.arch.has_bf16(), "{id}");
    }
    for id in [
        "a100-80gb",
        "rtx-4090",
        "rtx-3090",
        "h100-sxm",
        "apple-m2",
        "l4",
    ] {
        assert!(gpu_preset(id).unwrap().bf16, "{id}");
    }
    // The flag is the architecture's, on every preset.
    for gpu in gpu_presets() {
        assert_eq!(gpu.bf16, gpu.arch.has_bf16(), "{}", gpu.id);
    }
}

#[test]
fn a_bf16_configuration_on_a_gpu_without_bf16_is_offered_fp16() {
    let spec = model_preset("gpt2").unwrap().spec;
    let fit = |gpu: &str, precision| {
        let gpu = gpu_preset(gpu).unwrap();
        let cfg = TrainConfig {
            precision,
            batch: 2,
            ..TrainConfig::default()
        };
        estimate(&spec, &cfg, &Overheads::for_gpu(&gpu), Some(&gpu))
            .unwrap()
            .gpu
            .unwrap()
            .without_bf16
    };
    assert_eq!(fit("t4", Precision::AmpBf16), Some(Precision::AmpFp16));
    assert_eq!(fit("v100-16gb", Precision::Bf16), Some(Precision::Fp16));
    assert_eq!(
        fit("apple-m1", Precision::AmpBf16),
        Some(Precision::AmpFp16)
    );
    assert_eq!(fit("t4", Precision::AmpFp16), None);
    assert_eq!(fit("t4", Precision::Fp32), None);
    assert_eq!(fit("a100-80gb", Precision::AmpBf16), None);
}

#[test]
fn apple_gpus_get_metals_default_working_set_of_their_unified_memory() {
    let o = Overheads::default();
    // Two thirds up to 32 GiB (10922.67 MB of 16 GB as Metal reports it),
    // three quarters above (49152 MiB of 64 GB).
    let m1 = gpu_preset("apple-m1").unwrap();
    assert_eq!(
        m1.memory_limit(),
        MemoryLimit::WorkingSet {
            numerator: 2,
            denominator: 3
        }
    );
    assert_eq!(usable(&m1, &o), Bytes(16 * GIB * 2 / 3));
    let m1_max = gpu_preset("apple-m1-max").unwrap();
    assert_eq!(usable(&m1_max, &o), Bytes(48 * GIB));
    let m2 = gpu_preset("apple-m2").unwrap();
    assert_eq!(usable(&m2, &o), Bytes(16 * GIB));
    // Every Apple GPU keeps between 65 % and 75 % of its memory; others all
    // of what their runtime offers: CUDA's total (NVML's less the driver's
    // reservation) on an NVIDIA GPU with a published reading, a few hundred
    // MiB under the marketed size, 8 % on an A10 (ECC on GDDR6); the marketed size elsewhere.
    for gpu in gpu_presets() {
        let share = usable(&gpu, &o).0 as f64 / gpu.memory_bytes.0 as f64;
        if gpu.vendor() == Vendor::Apple {
            assert!((0.65..=0.75).contains(&share), "{}: {share}", gpu.id);
            continue;
        }
        assert_eq!(gpu.memory_limit(), MemoryLimit::Dedicated, "{}", gpu.id);
        assert_eq!(usable(&gpu, &o), gpu.runtime_memory(), "{}", gpu.id);
        match vramfit_core::driver_reserve::cuda_total(&gpu.id) {
            Some(cuda) => {
                assert_eq!(gpu.runtime_memory(), cuda, "{}", gpu.id);
                assert!((0.90..1.0).contains(&share), "{}: {share}", gpu.id);
            }
            None => assert_eq!(gpu.runtime_memory(), gpu.memory_bytes, "{}", gpu.id),
        }
    }
    // The estimate's verdict uses it.
    let spec = model_preset("gpt2").unwrap().spec;
    let fit = estimate(
        &spec,
        &TrainConfig::default(),
        &Overheads::for_gpu(&m1),
        Some(&m1),
    )
    .unwrap()
    .gpu
    .unwrap();
    assert_eq!(fit.usable_bytes, Bytes(16 * GIB * 2 / 3));
    assert_eq!(fit.memory_bytes, Bytes(16 * GIB));
}

#[test]
fn the_batch_to_use_keeps_the_safety_margin_free() {
    let spec = model_preset("gpt2").unwrap().spec;
    let gpu = gpu_preset("rtx-3060-12gb").unwrap();
    let o = Overheads::for_gpu(&gpu);
    let cfg = TrainConfig {
        precision: Precision::AmpBf16,
        ..TrainConfig::default()
    };
    let fit = estimate(&spec, &cfg, &o, Some(&gpu)).unwrap().gpu.unwrap();
    assert!(
        fit.margin_batch >= 1 && fit.margin_batch <= fit.max_batch,
        "{fit:?}"
    );
    let at = |batch| {
        estimate(&spec, &TrainConfig { batch, ..cfg }, &o, None)
            .unwrap()
            .device_used_bytes
            .0 as f64
    };
    let kept = fit.usable_bytes.0 as f64 * (1.0 - SAFETY_MARGIN);
    assert!(at(fit.margin_batch) <= kept);
    assert!(at(fit.margin_batch + 1) > kept);
}

#[test]
fn llama_cpp_on_an_apple_gpu_fits_in_metals_working_set() {
    use vramfit_core::config::Mode;
    use vramfit_core::engines::{Engine, ServeWeights, Serving};
    let spec = model_preset("llama-3-8b").unwrap().spec;
    let m1 = gpu_preset("apple-m1").unwrap();
    let train = TrainConfig {
        mode: Mode::Inference,
        batch: 1,
        seq: 1,
        context: 8192,
        ..TrainConfig::default()
    };
    let serving = Serving {
        engine: Engine::LlamaCpp,
        weights: "q4_k_m".parse::<ServeWeights>().unwrap(),
        ..Serving::default()
    };
    let e = vramfit_core::engines::estimate(&spec, Some(&m1), &train, &serving).unwrap();
    let fit = e.fit.unwrap();
    assert_eq!(fit.usable_bytes, Bytes(16 * GIB * 2 / 3));
    assert!(fit.fits);
}

#[test]
fn a_verdict_says_why_cuda_offers_less_than_the_marketed_memory() {
    use vramfit_core::units::MIB;
    let fit = |id: &str| {
        let gpu = gpu_preset(id).unwrap();
        let spec = model_preset("gpt2").unwrap().spec;
        estimate(
            &spec,
            &TrainConfig::default(),
            &Overheads::for_gpu(&gpu),
            Some(&gpu),
        )
        .unwrap()
        .gpu
        .unwrap()
    };
    // RTX 4090: NVML's total (24564 MiB) is under the marketed 24 GiB too.
    let rtx = fit("rtx-4090");
    assert_eq!(rtx.runtime_bytes, Bytes((24564 - 354) * MIB));
    let short = rtx.runtime_shortfall().unwrap();
    assert_eq!(short.reserved, Bytes(354 * MIB));
    assert!(short.board_under_marketed);
    // A100 80GB: the board reports all 81920 MiB; the driver's 763 MiB alone.
    let a100 = fit("a100-80gb").runtime_shortfall().unwrap();
    assert_eq!(a100.reserved, Bytes(763 * MIB));
    assert!(!a100.board_under_marketed);
    // No published reading: the marketed size, nothing to explain.
    let t4 = fit("t4");
    assert_eq!(t4.runtime_bytes, t4.memory_bytes);
    assert_eq!(t4.runtime_shortfall(), None);
}
