#!/usr/bin/env python3
"""Cross-check memory_reference*.csv against numbers derived by hand (closed-form arithmetic).

Run after memory_reference.py:
    tests/reference/.venv/bin/python tests/reference/sanity_checks.py
Exits non-zero if a check fails.
"""

from __future__ import annotations

import csv
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

import models  # noqa: E402

R = 512
MiB = 2**20


def rnd(nbytes: int) -> int:
    return math.ceil(nbytes / R) * R


def load(name):
    with open(os.path.join(HERE, name)) as f:
        return list(csv.DictReader(f))


rows = {r["case"]: r for r in load("memory_reference.csv")}
phases = {r["case"]: r for r in load("memory_reference_phases.csv")}
failures = 0


def check(label: str, got: int, want: int) -> None:
    global failures
    ok = got == want
    failures += not ok
    print(f"{'PASS' if ok else 'FAIL'}  {label}: got {got:,} want {want:,}")


# 1. parameter and buffer bytes of every model = sum over tensors of round512(numel * 4)
#    (buffers: their own element size).
param_bytes, buffer_bytes, n_params = {}, {}, {}
for mid in sorted({r["model"] for r in rows.values()}):
    with torch.device("meta"):
        m, _ = models.build(mid)
    param_bytes[mid] = sum(rnd(p.numel() * p.element_size()) for p in m.parameters())
    buffer_bytes[mid] = sum(rnd(b.numel() * b.element_size()) for b in m.buffers())
    n_params[mid] = sum(p.numel() for p in m.parameters())
    print(f"      {mid}: {n_params[mid]:,} params -> {n_params[mid] * 4:,} B unrounded, "
          f"{param_bytes[mid]:,} B rounded per tensor; buffers {buffer_bytes[mid]:,} B")

for case, r in rows.items():
    mid = r["model"]
    check(f"{case} param_bytes", int(r["param_bytes"]), param_bytes[mid])
    check(f"{case} buffer_bytes", int(r["buffer_bytes"]), buffer_bytes[mid])

# 2. nothing leaks between steps, and the steady state after zero_grad is
#    params + buffers + optimizer state (SGD momentum: 1 x params, Adam/AdamW: 2 x params).
NSTATE = {"sgd-momentum": 1, "adam": 2, "adamw": 2}
for case, r in rows.items():
    p = phases[case]
    mid = r["model"]
    want = param_bytes[mid] * (1 + NSTATE[r["optimizer"]]) + buffer_bytes[mid]
    check(f"{case} after step 1", int(p["after_step1_bytes"]), want)
    check(f"{case} after step 2", int(p["after_step2_bytes"]), want)

# 3. resnet50: 25,557,032 parameters (torchvision), 161 parameter tensors.
check("resnet50 parameter count", n_params["resnet50"], 25_557_032)

# 4. Adam/AdamW peak in the optimizer step when activations are small: params + grads +
#    exp_avg + exp_avg_sq + one temporary of param size (the foreach sqrt(exp_avg_sq)).
#    Grads are taken from the row: they equal the params except for vit_b_16, whose
#    class_token grad is a [1,1,768] view that keeps the whole [b,197,768] gradient of the
#    torch.cat in VisionTransformer.forward alive (AccumulateGrad steals it; real PyTorch behaviour).
for case, r in rows.items():
    if r["optimizer"] in ("adam", "adamw") and r["peak_phase"] == "optimizer":
        mid = r["model"]
        extra = int(r["grad_bytes"]) - param_bytes[mid]
        if mid == "vit_b_16":
            b = int(r["batch"])
            check(f"{case} grad_bytes - param_bytes = class_token grad view storage",
                  extra, rnd(b * 197 * 768 * 4) - rnd(768 * 4))
        else:
            check(f"{case} grad_bytes", int(r["grad_bytes"]), param_bytes[mid])
        check(f"{case} optimizer-phase peak = params + grads + 3 x params + buffers",
              int(r["peak_bytes"]), 4 * param_bytes[mid] + int(r["grad_bytes"]) + buffer_bytes[mid])

