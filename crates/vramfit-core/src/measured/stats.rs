//! `json.dumps(torch.cuda.memory_stats())`: a flat object of counters named
//! `<stat>.<pool>.<metric>` (`torch/cuda/memory.py`, `memory_stats`, which
//! flattens `c10::CachingDeviceAllocator::DeviceStats`): for example
//! `allocated_bytes.all.peak`, `reserved_bytes.all.peak`,
//! `segment.small_pool.peak`, plus the plain `num_alloc_retries` and
//! `num_ooms`.

use super::{MeasuredError, Measurement, Segments, Source};
use crate::units::Bytes;
use serde_json::{Map, Value};

fn counter(map: &Map<String, Value>, key: &str) -> Option<u64> {
    map.get(key).and_then(Value::as_u64)
}

fn required(map: &Map<String, Value>, key: &'static str) -> Result<u64, MeasuredError> {
    counter(map, key)
        .ok_or_else(|| MeasuredError::NotMemoryStats(format!("no non-negative integer '{key}'")))
}

/// Reads `memory_stats()` JSON.
///
/// # Errors
/// [`MeasuredError::NotMemoryStats`] when the text is not a JSON object or
/// lacks `allocated_bytes.all.peak` or `reserved_bytes.all.peak`.
pub fn read(data: &[u8]) -> Result<Measurement, MeasuredError> {
    let value: Value = serde_json::from_slice(data)
        .map_err(|e| MeasuredError::NotMemoryStats(format!("invalid JSON ({e})")))?;
    let Value::Object(map) = value else {
        return Err(MeasuredError::NotMemoryStats(
            "the JSON is not an object".into(),
        ));
    };
    let peak_allocated = required(&map, "allocated_bytes.all.peak")?;
    let peak_reserved = required(&map, "reserved_bytes.all.peak")?;
    let segments = Segments {
        small: counter(&map, "segment.small_pool.peak").unwrap_or(0),
        large: counter(&map, "segment.large_pool.peak").unwrap_or(0),
        largest: None,
        over_gib: None,
    };
    Ok(Measurement {
        source: Source::MemoryStats,
        device: 0,
        peak_allocated_bytes: Bytes(peak_allocated),
        peak_reserved_bytes: Bytes(peak_reserved),
        reserved_gap_at_peak: None,
        segments,
        timeline: Vec::new(),
        trace_events: 0,
        alloc_retries: counter(&map, "num_alloc_retries"),
        ooms: counter(&map, "num_ooms"),
        other_devices: Vec::new(),
    })
}
