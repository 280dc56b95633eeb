//! transformers' `apply_rotary_pos_emb` reaches the caching allocator as the
//! separate requests Python makes, not as one block: `x * cos`; in
//! `rotate_half`, `-x2` (half of `x`) and the `torch.cat` of the halves;
//! `* sin`; then the sum (the output), or for a partial rotary (GPT-NeoX,
//! Phi-3) the sum and its `torch.cat` with the pass-through part. The H200
//! snapshot of the small Qwen3 run shows them at `modeling_qwen3.py:168`
//! and `:144` (`rotate_half`) as 128, 64, 128, 128 and 128 MiB, in that
//! order. One block of twice `x` made the allocator reserve a segment per
//! layer that the real run never asks for.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // Tests fail loudly by design.

use vramfit_core::graph::{Graph, Numel, Op, TempStep};
use vramfit_core::states::allocation;
use vramfit_core::{Precision, TrainConfig, model_preset};

const BATCH: u64 = 2;

fn graph(id: &str) -> Graph {
    let cfg = TrainConfig {
        batch: BATCH,
        seq: 256,
        precision: Precision::AmpBf16,
        ..TrainConfig::default()
    };
    model_preset(id).unwrap().spec.lower(&cfg).unwrap()
}

fn bytes(n: Numel) -> u64 {
    n.fixed + n.per_sample * BATCH
}

/// The first op named `…rotary_q`, and the bytes of its input and output.
fn rotary_q(g: &Graph) -> (&Op, u64, u64) {
    let op = g
        .ops
        .iter()
        .find(|o| o.name.ends_with("rotary_q"))
        .expect("a rotary op");
    let size = |t| {
        let t = g.tensor(t).unwrap();
        allocation(bytes(t.numel), t.dtype).0
    };
    (op, size(op.inputs[0]), size(op.outputs[0]))
}

/// The op's transient request sizes in order, and the most bytes (transients
/// and outputs) alive at once.
fn requests(op: &Op, out: u64) -> (Vec<u64>, u64) {
    let (mut sizes, mut alive, mut live, mut most) = (Vec::new(), Vec::new(), 0, 0);
    for step in &op.forward_steps {
        match *step {
            TempStep::Alloc(n) => {
                sizes.push(bytes(n));
                alive.push(bytes(n));
                live += bytes(n);
            }
            TempStep::Free(k) => live -= std::mem::take(&mut alive[usize::from(k)]),
            TempStep::Outputs => live += out,
        }
        most = most.max(live);
    }
    (sizes, most)
}

#[test]
fn a_full_rotary_asks_for_each_temporary_on_its_own() {
    let g = graph("llama-tiny");
    let (op, inp, out) = rotary_q(&g);
    let (sizes, most) = requests(op, out);
    // The products are made in the output's dtype (fp32 under autocast: cos
    // and sin are fp32), `rotate_half` in x's (the projection's bf16).
    assert_eq!(2 * inp, out, "a bf16 query rotated into fp32");
    assert_eq!(sizes, vec![out, inp / 2, inp, out], "{}", op.name);
    // Three x-sized tensors at once, as the single block beside the output counted.
    assert_eq!(most, 3 * out);
    // Backward: `grad * sin` and the two slices' zero-filled gradients at
    // once (`MulBackward0`, `SliceBackward0` twice in the snapshot), one of
    // them `x`'s gradient: two x-sized transients beyond it.
    assert_eq!(bytes(op.backward_temp), 2 * out);
}

#[test]
fn a_partial_rotary_asks_for_the_rotated_parts_then_concatenates() {
    let g = graph("pythia-160m");
    let (op, _, out) = rotary_q(&g);
    let (sizes, most) = requests(op, out);
    let rot = sizes[0];
    assert!(
        rot < out,
        "Pythia rotates a quarter of each head: {rot} of {out} bytes"
    );
    assert_eq!(sizes, vec![rot, rot / 2, rot, rot, rot], "{}", op.name);
    // Three rotated-sized tensors, or the sum beside the concatenated output.
    assert_eq!(most, (3 * rot).max(rot + out));
}
