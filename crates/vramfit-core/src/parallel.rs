//! Data-parallel training across GPUs: DDP, DeepSpeed ZeRO 1-3 and PyTorch
//! FSDP, with CPU offload. Memory is reported per GPU (and host RAM per node).
//!
//! What each strategy keeps on a GPU (sources: `torch/nn/parallel/distributed.py`
//! and `torch/csrc/distributed/c10d/reducer.cpp` for DDP;
//! `deepspeed/runtime/zero/stage_1_and_2.py`, `stage3.py`; `torch/distributed/fsdp/`):
//! - DDP: a full replica, plus flat gradient buckets as large as all gradients
//!   (`gradient_as_bucket_view=False`, the default), allocated at construction.
//! - ZeRO-1: optimizer state (and the fp32 master copy) sharded over the GPUs.
//! - ZeRO-2, FSDP `SHARD_GRAD_OP`: also gradients sharded (each is computed
//!   full-size, reduce-scattered, and only the shard kept).
//! - ZeRO-3, FSDP `FULL_SHARD`: also parameters sharded; each block's full
//!   parameters are gathered for its forward and again for its backward, with
//!   the next block prefetched during backward.
//! - FSDP `HYBRID_SHARD`: `FULL_SHARD` within a node, replicated across nodes.
//! - FSDP `NO_SHARD`: like DDP without separate buckets.
//!
//! Expert parallelism (`ep`, Megatron-Core's and DeepSpeed-MoE's): a
//! mixture of experts' routed experts are split over `ep` GPUs; their
//! gradients and sharded state are divided over the expert-data-parallel
//! group ([`Parallel::expert_dp`]) instead of the data-parallel one.
//! Expert tensor parallelism (`etp`, Megatron-Core's
//! `expert_tensor_parallel_size`) splits each routed expert's neurons over
//! `etp` GPUs, independently of `tp` for the dense layers; the experts'
//! layout then tiles the world as etp × ep × pp × expert-dp.
//!
//! With half-precision parameters, ZeRO keeps an fp32 master copy and an fp32
//! gradient partition in the optimizer: DeepSpeed's own estimate for Adam
//! counts 2 bytes of half parameters plus 18 sharded bytes per parameter
//! (2 half gradient + 4 fp32 gradient + 4 fp32 master + 8 Adam state).

use crate::error::{Error, Inapplicable};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A data-parallel strategy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// One GPU (or plain replicas without communication buffers).
    #[default]
    Single,
    /// `DistributedDataParallel`.
    Ddp,
    /// DeepSpeed ZeRO stage 1.
    Zero1,
    /// DeepSpeed ZeRO stage 2.
    Zero2,
    /// DeepSpeed ZeRO stage 3.
    Zero3,
    /// FSDP `FULL_SHARD`.
    FsdpFull,
    /// FSDP `SHARD_GRAD_OP`.
    FsdpGradOp,
    /// FSDP `HYBRID_SHARD`.
    FsdpHybrid,
    /// FSDP `NO_SHARD`.
    FsdpNoShard,
    /// Megatron-LM's distributed optimizer: fp32 main gradients kept whole,
    /// fp32 master weights and Adam state sharded over the data-parallel group.
    MegatronDistOpt,
}

impl Strategy {
    /// Whether `.grad` stays the training loop's own (one GPU, DDP), so its
    /// `zero_grad(set_to_none=False)` applies; ZeRO, FSDP and Megatron's
    /// distributed optimizer keep gradient buffers of their own.
    pub fn loop_owns_gradients(self) -> bool {
        matches!(self, Strategy::Single | Strategy::Ddp)
    }

    /// Whether the training loop's `torch.autocast` reads whole parameters
    /// that are leaves of their own (one GPU, DDP), which its weight cache
    /// keeps cast until the region exits ([`crate::graph::Graph::autocast_cached`]).
    /// FSDP's parameters are views into its flat parameter (`cached_cast`
    /// skips views) or cast by its mixed-precision policy, and DeepSpeed and
    /// Megatron hold the model in half precision themselves.
    pub fn autocast_caches_weights(self) -> bool {
        matches!(self, Strategy::Single | Strategy::Ddp)
    }

