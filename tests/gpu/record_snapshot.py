"""Records a CUDA memory snapshot and memory_stats() of two training steps of
GPT-2 (124M, from its config: no download) on the GPU this runs on, for
`vramfit estimate --measured` and the page's "Compare with a measurement".

Usage (a machine with an NVIDIA GPU, torch and transformers installed):
    python tests/gpu/record_snapshot.py [--batch 8] [--seq 512] [--amp]
Writes tests/reference/snapshots/gpt2_b{B}_s{S}_{fp32|amp-bf16}_adamw.pickle
(torch.cuda.memory._dump_snapshot) and .memory_stats.json beside it, and
prints the vramfit command that compares them. Add the GPU, driver and
torch versions it prints to tests/reference/snapshots/README.md, then rerun
tests/reference/snapshots/summarise.py.
"""

import argparse
import json
import os

import torch
from transformers import GPT2Config, GPT2LMHeadModel

p = argparse.ArgumentParser()
p.add_argument("--batch", type=int, default=8)
p.add_argument("--seq", type=int, default=512)
p.add_argument("--amp", action="store_true", help="torch.autocast(bfloat16)")
a = p.parse_args()

torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(attn_implementation="eager")).cuda().train()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
ids = torch.randint(0, 50257, (a.batch, a.seq), device="cuda")
torch.cuda.memory._record_memory_history(max_entries=1_000_000)
for _ in range(2):
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=a.amp):
        loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
torch.cuda.synchronize()

precision = "amp-bf16" if a.amp else "fp32"
here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference", "snapshots")
base = os.path.join(here, f"gpt2_b{a.batch}_s{a.seq}_{precision}_adamw")
torch.cuda.memory._dump_snapshot(base + ".pickle")
torch.cuda.memory._record_memory_history(enabled=None)
with open(base + ".memory_stats.json", "w") as f:
    json.dump(torch.cuda.memory_stats(), f)
print(torch.cuda.get_device_name(), "torch", torch.__version__, "CUDA", torch.version.cuda)
print(f"vramfit estimate --model gpt2 --batch {a.batch} --seq {a.seq} --precision {precision} "
      f"--optimizer adamw --attention eager --measured {os.path.relpath(base)}.pickle")
