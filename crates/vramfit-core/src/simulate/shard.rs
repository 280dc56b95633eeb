//! How a data-parallel strategy divides model states over GPUs: the bytes of
//! each parameter's weight, gradient and optimizer state one GPU keeps, the
//! gathered parameters of each block (ZeRO-3 / FSDP), DDP's buckets and the
//! host memory that offloading uses.

use super::entry;
use crate::config::TrainConfig;
use crate::dtype::DType;
use crate::graph::{Graph, Param};
use crate::parallel::{Offload, Parallel};
use crate::states;

/// A model-state size that depends on the data-parallel strategy: a tape
/// records it by name and a replay reads it from the strategy's
/// [`ShardSizes`], so one recording serves every strategy. Each is zero
/// under the strategies that do not allocate it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sharded {
    /// Parameter `i`'s weight as one GPU keeps it.
    Weight(u32),
    /// Parameter `i`'s gradient from the first backward of a step, when it
    /// is kept whole: the buffer becomes `.grad`.
    WholeGrad(u32),
    /// Parameter `i`'s full-size gradient when only a shard is kept: freed
    /// after the op, once reduce-scattered.
    ReducedGrad(u32),
    /// The shard of parameter `i`'s gradient kept as `.grad`.
    GradShard(u32),
    /// DDP's flat gradient buckets.
    DdpBuckets,
    /// DeepSpeed's reduce buckets during backward.
    ZeroBuckets,
    /// A block's parameters all-gathered (ZeRO-3, FSDP full shard): these bytes.
    BlockGather(u64),
    /// The parameters outside the blocks, gathered from forward until backward ends (FSDP's root unit).
    RootGather(u64),
    /// A module's parameters outside the blocks, gathered for its own op (ZeRO-3).
    OpGather(u64),
}

/// Per-GPU model-state sizes under one strategy, by [`Sharded`] name.
#[derive(Debug, Default)]
pub struct ShardSizes {
    weights: Vec<u64>,
    /// Each parameter's (full, kept) gradient bytes.
    grads: Vec<(u64, u64)>,
    ddp_buckets: u64,
    zero_buckets: u64,
    gathers_blocks: bool,
    gathers_root: bool,
    gathers_ops: bool,
}

impl ShardSizes {
    /// No model states (replays of tapes without [`Sharded`] sizes).
    #[cfg(test)]
    pub const NONE: ShardSizes = ShardSizes {
        weights: Vec::new(),
        grads: Vec::new(),
        ddp_buckets: 0,
        zero_buckets: 0,
        gathers_blocks: false,
        gathers_root: false,
        gathers_ops: false,
    };

    /// The bytes of `s` under this strategy.
    pub fn bytes(&self, s: Sharded) -> u64 {
        let grad = |i: u32| entry(&self.grads, i as usize);
        let when = |on: bool, bytes: u64| if on { bytes } else { 0 };
        match s {
            Sharded::Weight(i) => entry(&self.weights, i as usize),
            Sharded::WholeGrad(i) => grad(i).0 * u64::from(grad(i).0 == grad(i).1),
            Sharded::ReducedGrad(i) => grad(i).0 * u64::from(grad(i).0 != grad(i).1),
            Sharded::GradShard(i) => grad(i).1 * u64::from(grad(i).0 != grad(i).1),
            Sharded::DdpBuckets => self.ddp_buckets,
            Sharded::ZeroBuckets => self.zero_buckets,
            Sharded::BlockGather(bytes) => when(self.gathers_blocks, bytes),
            Sharded::RootGather(bytes) => when(self.gathers_root, bytes),
            Sharded::OpGather(bytes) => when(self.gathers_ops, bytes),
        }
    }
}

/// Per-GPU sizes of model states under a strategy.
pub struct Shards {
    pub parallel: Parallel,
    pub pdtype: DType,
    pub format: crate::config::WeightFormat,
    /// Bytes of each block's parameters when gathered (index = block).
    pub block_gather: Vec<u64>,
    /// Bytes of the parameters outside any block (embeddings, head) when gathered.
    pub root_gather: u64,
}

impl Shards {
    pub fn new(g: &Graph, cfg: &TrainConfig) -> Shards {
        let pdtype = cfg.param_dtype();
        let mut in_block = vec![None; g.params.len()];
        for op in &g.ops {
            for p in &op.params {
                if let (Some(slot), Some(b)) = (in_block.get_mut(p.0 as usize), op.block) {
                    slot.get_or_insert(b);
                }
            }
        }
        let mut block_gather = vec![0u64; g.blocks as usize];
        let mut root_gather = 0u64;
        for (p, b) in g.params.iter().zip(&in_block) {
            let bytes = states::weight_bytes(p, pdtype).0;
            match b.and_then(|b| block_gather.get_mut(b as usize)) {
                Some(slot) => *slot = slot.saturating_add(bytes),
                None => root_gather = root_gather.saturating_add(bytes),
            }
        }
        Shards {
            parallel: cfg.parallel,
            pdtype,
            format: cfg.weight_format(),
            block_gather,
            root_gather,
        }
    }

