//! Ops specific to Hugging Face transformer code paths: fused-QKV views,
//! rotary embeddings (whole or sliced), `repeat_kv`, `gelu_new` as eager ops, fused attention.

use crate::builder::{Builder, OpSpec};
use crate::dtype::DType;
use crate::graph::{Numel, OpKind, TempStep, TensorId};
use crate::nn::bytes;

impl Builder {
    /// Splits `base` into `parts` equal views (q, k and v of a fused
    /// projection): no new storage in forward. Backward assembles one
    /// full-size gradient of `base` (`SplitBackward` concatenates; with
    /// `select` — `proj[0]`, `proj[1]`, ... — each `SelectBackward` makes a
    /// full-size zero tensor, so one more full-size buffer is transient).
    pub fn split(&mut self, name: &str, base: TensorId, parts: u64, select: bool) -> Vec<TensorId> {
        let widths = vec![1; usize::try_from(parts).unwrap_or(0)];
        self.split_widths(name, base, &widths, select)
    }

    /// Splits `base`'s last dimension into views `widths` wide (in
    /// proportion to their sum): q, k and v of a fused projection with
    /// fewer key/value heads, as [`Builder::split`] does equal parts
    /// (`select`: slices, `qkv[..., a:b]`, whose backward each makes a
    /// full-size zero-filled gradient).
    pub fn split_widths(
        &mut self,
        name: &str,
        base: TensorId,
        widths: &[u64],
        select: bool,
    ) -> Vec<TensorId> {
        let t = self.tensor_info(base);
        let total = widths.iter().sum::<u64>().max(1);
        let views: Vec<TensorId> = widths
            .iter()
            .map(|&w| {
                let id = self.alias(base);
                let per = Numel {
                    fixed: t.numel.fixed / total * w,
                    per_sample: t.numel.per_sample / total * w,
                };
                self.set_numel(id, per, t.dtype);
                id
            })
            .collect();
        let backward_temp = if select {
            bytes(t.numel, t.dtype)
        } else {
            Numel::default()
        };
        self.op(
            name,
            OpKind::Copy,
            OpSpec {
                inputs: vec![base],
                outputs: views.clone(),
                backward_temp,
                ..OpSpec::default()
            },
        );
        views
    }

    /// `apply_rotary_pos_emb`: `(x * cos) + (rotate_half(x) * sin)` makes a new
    /// tensor and two same-sized temporaries; it saves only `cos` and `sin`.
    /// Its requests, in order ([`rotation_steps`]): `x * cos`; in
    /// `rotate_half`, `-x2` (half of `x`) and the `torch.cat` (freeing
    /// `-x2`); `* sin` (freeing the cat); the sum, which is the output.
    /// `cos` and `sin` have the embeddings' dtype (the rotary embedding
    /// casts them to the hidden states it is handed), so under autocast
    /// with fp32 weights the products, the output and its gradient are
    /// fp32 whatever `x`'s dtype, as in [`Builder::rotary_sliced`];
    /// `rotate_half` stays in `x`'s.
    /// Backward (the H200 snapshot of the small Qwen3): the gradient times
    /// `sin`, then each slice's backward zero-fills an `x`-sized gradient
    /// while it is alive, the second added into the first, which becomes
    /// `x`'s: two `x`-sized transients beside it.
    pub fn rotary(&mut self, name: &str, x: TensorId) -> TensorId {
        let t = self.tensor_info(x);
        let dtype = if self.param_dtype() == DType::F32 {
            DType::F32
        } else {
            t.dtype
        };
        let out = self.tensor(t.numel, dtype, t.requires_grad);
        let size = bytes(t.numel, dtype);
        let mut forward_steps = rotation_steps(size, bytes(t.numel, t.dtype));
        forward_steps.extend([TempStep::Outputs, TempStep::Free(0), TempStep::Free(3)]);
        self.op(
            name,
            OpKind::Elementwise,
            OpSpec {
                inputs: vec![x],
                outputs: vec![out],
                forward_steps,
                backward_temp: Numel {
                    fixed: 2 * size.fixed,
                    per_sample: 2 * size.per_sample,
                },
                flops: Numel::per_sample(4 * t.numel.per_sample),
                ..OpSpec::default()
            },
        );
        out
    }

