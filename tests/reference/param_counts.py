#!/usr/bin/env python3
"""Write param_counts.csv: exact parameter counts of reference models (the presets, and the
reference variants whose config.json memory_reference.py writes to moe/), and
moe_active_params.csv: the parameters one token reads in each mixture of experts.

params = sum(p.numel() for p in model.parameters())  (tied weights counted once)
active = params - (E - k) / E of every routed-expert bank (moe_models.active_params)

Every model is built on the meta device (no memory, no weights, no downloads).

Usage (from the repo root):
    tests/reference/.venv/bin/python tests/reference/param_counts.py
"""

from __future__ import annotations

import csv
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "param_counts.csv")
OUT_ACTIVE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "moe_active_params.csv")


def main() -> None:
    rows, active = [], []
    for mid in models.PARAM_COUNT_IDS + list(models.moe_models.VARIANTS):
        with torch.device("meta"):
            m, source = models.build(mid)
        n = sum(p.numel() for p in m.parameters())
        rows.append((mid, n, source))
        print(f"{mid:20s} {n:>15,d}", flush=True)
        if mid in models.moe_models.PRESETS and models.moe_models.experts_of(m):
            active.append((mid, n, models.moe_models.active_params(m, mid)))
        del m
    with open(OUT, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "params", "source"])
        w.writerows(rows)
    with open(OUT_ACTIVE, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "params", "active_params"])
        w.writerows(active)
    print(f"wrote {OUT} and {OUT_ACTIVE}")


if __name__ == "__main__":
    main()
