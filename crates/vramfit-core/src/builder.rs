//! Low-level graph construction: tensors, params and ops, plus the autocast
//! casting rules every module lowering goes through.

use crate::config::Precision;
use crate::dtype::DType;
use crate::graph::{Buffer, Graph, Numel, Op, OpKind, Param, ParamId, Tensor, TensorId};
use std::collections::HashMap;

/// Everything an op records besides its name, layer and block (filled by the builder).
#[derive(Clone, Debug, Default)]
pub struct OpSpec {
    /// Tensors read.
    pub inputs: Vec<TensorId>,
    /// Tensors produced.
    pub outputs: Vec<TensorId>,
    /// Tensors kept for backward.
    pub saved: Vec<TensorId>,
    /// Parameters used.
    pub params: Vec<ParamId>,
    /// Forward workspace.
    pub forward_temp: Numel,
    /// The forward's transients one by one (see [`crate::graph::Op::forward_steps`]).
    pub forward_steps: Vec<crate::graph::TempStep>,
    /// Backward workspace beyond input gradients.
    pub backward_temp: Numel,
    /// Input gradients are views of the output gradient.
    pub grad_passthrough: bool,
    /// Parameter gradients arrive through autocast's cast (see [`crate::graph::Op`]).
    pub param_grad_via_cast: bool,
    /// Forward FLOPs.
    pub flops: Numel,
}

/// Builds a [`Graph`] op by op, tracking the current layer and block and
/// applying CUDA autocast's casting rules.
#[derive(Debug)]
pub struct Builder {
    graph: Graph,
    precision: Precision,
    layer: u32,
    block: Option<u32>,
    attention_core: bool,
    /// Autocast caches the low-precision copy of each leaf parameter for the
    /// whole autocast region (`cached_cast` in `autocast_mode.h`).
    weight_cache: HashMap<ParamId, TensorId>,
    /// Inside `torch.autocast(enabled=False)` (ERNIE 4.5's router): ops run
    /// in their inputs' types.
    autocast_off: bool,
    prefix: String,
    /// Tensors a Python local keeps alive until the current block returns.
    scope_holds: Vec<TensorId>,
    /// Inference: nothing requires grad, nothing is saved (`torch.inference_mode()`).
    pub inference: bool,
    /// `softmax` and `log_softmax` save their input too (PyTorch 1.10 and
    /// earlier, [`crate::config::TorchRelease::Torch110`]).
    pub softmax_saves_input: bool,
    /// Autocast's weight cache holds the copies it makes
    /// ([`crate::parallel::Strategy::autocast_caches_weights`]).
    pub autocast_cache: bool,
    /// Whether ops, parameters and buffers get their names (the planner,
    /// which shows none of them, lowers without: names are only for display).
    pub named: bool,
    /// New parameters are frozen (LoRA's base model, inference).
    pub frozen: bool,
    /// LoRA rank for the linear layers inside blocks (0: no adapters).
    pub lora_rank: u64,
    /// Sequence-parallel factor (1: off).
    pub sp: u64,
    /// Expert-parallel factor (1: off): each sparse layer holds its share
    /// of the routed experts and exchanges tokens by all-to-all.
    pub ep: u64,
    /// The rows each routed expert's shard runs per routed row, as a
    /// fraction (etp, tp): expert tensor parallelism gathers the routed
    /// rows of `etp` ranks where tensor parallelism replicated them over
    /// `tp` (Megatron-Core's `MoEAlltoAllTokenDispatcher`). (1, 1): as routed.
    pub expert_rows: (u64, u64),
    /// Every sparse layer's router logits, kept for the auxiliary
    /// load-balancing loss at the head (`output_router_logits` on).
    pub router_logits: Vec<TensorId>,
    /// New ops are part of the routed experts ([`crate::graph::Op::routed`]).
    pub routed: bool,
    /// Blocks below this index are frozen.
    pub frozen_blocks: u64,
    /// LoRA adapters in fp32 (else in the model's dtype).
    pub lora_fp32: bool,
    /// Whether the whole model is frozen (set by the mode).
    base_frozen: bool,
    /// The storage type of parameters without a type of their own: the
    /// precision's, or the compute type for a LoRA base (see
    /// [`crate::config::TrainConfig::param_dtype`]).
    param_dtype: DType,
}

