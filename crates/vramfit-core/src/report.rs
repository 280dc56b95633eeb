//! The report of one estimate: its JSON schema, the step's timeline, the
//! per-layer table, the fit on a GPU, and the notes that go with it (which
//! GPU the numbers describe, DeepSpeed's own estimate for comparison).

use crate::config::TrainConfig;
use crate::graph::Graph;
use crate::models::ModelSpec;
use crate::overheads::Overheads;
use crate::parallel::Parallel;
use crate::simulate::{Breakdown, Phase};
use crate::states;
use crate::units::Bytes;
use serde::Serialize;

/// The schema id of [`Estimate`]'s JSON form.
pub const SCHEMA: &str = "vramfit.estimate/1";

/// One moment of the step timeline, for charts and `--json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimelinePoint {
    /// Training step (1-based).
    pub step: u32,
    /// Phase.
    pub phase: Phase,
    /// The op (module path) or `optimizer.step`; shared by every moment of
    /// the same op (a deep model's timeline has 10^5 moments).
    pub op: std::sync::Arc<str>,
    /// `torch.cuda.memory_allocated()` right after the op's allocations.
    pub allocated_bytes: Bytes,
}

/// One row of the per-layer table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LayerRow {
    /// Module path of the layer.
    pub name: String,
    /// Parameters registered by the layer.
    pub parameters: u64,
    /// Bytes this layer's ops keep alive at the end of the forward pass
    /// (saved for backward, or kept as checkpoint inputs), one micro-batch.
    pub saved_bytes: Bytes,
    /// Forward FLOPs of the layer for one micro-batch.
    pub forward_flops: f64,
}

/// How the configuration sits on a chosen GPU.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GpuFit {
    /// GPU preset id.
    pub id: String,
    /// Its memory.
    pub memory_bytes: Bytes,
    /// The memory CUDA offers on it ([`crate::gpus::GpuPreset::runtime_memory`]:
    /// NVML's total less the driver's reservation where a reading of the GPU
    /// is published, else `memory_bytes`).
    pub runtime_bytes: Bytes,
    /// Memory usable under the memory fraction.
    pub usable_bytes: Bytes,
    /// Whether the step runs in the usable memory: `device_used_bytes` fits,
    /// or the caching allocator fits it by returning cached segments to the
    /// driver when `cudaMalloc` fails (as PyTorch does before an out-of-memory error).
    pub fits: bool,
    /// Device memory on this GPU when it fits: the estimate's
    /// `device_used_bytes`, or less where the allocator had to return cached
    /// segments (`None` when it does not fit).
    pub device_used_bytes: Option<Bytes>,
    /// Memory the driver and firmware reserve on this GPU before any process
    /// (NVML v2 `reserved`, nvidia-smi's "Reserved"), where a reading of the
    /// GPU is published ([`crate::driver_reserve`]); `None`: unknown.
    pub driver_reserved_bytes: Option<Bytes>,
    /// `device_used_bytes` as NVML v1 `used` reads it on a current driver
    /// (`pynvml.nvmlDeviceGetMemoryInfo(h).used`): plus the driver's
    /// reservation; `None` when it does not fit or the reservation is unknown.
    pub nvml_v1_used_bytes: Option<Bytes>,
    /// The largest micro-batch that fits (0 when not even 1 does).
    pub max_batch: u64,
    /// Inference: the longest context (KV-cache tokens) that fits at this batch.
    pub max_context: Option<u64>,
    /// How much of its memory a process may use by default (all of a
    /// discrete GPU's; Metal's working set of Apple's unified memory), which
    /// `usable_bytes` applies.
    pub limit: crate::gpus::MemoryLimit,
    /// The largest micro-batch that keeps [`crate::overheads::SAFETY_MARGIN`]
    /// of the usable memory free: the batch to use (0 when none does).
    pub margin_batch: u64,
    /// The precision to use instead when the configuration computes in bf16
    /// on a GPU without bf16 matrix math ([`without_bf16`]).
    pub without_bf16: Option<crate::config::Precision>,
}

impl GpuFit {
    /// This fit with the device memory at another batch (`None`: it does
    /// not fit), the NVML v1 figure following it.
    #[must_use]
    pub fn with_device_used(self, device_used: Option<Bytes>) -> GpuFit {
        GpuFit {
            fits: device_used.is_some(),
            device_used_bytes: device_used,
            nvml_v1_used_bytes: device_used
                .and_then(|d| crate::driver_reserve::nvml_v1_used(d, self.driver_reserved_bytes)),
            ..self
        }
    }

    /// Why CUDA offers less than the marketed memory, where a published
    /// reading says: `None` when it offers all of it or no reading exists.
    pub fn runtime_shortfall(&self) -> Option<RuntimeShortfall> {
        let reserved = self.driver_reserved_bytes?;
        (self.runtime_bytes < self.memory_bytes).then(|| RuntimeShortfall {
            reserved,
            board_under_marketed: self.runtime_bytes.0.saturating_add(reserved.0)
                < self.memory_bytes.0,
        })
    }
}

