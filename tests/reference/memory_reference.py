#!/usr/bin/env python3
"""Write memory_reference.csv: PyTorch MemTracker peaks for CUDA-like training steps, run CPU-only.

Every case runs TWO full training steps (forward+loss, backward, optimizer.step,
optimizer.zero_grad(set_to_none=True); with grad_accum=k: k forward/backward
micro-batches per step) under torch.distributed._tools.mem_tracker.MemTracker,
inside a FakeTensorMode on device "cpu" (no real memory, no real compute).
cuda_emulation.py makes the CPU run allocate what a CUDA run allocates
(512-byte rounding, native_dropout, CUDA autocast op lists).  See README.md.

Usage (from the repo root):
    tests/reference/.venv/bin/python tests/reference/memory_reference.py            # all cases
    tests/reference/.venv/bin/python tests/reference/memory_reference.py --only gpt2  # subset (no CSV write)
"""

from __future__ import annotations

import argparse
import csv
import gc
import os
import sys
import time
import warnings
from contextlib import nullcontext

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402
from torch.distributed._tools.mem_tracker import MemTracker, _MemRefType  # noqa: E402
from torch.utils.checkpoint import checkpoint  # noqa: E402

import cuda_emulation  # noqa: E402
import models  # noqa: E402

cuda_emulation.install()
# HF BertForSequenceClassification builds a CrossEntropyLoss module inside forward();
# it is gone by backward time, and ModTracker warns about it.  Harmless.
warnings.filterwarnings("ignore", message="Module is None")

OUT_CSV = os.path.join(HERE, "memory_reference.csv")
OUT_PHASES = os.path.join(HERE, "memory_reference_phases.csv")
OUT_PLATEAU = os.path.join(HERE, "memory_reference_plateau.csv")
TIMELINE_DIR = os.path.join(HERE, "memory_timeline")

HEADER = [
    "case", "model", "batch", "seq", "image", "precision", "optimizer", "checkpointing",
    "attention", "grad_accum", "layers", "peak_bytes", "peak_phase", "param_bytes", "buffer_bytes",
    "grad_bytes", "optstate_bytes", "activation_bytes", "temp_bytes", "other_bytes",
]
PLATEAU_HEADER = ["case", "moments"] + [f"{m}_{col}" for col in [
    "param_bytes", "buffer_bytes", "grad_bytes", "optstate_bytes", "activation_bytes", "temp_bytes", "other_bytes"]
    for m in ("min", "max")]
PHASE_HEADER = [
    "case", "peak_bytes", "peak_phase", "peak_step", "peak_micro_batch",
    "forward_max_bytes", "backward_max_bytes", "optimizer_max_bytes",
    "after_step1_bytes", "after_step2_bytes",
]
# A moment within this fraction of the peak ties with it (the estimate's own resolution; the
# phase test in crates/vramfit-core/tests/memory_reference.rs uses the same 0.5 %).
PLATEAU = 0.995
CATS = [
    ("param_bytes", _MemRefType.PARAM),
    ("buffer_bytes", _MemRefType.BUFFER),
    ("grad_bytes", _MemRefType.GRAD),
    ("optstate_bytes", _MemRefType.OPT),
    ("activation_bytes", _MemRefType.ACT),
    ("temp_bytes", _MemRefType.TEMP),
    ("other_bytes", _MemRefType.OTH),
]
DEV = torch.device("cpu")

TEXT_MODELS = {"bert-base", *models.DISTILBERT_HEADS, "roberta-base", "xlm-roberta-base", "gpt2", "llama-tiny", "qwen3-0.6b", "olmo-2-1b", "olmo-3-7b", "ernie-4.5-0.3b", "smollm3-3b", "exaone-4.0-1.2b", "exaone-4.0-32b", "qwen3.5-0.8b", "qwen3.5-4b", "gemma-2b", "gemma-2-2b",
               "gemma-3-1b", "pythia-160m", "phi-3-mini", "phi-4-mini", "t5-small", "flan-t5-xl",
               "starcoder2-3b"} | set(models.moe_models.ALL)
T5_MODELS = {"t5-small", "flan-t5-xl"}
HF_IMAGE_MODELS = {"vit-base-patch16-224"}
# CNNs at small batch (issue #21): the model states' share, depthwise convs, in-place activations,
# squeeze-excitation, stochastic depth, LayerNorm2d.
SMALL_BATCH_CNNS = ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large",
                    "efficientnet_b0", "convnext_tiny", "regnet_x_400mf", "regnet_y_400mf"]
IMAGE_MODELS = {"resnet18", "resnet50", "vit_b_16"} | set(SMALL_BATCH_CNNS) | HF_IMAGE_MODELS


# --------------------------------------------------------------------------
# MemTracker with phase bookkeeping
# --------------------------------------------------------------------------

class _NoHandle:
    """Stands in for a hook handle where no hook was installed."""

    def remove(self) -> None:
        pass


class RefMemTracker(MemTracker):
    """MemTracker + (a) phase of the global peak, (b) optional timeline,
    (c) CPU-resident optimizer `step` scalars excluded, (d) frozen parameters allowed.

    (c): with foreach=True and capturable=False, Adam/AdamW keep `state["step"]`
    as a 0-dim float32 tensor on the CPU even when training on CUDA, and the
    foreach update adds a CPU scalar tensor to them.  On our CPU-only run they
    would be counted (512 B each after rounding), so 0-dim tensors produced during
    optimizer.step() and 0-dim optimizer states are not tracked.
    """

    def __init__(self, timeline_depth: int | None = None) -> None:
        super().__init__()
        self.phase = "setup"
        self.step_idx = 0
        self.micro_idx = 0
        self.peak_phase = None
        self.peak_step = None
        self.peak_micro = None
        self.phase_max: dict[str, int] = {}
        self.timeline_depth = timeline_depth
        self.timeline: list[list] = []
        # Category breakdowns of the moments within PLATEAU of the running peak.
        self.plateau: list[tuple[int, tuple[int, ...]]] = []

    # -- (c)
    def _track(self, reftype, t):  # type: ignore[override]
        if self._in_opt and t.dim() == 0:
            return
        super()._track(reftype, t)

    def _track_optimizer_states(self, reftype, optimizer):  # type: ignore[override]
        for states in optimizer.state.values():
            for val in states.values():
                if isinstance(val, torch.Tensor) and val.dim() > 0:
                    self._update_and_maybe_create_winfos(val, reftype)

    # -- (d) MemTracker hooks every parameter's gradient, which a frozen one (ERNIE 4.5's
    # `moe_statics.e_score_correction_bias`, requires_grad=False) refuses: it is tracked as a
    # parameter with no-op handles instead, as it never gets a gradient.
    def _track_module_params_and_buffers(self, module, install_grad_hooks=True):  # type: ignore[override]
        for param in module.parameters():
            if not param.requires_grad and param not in self._param_to_grad_hook_handles:
                self._param_to_grad_hook_handles[param] = (_NoHandle(), _NoHandle())
        return super()._track_module_params_and_buffers(module, install_grad_hooks)

    # -- (a)
    def _update_peak_stats(self, peak_state):  # type: ignore[override]
        before = self._peak_mem.get(DEV, 0)
        super()._update_peak_stats(peak_state)
        cur = self._curr_mem_snap.get(DEV, {}).get("Total", 0)
        if cur > self.phase_max.get(self.phase, 0):
            self.phase_max[self.phase] = cur
        if self._peak_mem.get(DEV, 0) > before:
            self.peak_phase = self.phase
            self.peak_step = self.step_idx
            self.peak_micro = self.micro_idx
        peak = self._peak_mem.get(DEV, 0)
        if cur >= PLATEAU * peak:
            snap = self._curr_mem_snap.get(DEV, {})
            if peak > before:
                self.plateau = [m for m in self.plateau if m[0] >= PLATEAU * peak]
            self.plateau.append((cur, tuple(snap.get(c, 0) for _, c in CATS)))

    def current_total(self) -> int:
        return self._curr_mem_snap.get(DEV, {}).get("Total", 0)

    # -- (b)
    def record(self, event: str, module: str = "") -> None:
        if self.timeline_depth is None:
            return
        snap = self._curr_mem_snap.get(DEV, {})
        self.timeline.append(
            [len(self.timeline), self.step_idx, self.micro_idx, self.phase, event, module,
             snap.get("Total", 0)] + [snap.get(c, 0) for _, c in CATS]
        )

    def _want(self, module) -> str | None:
        if self.timeline_depth is None:
            return None
        name = self._mod_tracker.get_known_fqn(module)
        if name is None or name.count(".") + 1 > self.timeline_depth:
            return None
        return name

    def _pre_fw_hook(self, module, inputs):  # type: ignore[override]
        super()._pre_fw_hook(module, inputs)
        n = self._want(module)
        if n is not None:
            self.record("pre_fw_ac" if self._mod_tracker.is_bw else "pre_fw", n)

    def _post_fw_hook(self, module, inputs, outputs):  # type: ignore[override]
        super()._post_fw_hook(module, inputs, outputs)
        n = self._want(module)
        if n is not None:
            self.record("post_fw_ac" if self._mod_tracker.is_bw else "post_fw", n)

    def _pre_bw_hook(self, module, args):  # type: ignore[override]
        super()._pre_bw_hook(module, args)
        n = self._want(module) if module is not None else None
        if n is not None:
            self.record("pre_bw", n)

    def _post_bw_hook(self, module, args):  # type: ignore[override]
        super()._post_bw_hook(module, args)
        n = self._want(module) if module is not None else None
        if n is not None:
            self.record("post_bw", n)


