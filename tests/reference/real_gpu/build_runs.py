"""Writes `runs.csv`: published real-GPU memory measurements, one row per run.

Hugging Face's and torchtitan's rows are transcribed below, each with the
exact published line; milabench's rows are read from its scaling files
(`config/scaling/<GPU>.yaml`, "observations") in a milabench git directory,
with the library versions pinned at the commit that last changed each file:

    python build_runs.py --milabench /path/to/milabench/.git > runs.csv

Only the standard library and PyYAML are needed. The README in this folder
says what each source measured and what vramfit cannot reproduce from it.
"""

import argparse
import csv
import subprocess
import sys

import yaml

MIB = 1 << 20
GIB = 1 << 30

COLUMNS = [
    "id", "source", "source_url", "quote", "fidelity",
    "gpu", "model", "batch", "seq", "image", "precision", "optimizer",
    "optimizer_impl", "zero_grad", "attention", "checkpointing", "grad_accum",
    "strategy", "gpus_per_node", "nodes", "allocator_conf", "loop_outputs",
    "pytorch", "autocast_region", "torch_version", "cuda_version", "driver",
    "device_used_bytes", "device_reading", "reading_source",
    "reserved_bytes", "allocated_bytes",
    "context_used_bytes", "measured_when", "notes",
]

# --- Hugging Face, "Efficient Training on a Single GPU" (January 2022) -----
HF_URL = (
    "https://github.com/huggingface/transformers/blob/"
    "6019817d4a6489e5d03af5d04948114e835bcdfb/docs/source/perf_train_gpu_one.mdx"
)
HF_COMMON = dict(
    source="hf-perf-train-gpu-one",
    # model.zero_grad() before torch 2.0: set_to_none=False (gradients kept as zeros).
    zero_grad="zeros",
    source_url=HF_URL,
    fidelity="exact",
    gpu="v100-16gb",
    model="bert-large",
    seq=512,
    image=0,
    attention="eager",
    strategy="single",
    gpus_per_node=1,
    nodes=1,
    # Trainer.compute_loss returns the loss alone: the outputs go before backward.
    loop_outputs="dropped",
    # torch is not stated, but nvidia-smi is dated 2022-01-11 and torch 1.11
    # was released on 2022-03-10: a 1.10-or-older autograd (softmax saves its input).
    pytorch="1.10",
    # Trainer.training_step: compute_loss under autocast, backward outside it.
    autocast_region="forward",
    torch_version="",
    cuda_version="",
    driver="460.91.03",
    reserved_bytes="",
    allocated_bytes="",
    # "torch.ones((1, 1)).to("cuda")" then NVML used: "GPU memory occupied: 1343 MB."
    context_used_bytes=1343 * MIB,
    measured_when="nvml-used-after-train",
    # pynvml's nvmlDeviceGetMemoryInfo without a version is NVML v1; on driver
    # 460 (before R510) its `used` leaves the driver's reservation out, as the
    # guide's idle reading of 0 MB shows.
    device_reading="nvml-v1-used",
    reading_source=(
        'print_gpu_utilization(): "info = nvmlDeviceGetMemoryInfo(handle)" / '
        '"print(f\"GPU memory occupied: {info.used//1024**2} MB.\")"; before anything '
        'was loaded: "GPU memory occupied: 0 MB." (driver 460.91.03)'
    ),
)
HF_NOTE = (
    "Trainer on BertForSequenceClassification (bert-large-uncased; 2 labels); "
    "NVML used (info.used//1024**2; printed as MB; these are MiB) read once after "
    "trainer.train() returned (128 optimizer steps of 512 random sequences); the "
    "caching allocator still holds its segments and the optimizer state. "
    "V100-SXM2 16160 MiB; driver 460.91.03 (nvidia-smi: CUDA Version 11.2; "
    "the toolkit torch was built with is not stated); torch and transformers "
    "versions not stated (nvidia-smi dated 2022-01-11). "
    "The guide's --optim choices (adamw_hf, adamw_torch, adamw_apex_fused, adafactor) are exactly "
    "transformers 4.16's OptimizerNames (inferred; the version is not stated); in 4.16.2's "
    "trainer.py the default is adamw_hf (transformers.AdamW, a loop over parameters), gradients "
    "are zeroed with model.zero_grad() (kept as zeros, not freed: set_to_none defaulted to False "
    "before torch 2.0) and nothing empties the allocator's cache after training. "
    "Attention: BERT had only its eager implementation then. "
    "The model was loaded before training (NVML 2631 MB with weights)."
)
# (id suffix, batch, grad_accum, checkpointing, precision, optimizer, impl, quote, MiB, extra note)
HF_RUNS = [
    ("vanilla", 4, 1, "none", "fp32", "adamw", "loop", "GPU memory occupied: 14949 MB.", 14949, ""),
    ("ga4", 1, 4, "none", "fp32", "adamw", "loop", "GPU memory occupied: 8681 MB.", 8681, ""),
    ("ga4-ckpt", 1, 4, "full", "fp32", "adamw", "loop", "GPU memory occupied: 6775 MB.", 6775,
     "gradient_checkpointing=True (every BertLayer)."),
    ("fp16", 4, 1, "none", "amp-fp16", "adamw", "loop", "GPU memory occupied: 13939 MB.", 13939,
     "fp16=True: torch.cuda.amp autocast + GradScaler (fp32 weights)."),
    ("ga4-ckpt-fp16", 1, 4, "full", "amp-fp16", "adamw", "loop", "GPU memory occupied: 7275 MB.", 7275,
     "fp16=True: torch.cuda.amp autocast + GradScaler."),
    ("adafactor", 4, 1, "none", "fp32", "adafactor", "loop", "GPU memory occupied: 12295 MB.", 12295,
     "optim=adafactor: transformers.Adafactor (factored second moment; no first moment)."),
    ("ga4-ckpt-fp16-adafactor", 1, 4, "full", "amp-fp16", "adafactor", "loop",
     "GPU memory occupied: 4847 MB.", 4847, "optim=adafactor."),
    ("adam8bit", 4, 1, "none", "fp32", "adamw-8bit", "loop", "GPU memory occupied: 13085 MB.", 13085,
     "bnb.optim.Adam8bit passed to the Trainer (two parameter groups; weight decay on all but "
     "bias and LayerNorm); same state as AdamW8bit."),
    ("ga4-ckpt-fp16-adam8bit", 1, 4, "full", "amp-fp16", "adamw-8bit", "loop",
     "GPU memory occupied: 5363 MB.", 5363, "bnb.optim.Adam8bit."),
]


