"""Measures what training really uses on an NVIDIA GPU, for vramfit to be held to.

Trains two steps of each configuration below (ResNet-50, MobileNetV2,
BERT-base/large, GPT-2, a small Llama and a small Mixtral; fp32 and AMP
bf16; AdamW foreach and fused; with and without
`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`; and GPT-2, a small
GPT-NeoX and a small Phi-3 with transformers' `use_cache` on and off, whose
training cache copies the keys and values: the `training_cache` column), each in a fresh
process (the allocator reads its settings once, at start), and writes one CSV
row per configuration with the same configuration columns as
`tests/reference/real_gpu/runs.csv`, which `crates/vramfit-core/tests/real_gpu.rs`
reads from `tests/reference/real_gpu/measured/`:

    tests/gpu/memory_truth.sh                       # on the GPU machine
    python tests/gpu/memory_truth.py --dry-run      # anywhere: CPU, tiny steps, temp dir

Measured per row: `torch.cuda.max_memory_allocated()`,
`max_memory_reserved()`, the device's NVML used before the process touched
CUDA, after CUDA initialised (the context) and after the two steps (and this
process's own NVML figure), a few `memory_stats()` fields, and the caching
allocator's segments (`torch.cuda.memory_snapshot()`: count and sizes by
pool). One configuration also saves `torch.cuda.memory._snapshot()` as a
pickle (with the allocation history) for vramfit's snapshot overlay. The
whole run keeps within a time budget (8 minutes by default); a configuration
that would not fit in what is left is written as skipped.

First, before any training, the libraries probe: in a fresh process for
each of `CUDA_MODULE_LOADING=LAZY` and `EAGER`, the device's NVML used
before CUDA, after the context, and after the first use of each library
kernel a training step loads (a cuBLAS matmul in fp32 and bf16, a cuBLASLt
linear with bias, cuDNN's convolution forward and backward in fp32 and
bf16, the flash and memory-efficient attention kernels), with what the
caching allocator held at each step, so that what the context and the
libraries' kernel images take on this GPU, driver and CUDA is measured
rather than assumed: `measured/libraries/libraries_<gpu>_<time>.csv`
(a folder of its own: it is not a run for `real_gpu.rs`).
"""

import argparse
import csv
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "..", "reference", "real_gpu", "measured")

# The configuration columns of runs.csv, then what this script measures.
CONFIG_COLUMNS = [
    "id", "source", "source_url", "quote", "fidelity",
    "gpu", "model", "batch", "seq", "image", "precision", "optimizer",
    "optimizer_impl", "attention", "checkpointing", "grad_accum",
    "zero_grad", "loop_outputs", "pytorch", "autocast_region", "training_cache", "attention_mask",
    "strategy", "gpus_per_node", "nodes",
    "torch_version", "cuda_version", "driver",
    "device_used_bytes", "device_reading", "reading_source",
    "reserved_bytes", "allocated_bytes",
    "context_used_bytes", "measured_when", "notes",
]
MEASURED_COLUMNS = [
    "status", "allocator_conf", "gpu_name", "gpu_total_bytes", "cudnn_version",
    "library", "nvml_device_used_idle_bytes", "nvml_device_used_after_bytes",
    "nvml_process_used_after_bytes", "reserved_after_bytes", "active_peak_bytes",
    "requested_peak_bytes", "inactive_split_peak_bytes", "reserved_large_peak_bytes",
    "reserved_small_peak_bytes", "num_alloc_retries", "num_device_alloc",
    "segments", "segments_large", "segments_small", "segment_bytes_largest",
    "segment_sizes_mib", "stack_per_thread_bytes", "snapshot_file", "seconds",
]