/// What [`GpuFit::runtime_shortfall`] finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuntimeShortfall {
    /// What the driver keeps for itself.
    pub reserved: Bytes,
    /// Whether NVML's own total is under the marketed size as well (an A10's
    /// 23028 MiB of "24 GB"), beyond what the reservation explains.
    pub board_under_marketed: bool,
}

/// The precision to use instead of `precision` on `gpu` when it computes in
/// bf16 and the GPU has no bf16 matrix math ([`crate::gpus::Arch::has_bf16`]):
/// fp16 under autocast (with a gradient scaler) for `amp-bf16`, pure fp16 for
/// `bf16`. `None` when the precision runs as it is.
pub fn without_bf16(
    precision: crate::config::Precision,
    gpu: &crate::gpus::GpuPreset,
) -> Option<crate::config::Precision> {
    use crate::config::Precision;
    if gpu.bf16 {
        return None;
    }
    match precision {
        Precision::AmpBf16 => Some(Precision::AmpFp16),
        Precision::Bf16 => Some(Precision::Fp16),
        Precision::Fp32 | Precision::Fp16 | Precision::AmpFp16 => None,
    }
}

/// The full report for one configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// Parameters, as `sum(p.numel())`.
    pub parameter_count: u64,
    /// Trainable parameters.
    pub trainable_parameter_count: u64,
    /// Parameters one token runs through: all but the routed experts it
    /// skips ([`ModelSpec::active_parameter_count`]); `parameter_count`
    /// for a model without experts. Memory holds every parameter.
    pub active_parameter_count: u64,
    /// The parameters one GPU holds (the first pipeline stage's, see
    /// [`Estimate::rank`]): its tensor-parallel share, its routed experts
    /// under expert parallelism, and under ZeRO-3 / FSDP full sharding its
    /// shard of them ([`parameters_per_gpu`]). `parameter_count` on one GPU.
    pub parameters_per_gpu: u64,
    /// What `torch.cuda.max_memory_allocated()` reports over the first two steps.
    pub peak_allocated_bytes: Bytes,
    /// What `torch.cuda.max_memory_reserved()` reports (caching-allocator segments).
    pub peak_reserved_bytes: Bytes,
    /// The caching-allocator model's segments by pool and size (compared
    /// with a measured snapshot's; not part of the JSON report).
    #[serde(skip)]
    pub segments: crate::simulate::allocator::Segments,
    /// What nvidia-smi shows: reserved (cuBLAS workspaces included) + CUDA context.
    pub device_used_bytes: Bytes,
    /// `device_used_bytes` widened by how far published real-GPU runs of
    /// this kind of model fell from vramfit's estimate ([`crate::spread`]):
    /// `[low, high]`; training only (the runs are training runs).
    pub device_used_range_bytes: Option<[Bytes; 2]>,
    /// The spread behind `device_used_range_bytes`: the runs and their
    /// lowest and highest `measured / estimated − 1`.
    pub device_used_spread: Option<crate::spread::Spread>,
    /// NCCL's connection buffers per GPU on a multi-GPU run, outside the
    /// allocator and not in `device_used_bytes` ([`crate::nccl`]).
    pub nccl_buffers: Option<crate::nccl::NcclBuffers>,
    /// Phase of the peak.
    pub peak_phase: Phase,
    /// Op at the peak.
    pub peak_op: String,
    /// Training step of the peak (1 or 2).
    pub peak_step: u32,
    /// Memory by category at the peak.
    pub at_peak: Breakdown,
    /// The overhead terms used.
    pub overheads: Overheads,
    /// The configuration estimated.
    pub config: TrainConfig,
    /// The step timeline (both steps).
    pub timeline: Vec<TimelinePoint>,
    /// Per-layer rows.
    pub layers: Vec<LayerRow>,
    /// Fit on the chosen GPU.
    pub gpu: Option<GpuFit>,
    /// Host memory per node used by offloading.
    pub host_ram_bytes: Bytes,
    /// DeepSpeed's own model-state estimate for ZeRO-2/3 configurations
    /// (it leaves out activations, temporaries and overheads).
    pub deepspeed_estimate: Option<crate::deepspeed::ZeroEstimate>,
    /// Which GPU the numbers describe when GPUs differ (pipeline stages).
    pub rank: Option<RankNote>,
    /// The model's trained context when the tokens a step attends over
    /// exceed it (see [`beyond_trained_context`]).
    pub beyond_trained_context: Option<u64>,
    /// A mixture of experts in training: its routed experts' activations,
    /// which the routing does not change, and what a drop-and-pad
    /// dispatch would add ([`crate::routing::routing`]).
    pub routing: Option<crate::routing::Routing>,
    /// A model with linear-attention layers (Qwen3-Next, Qwen3.5) or
    /// Mamba-2 layers (Granite 4.0's H models): which of its layers are,
    /// estimated as `transformers` runs them without the
    /// `flash-linear-attention` or `mamba-ssm` kernels
    /// ([`crate::models::gated_deltanet`], [`crate::models::mamba2`]).
    pub linear_attention: Option<LinearAttentionNote>,
}