    /// ERNIE 4.5's `apply_rotary_pos_emb` on one of q and k: the even and
    /// odd features rotate in pairs (`rotate_half` as `torch.stack((-x2,
    /// x1), -1).flatten(-2)` of the strided halves) and both products are
    /// taken in fp32, `q.float() * cos + rotate_half(q).float() * sin`, then
    /// `.to(original_dtype)`. In order: the fp32 copy of `x` (none when
    /// `x` is fp32) and its product, the copy freed; the negated half, the
    /// stacked tensor in `x`'s dtype, its fp32 copy, the second product;
    /// their sum; the cast back (the sum itself when `x` is fp32). Saves
    /// only `cos` and `sin`. Backward: the gradient's fp32 copy, its two
    /// products, then each path cast back to `x`'s dtype.
    pub fn rotary_interleaved_fp32(&mut self, name: &str, x: TensorId) -> TensorId {
        self.rotary_interleaved_fp32_as(name, x, false)
    }

    /// Cohere's `apply_rotary_pos_emb` on one of q and k: as
    /// [`Builder::rotary_interleaved_fp32`], but `x.float()` comes first and
    /// the pairs rotate in fp32 (`q = q.float()`, then `q * cos +
    /// rotate_half(q) * sin`): the negated half and the stacked tensor are
    /// fp32, and the fp32 copy lives until the sum is cast back.
    pub fn rotary_cohere(&mut self, name: &str, x: TensorId) -> TensorId {
        self.rotary_interleaved_fp32_as(name, x, true)
    }

    fn rotary_interleaved_fp32_as(
        &mut self,
        name: &str,
        x: TensorId,
        float_first: bool,
    ) -> TensorId {
        let t = self.tensor_info(x);
        let out = self.tensor(t.numel, t.dtype, t.requires_grad);
        let own = bytes(t.numel, t.dtype);
        let wide = bytes(t.numel, DType::F32);
        let half = Numel {
            fixed: own.fixed / 2,
            per_sample: own.per_sample / 2,
        };
        let forward_steps = if t.dtype == DType::F32 {
            vec![
                TempStep::Alloc(wide), // 0: x * cos
                TempStep::Alloc(half), // 1: -x2
                TempStep::Alloc(own),  // 2: stack
                TempStep::Free(1),
                TempStep::Alloc(wide), // 3: stack * sin
                TempStep::Free(2),
                TempStep::Outputs, // the sum
                TempStep::Free(0),
                TempStep::Free(3),
            ]
        } else if float_first {
            let wide_half = Numel {
                fixed: wide.fixed / 2,
                per_sample: wide.per_sample / 2,
            };
            vec![
                TempStep::Alloc(wide),      // 0: x.float()
                TempStep::Alloc(wide),      // 1: * cos
                TempStep::Alloc(wide_half), // 2: -x2
                TempStep::Alloc(wide),      // 3: stack
                TempStep::Free(2),
                TempStep::Alloc(wide), // 4: * sin
                TempStep::Free(3),
                TempStep::Alloc(wide), // 5: the sum
                TempStep::Free(1),
                TempStep::Free(4),
                TempStep::Outputs, // .to(dtype)
                TempStep::Free(5),
                TempStep::Free(0),
            ]
        } else {
            vec![
                TempStep::Alloc(wide), // 0: x.float()
                TempStep::Alloc(wide), // 1: x.float() * cos
                TempStep::Free(0),
                TempStep::Alloc(half), // 2: -x2
                TempStep::Alloc(own),  // 3: stack
                TempStep::Free(2),
                TempStep::Alloc(wide), // 4: stack.float()
                TempStep::Free(3),
                TempStep::Alloc(wide), // 5: * sin
                TempStep::Free(4),
                TempStep::Alloc(wide), // 6: the sum
                TempStep::Free(1),
                TempStep::Free(5),
                TempStep::Outputs, // .to(original_dtype)
                TempStep::Free(6),
            ]
        };
        let backward_temp = if t.dtype == DType::F32 {
            Numel {
                fixed: 2 * wide.fixed,
                per_sample: 2 * wide.per_sample,
            }
        } else {
            Numel {
                fixed: 3 * wide.fixed + own.fixed,
                per_sample: 3 * wide.per_sample + own.per_sample,
            }
        };
        self.op(
            name,
            OpKind::Elementwise,
            OpSpec {
                inputs: vec![x],
                outputs: vec![out],
                forward_steps,
                backward_temp,
                flops: Numel::per_sample(4 * t.numel.per_sample),
                ..OpSpec::default()
            },
        );
        out
    }

