//! Ops of a mixture-of-experts block as `transformers` runs it
//! (`integrations/moe.py`, `grouped_mm_experts_forward`): top-k routing,
//! row gathers and the grouped matrix multiplication over the expert banks.
//! See `tests/reference/moe/README.md` for the trace they follow.

use crate::builder::{Builder, OpSpec};
use crate::dtype::DType;
use crate::graph::{Numel, OpKind, ParamId, TensorId};

impl Builder {
    /// An op making one new tensor of `numel` elements of `dtype` from
    /// `inputs`, saving `saved` for its backward; it requires a gradient
    /// when `grad` and an input does.
    #[allow(clippy::too_many_arguments)]
    pub fn tensor_op(
        &mut self,
        name: &str,
        kind: OpKind,
        inputs: &[TensorId],
        numel: Numel,
        dtype: DType,
        grad: bool,
        saved: &[TensorId],
    ) -> TensorId {
        let rg = grad && inputs.iter().any(|&t| self.requires_grad(t));
        let out = self.tensor(numel, dtype, rg);
        self.op(
            name,
            kind,
            OpSpec {
                inputs: inputs.to_vec(),
                outputs: vec![out],
                saved: saved.to_vec(),
                flops: Numel::per_sample(numel.per_sample),
                ..OpSpec::default()
            },
        );
        out
    }

    /// `torch.topk(x, k)` over the last dimension (`width` wide) of `x`:
    /// the values (x's dtype) and int64 indices, `rows × k` each; backward
    /// scatters the values' gradient back through the saved indices.
    pub fn topk(&mut self, name: &str, x: TensorId, width: u64, k: u64) -> (TensorId, TensorId) {
        let t = self.tensor_info(x);
        let rows = t.numel.per_sample / width.max(1);
        let values = self.tensor(Numel::per_sample(rows * k), t.dtype, t.requires_grad);
        let indices = self.tensor(Numel::per_sample(rows * k), DType::I64, false);
        let saved = if t.requires_grad {
            vec![indices]
        } else {
            Vec::new()
        };
        self.op(
            name,
            OpKind::Elementwise,
            OpSpec {
                inputs: vec![x],
                outputs: vec![values, indices],
                saved,
                flops: Numel::per_sample(t.numel.per_sample),
                ..OpSpec::default()
            },
        );
        (values, indices)
    }

    /// `x[index]`: the rows `index` (int64, `rows` per sample) selects from
    /// `x` (`width` wide), a new tensor; saves the index (backward is
    /// `new_zeros` + `index_put` of x's shape, x's gradient itself).
    pub fn gather_rows(
        &mut self,
        name: &str,
        x: TensorId,
        index: TensorId,
        rows: u64,
        width: u64,
    ) -> TensorId {
        let dtype = self.dtype(x);
        let saved = if self.requires_grad(x) {
            vec![index]
        } else {
            Vec::new()
        };
        self.tensor_op(
            name,
            OpKind::Copy,
            &[x, index],
            Numel::per_sample(rows * width),
            dtype,
            true,
            &saved,
        )
    }

    /// A parameter's rows selected by an index (`bias[expert_ids]`: one row
    /// of `width` per index entry, `rows` per sample); saves the index when
    /// the parameter is trained.
    pub fn gather_param_rows(
        &mut self,
        name: &str,
        p: ParamId,
        index: TensorId,
        rows: u64,
        width: u64,
    ) -> TensorId {
        let trained = self.param_trainable(p);
        let out = self.tensor(Numel::per_sample(rows * width), self.param_dtype(), trained);
        self.op(
            name,
            OpKind::Copy,
            OpSpec {
                inputs: vec![index],
                outputs: vec![out],
                saved: if trained { vec![index] } else { Vec::new() },
                params: vec![p],
                ..OpSpec::default()
            },
        );
        out
    }

