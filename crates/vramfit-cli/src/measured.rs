//! `estimate --measured`: the measurement beside the estimate, as text.

use std::fmt::Write as _;
use vramfit_core::Bytes;
use vramfit_core::measured::compare::Pool;
use vramfit_core::measured::{Comparison, Difference, Source};

fn opt_bytes(b: Option<Bytes>) -> String {
    b.map_or_else(|| "-".into(), |b| b.to_string())
}

/// The comparison's table and its differences, largest first.
pub fn table(c: &Comparison) -> String {
    let (m, s) = (&c.measured, &c.simulated);
    let mut out = String::new();
    let source = match m.source {
        Source::Snapshot => format!(
            "memory snapshot, device {}, {} trace events",
            m.device, m.trace_events
        ),
        Source::MemoryStats => "memory_stats()".into(),
    };
    let _ = writeln!(out, "\nMeasured ({source}) vs vramfit:");
    let _ = writeln!(out, "  {:<26} {:>12} {:>12}", "", "measured", "vramfit");
    let mut row = |label: &str, a: String, b: String| {
        let _ = writeln!(out, "  {label:<26} {a:>12} {b:>12}");
    };
    row(
        "peak allocated",
        m.peak_allocated_bytes.to_string(),
        s.peak_allocated_bytes.to_string(),
    );
    row(
        "peak reserved",
        m.peak_reserved_bytes.to_string(),
        s.peak_reserved_bytes.to_string(),
    );
    row(
        "segments small / large",
        format!("{} / {}", m.segments.small, m.segments.large),
        format!("{} / {}", s.segments.small, s.segments.large),
    );
    row(
        "largest segment",
        opt_bytes(m.segments.largest),
        opt_bytes(s.segments.largest),
    );
    if let Some(gap) = m.reserved_gap_at_peak {
        row(
            "reserved − allocated at peak",
            gap.to_string(),
            String::new(),
        );
    }
    if !m.other_devices.is_empty() {
        let others: Vec<String> = m.other_devices.iter().map(u32::to_string).collect();
        let _ = writeln!(
            out,
            "  (the file also holds device {}; only device {} is compared)",
            others.join(", "),
            m.device
        );
    }
    if c.differences.is_empty() {
        let _ = writeln!(out, "No notable differences.");
    } else {
        let _ = writeln!(out, "Differences, largest first:");
        for d in &c.differences {
            let _ = writeln!(out, "  - {}", difference(d));
        }
    }
    out
}

/// How much `measured` is above (or below) `simulated`, as "31 % higher".
fn versus(measured: f64, simulated: f64) -> String {
    if simulated <= 0.0 {
        return "vramfit simulates none".into();
    }
    let pct = (measured - simulated) / simulated * 100.0;
    if pct >= 0.0 {
        format!("{pct:.0} % higher than simulated")
    } else {
        format!("{:.0} % lower than simulated", -pct)
    }
}

/// One difference between a measurement and the estimate, as a sentence.
pub fn difference(d: &Difference) -> String {
    match *d {
        Difference::PeakAllocated {
            measured,
            simulated,
        } => format!(
            "measured peak allocated {measured}, vramfit simulates {simulated} ({})",
            versus(measured.0 as f64, simulated.0 as f64)
        ),
        Difference::PeakReserved {
            measured,
            simulated,
        } => format!(
            "measured peak reserved {measured}, vramfit's allocator model gives {simulated} ({})",
            versus(measured.0 as f64, simulated.0 as f64)
        ),
        Difference::ReservedAboveAllocated {
            measured_percent,
            simulated_percent,
        } => format!(
            "measured reserved is {measured_percent:.0} % above allocated; vramfit's allocator model gives {simulated_percent:.0} %"
        ),
        Difference::SegmentCount {
            pool,
            measured,
            simulated,
        } => {
            let pool = match pool {
                Pool::Small => "small-pool (2 MiB)",
                Pool::Large => "large-pool",
            };
            format!("{measured} {pool} segments measured, {simulated} simulated")
        }
        Difference::SegmentsOverGib {
            measured,
            simulated,
        } => format!("{measured} segments of 1 GiB or more measured, {simulated} simulated"),
        Difference::LargestSegment {
            measured,
            simulated,
        } => format!("largest segment {measured} measured, {simulated} simulated"),
        Difference::AllocRetries { count } => format!(
            "the run retried {count} allocations after freeing the cache (memory ran short); vramfit does not model retries"
        ),
        Difference::OutOfMemory { count } => {
            format!("the run hit {count} out-of-memory errors")
        }
    }
}