impl Builder {
    /// A builder for a model trained at `precision`.
    pub fn new(precision: Precision) -> Builder {
        Builder {
            graph: Graph {
                layers: vec!["input".to_string()],
                ..Graph::default()
            },
            precision,
            layer: 0,
            block: None,
            attention_core: false,
            weight_cache: HashMap::new(),
            autocast_off: false,
            prefix: String::new(),
            scope_holds: Vec::new(),
            inference: false,
            softmax_saves_input: false,
            autocast_cache: true,
            frozen: false,
            lora_rank: 0,
            named: true,
            sp: 1,
            ep: 1,
            expert_rows: (1, 1),
            router_logits: Vec::new(),
            routed: false,
            frozen_blocks: 0,
            lora_fp32: true,
            base_frozen: false,
            param_dtype: precision.param_dtype(),
        }
    }

    /// Stores parameters without a type of their own as `dtype` (a LoRA
    /// base in the compute type; [`Builder::new`] takes the precision's).
    pub fn set_param_dtype(&mut self, dtype: DType) {
        self.param_dtype = dtype;
    }

    /// The finished graph.
    pub fn finish(self) -> Graph {
        self.graph
    }

    /// The dtype parameters are stored in.
    pub fn param_dtype(&self) -> DType {
        self.param_dtype
    }

    /// The dtype of floating-point model inputs (images, features): fp32,
    /// except in pure half precision, where `model.half()` only accepts
    /// inputs cast to the same type (PyTorch refuses a float input to a
    /// half convolution or linear layer).
    pub fn float_input_dtype(&self) -> DType {
        match (self.autocast_dtype(), self.param_dtype()) {
            (None, p) if p != DType::F32 => p,
            _ => DType::F32,
        }
    }

    /// The autocast compute type, if autocast is on.
    pub fn autocast_dtype(&self) -> Option<DType> {
        if self.autocast_off {
            None
        } else {
            self.precision.autocast()
        }
    }

    /// Runs `f` with autocast disabled (`maybe_autocast(enabled=False)`).
    pub fn without_autocast<T>(&mut self, f: impl FnOnce(&mut Builder) -> T) -> T {
        let was = std::mem::replace(&mut self.autocast_off, true);
        let out = f(self);
        self.autocast_off = was;
        out
    }

    /// Starts a new row of the per-layer table; later ops and params are named under `name`.
    pub fn layer(&mut self, name: &str) {
        self.graph.layers.push(name.to_string());
        self.layer = (self.graph.layers.len() - 1) as u32;
        self.prefix = name.to_string();
    }

    /// Starts a checkpointable block (a transformer layer, a residual block).
    pub fn begin_block(&mut self) {
        self.block = Some(self.graph.blocks);
        // Freezing the first blocks: their parameters are created frozen.
        self.frozen = self.base_frozen || u64::from(self.graph.blocks) < self.frozen_blocks;
        self.graph.blocks += 1;
    }

    /// Freezes every parameter created from now on (and remembers it for blocks).
    pub fn freeze_all(&mut self, frozen: bool) {
        self.base_frozen = frozen;
        self.frozen = frozen;
    }

    /// Ends the current checkpointable block, releasing what its scope held.
    pub fn end_block(&mut self) {
        if !self.scope_holds.is_empty() {
            let held = std::mem::take(&mut self.scope_holds);
            self.op(
                "return",
                OpKind::ScopeEnd,
                OpSpec {
                    inputs: held,
                    ..OpSpec::default()
                },
            );
        }
        self.block = None;
        self.frozen = self.base_frozen;
    }

    /// Marks `t` as returned by the model beside its loss (see [`Graph::returned`]).
    pub fn returns(&mut self, t: TensorId) {
        self.graph.returned.push(t);
    }

    /// Marks the point where a Python reference to `t` goes away: `t` lives
    /// at least until here.
    pub fn keep_alive(&mut self, t: TensorId) {
        self.op(
            "return",
            OpKind::ScopeEnd,
            OpSpec {
                inputs: vec![t],
                ..OpSpec::default()
            },
        );
    }