# --------------------------------------------------------------------------
# models, checkpointing, optimizers, inputs
# --------------------------------------------------------------------------

class Checkpointed(nn.Module):
    """Runs the wrapped block under torch.utils.checkpoint (non-reentrant)."""

    def __init__(self, block: nn.Module) -> None:
        super().__init__()
        self.block = block

    def forward(self, x):
        return checkpoint(self.block, x, use_reentrant=False)


def _fake_friendly_trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    # torch.nn.init.trunc_normal_ has a data-dependent branch (mask.any()) that FakeTensor
    # cannot evaluate.  Initial values are irrelevant for memory accounting.
    with torch.no_grad():
        return tensor.normal_(mean, std).clamp_(a, b)


def build_model(case: dict) -> nn.Module:
    from transformers.initialization import TORCH_INIT_FUNCTIONS  # HF ViT initializes through this table

    orig = nn.init.trunc_normal_, TORCH_INIT_FUNCTIONS["trunc_normal_"]
    nn.init.trunc_normal_ = TORCH_INIT_FUNCTIONS["trunc_normal_"] = _fake_friendly_trunc_normal_
    try:
        return _build_model(case)
    finally:
        nn.init.trunc_normal_, TORCH_INIT_FUNCTIONS["trunc_normal_"] = orig


def _build_model(case: dict) -> nn.Module:
    mid = case["model"]
    if mid in TEXT_MODELS or mid in HF_IMAGE_MODELS:
        model, _ = models.build(mid, attn=case["attention"], layers=case["layers"] or None)
        model.config.use_cache = False
        assert model.config._attn_implementation == case["attention"], model.config._attn_implementation
        if case["checkpointing"] == "full":
            # = the deprecated alias gradient_checkpointing_enable(gradient_checkpointing_kwargs=...)
            model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
        return model
    if mid == "mlp-small":
        model = models.mlp_small()
        if case["checkpointing"] == "full":
            layers = list(model)
            blocks = [Checkpointed(nn.Sequential(*layers[i:i + 3])) for i in range(0, 12, 3)]
            model = nn.Sequential(*blocks, layers[12])
        return model
    model, _ = models.build(mid)
    if case["checkpointing"] == "full":
        if mid.startswith("resnet"):
            for lname in ("layer1", "layer2", "layer3", "layer4"):
                stage = getattr(model, lname)
                for i in range(len(stage)):
                    stage[i] = Checkpointed(stage[i])
        elif mid == "vit_b_16":
            layers = model.encoder.layers
            for i in range(len(layers)):
                layers[i] = Checkpointed(layers[i])
        else:
            raise ValueError(mid)
    return model


def make_optimizer(name: str, params):
    if name == "sgd-momentum":
        return torch.optim.SGD(params, lr=0.01, momentum=0.9, foreach=True)
    if name == "adam":
        return torch.optim.Adam(params, lr=1e-3, foreach=True)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-3, foreach=True)
    raise ValueError(name)


def make_inputs(case: dict) -> dict:
    b, mid = case["batch"], case["model"]
    if mid in HF_IMAGE_MODELS:
        r = case["image"]
        return {"pixel_values": torch.randn(b, 3, r, r), "labels": torch.randint(0, 1000, (b,))}
    if mid in IMAGE_MODELS:
        r = case["image"]
        return {"x": torch.randn(b, 3, r, r), "y": torch.randint(0, 1000, (b,))}
    if mid == "mlp-small":
        return {"x": torch.randn(b, 1024), "y": torch.randint(0, 1000, (b,))}
    s = case["seq"]
    if mid in T5_MODELS:
        # Encoder input and target of the same length (the decoder reads the shifted labels).
        return {"input_ids": torch.randint(0, 32128, (b, s)), "labels": torch.randint(0, 32128, (b, s))}
    if mid == "bert-base":
        return {"input_ids": torch.randint(0, 30522, (b, s)), "labels": torch.randint(0, 2, (b,))}
    if mid == "distilbert-base":
        return {"input_ids": torch.randint(0, 30522, (b, s)), "labels": torch.randint(0, 2, (b,))}
    if mid == "distilbert-base-mlm":
        ids = torch.randint(0, 30522, (b, s))
        return {"input_ids": ids, "labels": ids}
    if mid in models.ROBERTA_CONFIGS:
        vocab = models.ROBERTA_CONFIGS[mid][0]
        return {"input_ids": torch.randint(0, vocab, (b, s)), "labels": torch.randint(0, 2, (b,))}
    if mid in models.moe_models.ALL:
        ids = torch.randint(0, models.moe_models.ALL[mid][1]["vocab_size"], (b, s))
        return {"input_ids": ids, "labels": ids}
    vocab = {"gpt2": 50257, "llama-tiny": 32000, "qwen3-0.6b": 151936, "olmo-2-1b": 100352, "olmo-3-7b": 100278, "ernie-4.5-0.3b": 103424, "smollm3-3b": 128256, "exaone-4.0-1.2b": 102400, "exaone-4.0-32b": 102400, "qwen3.5-0.8b": 248320, "qwen3.5-4b": 248320, "gemma-2b": 256000,
             "gemma-2-2b": 256000, "gemma-3-1b": 262144, "pythia-160m": 50304, "phi-3-mini": 32064,
             "phi-4-mini": 200064, "starcoder2-3b": 49152}[mid]
    ids = torch.randint(0, vocab, (b, s))
    return {"input_ids": ids, "labels": ids}


