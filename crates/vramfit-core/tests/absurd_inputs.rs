//! Absurd but well-formed inputs: each gives a specific error that names the
//! field and its limit, or a result (saturated where bytes exceed `u64`),
//! never a panic and never a long computation. Each case prints its time;
//! `cargo test -p vramfit-core --release --test absurd_inputs -- --nocapture`
//! shows them (the slowest is printed last by `slowest_case_is_reported`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use std::time::{Duration, Instant};
use vramfit_core::models::{
    MAX_LAYERS, MlpActivation, MlpLayer, MlpSpec, ResNetSpec, VggSpec, VitSpec,
};
use vramfit_core::{
    Error, ModelSpec, Overheads, TrainConfig, estimate, gpu_preset, hf, model_preset,
};

/// Runs `f`, prints how long it took under `name`, and returns its result.
fn timed<T>(name: &str, f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = f();
    let took = start.elapsed();
    println!("{took:>12.3?}  {name}");
    (out, took)
}

fn run(
    name: &str,
    spec: &ModelSpec,
    cfg: &TrainConfig,
) -> (Result<vramfit_core::Estimate, Error>, Duration) {
    let gpu = gpu_preset("h100-sxm").unwrap();
    timed(name, || {
        estimate(spec, cfg, &Overheads::for_gpu(&gpu), Some(&gpu))
    })
}

fn preset(id: &str) -> ModelSpec {
    model_preset(id).unwrap().spec
}

fn small() -> TrainConfig {
    TrainConfig {
        batch: 1,
        seq: 16,
        image: 64,
        ..TrainConfig::default()
    }
}

fn out_of_range(r: Result<vramfit_core::Estimate, Error>, field: &str, max: u64) {
    match r {
        Err(Error::OutOfRange {
            field: f, max: m, ..
        }) => assert_eq!((f, m), (field, max)),
        other => panic!("expected {field} out of range, got {other:?}"),
    }
}

fn message(r: Result<impl std::fmt::Debug, Error>) -> String {
    r.err()
        .map(|e| e.to_string())
        .unwrap_or_else(|| "no error".into())
}

#[test]
fn batch_zero_and_two_to_the_forty_are_refused_with_the_range() {
    out_of_range(
        run(
            "batch 0",
            &preset("gpt2"),
            &TrainConfig {
                batch: 0,
                ..small()
            },
        )
        .0,
        "batch",
        1 << 24,
    );
    out_of_range(
        run(
            "batch 2^40",
            &preset("gpt2"),
            &TrainConfig {
                batch: 1 << 40,
                ..small()
            },
        )
        .0,
        "batch",
        1 << 24,
    );
}

#[test]
fn sequence_zero_and_image_zero_are_refused() {
    out_of_range(
        run("seq 0", &preset("gpt2"), &TrainConfig { seq: 0, ..small() }).0,
        "seq",
        1 << 24,
    );
    out_of_range(
        run(
            "image 0",
            &preset("resnet18"),
            &TrainConfig {
                image: 0,
                ..small()
            },
        )
        .0,
        "image",
        1 << 24,
    );
    out_of_range(
        run(
            "grad-accum 0",
            &preset("resnet18"),
            &TrainConfig {
                grad_accum: 0,
                ..small()
            },
        )
        .0,
        "grad-accum",
        1 << 16,
    );
}

#[test]
fn the_largest_accepted_batch_estimates_or_saturates() {
    let (r, _) = run(
        "llama-tiny, batch 2^24",
        &preset("llama-tiny"),
        &TrainConfig {
            batch: 1 << 24,
            ..small()
        },
    );
    let e = r.unwrap();
    assert!(
        e.peak_allocated_bytes.0 > 1 << 40,
        "{}",
        e.peak_allocated_bytes
    );
    assert!(!e.gpu.unwrap().fits);
}

