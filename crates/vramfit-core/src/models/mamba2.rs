//! Mamba-2, the token mixer of Granite 4.0's H models' state-space layers,
//! as `transformers` 5.24 runs it without the optional `mamba-ssm` and
//! `causal-conv1d` kernels (`models/granitemoehybrid/modeling_granitemoehybrid.py`:
//! `GraniteMoeHybridMambaLayer`, `causal_conv1d_fn`, `mamba2_chunk_scan`,
//! `segment_sum`, `GraniteMoeHybridRMSNormGated`).
//!
//! A layer projects, in one `in_proj`, the gate z, the convolution's
//! channels (x, and B and C for each of `n_groups` groups of heads, each
//! `d_state` wide) and a time step per head; a depthwise causal
//! convolution and SiLU run over x, B and C. The PyTorch path then solves
//! the scan in chunks of `chunk_size` positions, in fp32: B and C repeated
//! to every head, the pairwise decays of each chunk (`[chunk × chunk]` per
//! head, three of them made on the way), the attention-like scores and
//! their masked product, the states at each chunk's end and the
//! recurrence over the chunks, each `einsum` a batched matmul of permuted
//! copies of its operands, which it saves (under autocast, half-precision
//! ones: `einsum` is on autocast's lower-precision list). With the kernels
//! installed, training keeps far less: vramfit models the path
//! `transformers` takes by default.
//!
//! The cache of a Mamba-2 layer does not grow with the context: the last
//! `d_conv` inputs of the convolution and the recurrent state
//! (`n_heads × head_dim × d_state`), per sequence ([`Mamba2::state_bytes`]).

use super::gated_deltanet::{copy, kept, op};
use crate::builder::{Builder, OpSpec};
use crate::dtype::DType;
use crate::error::Error;
use crate::graph::{Numel, OpKind, TensorId};
use serde::{Deserialize, Serialize};

/// A Mamba-2 layer's dimensions and which layers attend instead.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mamba2 {
    /// Heads (`mamba_n_heads`).
    pub heads: u64,
    /// Width of a head (`mamba_d_head`): the heads span `mamba_expand ×
    /// hidden_size`.
    pub head_dim: u64,
    /// The state's width per head (`mamba_d_state`).
    pub state: u64,
    /// Groups of heads sharing B and C (`mamba_n_groups`).
    pub groups: u64,
    /// Taps of the causal depthwise convolution (`mamba_d_conv`).
    pub conv_kernel: u64,
    /// Positions the PyTorch path solves together (`mamba_chunk_size`).
    pub chunk: u64,
    /// The convolution has a bias (`mamba_conv_bias`).
    pub conv_bias: bool,
    /// `in_proj` and `out_proj` have biases (`mamba_proj_bias`).
    pub proj_bias: bool,
    /// The layers that attend (`layer_types` `attention`), from 0; every
    /// other layer is Mamba-2.
    pub attention: Vec<u64>,
}

impl Mamba2 {
    /// Reads the `mamba_*` fields of a `config.json` (Granite 4.0's and
    /// Bamba's names, with their config classes' defaults: 128 heads over
    /// `mamba_expand` (2) × `hidden`, `mamba_d_head` "auto" their share,
    /// a state of 256, one group, a convolution of 4 with a bias, chunks of
    /// 256, unbiased projections), `attention` the layers that attend.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] when the heads do not span `mamba_expand ×
    /// hidden_size`, or for a field of the wrong type.
    pub fn read(
        f: &super::hf_fields::Fields<'_>,
        hidden: u64,
        attention: Vec<u64>,
    ) -> Result<Mamba2, Error> {
        let or = |key, default| f.opt_u64(key).map(|v| v.unwrap_or(default));
        let heads = or("mamba_n_heads", 128)?;
        let inner = or("mamba_expand", 2)?.saturating_mul(hidden);
        let head_dim = match f.map.get("mamba_d_head") {
            None | Some(serde_json::Value::Null | serde_json::Value::String(_)) => {
                inner / heads.max(1)
            }
            Some(_) => or("mamba_d_head", 0)?,
        };
        if heads == 0 || head_dim.saturating_mul(heads) != inner {
            return Err(Error::InvalidModel(format!(
                "mamba_n_heads ({heads}) × mamba_d_head ({head_dim}) must be mamba_expand × hidden_size ({inner})"
            )));
        }
        Ok(Mamba2 {
            heads,
            head_dim,
            state: or("mamba_d_state", 256)?,
            groups: or("mamba_n_groups", 1)?,
            conv_kernel: or("mamba_d_conv", 4)?,
            chunk: or("mamba_chunk_size", 256)?,
            conv_bias: f.bool_or("mamba_conv_bias", true),
            proj_bias: f.bool_or("mamba_proj_bias", false),
            attention,
        })
    }

