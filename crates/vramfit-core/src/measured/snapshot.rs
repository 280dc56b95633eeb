//! A CUDA memory snapshot, summarised. The layout is what
//! `torch.cuda.memory._snapshot()` returns (`torch/csrc/cuda/memory_snapshot.cpp`,
//! from `c10/cuda/CUDACachingAllocator.h`'s `SegmentInfo`, `BlockInfo` and
//! `TraceEntry`): `segments`, a list of dicts with `device`, `total_size`,
//! `allocated_size` and `segment_type` (`"small"` or `"large"`), and
//! `device_traces`, one list per device of dicts with `action`, `addr` and
//! `size`, oldest first.
//!
//! The trace starts when recording started, not when the process did, so
//! the allocated and reserved bytes before its first event are inferred:
//! the state at the end, from the segments, minus what the trace added.

use super::pickle::{NodeId, Pickle};
use super::{MAX_TIMELINE_POINTS, MeasuredError, MeasuredPoint, Measurement, Segments, Source};
use crate::units::Bytes;

/// How one trace action moves `memory_allocated()` and `memory_reserved()`.
/// `memory_allocated()` drops when the program frees a block
/// (`DeviceCachingAllocator::free` updates `allocated_bytes` and records
/// `free_requested`); `free_completed` only marks the block reusable after
/// its streams' events. PyTorch 2.0's traces wrote `free` for the request.
fn effect(action: &str) -> (i8, i8) {
    match action {
        "alloc" => (1, 0),
        "free_requested" | "free" => (-1, 0),
        "segment_alloc" | "segment_map" => (0, 1),
        "segment_free" | "segment_unmap" => (0, -1),
        // free_completed, snapshot, oom, user_defined and any later action
        // move neither count.
        _ => (0, 0),
    }
}

/// One segment as the summary needs it.
struct Segment {
    device: u32,
    total: u64,
    allocated: u64,
    small: bool,
}

fn uint(p: &Pickle, id: Option<NodeId>) -> Option<u64> {
    id.and_then(|id| p.int(id))
        .and_then(|v| u64::try_from(v).ok())
}

fn segments(p: &Pickle) -> Result<Vec<Segment>, MeasuredError> {
    let list = p
        .get(p.root, "segments")
        .ok_or(MeasuredError::NotSnapshot("no 'segments' list at the top"))?;
    p.items(list)
        .iter()
        .map(|&s| {
            let total = uint(p, p.get(s, "total_size"))
                .ok_or(MeasuredError::NotSnapshot("a segment without 'total_size'"))?;
            let allocated = uint(p, p.get(s, "allocated_size")).ok_or(
                MeasuredError::NotSnapshot("a segment without 'allocated_size'"),
            )?;
            // `segment_type` came with PyTorch 1.13; before it, a small-pool
            // segment is recognisable by its fixed size (`kSmallBuffer`).
            let small = match p.get(s, "segment_type").and_then(|t| p.str(t)) {
                Some(t) => t == "small",
                None => total == crate::simulate::allocator::SMALL_BUFFER,
            };
            let device = uint(p, p.get(s, "device"))
                .and_then(|d| u32::try_from(d).ok())
                .unwrap_or(0);
            Ok(Segment {
                device,
                total,
                allocated,
                small,
            })
        })
        .collect()
}

/// The device a summary describes: the one holding the most reserved
/// memory (ties: the lowest index), and the others present.
fn pick_device(segs: &[Segment], traces: &[NodeId]) -> (u32, Vec<u32>) {
    let mut by_device: Vec<(u32, u64)> = Vec::new();
    for s in segs {
        match by_device.iter_mut().find(|(d, _)| *d == s.device) {
            Some((_, r)) => *r += s.total,
            None => by_device.push((s.device, s.total)),
        }
    }
    for (i, _) in traces.iter().enumerate() {
        let d = u32::try_from(i).unwrap_or(u32::MAX);
        if !by_device.iter().any(|(x, _)| *x == d) {
            by_device.push((d, 0));
        }
    }
    let device = by_device
        .iter()
        .max_by_key(|(d, r)| (*r, std::cmp::Reverse(*d)))
        .map_or(0, |(d, _)| *d);
    let mut others: Vec<u32> = by_device
        .iter()
        .map(|(d, _)| *d)
        .filter(|d| *d != device)
        .collect();
    others.sort_unstable();
    (device, others)
}