def forward_loss(model: nn.Module, case: dict, inp: dict) -> torch.Tensor:
    if case["model"] in TEXT_MODELS or case["model"] in HF_IMAGE_MODELS:
        return model(**inp).loss
    return F.cross_entropy(model(inp["x"]), inp["y"])


AMP = {"fp32": None, "amp-bf16": torch.bfloat16, "amp-fp16": torch.float16}


# --------------------------------------------------------------------------
# one case
# --------------------------------------------------------------------------

def run_case(case: dict, timeline: bool = False) -> tuple[dict, dict, list]:
    torch.manual_seed(0)
    amp_dtype = AMP[case["precision"]]
    k = case["grad_accum"]
    with FakeTensorMode():
        model = build_model(case)
        model.train()
        opt = make_optimizer(case["optimizer"], model.parameters())
        mt = RefMemTracker(timeline_depth=5 if timeline else None)
        mt.track_external(model, opt)
        after = []
        with mt:
            for step in range(2):
                mt.step_idx = step + 1
                for micro in range(k):
                    mt.micro_idx = micro + 1
                    mt.reset_mod_stats()
                    mt.phase = "forward"
                    mt.record("forward_begin")
                    inp = make_inputs(case)
                    mt.track_external(*inp.values())  # the batch is categorised as "Other"
                    ctx = torch.autocast("cpu", dtype=amp_dtype) if amp_dtype is not None else nullcontext()
                    with ctx:
                        loss = forward_loss(model, case, inp)
                        if k > 1:
                            loss = loss / k
                    mt.record("forward_end")
                    mt.phase = "backward"
                    loss.backward()
                    mt.record("backward_end")
                    del loss, inp
                    mt.record("batch_freed")
                mt.phase = "optimizer"
                mt.micro_idx = 0
                opt.step()
                mt.record("optimizer_step_end")
                opt.zero_grad(set_to_none=True)
                mt.record("zero_grad_end")
                mt.phase = "idle"
                after.append(mt.current_total())
        peak_snap = mt.get_tracker_snapshot("peak")[DEV]
        peak_total = mt._peak_mem[DEV]
        assert peak_snap["Total"] == peak_total
    row = {h: case[h] for h in HEADER if h in case}
    row["peak_bytes"] = peak_total
    row["peak_phase"] = mt.peak_phase
    for col, cat in CATS:
        row[col] = peak_snap.get(cat, 0)
    assert sum(row[c] for c, _ in CATS) == peak_total
    phases = {
        "case": case["case"],
        "peak_bytes": peak_total,
        "peak_phase": mt.peak_phase,
        "peak_step": mt.peak_step,
        "peak_micro_batch": mt.peak_micro,
        "forward_max_bytes": mt.phase_max.get("forward", 0),
        "backward_max_bytes": mt.phase_max.get("backward", 0),
        "optimizer_max_bytes": mt.phase_max.get("optimizer", 0),
        "after_step1_bytes": after[0],
        "after_step2_bytes": after[1],
    }
    ties = [parts for total, parts in mt.plateau if total >= PLATEAU * peak_total]
    plateau = {"case": case["case"], "moments": len(ties)}
    for i, (col, _) in enumerate(CATS):
        plateau[f"min_{col}"] = min(p[i] for p in ties)
        plateau[f"max_{col}"] = max(p[i] for p in ties)
    phases["_plateau"] = plateau
    tl = mt.timeline
    del mt, model, opt
    gc.collect()
    return row, phases, tl


# --------------------------------------------------------------------------
# case list
# --------------------------------------------------------------------------

def C(model, batch, precision="fp32", optimizer="adamw", ckpt="none", seq=0, image=0, ga=1,
      timeline=False, layers=0, attention=None):
    """A case; `layers` > 0 cuts a transformer to its first `layers` blocks (each of T5's two
    stacks); `attention` (eager, sdpa) overrides the model's usual attention and is named in the case."""
    if model in IMAGE_MODELS and image == 0:
        image = 224
    usual = {"bert-base": "eager", **{m: "eager" for m in models.DISTILBERT_HEADS}, "roberta-base": "eager", "xlm-roberta-base": "eager", "gpt2": "eager", "llama-tiny": "eager", "qwen3-0.6b": "eager",
             "olmo-2-1b": "eager", "olmo-3-7b": "eager", "ernie-4.5-0.3b": "eager", "smollm3-3b": "eager", "exaone-4.0-1.2b": "eager", "exaone-4.0-32b": "eager", "qwen3.5-0.8b": "eager", "qwen3.5-4b": "eager", "gemma-2b": "eager", "gemma-2-2b": "eager", "gemma-3-1b": "eager",
             "pythia-160m": "eager", "phi-3-mini": "eager", "phi-4-mini": "eager",
             "t5-small": "eager", "flan-t5-xl": "eager", "vit-base-patch16-224": "eager",
             "starcoder2-3b": "eager", **{m: "eager" for m in models.moe_models.ALL},
             "vit_b_16": "sdpa"}.get(model, "none")
    parts = [model] + ([f"l{layers}"] if layers else []) + [f"b{batch}"]
    if attention is not None and attention != usual:
        parts.append(attention)
    attention = attention or usual
    if seq:
        parts.append(f"s{seq}")
    if image:
        parts.append(f"i{image}")
    parts += [precision, optimizer, f"ckpt-{ckpt}", f"ga{ga}"]
    return {
        "case": "_".join(parts), "model": model, "batch": batch, "seq": seq, "image": image,
        "precision": precision, "optimizer": optimizer, "checkpointing": ckpt,
        "attention": attention, "grad_accum": ga, "layers": layers, "_timeline": timeline,
    }