#[test]
fn a_hundred_thousand_layers_are_refused_with_the_limit_in_every_family() {
    let gpt2 = r#"{"model_type":"gpt2","vocab_size":100,"n_embd":64,"n_layer":100000,"n_head":4}"#;
    let llama = r#"{"model_type":"llama","vocab_size":100,"hidden_size":64,"num_hidden_layers":100000,"num_attention_heads":4,"intermediate_size":128}"#;
    for json in [gpt2, llama] {
        let (r, _) = timed("config.json with 100 000 layers", || hf::import(json));
        let msg = message(r);
        assert!(
            msg.contains("num_hidden_layers") && msg.contains(&MAX_LAYERS.to_string()),
            "{msg}"
        );
    }
    let layers = vec![
        MlpLayer {
            out: 8,
            activation: MlpActivation::Relu
        };
        100_000
    ];
    let specs = [
        (
            "MLP layers",
            ModelSpec::Mlp(MlpSpec {
                input: 8,
                layers,
                block_size: 1,
                classes: 2,
            }),
        ),
        (
            "ResNet residual blocks",
            ModelSpec::ResNet(ResNetSpec {
                stages: [100_000, 1, 1, 1],
                bottleneck: false,
                classes: 10,
            }),
        ),
        (
            "ResNet residual blocks",
            ModelSpec::ResNet(ResNetSpec {
                stages: [u64::MAX; 4],
                bottleneck: true,
                classes: 10,
            }),
        ),
        (
            "VGG layers",
            ModelSpec::Vgg(VggSpec {
                layers: vec![8; 100_000],
                batch_norm: true,
                classes: 10,
            }),
        ),
        (
            "ViT layers",
            ModelSpec::Vit(VitSpec {
                image: 64,
                patch: 16,
                hidden: 64,
                layers: 100_000,
                heads: 4,
                mlp: 128,
                classes: 10,
                implementation: Default::default(),
            }),
        ),
    ];
    for (what, spec) in specs {
        let (r, _) = run(&format!("{what}: 100 000"), &spec, &small());
        match r {
            Err(Error::TooLarge { what: w, limit, .. }) => assert!(
                w.starts_with(what) && limit == MAX_LAYERS.to_string(),
                "{w}, {limit}"
            ),
            other => panic!("{what}: {other:?}"),
        }
    }
}

#[test]
fn a_vocabulary_of_a_billion_estimates() {
    let json = r#"{"model_type":"llama","vocab_size":1000000000,"hidden_size":4096,"num_hidden_layers":2,"num_attention_heads":32,"intermediate_size":11008}"#;
    let (m, _) = timed("import vocab 10^9", || hf::import(json));
    let m = m.unwrap();
    let (r, _) = run(
        "estimate vocab 10^9, seq 512",
        &m.spec,
        &TrainConfig {
            batch: 1,
            seq: 512,
            ..TrainConfig::default()
        },
    );
    let e = r.unwrap();
    assert!(
        e.parameter_count > 8_000_000_000_000,
        "{}",
        e.parameter_count
    );
}

#[test]
fn hidden_size_one_estimates_or_names_the_inconsistency() {
    let gpt2 = r#"{"model_type":"gpt2","vocab_size":10,"n_embd":1,"n_layer":1,"n_head":1}"#;
    let (m, _) = timed("import hidden 1", || hf::import(gpt2));
    let (r, _) = run("estimate hidden 1", &m.unwrap().spec, &small());
    assert!(r.unwrap().peak_allocated_bytes.0 > 0);
    // Two heads of a one-wide hidden state leave a head dimension of zero.
    let llama = r#"{"model_type":"llama","vocab_size":10,"hidden_size":1,"num_hidden_layers":1,"num_attention_heads":2,"intermediate_size":1}"#;
    let msg = message(hf::import(llama));
    assert!(msg.contains("head_dim"), "{msg}");
}

#[test]
fn nan_negative_fractional_and_overflowing_config_values_are_refused() {
    let with = |field: &str, value: &str| {
        format!(
            r#"{{"model_type":"llama","vocab_size":100,"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"{field}":{value}}}"#
        )
    };
    // Numbers beyond f64 do not parse; Python's NaN and infinities (which
    // JSON has not, but `json.dumps` writes) are no sizes, refused by name.
    assert!(
        matches!(
            hf::import(&with("vocab_size", "1e400")),
            Err(Error::ConfigJson(_))
        ),
        "vocab_size: 1e400"
    );
    for (field, value) in [
        ("hidden_size", "NaN"),
        ("hidden_size", "Infinity"),
        ("vocab_size", "-Infinity"),
    ] {
        let msg = message(hf::import(&with(field, value)));
        assert!(
            msg.contains(field) && msg.contains(value),
            "{field}: {value}: {msg}"
        );
    }
    // Negative, fractional and beyond-u64 sizes name the field.
    for (field, value) in [
        ("hidden_size", "-64"),
        ("vocab_size", "100.5"),
        ("num_hidden_layers", "18446744073709551616"),
        ("vocab_size", "1e300"),
    ] {
        let msg = message(hf::import(&with(field, value)));
        assert!(msg.contains(field), "{field}: {value}: {msg}");
    }
    // Sizes within u64 but beyond the widths any model has.
    for (field, value) in [
        ("vocab_size", "18446744073709551615"),
        ("intermediate_size", "4294967297"),
    ] {
        let msg = message(hf::import(&with(field, value)));
        assert!(
            msg.contains(field) && msg.contains("2^32"),
            "{field}: {value}: {msg}"
        );
    }
    // Dropout probabilities outside [0, 1] are refused as PyTorch refuses them.
    for value in ["-0.5", "1.5", "1e308"] {
        let msg = message(hf::import(&with("attention_dropout", value)));
        assert!(
            msg.contains("dropout") && msg.contains("between 0 and 1"),
            "{value}: {msg}"
        );
    }
}