    /// Keeps `t` alive until the current block ends, as a Python local
    /// variable of the block's `forward` does (e.g. `output, _ = self.attention(...)`).
    pub fn hold_until_block_end(&mut self, t: TensorId) {
        self.scope_holds.push(t);
    }

    /// Marks following ops as the attention core (selective recompute drops them).
    pub fn set_attention_core(&mut self, on: bool) {
        self.attention_core = on;
    }

    fn full_name(&self, name: &str) -> String {
        if !self.named {
            String::new()
        } else if self.prefix.is_empty() {
            name.to_string()
        } else if name.is_empty() {
            self.prefix.clone()
        } else {
            format!("{}.{}", self.prefix, name)
        }
    }

    /// Registers a trainable parameter named `name` under the current layer.
    pub fn param(&mut self, name: &str, shape: &[u64]) -> ParamId {
        let name = self.full_name(name);
        let trainable = !self.frozen;
        self.graph.params.push(Param {
            name,
            shape: shape.to_vec(),
            trainable,
            quantizable: false,
            dtype: None,
            expert: false,
        });
        ParamId((self.graph.params.len() - 1) as u32)
    }

    /// Registers a routed expert's parameter ([`Builder::param`] marked
    /// [`crate::graph::Param::expert`]): expert parallelism has already
    /// divided its experts, and its state is sharded over the
    /// expert-data-parallel group.
    pub fn expert_param(&mut self, name: &str, shape: &[u64]) -> ParamId {
        let id = self.param(name, shape);
        if let Some(p) = self.graph.params.get_mut(id.0 as usize) {
            p.expert = true;
        }
        id
    }

    /// Registers a parameter that is never trained (`requires_grad=False`):
    /// counted and stored like the others, with no gradient or optimizer state.
    pub fn frozen_param(&mut self, name: &str, shape: &[u64]) -> ParamId {
        let frozen = std::mem::replace(&mut self.frozen, true);
        let p = self.param(name, shape);
        self.frozen = frozen;
        p
    }

    /// Registers a buffer (not trained, lives with the model).
    pub fn buffer(&mut self, name: &str, numel: u64, dtype: DType) {
        let name = self.full_name(name);
        self.graph.buffers.push(Buffer { name, numel, dtype });
    }

    /// Whether a parameter is trained.
    pub fn param_trainable(&self, p: ParamId) -> bool {
        self.graph
            .params
            .get(p.0 as usize)
            .is_some_and(|p| p.trainable)
    }

    /// Marks a parameter as a block linear weight that int8 / NF4 formats quantize.
    pub fn mark_quantizable(&mut self, p: ParamId) {
        if let Some(p) = self.graph.params.get_mut(p.0 as usize) {
            p.quantizable = true;
        }
    }

    /// Registers a trainable fp32 parameter even when the model is frozen
    /// (LoRA adapters: PEFT keeps them in fp32, `autocast_adapter_dtype=True`).
    pub fn adapter_param(&mut self, name: &str, shape: &[u64]) -> ParamId {
        let frozen = std::mem::replace(&mut self.frozen, false);
        let p = self.param(name, shape);
        self.frozen = frozen;
        if self.lora_fp32 {
            if let Some(param) = self.graph.params.get_mut(p.0 as usize) {
                param.dtype = Some(DType::F32);
            }
        }
        p
    }

    /// The storage type of a parameter.
    pub fn param_storage_dtype(&self, p: ParamId) -> DType {
        self.graph
            .params
            .get(p.0 as usize)
            .and_then(|p| p.dtype)
            .unwrap_or_else(|| self.param_dtype())
    }

    /// Sequence parallelism: all-gathers a sequence-sharded tensor before a
    /// tensor-parallel region (a transient full-sequence copy).
    pub fn sp_gather(&mut self, x: TensorId) -> TensorId {
        if self.sp <= 1 {
            return x;
        }
        let t = self.tensor_info(x);
        let out = self.tensor(
            Numel {
                fixed: t.numel.fixed * self.sp,
                per_sample: t.numel.per_sample * self.sp,
            },
            t.dtype,
            t.requires_grad,
        );
        self.op(
            "sp_all_gather",
            OpKind::Copy,
            OpSpec {
                inputs: vec![x],
                outputs: vec![out],
                ..OpSpec::default()
            },
        );
        out
    }

