//! Batch-independent facts about a lowered graph under a checkpointing
//! choice: which storage each tensor lives in, when forward last uses it,
//! who holds it for backward, and which op runs are recomputed.

use super::entry;
use crate::config::{LoopOutputs, TrainConfig};
use crate::graph::{Graph, OpKind, TensorId};

/// A run of ops whose saved tensors are dropped in forward and recomputed
/// just before their backward (a checkpointed block, or an attention core).
#[derive(Clone, Copy, Debug)]
pub(super) struct Segment {
    pub start: usize,
    pub end: usize,
}

/// The holder of what the training loop keeps of the model's outputs: no
/// backward op, so only the micro-batch's end frees them.
const CALLER: usize = usize::MAX;

/// Precomputed, batch-independent facts about the graph.
pub(super) struct Plan {
    pub storage: Vec<usize>,
    pub last_forward_use: Vec<usize>,
    /// For each storage, the backward ops after which one hold is released.
    pub holders: Vec<Vec<usize>>,
    /// For each segment, the storages it keeps from before it.
    pub segment_inputs: Vec<Vec<usize>>,
    pub op_segment: Vec<Option<usize>>,
    pub segments: Vec<Segment>,
    pub is_input: Vec<bool>,
    pub needs_backward: Vec<bool>,
    /// For each op, whether its segment keeps its outputs from forward and
    /// does not run it again (selective checkpointing per op); the op's
    /// index is among its outputs' holders until then.
    pub kept: Vec<bool>,
    /// For each storage, whether autocast's cache holds it until the
    /// forward (or a segment's recomputation) ends ([`Graph::autocast_cached`]).
    pub autocast_cached: Vec<bool>,
}

fn segments_of(g: &Graph, cfg: &TrainConfig) -> (Vec<Segment>, Vec<Option<usize>>) {
    let mut segments: Vec<Segment> = Vec::new();
    let mut op_segment = vec![None; g.ops.len()];
    let selective = cfg.checkpointing.selective();
    for (i, op) in g.ops.iter().enumerate() {
        let in_segment = match op.block {
            Some(b) if cfg.checkpointing.checkpoints_block(b) => Some((0u8, b)),
            _ if selective && op.attention_core => Some((1u8, op.block.unwrap_or(u32::MAX))),
            _ => None,
        };
        let Some(key) = in_segment else { continue };
        let continues = i > 0
            && op_segment.get(i - 1).copied().flatten().is_some()
            && g.ops.get(i - 1).map(|p| {
                let pk = if p.attention_core
                    && selective
                    && !p
                        .block
                        .is_some_and(|b| cfg.checkpointing.checkpoints_block(b))
                {
                    (1u8, p.block.unwrap_or(u32::MAX))
                } else {
                    (0u8, p.block.unwrap_or(u32::MAX))
                };
                pk == key
            }) == Some(true);
        if continues {
            if let Some(s) = segments.last_mut() {
                s.end = i;
            }
        } else {
            segments.push(Segment { start: i, end: i });
        }
        if let Some(slot) = op_segment.get_mut(i) {
            *slot = Some(segments.len() - 1);
        }
    }
    (segments, op_segment)
}

