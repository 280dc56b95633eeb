//! The estimate: a pure function from (model, training config, overheads, GPU)
//! to a report of peak memory, its breakdown, the step timeline and per-layer rows.

use crate::config::{MAX_DIMENSION, TrainConfig};
use crate::error::Error;
use crate::gpus::GpuPreset;
use crate::graph::Graph;
use crate::models::ModelSpec;
use crate::simulate::{self, Breakdown, Phase, Simulation};
use crate::states;
use crate::units::{Bytes, MIB};
use serde::{Deserialize, Serialize};

/// The schema id of [`Estimate`]'s JSON form.
pub const SCHEMA: &str = "vramfit.estimate/1";

/// How the CUDA runtime loads kernels, which sets the context's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModuleLoading {
    /// `CUDA_MODULE_LOADING=LAZY`: PyTorch sets it since 1.13 (CUDA ≥ 11.7).
    Lazy,
    /// Eager loading (CUDA < 11.7, or `CUDA_MODULE_LOADING=EAGER`).
    Eager,
}

impl ModuleLoading {
    /// The default CUDA context size. Lazy: 400 MiB — PyTorch maintainers
    /// report "~300 MB" / "around 400 MB" with lazy loading (pytorch/pytorch
    /// #107667, #109888), measured 256 MiB on an RTX 3090 (invoke-ai/InvokeAI
    /// #9413) and 426 MiB on an RTX 6000 Ada (unslothai/unsloth-zoo #1053).
    /// Eager: 1000 MiB — "> 1000 MB" before CUDA 11.7 (#107667), 1001 MiB on
    /// an RTX 3090 with CUDA 11.1 (#54564).
    pub fn context(self) -> Bytes {
        match self {
            ModuleLoading::Lazy => Bytes(400 * MIB),
            ModuleLoading::Eager => Bytes(1000 * MIB),
        }
    }
}

/// cuBLAS workspace per handle before Hopper: `CUBLAS_WORKSPACE_CONFIG`
/// default `:4096:2:16:8` = 4096 KiB × 2 + 16 KiB × 8 (`aten/src/ATen/cuda/CublasHandlePool.cpp`).
pub const CUBLAS_WORKSPACE_DEFAULT: Bytes = Bytes(4096 * 1024 * 2 + 16 * 1024 * 8);
/// cuBLAS workspace per handle on Hopper and Blackwell (compute capability 9, 10, 12): 32 MiB.
pub const CUBLAS_WORKSPACE_HOPPER: Bytes = Bytes(32 * MIB);

/// Memory beyond the model's own tensors, each a named term the user can change.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Overheads {
    /// CUDA context and loaded kernels, outside PyTorch's allocator (seen by nvidia-smi only).
    pub cuda_context: Bytes,
    /// Size of one cuBLAS workspace. Since PyTorch 2.0 it is taken from the
    /// caching allocator and kept per (handle, stream), so it counts in
    /// allocated and reserved memory.
    pub cublas_workspace: Bytes,
    /// cuBLAS handles holding a workspace: training uses two (the forward
    /// thread's and the autograd engine's).
    pub cublas_handles: u32,
    /// cuDNN workspace taken from the caching allocator for the duration of
    /// each convolution (forward and backward) and returned after it. Its size
    /// depends on the algorithm cuDNN picks (with `cudnn.benchmark=True` it may
    /// try up to all free memory); no typical value is published, so the
    /// default is 0 and users who know theirs can set it.
    pub cudnn_workspace: Bytes,
    /// `torch.cuda.set_per_process_memory_fraction`: share of the GPU usable (0–1].
    pub memory_fraction: f64,
}

impl Default for Overheads {
    fn default() -> Self {
        Overheads {
            cuda_context: ModuleLoading::Lazy.context(),
            cublas_workspace: CUBLAS_WORKSPACE_DEFAULT,
            cublas_handles: 2,
            cudnn_workspace: Bytes::ZERO,
            memory_fraction: 1.0,
        }
    }
}