    /// Whether layer `i` (from 0) is Mamba-2.
    pub fn is_mamba(&self, i: u64) -> bool {
        !self.attention.contains(&i)
    }

    /// The heads' width, `heads × head_dim` (`mamba_expand × hidden_size`).
    pub fn inner(&self) -> u64 {
        self.heads * self.head_dim
    }

    /// The convolution's channels: x, B and C.
    pub fn conv_dim(&self) -> u64 {
        self.inner() + 2 * self.groups * self.state
    }

    /// `in_proj`'s width: z, the convolution's channels and a time step
    /// per head.
    pub fn in_width(&self) -> u64 {
        self.inner() + self.conv_dim() + self.heads
    }

    /// One sequence's recurrent state in one layer, in elements.
    pub fn recurrent_state(&self) -> u64 {
        self.heads * self.head_dim * self.state
    }

    /// What `transformers`' cache holds per sequence for one Mamba-2
    /// layer: the convolution's window, `conv_dim × d_conv` in the model's
    /// `dtype_size`, and the fp32 state the PyTorch path returns.
    pub fn state_bytes(&self, dtype_size: u64) -> u64 {
        self.conv_dim() * self.conv_kernel * dtype_size + self.recurrent_state() * 4
    }

    /// The groups of B and C one of `tp` ranks holds: its share, or the one
    /// group copied to every rank (vLLM's `extra_groups_for_head_shards`).
    pub fn groups_per_rank(&self, tp: u64) -> u64 {
        let tp = tp.max(1);
        if self.groups.is_multiple_of(tp) {
            self.groups / tp
        } else {
            1
        }
    }

    /// What a serving engine keeps per sequence for one layer on one of
    /// `tp` GPUs: the last `d_conv − 1` inputs of the convolution (the
    /// rank's heads and groups) in `conv_size`-byte elements and the state
    /// in `state_size`-byte ones (vLLM's `mamba2_state_shape`, SGLang's
    /// `Mamba2StateShape`, llama.cpp's `n_embd_r()` and `n_embd_s()`).
    pub fn serving_state_bytes(&self, tp: u64, conv_size: u64, state_size: u64) -> u64 {
        let tp = tp.max(1);
        let conv_dim = self.inner() / tp + 2 * self.groups_per_rank(tp) * self.state;
        let conv = (self.conv_kernel - 1) * conv_dim * conv_size;
        conv + self.heads / tp * self.head_dim * self.state * state_size
    }

    /// Checks the dimensions.
    ///
    /// # Errors
    /// [`Error::InvalidModel`] for a zero size or groups that do not
    /// divide the heads.
    pub fn validate(&self) -> Result<(), Error> {
        for (name, v) in [
            ("mamba_n_heads", self.heads),
            ("mamba_d_head", self.head_dim),
            ("mamba_d_state", self.state),
            ("mamba_n_groups", self.groups),
            ("mamba_d_conv", self.conv_kernel),
            ("mamba_chunk_size", self.chunk),
        ] {
            super::check_dimension(name, v, 1 << 20)?;
        }
        if !self.heads.is_multiple_of(self.groups) {
            return Err(Error::InvalidModel(format!(
                "mamba_n_groups ({}) must divide mamba_n_heads ({})",
                self.groups, self.heads
            )));
        }
        super::check_elements(
            "a Mamba-2 state (mamba_n_heads × mamba_d_head × mamba_d_state)",
            &[self.heads, self.head_dim, self.state],
        )
    }

    /// One tensor-parallel rank's share: the heads split over `tp`, and the
    /// groups of B and C, or the one group copied to every rank (vLLM's
    /// `MambaMixer2`).
    ///
    /// # Errors
    /// [`Error::NotApplicable`] when `tp` does not divide the heads, or
    /// the groups where there are several.
    pub fn shard(&self, tp: u64) -> Result<Mamba2, Error> {
        let mut checks = vec![("mamba_n_heads", self.heads)];
        if self.groups > 1 {
            checks.push(("mamba_n_groups", self.groups));
        }
        for (dimension, size) in checks {
            if !size.is_multiple_of(tp) {
                return Err(Error::NotApplicable(
                    crate::error::Inapplicable::TensorParallel {
                        dimension,
                        size,
                        tp,
                    },
                ));
            }
        }
        Ok(Mamba2 {
            heads: self.heads / tp,
            groups: self.groups_per_rank(tp),
            ..self.clone()
        })
    }
}