/// The linear-attention layers of an estimated model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LinearAttentionNote {
    /// Linear-attention layers.
    pub layers: u64,
    /// All layers.
    pub of: u64,
    /// They are Mamba-2 (estimated without `mamba-ssm`'s kernels), not
    /// Gated DeltaNet.
    pub mamba2: bool,
}

/// [`LinearAttentionNote`] for a transformer with linear-attention layers.
pub fn linear_attention(spec: &crate::models::ModelSpec) -> Option<LinearAttentionNote> {
    match spec {
        crate::models::ModelSpec::Transformer(t) => {
            t.linear.as_deref().map(|l| LinearAttentionNote {
                layers: l.linear_layers(t.layers),
                of: t.layers,
                mamba2: matches!(l, crate::models::Recurrent::Mamba2(_)),
            })
        }
        _ => None,
    }
}

/// The parameters one GPU holds of the graph `g` (already one rank's share
/// under tensor, pipeline and expert parallelism) when `parallel` shards
/// the parameters: the others over the data-parallel sharding group, the
/// routed experts' over the expert-data-parallel one, each rounded up (as
/// ZeRO-3 pads its partitions). Parameters offloaded to the host count as
/// their GPU's: it gathers them as it would its own shard.
pub fn parameters_per_gpu(g: &Graph, parallel: &Parallel) -> u64 {
    let sum = |expert: bool| {
        g.params
            .iter()
            .filter(|p| p.expert == expert)
            .map(|p| p.numel())
            .fold(0u64, u64::saturating_add)
    };
    if !parallel.shards_params() {
        return sum(false).saturating_add(sum(true));
    }
    let dense = sum(false).div_ceil(parallel.shard_group().max(1));
    dense.saturating_add(sum(true).div_ceil(parallel.expert_shard_group().max(1)))
}

/// Which GPU an estimate describes when the GPUs differ: with pipeline
/// parallelism, the first stage, the fullest (it holds the embeddings and
/// keeps the most micro-batches in flight under 1F1B).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RankNote {
    /// The pipeline stage the numbers describe (0: the first, with the embeddings).
    pub stage: u64,
    /// Pipeline stages.
    pub stages: u64,
    /// The stage's last transformer block (it holds blocks 0 to this one).
    pub last_layer: u64,
    /// Micro-batches the stage keeps in flight under 1F1B.
    pub in_flight: u64,
}

/// The model's trained context ([`TransformerSpec::trained_context`]) when
/// the tokens a step attends over exceed it: the sequence in training, the
/// KV cache's tokens in inference. `transformers` runs a rotary model past
/// it (learned positions refuse earlier, in the lowering), but the model
/// never saw such distances and its output degrades.
///
/// [`TransformerSpec::trained_context`]: crate::models::TransformerSpec::trained_context
pub fn beyond_trained_context(spec: &ModelSpec, cfg: &TrainConfig) -> Option<u64> {
    let tokens = match cfg.mode {
        crate::config::Mode::Inference => cfg.cache_tokens(),
        crate::config::Mode::Train
        | crate::config::Mode::FinetuneLora
        | crate::config::Mode::FinetuneQlora => cfg.seq,
    };
    match spec {
        ModelSpec::Transformer(t) => t.trained_context().filter(|&n| tokens > n),
        ModelSpec::T5(_)
        | ModelSpec::ResNet(_)
        | ModelSpec::Vgg(_)
        | ModelSpec::MobileNetV2(_)
        | ModelSpec::MobileNetV3(_)
        | ModelSpec::EfficientNet(_)
        | ModelSpec::ConvNext(_)
        | ModelSpec::RegNet(_)
        | ModelSpec::Vit(_)
        | ModelSpec::Mlp(_) => None,
    }
}

