#!/usr/bin/env python3
"""Write multimodal_counts.csv: exact parameter counts of multimodal checkpoints,
whole and split into the language model and everything else (the vision
encoder and its projector), for the configs in multimodal/*.json.

total          = sum(p.numel() for p in model.parameters())  (tied weights once)
language_model = the parameters under `model.language_model`, plus `lm_head`
                 where it is not tied to the embedding (Llama 4: under
                 `language_model`, its `ForCausalLM` with the head)
encoders       = total - language_model

Each model is `AutoModelForImageTextToText.from_config` of its config on the
meta device (no memory, no weights, no downloads); transformers' version is
pinned in requirements-lock.txt.

Usage (from the repo root):
    tests/reference/.venv/bin/python tests/reference/multimodal_counts.py
"""

from __future__ import annotations

import csv
import glob
import json
import os

import torch
import transformers
from transformers import AutoModelForImageTextToText

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "multimodal_counts.csv")


def counts(config: dict) -> tuple[int, int]:
    cfg = transformers.CONFIG_MAPPING[config["model_type"]](**{k: v for k, v in config.items() if k != "model_type"})
    with torch.device("meta"):
        model = AutoModelForImageTextToText.from_config(cfg)
    seen, total, language = set(), 0, 0
    for name, p in model.named_parameters(remove_duplicate=False):
        if id(p) in seen:
            continue
        seen.add(id(p))
        total += p.numel()
        if name.startswith(("model.language_model.", "lm_head.", "language_model.")):
            language += p.numel()
    return total, language


def main() -> None:
    rows = []
    for path in sorted(glob.glob(os.path.join(HERE, "multimodal", "*.json"))):
        with open(path) as f:
            config = json.load(f)
        total, language = counts(config)
        mid = os.path.splitext(os.path.basename(path))[0]
        rows.append((mid, total, language, total - language, f"transformers {transformers.__version__}"))
        print(f"{mid:24s} {total:>15,d} {language:>15,d} {total - language:>13,d}", flush=True)
    with open(OUT, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "total", "language_model", "encoders", "source"])
        w.writerows(rows)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