CASES = [
    # mlp-small
    C("mlp-small", 32, "fp32", "sgd-momentum"),
    C("mlp-small", 64, "fp32", "adamw"),
    C("mlp-small", 256, "fp32", "sgd-momentum"),
    C("mlp-small", 256, "fp32", "adam"),
    C("mlp-small", 1024, "fp32", "adam"),
    C("mlp-small", 4096, "fp32", "sgd-momentum", timeline=True),
    C("mlp-small", 4096, "fp32", "adamw"),
    C("mlp-small", 4096, "amp-bf16", "adamw", timeline=True),
    C("mlp-small", 4096, "amp-fp16", "adam"),
    C("mlp-small", 1024, "fp32", "adam", ckpt="full"),
    C("mlp-small", 4096, "fp32", "sgd-momentum", ckpt="full"),
    C("mlp-small", 512, "fp32", "adam", ga=4),
    C("mlp-small", 2048, "amp-bf16", "sgd-momentum", ga=2),
    # resnet18
    C("resnet18", 1, "fp32", "sgd-momentum"),
    C("resnet18", 32, "fp32", "sgd-momentum", timeline=True),
    C("resnet18", 64, "fp32", "adam"),
    C("resnet18", 32, "amp-bf16", "sgd-momentum"),
    C("resnet18", 32, "amp-fp16", "adamw"),
    C("resnet18", 64, "fp32", "sgd-momentum", ckpt="full"),
    C("resnet18", 16, "fp32", "sgd-momentum", ga=2),
    C("resnet18", 32, "fp32", "sgd-momentum", image=128),
    # resnet50
    C("resnet50", 1, "fp32", "sgd-momentum"),
    C("resnet50", 8, "fp32", "sgd-momentum"),
    C("resnet50", 32, "fp32", "sgd-momentum"),
    C("resnet50", 64, "fp32", "sgd-momentum"),
    C("resnet50", 32, "fp32", "adam"),
    C("resnet50", 32, "fp32", "adamw"),
    C("resnet50", 32, "amp-bf16", "sgd-momentum"),
    C("resnet50", 32, "amp-fp16", "sgd-momentum"),
    C("resnet50", 64, "amp-bf16", "adamw"),
    C("resnet50", 32, "fp32", "sgd-momentum", ckpt="full"),
    C("resnet50", 64, "amp-fp16", "adam", ckpt="full"),
    C("resnet50", 32, "fp32", "sgd-momentum", image=128),
    C("resnet50", 64, "fp32", "adam", image=128),
    C("resnet50", 16, "fp32", "sgd-momentum", ga=4),
    # vit_b_16
    C("vit_b_16", 1, "fp32", "adamw"),
    C("vit_b_16", 8, "fp32", "adamw"),
    C("vit_b_16", 32, "fp32", "adamw"),
    C("vit_b_16", 32, "amp-bf16", "adamw"),
    C("vit_b_16", 32, "amp-fp16", "adam"),
    C("vit_b_16", 64, "amp-bf16", "sgd-momentum"),
    C("vit_b_16", 32, "fp32", "adamw", ckpt="full"),
    # RoBERTa: BERT's layers, its own position and token-type ids and classification head (eager
    # only: with attention dropout the CPU's SDPA takes its math path, where CUDA runs a fused kernel)
    C("roberta-base", 8, "fp32", "adamw", seq=128),
    C("roberta-base", 16, "amp-bf16", "adamw", seq=512),
    C("roberta-base", 16, "amp-bf16", "adamw", ckpt="full", seq=512),
    C("xlm-roberta-base", 8, "fp32", "adamw", seq=256),
    # DistilBERT: six BERT layers without token types or the dropout after attention; its heads
    # (eager, as RoBERTa)
    C("distilbert-base", 16, "fp32", "adamw", seq=128),
    C("distilbert-base", 32, "amp-bf16", "adamw", seq=512),
    C("distilbert-base", 32, "amp-fp16", "adamw", ckpt="full", seq=256),
    C("distilbert-base", 8, "fp32", "sgd-momentum", seq=512, ga=2),
    C("distilbert-base-mlm", 16, "amp-bf16", "adamw", seq=128),
    C("distilbert-base-mlm", 8, "fp32", "adamw", seq=256),
    # bert-base
    C("bert-base", 1, "fp32", "adamw", seq=128),
    C("bert-base", 8, "fp32", "adamw", seq=128, timeline=True),
    C("bert-base", 32, "fp32", "adamw", seq=128),
    C("bert-base", 8, "fp32", "adamw", seq=512),
    C("bert-base", 16, "fp32", "adamw", seq=512),
    C("bert-base", 32, "amp-bf16", "adamw", seq=128),
    C("bert-base", 16, "amp-fp16", "adamw", seq=512),
    C("bert-base", 16, "amp-bf16", "adamw", ckpt="full", seq=512),
    C("bert-base", 32, "fp32", "adamw", ckpt="full", seq=512),
    C("bert-base", 8, "fp32", "sgd-momentum", seq=128),
    C("bert-base", 8, "fp32", "adam", seq=512, ga=2),
    # gpt2
    C("gpt2", 1, "fp32", "adamw", seq=256),
    C("gpt2", 4, "fp32", "adamw", seq=256),
    C("gpt2", 1, "fp32", "adamw", seq=1024),
    C("gpt2", 8, "fp32", "adamw", seq=1024),
    C("gpt2", 4, "amp-bf16", "adamw", seq=256, timeline=True),
    C("gpt2", 4, "amp-bf16", "adamw", seq=1024),
    C("gpt2", 8, "amp-fp16", "adamw", seq=1024),
    C("gpt2", 16, "amp-bf16", "adam", seq=256),
    C("gpt2", 8, "fp32", "adamw", ckpt="full", seq=1024),
    C("gpt2", 16, "amp-bf16", "adamw", ckpt="full", seq=1024),
    C("gpt2", 4, "fp32", "sgd-momentum", seq=1024),
    C("gpt2", 4, "fp32", "adamw", seq=256, ga=4),
    # llama-tiny
    C("llama-tiny", 1, "fp32", "adamw", seq=256),
    C("llama-tiny", 4, "fp32", "adamw", seq=256),
    C("llama-tiny", 4, "fp32", "adamw", seq=1024),
    C("llama-tiny", 16, "fp32", "adamw", seq=1024),
    C("llama-tiny", 8, "amp-bf16", "adamw", seq=1024),
    C("llama-tiny", 8, "amp-fp16", "adamw", seq=1024),
    C("llama-tiny", 16, "amp-bf16", "sgd-momentum", seq=256),
    C("llama-tiny", 4, "fp32", "adamw", ckpt="full", seq=256, timeline=True),
    C("llama-tiny", 8, "fp32", "adamw", ckpt="full", seq=1024),
    C("llama-tiny", 16, "amp-bf16", "adamw", ckpt="full", seq=1024),
    C("llama-tiny", 4, "fp32", "adam", seq=1024, ga=2),
    C("llama-tiny", 2, "amp-bf16", "adamw", seq=1024, ga=4),
    # Qwen3-0.6B cut to 2 blocks: q/k norms per head, 128-wide heads, tied 151,936-token head
    C("qwen3-0.6b", 4, "amp-bf16", "adamw", seq=512, layers=2),
    C("qwen3-0.6b", 2, "fp32", "adamw", seq=512, layers=2),
    C("qwen3-0.6b", 4, "amp-bf16", "adamw", ckpt="full", seq=1024, layers=2),
    C("qwen3-0.6b", 2, "amp-bf16", "sgd-momentum", seq=2048, layers=2),
    # OLMo-2-1B cut to 2 blocks: norms after attention and MLP, whole-width q/k norms,
    # Olmo2RMSNorm (weight before the cast back)
    C("olmo-2-1b", 4, "amp-bf16", "adamw", seq=512, layers=2),
    C("olmo-2-1b", 2, "fp32", "adamw", seq=512, layers=2),
    C("olmo-2-1b", 4, "amp-bf16", "adamw", ckpt="full", seq=1024, layers=2),
    C("olmo-2-1b", 2, "amp-bf16", "sgd-momentum", seq=2048, layers=2),
    # Gemma-2B cut to 2 blocks: scaled embeddings, GemmaRMSNorm, GELU-gated MLP, MQA, 256-wide heads
    C("gemma-2b", 4, "amp-bf16", "adamw", seq=1024, layers=2),
    C("gemma-2b", 2, "fp32", "adamw", seq=1024, layers=2),
    C("gemma-2b", 4, "amp-bf16", "adamw", ckpt="full", seq=1024, layers=2),
    C("gemma-2b", 2, "amp-bf16", "sgd-momentum", seq=2048, layers=2),
    # SDPA on the decoders cut to 2 blocks (the eager rows above): the fused kernel's
    # output and logsumexp instead of scores and probabilities
    C("qwen3-0.6b", 4, "amp-bf16", "adamw", seq=1024, layers=2, attention="sdpa"),
    C("olmo-2-1b", 4, "amp-bf16", "adamw", seq=1024, layers=2, attention="sdpa"),
    # OLMo 3 7B cut to 4 blocks (three sliding layers, one full) at 8192 tokens, past its 4096-token
    # window: eager, and SDPA, where the sliding layers take a materialized boolean mask
    C("olmo-3-7b", 1, "amp-bf16", "adamw", seq=8192, layers=4),
    C("olmo-3-7b", 1, "amp-bf16", "adamw", seq=8192, layers=4, attention="sdpa"),
    C("olmo-3-7b", 2, "amp-bf16", "adamw", ckpt="full", seq=4096, layers=4),
    # SmolLM3: the fourth block without rotary embedding (q and k reach attention as projected)
    C("smollm3-3b", 2, "amp-bf16", "adamw", seq=2048, layers=4),
    C("smollm3-3b", 2, "amp-bf16", "adamw", seq=2048, layers=4, attention="sdpa"),
    C("smollm3-3b", 1, "fp32", "adamw", seq=2048, layers=4),
    # EXAONE 4.0: norms after attention and the MLP, per-head q/k norms; the 32B cut to 4 blocks (three
    # sliding, the fourth full without rotary embedding), the 1.2B to 4 full blocks with it
    C("exaone-4.0-32b", 1, "amp-bf16", "adamw", seq=4096, layers=4),
    C("exaone-4.0-32b", 1, "amp-bf16", "adamw", seq=4096, layers=4, attention="sdpa"),
    C("exaone-4.0-1.2b", 4, "amp-bf16", "adamw", seq=2048, layers=4),
    C("exaone-4.0-1.2b", 2, "fp32", "adamw", seq=2048, layers=4),
    # Qwen3.5: Gated DeltaNet in three blocks of four (transformers' PyTorch path, chunks of 64 in
    # fp32), gated attention in the fourth; the 0.8B with one value head per key head, the 4B with two
    C("qwen3.5-0.8b", 2, "amp-bf16", "adamw", seq=2048, layers=4),
    C("qwen3.5-0.8b", 2, "amp-bf16", "adamw", seq=2048, layers=4, attention="sdpa"),
    C("qwen3.5-0.8b", 1, "fp32", "adamw", seq=1000, layers=4),
    C("qwen3.5-4b", 2, "amp-bf16", "adamw", seq=2048, layers=4),
    C("qwen3.5-4b", 4, "amp-bf16", "adamw", ckpt="full", seq=2048, layers=4),
    C("gemma-2b", 2, "fp32", "adamw", seq=1024, layers=2, attention="sdpa"),
    # Gemma 2: sandwich norms, soft-capped scores (eager even when SDPA is asked for) and logits
    C("gemma-2-2b", 4, "amp-bf16", "adamw", seq=1024, layers=2),
    C("gemma-2-2b", 2, "fp32", "adamw", seq=1024, layers=2),
    C("gemma-2-2b", 4, "amp-bf16", "adamw", ckpt="full", seq=1024, layers=2),
    C("gemma-2-2b", 2, "amp-bf16", "sgd-momentum", seq=2048, layers=2),
    # Gemma 3: sandwich norms, per-head q/k norms, sliding layers; eager and SDPA
    C("gemma-3-1b", 4, "amp-bf16", "adamw", seq=1024, layers=2),
    C("gemma-3-1b", 4, "amp-bf16", "adamw", seq=1024, layers=2, attention="sdpa"),
    C("gemma-3-1b", 2, "fp32", "adamw", seq=1024, layers=2, attention="sdpa"),
    C("gemma-3-1b", 4, "amp-bf16", "adamw", ckpt="full", seq=1024, layers=2),
    C("gemma-3-1b", 2, "amp-bf16", "sgd-momentum", seq=4096, layers=2, attention="sdpa"),
    # Pythia-160M (GPT-NeoX) cut to 2 blocks: LayerNorms, fused query_key_value chunked per head,
    # rotary on a quarter of each head then cat, parallel residual, GELU MLP, untied 50,304-token head
    C("pythia-160m", 8, "amp-bf16", "adamw", seq=1024, layers=2),
    C("pythia-160m", 4, "fp32", "adamw", seq=1024, layers=2),
    C("pythia-160m", 8, "amp-bf16", "adamw", ckpt="full", seq=1024, layers=2),
    C("pythia-160m", 4, "amp-bf16", "sgd-momentum", seq=2048, layers=2),
    # Phi-3-mini cut to 2 blocks: fused qkv_proj sliced into q, k, v; fused gate_up_proj chunked;
    # rotary on whole 96-wide heads then cat; untied 32,064-token head
    C("phi-3-mini", 8, "amp-bf16", "adamw", seq=1024, layers=2),
    C("phi-3-mini", 4, "fp32", "adamw", seq=1024, layers=2),
    C("phi-3-mini", 8, "amp-bf16", "adamw", ckpt="full", seq=2048, layers=2),
    C("phi-3-mini", 4, "amp-bf16", "sgd-momentum", seq=2048, layers=2),
    # Phi-4-mini cut to 2 blocks: as Phi-3-mini with 24 heads over 8 key/value heads (repeat_kv),
    # rotary on 96 of 128 features per head, tied 200,064-token head
    C("phi-4-mini", 4, "amp-bf16", "adamw", seq=1024, layers=2),
    C("phi-4-mini", 4, "fp32", "adamw", seq=1024, layers=2),
    C("phi-4-mini", 4, "amp-bf16", "adamw", ckpt="full", seq=2048, layers=2),
    C("phi-4-mini", 2, "amp-bf16", "sgd-momentum", seq=4096, layers=2),
    # StarCoder2-3B cut to 2 blocks: LayerNorms, q/k/v/o and MLP biases, a plain GELU MLP,
    # 24 heads over 2 key/value heads, tied 49,152-token head; eager and SDPA
    C("starcoder2-3b", 4, "amp-bf16", "adamw", seq=1024, layers=2),
    C("starcoder2-3b", 2, "fp32", "adamw", seq=1024, layers=2, attention="sdpa"),
    C("starcoder2-3b", 4, "amp-bf16", "adamw", ckpt="full", seq=2048, layers=2),
    C("starcoder2-3b", 2, "amp-bf16", "sgd-momentum", seq=4096, layers=2),
    # T5-small cut to 2 + 2 blocks: relative position biases (one per stack, made in its first block),
    # cross-attention, T5LayerNorm, ReLU MLP, dropout 0.1, tied head scaled by d_model**-0.5
    C("t5-small", 8, "amp-bf16", "adamw", seq=512, layers=2),
    C("t5-small", 4, "fp32", "adamw", seq=512, layers=2),
    C("t5-small", 8, "amp-bf16", "adamw", ckpt="full", seq=512, layers=2),
    C("t5-small", 2, "amp-bf16", "sgd-momentum", seq=2048, layers=2),
    # Flan-T5-XL cut to 2 + 2 blocks: GELU-gated MLP (gelu_new), 32 heads, untied head
    C("flan-t5-xl", 4, "amp-bf16", "adamw", seq=512, layers=2),
    C("flan-t5-xl", 2, "fp32", "adamw", seq=512, layers=2),
    C("flan-t5-xl", 4, "amp-bf16", "adamw", ckpt="full", seq=512, layers=2),
    C("flan-t5-xl", 1, "amp-bf16", "sgd-momentum", seq=2048, layers=2),
    # Hugging Face ViT-B/16 (ViTForImageClassification): separate q/k/v projections, eager and SDPA
    C("vit-base-patch16-224", 32, "amp-bf16", "adamw", attention="eager"),
    C("vit-base-patch16-224", 32, "fp32", "adamw", attention="sdpa"),
    # Mixtures of experts (tests/reference/moe/README.md): the grouped_mm expert path, fp32 under
    # autocast; real expert counts and top-k at a 512-wide hidden state (moe_models.VARIANTS, their
    # config.json in moe/), cut to 2 blocks, then real presets cut to 2 blocks.
    # Mixtral: 8 experts, top-2, renormalized fp32 weights
    C("mixtral-h512", 8, "amp-bf16", "adamw", seq=1024, layers=2),
    C("mixtral-h512", 4, "fp32", "adamw", seq=1024, layers=2),
    C("mixtral-h512", 8, "amp-bf16", "adamw", ckpt="full", seq=1024, layers=2),
    # Qwen1.5-MoE: 60 experts, top-4, a shared expert behind a sigmoid gate, q/k/v biases
    C("qwen1.5-moe-h512", 4, "amp-bf16", "adamw", seq=1024, layers=2),
    C("qwen1.5-moe-h512", 2, "fp32", "sgd-momentum", seq=1024, layers=2),
    # Qwen3-MoE: 128 experts, top-8, per-head q/k norms, layer 0 dense (mlp_only_layers)
    C("qwen3-moe-h512", 4, "amp-bf16", "adamw", seq=1024, layers=2),
    C("qwen3-moe-h512", 4, "amp-bf16", "adamw", ckpt="full", seq=1024, layers=2),
    # OLMoE: 64 experts, top-8, whole-width q/k norms
    C("olmoe-h512", 8, "amp-bf16", "adamw", seq=1024, layers=2),
    C("olmoe-h512", 4, "fp32", "adamw", seq=1024, layers=2),
    # OLMoE with `output_router_logits` on: the auxiliary load-balancing loss
    C("olmoe-h512-aux", 8, "amp-bf16", "adamw", seq=1024, layers=2),
    C("olmoe-h512-aux", 4, "fp32", "adamw", seq=1024, layers=2),
    # DeepSeek-V2: latent attention without query bottleneck (complex rotary), 64 experts, top-6,
    # 2 shared, layer 0 dense
    C("deepseek-v2-h512", 4, "amp-bf16", "adamw", seq=1024, layers=2),
    C("deepseek-v2-h512", 2, "fp32", "adamw", seq=1024, layers=2),
    # DeepSeek-V3: latent attention with query bottleneck (interleaved rotary), 256 experts, top-8 of
    # 4 of 8 groups (sigmoid, bias-corrected), 1 shared, layer 0 dense
    C("deepseek-v3-h512", 4, "amp-bf16", "adamw", seq=1024, layers=2),
    C("deepseek-v3-h512", 4, "amp-bf16", "adamw", ckpt="full", seq=1024, layers=2),
    # gpt-oss: sinks (eager), sliding layer 0, biased experts, clamped SwiGLU, router bias
    C("gpt-oss-h512", 4, "amp-bf16", "adamw", seq=1024, layers=2),
    C("gpt-oss-h512", 2, "fp32", "adamw", seq=1024, layers=2),
    # GLM-4.5/4.6: grouped-query attention with q/k/v biases and per-head q/k norms, half of each
    # head rotated then concatenated, DeepSeek-V3's router (160 experts, top-8, 1 group), 1 shared,
    # layer 0 dense
    C("glm4-moe-h512", 4, "amp-bf16", "adamw", seq=1024, layers=2),
    C("glm4-moe-h512", 2, "fp32", "adamw", seq=1024, layers=2),
    C("glm4-moe-h512", 4, "amp-bf16", "adamw", ckpt="full", seq=1024, layers=2),
    # MiniMax-M2: q and k normalized whole, 64 of each head's 128 features rotated then
    # concatenated, 256 experts in every layer chosen by bias-corrected fp32 sigmoid scores
    C("minimax-m2-h512", 4, "amp-bf16", "adamw", seq=1024, layers=2),
    C("minimax-m2-h512", 2, "fp32", "adamw", seq=1024, layers=2),
    C("minimax-m2-h512", 4, "amp-bf16", "adamw", ckpt="full", seq=1024, layers=2),
    # GLM-4.7-Flash: DeepSeek-V3's latent attention over GLM-4.5's sparse block (64 experts, top-4)
    C("glm4-moe-lite-h512", 4, "amp-bf16", "adamw", seq=1024, layers=2),
    C("glm4-moe-lite-h512", 2, "fp32", "adamw", seq=1024, layers=2),
    C("glm4-moe-lite-h512", 4, "amp-bf16", "adamw", ckpt="full", seq=1024, layers=2),
    # ERNIE 4.5: the rotary embedding in interleaved pairs with fp32 products, shared experts before
    # the routed ones, the router in fp32 with autocast off; the dense 0.3B cut to 4 blocks
    C("ernie-4.5-moe-h512", 4, "amp-bf16", "adamw", seq=1024, layers=2),
    C("ernie-4.5-moe-h512", 2, "fp32", "adamw", seq=1024, layers=2),
    C("ernie-4.5-moe-h512", 4, "amp-bf16", "adamw", ckpt="full", seq=1024, layers=2),
    C("qwen3-next-h512", 2, "amp-bf16", "adamw", seq=1024, layers=4),
    C("qwen3-next-h512", 1, "fp32", "adamw", seq=1024, layers=4),
    C("qwen3.5-moe-h512", 2, "amp-bf16", "adamw", seq=1024, layers=4),
    # Gemma 4: per-layer embeddings, keys and values reused by the last layers, 512-wide full heads
    # (E2B's layout); keys as values and experts beside the MLP (26B-A4B's).
    C("gemma-4-e2b-v32k", 2, "amp-bf16", "adamw", seq=2048),
    C("gemma-4-e2b-v32k", 2, "amp-bf16", "adamw", seq=2048, attention="sdpa"),
    C("gemma-4-e2b-v32k", 1, "fp32", "adamw", seq=1024, attention="sdpa"),
    C("gemma-4-e2b-v32k", 4, "amp-bf16", "adamw", ckpt="full", seq=1024, attention="sdpa"),
    C("gemma-4-26b-h512", 2, "amp-bf16", "adamw", seq=1024),
    C("gemma-4-26b-h512", 2, "amp-bf16", "adamw", seq=2048, attention="sdpa"),
    C("ernie-4.5-0.3b", 4, "amp-bf16", "adamw", seq=2048, layers=4),
    C("ernie-4.5-0.3b", 2, "fp32", "adamw", seq=2048, layers=4),
    # SDPA (not for latent attention: with a query/key width other than the value's the CPU run
    # takes SDPA's math fallback, fp32 scores and all, where CUDA runs a fused kernel)
    C("qwen3-moe-h512", 4, "amp-bf16", "adamw", seq=1024, layers=2, attention="sdpa"),
    C("glm4-moe-h512", 4, "amp-bf16", "adamw", seq=1024, layers=2, attention="sdpa"),
    C("minimax-m2-h512", 4, "amp-bf16", "adamw", seq=1024, layers=2, attention="sdpa"),
    C("ernie-4.5-0.3b", 4, "amp-bf16", "adamw", seq=2048, layers=4, attention="sdpa"),
    # Eight blocks: the experts' activations outweigh the loss's tensors at the backward peak
    C("mixtral-h512", 4, "amp-bf16", "adamw", seq=2048, layers=8),
    C("deepseek-v3-h512", 4, "amp-bf16", "adamw", seq=1024, layers=8),
    C("gpt-oss-h512", 2, "amp-bf16", "adamw", seq=2048, layers=8),
    # MLPs without a gate, relu2 (Arcee's and Nemotron's layouts; Nemotron's LayerNorm1P in bf16)
    # Phi-2 cut to 2 blocks: parallel attention and MLP on one LayerNorm, gelu_new as eager ops,
    # dropout 0.1 on both branches; eager and SDPA, fp32, checkpointing
    C("phi-2", 2, "amp-bf16", "adamw", seq=1024, layers=2),
    C("phi-2", 2, "fp32", "adamw", seq=512, layers=2),
    C("phi-2", 2, "amp-bf16", "adamw", seq=1024, layers=2, attention="sdpa"),
    C("phi-2", 2, "amp-bf16", "adamw", ckpt="full", seq=1024, layers=2),
    C("phi-1.5", 4, "amp-fp16", "sgd-momentum", seq=512, layers=2),
    C("phi-qkln-h512", 4, "amp-bf16", "adamw", seq=1024),
    C("phi-qkln-h512", 2, "fp32", "adamw", seq=1024),
    # Granite 3.3 2B cut to 2 blocks: embedding, residual and logits multipliers (the logits' a
    # tensor of 49,159 per token); eager, SDPA, fp32, checkpointing
    C("granite-3.3-2b", 2, "amp-bf16", "adamw", seq=2048, layers=2),
    C("granite-3.3-2b", 2, "fp32", "adamw", seq=1024, layers=2),
    C("granite-3.3-2b", 4, "amp-bf16", "adamw", seq=1024, layers=2, attention="sdpa"),
    C("granite-3.3-2b", 2, "amp-bf16", "adamw", ckpt="full", seq=2048, layers=2),
    # OPT: learned positions from the mask's cumsum, queries scaled as projected, relu saving its
    # output, dropout 0.1 on both branches; OPT-125M whole (eager, SDPA, fp32, checkpointing) and
    # OPT-1.3B cut to 2 blocks
    C("opt-125m", 8, "amp-bf16", "adamw", seq=1024),
    C("opt-125m", 4, "fp32", "adamw", seq=1024),
    C("opt-125m", 8, "amp-bf16", "adamw", seq=1024, attention="sdpa"),
    C("opt-125m", 8, "amp-bf16", "adamw", ckpt="full", seq=2048),
    C("opt-1.3b", 4, "amp-fp16", "adamw", seq=2048, layers=2),
    C("stablelm-2-h512", 4, "amp-bf16", "adamw", seq=1024),
    C("stablelm-2-h512", 2, "fp32", "adamw", seq=1024, attention="sdpa"),
    C("stablelm-par-h512", 4, "amp-bf16", "adamw", seq=1024),
    C("stablelm-par-h512", 4, "amp-bf16", "adamw", ckpt="full", seq=1024),
    C("glm-h512", 4, "amp-bf16", "adamw", seq=1024),
    C("glm-h512", 2, "fp32", "adamw", seq=1024, attention="sdpa"),
    C("cohere-h512", 4, "amp-bf16", "adamw", seq=1024),
    C("cohere-h512", 2, "fp32", "adamw", seq=1024),
    C("cohere-h512", 4, "amp-bf16", "adamw", ckpt="full", seq=1024),
    C("cohere2-h512", 2, "amp-bf16", "adamw", seq=2048),
    C("cohere2-h512", 2, "amp-bf16", "adamw", seq=2048, attention="sdpa"),
    C("arcee-h512", 4, "amp-bf16", "adamw", seq=1024, layers=2),
    C("arcee-h512", 2, "fp32", "adamw", seq=1024, layers=2),
    # GPTBigCode (StarCoder's layout): one key-value head split off the fused projection, repeated
    # for eager attention and read grouped by SDPA; its multi-head form; fp32, checkpointing
    C("gpt-bigcode-h512", 4, "amp-bf16", "adamw", seq=1024),
    C("gpt-bigcode-h512", 4, "amp-bf16", "adamw", seq=1024, attention="sdpa"),
    C("gpt-bigcode-h512", 2, "fp32", "adamw", seq=1024),
    C("gpt-bigcode-h512", 4, "amp-bf16", "adamw", ckpt="full", seq=1024),
    C("gpt-bigcode-mha-h512", 4, "amp-bf16", "adamw", seq=1024, attention="sdpa"),
    C("gpt-bigcode-mha-h512", 2, "amp-fp16", "sgd-momentum", seq=1024),
    C("nemotron-h512", 4, "amp-bf16", "adamw", seq=1024, layers=2),
    C("nemotron-h512", 2, "fp32", "adamw", seq=1024, layers=2),
    C("nemotron-h512", 4, "amp-bf16", "adamw", ckpt="full", seq=1024, layers=2),
    # GLM-4-0414: sandwich norms, a fused gate_up_proj, half of each head rotated
    C("glm4-h512", 4, "amp-bf16", "adamw", seq=1024),
    C("glm4-h512", 2, "fp32", "adamw", seq=1024),
    C("glm4-h512", 4, "amp-bf16", "adamw", seq=1024, attention="sdpa"),
    # Llama 4: every token through every expert (bmm over the whole banks), the complex fp32 rotary
    # embedding then the weightless L2 q/k norm, the fourth layer's queries scaled by position, chunks
    # of 512 (the masks under SDPA from seq 1024)
    C("llama4-scout-h512", 2, "amp-bf16", "adamw", seq=1024),
    C("llama4-scout-h512", 1, "fp32", "adamw", seq=1024),
    C("llama4-scout-h512", 2, "amp-bf16", "adamw", ckpt="full", seq=1024),
    C("llama4-scout-h512", 2, "amp-bf16", "adamw", seq=1024, attention="sdpa"),
    C("llama4-maverick-h512", 2, "amp-bf16", "adamw", seq=1024),
    # Granite's mixtures of experts (fp32 router top-k, softmax over the k) and Granite 4.0's
    # attention layers (a fused shared MLP after the experts, or alone; rotary only with "rope")
    C("granitemoe-h512", 4, "amp-bf16", "adamw", seq=1024),
    C("granitemoe-h512", 2, "fp32", "adamw", seq=1024),
    C("granite-4-moe-h512", 4, "amp-bf16", "adamw", seq=1024),
    C("granite-4-moe-h512", 4, "amp-bf16", "adamw", seq=1024, attention="sdpa"),
    C("granite-4-moe-h512", 4, "amp-bf16", "adamw", ckpt="full", seq=1024),
    C("granite-4-micro-h512", 4, "amp-bf16", "adamw", seq=1024),
    C("granite-4-micro-h512", 2, "fp32", "adamw", seq=1024, attention="sdpa"),
    C("granite-4-micro-h512", 4, "amp-fp16", "sgd-momentum", seq=1024),
    # Granite 4.0's H layout: Mamba-2 layers as transformers runs them without mamba-ssm (the
    # chunked scan in fp32 op by op, its einsums under autocast in bf16), one attention layer
    C("granite-4-h-h512", 2, "amp-bf16", "adamw", seq=1024),
    C("granite-4-h-h512", 2, "amp-bf16", "adamw", seq=1024, attention="sdpa"),
    C("granite-4-h-h512", 1, "fp32", "adamw", seq=1024),
    C("granite-4-h-h512", 2, "amp-bf16", "adamw", ckpt="full", seq=1024),
    C("granite-4-h-h512", 2, "amp-bf16", "adamw", seq=1000),
    C("granite-4-h-dense-h512", 2, "amp-bf16", "adamw", seq=1024),
    C("granite-4-h-dense-h512", 1, "fp32", "sgd-momentum", seq=512),
    # Bamba: the same Mamba-2 layers in Llama's decoder, half-rotary attention
    C("bamba-h512", 2, "amp-bf16", "adamw", seq=1024),
    C("bamba-h512", 2, "amp-bf16", "adamw", seq=1024, attention="sdpa"),
    C("bamba-h512", 1, "fp32", "adamw", seq=1024),
    C("bamba-h512", 2, "amp-bf16", "adamw", ckpt="full", seq=1024),
    # Nemotron-H: layers of one mixer each (Mamba-2, attention, ReLU² MLP or ungated experts)
    C("nemotron-h-h512", 2, "amp-bf16", "adamw", seq=1024),
    C("nemotron-h-h512", 2, "amp-bf16", "adamw", seq=1024, attention="sdpa"),
    C("nemotron-h-h512", 1, "fp32", "adamw", seq=1024),
    C("nemotron-h-h512", 2, "amp-bf16", "adamw", ckpt="full", seq=1024),
    C("nemotron-3-nano-h512", 2, "amp-bf16", "adamw", seq=1024),
    C("nemotron-3-nano-h512", 2, "amp-bf16", "adamw", seq=1024, attention="sdpa"),
    C("nemotron-3-nano-h512", 1, "fp32", "adamw", seq=1024),
    C("nemotron-3-nano-h512", 2, "amp-bf16", "adamw", ckpt="full", seq=1024),
    C("nemotron-h-latent-h512", 2, "amp-bf16", "adamw", seq=1024),
    # Ministral 3 (queries scaled by position after the rotary embedding), Ministral's sliding
    # layers, Llama's attention_bias
    C("ministral3-h512", 4, "amp-bf16", "adamw", seq=1024),
    C("ministral3-h512", 4, "amp-bf16", "adamw", seq=1024, attention="sdpa"),
    C("ministral3-h512", 2, "fp32", "adamw", seq=1024),
    C("ministral-h512", 2, "amp-bf16", "adamw", seq=2048),
    C("ministral-h512", 2, "amp-bf16", "adamw", seq=2048, attention="sdpa"),
    C("llama-bias-h512", 4, "amp-bf16", "adamw", seq=1024),
    # Hunyuan (q and k normed per head after the rotary embedding); Seed-OSS (dropout 0.1 on the
    # attention probabilities and on both residual branches, q/k/v biases)
    C("hunyuan-dense-h512", 4, "amp-bf16", "adamw", seq=1024),
    C("hunyuan-dense-h512", 4, "amp-bf16", "adamw", seq=1024, attention="sdpa"),
    C("hunyuan-dense-h512", 2, "fp32", "adamw", seq=1024),
    C("seed-oss-h512", 4, "amp-bf16", "adamw", seq=1024),
    C("seed-oss-h512", 2, "fp32", "adamw", seq=1024),
    C("seed-oss-h512", 4, "amp-bf16", "adamw", ckpt="full", seq=1024),
    # dots.llm1 (Qwen3's attention, GLM-4.5's sparse block: sigmoid router, 2 shared experts)
    C("dots1-h512", 4, "amp-bf16", "adamw", seq=1024),
    C("dots1-h512", 2, "fp32", "adamw", seq=1024),
    C("dots1-h512", 4, "amp-bf16", "adamw", ckpt="full", seq=1024),
    C("dots1-h512", 4, "amp-bf16", "adamw", seq=1024, attention="sdpa"),
    # Hunyuan-A13B's layout: the shared MLP first, the gate's fp32 input
    C("hunyuan-moe-h512", 4, "amp-bf16", "adamw", seq=1024),
    C("hunyuan-moe-h512", 2, "fp32", "adamw", seq=1024),
    C("hunyuan-moe-h512", 4, "amp-bf16", "adamw", ckpt="full", seq=1024),
    C("hunyuan-moe-h512", 4, "amp-bf16", "adamw", seq=1024, attention="sdpa"),
    # Qwen3's attention_bias: biases on q, k, v and o
    C("qwen3-bias-h512", 4, "amp-bf16", "adamw", seq=1024),
    # Real presets cut to 2 blocks
    C("olmoe-1b-7b", 8, "amp-bf16", "adamw", seq=2048, layers=2),
    C("qwen3-30b-a3b", 4, "amp-bf16", "adamw", seq=2048, layers=2),
    C("deepseek-v2-lite", 4, "amp-bf16", "adamw", seq=2048, layers=2),
]


