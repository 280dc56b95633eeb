//! Autocast's weight cache: `cached_cast` keeps the low-precision copy of
//! every trained fp32 parameter a matmul reads until the outermost autocast
//! region exits, also in checkpointing's forward, where no op saves it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::config::CheckpointMode;
use vramfit_core::dtype::DType;
use vramfit_core::states::allocation;
use vramfit_core::{
    Attention, Checkpointing, Estimate, Optimizer, Overheads, Phase, Precision, TrainConfig,
    estimate, model_preset,
};

fn config(precision: Precision, checkpointing: Checkpointing) -> TrainConfig {
    TrainConfig {
        batch: 1,
        seq: 128,
        precision,
        optimizer: Optimizer::Adam,
        attention: Attention::Sdpa,
        checkpointing,
        ..TrainConfig::default()
    }
}

/// `memory_allocated()` after the last op of step 2's forward (the loss)
/// and after the first op of its backward.
fn around_forward_end(e: &Estimate) -> (u64, u64) {
    let step2: Vec<_> = e.timeline.iter().filter(|p| p.step == 2).collect();
    let last_forward = step2
        .iter()
        .rposition(|p| p.phase == Phase::Forward)
        .unwrap();
    (
        step2[last_forward].allocated_bytes.0,
        step2[last_forward + 1].allocated_bytes.0,
    )
}

/// Under autocast with every block checkpointed, nothing saves the blocks'
/// weight copies, yet the cache keeps all of them until the forward ends:
/// the forward ends holding at least their bytes more than the fp32 run
/// of the same checkpointed model, whose block inputs are the same fp32
/// residual stream, and backward starts without them.
#[test]
fn checkpointed_blocks_keep_their_cached_weight_copies_until_the_forward_ends() {
    let spec = model_preset("bert-base").unwrap().spec;
    let g = spec
        .lower(&config(
            Precision::AmpFp16,
            Checkpointing::Mode(CheckpointMode::Full),
        ))
        .unwrap();
    assert!(!g.autocast_cached.is_empty());
    let cached: u64 = g
        .autocast_cached
        .iter()
        .map(|t| allocation(g.tensor(*t).unwrap().numel.at(1), DType::F16).0)
        .sum();
    // Every linear weight of BERT-base's blocks is cached: 12 × 7.08M
    // parameters at two bytes, 162 MiB and more with the pooler and the
    // classifier.
    assert!(cached > 12 * 7_077_888 * 2, "{cached}");

    let run = |p| {
        estimate(
            &spec,
            &config(p, Checkpointing::Mode(CheckpointMode::Full)),
            &Overheads::default(),
            None,
        )
        .unwrap()
    };
    let (amp_end, amp_backward) = around_forward_end(&run(Precision::AmpFp16));
    let (fp32_end, _) = around_forward_end(&run(Precision::Fp32));
    // (The head's small activations differ in type: within a MiB.)
    assert!(
        (amp_end - fp32_end).abs_diff(cached) < 1 << 20,
        "amp {amp_end}, fp32 {fp32_end}, cached {cached}"
    );
    // The region exits before backward: its first op runs without the cache.
    assert!(
        amp_backward + cached <= amp_end + cached / 4,
        "end of forward {amp_end}, first backward op {amp_backward}, cached {cached}"
    );
}

/// Without checkpointing every cached copy is also saved by its matmul for
/// backward, so the cache changes nothing there; frozen weights are cast
/// anew at each use, not cached.
#[test]
fn only_trained_weights_read_under_autocast_are_cached() {
    let spec = model_preset("bert-base").unwrap().spec;
    let fp32 = spec
        .lower(&config(Precision::Fp32, Checkpointing::NONE))
        .unwrap();
    assert!(fp32.autocast_cached.is_empty());
    let amp = spec
        .lower(&config(Precision::AmpFp16, Checkpointing::NONE))
        .unwrap();
    let frozen = spec
        .lower(&TrainConfig {
            mode: vramfit_core::config::Mode::FinetuneLora,
            ..config(Precision::AmpFp16, Checkpointing::NONE)
        })
        .unwrap();
    // LoRA's base weights are frozen: only the adapters' copies are cached.
    let numel = |g: &vramfit_core::Graph| -> u64 {
        g.autocast_cached
            .iter()
            .map(|t| g.tensor(*t).unwrap().numel.at(1))
            .sum()
    };
    assert!(numel(&amp) > 80_000_000, "{}", numel(&amp));
    assert!(numel(&frozen) < numel(&amp) / 20, "{}", numel(&frozen));
}

/// A loop that also runs backward inside `with autocast():` (milabench's
/// torchvision loop) keeps every cached copy until its backward ends: at
/// the end of backward it holds exactly their bytes more than a loop that
/// leaves the region after the loss, where each copy went with the op
/// that saved it.
#[test]
fn a_region_around_backward_keeps_the_copies_until_backward_ends() {
    use vramfit_core::config::AutocastRegion;
    let spec = model_preset("convnext_tiny").unwrap().spec;
    let cfg = |autocast_region| TrainConfig {
        batch: 2,
        image: 64,
        precision: Precision::AmpFp16,
        optimizer: Optimizer::Sgd,
        autocast_region,
        ..TrainConfig::default()
    };
    let g = spec.lower(&cfg(AutocastRegion::Backward)).unwrap();
    let cached: u64 = g
        .autocast_cached
        .iter()
        .map(|t| allocation(g.tensor(*t).unwrap().numel.at(1), DType::F16).0)
        .sum();
    // ConvNeXt-T's 28.6M parameters, most of them read through a copy.
    assert!(cached > 40 << 20, "{cached}");
    let end_of_backward = |region| {
        let e = estimate(&spec, &cfg(region), &Overheads::default(), None).unwrap();
        e.timeline
            .iter()
            .rfind(|p| p.step == 2 && p.phase == Phase::Backward)
            .unwrap()
            .allocated_bytes
            .0
    };
    assert_eq!(
        end_of_backward(AutocastRegion::Backward) - end_of_backward(AutocastRegion::Forward),
        cached
    );
}
