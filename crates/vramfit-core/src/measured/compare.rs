//! A measurement beside vramfit's estimate of the same configuration: the
//! figures both have, both timelines on one scale, and the differences worth
//! naming, largest first. The front ends word the differences.

use super::{MAX_TIMELINE_POINTS, Measurement, Segments};
use crate::report::Estimate;
use crate::units::Bytes;
use serde::Serialize;

/// A relative difference in bytes below this is not listed (5 %).
pub const NOTABLE_RATIO: f64 = 0.05;
/// A difference in the share of reserved memory above allocated below this
/// many percentage points is not listed.
pub const NOTABLE_POINTS: f64 = 5.0;

/// The allocator's two pools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pool {
    /// Requests of at most 1 MiB, in 2 MiB segments.
    Small,
    /// Larger requests.
    Large,
}

/// One way the measurement and the estimate differ.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Difference {
    /// Peak `memory_allocated()`.
    PeakAllocated {
        /// Measured.
        measured: Bytes,
        /// Simulated.
        simulated: Bytes,
    },
    /// Peak `memory_reserved()`.
    PeakReserved {
        /// Measured.
        measured: Bytes,
        /// Simulated.
        simulated: Bytes,
    },
    /// Peak reserved above peak allocated, in percent of allocated.
    ReservedAboveAllocated {
        /// Measured, percent.
        measured_percent: f64,
        /// Simulated by the allocator model, percent.
        simulated_percent: f64,
    },
    /// Segments of one pool.
    SegmentCount {
        /// The pool.
        pool: Pool,
        /// Measured.
        measured: u64,
        /// Simulated.
        simulated: u64,
    },
    /// Segments of 1 GiB or more.
    SegmentsOverGib {
        /// Measured.
        measured: u64,
        /// Simulated.
        simulated: u64,
    },
    /// The largest segment.
    LargestSegment {
        /// Measured.
        measured: Bytes,
        /// Simulated.
        simulated: Bytes,
    },
    /// The run retried allocations after freeing the cache
    /// (`num_alloc_retries`), which the model never does: memory was short.
    AllocRetries {
        /// How many.
        count: u64,
    },
    /// The run hit out-of-memory errors.
    OutOfMemory {
        /// How many.
        count: u64,
    },
}

impl Difference {
    /// Where the difference stands in the list: retries and out-of-memory
    /// errors first (tier 0), then differences in bytes (tier 1: they decide
    /// whether a run fits), then in segment counts (tier 2); within a tier,
    /// the larger difference first.
    pub fn rank(&self) -> (u8, f64) {
        let tier = match self {
            Difference::AllocRetries { .. } | Difference::OutOfMemory { .. } => 0,
            Difference::PeakAllocated { .. }
            | Difference::PeakReserved { .. }
            | Difference::ReservedAboveAllocated { .. }
            | Difference::LargestSegment { .. } => 1,
            Difference::SegmentCount { .. } | Difference::SegmentsOverGib { .. } => 2,
        };
        (tier, self.weight())
    }

    /// How large the difference is: the relative difference for sizes and
    /// counts, a hundredth per percentage point for shares, and the count
    /// itself for retries and out-of-memory errors.
    pub fn weight(&self) -> f64 {
        match *self {
            Difference::PeakAllocated {
                measured,
                simulated,
            }
            | Difference::PeakReserved {
                measured,
                simulated,
            }
            | Difference::LargestSegment {
                measured,
                simulated,
            } => relative(measured.0 as f64, simulated.0 as f64),
            Difference::ReservedAboveAllocated {
                measured_percent,
                simulated_percent,
            } => (measured_percent - simulated_percent).abs() / 100.0,
            Difference::SegmentCount {
                measured,
                simulated,
                ..
            }
            | Difference::SegmentsOverGib {
                measured,
                simulated,
            } => relative(measured as f64, simulated as f64),
            Difference::AllocRetries { count } | Difference::OutOfMemory { count } => count as f64,
        }
    }
}

/// `|a − b|` relative to the larger of the two (0 when both are 0).
fn relative(a: f64, b: f64) -> f64 {
    let top = a.max(b);
    if top <= 0.0 { 0.0 } else { (a - b).abs() / top }
}

/// Reserved above allocated in percent of allocated (0 without allocations).
fn reserved_share(allocated: Bytes, reserved: Bytes) -> f64 {
    if allocated.0 == 0 {
        0.0
    } else {
        reserved.saturating_sub(allocated).0 as f64 * 100.0 / allocated.0 as f64
    }
}

