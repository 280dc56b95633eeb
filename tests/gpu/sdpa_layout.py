"""Which kernel `scaled_dot_product_attention` picks on this GPU, and the
layout of its output, for the query layouts transformers' models hand it.

The output layout decides whether `sdpa_attention_forward`'s
`attn_output.transpose(1, 2).contiguous()` copies: a query made by
`view(b, s, h, d).transpose(1, 2)` (and elementwise ops on it) is laid out
[batch, seq, heads, dim]; one made by `torch.cat` (a sliced rotary
embedding, latent attention) is [batch, heads, seq, dim]. Prints one JSON
line per case; bf16, batch 8, seq 2048, 16 heads.

    python3 tests/gpu/sdpa_layout.py > tests/reference/real_gpu/measured/sdpa_layout_<gpu>.jsonl
"""
import json

import torch
import torch.nn.functional as F

B, S, H, D = 8, 2048, 16, 64
dev, dt = "cuda", torch.bfloat16
try:
    NAMES = {int(v): k for k, v in torch.nn.attention.SDPBackend.__members__.items()}
except Exception:  # noqa: BLE001 - an older PyTorch: the number alone.
    NAMES = {}


def query(layout, d=D):
    if layout == "bshd":  # view + transpose (q_proj(x).view(..).transpose(1, 2))
        return torch.randn(B, S, H, d, device=dev, dtype=dt).transpose(1, 2)
    half = d // 2  # torch.cat of two halves on the last dim
    return torch.cat([torch.randn(B, H, S, half, device=dev, dtype=dt),
                      torch.randn(B, H, S, d - half, device=dev, dtype=dt)], dim=-1)


def case(name, q_layout, kv_heads=H, v_dim=D, qk_dim=D, mask=False, gqa=False):
    q = query(q_layout, qk_dim).requires_grad_()
    k = torch.randn(B, S, kv_heads, qk_dim, device=dev, dtype=dt).transpose(1, 2).requires_grad_()
    v = torch.randn(B, S, kv_heads, v_dim, device=dev, dtype=dt).transpose(1, 2).requires_grad_()
    m = None
    if mask:
        m = torch.ones(S, S, device=dev, dtype=torch.bool).tril()[None, None].expand(B, 1, S, S)
    kw = dict(attn_mask=m, is_causal=m is None, enable_gqa=gqa)
    try:
        choice = torch._fused_sdp_choice(q, k, v, m, 0.0, m is None, None, gqa)
    except Exception as e:  # noqa: BLE001 - a private API: say why.
        choice = f"unknown ({e})"
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    out = F.scaled_dot_product_attention(q, k, v, **kw)
    t = out.transpose(1, 2)
    row = dict(case=name, q_layout=q_layout, q_stride=list(q.stride()), out_stride=list(out.stride()),
               transpose_contiguous_copies=not t.is_contiguous(),
               backend=NAMES.get(choice, choice), out_bytes=out.numel() * out.element_size(),
               allocated_by_call=torch.cuda.memory_allocated() - before,
               torch=torch.__version__, cudnn=torch.backends.cudnn.version(),
               gpu=torch.cuda.get_device_name(0))
    print(json.dumps(row), flush=True)


for lay in ["bshd", "bhsd"]:
    case("mha", lay)
    case("gqa_enable_gqa", lay, kv_heads=4, gqa=True)
    case("mha_bool_mask", lay, mask=True)
    case("mla_v_narrower", lay, qk_dim=96, v_dim=64)