impl Overheads {
    /// The defaults for a GPU (its cuBLAS workspace size).
    pub fn for_gpu(gpu: &GpuPreset) -> Overheads {
        Overheads {
            cublas_workspace: gpu.cublas_workspace(),
            ..Overheads::default()
        }
    }
}

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
    /// Memory usable under the memory fraction.
    pub usable_bytes: Bytes,
    /// Whether `device_used_bytes` fits in the usable memory.
    pub fits: bool,
    /// The largest micro-batch that fits (0 when not even 1 does).
    pub max_batch: u64,
    /// Inference: the longest context (KV-cache tokens) that fits at this batch.
    pub max_context: Option<u64>,
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
    /// What `torch.cuda.max_memory_allocated()` reports over the first two steps.
    pub peak_allocated_bytes: Bytes,
    /// What `torch.cuda.max_memory_reserved()` reports (caching-allocator segments).
    pub peak_reserved_bytes: Bytes,
    /// What nvidia-smi shows: reserved (cuBLAS workspaces included) + CUDA context.
    pub device_used_bytes: Bytes,
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
    pub rank_note: Option<String>,
}

/// Checks a configuration and the overheads' memory fraction.
pub(crate) fn validate(cfg: &TrainConfig, overheads: &Overheads) -> Result<(), Error> {
    cfg.validate()?;
    if !(overheads.memory_fraction > 0.0 && overheads.memory_fraction <= 1.0) {
        return Err(Error::OutOfRange {
            field: "memory-fraction",
            value: overheads.memory_fraction.to_string(),
            min: 0,
            max: 1,
        });
    }
    Ok(())
}

/// Device memory used = reserved (workspaces included) + CUDA context.
pub(crate) fn device_used(sim: &Simulation, o: &Overheads) -> Bytes {
    sim.peak_reserved + o.cuda_context
}

/// Usable bytes of a GPU under the memory fraction.
pub fn usable(gpu: &GpuPreset, o: &Overheads) -> Bytes {
    Bytes((gpu.memory_bytes.0 as f64 * o.memory_fraction) as u64)
}

/// Estimates one configuration.
///
/// # Errors
/// Any [`Error`] from validating the config or lowering the model.
///
/// # Example
/// ```
/// use vramfit_core::{estimate, model_preset, Overheads, TrainConfig};
/// let model = model_preset("resnet50").unwrap().spec;
/// let cfg = TrainConfig { batch: 32, ..TrainConfig::default() };
/// let e = estimate(&model, &cfg, &Overheads::default(), None).unwrap();
/// assert!(e.peak_allocated_bytes.0 > 25_557_032 * 4);
/// let bad = TrainConfig { batch: 0, ..cfg };
/// assert!(estimate(&model, &bad, &Overheads::default(), None).is_err());
/// ```
pub fn estimate(
    spec: &ModelSpec,
    cfg: &TrainConfig,
    overheads: &Overheads,
    gpu: Option<&GpuPreset>,
) -> Result<Estimate, Error> {
    crate::session::Session::default().estimate(spec, cfg, overheads, gpu)
}

/// With pipeline parallelism the first stage is the fullest: it holds the
/// embeddings and keeps the most micro-batches in flight under 1F1B.
pub(crate) fn rank_note(cfg: &TrainConfig, spec: &ModelSpec) -> Option<String> {
    let p = &cfg.parallel;
    if p.pp <= 1 {
        return None;
    }
    let layers = match spec {
        ModelSpec::Transformer(t) => t.layers,
        _ => return None,
    };
    let per = layers.div_ceil(p.pp);
    Some(format!(
        "pipeline stage 0 of {} (embeddings and layers 0–{}), the largest: it keeps {} micro-batches in flight under 1F1B",
        p.pp,
        per.saturating_sub(1),
        p.pp.min(cfg.grad_accum)
    ))
}

/// What DeepSpeed's `estimate_zero{2,3}_model_states_mem_needs_all_live`
/// would print for this model and layout (its "largest layer" is the module
/// with the most direct parameters; here, the op with the most).
pub(crate) fn deepspeed_estimate(
    g: &Graph,
    cfg: &TrainConfig,
) -> Option<crate::deepspeed::ZeroEstimate> {
    use crate::parallel::{Offload, Strategy};
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
        _ => None,
    }
}

/// The largest micro-batch whose device memory fits in `capacity`, by search
/// over the real simulation (memory is non-decreasing in the batch).
///
/// Allocated memory never exceeds reserved memory, so a first search over
/// allocated memory alone (the tape replayed without the caching-allocator
/// model, an order of magnitude cheaper) bounds the answer from above and
/// tells how steeply memory grows; the full simulation then only runs for a
/// few batches just below that bound.
///
/// # Errors
/// As [`estimate`].
pub fn max_batch_for(
    spec: &ModelSpec,
    cfg: &TrainConfig,
    overheads: &Overheads,
    capacity: Bytes,
) -> Result<u64, Error> {
    crate::session::Session::default().max_batch(spec, cfg, overheads, capacity)
}