# vramfit GPU preset by a word of the CUDA device name (first match wins).
GPU_PRESETS = [
    ("H200", "h200"), ("H100 PCIe", "h100-pcie"), ("H100", "h100-sxm"),
    ("A100-SXM4-80GB", "a100-80gb"), ("A100 80GB", "a100-80gb"), ("A100", "a100-40gb"),
    ("L40S", "l40s"), ("L4", "l4"), ("A10", "a10"), ("V100", "v100-16gb"), ("T4", "t4"),
    ("B200", "b200"), ("RTX 4090", "rtx-4090"), ("RTX 3090", "rtx-3090"), ("RTX 5090", "rtx-5090"),
]

EXPANDABLE = "expandable_segments:True"

# The models whose transformers forward builds a key–value cache in training.
# The 2026 families the importer reads (#11, #12), in truth_models.hf_config.
NEW_DECODERS = ["qwen3-small", "gemma3-small", "olmo2-small", "qwen3moe-small", "deepseekv3-small"]
DECODERS = {"gpt2", "llama-small", "mixtral-small", "neox-small", "phi3-small", *NEW_DECODERS}


def configurations():
    """Every configuration, most informative first (the budget may cut the tail).

    Batch sizes are chosen to stress the allocator (activations of many sizes,
    some above 1 GiB) while each step stays well under a second on an H200.
    """
    base = [
        # name, model, batch, seq, image, precision, checkpointing
        ("resnet50", 128, 0, 224, "fp32", "none"),
        ("resnet50", 256, 0, 224, "amp-bf16", "none"),
        ("mobilenet_v2", 256, 0, 224, "amp-bf16", "none"),
        ("mobilenet_v2", 96, 0, 224, "fp32", "none"),
        ("bert-base", 32, 512, 0, "fp32", "none"),
        ("bert-large", 16, 512, 0, "amp-bf16", "none"),
        ("gpt2", 16, 1024, 0, "amp-bf16", "none"),
        ("gpt2", 8, 1024, 0, "fp32", "none"),
        ("llama-small", 8, 2048, 0, "amp-bf16", "none"),
        ("llama-small", 16, 2048, 0, "amp-bf16", "full"),
        ("mixtral-small", 8, 1024, 0, "amp-bf16", "none"),
        ("bert-large", 8, 512, 0, "fp32", "none"),
    ]
    out = []
    for model, batch, seq, image, prec, ckpt in base:
        for impl, conf in [("foreach", ""), ("fused", ""), ("foreach", EXPANDABLE)]:
            out.append(dict(model=model, batch=batch, seq=seq, image=image, precision=prec,
                            checkpointing=ckpt, optimizer_impl=impl, allocator_conf=conf))
    # Most informative first: every model once, then the fused and expandable variants.
    out.sort(key=lambda c: (c["optimizer_impl"] == "fused", c["allocator_conf"] != ""))
    # GPT-2 with transformers' key/value cache off in training: the cache's
    # first update concatenates onto empty tensors, which copies the keys and
    # values that attention then saves (cache_utils.py, DynamicLayer.update).
    for c in [c for c in out if c["model"] == "gpt2" and c["optimizer_impl"] == "foreach"
              and not c["allocator_conf"]]:
        out.append(dict(c, use_cache=False))
    # Two more fused-projection layouts, with the cache and without: what
    # the copies replace depends on which tensors the attention still views.
    for model in ["neox-small", "phi3-small"]:
        for use_cache in [True, False]:
            out.append(dict(model=model, batch=8, seq=2048, image=0, precision="amp-bf16",
                            checkpointing="none", optimizer_impl="foreach", allocator_conf="",
                            use_cache=use_cache))
    # Grouped-query models with a padding mask: SDPA then gets a mask and
    # transformers expands the key-value heads (repeat_kv) itself.
    out.append(dict(model="llama-small", batch=8, seq=2048, image=0, precision="amp-bf16",
                    checkpointing="none", optimizer_impl="foreach", allocator_conf="", padded=True))
    out.append(dict(model="phi3-small", batch=8, seq=2048, image=0, precision="amp-bf16",
                    checkpointing="none", optimizer_impl="foreach", allocator_conf="",
                    use_cache=False, padded=True))
    # The 2026 families the importer reads, each once as the config ships
    # (cache on, no mask): measured after vramfit modelled them.
    for model in NEW_DECODERS:
        out.append(dict(model=model, batch=8, seq=2048, image=0, precision="amp-bf16",
                        checkpointing="none", optimizer_impl="foreach", allocator_conf=""))
    for c in out:
        c["name"] = "{model}_b{batch}_{precision}_{checkpointing}_{optimizer_impl}{x}{nc}{pm}".format(
            x="_expandable" if c["allocator_conf"] else "",
            nc="" if c.get("use_cache", True) else "_nocache",
            pm="_padmask" if c.get("padded") else "", **c)
    return out


