//! The English the CLI prints for the core's typed messages: a plan's
//! trade-offs, the batch-size advice, an uneven batch split and which
//! pipeline stage an estimate describes. The web page words the same values
//! in its own translation table.

use vramfit_core::RankNote;
use vramfit_core::plan::{Advice, Trade, UnevenSplit};

/// One trade-off, as a sentence fragment.
pub fn trade(t: &Trade) -> String {
    match t {
        Trade::Accumulation { micro_batch, steps } => format!(
            "micro-batch {micro_batch} × {steps} accumulation steps: same effective batch, smaller kernels"
        ),
        Trade::NoAccumulation { micro_batch } => {
            format!("micro-batch {micro_batch} without accumulation")
        }
        Trade::Fp32 => "fp32: no tensor-core speed-up".into(),
        Trade::Amp => "AMP: tensor-core speed, fp32 master weights".into(),
        Trade::AmpFp16 => "AMP in fp16 (this GPU has no bf16): tensor-core speed, fp32 master weights, a gradient scaler".into(),
        Trade::PureHalf => "pure half precision: least memory, no fp32 master copy".into(),
        Trade::Bf16Updates => "bf16 weights drop updates under about 0.2–0.4 % of a weight (a small learning rate stalls): keep fp32 master weights (AMP, paid for by 8-bit AdamW states) or use Kahan summation".into(),
        Trade::Recompute => {
            "checkpointing re-runs each block's forward (about a third more compute)".into()
        }
        Trade::EightBitAdam => "8-bit AdamW: a quarter of the optimizer memory".into(),
        Trade::Strategy { strategy } => format!("{strategy} across GPUs"),
        Trade::Offload => {
            "offloading to the CPU costs PCIe traffic and CPU optimizer time".into()
        }
    }
}

/// A plan's trade-offs as one line, separated by semicolons.
pub fn tradeoff(trades: &[Trade]) -> String {
    trades.iter().map(trade).collect::<Vec<_>>().join("; ")
}

/// A piece of advice, as a sentence.
pub fn advice(a: &Advice) -> String {
    match a {
        Advice::LrScaling {
            effective_batch,
            warmup,
        } => format!(
            "Scale the learning rate with the effective batch: lr = base_lr × {effective_batch} / 256 (the linear scaling rule){}.",
            if *warmup {
                ", with a few epochs of warmup at this size"
            } else {
                ""
            }
        ),
        Advice::LargeBatch => "Above ~256 samples per step, models often generalize worse unless learning rate, warmup and regularization are retuned.".into(),
        Advice::SmallBatch => "Below ~32 samples per step, gradients are noisy: use gradient accumulation to raise the effective batch, or lower the learning rate.".into(),
        Advice::BatchNorm { micro_batch } => format!(
            "BatchNorm computes its statistics over the micro-batch ({micro_batch}), and accumulation does not change that: use SyncBatchNorm across GPUs, GroupNorm, or a larger micro-batch."
        ),
        Advice::Eval => "Evaluate under torch.no_grad() (or torch.inference_mode()): nothing is kept for backward, so evaluation fits much larger batches.".into(),
        Advice::PinMemory => "pin_memory=True in the DataLoader costs host RAM, not GPU memory.".into(),
        Advice::EmptyCache => "torch.cuda.empty_cache() returns cached blocks to the driver but does not lower the peak a step needs; it cannot fix an out-of-memory error.".into(),
    }
}

/// The warning for a target batch that does not divide over the GPUs.
pub fn uneven(u: &UnevenSplit) -> String {
    format!(
        "the target batch {} does not divide over {} GPUs: each GPU takes {}, {} in all",
        u.target, u.gpus, u.per_gpu, u.total
    )
}

/// A context above the model's trained one (`limit` tokens).
pub fn beyond_trained(limit: u64) -> String {
    format!(
        "the context is above the model's trained {limit} tokens: it runs, but the output degrades past the lengths the model was trained on"
    )
}

/// A bf16 configuration on a GPU without bf16 matrix math, and what to use instead.
pub fn without_bf16(gpu: &str, instead: vramfit_core::Precision) -> String {
    format!(
        "{gpu} has no bf16 matrix math (bf16 needs NVIDIA Ampere or later, or Apple M2 or later): use --precision {instead}"
    )
}

