"""Reference data from DeepSpeed's own ZeRO-2 / ZeRO-3 model-state memory estimators.

Calls, from the installed PyPI package (version pinned in requirements.txt):

    deepspeed.runtime.zero.stage_1_and_2.estimate_zero2_model_states_mem_needs
    deepspeed.runtime.zero.stage3.estimate_zero3_model_states_mem_needs

over a grid of models x gpus_per_node x nodes x offload options, and writes
deepspeed_estimates.csv next to this file. Every number in the CSV is returned by
DeepSpeed itself; nothing is computed here except a closed-form cross-check
(exact integer arithmetic) that is printed and makes the script exit 1 on mismatch.

CPU only: the estimators are plain arithmetic; DS_ACCELERATOR=cpu is set (unless
already set) so that importing deepspeed never probes for CUDA.

Usage (from the repository root):
    tests/reference/.venv/bin/python tests/reference/deepspeed_estimates.py
"""

import csv
import inspect
import os
import sys
from fractions import Fraction
from math import floor
from pathlib import Path

os.environ.setdefault("DS_ACCELERATOR", "cpu")

import deepspeed  # noqa: E402
from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs  # noqa: E402
from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs  # noqa: E402

OUT = Path(__file__).resolve().parent / "deepspeed_estimates.csv"

HEADER = [
    "stage", "total_params", "largest_layer_params", "gpus_per_node", "nodes",
    "offload_optimizer", "offload_params", "zero_init", "cpu_bytes", "gpu_bytes",
]

# (name, total_params, largest_layer_params). Names are for this script only (the CSV
# has no model column). largest = the largest single module's own parameters, as
# DeepSpeed's model_to_params computes it (here: the token embedding / lm_head).
MODELS = [
    ("gpt2", 124439808, 38597376),                 # wte 50257 x 768 (tied lm_head)
    ("llama-2-7b", 6738415616, 131072000),         # embed_tokens / lm_head 32000 x 4096
    ("t5-3b (DeepSpeed docs)", 2851000000, 32000000),
    ("t5 (DeepSpeed docs)", 737668096, 32899072),
    ("llama-3-70b", 70553706496, 1050673152),      # embed_tokens / lm_head 128256 x 8192
]
GPUS_PER_NODE = [1, 2, 4, 8]
NODES = [1, 2, 4]
BUFFER = 1.5  # DeepSpeed's default additional_buffer_factor (passed explicitly below)

# Option order as in DeepSpeed's own *_all_cold tables: offload first; for ZeRO-3 the
# combination (offload_optimizer=False, offload_params=True) is skipped, exactly as
# estimate_zero3_model_states_mem_needs_all_cold does (the function ignores
# cpu_offload_params when cpu_offload is False).
ZERO2_OPTIONS = [True, False]  # cpu_offload
ZERO3_OPTIONS = [  # (cpu_offload, cpu_offload_params, zero_init)
    (True, True, True), (True, True, False),
    (True, False, True), (True, False, False),
    (False, False, True), (False, False, False),
]

EXPECTED_SIGNATURES = {
    estimate_zero2_model_states_mem_needs:
        "(total_params, num_gpus_per_node=1, num_nodes=1, cpu_offload=True, additional_buffer_factor=1.5)",
    estimate_zero3_model_states_mem_needs:
        "(total_params, largest_layer_params, num_gpus_per_node=1, num_nodes=1, cpu_offload=True, "
        "cpu_offload_params=True, zero_init=True, additional_buffer_factor=1.5)",
}


# ---- closed-form cross-check (exact rationals, floor = Python int() of a positive float) ----
def _f(x):
    return floor(Fraction(x))


def expected_zero2(P, gpn, nodes, offload):
    G = gpn * nodes
    b = Fraction(3, 2)
    if offload:
        return _f(P * max(4 * G, 16) * b), 2 * P
    return _f(P * 4 * gpn * b), 2 * P + _f(Fraction(18 * P, G))


def expected_zero3(P, L, gpn, nodes, off_opt, off_par, zinit):
    G = gpn * nodes
    b = Fraction(3, 2)
    f = Fraction(1, nodes)
    largest = 4 * L
    if off_opt and off_par:
        gpu = largest
        cpu = P * 18 * f * b if zinit else P * max(4 * gpn, 18 * f) * b
    elif off_opt:
        gpu = largest + _f(Fraction(2 * P, G))
        cpu = P * 16 * f * b if zinit else P * max(4 * gpn, 16 * f) * b
    else:
        gpu = largest + _f(Fraction(18 * P, G))
        cpu = L * 4 * gpn * b if zinit else P * 4 * gpn * b
    return _f(cpu), gpu


def main():
    for fn, sig in EXPECTED_SIGNATURES.items():
        got = str(inspect.signature(fn))
        if got != sig:
            sys.exit(f"{fn.__module__}.{fn.__name__}: signature changed:\n  got      {got}\n  expected {sig}")

    rows, mismatches = [], []
    for name, P, L in MODELS:
        for gpn in GPUS_PER_NODE:
            for nodes in NODES:
                for off in ZERO2_OPTIONS:
                    cpu, gpu = estimate_zero2_model_states_mem_needs(
                        total_params=P, num_gpus_per_node=gpn, num_nodes=nodes,
                        cpu_offload=off, additional_buffer_factor=BUFFER)
                    assert type(cpu) is int and type(gpu) is int, (cpu, gpu)
                    row = [2, P, 0, gpn, nodes, int(off), 0, 0, cpu, gpu]
                    rows.append(row)
                    if (cpu, gpu) != expected_zero2(P, gpn, nodes, off):
                        mismatches.append((name, row, expected_zero2(P, gpn, nodes, off)))
    for name, P, L in MODELS:
        for gpn in GPUS_PER_NODE:
            for nodes in NODES:
                for off_opt, off_par, zinit in ZERO3_OPTIONS:
                    cpu, gpu, largest = estimate_zero3_model_states_mem_needs(
                        total_params=P, largest_layer_params=L, num_gpus_per_node=gpn,
                        num_nodes=nodes, cpu_offload=off_opt, cpu_offload_params=off_par,
                        zero_init=zinit, additional_buffer_factor=BUFFER)
                    assert type(cpu) is int and type(gpu) is int, (cpu, gpu)
                    assert largest == 4 * L, (largest, L)
                    row = [3, P, L, gpn, nodes, int(off_opt), int(off_par), int(zinit), cpu, gpu]
                    rows.append(row)
                    exp = expected_zero3(P, L, gpn, nodes, off_opt, off_par, zinit)
                    if (cpu, gpu) != exp:
                        mismatches.append((name, row, exp))

    with open(OUT, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(HEADER)
        w.writerows(rows)

    print(f"deepspeed {deepspeed.__version__} ({Path(deepspeed.__file__).parent})")
    print(f"wrote {len(rows)} rows to {OUT}")
    print(f"closed-form cross-check: {len(rows) - len(mismatches)}/{len(rows)} rows equal")
    for name, row, exp in mismatches:
        print(f"  MISMATCH {name}: {row} expected (cpu, gpu) = {exp}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