/// The layer's token mixer on the normalized hidden states `x` (`hidden`
/// wide, `seq` positions): its output, `hidden` wide.
pub(super) fn lower(b: &mut Builder, m: &Mamba2, hidden: u64, x: TensorId, seq: u64) -> TensorId {
    let (inner, heads) = (m.inner(), m.heads);
    let projected = b.linear("mamba.in_proj", x, hidden, m.in_width(), m.proj_bias);
    let parts = b.split_widths(
        "mamba.split_projection",
        projected,
        &[inner, m.conv_dim(), heads],
        false,
    );
    let part = |i: usize| parts.get(i).copied().unwrap_or(projected);
    let (gate, xbc, dt) = (part(0), part(1), part(2));
    let conv_out = convolve(b, m, xbc, seq);
    let parts = b.split_widths(
        "mamba.split_xbc",
        conv_out,
        &[inner, m.groups * m.state, m.groups * m.state],
        false,
    );
    let part = |i: usize| parts.get(i).copied().unwrap_or(conv_out);
    let scan = chunk_scan(b, m, (part(0), part(1), part(2)), dt, seq);
    let normed = gated_norm(b, m, scan, gate, seq);
    // `self.out_proj(scan_output.to(dtype))`, `dtype` the layer input's.
    let normed = b.cast(normed, b.dtype(x));
    let out = b.linear("mamba.out_proj", normed, inner, hidden, m.proj_bias);
    // The forward's locals live until it returns.
    b.keep_alive(projected);
    out
}

/// `causal_conv1d_fn` on x, B and C: `.to(weight.dtype)`, the depthwise
/// convolution (an autocast op) over `seq + d_conv − 1` positions, SiLU on
/// the first `seq` (a view that keeps the padded output). Returns the
/// SiLU's output in the projection's dtype.
fn convolve(b: &mut Builder, m: &Mamba2, xbc: TensorId, seq: u64) -> TensorId {
    let conv = m.conv_dim();
    let act = b.dtype(xbc);
    let w = b.param("mamba.conv1d.weight", &[conv, 1, m.conv_kernel]);
    let bias = m.conv_bias.then(|| b.param("mamba.conv1d.bias", &[conv]));
    // `.to(weight.dtype)` of a column slice: a contiguous copy where the
    // dtypes differ, else the slice as it is.
    let wide = if act == b.param_dtype() {
        xbc
    } else {
        copy(
            b,
            "mamba.conv1d.to_weight_dtype",
            xbc,
            seq * conv,
            b.param_dtype(),
        )
    };
    let xc = b.autocast_lower(wide);
    let padded = seq + m.conv_kernel - 1;
    let flops = Numel::per_sample(2 * conv * seq * m.conv_kernel);
    let out = b.weighted_op(
        "mamba.conv1d",
        OpKind::Conv2d,
        xc,
        w,
        bias,
        conv * padded,
        flops,
    );
    let sliced = b.alias(out);
    b.set_numel(sliced, Numel::per_sample(seq * conv), b.dtype(out));
    let s = b.activation("mamba.conv1d.silu", sliced);
    b.cast(s, act)
}

/// `einsum` of two operands as `sumproduct_pair` runs it: each operand,
/// under autocast first cast to half precision (`einsum` is on its
/// lower-precision list), permuted and reshaped to three dimensions — a
/// copy where `copies` says so — then `bmm`, which saves the two. The
/// output has `out` elements, in the operands' (cast) dtype.
fn einsum(
    b: &mut Builder,
    name: &str,
    (x, y): (TensorId, TensorId),
    (copy_x, copy_y): (bool, bool),
    out: u64,
) -> TensorId {
    let reshape = |b: &mut Builder, t: TensorId, copies: bool, side: &str| {
        let t = b.autocast_lower(t);
        if copies {
            let n = b.numel(t).per_sample;
            let dtype = b.dtype(t);
            copy(b, &format!("{name}.reshape_{side}"), t, n, dtype)
        } else {
            t
        }
    };
    let xr = reshape(b, x, copy_x, "left");
    let yr = reshape(b, y, copy_y, "right");
    let dtype = b.dtype(xr);
    op(
        b,
        &format!("{name}.bmm"),
        (&[xr, yr], &[xr, yr]),
        out,
        dtype,
        false,
    )
}

