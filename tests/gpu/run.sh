#!/usr/bin/env bash
# Correctness and benchmark run of vramfit's WGSL kernels on a real GPU
# (natively, through Vulkan; no network needed once dependencies are
# vendored or fetched).
#
# Usage: PEAK_FP32_TFLOPS=67 PEAK_FP16_TFLOPS=134 PEAK_BW_GBS=4800 tests/gpu/run.sh
#   (peaks of the GPU, non-tensor; see shared research notes / GPU presets).
# Writes bench-results/{bench.json,bench.md} and prints % of peak.
# Set OFFLINE=1 to pass --offline to cargo.
set -euo pipefail

cd "$(dirname "$0")/../.."
OUT=${OUT:-bench-results}
mkdir -p "$OUT"
CARGO_FLAGS=(--release)
[[ "${OFFLINE:-0}" == 1 ]] && CARGO_FLAGS+=(--offline)

echo "== adapter"
command -v vulkaninfo >/dev/null && vulkaninfo --summary 2>/dev/null | grep -E "deviceName|driverName|apiVersion" || true
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv || true

echo "== build"
cargo build "${CARGO_FLAGS[@]}" -p vramfit-bench

echo "== correctness (f32 and f16 vs CPU references; fails without shader-f16)"
cargo test "${CARGO_FLAGS[@]}" -p vramfit-bench -- --test-threads=1

echo "== benchmark (large: matmul 4096^3)"
BIN=target/release/vramfit-bench
[[ -n "${CARGO_TARGET_DIR:-}" ]] && BIN="$CARGO_TARGET_DIR/release/vramfit-bench"
"$BIN" --size large --json > "$OUT/bench.json"
"$BIN" --size large --kernels matmul > "$OUT/bench.md"
cat "$OUT/bench.md"

echo "== % of peak"
python3 - "$OUT/bench.json" <<'PY'
import json, os, sys
report = json.load(open(sys.argv[1]))
peak = {k: float(os.environ[k]) if os.environ.get(k) else None
        for k in ("PEAK_FP32_TFLOPS", "PEAK_FP16_TFLOPS", "PEAK_BW_GBS")}
print(f"adapter: {report['adapter']['name']}  timer: {report['results'][0]['timer'] if report['results'] else '-'}")
for r in report["results"]:
    name = f"{r['kernel']} {r['variant']}"
    if r["metric"] == "gflops":
        p = peak["PEAK_FP16_TFLOPS" if r["dtype"] == "f16" else "PEAK_FP32_TFLOPS"]
        rate, unit, pct = r["gflops"] / 1e3, "TFLOP/s", (r["gflops"] / 1e3 / p * 100 if p else None)
    else:
        p = peak["PEAK_BW_GBS"]
        rate, unit, pct = r["gbs"], "GB/s", (r["gbs"] / p * 100 if p else None)
    pct_text = f"{pct:5.1f}% of peak" if pct is not None else "(no peak given)"
    print(f"{name:28s} {r['dtype']}  {r['shape']:28s} {r['median_ms']:9.3f} ms  {rate:9.2f} {unit:8s} {pct_text}")
for s in report["speedups"]:
    print(f"speed-up: {s['what']}: {s['factor']:.2f}x")
for n in report["notes"]:
    print(f"note: {n}")
PY