    /// Sequence parallelism: reduce-scatters a tensor-parallel region's output
    /// back to this rank's part of the sequence.
    pub fn sp_scatter(&mut self, x: TensorId) -> TensorId {
        if self.sp <= 1 {
            return x;
        }
        let t = self.tensor_info(x);
        let out = self.tensor(
            Numel {
                fixed: t.numel.fixed / self.sp,
                per_sample: t.numel.per_sample / self.sp,
            },
            t.dtype,
            t.requires_grad,
        );
        self.op(
            "sp_reduce_scatter",
            OpKind::Copy,
            OpSpec {
                inputs: vec![x],
                outputs: vec![out],
                ..OpSpec::default()
            },
        );
        out
    }

    /// Megatron's sequence-parallel linears save their sharded input and
    /// all-gather it again in backward: ops from `since` on that save `from` save `to` instead.
    pub fn resave(&mut self, since: usize, from: TensorId, to: TensorId) {
        if from == to {
            return;
        }
        for op in self.graph.ops.iter_mut().skip(since) {
            for s in op.saved.iter_mut().filter(|s| **s == from) {
                *s = to;
            }
        }
    }

    /// Number of ops so far (a marker for [`Builder::resave`]).
    pub fn op_count(&self) -> usize {
        self.graph.ops.len()
    }

    /// Ends a pipeline stage: the activation is sent to the next stage, whose
    /// gradient comes back as this stage's starting gradient.
    pub fn pipeline_send(&mut self, x: TensorId) {
        let grad_seed = self.tensor(Numel::fixed(1), DType::F32, true);
        self.op(
            "pipeline_send",
            OpKind::Loss,
            OpSpec {
                inputs: vec![x],
                outputs: vec![grad_seed],
                ..OpSpec::default()
            },
        );
    }

    /// Sets the KV cache's size per sample in bytes.
    pub fn set_kv_cache(&mut self, layout: crate::graph::KvLayout, tokens: u64) {
        self.graph.kv_layout = layout;
        self.graph.kv_cache = Numel::per_sample(layout.bytes(tokens));
    }

    /// Whether the op being built sits inside a block.
    pub fn in_block(&self) -> bool {
        self.block.is_some()
    }

    /// The element count of a parameter.
    pub fn param_numel(&self, p: ParamId) -> u64 {
        self.graph
            .params
            .get(p.0 as usize)
            .map(Param::numel)
            .unwrap_or(0)
    }

    /// A new tensor.
    pub fn tensor(&mut self, numel: Numel, dtype: DType, requires_grad: bool) -> TensorId {
        let requires_grad = requires_grad && !self.inference;
        self.graph.tensors.push(Tensor {
            numel,
            dtype,
            alias_of: None,
            requires_grad,
        });
        TensorId((self.graph.tensors.len() - 1) as u32)
    }

    /// A view of (or in-place result on) `base`: no new storage.
    pub fn alias(&mut self, base: TensorId) -> TensorId {
        let t = self.tensor_info(base);
        self.graph.tensors.push(Tensor {
            alias_of: Some(base),
            ..t
        });
        TensorId((self.graph.tensors.len() - 1) as u32)
    }

    /// Overrides a tensor's size and type (for views of part of a tensor).
    pub fn set_numel(&mut self, id: TensorId, numel: Numel, dtype: DType) {
        if let Some(t) = self.graph.tensors.get_mut(id.0 as usize) {
            t.numel = numel;
            t.dtype = dtype;
        }
    }

    /// A copy of the tensor's description (zero-sized if unknown).
    pub fn tensor_info(&self, id: TensorId) -> Tensor {
        self.graph.tensor(id).cloned().unwrap_or(Tensor {
            numel: Numel::default(),
            dtype: DType::F32,
            alias_of: None,
            requires_grad: false,
        })
    }

    /// Element type of a tensor.
    pub fn dtype(&self, id: TensorId) -> DType {
        self.tensor_info(id).dtype
    }