# ----------------------------------------------------------------- child side

def nvml():
    """(device used, this process's used) in bytes, by pynvml or nvidia-smi; None when neither."""
    pid = os.getpid()
    try:
        import pynvml

        pynvml.nvmlInit()
        index = int(os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or 0)
        h = pynvml.nvmlDeviceGetHandleByIndex(index)
        used = pynvml.nvmlDeviceGetMemoryInfo(h).used
        mine = sum(p.usedGpuMemory or 0 for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h)
                   if p.pid == pid)
        return used, mine
    except Exception:  # noqa: BLE001 - pynvml absent or failing: fall back to nvidia-smi.
        pass
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits",
                            "-i", "0"], capture_output=True, text=True, timeout=20).stdout
        used = int(q.split()[0]) << 20
        p = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                            "--format=csv,noheader,nounits"], capture_output=True, text=True,
                           timeout=20).stdout
        mine = sum(int(m) << 20 for line in p.splitlines() if line.strip()
                   for q_pid, m in [line.split(",")] if int(q_pid) == pid)
        return used, mine
    except Exception:  # noqa: BLE001 - no NVML at all (CPU dry run).
        return None, None


def driver_version():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20).stdout.split()[0]
    except Exception:  # noqa: BLE001
        return ""


def segments_summary(torch):
    segs = torch.cuda.memory_snapshot()
    sizes = sorted((s["total_size"] for s in segs), reverse=True)
    pools = [s.get("segment_type", "") for s in segs]
    return dict(
        segments=len(segs),
        segments_large=pools.count("large"),
        segments_small=pools.count("small"),
        segment_bytes_largest=sizes[0] if sizes else 0,
        # Sizes in MiB, largest first, ";"-separated (at most 40 listed).
        segment_sizes_mib=";".join(f"{s / 2**20:.0f}" for s in sizes[:40]),
    )


def stack_per_thread():
    """The current context's stack per thread (`cuCtxGetLimit(CU_LIMIT_STACK_SIZE)`),
    or None without a CUDA driver. The driver reserves it for every thread
    the GPU can hold at once (SMs x resident threads), and raises it, never
    to lower it again, when a kernel launches that needs more ("The driver
    automatically increases the per-thread stack size for each kernel
    launch as needed", the CUDA driver API's cuCtxSetLimit): 1 KiB more is
    264 MiB on an H100. vramfit takes the 1 KiB default; a larger reading
    after a step names kernels that grow the context."""
    import ctypes

    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        value = ctypes.c_size_t()
        # CU_LIMIT_STACK_SIZE = 0x00; the primary context torch made current.
        if cuda.cuCtxGetLimit(ctypes.byref(value), 0) != 0:
            return None
        return value.value
    except OSError:
        return None