    /// Llama 4's `apply_rotary_emb` on one of q and k:
    /// `view_as_complex(x.float().reshape(.., -1, 2)) * freqs_cis`, then
    /// `view_as_real(..).flatten(3).type_as(x)`. From half precision: the
    /// fp32 copy, the complex product (as many bytes), the copy freed, the
    /// cast back; from fp32 the product is the output. Saves only
    /// `freqs_cis` (x's gradient needs no x). Backward: the gradient's fp32
    /// copy, its product with the conjugate, the cast back.
    pub fn rotary_complex_fp32(&mut self, name: &str, x: TensorId) -> TensorId {
        let t = self.tensor_info(x);
        let out = self.tensor(t.numel, t.dtype, t.requires_grad);
        let own = bytes(t.numel, t.dtype);
        let wide = bytes(t.numel, DType::F32);
        let (forward_steps, backward_temp) = if t.dtype == DType::F32 {
            (Vec::new(), wide)
        } else {
            (
                vec![
                    TempStep::Alloc(wide), // 0: x.float()
                    TempStep::Alloc(wide), // 1: * freqs_cis
                    TempStep::Free(0),
                    TempStep::Outputs, // .type_as(x)
                    TempStep::Free(1),
                ],
                Numel {
                    fixed: 2 * wide.fixed + own.fixed,
                    per_sample: 2 * wide.per_sample + own.per_sample,
                },
            )
        };
        self.op(
            name,
            OpKind::Elementwise,
            OpSpec {
                inputs: vec![x],
                outputs: vec![out],
                forward_steps,
                backward_temp,
                flops: Numel::per_sample(3 * t.numel.per_sample),
                ..OpSpec::default()
            },
        );
        out
    }