    /// Every strategy, in display order.
    pub const ALL: &'static [Strategy] = &[
        Strategy::Single,
        Strategy::Ddp,
        Strategy::Zero1,
        Strategy::Zero2,
        Strategy::Zero3,
        Strategy::FsdpFull,
        Strategy::FsdpGradOp,
        Strategy::FsdpHybrid,
        Strategy::FsdpNoShard,
        Strategy::MegatronDistOpt,
    ];

    /// The stable id (CLI, URLs).
    pub fn id(self) -> &'static str {
        match self {
            Strategy::Single => "single",
            Strategy::Ddp => "ddp",
            Strategy::Zero1 => "zero1",
            Strategy::Zero2 => "zero2",
            Strategy::Zero3 => "zero3",
            Strategy::FsdpFull => "fsdp-full",
            Strategy::FsdpGradOp => "fsdp-grad-op",
            Strategy::FsdpHybrid => "fsdp-hybrid",
            Strategy::FsdpNoShard => "fsdp-no-shard",
            Strategy::MegatronDistOpt => "megatron-distopt",
        }
    }

    /// Whether this is a DeepSpeed ZeRO stage.
    pub fn is_zero(self) -> bool {
        matches!(self, Strategy::Zero1 | Strategy::Zero2 | Strategy::Zero3)
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for Strategy {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Strategy::ALL
            .iter()
            .copied()
            .find(|v| v.id() == s)
            .ok_or_else(|| Error::InvalidChoice {
                field: "strategy",
                value: s.to_string(),
                accepted: Strategy::ALL
                    .iter()
                    .map(|v| v.id())
                    .collect::<Vec<_>>()
                    .join("|"),
            })
    }
}

/// What is moved to host memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Offload {
    /// Nothing.
    #[default]
    None,
    /// Optimizer state (and the fp32 master copy) on the CPU (ZeRO-Offload, FSDP `CPUOffload`).
    Optimizer,
    /// Optimizer state and parameters on the CPU (ZeRO-Infinity to CPU; ZeRO-3 / FSDP full shard only).
    OptimizerParams,
}

impl Offload {
    /// The stable id.
    pub fn id(self) -> &'static str {
        match self {
            Offload::None => "none",
            Offload::Optimizer => "optimizer",
            Offload::OptimizerParams => "optimizer+params",
        }
    }
}

impl FromStr for Offload {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        [Offload::None, Offload::Optimizer, Offload::OptimizerParams]
            .into_iter()
            .find(|v| v.id() == s)
            .ok_or_else(|| Error::InvalidChoice {
                field: "offload",
                value: s.to_string(),
                accepted: "none|optimizer|optimizer+params".to_string(),
            })
    }
}