/// The share of unified memory macOS lets the GPU use by default.
pub fn memory_limit(
    limit: vramfit_core::gpus::MemoryLimit,
    usable: vramfit_core::Bytes,
) -> Option<String> {
    match limit {
        vramfit_core::gpus::MemoryLimit::Dedicated => None,
        vramfit_core::gpus::MemoryLimit::WorkingSet {
            numerator,
            denominator,
        } => Some(format!(
            "macOS lets the GPU use {numerator}/{denominator} of the unified memory by default ({usable}, Metal's recommendedMaxWorkingSetSize); `sudo sysctl iogpu.wired_limit_mb` raises it"
        )),
    }
}

/// Why a GPU offers less than its marketed memory, when it does: CUDA's
/// total is NVML's total less the driver's reservation.
pub fn runtime_memory(g: &vramfit_core::report::GpuFit) -> Option<String> {
    let short = g.runtime_shortfall()?;
    Some(format!(
        "CUDA offers {} of the {}: the driver keeps {} for itself (nvidia-smi -q, \"Reserved\"){}",
        g.runtime_bytes,
        g.memory_bytes,
        short.reserved,
        if short.board_under_marketed {
            ", and the board reports less than its marketed size"
        } else {
            ""
        }
    ))
}

/// Which pipeline stage an estimate describes.
pub fn rank_note(r: &RankNote) -> String {
    format!(
        "pipeline stage {} of {} (embeddings and layers 0–{}), the largest: it keeps {} micro-batches in flight under 1F1B",
        r.stage, r.stages, r.last_layer, r.in_flight
    )
}

/// What NCCL's buffers of a multi-GPU run are made of, in words.
pub fn nccl(n: &vramfit_core::nccl::NcclBuffers) -> String {
    use vramfit_core::nccl::{COLL_CHANNELS, P2P_CHANNELS_PER_PEER};
    let mut parts = Vec::new();
    if n.rings > 0 {
        parts.push(format!(
            "{} ring communicator{} at {} to {} channels",
            n.rings,
            if n.rings == 1 { "" } else { "s" },
            COLL_CHANNELS[0],
            COLL_CHANNELS[1]
        ));
    }
    if n.all_to_all_peers > 0 {
        parts.push(format!(
            "all-to-all with {} peers at {} to {} channels each",
            n.all_to_all_peers, P2P_CHANNELS_PER_PEER[0], P2P_CHANNELS_PER_PEER[1]
        ));
    }
    if parts.is_empty() {
        parts.push("pipeline send/recv only, whose shared buffer is not modelled".to_string());
    }
    if n.across_nodes {
        parts.push("the network transport between nodes not modelled".to_string());
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use vramfit_core::parallel::Strategy;

    #[test]
    fn trade_offs_read_as_one_line() {
        let line = tradeoff(&[
            Trade::Accumulation {
                micro_batch: 4,
                steps: 8,
            },
            Trade::Amp,
            Trade::Strategy {
                strategy: Strategy::Zero2,
            },
        ]);
        assert_eq!(
            line,
            "micro-batch 4 × 8 accumulation steps: same effective batch, smaller kernels; AMP: tensor-core speed, fp32 master weights; zero2 across GPUs"
        );
    }

    #[test]
    fn numbers_reach_the_sentences() {
        let lr = advice(&Advice::LrScaling {
            effective_batch: 512,
            warmup: true,
        });
        assert!(
            lr.contains("× 512 / 256") && lr.ends_with("at this size."),
            "{lr}"
        );
        let split = uneven(&UnevenSplit {
            target: 30,
            gpus: 8,
            per_gpu: 4,
            total: 32,
        });
        assert_eq!(
            split,
            "the target batch 30 does not divide over 8 GPUs: each GPU takes 4, 32 in all"
        );
        let note = rank_note(&RankNote {
            stage: 0,
            stages: 2,
            last_layer: 15,
            in_flight: 2,
        });
        assert!(note.starts_with("pipeline stage 0 of 2 (embeddings and layers 0–15)"));
    }
}