    /// GPT-NeoX's and Phi-3's `apply_rotary_pos_emb` on one of q and k
    /// (`x`, `head_dim` features per head): the first `dims` features of each
    /// head rotate, `(x_rot * cos) + (rotate_half(x_rot) * sin)` (three
    /// rotated-sized tensors at once), then `torch.cat([rotated, x_pass],
    /// -1)` copies them and the rest into a new contiguous tensor while the
    /// rotated part is alive. `cos` and `sin` have the embeddings' dtype, so
    /// under autocast the products and the result are fp32. Saves only `cos`
    /// and `sin`. Backward: the rotated part's gradients (three at once, as
    /// in forward), then each slice's backward zero-fills an `x`-sized
    /// gradient, the second added into the first.
    pub fn rotary_sliced(&mut self, name: &str, x: TensorId, dims: u64, head_dim: u64) -> TensorId {
        let t = self.tensor_info(x);
        let dtype = if self.param_dtype() == DType::F32 {
            DType::F32
        } else {
            t.dtype
        };
        let out = self.tensor(t.numel, dtype, t.requires_grad);
        let dims = dims.min(head_dim);
        let part = |n: Numel| Numel {
            fixed: n.fixed / head_dim.max(1) * dims,
            per_sample: n.per_sample / head_dim.max(1) * dims,
        };
        let (full, grad) = (bytes(t.numel, dtype), bytes(t.numel, t.dtype));
        let rot = part(full);
        // Beside the input's gradient: max(3 rotated, two x-sized slices' gradients).
        let pass = if dims < head_dim {
            grad
        } else {
            Numel::default()
        };
        let backward_temp = Numel {
            fixed: (3 * rot.fixed).saturating_sub(grad.fixed).max(pass.fixed),
            per_sample: (3 * rot.per_sample)
                .saturating_sub(grad.per_sample)
                .max(pass.per_sample),
        };
        // `x_rot * cos` and `rotate_half(x_rot) * sin` as in `rotary`, their
        // sum (freeing both), then the `torch.cat` with `x_pass`: the output.
        let mut forward_steps = rotation_steps(rot, rot);
        forward_steps.extend([
            TempStep::Alloc(rot),
            TempStep::Free(0),
            TempStep::Free(3),
            TempStep::Outputs,
            TempStep::Free(4),
        ]);
        self.op(
            name,
            OpKind::Elementwise,
            OpSpec {
                inputs: vec![x],
                outputs: vec![out],
                forward_steps,
                backward_temp,
                flops: Numel::per_sample(4 * part(t.numel).per_sample),
                ..OpSpec::default()
            },
        );
        out
    }

    /// The causal mask eager attention adds to its scores
    /// (`masking_utils.create_causal_mask`): `[batch, 1, seq, seq]` in
    /// `dtype`, `torch.where` of a boolean mask (one byte per element, transient).
    pub fn causal_mask(&mut self, seq: u64, dtype: DType) -> TensorId {
        let n = seq.saturating_mul(seq);
        let out = self.tensor(Numel::per_sample(n), dtype, false);
        self.op(
            "causal_mask",
            OpKind::Elementwise,
            OpSpec {
                outputs: vec![out],
                forward_temp: Numel::per_sample(n),
                flops: Numel::per_sample(n),
                ..OpSpec::default()
            },
        );
        out
    }

    /// `repeat_kv`: expand key/value heads to all query heads (a copy of `numel` per sample).
    pub fn expand_copy(&mut self, name: &str, x: TensorId, per_sample: u64) -> TensorId {
        let t = self.tensor_info(x);
        let out = self.tensor(Numel::per_sample(per_sample), t.dtype, t.requires_grad);
        self.op(
            name,
            OpKind::Copy,
            OpSpec {
                inputs: vec![x],
                outputs: vec![out],
                ..OpSpec::default()
            },
        );
        out
    }

    /// `NewGELUActivation` (GPT-2's `gelu_new`), evaluated by Python as
    /// `0.5 * x * (1 + tanh(sqrt(2/π) * (x + 0.044715 * pow(x, 3))))`: `pow`
    /// (autocast fp32 list) saves its fp32 input, `tanh` its output, and the final
    /// product both of its operands.
    pub fn gelu_new(&mut self, name: &str, x: TensorId) -> TensorId {
        let t = self.tensor_info(x);
        let n = t.numel.per_sample;
        let half = self.scale(&format!("{name}.half_x"), x);
        let xf = self.autocast_fp32(x);
        let cube = self.tensor(Numel::per_sample(n), self.dtype(xf), true);
        self.op(
            &format!("{name}.pow"),
            OpKind::Elementwise,
            OpSpec {
                inputs: vec![xf],
                outputs: vec![cube],
                saved: vec![xf],
                flops: Numel::per_sample(2 * n),
                ..OpSpec::default()
            },
        );
        let c = self.scale(&format!("{name}.mul_c"), cube);
        let inner = self.add(&format!("{name}.add_x"), x, c);
        let inner = self.scale(&format!("{name}.mul_sqrt"), inner);
        let th_t = self.tensor_info(inner);
        let th = self.tensor(th_t.numel, th_t.dtype, true);
        self.op(
            &format!("{name}.tanh"),
            OpKind::Elementwise,
            OpSpec {
                inputs: vec![inner],
                outputs: vec![th],
                saved: vec![th],
                flops: Numel::per_sample(4 * n),
                ..OpSpec::default()
            },
        );
        let one_plus = self.scale(&format!("{name}.add_one"), th);
        self.mul(&format!("{name}.mul"), half, one_plus, n)
    }

