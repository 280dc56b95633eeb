"""Make a CPU (FakeTensor) training step allocate what the same step allocates on CUDA.

Three pieces, each installed by `install()`:

1. CUDA autocast semantics on the CPU autocast dispatch key.
   `torch.autocast("cpu", dtype=D)` is used to switch autocast on, but every
   kernel that the CPU autocast key has is replaced (via torch.library, at the
   `AutocastCPU` dispatch key) so that the op lists and the cast policies are the
   ones that ATen registers for CUDA (`aten/src/ATen/autocast_mode.h`,
   AT_FORALL_LOWER_PRECISION_FP / AT_FORALL_FP32 / AT_FORALL_FP32_SET_OPT_DTYPE /
   AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE / AT_FORALL_PROMOTE, plus
   `rms_norm` -> fp32 and `binary_cross_entropy` banned), including the cast
   cache for fp32 leaf tensors that require grad (model weights), which is
   dropped when the outermost autocast region exits, exactly like
   `at::autocast::cached_cast`.  Ops that only the CPU lists contain
   (e.g. `cross_entropy_loss`, `cat`, `stack`) are redispatched untouched, so
   they behave as under CUDA autocast (no kernel there).
   The set of ops is checked against the kernels that the installed (CUDA-built)
   torch registers for the `AutocastCUDA` key: an op registered there that has
   no known policy raises if it is ever called.

   Also emulated: the CUDA-only branch inside the composite `softmax` /
   `log_softmax` (`input.is_cuda() && input is Half && dtype == Float` ->
   `_softmax(input, dim, half_to_float=True)`: no fp32 copy of the input).
   And `torch.is_autocast_enabled()` without a device type, which answers for
   CUDA, answers for the CPU autocast the step runs under (as it would on CUDA).

2. Dropout as on CUDA: `torch.nn.functional.dropout` (non-inplace, training,
   0 < p < 1) calls `aten.native_dropout`, which saves a 1-byte bool mask, as
   `at::dropout` does for CUDA tensors (`is_fused_kernel_acceptable`).  The CPU
   path would save a full-width float noise tensor instead.

3. MemTracker rounds every storage up to a multiple of 512 bytes, as the CUDA
   caching allocator does (MemTracker itself only rounds CUDA storages).
"""

from __future__ import annotations

import math
import weakref

import torch
import torch.nn.functional as F
from torch._C import DispatchKey
from torch.utils._pytree import tree_map

# --------------------------------------------------------------------------
# CUDA autocast op lists (aten/src/ATen/autocast_mode.h)
# --------------------------------------------------------------------------

LOWER_PRECISION_FP = [
    "_convolution.deprecated", "_convolution", "conv1d", "conv2d", "conv3d", "conv_tbc",
    "conv_transpose1d", "conv_transpose2d.input", "conv_transpose3d.input", "convolution",
    "prelu", "addmm", "addmv", "addr", "matmul", "einsum", "mm", "mv", "linalg_vecdot",
    "linear", "addbmm", "baddbmm", "bmm", "chain_matmul", "linalg_multi_dot",
    "_thnn_fused_lstm_cell", "_thnn_fused_gru_cell", "lstm_cell", "gru_cell",
    "rnn_tanh_cell", "rnn_relu_cell", "_scaled_dot_product_flash_attention",
    "scaled_dot_product_attention",
]

FP32 = [
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
    "reciprocal", "rsqrt", "sinh", "tan", "pow.Tensor_Scalar", "pow.Tensor_Tensor",
    "pow.Scalar", "softplus", "layer_norm", "native_layer_norm", "rms_norm", "group_norm",
    "frobenius_norm.dim", "nuclear_norm", "nuclear_norm.dim", "cosine_similarity",
    "poisson_nll_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d",
    "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss",
    "margin_ranking_loss", "multilabel_margin_loss", "soft_margin_loss",
    "triplet_margin_loss", "multi_margin_loss", "binary_cross_entropy_with_logits", "dist",
    "pdist", "cdist", "renorm", "logsumexp", "upsample_nearest1d", "_upsample_nearest_exact1d",
    "upsample_nearest2d", "_upsample_nearest_exact2d", "upsample_nearest3d",
    "_upsample_nearest_exact3d", "upsample_linear1d", "upsample_bilinear2d",
    "_upsample_bilinear2d_aa", "upsample_trilinear3d", "upsample_bicubic2d",
    "_upsample_bicubic2d_aa",
]

FP32_SET_OPT_DTYPE = [
    "prod", "prod.dim_int", "prod.dim_Dimname", "softmax.int", "softmax.Dimname",
    "log_softmax.int", "log_softmax.Dimname", "cumprod", "cumprod.dimname", "cumsum",
    "cumsum.dimname", "linalg_vector_norm", "linalg_matrix_norm", "linalg_matrix_norm.str_ord",
    "sum", "sum.dim_IntList", "sum.dim_DimnameList",
]