    /// The GPUs that share one copy of `p`'s sharded state: the
    /// expert-data-parallel group's for a routed expert's parameter, the
    /// data-parallel group's for the others.
    fn group(&self, p: &Param) -> u64 {
        if p.expert {
            self.parallel.expert_shard_group()
        } else {
            self.parallel.shard_group()
        }
    }

    fn split(&self, bytes: u64, sharded: bool, group: u64) -> u64 {
        if !sharded || bytes == 0 {
            return bytes;
        }
        let n = group.max(1);
        bytes.div_ceil(n).div_ceil(states::ALLOCATION_QUANTUM) * states::ALLOCATION_QUANTUM
    }

    /// Weight bytes one GPU keeps for a parameter.
    pub fn weight(&self, p: &Param) -> u64 {
        if self.parallel.offload == Offload::OptimizerParams {
            return 0;
        }
        self.split(
            states::stored_weight_bytes(p, self.pdtype, self.format).0,
            self.parallel.shards_params(),
            self.group(p),
        )
    }

    /// Full weight bytes (as gathered).
    pub fn full_weight(&self, p: &Param) -> u64 {
        states::weight_bytes(p, self.pdtype).0
    }

    /// Full-size gradient bytes (as the op computes it).
    pub fn full_grad(&self, p: &Param) -> u64 {
        states::gradient_bytes(p, self.pdtype).0
    }

    /// Gradient bytes one GPU keeps as `.grad` (a shard after reduce-scatter).
    /// Megatron keeps a whole `main_grad` per parameter, fp32 with bf16 parameters.
    pub fn grad(&self, p: &Param) -> u64 {
        if self.parallel.strategy == crate::parallel::Strategy::MegatronDistOpt
            && p.trainable
            && self.pdtype == DType::Bf16
        {
            return states::allocation(p.numel(), DType::F32).0;
        }
        self.split(
            self.full_grad(p),
            self.parallel.shards_grads(),
            self.group(p),
        )
    }

    /// Optimizer-state bytes one GPU keeps (0 when offloaded). ZeRO with
    /// half-precision parameters adds an fp32 master copy and an fp32 gradient partition.
    pub fn state(&self, p: &Param, cfg: &TrainConfig) -> u64 {
        if self.parallel.offload != Offload::None {
            return 0;
        }
        self.split(
            self.full_state(p, cfg),
            self.parallel.shards_states(),
            self.group(p),
        )
    }

    /// [`ShardSizes::state`] as the tensors the optimizer allocates, in
    /// order: on one GPU or a replica (DDP), each state tensor apart; a
    /// sharded or master-weight state is one partition, in the first.
    pub fn state_tensors(&self, p: &Param, cfg: &TrainConfig) -> [u64; states::STATE_TENSORS] {
        let mut out = [0; states::STATE_TENSORS];
        if self.parallel.offload != Offload::None {
            return out;
        }
        if self.parallel.shards_states() || self.zero_master() {
            out[0] = self.state(p, cfg);
            return out;
        }
        let tensors =
            states::optimizer_state_tensors(p, self.pdtype, cfg.optimizer, cfg.optimizer_impl);
        for (o, t) in out.iter_mut().zip(tensors) {
            *o = t.0;
        }
        out
    }

    fn full_state(&self, p: &Param, cfg: &TrainConfig) -> u64 {
        if !self.zero_master() {
            return states::optimizer_state_bytes(
                p,
                self.pdtype,
                cfg.optimizer,
                cfg.optimizer_impl,
            )
            .0;
        }
        // ZeRO with half-precision parameters: the optimizer works on an fp32
        // master copy (so its state is fp32); stages 1-2 also keep an fp32
        // gradient partition (`single_partition_of_fp32_groups` + its grad).
        let fp32 = states::allocation(p.numel(), DType::F32).0;
        // Megatron: bf16 keeps only the fp32 master beside Adam (main grads are
        // already fp32, see `grad`); fp16 also keeps an fp32 gradient copy.
        let fp32_grad = match self.parallel.strategy {
            crate::parallel::Strategy::Zero3 => 0,
            crate::parallel::Strategy::MegatronDistOpt if self.pdtype == DType::Bf16 => 0,
            crate::parallel::Strategy::Single
            | crate::parallel::Strategy::Ddp
            | crate::parallel::Strategy::Zero1
            | crate::parallel::Strategy::Zero2
            | crate::parallel::Strategy::FsdpFull
            | crate::parallel::Strategy::FsdpGradOp
            | crate::parallel::Strategy::FsdpHybrid
            | crate::parallel::Strategy::FsdpNoShard
            | crate::parallel::Strategy::MegatronDistOpt => fp32,
        };
        let master = if p.trainable { fp32 + fp32_grad } else { 0 };
        states::optimizer_state_bytes(p, DType::F32, cfg.optimizer, cfg.optimizer_impl).0 + master
    }