    /// transformers' padding mask under SDPA (`masking_utils.sdpa_mask`):
    /// one boolean `[batch, 1, seq, seq]` tensor for the whole forward.
    pub fn padding_mask(&mut self, seq: u64) -> TensorId {
        self.bool_mask("padding_mask", Numel::per_sample(seq.saturating_mul(seq)))
    }

    /// A boolean mask of `numel` elements that transformers builds once for
    /// the whole forward.
    fn bool_mask(&mut self, name: &str, numel: Numel) -> TensorId {
        let out = self.tensor(numel, DType::U8, false);
        self.op(
            name,
            OpKind::Elementwise,
            OpSpec {
                outputs: vec![out],
                flops: numel,
                ..OpSpec::default()
            },
        );
        out
    }

    /// SDPA's output as `sdpa_attention_forward` returns it,
    /// `attn_output.transpose(1, 2).contiguous()`. On CUDA (`cuda_query_layout`:
    /// the masks of [`crate::config::AttentionMask::None`] and `Padding`
    /// describe CUDA's path) the kernel lays its output out like the query
    /// (cuDNN's `alloc_with_matching_layout`), so a query made by `torch.cat`
    /// gives an output that `.contiguous()` copies, and the output projection
    /// saves the copy while attention keeps its own: eight 32 MiB copies at
    /// `sdpa_attention.py:168` live at the peak of the H200's Phi-3 run
    /// (`measured/snapshot_phi3-small_*`). Otherwise a view.
    pub fn sdpa_output(&mut self, out: TensorId, cuda_query_layout: bool) -> TensorId {
        if cuda_query_layout {
            self.copy("attn.output_contiguous", out)
        } else {
            out
        }
    }

    /// transformers' sliding-window mask under SDPA
    /// (`create_sliding_window_causal_mask`): one boolean `[1, 1, seq, seq]`
    /// tensor expanded to the batch as a view, or with a padding mask
    /// (`padded`) one per sample, for the whole forward.
    pub fn sliding_mask(&mut self, seq: u64, padded: bool) -> TensorId {
        let n = seq.saturating_mul(seq);
        let numel = if padded {
            Numel::per_sample(n)
        } else {
            Numel::fixed(n)
        };
        self.bool_mask("sliding_mask", numel)
    }