#[test]
fn sizes_whose_bytes_would_overflow_u64_are_refused_with_the_limit() {
    // 2^32 heads of 2^32 dimensions: the projection alone overflows u64.
    let json = r#"{"model_type":"llama","vocab_size":100,"hidden_size":4294967296,"num_hidden_layers":1,"num_attention_heads":1,"head_dim":4294967296,"intermediate_size":4294967296}"#;
    let (r, _) = timed("import 2^32 × 2^32 projection", || hf::import(json));
    match r {
        Err(Error::TooLarge { limit, .. }) => assert_eq!(limit, "2^56 elements"),
        other => panic!("{other:?}"),
    }
    // Eager attention scores at the longest accepted sequence with many heads.
    let wide = r#"{"model_type":"gpt2","vocab_size":100,"n_embd":65536,"n_layer":1,"n_head":65536,"n_positions":0}"#;
    let spec = hf::import(wide).unwrap().spec;
    let (r, _) = run(
        "eager scores 2^16 heads × (2^24)^2",
        &spec,
        &TrainConfig {
            batch: 1,
            seq: 1 << 24,
            attention: vramfit_core::Attention::Eager,
            ..TrainConfig::default()
        },
    );
    let msg = message(r);
    assert!(
        msg.contains("attention scores") && msg.contains("2^56"),
        "{msg}"
    );
    // VGG channels on the largest image.
    let vgg = ModelSpec::Vgg(VggSpec {
        layers: vec![1 << 20],
        batch_norm: false,
        classes: 10,
    });
    let (r, _) = run(
        "VGG 2^20 channels on 2^24 pixels",
        &vgg,
        &TrainConfig {
            image: 1 << 24,
            ..small()
        },
    );
    assert!(matches!(r, Err(Error::TooLarge { .. })), "{r:?}");
    // MLP layers whose weight alone exceeds the limit.
    let mlp = ModelSpec::Mlp(MlpSpec {
        input: 1 << 32,
        layers: vec![MlpLayer {
            out: 1 << 32,
            activation: MlpActivation::None,
        }],
        block_size: 1,
        classes: 2,
    });
    let (r, _) = run("MLP 2^32 × 2^32 weight", &mlp, &small());
    assert!(matches!(r, Err(Error::TooLarge { .. })), "{r:?}");
}

#[test]
fn the_largest_accepted_sizes_saturate_instead_of_overflowing() {
    // A 70B model at the longest accepted sequence and the largest batch:
    // about 2^80 bytes of activations, reported as the saturated u64 maximum.
    let cfg = TrainConfig {
        batch: 1 << 24,
        seq: 1 << 24,
        attention: vramfit_core::Attention::Flash,
        ..TrainConfig::default()
    };
    let (r, _) = run(
        "llama-2-70b, batch 2^24, seq 2^24",
        &preset("llama-2-70b"),
        &cfg,
    );
    let e = r.unwrap();
    assert_eq!(e.peak_allocated_bytes.0, u64::MAX, "saturated");
    assert!(!e.gpu.unwrap().fits);
}

#[test]
fn slowest_case_is_reported() {
    // Each case again, timed; the slowest is printed (no timed assertion: CI machines vary).
    let cases: Vec<(&str, ModelSpec, TrainConfig)> = vec![
        (
            "llama-tiny, batch 2^24",
            preset("llama-tiny"),
            TrainConfig {
                batch: 1 << 24,
                ..small()
            },
        ),
        (
            "gpt3-175b, seq 2048",
            preset("gpt3-175b"),
            TrainConfig {
                batch: 1,
                seq: 2048,
                ..TrainConfig::default()
            },
        ),
        (
            "llama-2-70b, flash, batch 2^24, seq 2^24",
            preset("llama-2-70b"),
            TrainConfig {
                batch: 1 << 24,
                seq: 1 << 24,
                attention: vramfit_core::Attention::Flash,
                ..TrainConfig::default()
            },
        ),
        (
            "the deepest accepted Llama (MAX_LAYERS layers), 8k wide",
            vramfit_core::presets::llama(128_256, 8192, MAX_LAYERS, 64, 8, 28_672, false, false),
            TrainConfig {
                batch: 1,
                seq: 4096,
                precision: vramfit_core::Precision::Bf16,
                ..TrainConfig::default()
            },
        ),
        (
            "the deepest accepted ResNet (MAX_LAYERS blocks), 1-pixel images",
            ModelSpec::ResNet(ResNetSpec {
                stages: [MAX_LAYERS - 3, 1, 1, 1],
                bottleneck: false,
                classes: 1,
            }),
            TrainConfig {
                batch: 1,
                image: 1,
                ..TrainConfig::default()
            },
        ),
    ];
    let mut slowest = (Duration::ZERO, "");
    for (name, spec, cfg) in &cases {
        let (r, took) = run(name, spec, cfg);
        assert!(r.is_ok(), "{name}: {r:?}");
        if took > slowest.0 {
            slowest = (took, name);
        }
    }
    println!("slowest: {:?} ({})", slowest.0, slowest.1);
}