def hf_rows():
    for suffix, batch, ga, ckpt, prec, opt, impl, quote, mib, extra in HF_RUNS:
        yield dict(
            HF_COMMON,
            id=f"hf-bert-large-{suffix}",
            quote=quote,
            batch=batch,
            grad_accum=ga,
            checkpointing=ckpt,
            precision=prec,
            optimizer=opt,
            optimizer_impl=impl,
            device_used_bytes=mib * MIB,
            notes=(HF_NOTE + " " + extra).strip(),
        )


# --- torchtitan, benchmarks/llama3_h100_202412_torchtitan.md --------------
TT_URL = (
    "https://github.com/pytorch/torchtitan/blob/"
    "820504e20d1149fbf0b98c567af24c4b0433b22d/benchmarks/llama3_h100_202412_torchtitan.md"
)
TT_NOTE = (
    "Memory(GiB) is torchtitan's logged max_reserved (torch.cuda.memory_stats() "
    "reserved_bytes.all.peak; torchtitan/metrics.py at 9dec370), read at step 90; the "
    "table gives one decimal (+-0.05 GiB). torch 1963fc8 (2024-12-23 nightly), torchtitan "
    "9dec370. H100 with 96 GB HBM2e (Grand Teton), no vramfit preset of that size: the "
    "80 GB h100-sxm stands in (reserved does not depend on the capacity here). "
    "seq_len 8192 and AdamW (foreach; fused off by default) are the defaults of "
    "train_configs/llama3_8b.toml at 9dec370; the table does not state them. "
    "FSDP2 with bf16 parameters for compute and fp32 reduction (torchtitan's defaults), "
    "SDPA attention. Selective AC is torchtitan's per-op policy (train_configs/llama3_8b.toml "
    "at 9dec370: mode 'selective', selective_ac_option 'op': keep the outputs of every other "
    "matmul and of SDPA; torchtitan/parallelisms/parallelize_llama.py), vramfit's "
    "checkpointing selective-op; run_llama_train.sh at 9dec370 sets "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True. Approximate: the 96 GB GPU and "
    "FSDP2's fp32 reduce-scatter buffers (reduce_dtype float32) are not vramfit's."
)
TT_COMMON = dict(
    source="torchtitan-llama3-h100-202412",
    source_url=TT_URL,
    fidelity="approx",
    gpu="h100-sxm",
    model="llama-3.1-8b",
    batch=2,
    seq=8192,
    image=0,
    precision="amp-bf16",
    optimizer="adamw",
    optimizer_impl="foreach",
    zero_grad="set-to-none",
    attention="sdpa",
    checkpointing="selective-op",
    grad_accum=1,
    strategy="fsdp-full",
    allocator_conf="expandable_segments:True",
    # train.py: "pred = model(input_ids)", "loss = loss_fn(pred, labels)", "del pred".
    loop_outputs="dropped",
    pytorch="current",
    # FSDP2's mixed-precision policy casts; no autocast.
    autocast_region="forward",
    torch_version="2.6.0.dev20241223 (1963fc8)",
    cuda_version="",
    driver="",
    device_used_bytes="",
    allocated_bytes="",
    context_used_bytes="",
    measured_when="max-reserved-step-90",
    notes=TT_NOTE,
)
TT_RUNS = [
    ("tt-llama3.1-8b-fsdp8", 8, 1, "| FSDP | 5,762 | 82.4 |", 82.4,
     "Table 1: 8 GPUs; local batch 2; global batch 16."),
    ("tt-llama3.1-8b-fsdp128", 8, 16, "| FSDP | 5,605 | 67.0 |", 67.0,
     "Table 3: 128 GPUs; local batch 2; global batch 256."),
]


