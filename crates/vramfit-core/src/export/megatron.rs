//! Megatron-LM's `pretrain_gpt.py` arguments for a plan's layout
//! (`megatron/training/arguments.py`), and the expert layout that the
//! other exports cannot express.

use crate::config::{CheckpointMode, Checkpointing, Optimizer, Precision, TrainConfig};
use crate::parallel::Strategy;

/// How a plan splits its routed experts, when it splits them: expert
/// parallelism over `ep` GPUs, each expert's columns over `etp`
/// ([`crate::parallel::Parallel::expert_tp`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExpertLayout {
    /// Expert-parallel GPUs (`--expert-model-parallel-size`).
    pub ep: u64,
    /// Expert tensor-parallel GPUs (`--expert-tensor-parallel-size`).
    pub etp: u64,
}

/// The expert layout of `c` when it splits the experts (`ep` or the
/// expert tensor parallelism above 1): DeepSpeed's config, Hugging Face's
/// `TrainingArguments`, Accelerate's config and a plain PyTorch loop have
/// no setting for it (DeepSpeed-MoE takes `ep_size` in the model code,
/// `deepspeed.moe.layer.MoE(..., ep_size=N)`); Megatron-LM's arguments do.
pub fn expert_layout(c: &TrainConfig) -> Option<ExpertLayout> {
    let p = &c.parallel;
    (p.ep > 1 || p.expert_tp() > 1).then_some(ExpertLayout {
        ep: p.ep.max(1),
        etp: p.expert_tp(),
    })
}

/// A `#` comment saying what an export without expert settings leaves out.
pub(super) fn expert_layout_comment(c: &TrainConfig) -> String {
    match expert_layout(c) {
        Some(ExpertLayout { ep, etp }) => format!(
            "# Not expressible here: the experts split over ep = {ep} GPUs (etp = {etp}): Megatron-LM's --expert-model-parallel-size {ep} --expert-tensor-parallel-size {etp}; DeepSpeed-MoE's deepspeed.moe.layer.MoE(..., ep_size={ep}) in the model code.\n"
        ),
        None => String::new(),
    }
}

/// `pretrain_gpt.py` arguments for the layout, batch, precision,
/// recomputation and optimizer of `c`, one per line; a `#` line for what
/// Megatron-LM does not run (DeepSpeed's ZeRO, FSDP, optimizers it lacks).
pub fn megatron_args(c: &TrainConfig) -> String {
    let p = &c.parallel;
    let mut args = vec![
        format!("--tensor-model-parallel-size {}", p.tp.max(1)),
        format!("--pipeline-model-parallel-size {}", p.pp.max(1)),
    ];
    if p.vpp > 1 {
        args.push(format!("--num-virtual-stages-per-pipeline-rank {}", p.vpp));
    }
    if p.sp {
        args.push("--sequence-parallel".into());
    }
    args.push(format!("--expert-model-parallel-size {}", p.ep.max(1)));
    // Unset, Megatron-Core takes `--tensor-model-parallel-size`.
    if p.etp > 0 {
        args.push(format!("--expert-tensor-parallel-size {}", p.etp));
    }
    args.push(format!("--micro-batch-size {}", c.batch));
    args.push(format!(
        "--global-batch-size {}",
        c.batch.saturating_mul(c.grad_accum).saturating_mul(p.dp())
    ));
    match c.precision {
        Precision::AmpBf16 | Precision::Bf16 => args.push("--bf16".into()),
        Precision::AmpFp16 | Precision::Fp16 => args.push("--fp16".into()),
        Precision::Fp32 => {}
    }
    match c.checkpointing {
        Checkpointing::Mode(CheckpointMode::None) => {}
        Checkpointing::Mode(CheckpointMode::Full) => args.push(
            "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1"
                .into(),
        ),
        Checkpointing::Mode(CheckpointMode::Selective) => {
            args.push("--recompute-granularity selective".into())
        }
        // No Megatron-LM flag keeps every other matmul's output: said below.
        Checkpointing::Mode(CheckpointMode::SelectiveOp) => {}
        Checkpointing::EveryK(k) => args.push(format!(
            "--recompute-granularity full --recompute-method uniform --recompute-num-layers {k}"
        )),
    }
    match c.optimizer {
        Optimizer::Adam | Optimizer::AdamW => args.push("--optimizer adam".into()),
        Optimizer::Sgd | Optimizer::SgdMomentum => args.push("--optimizer sgd".into()),
        Optimizer::AdamW8bit | Optimizer::Adafactor | Optimizer::Lion => {}
    }
    let mut out = String::from("# Megatron-LM pretrain_gpt.py arguments for this plan\n");
    match p.strategy {
        Strategy::MegatronDistOpt => args.push("--use-distributed-optimizer".into()),
        Strategy::Single | Strategy::Ddp => {}
        other => out.push_str(&format!(
            "# {other} is not Megatron-LM's: its distributed optimizer (--use-distributed-optimizer) shards the optimizer state\n"
        )),
    }
    if matches!(
        c.optimizer,
        Optimizer::AdamW8bit | Optimizer::Adafactor | Optimizer::Lion
    ) {
        out.push_str(&format!(
            "# {} is not one of Megatron-LM's optimizers (adam, sgd)\n",
            c.optimizer.id()
        ));
    }
    if c.checkpointing.saves_op_outputs() {
        out.push_str(
            "# selective checkpointing per op (torchtitan's) has no Megatron-LM flag; --recompute-granularity selective recomputes the attention core only\n",
        );
    }
    out.push_str(&args.join(" \\\n"));
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::Parallel;

    fn on(ep: u64, etp: u64) -> TrainConfig {
        TrainConfig {
            batch: 2,
            grad_accum: 4,
            precision: Precision::AmpBf16,
            parallel: Parallel {
                strategy: Strategy::MegatronDistOpt,
                gpus_per_node: 8,
                ep,
                etp,
                ..Parallel::default()
            },
            ..TrainConfig::default()
        }
    }

    #[test]
    fn megatron_arguments_carry_the_expert_layout() {
        let s = megatron_args(&on(4, 2));
        for arg in [
            "--expert-model-parallel-size 4",
            "--expert-tensor-parallel-size 2",
            "--micro-batch-size 2",
            // 2 × 4 × 8 data-parallel GPUs.
            "--global-batch-size 64",
            "--bf16",
            "--use-distributed-optimizer",
        ] {
            assert!(s.contains(arg), "{arg} missing:\n{s}");
        }
        // Unset, etp is left to Megatron-Core's default (tp).
        assert!(!megatron_args(&on(4, 0)).contains("--expert-tensor-parallel-size"));
    }

    #[test]
    fn exports_without_expert_settings_say_what_they_leave_out() {
        assert_eq!(expert_layout(&on(1, 0)), None);
        assert_eq!(
            expert_layout(&on(8, 0)),
            Some(ExpertLayout { ep: 8, etp: 1 })
        );
        assert_eq!(
            expert_layout(&on(1, 2)),
            Some(ExpertLayout { ep: 1, etp: 2 })
        );
        let c = on(8, 0);
        for text in [
            super::super::accelerate_yaml(&c),
            super::super::pytorch_snippet(&c),
        ] {
            assert!(
                text.contains("--expert-model-parallel-size 8") && text.contains("ep_size=8"),
                "{text}"
            );
        }
        assert!(!super::super::pytorch_snippet(&on(1, 0)).contains("Not expressible"));
    }
}