def small_batch_cnn_cases(existing: list) -> list:
    """Each of SMALL_BATCH_CNNS at batch 1, 2, 4 and 8, in fp32 with SGD momentum and with bf16
    autocast and AdamW, at 224 px (cases already listed above are not repeated)."""
    ids = {c["case"] for c in existing}
    cases = [C(m, b, p, o) for m in SMALL_BATCH_CNNS for p, o in (("fp32", "sgd-momentum"), ("amp-bf16", "adamw"))
             for b in (1, 2, 4, 8)]
    return [c for c in cases if c["case"] not in ids]


CASES += small_batch_cnn_cases(CASES)


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header, lineterminator="\n", extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def main() -> None:
    models.moe_models.write_variant_configs(os.path.join(HERE, "moe"))
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", action="append",
                    help="run only cases whose id contains this substring (repeatable: any of them); "
                         "prints, writes nothing")
    ap.add_argument("--update", action="store_true",
                    help="with --only: write the selected cases' rows into the CSV files, keep the others")
    args = ap.parse_args()
    cases = [c for c in CASES if args.only is None or any(o in c["case"] for o in args.only)]
    ids = [c["case"] for c in CASES]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    rows, phase_rows = [], []
    t_all = time.time()
    for c in cases:
        t0 = time.time()
        row, phases, tl = run_case(c, timeline=c["_timeline"] and args.only is None)
        rows.append(row)
        phase_rows.append(phases)
        print(f"{c['case']:60s} peak {row['peak_bytes'] / 2**20:10.1f} MiB  {row['peak_phase']:9s} "
              f"step {phases['peak_step']}  ({time.time() - t0:.1f}s)", flush=True)
        if tl:
            os.makedirs(TIMELINE_DIR, exist_ok=True)
            with open(os.path.join(TIMELINE_DIR, f"{c['case']}.csv"), "w", newline="") as f:
                w = csv.writer(f, lineterminator="\n")
                w.writerow(["event_index", "step", "micro_batch", "phase", "event", "module", "total_bytes"]
                           + [col for col, _ in CATS])
                w.writerows(tl)
    print(f"{len(rows)} cases in {time.time() - t_all:.0f}s")
    print("autocast emulation policies applied:", dict(sorted(cuda_emulation.STATS.items())))
    plateau_rows = [p.pop("_plateau") for p in phase_rows]
    if args.only is not None and args.update:
        rows = merged(OUT_CSV, rows, ids)
        phase_rows = merged(OUT_PHASES, phase_rows, ids)
        plateau_rows = merged(OUT_PLATEAU, plateau_rows, ids) if os.path.exists(OUT_PLATEAU) else plateau_rows
    if args.only is None or args.update:
        write_csv(OUT_CSV, HEADER, rows)
        write_csv(OUT_PHASES, PHASE_HEADER, phase_rows)
        write_csv(OUT_PLATEAU, PLATEAU_HEADER, plateau_rows)
        print(f"wrote {OUT_CSV}, {OUT_PHASES} and {OUT_PLATEAU}")


def merged(path: str, new_rows: list, order: list) -> list:
    """The rows of `path` with `new_rows` in place of (or beside) those of
    their case, in the order of the case list; a row written before the
    `layers` column existed is of an uncut model."""
    with open(path, newline="") as f:
        old = {r["case"]: {"layers": 0, **r} for r in csv.DictReader(f)}
    old.update({r["case"]: r for r in new_rows})
    return [old[c] for c in order if c in old]


if __name__ == "__main__":
    main()