def torchtitan_rows():
    for rid, per_node, nodes, quote, gib, extra in TT_RUNS:
        yield dict(
            TT_COMMON,
            id=rid,
            quote=quote,
            gpus_per_node=per_node,
            nodes=nodes,
            reserved_bytes=round(gib * GIB),
            device_reading="",
            reading_source="",
            notes=TT_NOTE + " " + extra,
        )


# --- milabench, config/scaling/<GPU>.yaml ---------------------------------
# (scaling file, vramfit GPU preset, what the preset stands for)
MILABENCH_GPUS = [
    ("H100", "h100-sxm", "H100 80 GB (SXM or PCIe not stated; both presets model the same memory)"),
    ("H200", "h200", "H200 141 GB"),
    ("L40S", "l40s", "L40S 48 GB"),
]
HF_BENCH = "benchmarks/huggingface/requirements.cuda.txt"
HF_LOOP = (
    "benchmarks/huggingface/bench/__main__.py: torch.optim.Adam; no zero_grad (gradients "
    "accumulate in place); --precision *fp16 = autocast(fp16) + GradScaler, fp32 and tf32 "
    "no autocast (tf32 changes the matmul math, not the memory); synthetic input_ids and "
    "labels of the model's train_length."
)
BERT_NOTE = (
    "benchmarks/huggingface/bench/models.py Bert: AutoModelForMaskedLM.from_config(BertConfig()) "
    "(bert-base: BertForMaskedLM, the MLM head tied to the word embeddings, no pooler), "
    "train_length 512, labels at every position; transformers' default attention for BERT "
    "(SDPA since 4.41). " + HF_LOOP
)
# Both loops keep the model's output through backward and the optimizer step:
# torchvision/main.py's "output = model(inp)" stays in scope for the loop body,
# huggingface/bench/__main__.py's "outputs = self.model(**data)" for step().
# milabench name: the vramfit configuration of its runs, the requirements file
# its versions are pinned in, and a note.
# torchvision/main.py's train_epoch runs "scaler.scale(loss).backward()" and the
# optimizer step inside "with scaling(...)" (autocast); huggingface/bench's
# step() leaves its "with self.amp_context()" after the forward.
TORCHVISION_REGION = "backward"
# What every torchvision loop shares: 224x224 images, SGD (lr only), its
# optimizer.zero_grad() each step (torch 2: set_to_none), no attention.
TORCHVISION = dict(
    seq=0, image=224, optimizer="sgd", zero_grad="set-to-none", attention="none",
    autocast_region=TORCHVISION_REGION, reqs="benchmarks/torchvision/requirements.cuda.txt",
)
MILABENCH_BENCHES = {
    "resnet50": dict(
        TORCHVISION, model="resnet50", precision="amp-fp16",
        note="benchmarks/torchvision/main.py: torchvision resnet50; channels_last; SGD (lr only: "
        "no momentum); --precision tf32-fp16 = autocast(fp16) + GradScaler, the input batch "
        "cast to fp16; FakeImageNet 224x224 via the pytorch DataLoader (pin_memory); "
        "optimizer.zero_grad() each step.",
    ),
    **{
        f"convnext_large-{p}": dict(
            TORCHVISION, model="convnext_large",
            precision="amp-fp16" if p.endswith("fp16") else "fp32",
            note="benchmarks/torchvision/main.py: torchvision convnext_large (no channels_last: "
            "only resnet50 passes --optim channel_last); SGD (lr only); --precision " + p + (
                " = autocast(fp16) + GradScaler, the input batch cast to fp16"
                if p.endswith("fp16") else " = no autocast (tf32 changes the math, not the memory)"
            ) + "; FakeImageNet 224x224 via the pytorch DataLoader; optimizer.zero_grad() each step.",
        )
        for p in ("fp32", "tf32", "fp16", "tf32-fp16")
    },
    "regnet_y_128gf": dict(
        TORCHVISION, model="regnet_y_128gf", precision="amp-fp16",
        note="benchmarks/torchvision/main.py: torchvision regnet_y_128gf; SGD (lr only); the "
        "_torchvision default --precision tf32-fp16 = autocast(fp16) + GradScaler, the input batch "
        "cast to fp16; FakeImageNet 224x224 via the pytorch DataLoader; optimizer.zero_grad() "
        "each step.",
    ),
    "resnet152-ddp-gpus": dict(
        TORCHVISION, model="resnet152", precision="amp-bf16",
        strategy="ddp", gpus_per_node=8, fidelity="approx",
        reqs="benchmarks/torchvision_ddp/requirements.cuda.txt",
        note="benchmarks/torchvision_ddp/main.py: torchvision resnet152 in DDP(device_ids=[rank]) "
        "(25 MB buckets, gradient_as_bucket_view off), one process per GPU, the batch per GPU; "
        "SGD(lr=1e-3); _run_batch runs zero_grad, the forward, backward and the step inside "
        "autocast(bfloat16), the input in fp32; FakeImageNet 224x224 via the DataLoader. "
        "approx: world_size = accelerator.device_count(), not stated (8 assumed; DDP's memory "
        "per GPU does not depend on it), and the NVML reading holds NCCL's own buffers, which "
        "vramfit gives as a range outside its device figure.",
    ),
    "t5": dict(
        model="t5-small", seq=1024, image=0, precision="amp-fp16", optimizer="adam",
        # t5 never zeroes, so its gradients stay allocated like zeros.
        zero_grad="zeros", attention="eager", autocast_region="forward", reqs=HF_BENCH,
        note="benchmarks/huggingface: AutoModelForSeq2SeqLM.from_config(t5-small) (fp32 weights); "
        "input_ids and labels of 1024 tokens; torch.optim.Adam; --precision tf32-fp16 = "
        "autocast(fp16) + GradScaler; no zero_grad (gradients accumulate in place).",
    ),
    **{
        f"bert-{p}": dict(
            model="bert-base-mlm", seq=512, image=0,
            precision="amp-fp16" if p.endswith("fp16") else "fp32", optimizer="adam",
            zero_grad="zeros", attention="sdpa", autocast_region="forward", reqs=HF_BENCH,
            note=BERT_NOTE,
        )
        for p in ("fp32", "tf32", "fp16", "tf32-fp16")
    },
}
MILABENCH_NOTE = (
    "milabench scaling observation: 'memory' is the maximum over the run of the device's "
    "NVML memory used, as voir's GPU monitor polls it (milabench/sizer.py push_observation: "
    "max_usage). Versions are the pins at the commit that last changed the scaling file."
)


