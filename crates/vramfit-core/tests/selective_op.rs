//! Selective activation checkpointing per op (`--checkpointing selective-op`),
//! torchtitan's policy: each checkpointed block keeps, from forward, the
//! outputs of its fused attention kernel and of every matmul but each second
//! one; everything else is recomputed before the block's backward.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use std::collections::BTreeSet;
use vramfit_core::graph::{Graph, Op, OpKind};
use vramfit_core::states::allocation;
use vramfit_core::{
    Attention, CheckpointMode, Checkpointing, Overheads, Phase, Precision, TrainConfig, estimate,
    model_preset,
};

fn config(checkpointing: CheckpointMode) -> TrainConfig {
    TrainConfig {
        batch: 2,
        seq: 64,
        precision: Precision::Fp32,
        attention: Attention::Sdpa,
        checkpointing: Checkpointing::Mode(checkpointing),
        ..TrainConfig::default()
    }
}

/// The last name segment of each op in block `block` that `pick` (given the
/// op and whether the policy keeps it) chooses.
fn names_in_block(g: &Graph, block: u32, pick: impl Fn(&Op, bool) -> bool) -> Vec<String> {
    g.ops
        .iter()
        .zip(g.op_sac_saves())
        .filter(|(op, kept)| op.block == Some(block) && pick(op, *kept))
        .map(|(op, _)| op.name.rsplit('.').next().unwrap().to_string())
        .collect()
}

#[test]
fn the_policy_keeps_the_attention_kernel_and_the_first_third_fifth_and_seventh_matmul_of_each_block()
 {
    let spec = model_preset("llama-tiny").unwrap().spec;
    let g = spec.lower(&config(CheckpointMode::SelectiveOp)).unwrap();
    let linears = names_in_block(&g, 0, |op, _| op.kind == OpKind::Linear);
    // transformers' LlamaDecoderLayer runs q, k, v, o, then down(act(gate(x)) * up(x)).
    assert_eq!(
        linears,
        [
            "q_proj",
            "k_proj",
            "v_proj",
            "o_proj",
            "gate_proj",
            "up_proj",
            "down_proj"
        ]
    );
    let attention = names_in_block(&g, 0, |op, _| op.kind == OpKind::FusedAttention);
    assert_eq!(attention.len(), 1, "one fused attention op per block");
    // In graph order: the attention kernel runs after v_proj, before o_proj.
    let want = ["q_proj", "v_proj", &attention[0], "gate_proj", "down_proj"];
    assert_eq!(names_in_block(&g, 0, |_, kept| kept), want);
    // The count starts again in each block: the last block keeps the same ops.
    let last = g.ops.iter().filter_map(|op| op.block).max().unwrap();
    assert!(last > 0);
    assert_eq!(names_in_block(&g, last, |_, kept| kept), want);
    // Nothing outside the blocks (embedding, final norm, head, loss).
    assert!(
        g.ops
            .iter()
            .zip(g.op_sac_saves())
            .all(|(op, kept)| !kept || op.block.is_some())
    );
}

/// At the end of forward a per-op checkpointed model holds exactly what full
/// checkpointing holds plus the kept outputs; its backward recomputes less,
/// so its peak lies between full checkpointing's and none's.
#[test]
fn forward_holds_what_full_checkpointing_holds_plus_the_kept_outputs() {
    let spec = model_preset("llama-tiny").unwrap().spec;
    let end_of_forward = |mode| {
        let e = estimate(&spec, &config(mode), &Overheads::default(), None).unwrap();
        let last = e
            .timeline
            .iter()
            .rfind(|p| p.step == 1 && p.phase == Phase::Forward)
            .unwrap();
        (last.allocated_bytes.0, e.peak_allocated_bytes.0)
    };
    let (full, full_peak) = end_of_forward(CheckpointMode::Full);
    let (per_op, per_op_peak) = end_of_forward(CheckpointMode::SelectiveOp);
    let (_, none_peak) = end_of_forward(CheckpointMode::None);

    let cfg = config(CheckpointMode::SelectiveOp);
    let g = spec.lower(&cfg).unwrap();
    let mut storages = BTreeSet::new();
    for (op, kept) in g.ops.iter().zip(g.op_sac_saves()) {
        if kept {
            storages.extend(op.outputs.iter().map(|t| g.storage_of(*t)));
        }
    }
    let kept_bytes: u64 = storages
        .iter()
        .map(|t| {
            let t = g.tensor(*t).unwrap();
            let numel = t.numel.fixed + t.numel.per_sample * cfg.batch;
            allocation(numel, t.dtype).0
        })
        .sum();
    assert!(kept_bytes > 0);
    assert_eq!(per_op - full, kept_bytes, "full {full}, per op {per_op}");
    assert!(
        full_peak <= per_op_peak && per_op_peak <= none_peak,
        "peaks: full {full_peak}, per op {per_op_peak}, none {none_peak}"
    );
}