# 5. mlp-small, fp32, SGD momentum, batch 4096: memory at the end of the step-2 forward
#    (timeline event forward_end), derived layer by layer.
tl_case = "mlp-small_b4096_fp32_sgd-momentum_ckpt-none_ga1"
tl_path = os.path.join(HERE, "memory_timeline", f"{tl_case}.csv")
if os.path.exists(tl_path):
    b = 4096
    f4 = 4
    P = param_bytes["mlp-small"]
    momentum = P
    batch = rnd(b * 1024 * f4) + rnd(b * 8)           # x float32 [b,1024], labels int64 [b]
    per_block = (rnd(b * 4096 * f4)                   # Linear(1024,4096) output, saved by GELU
                 + rnd(b * 4096 * f4)                 # GELU output, saved by Linear(4096,1024)
                 + rnd(b * 1024 * f4))                # Linear(4096,1024) output, saved by next Linear
    acts = 4 * per_block
    log_probs = rnd(b * 1000 * f4)                    # log_softmax output, saved by nll_loss / log_softmax
    # logits [b,1000] are not saved by anything (log_softmax backward uses its output) -> freed.
    loss_scalars = 2 * R                              # nll_loss output + total_weight (0-dim each)
    want = P + momentum + batch + acts + log_probs + loss_scalars
    tl = [t for t in csv.DictReader(open(tl_path)) if t["event"] == "forward_end" and t["step"] == "2"]
    check(f"{tl_case} total at end of step-2 forward", int(tl[0]["total_bytes"]), want)
    check(f"{tl_case} activation bytes at end of step-2 forward",
          int(tl[0]["activation_bytes"]), acts + log_probs + loss_scalars)

# 6. mlp-small, amp-bf16 (CUDA autocast emulation), batch 4096: activation bytes at the end of
#    the step-2 forward.  Per Linear under autocast: input cast to bf16 (only if it is fp32),
#    weight cast to bf16 (cached for the autocast region, kept only if saved for backward),
#    bf16 output.  The bias casts are not saved by addmm and die when the cache is cleared.
tl_case = "mlp-small_b4096_amp-bf16_adamw_ckpt-none_ga1"
tl_path = os.path.join(HERE, "memory_timeline", f"{tl_case}.csv")
if os.path.exists(tl_path):
    b, h2 = 4096, 2
    x_bf16 = rnd(b * 1024 * h2)            # block-0 input cast, saved by addmm (weight grad)
    w1 = rnd(4096 * 1024 * h2)             # bf16 weight copies
    w2 = rnd(1024 * 4096 * h2)
    h1 = rnd(b * 4096 * h2)                # Linear(1024,4096) output bf16, saved by GELU
    g = rnd(b * 4096 * h2)                 # GELU output bf16, saved by Linear(4096,1024)
    out = rnd(b * 1024 * h2)               # Linear(4096,1024) output bf16, saved by next Linear
    # block 0's W1 copy is NOT saved: its input (x) does not require grad, so addmm does not
    # keep mat2; the cached copy dies when the autocast cache is cleared at region exit.
    blocks = (h1 + g + w2 + out) + 3 * (w1 + h1 + g + w2 + out)
    head_w = rnd(1000 * 1024 * h2)         # saved: its input requires grad
    log_probs_bf16 = rnd(b * 1000 * h2)    # cross_entropy_loss -> log_softmax(x, dim, x.dtype): bf16, saved
    log_probs_fp32 = rnd(b * 1000 * 4)     # nll_loss is on the fp32 list -> fp32 copy, saved
    loss_scalars = 2 * R
    # logits (bf16 [b,1000]) are not saved -> freed.
    want = x_bf16 + blocks + head_w + log_probs_bf16 + log_probs_fp32 + loss_scalars
    tl = [t for t in csv.DictReader(open(tl_path)) if t["event"] == "forward_end" and t["step"] == "2"]
    check(f"{tl_case} activation bytes at end of step-2 forward", int(tl[0]["activation_bytes"]), want)

print(f"{failures} failed")
sys.exit(1 if failures else 0)