/// [`max_batch_for`] on a prepared simulation of `cfg`'s configuration.
pub(crate) fn max_batch_prepared(
    prepared: &simulate::Prepared,
    cfg: &TrainConfig,
    overheads: &Overheads,
    capacity: Bytes,
) -> u64 {
    let at = |batch: u64| TrainConfig { batch, ..*cfg };
    let context = overheads.cuda_context.0;
    let allocated = |batch: u64| {
        prepared
            .peak_allocated(&at(batch), overheads)
            .0
            .saturating_add(context)
    };
    let kv = prepared.kv_cache();
    let used = |batch: u64, limit: u64| {
        device_used_within(limit, overheads, |l| {
            prepared.peak_reserved_within(&at(batch), overheads, kv, l)
        })
    };
    largest_fitting(allocated, used, capacity.0)
}

/// Device memory (reserved plus the CUDA context) when it is at most
/// `limit`, from `reserved_within`, which answers for a limit on reserved bytes.
pub(crate) fn device_used_within(
    limit: u64,
    overheads: &Overheads,
    reserved_within: impl FnOnce(Bytes) -> Option<Bytes>,
) -> Option<u64> {
    let context = overheads.cuda_context.0;
    let reserved = reserved_within(Bytes(limit.checked_sub(context)?))?;
    Some(reserved.0.saturating_add(context))
}

/// The largest `n` in 1..=[`MAX_DIMENSION`] whose device memory fits in
/// `capacity` (0 if not even 1 does), for non-decreasing memory, given
/// `allocated(n)`, a cheaper lower bound on it, and `used(n, limit)`, the
/// device memory (`None` when it is more than `limit`: the simulation
/// stops as soon as it knows). A search over `allocated` bounds
/// the answer from above. Reserved memory exceeds allocated memory by
/// caching and fragmentation, a gap that grows with what the batch
/// allocates (activations fragment; weights hardly do), so taking it as
/// proportional to `allocated(n) − allocated(1)`, as measured at the bound,
/// a second cheap search finds a close guess; secant steps on `used` finish
/// from there (usually one or two more full simulations).
fn largest_fitting(
    allocated: impl Fn(u64) -> u64,
    used: impl Fn(u64, u64) -> Option<u64>,
    capacity: u64,
) -> u64 {
    // Both searches over allocated memory probe the same small batches.
    let seen = std::cell::RefCell::new(Vec::<(u64, u64)>::new());
    let allocated = |n: u64| {
        if let Some(&(_, m)) = seen.borrow().iter().find(|(k, _)| *k == n) {
            return m;
        }
        let m = allocated(n);
        seen.borrow_mut().push((n, m));
        m
    };
    let bound = largest_guided(allocated, capacity);
    if bound == 0 {
        return 0;
    }
    // The whole simulation at the bound: its memory calibrates the guess below.
    let at_bound = used(bound, u64::MAX).unwrap_or(u64::MAX);
    if at_bound <= capacity {
        return bound;
    }
    let slope =
        (at_bound.saturating_sub(allocated(1))) as f64 / bound.saturating_sub(1).max(1) as f64;
    // allocated(n) + k·(allocated(n) − a1) ≤ capacity, with k the gap per allocated byte at the bound.
    let a1 = allocated(1);
    let k = at_bound.saturating_sub(allocated(bound)) as f64
        / allocated(bound).saturating_sub(a1).max(1) as f64;
    let target = (((capacity as f64 + k * a1 as f64) / (1.0 + k)) as u64).min(capacity);
    // The bound's search measured allocated memory around the target already: start between the nearest two.
    let known = seen.borrow().clone();
    let below = known
        .iter()
        .filter(|(_, m)| *m <= target)
        .max_by_key(|(n, _)| *n)
        .copied();
    let above = known
        .iter()
        .filter(|(_, m)| *m > target)
        .min_by_key(|(n, _)| *n)
        .map(|&(n, m)| (n, Some(m)));
    let guess = match below {
        Some(lo) => {
            let allocated = |n: u64, _limit: u64| Some(allocated(n));
            secant_search(
                &allocated,
                target,
                Some(lo),
                above,
                slope_between(lo, above).unwrap_or(slope),
            )
        }
        None => 0,
    }
    .min(bound - 1);
    let hi = Some((bound, Some(at_bound)));
    if guess == 0 {
        return secant_search(&used, capacity, None, hi, slope);
    }
    // Without a batch known to fit, the search backs off from the first
    // that does not by its memory, so ask for all of it.
    match used(guess, u64::MAX) {
        Some(u) if u <= capacity => secant_search(&used, capacity, Some((guess, u)), hi, slope),
        u => secant_search(&used, capacity, None, Some((guess, u)), slope),
    }
}