def child(cfg, dry_run, out_dir):
    """Trains two steps of one configuration; returns the measured fields."""
    sys.path.insert(0, HERE)
    idle_used, _ = (None, None) if dry_run else nvml()
    import torch

    import truth_models

    device = "cpu" if dry_run else "cuda"
    row = {}
    if not dry_run:
        torch.zeros(1, device=device)
        torch.cuda.synchronize()
        ctx_used, _ = nvml()
        if ctx_used is not None and idle_used is not None:
            # The context, less the 2 MiB segment that held the one-element tensor.
            row["context_used_bytes"] = ctx_used - idle_used - torch.cuda.memory_reserved()
        snapshot = cfg.get("snapshot", False)
        if snapshot:
            torch.cuda.memory._record_memory_history(max_entries=200_000)
    model, vramfit_id, inputs, loss_fn, library = truth_models.BUILDERS[cfg["model"]](
        cfg, device, os.path.join(out_dir, "configs"))
    model.to(device).train()
    if cfg["checkpointing"] == "full":
        model.gradient_checkpointing_enable()
    fused = cfg["optimizer_impl"] == "fused"
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=not fused, fused=fused)
    amp = cfg["precision"] == "amp-bf16"
    for _ in range(1 if dry_run else 2):
        opt.zero_grad(set_to_none=True)
        batch = inputs()
        with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=amp):
            loss = loss_fn(model, batch)
        loss.backward()
        opt.step()
        del batch, loss
    row.update(model=vramfit_id, attention=truth_models.attention_of(model), library=library,
               torch_version=torch.__version__)
    if dry_run:
        return row
    torch.cuda.synchronize()
    after_used, mine = nvml()
    stats = torch.cuda.memory_stats()
    props = torch.cuda.get_device_properties(0)
    row.update(
        allocated_bytes=torch.cuda.max_memory_allocated(),
        reserved_bytes=torch.cuda.max_memory_reserved(),
        reserved_after_bytes=torch.cuda.memory_reserved(),
        nvml_device_used_idle_bytes=idle_used, nvml_device_used_after_bytes=after_used,
        nvml_process_used_after_bytes=mine,
        device_used_bytes=(after_used - idle_used) if None not in (after_used, idle_used) else "",
        # The growth from the idle GPU: the driver's reservation, in both
        # readings, cancels, which leaves what nvidia-smi would show.
        device_reading="nvidia-smi",
        reading_source="memory_truth.py: NVML used after the run less NVML used before it",
        active_peak_bytes=stats.get("active_bytes.all.peak"),
        requested_peak_bytes=stats.get("requested_bytes.all.peak"),
        inactive_split_peak_bytes=stats.get("inactive_split_bytes.all.peak"),
        reserved_large_peak_bytes=stats.get("reserved_bytes.large_pool.peak"),
        reserved_small_peak_bytes=stats.get("reserved_bytes.small_pool.peak"),
        num_alloc_retries=stats.get("num_alloc_retries"),
        num_device_alloc=stats.get("num_device_alloc"),
        gpu_name=props.name, gpu_total_bytes=props.total_memory,
        cuda_version=torch.version.cuda or "", cudnn_version=torch.backends.cudnn.version() or "",
        stack_per_thread_bytes=stack_per_thread(),
        **segments_summary(torch),
    )
    if cfg.get("snapshot"):
        import pickle

        name = f"snapshot_{cfg['name']}.pickle"
        with open(os.path.join(out_dir, name), "wb") as f:
            pickle.dump(torch.cuda.memory._snapshot(), f)
        torch.cuda.memory._record_memory_history(enabled=None)
        row["snapshot_file"] = name
    with open(os.path.join(out_dir, "memory_stats.jsonl"), "a") as f:
        f.write(json.dumps({"id": cfg["name"], "memory_stats": stats}) + "\n")
    return row


# ------------------------------------------------------------ libraries probe

LIBRARY_COLUMNS = [
    "loading", "step", "status", "nvml_device_used_bytes", "delta_used_bytes",
    "cuda_used_bytes",
    "reserved_bytes", "allocated_bytes", "delta_outside_allocator_bytes",
    "stack_per_thread_bytes", "gpu_name", "gpu_total_bytes", "driver", "torch_version", "cuda_version",
    "cudnn_version", "seconds",
]