pub(super) fn plan(g: &Graph, cfg: &TrainConfig) -> Plan {
    let n = g.tensors.len();
    let storage: Vec<usize> = (0..n)
        .map(|t| g.storage_of(TensorId(t as u32)).0 as usize)
        .collect();
    let st = |t: &TensorId| entry(&storage, t.0 as usize);
    let mut last_forward_use = vec![0usize; n];
    let mut is_input = vec![false; n];
    for (i, op) in g.ops.iter().enumerate() {
        for t in op.inputs.iter().chain(op.outputs.iter()) {
            if let Some(v) = last_forward_use.get_mut(st(t)) {
                *v = i;
            }
        }
        if op.kind == OpKind::Input {
            for t in &op.outputs {
                if let Some(v) = is_input.get_mut(st(t)) {
                    *v = true;
                }
            }
        }
    }
    let (segments, op_segment) = segments_of(g, cfg);
    let mut holders: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut segment_inputs: Vec<Vec<usize>> = vec![Vec::new(); segments.len()];
    for (i, op) in g.ops.iter().enumerate() {
        if op_segment.get(i).copied().flatten().is_some() {
            continue;
        }
        for s in unique_storages(&op.saved, &storage) {
            if let Some(h) = holders.get_mut(s) {
                h.push(i);
            }
        }
    }
    // A segment keeps the storages it reads that were produced before it.
    for (k, seg) in segments.iter().enumerate() {
        let mut produced = std::collections::HashSet::new();
        for op in g.ops.get(seg.start..=seg.end).unwrap_or(&[]) {
            for t in &op.inputs {
                let s = st(t);
                if !produced.contains(&s) {
                    if let Some(h) = holders.get_mut(s) {
                        if !h.contains(&seg.start) {
                            h.push(seg.start);
                            if let Some(list) = segment_inputs.get_mut(k) {
                                list.push(s);
                            }
                        }
                    }
                }
            }
            for t in &op.outputs {
                produced.insert(st(t));
            }
        }
    }
    // A loop that keeps the model's outputs holds them until the micro-batch
    // ends: a hold nothing releases before.
    if cfg.loop_outputs == LoopOutputs::Kept {
        for s in unique_storages(&g.returned, &storage) {
            if let Some(h) = holders.get_mut(s).filter(|h| !h.contains(&CALLER)) {
                h.push(CALLER);
            }
        }
    }
    // Selective checkpointing per op: the ops whose outputs a segment keeps
    // from forward. Each such output is held from forward until the
    // recomputation reaches the op that made it (which hands it over instead
    // of running again, as PyTorch's `_CachedTorchDispatchMode` pops it from
    // its storage); the op's index marks that hold.
    let kept: Vec<bool> = if cfg.checkpointing.saves_op_outputs() {
        g.op_sac_saves()
            .into_iter()
            .zip(&op_segment)
            .map(|(saves, seg)| saves && seg.is_some())
            .collect()
    } else {
        vec![false; g.ops.len()]
    };
    for (i, op) in g.ops.iter().enumerate().filter(|(i, _)| entry(&kept, *i)) {
        for s in unique_storages(&op.outputs, &storage) {
            if let Some(h) = holders.get_mut(s).filter(|h| !h.contains(&i)) {
                h.push(i);
            }
        }
    }
    let needs_backward = g
        .ops
        .iter()
        .map(|op| {
            !matches!(op.kind, OpKind::Input | OpKind::ScopeEnd)
                && (op
                    .inputs
                    .iter()
                    .any(|t| g.tensor(*t).is_some_and(|x| x.requires_grad))
                    || op
                        .params
                        .iter()
                        .any(|p| g.params.get(p.0 as usize).is_some_and(|p| p.trainable)))
        })
        .collect();
    let mut autocast_cached = vec![false; n];
    for s in unique_storages(&g.autocast_cached, &storage) {
        if let Some(c) = autocast_cached.get_mut(s) {
            *c = true;
        }
    }
    Plan {
        storage,
        last_forward_use,
        holders,
        segment_inputs,
        op_segment,
        segments,
        is_input,
        needs_backward,
        kept,
        autocast_cached,
    }
}

/// The distinct storages of a list of tensors.
pub(super) fn unique_storages(tensors: &[TensorId], storage: &[usize]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    unique_storages_into(tensors, storage, &mut out);
    out
}

/// [`unique_storages`] appended to `out` (a buffer the caller reuses).
pub(super) fn unique_storages_into(tensors: &[TensorId], storage: &[usize], out: &mut Vec<usize>) {
    let start = out.len();
    for t in tensors {
        let s = entry(storage, t.0 as usize);
        if !out.get(start..).is_some_and(|added| added.contains(&s)) {
            out.push(s);
        }
    }
}
