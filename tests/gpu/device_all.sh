#!/usr/bin/env bash
# Every GPU check in one call of a lent NVIDIA machine (PyTorch there, no
# network, no Rust): the real-GPU memory measurement (memory_truth.py: the
# configurations not yet measured on this GPU, within BUDGET seconds), then
# the WGSL kernels' GPU tests and benchmark from the binaries that
# tests/gpu/prepare.sh built here. Everything it writes under
# tests/reference/ is packed into one file, $OUT/gpu_results.tar.gz (a call
# returns few files), to unpack in the repository's root here:
#   tar -xzf gpu_results.tar.gz
# and a log beside it. Usage there, with .gpu and .gl carried:
#   BUDGET=360 bash tests/gpu/device_all.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gpu_out}
mkdir -p "$OUT"
exec > >(tee "$OUT/device_all.log") 2>&1
stamp=$(mktemp)
sleep 1
for f in .gl/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done
ldconfig 2>/dev/null
nvidia-smi || true
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version())"

echo "== memory truth"
PYTHONUNBUFFERED=1 python3 tests/gpu/memory_truth.py --missing --budget-s "${BUDGET:-360}"
# AGAIN=<name part>: measure those configurations once more, with the
# allocation history saved (a repeat, and the snapshot behind a miss).
if [ -n "${AGAIN:-}" ]; then
  PYTHONUNBUFFERED=1 python3 tests/gpu/memory_truth.py --only "$AGAIN" --snapshot "$AGAIN" \
    --no-libraries --budget-s 90
fi

echo "== kernels"
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$icd" ] && export VK_DRIVER_FILES=$icd
for t in .gpu/t_*; do
  [ -x "$t" ] || continue
  echo "-- $t"
  timeout 60 "$t" --test-threads=1 2>&1 | tail -15
done
if [ -x .gpu/vramfit-bench ]; then
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | tr 'A-Z ' 'a-z-' | head -1)
  mkdir -p tests/reference/gpu_bench
  timeout 150 .gpu/vramfit-bench --size large --json \
    > "tests/reference/gpu_bench/${gpu:-gpu}_$(date -u +%Y%m%d).json"
  echo "bench rc=$?"
fi

find tests/reference -type f -newer "$stamp" | sort | tee "$OUT/files.txt"
tar -czf "$OUT/gpu_results.tar.gz" -T "$OUT/files.txt"