/// Data-parallel layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct Parallel {
    /// The strategy.
    pub strategy: Strategy,
    /// GPUs per node.
    pub gpus_per_node: u64,
    /// Nodes.
    pub nodes: u64,
    /// Offload to host memory.
    pub offload: Offload,
    /// Megatron tensor-parallel size (attention heads, MLP columns and the
    /// vocabulary split over `tp` GPUs).
    pub tp: u64,
    /// Pipeline-parallel stages (1F1B schedule).
    pub pp: u64,
    /// Megatron sequence parallelism (with `tp > 1`): the norms, dropouts and
    /// residuals outside the tensor-parallel regions are split along the sequence.
    pub sp: bool,
    /// DDP with `gradient_as_bucket_view=True`: gradients live in the buckets, no copy.
    pub bucket_view: bool,
    /// Virtual pipeline stages per GPU (Megatron's interleaved 1F1B); 1: plain 1F1B.
    pub vpp: u64,
    /// Expert parallelism (Megatron-Core's `--expert-model-parallel-size`,
    /// DeepSpeed-MoE's `ep_size`): each sparse layer's routed experts are
    /// split over `ep` GPUs, which exchange their tokens by all-to-all. Each
    /// expert's neurons are also split over [`Parallel::expert_tp`] GPUs.
    /// 1: no expert parallelism.
    pub ep: u64,
    /// Expert tensor parallelism (Megatron-Core's
    /// `--expert-tensor-parallel-size`): each routed expert's neurons split
    /// over `etp` GPUs. 0: as `tp`, Megatron-Core's default when the
    /// flag is not given ([`Parallel::expert_tp`]).
    pub etp: u64,
    /// DeepSpeed `reduce_bucket_size` in elements (default 5e8): ZeRO-1/2
    /// allocate a contiguous gradient bucket of this size (two with
    /// `overlap_comm`, the ZeRO-3 default) in the parameters' dtype.
    pub zero_bucket: u64,
}

impl Default for Parallel {
    fn default() -> Self {
        Parallel {
            strategy: Strategy::Single,
            gpus_per_node: 1,
            nodes: 1,
            offload: Offload::None,
            tp: 1,
            pp: 1,
            sp: false,
            bucket_view: false,
            zero_bucket: 500_000_000,
            vpp: 1,
            ep: 1,
            etp: 0,
        }
    }
}

impl Parallel {
    /// Total GPUs.
    pub fn world(&self) -> u64 {
        self.gpus_per_node.saturating_mul(self.nodes).max(1)
    }

    /// Data-parallel replicas: the GPUs left after tensor and pipeline parallelism.
    pub fn dp(&self) -> u64 {
        (self.world() / (self.tp.max(1) * self.pp.max(1))).max(1)
    }

    /// The expert-data-parallel group: the GPUs holding the same routed
    /// experts, over which their gradients are reduced and their sharded
    /// state divided. Megatron-Core's `parallel_state.py`:
    /// `world_size // (expert_tensor_parallel_size ×
    /// expert_model_parallel_size × pipeline_model_parallel_size)`.
    pub fn expert_dp(&self) -> u64 {
        (self.world() / self.expert_model_parallel()).max(1)
    }

    /// The GPUs each routed expert's neurons are split over: `etp`, or `tp`
    /// when it is 0 (`initialize_model_parallel` in Megatron-Core's
    /// `parallel_state.py`: `if expert_tensor_parallel_size is None:
    /// expert_tensor_parallel_size = tensor_model_parallel_size`).
    pub fn expert_tp(&self) -> u64 {
        if self.etp == 0 {
            self.tp.max(1)
        } else {
            self.etp
        }
    }

    /// The GPUs one copy of the routed experts spans: etp × ep × pp
    /// (Megatron-Core's `expert_tensor_model_pipeline_parallel_size`).
    pub fn expert_model_parallel(&self) -> u64 {
        self.expert_tp()
            .saturating_mul(self.ep.max(1))
            .saturating_mul(self.pp.max(1))
    }

    /// GPUs that share one copy of the sharded state (within the data-parallel group).
    pub fn shard_group(&self) -> u64 {
        self.shard_group_of(self.dp(), self.tp.max(1) * self.pp.max(1))
    }

    /// GPUs that share one copy of the routed experts' sharded state: the
    /// [`Parallel::shard_group`] of the expert-data-parallel group
    /// ([`Parallel::expert_dp`]); equal to it with `ep` = 1 and `etp` as `tp`.
    pub fn expert_shard_group(&self) -> u64 {
        self.shard_group_of(self.expert_dp(), self.expert_model_parallel())
    }