/// `segment_sum` of `a` (`n` elements, each expanded to `width`) and its
/// `exp`: the expanded copy zero-filled above the diagonal
/// (`masked_fill`), its `cumsum`, −inf filled, `exp` keeping its output.
fn segment_decays(b: &mut Builder, name: &str, a: TensorId, square: u64) -> TensorId {
    let filled = copy(b, &format!("{name}.masked_fill"), a, square, DType::F32);
    let summed = copy(b, &format!("{name}.cumsum"), filled, square, DType::F32);
    let masked = copy(
        b,
        &format!("{name}.masked_fill_inf"),
        summed,
        square,
        DType::F32,
    );
    kept(b, &format!("{name}.exp"), masked, square)
}

/// `mamba2_chunk_scan` op by op on the convolution's x, B and C and the
/// projection's time steps `dt`: returns the output, fp32, `seq ×
/// heads·head_dim`, before the gated norm.
fn chunk_scan(
    b: &mut Builder,
    m: &Mamba2,
    (xs, bs, cs): (TensorId, TensorId, TensorId),
    dt: TensorId,
    seq: u64,
) -> TensorId {
    let f32 = DType::F32;
    let (h, n, ch) = (m.heads, m.state, m.chunk);
    let inner = m.inner();
    let padded = seq.div_ceil(ch) * ch;
    let chunks = padded / ch;
    let act = b.dtype(dt);
    // dt + dt_bias (cast to dt's dtype), softplus (saves its input),
    // clamp to `time_step_limit` (saves its input).
    let dt_bias = b.param("mamba.dt_bias", &[h]);
    let shifted = b.tensor(Numel::per_sample(seq * h), act, true);
    b.op(
        "mamba.add_dt_bias",
        OpKind::Elementwise,
        OpSpec {
            inputs: vec![dt],
            outputs: vec![shifted],
            params: vec![dt_bias],
            ..OpSpec::default()
        },
    );
    let soft = op(
        b,
        "mamba.softplus",
        (&[shifted], &[shifted]),
        seq * h,
        act,
        false,
    );
    let dt = op(b, "mamba.clamp", (&[soft], &[soft]), seq * h, act, false);
    // A = -exp(A_log.float()): `heads` elements.
    let a_log = b.param("mamba.A_log", &[h]);
    let rate = b.tensor(Numel::fixed(h), f32, true);
    b.op(
        "mamba.neg_exp_A",
        OpKind::Elementwise,
        OpSpec {
            outputs: vec![rate],
            saved: vec![rate],
            params: vec![a_log],
            ..OpSpec::default()
        },
    );
    // `.float()` copies of x; B and C repeated to every head.
    let xf = b.cast(xs, f32);
    let bf = b.cast(bs, f32);
    let cf = b.cast(cs, f32);
    let brep = copy(b, "mamba.repeat_B", bf, seq * h * n, f32);
    let crep = copy(b, "mamba.repeat_C", cf, seq * h * n, f32);
    // D_residual = D[..., None] * pad(x): saves the padded copy for D.
    let d = b.param("mamba.D", &[h]);
    let xpad = copy(b, "mamba.pad_x_residual", xf, padded * inner, f32);
    let d_residual = b.tensor(Numel::per_sample(padded * inner), f32, true);
    b.op(
        "mamba.D_residual",
        OpKind::Elementwise,
        OpSpec {
            inputs: vec![xpad],
            outputs: vec![d_residual],
            saved: vec![xpad],
            params: vec![d],
            ..OpSpec::default()
        },
    );
    // x * dt[..., None].float(); A * dt.float(): two fp32 copies of dt.
    let dtf = b.cast(dt, f32);
    let xdt = b.mul("mamba.x_dt", xf, dtf, seq * inner);
    let dtf2 = if act == f32 {
        dt
    } else {
        copy(b, "mamba.dt_fp32", dt, seq * h, f32)
    };
    let adt = b.mul("mamba.A_dt", rate, dtf2, seq * h);
    // Padded to whole chunks: F.pad copies even when nothing is padded.
    let xc = copy(b, "mamba.pad_x", xdt, padded * inner, f32);
    let ac = copy(b, "mamba.pad_A", adt, padded * h, f32);
    let bc = copy(b, "mamba.pad_B", brep, padded * h * n, f32);
    let cc = copy(b, "mamba.pad_C", crep, padded * h * n, f32);
    let a_cumsum = copy(b, "mamba.A_cumsum", ac, padded * h, f32);
    // 1. Within each chunk: L = exp(segment_sum(A)), the scores C·B, their
    // product with L, and that product applied to x.
    let square = padded * h * ch;
    let l = segment_decays(b, "mamba.segsum", ac, square);
    let g = einsum(b, "mamba.scores", (cc, bc), (true, true), square);
    let scores = b.mul("mamba.masked_scores", g, l, square);
    let y_diag = einsum(
        b,
        "mamba.y_diag",
        (scores, xc),
        (false, true),
        padded * inner,
    );
    // 2. Each chunk's end state from its decayed B and x.
    let to_end = copy(b, "mamba.decay_to_end", a_cumsum, padded * h, f32);
    let to_end = kept(b, "mamba.decay_to_end_exp", to_end, padded * h);
    let b_decay = b.mul("mamba.B_decay", bc, to_end, padded * h * n);
    let states_n = chunks * m.recurrent_state();
    let states = einsum(b, "mamba.states", (b_decay, xc), (true, true), states_n);
    // 3. The recurrence over the chunks: the zero start state concatenated,
    // the chunks' pairwise decays, their product with the states.
    // `zeros_like` keeps the states' dtype (half under autocast).
    let states_dtype = b.dtype(states);
    let with_start = copy(
        b,
        "mamba.cat_start_state",
        states,
        (chunks + 1) * m.recurrent_state(),
        states_dtype,
    );
    let ends = copy(b, "mamba.pad_chunk_ends", a_cumsum, (chunks + 1) * h, f32);
    let decay_chunk = segment_decays(
        b,
        "mamba.chunk_segsum",
        ends,
        (chunks + 1) * (chunks + 1) * h,
    );
    let new_states = einsum(
        b,
        "mamba.new_states",
        (decay_chunk, with_start),
        (true, true),
        (chunks + 1) * m.recurrent_state(),
    );
    // 4. Each chunk's start state read out by C, decayed to each position.
    let decay_out = kept(b, "mamba.state_decay_out", a_cumsum, padded * h);
    let c_states = einsum(
        b,
        "mamba.c_states",
        (cc, new_states),
        (true, true),
        padded * inner,
    );
    let y_off = b.mul("mamba.y_off", c_states, decay_out, padded * inner);
    let sum = b.add("mamba.y_sum", y_diag, y_off);
    // `(Y_diag + Y_off).contiguous()`: the sum is laid out per head.
    let sum = copy(b, "mamba.y_contiguous", sum, padded * inner, f32);
    let out = b.add("mamba.D_add", sum, d_residual);
    // `[:, :seq_len]`: a view of the padded output.
    if padded == seq {
        out
    } else {
        let sliced = b.alias(out);
        b.set_numel(sliced, Numel::per_sample(seq * inner), f32);
        sliced
    }
}

