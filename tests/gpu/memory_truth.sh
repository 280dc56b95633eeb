#!/usr/bin/env bash
# Real-GPU memory truth for vramfit (issue #21): see memory_truth.py. Writes CSV into tests/reference/real_gpu/measured/.
cd "$(dirname "$0")/../.." && exec "${PYTHON:-python3}" tests/gpu/memory_truth.py "$@"
