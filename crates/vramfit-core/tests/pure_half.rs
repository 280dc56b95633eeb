//! Pure half precision (`model.half()`): the model only takes half inputs,
//! so images and features are half too and every activation is half the
//! size of fp32's. Under autocast the inputs stay fp32.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::{Overheads, Precision, TrainConfig, estimate, model_preset};

fn activations(model: &str, precision: Precision) -> u64 {
    let spec = model_preset(model).unwrap().spec;
    let cfg = TrainConfig {
        batch: 16,
        image: 224,
        precision,
        ..TrainConfig::default()
    };
    let e = estimate(&spec, &cfg, &Overheads::default(), None).unwrap();
    e.layers.iter().map(|l| l.saved_bytes.0).sum()
}

#[test]
fn pure_half_cnn_vit_and_mlp_keep_half_sized_activations() {
    for model in ["resnet50", "vit_b_16", "mlp-small"] {
        let fp32 = activations(model, Precision::Fp32);
        for half in [Precision::Bf16, Precision::Fp16] {
            let ratio = activations(model, half) as f64 / fp32 as f64;
            // Half of fp32's, give or take 512-byte rounding and int64 labels;
            // a ViT in half precision also switches to the memory-efficient
            // attention kernel, which keeps less than the fp32 math path.
            let low = if model == "vit_b_16" { 0.40 } else { 0.49 };
            assert!(
                (low..=0.51).contains(&ratio),
                "{model} {half}: {ratio:.3} of fp32's saved bytes"
            );
        }
    }
}