/// The largest batch whose `used(batch)` fits in `capacity` (0 if not even
/// 1 does). Memory is non-decreasing and nearly affine in the batch (tensor
/// sizes are; rounding and allocator segments are not), so a line through
/// two simulations gives a first guess and secant steps finish the search.
fn largest_guided(used: impl Fn(u64) -> u64, capacity: u64) -> u64 {
    const PROBE: u64 = 16;
    let u1 = used(1);
    if u1 > capacity {
        return 0;
    }
    let u16 = used(PROBE);
    let slope = u16.saturating_sub(u1) as f64 / (PROBE - 1) as f64;
    let used = |n: u64, _limit: u64| Some(used(n));
    if u16 > capacity {
        return secant_search(
            &used,
            capacity,
            Some((1, u1)),
            Some((PROBE, Some(u16))),
            slope,
        );
    }
    secant_search(&used, capacity, Some((PROBE, u16)), None, slope)
}

/// Bytes per sample between a measured point and another, when it grows.
fn slope_between(lo: (u64, u64), hi: Option<(u64, Option<u64>)>) -> Option<f64> {
    let (n, m) = hi?;
    let m = m?;
    (n > lo.0 && m > lo.1).then(|| (m - lo.1) as f64 / (n - lo.0) as f64)
}

/// Where to split a bracket `(lo, hi)` without a better guess: a batch that
/// does not fit is told at a fraction of the cost of one that does (its
/// simulation stops at the overflow, ~1/4 to 1/7 of the way in the deep
/// models that need long searches), so the split leans to `hi`. Counting a
/// fit as 4 overflows, the worst case costs c per halving of the bracket
/// with 2^(−4/c) + 2^(−1/c) = 1: c ≈ 2.2 (about half a full simulation),
/// at a split 2^(−1/c) ≈ 3/4 of the way, against 4 (a whole one) for
/// halving at the middle.
fn split(lo: u64, hi: u64) -> u64 {
    (lo + (hi - lo) * 3 / 4).clamp(lo + 1, hi - 1)
}

