//! The model IR: a dataflow graph of ops over tensors with shapes and dtypes.
//!
//! Tensor sizes are affine in the micro-batch (`fixed + per_sample × batch`),
//! so a model is lowered once per sequence length / image size and the step
//! simulation can be re-run for any batch size without lowering again.
//!
//! Each op records what PyTorch's autograd keeps for its backward
//! (`saved`), which inputs receive gradients, and the transient buffers it
//! needs; [`crate::simulate`] replays these to get the memory timeline.

use crate::dtype::DType;
use serde::Serialize;

/// Index of a tensor in [`Graph::tensors`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct TensorId(pub u32);

/// Index of a parameter in [`Graph::params`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct ParamId(pub u32);

/// Number of elements as `fixed + per_sample × batch`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Numel {
    /// Elements independent of the batch (e.g. BatchNorm's saved mean).
    pub fixed: u64,
    /// Elements per sample of the micro-batch.
    pub per_sample: u64,
}

impl Numel {
    /// A batch-proportional size.
    pub fn per_sample(n: u64) -> Numel {
        Numel {
            fixed: 0,
            per_sample: n,
        }
    }

    /// A batch-independent size.
    pub fn fixed(n: u64) -> Numel {
        Numel {
            fixed: n,
            per_sample: 0,
        }
    }

    /// Elements at micro-batch `batch` (saturating).
    pub fn at(self, batch: u64) -> u64 {
        self.fixed
            .saturating_add(self.per_sample.saturating_mul(batch))
    }
}

/// A trainable (or frozen) parameter of the model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Param {
    /// Dotted module path, as in PyTorch's `named_parameters()`.
    pub name: String,
    /// Shape, as in PyTorch.
    pub shape: Vec<u64>,
    /// Whether it receives gradients and optimizer state.
    pub trainable: bool,
    /// A linear weight inside a block, which int8 / NF4 formats quantize.
    #[serde(default)]
    pub quantizable: bool,
    /// Storage type when it differs from the model's (LoRA adapters stay fp32).
    #[serde(default)]
    pub dtype: Option<crate::dtype::DType>,
    /// A routed expert's weight or bias: expert parallelism divides it, and
    /// ZeRO / FSDP shard it over the expert-data-parallel group.
    #[serde(default)]
    pub expert: bool,
}

impl Param {
    /// Number of elements.
    pub fn numel(&self) -> u64 {
        self.shape.iter().fold(1u64, |a, &d| a.saturating_mul(d))
    }
}

/// A non-trainable tensor that lives with the model (e.g. BatchNorm running stats).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Buffer {
    /// Dotted module path.
    pub name: String,
    /// Number of elements.
    pub numel: u64,
    /// Storage type.
    pub dtype: DType,
}

/// A tensor produced in the forward pass (or a model input).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Tensor {
    /// Element count.
    pub numel: Numel,
    /// Element type.
    pub dtype: DType,
    /// When set, this tensor is a view or in-place result sharing the other's storage.
    pub alias_of: Option<TensorId>,
    /// Whether gradients flow to it in backward.
    pub requires_grad: bool,
}

/// What kind of computation an op is; used for the per-layer table and FLOP counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// A model input moved to the GPU (token ids, images, labels).
    Input,
    /// Embedding lookup.
    Embedding,
    /// Linear / matmul with a weight.
    Linear,
    /// 2-D convolution.
    Conv2d,
    /// Batch normalization.
    BatchNorm,
    /// Layer normalization.
    LayerNorm,
    /// RMS normalization (as a chain of elementwise ops in HF Llama).
    RmsNorm,
    /// An elementwise activation or arithmetic op.
    Elementwise,
    /// Dropout (`native_dropout` on CUDA).
    Dropout,
    /// A dtype conversion (autocast or an explicit `.float()`).
    Cast,
    /// Batched matmul between activations (attention scores and context).
    Matmul,
    /// Softmax.
    Softmax,
    /// Fused scaled-dot-product attention (flash / memory-efficient).
    FusedAttention,
    /// Max or average pooling.
    Pool,
    /// Residual addition.
    Add,
    /// Cross-entropy loss (log-softmax + NLL).
    Loss,
    /// A reshape that copies (e.g. `.contiguous()` after a transpose).
    Copy,
    /// The end of a Python scope: local variables (e.g. attention weights a
    /// module returns and its caller ignores) are released here. No compute,
    /// no backward.
    ScopeEnd,
}

/// One op of the forward pass.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Op {
    /// Module path plus op, e.g. `h.3.attn.c_attn`.
    pub name: String,
    /// What it computes.
    pub kind: OpKind,
    /// Index into [`Graph::layers`] (the per-layer table groups by this).
    pub layer: u32,
    /// Checkpointable block this op belongs to (e.g. one transformer layer).
    pub block: Option<u32>,
    /// Part of the attention core (recomputed under selective checkpointing).
    pub attention_core: bool,
    /// Tensors read.
    pub inputs: Vec<TensorId>,
    /// Tensors produced (first is the main output; others e.g. a dropout mask).
    pub outputs: Vec<TensorId>,
    /// Tensors autograd keeps for this op's backward.
    pub saved: Vec<TensorId>,
    /// Parameters used; each gets a gradient in backward if trainable.
    pub params: Vec<ParamId>,
    /// Bytes of transient workspace in forward, freed when the op ends
    /// (none where `forward_steps` gives the transients).
    pub forward_temp: Numel,
    /// Where not empty, the forward's transient tensors one by one, in the
    /// order PyTorch allocates and frees them around the outputs, in place
    /// of `forward_temp` as one block after them: the caching allocator
    /// then places, and reserves segments for, the requests a real run makes.
    pub forward_steps: Vec<TempStep>,
    /// Bytes of transient workspace in backward beyond the input gradients.
    pub backward_temp: Numel,
    /// Whether gradients of inputs are views of the output gradient (add, views).
    pub grad_passthrough: bool,
    /// The parameters were read through autocast's low-precision copies: their
    /// fp32 gradient is made by a separate `ToCopyBackward` node that runs after
    /// this op's backward has released its saved tensors.
    pub param_grad_via_cast: bool,
    /// Floating-point operations in forward, per sample and fixed.
    pub flops: Numel,
    /// Part of a sparse layer's routed experts (from the dispatch of its
    /// rows to their combination), whose rows number tokens × top-k.
    pub routed: bool,
}