    /// `scaled_dot_product_attention` with the flash or memory-efficient
    /// backend: saves q, k, v, the output and the fp32 log-sum-exp; backward
    /// needs an fp32 accumulator for dq and the softmax row sums. With k and
    /// v of fewer heads than q (`enable_gqa`), the flash backward computes
    /// their gradients for every query head (`dk_expanded`, `dv_expanded`)
    /// and sums them into the grouped ones. With a boolean `mask` (a
    /// padding or sliding-window mask), the op converts it to q's dtype
    /// (`convert_boolean_attn_mask`: `where(logical_not(mask), -inf, 0)`,
    /// the negation a transient byte per element) and the memory-efficient
    /// kernel, the one that takes a mask, saves that for backward.
    pub fn fused_attention(
        &mut self,
        name: &str,
        (q, k, v): (TensorId, TensorId, TensorId),
        mask: Option<TensorId>,
        seq: u64,
        heads: u64,
        head_dim: u64,
    ) -> TensorId {
        let q = self.autocast_lower(q);
        let k = self.autocast_lower(k);
        let v = self.autocast_lower(v);
        let dtype = self.dtype(q);
        let qd = heads * head_dim;
        let bias = mask.map(|m| {
            // The conversion broadcasts a mask expanded to the batch (a
            // sliding window's) to `[batch, 1, seq, seq]`.
            let n = Numel::per_sample(seq.saturating_mul(seq));
            let bias = self.tensor(n, dtype, false);
            self.op(
                &format!("{name}.mask_to_bias"),
                OpKind::Elementwise,
                OpSpec {
                    inputs: vec![m],
                    outputs: vec![bias],
                    forward_temp: n,
                    flops: n,
                    ..OpSpec::default()
                },
            );
            bias
        });
        let out = self.tensor(Numel::per_sample(seq * qd), dtype, true);
        let lse = self.tensor(Numel::per_sample(heads * seq), DType::F32, false);
        // Only the FLOPs grow with seq²; they saturate rather than overflow.
        let s2 = heads.saturating_mul(seq).saturating_mul(seq);
        let grouped = self.tensor_info(k).numel.per_sample < seq * qd;
        let expanded_grads = if grouped {
            2 * seq * qd * dtype.size()
        } else {
            0
        };
        let mut inputs = vec![q, k, v];
        let mut saved = vec![q, k, v, out, lse];
        if let Some(bias) = bias {
            inputs.push(bias);
            saved.push(bias);
        }
        self.op(
            name,
            OpKind::FusedAttention,
            OpSpec {
                inputs,
                outputs: vec![out, lse],
                saved,
                backward_temp: Numel::per_sample(4 * seq * qd + 4 * heads * seq + expanded_grads),
                flops: Numel::per_sample(s2.saturating_mul(4 * head_dim)),
                ..OpSpec::default()
            },
        );
        out
    }

    /// gpt-oss's eager softmax with attention sinks over `scores` (`heads`
    /// × `seq` × `seq` per sample): `torch.cat([scores, sinks], -1)` (a
    /// `[heads]` parameter, `self_attn.sinks`, expanded to one more column),
    /// the row maximum subtracted (a new tensor), `softmax` in that dtype
    /// (saved), then the sink column sliced off (a view).
    pub fn sink_softmax(&mut self, scores: TensorId, heads: u64, seq: u64) -> TensorId {
        let sinks = self.param("self_attn.sinks", &[heads]);
        let numel = Numel::per_sample(heads * seq * (seq + 1));
        // The sinks' dtype (the parameters') promotes half scores.
        let dtype = if self.param_dtype() == DType::F32 {
            DType::F32
        } else {
            self.dtype(scores)
        };
        let combined = self.tensor(numel, dtype, true);
        self.op(
            "attn.cat_sinks",
            OpKind::Copy,
            OpSpec {
                inputs: vec![scores],
                outputs: vec![combined],
                params: vec![sinks],
                ..OpSpec::default()
            },
        );
        let shifted = self.scale("attn.subtract_max", combined);
        let probs = self.softmax("attn.softmax", shifted, false);
        let kept = self.alias(probs);
        self.set_numel(
            kept,
            Numel::per_sample(heads * seq * seq),
            self.dtype(probs),
        );
        kept
    }
}

/// The requests of `(x * cos) + (rotate_half(x) * sin)` before the sum, for
/// products of `size` bytes on an `x` of `input` bytes: `x * cos` (transient 0); in `rotate_half`, `-x2`
/// (1, half of `x`) and the `torch.cat` of the halves (2), which frees
/// `-x2`; then `* sin` (3), which frees the cat. Transients 0 and 3 are
/// alive when the sum is made.
fn rotation_steps(size: Numel, input: Numel) -> Vec<TempStep> {
    let half = Numel {
        fixed: input.fixed / 2,
        per_sample: input.per_sample / 2,
    };
    vec![
        TempStep::Alloc(size),
        TempStep::Alloc(half),
        TempStep::Alloc(input),
        TempStep::Free(1),
        TempStep::Alloc(size),
        TempStep::Free(2),
    ]
}