/// The largest batch in 1..=[`MAX_DIMENSION`] whose memory fits in
/// `capacity`, for non-decreasing memory, from what is known: `lo` fits
/// (with its memory), `hi` does not (with its memory when measured),
/// `slope` estimates bytes per sample. `used(n, limit)` is `n`'s memory,
/// or `None` when it exceeds `limit`. Secant steps on the measured memory
/// (or, with one end measured, a step along `slope`); a split of the
/// bracket when they stall on one side of the answer or memory is flat;
/// steps that double while no upper end is known, or no lower one.
fn secant_search(
    used: &impl Fn(u64, u64) -> Option<u64>,
    capacity: u64,
    mut lo: Option<(u64, u64)>,
    mut hi: Option<(u64, Option<u64>)>,
    mut slope: f64,
) -> u64 {
    let mut same_side = 0u32;
    let mut last_fit = None;
    // Whether the last batch that fit used no more memory than the one
    // before it: memory is flat there (a stair of reserved segments), and a
    // secant from it would creep up one sample at a time.
    let mut flat = false;
    // The last step of a run on one side of the answer, without the other end known.
    let mut stride = 0u64;
    // Steps back taken without a batch known to fit.
    let mut backs = 0u32;
    loop {
        let guess = match (lo, hi) {
            (Some(l), Some(h)) if h.0 <= l.0 + 1 => return l.0,
            (None, Some(h)) if h.0 <= 1 => return 0,
            (Some(l), None) if l.0 >= MAX_DIMENSION => return l.0,
            (None, None) => 1,
            (Some(l), Some(h)) => {
                let room = capacity.saturating_sub(l.1) as f64;
                let secant = match h.1 {
                    Some(hm) if hm > l.1 => {
                        Some(l.0 as f64 + (room * (h.0 - l.0) as f64 / (hm - l.1) as f64).floor())
                    }
                    // Along the slope, unless it says that `h` fits: then it is wrong.
                    _ if slope > 0.0 => {
                        Some(l.0 as f64 + (room / slope).floor()).filter(|p| *p < (h.0 - 1) as f64)
                    }
                    _ => None,
                };
                match secant {
                    Some(p) if same_side < 2 && !flat => {
                        (p.max(0.0) as u64).clamp(l.0 + 1, h.0 - 1)
                    }
                    _ => split(l.0, h.0),
                }
            }
            (Some(l), None) => {
                let ahead = if slope > 0.0 {
                    (capacity.saturating_sub(l.1) as f64 / slope).floor() as u64
                } else {
                    l.0
                };
                stride = if same_side >= 2 || flat {
                    stride.saturating_mul(2).max(l.0)
                } else {
                    ahead.max(1)
                };
                l.0.saturating_add(stride).min(MAX_DIMENSION)
            }
            (None, Some(h)) => {
                // The first step back along the slope; when it falls short
                // the answer is mostly just below (a stair of memory), so
                // steps of 1, 2, 4, ... (cheap: batches that do not fit stop early).
                stride = match (h.1, backs) {
                    (Some(hm), 0) if slope > 0.0 => {
                        (hm.saturating_sub(capacity) as f64 / slope).ceil() as u64
                    }
                    (_, 0 | 1) => 1,
                    _ => stride.saturating_mul(2),
                }
                .max(1);
                backs += 1;
                h.0.saturating_sub(stride).max(1)
            }
        };
        // A batch that does not fit need not be measured to the end: no step needs its memory.
        let u = used(guess, capacity);
        let fit = u.is_some_and(|u| u <= capacity);
        same_side = if last_fit == Some(fit) {
            same_side + 1
        } else {
            0
        };
        last_fit = Some(fit);
        // Update the slope from the new point and its nearest measured neighbour.
        let hi_measured = hi.and_then(|(b, m)| Some((b, m?)));
        let near = if fit {
            hi_measured.or(lo)
        } else {
            lo.or(hi_measured)
        };
        if let (Some(u), Some((b, m))) = (u, near.filter(|(b, _)| *b != guess)) {
            let per = (u as f64 - m as f64) / (guess as f64 - b as f64);
            if per > 0.0 {
                slope = per;
            }
        }
        match u {
            Some(u) if fit => {
                flat = lo.is_some_and(|(_, m)| u <= m);
                lo = Some((guess, u));
            }
            u => hi = Some((guess, u)),
        }
    }
}

/// The largest input — the sequence length of a text model, the image side
/// of a vision model — that fits in `capacity` at `cfg`'s batch and other
/// settings: it fits, and the next size the model accepts does not (or the
/// model accepts no larger one: a learned position embedding's length, a
/// ViT's fixed image). `None` for models that read feature vectors, `Some(0)`
/// when not even the smallest input fits.
///
/// The input's shape changes the graph, so each probe lowers and records
/// the model at that size, then replays it with the allocator model only
/// until it passes the capacity: sizes double (or halve) from the
/// configured one until the answer is bracketed, then the bracket is halved.
///
/// # Errors
/// As [`estimate`] at the configured input size.
pub fn max_input_for(
    spec: &ModelSpec,
    cfg: &TrainConfig,
    overheads: &Overheads,
    capacity: Bytes,
) -> Result<Option<u64>, Error> {
    crate::session::Session::default().max_input(spec, cfg, overheads, capacity)
}

/// The largest multiple of `step` in 1..=[`MAX_DIMENSION`] for which `fits`
/// holds, for `fits` true up to some size and false above it (0 when it holds
/// for none), searched from `start`: doubling or halving until the answer is
/// bracketed, then bisection.
pub(crate) fn largest_input(
    start: u64,
    step: u64,
    fits: &mut impl FnMut(u64) -> Result<bool, Error>,
) -> Result<u64, Error> {
    let step = step.max(1);
    let top = MAX_DIMENSION - MAX_DIMENSION % step;
    let snap = |v: u64| (v - v % step).clamp(step, top);
    let start = snap(start);
    // `lo` fits (0: none known), `hi` does not (None: none known).
    let (mut lo, mut hi) = (0u64, None::<u64>);
    if fits(start)? {
        lo = start;
        while hi.is_none() && lo < top {
            let next = snap(lo.saturating_mul(2));
            if fits(next)? {
                lo = next;
            } else {
                hi = Some(next);
            }
        }
    } else {
        hi = Some(start);
        while let Some(h) = hi.filter(|h| *h > step) {
            let next = snap(h / 2);
            if fits(next)? {
                lo = next;
                break;
            }
            hi = Some(next);
        }
    }
    while let Some(h) = hi {
        let mid = snap(lo + (h - lo) / 2);
        if mid <= lo || mid >= h {
            break;
        }
        if fits(mid)? {
            lo = mid;
        } else {
            hi = Some(mid);
        }
    }
    Ok(lo)
}