# registered name -> overload to redispatch to with an appended dtype=float32
FP32_APPEND_DTYPE = {
    "norm.Scalar": "norm.ScalarOpt_dtype",
    "norm.ScalarOpt_dim": "norm.ScalarOpt_dim_dtype",
    "norm.names_ScalarOpt_dim": "norm.names_ScalarOpt_dim_dtype",
}

PROMOTE = [
    "addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "vdot", "grid_sampler",
    "index_put", "tensordot", "scatter_add",
]

BANNED = ["binary_cross_entropy"]


def _policies() -> dict[str, str]:
    p: dict[str, str] = {}
    for n in LOWER_PRECISION_FP:
        p[n] = "lower_precision_fp"
    for n in FP32:
        p[n] = "fp32"
    for n in FP32_SET_OPT_DTYPE:
        p[n] = "fp32_set_opt_dtype"
    for n in FP32_APPEND_DTYPE:
        p[n] = "fp32_append_dtype"
    for n in PROMOTE:
        p[n] = "promote"
    for n in BANNED:
        p[n] = "banned"
    return p


def _get_overload(name: str):
    base, _, overload = name.partition(".")
    packet = getattr(torch.ops.aten, base, None)
    if packet is None:
        return None
    try:
        return getattr(packet, overload or "default")
    except AttributeError:
        return None


# --------------------------------------------------------------------------
# cast helpers (mirror at::autocast::cached_cast / is_eligible)
# --------------------------------------------------------------------------

_CAST_CACHE: dict[int, tuple[weakref.ref, torch.Tensor]] = {}
_EXCLUDE_AUTOCAST = torch._C.DispatchKeySet(DispatchKey.AutocastCPU)
_AFTER_AUTOCAST = torch._C._dispatch_keyset_full_after(DispatchKey.AutocastCPU)

# counters: which policies were actually applied (reported by the driver script)
STATS: dict[str, int] = {}


def _eligible(t) -> bool:
    return isinstance(t, torch.Tensor) and t.is_floating_point() and t.dtype != torch.float64


def _lower_dtype() -> torch.dtype:
    return torch.get_autocast_dtype("cpu")


def _cached_cast(to_type: torch.dtype, arg):
    if not (_eligible(arg) and arg.dtype != to_type):
        return arg
    can_try_cache = (
        to_type == _lower_dtype()
        and arg.dtype == torch.float32
        and arg.requires_grad
        and arg.is_leaf
        and not arg._is_view()
        and torch.is_autocast_cache_enabled()
    )
    if can_try_cache:
        hit = _CAST_CACHE.get(id(arg))
        if hit is not None and hit[0]() is arg:
            return hit[1]
        casted = arg.to(to_type)
        _CAST_CACHE[id(arg)] = (weakref.ref(arg), casted)
        return casted
    return arg.to(to_type)


def _cast_all(to_type, args, kwargs):
    f = lambda a: _cached_cast(to_type, a)  # noqa: E731
    return tree_map(f, args), tree_map(f, kwargs)


def clear_cast_cache() -> None:
    _CAST_CACHE.clear()


_orig_clear_autocast_cache = torch.clear_autocast_cache


def _clear_autocast_cache_wrapper() -> None:
    _orig_clear_autocast_cache()
    clear_cast_cache()


def _make_policy_kernel(name: str, op, policy: str):
    schema = op._schema
    dtype_pos = None
    dtype_kwonly = False
    for i, a in enumerate(schema.arguments):
        if a.name == "dtype":
            dtype_pos = i
            dtype_kwonly = a.kwarg_only
    append_op = _get_overload(FP32_APPEND_DTYPE[name]) if policy == "fp32_append_dtype" else None
    base = name.partition(".")[0]

    def kernel(*args, **kwargs):
        STATS[f"{policy}:{name}"] = STATS.get(f"{policy}:{name}", 0) + 1
        with torch._C._ExcludeDispatchKeyGuard(_EXCLUDE_AUTOCAST):
            if policy == "lower_precision_fp":
                args, kwargs = _cast_all(_lower_dtype(), args, kwargs)
                return op(*args, **kwargs)
            if policy == "fp32":
                args, kwargs = _cast_all(torch.float32, args, kwargs)
                return op(*args, **kwargs)
            if policy == "promote":
                to_type = _lower_dtype()
                for a in torch.utils._pytree.tree_leaves((args, kwargs)):
                    if _eligible(a):
                        to_type = torch.promote_types(to_type, a.dtype)
                args, kwargs = _cast_all(to_type, args, kwargs)
                return op(*args, **kwargs)
            if policy == "fp32_set_opt_dtype":
                if not _eligible(args[0]):
                    return op(*args, **kwargs)
                args = list(args)
                if dtype_kwonly or dtype_pos >= len(args):
                    if kwargs.get("dtype") is None:
                        kwargs = dict(kwargs, dtype=torch.float32)
                    dtype = kwargs["dtype"]
                else:
                    if args[dtype_pos] is None:
                        args[dtype_pos] = torch.float32
                    dtype = args[dtype_pos]
                if base in ("softmax", "log_softmax") and args[0].dtype == torch.float16 and dtype == torch.float32:
                    # CUDA-only branch of the composite softmax/log_softmax:
                    # half input, float output, no fp32 copy of the input.
                    STATS[f"half_to_float:{base}"] = STATS.get(f"half_to_float:{base}", 0) + 1
                    inner = torch.ops.aten._softmax if base == "softmax" else torch.ops.aten._log_softmax
                    return inner.default(args[0], args[1], True)
                return op(*args, **kwargs)
            if policy == "fp32_append_dtype":
                if not _eligible(args[0]):
                    return op(*args, **kwargs)
                return append_op(*args, **kwargs, dtype=torch.float32)
            if policy == "banned":
                raise RuntimeError(f"{name} is banned under CUDA autocast")
            raise AssertionError(policy)

    return kernel


