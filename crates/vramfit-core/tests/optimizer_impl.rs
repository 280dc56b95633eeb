//! `torch.optim`'s three code paths for Adam/AdamW (`--optimizer-impl`):
//! the same state, different step temporaries (`torch/optim/adam.py`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::Phase;
use vramfit_core::states::allocation;
use vramfit_core::{
    DType, Estimate, Optimizer, OptimizerImpl, Overheads, TrainConfig, estimate, model_preset,
};

fn run(model: &str, optimizer: Optimizer, imp: OptimizerImpl) -> Estimate {
    let spec = model_preset(model).unwrap().spec;
    // A small batch: the optimizer step holds the peak.
    let cfg = TrainConfig {
        batch: 1,
        seq: 64,
        optimizer,
        optimizer_impl: imp,
        ..TrainConfig::default()
    };
    estimate(&spec, &cfg, &Overheads::default(), None).unwrap()
}

#[test]
fn foreach_holds_one_temporary_per_parameter_loop_two_of_the_largest_fused_none() {
    let spec = model_preset("gpt2").unwrap().spec;
    let g = spec.lower(&TrainConfig::default()).unwrap();
    let sizes: Vec<u64> = g
        .params
        .iter()
        .filter(|p| p.trainable)
        .map(|p| allocation(p.numel(), DType::F32).0)
        .collect();
    let all: u64 = sizes.iter().sum();
    let largest = *sizes.iter().max().unwrap();
    let foreach = run("gpt2", Optimizer::AdamW, OptimizerImpl::Foreach);
    let fused = run("gpt2", Optimizer::AdamW, OptimizerImpl::Fused);
    let looped = run("gpt2", Optimizer::AdamW, OptimizerImpl::Loop);
    for e in [&foreach, &looped] {
        assert_eq!(
            e.peak_phase,
            Phase::Optimizer,
            "{}",
            e.config.optimizer_impl
        );
    }
    let temps = |e: &Estimate| e.at_peak.temporary.0;
    // The step's temporaries at the peak, beyond what the three share.
    assert_eq!(temps(&foreach) - temps(&looped), all - 2 * largest);
    assert!(fused.peak_allocated_bytes < looped.peak_allocated_bytes);
    // Fused keeps each parameter's `step` as a 0-d fp32 tensor on the GPU.
    let steps = 512 * sizes.len() as u64;
    assert_eq!(
        fused.at_peak.optimizer_states.0,
        foreach.at_peak.optimizer_states.0 + steps
    );
}

#[test]
fn optimizers_with_one_implementation_ignore_the_choice() {
    for o in [
        Optimizer::Sgd,
        Optimizer::SgdMomentum,
        Optimizer::AdamW8bit,
        Optimizer::Adafactor,
        Optimizer::Lion,
    ] {
        let base = run("gpt2", o, OptimizerImpl::Foreach).peak_allocated_bytes;
        for imp in [OptimizerImpl::Fused, OptimizerImpl::Loop] {
            assert_eq!(run("gpt2", o, imp).peak_allocated_bytes, base, "{o} {imp}");
        }
    }
}