def library_steps(torch, device):
    """(name, action) in the order a training step first meets them; each
    action runs its kernels once. Shapes are small: the step loads the
    kernels, the allocator's share is read beside it."""
    f = torch.nn.functional
    bf16 = torch.bfloat16

    def matmul(dtype):
        a = torch.randn(1024, 1024, device=device, dtype=dtype)
        return a @ a

    def linear_bias():
        x = torch.randn(512, 1024, device=device, dtype=bf16)
        w = torch.randn(4096, 1024, device=device, dtype=bf16)
        b = torch.randn(4096, device=device, dtype=bf16)
        return f.linear(x, w, b)

    def conv(dtype, backward):
        x = torch.randn(8, 64, 56, 56, device=device, dtype=dtype, requires_grad=backward)
        w = torch.randn(64, 64, 3, 3, device=device, dtype=dtype, requires_grad=backward)
        y = f.conv2d(x, w, padding=1)
        if backward:
            y.sum().backward()
        return y

    def attention(backend):
        from torch.nn.attention import SDPBackend, sdpa_kernel

        q = torch.randn(4, 16, 512, 64, device=device, dtype=bf16, requires_grad=True)
        with sdpa_kernel(getattr(SDPBackend, backend)):
            y = f.scaled_dot_product_attention(q, q, q, is_causal=True)
        y.sum().backward()
        return y

    def transformer_step(fused):
        # The rest of a training step's kernels: embedding, LayerNorm, GELU,
        # softmax, dropout, cross-entropy and their backward, then AdamW.
        layer = torch.nn.Sequential(
            torch.nn.Embedding(1000, 256),
            torch.nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True, activation="gelu"),
            torch.nn.Linear(256, 1000),
        ).to(device)
        opt = torch.optim.AdamW(layer.parameters(), foreach=not fused, fused=fused)
        tokens = torch.randint(0, 1000, (4, 128), device=device)
        with torch.autocast(device_type=device, dtype=bf16):
            loss = f.cross_entropy(layer(tokens).flatten(0, 1).float(), tokens.flatten())
        loss.backward()
        opt.step()
        return loss

    return [
        ("cublas_fp32_matmul", lambda: matmul(torch.float32)),
        ("cublas_bf16_matmul", lambda: matmul(bf16)),
        ("cublaslt_bf16_linear_bias", linear_bias),
        ("cudnn_fp32_conv_forward", lambda: conv(torch.float32, False)),
        ("cudnn_fp32_conv_backward", lambda: conv(torch.float32, True)),
        ("cudnn_bf16_conv_backward", lambda: conv(bf16, True)),
        ("sdpa_flash_bf16", lambda: attention("FLASH_ATTENTION")),
        ("sdpa_efficient_bf16", lambda: attention("EFFICIENT_ATTENTION")),
        ("transformer_step_adamw_foreach", lambda: transformer_step(False)),
        ("transformer_step_adamw_fused", lambda: transformer_step(True)),
    ]


