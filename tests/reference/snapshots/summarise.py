"""Summarises the memory snapshots in this folder with plain Python and
PyTorch's own snapshot tools, for vramfit's snapshot reader to be held to.

Run from the repository root (CPU only):
    tests/reference/.venv/bin/python tests/reference/snapshots/summarise.py
It writes tests/reference/snapshots/summary.csv.

Figures (device 0, the only one in these files):
- end_allocated: sum over segments of torch.cuda._memory_viz.calc_active
  (the active_allocated blocks), the state when the snapshot was taken;
- end_reserved: sum of the segments' total_size;
- small/large segments: by segment_type; largest_segment: max total_size;
- peak_allocated / peak_reserved: over the trace, starting from the end
  state minus the trace's net change; memory_allocated() moves on 'alloc'
  and 'free_requested' (DeviceCachingAllocator::free updates allocated_bytes
  when the free is requested), memory_reserved() on segment_alloc/free and
  segment_map/unmap.
"""

import csv
import glob
import os
import pickle

from torch.cuda import _memory_viz

HERE = os.path.dirname(os.path.abspath(__file__))
ALLOC = {"alloc": 1, "free_requested": -1, "free": -1}
RESERVE = {"segment_alloc": 1, "segment_map": 1, "segment_free": -1, "segment_unmap": -1}


def summarise(path):
    with open(path, "rb") as f:
        snap = pickle.load(f)
    segs = [s for s in snap["segments"] if s.get("device", 0) == 0]
    end_allocated = sum(_memory_viz.calc_active(s) for s in segs)
    end_reserved = sum(s["total_size"] for s in segs)
    traces = snap.get("device_traces", [])
    trace = traces[0] if traces else []
    net_a = sum(ALLOC.get(e["action"], 0) * e["size"] for e in trace)
    net_r = sum(RESERVE.get(e["action"], 0) * e["size"] for e in trace)
    a, r = max(end_allocated - net_a, 0), max(end_reserved - net_r, 0)
    peak_a, peak_r, gap = a, r, r - a
    for e in trace:
        da = ALLOC.get(e["action"], 0) * e["size"]
        dr = RESERVE.get(e["action"], 0) * e["size"]
        if da == 0 and dr == 0:
            continue
        a, r = a + da, r + dr
        if a > peak_a:
            peak_a, gap = a, r - a
        peak_r = max(peak_r, r)
    return {
        "file": os.path.basename(path),
        "trace_events": len(trace),
        "end_allocated": end_allocated,
        "end_reserved": end_reserved,
        "small_segments": sum(1 for s in segs if s["segment_type"] == "small"),
        "large_segments": sum(1 for s in segs if s["segment_type"] == "large"),
        "largest_segment": max((s["total_size"] for s in segs), default=0),
        "peak_allocated": peak_a,
        "peak_reserved": peak_r,
        "reserved_gap_at_peak": gap,
    }


def main():
    rows = [summarise(p) for p in sorted(glob.glob(os.path.join(HERE, "*.pickle")))]
    with open(os.path.join(HERE, "summary.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
