//! What the training loop keeps of the model's outputs (`--loop-outputs`):
//! a loop whose `outputs = model(**batch)` stays in scope through backward
//! holds the logits there; the Hugging Face Trainer's `compute_loss` returns
//! the loss alone.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::config::LoopOutputs;
use vramfit_core::states::allocation;
use vramfit_core::{
    Attention, Optimizer, Overheads, Phase, Precision, TrainConfig, estimate, model_preset,
};

fn config(loop_outputs: LoopOutputs) -> TrainConfig {
    TrainConfig {
        batch: 8,
        seq: 512,
        precision: Precision::Fp32,
        optimizer: Optimizer::Adam,
        attention: Attention::Sdpa,
        loop_outputs,
        ..TrainConfig::default()
    }
}

/// BERT's masked-LM logits (batch × seq × vocab, fp32 here) stay through
/// backward when the loop keeps the output: the peak, in backward at the
/// loss, grows by exactly their size.
#[test]
fn a_loop_that_keeps_the_outputs_holds_the_logits_through_backward() {
    let spec = model_preset("bert-base-mlm").unwrap().spec;
    let run = |o| estimate(&spec, &config(o), &Overheads::default(), None).unwrap();
    let (dropped, kept) = (run(LoopOutputs::Dropped), run(LoopOutputs::Kept));
    let logits = allocation(8 * 512 * 30522, vramfit_core::dtype::DType::F32).0;
    assert_eq!(kept.peak_phase, Phase::Backward);
    assert_eq!(
        kept.peak_allocated_bytes.0 - dropped.peak_allocated_bytes.0,
        logits,
        "dropped {}, kept {}",
        dropped.peak_allocated_bytes.0,
        kept.peak_allocated_bytes.0
    );
    // Forward is the same until the loss has read the logits (the
    // Trainer's loop frees them then, after `log_softmax`).
    let forward = |e: &vramfit_core::Estimate| -> Vec<(String, u64)> {
        e.timeline
            .iter()
            .filter(|p| p.step == 1 && p.phase == Phase::Forward)
            .take_while(|p| &*p.op != "head.loss")
            .map(|p| (p.op.to_string(), p.allocated_bytes.0))
            .collect()
    };
    assert!(
        forward(&kept)
            .iter()
            .any(|(op, _)| op == "head.loss.log_softmax")
    );
    assert_eq!(forward(&dropped), forward(&kept));
}

/// Whatever the loop keeps is gone by the next step: both settings end
/// every step with the same memory (the model, its gradients and state).
#[test]
fn what_the_loop_kept_is_gone_when_the_step_ends() {
    for id in ["gpt2", "bert-base-mlm", "t5-small", "resnet18"] {
        let spec = model_preset(id).unwrap().spec;
        let run = |o| estimate(&spec, &config(o), &Overheads::default(), None).unwrap();
        let last = |e: &vramfit_core::Estimate| e.timeline.last().unwrap().allocated_bytes.0;
        let (dropped, kept) = (run(LoopOutputs::Dropped), run(LoopOutputs::Kept));
        assert_eq!(last(&dropped), last(&kept), "{id}");
        assert!(
            kept.peak_allocated_bytes >= dropped.peak_allocated_bytes,
            "{id}"
        );
    }
}