/// `GraniteMoeHybridRMSNormGated(scan, gate)`: fp32 throughout, `scan *
/// silu(gate.float())`, then RMSNorm over each group of `inner / groups`
/// features, times the weight.
fn gated_norm(b: &mut Builder, m: &Mamba2, scan: TensorId, gate: TensorId, seq: u64) -> TensorId {
    let f32 = DType::F32;
    let n = seq * m.inner();
    let gf = b.cast(gate, f32);
    let silu = b.activation("mamba.norm.silu", gf);
    let gated = b.mul("mamba.norm.gate", scan, silu, n);
    let sq = op(b, "mamba.norm.pow", (&[gated], &[gated]), n, f32, false);
    let mean = copy(b, "mamba.norm.mean", sq, seq * m.groups, f32);
    let eps = copy(b, "mamba.norm.eps", mean, seq * m.groups, f32);
    let inv = kept(b, "mamba.norm.rsqrt", eps, seq * m.groups);
    let normed = b.mul("mamba.norm.mul", gated, inv, n);
    let w = b.param("mamba.norm.weight", &[m.inner()]);
    let out = b.tensor(Numel::per_sample(n), f32, true);
    b.op(
        "mamba.norm.weight_mul",
        OpKind::Elementwise,
        OpSpec {
            inputs: vec![normed],
            outputs: vec![out],
            saved: vec![normed],
            params: vec![w],
            ..OpSpec::default()
        },
    );
    out
}