def git(repo, *args):
    return subprocess.run(
        ["git", "--git-dir", repo, *args], check=True, capture_output=True, text=True
    ).stdout


def pinned(requirements, name):
    for line in requirements.splitlines():
        if line.startswith(name + "=="):
            return line.split("==", 1)[1].strip()
    return ""


def milabench_rows(repo):
    for fname, gpu, gpu_note in MILABENCH_GPUS:
        path = f"config/scaling/{fname}.yaml"
        commit = git(repo, "log", "-1", "--format=%H", "--", path).strip()
        data = yaml.safe_load(git(repo, "show", f"{commit}:{path}"))
        for bench, b in MILABENCH_BENCHES.items():
            requirements = git(repo, "show", f"{commit}:{b['reqs']}")
            torch_version = pinned(requirements, "torch")
            cuda = pinned(requirements, "nvidia-cuda-runtime-cu12")
            transformers = pinned(requirements, "transformers")
            voir = pinned(requirements, "voir")
            nvml_py = pinned(requirements, "nvidia-ml-py")
            nvml_py = (
                f"{nvml_py} (pinned)" if nvml_py
                else "(not pinned here; voir's cuda extra asks >=12.570.86)"
            )
            pins = f" transformers {transformers} (pinned)." if transformers else ""
            obs = (data.get(bench) or {}).get("observations", [])
            # One row per batch size: runs that differ only in CPU count read
            # the same memory; keep the 8-CPU one where there is one.
            by_batch = {}
            for o in obs:
                size = o["batch_size"]
                if size not in by_batch or o.get("cpu") == 8:
                    by_batch[size] = o
            for size, o in sorted(by_batch.items()):
                mib = int(str(o["memory"]).split()[0])
                quote = (
                    f"- {{batch_size: {size}, cpu: {o['cpu']}, memory: {o['memory']}, "
                    f"perf: {o['perf']}, time: {o['time']}}}"
                )
                yield dict(
                    id=f"milabench-{fname.lower()}-{bench}-b{size}",
                    source=f"milabench-scaling-{fname}",
                    source_url=f"https://github.com/mila-iqia/milabench/blob/{commit}/{path}",
                    quote=quote,
                    fidelity=b.get("fidelity", "exact"),
                    gpu=gpu,
                    model=b["model"],
                    batch=size,
                    seq=b["seq"],
                    image=b["image"],
                    precision=b["precision"],
                    optimizer=b["optimizer"],
                    optimizer_impl="foreach",
                    zero_grad=b["zero_grad"],
                    attention=b["attention"],
                    checkpointing="none",
                    grad_accum=1,
                    strategy=b.get("strategy", "single"),
                    gpus_per_node=b.get("gpus_per_node", 1),
                    nodes=1,
                    loop_outputs="kept",
                    pytorch="current",
                    autocast_region=b["autocast_region"],
                    torch_version=torch_version,
                    cuda_version=cuda,
                    driver="",
                    device_used_bytes=mib * MIB,
                    # voir's monitor reads NVML v1 `used`; with a CUDA 12 runtime
                    # the driver is R525 or later, so it counts the reservation.
                    device_reading="nvml-v1-used",
                    reading_source=(
                        f"voir {voir} (pinned) src/voir/instruments/gpu/cuda.py: "
                        '"memInfo = pynvml.nvmlDeviceGetMemoryInfo(handle)", '
                        '"used": memInfo.used / 1024 / 1024; nvidia-ml-py '
                        f"{nvml_py}: def nvmlDeviceGetMemoryInfo(handle, "
                        'version=None): "if not version: c_memory = c_nvmlMemory_t()"'
                    ),
                    reserved_bytes="",
                    allocated_bytes="",
                    context_used_bytes="",
                    measured_when="nvml-used-max-over-run",
                    notes=f"{MILABENCH_NOTE} {b['note']} GPU: {gpu_note}.{pins}",
                )


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--milabench", required=True, help="a milabench git directory")
    args = p.parse_args()
    w = csv.DictWriter(sys.stdout, fieldnames=COLUMNS, restval="", lineterminator="\n")
    w.writeheader()
    for row in [*hf_rows(), *torchtitan_rows(), *milabench_rows(args.milabench)]:
        w.writerow(row)


if __name__ == "__main__":
    main()