/// One step of an op's forward where its transient tensors are allocated
/// and freed one at a time ([`Op::forward_steps`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum TempStep {
    /// A transient tensor of these bytes; transients are numbered from 0 in
    /// the order of their `Alloc` steps.
    Alloc(Numel),
    /// Frees the transient of that number.
    Free(u8),
    /// The op's outputs are allocated here.
    Outputs,
}

/// The lowered model: parameters, buffers, tensors and ops in forward order.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Graph {
    /// Parameters, in registration order.
    pub params: Vec<Param>,
    /// Buffers.
    pub buffers: Vec<Buffer>,
    /// All tensors.
    pub tensors: Vec<Tensor>,
    /// Ops in forward execution order.
    pub ops: Vec<Op>,
    /// Layer names for the per-layer table.
    pub layers: Vec<String>,
    /// Number of checkpointable blocks.
    pub blocks: u32,
    /// KV-cache bytes per sample (inference of decoders).
    pub kv_cache: Numel,
    /// How the KV cache grows with the positions it holds.
    pub kv_layout: KvLayout,
    /// What the model returns besides its loss (the logits of a
    /// `...Output`): a training loop that keeps the output object holds
    /// them until its step ends ([`crate::config::Outputs::Kept`]).
    pub returned: Vec<TensorId>,
    /// The low-precision copies of trained fp32 parameters that autocast
    /// makes and caches: `cached_cast` (`aten/src/ATen/autocast_mode.cpp`)
    /// keeps a leaf's copy that requires grad in its cache until the
    /// outermost autocast region exits (`clear_autocast_cache` in
    /// `torch.autocast.__exit__`), whether or not an op saves it and under
    /// checkpointing's no-grad forward too; frozen parameters are cast anew
    /// at each use.
    pub autocast_cached: Vec<TensorId>,
}

/// How a decoder's KV cache grows with the positions it holds, in bytes per
/// sample: layers of full attention hold every position, sliding-window
/// layers at most the window, cross-attention the encoder's output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KvLayout {
    /// Bytes per position over the full-attention layers.
    pub per_token: u64,
    /// Bytes per position over the sliding-window layers.
    pub sliding_per_token: u64,
    /// The sliding window, in positions.
    pub window: u64,
    /// Bytes that do not grow with the positions generated (T5's
    /// cross-attention caches of the encoder's output).
    pub fixed: u64,
}

impl KvLayout {
    /// Bytes per sample the cache holds after `tokens` positions.
    pub fn bytes(&self, tokens: u64) -> u64 {
        self.per_token
            .saturating_mul(tokens)
            .saturating_add(
                self.sliding_per_token
                    .saturating_mul(tokens.min(self.window)),
            )
            .saturating_add(self.fixed)
    }
}

impl Graph {
    /// Total parameter count, shared (tied) parameters counted once, as
    /// `sum(p.numel() for p in model.parameters())` does.
    pub fn parameter_count(&self) -> u64 {
        self.params
            .iter()
            .map(Param::numel)
            .fold(0u64, u64::saturating_add)
    }

    /// Trainable parameter count.
    pub fn trainable_parameter_count(&self) -> u64 {
        self.params
            .iter()
            .filter(|p| p.trainable)
            .map(Param::numel)
            .fold(0u64, u64::saturating_add)
    }

    /// For each op, whether selective activation checkpointing per op keeps
    /// its outputs from forward ([`crate::config::CheckpointMode::SelectiveOp`]):
    /// torchtitan's policy (`torchtitan/distributed/activation_checkpoint.py`)
    /// saves the output of the fused attention kernel and of every matmul
    /// but each second one — it counts `aten.mm` calls afresh in each
    /// checkpointed block and recomputes those with an even count. A linear
    /// layer is one `mm`; matmuls between activations (`bmm`) and every other
    /// op are recomputed.
    pub fn op_sac_saves(&self) -> Vec<bool> {
        let mut count = 0u32;
        let mut block = None;
        self.ops
            .iter()
            .map(|op| {
                if op.block != block {
                    block = op.block;
                    count = 0;
                }
                match op.kind {
                    _ if op.block.is_none() => false,
                    OpKind::FusedAttention => true,
                    OpKind::Linear => {
                        count += 1;
                        count % 2 == 1
                    }
                    _ => false,
                }
            })
            .collect()
    }

    /// The tensor with this id.
    pub fn tensor(&self, id: TensorId) -> Option<&Tensor> {
        self.tensors.get(id.0 as usize)
    }

    /// The id of the storage a tensor lives in (following aliases).
    pub fn storage_of(&self, id: TensorId) -> TensorId {
        let mut cur = id;
        // Alias chains are acyclic: an alias always points to an earlier tensor.
        while let Some(t) = self.tensor(cur) {
            match t.alias_of {
                Some(base) if base.0 < cur.0 => cur = base,
                _ => break,
            }
        }
        cur
    }

    /// The largest parameter (by elements), as DeepSpeed's estimators need it.
    pub fn largest_param_numel(&self) -> u64 {
        self.params.iter().map(Param::numel).max().unwrap_or(0)
    }
}