def libraries_child(dry_run):
    """One fresh process: NVML used (and the allocator's share) before CUDA,
    after the context, and after each library step; a failing step says
    why and the probe goes on."""
    rows, start = [], time.time()
    idle, _ = (None, None) if dry_run else nvml()
    import torch

    device = "cpu" if dry_run else "cuda"
    if not dry_run:
        torch.backends.cudnn.benchmark = False

    def reading():
        if dry_run:
            return None, None, None
        torch.cuda.synchronize()
        return nvml()[0], torch.cuda.memory_reserved(), torch.cuda.memory_allocated()

    def cuda_used():
        """CUDA's own view of the device (total less free, all processes):
        a cross-check of NVML's that needs no pynvml."""
        if dry_run:
            return None
        try:
            free, total = torch.cuda.mem_get_info()
        except Exception:  # noqa: BLE001 - a cross-check only: NVML's reading stands.
            return None
        return total - free

    last = (idle, 0, 0) if not dry_run else (None, None, None)
    rows.append(dict(step="idle", status="ok", nvml_device_used_bytes=idle))

    def record(step, status):
        nonlocal last
        now = reading()
        row = dict(step=step, status=status, nvml_device_used_bytes=now[0],
                   cuda_used_bytes=cuda_used(),
                   stack_per_thread_bytes=None if dry_run else stack_per_thread(),
                   reserved_bytes=now[1], allocated_bytes=now[2],
                   seconds=f"{time.time() - start:.1f}")
        if None not in (now[0], last[0]):
            row["delta_used_bytes"] = now[0] - last[0]
            # What the step's kernels (and the libraries' handles) took
            # outside the caching allocator.
            row["delta_outside_allocator_bytes"] = now[0] - last[0] - (now[1] - last[1])
        rows.append(row)
        last = now

    try:
        torch.zeros(1, device=device)
        record("context", "ok")
    except Exception as e:  # noqa: BLE001 - no CUDA at all: nothing more to probe.
        rows.append(dict(step="context", status=f"failed: {type(e).__name__}: {e}"[:200]))
        return rows
    for step, action in library_steps(torch, device):
        try:
            out = action()
            del out
            status = "ok"
        except Exception as e:  # noqa: BLE001 - an unsupported kernel (e.g. flash on an old GPU).
            status = f"failed: {type(e).__name__}: {e}"[:200]
        record(step, status)
    versions = dict(torch_version=torch.__version__)
    if not dry_run:
        props = torch.cuda.get_device_properties(0)
        versions.update(gpu_name=props.name, gpu_total_bytes=props.total_memory,
                        cuda_version=torch.version.cuda or "",
                        cudnn_version=torch.backends.cudnn.version() or "")
    return [dict(r, **versions) for r in rows]


def run_libraries(args, out_dir, timeout):
    """The probe under lazy and eager module loading, one process each;
    writes measured/libraries/libraries_<gpu>_<time>.csv. Returns the path."""
    rows = []
    for loading in ("LAZY", "EAGER"):
        env = dict(os.environ, CUDA_MODULE_LOADING=loading)
        cmd = [sys.executable, os.path.abspath(__file__), "--libraries-child"]
        if args.dry_run:
            cmd.append("--dry-run")
            env["CUDA_VISIBLE_DEVICES"] = ""
        try:
            p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
            lines = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
            if p.returncode != 0 or not lines:
                tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
                got = [dict(step="probe", status=f"failed: {tail[:200]}")]
            else:
                got = json.loads(lines[-1][7:])
        except subprocess.TimeoutExpired:
            got = [dict(step="probe", status=f"skipped: over its {timeout:.0f} s time box")]
        rows.extend(dict(r, loading=loading) for r in got)
        problems = ", ".join(f"{r['step']} {r['status']}" for r in got if r["status"] != "ok")
        print(f"libraries probe {loading:<5} {problems or 'ok'}", flush=True)
    driver = "" if args.dry_run else driver_version()
    gpu = gpu_preset(next((r.get("gpu_name") for r in rows if r.get("gpu_name")), "")) or "gpu"
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    folder = os.path.join(out_dir, "libraries")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"libraries_{'dry-run' if args.dry_run else gpu}_{stamp}.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=LIBRARY_COLUMNS, lineterminator="\n",
                           extrasaction="ignore", restval="")
        w.writeheader()
        w.writerows(dict(r, driver=driver) for r in rows)
    return path


# ---------------------------------------------------------------- parent side

def dry_size(cfg):
    """The dry run's tiny step: the real model, a batch of 2 and short inputs."""
    return dict(cfg, batch=2, seq=min(cfg["seq"], 32) if cfg["seq"] else 0,
                image=64 if cfg["image"] else 0, name=cfg["name"] + "_dry")


def run_one(cfg, args, out_dir, timeout):
    env = dict(os.environ)
    for var in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"):
        env.pop(var, None)
        if cfg["allocator_conf"]:
            env[var] = cfg["allocator_conf"]
    cmd = [sys.executable, os.path.abspath(__file__), "--child", json.dumps(cfg), "--out", out_dir]
    if args.dry_run:
        cmd.append("--dry-run")
        env["CUDA_VISIBLE_DEVICES"] = ""
    start = time.time()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": f"skipped: over its {timeout:.0f} s time box"}, time.time() - start
    lines = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
    if p.returncode != 0 or not lines:
        tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
        return {"status": f"failed: {tail[:200]}"}, time.time() - start
    return dict(json.loads(lines[-1][7:]), status="dry-run" if args.dry_run else "ok"), time.time() - start