    /// The sharding group within a data-parallel group of `dp` GPUs, each
    /// model replica spanning `replica` GPUs.
    fn shard_group_of(&self, dp: u64, replica: u64) -> u64 {
        match self.strategy {
            Strategy::Single | Strategy::Ddp | Strategy::FsdpNoShard => 1,
            Strategy::FsdpHybrid => (self.gpus_per_node / replica.max(1)).max(1),
            Strategy::Zero1
            | Strategy::Zero2
            | Strategy::Zero3
            | Strategy::FsdpFull
            | Strategy::FsdpGradOp
            | Strategy::MegatronDistOpt => dp,
        }
    }

    /// Parameters are sharded (gathered per block when used).
    pub fn shards_params(&self) -> bool {
        matches!(
            self.strategy,
            Strategy::Zero3 | Strategy::FsdpFull | Strategy::FsdpHybrid
        ) && self.shard_group() > 1
    }

    /// Gradients are sharded after reduce-scatter.
    pub fn shards_grads(&self) -> bool {
        matches!(
            self.strategy,
            Strategy::Zero2
                | Strategy::Zero3
                | Strategy::FsdpFull
                | Strategy::FsdpGradOp
                | Strategy::FsdpHybrid
        ) && self.shard_group() > 1
    }

    /// Optimizer state is sharded.
    pub fn shards_states(&self) -> bool {
        self.strategy.is_zero()
            || matches!(
                self.strategy,
                Strategy::FsdpFull
                    | Strategy::FsdpGradOp
                    | Strategy::FsdpHybrid
                    | Strategy::MegatronDistOpt
            )
    }

    /// DDP's separate gradient buckets (none with `gradient_as_bucket_view=True`).
    pub fn has_buckets(&self) -> bool {
        self.strategy == Strategy::Ddp && self.dp() > 1 && !self.bucket_view
    }

    /// Checks the combination.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for GPU counts, [`Error::NotApplicable`] for an
    /// offload the strategy does not support or a world that tensor,
    /// expert and pipeline parallelism do not divide.
    pub fn validate(&self) -> Result<(), Error> {
        crate::error::check_range("gpus-per-node", self.gpus_per_node, 1, 1024)?;
        crate::error::check_range("nodes", self.nodes, 1, 1 << 16)?;
        crate::error::check_range("tp", self.tp, 1, 1024)?;
        crate::error::check_range("pp", self.pp, 1, 1024)?;
        crate::error::check_range("vpp", self.vpp, 1, 1024)?;
        crate::error::check_range("ep", self.ep, 1, 1024)?;
        crate::error::check_range("etp", self.etp, 0, 1024)?;
        if !self.world().is_multiple_of(self.tp * self.pp) {
            return Err(Error::NotApplicable(Inapplicable::ModelParallelGpus {
                tp_pp: self.tp * self.pp,
                gpus: self.world(),
            }));
        }
        // Megatron-Core's `initialize_model_parallel` raises unless the world
        // divides into expert groups too (etp × ep × pp × expert-dp).
        if !self.world().is_multiple_of(self.expert_model_parallel()) {
            return Err(Error::NotApplicable(Inapplicable::ExpertParallelGpus {
                etp_ep_pp: self.expert_model_parallel(),
                gpus: self.world(),
            }));
        }
        if self.sp && self.tp == 1 {
            return Err(Error::NotApplicable(Inapplicable::SequenceParallelNeedsTp));
        }
        match (self.offload, self.strategy) {
            (Offload::None, _) => Ok(()),
            (Offload::Optimizer, s)
                if s.is_zero()
                    || matches!(
                        s,
                        Strategy::FsdpFull | Strategy::FsdpGradOp | Strategy::FsdpHybrid
                    ) =>
            {
                Ok(())
            }
            (
                Offload::OptimizerParams,
                Strategy::Zero3 | Strategy::FsdpFull | Strategy::FsdpHybrid,
            ) => Ok(()),
            (o, s) => Err(Error::NotApplicable(Inapplicable::Offload {
                params: o == Offload::OptimizerParams,
                strategy: s.id(),
            })),
        }
    }
}
