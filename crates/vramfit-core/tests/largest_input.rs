//! The largest input that fits (`max_input_for`): the longest sequence of a
//! text model, the largest image of a vision model, at the configured batch.
//! Exact like the largest batch: the answer fits and the next size the
//! model accepts does not.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::config::Mode;
use vramfit_core::overheads::usable;
use vramfit_core::{
    Overheads, Precision, TrainConfig, estimate, gpu_preset, max_input_for, model_preset,
};

/// Whether `cfg` runs on `gpu` (the caching allocator may return cached
/// segments on the way), or `None` when the model does not accept it.
fn fits(model: &str, cfg: &TrainConfig, o: &Overheads, gpu: &str) -> Option<bool> {
    let spec = model_preset(model).unwrap().spec;
    let gpu = gpu_preset(gpu).unwrap();
    estimate(&spec, cfg, o, Some(&gpu))
        .ok()
        .map(|e| e.gpu.unwrap().fits)
}

fn largest(model: &str, gpu: &str, cfg: &TrainConfig) -> (Option<u64>, u64, Overheads) {
    let spec = model_preset(model).unwrap().spec;
    let gpu = gpu_preset(gpu).unwrap();
    let o = Overheads::for_gpu(&gpu);
    let cap = usable(&gpu, &o);
    (max_input_for(&spec, cfg, &o, cap).unwrap(), cap.0, o)
}

#[test]
fn the_longest_sequence_fits_and_one_token_more_does_not() {
    // GPT-2 (learned positions up to 1024), BERT (512) and Llama (RoPE: no limit but memory).
    let cases = [
        (
            "gpt2",
            "rtx-3060-12gb",
            TrainConfig {
                batch: 16,
                ..TrainConfig::default()
            },
        ),
        (
            "bert-base",
            "gtx-1060-6gb",
            TrainConfig {
                batch: 32,
                ..TrainConfig::default()
            },
        ),
        (
            "llama-tiny",
            "rtx-4060",
            TrainConfig {
                batch: 64,
                precision: Precision::AmpBf16,
                ..TrainConfig::default()
            },
        ),
        (
            "llama-2-7b",
            "a100-80gb",
            TrainConfig {
                batch: 1,
                mode: Mode::FinetuneLora,
                precision: Precision::Bf16,
                ..TrainConfig::default()
            },
        ),
    ];
    for (model, gpu, cfg) in cases {
        let (longest, _, o) = largest(model, gpu, &cfg);
        let seq = longest.unwrap_or_else(|| panic!("{model}: no sequence length"));
        eprintln!("{model} on {gpu}: longest sequence {seq}");
        assert!(seq > 0, "{model} on {gpu}: nothing fits");
        let at = |seq: u64| fits(model, &TrainConfig { seq, ..cfg }, &o, gpu);
        assert!(
            at(seq) == Some(true),
            "{model} on {gpu}: seq {seq} does not fit"
        );
        // One token more does not fit, or the model does not take it (its learned positions end).
        assert!(
            at(seq + 1) != Some(true),
            "{model} on {gpu}: seq {} fits too",
            seq + 1
        );
    }
}

#[test]
fn a_model_that_fits_at_its_longest_sequence_answers_its_learned_positions() {
    let (longest, _, _) = largest(
        "gpt2",
        "a100-80gb",
        &TrainConfig {
            batch: 1,
            ..TrainConfig::default()
        },
    );
    assert_eq!(longest, Some(1024));
}

#[test]
fn the_largest_image_fits_and_one_pixel_more_does_not() {
    for (model, gpu, batch) in [
        ("resnet50", "rtx-3060-12gb", 64),
        ("mobilenet_v2", "gtx-1060-6gb", 128),
        ("vgg16", "rtx-4090", 16),
    ] {
        let cfg = TrainConfig {
            batch,
            ..TrainConfig::default()
        };
        let (largest, _, o) = largest(model, gpu, &cfg);
        let image = largest.unwrap_or_else(|| panic!("{model}: no image size"));
        eprintln!("{model} on {gpu}: largest image {image}");
        assert!(image > 0, "{model} on {gpu}: nothing fits");
        let at = |image: u64| fits(model, &TrainConfig { image, ..cfg }, &o, gpu);
        assert!(
            at(image) == Some(true),
            "{model}: image {image} does not fit"
        );
        assert!(
            at(image + 1) == Some(false),
            "{model}: image {} fits too",
            image + 1
        );
    }
}

#[test]
fn a_vit_takes_only_its_own_image_size_and_an_mlp_has_no_input_size() {
    let cfg = TrainConfig {
        batch: 8,
        ..TrainConfig::default()
    };
    assert_eq!(
        largest("vit_b_16", "a100-80gb", &cfg).0,
        Some(224),
        "ViT-B/16 fits at 224 px, its only size"
    );
    assert_eq!(
        largest(
            "vit_b_16",
            "gtx-1060-6gb",
            &TrainConfig { batch: 512, ..cfg }
        )
        .0,
        Some(0)
    );
    assert_eq!(largest("mlp-small", "rtx-4090", &cfg).0, None);
}

#[test]
fn when_not_even_the_smallest_input_fits_the_answer_is_zero() {
    let cfg = TrainConfig {
        batch: 1,
        ..TrainConfig::default()
    };
    assert_eq!(largest("llama-2-70b", "rtx-4060", &cfg).0, Some(0));
}

#[test]
fn a_configuration_the_model_rejects_is_an_error() {
    let spec = model_preset("gpt2").unwrap().spec;
    let gpu = gpu_preset("rtx-4090").unwrap();
    let o = Overheads::for_gpu(&gpu);
    let too_long = TrainConfig {
        seq: 4096,
        ..TrainConfig::default()
    };
    assert!(max_input_for(&spec, &too_long, &o, usable(&gpu, &o)).is_err());
}