    /// `F.grouped_mm(x.to(w.dtype), w, offs)`: every row of `x` (`in_f`
    /// wide) times its expert's matrix in the bank `w` ([experts, ·, ·]),
    /// `out_f` wide. Not an autocast op: the input is cast to the weight's
    /// dtype (a copy only when they differ) and the weight is read as it is
    /// stored, so no low-precision weight copy is made and the weight's
    /// gradient, the whole bank, is made in its own dtype. Saves the input
    /// (when the bank is trained), the bank and the offsets. The banks are
    /// `nn.Parameter`s, not `nn.Linear` modules, so they are not marked
    /// quantizable.
    pub fn grouped_linear(
        &mut self,
        name: &str,
        x: TensorId,
        w: ParamId,
        offsets: TensorId,
        (in_f, out_f): (u64, u64),
    ) -> TensorId {
        let wd = self.param_storage_dtype(w);
        let xc = self.cast(x, wd);
        let rows = self.numel(xc).per_sample / in_f.max(1);
        let trained = self.param_trainable(w);
        let out = self.tensor(
            Numel::per_sample(rows * out_f),
            wd,
            trained || self.requires_grad(xc),
        );
        let saved = if trained {
            vec![xc, offsets]
        } else {
            vec![offsets]
        };
        self.op(
            name,
            OpKind::Linear,
            OpSpec {
                inputs: vec![xc, offsets],
                outputs: vec![out],
                saved,
                params: vec![w],
                flops: Numel::per_sample(
                    2u64.saturating_mul(rows)
                        .saturating_mul(in_f)
                        .saturating_mul(out_f),
                ),
                ..OpSpec::default()
            },
        );
        out
    }

    /// `x * column`, a `[rows, 1]` column broadcast over each of x's rows
    /// (Llama 4's `routed_in * router_scores.reshape(-1, 1)`): a new tensor
    /// of x's size in the promoted dtype; saves both. Backward: x's
    /// gradient, and the column's, `(grad * x).sum(-1)`, whose product is
    /// a temporary as large as x's gradient.
    pub fn mul_column(&mut self, name: &str, x: TensorId, column: TensorId) -> TensorId {
        let dtype = self.promote(x, column);
        let n = self.numel(x);
        let rg = self.requires_grad(x) || self.requires_grad(column);
        let out = self.tensor(n, dtype, rg);
        let mut saved = Vec::new();
        if self.requires_grad(column) {
            saved.push(x);
        }
        if self.requires_grad(x) {
            saved.push(column);
        }
        let backward_temp = if self.requires_grad(column) {
            crate::nn::bytes(n, dtype)
        } else {
            Numel::default()
        };
        self.op(
            name,
            OpKind::Elementwise,
            OpSpec {
                inputs: vec![x, column],
                outputs: vec![out],
                saved,
                backward_temp,
                flops: Numel::per_sample(n.per_sample),
                ..OpSpec::default()
            },
        );
        out
    }

    /// An integer tensor made without gradient (`torch.sort`'s outputs,
    /// `perm // k`, `histc`'s counts): `numel` elements of `dtype`.
    pub fn index_tensor(
        &mut self,
        name: &str,
        inputs: &[TensorId],
        numel: Numel,
        dtype: DType,
    ) -> TensorId {
        self.tensor_op(name, OpKind::Copy, inputs, numel, dtype, false, &[])
    }

    /// `x.add_(y)`: `x` changed in place (no new storage); the gradient
    /// passes to both.
    pub fn add_inplace(&mut self, name: &str, x: TensorId, y: TensorId) -> TensorId {
        // The gathered bias is trained only with the bank it extends.
        let out = self.alias(x);
        let n = self.numel(x);
        self.op(
            name,
            OpKind::Add,
            OpSpec {
                inputs: vec![x, y],
                outputs: vec![out],
                grad_passthrough: true,
                flops: Numel::per_sample(n.per_sample),
                ..OpSpec::default()
            },
        );
        out
    }
}
