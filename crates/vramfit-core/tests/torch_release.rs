//! What autograd saves changed between PyTorch releases (`--pytorch`):
//! before 1.11, `softmax` and `log_softmax` kept their input for backward
//! as well as their output (pytorch/pytorch#64000).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::config::TorchRelease;
use vramfit_core::dtype::DType;
use vramfit_core::states::allocation;
use vramfit_core::{
    Attention, Optimizer, Overheads, Phase, Precision, TrainConfig, estimate, model_preset,
};

fn config(pytorch: TorchRelease, attention: Attention) -> TrainConfig {
    TrainConfig {
        batch: 4,
        seq: 512,
        precision: Precision::Fp32,
        optimizer: Optimizer::AdamW,
        attention,
        pytorch,
        ..TrainConfig::default()
    }
}

/// BERT-large with eager attention at batch 4 and 512 tokens: under 1.10
/// each of the 24 layers also keeps its softmax's input, the fp32 scores
/// (4 × 16 heads × 512 × 512), and the classification loss its logits.
/// At the start of backward, where every saved tensor is alive, memory is
/// higher by exactly those bytes.
#[test]
fn before_1_11_softmax_keeps_its_input_for_backward() {
    let spec = model_preset("bert-large").unwrap().spec;
    let run = |r| {
        estimate(
            &spec,
            &config(r, Attention::Eager),
            &Overheads::default(),
            None,
        )
        .unwrap()
    };
    let (current, old) = (run(TorchRelease::Current), run(TorchRelease::Torch110));
    assert_eq!(old.peak_phase, Phase::Backward);
    let scores = allocation(4 * 16 * 512 * 512, DType::F32).0;
    let logits = allocation(4 * 2, DType::F32).0;
    let at_backward_start = |e: &vramfit_core::Estimate| {
        e.timeline
            .iter()
            .filter(|p| p.step == 2)
            .find(|p| p.phase == Phase::Backward)
            .unwrap()
            .allocated_bytes
            .0
    };
    assert_eq!(
        at_backward_start(&old) - at_backward_start(&current),
        24 * scores + logits
    );
    assert!(old.peak_allocated_bytes.0 >= current.peak_allocated_bytes.0 + 24 * scores);
}

/// A fused attention kernel has no softmax of its own: there the release
/// changes only what the loss keeps (a classifier's few logits).
#[test]
fn fused_attention_has_no_softmax_input_to_keep() {
    let spec = model_preset("bert-large").unwrap().spec;
    let run = |r| {
        estimate(
            &spec,
            &config(r, Attention::Sdpa),
            &Overheads::default(),
            None,
        )
        .unwrap()
        .peak_allocated_bytes
        .0
    };
    let difference = run(TorchRelease::Torch110) - run(TorchRelease::Current);
    assert!(difference <= 1 << 20, "{difference}");
}