/// What the simulation says, in the measurement's terms.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Simulated {
    /// Peak `memory_allocated()`.
    pub peak_allocated_bytes: Bytes,
    /// Peak `memory_reserved()` from the allocator model.
    pub peak_reserved_bytes: Bytes,
    /// The allocator model's segments.
    pub segments: Segments,
}

/// A measurement beside the estimate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// The measurement's summary.
    pub measured: Measurement,
    /// The simulation's figures.
    pub simulated: Simulated,
    /// The simulated allocated bytes, resampled as the measured timeline
    /// is (at most [`MAX_TIMELINE_POINTS`] points, each a stretch's highest):
    /// both span their whole recording, so they share a horizontal scale
    /// from the first moment to the last, not a clock.
    pub simulated_timeline: Vec<Bytes>,
    /// The notable differences, largest first.
    pub differences: Vec<Difference>,
}

/// Compares `measured` with `estimate`, an estimate of the configuration
/// the measurement was taken with.
pub fn compare(measured: &Measurement, estimate: &Estimate) -> Comparison {
    let simulated = Simulated {
        peak_allocated_bytes: estimate.peak_allocated_bytes,
        peak_reserved_bytes: estimate.peak_reserved_bytes,
        segments: estimate.segments,
    };
    let timeline: Vec<super::MeasuredPoint> = estimate
        .timeline
        .iter()
        .map(|p| super::MeasuredPoint {
            allocated_bytes: p.allocated_bytes,
            reserved_bytes: Bytes::ZERO,
        })
        .collect();
    let simulated_timeline = super::resample(&timeline, MAX_TIMELINE_POINTS)
        .iter()
        .map(|p| p.allocated_bytes)
        .collect();
    Comparison {
        differences: differences(measured, &simulated),
        measured: measured.clone(),
        simulated,
        simulated_timeline,
    }
}

/// The notable differences between `m` and `s`, largest first.
pub fn differences(m: &Measurement, s: &Simulated) -> Vec<Difference> {
    let mut out = Vec::new();
    let bytes = |a: Bytes, b: Bytes| relative(a.0 as f64, b.0 as f64) >= NOTABLE_RATIO;
    if bytes(m.peak_allocated_bytes, s.peak_allocated_bytes) {
        out.push(Difference::PeakAllocated {
            measured: m.peak_allocated_bytes,
            simulated: s.peak_allocated_bytes,
        });
    }
    if bytes(m.peak_reserved_bytes, s.peak_reserved_bytes) {
        out.push(Difference::PeakReserved {
            measured: m.peak_reserved_bytes,
            simulated: s.peak_reserved_bytes,
        });
    }
    let (ms, ss) = (
        reserved_share(m.peak_allocated_bytes, m.peak_reserved_bytes),
        reserved_share(s.peak_allocated_bytes, s.peak_reserved_bytes),
    );
    if (ms - ss).abs() >= NOTABLE_POINTS {
        out.push(Difference::ReservedAboveAllocated {
            measured_percent: ms,
            simulated_percent: ss,
        });
    }
    for (pool, measured, simulated) in [
        (Pool::Small, m.segments.small, s.segments.small),
        (Pool::Large, m.segments.large, s.segments.large),
    ] {
        if measured != simulated {
            out.push(Difference::SegmentCount {
                pool,
                measured,
                simulated,
            });
        }
    }
    if let (Some(measured), Some(simulated)) = (m.segments.over_gib, s.segments.over_gib)
        && measured != simulated
    {
        out.push(Difference::SegmentsOverGib {
            measured,
            simulated,
        });
    }
    if let (Some(measured), Some(simulated)) = (m.segments.largest, s.segments.largest)
        && bytes(measured, simulated)
    {
        out.push(Difference::LargestSegment {
            measured,
            simulated,
        });
    }
    if let Some(count) = m.alloc_retries.filter(|&n| n > 0) {
        out.push(Difference::AllocRetries { count });
    }
    if let Some(count) = m.ooms.filter(|&n| n > 0) {
        out.push(Difference::OutOfMemory { count });
    }
    out.sort_by(|a, b| {
        let ((ta, wa), (tb, wb)) = (a.rank(), b.rank());
        ta.cmp(&tb).then(wb.total_cmp(&wa))
    });
    out
}