/// With pipeline parallelism the first stage is the fullest: it holds the
/// embeddings and keeps the most micro-batches in flight under 1F1B.
pub(crate) fn rank_note(cfg: &TrainConfig, spec: &ModelSpec) -> Option<RankNote> {
    let p = &cfg.parallel;
    if p.pp <= 1 {
        return None;
    }
    let layers = match spec {
        ModelSpec::Transformer(t) => t.layers,
        // Pipeline stages split a decoder's or an encoder's blocks only (T5 refuses them).
        ModelSpec::T5(_)
        | ModelSpec::ResNet(_)
        | ModelSpec::Vgg(_)
        | ModelSpec::MobileNetV2(_)
        | ModelSpec::MobileNetV3(_)
        | ModelSpec::EfficientNet(_)
        | ModelSpec::ConvNext(_)
        | ModelSpec::RegNet(_)
        | ModelSpec::Vit(_)
        | ModelSpec::Mlp(_) => return None,
    };
    let per = layers.div_ceil(p.pp);
    Some(RankNote {
        stage: 0,
        stages: p.pp,
        last_layer: per.saturating_sub(1),
        in_flight: p.pp.min(cfg.grad_accum),
    })
}

/// What DeepSpeed's `estimate_zero{2,3}_model_states_mem_needs_all_live`
/// would print for this model and layout (its "largest layer" is the module
/// with the most direct parameters; here, the op with the most).
pub(crate) fn deepspeed_estimate(
    g: &Graph,
    cfg: &TrainConfig,
) -> Option<crate::deepspeed::ZeroEstimate> {
    use crate::parallel::{Offload, Strategy};
    // DeepSpeed's estimators size training's model states (fp16 parameters,
    // gradients, fp32 Adam): nothing of that applies to inference.
    if cfg.mode == crate::config::Mode::Inference {
        return None;
    }
    // They divide one model's states over every GPU: experts split over
    // expert-parallel ranks (or their own tensor-parallel ones), sharded
    // over another group, are not theirs to size.
    if cfg.parallel.ep > 1 || cfg.parallel.expert_tp() != cfg.parallel.tp.max(1) {
        return None;
    }
    let p = &cfg.parallel;
    let total = g.parameter_count();
    match p.strategy {
        Strategy::Zero2 => Some(crate::deepspeed::zero2(
            total,
            p.gpus_per_node,
            p.nodes,
            p.offload != Offload::None,
        )),
        Strategy::Zero3 => {
            let largest = g
                .ops
                .iter()
                .map(|op| {
                    op.params
                        .iter()
                        .filter_map(|id| g.params.get(id.0 as usize))
                        .map(|p| p.numel())
                        .sum::<u64>()
                })
                .max()
                .unwrap_or(0);
            let offload = crate::deepspeed::ZeroOffload {
                optimizer: p.offload != Offload::None,
                params: p.offload == Offload::OptimizerParams,
            };
            Some(crate::deepspeed::zero3(
                total,
                largest,
                p.gpus_per_node,
                p.nodes,
                offload,
                true,
            ))
        }
        // DeepSpeed's estimators are for ZeRO stages 2 and 3.
        Strategy::Single
        | Strategy::Ddp
        | Strategy::Zero1
        | Strategy::FsdpFull
        | Strategy::FsdpGradOp
        | Strategy::FsdpHybrid
        | Strategy::FsdpNoShard
        | Strategy::MegatronDistOpt => None,
    }
}

/// The per-layer table at `batch` from the graph and what each layer keeps after forward.
pub(crate) fn layer_rows(g: &Graph, batch: u64, kept: Vec<(usize, Bytes)>) -> Vec<LayerRow> {
    let mut rows: Vec<LayerRow> = g
        .layers
        .iter()
        .map(|name| LayerRow {
            name: name.clone(),
            parameters: 0,
            saved_bytes: Bytes::ZERO,
            forward_flops: 0.0,
        })
        .collect();
    for p in &g.params {
        // Parameters are registered while their layer is current; find it by name prefix.
        if let Some(r) = rows.iter_mut().rev().find(|r| {
            p.name
                .strip_prefix(r.name.as_str())
                .is_some_and(|rest| rest.starts_with('.'))
        }) {
            r.parameters += p.numel();
        }
    }
    for op in &g.ops {
        if let Some(r) = rows.get_mut(op.layer as usize) {
            r.forward_flops += op.flops.at(batch) as f64;
        }
    }
    for (layer, bytes) in kept {
        if let Some(r) = rows.get_mut(layer) {
            r.saved_bytes += bytes;
        }
    }
    rows.retain(|r| r.parameters > 0 || r.saved_bytes.0 > 0);
    rows
}

/// Steady-state model-state bytes (weights, gradients, optimizer state), for
/// quick tables; the timeline's numbers at the peak are in [`Estimate::at_peak`].
pub fn model_states(g: &Graph, cfg: &TrainConfig) -> (Bytes, Bytes, Bytes) {
    let dt = cfg.param_dtype();
    let w = g.params.iter().map(|p| states::weight_bytes(p, dt)).sum();
    let gr = g.params.iter().map(|p| states::gradient_bytes(p, dt)).sum();
    let o = g
        .params
        .iter()
        .map(|p| states::optimizer_state_bytes(p, dt, cfg.optimizer, cfg.optimizer_impl))
        .sum();
    (w, gr, o)
}
