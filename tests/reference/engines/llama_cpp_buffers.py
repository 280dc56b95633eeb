"""Writes llama_cpp_buffers.csv, the numbers of llama_cpp_buffers_sources.csv
(each row a public llama.cpp / Ollama log, with its URL and the quoted lines)
as plain columns for the Rust test (crates/vramfit-core/tests/engines.rs):
the leading number of each field; the notes on what was inferred stay in the
sources file. Stdlib only:  python3 tests/reference/engines/llama_cpp_buffers.py"""
import csv
import pathlib
import re

HERE = pathlib.Path(__file__).parent
COLUMNS = ["source_url", "n_layer", "n_embd", "n_head", "n_head_kv", "n_ff", "n_vocab",
           "n_ctx", "n_ubatch", "flash_attn", "devices", "compute_buffer_mib",
           "host_compute_buffer_mib"]


def lead(s):
    m = re.match(r"\s*(-?[\d.]+)", s)
    return m.group(1) if m else ""


def devices(row):
    """0: CPU only; else the GPUs the model is split over (llama.cpp's
    pipeline parallelism keeps n_copies of the inputs on each)."""
    backend = row["backend"]
    if "CPU only" in backend:
        return "0"
    if "x3" in backend:
        return "3"
    if "+" in backend or "2 GPUs" in row["n_gpu_layers"]:
        return "2"
    return "1"


def main():
    rows = []
    with open(HERE / "llama_cpp_buffers_sources.csv", newline="") as f:
        for r in csv.DictReader(f):
            compute = lead(r["compute_buffer_mib"])
            if not compute:
                continue  # the printed value is cut off in the source
            arch = [lead(x) for x in r["arch_params"].split(",")[:6]]
            # "unknown" flash attention: the row is logits-bound either way.
            fa = "1" if r["flash_attn"].strip().startswith("1") else "0"
            rows.append([r["source_url"], *arch, lead(r["n_ctx"]), lead(r["n_ubatch"]), fa,
                         devices(r), compute, lead(r["host_compute_buffer_mib"])])
    with open(HERE / "llama_cpp_buffers.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        w.writerows(rows)


if __name__ == "__main__":
    main()