/// Inference: the longest KV cache (prompt plus generated tokens) that fits,
/// at the configured batch and prompt length. Only decoders have one.
///
/// # Errors
/// As [`estimate`].
pub fn max_context_for(
    spec: &ModelSpec,
    cfg: &TrainConfig,
    overheads: &Overheads,
    capacity: Bytes,
) -> Result<u64, Error> {
    crate::session::Session::default().max_context(spec, cfg, overheads, capacity)
}

/// [`max_context_for`] on a prepared simulation of `cfg`'s configuration:
/// the tape reads the KV cache's size at each replay, and the cache is
/// linear in the tokens, so the search is the largest-batch search's over
/// the tokens beyond the prompt.
pub(crate) fn max_context_prepared(
    prepared: &simulate::Prepared,
    cfg: &TrainConfig,
    overheads: &Overheads,
    capacity: Bytes,
) -> u64 {
    let kv = prepared.graph().kv_cache;
    if kv.per_sample == 0 {
        return 0;
    }
    // The graph holds the cache for `cache_tokens()`.
    let per_token = kv.per_sample / cfg.cache_tokens().max(1);
    // Search over k = 1, 2, ... for the context seq − 1 + k (at least the prompt).
    let shift = cfg.seq.saturating_sub(1);
    let at = |k: u64| {
        let context = shift.saturating_add(k);
        (
            TrainConfig { context, ..*cfg },
            crate::graph::Numel::per_sample(per_token.saturating_mul(context)),
        )
    };
    let context = overheads.cuda_context.0;
    let allocated = |k: u64| {
        let (c, kv) = at(k);
        prepared
            .peak_allocated_with_kv_cache(&c, overheads, kv)
            .0
            .saturating_add(context)
    };
    let used = |k: u64, limit: u64| {
        let (c, kv) = at(k);
        device_used_within(limit, overheads, |l| {
            prepared.peak_reserved_within(&c, overheads, kv, l)
        })
    };
    match largest_fitting(allocated, used, capacity.0) {
        0 => 0,
        k => shift.saturating_add(k).min(MAX_DIMENSION),
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
    let dt = cfg.precision.param_dtype();
    let w = g.params.iter().map(|p| states::weight_bytes(p, dt)).sum();
    let gr = g.params.iter().map(|p| states::gradient_bytes(p, dt)).sum();
    let o = g
        .params
        .iter()
        .map(|p| states::optimizer_state_bytes(p, dt, cfg.optimizer))
        .sum();
    (w, gr, o)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against every threshold shape: the answer is the largest multiple of
    /// the step at or below the threshold, from any starting size, and the
    /// search probes a few dozen sizes at most.
    #[test]
    fn the_input_search_finds_the_last_fitting_multiple_of_its_step() {
        let thresholds = [
            0,
            1,
            2,
            3,
            7,
            8,
            9,
            100,
            224,
            1023,
            1024,
            1025,
            4097,
            123_457,
            MAX_DIMENSION - 1,
            MAX_DIMENSION,
        ];
        for t in thresholds {
            for step in [1, 2, 3, 8] {
                for start in [1, 2, 100, 512, 4096, 1 << 20, MAX_DIMENSION] {
                    let mut probes = 0;
                    let mut fits = |v: u64| {
                        probes += 1;
                        assert!(
                            v.is_multiple_of(step) && (1..=MAX_DIMENSION).contains(&v),
                            "probed {v} (step {step})"
                        );
                        Ok(v <= t)
                    };
                    let got = largest_input(start, step, &mut fits).unwrap();
                    let want = if t < step {
                        0
                    } else {
                        (t.min(MAX_DIMENSION) / step) * step
                    };
                    assert_eq!(got, want, "threshold {t}, step {step}, from {start}");
                    assert!(
                        probes <= 2 * 26,
                        "{probes} probes for threshold {t}, step {step}, from {start}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_input_search_passes_errors_on() {
        let mut fails = |v: u64| {
            if v > 64 {
                Err(Error::InvalidModel("boom".into()))
            } else {
                Ok(true)
            }
        };
        assert!(largest_input(8, 1, &mut fails).is_err());
    }
}