def _make_passthrough_kernel(op):
    def kernel(keyset, *args, **kwargs):
        return op.redispatch(keyset & _AFTER_AUTOCAST, *args, **kwargs)

    return kernel


def _make_unknown_kernel(name: str):
    def kernel(*args, **kwargs):
        raise NotImplementedError(f"CUDA autocast policy of aten::{name} unknown to this emulation")

    return kernel


_LIB = None
INSTALL_REPORT: dict[str, list[str]] = {}


_IS_AUTOCAST_ENABLED = torch.is_autocast_enabled


def _is_autocast_enabled_here(device_type=None):
    """`torch.is_autocast_enabled()` without a device type answers for CUDA: on a CUDA machine,
    for the autocast the step runs under. Here that is the CPU's (Nemotron's LayerNorm1P asks)."""
    return _IS_AUTOCAST_ENABLED("cpu" if device_type is None else device_type)


def install_cuda_autocast() -> None:
    global _LIB
    if _LIB is not None:
        return
    import warnings

    lib = torch.library.Library("aten", "IMPL")
    all_names = torch._C._dispatch_get_all_op_names()
    cuda_reg = {n[len("aten::"):] for n in all_names
                if n.startswith("aten::") and torch._C._dispatch_has_kernel_for_dispatch_key(n, "AutocastCUDA")}
    cpu_reg = {n[len("aten::"):] for n in all_names
               if n.startswith("aten::") and torch._C._dispatch_has_kernel_for_dispatch_key(n, "AutocastCPU")}
    policies = _policies()
    registered, passthrough, unknown, missing = [], [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, policy in policies.items():
            op = _get_overload(name)
            if op is None:
                missing.append(name)
                continue
            lib.impl(name, _make_policy_kernel(name, op, policy), "AutocastCPU")
            registered.append(name)
        for name in sorted(cuda_reg - set(policies)):
            lib.impl(name, _make_unknown_kernel(name), "AutocastCPU")
            unknown.append(name)
        for name in sorted(cpu_reg - set(policies) - cuda_reg):
            op = _get_overload(name)
            lib.impl(name, _make_passthrough_kernel(op), "AutocastCPU", with_keyset=True)
            passthrough.append(name)
    torch.clear_autocast_cache = _clear_autocast_cache_wrapper
    torch.is_autocast_enabled = _is_autocast_enabled_here
    _LIB = lib
    INSTALL_REPORT.update(
        registered=registered,
        passthrough=passthrough,
        unknown=unknown,
        missing=missing,
        not_in_installed_cuda_list=sorted(set(registered) - cuda_reg),
    )


# --------------------------------------------------------------------------
# dropout
# --------------------------------------------------------------------------

_orig_dropout = F.dropout


def _cuda_like_dropout(input, p=0.5, training=True, inplace=False):
    if (
        training
        and not inplace
        and isinstance(input, torch.Tensor)
        and 0.0 < p < 1.0
        and input.numel() > 0
        and not torch.overrides.has_torch_function_unary(input)
    ):
        STATS["native_dropout"] = STATS.get("native_dropout", 0) + 1
        return torch.ops.aten.native_dropout.default(input, p, True)[0]
    return _orig_dropout(input, p, training, inplace)


def install_dropout() -> None:
    F.dropout = _cuda_like_dropout
    torch.nn.functional.dropout = _cuda_like_dropout


# --------------------------------------------------------------------------
# MemTracker 512-byte rounding
# --------------------------------------------------------------------------

ALLOC_GRANULARITY = 512


def install_memtracker_rounding() -> None:
    from torch.distributed._tools import mem_tracker

    def _calculate_mem_consumed(self) -> int:
        mem = self.size * self.element_size
        return math.ceil(mem / ALLOC_GRANULARITY) * ALLOC_GRANULARITY

    mem_tracker._WeakRefInfo._calculate_mem_consumed = _calculate_mem_consumed


def install() -> None:
    install_cuda_autocast()
    install_dropout()
    install_memtracker_rounding()