    /// ZeRO and Megatron's distributed optimizer keep fp32 master weights when
    /// the parameters are half precision.
    fn zero_master(&self) -> bool {
        (self.parallel.strategy.is_zero()
            || self.parallel.strategy == crate::parallel::Strategy::MegatronDistOpt)
            && self.pdtype != DType::F32
    }

    /// The optimizer step's temporaries on one GPU.
    /// ZeRO-3 converts each sub-group's half gradient partition to fp32 for the step.
    pub fn step_temps(&self, g: &Graph, cfg: &TrainConfig) -> Vec<u64> {
        if self.parallel.offload != Offload::None {
            return Vec::new();
        }
        let dtype = if self.zero_master() {
            DType::F32
        } else {
            self.pdtype
        };
        let temps =
            states::optimizer_step_temps(&g.params, dtype, cfg.optimizer, cfg.optimizer_impl);
        let trainable: Vec<&Param> = g.params.iter().filter(|p| p.trainable).collect();
        // Adam's `foreach` temporaries are one per trainable parameter, in
        // order, each sharded as its parameter; the per-parameter loops'
        // (the largest parameter's) take the smallest group, the largest share.
        let smallest = self
            .parallel
            .expert_shard_group()
            .min(self.parallel.shard_group());
        let per_param = states::step_temps_per_parameter(cfg.optimizer, cfg.optimizer_impl);
        let mut out: Vec<u64> = temps
            .into_iter()
            .enumerate()
            .map(|(j, t)| {
                let group = match trainable.get(j) {
                    Some(p) if per_param => self.group(p),
                    Some(_) | None => smallest,
                };
                self.split(t.0, self.parallel.shards_states(), group)
            })
            .collect();
        if self.zero_master() && self.parallel.strategy == crate::parallel::Strategy::Zero3 {
            out.extend(trainable.iter().map(|p| {
                self.split(
                    states::allocation(p.numel(), DType::F32).0,
                    self.parallel.shards_states(),
                    self.group(p),
                )
            }));
        }
        out
    }

    /// DeepSpeed's contiguous gradient buckets during backward: `reduce_bucket_size`
    /// elements in the parameter dtype, doubled by `overlap_comm` (on by default in ZeRO-3).
    /// `torch.empty(reduce_bucket_size)` is allocated whatever the model's size.
    pub fn zero_buckets(&self) -> u64 {
        if !self.parallel.strategy.is_zero() || self.parallel.dp() <= 1 {
            return 0;
        }
        let count = if self.parallel.strategy == crate::parallel::Strategy::Zero3 {
            2
        } else {
            1
        };
        states::allocation(self.parallel.zero_bucket, self.pdtype)
            .0
            .saturating_mul(count)
    }

    /// DDP's flat gradient buckets (as large as all gradients).
    pub fn buckets(&self, g: &Graph) -> u64 {
        if !self.parallel.has_buckets() {
            return 0;
        }
        g.params.iter().map(|p| self.full_grad(p)).sum()
    }

    /// The sizes a replay reads for [`Sharded`] sizes under this strategy.
    pub fn sizes(&self, g: &Graph) -> ShardSizes {
        let sharded = self.parallel.shards_params();
        ShardSizes {
            weights: g.params.iter().map(|p| self.weight(p)).collect(),
            grads: g
                .params
                .iter()
                .map(|p| (self.full_grad(p), self.grad(p)))
                .collect(),
            ddp_buckets: self.buckets(g),
            zero_buckets: self.zero_buckets(),
            gathers_blocks: sharded,
            gathers_root: sharded && self.parallel.strategy != crate::parallel::Strategy::Zero3,
            gathers_ops: sharded && self.parallel.strategy == crate::parallel::Strategy::Zero3,
        }
    }

    /// Host memory per node used by offloading: this node's shards of the
    /// optimizer state (with master copies) and, for parameter offload, of the weights.
    pub fn host_bytes(&self, g: &Graph, cfg: &TrainConfig) -> u64 {
        if self.parallel.offload == Offload::None {
            return 0;
        }
        let weights = |p: &Param| match self.parallel.offload {
            Offload::OptimizerParams => states::weight_bytes(p, self.pdtype).0,
            Offload::None | Offload::Optimizer => 0,
        };
        let bytes = |p: &Param| self.full_state(p, cfg).saturating_add(weights(p));
        let sum = |expert: bool| {
            g.params
                .iter()
                .filter(|p| p.expert == expert)
                .map(bytes)
                .fold(0u64, u64::saturating_add)
        };
        // This node's GPUs hold `local` of each `group` shards.
        let share = |bytes: u64, group: u64| {
            let group = group.max(1);
            let local = self.parallel.gpus_per_node.min(group).max(1);
            (bytes as u128 * local as u128 / group as u128) as u64
        };
        let (dense, expert) = (
            self.parallel.shard_group(),
            self.parallel.expert_shard_group(),
        );
        if dense == expert {
            share(sum(false).saturating_add(sum(true)), dense)
        } else {
            share(sum(false), dense).saturating_add(share(sum(true), expert))
        }
    }
}