    /// Element count of a tensor.
    pub fn numel(&self, id: TensorId) -> Numel {
        self.tensor_info(id).numel
    }

    /// Whether gradients flow into a tensor.
    pub fn requires_grad(&self, id: TensorId) -> bool {
        self.tensor_info(id).requires_grad
    }

    /// Appends an op.
    pub fn op(&mut self, name: &str, kind: OpKind, mut spec: OpSpec) {
        let name = self.full_name(name);
        if self.inference {
            spec.saved.clear();
            spec.backward_temp = Numel::default();
        }
        self.graph.ops.push(Op {
            name,
            kind,
            layer: self.layer,
            block: self.block,
            attention_core: self.attention_core,
            inputs: spec.inputs,
            outputs: spec.outputs,
            saved: spec.saved,
            params: spec.params,
            forward_temp: spec.forward_temp,
            forward_steps: spec.forward_steps,
            backward_temp: spec.backward_temp,
            grad_passthrough: spec.grad_passthrough,
            param_grad_via_cast: spec.param_grad_via_cast,
            flops: spec.flops,
            routed: self.routed,
        });
    }

    /// A model input (token ids, labels, images) copied to the GPU.
    pub fn input(&mut self, name: &str, per_sample: u64, dtype: DType) -> TensorId {
        let t = self.tensor(Numel::per_sample(per_sample), dtype, false);
        self.op(
            name,
            OpKind::Input,
            OpSpec {
                outputs: vec![t],
                ..OpSpec::default()
            },
        );
        t
    }

    /// Converts `x` to `dtype` (`x.to(dtype)`); returns `x` when already that type.
    pub fn cast(&mut self, x: TensorId, dtype: DType) -> TensorId {
        if self.dtype(x) == dtype {
            return x;
        }
        let t = self.tensor_info(x);
        let out = self.tensor(t.numel, dtype, t.requires_grad);
        self.op(
            "to",
            OpKind::Cast,
            OpSpec {
                inputs: vec![x],
                outputs: vec![out],
                ..OpSpec::default()
            },
        );
        out
    }

    /// Autocast's rule for matmul-class ops: a float32 input is cast to the
    /// low-precision type (a fresh copy each time: only leaf tensors are cached).
    pub fn autocast_lower(&mut self, x: TensorId) -> TensorId {
        match self.autocast_dtype() {
            Some(low) if self.dtype(x) == DType::F32 => self.cast(x, low),
            _ => x,
        }
    }

    /// Autocast's rule for ops on its fp32 list (softmax, layer_norm, pow, losses...).
    pub fn autocast_fp32(&mut self, x: TensorId) -> TensorId {
        match self.autocast_dtype() {
            Some(_) if self.dtype(x) != DType::F32 => self.cast(x, DType::F32),
            _ => x,
        }
    }

    /// The tensor a matmul-class op reads for weight `p`: under autocast, the
    /// cached low-precision copy (created by the first op that uses it, saved
    /// by every op that uses it); otherwise, or when the weight already is in
    /// the low type (a LoRA base in the compute type), `None` (the parameter
    /// itself: `cached_cast` casts only a type that differs).
    pub fn autocast_weight(&mut self, p: ParamId, created: &mut Vec<TensorId>) -> Option<TensorId> {
        let low = self.autocast_dtype()?;
        if self.param_storage_dtype(p) == low {
            return None;
        }
        if let Some(&t) = self.weight_cache.get(&p) {
            return Some(t);
        }
        let t = self.tensor(Numel::fixed(self.param_numel(p)), low, false);
        self.weight_cache.insert(p, t);
        if self.autocast_cache && self.param_trainable(p) {
            self.graph.autocast_cached.push(t);
        }
        created.push(t);
        Some(t)
    }

    /// The result type of a binary elementwise op (type promotion).
    pub fn promote(&self, a: TensorId, b: TensorId) -> DType {
        let (da, db) = (self.dtype(a), self.dtype(b));
        if da == db {
            da
        } else if da == DType::F32 || db == DType::F32 {
            DType::F32
        } else {
            da
        }
    }
}