/// The allocated and reserved bytes after each event of `trace` that moves
/// either, starting from `end` minus the trace's net change.
fn replay(p: &Pickle, trace: &[NodeId], end: (u64, u64)) -> Vec<MeasuredPoint> {
    let steps: Vec<(i128, i128)> = trace
        .iter()
        .filter_map(|&e| {
            let action = p.get(e, "action").and_then(|a| p.str(a))?;
            let (da, dr) = effect(action);
            if da == 0 && dr == 0 {
                return None;
            }
            let size = i128::from(uint(p, p.get(e, "size"))?);
            Some((i128::from(da) * size, i128::from(dr) * size))
        })
        .collect();
    let (net_a, net_r) = steps
        .iter()
        .fold((0i128, 0i128), |(a, r), (da, dr)| (a + da, r + dr));
    // A trace cut by `max_entries` can miss the alloc of a block it frees:
    // the start is then clamped at zero rather than below it.
    let mut a = (i128::from(end.0) - net_a).max(0);
    let mut r = (i128::from(end.1) - net_r).max(0);
    let clamp = |v: i128| Bytes(u64::try_from(v.max(0)).unwrap_or(u64::MAX));
    let mut points = vec![MeasuredPoint {
        allocated_bytes: clamp(a),
        reserved_bytes: clamp(r),
    }];
    for (da, dr) in steps {
        a += da;
        r += dr;
        points.push(MeasuredPoint {
            allocated_bytes: clamp(a),
            reserved_bytes: clamp(r),
        });
    }
    points
}

/// Summarises a parsed snapshot for its busiest device.
///
/// # Errors
/// [`MeasuredError::NotSnapshot`] when the pickle is not a dict with a
/// `segments` list of segment dicts.
pub fn summarise(p: &Pickle) -> Result<Measurement, MeasuredError> {
    let segs = segments(p)?;
    let traces: Vec<NodeId> = p
        .get(p.root, "device_traces")
        .map(|t| p.items(t).to_vec())
        .unwrap_or_default();
    let (device, other_devices) = pick_device(&segs, &traces);
    let mine: Vec<&Segment> = segs.iter().filter(|s| s.device == device).collect();
    let end = (
        mine.iter().map(|s| s.allocated).sum::<u64>(),
        mine.iter().map(|s| s.total).sum::<u64>(),
    );
    let trace = traces
        .get(device as usize)
        .map(|&t| p.items(t))
        .unwrap_or(&[]);
    let points = replay(p, trace, end);
    let peak = points
        .iter()
        .max_by_key(|q| q.allocated_bytes)
        .copied()
        .unwrap_or(MeasuredPoint {
            allocated_bytes: Bytes(end.0),
            reserved_bytes: Bytes(end.1),
        });
    let peak_reserved = points
        .iter()
        .map(|q| q.reserved_bytes)
        .max()
        .unwrap_or(Bytes(end.1));
    let recorded = points.len() > 1;
    Ok(Measurement {
        source: Source::Snapshot,
        device,
        peak_allocated_bytes: peak.allocated_bytes,
        peak_reserved_bytes: peak_reserved,
        reserved_gap_at_peak: recorded
            .then(|| peak.reserved_bytes.saturating_sub(peak.allocated_bytes)),
        segments: Segments::from_sizes(mine.iter().map(|s| (s.total, s.small))),
        timeline: if recorded {
            super::resample(&points, MAX_TIMELINE_POINTS)
        } else {
            Vec::new()
        },
        trace_events: u64::try_from(trace.len()).unwrap_or(u64::MAX),
        alloc_retries: None,
        ooms: Some(
            trace
                .iter()
                .filter(|&&e| p.get(e, "action").and_then(|a| p.str(a)) == Some("oom"))
                .count() as u64,
        )
        .filter(|_| recorded),
        other_devices,
    })
}