def device_name():
    """The first GPU's name from nvidia-smi (the parent process never initialises CUDA)."""
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", "0"],
                              capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception:  # noqa: BLE001 - no nvidia-smi: no GPU to match.
        return ""


def measured_ids(out_dir, gpu):
    """Ids of the configurations measured ("ok") on `gpu` in the folder's CSVs."""
    done = set()
    for name in os.listdir(out_dir):
        if name.startswith("memory_truth_") and name.endswith(".csv"):
            with open(os.path.join(out_dir, name), newline="") as f:
                done.update(r["id"] for r in csv.DictReader(f)
                            if r.get("status") == "ok" and r.get("gpu") == gpu)
    return done


def probed(out_dir, gpu):
    """Whether the folder holds a libraries probe file of `gpu`."""
    folder = os.path.join(out_dir, "libraries")
    return bool(gpu) and os.path.isdir(folder) and any(
        n.startswith(f"libraries_{gpu}_") for n in os.listdir(folder))


def gpu_preset(name):
    return next((preset for word, preset in GPU_PRESETS if word in (name or "")), "")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dry-run", action="store_true",
                   help="no CUDA: build each model, one tiny CPU step, CSV to a temp dir")
    p.add_argument("--out", help="output folder (default tests/reference/real_gpu/measured)")
    p.add_argument("--budget-s", type=float, default=None,
                   help="whole-run time budget in s (default 480 on a GPU, none in a dry run)")
    p.add_argument("--box-s", type=float, default=None,
                   help="time box of one configuration in s (default 75 on a GPU, 600 in a dry run)")
    p.add_argument("--only", help="run only configurations whose name contains this "
                   "(`libraries`: the libraries probe alone)")
    p.add_argument("--no-libraries", action="store_true",
                   help="skip the libraries probe (context and kernel images, lazy and eager)")
    p.add_argument("--missing", action="store_true",
                   help="only configurations this GPU has no measured row of in the output folder "
                   "(and the libraries probe only when it has no probe file): finishes a run "
                   "that an earlier budget cut short")
    p.add_argument("--snapshot", help="save the allocation-history snapshot of the configurations "
                   "whose name contains this (default: the first GPT-2 one run)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--libraries-child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()

    if args.child:
        row = child(json.loads(args.child), args.dry_run, args.out)
        print("RESULT " + json.dumps(row, default=str), flush=True)
        return
    if args.libraries_child:
        print("RESULT " + json.dumps(libraries_child(args.dry_run), default=str), flush=True)
        return

    out_dir = args.out or (tempfile.mkdtemp(prefix="memory_truth_") if args.dry_run else DEFAULT_OUT)
    os.makedirs(out_dir, exist_ok=True)
    configs = configurations()
    if args.only:
        configs = [c for c in configs if args.only in c["name"]]
    if args.missing and not args.dry_run:
        gpu = gpu_preset(device_name())
        done = measured_ids(out_dir, gpu)
        configs = [c for c in configs if c["name"] not in done]
        if probed(out_dir, gpu):
            args.no_libraries = True
        print(f"--missing: {len(done)} configurations already measured on {gpu or 'this GPU'}, "
              f"{len(configs)} to go; libraries probe {'skipped' if args.no_libraries else 'runs'}",
              flush=True)
    if args.dry_run:
        # Each model, optimizer path and checkpointing once (the allocator
        # setting needs CUDA).
        seen, kept = set(), []
        for c in configs:
            key = (c["model"], c["optimizer_impl"], c["checkpointing"])
            if key not in seen and not c["allocator_conf"]:
                seen.add(key)
                kept.append(dry_size(c))
        configs = kept
    elif args.snapshot:
        for c in configs:
            c["snapshot"] = args.snapshot in c["name"]
    elif configs:
        next(c for c in configs if c["model"] == "gpt2" or c is configs[-1])["snapshot"] = True

    budget = args.budget_s or (float("inf") if args.dry_run else 480.0)
    box = args.box_s or (600.0 if args.dry_run else 75.0)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    driver = "" if args.dry_run else driver_version()
    start = time.time()
    if not args.no_libraries and (not args.only or args.only in "libraries"):
        # First: a minute at most, and the fixed terms every row sits on.
        path = run_libraries(args, out_dir, min(box, 60.0))
        print(f"libraries probe -> {path}", flush=True)
    rows = []
    for cfg in configs:
        left = budget - (time.time() - start)
        if left < 10:
            result, secs = {"status": "skipped: whole-run budget spent"}, 0.0
        else:
            result, secs = run_one(cfg, args, out_dir, min(box, left))
        print(f"{cfg['name']:<60} {result.get('status')} {secs:5.1f} s", flush=True)
        gpu = gpu_preset(result.get("gpu_name"))
        rows.append({
            **{k: "" for k in CONFIG_COLUMNS + MEASURED_COLUMNS},
            "id": cfg["name"],
            "source": "memory_truth.py" + (" (dry run)" if args.dry_run else ""),
            "source_url": "tests/gpu/memory_truth.py",
            "quote": "", "fidelity": "exact", "gpu": gpu,
            "batch": cfg["batch"], "seq": cfg["seq"], "image": cfg["image"],
            "precision": cfg["precision"], "optimizer": "adamw",
            "optimizer_impl": cfg["optimizer_impl"], "checkpointing": cfg["checkpointing"],
            "grad_accum": 1, "zero_grad": "set-to-none", "loop_outputs": "dropped",
            "pytorch": "current", "autocast_region": "forward",
            # transformers 5 copies a decoder's keys and values into the
            # DynamicCache it builds in training when use_cache is on (the
            # configs' default) and nothing checkpoints.
            "training_cache": "copies" if cfg["model"] in DECODERS and cfg.get("use_cache", True)
            and cfg["checkpointing"] == "none" else "off",
            # transformers' SDPA path: no mask on CUDA (PyTorch 2.5+) passes
            # enable_gqa; a padded batch's mask is expanded and converted per layer.
            "attention_mask": "padding" if cfg.get("padded") else "none",
            "strategy": "single", "gpus_per_node": 1, "nodes": 1,
            "driver": driver, "allocator_conf": cfg["allocator_conf"],
            "measured_when": "max_memory_*; NVML used after step 2 less before CUDA init",
            "notes": ("transformers' use_cache off; " if cfg.get("use_cache") is False else "")
            + ("an attention_mask with one padded position; " if cfg.get("padded") else "")
            + ("two steps: zero_grad(set_to_none=True), forward (autocast bf16 when amp), "
               "backward, AdamW step; random inputs made on the GPU; "
               "cudnn.benchmark off; no torch.compile"),
            **result, "seconds": f"{secs:.1f}",
        })
    if not rows:
        return
    gpu = next((r["gpu"] for r in rows if r["gpu"]), "gpu")
    name = f"memory_truth_{'dry-run' if args.dry_run else gpu}_{stamp}.csv"
    path = os.path.join(out_dir, name)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CONFIG_COLUMNS + MEASURED_COLUMNS, lineterminator="\n",
                           extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    ok = sum(r["status"] in ("ok", "dry-run") for r in rows)
    failed = [r["id"] for r in rows if r["status"].startswith("failed")]
    print(f"{ok}/{len(rows)} configurations measured in {time.time() - start:.0f} s -> {path}")
    for f in failed:
        print(f"failed: {f}")
    # Skipped configurations (time box, budget) are expected; a failure is not.
    sys.exit(1 if failed or ok == 0 else 0)


if __name__ == "__main__":
    main()
